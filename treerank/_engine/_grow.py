"""Entry points of the engine: grow a ranking tree, or fit one rule, on binned data."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from dataclasses import dataclass
from numbers import Integral
from typing import NamedTuple

import numpy as np

from treerank._engine import _tree_growth
from treerank._engine._random import new_state
from treerank._engine._rule_growth import fit_single_rule
from treerank._engine._split_rules import SplitRules
from treerank._engine._split_search import CRITERIA, SPLITTERS
from treerank._engine._tree_growth import grow_tree

__all__ = [
    "GrownTree",
    "GrowthParams",
    "fit_rule",
    "grow_ranking_tree",
]

# A split must improve local TPR - FPR by more than rounding noise.
MIN_GAIN = 1e-12


@dataclass(frozen=True)
class GrowthParams:
    """What the engine needs to grow a ranking tree.

    Parameters
    ----------
    max_depth : int or None
        Maximum depth of the master tree (None: no limit).
    min_samples_split : int
        Minimum number of rows of a master node to split it.
    max_features_node : int or None
        Features drawn for each master node (FR1); None for all.
    rule_max_depth : int
        Depth of each LeafRank's inner tree.
    min_samples_leaf : int or float
        Minimum number of rows in an inner leaf (a float is a fraction of the
        master node's rows).
    rule_max_features : int or None
        Features drawn at each inner split (FR2); None for all.
    criterion : str
        A key of :data:`treerank._engine.CRITERIA`.
    splitter : {"best", "random"}
        How an inner split chooses the threshold of a numeric feature: the
        best one, or one drawn at random between the node's lowest and
        highest bins (:data:`treerank._engine.SPLITTERS`).
    monotonic_cst : tuple of int or None
        Per feature, +1 (the score must not decrease when the feature
        increases, all else equal), -1 (must not increase) or 0; None for no
        constraint.
    max_fit_rows : int or None
        A node of more rows fits its rule on a class-stratified sample of this
        many of them, then splits all of them by the rule; None for all rows.
    """

    max_depth: int | None = None
    min_samples_split: int = 2
    max_features_node: int | None = None
    rule_max_depth: int = 3
    min_samples_leaf: int | float = 1
    rule_max_features: int | None = None
    criterion: str = "gini"
    splitter: str = "best"
    monotonic_cst: tuple | None = None
    max_fit_rows: int | None = None

    def kernel_arguments(self):
        """The growth parameters in the order and types of the kernel."""
        if isinstance(self.min_samples_leaf, Integral):
            min_leaf_count, min_leaf_fraction = int(self.min_samples_leaf), 0.0
        else:
            min_leaf_count, min_leaf_fraction = 1, float(self.min_samples_leaf)
        return (
            -1 if self.max_depth is None else int(self.max_depth),
            int(self.min_samples_split),
            0 if self.max_features_node is None else int(self.max_features_node),
            int(self.rule_max_depth),
            min_leaf_count,
            min_leaf_fraction,
            0 if self.rule_max_features is None else int(self.rule_max_features),
            CRITERIA[self.criterion],
            SPLITTERS[self.splitter],
            0 if self.max_fit_rows is None else int(self.max_fit_rows),
        )

    def monotonic(self, n_features):
        """The monotonic constraints as the kernels take them."""
        if self.monotonic_cst is None:
            return np.zeros(n_features, dtype=np.int8)
        return np.asarray(self.monotonic_cst, dtype=np.int8)


class GrownTree(NamedTuple):
    """A ranking tree grown by the engine, as flat arrays.

    Attributes
    ----------
    children_left, children_right : ndarray of int32
        Master tree, nodes in preorder (left = better child first), -1 at leaves.
    n_pos, n_neg : ndarray of float64
        Weighted class counts of each master node.
    rule_start, rule_stop : ndarray of int32
        Range of each internal node's rule in ``rules`` (-1 at leaves).
    gain : ndarray of float64
        Local TPR - FPR of each split's left side (0 at leaves).
    rules : SplitRules
    leaf_rank_of_row : ndarray of int32 of shape (n_samples,)
        Rank of the leaf of each row of the tree's sample, from the final
        partition of the growth (-1 for the other rows).
    """

    children_left: np.ndarray
    children_right: np.ndarray
    n_pos: np.ndarray
    n_neg: np.ndarray
    rule_start: np.ndarray
    rule_stop: np.ndarray
    gain: np.ndarray
    rules: SplitRules
    leaf_rank_of_row: np.ndarray


def _multiplicity(multiplicity, n_samples):
    if multiplicity is None:
        return np.ones(n_samples, dtype=np.float64)
    return np.ascontiguousarray(multiplicity, dtype=np.float64)


def _kernel_inputs(codes, y01, weights, rows):
    return (
        np.ascontiguousarray(codes, dtype=np.uint8),
        np.ascontiguousarray(y01, dtype=np.uint8),
        np.ascontiguousarray(weights, dtype=np.float64),
        np.array(rows, dtype=np.int64),  # a copy: partitioned in place
    )


def grow_ranking_tree(
    codes, y01, weights, rows, bin_mapper, params, seed, multiplicity=None
):
    """Grow a ranking tree on binned data.

    Parameters
    ----------
    codes : ndarray of uint8 of shape (n_samples, n_features)
        Bin codes (see :class:`BinMapper`), shared by all the trees of a forest.
    y01 : ndarray of shape (n_samples,)
        1 for positives, 0 for negatives.
    weights : ndarray of float64 of shape (n_samples,)
        Weights of the tree's sample (e.g. sample weights times bootstrap
        counts); the rows in ``rows`` must have positive weight.
    rows : ndarray of int
        The rows of the tree's sample (each once).
    bin_mapper : BinMapper
        The fitted binning of ``codes`` (real thresholds).
    params : GrowthParams
    seed : int
        Seed of the feature draws.
    multiplicity : ndarray of shape (n_samples,) or None, default=None
        The number of training rows each row stands for, where identical rows
        (same codes, same class) were merged into one row of summed weight;
        the growth's row counts count them (see :func:`grow_tree`). None: 1
        for every row.

    Returns
    -------
    GrownTree
    """
    codes, y01, weights, rows = _kernel_inputs(codes, y01, weights, rows)
    grown = grow_tree(
        codes,
        y01,
        weights,
        _multiplicity(multiplicity, codes.shape[0]),
        rows,
        bin_mapper.n_bins_,
        _is_categorical(bin_mapper, codes.shape[1]),
        params.monotonic(codes.shape[1]),
        *params.kernel_arguments(),
        new_state(seed),
        MIN_GAIN,
        _tree_growth.COPY_MAX_FEATURES,
    )
    # 7 master arrays, the 10 arrays of the LeafRank rules, the row leaves
    children_left, children_right, n_pos, n_neg, rule_start, rule_stop, gain = grown[:7]
    rules = _rules(bin_mapper, *grown[7:17])
    leaf_of_row = grown[17]
    leaf_rank = np.cumsum(children_left < 0) - 1
    in_sample = leaf_of_row >= 0
    leaf_rank_of_row = np.full(leaf_of_row.shape[0], -1, dtype=np.int32)
    leaf_rank_of_row[in_sample] = leaf_rank[leaf_of_row[in_sample]]
    return GrownTree(
        children_left,
        children_right,
        n_pos,
        n_neg,
        rule_start,
        rule_stop,
        gain,
        rules,
        leaf_rank_of_row,
    )


def _is_categorical(bin_mapper, n_features):
    flags = getattr(bin_mapper, "is_categorical_", None)
    if flags is None:
        return np.zeros(n_features, dtype=np.uint8)
    return np.ascontiguousarray(flags, dtype=np.uint8)


def _rules(
    bin_mapper,
    feature,
    threshold_bin,
    missing_left,
    child_left,
    child_right,
    left_leaf,
    improvement,
    missing_seen,
    category,
    category_sets,
):
    threshold = np.zeros(feature.shape[0])
    numeric = (child_left >= 0) & (category < 0)
    threshold[numeric] = bin_mapper.threshold_table_[
        feature[numeric], threshold_bin[numeric]
    ]
    return SplitRules(
        feature,
        threshold,
        missing_left.astype(bool),
        child_left,
        child_right,
        left_leaf.astype(bool),
        improvement,
        threshold_bin=threshold_bin,
        missing_seen=missing_seen.astype(bool),
        category=category,
        category_sets=category_sets,
    )


def fit_rule(codes, y01, weights, rows, bin_mapper, params, seed, features=None):
    """Fit one LeafRank rule on the rows ``rows`` of binned data.

    Parameters
    ----------
    codes, y01, weights, rows, bin_mapper, seed :
        As in :func:`grow_ranking_tree`.
    params : GrowthParams
        Only the rule's parameters are used.
    features : ndarray of int or None, default=None
        The features the rule may use (None: all).

    Returns
    -------
    rules : SplitRules
        The rule's inner nodes (one rule, children local to its root).
    gain : float
        Local TPR - FPR of its left side on ``rows``.
    """
    codes, y01, weights, rows = _kernel_inputs(codes, y01, weights, rows)
    if features is None:
        features = np.arange(codes.shape[1], dtype=np.int64)
    (
        _,
        _,
        _,
        rule_max_depth,
        min_leaf_count,
        min_leaf_fraction,
        rule_max_features,
        criterion,
        splitter,
        max_fit_rows,
    ) = params.kernel_arguments()
    n_fit = rows.shape[0] if max_fit_rows <= 0 else min(rows.shape[0], max_fit_rows)
    min_leaf = (
        int(np.ceil(min_leaf_fraction * n_fit))
        if min_leaf_fraction > 0
        else min_leaf_count
    )
    fitted = fit_single_rule(
        codes,
        y01,
        weights,
        _multiplicity(None, codes.shape[0]),
        rows,
        np.asarray(features, dtype=np.int64),
        bin_mapper.n_bins_,
        _is_categorical(bin_mapper, codes.shape[1]),
        params.monotonic(codes.shape[1]),
        rule_max_depth,
        min_leaf,
        rule_max_features,
        criterion,
        splitter,
        new_state(seed),
        max_fit_rows,
    )
    # the 10 arrays of the rule, then its gain
    return _rules(bin_mapper, *fitted[:10]), float(fitted[10])
