"""Constructive rank-aggregation heuristics: Borda, mean rank, Copeland, KwikSort.

Each returns a dense consensus bucket order (0 = top) of the items of a
:class:`~treerank.aggregation._bucket_order._RankingData`. With item masses m
and ranking weights w:

- **Borda**: item i's cost in ranking b is the mass ranked strictly above it
  plus half the mass tied with it (itself excluded), i.e. its expected number of
  "defeats"; items are sorted by the w-weighted sum of these costs, equal sums
  tied. O(M B).
- **mean**: items sorted by the w-weighted mean of the normalized rank
  ``r_b / K_b`` (dense rank over the K_b buckets of ranking b): the order of the
  mean normalized leaf score ``(K_b - r_b) / K_b`` that the original R TreeRank
  forest uses. O(M B).
- **Copeland**: i beats j when placing i above j costs less than the reverse,
  i.e. when more ranking weight puts i strictly above j than below; items are
  sorted by the mass of the items they beat plus half the mass of those they
  draw with. O(M^2 B) time, O(M B) memory (rows processed in chunks).
- **KwikSort** (pivot): a random pivot splits its group into the items better
  placed above it, tied with it, or below it (the cheapest of the three pair
  costs); the tied items form the pivot's bucket and the two other parts are
  split again. All groups of one level are processed together: O(M B) per
  level, O(M B log M) expected.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.aggregation._kernels import (
    _borda_kernel,
    _compiled_for,
    _copeland_kernel,
    _kwiksort_kernel,
    _mean_rank_kernel,
)

__all__ = []

_COPELAND_CHUNK = 1 << 24  # compared bytes per chunk


def _dense_from_keys(keys):
    """Dense bucket order from keys, smaller key = better, equal keys tied."""
    return np.unique(keys, return_inverse=True)[1].astype(np.intp).ravel()


def _borda_costs(data):
    """Weighted Borda cost of each item (mass above + half the tied mass)."""
    masses = data.item_weights
    if _compiled_for(data):
        return _borda_kernel(data.ranks, data.n_buckets, masses, data.ranking_weights)
    costs = np.zeros(data.n_items)
    for b in range(data.n_rankings):
        weight = data.ranking_weights[b]
        if weight == 0.0:
            continue
        ranks = data.ranks[b]
        bucket_mass = np.bincount(
            ranks, weights=masses, minlength=int(data.n_buckets[b])
        )
        above = np.cumsum(bucket_mass) - bucket_mass
        # above + (bucket mass - own mass) / 2, all in units of 1/2 (exact sums)
        costs += weight * ((2.0 * above + bucket_mass)[ranks] - masses)
    return 0.5 * costs


def _borda(data):
    return _dense_from_keys(_borda_costs(data))


def _mean_rank(data):
    scale = np.maximum(data.n_buckets, 1).astype(np.float64)
    if _compiled_for(data):
        keys = _mean_rank_kernel(data.ranks, scale, data.ranking_weights)
        return _dense_from_keys(keys)
    normalized = data.ranks / scale[:, None]
    return _dense_from_keys((data.ranking_weights[:, None] * normalized).sum(axis=0))


def _copeland(data):
    if data.exact and _compiled_for(data):  # exact sums: the same scores
        score = _copeland_kernel(data.ranks_t, data.item_weights, data.ranking_weights)
        return _dense_from_keys(-score)  # the draw with itself left out
    n_items = data.n_items
    ranks = data.ranks_t
    masses = data.item_weights
    score = np.empty(n_items)
    step = max(1, _COPELAND_CHUNK // max(n_items * data.n_rankings, 1))
    for s in range(0, n_items, step):
        rows = ranks[s : s + step]
        shape = (rows.shape[0] * n_items, data.n_rankings)
        above = data.weighted_counts(
            (rows[:, None, :] < ranks[None, :, :]).reshape(shape)
        )
        below = data.weighted_counts(
            (rows[:, None, :] > ranks[None, :, :]).reshape(shape)
        )
        preference = (above - below).reshape(rows.shape[0], n_items)
        points = (preference > 0) + 0.5 * (preference == 0)
        score[s : s + step] = (points * masses).sum(axis=1)
    score -= 0.5 * masses  # an item draws with itself
    return _dense_from_keys(-score)


def _kwiksort(data, rng):
    """One randomized KwikSort run, all groups of a level at once."""
    if data.exact and _compiled_for(data):
        # the compiled run, on the draws the numpy run would make: at most one
        # per item, drawn ahead; the generator then advances by those used
        state = rng.get_state()
        uniforms = rng.random_sample(data.n_items)
        position, used = _kwiksort_kernel(
            data.ranks_t, data.ranking_weights, data.total_weight, uniforms
        )
        rng.set_state(state)
        rng.random_sample(used)
        return _dense_from_keys(position)
    n_items = data.n_items
    ranks = data.ranks_t
    total_weight = data.total_weight
    position = np.zeros(n_items, dtype=np.intp)  # final key (shared by a bucket)
    group = np.zeros(n_items, dtype=np.intp)  # -1 once placed
    group_low = np.zeros(1, dtype=np.intp)  # first position of each group
    active = np.arange(n_items)
    while active.shape[0]:
        labels = group[active]
        n_groups = int(labels.max()) + 1
        order = np.argsort(labels, kind="stable")
        sizes = np.bincount(labels, minlength=n_groups)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        offset = np.floor(rng.random_sample(n_groups) * sizes).astype(np.intp)
        pivots = active[order[starts + offset]]
        pivot_rows = ranks[pivots[labels]]
        item_rows = ranks[active]
        better = data.weighted_counts(item_rows < pivot_rows)
        worse = data.weighted_counts(item_rows > pivot_rows)
        tied = total_weight - better - worse
        # cost of placing the item above the pivot, tied with it, below it
        costs = np.stack(
            [0.5 * (better + worse), worse + 0.5 * tied, better + 0.5 * tied], axis=1
        )
        side = np.argmin(costs, axis=1)  # 0 tied, 1 above, 2 below (ties -> tie)
        side[active == pivots[labels]] = 0
        counts = np.bincount(labels * 3 + side, minlength=3 * n_groups).reshape(
            n_groups, 3
        )
        # new layout inside each group: [above | tied | below]
        low = group_low[:n_groups]
        above_low = low
        tied_low = low + counts[:, 1]
        below_low = tied_low + counts[:, 0]
        is_tied = side == 0
        position[active[is_tied]] = tied_low[labels[is_tied]]
        group[active[is_tied]] = -1
        # surviving parts become the groups of the next level
        part = labels * 2 + (side == 2)
        moving = ~is_tied
        part_sizes = np.bincount(part[moving], minlength=2 * n_groups)
        keep = part_sizes > 1
        singles = moving & ~keep[part]
        part_low = np.stack([above_low, below_low], axis=1).ravel()
        position[active[singles]] = part_low[part[singles]]
        group[active[singles]] = -1
        new_id = np.cumsum(keep) - 1
        survivors = moving & keep[part]
        group[active[survivors]] = new_id[part[survivors]]
        group_low = part_low[keep]
        active = active[survivors]
    return _dense_from_keys(position)
