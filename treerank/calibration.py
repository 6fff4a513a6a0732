"""Calibration of ranking scores into probabilities, monotone in the score.

:class:`MonotoneCalibration` maps the scores of a bipartite ranker to
``P(Y = 1 | score)`` and gives the matching decision offset
(:func:`decision_offset`); :class:`GradedCalibration` maps the scores of a
ranker of ``K > 2`` ordered grades to ``P(Y >= g_k | score)`` per threshold.
:func:`calibrate_buckets` calibrates the ranked buckets of one tree, and
:func:`midrank_quantiles`, :func:`quantile_calibration` and
:func:`calibrated_probability` calibrate a forest's scores through their
out-of-sample quantiles. Nothing here imports an estimator: the estimators
build on this module.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.isotonic import isotonic_regression

__all__ = [
    "GradedCalibration",
    "MonotoneCalibration",
    "calibrate_buckets",
    "calibrated_probability",
    "decision_offset",
    "midrank_quantiles",
    "quantile_calibration",
]


def calibrate_buckets(pos_counts, neg_counts):
    """Monotone positive rates of ranked buckets, and the classification cut.

    The positive rates of buckets ranked best first need not decrease. Their
    weighted isotonic (non-increasing) regression is the plug-in estimate of
    ``P(Y = 1 | bucket)`` on the concave majorant of the ROC curve (adjacent
    buckets whose order is violated are pooled). It is optimal among monotone
    estimates for every proper scoring rule, so thresholding it at 1/2 gives
    the most accurate classifier that is a threshold on the ranking.

    Parameters
    ----------
    pos_counts, neg_counts : array-like of shape (n_buckets,)
        Weighted class counts of the buckets, best first (positive totals).

    Returns
    -------
    proba : ndarray of shape (n_buckets,)
        Non-increasing estimates of ``P(Y = 1 | bucket)``.
    n_positive : int
        Number of leading buckets with ``proba > 1/2`` (predicted positive).

    Examples
    --------
    >>> from treerank.calibration import calibrate_buckets
    >>> proba, n_positive = calibrate_buckets([3, 1, 2], [1, 3, 2])
    >>> proba, n_positive
    (array([0.75 , 0.375, 0.375]), 1)
    """
    pos = np.asarray(pos_counts, dtype=np.float64)
    neg = np.asarray(neg_counts, dtype=np.float64)
    total = pos + neg
    rate = np.divide(pos, total, out=np.zeros_like(pos), where=total > 0)
    proba = _decreasing_isotonic(rate, np.maximum(total, 1e-300))
    proba = np.clip(proba, 0.0, 1.0)
    return proba, int(np.count_nonzero(proba > 0.5))


def _decreasing_isotonic(values, weights):
    """The weighted non-increasing isotonic regression of ``values``.

    Pool adjacent violators: blocks of consecutive values, each at its
    weighted mean, merged while a block's mean exceeds its predecessor's.
    The same fit as ``sklearn.isotonic.isotonic_regression(values,
    sample_weight=weights, increasing=False)``, without its input checks: a
    forest calibrates the buckets of every tree, a few hundred values each,
    and the checks cost more than the fit.
    """
    means, masses, lengths = [], [], []
    for value, weight in zip(values.tolist(), weights.tolist()):
        mean, mass, length = value, weight, 1
        while means and means[-1] < mean:
            previous_mass = masses.pop()
            total = previous_mass + mass
            mean = (means.pop() * previous_mass + mean * mass) / total
            mass = total
            length += lengths.pop()
        means.append(mean)
        masses.append(mass)
        lengths.append(length)
    return np.repeat(np.array(means, dtype=np.float64), lengths)


def midrank_quantiles(values, reference, reference_weight=None):
    """Weighted mid-rank of each value within a reference sample, in [0, 1].

    The quantile of v is ``P(R < v) + P(R = v) / 2`` for R drawn from the
    reference (weighted): the fraction of the reference ranked below v, ties
    counting one half. Scores of different scales (one tree's leaves, a
    forest's out-of-bag scores, its final scores) become comparable this way.

    Parameters
    ----------
    values : array-like of shape (n,)
    reference : array-like of shape (m,)
    reference_weight : array-like of shape (m,) or None, default=None

    Returns
    -------
    quantiles : ndarray of shape (n,)

    Examples
    --------
    >>> from treerank.calibration import midrank_quantiles
    >>> midrank_quantiles([1, 2, 5], [1, 2, 2, 3])
    array([0.125, 0.5  , 1.   ])
    """
    values = np.asarray(values, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    weight = (
        np.ones(reference.shape[0])
        if reference_weight is None
        else np.asarray(reference_weight, dtype=np.float64)
    )
    levels, inverse = np.unique(reference, return_inverse=True)
    mass = np.bincount(inverse.ravel(), weights=weight, minlength=levels.shape[0])
    cumulative = np.concatenate([[0.0], np.cumsum(mass)])
    total = cumulative[-1]
    left = np.searchsorted(levels, values, side="left")
    right = np.searchsorted(levels, values, side="right")
    return 0.5 * (cumulative[left] + cumulative[right]) / total


def quantile_calibration(quantiles, y01, sample_weight):
    """Monotone map from score quantiles to ``P(Y = 1)``, fitted out of sample.

    The positive rate as a non-decreasing function of the quantile of the
    score (:func:`midrank_quantiles`), fitted by isotonic regression on
    quantiles that were computed out of sample (out-of-bag or out-of-fold
    scores), so that it is not the optimism of the training fit. Each block
    of the isotonic fit is shrunk towards 1/2 by half a pseudo-row of each
    class (Jeffreys' prior): no probability is exactly 0 or 1.

    Parameters
    ----------
    quantiles : array-like of shape (n,)
        Out-of-sample quantiles of the training rows' scores.
    y01 : array-like of shape (n,)
    sample_weight : array-like of shape (n,)

    Returns
    -------
    knots : ndarray of shape (n_blocks,)
        Increasing quantiles (the weighted centres of the isotonic blocks).
    proba : ndarray of shape (n_blocks,)
        Non-decreasing probabilities in (0, 1) of the blocks; a quantile takes
        the probability of the nearest knot (:func:`calibrated_probability`).

    Examples
    --------
    >>> from treerank.calibration import quantile_calibration
    >>> knots, proba = quantile_calibration([0.1, 0.3, 0.6, 0.9], [0, 0, 1, 1], [1] * 4)
    >>> knots, proba
    (array([0.2 , 0.75]), array([0.16666667, 0.83333333]))
    """
    q = np.asarray(quantiles, dtype=np.float64)
    y = np.asarray(y01, dtype=np.float64)
    w = np.asarray(sample_weight, dtype=np.float64)
    keep = np.isfinite(q) & (w > 0)
    q, y, w = q[keep], y[keep], w[keep]
    if q.shape[0] == 0:
        raise ValueError("No row has an out-of-sample score to calibrate on.")
    # rows of equal quantile (one leaf) are pooled first: blocks never split them
    levels, inverse = np.unique(q, return_inverse=True)
    w_level = np.bincount(inverse, weights=w)
    p_level = np.bincount(inverse, weights=w * y)
    fitted = isotonic_regression(p_level / w_level, sample_weight=w_level)
    starts = np.flatnonzero(np.concatenate([[True], np.diff(fitted) != 0]))
    block_weight = np.add.reduceat(w_level, starts)
    block_positive = np.add.reduceat(p_level, starts)
    block_centre = np.add.reduceat(w_level * levels, starts) / block_weight
    prior = float(np.mean(w))  # one pseudo-row, half of each class
    proba = (block_positive + 0.5 * prior) / (block_weight + prior)
    proba = isotonic_regression(proba, sample_weight=block_weight)
    return block_centre, proba


def calibrated_probability(quantiles, knots, proba):
    """Probability of each quantile under :func:`quantile_calibration`.

    A step function: a quantile takes the probability of the nearest knot
    (the midpoints between knots go up).

    Examples
    --------
    >>> from treerank.calibration import calibrated_probability
    >>> calibrated_probability([0.1, 0.5, 0.9], [0.2, 0.75], [0.1, 0.8])
    array([0.1, 0.8, 0.8])
    """
    knots = np.asarray(knots, dtype=np.float64)
    cuts = 0.5 * (knots[1:] + knots[:-1])
    index = np.searchsorted(cuts, np.asarray(quantiles, dtype=np.float64), side="left")
    return np.asarray(proba, dtype=np.float64)[index]


def decision_offset(levels, proba):
    """The decision offset of non-decreasing probabilities of score levels.

    The midpoint between the highest level of probability at most 1/2 and the
    next one (one below the lowest level if every probability exceeds 1/2,
    one above the highest if none does): ``score - offset > 0`` exactly where
    the calibrated probability (the probability of the nearest level,
    midpoints going up) exceeds 1/2.

    Parameters
    ----------
    levels : ndarray of shape (n_levels,)
        Increasing distinct scores.
    proba : ndarray of shape (n_levels,)
        Non-decreasing probabilities, one per level.

    Returns
    -------
    offset : float

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.calibration import decision_offset
    >>> decision_offset(np.array([1.0, 2.0, 3.0]), np.array([0.2, 0.4, 0.9]))
    2.5
    """
    above = np.flatnonzero(proba > 0.5)
    if above.shape[0] == 0:
        return float(levels[-1] + 1.0)
    if above[0] == 0:
        return float(levels[0] - 1.0)
    return float(0.5 * (levels[above[0] - 1] + levels[above[0]]))


class MonotoneCalibration:
    """Isotonic calibration of ranking scores, with the matching decision offset.

    Fitted on training scores and labels, it maps a score to a non-decreasing
    estimate of ``P(Y = 1 | score)`` (a step function: each score takes the
    value of the nearest distinct training score, midpoints going up), and
    gives the offset ``threshold_`` such that ``score - threshold_ > 0``
    exactly when that estimate exceeds 1/2. An estimator whose
    ``decision_function`` is ``score - threshold_``, ``predict_proba`` this
    estimate and ``predict`` the sign is consistent in all three.

    Parameters
    ----------
    scores : array-like of shape (n_samples,)
        Training scores (higher = more likely positive).
    y01 : array-like of shape (n_samples,)
        Labels in {0, 1}.
    sample_weight : array-like of shape (n_samples,)
        Non-negative weights.

    Attributes
    ----------
    levels_ : ndarray
        Distinct training scores, increasing.
    proba_ : ndarray
        Calibrated probability of each level (non-decreasing).
    threshold_ : float
        Decision offset: midpoint between the highest level with probability
        at most 1/2 and the next one (or outside the range of levels).

    Examples
    --------
    >>> from treerank.calibration import MonotoneCalibration
    >>> cal = MonotoneCalibration([1, 2, 3, 4], [0, 0, 1, 1], [1, 1, 1, 1])
    >>> cal.threshold_
    2.5
    >>> cal.predict_proba([0.0, 2.4, 2.6, 9.0])
    array([0., 0., 1., 1.])
    """

    def __init__(self, scores, y01, sample_weight):
        scores = np.asarray(scores, dtype=np.float64)
        y01 = np.asarray(y01, dtype=np.float64)
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        keep = sample_weight > 0
        levels, inverse = np.unique(scores[keep], return_inverse=True)
        weight = np.bincount(inverse, weights=sample_weight[keep])
        positive = np.bincount(inverse, weights=sample_weight[keep] * y01[keep])
        proba = isotonic_regression(positive / weight, sample_weight=weight)
        self.levels_ = levels
        self.proba_ = np.clip(proba, 0.0, 1.0)
        self.threshold_ = decision_offset(levels, self.proba_)
        self._cuts = 0.5 * (levels[1:] + levels[:-1])

    @classmethod
    def from_levels(cls, levels, proba):
        """A calibration from the probability of each distinct score level.

        Parameters
        ----------
        levels : ndarray
            Increasing distinct scores.
        proba : ndarray
            Non-decreasing probabilities, one per level.

        Returns
        -------
        calibration : MonotoneCalibration
            With the decision offset between the last level of probability at
            most 1/2 and the next.
        """
        levels = np.asarray(levels, dtype=np.float64)
        proba = np.asarray(proba, dtype=np.float64)
        return cls.from_arrays(levels, proba, decision_offset(levels, proba))

    @classmethod
    def from_arrays(cls, levels, proba, threshold):
        """Rebuild a fitted calibration from its attributes (for model files).

        Parameters
        ----------
        levels : ndarray
            Increasing distinct scores.
        proba : ndarray
            Non-decreasing probabilities in [0, 1], one per level.
        threshold : float
            Decision offset.

        Returns
        -------
        calibration : MonotoneCalibration
        """
        levels = np.asarray(levels, dtype=np.float64)
        proba = np.asarray(proba, dtype=np.float64)
        if (
            levels.ndim != 1
            or levels.shape != proba.shape
            or levels.shape[0] == 0
            or np.any(np.diff(levels) <= 0)
            or np.any(np.diff(proba) < 0)
            or np.any((proba < 0) | (proba > 1))
            or not np.isfinite(threshold)
        ):
            raise ValueError("inconsistent calibration arrays")
        calibration = cls.__new__(cls)
        calibration.levels_ = levels
        calibration.proba_ = proba
        calibration.threshold_ = float(threshold)
        calibration._cuts = 0.5 * (levels[1:] + levels[:-1])
        return calibration

    def predict_proba(self, scores):
        """Calibrated ``P(Y = 1 | score)`` for new scores.

        Parameters
        ----------
        scores : array-like

        Returns
        -------
        proba : ndarray
        """
        scores = np.asarray(scores, dtype=np.float64)
        index = np.searchsorted(self._cuts, scores, side="left")
        return self.proba_[index]


class GradedCalibration:
    """Monotone ``P(Y >= g_k | score)`` for every threshold, and grade probabilities.

    One weighted isotonic (non-decreasing) regression of the indicator
    "grade >= g_k" on the training scores per threshold ``k = 1..K-1``; the
    ``K - 1`` estimates are then made non-increasing in ``k`` (a cumulative
    minimum: ``P(Y >= g_k)`` cannot grow with ``k``), which keeps them
    non-decreasing in the score. A new score takes the values of the nearest
    distinct training score (midpoints going up), as
    :class:`MonotoneCalibration`.

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
    >>> from treerank.calibration import GradedCalibration
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
