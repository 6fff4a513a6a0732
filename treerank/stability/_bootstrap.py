"""Bootstrap estimate of the Kendall instability of a ranking algorithm.

For a ranking algorithm S and a training set D of size n, the instability is
``Stab_n(S) = E[d(s_D, s_D')]``, the expected probabilistic Kendall tau
distance between the scorers learned on two independent training sets. The
bootstrap estimate fits S on B bootstrap samples of the data and averages the
empirical distance between the B(B - 1)/2 pairs of replicate scorers, each
distance being the U-statistic of the Kendall kernel over a reference sample
(:func:`~treerank.metrics.kendall_tau_distance`, O(m log^2 m) per pair).

The module holds the public function, its result object and the module-level
worker that fits one replicate (it must be picklable for process-based and
distributed joblib backends).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import has_fit_parameter

from treerank.metrics._kendall import kendall_tau_distance
from treerank.metrics._roc import roc_auc_score
from treerank.utils.validation import (
    check_bipartite_target,
    check_sample_weight,
    check_scores,
)

__all__ = ["StabilityResult", "bootstrap_stability"]

_MAX_SEED = np.iinfo(np.int32).max
_MAX_DRAWS = 100


class StabilityResult:
    """Result of :func:`bootstrap_stability`.

    Attributes
    ----------
    estimate : float
        Mean Kendall distance over the pairs of replicate scorers: the
        bootstrap estimate of the instability ``Stab_n`` (0 = the same ranking
        whatever the training sample; 1/2 = unrelated rankings without ties).
    std_error : float
        Jackknife standard error of ``estimate`` over the replicates (NaN for
        fewer than 3 replicates); see the Notes of
        :func:`bootstrap_stability`.
    pairwise : ndarray of shape (n_bootstrap, n_bootstrap)
        Symmetric matrix of the distances between replicates (zero diagonal).
    distances : ndarray of shape (n_bootstrap * (n_bootstrap - 1) / 2,)
        The distances of the pairs ``b < b'`` (upper triangle, row by row);
        ``estimate`` is their mean.
    replicate_auc : ndarray of shape (n_bootstrap,)
        AUC of each replicate scorer, out-of-bag or on the test set (see
        ``auc_source``); NaN where undefined (an out-of-bag sample with a
        single class).
    auc_source : {"out-of-bag", "test"}
        Where ``replicate_auc`` was measured.
    n_bootstrap : int
        Number of replicates B.
    estimator_name : str
        Class name of the estimator (the default label of plots).
    n_reference : int
        Number of reference points m on which the distances are computed.
    indices : ndarray of shape (n_bootstrap, n_samples)
        Rows of X in each replicate's bootstrap sample (with repetitions).
    random_state : int
        Seed that reproduces the run: passing it as ``random_state`` with the
        same inputs gives the same result.
    estimators : list of estimators or None
        The fitted replicates, if ``return_estimators=True``.

    See Also
    --------
    bootstrap_stability : The function that returns it.

    Examples
    --------
    >>> from sklearn.linear_model import LogisticRegression
    >>> from treerank.datasets import make_gaussian_mean_shift
    >>> from treerank.stability import bootstrap_stability
    >>> X, y = make_gaussian_mean_shift(300, n_features=2, random_state=0)
    >>> result = bootstrap_stability(LogisticRegression(), X, y, n_bootstrap=4,
    ...                              random_state=0)
    >>> result.distances.shape  # the 4 * 3 / 2 pairs of replicates
    (6,)
    >>> bool(abs(result.estimate - result.distances.mean()) < 1e-15)
    True
    >>> result.auc_source
    'out-of-bag'
    """

    def __init__(
        self,
        *,
        pairwise,
        std_error,
        replicate_auc,
        auc_source,
        n_reference,
        indices,
        random_state,
        estimator_name,
        estimators=None,
    ):
        self.pairwise = pairwise
        n_bootstrap = pairwise.shape[0]
        self.n_bootstrap = n_bootstrap
        self.distances = pairwise[np.triu_indices(n_bootstrap, k=1)]
        self.estimate = float(self.distances.mean())
        self.std_error = float(std_error)
        self.replicate_auc = replicate_auc
        self.auc_source = auc_source
        self.n_reference = int(n_reference)
        self.indices = indices
        self.estimator_name = str(estimator_name)
        self.random_state = int(random_state)
        self.estimators = estimators

    def __repr__(self):
        auc = self.replicate_auc[np.isfinite(self.replicate_auc)]
        auc_text = (
            f"{auc.mean():.4f} (sd {auc.std(ddof=1):.4f}, {self.auc_source})"
            if auc.shape[0] > 1
            else "undefined"
        )
        return (
            f"StabilityResult({self.estimator_name}, estimate={self.estimate:.4f}, "
            f"std_error={self.std_error:.4f}, n_bootstrap={self.n_bootstrap}, "
            f"n_reference={self.n_reference}, replicate AUC {auc_text})"
        )


def _jackknife_std_error(pairwise):
    """Jackknife (leave one replicate out) standard error of the mean distance.

    The leave-one-out mean drops the B - 1 pairs containing replicate b:
    ``U_(b) = (S - r_b) / C(B - 1, 2)`` with S the sum over pairs and r_b the
    sum of row b; the variance estimate is
    ``(B - 1)/B * sum_b (U_(b) - mean U_(.))^2``.
    """
    n_bootstrap = pairwise.shape[0]
    if n_bootstrap < 3:
        return np.nan
    total = pairwise[np.triu_indices(n_bootstrap, k=1)].sum()
    leave_out = (total - pairwise.sum(axis=1)) / (
        (n_bootstrap - 1) * (n_bootstrap - 2) / 2
    )
    variance = (
        (n_bootstrap - 1) / n_bootstrap * np.sum((leave_out - leave_out.mean()) ** 2)
    )
    return float(np.sqrt(variance))


def _num_samples(X):
    """Number of rows of an array, DataFrame or sequence."""
    shape = getattr(X, "shape", None)
    if shape is not None and len(shape) >= 1:
        return int(shape[0])
    try:
        return len(X)
    except TypeError:
        raise ValueError(
            f"Expected an array-like of samples; got {type(X).__name__}."
        ) from None


def _reseed(estimator, seed):
    """Give every ``random_state`` parameter (nested ones too) a fresh seed."""
    rng = np.random.RandomState(seed)
    params = estimator.get_params(deep=True)
    keys = sorted(
        key for key in params if key == "random_state" or key.endswith("__random_state")
    )
    if keys:
        estimator.set_params(**{key: int(rng.randint(_MAX_SEED)) for key in keys})
    return estimator


def _response(estimator, X, response_method):
    if response_method == "decision_function":
        scores = estimator.decision_function(X)
    else:
        scores = np.asarray(estimator.predict_proba(X))[:, -1]
    return check_scores(
        np.asarray(scores, dtype=np.float64).ravel(),
        _num_samples(X),
        input_name=f"{type(estimator).__name__}.{response_method} output",
    )


def _fit_replicate(
    estimator,
    X,
    y,
    sample_weight,
    indices,
    seed,
    X_reference,
    X_eval,
    response_method,
    return_estimator,
):
    """Fit one bootstrap replicate and score the reference (and evaluation) rows.

    Runs in a joblib worker. ``X_eval`` is the test set, or None for the
    out-of-bag rows of X (those not in ``indices``).
    """
    replicate = _reseed(clone(estimator), seed)
    X_boot = _safe_indexing(X, indices)
    y_boot = _safe_indexing(y, indices)
    if sample_weight is None:
        replicate.fit(X_boot, y_boot)
    else:
        replicate.fit(X_boot, y_boot, sample_weight=sample_weight[indices])
    reference_scores = _response(replicate, X_reference, response_method)
    if X_eval is None:
        out_of_bag = np.flatnonzero(
            np.bincount(indices, minlength=_num_samples(X)) == 0
        )
        eval_scores = (
            _response(replicate, _safe_indexing(X, out_of_bag), response_method)
            if out_of_bag.shape[0]
            else np.empty(0)
        )
    else:
        out_of_bag = None
        eval_scores = _response(replicate, X_eval, response_method)
    return (
        reference_scores,
        eval_scores,
        out_of_bag,
        replicate if return_estimator else None,
    )


def _auc_or_nan(y01, scores, sample_weight):
    """Weighted AUC, or NaN when a class has no positive weight."""
    if y01.shape[0] == 0:
        return np.nan
    w = np.ones(y01.shape[0]) if sample_weight is None else sample_weight
    if not (w[y01 == 1].sum() > 0 and w[y01 == 0].sum() > 0):
        return np.nan
    return float(roc_auc_score(y01, scores, sample_weight=sample_weight))


def _draw_indices(rng, y01, sample_weight):
    """Bootstrap row indices whose sample holds both classes with positive weight."""
    n_samples = y01.shape[0]
    for _ in range(_MAX_DRAWS):
        indices = rng.randint(0, n_samples, n_samples)
        weights = sample_weight[indices]
        labels = y01[indices]
        if weights[labels == 1].sum() > 0 and weights[labels == 0].sum() > 0:
            return indices
    raise ValueError(
        f"{_MAX_DRAWS} consecutive bootstrap samples held a single class; the data "
        "have too few samples of one class for a bootstrap."
    )


def _check_seed(random_state):
    """An int seed, drawn from ``random_state`` unless it is one already."""
    if isinstance(random_state, Integral) and not isinstance(random_state, bool):
        if not 0 <= random_state <= 2**32 - 1:
            raise ValueError(
                f"random_state must be in [0, 2**32 - 1]; got {random_state}."
            )
        return int(random_state)
    if random_state is None or isinstance(random_state, np.random.RandomState):
        return int(check_random_state(random_state).randint(_MAX_SEED))
    raise ValueError(
        "random_state must be None, an int or a numpy RandomState; got "
        f"{type(random_state).__name__}."
    )


def bootstrap_stability(
    estimator,
    X,
    y,
    *,
    n_bootstrap=20,
    X_reference=None,
    X_test=None,
    y_test=None,
    sample_weight=None,
    response_method="decision_function",
    return_estimators=False,
    random_state=None,
    n_jobs=None,
):
    """Bootstrap estimate of the Kendall instability of a ranking algorithm.

    The estimator is cloned and fitted on ``n_bootstrap`` bootstrap samples of
    ``(X, y)`` (n rows drawn with replacement); each replicate scores a
    reference sample, and the instability is estimated by the mean, over the
    B(B - 1)/2 pairs of replicates, of the empirical probabilistic Kendall tau
    distance between their rankings of the reference points:
    ``2 / (B (B - 1)) * sum_{b < b'} d_hat(s_b, s_b')``, where ``d_hat`` is the
    U-statistic of the kernel of :func:`~treerank.metrics.kendall_tau_distance`
    (a discordant pair counts 1, a pair tied by one scorer only 1/2). A stable
    algorithm ranks the reference points the same way whatever its training
    sample, and scores near 0.

    Read more in the :ref:`User Guide <stability>`.

    Parameters
    ----------
    estimator : estimator
        An unfitted estimator with ``fit`` and ``decision_function`` (or
        ``predict_proba`` with ``response_method="predict_proba"``): a
        :class:`~treerank.TreeRank`, a :class:`~treerank.RankingForest`, a
        scikit-learn classifier or pipeline. It is cloned, never fitted in
        place. Every ``random_state`` parameter it has (nested ones included)
        is given a new seed for each replicate, drawn from ``random_state``,
        so that the algorithm's own randomization counts in its instability.
    X : array-like of shape (n_samples, n_features)
        Training data (a DataFrame is indexed by rows and passed as is).
    y : array-like of shape (n_samples,)
        Binary labels (the larger value, or True, is positive).
    n_bootstrap : int, default=20
        Number of replicates B (at least 2; 3 for a standard error).
    X_reference : array-like of shape (n_reference, n_features) or None, default=None
        Points whose rankings are compared; X if None (then weighted by
        ``sample_weight``, else unweighted).
    X_test, y_test : array-like or None, default=None
        If given, each replicate's AUC is measured on this test set; otherwise
        on its out-of-bag rows of X (those its bootstrap sample missed).
    sample_weight : array-like of shape (n_samples,) or None, default=None
        Non-negative weights of the rows of X: passed to each replicate's
        ``fit`` (restricted to its sample, so the estimator must accept
        ``sample_weight``), used as pair weights when the reference is X,
        and in the out-of-bag AUCs.
    response_method : {"decision_function", "predict_proba"}, \
            default="decision_function"
        The scorer: ``decision_function``, or the probability of the positive
        class (the last column of ``predict_proba``).
    return_estimators : bool, default=False
        Keep the fitted replicates in the result (memory: B fitted models).
    random_state : int, RandomState instance or None, default=None
        Seed of the bootstrap draws and of the replicates' seeds, all drawn
        before the replicates are dispatched, so the result does not depend
        on ``n_jobs`` or on the joblib backend. The int actually used is
        stored in the result.
    n_jobs : int or None, default=None
        Replicates fitted in parallel through joblib (``-1`` for all cores);
        any joblib backend works, e.g. Dask with
        ``joblib.parallel_config(backend="dask")``.

    Returns
    -------
    result : StabilityResult
        ``estimate``, ``std_error``, ``pairwise`` (B x B), ``distances``,
        ``replicate_auc``, ``auc_source``, ``n_bootstrap``, ``n_reference``,
        ``indices``, ``random_state``, ``estimator_name`` and ``estimators``.

    See Also
    --------
    treerank.metrics.kendall_tau_distance : The distance between two scorers.
    treerank.plotting.plot_stability : Plot the result.

    Notes
    -----
    **Standard error.** The B(B - 1)/2 distances are not independent (every
    replicate appears in B - 1 pairs), so their standard deviation divided by
    the square root of the number of pairs would understate the error. The
    estimate is a U-statistic of order 2 in the replicates, and
    ``std_error`` is its jackknife standard error: the mean distance is
    recomputed leaving out each replicate in turn (dropping its B - 1 pairs),
    and the variance estimate is ``(B - 1)/B`` times the sum of the squared
    deviations of these B leave-one-out means. The jackknife is consistent
    for U-statistics and accounts for the shared replicates. It measures the
    Monte Carlo error of using B replicates, given the data and the reference
    sample: how much the estimate would move with other bootstrap draws. It
    does not include the variability of the data set itself.

    **Degenerate inputs.** If every replicate scores all the reference points
    equally (for instance a tree fitted on a handful of rows is a single
    leaf), no ranking was learned and a ``ValueError`` is raised: the mean
    distance would be 0, which would read as perfect stability. When only
    some replicates are constant, the distances are computed as usual (a pair
    tied by one scorer only counts 1/2).

    **Cost.** B fits and B scorings of the reference sample (and of the
    evaluation rows), then B(B - 1)/2 distances in O(m log^2 m) each, for m
    reference points; no m x m matrix is formed.

    References
    ----------
    .. [1] S. Clémençon, M. Depecker and N. Vayatis, "Ranking forests",
       Journal of Machine Learning Research 14, 2013.
    .. [2] J. N. Arvesen, "Jackknifing U-statistics", The Annals of
       Mathematical Statistics 40(6), 1969.

    Examples
    --------
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.stability import bootstrap_stability
    >>> X, y = make_nested_squares(600, random_state=0)
    >>> result = bootstrap_stability(
    ...     TreeRank(max_depth=3), X, y, n_bootstrap=5, random_state=0)
    >>> result.pairwise.shape
    (5, 5)
    >>> bool(0 < result.estimate < 0.5)
    True
    >>> result.replicate_auc.shape
    (5,)
    """
    if not hasattr(estimator, "fit"):
        raise ValueError(
            f"estimator must have a fit method; got {type(estimator).__name__}."
        )
    if response_method not in ("decision_function", "predict_proba"):
        raise ValueError(
            "response_method must be 'decision_function' or 'predict_proba'; got "
            f"{response_method!r}."
        )
    if not hasattr(estimator, response_method):
        raise ValueError(
            f"estimator {type(estimator).__name__} has no {response_method} method: "
            "a scorer is needed to compare rankings."
        )
    if (
        isinstance(n_bootstrap, bool)
        or not isinstance(n_bootstrap, Integral)
        or n_bootstrap < 2
    ):
        raise ValueError(
            f"n_bootstrap must be an int >= 2 (pairs of replicates are compared); "
            f"got {n_bootstrap!r}."
        )
    n_bootstrap = int(n_bootstrap)
    n_samples = _num_samples(X)
    y01, _ = check_bipartite_target(y)
    y = np.asarray(y)
    if y01.shape[0] != n_samples:
        raise ValueError(f"y has {y01.shape[0]} elements but X has {n_samples} rows.")
    weights = check_sample_weight(sample_weight, n_samples)
    if sample_weight is not None and not has_fit_parameter(estimator, "sample_weight"):
        raise ValueError(
            f"sample_weight was given but {type(estimator).__name__}.fit does not "
            "accept sample_weight."
        )
    if X_reference is None:
        X_reference = X
        reference_weight = None if sample_weight is None else weights
    else:
        reference_weight = None
    n_reference = _num_samples(X_reference)
    if n_reference < 2:
        raise ValueError(
            f"X_reference must have at least 2 rows to compare rankings; got "
            f"{n_reference}."
        )
    if (X_test is None) != (y_test is None):
        raise ValueError("X_test and y_test must be given together.")
    y_test01 = None
    if X_test is not None:
        y_test01, _ = check_bipartite_target(y_test, input_name="y_test")
        if y_test01.shape[0] != _num_samples(X_test):
            raise ValueError(
                f"y_test has {y_test01.shape[0]} elements but X_test has "
                f"{_num_samples(X_test)} rows."
            )

    seed = _check_seed(random_state)
    rng = np.random.RandomState(seed)
    # every draw happens here, before dispatch: the result does not depend on
    # n_jobs or on the joblib backend
    all_indices = [_draw_indices(rng, y01, weights) for _ in range(n_bootstrap)]
    seeds = rng.randint(_MAX_SEED, size=n_bootstrap)
    # Fitting a treerank estimator runs much Python (it holds the GIL), so
    # processes parallelize it better than threads; `prefer` leaves the final
    # say to an enclosing joblib.parallel_config.
    results = Parallel(n_jobs=n_jobs, prefer="processes")(
        delayed(_fit_replicate)(
            estimator,
            X,
            y,
            None if sample_weight is None else weights,
            indices,
            int(replicate_seed),
            X_reference,
            X_test,
            response_method,
            return_estimators,
        )
        for indices, replicate_seed in zip(all_indices, seeds)
    )

    reference_scores = [result[0] for result in results]
    if all(np.all(scores == scores[0]) for scores in reference_scores):
        raise ValueError(
            f"Every one of the {n_bootstrap} replicates of "
            f"{type(estimator).__name__} scored all {n_reference} reference points "
            "equally: no ranking was learned (too few samples, "
            f"n_samples={n_samples}, for the estimator to split or fit anything, or "
            "identical reference points), so the instability of the rankings is "
            "undefined rather than 0. Use more data, a less constrained estimator "
            "or other reference points."
        )
    pairwise = np.zeros((n_bootstrap, n_bootstrap))
    for b in range(n_bootstrap):
        for c in range(b + 1, n_bootstrap):
            pairwise[b, c] = pairwise[c, b] = kendall_tau_distance(
                reference_scores[b],
                reference_scores[c],
                sample_weight=reference_weight,
            )

    replicate_auc = np.empty(n_bootstrap)
    for b, (_, eval_scores, out_of_bag, _) in enumerate(results):
        if X_test is not None:
            replicate_auc[b] = _auc_or_nan(y_test01, eval_scores, None)
        else:
            replicate_auc[b] = _auc_or_nan(
                y01[out_of_bag],
                eval_scores,
                None if sample_weight is None else weights[out_of_bag],
            )
    return StabilityResult(
        pairwise=pairwise,
        std_error=_jackknife_std_error(pairwise),
        replicate_auc=replicate_auc,
        auc_source="out-of-bag" if X_test is None else "test",
        n_reference=n_reference,
        indices=np.stack(all_indices),
        random_state=seed,
        estimator_name=type(estimator).__name__,
        estimators=[result[3] for result in results] if return_estimators else None,
    )
