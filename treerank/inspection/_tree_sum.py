"""A fitted ranker as a constant plus a sum of trees' leaf values.

Every explanation algorithm of :mod:`treerank.inspection` works on one
representation of a model: decision graphs (the trees as compiled for
prediction, :meth:`~treerank.tree.RankingTreeStructure.graph`) whose leaves
carry values, and a constant, such that

    decision_function(x) = constant + sum_b values_b[leaf rank of x in tree b].

It is exact for a :class:`~treerank.TreeRank` on two classes (one tree, leaf
rank r scoring ``n_positive_leaves_ - r - 1/2``) and for a
:class:`~treerank.RankingForest` aggregated by ``"mean"`` (the mean of the
trees' leaf scores ``leaf_values_``, by rank or by smoothed positive rate: each
tree's values divided by the number of trees) or ``"borda"`` (the mean of the
trees' leaf mid-ranks); the Kendall median (``aggregation="median"``, the
forest's default, and a TreeRank on ``K > 2`` grades) is not a sum over trees.

The per-tree leaf values are read from the model in one function,
:func:`tree_leaf_values`, and the algorithms take any values; the tests
compare every explanation with the model's own ``decision_function``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.validation import check_is_fitted

from treerank._engine import Router
from treerank.ensemble import TreeAggregate

__all__ = [
    "TreeSum",
    "check_explainable",
    "encoded_decision_function",
    "engine_trees",
    "explained_model",
    "is_additive",
    "mean_proxy_leaf_values",
    "model_router",
    "tree_leaf_values",
    "tree_sum",
]


def _is_forest(estimator):
    from treerank.ensemble import RankingForest

    return isinstance(estimator, RankingForest)


def _is_tree(estimator):
    from treerank.tree import TreeRank

    return isinstance(estimator, TreeRank)


def explained_model(estimator):
    """The model whose score is explained: a graded TreeRank's median forest.

    A :class:`~treerank.TreeRank` fitted on ``K > 2`` grades scores with the
    Kendall median of its ``K - 1`` threshold trees (``consensus_``, a
    :class:`~treerank.ensemble.TreeAggregate`, the fitted form of a
    :class:`~treerank.RankingForest`); every other model explains itself.
    """
    if _is_tree(estimator) and estimator.classes_.shape[0] > 2:
        return estimator.consensus_
    return estimator


def check_explainable(estimator):
    """Refuse what is not a fitted TreeRank or RankingForest.

    Parameters
    ----------
    estimator : object

    Returns
    -------
    estimator : TreeRank or RankingForest
        Checked to be fitted.

    Raises
    ------
    TypeError
        If ``estimator`` is neither (a pipeline, another library's model).
    """
    if not (_is_tree(estimator) or _is_forest(estimator)):
        raise TypeError(
            "estimator must be a fitted treerank.TreeRank or treerank.RankingForest; "
            f"got {type(estimator).__name__}. To explain a pipeline, explain its "
            "last step on the transformed features."
        )
    check_is_fitted(estimator)
    return estimator


def _trees(model):
    """The bipartite trees of an explained model (one for a TreeRank)."""
    return model.estimators_ if isinstance(model, TreeAggregate) else [model]


def engine_trees(estimator):
    """Whether every tree of the explained model was grown by the engine.

    Trees of another splitter (:class:`~treerank.LinearLeafRank`,
    :class:`~treerank.MixedLeafRank`, :class:`~treerank.ClassifierLeafRank`)
    have rules that are not axis-aligned splits and compile to no decision
    graph.
    """
    model = explained_model(estimator)
    return all(tree.tree_.rules is not None for tree in _trees(model))


def model_router(estimator):
    """The decision graphs of the explained model's trees, or None.

    None when some tree was not grown by the engine (its rules compile to no
    decision graph).
    """
    model = explained_model(estimator)
    if not engine_trees(model):
        return None
    structures = [tree.tree_ for tree in _trees(model)]
    return Router(
        [s.graph() for s in structures], [s.rules.category_sets for s in structures]
    )


def tree_leaf_values(estimator):
    """Per-tree leaf values of an additive model, and its constant.

    The one place where the values are read from the model: ``values[b][r]``
    is what tree b adds to the score of a point in its leaf of rank r.

    Parameters
    ----------
    estimator : TreeRank or RankingForest
        A TreeRank on two classes, or a forest aggregated by ``"mean"`` or
        ``"borda"``.

    Returns
    -------
    values : list of ndarray of float64
        One array per tree, indexed by leaf rank.
    constant : float
        ``decision_function(x) = constant + sum_b values[b][rank_b(x)]``.

    Raises
    ------
    ValueError
        If the model's score is not a sum over its trees.
    """
    model = explained_model(estimator)
    if _is_tree(model):
        k = model.n_positive_leaves_
        ranks = np.arange(model.tree_.n_leaves, dtype=np.float64)
        return [k - ranks - 0.5], 0.0
    n_trees = len(model.estimators_)
    constant = -float(model._calibration.threshold_)
    if model.aggregation == "mean":
        # the forest's own leaf scores: ranks (K - r) / K or smoothed rates
        values = [np.asarray(v, np.float64) / n_trees for v in model.leaf_values_]
        return values, constant
    if model.aggregation == "borda":
        return [np.asarray(m, np.float64) / n_trees for m in model._midranks], constant
    raise ValueError(
        f"the score of a forest aggregated by {model.aggregation!r} is not a sum "
        "over its trees."
    )


def mean_proxy_leaf_values(estimator):
    """The leaf values of the mean of a median forest's trees, and 0.

    The Kendall median (a :class:`~treerank.RankingForest` aggregated by
    ``"median"``, or a TreeRank on ``K > 2`` grades) is not a sum over trees;
    its proxy is the same trees aggregated by the mean of their leaf scores
    (``leaf_values_``), the score the median breaks its ties with. Its score
    is ``sum_b values[b][rank_b(x)]``, the mean leaf score, in [0, 1].

    Parameters
    ----------
    estimator : TreeRank or RankingForest
        A model whose score is the Kendall median of its trees.

    Returns
    -------
    values : list of ndarray of float64
    constant : float
        0.0.
    """
    model = explained_model(estimator)
    if is_additive(model):
        raise ValueError(
            "the mean proxy stands in for a Kendall median; this model's score is "
            "a sum over its trees: use algorithm='tree'."
        )
    n_trees = len(model.estimators_)
    return [np.asarray(v, np.float64) / n_trees for v in model.leaf_values_], 0.0


def is_additive(estimator):
    """Whether the explained model's score is a constant plus a sum over trees."""
    model = explained_model(estimator)
    if _is_tree(model):
        return True
    return model.aggregation in ("mean", "borda")


class TreeSum:
    """Decision graphs with leaf values, and a constant: an additive score.

    Parameters
    ----------
    graphs : list of tuple
        Each tree's decision graph (:func:`~treerank._engine.compile_graph`).
    category_sets : list of ndarray
        Each tree's category sets.
    values : list of ndarray of float64
        Each tree's leaf values, by leaf rank.
    constant : float
    leaf_masses : list of ndarray or None, default=None
        Each tree's training mass per leaf rank (weighted positives plus
        negatives), for the path-dependent form.

    Attributes
    ----------
    router : Router
        The graphs, concatenated for the compiled kernels.
    values : ndarray of float64
        The leaf values of all trees, tree b's from ``value_offset[b]``.
    value_offset : ndarray of int64 of shape (n_trees,)
    decision_start : ndarray of int64 of shape (n_trees + 1,)
        Tree b's decisions in the router are
        ``decision_start[b]:decision_start[b + 1]``.
    constant : float
    graphs : list of tuple
    leaf_masses : list of ndarray or None

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.inspection._tree_sum import TreeSum
    >>> # one split x[0] <= 1.5: left is leaf 1, right is leaf 0
    >>> graph = (0, np.array([0], np.int32), np.array([1.5]),
    ...          np.array([0], np.uint8), np.array([1], np.uint8),
    ...          np.array([-2], np.int32), np.array([-1], np.int32),
    ...          np.array([-1], np.int32))
    >>> model = TreeSum([graph], [np.zeros((0, 4), np.uint64)],
    ...                 [np.array([1.0, 0.0])], constant=0.5)
    >>> model.scores(np.array([[0.0], [3.0]]))
    array([0.5, 1.5])
    """

    def __init__(self, graphs, category_sets, values, constant, leaf_masses=None):
        self.graphs = list(graphs)
        self.router = Router(self.graphs, list(category_sets))
        sizes = np.array([v.shape[0] for v in values], dtype=np.int64)
        self.value_offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(
            np.int64
        )
        self.values = np.ascontiguousarray(np.concatenate(values), dtype=np.float64)
        n_decisions = [graph[1].shape[0] for graph in self.graphs]
        self.decision_start = np.concatenate([[0], np.cumsum(n_decisions)]).astype(
            np.int64
        )
        self.constant = float(constant)
        self.leaf_masses = leaf_masses

    @property
    def n_trees(self):
        """Number of trees."""
        return self.router.n_trees

    def leaf_values(self, X):
        """Value of each row's leaf in each tree, shape (n_samples, n_trees)."""
        ranks = self.router.leaf_ranks(X)
        return self.values[self.value_offset[None, :] + ranks]

    def scores(self, X):
        """The model's score of each row (the constant plus its leaf values).

        The trees are added in order, as the forest adds its trees.
        """
        leaf_values = self.leaf_values(X)
        total = np.zeros(leaf_values.shape[0])
        for b in range(leaf_values.shape[1]):
            total += leaf_values[:, b]
        return self.constant + total


def tree_sum(estimator, *, proxy=False, leaf_map=None):
    """The :class:`TreeSum` of an additive model grown by the engine.

    Parameters
    ----------
    estimator : TreeRank or RankingForest
        Fitted, with engine trees; additive (see :func:`tree_leaf_values`),
        or with ``proxy=True`` a Kendall median.
    proxy : bool, default=False
        Sum the median's trees as their mean does
        (:func:`mean_proxy_leaf_values`).
    leaf_map : callable or None, default=None
        For a single tree (a TreeRank on two classes): a function applied to
        its leaf scores, so that the sum is ``leaf_map(decision_function)``
        (a function of the leaf is a sum over one tree).

    Returns
    -------
    TreeSum
    """
    model = explained_model(estimator)
    trees = _trees(model)
    if proxy:
        values, constant = mean_proxy_leaf_values(model)
    else:
        values, constant = tree_leaf_values(model)
    if leaf_map is not None:
        if len(values) != 1:
            raise ValueError("leaf_map applies to a model of a single tree.")
        values, constant = [np.asarray(leaf_map(values[0] + constant))], 0.0
    structures = [tree.tree_ for tree in trees]
    masses = [
        (s.n_pos[s.leaves] + s.n_neg[s.leaves]).astype(np.float64) for s in structures
    ]
    return TreeSum(
        [s.graph() for s in structures],
        [s.rules.category_sets for s in structures],
        values,
        constant,
        leaf_masses=masses,
    )


def encoded_decision_function(estimator, X):
    """``decision_function`` of rows already validated by the estimator.

    ``X`` is the matrix the estimator's trees read (category codes in the
    categorical columns): what its ``_validate_X_predict`` returns. Hybrid
    points are built in that space, so they are scored without a second
    encoding.

    Parameters
    ----------
    estimator : TreeRank or RankingForest
    X : ndarray or sparse matrix of shape (n_samples, n_features)

    Returns
    -------
    scores : ndarray of shape (n_samples,)
    """
    model = explained_model(estimator)
    if _is_tree(model):
        return model.n_positive_leaves_ - model.tree_.apply_rank(X) - 0.5
    raw = model._raw_scores(model._leaf_ranks(X))
    return raw - model._calibration.threshold_
