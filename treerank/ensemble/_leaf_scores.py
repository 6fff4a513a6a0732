"""Per-tree leaf scores of a ranking forest and their simple aggregations.

The trees of a forest are summarized by each sample's leaf rank in each tree:
an integer matrix of shape (n_samples, n_trees), 0 for the tree's best leaf.
Each tree scores its leaves in one of two ways (``leaf_scores`` of
:class:`~treerank.RankingForest`):

- by **rank**, ``(K - r) / K`` for the leaf of rank r among K: the tree's own
  left-to-right order, the ranking TreeRank builds (the order between two leaves
  is decided by the split at their lowest common ancestor);
- by **rate**, the leaf's share of positive weight, smoothed along its branch:
  each node's rate is shrunk towards its parent's by ``m`` pseudo-rows
  (the m-estimate of Ferri, Flach and Hernández-Orallo, 2003). The tree is then a
  probability estimation tree whose leaves are ordered by their own data, not by
  the recursion.

Averaging per-tree scores is the classical bagging aggregation (and the one of
the original R package); the Kendall median
(:class:`~treerank.ensemble.TreeAggregate`, by :mod:`treerank.aggregation`)
uses only each tree's order of its leaves (:func:`leaf_positions`).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = [
    "leaf_midranks",
    "leaf_positions",
    "mean_borda_scores",
    "mean_leaf_scores",
    "mean_leaf_values",
    "rank_leaf_values",
    "rate_leaf_values",
]


def mean_leaf_scores(leaf_ranks, n_leaves):
    """Mean of the trees' normalized leaf scores ``(K_b - r_b) / K_b``.

    Parameters
    ----------
    leaf_ranks : ndarray of int of shape (n_samples, n_trees)
        Rank of each sample's leaf in each tree (0 = best).
    n_leaves : ndarray of int of shape (n_trees,)
        Number of leaves K_b of each tree.

    Returns
    -------
    scores : ndarray of shape (n_samples,)
        In (0, 1]; higher is better.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.ensemble import mean_leaf_scores
    >>> mean_leaf_scores(np.array([[0, 1], [1, 0]]), np.array([2, 4]))
    array([0.875, 0.75 ])
    """
    n_leaves = np.asarray(n_leaves, dtype=np.float64)
    n_trees = leaf_ranks.shape[1]
    return _mean_over_trees(
        (n_leaves[b] - leaf_ranks[:, b]) / n_leaves[b] for b in range(n_trees)
    )


def _mean_over_trees(columns):
    """Mean of per-tree columns, added in tree order.

    Each point's score is the same sequence of floating-point operations
    whatever the other points in the batch (a numpy reduction over a stacked
    array may switch to pairwise summation, which changes the last bits).
    """
    total, count = None, 0
    for column in columns:
        total = np.array(column, dtype=np.float64) if total is None else total + column
        count += 1
    return total / count


def leaf_midranks(leaf_masses):
    """Mid-rank of each leaf of a tree under a reference distribution.

    The mid-rank of leaf r is the mass of the leaves ranked below it plus half
    its own mass: the probability that a reference point is ranked below a
    point of leaf r, ties counting one half.

    Parameters
    ----------
    leaf_masses : array-like of shape (n_leaves,)
        Reference masses of the leaves in rank order (best first).

    Returns
    -------
    midranks : ndarray of shape (n_leaves,)

    Examples
    --------
    >>> from treerank.ensemble import leaf_midranks
    >>> leaf_midranks([1, 1, 2])
    array([0.875, 0.625, 0.25 ])
    """
    masses = np.asarray(leaf_masses, dtype=np.float64)
    masses = masses / masses.sum()
    below = 1.0 - np.cumsum(masses)
    return below + 0.5 * masses


def mean_borda_scores(leaf_ranks, midranks):
    """Mass-weighted Borda score: the mean over trees of the leaf mid-rank.

    Parameters
    ----------
    leaf_ranks : ndarray of int of shape (n_samples, n_trees)
        Rank of each sample's leaf in each tree.
    midranks : list of ndarray
        ``midranks[b]`` is :func:`leaf_midranks` of tree b.

    Returns
    -------
    scores : ndarray of shape (n_samples,)
        In [0, 1]; higher is better.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.ensemble import mean_borda_scores
    >>> midranks = [np.array([0.75, 0.25]), np.array([0.9, 0.4])]
    >>> mean_borda_scores(np.array([[0, 1]]), midranks)
    array([0.575])
    """
    return _mean_over_trees(
        midranks[b][leaf_ranks[:, b]] for b in range(leaf_ranks.shape[1])
    )


def rank_leaf_values(n_leaves):
    """The rank score ``(K - r) / K`` of each leaf r = 0..K-1 of a K-leaf tree.

    Parameters
    ----------
    n_leaves : int
        Number of leaves K.

    Returns
    -------
    values : ndarray of shape (n_leaves,)
        Decreasing from 1 (the best leaf) to 1/K.

    Examples
    --------
    >>> from treerank.ensemble import rank_leaf_values
    >>> rank_leaf_values(4)
    array([1.  , 0.75, 0.5 , 0.25])
    """
    n_leaves = int(n_leaves)
    return (n_leaves - np.arange(n_leaves)) / n_leaves


def rate_leaf_values(structure, smoothing):
    """Positive rate of each leaf of a ranking tree, smoothed along its branch.

    The root's rate is its share of positive weight; the rate of every other
    node is its share shrunk towards its parent's smoothed rate by
    ``smoothing`` pseudo-weight:
    ``rate(t) = (n_pos(t) + m rate(parent)) / (n_pos(t) + n_neg(t) + m)``.
    A leaf with much weight keeps its own rate; a small leaf takes mostly its
    parent's, so that the noise of small leaves does not reorder them.

    Parameters
    ----------
    structure : RankingTreeStructure
        The tree (``tree_`` of a fitted :class:`~treerank.TreeRank`): its nodes'
        weighted class counts, parents and leaves.
    smoothing : float
        The pseudo-weight m (in the units of the tree's weights), >= 0.

    Returns
    -------
    values : ndarray of shape (n_leaves,)
        The smoothed rate of each leaf, in the tree's rank order (best first),
        in [0, 1].

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.ensemble import rate_leaf_values
    >>> from treerank.tree._structure import RankingTreeStructure
    >>> tree = RankingTreeStructure(
    ...     [1, -1, -1], [2, -1, -1], [6.0, 5.0, 1.0], [6.0, 1.0, 5.0], [None] * 3,
    ...     [None] * 3)
    >>> rate_leaf_values(tree, 0.0)
    array([0.83333333, 0.16666667])
    >>> rate_leaf_values(tree, 6.0)
    array([0.66666667, 0.33333333])
    """
    n_pos = structure.n_pos
    total = n_pos + structure.n_neg
    rate = np.empty(total.shape[0])
    rate[0] = n_pos[0] / total[0]
    depth, parent = structure.depth, structure.parent
    order = np.argsort(depth, kind="stable")[1:]  # parents before children
    levels = np.split(order, np.flatnonzero(np.diff(depth[order])) + 1)
    for nodes in levels:
        rate[nodes] = (n_pos[nodes] + smoothing * rate[parent[nodes]]) / (
            total[nodes] + smoothing
        )
    return rate[structure.leaves]


def leaf_positions(values):
    """Each leaf's position when a tree orders its leaves by their values.

    Parameters
    ----------
    values : array-like of shape (n_leaves,)
        The leaves' scores (higher is better).

    Returns
    -------
    positions : ndarray of int32 of shape (n_leaves,)
        0 for the highest value, leaves of equal value at the same position,
        positions dense (0, 1, 2, ...): the tree's bucket order of its leaves.

    Examples
    --------
    >>> from treerank.ensemble import leaf_positions
    >>> leaf_positions([0.2, 0.9, 0.2, 0.5])
    array([2, 0, 2, 1], dtype=int32)
    """
    values = np.asarray(values, dtype=np.float64)
    return np.unique(-values, return_inverse=True)[1].reshape(-1).astype(np.int32)


def mean_leaf_values(leaf_ranks, leaf_values):
    """Mean over the trees of each sample's leaf value.

    Parameters
    ----------
    leaf_ranks : ndarray of int of shape (n_samples, n_trees)
        Rank of each sample's leaf in each tree (0 = best).
    leaf_values : list of ndarray
        ``leaf_values[b][r]`` is the value of the leaf of rank r of tree b.

    Returns
    -------
    scores : ndarray of shape (n_samples,)
        Each sample's score depends on its own leaves alone (the trees are
        added in order).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.ensemble import mean_leaf_values
    >>> values = [np.array([0.9, 0.1]), np.array([0.6, 0.5, 0.2])]
    >>> mean_leaf_values(np.array([[0, 2], [1, 0]]), values)
    array([0.55, 0.35])
    """
    return _mean_over_trees(
        leaf_values[b][leaf_ranks[:, b]] for b in range(leaf_ranks.shape[1])
    )
