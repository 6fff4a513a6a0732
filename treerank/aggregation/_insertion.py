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

from treerank.aggregation._bucket_index import _BucketIndex
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
from treerank.aggregation._kernels import _use_compiled, _weight_groups
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


# the compiled state is built once even when threads place chunks concurrently
_BUILD_LOCK = threading.Lock()
# new items placed per call of the compiled kernel: bounds the memory of a
# call (thresholds and results of one chunk) whatever the batch size
_CHUNK = 4096
# entries of the per-bucket prefix tables of the compiled path (float64)
_BUCKET_TABLE_BUDGET = 1 << 24  # float32 entries (half as many float64)
# buckets of more than this many items get prefix tables (compiled path): a
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
    that of one chunk whatever the batch size (and, on the compiled path, a
    visiting order of 16 bytes per item: chunks of items with similar ranks
    read the same parts of the tables), and each item's position depends on
    that item alone (not on the chunks or the rest of the batch).
    On large problems (at least 2^17 item x ranking entries) compiled kernels
    do the work, with the same positions as the numpy method: they keep, built
    on first use and not pickled, the block tables (O(G K B)), and either the
    prefix masses of every (gap, rank) pair of every ranking (O(Q K B), when
    they fit 2^25 entries: every position then costs one look-up per ranking)
    or the prefix masses of the largest buckets (at most 2^23 entries, other
    buckets being compared member by member).

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
        self._compiled_state = None

    @property
    def n_buckets(self):
        """Number of consensus buckets."""
        return int(self.consensus.max()) + 1

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_state"] = None
        state["_compiled_state"] = None
        return state

    def __setstate__(self, state):
        state.setdefault("_compiled_state", None)
        self.__dict__.update(state)

    def _prepared(self):
        if self._state is None:
            data = _RankingData(self.rankings, self.ranking_weights, self.item_weights)
            values = [np.unique(row) for row in self.rankings[data.permutation]]
            consensus = self.consensus.astype(np.intp)
            index = _BucketIndex(data, consensus, cache_tables=True)
            self._state = (data, values, index, self._block_tables(data, consensus))
        return self._state

    def _compiled(self):
        """State of the compiled fast method (built on first use, not pickled).

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

    @staticmethod
    def _block_tables(data, consensus):
        """Prefix masses at the block boundaries of the consensus, per ranking.

        Returns (bounds, mass_before, tables, width): ``bounds[j]`` is the first
        bucket of block j (``bounds[-1] = Q``), ``mass_before[j]`` the mass of
        the buckets before it, and ``tables[b, j, k]`` the mass of those ranked
        < k by ranking b.
        """
        n_buckets = int(consensus.max()) + 1
        n_blocks = _n_blocks(
            consensus.shape[0], n_buckets, int(np.sum(data.n_buckets + 1))
        )
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
        borda = _borda_table(data)
        keys = _block_keys(data, block, n_blocks, borda)
        return bounds, np.cumsum(mass), tables.ravel(), width, (keys, borda)

    def _boundary_costs(self, lower, upper, rows, blocks):
        """Cost of placing items at block boundaries (up to a per-item constant)."""
        data, _, _, (bounds, mass_before, tables, width, _) = self._prepared()
        n_rankings = data.n_rankings
        n_boundaries = bounds.shape[0]
        ranking_offset = np.arange(n_rankings) * n_boundaries
        base = (ranking_offset[None, :] + blocks[:, None]) * width
        values = tables.take(base + lower[rows]) + tables.take(base + upper[rows])
        weighted = (values * data.ranking_weights).sum(axis=1)
        return data.total_weight * mass_before[blocks] - weighted

    def _thresholds(self, ranks, compiled=False, keys=False):
        """Dense thresholds (strictly above, not below) of new items per ranking.

        With ``keys``, also the items' search keys (:func:`_item_keys`), on the
        compiled path computed with the thresholds.
        """
        if compiled:
            state = self._compiled()
            data = state["data"]
        else:
            data, values, _, _ = self._prepared()
        ranks = np.asarray(ranks)
        if ranks.ndim != 2:
            raise ValueError(
                "ranks must be a two-dimensional array of shape (n_new_items, "
                f"n_rankings); got an array of shape {ranks.shape}."
            )
        if ranks.shape[0] == 0:
            empty = np.empty((0, data.n_rankings), dtype=np.intp)
            return (empty, empty, np.empty(0)) if keys else (empty, empty)
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
        dtype = _compact_dtype(int(data.n_buckets.max()))
        lower = np.empty(ranks.shape, dtype=dtype)
        upper = np.empty(ranks.shape, dtype=dtype)
        if compiled:
            borda = state["borda"]
        else:
            _, _, _, (_, _, _, _, (_, borda)) = self._prepared()
        if compiled and state["threshold_maps"] is not None:
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
            return (lower, upper, item_keys) if keys else (lower, upper)
        ranks = ranks[:, data.permutation]
        if compiled:
            values = state["values"]
        for b, row_values in enumerate(values):
            lower[:, b] = np.searchsorted(row_values, ranks[:, b], side="left")
            upper[:, b] = np.searchsorted(row_values, ranks[:, b], side="right")
        if not keys:
            return lower, upper
        return lower, upper, _item_keys(lower, upper, borda, data.ranking_weights)

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
        if method == "exact":
            positions, costs = self.position_costs(ranks)
            if costs.shape[0] == 0:
                return np.empty(0)
            return positions[np.argmin(costs, axis=1)]
        ranks = np.asarray(ranks)
        if ranks.ndim != 2:
            raise ValueError(
                "ranks must be a two-dimensional array of shape (n_new_items, "
                f"n_rankings); got an array of shape {ranks.shape}."
            )
        n_new = ranks.shape[0]
        compiled = _use_compiled(self.rankings.shape[1], self.rankings.shape[0])
        if n_new == 0:
            return np.empty(0)
        out = np.empty(n_new)
        if compiled and n_new > _CHUNK:
            # chunks of items with similar ranks read the same parts of the
            # tables (each item's position depends on that item alone)
            visit = np.argsort(ranks.sum(axis=1, dtype=np.float64), kind="stable")
        else:
            visit = None
        for start in range(0, n_new, _CHUNK):
            stop = min(start + _CHUNK, n_new)
            part = ranks[start:stop] if visit is None else ranks[visit[start:stop]]
            lower, upper, keys = self._thresholds(part, compiled=compiled, keys=True)
            if compiled:
                placed = np.empty(stop - start)
                self._insert_compiled(lower, upper, keys, int(window), search, placed)
            else:
                placed = self._fast_numpy(lower, upper, keys, window, search)
            if visit is None:
                out[start:stop] = placed
            else:
                out[visit[start:stop]] = placed
        return out

    def _insert_compiled(self, lower, upper, key, window, search, out):
        """The fast method for one chunk of thresholds, by the compiled kernels.

        ``key`` holds the items' search keys (:func:`_item_keys`).
        """
        state = self._compiled()
        data = state["data"]
        n_new = lower.shape[0]
        self._full_tables_if_worth_it(state, n_new)
        full_tables, rank_offset = state["full_tables"], state["rank_offset"]
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
        rows, first, last = visit[order], first[order], last[order]
        if full_tables is not None:
            _region_full_kernel(
                lower,
                upper,
                rows,
                first,
                last,
                full_tables,
                rank_offset,
                data.ranking_weights,
                data.total_weight,
                state["mass_before_gap"],
                state["bucket_mass"],
                out,
            )
        else:
            _region_scan_kernel(
                lower,
                upper,
                rows,
                first,
                last,
                state["group_bounds"],
                state["group_values"],
                data.total_weight,
                state["starts"],
                state["bucket_mass"],
                state["bucket_table"],
                state["bucket_tables"],
                state["stride"],
                state["widths_offset"],
                state["sorted_t"],
                state["sorted_masses"],
                out,
            )

    def _fast_numpy(self, lower, upper, keys, window, search):
        """The fast method for one chunk of thresholds (and search keys), in numpy.

        The same galloping search as :func:`_block_search_kernel`, on all the
        items of the chunk at once.
        """
        _, _, _, (bounds, _, _, _, (block_keys, _)) = self._prepared()
        n_blocks = bounds.shape[0] - 1
        n_buckets = self.n_buckets
        start = np.searchsorted(block_keys, keys)
        start = np.minimum(start, n_blocks - 1)
        if search == "bisect":
            start[:] = -1

        def rising(rows, blocks):
            # the cost does not decrease across each block (slope >= 0)
            costs = self._boundary_costs(
                lower,
                upper,
                np.concatenate([rows, rows]),
                np.concatenate([blocks, blocks + 1]),
            )
            return costs[rows.shape[0] :] >= costs[: rows.shape[0]]

        everyone = np.arange(lower.shape[0])
        up = np.zeros(lower.shape[0], dtype=bool)
        guessed = everyone[start >= 0]
        up[guessed] = rising(guessed, start[guessed])
        low = np.where(up, 0, start + 1)
        high = np.where(up, start, n_blocks)
        # gallop away from the start, steps 1, 2, 4, ..., until the sign changes
        step = np.ones_like(start)
        left = everyone[up & (start > 0)]
        while left.shape[0]:
            probe = np.maximum(start[left] - step[left], 0)
            found = rising(left, probe)
            high[left[found]] = probe[found]
            step[left[found]] *= 2
            low[left[~found]] = probe[~found] + 1
            left = left[found & (probe > 0)]
        right = everyone[~up & (start >= 0) & (start + 1 < n_blocks)]
        while right.shape[0]:
            probe = np.minimum(start[right] + step[right], n_blocks - 1)
            found = rising(right, probe)
            high[right[found]] = probe[found]
            low[right[~found]] = probe[~found] + 1
            step[right[~found]] *= 2
            right = right[~found & (probe < n_blocks - 1)]
        # binary search of the first rising block between the last two probes
        searching = everyone[low < high]
        while searching.shape[0]:
            middle = (low[searching] + high[searching]) // 2
            found = rising(searching, middle)
            high[searching[found]] = middle[found]
            low[searching[~found]] = middle[~found] + 1
            searching = searching[low[searching] < high[searching]]
        # every position in the blocks on both sides of that boundary
        first = np.maximum(bounds[np.maximum(low - 1, 0)] - window, 0)
        last = np.minimum(bounds[np.minimum(low + 1, n_blocks)] + window, n_buckets)
        costs = self._run_costs(lower, upper, first, last)
        best = np.argmin(costs, axis=1)
        return first + best / 2.0 - 0.5
