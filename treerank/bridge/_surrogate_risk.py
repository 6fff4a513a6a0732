"""Empirical surrogate risk and metric regret of a scorer on query-grouped data.

For a scorer ``s`` and queries ``q = 1..Q`` with documents ``X_q`` and labels
``y_q``, the empirical surrogate risk of a list surrogate ``phi`` is

    R_phi(s) = (1 / Q) sum_q phi(s(X_q), y_q),

the quantity a surrogate learner minimizes (without its penalty), and the
empirical metric regret of a list metric ``M`` (higher is better) is

    Reg_M(s) = (1 / Q) sum_q [ max_sigma M(y_q, sigma) - M(y_q, s(X_q)) ],

the loss of the scorer's ranking against the best ranking of the observed
labels. For every named metric of the bridge the best ranking sorts the
documents by label (every such metric is a non-decreasing function of the
labels read in rank order, e.g. ``1 - NDCG@k`` is the NDCG@k regret on a query
with a relevant document), so the maximum is ``M(y_q, y_q)``: the metric with
the labels as scores.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.bridge._metric_names import ListMetric, resolve_metrics
from treerank.bridge._response import get_scores
from treerank.metrics import expected_rank_utility
from treerank.metrics._grouping import check_qid, group_qid
from treerank.surrogates import (
    DCGSurrogate,
    ERUSurrogate,
    InstantiatedLoss,
    MAPScoreSurrogate,
    PrecisionAtQSurrogate,
    SLAMSurrogate,
    SurrogateLoss,
    resolve_loss,
)

__all__ = [
    "SurrogateRiskResult",
    "list_metric_regret",
    "surrogate_risk",
    "surrogate_risk_from_scores",
]


class SurrogateRiskResult:
    """Result of :func:`surrogate_risk`.

    Attributes
    ----------
    risk : float
        Empirical surrogate risk: the mean over queries of the loss of each
        query's scores.
    per_query : ndarray of shape (n_queries,)
        The loss of every query, in sorted query-id order.
    loss : object
        The surrogate that was evaluated.
    metric : str or None
        The metric of the regret (None: no regret computed).
    regret : float or None
        Empirical metric regret (mean over queries; see
        :func:`list_metric_regret`).
    per_query_regret : ndarray of shape (n_queries,) or None
        The metric regret of every query.
    query_ids : ndarray of shape (n_queries,)
        The sorted unique query ids (``[0]`` when ``qid`` was None).

    Examples
    --------
    >>> from treerank.bridge import surrogate_risk_from_scores
    >>> result = surrogate_risk_from_scores(
    ...     [2, 0, 1, 1, 0], [0.1, 0.5, 0.3, 0.2, 0.9], qid=[1, 1, 1, 2, 2],
    ...     loss="slam",
    ... )
    >>> result.metric, bool(result.risk >= result.regret)
    ('ndcg', True)
    """

    def __init__(
        self, *, risk, per_query, loss, metric, regret, per_query_regret, query_ids
    ):
        self.risk = risk
        self.per_query = per_query
        self.loss = loss
        self.metric = metric
        self.regret = regret
        self.per_query_regret = per_query_regret
        self.query_ids = query_ids

    def __repr__(self):
        text = f"SurrogateRiskResult(risk={self.risk:.6g}"
        if self.metric is not None:
            text += f", {self.metric} regret={self.regret:.6g}"
        return text + f", {self.query_ids.shape[0]} queries)"


def _metric_from_loss(loss):
    """The list metric a surrogate is built for, or None when it is not defined."""
    if isinstance(loss, SLAMSurrogate) and isinstance(loss.weights, str):
        if loss.weights == "map":
            return resolve_metrics("map", threshold=None)[0]
        name = "ndcg" if loss.weights == "ndcg" else f"ndcg@{loss.k}"
        return resolve_metrics(name, gain=loss.gain)[0]
    if isinstance(loss, InstantiatedLoss) and isinstance(loss.utility, str):
        if loss.utility == "dcg":  # u = G(y): calibrated for DCG@k for every k
            return resolve_metrics("dcg", gain=loss.gain)[0]
        if loss.utility == "ndcg":  # u = G(y) / N_k(y): NDCG@k
            name = "ndcg" if loss.k is None else f"ndcg@{loss.k}"
            return resolve_metrics(name, gain=loss.gain)[0]
        if loss.utility == "auc":
            return resolve_metrics("auc", threshold=None)[0]
        return None
    if isinstance(loss, DCGSurrogate):
        base = "ndcg" if loss.normalize else "dcg"
        name = base if loss.k is None else f"{base}@{loss.k}"
        return resolve_metrics(name, gain=loss.gain)[0]
    if isinstance(loss, MAPScoreSurrogate):
        return resolve_metrics("map", threshold=None)[0]
    if isinstance(loss, PrecisionAtQSurrogate):
        return resolve_metrics(f"p@{loss.q}", threshold=None)[0]
    if isinstance(loss, ERUSurrogate):
        kwargs = {
            "neutral": loss.neutral,
            "half_life": loss.half_life,
            "ties": "average",
            "empty": 0.0,
        }
        return ListMetric("eru", expected_rank_utility, kwargs)
    return None


def _fixed_size_risk(loss, y, scores, groups):
    """Per-query value of a least-squares surrogate of lists of ``n_items``."""
    n_items = loss.n_items
    if np.any(groups.sizes != n_items):
        raise ValueError(
            f"{type(loss).__name__}(n_items={n_items}) scores lists of exactly "
            f"{n_items} items; the queries have {np.unique(groups.sizes).tolist()} "
            "items. Use a surrogate loss of treerank.surrogates that takes qid "
            "(SLAMSurrogate, template losses, ...) for lists of varying length."
        )
    Y = np.asarray(y, dtype=np.float64)[groups.order].reshape(-1, n_items)
    U = np.asarray(scores, dtype=np.float64)[groups.order].reshape(-1, n_items)
    target = np.asarray(loss.target(Y), dtype=np.float64)
    if target.shape != U.shape:
        raise ValueError(
            f"{type(loss).__name__} regresses a vector of dimension "
            f"{target.shape[-1]} per list, not one score per item: it cannot be "
            "evaluated on the scores of a scorer."
        )
    return np.sum((U - target) ** 2, axis=1)


def _check_y(y, n_scores):
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional; got shape {y.shape}.")
    if y.shape[0] != n_scores:
        raise ValueError(
            f"the scores have {n_scores} elements but y has {y.shape[0]}: give one "
            "score per sample."
        )
    if y.shape[0] == 0:
        raise ValueError("y is empty: at least one sample is required.")
    return y


def list_metric_regret(
    y,
    scores,
    qid=None,
    *,
    metric="ndcg",
    max_grade=None,
    threshold=1,
    ties="average",
    empty=0.0,
    gain="exp2",
):
    """Empirical regret of a list metric: best ranking of the labels minus the scores'.

    For every query, ``M(y_q, y_q) - M(y_q, s_q)`` (``M(y_q, s_q) -
    M(y_q, y_q)`` for a loss such as ``"pd"``), where ``M(y_q, y_q)`` is the
    metric of the ranking that sorts the documents by label (binarized at
    ``threshold`` for the binary metrics): the best achievable value on the
    observed labels, for every named metric of the bridge. For example the
    NDCG@k regret is ``1 - NDCG@k`` on a query with a relevant document, and
    ``0`` on one without (both values are ``empty``).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Relevance labels.
    scores : array-like of shape (n_samples,)
        Scores, higher ranked first.
    qid : array-like of shape (n_samples,), default=None
        Query id of every row; None means one list.
    metric : str, default="ndcg"
        A metric name of :func:`evaluate` (callables are refused: their best
        ranking is not known).
    max_grade, threshold, ties, empty, gain
        Options of the metric (see :func:`evaluate`).

    Returns
    -------
    regret : float
        Mean regret over the queries (NaN values skipped with
        ``empty="skip"``).
    per_query : ndarray of shape (n_queries,)
        Regret of every query, in sorted query-id order.

    Examples
    --------
    >>> from treerank.bridge import list_metric_regret
    >>> from treerank.metrics import ndcg_score
    >>> y, s, q = [2, 0, 1, 1, 0], [0.1, 0.5, 0.3, 0.2, 0.9], [1, 1, 1, 2, 2]
    >>> mean, per_query = list_metric_regret(y, s, q, metric="ndcg")
    >>> _, ndcg = ndcg_score(y, s, qid=q, return_per_query=True)
    >>> bool(np.allclose(per_query, 1 - ndcg))
    True
    """
    if not isinstance(metric, str):
        raise ValueError(
            "metric must be a metric name (e.g. 'ndcg@10'); the regret needs the "
            f"best ranking of the labels, unknown for {metric!r}."
        )
    (spec,) = resolve_metrics(
        metric,
        max_grade=max_grade,
        threshold=threshold,
        ties=ties,
        empty=empty,
        gain=gain,
    )
    return _regret(spec, y, scores, qid)


def _regret(spec, y, scores, qid):
    y = _check_y(y, np.asarray(scores).shape[0])
    single = qid is None
    if single:
        qid = np.zeros(y.shape[0], dtype=np.intp)
    if spec.bipartite_only and single:
        value = spec.compute(y, scores, None)[0]
        best = spec.compute(y, spec.labels(y), None)[0]
        per_query = np.array([best - value])
    else:
        _, value = spec.compute(y, scores, qid)
        _, best = spec.compute(y, spec.labels(y), qid)
        per_query = best - value if spec.greater_is_better else value - best
    if spec.skip_nan:
        finite = per_query[np.isfinite(per_query)]
        mean = float(finite.mean()) if finite.shape[0] else np.nan
    else:
        mean = float(per_query.mean())
    return mean, per_query


def surrogate_risk_from_scores(
    y,
    scores,
    qid=None,
    *,
    loss,
    metric="auto",
    max_grade=None,
    threshold=1,
    ties="average",
    empty=0.0,
    gain="exp2",
):
    """Empirical surrogate risk and metric regret of precomputed scores.

    See :func:`surrogate_risk` (``scores`` replaces the estimator and ``X``).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    scores : array-like of shape (n_samples,)
    qid : array-like of shape (n_samples,), default=None
    loss : str or surrogate
    metric : "auto", str or None, default="auto"
    max_grade, threshold, ties, empty, gain
        Options of an explicit ``metric``.

    Returns
    -------
    result : SurrogateRiskResult

    Examples
    --------
    >>> from treerank.bridge import surrogate_risk_from_scores
    >>> result = surrogate_risk_from_scores(
    ...     [1, 0, 0, 1], [0.9, 0.2, 0.4, 0.3], qid=[1, 1, 2, 2],
    ...     loss="squared_ndcg",
    ... )
    >>> result.per_query  # (0.9 - 1)^2 + 0.2^2, 0.4^2 + (0.3 - 1)^2
    array([0.05, 0.65])
    >>> result.metric, result.per_query_regret
    ('ndcg', array([0.        , 0.36907025]))
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 1:
        raise ValueError(f"scores must be one-dimensional; got shape {scores.shape}.")
    y = _check_y(y, scores.shape[0])
    qid_checked = (
        np.zeros(y.shape[0], dtype=np.intp)
        if qid is None
        else check_qid(qid, y.shape[0])
    )
    groups = group_qid(qid_checked)
    if isinstance(loss, str) or isinstance(loss, SurrogateLoss):
        surrogate = resolve_loss(loss)
        per_query = np.asarray(
            surrogate.value(scores, y, qid=qid_checked, return_per_query=True),
            dtype=np.float64,
        )
    elif hasattr(loss, "n_items") and hasattr(loss, "target"):
        surrogate = loss
        per_query = _fixed_size_risk(loss, y, scores, groups)
    else:
        raise ValueError(
            "loss must be a loss name of LinearSurrogateRanker, a SurrogateLoss of "
            "treerank.surrogates, or a score-based least-squares surrogate "
            f"(DCGSurrogate, MAPScoreSurrogate, ...); got {loss!r}."
        )
    if metric == "auto":
        spec = _metric_from_loss(surrogate)
    elif metric is None:
        spec = None
    else:
        if not isinstance(metric, str):
            raise ValueError(
                f"metric must be 'auto', None or a metric name; got {metric!r}."
            )
        (spec,) = resolve_metrics(
            metric,
            max_grade=max_grade,
            threshold=threshold,
            ties=ties,
            empty=empty,
            gain=gain,
        )
    regret = per_query_regret = None
    if spec is not None:
        regret, per_query_regret = _regret(
            spec, y, scores, None if qid is None else qid_checked
        )
    return SurrogateRiskResult(
        risk=float(per_query.mean()),
        per_query=per_query,
        loss=surrogate,
        metric=None if spec is None else spec.name,
        regret=regret,
        per_query_regret=per_query_regret,
        query_ids=groups.ids,
    )


def surrogate_risk(
    estimator,
    X,
    y,
    qid=None,
    *,
    loss,
    metric="auto",
    max_grade=None,
    threshold=1,
    ties="average",
    empty=0.0,
    gain="exp2",
    response_method="auto",
):
    """Empirical surrogate risk of a scorer on grouped data, and its metric regret.

    The estimator (any fitted treerank or scikit-learn scorer) scores ``X``;
    the surrogate is evaluated on every query's scores and labels and
    averaged over the queries:
    ``R_phi(s) = (1/Q) sum_q phi(s(X_q), y_q)``. The regret of the metric the
    surrogate is built for (or of ``metric``) is computed alongside, against
    the best ranking of the observed labels (see :func:`list_metric_regret`).

    Parameters
    ----------
    estimator : object
        A fitted estimator.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Relevance labels, as the surrogate expects them (grades, or binary
        labels for MAP-type surrogates).
    qid : array-like of shape (n_samples,), default=None
        Query id of every row; None means one list.
    loss : str or surrogate
        A loss name of :class:`~treerank.surrogates.LinearSurrogateRanker`
        (``"slam"``, ``"squared_ndcg"``, ``"pairwise_logistic"``, ...), any
        :class:`~treerank.surrogates.SurrogateLoss` (SLAM, template losses and
        their metric instances, RankNet, RankSVM, ListNet), or a score-based
        least-squares surrogate of fixed list length
        (:class:`~treerank.surrogates.DCGSurrogate`,
        :class:`~treerank.surrogates.ERUSurrogate`,
        :class:`~treerank.surrogates.PrecisionAtQSurrogate`,
        :class:`~treerank.surrogates.MAPScoreSurrogate`: every query must have
        ``n_items`` documents, and ``phi(u, y) = ||u - U_y||^2``).
    metric : "auto", str or None, default="auto"
        Metric of the regret. ``"auto"``: the metric the surrogate is built
        for (SLAM: NDCG, NDCG@k or MAP by its weights; a template loss
        instantiated with the ``"ndcg"``/``"dcg"``/``"auc"`` utility: NDCG@k,
        DCG, per-query AUC; ``DCGSurrogate``: NDCG@k or DCG@k;
        ``MAPScoreSurrogate``: MAP; ``PrecisionAtQSurrogate``: P@q;
        ``ERUSurrogate``: ERU), and no regret for the surrogates that target
        no single metric (RankNet, RankSVM, ListNet, the pointwise squared
        loss on ``y``, utilities ``"precision"``/``"recall"`` whose cut-off
        is free). A name computes that metric's regret; None skips it.
    max_grade, threshold, ties, empty, gain
        Options of an explicit ``metric`` (see :func:`evaluate`).
    response_method : str, default="auto"
        How the estimator scores documents (see :func:`evaluate`).

    Returns
    -------
    result : SurrogateRiskResult
        ``risk`` and ``per_query`` losses, ``regret`` and
        ``per_query_regret``.

    Notes
    -----
    The risk is the surrogate itself, not the smoothed version a learner
    may minimize, and without any penalty. The regret compares the
    scorer's ranking (ties resolved by ``ties``) with the best ranking of the
    observed labels of each query; it is the empirical counterpart of the
    metric regret of the calibration theory, in which the labels are random
    and the best ranking sorts by expected utility
    (:func:`treerank.surrogates.metric_regret`). For SLAM with NDCG, NDCG@k
    or MAP weights the per-query loss upper-bounds the per-query regret.

    Examples
    --------
    >>> from treerank import TreeRank
    >>> from treerank.bridge import surrogate_risk
    >>> from treerank.datasets import make_learning_to_rank
    >>> X, y, qid = make_learning_to_rank(40, random_state=0)
    >>> tree = TreeRank(max_depth=3, random_state=0).fit(X, y >= 1)
    >>> result = surrogate_risk(tree, X, y, qid, loss="slam")
    >>> result.metric, result.per_query.shape
    ('ndcg', (40,))
    >>> bool(np.all(result.per_query >= result.per_query_regret))  # SLAM bound
    True
    """
    scores = get_scores(estimator, X, response_method)
    return surrogate_risk_from_scores(
        y,
        scores,
        qid,
        loss=loss,
        metric=metric,
        max_grade=max_grade,
        threshold=threshold,
        ties=ties,
        empty=empty,
        gain=gain,
    )
