"""The fitted ranking tree as flat arrays.

Nodes are numbered in depth-first preorder with the left (better) child visited
first, so the leaves sorted by node id are the leaves read from left to right:
the ranking, best first. Every array has one entry per node.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine import Router, compile_graph, rule_feature_importances
from treerank.metrics._roc import roc_curve_from_counts
from treerank.tree._frozen import FrozenTreeLeafRank
from treerank.tree._leafrank import leafrank_goes_left_rows

__all__ = ["RankingTreeStructure"]


class RankingTreeStructure:
    """Flat-array storage of a ranking tree (the ``tree_`` of TreeRank).

    Parameters
    ----------
    children_left, children_right : ndarray of int of shape (node_count,)
        Children of each node, -1 for leaves. The left child is the better one.
    n_pos, n_neg : ndarray of float of shape (node_count,)
        Weighted numbers of positive and negative training samples in each node.
    leafranks : list of length node_count or None
        The fitted LeafRank of each internal node, None for leaves (a tree
        grown node by node with any LeafRank). None for a tree grown by the
        engine, whose rules are ``rules``.
    features : list of length node_count or None
        For each internal node, the indices of the features its LeafRank was
        fitted on (feature randomization FR1), or None for all features.
    rules : SplitRules or None, default=None
        The rules of a tree grown by the engine (:mod:`treerank._engine`), with
        ``rule_start``, ``rule_stop`` (the range of each internal node's rule)
        and ``n_features``; their features index all the input features.
    rule_start, rule_stop : ndarray of int or None, default=None
    n_features : int or None, default=None
    n_cuts : int, default=1
        Cuts per rule of an engine tree (the ``k`` of the structural penalty).

    The estimator that owns an engine tree sets ``category_labels`` (per
    feature, the labels of its category codes, None for a numeric feature) so
    that descriptions name the categories.

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
        self,
        children_left,
        children_right,
        n_pos,
        n_neg,
        leafranks=None,
        features=None,
        *,
        rules=None,
        rule_start=None,
        rule_stop=None,
        n_features=None,
        n_cuts=1,
    ):
        self.children_left = np.asarray(children_left, dtype=np.intp)
        self.children_right = np.asarray(children_right, dtype=np.intp)
        self.n_pos = np.asarray(n_pos, dtype=np.float64)
        self.n_neg = np.asarray(n_neg, dtype=np.float64)
        self.rules = rules
        if rules is None:
            self._leafranks = list(leafranks)
            self._features = list(features)
        else:
            internal = self.children_left >= 0
            self.rule_start = np.where(internal, rule_start, -1).astype(np.int64)
            self.rule_stop = np.where(internal, rule_stop, -1).astype(np.int64)
            self.n_features = int(n_features)
            self.n_cuts = int(n_cuts)
            self.category_labels = None
            self._leafranks = None
            self._features = None
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

    @property
    def leafranks(self):
        """The rule of each internal node (None for leaves).

        For an engine tree, frozen views of its rules, built on first access.
        """
        if self._leafranks is None:
            self._leafranks = [
                None if leaf else self._frozen_rule(node)
                for node, leaf in enumerate(self.is_leaf)
            ]
        return self._leafranks

    @property
    def features(self):
        """Features each node's rule was fitted on (None: all features)."""
        if self._features is None:
            self._features = [None] * self.node_count
        return self._features

    def _frozen_rule(self, node):
        """The rule of an internal node of an engine tree, as a frozen LeafRank."""
        arrays = self.rules.arrays(self.rule_start[node], self.rule_stop[node])
        arrays["category_labels"] = self.category_labels
        left = self.children_left[node]
        return FrozenTreeLeafRank(
            **arrays,
            feature_importances=None,
            n_features=self.n_features,
            n_cuts=self.n_cuts,
            gain=float(
                self.n_pos[left] / self.n_pos[node]
                - self.n_neg[left] / self.n_neg[node]
            ),
        )

    def feature_importances(self, n_features):
        """Importance of each feature: the splits' dAUC shared by their rules.

        Each internal node's AUC increment is shared among the features in
        proportion to its rule's feature importances, summed over the tree and
        normalized to sum to one (all zeros for a tree with a single leaf).
        """
        if self.rules is not None:
            return rule_feature_importances(
                self.rules,
                self.rule_start,
                self.rule_stop,
                np.where(self.is_leaf, 0.0, np.maximum(self.dauc, 0.0)),
                n_features,
            )
        importances = np.zeros(n_features)
        for node in np.flatnonzero(~self.is_leaf):
            shares = np.asarray(self.leafranks[node].feature_importances_, dtype=float)
            features = self.features[node]
            target = np.arange(n_features) if features is None else features
            importances[target] += self.dauc[node] * shares
        total = importances.sum()
        return importances / total if total > 0 else importances

    # ------------------------------------------------------------------
    # prediction
    # ------------------------------------------------------------------
    def graph(self):
        """The tree's decision graph (engine trees), compiled on first use."""
        graph = getattr(self, "_graph", None)
        if graph is None:
            graph = self._graph = compile_graph(
                self.children_left.astype(np.int32),
                self.children_right.astype(np.int32),
                self.rule_start,
                self.rule_stop,
                self.leaf_rank.astype(np.int64),
                *self.rules.kernel_arrays(),
            )
        return graph

    def apply_rank(self, X):
        """Rank of the leaf of each row of X (validated float64 array or sparse).

        An engine tree routes all rows at once through its compiled decision
        graph; other trees go node by node (:meth:`apply`).
        """
        if self.rules is None:
            return self.leaf_rank[self.apply(X)]
        router = Router([self.graph()], [self.rules.category_sets])
        return router.leaf_ranks(X)[:, 0].astype(np.intp)

    def apply(self, X):
        """Node id of the leaf of each row of X (validated float64 array or sparse).

        Each internal node sends the rows that reach it to its LeafRank once, so
        a row's leaf depends on that row alone (batch invariance).
        """
        if self.rules is not None:
            return self.leaves[self.apply_rank(X)]
        return self.apply_node_by_node(X)

    def apply_node_by_node(self, X):
        """:meth:`apply` through each node's rule object (any tree).

        The reference traversal: one ``goes_left`` call per internal node on
        the rows that reach it (for an engine tree, on frozen views of its
        rules), which the compiled graph must match exactly.
        """
        n_samples = X.shape[0]
        out = np.empty(n_samples, dtype=np.intp)
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
        if self.rules is not None:
            pruned = RankingTreeStructure(
                left,
                right,
                self.n_pos[old_ids],
                self.n_neg[old_ids],
                rules=self.rules,
                rule_start=self.rule_start[old_ids],
                rule_stop=self.rule_stop[old_ids],
                n_features=self.n_features,
                n_cuts=self.n_cuts,
            )
            pruned.category_labels = self.category_labels
            return pruned
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
