"""Per-tree leaf scores of a ranking forest and their simple aggregations.

The trees of a forest are summarized by each sample's leaf rank in each tree:
an integer matrix of shape (n_samples, n_trees), 0 for the tree's best leaf.
Averaging per-tree scores is the classical bagging aggregation (and the one of
the original R package); the Kendall median lives in :mod:`treerank.aggregation`.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["leaf_midranks", "mean_borda_scores", "mean_leaf_scores"]


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
