"""The fitted ranking tree as flat arrays.

Nodes are numbered in depth-first preorder with the left (better) child visited
first, so the leaves sorted by node id are the leaves read from left to right:
the ranking, best first. Every array has one entry per node.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.metrics._roc import roc_curve_from_counts
from treerank.tree._leafrank import leafrank_goes_left_rows, leafrank_input
from treerank.tree._routing import compile_routing, route

__all__ = ["RankingTreeStructure"]


class RankingTreeStructure:
    """Flat-array storage of a ranking tree (the ``tree_`` of TreeRank).

    Parameters
    ----------
    children_left, children_right : ndarray of int of shape (node_count,)
        Children of each node, -1 for leaves. The left child is the better one.
    n_pos, n_neg : ndarray of float of shape (node_count,)
        Weighted numbers of positive and negative training samples in each node.
    leafranks : list of length node_count
        The fitted LeafRank of each internal node, None for leaves.
    features : list of length node_count
        For each internal node, the indices of the features its LeafRank was
        fitted on (feature randomization FR1), or None for all features.

    Attributes
    ----------
    node_count : int
    n_leaves : int
    parent : ndarray of int
        Parent of each node (-1 for the root).
    depth : ndarray of int
        Depth of each node (0 for the root).
    total_pos, total_neg : float
        Weighted class totals at the root.
    alpha, beta : ndarray of float
        Global false and true positive masses of each node
        (``n_neg / total_neg`` and ``n_pos / total_pos``).
    alpha_lo, beta_lo : ndarray of float
        Start of each node's ROC segment: the masses ranked above the node.
    alpha_hi, beta_hi : ndarray of float
        End of each node's ROC segment (``alpha_lo + alpha``, ``beta_lo + beta``).
    dauc : ndarray of float
        AUC increment of each internal node's split (0 for leaves):
        ``(beta_L alpha_R - alpha_L beta_R) / 2``.
    leaf_rank : ndarray of int
        Rank of each leaf from left to right (0 = best), -1 for internal nodes.
    leaves : ndarray of int
        Node ids of the leaves in rank order.
    """

    def __init__(
        self, children_left, children_right, n_pos, n_neg, leafranks, features
    ):
        self.children_left = np.asarray(children_left, dtype=np.intp)
        self.children_right = np.asarray(children_right, dtype=np.intp)
        self.n_pos = np.asarray(n_pos, dtype=np.float64)
        self.n_neg = np.asarray(n_neg, dtype=np.float64)
        self.leafranks = list(leafranks)
        self.features = list(features)
        self._derive()

    # ------------------------------------------------------------------
    # derived arrays
    # ------------------------------------------------------------------
    def _derive(self):
        n = self.children_left.shape[0]
        left, right = self.children_left, self.children_right
        internal = left >= 0
        if np.any(internal & ((left <= np.arange(n)) | (right <= np.arange(n)))):
            raise ValueError(
                "Nodes must be numbered in preorder (children after parents)."
            )
        self.node_count = n
        self.parent = np.full(n, -1, dtype=np.intp)
        self.parent[left[internal]] = np.flatnonzero(internal)
        self.parent[right[internal]] = np.flatnonzero(internal)
        self.depth = np.zeros(n, dtype=np.intp)
        for node in range(1, n):
            self.depth[node] = self.depth[self.parent[node]] + 1
        self.total_pos = float(self.n_pos[0])
        self.total_neg = float(self.n_neg[0])
        self.alpha = self.n_neg / self.total_neg
        self.beta = self.n_pos / self.total_pos
        self.alpha_lo = np.zeros(n)
        self.beta_lo = np.zeros(n)
        for node in np.flatnonzero(internal):
            lchild, rchild = left[node], right[node]
            self.alpha_lo[lchild] = self.alpha_lo[node]
            self.beta_lo[lchild] = self.beta_lo[node]
            self.alpha_lo[rchild] = self.alpha_lo[node] + self.alpha[lchild]
            self.beta_lo[rchild] = self.beta_lo[node] + self.beta[lchild]
        self.alpha_hi = self.alpha_lo + self.alpha
        self.beta_hi = self.beta_lo + self.beta
        self.dauc = np.zeros(n)
        lchild, rchild = left[internal], right[internal]
        self.dauc[internal] = 0.5 * (
            self.beta[lchild] * self.alpha[rchild]
            - self.alpha[lchild] * self.beta[rchild]
        )
        self.leaves = np.flatnonzero(~internal)
        self.n_leaves = int(self.leaves.shape[0])
        self.leaf_rank = np.full(n, -1, dtype=np.intp)
        self.leaf_rank[self.leaves] = np.arange(self.n_leaves)

    @property
    def is_leaf(self):
        """Boolean mask of the leaves."""
        return self.children_left < 0

    # ------------------------------------------------------------------
    # prediction
    # ------------------------------------------------------------------
    def apply_rank(self, X):
        """Rank of the leaf containing each row of X (already validated).

        With CART rules everywhere, routes all rows at once through the
        compiled routing table (:mod:`treerank.tree._routing`); otherwise
        falls back to :meth:`apply`.
        """
        routing = getattr(self, "_routing", False)
        if routing is False:  # compiled on first use, then kept
            routing = self._routing = compile_routing(self)
        if routing is None:
            return self.leaf_rank[self.apply(X)]
        internal = np.flatnonzero(self.children_left >= 0)
        if internal.shape[0]:
            X = leafrank_input(self.leafranks[internal[0]], X)
        return route(routing, X)

    def apply(self, X):
        """Node id of the leaf containing each row of X (already validated).

        Each internal node sends the rows that reach it to its LeafRank once, so
        a row's leaf depends on that row alone (batch invariance).
        """
        n_samples = X.shape[0]
        out = np.empty(n_samples, dtype=np.intp)
        internal = np.flatnonzero(self.children_left >= 0)
        if internal.shape[0]:
            X = leafrank_input(self.leafranks[internal[0]], X)
        stack = [(0, np.arange(n_samples))]
        while stack:
            node, rows = stack.pop()
            if self.children_left[node] < 0 or rows.shape[0] == 0:
                out[rows] = node
                continue
            left = leafrank_goes_left_rows(
                self.leafranks[node], X, rows, self.features[node]
            )
            stack.append((self.children_right[node], rows[~left]))
            stack.append((self.children_left[node], rows[left]))
        return out

    # ------------------------------------------------------------------
    # ROC analysis of the training data
    # ------------------------------------------------------------------
    def auc(self):
        """Training AUC by additivity: ``1/2 + sum of the splits' dAUC``."""
        return 0.5 + float(self.dauc.sum())

    def roc_curve(self):
        """Training ROC curve: knots ``(fpr, tpr)`` through the leaves in rank order."""
        return roc_curve_from_counts(self.n_pos[self.leaves], self.n_neg[self.leaves])

    # ------------------------------------------------------------------
    # subtrees
    # ------------------------------------------------------------------
    def subtree(self, collapsed):
        """The subtree where every node in ``collapsed`` becomes a leaf.

        Parameters
        ----------
        collapsed : ndarray of bool of shape (node_count,)
            Internal nodes to turn into leaves (their descendants are removed).

        Returns
        -------
        RankingTreeStructure
            A new structure with nodes renumbered (preorder is preserved).
        """
        collapsed = np.asarray(collapsed, dtype=bool) | self.is_leaf
        keep = np.zeros(self.node_count, dtype=bool)
        keep[0] = True
        for node in range(1, self.node_count):
            parent = self.parent[node]
            keep[node] = keep[parent] and not collapsed[parent]
        old_ids = np.flatnonzero(keep)
        new_id = np.full(self.node_count, -1, dtype=np.intp)
        new_id[old_ids] = np.arange(old_ids.shape[0])
        as_leaf = collapsed[old_ids]
        left = np.where(as_leaf, -1, new_id[self.children_left[old_ids]])
        right = np.where(as_leaf, -1, new_id[self.children_right[old_ids]])
        leafranks = [
            None if leaf else self.leafranks[i] for i, leaf in zip(old_ids, as_leaf)
        ]
        features = [
            None if leaf else self.features[i] for i, leaf in zip(old_ids, as_leaf)
        ]
        return RankingTreeStructure(
            left, right, self.n_pos[old_ids], self.n_neg[old_ids], leafranks, features
        )

    def ancestors(self):
        """Matrix of ancestors: row t lists the path from the root to node t.

        Returns
        -------
        paths : ndarray of int of shape (node_count, max_depth + 1)
            ``paths[t, d]`` is the ancestor of t at depth d, or t itself for
            ``d >= depth[t]``.
        """
        max_depth = int(self.depth.max())
        paths = np.empty((self.node_count, max_depth + 1), dtype=np.intp)
        paths[:, :] = np.arange(self.node_count)[:, None]
        for node in range(1, self.node_count):
            d = self.depth[node]
            paths[node, :d] = paths[self.parent[node], :d]
        return paths
