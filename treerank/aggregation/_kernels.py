"""Compiled kernels of the Kemeny median: objective, Borda costs, local search.

These are numba ports of the numpy solvers of :mod:`._objective`,
:mod:`._heuristics` and :mod:`._local_search`, computing the same quantities
with the same summation order where it matters (weighted counts of rankings
are integer counts per group of equal ranking weight, times the weight), so
that integer masses and weights give bit-identical results. They run without
the GIL (``nogil=True``) and are cached on disk (``cache=True``); no kernel
starts threads of its own.

Rankings are passed as ``ranks`` (B, M) and ``ranks_t`` (M, B) in the compact
dense dtype of :class:`~._bucket_order._RankingData`, ranking weights as
``group_bounds`` (the runs of rankings of equal weight) and ``group_values``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.engine._jit import aggregation_jit, inner_jit
from treerank.engine._sorting import counting_argsort, stable_argsort

__all__ = []

# problems with n_items * n_rankings below this use the numpy solvers, so that
# small fits (the demo, most tests) never wait for a first compilation
_COMPILED_MIN_SIZE = 1 << 17
# with exact arithmetic (integral masses and weights, every sum below 2^52) the
# kernels give the numpy solvers' results to the last bit, and take over from
# problems 2^7 times smaller: a small forest's median then costs no more per
# entry than a large one's (numpy's fixed cost per call dominates below that)
_EXACT_SIZE_SHIFT = 7


def _use_compiled(n_items, n_rankings, exact=False):
    """Whether a problem of this size runs in compiled code.

    ``exact``: whether its arithmetic is exact (``_RankingData.exact``).
    """
    size = n_items * n_rankings
    if exact:
        return size >= _COMPILED_MIN_SIZE >> _EXACT_SIZE_SHIFT
    return size >= _COMPILED_MIN_SIZE


def _compiled_for(data):
    """Whether the median of a ``_RankingData`` runs in compiled code."""
    return _use_compiled(data.n_items, data.n_rankings, data.exact)


def _weight_groups(data):
    """Runs of rankings of equal weight of a ``_RankingData``: (bounds, values)."""
    if data.weight_groups is None:
        bounds = np.arange(data.n_rankings + 1, dtype=np.int64)
        return bounds, data.ranking_weights.astype(np.float64)
    bounds = [start for start, _, _ in data.weight_groups]
    bounds.append(data.weight_groups[-1][1])
    values = [value for _, _, value in data.weight_groups]
    return np.asarray(bounds, dtype=np.int64), np.asarray(values, dtype=np.float64)


# ----------------------------------------------------------------------------
# row comparisons (loops over whole 1-d views: LLVM vectorizes them)
# ----------------------------------------------------------------------------
@inner_jit(error_model="python")
def _count_lt_le(x, y):
    """Number of entries with x < y, and with x <= y (views of equal length)."""
    lt = 0
    le = 0
    for t in range(np.uint64(x.shape[0])):  # unsigned: no wraparound test
        lt += x[t] < y[t]
        le += x[t] <= y[t]
    return lt, le


@inner_jit(error_model="python")
def _count_below(x, lower, upper):
    """Number of entries with x < lower, and with x < upper."""
    lt = 0
    lu = 0
    for t in range(np.uint64(x.shape[0])):
        lt += x[t] < lower[t]
        lu += x[t] < upper[t]
    return lt, lu


# ----------------------------------------------------------------------------
# objective
# ----------------------------------------------------------------------------
@aggregation_jit
def _pair_sums_kernel(order, sorted_buckets, ranks, n_buckets, masses):
    """Per-ranking weighted pair sums ``S_b`` of a consensus against the rankings.

    ``order`` lists the items by consensus bucket (``sorted_buckets`` their
    buckets). Ranking by ranking, a Fenwick tree over the ranking's buckets
    holds the mass of the items of earlier consensus buckets, so that the
    discordant mass of an item is read in O(log K_b); pairs tied in both
    orders are counted per consensus bucket. O(M B log K) time, O(M + K)
    memory.
    """
    n_items = order.shape[0]
    n_rankings = ranks.shape[0]
    sorted_masses = np.empty(n_items, dtype=np.float64)
    square_sum = 0.0
    for p in range(n_items):
        sorted_masses[p] = masses[order[p]]
        square_sum += sorted_masses[p] * sorted_masses[p]
    # consensus ties (the same for every ranking)
    bucket_square = 0.0
    start = 0
    while start < n_items:
        stop = start + 1
        while stop < n_items and sorted_buckets[stop] == sorted_buckets[start]:
            stop += 1
        bucket_mass = 0.0
        for p in range(start, stop):
            bucket_mass += sorted_masses[p]
        bucket_square += bucket_mass * bucket_mass
        start = stop
    tied_consensus = 0.5 * (bucket_square - square_sum)
    size_max = 0
    for b in range(n_rankings):
        size_max = max(size_max, n_buckets[b])
    fenwick = np.zeros(size_max, dtype=np.float64)
    column = np.zeros(size_max, dtype=np.float64)
    scratch = np.zeros(size_max, dtype=np.float64)
    rank_of = np.empty(n_items, dtype=np.int64)
    out = np.empty(n_rankings, dtype=np.float64)
    for b in range(n_rankings):
        size = n_buckets[b]
        fenwick[:size] = 0.0
        column[:size] = 0.0
        for p in range(n_items):
            rank_of[p] = np.int64(ranks[b, order[p]])
        discordant = 0.0
        tied_both = 0.0
        earlier = 0.0
        start = 0
        while start < n_items:
            stop = start + 1
            while stop < n_items and sorted_buckets[stop] == sorted_buckets[start]:
                stop += 1
            bucket_mass = 0.0
            for p in range(start, stop):
                r = rank_of[p]
                m = sorted_masses[p]
                bucket_mass += m
                at_most = 0.0  # mass of earlier items ranked <= r
                k = r + 1
                while k > 0:
                    at_most += fenwick[k - 1]
                    k -= k & (-k)
                discordant += m * (earlier - at_most)
                scratch[r] += m
            for p in range(start, stop):
                r = rank_of[p]
                tied_both += sorted_masses[p] * (scratch[r] - sorted_masses[p])
            for p in range(start, stop):
                r = rank_of[p]
                m = sorted_masses[p]
                scratch[r] = 0.0
                column[r] += m
                k = r + 1
                while k <= size:
                    fenwick[k - 1] += m
                    k += k & (-k)
            earlier += bucket_mass
            start = stop
        column_square = 0.0
        for k in range(size):
            column_square += column[k] * column[k]
        tied_ranking = 0.5 * (column_square - square_sum)
        both = 0.5 * tied_both
        out[b] = (
            discordant + 0.5 * (tied_consensus - both) + 0.5 * (tied_ranking - both)
        )
    return out


def bucket_order(buckets):
    """``np.argsort(buckets, kind="stable")`` for bucket indices 0..m-1.

    A counting sort when the indices are non-negative and not much larger
    than their number (dense buckets), numpy's stable sort otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.aggregation._kernels import bucket_order
    >>> bucket_order(np.array([2, 0, 1, 0]))
    array([1, 3, 2, 0])
    """
    buckets = np.ascontiguousarray(buckets, dtype=np.intp)
    n_items = buckets.shape[0]
    if n_items == 0 or buckets.min() < 0 or buckets.max() >= 4 * n_items + 64:
        return np.argsort(buckets, kind="stable").astype(np.int64, copy=False)
    return counting_argsort(buckets, int(buckets.max()) + 1)


@aggregation_jit
def _gather_sorted(ranks_t, order):
    """The rank rows in the order ``order``, item-major and ranking-major."""
    n_items = order.shape[0]
    n_rankings = ranks_t.shape[1]
    sorted_t = np.empty((n_items, n_rankings), dtype=ranks_t.dtype)
    sorted_r = np.empty((n_rankings, n_items), dtype=ranks_t.dtype)
    block = 64
    for begin in range(0, n_items, block):
        end = min(begin + block, n_items)
        for p in range(np.uint64(begin), np.uint64(end)):
            i = np.uint64(order[p])
            for b in range(np.uint64(n_rankings)):
                sorted_t[p, b] = ranks_t[i, b]
        for b in range(np.uint64(n_rankings)):
            for p in range(np.uint64(begin), np.uint64(end)):
                sorted_r[b, p] = sorted_t[p, b]
    return sorted_t, sorted_r


# ----------------------------------------------------------------------------
# Borda
# ----------------------------------------------------------------------------
@aggregation_jit
def _borda_kernel(ranks, n_buckets, masses, ranking_weights):
    n_rankings, n_items = ranks.shape
    costs = np.zeros(n_items, dtype=np.float64)
    for b in range(n_rankings):
        weight = ranking_weights[b]
        if weight == 0.0:
            continue
        size = n_buckets[b]
        bucket_mass = np.zeros(size, dtype=np.float64)
        for i in range(n_items):
            bucket_mass[ranks[b, i]] += masses[i]
        value = np.empty(size, dtype=np.float64)
        above = 0.0
        for k in range(size):
            value[k] = 2.0 * above + bucket_mass[k]
            above += bucket_mass[k]
        for i in range(n_items):
            costs[i] += weight * (value[ranks[b, i]] - masses[i])
    for i in range(n_items):
        costs[i] *= 0.5
    return costs


@aggregation_jit
def _mean_rank_kernel(ranks, scale, ranking_weights):
    """``sum_b w_b r_b / K_b`` per item, added ranking by ranking (as numpy)."""
    n_rankings, n_items = ranks.shape
    keys = np.zeros(n_items, dtype=np.float64)
    for b in range(n_rankings):
        weight = ranking_weights[b]
        for i in range(n_items):
            keys[i] += weight * (ranks[b, i] / scale[b])
    return keys


# ----------------------------------------------------------------------------
# Copeland and KwikSort (small problems, exact arithmetic)
# ----------------------------------------------------------------------------
@aggregation_jit
def _copeland_kernel(ranks_t, masses, ranking_weights):
    """Copeland score of each item: the mass it beats plus half the mass it
    draws with, itself excluded (exact sums: integral weights and masses).

    Each pair is compared once (the preference of j over i is minus that of
    i over j) and scores both items.
    """
    n_items, n_rankings = ranks_t.shape
    score = np.zeros(n_items, dtype=np.float64)
    for i in range(np.uint64(n_items)):
        for j in range(i + np.uint64(1), np.uint64(n_items)):
            preference = 0.0
            for b in range(np.uint64(n_rankings)):
                x = ranks_t[i, b]
                y = ranks_t[j, b]
                preference += ranking_weights[b] * (np.int64(x < y) - np.int64(x > y))
            if preference > 0.0:
                score[i] += masses[j]
            elif preference < 0.0:
                score[j] += masses[i]
            else:
                score[i] += 0.5 * masses[j]
                score[j] += 0.5 * masses[i]
    return score


@aggregation_jit
def _kwiksort_kernel(ranks_t, ranking_weights, total_weight, uniforms):
    """One KwikSort run, level by level as :func:`._heuristics._kwiksort`.

    ``uniforms`` holds the run's random draws in the order the numpy version
    draws them (one per group of each level, at most one per item). Returns
    the items' keys and the number of draws used. Exact sums (integral
    weights) make the pivots' costs, hence the sides, the numpy version's.
    """
    n_items, n_rankings = ranks_t.shape
    position = np.zeros(n_items, dtype=np.int64)
    group = np.zeros(n_items, dtype=np.int64)
    group_low = np.zeros(n_items + 1, dtype=np.int64)
    next_low = np.zeros(2 * n_items + 2, dtype=np.int64)
    active = np.arange(n_items)
    surviving = np.empty(n_items, dtype=np.int64)
    order = np.empty(n_items, dtype=np.int64)
    side = np.empty(n_items, dtype=np.int64)
    sizes = np.zeros(n_items + 1, dtype=np.int64)
    starts = np.zeros(n_items + 1, dtype=np.int64)
    fill = np.zeros(n_items + 1, dtype=np.int64)
    pivots = np.empty(n_items + 1, dtype=np.int64)
    counts = np.zeros(3 * n_items + 3, dtype=np.int64)
    part_sizes = np.zeros(2 * n_items + 2, dtype=np.int64)
    new_id = np.zeros(2 * n_items + 2, dtype=np.int64)
    n_active = n_items
    used = 0
    while n_active > 0:
        n_groups = 0
        for a in range(n_active):
            n_groups = max(n_groups, group[active[a]] + 1)
        sizes[:n_groups] = 0
        for a in range(n_active):
            sizes[group[active[a]]] += 1
        total = 0
        for g in range(n_groups):
            starts[g] = total
            fill[g] = total
            total += sizes[g]
        for a in range(n_active):  # stable order of the active items by group
            label = group[active[a]]
            order[fill[label]] = a
            fill[label] += 1
        for g in range(n_groups):
            offset = np.int64(np.floor(uniforms[used + g] * sizes[g]))
            pivots[g] = active[order[starts[g] + offset]]
        used += n_groups
        counts[: 3 * n_groups] = 0
        for a in range(n_active):
            item = active[a]
            label = group[item]
            pivot = pivots[label]
            better = 0.0
            worse = 0.0
            for b in range(np.uint64(n_rankings)):
                x = ranks_t[np.uint64(item), b]
                y = ranks_t[np.uint64(pivot), b]
                better += ranking_weights[b] * np.int64(x < y)
                worse += ranking_weights[b] * np.int64(x > y)
            tied = total_weight - better - worse
            best = 0.5 * (better + worse)  # tied with the pivot
            chosen = 0
            if worse + 0.5 * tied < best:  # above it
                best = worse + 0.5 * tied
                chosen = 1
            if better + 0.5 * tied < best:  # below it
                chosen = 2
            if item == pivot:
                chosen = 0
            side[a] = chosen
            counts[3 * label + chosen] += 1
        # new layout inside each group: [above | tied | below]
        part_sizes[: 2 * n_groups] = 0
        for g in range(n_groups):
            low = group_low[g]
            tied_low = low + counts[3 * g + 1]
            next_low[2 * g] = low
            next_low[2 * g + 1] = tied_low + counts[3 * g]
        for a in range(n_active):
            item = active[a]
            label = group[item]
            if side[a] == 0:
                position[item] = group_low[label] + counts[3 * label + 1]
            else:
                part_sizes[2 * label + (side[a] == 2)] += 1
        n_kept = 0
        for part in range(2 * n_groups):
            if part_sizes[part] > 1:
                new_id[part] = n_kept
                group_low[n_kept] = next_low[part]
                n_kept += 1
        n_surviving = 0
        for a in range(n_active):
            item = active[a]
            if side[a] == 0:
                group[item] = -1
                continue
            part = 2 * group[item] + (side[a] == 2)
            if part_sizes[part] > 1:
                group[item] = new_id[part]
                surviving[n_surviving] = item
                n_surviving += 1
            else:
                position[item] = next_low[part]
                group[item] = -1
        for a in range(n_surviving):
            active[a] = surviving[a]
        n_active = n_surviving
    return position, used


# ----------------------------------------------------------------------------
# local search: per-bucket masses of the window of each item
# ----------------------------------------------------------------------------
@inner_jit(error_model="python")
def _compare_rows(ranks_t, j, i, group_bounds, group_values):
    """Weighted counts of rankings with r(j) < r(i) and with r(j) <= r(i)."""
    if group_values.shape[0] == 1:
        # one ranking weight: integer counts over whole rows (vectorized)
        lt = 0
        le = 0
        row_j = np.uint64(j)
        row_i = np.uint64(i)
        for b in range(np.uint64(ranks_t.shape[1])):
            x = ranks_t[row_j, b]
            y = ranks_t[row_i, b]
            lt += x < y
            le += x <= y
        return group_values[0] * lt, group_values[0] * le
    below = 0.0
    at_most = 0.0
    for g in range(group_values.shape[0]):
        value = group_values[g]
        if value == 0.0:
            continue
        start = group_bounds[g]
        stop = group_bounds[g + 1]
        lt, le = _count_lt_le(ranks_t[j, start:stop], ranks_t[i, start:stop])
        below += value * lt
        at_most += value * le
    return below, at_most


@aggregation_jit
def _window_sums_kernel(
    items,
    item_order,
    window,
    consensus,
    order,
    starts,
    table_bucket,
    ranks,
    ranks_t,
    masses,
    group_bounds,
    group_values,
):
    """``better`` and ``atmost`` of items against the buckets around their own.

    Buckets with ``table_bucket`` True are answered from per-ranking tables of
    prefix masses restricted to the range of ranks of their members (one ranking
    at a time); the others by comparing member rows. ``item_order`` visits the
    active items by consensus bucket, so that neighbouring items read the same
    members and tables.
    """
    n_active = items.shape[0]
    n_slots = 2 * window + 1
    n_buckets = starts.shape[0] - 1
    better = np.zeros((n_active, n_slots), dtype=np.float64)
    atmost = np.zeros((n_active, n_slots), dtype=np.float64)
    valid = np.zeros((n_active, n_slots), dtype=np.bool_)
    # buckets answered by tables, numbered in order of appearance
    table_row = np.full(n_buckets, -1, dtype=np.int64)
    n_rows = 0
    for a in item_order:
        i = items[a]
        q0 = consensus[i]
        for s in range(n_slots):
            q = q0 + s - window
            if q < 0 or q >= n_buckets:
                continue
            valid[a, s] = True
            if table_bucket[q]:
                if table_row[q] < 0:
                    table_row[q] = n_rows
                    n_rows += 1
                continue
            for p in range(starts[q], starts[q + 1]):
                j = order[p]
                below, at_most = _compare_rows(
                    ranks_t, j, i, group_bounds, group_values
                )
                better[a, s] += masses[j] * below
                atmost[a, s] += masses[j] * at_most
    if n_rows == 0:
        return better, atmost, valid
    row_bucket = np.empty(n_rows, dtype=np.int64)
    for q in range(n_buckets):
        if table_row[q] >= 0:
            row_bucket[table_row[q]] = q
    # (active item, slot) pairs answered by a table, and the item's bucket rank
    n_pairs = 0
    for a in item_order:
        q0 = consensus[items[a]]
        for s in range(n_slots):
            q = q0 + s - window
            if valid[a, s] and table_row[q] >= 0:
                n_pairs += 1
    pair_item = np.empty(n_pairs, dtype=np.int64)
    pair_slot = np.empty(n_pairs, dtype=np.int64)
    pair_row = np.empty(n_pairs, dtype=np.int64)
    n_pairs = 0
    for a in item_order:
        q0 = consensus[items[a]]
        for s in range(n_slots):
            q = q0 + s - window
            if valid[a, s] and table_row[q] >= 0:
                pair_item[n_pairs] = a
                pair_slot[n_pairs] = s
                pair_row[n_pairs] = table_row[q]
                n_pairs += 1
    low = np.empty(n_rows, dtype=np.int64)
    span = np.empty(n_rows, dtype=np.int64)
    offset = np.empty(n_rows + 1, dtype=np.int64)
    pair_query = np.empty(n_pairs, dtype=np.int64)
    for p in range(n_pairs):
        pair_query[p] = items[pair_item[p]]
    group_better = np.zeros(n_pairs, dtype=np.float64)
    group_atmost = np.zeros(n_pairs, dtype=np.float64)
    table = np.empty(0, dtype=np.float64)
    for g in range(group_values.shape[0]):
        value = group_values[g]
        if value == 0.0:
            continue
        group_better[:] = 0.0
        group_atmost[:] = 0.0
        for b in range(group_bounds[g], group_bounds[g + 1]):
            # per table bucket: entry low + e holds the mass of its members
            # ranked < low + e, for e = 0..span (span = high + 1 - low: all)
            offset[0] = 0
            for t in range(n_rows):
                q = row_bucket[t]
                lo = np.int64(1) << 40
                hi = np.int64(-1)
                for p in range(starts[q], starts[q + 1]):
                    r = np.int64(ranks[b, order[p]])
                    lo = min(lo, r)
                    hi = max(hi, r)
                low[t] = lo
                span[t] = hi + 1 - lo
                offset[t + 1] = offset[t] + hi + 2 - lo
            if table.shape[0] < offset[n_rows]:
                table = np.empty(2 * offset[n_rows], dtype=np.float64)
            table[: offset[n_rows]] = 0.0
            for t in range(n_rows):
                q = row_bucket[t]
                base = offset[t] - low[t] + 1
                for p in range(starts[q], starts[q + 1]):
                    j = order[p]
                    table[base + np.int64(ranks[b, j])] += masses[j]
                for k in range(offset[t] + 1, offset[t + 1]):
                    table[k] += table[k - 1]
            ranking = np.uint64(b)
            for p in range(np.uint64(n_pairs)):
                t = np.uint64(pair_row[p])
                r = np.int64(ranks[ranking, np.uint64(pair_query[p])]) - low[t]
                limit = span[t]
                base = np.uint64(offset[t])
                group_better[p] += table[base + np.uint64(min(max(r, 0), limit))]
                group_atmost[p] += table[base + np.uint64(min(max(r + 1, 0), limit))]
        for p in range(n_pairs):
            better[pair_item[p], pair_slot[p]] += value * group_better[p]
            atmost[pair_item[p], pair_slot[p]] += value * group_atmost[p]
    return better, atmost, valid


# ----------------------------------------------------------------------------
# local search: best move of each item
# ----------------------------------------------------------------------------
@aggregation_jit
def _best_moves_kernel(
    items,
    window,
    consensus,
    n_buckets,
    better,
    atmost,
    valid,
    bucket_mass,
    masses,
    total_weight,
    scale,
    rtol,
    columns,
):
    """Best move of each item (see ``_local_search._best_moves``).

    Returns (mover, gain, key, lo, hi, threshold) over the items; ``mover`` is
    True for items whose best move lowers F by more than the threshold.
    """
    n_active = items.shape[0]
    n_slots = 2 * window + 1
    n_columns = columns.shape[0]
    mover = np.zeros(n_active, dtype=np.bool_)
    gain_out = np.zeros(n_active, dtype=np.float64)
    key_out = np.zeros(n_active, dtype=np.float64)
    lo_out = np.zeros(n_active, dtype=np.int64)
    hi_out = np.zeros(n_active, dtype=np.int64)
    threshold_out = np.zeros(n_active, dtype=np.float64)
    slope = np.empty(n_slots, dtype=np.float64)
    tie_extra = np.empty(n_slots, dtype=np.float64)
    cumulative = np.empty(n_slots + 1, dtype=np.float64)
    costs = np.empty(2 * n_slots + 1, dtype=np.float64)
    for a in range(n_active):
        i = items[a]
        q0 = consensus[i]
        own = masses[i]
        for s in range(n_slots):
            if valid[a, s]:
                mass = bucket_mass[q0 + s - window]
            else:
                mass = 0.0
            at_most = atmost[a, s]
            if s == window:
                mass -= own
                at_most -= total_weight * own
            slope[s] = total_weight * mass - better[a, s] - at_most
            tie_extra[s] = 0.5 * total_weight * mass - at_most
        cumulative[0] = 0.0
        for s in range(n_slots):
            cumulative[s + 1] = cumulative[s] + slope[s]
        reference = cumulative[window]
        current = (cumulative[window] - reference) + tie_extra[window]
        for s in range(n_slots):
            if valid[a, s]:
                costs[s] = (cumulative[s] - reference) + tie_extra[s]
            else:
                costs[s] = np.inf
        for s in range(n_slots + 1):
            gap_bucket = q0 + s - window
            if gap_bucket < 0 or gap_bucket > n_buckets:
                costs[n_slots + s] = np.inf
            else:
                costs[n_slots + s] = cumulative[s] - reference
        best = np.inf
        choice = 0
        for c in range(n_columns):
            value = costs[columns[c]]
            if value < best:
                best = value
                choice = columns[c]
        gain = own * (current - best)
        threshold = rtol * own * scale
        if not gain > threshold:
            continue
        mover[a] = True
        gain_out[a] = gain
        threshold_out[a] = threshold
        is_gap = choice >= n_slots
        if is_gap:
            offset = choice - n_slots - window
        else:
            offset = choice - window
        target = q0 + offset
        key = np.float64(target)
        if is_gap:
            key -= 0.5
            if target > q0:
                key -= 0.25
            else:
                key += 0.25
        key_out[a] = key
        lo = min(q0, target)
        hi = max(q0, target)
        if is_gap and target > q0:
            hi -= 1
        lo_out[a] = lo
        hi_out[a] = hi
    return mover, gain_out, key_out, lo_out, hi_out, threshold_out


# ----------------------------------------------------------------------------
# local search: exact change of a batch of moves
# ----------------------------------------------------------------------------
@aggregation_jit
def _sign(x):
    return np.int64(x > 0.0) - np.int64(x < 0.0)


@aggregation_jit
def _pair_cost(better, worse, total_weight, relation):
    tied = total_weight - better - worse
    if relation < 0:
        return worse + 0.5 * tied
    if relation > 0:
        return better + 0.5 * tied
    return 0.5 * (better + worse)


@aggregation_jit
def _upper_bound(sorted_values, value):
    """``np.searchsorted(sorted_values, value, side="right")`` (a binary
    search; numba's generic one costs more compilation than its use here)."""
    low = 0
    high = sorted_values.shape[0]
    while low < high:
        middle = (low + high) >> 1
        if sorted_values[middle] <= value:
            low = middle + 1
        else:
            high = middle
    return low


@aggregation_jit
def _sweep_order(lo, chosen):
    """The chosen moves by increasing ``lo`` (ties in ``chosen`` order), and
    their sorted lows (float64, exact).

    The lows are bucket indices (a gap before the first bucket is -1), so a
    counting sort over their range orders them in O(moves + buckets).
    """
    n = chosen.shape[0]
    low = np.int64(0)
    high = np.int64(0)
    for c in range(n):
        value = lo[chosen[c]]
        if c == 0 or value < low:
            low = value
        if c == 0 or value > high:
            high = value
    keys = np.empty(n, dtype=np.int64)
    for c in range(n):
        keys[c] = lo[chosen[c]] - low
    order = counting_argsort(keys, high - low + 1)
    sorted_lo = np.empty(n, dtype=np.float64)
    for c in range(n):
        sorted_lo[c] = lo[chosen[order[c]]]
    return order, sorted_lo


@aggregation_jit
def _count_overlaps(lo, hi, chosen):
    """Number of pairs of chosen intervals [lo, hi] that intersect."""
    order, sorted_lo = _sweep_order(lo, chosen)
    total = 0
    for c in range(chosen.shape[0]):
        end = _upper_bound(sorted_lo, hi[chosen[order[c]]])
        if end - c - 1 > 0:
            total += end - c - 1
    return total


# a move is compared with the moves after it ranking by ranking (vectorized
# over the moves) when there are at least this many, else move by move
_SWEEP_COLUMNS_MIN_WIDTH = 32
_SWEEP_COLUMNS_MAX_RANKINGS = 48


@aggregation_jit
def _batch_kernel(
    chosen,
    rank,
    move_item,
    lo,
    hi,
    old,
    new,
    ranks_t,
    masses,
    group_bounds,
    group_values,
    total_weight,
    exact,
):
    """Correction of the chosen moves' overlapping pairs and the dominated moves.

    Returns (correction, dominated): the sum over pairs of chosen moves whose
    spans intersect of the non-additive part of moving both items, and, per
    move, whether a better-ranked chosen move overlaps it. The part of a pair
    is zero when one item's move does not change the pair's relation whatever
    the other does (``exact``: the pair's costs are exact, so the four terms
    cancel to zero), and its rows are then not compared.
    """
    n_moves = lo.shape[0]
    n = chosen.shape[0]
    dominated = np.zeros(n_moves, dtype=np.bool_)
    order, sorted_lo = _sweep_order(lo, chosen)
    # the moves in the order of the sweep: their ranks in rows (ranking by
    # ranking, so that the counts of a move against those after it run over
    # contiguous memory, vectorized), their keys and masses
    n_rankings = ranks_t.shape[1]
    n_groups = group_values.shape[0]
    largest_group = 0
    for g in range(n_groups):
        largest_group = max(largest_group, group_bounds[g + 1] - group_bounds[g])
    by_columns = largest_group <= _SWEEP_COLUMNS_MAX_RANKINGS
    rows = np.empty((n, n_rankings), dtype=ranks_t.dtype)
    columns = np.empty((n_rankings if by_columns else 0, n), dtype=ranks_t.dtype)
    move_rank = np.empty(n, dtype=np.int64)
    old_key = np.empty(n, dtype=np.float64)
    new_key = np.empty(n, dtype=np.float64)
    mass = np.empty(n, dtype=np.float64)
    sweep_dominated = np.zeros(n, dtype=np.bool_)
    for c in range(n):
        move = chosen[order[c]]
        item = move_item[move]
        for b in range(n_rankings):
            rows[c, b] = ranks_t[item, b]
        if by_columns:
            for b in range(n_rankings):
                columns[b, c] = ranks_t[item, b]
        move_rank[c] = rank[move]
        old_key[c] = old[item]
        new_key[c] = new[item]
        mass[c] = masses[item]
    lt = np.empty(n, dtype=np.int32)  # counts of rankings (fewer than 2^31)
    gt = np.empty(n, dtype=np.int32)
    better = np.empty(n, dtype=np.float64)
    worse = np.empty(n, dtype=np.float64)
    correction = 0.0
    for c in range(n):
        a = chosen[order[c]]
        first = c + 1
        end = _upper_bound(sorted_lo, hi[a])
        width = end - first
        if width <= 0:
            continue
        # weighted counts of rankings with r(c) < r(d) and r(c) > r(d), for
        # the moves d = c + 1 .. end - 1 (those whose spans meet c's)
        if n_groups > 1:
            better[:width] = 0.0
            worse[:width] = 0.0
        for g in range(n_groups):
            value = group_values[g]
            if value == 0.0:
                continue
            start = group_bounds[g]
            stop = group_bounds[g + 1]
            if by_columns and width >= _SWEEP_COLUMNS_MIN_WIDTH:
                # many moves: ranking by ranking, c against all of them
                lt[:width] = 0
                gt[:width] = 0
                for b in range(start, stop):
                    x = columns[b, c]
                    others = columns[b, first:end]
                    for k in range(np.uint64(width)):
                        lt[k] += x < others[k]
                        gt[k] += x > others[k]
            else:
                # few: move by move, over the rankings
                row_c = np.uint64(c)
                for k in range(width):
                    row_d = np.uint64(first + k)
                    count_lt = 0
                    count_gt = 0
                    for b in range(np.uint64(start), np.uint64(stop)):
                        x = rows[row_c, b]
                        y = rows[row_d, b]
                        count_lt += x < y
                        count_gt += x > y
                    lt[k] = count_lt
                    gt[k] = count_gt
            if n_groups == 1:
                for k in range(width):
                    better[k] = value * lt[k]
                    worse[k] = value * gt[k]
            else:
                for k in range(width):
                    better[k] += value * lt[k]
                    worse[k] += value * gt[k]
        rank_c = move_rank[c]
        new_c = new_key[c]
        old_c = old_key[c]
        dominated_c = False
        for k in range(width):
            d = first + k
            above = rank_c > move_rank[d]
            dominated_c |= above
            sweep_dominated[d] |= not above
            new_new = _sign(new_c - new_key[d])
            new_old = _sign(new_c - old_key[d])
            old_new = _sign(old_c - new_key[d])
            old_old = _sign(old_c - old_key[d])
            if exact and (
                (new_new == new_old and old_new == old_old)
                or (new_new == old_new and new_old == old_old)
            ):
                continue
            corr = (
                _pair_cost(better[k], worse[k], total_weight, new_new)
                - _pair_cost(better[k], worse[k], total_weight, new_old)
                - _pair_cost(better[k], worse[k], total_weight, old_new)
                + _pair_cost(better[k], worse[k], total_weight, old_old)
            )
            correction += mass[c] * mass[d] * corr
        sweep_dominated[c] |= dominated_c
    for c in range(n):
        if sweep_dominated[c]:
            dominated[chosen[order[c]]] = True
    return correction, dominated


# ----------------------------------------------------------------------------
# local search: the whole search in compiled code (exact arithmetic)
# ----------------------------------------------------------------------------
@inner_jit(error_model="python")
def _block_sum(values, start, count):
    """numpy's sum of at most 128 contiguous float64 values (eight accumulators)."""
    if count < 8:
        total = 0.0
        for i in range(start, start + count):
            total += values[i]
        return total
    r0 = values[start]
    r1 = values[start + 1]
    r2 = values[start + 2]
    r3 = values[start + 3]
    r4 = values[start + 4]
    r5 = values[start + 5]
    r6 = values[start + 6]
    r7 = values[start + 7]
    i = 8
    while i < count - count % 8:
        r0 += values[start + i]
        r1 += values[start + i + 1]
        r2 += values[start + i + 2]
        r3 += values[start + i + 3]
        r4 += values[start + i + 4]
        r5 += values[start + i + 5]
        r6 += values[start + i + 6]
        r7 += values[start + i + 7]
        i += 8
    total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < count:
        total += values[start + i]
        i += 1
    return total


@inner_jit(error_model="python")
def _pairwise_sum(values, start, count):
    """numpy's sum of ``values[start:start + count]``, to the last bit.

    numpy adds a contiguous float64 array by pairwise summation: blocks of at
    most 128 values (:func:`_block_sum`), a larger range split into two halves
    (the first rounded down to a multiple of 8) whose sums are added. The
    recursion runs on an explicit stack (numba's cache cannot hold a
    recursive function).
    """
    if count <= 128:
        return _block_sum(values, start, count)
    node_start = np.empty(64, dtype=np.int64)
    node_count = np.empty(64, dtype=np.int64)
    node_phase = np.empty(64, dtype=np.int64)
    sums = np.empty(64, dtype=np.float64)
    depth = 1
    n_sums = 0
    node_start[0] = start
    node_count[0] = count
    node_phase[0] = 0
    while depth > 0:
        top = depth - 1
        first = node_start[top]
        size = node_count[top]
        if size <= 128:
            sums[n_sums] = _block_sum(values, first, size)
            n_sums += 1
            depth -= 1
            continue
        half = size // 2
        half -= half % 8
        if node_phase[top] == 0:  # the first half
            node_phase[top] = 1
            node_start[depth] = first
            node_count[depth] = half
            node_phase[depth] = 0
            depth += 1
        elif node_phase[top] == 1:  # the second half
            node_phase[top] = 2
            node_start[depth] = first + half
            node_count[depth] = size - half
            node_phase[depth] = 0
            depth += 1
        else:  # both halves done
            n_sums -= 1
            sums[n_sums - 1] = sums[n_sums - 1] + sums[n_sums]
            depth -= 1
    return sums[0]


@aggregation_jit
def _numpy_sum(values):
    """``float(values.sum())`` of a float64 array, as numpy computes it."""
    return 0.0 + _pairwise_sum(values, 0, values.shape[0])


@aggregation_jit
def _candidate_columns_kernel(window):
    """``_local_search._candidate_columns``: [ties, gaps] by distance to the item.

    Sorted by distance, then ties before gaps, then the signed offset (all
    multiples of 1/2, so the composite integer keys are exact).
    """
    n_slots = 2 * window + 1
    n_columns = 2 * n_slots + 1
    keys = np.empty(n_columns, dtype=np.float64)  # small integers: exact
    span = 4 * window + 8
    for s in range(n_slots):
        twice = 2 * (s - window)  # twice the signed offset of a tie
        keys[s] = (abs(twice) * 2) * span + twice + span // 2
    for s in range(n_slots + 1):
        twice = 2 * (s - window) - 1  # twice the signed offset of a gap
        keys[n_slots + s] = (abs(twice) * 2 + 1) * span + twice + span // 2
    return stable_argsort(keys, n_columns)


@aggregation_jit
def _local_search_kernel(
    ranks_t,
    masses,
    group_bounds,
    group_values,
    total_weight,
    consensus,
    objective,
    window,
    max_iter,
    tol,
    rtol,
    max_batch_pairs,
    exact,
):
    """``_local_search._local_search_compiled`` with its passes in compiled code.

    The same passes, moves and batches, for exact arithmetic (integral item
    and ranking weights): every sum but the batches' tolerance is then exact
    whatever its order, and that one is added as numpy adds it
    (:func:`_numpy_sum`). Sorting by consensus bucket is a counting sort (the
    stable order numpy's argsort gives). Returns (consensus, objective,
    n_passes, converged). ``exact`` must be True (a typed argument, so that
    the batch kernel is the one compiled for the other searches).
    """
    n_items, n_rankings = ranks_t.shape
    scale = 0.0
    for i in range(n_items):
        scale += masses[i]
    scale = total_weight * scale
    consensus = consensus.astype(np.int64)
    active = np.arange(n_items)
    full = True
    n_passes = 0
    converged = False
    order = np.empty(n_items, dtype=np.int64)
    position = np.empty(n_items, dtype=np.int64)
    identity = np.arange(n_items)
    marked = np.zeros(n_items, dtype=np.bool_)
    sorted_buckets = np.empty(n_items, dtype=np.int64)
    sorted_masses = np.empty(n_items, dtype=np.float64)
    keys = np.empty(n_items, dtype=np.float64)
    cost_scale = 10.0 + n_rankings / 16.0
    while n_passes < max_iter:
        n_passes += 1
        # --- the best move of every active item (_best_moves_compiled)
        n_buckets = 0
        for i in range(n_items):
            n_buckets = max(n_buckets, consensus[i] + 1)
        starts = np.zeros(n_buckets + 1, dtype=np.int64)
        bucket_mass = np.zeros(n_buckets, dtype=np.float64)
        for i in range(n_items):
            starts[consensus[i] + 1] += 1
            bucket_mass[consensus[i]] += masses[i]
        for q in range(n_buckets):
            starts[q + 1] += starts[q]
        fill = starts[:-1].copy()
        for i in range(n_items):  # stable counting sort by bucket
            q = consensus[i]
            order[fill[q]] = i
            position[i] = fill[q]
            fill[q] += 1
        tables = np.empty(n_buckets, dtype=np.bool_)
        for q in range(n_buckets):
            tables[q] = (starts[q + 1] - starts[q]) * cost_scale >= n_rankings
        for p in range(n_items):
            sorted_buckets[p] = consensus[order[p]]
            sorted_masses[p] = masses[order[p]]
        for a in range(active.shape[0]):
            marked[position[active[a]]] = True
        slots = np.empty(active.shape[0], dtype=np.int64)
        n_slots = 0
        for p in range(n_items):
            if marked[p]:
                slots[n_slots] = p
                n_slots += 1
                marked[p] = False
        effective = min(window, n_buckets - 1)
        sorted_t, sorted_r = _gather_sorted(ranks_t, order)
        better, atmost, valid = _window_sums_kernel(
            slots,
            np.arange(n_slots),
            effective,
            sorted_buckets,
            identity,
            starts,
            tables,
            sorted_r,
            sorted_t,
            sorted_masses,
            group_bounds,
            group_values,
        )
        mover, gain_all, key_all, lo_all, hi_all, threshold_all = _best_moves_kernel(
            slots,
            effective,
            sorted_buckets,
            n_buckets,
            better,
            atmost,
            valid,
            bucket_mass,
            sorted_masses,
            total_weight,
            scale,
            rtol,
            _candidate_columns_kernel(effective),
        )
        n_moves = 0
        for a in range(n_slots):
            n_moves += mover[a]
        if n_moves == 0:
            if full:
                converged = True
                break
            active = np.arange(n_items)
            full = True
            continue
        # the moves by item (the movers are distinct items: no sort needed)
        slot_of = np.full(n_items, -1, dtype=np.int64)
        for a in range(n_slots):
            if mover[a]:
                slot_of[order[slots[a]]] = a
        item = np.empty(n_moves, dtype=np.int64)
        gain = np.empty(n_moves, dtype=np.float64)
        key = np.empty(n_moves, dtype=np.float64)
        lo = np.empty(n_moves, dtype=np.int64)
        hi = np.empty(n_moves, dtype=np.int64)
        threshold = np.empty(n_moves, dtype=np.float64)
        m = 0
        for i in range(n_items):
            if slot_of[i] < 0:
                continue
            item[m] = i
            m += 1
        for m in range(n_moves):
            a = slot_of[item[m]]
            gain[m] = gain_all[a]
            key[m] = key_all[a]
            lo[m] = lo_all[a]
            hi[m] = hi_all[a]
            threshold[m] = threshold_all[a]
        # --- the batch (_apply_batch_compiled)
        # by decreasing gain, ties by item (the moves are in item order)
        negated = np.empty(n_moves, dtype=np.float64)
        for m in range(n_moves):
            negated[m] = -gain[m]
        priority = stable_argsort(negated, n_moves)
        rank = np.empty(n_moves, dtype=np.int64)
        for m in range(n_moves):
            rank[priority[m]] = m
        batch = n_moves
        while batch > 1:
            if _count_overlaps(lo, hi, priority[:batch]) <= max_batch_pairs:
                break
            batch //= 2
        in_batch = np.zeros(n_moves, dtype=np.bool_)
        for c in range(batch):
            in_batch[priority[c]] = True
        chosen = np.empty(batch, dtype=np.int64)
        c = 0
        for m in range(n_moves):
            if in_batch[m]:
                chosen[c] = m
                c += 1
        old = consensus.astype(np.float64)
        new = old.copy()
        for c in range(batch):
            new[item[chosen[c]]] = key[chosen[c]]
        correction, dominated = _batch_kernel(
            chosen,
            rank,
            item,
            lo,
            hi,
            old,
            new,
            ranks_t,
            masses,
            group_bounds,
            group_values,
            total_weight,
            exact,  # an argument, not the literal True: no second compilation
        )
        gain_sum = 0.0
        tolerance_terms = np.empty(batch, dtype=np.float64)
        for c in range(batch):
            gain_sum += gain[chosen[c]]
            tolerance_terms[c] = threshold[chosen[c]]
        delta = -gain_sum + correction
        accepted = np.zeros(n_moves, dtype=np.bool_)
        independent_sum = 0.0
        for c in range(batch):
            if not dominated[chosen[c]]:
                accepted[chosen[c]] = True
                independent_sum += gain[chosen[c]]
        independent_delta = -independent_sum
        tolerance = _numpy_sum(tolerance_terms)
        if delta < min(independent_delta, -tolerance):
            for c in range(batch):
                accepted[chosen[c]] = True
        else:
            delta = independent_delta
        # --- the next consensus and the items to examine again
        for i in range(n_items):
            keys[i] = consensus[i]
        reach = min(window, n_buckets)
        marks = np.zeros(n_buckets + 1, dtype=np.int64)
        for m in range(n_moves):
            if accepted[m]:
                keys[item[m]] = key[m]
                marks[max(lo[m] - reach - 1, 0)] += 1
                marks[min(hi[m] + reach + 2, n_buckets)] -= 1
        touched = np.zeros(n_buckets, dtype=np.bool_)
        running = 0
        for q in range(n_buckets):
            running += marks[q]
            touched[q] = running > 0
        is_active = np.zeros(n_items, dtype=np.bool_)
        n_active = 0
        for i in range(n_items):
            is_active[i] = touched[consensus[i]]
        for m in range(n_moves):
            if accepted[m]:
                is_active[item[m]] = True
        for i in range(n_items):
            n_active += is_active[i]
        active = np.empty(n_active, dtype=np.int64)
        n_active = 0
        for i in range(n_items):
            if is_active[i]:
                active[n_active] = i
                n_active += 1
        # dense buckets of the new keys (np.unique's inverse)
        by_key = stable_argsort(keys, n_items)
        bucket = -1
        previous = 0.0
        for p in range(n_items):
            i = by_key[p]
            if p == 0 or keys[i] != previous:
                bucket += 1
                previous = keys[i]
            consensus[i] = bucket
        objective += delta
        full = n_active == n_items
        if -delta <= tol * objective:
            break
    return consensus, objective, n_passes, converged
