"""Weighted Kendall pair sums of one bucket order against many, in one sweep.

For a consensus bucket order c and rankings r_1..r_B over M items with masses m,
this computes, for every ranking b,

    S_b = sum_{i<j} m_i m_j U_ij(c, r_b),

U = 1 for a discordant pair and 1/2 for a pair tied in exactly one of the two.
Writing D_b for the weighted number of discordant pairs and T_c, T_b, T_cb for the
weighted numbers of pairs tied in c, in r_b and in both,
``S_b = D_b + (T_c - T_cb) / 2 + (T_b - T_cb) / 2``.

The items are sorted once by consensus bucket, and the buckets are packed into
blocks of consecutive buckets (a bucket larger than the block size is a block of
its own). For each ranking, a (blocks x buckets-of-r_b) mass table with prefix
sums gives, for every item, the mass placed in earlier blocks that r_b ranks
below it; pairs inside a block are compared directly (their list depends only
on c and is built once). With K_b buckets in ranking b and block size L the cost
is O(M L + (M / L + n_big) K_b) per ranking (L = 16) and no M x M array is
formed; it
serves the local search, which evaluates many bucket orders against the same B
rankings, each having few buckets (the leaves of a tree).

The generic O(n log^2 n) counter of :mod:`treerank.metrics._kendall` gives the
same sums (the tests check it) but treats each ranking separately.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.aggregation._bucket_order import _dot
from treerank.aggregation._kernels import (
    _compiled_for,
    _pair_sums_kernel,
    bucket_order,
)
from treerank.aggregation._threads import run_on_parts, split_range

__all__ = []

_BLOCK_SIZE = 16


def _segment_pairs(segment_end, positions):
    """All pairs (p, p') with p < p' < segment_end[p], for p in ``positions``."""
    counts = segment_end[positions] - positions - 1
    counts = np.maximum(counts, 0)
    total = int(counts.sum())
    if total == 0:
        empty = np.empty(0, dtype=np.intp)
        return empty, empty
    first = np.repeat(positions, counts)
    run_start = np.repeat(np.cumsum(counts) - counts, counts)
    second = first + 1 + (np.arange(total) - run_start)
    return first, second


class _ConsensusBlocks:
    """Items sorted by consensus bucket, with the block structure of the sweep."""

    def __init__(self, consensus, item_weights, block_size=_BLOCK_SIZE):
        n_items = consensus.shape[0]
        order = np.argsort(consensus, kind="stable")
        sorted_buckets = consensus[order]
        n_buckets = int(sorted_buckets[-1]) + 1
        sizes = np.bincount(consensus, minlength=n_buckets)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        big = sizes > block_size
        cut = np.ones(n_buckets, dtype=bool)
        cut[1:] = (
            big[1:] | big[:-1] | (starts[1:] // block_size != starts[:-1] // block_size)
        )
        block_of_bucket = np.cumsum(cut) - 1
        n_blocks = int(block_of_bucket[-1]) + 1
        block_of_position = block_of_bucket[sorted_buckets]
        block_end = np.searchsorted(
            block_of_position, np.arange(n_blocks), side="right"
        )
        big_position = big[sorted_buckets]
        small_positions = np.flatnonzero(~big_position)
        first, second = _segment_pairs(block_end[block_of_position], small_positions)
        same = sorted_buckets[first] == sorted_buckets[second]
        masses = item_weights[order]
        bucket_mass = np.bincount(consensus, weights=item_weights, minlength=n_buckets)
        square_sum = _dot(item_weights, item_weights)

        self.order = order
        self.masses = masses
        self.n_blocks = n_blocks
        self.block_of_position = block_of_position
        self.big_blocks = np.unique(block_of_bucket[big])
        self.big_square_sum = _dot(masses[big_position], masses[big_position])
        self.cross_first = first[~same]
        self.cross_second = second[~same]
        self.cross_mass = masses[self.cross_first] * masses[self.cross_second]
        self.same_first = first[same]
        self.same_second = second[same]
        self.same_mass = masses[self.same_first] * masses[self.same_second]
        self.square_sum = square_sum
        self.tied_consensus = 0.5 * (_dot(bucket_mass, bucket_mass) - square_sum)
        self.n_items = n_items


def _pair_sums(consensus, data, blocks=None):
    """Per-ranking weighted pair sums ``S_b`` of ``consensus`` against ``data``.

    Parameters
    ----------
    consensus : ndarray of shape (M,), dtype=int
        Dense bucket indices 0..Q-1.
    data : _RankingData
    blocks : _ConsensusBlocks, default=None
        Precomputed layout of ``consensus``.

    Returns
    -------
    sums : ndarray of shape (B,)
        In the storage order of ``data`` (``data.permutation``).
    """
    if blocks is None:
        blocks = _ConsensusBlocks(consensus, data.item_weights)
    n_blocks = blocks.n_blocks
    position_block = blocks.block_of_position
    masses = blocks.masses
    out = np.empty(data.n_rankings, dtype=np.float64)
    for b in range(data.n_rankings):
        n_b = int(data.n_buckets[b])
        ranks = data.ranks[b].take(blocks.order)  # compact dtype: cheap gathers
        cell = position_block * n_b + ranks
        table = np.bincount(cell, weights=masses, minlength=n_blocks * n_b).reshape(
            n_blocks, n_b
        )
        column_mass = table.sum(axis=0)
        tied_ranking = 0.5 * (_dot(column_mass, column_mass) - blocks.square_sum)
        big_rows = table[blocks.big_blocks]
        tied_both = 0.5 * (float(np.sum(big_rows * big_rows)) - blocks.big_square_sum)
        if blocks.same_first.shape[0]:
            equal = ranks[blocks.same_first] == ranks[blocks.same_second]
            tied_both += _dot(blocks.same_mass, equal)
        # discordant pairs across blocks: for each item, the mass of earlier
        # blocks ranked strictly below it = (their mass) - (2D prefix at its rank)
        prefix = np.zeros((n_blocks + 1, n_b), dtype=data.mass_dtype)
        np.cumsum(table.astype(data.mass_dtype, copy=False), axis=1, out=prefix[1:])
        np.cumsum(prefix, axis=0, out=prefix)
        earlier_mass = prefix[:-1, -1]
        at_most = prefix[:-1].ravel().take(cell)
        discordant = _dot(masses, earlier_mass[position_block]) - _dot(masses, at_most)
        if blocks.cross_first.shape[0]:
            inverted = ranks[blocks.cross_first] > ranks[blocks.cross_second]
            discordant += _dot(blocks.cross_mass, inverted)
        out[b] = (
            discordant
            + 0.5 * (blocks.tied_consensus - tied_both)
            + 0.5 * (tied_ranking - tied_both)
        )
    return out


# below this many (pair, ranking) terms the objective is summed pair by pair
_PAIRWISE_MAX = 1 << 16


def _pairwise_terms(data):
    """Pairs (i < j), their mass products and each ranking's order of them.

    Cached on ``data``; used for small problems, where many objectives are
    evaluated (several starts and restarts) and per-ranking sweeps would be
    dominated by call overhead.
    """
    cached = getattr(data, "_pairwise", None)
    if cached is None:
        first, second = np.triu_indices(data.n_items, k=1)
        signs = np.sign(
            data.ranks[:, first].astype(np.int64) - data.ranks[:, second]
        ).astype(np.int8)
        masses = data.item_weights[first] * data.item_weights[second]
        # weighted counts of rankings ordering each pair one way, or tying it
        weights = data.ranking_weights
        above = (weights[:, None] * (signs < 0)).sum(axis=0)
        below = (weights[:, None] * (signs > 0)).sum(axis=0)
        tied = (weights[:, None] * (signs == 0)).sum(axis=0)
        cached = (first, second, masses, above, below, tied)
        data._pairwise = cached
    return cached


def _objective(consensus, data, blocks=None):
    """Raw Kemeny objective ``sum_b w_b S_b``."""
    n_pairs = data.n_items * (data.n_items - 1) // 2
    if blocks is None and n_pairs * data.n_rankings <= _PAIRWISE_MAX:
        first, second, masses, above, below, tied = _pairwise_terms(data)
        relation = np.sign(consensus[first] - consensus[second])
        cost = np.where(
            relation < 0,
            below + 0.5 * tied,
            np.where(relation > 0, above + 0.5 * tied, 0.5 * (above + below)),
        )
        return _dot(masses, cost)
    if blocks is None and _compiled_for(data):
        sums = _pair_sums_compiled(consensus, data)
    else:
        sums = _pair_sums(consensus, data, blocks)
    return _dot(data.ranking_weights, sums)


def _pair_sums_compiled(consensus, data):
    """:func:`_pair_sums` by the compiled Fenwick sweep (O(M B log K)).

    With ``data.n_threads`` > 1, parts of the rankings are summed in threads
    (each ranking's sum is computed alone: the same sums).
    """
    order = bucket_order(consensus)
    sorted_buckets = consensus[order]
    parts = split_range(data.n_rankings, data.n_threads)
    sums = run_on_parts(
        _pair_sums_kernel,
        (
            (
                order,
                sorted_buckets,
                data.ranks[start:stop],
                data.n_buckets[start:stop],
                data.item_weights,
            )
            for start, stop in parts
        ),
    )
    return sums[0] if len(sums) == 1 else np.concatenate(sums)
