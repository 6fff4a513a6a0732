"""Utilities u(y) that instantiate a template loss for a positional metric.

A positional metric (GPPM) is ``r(y, sigma) = b(y) + sum_k phi(k) u_{sigma(k)}(y)``;
an order-preserving template loss ``l(s, v)`` fed ``v = u(y)`` is calibrated
for every metric with that utility. The named utilities are computed per list
without a loop over lists.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.metrics._positional import gain_values, ideal_dcg

__all__ = ["UTILITIES", "compute_utility", "gain", "log2_discount"]

UTILITIES = ("identity", "dcg", "ndcg", "precision", "recall", "auc")


def gain(y, kind="exp2"):
    """Gain of relevance grades: ``2^y - 1`` (``"exp2"``) or ``y`` (``"linear"``)."""
    if kind not in ("exp2", "linear"):
        raise ValueError(f"gain must be 'exp2' or 'linear'; got {kind!r}.")
    return gain_values(y, kind)


def log2_discount(positions):
    """Discount ``1 / log2(1 + k)`` of 1-based positions ``k``."""
    return 1.0 / np.log2(1.0 + np.asarray(positions, dtype=np.float64))


def _check_binary(y, utility):
    if not np.all((y == 0) | (y == 1)):
        raise ValueError(
            f"utility={utility!r} needs binary relevance labels (0 or 1); "
            "binarize graded labels explicitly, e.g. y > 0."
        )


def compute_utility(utility, y, groups, *, k=None, gain_kind="exp2"):
    """Utility vector ``u(y)`` of every item, list by list.

    Parameters
    ----------
    utility : str, callable or object with a ``utility`` method
        ``"identity"`` (``u = y``), ``"dcg"`` (``u = G(y)``), ``"ndcg"``
        (``u = G(y) / N_k(y)``, 0 for an all-irrelevant list), ``"precision"``
        (``u = y``, binary), ``"recall"`` (``u = y / |y|``, 0 for an empty list),
        ``"auc"`` (``u = y / (P N)``, 0 when P or N is 0); a callable
        ``u(y_list) -> v_list`` or a metric object (``metric.utility``) is
        applied list by list.
    y : ndarray of shape (n_samples,)
    groups : Groups
    k : int or None, default=None
        Cut-off of the ``"ndcg"`` normalizer.
    gain_kind : {"exp2", "linear"}, default="exp2"

    Returns
    -------
    u : ndarray of shape (n_samples,)
    """
    if isinstance(utility, str):
        if utility == "identity":
            return y.copy()
        if utility in ("dcg", "ndcg"):
            if np.any(y < 0):
                raise ValueError(f"utility={utility!r} needs relevance labels >= 0.")
            g = gain(y, gain_kind)
            if utility == "dcg":
                return g
            norm = ideal_dcg(g, groups, k)[groups.index]
            return np.divide(g, norm, out=np.zeros_like(g), where=norm > 0)
        if utility in ("precision", "recall", "auc"):
            _check_binary(y, utility)
            if utility == "precision":
                return y.copy()
            n_pos = groups.sum(y)[groups.index]
            if utility == "recall":
                return np.divide(y, n_pos, out=np.zeros_like(y), where=n_pos > 0)
            n_neg = groups.sizes[groups.index] - n_pos
            denom = n_pos * n_neg
            return np.divide(y, denom, out=np.zeros_like(y), where=denom > 0)
        raise ValueError(
            f"utility must be one of {UTILITIES}, a callable or a metric object with "
            f"a 'utility' method; got {utility!r}."
        )
    func = getattr(utility, "utility", utility)
    if not callable(func):
        raise ValueError(
            f"utility must be one of {UTILITIES}, a callable or a metric object with "
            f"a 'utility' method; got {utility!r}."
        )
    u = np.empty_like(y)
    for g in range(groups.n_groups):
        members = groups.order[groups.starts[g] : groups.ends[g]]
        values = np.asarray(func(y[members]), dtype=np.float64)
        if values.shape != members.shape:
            raise ValueError(
                f"the utility returned shape {values.shape} for a list of "
                f"{members.shape[0]} items."
            )
        u[members] = values
    if not np.all(np.isfinite(u)):
        raise ValueError("the utility returned NaN or infinite values.")
    return u
