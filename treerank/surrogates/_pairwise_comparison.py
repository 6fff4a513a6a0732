"""The usual pairwise comparison losses (RankNet, RankBoost, RankSVM style).

``l(s, y) = sum_{i, j} 1{y_i > y_j} phi(s_i - s_j)`` penalizes every pair of a
list whose more relevant item is not scored above the other one. With a
convex ``phi`` this form is **not order-preserving** (Duchi, Mackey & Jordan
2010): the minimizer of its inner risk depends on the pairwise probabilities
``P(y_i > y_j)``, not on the expected utility, and it can decode to a ranking
that is not optimal for DCG (fixture F of the reference notes). The
order-preserving alternative is :class:`~treerank.surrogates.PairwiseLogistic`
(``sum_{i<j} v_i phi(s_i - s_j) + v_j phi(s_j - s_i)`` fed the utility).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy.special import expit

from treerank.surrogates._base import SurrogateLoss, check_margin
from treerank.surrogates._template import _distribution_arrays

__all__ = ["PairwiseComparisonLoss", "PairwiseHingeSurrogate"]

_PHIS = ("logistic", "exponential", "hinge", "squared_hinge")


def _phi(kind, d, margin):
    """``phi(d)`` and ``phi'(d)`` of a decreasing margin function."""
    if kind == "logistic":
        return np.logaddexp(0.0, -d), -expit(-d)
    if kind == "exponential":
        e = np.exp(-d)
        return e, -e
    gap = np.maximum(0.0, margin - d)
    if kind == "hinge":
        return gap, -(gap > 0).astype(np.float64)
    return gap**2, -2.0 * gap


class PairwiseComparisonLoss(SurrogateLoss):
    """Pairwise comparison loss ``sum_{i,j} 1{y_i > y_j} phi(s_i - s_j)`` per list.

    The RankNet (``phi="logistic"``), RankBoost (``"exponential"``) and RankSVM
    (``"hinge"``) surrogates. Documented as **not order-preserving**: it is not
    calibrated for DCG or any positional metric (see the module docstring); it
    is provided for comparison.

    Parameters
    ----------
    phi : {"logistic", "exponential", "hinge", "squared_hinge"}, default="logistic"
        ``log(1 + e^{-d})``, ``e^{-d}``, ``max(0, margin - d)`` or
        ``max(0, margin - d)^2``.
    margin : float, default=1.0
        Margin of the hinge losses (unused otherwise).

    Notes
    -----
    Cost O(m^2) per list (all pairs are formed). The target is the relevance
    vector ``y``; pairs with equal relevance do not count. For the hinge, the
    learners minimize the smoothed loss ``mu log(1 + e^{(margin - d)/mu})``.

    Examples
    --------
    >>> from treerank.surrogates import PairwiseComparisonLoss
    >>> loss = PairwiseComparisonLoss(phi="hinge")
    >>> loss.value([0.0, 0.5, 2.0], [2, 1, 0])
    7.0
    >>> loss.grad([0.0, 0.5, 2.0], [2, 1, 0])
    array([-2., -0.,  2.])
    """

    target_name = "y"
    requires_qid = True
    translation_invariant = True
    linear_in_target = False

    def __init__(self, phi="logistic", margin=1.0):
        if phi not in _PHIS:
            raise ValueError(f"phi must be one of {_PHIS}; got {phi!r}.")
        check_margin(margin)
        self.phi = phi
        self.margin = margin

    @property
    def is_smooth(self):
        return self.phi != "hinge"

    def _oriented_pairs(self, y, groups):
        first, second = groups.pairs()
        sign = np.sign(y[first] - y[second])
        keep = sign != 0
        first, second, sign = first[keep], second[keep], sign[keep]
        better = np.where(sign > 0, first, second)
        worse = np.where(sign > 0, second, first)
        return better, worse

    def _assemble(self, s, groups, better, worse, values, deriv):
        n = s.shape[0]
        grad = np.bincount(better, weights=deriv, minlength=n) - np.bincount(
            worse, weights=deriv, minlength=n
        )
        per_query = np.bincount(
            groups.index[better], weights=values, minlength=groups.n_groups
        )
        return per_query, grad

    def _value_and_grad(self, s, t, groups):
        better, worse = self._oriented_pairs(t, groups)
        with np.errstate(over="ignore"):
            values, deriv = _phi(self.phi, s[better] - s[worse], self.margin)
        return self._assemble(s, groups, better, worse, values, deriv)

    def _smooth_value_and_grad(self, s, t, groups, smoothing):
        if self.phi != "hinge" or not smoothing:
            return self._value_and_grad(s, t, groups)
        better, worse = self._oriented_pairs(t, groups)
        z = (self.margin - (s[better] - s[worse])) / smoothing
        values = smoothing * np.logaddexp(0.0, z)
        return self._assemble(s, groups, better, worse, values, -expit(z))

    def pair_probabilities(self, distribution):
        """Matrix ``a_ij = P(y_i > y_j)`` of a label distribution of one list.

        The inner risk is ``sum_{i,j} a_ij phi(s_i - s_j)``: it depends on these
        probabilities, not only on the expected labels.

        Parameters
        ----------
        distribution : list of (y, probability)

        Returns
        -------
        a : ndarray of shape (n_items, n_items)
        """
        labels, p = _distribution_arrays(distribution)
        greater = labels[:, :, None] > labels[:, None, :]
        return np.einsum("k,kij->ij", p, greater.astype(np.float64))

    def inner_risk(self, scores, distribution):
        """Exact inner risk ``sum_y p(y) l(s, y)`` of one list.

        Parameters
        ----------
        scores : array-like of shape (n_items,)
        distribution : list of (y, probability)

        Returns
        -------
        risk : float
        """
        a = self.pair_probabilities(distribution)
        s = np.asarray(scores, dtype=np.float64)
        if s.shape != (a.shape[0],):
            raise ValueError(f"scores has shape {s.shape}; expected ({a.shape[0]},).")
        with np.errstate(over="ignore"):
            values, _ = _phi(self.phi, s[:, None] - s[None, :], self.margin)
        return float(np.sum(a * values))


class PairwiseHingeSurrogate(PairwiseComparisonLoss):
    """RankSVM per list: ``sum_{i,j: y_i > y_j} max(0, margin + s_j - s_i)``.

    The pairwise hinge that SLAM modifies (one slack per pair instead of one
    per item). Its gradient's l1 norm reaches ``2 r (m - r)`` for binary labels
    (``r`` relevant items out of ``m``), which grows with the list length, unlike
    SLAM's ``2 sum_i v_i``.

    Parameters
    ----------
    margin : float, default=1.0

    Examples
    --------
    >>> from treerank.surrogates import PairwiseHingeSurrogate
    >>> PairwiseHingeSurrogate().value([0.1, 0.5, 0.3], [2, 1, 0])
    3.4
    """

    def __init__(self, margin=1.0):
        super().__init__(phi="hinge", margin=margin)

    def get_params(self, deep=True):
        return {"margin": self.margin}
