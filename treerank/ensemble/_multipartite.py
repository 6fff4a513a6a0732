"""Fitting a RankingForest on ``K > 2`` ordered grades.

The grades are turned into bipartite problems by
:mod:`treerank.utils._graded_target` (the stacked problem, or the labels
"grade >= g_k" of every tree's threshold); the forest grows its trees on them
as it grows bipartite trees; its base class
:class:`~treerank.ensemble.TreeAggregate` then aggregates the trees'
rankings of the training rows as usual, chooses its leaf scores by their
out-of-bag volume under the ROC surface (VUS), and calibrates the aggregated
score per threshold (:func:`~treerank.ensemble._tree_aggregate.aggregate_graded`,
shared with a graded :class:`~treerank.TreeRank`). Under the monotone likelihood
ratio condition, the Kendall median of scorers consistent for the bipartite
problems is consistent for the VUS (Clémençon, Robbiano and Vayatis, 2013).

:meth:`RankingForest.fit <treerank.RankingForest.fit>` calls
:func:`fit_graded_forest` when ``y`` has more than two grades; two grades
take the bipartite code path unchanged. The functions here take the forest as
an argument and never import its class.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import check_random_state

from treerank.base import keep_background
from treerank.ensemble._tree_aggregate import aggregate_graded
from treerank.utils._categorical import feature_matrix
from treerank.utils._graded_target import (
    check_graded_training_target,
    cumulative_targets,
    stacked_problem,
    tree_thresholds,
)

__all__ = ["fit_graded_forest"]


def fit_graded_forest(forest, X, y, sample_weight):
    """Fit a :class:`~treerank.RankingForest` on ``K > 2`` ordered grades.

    Tree ``b`` is grown as the bipartite forest grows its trees (its own
    bootstrap sample, feature randomization and seed), on the stacked problem
    of :func:`stacked_problem` (``multipartite="stacked"``) or on the labels
    "grade >= g_k" of its threshold (:func:`tree_thresholds`,
    ``multipartite="thresholds"``); the trees' rankings of the training rows
    are then aggregated by the forest's ``aggregation``, and the aggregated
    score calibrated per threshold (:class:`GradedCalibration`).

    Parameters
    ----------
    forest : RankingForest
        Its parameters are validated; it is fitted in place.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Ordered integer grades, ``K > 2`` distinct values.
    sample_weight : array-like of shape (n_samples,) or None

    Returns
    -------
    forest : RankingForest
        Fitted; ``classes_`` holds the grades, ``tree_thresholds_`` (with
        ``multipartite="thresholds"``) the grade ``g_k`` of every tree.
    """
    # a sparse X is refused by _grow_trees when the splitter cannot read it
    X, y = feature_matrix(forest, X, y, reset=True, accept_sparse=True)
    codes, grades, sample_weight = check_graded_training_target(
        y, sample_weight, X.shape[0]
    )
    keep_background(forest, X, sample_weight)
    rng = check_random_state(forest.random_state)
    if forest.multipartite == "stacked":
        leaf_ranks, aggregation_seed = _grow_stacked_trees(
            forest, X, codes, grades.shape[0], sample_weight, rng
        )
        return aggregate_graded(
            forest, X, leaf_ranks, None, codes, grades, sample_weight, aggregation_seed
        )
    levels = tree_thresholds(forest.n_estimators, grades.shape[0])
    targets = cumulative_targets(codes, grades.shape[0])
    leaf_ranks, aggregation_seed = forest._grow_trees(
        X, targets, levels - 1, sample_weight, rng
    )
    return aggregate_graded(
        forest, X, leaf_ranks, levels, codes, grades, sample_weight, aggregation_seed
    )


def _grow_stacked_trees(forest, X, codes, n_grades, sample_weight, rng):
    """Grow every tree of ``forest`` on the stacked problem.

    Returns the leaf ranks of the training rows (a row's copies share their
    leaves: they have the same features) and the aggregation seed; the trees'
    samples are counted on the training rows (a row drawn through either
    copy is in the tree's sample).
    """
    rows, y01, weight = stacked_problem(codes, n_grades, sample_weight)
    leaf_ranks, aggregation_seed = forest._grow_trees(
        X[rows],
        y01[None, :],
        np.zeros(forest.n_estimators, dtype=np.intp),
        weight,
        rng,
    )
    n_samples = codes.shape[0]
    n_upper = int(y01.sum())
    parts = ((n_upper, rows.shape[0]), (0, n_upper))  # each lists a row once
    copy = np.empty(n_samples, dtype=np.intp)  # a stacked copy of every row
    counts = np.zeros((forest.n_estimators, n_samples), dtype=np.int32)
    for start, stop in parts:
        copy[rows[start:stop]] = np.arange(start, stop)
        counts[:, rows[start:stop]] += forest.estimators_samples_[:, start:stop]
    forest.estimators_samples_ = counts
    return np.ascontiguousarray(leaf_ranks[copy]), aggregation_seed
