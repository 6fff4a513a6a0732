"""Mixins shared by treerank's estimators."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.isotonic import isotonic_regression

from treerank.metrics._roc import roc_auc_score

__all__ = ["RankingMixin", "calibrate_buckets"]


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
    >>> from treerank.base import calibrate_buckets
    >>> proba, n_positive = calibrate_buckets([3, 1, 2], [1, 3, 2])
    >>> proba, n_positive
    (array([0.75 , 0.375, 0.375]), 1)
    """
    pos = np.asarray(pos_counts, dtype=np.float64)
    neg = np.asarray(neg_counts, dtype=np.float64)
    total = pos + neg
    rate = np.divide(pos, total, out=np.zeros_like(pos), where=total > 0)
    proba = isotonic_regression(
        rate, sample_weight=np.maximum(total, 1e-300), increasing=False
    )
    proba = np.clip(proba, 0.0, 1.0)
    return proba, int(np.count_nonzero(proba > 0.5))


class RankingMixin:
    """Mixin for bipartite rankers: ``score`` is the ROC AUC.

    A ranker's ``decision_function(X)`` returns scores, higher meaning more
    likely positive. Its ``score`` returns the area under the ROC curve of
    those scores, so that ``GridSearchCV`` and ``cross_val_score`` maximize the
    AUC by default (not the accuracy of ``ClassifierMixin``).
    """

    def score(self, X, y, sample_weight=None):
        """ROC AUC of ``decision_function(X)`` against ``y``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test samples.
        y : array-like of shape (n_samples,)
            Binary labels (the larger value, or True, is positive).
        sample_weight : array-like of shape (n_samples,), default=None
            Sample weights.

        Returns
        -------
        auc : float
            Ties count one half. NaN (with a warning) if ``y`` has one class.
        """
        return roc_auc_score(y, self.decision_function(X), sample_weight=sample_weight)
