"""Tie policies for ranking lists by score.

When several items of a list share a score, the ranking ``argsort(-score)`` is
not unique. Every list metric of treerank takes ``ties=`` with one of:

``"average"`` (default)
    The exact expectation of the metric over a uniformly random order of every
    block of tied items (Calauzenes et al. 2013, the convention of scikit-learn's
    ``ndcg_score``). Each metric implements it exactly, in closed form or by an
    exact recursion (see the metric's Notes); for a positional measure
    ``sum_k phi(k) u_{sigma(k)}`` every item of a tied block simply receives the
    mean of ``phi`` over the block's positions (:func:`tie_averaged`).
``"pessimistic"``
    Tied items are ordered from the least to the most relevant (the worst case
    for every treerank list metric).
``"optimistic"``
    Tied items are ordered from the most to the least relevant (the best case).
``"stable"``
    Tied items keep their order in the input (by row index).

:func:`rank_lists` sorts every list by decreasing score under a policy and
describes the result: ranked order, positions and tie blocks (for the strict
policies every block is a single item).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from typing import NamedTuple

import numpy as np

from treerank.metrics._grouping import (
    segment_index,
    segment_lexsort,
    segment_positions,
    segment_sum,
)

__all__ = [
    "TIE_POLICIES",
    "RankedLists",
    "check_ties",
    "rank_lists",
    "tie_averaged",
    "tie_blocks",
]

TIE_POLICIES = ("average", "pessimistic", "optimistic", "stable")


def check_ties(ties):
    """Validate a tie policy name.

    Examples
    --------
    >>> from treerank.metrics._ties import check_ties
    >>> check_ties("average")
    'average'
    """
    if not isinstance(ties, str) or ties not in TIE_POLICIES:
        raise ValueError(
            f"ties must be one of {', '.join(map(repr, TIE_POLICIES))}; got {ties!r}."
        )
    return ties


class RankedLists(NamedTuple):
    """Lists ranked by decreasing score, with their tie blocks.

    All per-slot arrays are in *ranked layout*: list 0 best item first, ...,
    list 0 worst item, list 1 best item, and so on.

    Attributes
    ----------
    order : ndarray of shape (n,), dtype=intp
        Row (in the caller's arrays) of every ranked slot.
    group_starts, group_sizes : ndarray of shape (n_groups,)
        Boundaries of every list in ranked layout.
    group_of : ndarray of shape (n,)
        List of every slot.
    position : ndarray of shape (n,)
        1-based rank of every slot inside its list.
    block_starts, block_sizes : ndarray of shape (n_blocks,)
        Boundaries of the tie blocks (consecutive slots of one list with equal
        scores when ``ties="average"``; single slots otherwise).
    block_of : ndarray of shape (n,)
        Tie block of every slot.
    offset : ndarray of shape (n,)
        0-based position of every slot inside its tie block.
    """

    order: np.ndarray
    group_starts: np.ndarray
    group_sizes: np.ndarray
    group_of: np.ndarray
    position: np.ndarray
    block_starts: np.ndarray
    block_sizes: np.ndarray
    block_of: np.ndarray
    offset: np.ndarray

    @property
    def all_singletons(self):
        """Whether every tie block holds one item."""
        return self.block_starts.shape[0] == self.order.shape[0]


def tie_blocks(score_ranked, group_of):
    """Tie blocks of ranked lists: maximal runs of equal scores in one list.

    Parameters
    ----------
    score_ranked : ndarray of shape (n,)
        Scores in ranked layout.
    group_of : ndarray of shape (n,)
        List of every slot.

    Returns
    -------
    starts, sizes, block_of, offset : ndarray
        Block boundaries, block of every slot and position inside the block.

    Examples
    --------
    >>> from treerank.metrics._ties import tie_blocks
    >>> starts, sizes, block_of, offset = tie_blocks(
    ...     np.array([3.0, 3.0, 1.0, 1.0]), np.array([0, 0, 0, 1])
    ... )
    >>> starts, sizes, offset
    (array([0, 2, 3]), array([2, 1, 1]), array([0, 1, 0, 0]))
    """
    n = score_ranked.shape[0]
    new = np.empty(n, dtype=bool)
    if n:
        new[0] = True
        new[1:] = (score_ranked[1:] != score_ranked[:-1]) | (
            group_of[1:] != group_of[:-1]
        )
    starts = np.flatnonzero(new).astype(np.intp)
    sizes = np.diff(np.append(starts, n)).astype(np.intp)
    block_of = (np.cumsum(new) - 1).astype(np.intp)
    offset = segment_positions(starts, sizes)
    return starts, sizes, block_of, offset


def rank_lists(groups, y_score, *, ties, goodness=None):
    """Rank every list by decreasing score under a tie policy.

    Parameters
    ----------
    groups : QueryGroups
        The lists (see :func:`treerank.metrics._grouping.group_qid`).
    y_score : ndarray of shape (n,)
        Finite scores, higher first.
    ties : {"average", "pessimistic", "optimistic", "stable"}
        Tie policy (see the module docstring).
    goodness : ndarray of shape (n,), default=None
        How good every item is for the metric (its relevance grade, or minus
        its true rank); required by ``"pessimistic"`` and ``"optimistic"``,
        which order tied items by increasing / decreasing goodness (then by
        row index).

    Returns
    -------
    ranked : RankedLists

    Notes
    -----
    One stable sort per list (vectorized over lists of equal size),
    O(n log m) for lists of at most m items.

    Examples
    --------
    >>> from treerank.metrics._grouping import group_qid
    >>> from treerank.metrics._ties import rank_lists
    >>> groups = group_qid(np.zeros(4, dtype=int))
    >>> ranked = rank_lists(groups, np.array([0.5, 0.9, 0.5, 0.1]), ties="average")
    >>> ranked.order, ranked.position, ranked.block_sizes
    (array([1, 0, 2, 3]), array([1, 2, 3, 4]), array([1, 2, 1]))
    """
    ties = check_ties(ties)
    grouped = groups.order
    neg_score = -y_score[grouped]
    if ties in ("pessimistic", "optimistic"):
        if goodness is None:
            raise ValueError(f"ties={ties!r} needs the relevance of the items.")
        good = np.asarray(goodness, dtype=np.float64)[grouped]
        secondary = good if ties == "pessimistic" else -good
        keys = (secondary, neg_score)
    else:
        keys = (neg_score,)
    perm = segment_lexsort(keys, groups.starts, groups.sizes)
    order = grouped[perm]
    group_of = segment_index(groups.sizes)
    position = segment_positions(groups.starts, groups.sizes) + 1
    n = order.shape[0]
    if ties == "average":
        starts, sizes, block_of, offset = tie_blocks(neg_score[perm], group_of)
    else:
        starts = np.arange(n, dtype=np.intp)
        sizes = np.ones(n, dtype=np.intp)
        block_of = starts
        offset = np.zeros(n, dtype=np.intp)
    return RankedLists(
        order=order,
        group_starts=groups.starts,
        group_sizes=groups.sizes,
        group_of=group_of,
        position=position,
        block_starts=starts,
        block_sizes=sizes,
        block_of=block_of,
        offset=offset,
    )


def tie_averaged(values, ranked):
    """Replace every slot's value by the mean over its tie block.

    For a positional weight ``phi(position)`` this is the closed form of the
    expectation over uniformly random tie-breaking: an item of a block that
    occupies positions ``a..b`` is at each of them with probability
    ``1 / (b - a + 1)``.

    Parameters
    ----------
    values : ndarray of shape (n,)
        Per-slot values in ranked layout (floats or fractions).
    ranked : RankedLists

    Returns
    -------
    averaged : ndarray of shape (n,)

    Examples
    --------
    >>> from treerank.metrics._grouping import group_qid
    >>> from treerank.metrics._ties import rank_lists, tie_averaged
    >>> ranked = rank_lists(
    ...     group_qid(np.zeros(3, dtype=int)), np.array([1.0, 1.0, 0.0]), ties="average"
    ... )
    >>> tie_averaged(np.array([1.0, 0.5, 0.25]), ranked)
    array([0.75, 0.75, 0.25])
    """
    if ranked.all_singletons:
        return values
    block_mean = segment_sum(values, ranked.block_starts) / ranked.block_sizes
    return block_mean[ranked.block_of]
