"""One readable scale for the scores of every ranker: the calibrated score.

``decision_function`` ranks, and its units are the model's own (a leaf rank
for a TreeRank, minus twice a position in the consensus order for a median
forest, a mean leaf score for a mean forest): they cannot be read, nor
compared between models. Every ranker also fits a calibration, a monotone
map from its score to ``P(Y = 1 | score)`` (the expected grade for ``K > 2``
grades): a step function, whose steps tie rows that the ranking tells apart.
The *calibrated score* reads that calibration as a continuous, strictly
increasing function of ``decision_function``, so that it keeps the ranking
and reads as a positive rate:

- each step of the calibration (consecutive training scores of the same
  probability) is a knot at the middle of its scores, with the step's
  probability; between knots the calibrated score is linear;
- below the first knot it decreases linearly, down to the lowest training
  score, by half the gap to the next step's probability (at most half the
  distance to 0); above the last knot it increases in the same way (towards
  1); a step at a bound (a probability of exactly 0 or 1, as an in-sample
  calibration can give) has its knot at its outer end instead; a calibration
  of one step spreads by a tenth of the distance to the nearest bound.
  Scores beyond the training range take the value at its end.

So two rows ranked apart by the model (within the training range) are
ranked apart by their calibrated scores, in the same order, and a row's
calibrated score is within a step of its calibrated probability
(``predict_proba``). The model file keeps the first and last training score
of every step, so a loaded model gives the same calibrated scores.

:func:`proxy_map` puts the mean proxy of a Kendall median on the median's
scale: the proxy score of a row is sent to the median's score of the same
quantile of the training distribution (the cells of the common
subpartition, weighted by their training mass).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = [
    "SCALES",
    "ScoreScale",
    "calibrated_score",
    "proxy_map",
    "scale_knots",
    "score_scale",
]

SCALES = ("calibrated", "decision")
"""The scales of an explanation: the calibrated score, or ``decision_function``."""


def _steps(levels, values):
    """First index, last index and value of each run of equal ``values``."""
    change = np.flatnonzero(values[1:] != values[:-1])
    starts = np.concatenate([[0], change + 1])
    ends = np.concatenate([change, [values.shape[0] - 1]])
    return starts, ends, values[starts]


def scale_knots(levels, values, lower=0.0, upper=1.0):
    """The knots of the calibrated score: a strictly increasing polyline.

    Parameters
    ----------
    levels : ndarray of shape (n_levels,)
        Increasing training scores (``decision_function`` units).
    values : ndarray of shape (n_levels,)
        Their calibrated values, non-decreasing (a step function).
    lower, upper : float, default=0.0, 1.0
        Bounds of the values (0 and 1 for a probability; the lowest and
        highest grades for an expected grade).

    Returns
    -------
    x, y : ndarray
        Knots, both strictly increasing (a step at a bound, a probability of
        exactly 0 or 1, has its knot at its outer end rather than its middle).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.inspection._scale import scale_knots
    >>> x, y = scale_knots(np.array([0.0, 1.0, 2.0, 3.0]),
    ...                    np.array([0.2, 0.2, 0.6, 0.6]))
    >>> x.tolist(), y.tolist()
    ([0.0, 0.5, 2.5, 3.0], [0.1, 0.2, 0.6, 0.8])
    """
    levels = np.asarray(levels, dtype=np.float64)
    values = np.asarray(values, dtype=np.float64)
    starts, ends, step_values = _steps(levels, values)
    centres = 0.5 * (levels[starts] + levels[ends])
    if step_values.shape[0] == 1:
        spread = 0.1 * min(step_values[0] - lower, upper - step_values[0])
        below = above = max(spread, 0.0)
    else:
        below = 0.5 * min(step_values[0] - lower, step_values[1] - step_values[0])
        above = 0.5 * min(upper - step_values[-1], step_values[-1] - step_values[-2])
    x, y = list(centres), list(step_values)
    if levels[0] < centres[0]:
        if below > 0:
            x.insert(0, levels[0])
            y.insert(0, step_values[0] - below)
        elif len(x) > 1:  # a step at the bound: it starts at its lowest score
            x[0] = levels[0]
    if levels[-1] > centres[-1]:
        if above > 0:
            x.append(levels[-1])
            y.append(step_values[-1] + above)
        elif len(x) > 1:
            x[-1] = levels[-1]
    return np.asarray(x), np.asarray(y)


class ScoreScale:
    """A monotone map from ``decision_function`` to the reported score.

    Parameters
    ----------
    x, y : ndarray or None
        Knots of a polyline (:func:`scale_knots`); None for the identity
        (``decision_function`` itself).
    name : str
        What the reported score is, for messages and axis labels.

    Attributes
    ----------
    name : str
    is_identity : bool

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.inspection._scale import ScoreScale
    >>> scale = ScoreScale(np.array([0.0, 1.0]), np.array([0.2, 0.6]), "rate")
    >>> scale(np.array([-1.0, 0.5, 2.0]))
    array([0.2, 0.4, 0.6])
    """

    def __init__(self, x, y, name):
        self.x = x
        self.y = y
        self.name = name

    @property
    def is_identity(self):
        return self.x is None

    def __call__(self, scores):
        scores = np.asarray(scores, dtype=np.float64)
        if self.x is None:
            return scores
        return np.interp(scores, self.x, self.y)


def _final_step(estimator):
    """The ranker of a fitted pipeline (its last step), or the estimator."""
    steps = getattr(estimator, "steps", None)
    return estimator if steps is None else _final_step(steps[-1][1])


def score_scale(estimator, scale="calibrated"):
    """The :class:`ScoreScale` of a fitted ranker (or a pipeline ending in one).

    Parameters
    ----------
    estimator : TreeRank, RankingForest or Pipeline
    scale : {"calibrated", "decision"}, default="calibrated"
        "decision": the identity (``decision_function`` itself).

    Returns
    -------
    ScoreScale
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}; got {scale!r}.")
    if scale == "decision":
        return ScoreScale(None, None, "decision_function")
    model = _final_step(estimator)
    from treerank.calibration import GradedCalibration
    from treerank.tree import TreeRank

    grades = np.asarray(model.classes_)
    if isinstance(model, TreeRank) and grades.shape[0] == 2:
        # leaf of rank r scores k - r - 1/2: the lowest score is the last leaf
        ranks = np.arange(model.tree_.n_leaves)[::-1]
        levels = model.n_positive_leaves_ - ranks - 0.5
        x, y = scale_knots(levels, np.asarray(model.leaf_proba_)[ranks])
        return ScoreScale(x, y, "calibrated positive rate")
    calibration = (
        model.consensus_._calibration
        if isinstance(model, TreeRank)
        else model._calibration
    )
    levels = calibration.levels_ - calibration.threshold_
    if isinstance(calibration, GradedCalibration):
        steps = np.diff(grades.astype(np.float64))
        expected = grades[0] + steps @ calibration.proba_
        x, y = scale_knots(levels, expected, float(grades[0]), float(grades[-1]))
        return ScoreScale(x, y, "calibrated expected grade")
    x, y = scale_knots(levels, calibration.proba_)
    return ScoreScale(x, y, "calibrated positive rate")


def calibrated_score(estimator, X):
    """The calibrated score of each row: ``decision_function`` on a readable scale.

    A strictly increasing function of ``decision_function`` (the ranking is
    the same) that reads as the calibrated positive rate, ``P(Y = 1 | x)``,
    or for a ranker of ``K > 2`` grades the calibrated expected grade (see
    the module docstring and :ref:`inspection`). It is the score that
    ``treerank score`` writes and that the explanations add up to.

    Parameters
    ----------
    estimator : TreeRank, RankingForest or Pipeline
        A fitted ranker, or a pipeline ending in one.
    X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)

    Returns
    -------
    scores : ndarray of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from treerank import RankingForest
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.inspection import calibrated_score
    >>> X, y = make_nested_squares(1000, random_state=0)
    >>> forest = RankingForest(n_estimators=10, random_state=0).fit(X, y)
    >>> rate = calibrated_score(forest, X[:5])
    >>> bool(np.all((rate > 0) & (rate < 1)))
    True
    >>> order = np.argsort(forest.decision_function(X), kind="stable")
    >>> bool(np.all(np.diff(calibrated_score(forest, X)[order]) >= 0))
    True
    """
    return score_scale(estimator)(estimator.decision_function(X))


def _midrank_cdf(values, weights):
    """Distinct values and their weighted mid-rank cumulative fractions."""
    levels, inverse = np.unique(values, return_inverse=True)
    mass = np.bincount(inverse.ravel(), weights=weights, minlength=levels.shape[0])
    cumulative = np.cumsum(mass)
    return levels, (cumulative - 0.5 * mass) / cumulative[-1]


def proxy_map(model):
    """Map the mean proxy of a Kendall median onto the median's score.

    The training distribution is that of the median's cells (each with its
    training mass): a proxy score p is sent to the median's
    ``decision_function`` value at the same (mid-rank) quantile.

    Parameters
    ----------
    model : TreeAggregate
        A fitted Kendall median (a median forest, or a graded TreeRank's
        ``consensus_``).

    Returns
    -------
    map : callable
        ``map(proxy_scores) -> decision_function units``, non-decreasing.
    """
    from treerank.ensemble import mean_leaf_values

    cells = np.asarray(model.cells_)
    weights = np.asarray(model.cell_weights_, dtype=np.float64)
    proxy = mean_leaf_values(cells, model.leaf_values_)
    decision = model._raw_scores(cells) - model._calibration.threshold_
    proxy_levels, proxy_cdf = _midrank_cdf(proxy, weights)
    decision_levels, decision_cdf = _midrank_cdf(decision, weights)

    def to_decision(scores):
        quantile = np.interp(np.asarray(scores, np.float64), proxy_levels, proxy_cdf)
        return np.interp(quantile, decision_cdf, decision_levels)

    return to_decision
