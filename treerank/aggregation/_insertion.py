"""Insertion of unseen items into a fitted consensus bucket order (DESIGN §5.5).

A new item x is known only by its bucket in each ranking (for a forest: the rank
of its leaf in each tree). Its Kendall cost against the rankings, when placed in
the consensus, is

    cost(position) = sum_b w_b sum_j m_j U_xj(position, r_b),

over the fitted items j. Placing x in a new bucket at gap g (between consensus
buckets g - 1 and g) or tying it with bucket q, the cost changes between
neighbouring positions by per-bucket quantities only: with ``better_q`` and
``atmost_q`` the ranking-weighted masses of the members of q ranked strictly
above x, or not below x, by the rankings, and W = sum_b w_b,

    gap(g + 1) - gap(g) = slope_q = W mass_q - better_q - atmost_q   (q = g),
    tie(q) - gap(q)     = W mass_q / 2 - atmost_q.

``slope_q`` is the "majority preference" of bucket q against x: negative when
most of its mass is ranked above x. The exact method evaluates every position
(O(Q B) per item).

The fast method works at two scales. The consensus buckets are grouped into
G <= 128 blocks of consecutive buckets, and for each ranking a table of prefix
masses at the block boundaries (mass of the buckets before the boundary ranked
below a given rank) gives the cost of x at any block boundary in O(B). A binary
search on the sign of the block slopes (the majority preference of a whole
block, much less noisy than that of a single bucket) finds the block boundary
where the cost stops decreasing; every position in the two neighbouring blocks
(plus ``window`` buckets on each side) is then evaluated exactly, bucket by
bucket. The cost is O(B (log G + Q / G + window)) per item, and the result is
the exact optimum whenever the cost is unimodal at the scale of the blocks. A
bucket query costs one table look-up per ranking for a large bucket or one row
comparison per member for a small one. Each item is treated on its own: its
position does not depend on the other items of the batch.

Positions are returned on the consensus bucket scale: ``q`` means tied with
bucket q, ``g - 0.5`` a new bucket just above bucket g (``-0.5`` above the top
bucket, ``Q - 0.5`` below the last one). Among positions of equal cost the
topmost is returned.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers

import numpy as np

from treerank.aggregation._bucket_index import _BucketIndex
from treerank.aggregation._bucket_order import (
    _compact_dtype,
    _dense_rows,
    _RankingData,
    check_bucket_order,
    check_rankings,
)
from treerank.utils.validation import check_sample_weight

__all__ = ["ConsensusInserter"]

_MAX_BLOCKS = 128


class ConsensusInserter:
    """Kendall-optimal positions of new items in a fitted consensus.

    Built from the fitted consensus and the rankings it aggregates (plain
    arrays, so a model file can store them and rebuild the object); the
    internal index is built on first use and is not pickled.

    Parameters
    ----------
    consensus : array-like of shape (n_items,)
        Consensus bucket order of the fitted items (e.g. from
        :func:`kemeny_median`); re-coded densely as 0..Q-1.
    rankings : array-like of shape (n_rankings, n_items)
        The rankings of the fitted items (smaller = better, equal = tied). New
        items are given on the same scale (for a forest: leaf ranks).
    item_weights : array-like of shape (n_items,), default=None
        Masses of the fitted items; None means 1.
    ranking_weights : array-like of shape (n_rankings,), default=None
        Weights of the rankings; None means 1.

    Attributes
    ----------
    consensus : ndarray of shape (n_items,), dtype=int64
    rankings : ndarray of shape (n_rankings, n_items), dtype=int64
    item_weights : ndarray of shape (n_items,), dtype=float64
    ranking_weights : ndarray of shape (n_rankings,), dtype=float64
    n_buckets : int
        Number Q of consensus buckets.

    See Also
    --------
    kemeny_median : computes the consensus.

    Notes
    -----
    With W the total ranking weight, and ``better_q`` / ``atmost_q`` the
    ranking-weighted masses of the items of consensus bucket q that the
    rankings put strictly above / not below the new item, its cost increases
    by ``slope_q = W mass_q - better_q - atmost_q`` from the gap above bucket q
    to the gap below it, and tying it with q costs ``W mass_q / 2 - atmost_q``
    more than the gap above q. ``slope_q`` is the majority preference of bucket
    q against the item: negative while most of the mass of q is ranked above
    it.

    The exact method sums these over all Q buckets: O(Q B) per item. The fast
    method groups the buckets into G <= 128 blocks, finds by binary search the
    block boundary where the cost stops decreasing (the cost at a block
    boundary is read in O(B) from per-ranking prefix tables), and evaluates
    every position of the two blocks around it exactly:
    O(B (log G + Q / G + window)) per item. It is exact when the cost is
    unimodal at the scale of the blocks; ``benchmarks/results/aggregation.md``
    reports how often it matches the exact method.

    Memory: the rankings (O(M B) small integers), the block tables
    (O(G K B), K the largest number of buckets of a ranking) and the tables of
    the consensus buckets of more than 8 items (O(n_large K B)), built on first
    use.

    Examples
    --------
    >>> from treerank.aggregation import ConsensusInserter
    >>> rankings = [[0, 1, 3], [0, 2, 3], [1, 0, 3]]  # 3 trees, 3 cells
    >>> inserter = ConsensusInserter([0, 1, 2], rankings)
    >>> inserter.positions([[2, 1, 2], [0, 0, 0], [3, 3, 3]])
    array([1.5, 0. , 2. ])
    """

    def __init__(self, consensus, rankings, item_weights=None, ranking_weights=None):
        rankings = check_rankings(rankings)
        n_rankings, n_items = rankings.shape
        consensus = check_bucket_order(consensus, n_items, input_name="consensus")
        self.consensus = _dense_rows(consensus[None, :])[0][0]
        self.rankings = rankings
        self.item_weights = check_sample_weight(
            item_weights, n_items, input_name="item_weights"
        )
        self.ranking_weights = check_sample_weight(
            ranking_weights, n_rankings, input_name="ranking_weights"
        )
        self._state = None

    @property
    def n_buckets(self):
        """Number of consensus buckets."""
        return int(self.consensus.max()) + 1

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_state"] = None
        return state

    def _prepared(self):
        if self._state is None:
            data = _RankingData(self.rankings, self.ranking_weights, self.item_weights)
            values = [np.unique(row) for row in self.rankings[data.permutation]]
            consensus = self.consensus.astype(np.intp)
            index = _BucketIndex(data, consensus, cache_tables=True)
            self._state = (data, values, index, self._block_tables(data, consensus))
        return self._state

    @staticmethod
    def _block_tables(data, consensus):
        """Prefix masses at the block boundaries of the consensus, per ranking.

        Returns (bounds, mass_before, tables, width): ``bounds[j]`` is the first
        bucket of block j (``bounds[-1] = Q``), ``mass_before[j]`` the mass of
        the buckets before it, and ``tables[b, j, k]`` the mass of those ranked
        < k by ranking b.
        """
        n_buckets = int(consensus.max()) + 1
        n_blocks = min(n_buckets, _MAX_BLOCKS)
        bounds = (np.arange(n_blocks + 1) * n_buckets) // n_blocks
        block = np.searchsorted(bounds, consensus, side="right") - 1
        width = int(data.n_buckets.max()) + 1
        tables = np.zeros((data.n_rankings, n_blocks + 1, width), dtype=data.mass_dtype)
        for b in range(data.n_rankings):
            cell = (block + 1) * width + data.ranks[b] + 1
            counts = np.bincount(
                cell, weights=data.item_weights, minlength=(n_blocks + 1) * width
            ).astype(data.mass_dtype, copy=False)
            table = counts.reshape(n_blocks + 1, width)
            np.cumsum(table, axis=1, out=tables[b])
            np.cumsum(tables[b], axis=0, out=tables[b])
        mass = np.bincount(block + 1, weights=data.item_weights, minlength=n_blocks + 1)
        return bounds, np.cumsum(mass), tables.ravel(), width

    def _boundary_costs(self, lower, upper, rows, blocks):
        """Cost of placing items at block boundaries (up to a per-item constant)."""
        data, _, _, (bounds, mass_before, tables, width) = self._prepared()
        n_rankings = data.n_rankings
        n_boundaries = bounds.shape[0]
        ranking_offset = np.arange(n_rankings) * n_boundaries
        base = (ranking_offset[None, :] + blocks[:, None]) * width
        values = tables.take(base + lower[rows]) + tables.take(base + upper[rows])
        weighted = (values * data.ranking_weights).sum(axis=1)
        return data.total_weight * mass_before[blocks] - weighted

    def _thresholds(self, ranks):
        """Dense thresholds (strictly above, not below) of new items per ranking."""
        data, values, _, _ = self._prepared()
        ranks = np.asarray(ranks)
        if ranks.ndim != 2:
            raise ValueError(
                "ranks must be a two-dimensional array of shape (n_new_items, "
                f"n_rankings); got an array of shape {ranks.shape}."
            )
        if ranks.shape[0] == 0:
            empty = np.empty((0, data.n_rankings), dtype=np.intp)
            return empty, empty
        ranks = check_rankings(ranks, input_name="ranks")
        if ranks.shape[1] != data.n_rankings:
            raise ValueError(
                f"ranks has {ranks.shape[1]} columns but the consensus aggregates "
                f"{data.n_rankings} rankings."
            )
        ranks = ranks[:, data.permutation]
        dtype = _compact_dtype(int(data.n_buckets.max()))
        lower = np.empty(ranks.shape, dtype=dtype)
        upper = np.empty(ranks.shape, dtype=dtype)
        for b, row_values in enumerate(values):
            lower[:, b] = np.searchsorted(row_values, ranks[:, b], side="left")
            upper[:, b] = np.searchsorted(row_values, ranks[:, b], side="right")
        return lower, upper

    def _run_costs(self, lower, upper, first, last):
        """Costs of the positions in buckets ``first .. last - 1`` of each item.

        Returns an (N, 2 * n_slots + 1) array, relative to the gap before bucket
        ``first`` (columns: gap, tie, gap, tie, ..., gap; inf past ``last``).
        """
        data, _, index, _ = self._prepared()
        better, atmost, valid = index.range_sums(lower, upper, first, last)
        slot_bucket = np.minimum(
            first[:, None] + np.arange(better.shape[1])[None, :], self.n_buckets - 1
        )
        mass = np.where(valid, index.bucket_mass[slot_bucket], 0.0)
        total_weight = data.total_weight
        slope = total_weight * mass - better - atmost
        tie_extra = 0.5 * total_weight * mass - atmost
        n_items, n_slots = slope.shape
        gaps = np.zeros((n_items, n_slots + 1))
        np.cumsum(slope, axis=1, out=gaps[:, 1:])
        costs = np.full((n_items, 2 * n_slots + 1), np.inf)
        gap_valid = np.concatenate([np.ones((n_items, 1), dtype=bool), valid], axis=1)
        costs[:, 0::2] = np.where(gap_valid, gaps, np.inf)
        costs[:, 1::2] = np.where(valid, gaps[:, :-1] + tie_extra, np.inf)
        return costs

    def position_costs(self, ranks):
        """Cost of every position for each new item (the exact method).

        Parameters
        ----------
        ranks : array-like of shape (n_new_items, n_rankings)
            Bucket of each new item in each ranking, on the scale of
            ``rankings``.

        Returns
        -------
        positions : ndarray of shape (2 * n_buckets + 1,)
            The positions ``-0.5, 0, 0.5, ..., n_buckets - 0.5``.
        costs : ndarray of shape (n_new_items, 2 * n_buckets + 1)
            Kendall cost of each position per unit mass of the new item,
            relative to the top position (-0.5).

        Examples
        --------
        >>> from treerank.aggregation import ConsensusInserter
        >>> inserter = ConsensusInserter([0, 1], [[0, 1], [0, 1]])
        >>> positions, costs = inserter.position_costs([[1, 1]])
        >>> positions
        array([-0.5,  0. ,  0.5,  1. ,  1.5])
        >>> costs  # tied with item 1 in both rankings: best tied with bucket 1
        array([[ 0., -1., -2., -3., -2.]])
        """
        lower, upper = self._thresholds(ranks)
        n_new = lower.shape[0]
        n_buckets = self.n_buckets
        positions = np.arange(2 * n_buckets + 1) / 2.0 - 0.5
        costs = self._run_costs(
            lower,
            upper,
            np.zeros(n_new, dtype=np.intp),
            np.full(n_new, n_buckets, dtype=np.intp),
        )
        return positions, costs

    def positions(self, ranks, *, method="fast", window=2):
        """Kendall-optimal position of each new item in the consensus.

        Parameters
        ----------
        ranks : array-like of shape (n_new_items, n_rankings)
            Bucket of each new item in each ranking, on the scale of
            ``rankings`` (for a forest: the rank of the item's leaf in each tree).
        method : {"fast", "exact"}, default="fast"
            ``"exact"`` evaluates every position, O(Q B) per item. ``"fast"``
            binary-searches the sign change of the majority preference of blocks
            of buckets and evaluates every position in the two blocks around
            it, O(B (log G + Q / G + window)) per item with G <= 128 blocks; it
            returns the exact optimum whenever the cost is unimodal at the scale
            of the blocks (see the module notes).
        window : int, default=2
            Extra buckets examined on each side of the two blocks.

        Returns
        -------
        positions : ndarray of shape (n_new_items,)
            ``q`` for "tied with bucket q", ``g - 0.5`` for "in a new bucket just
            above bucket g" (the topmost of the positions of least cost).

        Examples
        --------
        >>> from treerank.aggregation import ConsensusInserter
        >>> inserter = ConsensusInserter([0, 0, 1], [[0, 1, 2], [1, 0, 2]])
        >>> inserter.positions([[0, 0], [3, 3]], method="exact")
        array([-0.5,  1.5])
        """
        if method not in ("fast", "exact"):
            raise ValueError(f'method must be "fast" or "exact"; got {method!r}.')
        if (
            not isinstance(window, numbers.Integral)
            or isinstance(window, bool)
            or window < 0
        ):
            raise ValueError(f"window must be an integer >= 0; got {window!r}.")
        if method == "exact":
            positions, costs = self.position_costs(ranks)
            if costs.shape[0] == 0:
                return np.empty(0)
            return positions[np.argmin(costs, axis=1)]
        lower, upper = self._thresholds(ranks)
        n_new = lower.shape[0]
        if n_new == 0:
            return np.empty(0)
        bounds = self._prepared()[3][0]
        n_blocks = bounds.shape[0] - 1
        n_buckets = self.n_buckets
        # binary search of the first block whose slope (cost at its end minus
        # cost at its start) is >= 0
        low = np.zeros(n_new, dtype=np.intp)
        high = np.full(n_new, n_blocks, dtype=np.intp)
        searching = np.arange(n_new)
        while searching.shape[0]:
            middle = (low[searching] + high[searching]) // 2
            rows = np.concatenate([searching, searching])
            ends = np.concatenate([middle, middle + 1])
            costs = self._boundary_costs(lower, upper, rows, ends)
            up = costs[searching.shape[0] :] >= costs[: searching.shape[0]]
            high[searching[up]] = middle[up]
            low[searching[~up]] = middle[~up] + 1
            searching = searching[low[searching] < high[searching]]
        # every position in the blocks on both sides of that boundary
        first = np.maximum(bounds[np.maximum(low - 1, 0)] - window, 0)
        last = np.minimum(bounds[np.minimum(low + 1, n_blocks)] + window, n_buckets)
        costs = self._run_costs(lower, upper, first, last)
        best = np.argmin(costs, axis=1)
        return first + best / 2.0 - 0.5
