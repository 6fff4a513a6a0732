"""Ranking scores of a fitted estimator (the response used by the bridge)."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["RESPONSE_METHODS", "get_scores"]

RESPONSE_METHODS = ("auto", "decision_function", "predict_proba", "predict")


def get_scores(estimator, X, response_method="auto"):
    """Ranking scores of ``X`` by a fitted estimator (higher = ranked first).

    Parameters
    ----------
    estimator : object
        A fitted estimator.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    response_method : {"auto", "decision_function", "predict_proba", \
"predict"}, default="auto"
        The method giving the scores. ``"auto"`` uses ``decision_function``
        when the estimator has one (treerank estimators, linear models,
        :class:`~treerank.surrogates.LinearSurrogateRanker`), else the
        positive-class column of ``predict_proba``, else ``predict``
        (regressors, learning-to-rank models such as LightGBM's ``LGBMRanker``).

    Returns
    -------
    scores : ndarray of shape (n_samples,)

    Examples
    --------
    >>> from sklearn.linear_model import LinearRegression
    >>> from treerank.bridge._response import get_scores
    >>> model = LinearRegression().fit([[0.0], [1.0]], [0.0, 2.0])
    >>> get_scores(model, [[0.5]])
    array([1.])
    """
    if response_method not in RESPONSE_METHODS:
        raise ValueError(
            f"response_method must be one of {RESPONSE_METHODS}; got "
            f"{response_method!r}."
        )
    if response_method == "auto":
        for name in RESPONSE_METHODS[1:]:
            if hasattr(estimator, name):
                response_method = name
                break
        else:
            raise ValueError(
                f"{type(estimator).__name__} has no decision_function, predict_proba "
                "or predict method: it cannot score documents."
            )
    elif not hasattr(estimator, response_method):
        raise ValueError(f"{type(estimator).__name__} has no {response_method} method.")
    scores = np.asarray(getattr(estimator, response_method)(X))
    if response_method == "predict_proba":
        if scores.ndim != 2 or scores.shape[1] != 2:
            raise ValueError(
                "predict_proba must return two columns (negative, positive) to "
                f"rank by the positive one; got shape {scores.shape}."
            )
        scores = scores[:, 1]
    if scores.ndim == 2 and scores.shape[1] == 1:
        scores = scores.ravel()
    if scores.ndim != 1:
        raise ValueError(
            f"{type(estimator).__name__}.{response_method} must return one score per "
            f"sample; got an array of shape {scores.shape}."
        )
    return scores
