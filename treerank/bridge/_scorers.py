"""scikit-learn scorers for the list metrics, with ``qid`` as routed metadata.

A list metric needs the query id of every test document. scikit-learn passes
such per-sample metadata to scorers through its metadata routing: a scorer
declares that its ``score`` call *requests* ``qid``, and ``cross_validate``,
``GridSearchCV``, ... then give it the ``qid`` of the test fold. The scorers
built by :func:`make_list_scorer` request ``qid`` by default (like
``GroupKFold`` requests ``groups``: the metric is undefined without it).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.utils.metadata_routing import MetadataRequest

from treerank.bridge._metric_names import resolve_metrics
from treerank.bridge._response import RESPONSE_METHODS, get_scores

__all__ = ["ListScorer", "make_list_scorer"]

_DEFAULTS = {
    "max_grade": None,
    "threshold": 1,
    "ties": "average",
    "empty": 0.0,
    "gain": "exp2",
}


def _check_alias(qid):
    if qid is None or isinstance(qid, bool) or (isinstance(qid, str) and qid):
        return qid
    raise ValueError(
        "qid must be True (request qid), False (do not request it), None, or a "
        f"string (the name of the metadata to use as qid, e.g. 'groups'); got {qid!r}."
    )


class ListScorer:
    """A scikit-learn scorer of a list metric: ``scorer(estimator, X, y, qid=qid)``.

    Built by :func:`make_list_scorer`. Calling it scores ``X`` with the
    estimator and returns the mean of the metric over the queries of ``qid``
    (negated for a loss such as ``"pd"``, so that greater is always better, as
    scikit-learn's ``neg_*`` scorers).

    Parameters
    ----------
    metric : str or callable
        A metric name (see :func:`treerank.bridge.evaluate`) or a callable.
    max_grade, threshold, ties, empty, gain
        Options of the metric (see :func:`treerank.bridge.evaluate`).
    response_method : str, default="auto"
        How the estimator scores documents (see :func:`evaluate`).

    Attributes
    ----------
    name : str
        The metric's name (prefixed ``neg_`` for a loss).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LinearRegression
    >>> from treerank.bridge import make_list_scorer
    >>> X = np.array([[0.0], [1.0], [2.0], [0.0], [3.0]])
    >>> y, qid = np.array([0, 1, 2, 1, 0]), np.array([1, 1, 1, 2, 2])
    >>> model = LinearRegression().fit(X, X.ravel())  # scores = X
    >>> scorer = make_list_scorer("map")
    >>> scorer(model, X, y, qid=qid)  # (1 + 1) / 2 and 1/2: mean 0.75
    0.75
    """

    def __init__(
        self,
        metric,
        *,
        max_grade=None,
        threshold=1,
        ties="average",
        empty=0.0,
        gain="exp2",
        response_method="auto",
    ):
        if response_method not in RESPONSE_METHODS:
            raise ValueError(
                f"response_method must be one of {RESPONSE_METHODS}; got "
                f"{response_method!r}."
            )
        if isinstance(metric, (list, tuple, dict)):
            raise ValueError(
                "a list scorer computes one metric: give one name or callable (use "
                "a dict of scorers for several metrics)."
            )
        (self._metric,) = resolve_metrics(
            metric,
            max_grade=max_grade,
            threshold=threshold,
            ties=ties,
            empty=empty,
            gain=gain,
        )
        if self._metric.bipartite_only:
            raise ValueError(
                f"metric {metric!r} is not a list metric (it is not computed per "
                "query); use scoring='roc_auc' or a list metric."
            )
        self._options = {
            "max_grade": max_grade,
            "threshold": threshold,
            "ties": ties,
            "empty": empty,
            "gain": gain,
        }
        self._response_method = response_method
        self._qid_request = True
        sign = "" if self._metric.greater_is_better else "neg_"
        self.name = sign + self._metric.name

    def __repr__(self):
        options = "".join(
            f", {key}={value!r}"
            for key, value in self._options.items()
            if value != _DEFAULTS[key]
        )
        return f"make_list_scorer({self._metric.name!r}{options})"

    def __call__(self, estimator, X, y_true, qid=None):
        """Mean of the metric over the queries of ``X`` (negated for a loss).

        Parameters
        ----------
        estimator : object
            A fitted estimator.
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y_true : array-like of shape (n_samples,)
            Relevance labels.
        qid : array-like of shape (n_samples,)
            Query id of every row (routed by scikit-learn; required).

        Returns
        -------
        score : float
        """
        if qid is None:
            raise ValueError(
                f"the list scorer {self.name!r} needs the query id of every test "
                "document and got none. In cross-validation, enable metadata "
                "routing (sklearn.set_config(enable_metadata_routing=True) or "
                "sklearn.config_context) and pass qid as metadata, e.g. "
                "cross_validate(..., cv=GroupKFold(), params={'qid': qid, "
                "'groups': qid}); groups=qid alone only reaches the splitter. "
                "Called directly: scorer(estimator, X, y, qid=qid)."
            )
        scores = get_scores(estimator, X, self._response_method)
        mean, _ = self._metric.compute(y_true, scores, qid)
        return mean if self._metric.greater_is_better else -mean

    def set_score_request(self, *, qid=True):
        """Say whether and under which name the scorer requests ``qid``.

        Parameters
        ----------
        qid : bool, None or str, default=True
            True: request the metadata named ``qid``; a string: use the
            metadata of that name as ``qid`` (``qid="groups"`` lets the
            ``groups`` passed for a group splitter serve as query ids too);
            False or None: do not request it (as for any scikit-learn scorer,
            None raises an error if ``qid`` is passed anyway).

        Returns
        -------
        self : ListScorer
        """
        self._qid_request = _check_alias(qid)
        return self

    def get_metadata_routing(self):
        """The metadata request of the scorer: ``score`` requests ``qid``.

        Returns
        -------
        request : sklearn.utils.metadata_routing.MetadataRequest
        """
        request = MetadataRequest(owner=self)
        request.score.add_request(param="qid", alias=self._qid_request)
        return request


def make_list_scorer(
    metric,
    *,
    max_grade=None,
    threshold=1,
    ties="average",
    empty=0.0,
    gain="exp2",
    response_method="auto",
):
    """Make a scikit-learn scorer of a list metric that receives ``qid`` by routing.

    The scorer requests ``qid`` as metadata, so that with scikit-learn's
    metadata routing enabled, ``cross_validate``, ``cross_val_score``,
    ``GridSearchCV``, ... pass it the query ids of each test fold.

    Parameters
    ----------
    metric : str or callable
        A metric name with its cut-off (``"ndcg@10"``, ``"map"``, ``"err"``,
        ``"p@5"``, ``"r@5"``, ``"mrr"``, ``"auc"`` (per query), ``"pd"``, ...;
        see :func:`evaluate`) or a callable (see :func:`evaluate`).
    max_grade : float, default=None
        Top grade of the relevance scale (required by ``"err"``).
    threshold : float or None, default=1
        Binary metrics count ``y >= threshold`` as relevant.
    ties : {"average", "pessimistic", "optimistic", "stable"}, default="average"
    empty : float or "skip", default=0.0
    gain : {"exp2", "linear"}, default="exp2"
    response_method : {"auto", "decision_function", "predict_proba", \
"predict"}, default="auto"

    Returns
    -------
    scorer : ListScorer
        ``scorer(estimator, X, y, qid=qid)`` returns the mean over queries
        (negated for a loss).

    See Also
    --------
    evaluate : Per-query values and confidence intervals.

    Notes
    -----
    The recipe for grouped cross-validation (every query entirely in one
    fold, the scorer told the test fold's queries)::

        import sklearn
        from sklearn.model_selection import GroupKFold, cross_validate

        with sklearn.config_context(enable_metadata_routing=True):
            model = LinearSurrogateRanker(loss="slam").set_fit_request(qid=True)
            cross_validate(
                model, X, y, cv=GroupKFold(5), scoring=make_list_scorer("ndcg@10"),
                params={"qid": qid, "groups": qid},
            )

    ``GroupKFold`` requests ``groups``, the scorer and the ranker's ``fit``
    request ``qid``. In scikit-learn, ``cross_validate(..., groups=qid)``
    without routing gives ``groups`` to the splitter only: the scorer then
    receives no ``qid`` and raises an error saying so (it never silently
    scores the fold as a single list). To pass the array once, alias it:
    ``make_list_scorer(...).set_score_request(qid="groups")`` and
    ``set_fit_request(qid="groups")``, then ``params={"groups": qid}``.
    ``GridSearchCV(...).fit(X, y, qid=qid, groups=qid)`` works the same way.

    Examples
    --------
    >>> import sklearn
    >>> from sklearn.model_selection import GroupKFold, cross_validate
    >>> from treerank import TreeRank
    >>> from treerank.bridge import make_list_scorer
    >>> from treerank.datasets import make_learning_to_rank
    >>> X, y, qid = make_learning_to_rank(30, random_state=0)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     cv = cross_validate(
    ...         TreeRank(max_depth=2, random_state=0), X, y >= 1,
    ...         cv=GroupKFold(3), scoring=make_list_scorer("ndcg@10"),
    ...         params={"qid": qid, "groups": qid},
    ...     )
    >>> cv["test_score"].shape
    (3,)
    """
    return ListScorer(
        metric,
        max_grade=max_grade,
        threshold=threshold,
        ties=ties,
        empty=empty,
        gain=gain,
        response_method=response_method,
    )
