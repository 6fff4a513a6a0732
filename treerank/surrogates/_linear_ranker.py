"""Linear scoring functions trained by minimizing a list surrogate.

``LinearSurrogateRanker`` fits ``s(x) = x . w + b`` by minimizing

    (1 / Q) sum_q loss(X_q w + b, y_q) + (alpha / 2) ||w||^2

over the Q query lists (Q = number of samples when a pointwise loss is fitted
without ``qid``), with scipy's L-BFGS-B. Hinge-type losses (SLAM, RankSVM) are
replaced by their entropic smoothing with parameter ``smoothing`` (convex,
differentiable, an upper bound of the loss within ``smoothing * log(m)`` per
unit weight), which L-BFGS minimizes reliably. ``X`` may be a scipy sparse
matrix: the model only needs ``X @ w`` and ``X.T @ g``, so a one-hot matrix of
tree leaves (the bridge to the tree ensembles) is never densified.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers
import typing
import warnings

import numpy as np
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted

from treerank.surrogates._base import SurrogateLoss
from treerank.surrogates._groups import check_groups
from treerank.surrogates._listnet import ListNetSurrogate
from treerank.surrogates._pairwise_comparison import (
    PairwiseComparisonLoss,
    PairwiseHingeSurrogate,
)
from treerank.surrogates._slam import SLAMSurrogate
from treerank.surrogates._template import PairwiseLogistic, PointwiseSquared
from treerank.utils._sklearn_compat import (
    HasMethods,
    Interval,
    StrOptions,
    _fit_context,
    validate_data,
)

__all__ = ["LOSSES", "LinearSurrogateRanker", "resolve_loss"]

LOSSES = (
    "slam",
    "slam_map",
    "squared",
    "squared_ndcg",
    "pairwise_logistic",
    "ranknet",
    "ranksvm",
    "listnet",
)


def resolve_loss(loss):
    """Loss object of a name of :data:`LOSSES` (objects are cloned).

    - ``"slam"``: :class:`SLAMSurrogate` with NDCG weights (upper-bounds
      ``1 - NDCG``); ``"slam_map"``: with MAP weights (binary labels);
    - ``"squared"``: pointwise squared regression of ``y`` (no ``qid`` needed);
    - ``"squared_ndcg"``: pointwise squared regression of the NDCG utility
      ``(2^y - 1) / maxDCG`` (order-preserving: NDCG-calibrated);
    - ``"pairwise_logistic"``: the order-preserving pairwise logistic loss fed
      the NDCG utility (NDCG-calibrated);
    - ``"ranknet"``, ``"ranksvm"``: the usual pairwise comparison losses
      (logistic, hinge; not calibrated); ``"listnet"``: ListNet.

    Parameters
    ----------
    loss : str or SurrogateLoss
        A name of ``LOSSES`` or a loss object.

    Returns
    -------
    loss : SurrogateLoss

    Examples
    --------
    >>> from treerank.surrogates import resolve_loss
    >>> type(resolve_loss("slam")).__name__
    'SLAMSurrogate'
    """
    if isinstance(loss, SurrogateLoss):
        return clone(loss)
    if loss == "slam":
        return SLAMSurrogate(weights="ndcg")
    if loss == "slam_map":
        return SLAMSurrogate(weights="map")
    if loss == "squared":
        return PointwiseSquared()
    if loss == "squared_ndcg":
        return PointwiseSquared().instance("ndcg")
    if loss == "pairwise_logistic":
        return PairwiseLogistic().instance("ndcg")
    if loss == "ranknet":
        return PairwiseComparisonLoss(phi="logistic")
    if loss == "ranksvm":
        return PairwiseHingeSurrogate()
    if loss == "listnet":
        return ListNetSurrogate()
    raise ValueError(f"loss must be one of {LOSSES} or a surrogate loss; got {loss!r}.")


class LinearSurrogateRanker(BaseEstimator):
    """Linear ranker ``s(x) = x @ w + b`` fitted by minimizing a list surrogate.

    Parameters
    ----------
    loss : str or SurrogateLoss, default="slam"
        A name of ``LOSSES`` (see :func:`resolve_loss`) or a loss object of
        :mod:`treerank.surrogates` (e.g. ``PointwiseLogistic(eta=1.0).instance(
        "ndcg")``). List losses need ``qid`` in :meth:`fit`.
    alpha : float, default=1.0
        Strength of the ridge penalty ``(alpha / 2) ||w||^2`` (the intercept is
        not penalized).
    fit_intercept : bool, default=True
        Fit ``b`` (ignored, ``b = 0``, for losses invariant to translating the
        scores of a list, such as every pairwise and listwise loss).
    smoothing : float, default=0.05
        Smoothing ``mu`` of hinge-type losses (SLAM, RankSVM):
        ``max(0, t) -> mu log(1 + e^{t / mu})`` (and a log-sum-exp for SLAM's
        inner maximum).
    max_iter : int, default=500
        Maximum number of L-BFGS iterations.
    tol : float, default=1e-6
        Gradient tolerance of L-BFGS (``gtol``).

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    surrogate_ : SurrogateLoss
        The loss object that was minimized.
    objective_ : float
        Final value of the (smoothed) regularized objective.
    n_iter_ : int
        Number of L-BFGS iterations.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has feature names that are all strings.

    Notes
    -----
    One evaluation of the objective costs one sparse or dense product with
    ``X`` and ``X.T`` and one pass of the loss (O(m log m) per list for SLAM,
    O(m^2) for the pairwise losses). ``qid`` is declared as ``fit`` metadata,
    so with scikit-learn's metadata routing enabled
    ``ranker.set_fit_request(qid=True)`` lets meta-estimators pass it.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.surrogates import LinearSurrogateRanker
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(200, 3))
    >>> qid = np.repeat(np.arange(20), 10)
    >>> y = (X @ [2.0, -1.0, 0.0] > 0).astype(int) + (X[:, 0] > 1)
    >>> ranker = LinearSurrogateRanker(loss="slam", alpha=0.01).fit(X, y, qid=qid)
    >>> w = ranker.coef_ / np.linalg.norm(ranker.coef_)
    >>> bool(w[0] > 0.7 and w[1] < -0.2)
    True
    """

    _parameter_constraints: typing.ClassVar[dict] = {
        "loss": [StrOptions(set(LOSSES)), HasMethods(["value_and_grad"])],
        "alpha": [Interval(numbers.Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "smoothing": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        loss="slam",
        alpha=1.0,
        fit_intercept=True,
        smoothing=0.05,
        max_iter=500,
        tol=1e-6,
    ):
        self.loss = loss
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.smoothing = smoothing
        self.max_iter = max_iter
        self.tol = tol

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.required = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, qid=None):
        """Fit the weights.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document features (CSR/CSC sparse matrices are used as is).
        y : array-like of shape (n_samples,)
            Relevance labels (binary for MAP-type losses).
        qid : array-like of shape (n_samples,), default=None
            Query id of every document; required by list losses (pairwise,
            listwise, or a utility normalized per list).

        Returns
        -------
        self : object
        """
        X, y = validate_data(
            self, X, y, accept_sparse=("csr", "csc"), dtype=np.float64, y_numeric=True
        )
        surrogate = resolve_loss(self.loss)
        if qid is None and getattr(surrogate, "requires_qid", True):
            raise ValueError(
                f"loss={self.loss!r} compares the documents of a query: fit needs "
                "qid (one query id per sample). Pointwise losses such as "
                "loss='squared' can be fitted without qid."
            )
        n_samples, n_features = X.shape
        groups = check_groups(qid, n_samples)
        target = surrogate._check_target(y, groups)
        n_terms = groups.n_groups if qid is not None else n_samples
        smooth = not getattr(surrogate, "is_smooth", True)
        intercept = self.fit_intercept and not getattr(
            surrogate, "translation_invariant", False
        )
        alpha = float(self.alpha)

        def objective(theta):
            w = theta[:n_features]
            b = theta[n_features] if intercept else 0.0
            scores = X @ w + b
            if smooth:
                per_query, grad_s = surrogate._smooth_value_and_grad(
                    scores, target, groups, self.smoothing
                )
            else:
                per_query, grad_s = surrogate._value_and_grad(scores, target, groups)
            value = per_query.sum() / n_terms + 0.5 * alpha * (w @ w)
            grad = np.empty_like(theta)
            grad[:n_features] = X.T @ grad_s / n_terms + alpha * w
            if intercept:
                grad[n_features] = grad_s.sum() / n_terms
            return value, grad

        theta0 = np.zeros(n_features + int(intercept))
        result = minimize(
            objective,
            theta0,
            jac=True,
            method="L-BFGS-B",
            options={
                "maxiter": self.max_iter,
                "gtol": self.tol,
                "ftol": 64 * np.finfo(np.float64).eps,
            },
        )
        if not result.success and result.nit >= self.max_iter:
            warnings.warn(
                f"L-BFGS did not converge in max_iter={self.max_iter} iterations "
                f"({result.message}); increase max_iter or alpha.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.surrogate_ = surrogate
        self.coef_ = result.x[:n_features].copy()
        self.intercept_ = float(result.x[n_features]) if intercept else 0.0
        self.objective_ = float(result.fun)
        self.n_iter_ = int(result.nit)
        return self

    def decision_function(self, X):
        """Scores ``X w + b`` (higher is ranked first).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(
            self, X, accept_sparse=("csr", "csc"), dtype=np.float64, reset=False
        )
        return np.asarray(X @ self.coef_).ravel() + self.intercept_
