"""What every ranker shares: its mixin and the checks of its splitter.

:class:`RankingMixin` gives ``predict`` and ``score`` from
``decision_function`` and the fitted calibration (of
:mod:`treerank.calibration`); :func:`keep_background` keeps the training rows
that explanations use by default; :func:`check_sparse_splitter` refuses a
sparse X that the splitter cannot read. Nothing here imports an estimator: the
estimators build on this module.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import get_tags

from treerank.metrics._roc import roc_auc_score
from treerank.metrics._vus import volume_under_surface

__all__ = [
    "RankingMixin",
    "keep_background",
]


def _allows_nan(estimator):
    """Whether an estimator (e.g. a LeafRank) accepts NaN, by its tags."""
    try:
        return bool(get_tags(estimator).input_tags.allow_nan)
    except (AttributeError, TypeError, ValueError):
        return False


def _accepts_sparse(estimator):
    """Whether an estimator (e.g. a LeafRank) accepts sparse X, by its tags."""
    try:
        return bool(get_tags(estimator).input_tags.sparse)
    except (AttributeError, TypeError, ValueError):
        return False


def check_sparse_splitter(leafrank):
    """Refuse a sparse X when the splitter ``leafrank`` cannot read it."""
    if not _accepts_sparse(leafrank):
        raise ValueError(
            f"X is sparse, but the splitter {type(leafrank).__name__} needs dense "
            "data (its input_tags.sparse tag is False). Use the default LeafRank "
            "(which bins a sparse X column by column), a ClassifierLeafRank whose "
            "classifier accepts sparse input, or pass X.toarray()."
        )


MAX_KEPT_ROWS = 1000
"""Training rows a ranker keeps at fit, the default background of its explanations."""


def keep_background(estimator, X, sample_weight=None):
    """Keep up to 1,000 training rows, the default background of explanations.

    The rows (of positive weight) are drawn at random, with a seed of their
    own (the fit does not depend on it), as the trees read them (category
    codes; a sparse X stays sparse), in ``estimator._background``. They stay
    in memory: :class:`RankingMixin` leaves them out of pickles and copies,
    and model files do not hold them, so that a saved model does not carry
    training rows.

    Parameters
    ----------
    estimator : estimator
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        The validated training rows.
    sample_weight : array-like of shape (n_samples,) or None, default=None
    """
    rows = np.arange(X.shape[0])
    if sample_weight is not None:
        rows = rows[np.asarray(sample_weight) > 0]
    if rows.shape[0] > MAX_KEPT_ROWS:
        chosen = np.random.RandomState(0).choice(rows.shape[0], MAX_KEPT_ROWS, False)
        rows = rows[np.sort(chosen)]
    if hasattr(X, "tocsr"):
        X = X.tocsr()
    estimator._background = X[rows]


class RankingMixin:
    """Mixin for bipartite rankers: ``score`` is the ROC AUC.

    A ranker's ``decision_function(X)`` returns scores, higher meaning more
    likely positive. Its ``score`` returns the area under the ROC curve of
    those scores, so that ``GridSearchCV`` and ``cross_val_score`` maximize the
    AUC by default (not the accuracy of ``ClassifierMixin``). Rankers are
    binary (``multi_class`` tag False: scikit-learn's checks feed them two
    classes); they accept NaN as missing values, and scipy sparse X, when
    their splitter does (the default :class:`~treerank.tree.LeafRank` does
    both). Put it before ``ClassifierMixin`` in the bases.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        leafrank = getattr(self, "leafrank", None)
        tags.input_tags.allow_nan = leafrank is None or _allows_nan(leafrank)
        tags.input_tags.sparse = leafrank is None or _accepts_sparse(leafrank)
        return tags

    def __getstate__(self):
        # the training rows kept for explanations stay out of pickles and copies
        state = dict(super().__getstate__())
        state.pop("_background", None)
        return state

    def predict(self, X):
        """Class label: positive where ``decision_function(X) > 0``.

        A threshold on the ranking: the rankers shift their scores so that
        positive scores are exactly the predicted positives (where the
        calibrated probability exceeds 1/2). A ranker fitted on ``K > 2``
        ordered grades predicts the median grade: the largest grade ``g``
        with calibrated ``P(Y >= g | x) > 1/2`` (see :ref:`multipartite`).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
        """
        scores = self.decision_function(X)  # refuses an unfitted ranker
        if self.classes_.shape[0] > 2:  # the median grade (GradedCalibration)
            return self.classes_[self._calibration.predict_codes(scores)]
        return self.classes_[(scores > 0).astype(int)]

    def score(self, X, y, sample_weight=None):
        """ROC AUC of ``decision_function(X)`` against ``y``.

        For a ranker fitted on ``K > 2`` ordered grades: the volume under the
        ROC surface (:func:`~treerank.metrics.volume_under_surface`) for the
        grades present in ``y`` (the AUC if there are two).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
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
        if len(getattr(self, "classes_", ())) > 2:  # grades: the VUS
            return volume_under_surface(
                y, self.decision_function(X), sample_weight=sample_weight
            )
        return roc_auc_score(y, self.decision_function(X), sample_weight=sample_weight)
