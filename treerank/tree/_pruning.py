"""Pruning of ranking trees: weakest-link path and penalized subtree selection.

Because the AUC is additive over the tree (``AUC(T) = 1/2 + sum of the dAUC of
T's internal nodes``), maximizing ``AUC(T) - lambda * #leaves(T)`` over the
admissible subtrees of a master tree is CART's cost-complexity problem with
-AUC as the risk: the optimal subtrees are nested and found by weakest-link
pruning with node strength ``g(t) = sum dAUC(subtree t) / (#leaves(t) - 1)``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import Bunch

__all__ = [
    "collapse_thresholds",
    "penalized_subtree",
    "structural_penalty",
]

# relative tolerance for "ties for the weakest link"
_TIE_RTOL = 1e-10


def _subtree_sums(structure, alive):
    """Sum of dAUC over alive internal nodes and leaf count of each current subtree.

    A node is a leaf of the current tree if it is an original leaf or a
    collapsed (not alive) internal node. Computed bottom-up, one vectorized
    step per depth level.
    """
    n = structure.node_count
    sums = np.zeros(n)
    leaves = np.ones(n)
    left, right = structure.children_left, structure.children_right
    for d in range(int(structure.depth.max()), -1, -1):
        nodes = np.flatnonzero((structure.depth == d) & alive)
        if nodes.shape[0] == 0:
            continue
        lc, rc = left[nodes], right[nodes]
        sums[nodes] = structure.dauc[nodes] + sums[lc] + sums[rc]
        leaves[nodes] = leaves[lc] + leaves[rc]
    return sums, leaves


def collapse_thresholds(structure):
    """Weakest-link pruning of a ranking tree.

    Parameters
    ----------
    structure : RankingTreeStructure
        The master tree, with training dAUCs.

    Returns
    -------
    thresholds : ndarray of shape (node_count,)
        For each internal node, the smallest ``lambda`` at which it is a leaf
        (or removed) in the optimal subtree ``T(lambda)``; ``-inf`` for the
        leaves. Non-increasing from a node to its descendants, so that
        ``T(lambda)`` collapses exactly the nodes with ``threshold <= lambda``.
    path : Bunch
        ``ccp_alphas`` (increasing, starting at 0), ``n_leaves`` and
        ``train_auc`` of the nested subtrees.
    """
    n = structure.node_count
    internal = ~structure.is_leaf
    thresholds = np.full(n, -np.inf)
    thresholds[internal] = np.inf
    alive = internal.copy()
    ancestors = structure.ancestors()
    sums, leaves = _subtree_sums(structure, alive)
    ccp_alphas = [0.0]
    n_leaves = [int(leaves[0]) if alive[0] else 1]
    train_auc = [0.5 + float(structure.dauc[alive].sum())]
    previous = 0.0
    while alive.any():
        nodes = np.flatnonzero(alive)
        strength = sums[nodes] / (leaves[nodes] - 1)
        weakest = strength.min()
        lam = max(float(weakest), previous)
        tol = _TIE_RTOL * max(abs(weakest), 1e-300)
        collapse = nodes[strength <= weakest + tol]
        # a node disappears when it or one of its ancestors collapses
        hit = np.isin(ancestors, collapse).any(axis=1) & alive
        thresholds[hit] = lam
        alive &= ~hit
        sums, leaves = _subtree_sums(structure, alive)
        ccp_alphas.append(lam)
        n_leaves.append(int(leaves[0]) if alive[0] else 1)
        train_auc.append(0.5 + float(structure.dauc[alive].sum()))
        previous = lam
    path = Bunch(
        ccp_alphas=np.asarray(ccp_alphas),
        n_leaves=np.asarray(n_leaves),
        train_auc=np.asarray(train_auc),
    )
    return thresholds, path


def structural_penalty(n_leaves, n_samples, n_features, n_cuts, p_low, p_high):
    """Distribution-free complexity penalty of a ranking tree with K leaves.

    ``pen(K, n) = 1 / (p_lo (1 - p_hi)) * sqrt(32 (log(16 ((n + 1) q)^(2 K k))
    + K) / n)``, with ``k`` the cuts per LeafRank, ``q`` the number of features
    and ``[p_lo, p_hi]`` a bracket of ``P(Y = 1)``. It bounds the expected
    deviation between empirical and true AUC uniformly over the trees with K
    leaves, so it is very conservative at moderate n.

    Parameters
    ----------
    n_leaves : int or ndarray of int
        K.
    n_samples : int
        n.
    n_features : int
        q.
    n_cuts : int
        k.
    p_low, p_high : float
        Bracket of the positive fraction, ``0 < p_low <= p_high < 1``.

    Returns
    -------
    penalty : float or ndarray

    Examples
    --------
    >>> from treerank.tree import structural_penalty
    >>> # 8 leaves, 2,000 samples, 2 features, depth-3 CART LeafRank, p = 0.44
    >>> round(float(structural_penalty(8, 2000, 2, 7, 0.44, 0.44)), 2)
    15.74
    """
    K = np.asarray(n_leaves, dtype=np.float64)
    log_term = np.log(16.0) + 2.0 * K * n_cuts * np.log((n_samples + 1.0) * n_features)
    return np.sqrt(32.0 * (log_term + K) / n_samples) / (p_low * (1.0 - p_high))


def penalized_subtree(structure, penalty):
    """The admissible subtree maximizing ``AUC(T) - penalty(#leaves(T))``.

    Exact over all admissible subtrees (keep-or-kill with heredity), by
    dynamic programming: for each node t and each leaf count k, the largest
    sum of dAUC over the internal nodes kept in a k-leaf subtree rooted at t.

    Parameters
    ----------
    structure : RankingTreeStructure
    penalty : callable
        Maps an array of leaf counts to penalties.

    Returns
    -------
    collapsed : ndarray of bool of shape (node_count,)
        Internal nodes to collapse.
    n_leaves : int
        Leaves of the selected subtree.

    Notes
    -----
    O(K^2) time for a tree with K leaves.
    """
    n = structure.node_count
    left, right = structure.children_left, structure.children_right
    best = [None] * n  # best[t][k - 1]: best dAUC sum with k leaves
    choice = [None] * n  # number of leaves given to the left child, per k
    for node in range(n - 1, -1, -1):  # children before parents
        if left[node] < 0:
            best[node] = np.zeros(1)
            continue
        bl, br = best[left[node]], best[right[node]]
        size = bl.shape[0] + br.shape[0]
        combined = np.full(size, -np.inf)
        split_left = np.zeros(size, dtype=np.intp)
        for i in range(bl.shape[0]):  # i + 1 leaves on the left
            candidate = bl[i] + br
            slots = slice(i + 1, i + 1 + br.shape[0])  # total k - 1 index
            better = candidate > combined[slots]
            combined[slots] = np.where(better, candidate, combined[slots])
            split_left[slots] = np.where(better, i + 1, split_left[slots])
        combined += structure.dauc[node]
        combined[0] = 0.0  # one leaf: the node collapsed
        best[node] = combined
        choice[node] = split_left
    counts = np.arange(1, best[0].shape[0] + 1)
    objective = best[0] - penalty(counts)
    k_best = int(counts[np.argmax(objective)])
    collapsed = np.zeros(n, dtype=bool)
    stack = [(0, k_best)]
    while stack:
        node, k = stack.pop()
        if left[node] < 0:
            continue
        if k == 1:
            collapsed[node] = True
            continue
        k_left = int(choice[node][k - 1])
        stack.append((left[node], k_left))
        stack.append((right[node], k - k_left))
    return collapsed, k_best
