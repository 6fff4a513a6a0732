"""Common interface of the list surrogate losses.

Every surrogate of this package is evaluated on *scores first, supervision
second*, as ``phi(s, R)`` in the SLAM paper: ``value(scores, target, qid=...)``
and ``grad(scores, target, qid=...)``. Items of many lists are stored in one
flat array with a query id per item (``qid``); ``qid=None`` means one list.
A two-dimensional ``scores`` of shape (n_lists, n_items) is a batch of lists
of equal length (one list per row; ``qid`` must then be None).

``value`` returns the loss summed over the lists (or the per-list values with
``return_per_query=True``, ordered by sorted query id); ``grad`` returns the
gradient with respect to every score, with the shape of ``scores``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
from sklearn.base import BaseEstimator

from treerank.surrogates._groups import Groups, check_groups

__all__ = ["SurrogateLoss", "check_margin", "prepare_lists"]


def _as_float_array(values, input_name):
    try:
        values = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{input_name} must be an array of numbers: {exc}") from None
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{input_name} contains NaN or infinity.")
    return values


def check_margin(margin):
    """Validate the margin of a pairwise or listwise surrogate.

    Parameters
    ----------
    margin : float
        A finite number ``>= 0`` (not a boolean).

    Raises
    ------
    ValueError
        If ``margin`` is anything else.
    """
    if (
        isinstance(margin, bool)
        or not isinstance(margin, (int, float, np.integer, np.floating))
        or not math.isfinite(margin)
        or margin < 0
    ):
        raise ValueError(f"margin must be a finite number >= 0; got {margin!r}.")


def prepare_lists(scores, target, qid, *, target_name="target"):
    """Validate ``(scores, target, qid)`` and flatten batches of lists.

    Returns
    -------
    s : ndarray of shape (n_samples,)
    t : ndarray of shape (n_samples,)
    groups : Groups
    shape : tuple
        The shape of ``scores`` (to give the gradient back in that shape).
    """
    s = _as_float_array(scores, "scores")
    t = _as_float_array(target, target_name)
    shape = s.shape
    if s.ndim == 2:
        if qid is not None:
            raise ValueError(
                "scores is two-dimensional (one list per row): qid must be None."
            )
        if t.shape != s.shape:
            raise ValueError(
                f"{target_name} has shape {t.shape} but scores has shape {s.shape}."
            )
        n_lists, n_items = s.shape
        return s.ravel(), t.ravel(), Groups.regular(n_lists, n_items), shape
    if s.ndim != 1:
        raise ValueError(
            f"scores must be one-dimensional (with qid) or two-dimensional "
            f"(one list per row); got shape {s.shape}."
        )
    if t.shape != s.shape:
        raise ValueError(
            f"{target_name} has shape {t.shape} but scores has shape {s.shape}: "
            "give one target value per score."
        )
    groups = check_groups(qid, s.shape[0])
    return s, t, groups, shape


class SurrogateLoss(BaseEstimator):
    """Base class of the list surrogate losses (value and gradient in the scores).

    Subclasses implement ``_value_and_grad(s, t, groups)``, returning the
    per-list values (ndarray of shape (n_groups,)) and the gradient (ndarray
    of shape (n_samples,)), and may override ``_check_target``.

    The losses are parameter holders with scikit-learn's ``get_params`` /
    ``set_params`` (so an estimator that takes a loss can tune its
    parameters with ``loss__<name>``); they are not estimators.

    Class attributes: ``requires_qid`` (the loss couples the items of a
    list), ``is_smooth`` (continuously differentiable in the scores),
    ``translation_invariant`` (adding a constant to a list's scores changes
    nothing).

    Examples
    --------
    >>> from treerank.surrogates import PairwiseLogistic, SurrogateLoss
    >>> loss = PairwiseLogistic()
    >>> isinstance(loss, SurrogateLoss), loss.requires_qid
    (True, True)
    >>> loss.value([0.0, 0.0, 1.0, 1.0], [1.0, 0.0, 1.0, 0.0], qid=[0, 0, 1, 1])
    1.3862943611198906
    """

    requires_qid = True
    is_smooth = True
    translation_invariant = False
    target_name = "target"

    def _check_target(self, t, groups):
        return t

    def _prepare(self, scores, target, qid):
        s, t, groups, shape = prepare_lists(
            scores, target, qid, target_name=self.target_name
        )
        t = self._check_target(t, groups)
        return s, t, groups, shape

    def value(self, scores, target, *, qid=None, return_per_query=False):
        """Loss of the scores, summed over the lists.

        Parameters
        ----------
        scores : array-like of shape (n_samples,) or (n_lists, n_items)
            Predicted scores (higher is ranked first).
        target : array-like of the same shape as ``scores``
            Supervision (relevance labels or utilities, see the class).
        qid : array-like of shape (n_samples,), default=None
            Query id of each item; None means a single list (or one list per
            row of a two-dimensional ``scores``).
        return_per_query : bool, default=False
            Return the per-list values instead of their sum.

        Returns
        -------
        value : float or ndarray of shape (n_lists,)
        """
        s, t, groups, _ = self._prepare(scores, target, qid)
        per_query, _ = self._value_and_grad(s, t, groups)
        return per_query if return_per_query else float(per_query.sum())

    def grad(self, scores, target, *, qid=None):
        """Gradient (a subgradient where the loss has a kink) in the scores.

        Parameters
        ----------
        scores : array-like of shape (n_samples,) or (n_lists, n_items)
        target : array-like of the same shape as ``scores``
        qid : array-like of shape (n_samples,), default=None

        Returns
        -------
        grad : ndarray of the shape of ``scores``
        """
        s, t, groups, shape = self._prepare(scores, target, qid)
        _, grad = self._value_and_grad(s, t, groups)
        return grad.reshape(shape)

    def value_and_grad(self, scores, target, *, qid=None, return_per_query=False):
        """Value (summed, or per list) and gradient in one pass.

        Parameters
        ----------
        scores : array-like of shape (n_samples,) or (n_lists, n_items)
        target : array-like of the same shape as ``scores``
        qid : array-like of shape (n_samples,), default=None
        return_per_query : bool, default=False

        Returns
        -------
        value : float or ndarray of shape (n_lists,)
        grad : ndarray of the shape of ``scores``
        """
        s, t, groups, shape = self._prepare(scores, target, qid)
        per_query, grad = self._value_and_grad(s, t, groups)
        value = per_query if return_per_query else float(per_query.sum())
        return value, grad.reshape(shape)

    def _value_and_grad(self, s, t, groups):  # pragma: no cover - abstract
        raise NotImplementedError

    def _smooth_value_and_grad(self, s, t, groups, smoothing):
        """Value and gradient of a smooth version (the loss itself by default)."""
        return self._value_and_grad(s, t, groups)
