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
G blocks of consecutive buckets (see :func:`_n_blocks`), and for each ranking
a table of prefix masses at the block boundaries (mass of the buckets before
the boundary ranked below a given rank) gives the cost of x at any block
boundary in O(B). A search on the sign of the block slopes (the majority
preference of a whole block, much less noisy than that of a single bucket)
finds the block boundary where the cost stops decreasing: it starts at the
block whose fitted items have the new item's Borda score (the consensus
starts from Borda's order and stays close to it), gallops away from it by
steps of 1, 2, 4, ... (the last one stopping at the end of the consensus) and
bisects the last step; every position in the two neighbouring blocks (plus
``window`` buckets on each side) is then evaluated exactly, bucket by bucket.
The cost is O(B (log G + Q / G + window)) per item, and the result is the
exact optimum whenever the cost is unimodal at the scale of the blocks.
Otherwise it is a local optimum near the start: with trees that tie their
leaves by rate (``leaf_scores="rate"``) the cost is often flat and noisy
along the consensus, and on a 200,000-cell forest of 100 such trees the
position was the exact optimum for 14% of 600 new rows, 0.8% of the cost
range above it on average, for the same test AUC on 20,000 rows (0.99480,
and 0.99479 starting from the mean dense rank instead).
A bucket query costs one table look-up per ranking for a
large bucket or one row comparison per member for a small one. Each item is
treated on its own: its position does not depend on the other items of the
batch.

Positions are returned on the consensus bucket scale: ``q`` means tied with
bucket q, ``g - 0.5`` a new bucket just above bucket g (``-0.5`` above the top
bucket, ``Q - 0.5`` below the last one). Among positions of equal cost the
topmost is returned.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers
import threading

import numpy as np

from treerank.aggregation._bucket_order import (
    _compact_dtype,
    _dense_rows,
    _RankingData,
    check_bucket_order,
    check_rankings,
)
from treerank.aggregation._insertion_kernels import (
    _block_search_kernel,
    _region_full_kernel,
    _region_scan_kernel,
    _threshold_maps,
    _thresholds_kernel,
)
from treerank.aggregation._kernels import _weight_groups
from treerank.utils.validation import check_sample_weight

__all__ = ["ConsensusInserter"]

_MIN_BLOCKS = 128
# blocks are made small enough to hold about this many items each, as long as
# their prefix tables (blocks x sum of the rankings' bucket counts) fit
_BLOCK_ITEMS = 64
_BLOCK_TABLE_BUDGET = 1 << 24


def _n_blocks(n_items, n_buckets, stride):
    """Number of blocks of the fast method for a consensus of this size.

    At least 128 (fewer only with fewer buckets); more for large consensuses,
    down to about 64 items per block, within a budget of 2^24 table entries
    (``stride`` entries per block boundary).
    """
    wanted = max(_MIN_BLOCKS, n_items // _BLOCK_ITEMS)
    affordable = max(_MIN_BLOCKS, _BLOCK_TABLE_BUDGET // max(stride, 1) - 1)
    return int(min(n_buckets, wanted, affordable))


def _borda_table(data):
    """Prefix masses of each ranking at its dense thresholds, for Borda keys.

    Returns ``(prefix, offset)``: ``prefix[offset[b] + k]`` is the mass of the
    fitted items that ranking b (in the stored order of ``data``) ranks in its
    first k buckets, for k = 0..K_b.
    """
    widths = data.n_buckets.astype(np.int64) + 1
    offset = np.concatenate([[0], np.cumsum(widths)[:-1]]).astype(np.int64)
    prefix = np.empty(int(widths.sum()))
    for b in range(data.n_rankings):
        counts = np.bincount(
            data.ranks[b], weights=data.item_weights, minlength=int(widths[b]) - 1
        )
        prefix[offset[b]] = 0.0
        np.cumsum(counts, out=prefix[offset[b] + 1 : offset[b] + widths[b]])
    return prefix, offset


def _item_keys(lower, upper, table, ranking_weights):
    """Search key of items: their Borda score, the weighted sum over rankings
    of the mass of the fitted items ranked above them plus half of those tied.

    ``lower[i, b]`` and ``upper[i, b]`` are the numbers of ranking b's values
    below, and not above, item i (None: ``lower + 1``, as for a fitted item);
    ``table`` is :func:`_borda_table`'s. A small key means an item that the
    rankings put near the top. The consensus starts from Borda's order (or
    the mean rank's, the better of the two) and the local search moves items
    by a few buckets, so the fitted items of a block have similar keys: on a
    200,000-cell forest of 100 trees a new item's guessed block is a median of
    2 blocks from the one found (47 with the mean dense rank as the key).
    """
    prefix, offset = table
    half_weights = 0.5 * ranking_weights
    keys = np.zeros(lower.shape[0])
    # ranking by ranking, in the order of :func:`_thresholds_kernel`'s sums
    for b in range(lower.shape[1]):
        column = lower[:, b].astype(np.int64) + offset[b]
        above = column + 1 if upper is None else upper[:, b] + offset[b]
        keys += half_weights[b] * (prefix[column] + prefix[above])
    return keys


def _block_keys(data, block, n_blocks, table):
    """Sorted median key of the fitted items of each block.

    The number of these below a new item's key is the block where the search
    of its position starts (:func:`_block_search_kernel`).
    """
    item_keys = _item_keys(data.ranks_t, None, table, data.ranking_weights)
    by_block = np.lexsort((item_keys, block))
    block_starts = np.searchsorted(block[by_block], np.arange(n_blocks + 1))
    middle = (block_starts[:-1] + np.maximum(block_starts[1:] - 1, 0)) // 2
    return np.sort(item_keys[by_block[middle]])


# the costs of every position are not written (see _region_scan_kernel)
_NO_COSTS = np.empty((0, 0))
# the compiled state is built once even when threads place chunks concurrently
_BUILD_LOCK = threading.Lock()
# new items placed per call of the kernels: bounds the memory of a
# call (thresholds and results of one chunk) whatever the batch size
_CHUNK = 4096
# entries of the per-bucket prefix tables (float64)
_BUCKET_TABLE_BUDGET = 1 << 24  # float32 entries (half as many float64)
# buckets of more than this many items get prefix tables: a
# query of a table costs two look-ups per ranking, a member of a bucket one
# comparison of two rows (measured on a 200,000-cell forest of 100 trees:
# 4.85 us per new item with 128, 3.23 with 16, for 11 MB of tables)
_SMALL_BUCKET = 16
# entries of the full (gap x rank) prefix tables, when they fit (float32 for
# integral masses of total < 2^24, exact; float64 otherwise, half as many)
_FULL_TABLE_BUDGET = 1 << 25
# the full tables are built once the inserter has placed (over all its calls)
# one new item per this many of their entries: building them costs about as
# much as placing that many items without them, so a model that scores a few
# thousand rows does not pay a table of tens of millions of entries (0.8 s on
# a 100-tree forest of 8,000 rows, for 2,000 rows placed in 0.1 s without it),
# and one that scores many pays at most twice the better of the two
# (both paths give the same positions)
_FULL_TABLE_ITEMS_PER_ENTRY = 1 / 256


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
    method groups the buckets into G blocks (at least 128, and for a large
    consensus about 64 items per block, as far as a budget of 2^24 entries of
    prefix tables allows), finds the block boundary where the cost stops
    decreasing by a galloping search from a guessed block (the cost at a block
    boundary is read in O(B) from per-ranking prefix tables), and evaluates
    every position of the two blocks around it exactly:
    O(B (log G + Q / G + window)) per item, O(B (log d + Q / G + window)) for a
    guess d blocks away (the guess: the block of the item's Borda score). It
    is exact when the cost is unimodal at the scale of the blocks; otherwise
    it returns a local optimum near the guess (see the module notes: on trees
    whose rankings of leaves are rankings of their rates, 0.8% of the cost
    range above the optimum on average, for the same test AUC).

    Memory: a call places the new items in chunks of 4,096, so its memory is
    that of one chunk whatever the batch size (and a visiting order of 16
    bytes per item: chunks of items with similar ranks read the same parts of
    the tables), and each item's position depends on that item alone (not on
    the chunks or the rest of the batch).
    Compiled kernels do the work at every size (:mod:`._insertion_kernels`);
    they keep, built on first use and not pickled, the block tables
    (O(G K B)), and either the prefix masses of every (gap, rank) pair of
    every ranking (O(Q K B), when they fit 2^25 entries and enough items were
    placed: every position then costs one look-up per ranking) or the prefix
    masses of the largest buckets (at most 2^23 entries, other buckets being
    compared member by member). Both give the same positions when the
    weights are integers; with fractional weights their sums may round
    differently, so that a position of exactly equal cost to another may be
    chosen either way.

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
        self._compiled_state = None

    @property
    def n_buckets(self):
        """Number of consensus buckets."""
        return int(self.consensus.max()) + 1

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_compiled_state"] = None
        return state

    def __setstate__(self, state):
        state.pop("_state", None)  # the interpreted index of older versions
        state["_compiled_state"] = None
        self.__dict__.update(state)

    def _compiled(self):
        """State of the compiled kernels (built on first use, not pickled).

        Ragged tables: ranking b's entries of a row start at ``widths_offset[b]``
        and hold ``K_b + 1`` prefix masses (thresholds 0..K_b).
        """
        if self._compiled_state is not None:
            return self._compiled_state
        with _BUILD_LOCK:
            if self._compiled_state is None:
                self._compiled_state = self._build_compiled()
        return self._compiled_state

    def _build_compiled(self):
        data = _RankingData(self.rankings, self.ranking_weights, self.item_weights)
        values = [np.unique(row) for row in self.rankings[data.permutation]]
        consensus = self.consensus.astype(np.intp)
        n_buckets = self.n_buckets
        widths = data.n_buckets + 1
        widths_offset = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
        stride = int(widths_offset[-1])
        masses = data.item_weights
        # block tables
        n_blocks = _n_blocks(consensus.shape[0], n_buckets, stride)
        bounds = (np.arange(n_blocks + 1) * n_buckets) // n_blocks
        block = np.searchsorted(bounds, consensus, side="right") - 1
        # block_tables[J * stride + widths_offset[b] + k]: mass of the items
        # of the blocks before J that ranking b ranks < k
        n_boundaries = n_blocks + 1
        exact32 = bool(np.all(masses == np.floor(masses))) and masses.sum() < 2.0**24
        block_tables = np.empty(
            (n_boundaries, stride), dtype=np.float32 if exact32 else np.float64
        )
        for b in range(data.n_rankings):
            width = int(widths[b])
            cell = (block + 1) * width + data.ranks[b] + 1
            table = np.bincount(
                cell, weights=masses, minlength=n_boundaries * width
            ).reshape(n_boundaries, width)
            np.cumsum(table, axis=1, out=table)
            np.cumsum(table, axis=0, out=table)
            block_tables[:, widths_offset[b] : widths_offset[b + 1]] = table
        mass = np.bincount(block + 1, weights=masses, minlength=n_blocks + 1)
        # items by bucket, and prefix tables of the largest buckets
        order = np.argsort(consensus, kind="stable")
        sizes = np.bincount(consensus, minlength=n_buckets)
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        bucket_mass = np.bincount(consensus, weights=masses, minlength=n_buckets)
        budget = _BUCKET_TABLE_BUDGET if exact32 else _BUCKET_TABLE_BUDGET // 2
        n_tables = min(int(np.sum(sizes > _SMALL_BUCKET)), budget // stride)
        tabled = np.argsort(-sizes, kind="stable")[:n_tables]
        bucket_table = np.full(n_buckets, -1, dtype=np.int64)
        bucket_table[tabled] = np.arange(n_tables)
        bucket_tables = np.empty(
            (n_tables, stride), dtype=np.float32 if exact32 else np.float64
        )
        if n_tables:
            member = bucket_table[consensus]
            members = np.flatnonzero(member >= 0)
            for b in range(data.n_rankings):
                width = int(widths[b])
                cell = member[members] * width + data.ranks[b][members] + 1
                table = np.bincount(
                    cell, weights=masses[members], minlength=n_tables * width
                ).reshape(n_tables, width)
                np.cumsum(table, axis=1, out=table)
                bucket_tables[:, widths_offset[b] : widths_offset[b + 1]] = table
        full_entries = self._full_table_entries(data, n_buckets, widths)
        group_bounds, group_values = _weight_groups(data)
        # direct maps when the values of the rankings are compact (leaf
        # ranks), binary searches otherwise
        spans = sum(int(v[-1] - v[0]) + 3 for v in values)
        maps = _threshold_maps(values) if spans <= 4 * stride + 64 else None
        borda = _borda_table(data)
        return {
            "borda": borda,
            "block_keys": _block_keys(data, block, n_blocks, borda),
            "values": values,
            # built by _full_tables_if_worth_it once enough items were placed
            "full_tables": None,
            "rank_offset": None,
            "full_entries": full_entries,
            "placed": 0,
            "mass_before_gap": np.concatenate([[0.0], np.cumsum(bucket_mass)]),
            "data": data,
            "bounds": bounds.astype(np.int64),
            "mass_before": np.cumsum(mass),
            "block_tables": block_tables.ravel(),
            "threshold_maps": maps,
            "stride": stride,
            "widths_offset": widths_offset,
            "group_bounds": group_bounds,
            "group_values": group_values,
            "starts": starts,
            "bucket_mass": bucket_mass,
            "bucket_table": bucket_table,
            "bucket_tables": bucket_tables.ravel(),
            "sorted_t": np.ascontiguousarray(data.ranks_t[order]),
            "sorted_masses": masses[order],
        }

    @staticmethod
    def _full_table_entries(data, n_buckets, widths):
        """Entries of the full tables, or None when they exceed the budget."""
        masses = data.item_weights
        entries = (n_buckets + 1) * int(widths.sum())
        exact32 = bool(np.all(masses == np.floor(masses))) and masses.sum() < 2.0**24
        budget = _FULL_TABLE_BUDGET if exact32 else _FULL_TABLE_BUDGET // 2
        return None if entries > budget else entries

    def _full_tables_if_worth_it(self, state, n_new):
        """Count ``n_new`` placed items; build the full tables once they pay."""
        if state["full_entries"] is None or state["full_tables"] is not None:
            return
        with _BUILD_LOCK:
            state["placed"] += n_new
            if state["full_tables"] is not None or (
                state["placed"] < state["full_entries"] * _FULL_TABLE_ITEMS_PER_ENTRY
            ):
                return
            data = state["data"]
            tables, offset = self._full_tables(
                data,
                self.consensus.astype(np.intp),
                self.n_buckets,
                data.n_buckets + 1,
            )
            state["rank_offset"] = offset
            state["full_tables"] = tables  # last: other threads test this one

    @staticmethod
    def _full_tables(data, consensus, n_buckets, widths):
        """Prefix masses of every (gap, rank) per ranking (the budget allowing).

        Returns (tables, rank_offset).
        """
        masses = data.item_weights
        n_gaps = n_buckets + 1
        entries = n_gaps * int(widths.sum())
        exact32 = bool(np.all(masses == np.floor(masses))) and masses.sum() < 2.0**24
        dtype = np.float32 if exact32 else np.float64
        rank_offset = np.concatenate([[0], np.cumsum(widths * n_gaps)])[:-1]
        tables = np.empty(entries, dtype=dtype)
        for b in range(data.n_rankings):
            width = int(widths[b])
            # counts[k, g]: mass of bucket g - 1 with rank k - 1 (row/column 0 empty)
            cell = (data.ranks[b].astype(np.int64) + 1) * n_gaps + consensus + 1
            counts = np.bincount(cell, weights=masses, minlength=width * n_gaps)
            counts = counts.reshape(width, n_gaps)
            np.cumsum(counts, axis=0, out=counts)
            np.cumsum(counts, axis=1, out=counts)
            start = int(rank_offset[b])
            tables[start : start + width * n_gaps] = counts.ravel()
        return tables, rank_offset.astype(np.int64)

    def _thresholds(self, ranks):
        """Dense thresholds (strictly above, not below) of new items per ranking.

        Returns ``(lower, upper, keys)``: the thresholds, (N, B) in the stored
        order of the rankings, and the items' search keys (:func:`_item_keys`).
        """
        state = self._compiled()
        data = state["data"]
        ranks = np.asarray(ranks)
        if ranks.ndim != 2:
            raise ValueError(
                "ranks must be a two-dimensional array of shape (n_new_items, "
                f"n_rankings); got an array of shape {ranks.shape}."
            )
        dtype = _compact_dtype(int(data.n_buckets.max()))
        if ranks.shape[0] == 0:  # the dtype of the kernels' thresholds
            empty = np.empty((0, data.n_rankings), dtype=dtype)
            return empty, empty, np.empty(0)
        if ranks.dtype not in (np.int32, np.int64):  # integer ranks: no copy
            ranks = check_rankings(ranks, input_name="ranks")
        elif ranks.shape[1] == 0:
            raise ValueError(
                "ranks must have at least one ranking and one item; got shape "
                f"{ranks.shape}."
            )
        if ranks.shape[1] != data.n_rankings:
            raise ValueError(
                f"ranks has {ranks.shape[1]} columns but the consensus aggregates "
                f"{data.n_rankings} rankings."
            )
        lower = np.empty(ranks.shape, dtype=dtype)
        upper = np.empty(ranks.shape, dtype=dtype)
        borda = state["borda"]
        if state["threshold_maps"] is not None:
            prefix, prefix_offset = borda
            item_keys = np.empty(ranks.shape[0])
            _thresholds_kernel(
                np.ascontiguousarray(ranks),
                data.permutation,
                *state["threshold_maps"],
                prefix,
                prefix_offset,
                0.5 * data.ranking_weights,
                lower,
                upper,
                item_keys,
            )
            return lower, upper, item_keys
        # values too spread for direct maps: binary searches
        ranks = ranks[:, data.permutation]
        for b, row_values in enumerate(state["values"]):
            lower[:, b] = np.searchsorted(row_values, ranks[:, b], side="left")
            upper[:, b] = np.searchsorted(row_values, ranks[:, b], side="right")
        return lower, upper, _item_keys(lower, upper, borda, data.ranking_weights)

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
        lower, upper, _ = self._thresholds(ranks)
        n_new = lower.shape[0]
        n_buckets = self.n_buckets
        positions = np.arange(2 * n_buckets + 1) / 2.0 - 0.5
        costs = np.empty((n_new, 2 * n_buckets + 1))
        rows = np.arange(n_new)
        first = np.zeros(n_new, dtype=np.int64)
        last = np.full(n_new, n_buckets, dtype=np.int64)
        self._scan(lower, upper, rows, first, last, np.empty(n_new), costs)
        return positions, costs

    def positions(self, ranks, *, method="fast", window=2, search="gallop"):
        """Kendall-optimal position of each new item in the consensus.

        Parameters
        ----------
        ranks : array-like of shape (n_new_items, n_rankings)
            Bucket of each new item in each ranking, on the scale of
            ``rankings`` (for a forest: the rank of the item's leaf in each tree).
        method : {"fast", "exact"}, default="fast"
            ``"exact"`` evaluates every position, O(Q B) per item. ``"fast"``
            searches the sign change of the majority preference of blocks of
            buckets (see ``search``) and evaluates every position in the two
            blocks around it, O(B (log G + Q / G + window)) per item with G
            blocks; it returns the exact optimum whenever the cost is unimodal
            at the scale of the blocks (see the module notes).
        window : int, default=2
            Extra buckets examined on each side of the two blocks.
        search : {"gallop", "bisect"}, default="gallop"
            How the fast method finds the block boundary. ``"gallop"`` starts
            at the block where the fitted items have the new item's Borda
            score and moves by steps of 1, 2, 4, ...
            (a step past an end probes the end): O(log d) probes for a start
            d blocks away. ``"bisect"`` bisects all the blocks (O(log G)
            probes); it is monotone: an item that no ranking puts lower than
            another is placed no lower (used by forests with monotonic
            constraints). Both give the same position when the cost is
            unimodal at the scale of the blocks.

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
        if search not in ("gallop", "bisect"):
            raise ValueError(f'search must be "gallop" or "bisect"; got {search!r}.')
        ranks = np.asarray(ranks)
        if ranks.ndim != 2:
            raise ValueError(
                "ranks must be a two-dimensional array of shape (n_new_items, "
                f"n_rankings); got an array of shape {ranks.shape}."
            )
        n_new = ranks.shape[0]
        if n_new == 0:
            return np.empty(0)
        out = np.empty(n_new)
        if n_new > _CHUNK:
            # chunks of items with similar ranks read the same parts of the
            # tables (each item's position depends on that item alone)
            visit = np.argsort(ranks.sum(axis=1, dtype=np.float64), kind="stable")
        else:
            visit = None
        for start in range(0, n_new, _CHUNK):
            stop = min(start + _CHUNK, n_new)
            part = ranks[start:stop] if visit is None else ranks[visit[start:stop]]
            lower, upper, keys = self._thresholds(part)
            placed = np.empty(stop - start)
            if method == "exact":
                self._place_exact(lower, upper, placed)
            else:
                self._place_fast(lower, upper, keys, int(window), search, placed)
            if visit is None:
                out[start:stop] = placed
            else:
                out[visit[start:stop]] = placed
        return out

    def _place_exact(self, lower, upper, out):
        """The exact method for one chunk: every position of every item."""
        n_new = lower.shape[0]
        first = np.zeros(n_new, dtype=np.int64)
        last = np.full(n_new, self.n_buckets, dtype=np.int64)
        self._evaluate_runs(lower, upper, np.arange(n_new), first, last, out)

    def _place_fast(self, lower, upper, key, window, search, out):
        """The fast method for one chunk of thresholds.

        ``key`` holds the items' search keys (:func:`_item_keys`).
        """
        state = self._compiled()
        data = state["data"]
        n_new = lower.shape[0]
        # items with similar thresholds read the same table rows, and items
        # with nearby runs the same members: visit them together (each item's
        # position depends on that item alone, so the order changes nothing)
        visit = np.argsort(key, kind="stable")
        first = np.empty(n_new, dtype=np.int64)
        last = np.empty(n_new, dtype=np.int64)
        if search == "gallop":
            guess = np.searchsorted(state["block_keys"], key[visit])
        else:
            guess = np.full(n_new, -1, dtype=np.int64)
        # the kernels read the rows of lower and upper through the visiting
        # orders (no copies) and write each item's position at its row of out
        _block_search_kernel(
            lower,
            upper,
            visit,
            guess,
            state["block_tables"],
            state["widths_offset"],
            data.ranking_weights,
            data.total_weight,
            state["mass_before"],
            state["bounds"],
            window,
            self.n_buckets,
            first,
            last,
        )
        order = np.argsort(first, kind="stable")
        self._evaluate_runs(lower, upper, visit[order], first[order], last[order], out)

    def _evaluate_runs(self, lower, upper, rows, first, last, out):
        """Best position of each item in its run of buckets (both methods).

        Row ``rows[i]`` of ``lower`` and ``upper`` is evaluated at every
        position of buckets ``first[i] .. last[i] - 1`` and its best position
        written at its row of ``out``: from the full (gap x rank) tables once
        they are built (:meth:`_full_tables_if_worth_it`), bucket by bucket
        otherwise (the same positions).
        """
        state = self._compiled()
        data = state["data"]
        self._full_tables_if_worth_it(state, rows.shape[0])
        full_tables = state["full_tables"]
        if full_tables is None:
            self._scan(lower, upper, rows, first, last, out, _NO_COSTS)
            return
        _region_full_kernel(
            lower,
            upper,
            rows,
            first,
            last,
            full_tables,
            state["rank_offset"],
            data.ranking_weights,
            data.total_weight,
            state["mass_before_gap"],
            state["bucket_mass"],
            out,
        )

    def _scan(self, lower, upper, rows, first, last, out, costs):
        """:func:`_region_scan_kernel` on the state's tables (see its notes)."""
        state = self._compiled()
        _region_scan_kernel(
            lower,
            upper,
            rows,
            first,
            last,
            state["group_bounds"],
            state["group_values"],
            state["data"].total_weight,
            state["starts"],
            state["bucket_mass"],
            state["bucket_table"],
            state["bucket_tables"],
            state["stride"],
            state["widths_offset"],
            state["sorted_t"],
            state["sorted_masses"],
            out,
            costs,
        )
