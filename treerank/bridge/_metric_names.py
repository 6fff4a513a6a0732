"""Metric names of the bridge: ``"ndcg@10"``, ``"map"``, ``"auc"``, ... or callables.

A metric given by name is resolved once into a :class:`ListMetric`, which
computes the metric of scores against labels, on one list (``qid=None``) or
per query, by calling the metric functions of :mod:`treerank.metrics`. The
grammar is ``base`` or ``base@cut``:

- graded labels: ``ndcg``, ``ndcg@k`` (:func:`~treerank.metrics.ndcg_score`);
  ``dcg``, ``dcg@k`` (:func:`~treerank.metrics.dcg_score`); ``err``,
  ``err@k`` (:func:`~treerank.metrics.err_score`, needs ``max_grade``);
  ``eru`` (:func:`~treerank.metrics.expected_rank_utility`); ``pd``
  (:func:`~treerank.metrics.pairwise_disagreement`);
- binary labels: ``map`` (:func:`~treerank.metrics.average_precision_score`);
  ``p@k`` (:func:`~treerank.metrics.precision_at_k`); ``r@k``
  (:func:`~treerank.metrics.recall_at_k`); ``mrr``, ``mrr@k``
  (:func:`~treerank.metrics.reciprocal_rank`); ``auc``
  (:func:`~treerank.metrics.list_auc` per query,
  :func:`~treerank.metrics.roc_auc_score` without qid);
- bipartite only (without qid): ``pauc@f``
  (:func:`~treerank.metrics.partial_auc_score` with ``max_fpr=f``) and
  ``tpr@f`` (:func:`~treerank.metrics.tpr_at_fpr` at ``fpr=f``).

Aliases: ``ap`` (= ``map``), ``precision@k``, ``recall@k``, ``rr``
(= ``mrr``), ``pairwise_disagreement`` (= ``pd``); names are case-insensitive.
"Binary" metrics see the labels
binarized as ``y >= threshold``. ``pd`` is a loss (lower is better); every
other named metric is a score.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import functools
import inspect
import math
import numbers

import numpy as np

from treerank.metrics import (
    average_precision_score,
    dcg_score,
    err_score,
    expected_rank_utility,
    list_auc,
    ndcg_score,
    pairwise_disagreement,
    partial_auc_score,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
    roc_auc_score,
    tpr_at_fpr,
)
from treerank.metrics._grouping import check_qid, group_qid

__all__ = ["METRIC_NAMES", "ListMetric", "check_threshold", "resolve_metrics"]

# base name -> (function, label kind, cut-off: None/"optional"/"required"/"rate",
#               options passed, greater_is_better)
_TABLE = {
    "ndcg": (ndcg_score, "graded", "optional", ("ties", "empty", "gain"), True),
    "dcg": (dcg_score, "graded", "optional", ("ties", "empty", "gain"), True),
    "err": (err_score, "graded", "optional", ("ties", "empty", "max_grade"), True),
    "eru": (expected_rank_utility, "graded", None, ("ties", "empty"), True),
    "pd": (pairwise_disagreement, "graded", None, ("ties", "empty"), False),
    "map": (average_precision_score, "binary", None, ("ties", "empty"), True),
    "p": (precision_at_k, "binary", "required", ("ties", "empty"), True),
    "r": (recall_at_k, "binary", "required", ("ties", "empty"), True),
    "mrr": (reciprocal_rank, "binary", "optional", ("ties", "empty"), True),
    "auc": (list_auc, "binary", None, ("ties", "empty"), True),
    "pauc": (partial_auc_score, "binary", "rate", (), True),
    "tpr": (tpr_at_fpr, "binary", "rate", (), True),
}
_ALIASES = {
    "ap": "map",
    "precision": "p",
    "recall": "r",
    "rr": "mrr",
    "pairwise_disagreement": "pd",
}
METRIC_NAMES = tuple(sorted([*_TABLE, *_ALIASES]))
_BIPARTITE_ONLY = ("pauc", "tpr")


def check_threshold(threshold):
    """Validate the relevance threshold of the binary metrics (None or a real).

    Examples
    --------
    >>> from treerank.bridge._metric_names import check_threshold
    >>> check_threshold(2), check_threshold(None)
    (2, None)
    """
    if threshold is None:
        return None
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, numbers.Real)
        or not math.isfinite(threshold)
    ):
        raise ValueError(
            f"threshold must be a finite number (grades >= threshold are relevant) "
            f"or None (labels already binary); got {threshold!r}."
        )
    return threshold


def _binarize(y, threshold):
    if threshold is None:
        return y
    return (np.asarray(y, dtype=np.float64) >= threshold).astype(np.float64)


def _parse_cut(base, cut, kind, name):
    if kind is None:
        if cut is not None:
            raise ValueError(f"metric {name!r}: {base!r} takes no cut-off '@...'.")
        return None
    if cut is None:
        if kind in ("required", "rate"):
            what = "an integer k >= 1" if kind == "required" else "a rate in (0, 1]"
            raise ValueError(
                f"metric {name!r} needs a cut-off: write {base}@<{what}> "
                f"(for example {base}@{'10' if kind == 'required' else '0.1'})."
            )
        return None
    if kind == "rate":
        try:
            value = float(cut)
        except ValueError:
            value = math.nan
        if not 0 < value <= 1:
            raise ValueError(
                f"metric {name!r}: the cut-off of {base!r} must be a rate in (0, 1]; "
                f"got {cut!r}."
            )
        return value
    if not cut.isdigit() or int(cut) < 1:
        raise ValueError(
            f"metric {name!r}: the cut-off of {base!r} must be an integer >= 1; "
            f"got {cut!r}."
        )
    return int(cut)


class ListMetric:
    """A resolved metric: name, how to compute it, and its direction.

    Parameters
    ----------
    name : str
        The key under which results are reported.
    function : callable
        The metric function.
    kwargs : dict
        Options passed to ``function``.
    binary : bool
        Whether the labels are binarized (``y >= threshold``) first.
    greater_is_better : bool
        Whether higher values are better.
    vectorized : bool
        Whether ``function`` takes ``qid=`` and ``return_per_query=`` (the
        metric functions of :mod:`treerank.metrics`); otherwise it is called
        as ``function(y_true, y_score)`` once per query.
    bipartite_only : bool
        Whether the metric exists only without ``qid``.
    skip_nan : bool
        Whether NaN per-query values are left out of the mean (``empty="skip"``).
    threshold : float or None
        Relevance threshold of a binary metric.
    bipartite : callable or None
        The bipartite function ``f(y_true, y_score)`` used instead of
        ``function`` when ``qid`` is None (``"auc"``).

    Examples
    --------
    >>> from treerank.bridge._metric_names import resolve_metrics
    >>> (metric,) = resolve_metrics("ndcg@2")
    >>> metric.name, metric.kwargs["k"]
    ('ndcg@2', 2)
    >>> y, s, q = [2, 0, 1, 0], [0.9, 0.1, 0.2, 0.5], [1, 1, 2, 2]
    >>> mean, per_query = metric.compute(y, s, q)
    >>> per_query
    array([1.        , 0.63092975])
    """

    def __init__(
        self,
        name,
        function,
        kwargs,
        *,
        binary=False,
        greater_is_better=True,
        vectorized=True,
        bipartite_only=False,
        skip_nan=False,
        threshold=None,
        bipartite=None,
    ):
        self.name = name
        self.function = function
        self.kwargs = kwargs
        self.binary = binary
        self.greater_is_better = greater_is_better
        self.vectorized = vectorized
        self.bipartite_only = bipartite_only
        self.skip_nan = skip_nan
        self.threshold = threshold
        self.bipartite = bipartite

    def __repr__(self):
        return f"ListMetric({self.name!r})"

    def labels(self, y):
        """The labels the metric sees (binarized for a binary metric)."""
        return _binarize(y, self.threshold) if self.binary else y

    def compute(self, y_true, y_score, qid=None, *, groups=None):
        """Value of the metric: the mean over queries and the per-query values.

        Parameters
        ----------
        y_true : array-like of shape (n_samples,)
        y_score : array-like of shape (n_samples,)
        qid : array-like of shape (n_samples,) or None
            None computes the metric on the whole sample as one list (the
            bipartite version for ``"auc"``).
        groups : QueryGroups, default=None
            ``group_qid(qid)``, if already computed (for non-vectorized
            callables).

        Returns
        -------
        mean : float
            The value (one list) or the mean over queries.
        per_query : ndarray of shape (n_queries,) or None
            Per-query values in sorted query-id order (None when ``qid`` is
            None).
        """
        y = self.labels(y_true)
        if qid is None:
            if self.bipartite is not None:
                return float(self.bipartite(y, y_score)), None
            if not self.vectorized:
                return float(self.function(np.asarray(y), np.asarray(y_score))), None
            return float(self.function(y, y_score, **self.kwargs)), None
        if self.bipartite_only:
            raise ValueError(
                f"metric {self.name!r} is a bipartite ROC metric of the whole sample: "
                "it is not computed per query (use qid=None, or 'auc' for the "
                "per-query AUC)."
            )
        if self.vectorized:
            mean, per_query = self.function(
                y, y_score, qid=qid, return_per_query=True, **self.kwargs
            )
            return float(mean), np.asarray(per_query, dtype=np.float64)
        return self._compute_per_query(y, y_score, qid, groups)

    def _compute_per_query(self, y, y_score, qid, groups):
        y = np.asarray(y)
        y_score = np.asarray(y_score)
        if groups is None:
            groups = group_qid(check_qid(qid, y.shape[0]))
        values = np.empty(groups.n_groups, dtype=np.float64)
        for g in range(groups.n_groups):
            rows = groups.order[groups.starts[g] : groups.starts[g] + groups.sizes[g]]
            values[g] = float(self.function(y[rows], y_score[rows]))
        return float(np.mean(values)), values


def _callable_name(function):
    base = function
    while isinstance(base, functools.partial):
        base = base.func
    return getattr(base, "__name__", type(base).__name__)


def _is_vectorized(function):
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return "qid" in parameters and "return_per_query" in parameters


def _resolve_name(name, options):
    if not isinstance(name, str):
        raise ValueError(f"a metric name must be a string; got {name!r}.")
    text = name.strip().lower()
    base, _, cut = text.partition("@")
    cut = cut if "@" in text else None
    base = _ALIASES.get(base, base)
    if base not in _TABLE:
        raise ValueError(
            f"unknown metric {name!r}: use one of {', '.join(METRIC_NAMES)} "
            "(with '@k' cut-offs where they apply, e.g. 'ndcg@10', 'p@5'), "
            "or a callable."
        )
    function, labels, cut_kind, passed, greater = _TABLE[base]
    value = _parse_cut(base, cut, cut_kind, name)
    kwargs = {key: options[key] for key in passed}
    if base == "err" and options["max_grade"] is None:
        raise ValueError(
            f"metric {name!r} needs the top grade of the relevance scale: pass "
            "max_grade (e.g. max_grade=4 for grades 0..4). It is not guessed from "
            "the labels, since a sample (a fold, a query) may lack the top grade."
        )
    bipartite = None
    if base in ("pauc", "tpr"):
        kwargs = {"max_fpr": value} if base == "pauc" else {"fpr": value}
    elif value is not None:
        kwargs["k"] = value
    if base == "auc":
        bipartite = roc_auc_score
    binary = labels == "binary"
    return ListMetric(
        name.strip(),
        function,
        kwargs,
        binary=binary,
        greater_is_better=greater,
        bipartite_only=base in _BIPARTITE_ONLY,
        skip_nan=kwargs.get("empty") == "skip",
        threshold=options["threshold"] if binary else None,
        bipartite=bipartite,
    )


def resolve_metrics(
    metrics,
    *,
    max_grade=None,
    threshold=1,
    ties="average",
    empty=0.0,
    gain="exp2",
):
    """Resolve metric names and callables into :class:`ListMetric` objects.

    Parameters
    ----------
    metrics : str, callable, list of those, or dict
        A name (see the module docstring), a callable, a list of names and
        callables, or a dict ``{result name: name or callable}``. A callable
        taking ``qid`` and ``return_per_query`` keywords (the functions of
        :mod:`treerank.metrics`, possibly wrapped in :func:`functools.partial`)
        is called once for all queries; any other callable
        ``f(y_true, y_score) -> float`` is called once per query.
    max_grade : float, default=None
        Top grade of the relevance scale (needed by ``"err"``).
    threshold : float or None, default=1
        Binary metrics see ``y >= threshold`` as relevant (None: the labels
        must already be binary).
    ties, empty, gain
        Options of the list metrics (see :func:`treerank.metrics.ndcg_score`).

    Returns
    -------
    metrics : list of ListMetric

    Examples
    --------
    >>> from treerank.bridge._metric_names import resolve_metrics
    >>> [m.name for m in resolve_metrics(["ndcg@10", "map", "p@5"])]
    ['ndcg@10', 'map', 'p@5']
    """
    options = {
        "max_grade": max_grade,
        "threshold": check_threshold(threshold),
        "ties": ties,
        "empty": empty,
        "gain": gain,
    }
    if isinstance(metrics, dict):
        items = list(metrics.items())
    elif isinstance(metrics, str) or callable(metrics):
        items = [(None, metrics)]
    else:
        try:
            items = [(None, m) for m in metrics]
        except TypeError:
            raise ValueError(
                "metrics must be a name, a callable, a list of them or a dict; got "
                f"{metrics!r}."
            ) from None
    if not items:
        raise ValueError("metrics is empty: give at least one metric.")
    resolved = []
    for key, metric in items:
        if isinstance(metric, str):
            spec = _resolve_name(metric, options)
        elif callable(metric):
            spec = ListMetric(
                _callable_name(metric),
                metric,
                {},
                vectorized=_is_vectorized(metric),
            )
        else:
            raise ValueError(f"a metric must be a name or a callable; got {metric!r}.")
        if key is not None:
            if not isinstance(key, str):
                raise ValueError(
                    f"metric names (dict keys) must be strings; got {key!r}."
                )
            spec.name = key
        resolved.append(spec)
    names = [spec.name for spec in resolved]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(
            f"metrics has duplicate names {duplicates}: give a dict to name them."
        )
    return resolved
