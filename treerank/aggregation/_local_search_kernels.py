"""Compiled kernels of the Kemeny median's local search.

The work of a pass of :mod:`._local_search` (its only implementation): the
per-bucket masses of the window of each item (:func:`_window_sums_kernel`),
the best move of each item (:func:`_best_moves_kernel`) and the exact change
of a batch of moves (:func:`_batch_kernel`). They share the conventions of
the other kernels of the median (:mod:`._kernels`: rankings as ``ranks``
(B, M) and ``ranks_t`` (M, B), ranking weights as ``group_bounds`` and
``group_values``), run without the GIL and are cached on disk.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._jit import aggregation_jit, inner_jit
from treerank._engine._sorting import counting_argsort
from treerank.aggregation._kernels import _count_lt_le

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
