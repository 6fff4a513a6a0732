"""Evaluate any scorer with bipartite or list metrics, with bootstrap intervals.

:func:`evaluate` scores ``X`` with a fitted estimator (treerank or
scikit-learn) and computes the requested metrics: on the whole sample when
``qid`` is None (bipartite ranking: AUC, partial AUC, ...), per query
otherwise (NDCG@k, MAP, ERR, ...), with their mean over queries and percentile
bootstrap confidence intervals. :func:`evaluate_from_scores` does the same
from precomputed scores.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers

import numpy as np
from sklearn.utils import check_random_state

from treerank.bridge._metric_names import resolve_metrics
from treerank.bridge._response import get_scores
from treerank.metrics._grouping import check_qid, group_qid

__all__ = ["EvaluationResult", "evaluate", "evaluate_from_scores"]

# bootstrap replicates are drawn in chunks of at most this many indices
_CHUNK = 1 << 21


class EvaluationResult:
    """Result of :func:`evaluate`: metric means, per-query values and intervals.

    Attributes
    ----------
    means : dict of str to float
        Value of every metric: the mean over queries (the value on the whole
        sample when ``qid`` was None).
    per_query : dict of str to ndarray of shape (n_queries,) or None
        Per-query values of every metric, in the order of ``query_ids`` (the
        sorted unique query ids); None when ``qid`` was None.
    ci : dict of str to tuple of float or None
        ``(low, high)`` percentile bootstrap confidence interval of every
        metric's mean (see :func:`evaluate`); None when ``n_bootstrap=0``.
    query_ids : ndarray of shape (n_queries,) or None
        The sorted unique query ids (None when ``qid`` was None).
    greater_is_better : dict of str to bool
        Direction of every metric (``False`` for losses such as ``"pd"``).
    confidence : float
        Level of the intervals.
    n_bootstrap : int
        Number of bootstrap replicates.
    bootstrap_means : dict of str to ndarray of shape (n_bootstrap,) or None
        The replicate means behind ``ci``.

    Examples
    --------
    >>> from treerank.bridge import evaluate_from_scores
    >>> result = evaluate_from_scores(
    ...     [1, 0, 0, 1], [0.9, 0.2, 0.4, 0.3], qid=[1, 1, 2, 2],
    ...     metrics=["map", "mrr"], n_bootstrap=0,
    ... )
    >>> result.means
    {'map': 0.75, 'mrr': 0.75}
    >>> result.per_query["map"], result.query_ids
    (array([1. , 0.5]), array([1, 2]))
    """

    def __init__(
        self,
        *,
        means,
        per_query,
        ci,
        query_ids,
        greater_is_better,
        confidence,
        n_bootstrap,
        bootstrap_means,
    ):
        self.means = means
        self.per_query = per_query
        self.ci = ci
        self.query_ids = query_ids
        self.greater_is_better = greater_is_better
        self.confidence = confidence
        self.n_bootstrap = n_bootstrap
        self.bootstrap_means = bootstrap_means

    @property
    def n_queries(self):
        """Number of queries (None when ``qid`` was None)."""
        return None if self.query_ids is None else int(self.query_ids.shape[0])

    def __repr__(self):
        parts = []
        for name, value in self.means.items():
            text = f"{name}={value:.4f}"
            if self.ci is not None:
                low, high = self.ci[name]
                text += f" [{low:.4f}, {high:.4f}]"
            parts.append(text)
        where = (
            "whole sample" if self.query_ids is None else f"{self.n_queries} queries"
        )
        return f"EvaluationResult({where}: {', '.join(parts)})"


def _check_bootstrap(n_bootstrap, confidence):
    if (
        isinstance(n_bootstrap, bool)
        or not isinstance(n_bootstrap, numbers.Integral)
        or n_bootstrap < 0
    ):
        raise ValueError(
            f"n_bootstrap must be an integer >= 0 (0: no intervals); got "
            f"{n_bootstrap!r}."
        )
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, numbers.Real)
        or not 0 < confidence < 1
    ):
        raise ValueError(f"confidence must be a number in (0, 1); got {confidence!r}.")


def _finite_mean(values, skip_nan):
    """Mean over the last axis; NaNs skipped (NaN if none left) or propagated."""
    if not skip_nan:
        return values.mean(axis=-1)
    finite = np.isfinite(values)
    count = finite.sum(axis=-1)
    total = np.where(finite, values, 0.0).sum(axis=-1)
    return np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)


def _percentile_interval(replicates, confidence):
    kept = replicates[~np.isnan(replicates)]
    if kept.shape[0] == 0:
        return (np.nan, np.nan)
    low, high = np.quantile(kept, [(1 - confidence) / 2, (1 + confidence) / 2])
    return (float(low), float(high))


def _bootstrap_queries(per_query, skip_nan, n_bootstrap, rng):
    """Replicate means of query-resampled per-query values, shape (m, B)."""
    n_metrics, n_queries = per_query.shape
    out = np.empty((n_metrics, n_bootstrap))
    step = max(1, _CHUNK // max(1, n_queries * n_metrics))
    for start in range(0, n_bootstrap, step):
        stop = min(n_bootstrap, start + step)
        index = rng.randint(0, n_queries, size=(stop - start, n_queries))
        for m in range(n_metrics):
            out[m, start:stop] = _finite_mean(per_query[m][index], skip_nan[m])
    return out


def _bootstrap_rows(metrics, y, scores, n_bootstrap, rng):
    """Replicate values on row resamples stratified by label, shape (m, B)."""
    strata = [np.flatnonzero(y == value) for value in np.unique(y)]
    out = np.empty((len(metrics), n_bootstrap))
    for b in range(n_bootstrap):
        rows = np.concatenate(
            [
                stratum[rng.randint(0, stratum.shape[0], stratum.shape[0])]
                for stratum in strata
            ]
        )
        for m, metric in enumerate(metrics):
            out[m, b] = metric.compute(y[rows], scores[rows], None)[0]
    return out


def _check_labels(y, n_scores):
    try:
        y = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"y must be an array of numbers: {exc}") from None
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"y must be one-dimensional; got an array of shape {y.shape}.")
    if y.shape[0] == 0:
        raise ValueError("y is empty: at least one sample is required.")
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity.")
    if n_scores is not None and n_scores != y.shape[0]:
        raise ValueError(
            f"the scores have {n_scores} elements but y has {y.shape[0]}: give one "
            "score per sample."
        )
    return y


def evaluate_from_scores(
    y,
    scores,
    qid=None,
    *,
    metrics=None,
    max_grade=None,
    threshold=1,
    ties="average",
    empty=0.0,
    gain="exp2",
    n_bootstrap=1000,
    confidence=0.95,
    random_state=None,
):
    """Evaluate precomputed scores with bipartite or list metrics.

    See :func:`evaluate` for the parameters and the result; ``scores`` (of
    shape (n_samples,), higher ranked first) replaces the estimator and ``X``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    scores : array-like of shape (n_samples,)
    qid : array-like of shape (n_samples,), default=None
    metrics : str, callable, list or dict, default=None
    max_grade : float, default=None
    threshold : float or None, default=1
    ties : {"average", "pessimistic", "optimistic", "stable"}, default="average"
    empty : float or "skip", default=0.0
    gain : {"exp2", "linear"}, default="exp2"
    n_bootstrap : int, default=1000
    confidence : float, default=0.95
    random_state : int, RandomState instance or None, default=None

    Returns
    -------
    result : EvaluationResult

    Examples
    --------
    >>> from treerank.bridge import evaluate_from_scores
    >>> result = evaluate_from_scores(
    ...     [2, 0, 1, 0, 1, 0], [0.8, 0.3, 0.3, 0.9, 0.1, 0.2],
    ...     qid=[1, 1, 1, 2, 2, 2], metrics="ndcg@2", n_bootstrap=200,
    ...     random_state=0,
    ... )
    >>> result.per_query["ndcg@2"]
    array([0.913..., 0.        ])
    >>> low, high = result.ci["ndcg@2"]
    >>> bool(low <= result.means["ndcg@2"] <= high)
    True
    """
    _check_bootstrap(n_bootstrap, confidence)
    scores_arr = np.asarray(scores)
    y = _check_labels(y, scores_arr.shape[0] if scores_arr.ndim == 1 else None)
    if metrics is None:
        metrics = ("auc",) if qid is None else ("ndcg", "ndcg@10", "map", "mrr")
    resolved = resolve_metrics(
        metrics,
        max_grade=max_grade,
        threshold=threshold,
        ties=ties,
        empty=empty,
        gain=gain,
    )
    rng = check_random_state(random_state)
    means, per_query, query_ids = {}, None, None
    if qid is None:
        for metric in resolved:
            means[metric.name] = metric.compute(y, scores, None)[0]
        replicates = (
            _bootstrap_rows(
                resolved, y, np.asarray(scores, dtype=np.float64), n_bootstrap, rng
            )
            if n_bootstrap
            else None
        )
    else:
        qid = check_qid(qid, y.shape[0])
        groups = group_qid(qid)
        query_ids = groups.ids
        per_query = {}
        for metric in resolved:
            means[metric.name], per_query[metric.name] = metric.compute(
                y, scores, qid, groups=groups
            )
        replicates = (
            _bootstrap_queries(
                np.stack([per_query[m.name] for m in resolved]),
                [m.skip_nan for m in resolved],
                n_bootstrap,
                rng,
            )
            if n_bootstrap
            else None
        )
    ci = bootstrap_means = None
    if replicates is not None:
        ci = {
            m.name: _percentile_interval(replicates[i], confidence)
            for i, m in enumerate(resolved)
        }
        bootstrap_means = {m.name: replicates[i] for i, m in enumerate(resolved)}
    return EvaluationResult(
        means=means,
        per_query=per_query,
        ci=ci,
        query_ids=query_ids,
        greater_is_better={m.name: m.greater_is_better for m in resolved},
        confidence=float(confidence),
        n_bootstrap=int(n_bootstrap),
        bootstrap_means=bootstrap_means,
    )


def evaluate(
    estimator,
    X,
    y,
    qid=None,
    *,
    metrics=None,
    max_grade=None,
    threshold=1,
    ties="average",
    empty=0.0,
    gain="exp2",
    response_method="auto",
    n_bootstrap=1000,
    confidence=0.95,
    random_state=None,
):
    """Evaluate a fitted scorer with bipartite metrics or per-query list metrics.

    The estimator scores ``X`` (``decision_function`` by default, so any
    treerank or scikit-learn ranker or classifier works). Without ``qid`` the
    whole sample is one ranking and the metrics are those of bipartite
    ranking (``"auc"`` is :func:`treerank.metrics.roc_auc_score`); with
    ``qid`` every query is a list, every metric is computed per query by the
    list metrics of :mod:`treerank.metrics`, and its mean over queries is
    reported.

    Parameters
    ----------
    estimator : object
        A fitted estimator.
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Documents to score.
    y : array-like of shape (n_samples,)
        Relevance labels: binary, or grades ``0..max_grade``.
    qid : array-like of shape (n_samples,), default=None
        Query id of every row (rows of a query need not be contiguous).
        None evaluates the whole sample as one ranking.
    metrics : str, callable, list or dict, default=None
        What to compute. Names with cut-offs: ``"ndcg"``, ``"ndcg@10"``,
        ``"dcg@k"``, ``"err"``, ``"err@k"``, ``"map"``, ``"p@5"``, ``"r@5"``,
        ``"mrr"``, ``"auc"``, ``"eru"``, ``"pd"`` (pairwise disagreement, a
        loss), and without ``qid`` also ``"pauc@0.1"`` (partial AUC on
        ``[0, 0.1]``, McClish-standardized as scikit-learn's
        ``roc_auc_score(max_fpr=0.1)``) and ``"tpr@0.1"`` (TPR at FPR 0.1).
        Callables: a function ``f(y_true, y_score)`` (called once per query),
        or a function with ``qid`` and ``return_per_query`` keywords like
        those of :mod:`treerank.metrics` (called once). A dict
        ``{name: metric}`` names them. None means ``"auc"`` without ``qid``
        and ``["ndcg", "ndcg@10", "map", "mrr"]`` with it. Without ``qid``
        the list metrics (``"ndcg@10"``, ``"map"``, ...) rank the whole
        sample as one list.
    max_grade : float, default=None
        Top grade of the relevance scale. Required by ``"err"`` and never
        guessed from ``y``: a test fold or a query may lack the top grade,
        and ERR changes with the scale.
    threshold : float or None, default=1
        Binary metrics (``"map"``, ``"p@k"``, ``"r@k"``, ``"mrr"``,
        ``"auc"``, ``"pauc"``, ``"tpr"``) count a document as relevant when
        ``y >= threshold``; 1 leaves 0/1 labels unchanged and counts any
        positive grade as relevant. None passes the labels unchanged (they
        must then be binary). Graded metrics and callables see ``y`` as is.
    ties : {"average", "pessimistic", "optimistic", "stable"}, default="average"
        Tie policy of the list metrics (``"average"``: exact expectation over
        random tie-breaking). Bipartite ROC metrics count ties one half.
    empty : float or "skip", default=0.0
        Value of a query on which a metric is undefined (no relevant
        document), as in the list metrics; ``"skip"`` leaves such queries out
        of the mean and of the bootstrap means (their per-query value is NaN).
    gain : {"exp2", "linear"}, default="exp2"
        Gain of DCG and NDCG.
    response_method : {"auto", "decision_function", "predict_proba", \
"predict"}, default="auto"
        How the estimator scores documents (``"auto"``: the first it has).
    n_bootstrap : int, default=1000
        Bootstrap replicates of the confidence intervals (0: none).
    confidence : float, default=0.95
        Level of the intervals.
    random_state : int, RandomState instance or None, default=None
        Seed of the bootstrap.

    Returns
    -------
    result : EvaluationResult
        ``means``, ``per_query`` (sorted unique qid order) and ``ci``.

    See Also
    --------
    evaluate_from_scores : The same from precomputed scores.
    make_list_scorer : A scikit-learn scorer for cross-validation.

    Notes
    -----
    **Confidence intervals.** With ``qid``, the queries are the sampling
    units: every replicate draws ``n_queries`` queries with replacement (the
    same draws for all metrics, so the replicates are paired) and averages
    their per-query values; the interval is the percentile interval
    ``[q_{(1-c)/2}, q_{(1+c)/2}]`` of the replicate means (no bias
    correction). Without ``qid`` the documents are resampled with
    replacement within each label value (stratified, so that every replicate
    keeps the class counts and the AUC stays defined) and the metrics are
    recomputed on every replicate. Cost: one scoring pass and one pass of
    each list metric (O(n log m)), plus O(n_bootstrap * n_queries) for the
    intervals with ``qid`` and O(n_bootstrap) metric evaluations without.

    Examples
    --------
    >>> from treerank import TreeRank
    >>> from treerank.bridge import evaluate
    >>> from treerank.datasets import make_learning_to_rank
    >>> X, y, qid = make_learning_to_rank(60, random_state=0)
    >>> tree = TreeRank(max_depth=3, random_state=0).fit(X[qid < 30], y[qid < 30] >= 1)
    >>> test = qid >= 30
    >>> result = evaluate(tree, X[test], y[test], qid[test],
    ...                   metrics=["ndcg@10", "map", "err"], max_grade=4,
    ...                   random_state=0)
    >>> sorted(result.means), result.per_query["map"].shape
    (['err', 'map', 'ndcg@10'], (30,))
    >>> low, high = result.ci["ndcg@10"]
    >>> bool(low < result.means["ndcg@10"] < high)
    True
    """
    scores = get_scores(estimator, X, response_method)
    return evaluate_from_scores(
        y,
        scores,
        qid,
        metrics=metrics,
        max_grade=max_grade,
        threshold=threshold,
        ties=ties,
        empty=empty,
        gain=gain,
        n_bootstrap=n_bootstrap,
        confidence=confidence,
        random_state=random_state,
    )
