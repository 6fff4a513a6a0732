"""Compiled kernels of the Kemeny median: objective, Borda costs, starts.

The objective and the constructive starts (:mod:`._objective`,
:mod:`._heuristics`) keep a numpy version for small problems, and these are
their numba versions, with the size thresholds that choose between the two
(:func:`_use_compiled`) and the row comparisons the kernels share (the
local search and the insertion have no numpy version: their kernels, in
:mod:`._local_search_kernels` and :mod:`._insertion_kernels`, run at every
size). They compute the same quantities with the same summation order where
it matters (weighted counts of rankings are integer counts per group of
equal ranking weight, times the weight), so that integer masses and weights
give bit-identical results. They run without the GIL (``nogil=True``) and
are cached on disk (``cache=True``); no kernel starts threads of its own.

Rankings are passed as ``ranks`` (B, M) and ``ranks_t`` (M, B) in the compact
dense dtype of :class:`~._bucket_order._RankingData`, ranking weights as
``group_bounds`` (the runs of rankings of equal weight) and ``group_values``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._jit import aggregation_jit, inner_jit
from treerank._engine._sorting import counting_argsort

__all__ = []

# problems with n_items * n_rankings below this use the numpy objective and
# starts (the local search and the insertion are compiled at every size)
_COMPILED_MIN_SIZE = 1 << 17
# with exact arithmetic (integral masses and weights, every sum below 2^52) the
# kernels give the numpy solvers' results to the last bit, and take over from
# problems 2^7 times smaller: a small forest's median then costs no more per
# entry than a large one's (numpy's fixed cost per call dominates below that)
_EXACT_SIZE_SHIFT = 7


def _use_compiled(n_items, n_rankings, exact=False):
    """Whether the objective and starts of a problem of this size are compiled.

    ``exact``: whether its arithmetic is exact (``_RankingData.exact``).
    """
    size = n_items * n_rankings
    if exact:
        return size >= _COMPILED_MIN_SIZE >> _EXACT_SIZE_SHIFT
    return size >= _COMPILED_MIN_SIZE


def _compiled_for(data):
    """Whether the objective and starts of a ``_RankingData`` are compiled."""
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
