"""Perceptron-like online learning to rank with the SLAM surrogate.

Chaudhuri & Tewari's Algorithm 1: at round t the learner scores the query's
documents with ``s_t = X_t w_t``, suffers the ranking-measure loss
``RML_t = 1 - M(s_t, y_t)`` (NDCG, NDCG@k or AP of the sorted order, ties by
index) and, if ``RML_t > 0``, takes an online-gradient step on the SLAM loss
``f_t(w) = phi_SLAM^{v(y_t)}(X_t w, y_t)``:
``w_{t+1} = w_t - eta X_t^T grad_s phi``.

The mistake bound (their Theorem 5)

    sum_t RML_t <= 2 sum_t f_t(u) + 4 ||u||^2 m R_X^2 v_max      (for every u)

is proved for the step ``eta = 1 / (4 m R_X^2 v_max)`` only, which is the
default here. The paper's claim that the predictions do not depend on eta (so
that eta = 1 may be used) is false in general: the activation test
``s_i - s_k < 1`` of the hinge is not scale invariant; only below some step
size does every misordered pair stay margin-active, and the trajectory become
scale free (see the reference notes, which measured different losses for
eta = 1 and eta = 0.01 on a noisy stream). ``learning_rate=1.0`` reproduces the
paper's algorithm as printed.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from treerank.metrics import average_precision_score, ndcg_score
from treerank.surrogates._groups import check_groups
from treerank.surrogates._slam import SLAMSurrogate, slam_weight_ratio
from treerank.surrogates._utility import gain as _gain
from treerank.surrogates._utility import log2_discount
from treerank.utils._sklearn_compat import validate_data

__all__ = ["OnlineListwisePerceptron", "slam_weight_ratio_bound"]

_MEASURES = ("ndcg", "ndcg@k", "map")


def slam_weight_ratio_bound(measure, n_items, *, k=None, max_grade=None, gain="exp2"):
    """Upper bound of ``v_max`` (the ratio of SLAM weights) for lists of ``n_items``.

    - ``"map"``: ``m / (m - r + 1) <= m / 2`` (1 for ``m = 1``);
    - ``"ndcg@k"``: ``(G_max / G(1)) log2(k + 1)``;
    - ``"ndcg"``: ``(G_max / G(1)) (1 - D(m)) / (D(m - 1) - D(m))``, which is
      ``O(m log^2 m)``; it bounds the ratio of gain differences by
      ``G_max / G(1)`` and of discount differences by their extreme values.

    The NDCG bounds assume integer grades ``0..max_grade``.

    Parameters
    ----------
    measure : {"ndcg", "ndcg@k", "map"}
    n_items : int
        Largest number of documents per query ``m``.
    k : int or None, default=None
    max_grade : int or None, default=None
        Top relevance grade (needed for the NDCG measures).
    gain : {"exp2", "linear"}, default="exp2"

    Returns
    -------
    v_max : float

    Examples
    --------
    >>> from treerank.surrogates import slam_weight_ratio_bound
    >>> slam_weight_ratio_bound("map", 10)
    5.0
    >>> round(slam_weight_ratio_bound("ndcg", 10, max_grade=3), 1)
    415.9
    """
    if measure not in _MEASURES:
        raise ValueError(f"measure must be one of {_MEASURES}; got {measure!r}.")
    if n_items < 1:
        raise ValueError(f"n_items must be >= 1; got {n_items!r}.")
    if measure == "map":
        return max(1.0, n_items / 2.0)
    if max_grade is None or max_grade < 1:
        raise ValueError(
            f"measure={measure!r} needs the top relevance grade max_grade >= 1 to "
            "bound v_max."
        )
    ratio = float(_gain(np.float64(max_grade), gain) / _gain(np.float64(1.0), gain))
    if measure == "ndcg@k":
        return float(max(1.0, ratio * math.log2(min(k, n_items) + 1.0)))
    if n_items <= 2:
        return 1.0
    d = log2_discount(np.array([1.0, n_items - 1.0, float(n_items)]))
    return float(max(1.0, ratio * (d[0] - d[2]) / (d[1] - d[2])))


class OnlineListwisePerceptron(BaseEstimator):
    """Online ranking learner with SLAM updates (Chaudhuri & Tewari, Algorithm 1).

    Each call to :meth:`partial_fit` is one round: one query's documents are
    scored with the current weights, the ranking-measure loss ``1 - M`` of the
    predicted order is recorded, and if it is positive the weights take a
    gradient step on the SLAM surrogate with the measure's weights.

    Parameters
    ----------
    measure : {"ndcg", "ndcg@k", "map"}, default="ndcg"
        The measure ``M`` (and the SLAM weights that upper-bound ``1 - M``).
    k : int or None, default=None
        Cut-off for ``"ndcg@k"``.
    learning_rate : "theory" or float, default="theory"
        ``"theory"``: ``eta = 1 / (4 m R_X^2 v_max)``, the step for which the
        mistake bound is proved (it needs ``feature_bound`` and ``max_items``,
        and ``max_grade`` for the NDCG measures unless ``v_max`` is given). A
        float is used as is (``1.0`` is the paper's algorithm as printed, for
        which no bound is proved).
    feature_bound : float or None, default=None
        ``R_X >= ||x||_2`` for every document; rounds that violate it raise.
    max_items : int or None, default=None
        ``m >=`` the number of documents of every query; rounds that violate it
        raise.
    v_max : float or None, default=None
        Bound on the weight ratio of every round (see :func:`slam_weight_ratio_bound`,
        used when None).
    max_grade : int or None, default=None
        Top relevance grade (for the default ``v_max`` of the NDCG measures).
    gain : {"exp2", "linear"}, default="exp2"
        Gain of the NDCG measures.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Current weights ``w_{t+1}``.
    learning_rate_ : float
        The step size in use.
    v_max_ : float or None
        The ``v_max`` of the theory step and bounds (None for a float
        ``learning_rate`` without the bounds' parameters).
    n_rounds_, n_updates_ : int
        Number of rounds and of rounds with an update.
    cumulative_loss_ : float
        ``sum_t RML_t``.
    cumulative_surrogate_ : float
        ``sum_t f_t(w_t)`` (0 on rounds without update).
    sum_sq_grad_ : float
        ``sum_t ||z_t||^2``.
    round_losses_, round_surrogates_, round_grad_sq_norms_ : list of float
        ``RML_t``, ``f_t(w_t)`` and ``||z_t||^2`` of every round.
    round_updated_ : list of bool
        Whether round t updated the weights (``RML_t > 0``).
    round_vmax_ : list of float
        ``v_max^t`` of every round's weights.
    max_items_seen_ : int
        Largest query seen.
    max_feature_norm_seen_ : float
        Largest ``||x||_2`` seen.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.surrogates import OnlineListwisePerceptron
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
    >>> y = np.array([0, 2, 1])
    >>> learner = OnlineListwisePerceptron(
    ...     feature_bound=1.0, max_items=3, max_grade=2
    ... )
    >>> for _ in range(3):
    ...     learner = learner.partial_fit(X, y)
    >>> learner.n_updates_ > 0
    True
    >>> np.argsort(-learner.decision_function(X)).tolist()
    [1, 2, 0]
    """

    def __init__(
        self,
        *,
        measure="ndcg",
        k=None,
        learning_rate="theory",
        feature_bound=None,
        max_items=None,
        v_max=None,
        max_grade=None,
        gain="exp2",
    ):
        self.measure = measure
        self.k = k
        self.learning_rate = learning_rate
        self.feature_bound = feature_bound
        self.max_items = max_items
        self.v_max = v_max
        self.max_grade = max_grade
        self.gain = gain

    # ----- setup --------------------------------------------------------
    def _check_params(self):
        if self.measure not in _MEASURES:
            raise ValueError(
                f"measure must be one of {_MEASURES}; got {self.measure!r}."
            )
        if self.measure == "ndcg@k":
            if not isinstance(self.k, numbers.Integral) or self.k < 1:
                raise ValueError(
                    f"measure='ndcg@k' needs an integer k >= 1; got {self.k!r}."
                )
        elif self.k is not None:
            raise ValueError("k is only used with measure='ndcg@k'.")
        for name in ("feature_bound", "v_max"):
            value = getattr(self, name)
            if value is not None and not (
                isinstance(value, numbers.Real) and math.isfinite(value) and value > 0
            ):
                raise ValueError(
                    f"{name} must be a positive number or None; got {value!r}."
                )
        if self.max_items is not None and not (
            isinstance(self.max_items, numbers.Integral) and self.max_items >= 1
        ):
            raise ValueError(
                f"max_items must be an integer >= 1; got {self.max_items!r}."
            )
        lr = self.learning_rate
        if isinstance(lr, str):
            if lr != "theory":
                raise ValueError(
                    f"learning_rate must be 'theory' or a positive number; got {lr!r}."
                )
            if self.feature_bound is None or self.max_items is None:
                raise ValueError(
                    "learning_rate='theory' (eta = 1 / (4 m R_X^2 v_max)) needs "
                    "feature_bound (R_X) and max_items (m); give them, or a float "
                    "learning_rate."
                )
        elif not (isinstance(lr, numbers.Real) and math.isfinite(lr) and lr > 0):
            raise ValueError(
                f"learning_rate must be 'theory' or a positive number; got {lr!r}."
            )

    def _resolve_vmax(self):
        if self.v_max is not None:
            return float(self.v_max)
        if self.max_items is None:
            return None
        if self.measure != "map" and self.max_grade is None:
            if self.learning_rate == "theory":
                raise ValueError(
                    f"measure={self.measure!r} with learning_rate='theory' needs v_max "
                    "or max_grade (the top relevance grade) to set the step size."
                )
            return None
        return slam_weight_ratio_bound(
            self.measure,
            self.max_items,
            k=self.k,
            max_grade=self.max_grade,
            gain=self.gain,
        )

    def _initialize(self, n_features):
        self._check_params()
        self.v_max_ = self._resolve_vmax()
        if self.learning_rate == "theory":
            m = self.max_items
            if self.measure == "ndcg@k":
                m = min(self.k, m)
            self.learning_rate_ = 1.0 / (4.0 * m * self.feature_bound**2 * self.v_max_)
        else:
            self.learning_rate_ = float(self.learning_rate)
        self.coef_ = np.zeros(n_features)
        self.n_rounds_ = 0
        self.n_updates_ = 0
        self.cumulative_loss_ = 0.0
        self.cumulative_surrogate_ = 0.0
        self.sum_sq_grad_ = 0.0
        self.round_losses_ = []
        self.round_surrogates_ = []
        self.round_grad_sq_norms_ = []
        self.round_updated_ = []
        self.round_vmax_ = []
        self.max_items_seen_ = 0
        self.max_feature_norm_seen_ = 0.0

    def _surrogate(self):
        weights = "map" if self.measure == "map" else self.measure
        return SLAMSurrogate(weights=weights, k=self.k, margin=1.0, gain=self.gain)

    def _measure_loss(self, y, scores):
        if self.measure == "map":
            value = average_precision_score(y, scores, ties="stable", empty=1.0)
        else:
            value = ndcg_score(
                y, scores, k=self.k, gain=self.gain, ties="stable", empty=1.0
            )
        return max(0.0, 1.0 - float(value))

    # ----- learning -------------------------------------------------------
    def partial_fit(self, X, y):
        """One round on one query.

        Parameters
        ----------
        X : array-like of shape (n_documents, n_features)
            The query's documents.
        y : array-like of shape (n_documents,)
            Their relevance (binary for ``measure="map"``).

        Returns
        -------
        self : object
        """
        first = not hasattr(self, "coef_")
        X = validate_data(self, X, reset=first, dtype=np.float64)
        if first:
            self._initialize(X.shape[1])
        y = np.asarray(y, dtype=np.float64)
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must have shape ({X.shape[0]},); got {y.shape}.")
        if not np.all(np.isfinite(y)) or np.any(y < 0):
            raise ValueError("y must hold finite relevance grades >= 0.")
        m = X.shape[0]
        norm = float(np.max(np.linalg.norm(X, axis=1))) if m else 0.0
        if self.max_items is not None and m > self.max_items:
            raise ValueError(
                f"the query has {m} documents but max_items={self.max_items}: the "
                "bounds (and the theory step size) assume at most max_items."
            )
        if self.feature_bound is not None and norm > self.feature_bound * (1 + 1e-9):
            raise ValueError(
                f"a document has ||x||_2 = {norm} > feature_bound = "
                f"{self.feature_bound}."
            )
        surrogate = self._surrogate()
        v = surrogate.list_weights(y)
        vmax_t = slam_weight_ratio(v)
        if self.v_max_ is not None and vmax_t > self.v_max_ * (1 + 1e-9):
            raise ValueError(
                f"the query's weight ratio v_max^t = {vmax_t} exceeds v_max = "
                f"{self.v_max_}; raise v_max (or max_grade)."
            )
        scores = X @ self.coef_
        loss = self._measure_loss(y, scores)
        f_t, sq = 0.0, 0.0
        if loss > 0:
            f_t, grad_s = surrogate.value_and_grad(scores, y)
            z = X.T @ grad_s
            sq = float(z @ z)
            self.coef_ = self.coef_ - self.learning_rate_ * z
            self.n_updates_ += 1
        self.n_rounds_ += 1
        self.cumulative_loss_ += loss
        self.cumulative_surrogate_ += f_t
        self.sum_sq_grad_ += sq
        self.round_losses_.append(loss)
        self.round_surrogates_.append(f_t)
        self.round_grad_sq_norms_.append(sq)
        self.round_updated_.append(loss > 0)
        self.round_vmax_.append(vmax_t)
        self.max_items_seen_ = max(self.max_items_seen_, m)
        self.max_feature_norm_seen_ = max(self.max_feature_norm_seen_, norm)
        return self

    def fit(self, X, y, qid=None):
        """Run the online algorithm over the queries in the order of appearance.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        qid : array-like of shape (n_samples,)
            Query id of every document; the queries are taken in the order of
            their first appearance.

        Returns
        -------
        self : object
        """
        for name in ("coef_", "n_features_in_"):
            if hasattr(self, name):
                delattr(self, name)
        X = validate_data(self, X, dtype=np.float64)
        y = np.asarray(y)
        if qid is None:
            raise ValueError(
                "qid is required: the learner takes one query per round (pass one "
                "query id per row)."
            )
        groups = check_groups(qid, X.shape[0])
        first_seen = np.full(groups.n_groups, X.shape[0])
        np.minimum.at(first_seen, groups.index, np.arange(X.shape[0]))
        for g in np.argsort(first_seen, kind="stable"):
            members = groups.order[groups.starts[g] : groups.ends[g]]
            self.partial_fit(X[members], y[members])
        return self

    def decision_function(self, X):
        """Scores ``X w`` of documents (higher is ranked first)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return X @ self.coef_

    # ----- bounds -------------------------------------------------------
    def _bound_constants(self):
        check_is_fitted(self)
        if self.v_max_ is None or self.feature_bound is None or self.max_items is None:
            raise ValueError(
                "the bounds need feature_bound, max_items and v_max (or max_grade)."
            )
        m = self.max_items
        if self.measure == "ndcg@k":
            m = min(self.k, m)
        return m, float(self.feature_bound), float(self.v_max_)

    def comparator_surrogate_sum(self, u, queries):
        """``sum_t f_t(u)`` over the rounds played: SLAM of ``X_t u`` on update rounds.

        Parameters
        ----------
        u : array-like of shape (n_features,)
            A comparator weight vector.
        queries : iterable of (X_t, y_t)
            The rounds played so far, in order (``f_t`` is 0 on the rounds
            without update, as in the algorithm's definition).

        Returns
        -------
        total : float
        """
        check_is_fitted(self)
        u = np.asarray(u, dtype=np.float64)
        surrogate = self._surrogate()
        queries = list(queries)
        if len(queries) != self.n_rounds_:
            raise ValueError(
                f"queries has {len(queries)} rounds but {self.n_rounds_} were played."
            )
        total = 0.0
        for (X_t, y_t), updated in zip(queries, self.round_updated_):
            if updated:
                total += surrogate.value(np.asarray(X_t) @ u, y_t)
        return total

    def loss_bound(self, u, sum_f_u=0.0):
        """Right-hand side of the mistake bound for a comparator ``u``.

        ``2 sum_t f_t(u) + 4 ||u||^2 m R_X^2 v_max`` (Theorem 5; for NDCG@k,
        Corollary 7 with ``m`` replaced by ``k``); ``sum_f_u = 0`` gives the
        separable bound. It bounds :attr:`cumulative_loss_` when the theory
        step size is used.

        Parameters
        ----------
        u : array-like of shape (n_features,)
        sum_f_u : float, default=0.0
            ``sum_t f_t(u)`` (see :meth:`comparator_surrogate_sum`).

        Returns
        -------
        bound : float
        """
        m, r_x, v_max = self._bound_constants()
        u = np.asarray(u, dtype=np.float64)
        return 2.0 * float(sum_f_u) + 4.0 * float(u @ u) * m * r_x**2 * v_max

    def regret_bound(self, u):
        """Online-gradient bound ``||u||^2 / (2 eta) + (eta / 2) sum_t ||z_t||^2``.

        It bounds ``sum_t f_t(w_t) - sum_t f_t(u)`` for every ``u`` and any step
        size (along the trajectory actually played).
        """
        check_is_fitted(self)
        u = np.asarray(u, dtype=np.float64)
        eta = self.learning_rate_
        return float(u @ u) / (2.0 * eta) + 0.5 * eta * self.sum_sq_grad_

    def margin_bound(self, gamma):
        """Margin bound ``4 m R_X^2 v_max / gamma^2`` (Corollary 6).

        Valid when a unit vector separates every pair of differently relevant
        documents of every query by ``gamma``.
        """
        m, r_x, v_max = self._bound_constants()
        if not gamma > 0:
            raise ValueError(f"gamma must be > 0; got {gamma!r}.")
        return 4.0 * m * r_x**2 * v_max / gamma**2
