"""ROC analysis of bipartite scorers.

The ROC curve and AUC of a scorer are computed by scikit-learn
(:func:`sklearn.metrics.roc_curve`, :func:`sklearn.metrics.roc_auc_score`); this
module adds label validation and what scikit-learn does not offer: the ROC curve
of a piecewise-constant scorer from its bucket (leaf) counts, the raw partial
AUC next to scikit-learn's standardized one, and the true positive rate at a
given false positive rate.

Ties in scores are joined by a diagonal segment, i.e. a tied pair counts one half
in the AUC.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers
import warnings

import numpy as np
from scipy import integrate
from sklearn import metrics as sk_metrics
from sklearn.exceptions import UndefinedMetricWarning

from treerank.utils.validation import (
    check_bipartite_target,
    check_sample_weight,
    check_scores,
)

__all__ = [
    "partial_auc_score",
    "roc_auc_score",
    "roc_curve",
    "roc_curve_from_counts",
    "tpr_at_fpr",
]


def _check_bipartite_inputs(y_true, y_score, sample_weight):
    y01, _ = check_bipartite_target(
        y_true, input_name="y_true", allow_single_class=True
    )
    y_score = check_scores(y_score, y01.shape[0])
    sample_weight = check_sample_weight(sample_weight, y01.shape[0])
    return y01, y_score, sample_weight


def _both_classes(y01, sample_weight):
    pos = sample_weight[y01 == 1].sum()
    neg = sample_weight[y01 == 0].sum()
    return pos > 0 and neg > 0


def _warn_undefined(what):
    warnings.warn(
        f"Only one class (of positive weight) is present in y_true: {what} is not "
        "defined in that case and NaN is returned.",
        UndefinedMetricWarning,
        stacklevel=3,
    )


def roc_curve(y_true, y_score, *, sample_weight=None):
    """Compute the ROC curve of a scorer, all knots kept.

    A thin validating wrapper around :func:`sklearn.metrics.roc_curve` with
    ``drop_intermediate=False``: labels must be binary (the positive class is
    the larger value, see :func:`~treerank.utils.check_bipartite_target`).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_score : array-like of shape (n_samples,)
        Scores, higher meaning more likely positive.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.

    Returns
    -------
    fpr : ndarray of shape (n_thresholds,)
        False positive rates, increasing, starting at 0 and ending at 1.
    tpr : ndarray of shape (n_thresholds,)
        True positive rates.
    thresholds : ndarray of shape (n_thresholds,)
        Decreasing score thresholds (the first one is ``inf``).

    Examples
    --------
    >>> from treerank.metrics import roc_curve
    >>> fpr, tpr, _ = roc_curve([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8])
    >>> fpr
    array([0. , 0. , 0.5, 0.5, 1. ])
    >>> tpr
    array([0. , 0.5, 0.5, 1. , 1. ])
    """
    y01, y_score, sample_weight = _check_bipartite_inputs(
        y_true, y_score, sample_weight
    )
    if not _both_classes(y01, sample_weight):
        raise ValueError(
            "y_true must contain both classes with positive weight to compute a "
            "ROC curve."
        )
    return sk_metrics.roc_curve(
        y01, y_score, sample_weight=sample_weight, drop_intermediate=False
    )


def roc_auc_score(y_true, y_score, *, sample_weight=None):
    """Area under the ROC curve of a scorer (ties count one half).

    Calls :func:`sklearn.metrics.roc_auc_score` after validating the labels.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_score : array-like of shape (n_samples,)
        Scores, higher meaning more likely positive.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.

    Returns
    -------
    auc : float
        ``P(s(X) > s(X') | Y=1, Y'=0) + P(s(X) = s(X') | Y=1, Y'=0) / 2``
        under the (weighted) empirical distribution. NaN, with an
        ``UndefinedMetricWarning``, when one class is absent.

    Examples
    --------
    >>> from treerank.metrics import roc_auc_score
    >>> float(roc_auc_score([0, 1, 0, 1], [0.5, 0.5, 0.5, 0.9]))
    0.75
    """
    y01, y_score, sample_weight = _check_bipartite_inputs(
        y_true, y_score, sample_weight
    )
    if not _both_classes(y01, sample_weight):
        _warn_undefined("ROC AUC")
        return np.nan
    return float(sk_metrics.roc_auc_score(y01, y_score, sample_weight=sample_weight))


def roc_curve_from_counts(pos_counts, neg_counts):
    """ROC curve of a piecewise-constant scorer from its bucket counts.

    A ranking tree (or any scorer with finitely many values) sorts the data
    into buckets ranked best first. Its ROC curve is the broken line through
    the cumulative masses ``(sum_{j<=k} alpha_j, sum_{j<=k} beta_j)``.

    Parameters
    ----------
    pos_counts : array-like of shape (n_buckets,)
        Weighted number of positives in each bucket, best bucket first.
    neg_counts : array-like of shape (n_buckets,)
        Weighted number of negatives in each bucket, best bucket first.

    Returns
    -------
    fpr : ndarray of shape (n_buckets + 1,)
        Cumulative false positive rates, from 0 to 1.
    tpr : ndarray of shape (n_buckets + 1,)
        Cumulative true positive rates, from 0 to 1.

    Examples
    --------
    >>> from treerank.metrics import roc_curve_from_counts
    >>> fpr, tpr = roc_curve_from_counts([3, 1], [1, 3])
    >>> fpr, tpr
    (array([0.  , 0.25, 1.  ]), array([0.  , 0.75, 1.  ]))
    """
    pos = np.asarray(pos_counts, dtype=np.float64).ravel()
    neg = np.asarray(neg_counts, dtype=np.float64).ravel()
    if pos.shape != neg.shape:
        raise ValueError(
            f"pos_counts and neg_counts must have the same length; got {pos.shape[0]} "
            f"and {neg.shape[0]}."
        )
    if not (np.all(np.isfinite(pos)) and np.all(np.isfinite(neg))):
        raise ValueError("pos_counts and neg_counts must be finite.")
    if np.any(pos < 0) or np.any(neg < 0):
        raise ValueError("pos_counts and neg_counts must be non-negative.")
    if pos.sum() <= 0 or neg.sum() <= 0:
        raise ValueError(
            "Both classes need a positive total count to define a ROC curve; got "
            f"{pos.sum()} positives and {neg.sum()} negatives."
        )
    tpr = np.concatenate([[0.0], np.cumsum(pos) / pos.sum()])
    fpr = np.concatenate([[0.0], np.cumsum(neg) / neg.sum()])
    # cumulative sums can overshoot 1 by a rounding error
    tpr[-1] = fpr[-1] = 1.0
    return fpr, tpr


def _check_curve(curve, name):
    try:
        fpr, tpr = curve
    except (TypeError, ValueError):
        raise ValueError(
            f"{name} must be a pair (fpr, tpr) of arrays, as returned by roc_curve."
        ) from None
    fpr = np.asarray(fpr, dtype=np.float64).ravel()
    tpr = np.asarray(tpr, dtype=np.float64).ravel()
    if fpr.shape != tpr.shape or fpr.shape[0] < 2:
        raise ValueError(
            f"{name} must have fpr and tpr of the same length (at least 2); got "
            f"{fpr.shape[0]} and {tpr.shape[0]}."
        )
    if not (np.all(np.isfinite(fpr)) and np.all(np.isfinite(tpr))):
        raise ValueError(f"{name} contains NaN or infinity.")
    if np.any(np.diff(fpr) < 0) or np.any(np.diff(tpr) < 0):
        raise ValueError(f"{name} must have non-decreasing fpr and tpr.")
    if fpr[0] < 0 or fpr[-1] > 1 or tpr[0] < 0 or tpr[-1] > 1:
        raise ValueError(f"{name} must lie in the unit square.")
    return fpr, tpr


def _curve_area(fpr, tpr, upper):
    """Area under the broken line (fpr, tpr) on [0, upper]."""
    cut = np.searchsorted(fpr, upper, side="left")
    x = np.concatenate([fpr[:cut], [upper]])
    y = np.concatenate([tpr[:cut], [_value_left(fpr, tpr, upper)]])
    return float(integrate.trapezoid(y, x))


def _value_left(fpr, tpr, t):
    """Left limit of the ROC function at t (lowest tpr reached at fpr = t)."""
    i = np.searchsorted(fpr, t, side="left")
    if i < fpr.shape[0] and fpr[i] == t:
        return tpr[i]
    if i == 0:
        return tpr[0]
    if i == fpr.shape[0]:
        return tpr[-1]
    x0, x1, y0, y1 = fpr[i - 1], fpr[i], tpr[i - 1], tpr[i]
    return y0 + (y1 - y0) * (t - x0) / (x1 - x0)


def _value_right(fpr, tpr, t):
    """Right limit of the ROC function at t (highest tpr reached at fpr = t)."""
    i = np.searchsorted(fpr, t, side="right")
    if i > 0 and fpr[i - 1] == t:
        return tpr[i - 1]
    return _value_left(fpr, tpr, t)


def partial_auc_score(
    y_true, y_score, *, max_fpr, standardized=True, sample_weight=None
):
    """Partial area under the ROC curve on ``[0, max_fpr]`` (McClish-standardized).

    By default the value of ``sklearn.metrics.roc_auc_score(y_true, y_score,
    max_fpr=max_fpr)``: the partial area standardized so that a random scorer
    gets 0.5 and a perfect one 1. ``standardized=False`` gives the raw area.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_score : array-like of shape (n_samples,)
        Scores, higher meaning more likely positive.
    max_fpr : float in (0, 1]
        Upper end of the false positive range.
    standardized : bool, default=True
        If True, return the McClish standardization
        ``(1 + (A - max_fpr**2 / 2) / (max_fpr - max_fpr**2 / 2)) / 2`` of the
        raw area ``A``, which maps a random scorer to 0.5 and a perfect one to
        1; it equals ``sklearn.metrics.roc_auc_score(..., max_fpr=max_fpr)``
        (with ``max_fpr=1``, the AUC). If False, return the raw area ``A``
        (between 0 and ``max_fpr``; a random scorer gets ``max_fpr**2 / 2``).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.

    Returns
    -------
    pauc : float
        NaN, with an ``UndefinedMetricWarning``, when one class is absent.

    Examples
    --------
    >>> from treerank.metrics import partial_auc_score
    >>> y, s = [0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]
    >>> partial_auc_score(y, s, max_fpr=0.5)
    0.6666...
    >>> partial_auc_score(y, s, max_fpr=0.5, standardized=False)
    0.25
    """
    if not isinstance(max_fpr, numbers.Real) or not 0 < max_fpr <= 1:
        raise ValueError(f"max_fpr must be a number in (0, 1]; got {max_fpr!r}.")
    y01, y_score, sample_weight = _check_bipartite_inputs(
        y_true, y_score, sample_weight
    )
    if not _both_classes(y01, sample_weight):
        _warn_undefined("partial ROC AUC")
        return np.nan
    fpr, tpr, _ = sk_metrics.roc_curve(
        y01, y_score, sample_weight=sample_weight, drop_intermediate=False
    )
    area = _curve_area(fpr, tpr, float(max_fpr))
    if not standardized:
        return area
    min_area = 0.5 * max_fpr**2
    max_area = max_fpr
    return float(0.5 * (1 + (area - min_area) / (max_area - min_area)))


def tpr_at_fpr(y_true, y_score, fpr, *, sample_weight=None):
    """True positive rate of a scorer at a given false positive rate.

    The ROC curve is the broken line joining the scorer's (fpr, tpr) knots
    (randomized thresholds interpolate linearly between knots). Where the curve
    has a vertical segment at ``fpr``, the highest true positive rate reached
    with that false positive rate is returned.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    y_score : array-like of shape (n_samples,)
        Scores, higher meaning more likely positive.
    fpr : float or array-like of floats in [0, 1]
        False positive rate(s).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.

    Returns
    -------
    tpr : float or ndarray
        Same shape as ``fpr``.

    Examples
    --------
    >>> from treerank.metrics import tpr_at_fpr
    >>> tpr_at_fpr([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], [0.25, 0.5])
    array([0.5, 1. ])
    """
    alpha = np.asarray(fpr, dtype=np.float64)
    if not np.all(np.isfinite(alpha)) or np.any((alpha < 0) | (alpha > 1)):
        raise ValueError(f"fpr must lie in [0, 1]; got {fpr!r}.")
    curve_fpr, curve_tpr, _ = roc_curve(y_true, y_score, sample_weight=sample_weight)
    values = np.array(
        [_value_right(curve_fpr, curve_tpr, a) for a in alpha.ravel()]
    ).reshape(alpha.shape)
    return float(values) if values.ndim == 0 else values
