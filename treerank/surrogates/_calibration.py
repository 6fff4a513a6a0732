"""Calibration toolkit: Bayes rankings, inner-risk minimizers, gaps, regret bounds.

Everything here works on one list of ``n`` items and a finite distribution of
its labels, ``distribution = [(y, p), ...]``. A *metric* is either a
:class:`treerank.metrics.PositionalMetric` or any callable
``metric(y, ranking) -> float`` (to maximize); a *ranking* is the tuple of item
indices in rank order, best first. With ``fractions.Fraction`` probabilities
and labels (and a metric that computes exactly, such as ``PositionalMetric``
with integer weights, or an exact callable) the expected values, optima, gaps
and noise-condition tests are exact.

Brute force enumerates the ``n!`` rankings and is limited to ``n <= 8``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import math
import numbers
from fractions import Fraction

import networkx as nx
import numpy as np
from scipy.optimize import minimize

from treerank.metrics._positional import check_distribution, weight_gap_norm
from treerank.surrogates._base import prepare_lists
from treerank.surrogates._decoders import all_rankings, check_brute_force

__all__ = [
    "bayes_optimal_rankings",
    "calibration_gap",
    "diagonal_order_is_ap_optimal",
    "expected_map_target",
    "expected_metric",
    "expected_metric_of_scores",
    "expected_preferences",
    "majority_preferences_acyclic",
    "metric_regret",
    "minimize_inner_risk",
    "order_preserving_margin",
    "preserves_majority_preferences",
    "regret_bound",
    "weight_gap_norm",
]


# ---------------------------------------------------------------------------
# input checks
# ---------------------------------------------------------------------------


def _is_exact(value):
    return isinstance(value, numbers.Rational) and not isinstance(value, bool)


def _metric_function(metric):
    value = getattr(metric, "value", None)
    if callable(value):
        return value
    if callable(metric):
        return metric
    raise ValueError(
        "metric must be a PositionalMetric or a callable metric(y, ranking) -> float; "
        f"got {metric!r}."
    )


def _n_items(pairs):
    shape = pairs[0][0].shape
    if len(shape) < 1:
        raise ValueError("label vectors must be at least one-dimensional.")
    return shape[0]


def _float(value):
    return float(value)


# ---------------------------------------------------------------------------
# expected metrics and Bayes-optimal rankings
# ---------------------------------------------------------------------------


def expected_metric(metric, distribution, ranking):
    """Expected value ``sum_y p(y) metric(y, ranking)`` of a ranking.

    Parameters
    ----------
    metric : PositionalMetric or callable
        ``metric(y, ranking) -> float`` (higher is better).
    distribution : list of (array-like, probability)
        Finite distribution of the list's labels.
    ranking : array-like of shape (n_items,)
        Item indices, best first.

    Returns
    -------
    value : float or Fraction
        Exact when the metric values and probabilities are.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from treerank.metrics import PositionalMetric
    >>> from treerank.surrogates import expected_metric
    >>> one, zero = Fraction(1), Fraction(0)
    >>> dist = [([one, zero], Fraction(1, 3)), ([zero, one], Fraction(2, 3))]
    >>> expected_metric(PositionalMetric.precision_at_k(2, 1), dist, [1, 0])
    Fraction(2, 3)
    """
    pairs = check_distribution(distribution)
    func = _metric_function(metric)
    ranking = tuple(int(i) for i in np.asarray(ranking).tolist())
    return sum((p * func(y, ranking) for y, p in pairs), start=Fraction(0))


def _all_expected_values(metric, pairs, rankings):
    """Expected metric of every ranking (vectorized for positional metrics)."""
    if hasattr(metric, "expected_utility") and hasattr(metric, "phi"):
        try:
            U = np.asarray(metric.expected_utility(pairs), dtype=np.float64)
            phi = np.asarray(metric.phi, dtype=np.float64)
            offset = float(sum(p * _float(metric.offset(y)) for y, p in pairs))
            return offset + U[rankings] @ phi, True
        except (TypeError, AttributeError):
            pass
    func = _metric_function(metric)
    values = [
        sum((p * func(y, tuple(r)) for y, p in pairs), start=Fraction(0))
        for r in rankings.tolist()
    ]
    return values, False


def bayes_optimal_rankings(metric, distribution, *, atol=None):
    """Best expected value and all rankings attaining it (brute force).

    Parameters
    ----------
    metric : PositionalMetric or callable
        ``metric(y, ranking) -> float`` (higher is better).
    distribution : list of (array-like, probability)
    atol : float or None, default=None
        Tolerance on expected values; None means exact comparison when the
        values are exact (Fractions) and ``1e-12`` relative otherwise.

    Returns
    -------
    best_value : float or Fraction
    rankings : list of tuple of int
        Every optimal ranking, in lexicographic order.

    Notes
    -----
    Enumerates the ``n!`` rankings (n <= 8). For a ``PositionalMetric`` the
    values are computed from the expected utility in one matrix product, and
    the optimal ones recomputed exactly.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from treerank.surrogates import bayes_optimal_rankings
    >>> def first_relevant(y, ranking):
    ...     return y[ranking[0]]
    >>> dist = [([1, 0, 0], F(1, 2)), ([0, 1, 0], F(1, 2))]
    >>> value, best = bayes_optimal_rankings(first_relevant, dist)
    >>> value, best[:2]
    (Fraction(1, 2), [(0, 1, 2), (0, 2, 1)])
    """
    pairs = check_distribution(distribution)
    n = _n_items(pairs)
    check_brute_force(n, "bayes_optimal_rankings")
    rankings = np.array(all_rankings(n))
    values, vectorized = _all_expected_values(metric, pairs, rankings)
    if vectorized:
        values = np.asarray(values)
        top = values.max()
        tol = 1e-9 * max(1.0, abs(top)) if atol is None else atol
        candidates = np.flatnonzero(values >= top - tol)
        exact_values = [expected_metric(metric, pairs, rankings[c]) for c in candidates]
        return _select(exact_values, [tuple(rankings[c]) for c in candidates], atol)
    return _select(values, [tuple(r) for r in rankings.tolist()], atol)


def _select(values, rankings, atol):
    exact = all(_is_exact(v) for v in values)
    best = max(values)
    if atol is None:
        tol = 0 if exact else 1e-12 * max(1.0, abs(float(best)))
    else:
        tol = atol
    chosen = [r for v, r in zip(values, rankings) if v >= best - tol]
    best_value = best if exact else float(best)
    return best_value, sorted(tuple(int(i) for i in r) for r in chosen)


def _tie_blocks(scores, tie_tol):
    """Blocks of items with (nearly) equal scores, in decreasing score order."""
    scores = np.asarray(scores, dtype=np.float64)
    order = np.argsort(-scores, kind="stable")
    blocks = [[int(order[0])]]
    for prev, item in itertools.pairwise(order):
        a, b = scores[prev], scores[item]
        same = a == b or (
            math.isfinite(a) and math.isfinite(b) and abs(a - b) <= tie_tol
        )
        if same:
            blocks[-1].append(int(item))
        else:
            blocks.append([int(item)])
    return blocks


def expected_metric_of_scores(metric, distribution, scores, *, tie_tol=0.0):
    """Expected metric of the ranking by scores, ties averaged uniformly.

    ``R(Delta, s) = (1/|argsort(s)|) sum_{sigma in argsort(s)} E[metric(y, sigma)]``:
    the expectation over uniformly random tie-breaking (Calauzènes et al.).

    Parameters
    ----------
    metric : PositionalMetric or callable
    distribution : list of (array-like, probability)
    scores : array-like of shape (n_items,)
        May contain ``+inf`` / ``-inf`` (minimizers that are not attained).
    tie_tol : float, default=0.0
        Finite scores closer than ``tie_tol`` count as tied (for numerical
        minimizers).

    Returns
    -------
    value : float or Fraction

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from treerank.surrogates import expected_metric_of_scores
    >>> def first_relevant(y, ranking):
    ...     return y[ranking[0]]
    >>> dist = [([1, 0], F(1, 4)), ([0, 1], F(3, 4))]
    >>> expected_metric_of_scores(first_relevant, dist, [0.0, 0.0])
    Fraction(1, 2)
    """
    pairs = check_distribution(distribution)
    scores = np.asarray(scores, dtype=np.float64)
    if scores.shape != (_n_items(pairs),) or np.any(np.isnan(scores)):
        raise ValueError(
            f"scores must be a vector of {_n_items(pairs)} numbers (no NaN)."
        )
    blocks = _tie_blocks(scores, tie_tol)
    count = math.prod(math.factorial(len(b)) for b in blocks)
    if count > 40320:
        raise ValueError(
            f"the ties of the scores allow {count} rankings; at most 40320 are "
            "averaged."
        )
    total = Fraction(0)
    for parts in itertools.product(*(itertools.permutations(b) for b in blocks)):
        ranking = tuple(i for part in parts for i in part)
        total = total + expected_metric(metric, pairs, ranking)
    if _is_exact(total):
        return Fraction(total) / count
    return float(total) / count


def metric_regret(metric, distribution, scores, *, tie_tol=0.0):
    """Metric regret ``Rbar(Delta) - R(Delta, s)`` of scores (ties averaged).

    Parameters
    ----------
    metric : PositionalMetric or callable
    distribution : list of (array-like, probability)
    scores : array-like of shape (n_items,)
    tie_tol : float, default=0.0

    Returns
    -------
    regret : float or Fraction

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from treerank.surrogates import metric_regret
    >>> def first_relevant(y, ranking):
    ...     return y[ranking[0]]
    >>> dist = [([1, 0], F(1, 4)), ([0, 1], F(3, 4))]
    >>> metric_regret(first_relevant, dist, [1.0, 0.0])
    Fraction(1, 2)
    """
    best, _ = bayes_optimal_rankings(metric, distribution)
    return best - expected_metric_of_scores(
        metric, distribution, scores, tie_tol=tie_tol
    )


# ---------------------------------------------------------------------------
# inner risks of surrogates
# ---------------------------------------------------------------------------


def _expected_loss_target(loss, pairs):
    """Expected utility U for losses linear in their target, else None."""
    labels = [(np.asarray(y, dtype=np.float64), float(p)) for y, p in pairs]
    if hasattr(loss, "expected_utility"):
        return loss.expected_utility(labels)
    if getattr(loss, "linear_in_target", False) and hasattr(loss, "expected_target"):
        return loss.expected_target(labels)
    return None


def _numerical_inner_minimum(loss, pairs, *, smoothing=1e-3, maxiter=20000):
    labels = np.stack([np.asarray(y, dtype=np.float64) for y, _ in pairs])
    p = np.array([float(q) for _, q in pairs])
    n = labels.shape[1]
    smooth = not getattr(loss, "is_smooth", True)

    def objective(s):
        tiled = np.tile(s, (labels.shape[0], 1))
        if smooth:
            flat_s, flat_t, groups, _ = prepare_lists(tiled, labels, None)
            flat_t = loss._check_target(flat_t, groups)
            per, grad = loss._smooth_value_and_grad(flat_s, flat_t, groups, smoothing)
            grad = grad.reshape(tiled.shape)
        else:
            per, grad = loss.value_and_grad(tiled, labels, return_per_query=True)
        return float(p @ per), p @ grad

    result = minimize(
        objective,
        np.zeros(n),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": maxiter, "gtol": 1e-11, "ftol": 1e-15},
    )
    return result.x


def minimize_inner_risk(loss, distribution, *, method="auto"):
    """Minimizer ``s*`` of the inner risk ``sum_y p(y) l(s, y)`` of one list.

    Parameters
    ----------
    loss : surrogate loss
        A template loss (its target is the label vector itself), an
        instantiated loss (target ``u(y)``) or any list surrogate of this
        package (target ``y``).
    distribution : list of (array-like, probability)
    method : {"auto", "closed_form", "numerical"}, default="auto"
        ``"closed_form"`` uses the loss's ``argmin`` of the expected utility,
        with ``+inf`` / ``-inf`` entries when the minimizer is not attained
        (they sort correctly); ``"numerical"`` runs L-BFGS on the exact inner
        risk (hinge-type losses: on a smoothing with ``mu = 1e-3``); ``"auto"``
        picks the closed form when it exists.

    Returns
    -------
    s_star : ndarray of shape (n_items,)

    Examples
    --------
    >>> from treerank.surrogates import PointwiseSquared, minimize_inner_risk
    >>> dist = [([2.0, 0.0], 0.5), ([0.0, 1.0], 0.5)]
    >>> minimize_inner_risk(PointwiseSquared(), dist)
    array([1. , 0.5])
    """
    if method not in ("auto", "closed_form", "numerical"):
        raise ValueError(
            f"method must be 'auto', 'closed_form' or 'numerical'; got {method!r}."
        )
    pairs = check_distribution(distribution)
    U = None
    if method != "numerical" and hasattr(loss, "argmin"):
        U = _expected_loss_target(loss, pairs)
    if U is not None:
        return loss.argmin(U, allow_infinite=True)
    if method == "closed_form":
        raise ValueError(f"{type(loss).__name__} has no closed-form inner minimizer.")
    return _numerical_inner_minimum(loss, pairs)


def calibration_gap(loss, metric, distribution, *, decoder=None, tie_tol=1e-8):
    """Metric regret of the decoded minimizer of the surrogate's inner risk.

    ``Rbar(Delta) - R(Delta, decode(s*))``: 0 for every distribution iff the
    surrogate (with this decoder) is calibrated for the metric on it.

    Parameters
    ----------
    loss : surrogate loss
    metric : PositionalMetric or callable
    distribution : list of (array-like, probability)
    decoder : callable or None, default=None
        ``decoder(s_star) -> ranking``; None ranks by the scores with ties
        (closer than ``tie_tol``) averaged.
    tie_tol : float, default=1e-8

    Returns
    -------
    gap : float or Fraction

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from treerank.metrics import PositionalMetric
    >>> from treerank.surrogates import PointwiseSquared, calibration_gap
    >>> dist = [([2, 0, 1], F(1, 2)), ([0, 2, 1], F(1, 2))]
    >>> loss = PointwiseSquared().instance("dcg")
    >>> calibration_gap(loss, PositionalMetric.dcg(3), dist)
    0.0
    """
    pairs = check_distribution(distribution)
    s_star = minimize_inner_risk(loss, pairs)
    best, _ = bayes_optimal_rankings(metric, pairs)
    if decoder is None:
        achieved = expected_metric_of_scores(metric, pairs, s_star, tie_tol=tie_tol)
    else:
        achieved = expected_metric(metric, pairs, decoder(s_star))
    return best - achieved


def regret_bound(loss, metric, surrogate_regret, *, U=None):
    """The bound ``c * C_phi(2) * sqrt(surrogate_regret)`` on the metric regret.

    Parameters
    ----------
    loss : template or instantiated loss
        Gives the regret constant ``c`` (``loss.regret_constant(U)``).
    metric : PositionalMetric or array-like
        Gives ``C_phi(2)`` (``metric.weight_gap_norm(2)``, or the weights ``phi``).
    surrogate_regret : float
        ``L(Delta, s) - Lmin(Delta)`` (see ``loss.inner_regret``).
    U : array-like or None, default=None
        Expected utility (the pairwise logistic and exponential constants need
        ``||U||_inf``).

    Returns
    -------
    bound : float

    Examples
    --------
    >>> from treerank.metrics import PositionalMetric
    >>> from treerank.surrogates import PointwiseSquared, regret_bound
    >>> round(regret_bound(PointwiseSquared(), PositionalMetric.dcg(3), 2.0), 6)
    1.0
    """
    constant = loss.regret_constant(U)
    if hasattr(metric, "weight_gap_norm"):
        cphi = metric.weight_gap_norm(2)
    else:
        cphi = weight_gap_norm(metric, 2)
    return float(constant * cphi * math.sqrt(max(0.0, float(surrogate_regret))))


def order_preserving_margin(loss, U, i, j):
    """What a loss pays for scoring item ``i`` no higher than item ``j``.

    ``inf_{s: s_i <= s_j} l(s, U) - inf_s l(s, U)`` (Theorem 4.2 (a)).

    Positive whenever ``U_i > U_j`` for an order-preserving loss. Computed by
    constrained minimization (SLSQP) from the closed-form minimizer.

    Parameters
    ----------
    loss : template loss
    U : array-like of shape (n_items,)
        Expected utility.
    i, j : int
        Items.

    Returns
    -------
    margin : float

    Examples
    --------
    >>> from treerank.surrogates import PointwiseSquared, order_preserving_margin
    >>> round(order_preserving_margin(PointwiseSquared(), [2.0, 1.0, 0.0], 0, 1), 6)
    0.5
    """
    U = np.asarray(U, dtype=np.float64)
    start = loss.argmin(U, allow_infinite=True)
    start = np.clip(np.nan_to_num(start, posinf=30.0, neginf=-30.0), -30.0, 30.0)
    mid = 0.5 * (start[i] + start[j])
    start[i] = start[j] = mid
    result = minimize(
        lambda s: loss.value(s, U),
        start,
        jac=lambda s: loss.grad(s, U),
        method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda s: s[j] - s[i]}],
        options={"maxiter": 2000, "ftol": 1e-14},
    )
    return max(0.0, float(result.fun) - loss.infimum(U))


# ---------------------------------------------------------------------------
# noise conditions
# ---------------------------------------------------------------------------


def _exact_labels(pairs):
    exact = all(_is_exact(p) for _, p in pairs) and all(
        all(_is_exact(v) for v in np.asarray(y).ravel().tolist()) for y, _ in pairs
    )
    return exact


def expected_map_target(distribution):
    """``u_ij = E[y_i y_j / sum(y)]`` (0 for ``y = 0``), the MAP regression target.

    Parameters
    ----------
    distribution : list of (binary vector, probability)

    Returns
    -------
    u : ndarray of shape (n_items, n_items)
        Symmetric; object array of Fractions when the inputs are exact.

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from treerank.surrogates import expected_map_target
    >>> expected_map_target([([1, 1, 0], F(1, 2)), ([1, 0, 0], F(1, 2))])[0, 0]
    Fraction(3, 4)
    """
    pairs = check_distribution(distribution)
    exact = _exact_labels(pairs)
    n = _n_items(pairs)
    total = np.full((n, n), Fraction(0), dtype=object) if exact else np.zeros((n, n))
    for y, p in pairs:
        values = np.asarray(y).tolist()
        if any(v not in (0, 1) for v in values):
            raise ValueError("expected_map_target needs binary label vectors.")
        size = sum(values)
        if size == 0:
            continue
        vec = np.array(
            [Fraction(v) if exact else float(v) for v in values], dtype=object
        )
        scale = Fraction(p) / size if exact else float(p) / size
        total = total + np.outer(vec, vec) * scale
    return total if exact else total.astype(np.float64)


def diagonal_order_is_ap_optimal(u):
    """Whether sorting the diagonal of the MAP target decodes an AP-optimal ranking.

    That is, whether ``u`` lies in the set P_reinforce:

    ``u_ii >= u_jj  =>  u_ii >= u_jj + sum_{g != i, j} (u_jg - u_ig)_+`` for all
    ``i != j``: there, sorting the diagonal decodes an AP-optimal ranking
    (Ramaswamy et al., Theorem 4). Exact for Fraction entries.

    Parameters
    ----------
    u : array-like of shape (n_items, n_items)
        ``E[y_i y_j / |y|]`` (see :func:`expected_map_target`).

    Returns
    -------
    inside : bool

    Examples
    --------
    >>> from treerank.surrogates import diagonal_order_is_ap_optimal
    >>> diagonal_order_is_ap_optimal([[0.5, 0.0], [0.0, 0.5]])
    True
    """
    u = np.asarray(u, dtype=object)
    n = u.shape[0]
    if u.shape != (n, n):
        raise ValueError(f"u must be a square matrix; got shape {u.shape}.")
    for i in range(n):
        for j in range(n):
            if i == j or not u[i, i] >= u[j, j]:
                continue
            excess = sum(
                (max(u[j, g] - u[i, g], 0) for g in range(n) if g not in (i, j)),
                start=0,
            )
            if not u[i, i] >= u[j, j] + excess:
                return False
    return True


def expected_preferences(distribution):
    """``E[y_ij]`` of a distribution of preference matrices (exact if possible).

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from treerank.surrogates import expected_preferences
    >>> expected_preferences([([[0, 1], [0, 0]], F(1, 3)), ([[0, 0], [1, 0]], F(2, 3))])
    array([[Fraction(0, 1), Fraction(1, 3)],
           [Fraction(2, 3), Fraction(0, 1)]], dtype=object)
    """
    pairs = check_distribution(distribution)
    exact = _exact_labels(pairs)
    total = None
    for y, p in pairs:
        y = np.asarray(y)
        if y.ndim != 2 or y.shape[0] != y.shape[1]:
            raise ValueError("preference labels must be square matrices.")
        term = (
            np.vectorize(Fraction, otypes=[object])(y) * Fraction(p)
            if exact
            else y.astype(np.float64) * float(p)
        )
        total = term if total is None else total + term
    return total


def majority_preferences_acyclic(expected):
    """Whether the majority preferences ``E[y_ij] > E[y_ji]`` form no cycle.

    That is, whether ``{(i, j): E[y_ij] > E[y_ji]}`` is acyclic (the set P_DAG).

    On P_DAG the greedy decoder of :class:`PDSurrogate` is optimal (Theorem 7).

    Parameters
    ----------
    expected : array-like of shape (n_items, n_items)
        ``E[y_ij]`` (see :func:`expected_preferences`).

    Returns
    -------
    inside : bool

    Examples
    --------
    >>> from treerank.surrogates import majority_preferences_acyclic
    >>> majority_preferences_acyclic([[0, 1, 0], [0, 0, 1], [1, 0, 0]])
    False
    """
    e = np.asarray(expected, dtype=object)
    n = e.shape[0]
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from(
        (i, j) for i in range(n) for j in range(n) if i != j and e[i, j] > e[j, i]
    )
    return nx.is_directed_acyclic_graph(graph)


def preserves_majority_preferences(distribution, f):
    """Whether the mean of ``f`` orders every pair as its majority preference does.

    That is, ``E[y_ij] > E[y_ji] => E[f_i(y)] > E[f_j(y)]`` for all pairs (the
    set P_f).

    Parameters
    ----------
    distribution : list of (preference matrix, probability)
    f : callable
        ``f(y) -> (n_items,)`` for one preference matrix.

    Returns
    -------
    inside : bool

    Examples
    --------
    >>> from fractions import Fraction as F
    >>> from treerank.surrogates import preserves_majority_preferences
    >>> def net(y):
    ...     return np.sum(y, axis=1) - np.sum(y, axis=0)
    >>> preserves_majority_preferences([(np.array([[0, 1], [0, 0]]), F(1))], net)
    True
    """
    pairs = check_distribution(distribution)
    expected = expected_preferences(pairs)
    exact = _exact_labels(pairs)
    ef = sum(
        (
            np.array(
                [Fraction(v) if exact else float(v) for v in np.asarray(f(y)).tolist()],
                dtype=object,
            )
            * (Fraction(p) if exact else float(p))
            for y, p in pairs
        ),
        start=0,
    )
    n = expected.shape[0]
    return all(
        ef[i] > ef[j]
        for i in range(n)
        for j in range(n)
        if i != j and expected[i, j] > expected[j, i]
    )
