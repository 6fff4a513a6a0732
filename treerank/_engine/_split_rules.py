"""The LeafRank rules of a ranking tree, stored as flat arrays of inner nodes.

The rule of an internal master node is a small binary tree (the LeafRank's
inner tree); all the rules of a ranking tree are concatenated into one set of
arrays, and the master tree gives each internal node the range
``rule_start:rule_stop`` of its rule. Inside a rule, children are numbered from
the rule's root (local indices, -1 for an inner leaf). An inner node splits on
``x[feature] <= threshold`` (missing values to the left when
``missing_left``), or, on a categorical feature, on whether the category code
of ``x[feature]`` is in the node's set of categories; an inner leaf belongs to
the left (better) side of the master split when ``left_leaf`` is True.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = [
    "SplitRules",
    "category_codes",
    "category_mask",
    "rule_feature_importances",
    "rule_improvements_per_feature",
]


def category_codes(mask):
    """The category codes in a 256-bit mask (4 uint64 words), increasing.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank._engine import category_codes, category_mask
    >>> category_codes(category_mask([0, 3, 70]))
    (0, 3, 70)
    """
    words = np.asarray(mask, dtype=np.uint64)
    bits = np.unpackbits(words.astype("<u8").view(np.uint8), bitorder="little")
    return tuple(int(c) for c in np.flatnonzero(bits))


def category_mask(codes):
    """The 256-bit mask (4 uint64 words) of a collection of codes in [0, 255]."""
    bits = np.zeros(256, dtype=np.uint8)
    bits[np.asarray(list(codes), dtype=np.int64)] = 1
    return np.packbits(bits, bitorder="little").view("<u8").astype(np.uint64)


class SplitRules:
    """Flat arrays of the inner nodes of all the rules of one ranking tree.

    Parameters
    ----------
    feature : ndarray of int of shape (n_nodes,)
        Feature tested by each inner split (-1 at inner leaves).
    threshold : ndarray of float64 of shape (n_nodes,)
        Real threshold: left when ``x[feature] <= threshold``.
    missing_left : ndarray of bool of shape (n_nodes,)
        Where missing values go at each split.
    child_left, child_right : ndarray of int of shape (n_nodes,)
        Children, local to the rule (-1 at inner leaves).
    left_leaf : ndarray of bool of shape (n_nodes,)
        Inner leaves on the left side of their master split.
    improvement : ndarray of float64 of shape (n_nodes,)
        Criterion improvement of each inner split (0 at inner leaves), in
        class-balanced masses; the basis of the feature importances.
    threshold_bin : ndarray of uint8 of shape (n_nodes,) or None, default=None
        The split's bin (left when the bin code is at most this), kept while
        the training data's codes are at hand; None for a rule read from a
        file.
    missing_seen : ndarray of bool of shape (n_nodes,) or None, default=None
        Whether each split's node had missing values in training (where it
        had none, missing values follow the side of larger training weight);
        None: unknown (taken as True).
    category : ndarray of int of shape (n_nodes,) or None, default=None
        For a split on a categorical feature, the row of ``category_sets``
        holding the categories sent left; -1 for a threshold split (None: no
        categorical split).
    category_sets : ndarray of uint64 of shape (n_sets, 4) or None, default=None
        Sets of category codes as 256-bit masks (code c is bit ``c % 64`` of
        word ``c // 64``).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank._engine import SplitRules
    >>> rules = SplitRules(
    ...     feature=[0, -1, -1], threshold=[1.5, 0.0, 0.0],
    ...     missing_left=[False, False, False], child_left=[1, -1, -1],
    ...     child_right=[2, -1, -1], left_leaf=[False, False, True],
    ...     improvement=[0.5, 0.0, 0.0])
    >>> rules.n_nodes
    3
    """

    def __init__(
        self,
        feature,
        threshold,
        missing_left,
        child_left,
        child_right,
        left_leaf,
        improvement,
        threshold_bin=None,
        missing_seen=None,
        category=None,
        category_sets=None,
    ):
        self.feature = np.asarray(feature, dtype=np.int32)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.missing_left = np.asarray(missing_left, dtype=bool)
        self.child_left = np.asarray(child_left, dtype=np.int32)
        self.child_right = np.asarray(child_right, dtype=np.int32)
        self.left_leaf = np.asarray(left_leaf, dtype=bool)
        self.improvement = np.asarray(improvement, dtype=np.float64)
        self.threshold_bin = (
            None if threshold_bin is None else np.asarray(threshold_bin, np.uint8)
        )
        n = self.feature.shape[0]
        self.missing_seen = (
            np.ones(n, dtype=bool)
            if missing_seen is None
            else np.asarray(missing_seen, dtype=bool)
        )
        self.category = (
            np.full(n, -1, dtype=np.int32)
            if category is None
            else np.asarray(category, dtype=np.int32)
        )
        self.category_sets = (
            np.zeros((0, 4), dtype=np.uint64)
            if category_sets is None
            else np.asarray(category_sets, dtype=np.uint64).reshape(-1, 4)
        )
        if np.any(self.category >= self.category_sets.shape[0]):
            raise ValueError("SplitRules.category refers to a missing category set.")
        for name in (
            "threshold",
            "missing_left",
            "child_left",
            "child_right",
            "left_leaf",
            "improvement",
            "missing_seen",
            "category",
        ):
            if getattr(self, name).shape != (n,):
                raise ValueError(
                    f"SplitRules.{name} must have one entry per inner node ({n}); "
                    f"got shape {getattr(self, name).shape}."
                )

    @property
    def n_nodes(self):
        """Number of inner nodes (splits and leaves) of all the rules."""
        return int(self.feature.shape[0])

    def arrays(self, start, stop):
        """The arrays of the rule ``start:stop`` (children local to it).

        ``categories`` holds, for each inner node, the tuple of category codes
        sent left by a categorical split (None for a threshold split).
        """
        part = slice(start, stop)
        return {
            "children_left": self.child_left[part],
            "children_right": self.child_right[part],
            "feature": self.feature[part],
            "threshold": self.threshold[part],
            "missing_left": self.missing_left[part],
            "left_nodes": self.left_leaf[part],
            "improvement": self.improvement[part],
            "missing_seen": self.missing_seen[part],
            "categories": [
                None if index < 0 else category_codes(self.category_sets[index])
                for index in self.category[part]
            ],
        }

    def kernel_arrays(self):
        """The arrays in the dtypes the routing kernels take."""
        threshold_bin = self.threshold_bin
        if threshold_bin is None:
            threshold_bin = np.zeros(self.n_nodes, dtype=np.uint8)
        return (
            self.feature,
            self.threshold,
            threshold_bin,
            self.missing_left.view(np.uint8),
            self.child_left,
            self.child_right,
            self.left_leaf.view(np.uint8),
            self.category,
        )


def rule_improvements_per_feature(rules, rule_start, rule_stop, nodes):
    """Each rule's non-negative split improvements, summed per feature.

    Parameters
    ----------
    rules : SplitRules
    rule_start, rule_stop : ndarray of int of shape (n_master,)
        Range of each internal master node's rule.
    nodes : ndarray of int
        The internal master nodes whose rules to read.

    Returns
    -------
    owner, feature : ndarray of int64 of shape (n_pairs,)
        The (master node, feature) pairs of the rules' splits, sorted.
    improvement : ndarray of float64 of shape (n_pairs,)
        Sum of ``max(improvement, 0)`` over the pair's splits, added in rule
        order.
    first_split : ndarray of int64 of shape (n_pairs,)
        The rule node of the pair's first split.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank._engine import SplitRules, rule_improvements_per_feature
    >>> # one master node whose rule splits feature 0 twice and feature 1 once
    >>> rules = SplitRules(
    ...     feature=[0, 0, -1, -1, 1, -1, -1],
    ...     threshold=[1.0, 0.5, 0.0, 0.0, 2.0, 0.0, 0.0],
    ...     missing_left=[False] * 7, child_left=[1, 2, -1, -1, 5, -1, -1],
    ...     child_right=[4, 3, -1, -1, 6, -1, -1],
    ...     left_leaf=[False, False, True, False, False, True, False],
    ...     improvement=[0.25, 0.125, 0.0, 0.0, 0.5, 0.0, 0.0])
    >>> owner, feature, improvement, first = rule_improvements_per_feature(
    ...     rules, np.array([0]), np.array([7]), np.array([0]))
    >>> feature.tolist(), improvement.tolist(), first.tolist()
    ([0, 1], [0.375, 0.5], [0, 4])
    """
    n_features = max(int(rules.feature.max(initial=0)) + 1, 1)
    lengths = rule_stop[nodes] - rule_start[nodes]
    owner = np.repeat(nodes, lengths)
    first = np.cumsum(lengths) - lengths
    inner = np.repeat(rule_start[nodes], lengths) + (
        np.arange(int(lengths.sum())) - np.repeat(first, lengths)
    )
    split = rules.child_left[inner] >= 0
    owner, inner = owner[split].astype(np.int64), inner[split].astype(np.int64)
    key = owner * n_features + rules.feature[inner]
    keys, first_of_key, which = np.unique(key, return_index=True, return_inverse=True)
    improvement = np.bincount(
        which.ravel(),
        weights=np.maximum(rules.improvement[inner], 0.0),
        minlength=keys.shape[0],
    )
    return keys // n_features, keys % n_features, improvement, inner[first_of_key]


def rule_feature_importances(rules, rule_start, rule_stop, node_weight, n_features):
    """Feature importances of a ranking tree from its rules' improvements.

    Each master split's weight (e.g. its AUC increment) is shared among the
    features of its rule in proportion to their criterion improvements, then
    summed and normalized.

    Parameters
    ----------
    rules : SplitRules
    rule_start, rule_stop : ndarray of int of shape (n_master,)
        Range of each internal master node's rule (ignored where
        ``node_weight`` is 0).
    node_weight : ndarray of float of shape (n_master,)
        Weight of each master split (0 for leaves).
    n_features : int

    Returns
    -------
    importances : ndarray of shape (n_features,)
        Non-negative, summing to one (all zero if no split has weight).
    """
    importances = np.zeros(n_features)
    internal = np.flatnonzero(node_weight > 0)
    if internal.shape[0] == 0:
        return importances
    # each rule's improvement per feature first (as a model file stores them),
    # then each feature's share of its rule
    owner, feature, per_feature, _ = rule_improvements_per_feature(
        rules, rule_start, rule_stop, internal
    )
    totals = np.bincount(owner, weights=per_feature, minlength=node_weight.shape[0])
    share = np.divide(
        per_feature,
        totals[owner],
        out=np.zeros_like(per_feature),
        where=totals[owner] > 0,
    )
    np.add.at(importances, feature, node_weight[owner] * share)
    total = importances.sum()
    return importances / total if total > 0 else importances
