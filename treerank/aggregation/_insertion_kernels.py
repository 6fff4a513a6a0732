"""Compiled kernels of the insertion of unseen items (:mod:`._insertion`).

The methods of :class:`~._insertion.ConsensusInserter` (their only
implementation, at every size): the dense thresholds and search keys of new
items (:func:`_thresholds_kernel`), the galloping search of the block
boundary where an item's cost stops decreasing (:func:`_block_search_kernel`,
the fast method), and the evaluation of every position of a run of buckets
(around that boundary, or all of them for the exact method), from the full
(gap x rank) prefix tables once they are built (:func:`_region_full_kernel`)
or bucket by bucket (:func:`_region_scan_kernel`, which also writes the
costs of :meth:`~._insertion.ConsensusInserter.position_costs`). The tables
themselves, the block sizes and the search keys are built by
:mod:`._insertion`.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._jit import aggregation_jit, inner_jit
from treerank.aggregation._kernels import _count_below

__all__ = []

# items of a chunk whose costs are summed together, ranking by ranking: their
# accumulators and one ranking's table stay in cache
_GROUP = 64


@aggregation_jit
def _thresholds_kernel(
    ranks,
    permutation,
    low,
    map_offset,
    lower_map,
    upper_map,
    prefix,
    prefix_offset,
    half_weights,
    lower,
    upper,
    keys,
):
    """Dense thresholds: the number of a ranking's values <, and <=, a rank.

    Column b of ``lower`` and ``upper`` is ranking ``permutation[b]`` of
    ``ranks`` (the stored order of the rankings).
    ``lower_map[map_offset[b] + v - low[b] + 1]`` holds them for every value v
    from ``low[b] - 1`` to ``high[b] + 1``; values beyond are clipped to these
    ends (same thresholds). Also writes each row's search key, its Borda score
    (:func:`_item_keys`, the same sums in the same order), from the prefix
    masses ``prefix[prefix_offset[b] + k]`` and the halved ranking weights.
    Indices are unsigned (no wraparound in the loop).
    """
    n_rows, n_rankings = lower.shape
    for row in range(np.uint64(n_rows)):
        key = 0.0
        for b in range(np.uint64(n_rankings)):
            begin = map_offset[b]
            size = map_offset[b + np.uint64(1)] - begin
            k = np.int64(ranks[row, np.uint64(permutation[b])]) - low[b] + 1
            k = np.uint64(begin + min(max(k, 0), size - 1))
            below = lower_map[k]
            not_above = upper_map[k]
            lower[row, b] = below
            upper[row, b] = not_above
            start = np.uint64(prefix_offset[b])
            key += half_weights[b] * (
                prefix[start + np.uint64(below)] + prefix[start + np.uint64(not_above)]
            )
        keys[row] = key


def _threshold_maps(values):
    """Direct maps of :func:`_thresholds_kernel` from each ranking's values."""
    low = np.array([v[0] for v in values], dtype=np.int64)
    sizes = np.array([v[-1] - v[0] + 3 for v in values], dtype=np.int64)
    map_offset = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    lower_map = np.empty(map_offset[-1], dtype=np.int64)
    upper_map = np.empty(map_offset[-1], dtype=np.int64)
    for b, row_values in enumerate(values):
        grid = np.arange(row_values[0] - 1, row_values[-1] + 2)
        begin, end = map_offset[b], map_offset[b + 1]
        lower_map[begin:end] = np.searchsorted(row_values, grid, side="left")
        upper_map[begin:end] = np.searchsorted(row_values, grid, side="right")
    return low, map_offset, lower_map, upper_map


@inner_jit(error_model="python")
def _boundary_rising(columns_lo, columns_up, middle, tables):
    """Whether an item's cost does not decrease across block ``middle``.

    ``columns_lo`` and ``columns_up`` are the item's columns of the table rows
    (:func:`_block_search_kernel`); ``tables`` is ``(block_tables, stride,
    ranking_weights, total_weight, mass_before)``.
    """
    block_tables, stride, weights, total_weight, mass_before = tables
    start_sum = 0.0
    end_sum = 0.0
    at = np.uint64(middle)
    start_row = at * np.uint64(stride)
    end_row = start_row + np.uint64(stride)
    for b in range(np.uint64(columns_lo.shape[0])):
        lo = np.uint64(columns_lo[b])
        up = np.uint64(columns_up[b])
        weight = weights[b]
        start_sum += weight * (
            np.float64(block_tables[start_row + lo])
            + np.float64(block_tables[start_row + up])
        )
        end_sum += weight * (
            np.float64(block_tables[end_row + lo])
            + np.float64(block_tables[end_row + up])
        )
    cost_start = total_weight * mass_before[at] - start_sum
    cost_end = total_weight * mass_before[at + np.uint64(1)] - end_sum
    return cost_end >= cost_start


@aggregation_jit
def _block_search_kernel(
    lower,
    upper,
    rows,
    guess,
    block_tables,
    widths_offset,
    ranking_weights,
    total_weight,
    mass_before,
    bounds_buckets,
    window,
    n_buckets,
    first,
    last,
):
    """Search of the block boundary where the cost stops decreasing.

    The first block whose cost does not decrease across it (its slope, the
    majority preference of the whole block, is >= 0), found by a galloping
    search from the block ``guess[row]``: steps of 1, 2, 4, ... away from the
    guess until the sign changes, a step that would leave the consensus
    probing its first or last block instead (an item placed at an end, common
    for new items of a large forest, costs two probes, not twice the log of
    its distance), then a binary search between the last two probes. With a
    sign that changes once along the consensus (a cost unimodal at the scale
    of the blocks) the result is the same as a binary search over all blocks,
    in O(log d) probes for a guess d blocks away. A
    negative guess asks for the bisection of all blocks, whose result is
    monotone: an item that every ranking puts at least as high as another
    (so whose block slopes are all at least as large) stops at a boundary at
    least as high.

    ``block_tables[J * S + widths_offset[b] + k]`` is the mass of the items of
    the blocks before J that ranking b ranks < k (S = ``widths_offset[-1]``):
    a probe reads two consecutive rows, and items searched one after the
    other (similar keys) probe nearby rows. An item's columns ``widths_offset[b]
    + lower`` (and ``upper``) are computed once for all its probes. The i-th item
    searched is row
    ``rows[i]`` of ``lower`` and ``upper`` (no copy in the visiting order);
    writes its run of buckets ``first[i] .. last[i] - 1`` to evaluate exactly.
    """
    n_new = rows.shape[0]
    n_rankings = lower.shape[1]
    n_blocks = bounds_buckets.shape[0] - 1
    tables = (
        block_tables,
        widths_offset[n_rankings],
        ranking_weights,
        total_weight,
        mass_before,
    )
    columns_lo = np.empty(n_rankings, dtype=np.int64)
    columns_up = np.empty(n_rankings, dtype=np.int64)
    for i in range(n_new):
        row = rows[i]
        for b in range(n_rankings):
            columns_lo[b] = widths_offset[b] + np.int64(lower[row, b])
            columns_up[b] = widths_offset[b] + np.int64(upper[row, b])
        start = min(guess[i], n_blocks - 1)
        if start < 0:  # no guess: a bisection of all the blocks
            low = 0
            high = n_blocks
        elif _boundary_rising(columns_lo, columns_up, start, tables):
            high = start
            low = 0
            step = 1
            while high > 0:
                probe = max(start - step, 0)  # the last step stops at the end
                if _boundary_rising(columns_lo, columns_up, probe, tables):
                    high = probe
                    step *= 2
                else:
                    low = probe + 1
                    break
        else:
            low = start + 1
            high = n_blocks
            step = 1
            while low < n_blocks:
                probe = min(start + step, n_blocks - 1)
                if _boundary_rising(columns_lo, columns_up, probe, tables):
                    high = probe
                    break
                low = probe + 1
                step *= 2
        while low < high:
            middle = (low + high) // 2
            if _boundary_rising(columns_lo, columns_up, middle, tables):
                high = middle
            else:
                low = middle + 1
        first[i] = max(bounds_buckets[max(low - 1, 0)] - window, 0)
        last[i] = min(bounds_buckets[min(low + 1, n_blocks)] + window, n_buckets)


@aggregation_jit
def _region_full_kernel(
    lower,
    upper,
    rows,
    first,
    last,
    full_tables,
    rank_offset,
    ranking_weights,
    total_weight,
    mass_before_gap,
    bucket_mass,
    out,
):
    """Every position of each item's run of buckets, from full prefix tables.

    ``full_tables[rank_offset[b] + k * (Q + 1) + g]`` is the mass of the items of
    the buckets before gap g that ranking b ranks < k, so the cost of each gap
    of a run is one look-up per ranking (contiguous along the run), summed
    ranking by ranking. The i-th item is row ``rows[i]`` of ``lower``,
    ``upper`` and ``out``, with its run ``first[i] .. last[i] - 1``.
    Positions as in :meth:`ConsensusInserter.positions`.
    """
    n_new = rows.shape[0]
    n_rankings = lower.shape[1]
    n_gaps = bucket_mass.shape[0] + 1
    span = 0
    for row in range(n_new):
        span = max(span, last[row] - first[row] + 1)
    below = np.empty((_GROUP, span), dtype=np.float64)
    not_above = np.empty((_GROUP, span), dtype=np.float64)
    for group in range(0, n_new, _GROUP):
        size = min(_GROUP, n_new - group)
        below[:] = 0.0
        not_above[:] = 0.0
        gaps = np.uint64(n_gaps)
        for b in range(np.uint64(n_rankings)):
            weight = ranking_weights[b]
            offset = np.uint64(rank_offset[b])
            for r in range(np.uint64(size)):
                i = np.uint64(group) + r
                row = np.uint64(rows[i])
                start = np.uint64(first[i])
                lo_base = offset + np.uint64(lower[row, b]) * gaps + start
                up_base = offset + np.uint64(upper[row, b]) * gaps + start
                for s in range(np.uint64(last[i]) - start + np.uint64(1)):
                    below[r, s] += weight * np.float64(full_tables[lo_base + s])
                    not_above[r, s] += weight * np.float64(full_tables[up_base + s])
        for r in range(size):
            i = group + r
            start = first[i]
            reference = (
                total_weight * mass_before_gap[start] - below[r, 0] - not_above[r, 0]
            )
            best = 0.0
            best_slot = 0
            for s in range(last[i] - start):
                q = start + s
                gap_cost = (
                    total_weight * mass_before_gap[q] - below[r, s] - not_above[r, s]
                ) - reference
                tie = gap_cost + (
                    0.5 * total_weight * bucket_mass[q]
                    - (not_above[r, s + 1] - not_above[r, s])
                )
                if tie < best:
                    best = tie
                    best_slot = 2 * s + 1
                next_cost = (
                    total_weight * mass_before_gap[q + 1]
                    - below[r, s + 1]
                    - not_above[r, s + 1]
                ) - reference
                if next_cost < best:
                    best = next_cost
                    best_slot = 2 * s + 2
            out[rows[i]] = start + best_slot / 2.0 - 0.5


@inner_jit(error_model="python")
def _group_table_sum(tables, base, column_lo, column_up, bounds, values):
    """Weighted sums over rankings of two table entries per ranking.

    ``tables[base + column_lo[b]]`` and ``tables[base + column_up[b]]`` are
    ranking b's entries (the columns of an item's thresholds, computed once
    per item and shared by every table it reads).
    """
    below = 0.0
    at_most = 0.0
    for g in range(values.shape[0]):
        value = values[g]
        if value == 0.0:
            continue
        lt = 0.0
        le = 0.0
        for b in range(np.uint64(bounds[g]), np.uint64(bounds[g + 1])):
            lt += np.float64(tables[np.uint64(base + column_lo[b])])
            le += np.float64(tables[np.uint64(base + column_up[b])])
        below += value * lt
        at_most += value * le
    return below, at_most


@aggregation_jit
def _region_scan_kernel(
    lower,
    upper,
    rows,
    first,
    last,
    group_bounds,
    group_values,
    total_weight,
    starts,
    bucket_mass,
    bucket_table,
    bucket_tables,
    bucket_stride,
    widths_offset,
    sorted_t,
    sorted_masses,
    out,
    costs,
):
    """Every position of each item's run of buckets, bucket by bucket.

    Before the full tables are built (or when they do not fit): a tabled
    bucket costs one look-up per ranking, another bucket one row comparison
    per member. The i-th item is row ``rows[i]`` of ``lower``, ``upper`` and
    ``out``, with its run ``first[i] .. last[i] - 1``. When ``costs`` has
    rows, row ``rows[i]`` of it also receives the cost of every position of
    the run (gap, tie, gap, ..., gap), relative to the gap before
    ``first[i]``.
    """
    n_new = rows.shape[0]
    keep_costs = costs.shape[0] > 0
    n_rankings = lower.shape[1]
    single = group_values.shape[0] == 1 and group_values[0] != 0.0
    weight = group_values[0]
    narrow = n_rankings < 65536  # counts of rankings fit 16 bits
    # the table columns of a row's thresholds, shared by its tabled buckets
    column_lo = np.empty(n_rankings, dtype=np.int64)
    column_up = np.empty(n_rankings, dtype=np.int64)
    for i in range(n_new):
        row = rows[i]
        lo_row = lower[row]
        up_row = upper[row]
        start = first[i]
        best = 0.0
        best_slot = 0
        gap = 0.0
        for b in range(n_rankings):
            column_lo[b] = widths_offset[b] + np.int64(lo_row[b])
            column_up[b] = widths_offset[b] + np.int64(up_row[b])
        if keep_costs:
            costs[row, 0] = 0.0
        for q in range(start, last[i]):
            t = bucket_table[q]
            if t >= 0:
                better, at_most = _group_table_sum(
                    bucket_tables,
                    t * bucket_stride,
                    column_lo,
                    column_up,
                    group_bounds,
                    group_values,
                )
            elif single:
                # one ranking weight: integer counts over whole rows, in
                # 16-bit counters when they cannot overflow (LLVM then
                # compares and adds 16 rankings per instruction: 30% faster
                # than 64-bit counters, which widen every comparison)
                better = 0.0
                at_most = 0.0
                for p in range(starts[q], starts[q + 1]):
                    if narrow:
                        lt16 = np.uint16(0)
                        lu16 = np.uint16(0)
                        for b in range(n_rankings):
                            x = sorted_t[p, b]
                            lt16 = np.uint16(lt16 + (x < lo_row[b]))
                            lu16 = np.uint16(lu16 + (x < up_row[b]))
                        lt = np.int64(lt16)
                        lu = np.int64(lu16)
                    else:
                        lt = 0
                        lu = 0
                        for b in range(n_rankings):
                            x = sorted_t[p, b]
                            lt += x < lo_row[b]
                            lu += x < up_row[b]
                    better += sorted_masses[p] * (weight * lt)
                    at_most += sorted_masses[p] * (weight * lu)
            else:
                better = 0.0
                at_most = 0.0
                for p in range(starts[q], starts[q + 1]):
                    below = 0.0
                    not_above = 0.0
                    for g in range(group_values.shape[0]):
                        value = group_values[g]
                        if value == 0.0:
                            continue
                        begin = group_bounds[g]
                        end = group_bounds[g + 1]
                        lt, le = _count_below(
                            sorted_t[p, begin:end],
                            lo_row[begin:end],
                            up_row[begin:end],
                        )
                        below += value * lt
                        not_above += value * le
                    better += sorted_masses[p] * below
                    at_most += sorted_masses[p] * not_above
            mass = bucket_mass[q]
            tie = gap + (0.5 * total_weight * mass - at_most)
            if tie < best:
                best = tie
                best_slot = 2 * (q - start) + 1
            gap = gap + (total_weight * mass - better - at_most)
            if keep_costs:
                costs[row, 2 * (q - start) + 1] = tie
                costs[row, 2 * (q - start) + 2] = gap
            if gap < best:
                best = gap
                best_slot = 2 * (q - start) + 2
        out[row] = start + best_slot / 2.0 - 0.5
