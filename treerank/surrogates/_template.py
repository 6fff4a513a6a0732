"""Order-preserving template losses: pointwise, pairwise and Bregman.

A template loss ``l(s, v)`` scores a list of scores ``s`` against a vector of
non-negative utilities ``v``; its instance for a positional metric with utility
``u`` is ``l^u(s, y) = l(s, u(y))`` (Calauzènes, Usunier & Gallinari 2013). All
losses here are linear in ``v`` (the squared ones up to a variance term), so the
inner risk of a distribution Delta of labels depends on it only through the
expected utility ``U = E[u(y)]``: its minimizer is a function of U, it sorts the
items like U (the losses are *order-preserving*), and the metric regret obeys

    Rbar(Delta) - R(Delta, s) <= c * C_phi(2) * sqrt(L(Delta, s) - Lmin(Delta)),

with the regret constant ``c`` of each loss (:meth:`TemplateLoss.regret_constant`)
and ``C_phi(2)`` of the metric. Formulas follow the reference notes, which
restore the minus signs lost in the extracted paper (the margin functions are
*decreasing*: ``log(1 + e^{-t})``, ``e^{-t}``).

Classes: :class:`PointwiseSquared`, :class:`PointwiseLogistic`,
:class:`PointwiseExponential`, :class:`PointwiseSquaredHinge`,
:class:`PointwiseDifferentiableHinge` (pointwise, ``sum_i lambda(v_i, s_i)``);
:class:`PairwiseSquared`, :class:`PairwiseLogistic`, :class:`PairwiseExponential`
(``sum_{i<j} v_i phi(s_i - s_j) + v_j phi(s_j - s_i)``); :class:`BregmanLoss`
(``B_psi(v || g(s))``); :class:`InstantiatedLoss` (a template loss fed the
utility of a metric, built by :meth:`TemplateLoss.instance`).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
from scipy.special import entr, expit, xlogy

from treerank.metrics._positional import check_distribution
from treerank.surrogates._base import SurrogateLoss
from treerank.surrogates._groups import check_groups
from treerank.surrogates._utility import UTILITIES, compute_utility

__all__ = [
    "BregmanLoss",
    "InstantiatedLoss",
    "PairwiseExponential",
    "PairwiseLogistic",
    "PairwiseSquared",
    "PointwiseDifferentiableHinge",
    "PointwiseExponential",
    "PointwiseLogistic",
    "PointwiseSquared",
    "PointwiseSquaredHinge",
    "TemplateLoss",
]


def _check_positive(value, name, *, allow_none=False):
    if value is None and allow_none:
        return
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.integer, np.floating))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"{name} must be a positive finite number; got {value!r}.")


def _as_utility_vector(U, name="U"):
    U = np.asarray(U, dtype=np.float64)
    if U.ndim != 1:
        raise ValueError(
            f"{name} must be a one-dimensional vector; got shape {U.shape}."
        )
    if not np.all(np.isfinite(U)):
        raise ValueError(f"{name} contains NaN or infinity.")
    return U


def _distribution_arrays(distribution):
    """The targets and probabilities of a distribution, as float arrays.

    Parameters
    ----------
    distribution : list of (array-like, number) pairs
        Validated by :func:`treerank.metrics._positional.check_distribution`.

    Returns
    -------
    targets : ndarray of shape (n_outcomes, *target_shape)
    p : ndarray of shape (n_outcomes,)
    """
    pairs = check_distribution(distribution)
    targets = np.stack([np.asarray(y, dtype=np.float64) for y, _ in pairs])
    return targets, np.array([float(p) for _, p in pairs])


def _x_minus_log1p(x):
    """``x - log(1 + x) >= 0``, accurate for small ``|x|`` (series)."""
    x = np.asarray(x, dtype=np.float64)
    small = np.abs(x) < 1e-3
    xs = np.where(small, x, 0.0)
    series = xs**2 / 2 - xs**3 / 3 + xs**4 / 4 - xs**5 / 5
    with np.errstate(invalid="ignore", divide="ignore"):
        direct = x - np.log1p(np.where(small, 0.0, x))
    return np.where(small, series, direct)


def _log_ratio(a, b):
    """``log(a / b)`` for ``a, b >= 0``, accurate when ``a`` is close to ``b``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        close = (a > 0) & (b > 0) & (np.abs(a - b) < 0.5 * b)
        safe_b = np.where(b > 0, b, 1.0)
        return np.where(close, np.log1p((a - b) / safe_b), np.log(a) - np.log(b))


def _bernoulli_kl(q, s, logit_q):
    """``KL(Bernoulli(q) || Bernoulli(sigmoid(s)))`` as a sum of non-negative terms.

    ``KL = q g(p/q - 1) + (1 - q) g((1 - p)/(1 - q) - 1)`` with
    ``g(x) = x - log(1 + x)`` and ``p = sigmoid(s)``. The difference ``p - q``
    is computed as ``-sigmoid(s) sigmoid(-t) expm1(t - s)`` with ``t = logit(q)``
    (given accurately by the caller), so that tiny divergences keep their
    relative accuracy.
    """
    p = expit(s)
    finite = np.isfinite(logit_q)
    t = np.where(finite, logit_q, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        accurate = -p * expit(-t) * np.expm1(t - s)
    diff = np.where(finite, accurate, p - q)
    r = 1.0 - q
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where(q > 0, q * _x_minus_log1p(diff / np.where(q > 0, q, 1)), 0.0)
        second = np.where(r > 0, r * _x_minus_log1p(-diff / np.where(r > 0, r, 1)), 0.0)
    return first + second


def _exp_gap(a, b, s):
    """``sqrt(a) e^{-s/2} - sqrt(b) e^{s/2}`` for ``a, b >= 0``, accurately.

    Written ``sqrt(b) e^{s/2} expm1(log(a/b)/2 - s)`` when both are positive.
    """
    both = (a > 0) & (b > 0)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        half_log = 0.5 * _log_ratio(a, b)
        accurate = (
            np.sqrt(b) * np.exp(s / 2) * np.expm1(np.where(both, half_log, 0.0) - s)
        )
        direct = np.sqrt(a) * np.exp(-s / 2) - np.sqrt(b) * np.exp(s / 2)
    return np.where(both, accurate, direct)


class TemplateLoss(SurrogateLoss):
    """Base class of the order-preserving template losses ``l(s, v)``.

    The target ``v`` is a vector of utilities (for a metric instance, build the
    loss with :meth:`instance`). Besides the value and gradient, a template loss
    exposes the quantities of the calibration theory, for one list at a time:
    :meth:`argmin`, :meth:`infimum`, :meth:`regret_constant`,
    :meth:`inner_risk` and :meth:`inner_regret`.

    Examples
    --------
    >>> from treerank.surrogates import PointwiseSquared, TemplateLoss
    >>> loss = PointwiseSquared()
    >>> isinstance(loss, TemplateLoss)
    True
    >>> U = [3.0, 1.0, 0.0]
    >>> loss.inner_regret([1.0, 1.5, 0.0], U), loss.regret_constant()
    (4.25, 1.4142135623730951)
    """

    target_name = "v"
    linear_in_target = True

    def argmin(self, U, *, allow_infinite=False):
        """Closed-form minimizer of ``s -> l(s, U)`` (the inner risk of a list).

        Parameters
        ----------
        U : array-like of shape (n_items,)
            Expected utility of the items.
        allow_infinite : bool, default=False
            When the infimum is not attained, return the minimizer in the
            extended reals (entries ``+inf`` / ``-inf``, which still sort the
            items correctly) instead of None.

        Returns
        -------
        s_star : ndarray of shape (n_items,) or None
            None when the infimum is not attained and ``allow_infinite`` is False.
        """
        U = self._check_U(U)
        s_star = self._argmin(U)
        if not allow_infinite and not np.all(np.isfinite(s_star)):
            return None
        return s_star

    def infimum(self, U):
        """Infimum over the scores of ``l(s, U)``.

        For the losses linear in ``v`` this is the minimal inner risk; for the
        squared losses the inner risk adds the variance of the target, a
        constant that cancels in :meth:`inner_regret`.

        Parameters
        ----------
        U : array-like of shape (n_items,)

        Returns
        -------
        infimum : float
        """
        return float(self._infimum(self._check_U(U)))

    def inner_regret(self, scores, U):
        """Surrogate regret ``L(Delta, s) - Lmin(Delta) = l(s, U) - inf l(., U)``.

        Parameters
        ----------
        scores : array-like of shape (n_items,)
        U : array-like of shape (n_items,)
            The expected utility of the list's label distribution.

        Returns
        -------
        regret : float

        Notes
        -----
        Where a closed form exists the regret is computed as a sum of
        non-negative terms (a Bernoulli Kullback-Leibler divergence for the
        logistic losses, a square for the exponential ones, ...), which keeps
        its relative accuracy when it is tiny; otherwise as the difference
        ``l(s, U) - inf``, accurate to about ``1e-16 |l(s, U)|``.
        """
        U = self._check_U(U)
        s = _as_utility_vector(scores, "scores")
        if s.shape != U.shape:
            raise ValueError(f"scores has shape {s.shape} but U has shape {U.shape}.")
        with np.errstate(over="ignore"):
            return max(0.0, float(self._regret(s, U)))

    def _regret(self, s, U):
        return self.value(s, U) - self._infimum(U)

    def inner_risk(self, scores, distribution):
        """Exact inner risk ``sum_y p(y) l(s, v_y)`` of one list.

        Parameters
        ----------
        scores : array-like of shape (n_items,)
        distribution : list of (v, probability)
            A finite distribution of target vectors.

        Returns
        -------
        risk : float
        """
        targets, p = _distribution_arrays(distribution)
        s = _as_utility_vector(scores, "scores")
        values = self.value(
            np.tile(s, (targets.shape[0], 1)), targets, return_per_query=True
        )
        return float(np.dot(p, values))

    def expected_target(self, distribution):
        """Expected target ``U = sum_y p(y) v_y`` of a distribution of targets."""
        targets, p = _distribution_arrays(distribution)
        return p @ targets

    def regret_constant(self, U=None):
        """Constant ``c`` of the regret bound of the loss.

        Parameters
        ----------
        U : array-like of shape (n_items,), default=None
            Expected utility (or a bound ``B >= ||u(y)||_inf`` as ``[B]``); only
            the pairwise logistic and exponential losses need it.

        Returns
        -------
        c : float
        """
        return float(self._regret_constant(U))

    def instance(self, utility, *, k=None, gain="exp2"):
        """Instance ``l^u(s, y) = l(s, u(y))`` of the loss for a metric utility.

        Parameters
        ----------
        utility : {"identity", "dcg", "ndcg", "precision", "recall", "auc"}, \
callable or metric object
            The utility ``u`` (``"dcg"``: ``2^y - 1``; ``"recall"``: ``y/|y|``;
            a ``PositionalMetric`` uses its ``utility`` method).
        k : int or None, default=None
            Cut-off of the ``"ndcg"`` normalizer.
        gain : {"exp2", "linear"}, default="exp2"
            Gain of the ``"dcg"`` and ``"ndcg"`` utilities.

        Returns
        -------
        loss : InstantiatedLoss
        """
        return InstantiatedLoss(self, utility, k=k, gain=gain)

    def _check_U(self, U):
        U = _as_utility_vector(U)
        self._check_domain(U, "U")
        return U

    def _check_target(self, t, groups):
        self._check_domain(t, self.target_name)
        return t

    def _check_domain(self, v, name):
        pass

    def _regret_constant(self, U):  # pragma: no cover - abstract
        raise NotImplementedError


# ---------------------------------------------------------------------------
# Pointwise losses: l(s, v) = sum_i lambda(v_i, s_i)
# ---------------------------------------------------------------------------


class _PointwiseLoss(TemplateLoss):
    requires_qid = False

    def _value_and_grad(self, s, t, groups):
        with np.errstate(over="ignore"):
            values, grad = self._pointwise(s, t)
        return groups.sum(values), grad

    def _infimum(self, U):
        return float(np.sum(self._pointwise_infimum(U)))

    def _pointwise_infimum(self, U):
        values, _ = self._pointwise(self._argmin(U), U)
        return values


class _EtaDomainMixin:
    def _check_U(self, U):
        # validated up to rounding: clip the last ulps into [0, eta]
        return np.clip(super()._check_U(U), 0.0, self.eta)

    def _check_target(self, t, groups):
        return np.clip(super()._check_target(t, groups), 0.0, self.eta)

    def _check_domain(self, v, name):
        if np.any(v < 0) or np.any(v > self.eta * (1 + 1e-12)):
            raise ValueError(
                f"{type(self).__name__} needs {name} in [0, eta] = [0, {self.eta}]; "
                f"got values in [{v.min()}, {v.max()}]. Rescale the utility or "
                "increase eta."
            )


class PointwiseSquared(_PointwiseLoss):
    """Pointwise squared loss ``sum_i (v_i - s_i)^2`` (regression of the utility).

    The minimizer of the inner risk is ``s = U`` and the regret constant is
    ``c = sqrt(2)``. Instantiated with ``u(y) = 2^y - 1`` it is DCG-calibrated;
    regressing the raw grade ``y`` is not (use the right utility).

    Examples
    --------
    >>> from treerank.surrogates import PointwiseSquared
    >>> loss = PointwiseSquared()
    >>> loss.value([1.0, 0.0], [2.0, 0.0])
    1.0
    >>> loss.grad([1.0, 0.0], [2.0, 0.0])
    array([-2.,  0.])
    >>> loss.argmin([3.0, 1.0, 0.0])
    array([3., 1., 0.])
    """

    def _pointwise(self, s, v):
        diff = s - v
        return diff**2, 2.0 * diff

    def _argmin(self, U):
        return U.copy()

    def _pointwise_infimum(self, U):
        return np.zeros_like(U)

    def _regret_constant(self, U):
        return math.sqrt(2.0)


class PointwiseLogistic(_EtaDomainMixin, _PointwiseLoss):
    """Pointwise logistic loss ``v log(1 + e^{-s}) + (eta - v) log(1 + e^{s})``.

    Parameters
    ----------
    eta : float, default=1.0
        Upper end of the utility range: targets must lie in ``[0, eta]``.

    Notes
    -----
    Minimizer ``s* = log(U / (eta - U))``, not attained when ``U`` is 0 or eta
    (:meth:`argmin` returns None, or ``-inf`` / ``+inf`` with
    ``allow_infinite=True``); infimum ``eta H(U / eta)`` with ``H`` the binary
    entropy in nats; regret constant ``c = sqrt(eta)``.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.surrogates import PointwiseLogistic
    >>> loss = PointwiseLogistic(eta=1.0)
    >>> np.round(loss.argmin([0.5, 0.25]), 6)
    array([ 0.      , -1.098612])
    >>> loss.argmin([1.0, 0.0]) is None
    True
    """

    def __init__(self, eta=1.0):
        _check_positive(eta, "eta")
        self.eta = eta

    def _pointwise(self, s, v):
        eta = self.eta
        values = v * np.logaddexp(0.0, -s) + (eta - v) * np.logaddexp(0.0, s)
        grad = -v * expit(-s) + (eta - v) * expit(s)
        return values, grad

    def _argmin(self, U):
        with np.errstate(divide="ignore"):
            return np.log(U) - np.log(self.eta - U)

    def _pointwise_infimum(self, U):
        return self.eta * (entr(U / self.eta) + entr(1.0 - U / self.eta))

    def _regret(self, s, U):
        logit = _log_ratio(U, self.eta - U)
        return float(np.sum(self.eta * _bernoulli_kl(U / self.eta, s, logit)))

    def _regret_constant(self, U):
        return math.sqrt(self.eta)


class PointwiseExponential(_EtaDomainMixin, _PointwiseLoss):
    """Pointwise exponential loss ``v e^{-s} + (eta - v) e^{s}``.

    Parameters
    ----------
    eta : float, default=1.0
        Upper end of the utility range: targets must lie in ``[0, eta]``.

    Notes
    -----
    Minimizer ``s* = log(U / (eta - U)) / 2`` (not attained at U = 0 or eta),
    infimum ``2 sqrt(U (eta - U))``, regret constant ``c = sqrt(eta)``.

    Examples
    --------
    >>> from treerank.surrogates import PointwiseExponential
    >>> loss = PointwiseExponential(eta=2.0)
    >>> loss.argmin([1.0, 1.0])
    array([0., 0.])
    >>> loss.infimum([1.0, 1.0])
    4.0
    """

    def __init__(self, eta=1.0):
        _check_positive(eta, "eta")
        self.eta = eta

    def _pointwise(self, s, v):
        em, ep = np.exp(-s), np.exp(s)
        a, b = v * em, (self.eta - v) * ep
        return a + b, b - a

    def _argmin(self, U):
        with np.errstate(divide="ignore"):
            return 0.5 * (np.log(U) - np.log(self.eta - U))

    def _pointwise_infimum(self, U):
        return 2.0 * np.sqrt(U * (self.eta - U))

    def _regret(self, s, U):
        return float(np.sum(_exp_gap(U, self.eta - U, s) ** 2))

    def _regret_constant(self, U):
        return math.sqrt(self.eta)


class PointwiseSquaredHinge(_EtaDomainMixin, _PointwiseLoss):
    """Pointwise squared hinge ``v max(0, t - s)^2 + (eta - v) max(0, s)^2``.

    Parameters
    ----------
    eta : float, default=1.0
        Upper end of the utility range.
    t : float, default=1.0
        Margin (``t > 0``).

    Notes
    -----
    Minimizer ``s* = U t / eta``, infimum ``U (eta - U) t^2 / eta``, regret
    constant ``c = sqrt(2 eta) / t``.

    Examples
    --------
    >>> from treerank.surrogates import PointwiseSquaredHinge
    >>> loss = PointwiseSquaredHinge(eta=2.0, t=1.0)
    >>> loss.argmin([1.0, 2.0, 0.0])
    array([0.5, 1. , 0. ])
    """

    def __init__(self, eta=1.0, t=1.0):
        _check_positive(eta, "eta")
        _check_positive(t, "t")
        self.eta = eta
        self.t = t

    def _pointwise(self, s, v):
        lo = np.maximum(0.0, self.t - s)
        hi = np.maximum(0.0, s)
        values = v * lo**2 + (self.eta - v) * hi**2
        grad = -2.0 * v * lo + 2.0 * (self.eta - v) * hi
        return values, grad

    def _argmin(self, U):
        return U * self.t / self.eta

    def _pointwise_infimum(self, U):
        return U * (self.eta - U) * self.t**2 / self.eta

    def _regret(self, s, U):
        inside = (s >= 0) & (s <= self.t)
        quadratic = self.eta * (s - U * self.t / self.eta) ** 2
        values, _ = self._pointwise(s, U)
        other = values - self._pointwise_infimum(U)
        return float(np.sum(np.where(inside, quadratic, other)))

    def _regret_constant(self, U):
        return math.sqrt(2.0 * self.eta) / self.t


def _smooth_hinge(x, alpha):
    """``phi_alpha(x)``: 0, ``x^2 / (2 alpha)`` on [0, alpha], ``x - alpha/2`` after."""
    quad = x**2 / (2.0 * alpha)
    values = np.where(x <= 0, 0.0, np.where(x <= alpha, quad, x - alpha / 2.0))
    deriv = np.clip(x / alpha, 0.0, 1.0)
    return values, deriv


class PointwiseDifferentiableHinge(_EtaDomainMixin, _PointwiseLoss):
    """Differentiable hinge ``v phi_a(margin - s) + (eta - v) phi_a(s)``.

    ``phi_a(x) = 0`` for ``x <= 0``, ``x^2 / (2a)`` on ``[0, a]`` and
    ``x - a/2`` for ``x >= a``.

    Parameters
    ----------
    eta : float, default=1.0
        Upper end of the utility range.
    alpha : float, default=0.25
        Width of the quadratic part; must satisfy ``0 < alpha < margin / 2``.
    margin : float, default=1.0
        The margin of the positive part.

    Notes
    -----
    Minimizer ``s* = alpha U / (eta - U)`` if ``U < eta/2``,
    ``margin - alpha (eta - U) / U`` if ``U > eta/2`` and any point of
    ``[alpha, margin - alpha]`` at ``U = eta/2`` (the midpoint is returned);
    regret constant ``c = 4 sqrt(eta / alpha)``.

    The paper states ``alpha in (0, eta/2)`` with margin 1; read literally this
    is wrong: at ``eta = 10, alpha = 4.9`` the regret bound fails (ratio 2.45,
    see the reference notes). The condition that makes the minimizer formula
    and the bound valid is ``alpha < margin / 2`` (with ``margin = eta`` this is
    the paper's range), which is what is enforced here.

    Examples
    --------
    >>> from treerank.surrogates import PointwiseDifferentiableHinge
    >>> loss = PointwiseDifferentiableHinge(eta=1.0, alpha=0.25)
    >>> loss.argmin([0.0, 0.25, 0.5, 1.0])
    array([0.        , 0.08333333, 0.5       , 1.        ])
    """

    def __init__(self, eta=1.0, alpha=0.25, margin=1.0):
        _check_positive(eta, "eta")
        _check_positive(alpha, "alpha")
        _check_positive(margin, "margin")
        if not alpha < margin / 2.0:
            raise ValueError(
                f"alpha must satisfy 0 < alpha < margin / 2 = {margin / 2.0}; got "
                f"alpha={alpha!r}. (The paper's range alpha < eta / 2 is only valid "
                "with margin = eta.)"
            )
        self.eta = eta
        self.alpha = alpha
        self.margin = margin

    def _pointwise(self, s, v):
        lo, dlo = _smooth_hinge(self.margin - s, self.alpha)
        hi, dhi = _smooth_hinge(s, self.alpha)
        return v * lo + (self.eta - v) * hi, -v * dlo + (self.eta - v) * dhi

    def _argmin(self, U):
        eta, a, m = self.eta, self.alpha, self.margin
        low = U < eta / 2.0
        high = U > eta / 2.0
        out = np.full_like(U, m / 2.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(low, a * U / (eta - U), out)
            out = np.where(high, m - a * (eta - U) / U, out)
        return out

    def _regret_constant(self, U):
        return 4.0 * math.sqrt(self.eta / self.alpha)


# ---------------------------------------------------------------------------
# Pairwise losses in the order-preserving form
# ---------------------------------------------------------------------------


class _PairwiseLoss(TemplateLoss):
    requires_qid = True
    translation_invariant = True

    def _check_domain(self, v, name):
        if np.any(v < 0):
            raise ValueError(f"{type(self).__name__} needs {name} >= 0.")

    def _value_and_grad(self, s, t, groups):
        first, second = groups.pairs()
        d = s[first] - s[second]
        with np.errstate(over="ignore"):
            values, dd = self._pair(t[first], t[second], d)
        n = s.shape[0]
        grad = np.bincount(first, weights=dd, minlength=n) - np.bincount(
            second, weights=dd, minlength=n
        )
        per_query = np.bincount(
            groups.index[first], weights=values, minlength=groups.n_groups
        )
        return per_query, grad

    def _regret_constant(self, U):
        if U is None:
            raise ValueError(
                f"the regret constant of {type(self).__name__} is 2 sqrt(||U||_inf): "
                "pass U (or [B] with B >= ||u(y)||_inf at the population level)."
            )
        U = np.asarray(U, dtype=np.float64)
        return 2.0 * math.sqrt(float(np.max(np.abs(U))))


class PairwiseSquared(_PairwiseLoss):
    """Pairwise squared loss ``sum_{i<j} ((v_i - v_j) - (s_i - s_j))^2``.

    Computed in O(m) per list: with ``a = v - s``, the sum is
    ``m sum_i a_i^2 - (sum_i a_i)^2``. The minimizer is ``s = U + const``
    (:meth:`argmin` returns ``U``), the infimum 0 and the regret constant 1.

    Examples
    --------
    >>> from treerank.surrogates import PairwiseSquared
    >>> loss = PairwiseSquared()
    >>> loss.value([1.0, 1.5, 0.0], [3.0, 1.0, 0.0])
    10.5
    >>> loss.value([11.0, 11.5, 10.0], [3.0, 1.0, 0.0])
    10.5
    """

    def _check_domain(self, v, name):
        pass

    def _value_and_grad(self, s, t, groups):
        a = t - s
        m = groups.sizes.astype(np.float64)
        total = groups.sum(a)
        per_query = m * groups.sum(a**2) - total**2
        grad = -2.0 * (m[groups.index] * a - total[groups.index])
        return per_query, grad

    def _argmin(self, U):
        return U.copy()

    def _infimum(self, U):
        return 0.0

    def _regret_constant(self, U):
        return 1.0


class PairwiseLogistic(_PairwiseLoss):
    """Pairwise logistic loss, order-preserving form.

    ``sum_{i<j} v_i log(1 + e^{-(s_i - s_j)}) + v_j log(1 + e^{s_i - s_j})``.
    Unlike the usual RankNet form (see :class:`PairwiseComparisonLoss`), it is
    order-preserving: the minimizer is ``s = log U + const``. Not attained when
    some ``U_i = 0``. Infimum ``sum_{i<j} (U_i + U_j) H(U_i / (U_i + U_j))``,
    regret constant ``2 sqrt(||U||_inf)``. Cost O(m^2) per list.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.surrogates import PairwiseLogistic
    >>> loss = PairwiseLogistic()
    >>> s = loss.argmin([1.0, 2.0, 4.0])
    >>> np.round(s - s[0], 6)
    array([0.      , 0.693147, 1.386294])
    """

    def _pair(self, vi, vj, d):
        values = vi * np.logaddexp(0.0, -d) + vj * np.logaddexp(0.0, d)
        deriv = -vi * expit(-d) + vj * expit(d)
        return values, deriv

    def _argmin(self, U):
        with np.errstate(divide="ignore"):
            return np.log(U)

    def _infimum(self, U):
        i, j = np.triu_indices(U.shape[0], 1)
        tot = U[i] + U[j]
        with np.errstate(invalid="ignore", divide="ignore"):
            p = np.where(tot > 0, U[i] / np.where(tot > 0, tot, 1.0), 0.0)
        return float(np.sum(tot * (entr(p) + entr(1.0 - p))))

    def _regret(self, s, U):
        i, j = np.triu_indices(U.shape[0], 1)
        tot = U[i] + U[j]
        q = np.divide(U[i], tot, out=np.zeros_like(tot), where=tot > 0)
        logit = _log_ratio(U[i], U[j])
        return float(np.sum(tot * _bernoulli_kl(q, s[i] - s[j], logit)))


class PairwiseExponential(_PairwiseLoss):
    """Pairwise exponential loss ``sum_{i<j} v_i e^{-(s_i - s_j)} + v_j e^{s_i - s_j}``.

    Order-preserving: the minimizer is ``s = log(U) / 2 + const`` (not attained
    when some ``U_i = 0``), infimum ``sum_{i<j} 2 sqrt(U_i U_j)``, regret constant
    ``2 sqrt(||U||_inf)``. Cost O(m^2) per list.

    Examples
    --------
    >>> from treerank.surrogates import PairwiseExponential
    >>> loss = PairwiseExponential()
    >>> loss.infimum([1.0, 4.0])
    4.0
    """

    def _pair(self, vi, vj, d):
        a = vi * np.exp(-d)
        b = vj * np.exp(d)
        return a + b, b - a

    def _argmin(self, U):
        with np.errstate(divide="ignore"):
            return 0.5 * np.log(U)

    def _infimum(self, U):
        i, j = np.triu_indices(U.shape[0], 1)
        return float(np.sum(2.0 * np.sqrt(U[i] * U[j])))

    def _regret(self, s, U):
        i, j = np.triu_indices(U.shape[0], 1)
        return float(np.sum(_exp_gap(U[i], U[j], s[i] - s[j]) ** 2))


# ---------------------------------------------------------------------------
# Bregman (listwise) losses
# ---------------------------------------------------------------------------

_PSI = ("squared", "entropy")
_LINKS = ("identity", "exp")


class BregmanLoss(TemplateLoss):
    """Listwise Bregman loss ``B_psi(v || g(s))``.

    ``B_psi(v || w) = psi(v) - psi(w) - <grad psi(w), v - w>`` with psi strictly
    convex and ``g`` an invertible, order-preserving link. The expected loss is
    minimized at ``g(s) = U`` (Banerjee et al. 2005), so the loss is
    order-preserving; if psi is mu-strongly convex the regret constant is
    ``2 / sqrt(mu)``.

    Parameters
    ----------
    psi : {"squared", "entropy"} or tuple of callables, default="squared"
        ``"squared"``: ``psi(w) = ||w||^2`` (mu = 2; the loss is the squared
        error, regret constant sqrt(2)); ``"entropy"``: ``psi(w) = sum w log w - w``
        (targets >= 0; mu = 1/eta on ``[0, eta]``). A user generator is a tuple
        ``(psi, grad_psi, hess_psi)`` of functions of one list's vector ``w``:
        ``psi(w) -> float``, ``grad_psi(w) -> (m,)``, ``hess_psi(w) -> (m,)``
        (diagonal) or ``(m, m)``.
    link : {"identity", "exp"} or tuple of callables, default="identity"
        ``g``; a user link is a tuple ``(g, jacobian, inverse)`` of functions of
        one list's scores: ``g(s) -> (m,)``, ``jacobian(s) -> (m,)`` (diagonal) or
        ``(m, m)``, ``inverse(w) -> (m,)`` (may be None: no closed-form argmin).
    eta : float or None, default=None
        Upper end of the target range (gives ``mu = 1/eta`` for ``"entropy"``).
    mu : float or None, default=None
        Strong-convexity modulus of psi on the target range (overrides the
        built-in value); needed by :meth:`regret_constant`.

    Notes
    -----
    Built-in generators and links are evaluated for all lists at once; user
    callables are called once per list. ``psi="entropy"`` with ``link="exp"`` is
    the canonical pair: ``l = sum_i v_i log(v_i e^{-s_i}) - v_i + e^{s_i}``, with
    gradient ``e^s - v``.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.surrogates import BregmanLoss
    >>> loss = BregmanLoss(psi="entropy", link="exp", eta=4.0)
    >>> loss.grad(np.log([1.0, 2.0]), [1.0, 2.0])
    array([0., 0.])
    >>> loss.regret_constant()
    4.0
    """

    requires_qid = False

    def __init__(self, psi="squared", link="identity", *, eta=None, mu=None):
        _check_positive(eta, "eta", allow_none=True)
        _check_positive(mu, "mu", allow_none=True)
        for value, name, options, size in (
            (psi, "psi", _PSI, 3),
            (link, "link", _LINKS, 3),
        ):
            if isinstance(value, str):
                if value not in options:
                    raise ValueError(
                        f"{name} must be one of {options} or a tuple of {size} "
                        f"callables; got {value!r}."
                    )
            elif not (isinstance(value, tuple) and len(value) == size):
                raise ValueError(
                    f"{name} must be one of {options} or a tuple of {size} callables; "
                    f"got {value!r}."
                )
        self.psi = psi
        self.link = link
        self.eta = eta
        self.mu = mu

    @property
    def _builtin(self):
        return isinstance(self.psi, str) and isinstance(self.link, str)

    def _check_domain(self, v, name):
        if self.psi == "entropy" and np.any(v < 0):
            raise ValueError(f"psi='entropy' needs {name} >= 0.")
        if self.eta is not None and (
            np.any(v < 0) or np.any(v > self.eta * (1 + 1e-12))
        ):
            raise ValueError(f"{name} must lie in [0, eta] = [0, {self.eta}].")

    def _link_builtin(self, s):
        if self.link == "identity":
            return s.copy(), np.ones_like(s)
        w = np.exp(s)
        return w, w

    def _psi_builtin(self, w, v):
        """Elementwise Bregman divergence and its derivative in w."""
        if self.psi == "squared":
            return (v - w) ** 2, 2.0 * (w - v)
        if np.any(w <= 0):
            raise ValueError(
                "psi='entropy' needs a positive link g(s); use link='exp'."
            )
        values = xlogy(v, v) - xlogy(v, w) - v + w
        return values, 1.0 - v / w

    def _value_and_grad(self, s, t, groups):
        if self._builtin:
            with np.errstate(over="ignore"):
                w, dw = self._link_builtin(s)
                values, dpsi = self._psi_builtin(w, t)
            return groups.sum(values), dpsi * dw
        per_query = np.zeros(groups.n_groups)
        grad = np.zeros_like(s)
        for g in range(groups.n_groups):
            members = groups.order[groups.starts[g] : groups.ends[g]]
            val, gr = self._one_list(s[members], t[members])
            per_query[g] = val
            grad[members] = gr
        return per_query, grad

    def _generator(self):
        if isinstance(self.psi, str):

            def psi(w):
                return float(np.sum(w**2 if self.psi == "squared" else xlogy(w, w) - w))

            def grad_psi(w):
                return 2.0 * w if self.psi == "squared" else np.log(w)

            def hess_psi(w):
                return 2.0 * np.ones_like(w) if self.psi == "squared" else 1.0 / w

            return psi, grad_psi, hess_psi
        return self.psi

    def _link_functions(self):
        if isinstance(self.link, str):

            def g(s):
                return self._link_builtin(s)[0]

            def jac(s):
                return self._link_builtin(s)[1]

            def inv(w):
                return w.copy() if self.link == "identity" else np.log(w)

            return g, jac, inv
        return self.link

    def _one_list(self, s, v):
        psi, grad_psi, hess_psi = self._generator()
        g, jac, _ = self._link_functions()
        w = np.asarray(g(s), dtype=np.float64)
        value = psi(v) - psi(w) - float(np.dot(grad_psi(w), v - w))
        hess = np.asarray(hess_psi(w), dtype=np.float64)
        inner = hess * (w - v) if hess.ndim == 1 else hess @ (w - v)
        jacobian = np.asarray(jac(s), dtype=np.float64)
        grad = jacobian * inner if jacobian.ndim == 1 else jacobian.T @ inner
        return value, grad

    def _argmin(self, U):
        _, _, inv = self._link_functions()
        if inv is None:
            raise ValueError("the link has no inverse: no closed-form minimizer.")
        with np.errstate(divide="ignore"):
            return np.asarray(inv(U), dtype=np.float64)

    def _infimum(self, U):
        return 0.0

    def _regret(self, s, U):
        if self.psi == "entropy" and self.link == "exp":
            # sum_i w_i h(U_i / w_i - 1), h(x) = (1 + x) log(1 + x) - x >= 0
            w = np.exp(s)
            x = U / w - 1.0
            small = np.abs(x) < 1e-3
            xs = np.where(small, x, 0.0)
            series = xs**2 / 2 - xs**3 / 6 + xs**4 / 12 - xs**5 / 20
            direct = xlogy(1.0 + x, 1.0 + x) - x
            return float(np.sum(w * np.where(small, series, direct)))
        return self.value(s, U)

    def _regret_constant(self, U):
        mu = self.mu
        if mu is None and self.psi == "squared":
            mu = 2.0
        if mu is None and self.psi == "entropy" and self.eta is not None:
            mu = 1.0 / self.eta
        if mu is None:
            raise ValueError(
                "the regret constant 2/sqrt(mu) needs the strong-convexity modulus: "
                "pass mu (or eta for psi='entropy')."
            )
        return 2.0 / math.sqrt(mu)


# ---------------------------------------------------------------------------
# Instantiation for a metric
# ---------------------------------------------------------------------------


class InstantiatedLoss(SurrogateLoss):
    """A template loss fed the utility of a metric: ``l^u(s, y) = l(s, u(y))``.

    Built by :meth:`TemplateLoss.instance`. The target is now the relevance
    vector ``y``; the theory methods take the *expected utility* ``U``
    (:meth:`expected_utility` computes it from a distribution of labels).

    Parameters
    ----------
    loss : TemplateLoss
        The template loss.
    utility : str, callable or metric object
        See :meth:`TemplateLoss.instance`.
    k : int or None, default=None
        Cut-off of the ``"ndcg"`` utility's normalizer.
    gain : {"exp2", "linear"}, default="exp2"
        Gain of the ``"dcg"`` and ``"ndcg"`` utilities.

    Examples
    --------
    >>> from treerank.surrogates import PointwiseSquared
    >>> loss = PointwiseSquared().instance("dcg")
    >>> loss.value([3.0, 1.0, 0.0], [2, 1, 0])
    0.0
    >>> loss.expected_utility([([2, 1, 0], 0.5), ([0, 1, 0], 0.5)])
    array([1.5, 1. , 0. ])
    """

    target_name = "y"

    def __init__(self, loss, utility, *, k=None, gain="exp2"):
        if not isinstance(loss, TemplateLoss):
            raise ValueError(f"loss must be a TemplateLoss; got {loss!r}.")
        if isinstance(utility, str) and utility not in UTILITIES:
            raise ValueError(f"utility must be one of {UTILITIES}; got {utility!r}.")
        if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
            raise ValueError(f"k must be a positive integer or None; got {k!r}.")
        if gain not in ("exp2", "linear"):
            raise ValueError(f"gain must be 'exp2' or 'linear'; got {gain!r}.")
        self.loss = loss
        self.utility = utility
        self.k = k
        self.gain = gain

    @property
    def requires_qid(self):
        per_list = not (
            isinstance(self.utility, str)
            and self.utility in ("identity", "dcg", "precision")
        )
        return self.loss.requires_qid or per_list

    @property
    def is_smooth(self):
        return self.loss.is_smooth

    @property
    def translation_invariant(self):
        return self.loss.translation_invariant

    def utilities(self, y, *, qid=None):
        """Utility vector ``u(y)`` of each item (computed list by list)."""
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity.")
        shape = y.shape
        if y.ndim == 2:
            qid = np.repeat(np.arange(shape[0]), shape[1])
        groups = check_groups(qid, y.size)
        return compute_utility(
            self.utility, y.ravel(), groups, k=self.k, gain_kind=self.gain
        ).reshape(shape)

    def expected_utility(self, distribution):
        """Expected utility ``U = sum_y p(y) u(y)`` of a label distribution."""
        labels, p = _distribution_arrays(distribution)
        return p @ self.utilities(labels)

    def _check_target(self, t, groups):
        u = compute_utility(self.utility, t, groups, k=self.k, gain_kind=self.gain)
        self.loss._check_domain(u, "u(y)")
        return u

    def _value_and_grad(self, s, t, groups):
        return self.loss._value_and_grad(s, t, groups)

    def _smooth_value_and_grad(self, s, t, groups, smoothing):
        return self.loss._smooth_value_and_grad(s, t, groups, smoothing)

    def argmin(self, U, *, allow_infinite=False):
        """Minimizer of the inner risk given the expected utility (see the loss)."""
        return self.loss.argmin(U, allow_infinite=allow_infinite)

    def infimum(self, U):
        """Infimum of ``s -> l(s, U)`` (see the loss)."""
        return self.loss.infimum(U)

    def inner_regret(self, scores, U):
        """Surrogate regret given the expected utility (see the loss)."""
        return self.loss.inner_regret(scores, U)

    def regret_constant(self, U=None):
        """Regret constant of the template loss."""
        return self.loss.regret_constant(U)

    def inner_risk(self, scores, distribution):
        """Exact inner risk ``sum_y p(y) l(s, u(y))`` of one list."""
        labels, p = _distribution_arrays(distribution)
        s = _as_utility_vector(scores, "scores")
        values = self.value(
            np.tile(s, (labels.shape[0], 1)), labels, return_per_query=True
        )
        return float(np.dot(p, values))
