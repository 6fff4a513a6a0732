"""Compiled kernels of the Kemeny median's local search.

The numba ports of the numpy local search of :mod:`._local_search`: the
per-bucket masses of the window of each item, the best move of each item, the
exact change of a batch of moves, and the whole search in one kernel for small
problems in exact arithmetic. They compute the same quantities with the same
summation order where it matters, as the other kernels of the median
(:mod:`._kernels`, whose conventions they share: rankings as ``ranks`` (B, M)
and ``ranks_t`` (M, B), ranking weights as ``group_bounds`` and
``group_values``), run without the GIL and are cached on disk.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._jit import aggregation_jit, inner_jit
from treerank._engine._sorting import counting_argsort, stable_argsort
from treerank.aggregation._kernels import _count_lt_le, _gather_sorted

__all__ = []


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
