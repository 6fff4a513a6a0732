"""Multipartite (ordinal) ranking: ``K > 2`` ordered grades from bipartite trees.

With grades ``g_0 < g_1 < ... < g_{K-1}`` (the order of the values is the
order of preference), the ranking problem is split into the ``K - 1``
bipartite problems "grade >= g_k" (``k = 1, ..., K - 1``). Under the monotone
likelihood ratio condition, the condition under which an optimal scorer of
the ROC surface exists, a scorer is optimal for the volume under the ROC
surface (VUS) if and only if it is optimal for every one of these bipartite
problems, and the Kendall median of scorers that are consistent for them is
consistent for the VUS (Clémençon, Robbiano and Vayatis, 2013). So:

- a :class:`~treerank.RankingForest` grows each tree on one of the problems,
  the thresholds cycled over the trees (tree ``b`` learns "grade >=
  g_{1 + b mod (K-1)}"), and aggregates all the trees' rankings as usual: the
  Kendall median over the common subpartition of their leaves is the median
  of the ``K - 1`` bipartite rankings the reference recommends;
- a :class:`~treerank.TreeRank` grows one bipartite tree per threshold (with
  its own pruning) and aggregates these ``K - 1`` trees in the same way.

The forest's calibration is one isotonic regression of the aggregated score
per threshold, estimating ``P(Y >= g_k | score)``, made non-increasing in
``k``; ``predict_proba`` gives each grade's probability from them and
``predict`` the median grade, the largest ``g_k`` with ``P(Y >= g_k) > 1/2``
(non-decreasing in the score, and the usual rule for two grades).

The functions here are called by small hooks in ``TreeRank`` and
``RankingForest`` when ``y`` has more than two grades; two grades take the
bipartite code path unchanged.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.base import clone
from sklearn.isotonic import isotonic_regression
from sklearn.utils import check_random_state

from treerank.metrics._vus import volume_under_surface
from treerank.utils._categorical import feature_matrix
from treerank.utils.validation import _preview, check_sample_weight

__all__ = [
    "GradedCalibration",
    "check_graded_training_target",
    "cumulative_targets",
    "fit_graded_forest",
    "fit_graded_treerank",
    "graded_predict",
    "graded_score",
    "is_graded_target",
    "stacked_problem",
    "tree_thresholds",
    "unsupported_for_grades",
]

_MAX_SEED = np.iinfo(np.int32).max


# ----------------------------------------------------------------------
# targets
# ----------------------------------------------------------------------
def _as_label_vector(y):
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    return y


def is_graded_target(y):
    """Whether ``y`` holds ``K > 2`` ordered grades (the multipartite case).

    Two distinct values give False: the bipartite code path handles them (and
    the inputs it refuses, such as NaN or an empty ``y``), unchanged. A
    single value, non-integer numbers with more than two distinct values (a
    continuous target) and more than two non-numeric labels raise a
    ``ValueError`` naming the problem.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels as given to ``fit``.

    Returns
    -------
    graded : bool

    Examples
    --------
    >>> from treerank.ensemble._multipartite import is_graded_target
    >>> is_graded_target([0, 1, 1]), is_graded_target([0, 1, 2])
    (False, True)
    """
    y = _as_label_vector(y)
    if y.ndim != 1 or y.shape[0] == 0:
        return False
    if y.dtype.kind not in "biuf":
        try:
            n_labels = np.unique(y).shape[0]
        except TypeError:  # mixed types: the bipartite path explains
            return False
        if n_labels > 2:
            raise ValueError(
                f"y has {n_labels} non-numeric labels (dtype {y.dtype}), so their "
                "order is unknown. Encode ordered grades as integers in their "
                "order of preference (the highest ranked first), e.g. with "
                "sklearn.preprocessing.OrdinalEncoder(categories=[[lowest, ..., "
                "highest]])."
            )
        return False
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        return False
    grades = np.unique(y)
    if grades.shape[0] == 1:
        raise ValueError(
            f"y has one class (a single grade): {_preview(grades)}. At least two "
            "classes (ordered grades) are needed to learn a ranking."
        )
    if grades.shape[0] == 2:
        return False
    if y.dtype.kind == "f" and np.any(grades != np.round(grades)):
        raise ValueError(
            f"y has {grades.shape[0]} distinct non-integer values (a continuous "
            "target). Ranking learns from two classes or from ordered integer "
            "grades; bin a continuous target first."
        )
    return True


def check_graded_training_target(y, sample_weight, n_samples):
    """Validate ordered grades and weights a multipartite ranker is trained on.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Integer grades (numbers with integer values), at least three distinct
        ones; higher is better.
    sample_weight : array-like of shape (n_samples,) or None
        Non-negative weights.
    n_samples : int
        Number of training rows.

    Returns
    -------
    codes : ndarray of shape (n_samples,), dtype=intp
        Position of every row's grade among ``grades`` (0 for the lowest).
    grades : ndarray of shape (n_grades,)
        The distinct grades, lowest first.
    sample_weight : ndarray of shape (n_samples,), dtype=float64

    Raises
    ------
    ValueError
        If ``y`` is not graded (see :func:`is_graded_target`), or a grade has
        no sample with positive weight.

    Examples
    --------
    >>> from treerank.ensemble._multipartite import check_graded_training_target
    >>> codes, grades, weight = check_graded_training_target([5, 1, 3, 3], None, 4)
    >>> codes, grades
    (array([2, 0, 1, 1]), array([1, 3, 5]))
    """
    y = _as_label_vector(y)
    if not is_graded_target(y):
        raise ValueError("y must hold more than two ordered grades.")
    grades = np.unique(y)
    codes = np.searchsorted(grades, y).astype(np.intp)
    sample_weight = check_sample_weight(sample_weight, n_samples)
    if not np.any(sample_weight > 0):
        raise ValueError("sample_weight is all zero: no sample to learn from.")
    mass = np.bincount(codes, weights=sample_weight, minlength=grades.shape[0])
    if np.any(mass <= 0):
        raise ValueError(
            f"y has no sample with positive weight in the grades "
            f"{_preview(grades[mass <= 0])}: every grade needs one to be ranked."
        )
    return codes, grades, sample_weight


def cumulative_targets(codes, n_grades):
    """The bipartite labels of the problems "grade >= g_k", ``k = 1..K-1``.

    Parameters
    ----------
    codes : ndarray of int of shape (n_samples,)
        Grade codes ``0..K-1``.
    n_grades : int
        ``K``.

    Returns
    -------
    targets : list of K - 1 ndarrays of int of shape (n_samples,)
        ``targets[k - 1]`` is 1 where ``codes >= k``.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.ensemble._multipartite import cumulative_targets
    >>> cumulative_targets(np.array([0, 2, 1]), 3)
    [array([0, 1, 1]), array([0, 1, 0])]
    """
    return [(codes >= k).astype(int) for k in range(1, n_grades)]


def tree_thresholds(n_trees, n_grades):
    """The threshold of every tree: cycled over ``1..K-1``.

    Tree ``b`` learns "grade >= g_k" with ``k = 1 + b mod (K - 1)``, so every
    threshold has ``n_trees / (K - 1)`` trees (up to one) and a forest of
    ``K - 1`` trees has one tree per threshold.

    Parameters
    ----------
    n_trees : int
    n_grades : int
        ``K >= 2``.

    Returns
    -------
    thresholds : ndarray of int of shape (n_trees,)
        Grade codes in ``1..K-1``.

    Examples
    --------
    >>> from treerank.ensemble._multipartite import tree_thresholds
    >>> tree_thresholds(5, 3)
    array([1, 2, 1, 2, 1])
    """
    return np.arange(n_trees, dtype=np.intp) % (n_grades - 1) + 1


# ----------------------------------------------------------------------
# calibration
# ----------------------------------------------------------------------
class GradedCalibration:
    """Monotone ``P(Y >= g_k | score)`` for every threshold, and grade probabilities.

    One weighted isotonic (non-decreasing) regression of the indicator
    "grade >= g_k" on the training scores per threshold ``k = 1..K-1``; the
    ``K - 1`` estimates are then made non-increasing in ``k`` (a cumulative
    minimum: ``P(Y >= g_k)`` cannot grow with ``k``), which keeps them
    non-decreasing in the score. A new score takes the values of the nearest
    distinct training score (midpoints going up), as
    :class:`~treerank.base.MonotoneCalibration`.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Training scores (higher = higher grade).
    codes : array-like of int of shape (n_samples,)
        Grade codes ``0..K-1``.
    sample_weight : array-like of shape (n_samples,)
        Non-negative weights.
    n_grades : int
        ``K``.

    Attributes
    ----------
    levels_ : ndarray of shape (n_levels,)
        Distinct training scores, increasing.
    proba_ : ndarray of shape (n_grades - 1, n_levels)
        ``proba_[k - 1, j]``: estimate of ``P(Y >= g_k | score = levels_[j])``.
    threshold_ : float
        Decision offset, 0: the scores of a multipartite ranker are not
        shifted (:meth:`predict_codes` compares them with ``K - 1`` levels).

    Examples
    --------
    >>> from treerank.ensemble._multipartite import GradedCalibration
    >>> cal = GradedCalibration([1, 2, 3, 4], [0, 1, 1, 2], [1, 1, 1, 1], 3)
    >>> cal.proba_
    array([[0., 1., 1., 1.],
           [0., 0., 0., 1.]])
    >>> cal.predict_proba([2.2])
    array([[0., 1., 0.]])
    >>> cal.predict_codes([0.0, 2.2, 9.0])
    array([0, 1, 2])
    """

    def __init__(self, scores, codes, sample_weight, n_grades):
        scores = np.asarray(scores, dtype=np.float64)
        codes = np.asarray(codes)
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        keep = sample_weight > 0
        levels, inverse = np.unique(scores[keep], return_inverse=True)
        weight = np.bincount(inverse, weights=sample_weight[keep])
        proba = np.empty((n_grades - 1, levels.shape[0]))
        for k in range(1, n_grades):
            above = np.bincount(
                inverse, weights=sample_weight[keep] * (codes[keep] >= k)
            )
            proba[k - 1] = isotonic_regression(above / weight, sample_weight=weight)
        proba = np.minimum.accumulate(np.clip(proba, 0.0, 1.0), axis=0)
        self._set(levels, proba)

    def _set(self, levels, proba):
        self.levels_ = levels
        self.proba_ = proba
        self.threshold_ = 0.0
        self._cuts = 0.5 * (levels[1:] + levels[:-1])

    @classmethod
    def from_arrays(cls, levels, proba):
        """Rebuild a fitted calibration from its attributes (for model files).

        Parameters
        ----------
        levels : ndarray of shape (n_levels,)
            Increasing distinct scores.
        proba : ndarray of shape (n_grades - 1, n_levels)
            Probabilities in [0, 1], non-decreasing along each row and
            non-increasing down each column.

        Returns
        -------
        calibration : GradedCalibration
        """
        levels = np.asarray(levels, dtype=np.float64)
        proba = np.asarray(proba, dtype=np.float64)
        if (
            levels.ndim != 1
            or proba.ndim != 2
            or proba.shape[0] < 2
            or proba.shape[1] != levels.shape[0]
            or levels.shape[0] == 0
            or not np.all(np.isfinite(levels))
            or np.any(np.diff(levels) <= 0)
            or np.any(np.diff(proba, axis=1) < 0)
            or np.any(np.diff(proba, axis=0) > 0)
            or np.any(~((proba >= 0) & (proba <= 1)))
        ):
            raise ValueError("inconsistent graded calibration arrays")
        calibration = cls.__new__(cls)
        calibration._set(levels, proba)
        return calibration

    def cumulative_proba(self, scores):
        """``P(Y >= g_k | score)`` for ``k = 1..K-1``, shape (n_samples, K - 1).

        Parameters
        ----------
        scores : array-like of shape (n_samples,)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_grades - 1)
        """
        scores = np.asarray(scores, dtype=np.float64)
        index = np.searchsorted(self._cuts, scores, side="left")
        return self.proba_[:, index].T

    def predict_proba(self, scores):
        """Probability of every grade, lowest first, shape (n_samples, K).

        Parameters
        ----------
        scores : array-like of shape (n_samples,)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_grades)
            Rows sum to one.
        """
        above = self.cumulative_proba(scores)
        ones = np.ones((above.shape[0], 1))
        zeros = np.zeros((above.shape[0], 1))
        cumulative = np.hstack([ones, above, zeros])
        return cumulative[:, :-1] - cumulative[:, 1:]

    def predict_codes(self, scores):
        """Median grade code: the number of thresholds with ``P(Y >= g_k) > 1/2``.

        Parameters
        ----------
        scores : array-like of shape (n_samples,)

        Returns
        -------
        codes : ndarray of int of shape (n_samples,)
        """
        return np.count_nonzero(self.cumulative_proba(scores) > 0.5, axis=1)


# ----------------------------------------------------------------------
# fitting
# ----------------------------------------------------------------------
def _aggregate_graded(forest, X, leaf_ranks, levels, codes, grades, weight, seed):
    """Aggregate trees grown on graded data (already in ``forest``), calibrate.

    The aggregation is the forest's own (median, mean or Borda), on the
    trees' leaf ranks of the training rows. ``levels`` are the trees'
    threshold codes (None for stacked trees).
    """
    forest.classes_ = grades
    for tree in forest.estimators_:
        tree.classes_ = np.array([0, 1])
    if levels is not None:
        forest.tree_thresholds_ = grades[levels]
    _select_graded_leaf_scores(
        forest, leaf_ranks, codes, grades, weight, stacked=levels is None
    )
    forest._timed_aggregation(leaf_ranks, weight, seed, X)
    raw = forest._raw_scores(leaf_ranks)
    forest._calibration = GradedCalibration(raw, codes, weight, grades.shape[0])
    return forest


def _select_graded_leaf_scores(forest, leaf_ranks, codes, grades, weight, stacked):
    """The forest's leaf scores chosen, and its out-of-bag scores, by their VUS."""

    def oob_vus(scores, scored):
        if np.unique(codes[scored]).shape[0] != grades.shape[0]:
            return np.nan
        return volume_under_surface(
            codes[scored], scores[scored], sample_weight=weight[scored]
        )

    # a stacked row of the trees weighs 1 / (K - 1) of its training row
    forest._select_leaf_scores(
        leaf_ranks,
        weight,
        oob_vus,
        row_weight=grades.shape[0] - 1.0 if stacked else 1.0,
    )


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
    rng = check_random_state(forest.random_state)
    if forest.multipartite == "stacked":
        leaf_ranks, aggregation_seed = _grow_stacked_trees(
            forest, X, codes, grades.shape[0], sample_weight, rng
        )
        return _aggregate_graded(
            forest, X, leaf_ranks, None, codes, grades, sample_weight, aggregation_seed
        )
    levels = tree_thresholds(forest.n_estimators, grades.shape[0])
    targets = cumulative_targets(codes, grades.shape[0])
    leaf_ranks, aggregation_seed = forest._grow_trees(
        X, targets, levels - 1, sample_weight, rng
    )
    return _aggregate_graded(
        forest, X, leaf_ranks, levels, codes, grades, sample_weight, aggregation_seed
    )


def stacked_problem(codes, n_grades, sample_weight):
    """The bipartite problem that stacks every threshold "grade >= g_k".

    Every threshold k pairs the rows of grade >= k (positives) with the rows
    below (negatives); summed over k, a pair of grades ``c > c'`` counts
    ``c - c'`` times. Stacking gives each row of grade code ``c`` a positive
    copy of weight ``c`` and a negative copy of weight ``K - 1 - c`` (rows of
    the top grade have no negative copy, rows of the lowest no positive one),
    so that every row keeps a total weight ``K - 1``; the likelihood ratio of
    the stacked classes is increasing in the expected grade ``E[c | x]``,
    which orders like the optimal scorer of the VUS under the monotone
    likelihood ratio condition.

    Parameters
    ----------
    codes : ndarray of int of shape (n_samples,)
        Grade codes ``0..K-1``.
    n_grades : int
        ``K``.
    sample_weight : ndarray of shape (n_samples,)

    Returns
    -------
    rows : ndarray of int of shape (n_stacked,)
        The training row of every stacked row: the positive copies first.
    y01 : ndarray of uint8 of shape (n_stacked,)
    weight : ndarray of float64 of shape (n_stacked,)

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.ensemble._multipartite import stacked_problem
    >>> rows, y01, weight = stacked_problem(np.array([0, 1, 2]), 3, np.ones(3))
    >>> rows, y01, weight
    (array([1, 2, 0, 1]), array([1, 1, 0, 0], dtype=uint8), array([1., 2., 2., 1.]))
    """
    upper = np.flatnonzero(codes >= 1)
    lower = np.flatnonzero(codes <= n_grades - 2)
    rows = np.concatenate([upper, lower])
    y01 = np.concatenate(
        [np.ones(upper.shape[0], np.uint8), np.zeros(lower.shape[0], np.uint8)]
    )
    weight = np.concatenate(
        [
            codes[upper] * sample_weight[upper],
            (n_grades - 1 - codes[lower]) * sample_weight[lower],
        ]
    ).astype(np.float64)
    return rows, y01, weight


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


def fit_graded_treerank(tree, X, y, sample_weight):
    """Fit a :class:`~treerank.TreeRank` on ``K > 2`` ordered grades.

    One bipartite TreeRank per threshold "grade >= g_k" (``k = 1..K-1``),
    each a clone of ``tree`` (same parameters, pruning included) with its own
    seed, fitted on all the data; their rankings are aggregated by the Kendall
    median over the common subpartition of their leaves, exactly as in a
    :class:`~treerank.RankingForest` of these ``K - 1`` trees.

    Parameters
    ----------
    tree : TreeRank
        Its parameters are validated; it is fitted in place.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Ordered integer grades, ``K > 2`` distinct values.
    sample_weight : array-like of shape (n_samples,) or None

    Returns
    -------
    tree : TreeRank
        Fitted; ``classes_`` holds the grades, ``estimators_`` the ``K - 1``
        bipartite trees and ``tree_thresholds_`` their grades ``g_k``.
    """
    from treerank.ensemble._forest import RankingForest

    # a sparse X is refused by the members' fit when the splitter cannot read it
    X_checked, y = feature_matrix(tree, X, y, reset=True, accept_sparse=True)
    codes, grades, sample_weight = check_graded_training_target(
        y, sample_weight, X_checked.shape[0]
    )
    n_grades = grades.shape[0]
    rng = check_random_state(tree.random_state)
    seeds = rng.randint(_MAX_SEED, size=n_grades - 1)
    aggregation_seed = int(rng.randint(_MAX_SEED))
    levels = np.arange(1, n_grades)
    trees, columns = [], []
    for target, seed in zip(cumulative_targets(codes, n_grades), seeds):
        member = clone(tree).set_params(random_state=int(seed))
        member.fit(X, target, sample_weight=sample_weight)
        trees.append(member)
        columns.append(member.tree_.apply_rank(X_checked).astype(np.int32))
    # a forest whose parameters describe its trees (model files check them)
    leafrank = tree._leafrank_template()
    consensus = RankingForest(
        n_estimators=n_grades - 1,
        bootstrap=False,
        max_features=getattr(leafrank, "max_features", None),
        max_features_node=tree.max_features_node,
        max_depth=tree.max_depth,
        min_samples_split=tree.min_samples_split,
        leafrank=leafrank,
        ccp_alpha=tree.ccp_alpha,
        leaf_scores="rank",  # the trees' own rankings: a median of TreeRanks
        aggregation="median",
        multipartite="thresholds",
        monotonic_cst=tree.monotonic_cst,
        categorical_features=tree.categorical_features,
        random_state=aggregation_seed,
    )
    consensus.n_features_in_ = X_checked.shape[1]
    consensus._category_encoder = tree._category_encoder
    if hasattr(tree, "feature_names_in_"):
        consensus.feature_names_in_ = tree.feature_names_in_
    consensus.estimators_ = trees
    consensus._build_router()
    consensus.estimators_samples_ = np.ones(
        (n_grades - 1, X_checked.shape[0]), dtype=np.int32
    )
    consensus._n_leaves = np.array([t.tree_.n_leaves for t in trees])
    consensus._monotonic = False
    _aggregate_graded(
        consensus,
        X_checked,
        np.column_stack(columns),
        levels,
        codes,
        grades,
        sample_weight,
        aggregation_seed,
    )
    tree.classes_ = grades
    tree.estimators_ = trees
    tree.tree_thresholds_ = grades[levels]
    tree.consensus_ = consensus
    tree._calibration = consensus._calibration
    return tree


# ----------------------------------------------------------------------
# prediction
# ----------------------------------------------------------------------
def graded_predict(estimator, X):
    """The median grade of every sample under the calibrated probabilities.

    The largest grade ``g_k`` with ``P(Y >= g_k | x) > 1/2`` (the lowest
    grade if there is none): a non-decreasing function of the ranking score,
    which for two grades is the usual "positive when ``P(Y = 1 | x) > 1/2``".

    Parameters
    ----------
    estimator : fitted TreeRank or RankingForest with ``K > 2`` grades
    X : {array-like, sparse matrix} of shape (n_samples, n_features)

    Returns
    -------
    y_pred : ndarray of shape (n_samples,)
    """
    scores = estimator.decision_function(X)
    return estimator.classes_[estimator._calibration.predict_codes(scores)]


def graded_score(estimator, X, y, sample_weight=None):
    """VUS of ``estimator.decision_function(X)`` for the grades of ``y``.

    The grades are those present in ``y`` (two of them give the ROC AUC).

    Parameters
    ----------
    estimator : fitted ranker
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None

    Returns
    -------
    vus : float
    """
    return volume_under_surface(
        y, estimator.decision_function(X), sample_weight=sample_weight
    )


def unsupported_for_grades(estimator, what, error=ValueError):
    """The error of a TreeRank method that has no meaning for ``K > 2`` grades.

    Parameters
    ----------
    estimator : TreeRank
    what : str
        The method or attribute.
    error : type, default=ValueError
        The exception class (AttributeError for a property).

    Returns
    -------
    error : Exception
        To be raised by the caller.
    """
    return error(
        f"{what} is not defined for a TreeRank fitted on "
        f"{estimator.classes_.shape[0]} grades: it is the Kendall median of "
        f"{len(estimator.estimators_)} bipartite trees, one per threshold "
        "'grade >= g' (tree_thresholds_). Use it on one of them, "
        "estimators_[k]."
    )
