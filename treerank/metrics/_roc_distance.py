"""Exact distances between two piecewise-linear ROC curves.

A ROC curve is given by its knots ``(fpr, tpr)`` (non-decreasing), joined by
segments; several knots with the same ``fpr`` form a vertical segment, where the
curve takes every value between the lowest and the highest ``tpr`` (as a
function of ``fpr`` it has a jump there). The difference of two such curves is
linear between consecutive points of the union of their knots, so both the
sup-norm and the L1 distance are computed exactly from the one-sided limits at
the union of the knots.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.metrics._roc import _check_curve

__all__ = ["roc_l1_distance", "roc_sup_distance"]


def _limits_on_grid(fpr, tpr, grid):
    """Left and right limits of the ROC function at each grid point."""
    first = np.searchsorted(fpr, grid, side="left")
    last = np.searchsorted(fpr, grid, side="right") - 1
    at_knot = (first < fpr.shape[0]) & (first <= last)
    # linear interpolation between the last knot before t and the first after it
    lo = np.clip(first - 1, 0, fpr.shape[0] - 1)
    hi = np.clip(first, 0, fpr.shape[0] - 1)
    span = fpr[hi] - fpr[lo]
    safe = np.where(span > 0, span, 1.0)
    interp = tpr[lo] + (tpr[hi] - tpr[lo]) * np.where(
        span > 0, (grid - fpr[lo]) / safe, 0.0
    )
    left = np.where(at_knot, tpr[np.clip(first, 0, fpr.shape[0] - 1)], interp)
    right = np.where(at_knot, tpr[np.clip(last, 0, fpr.shape[0] - 1)], interp)
    return left, right


def _difference_on_grid(curve1, curve2):
    fpr1, tpr1 = _check_curve(curve1, "curve1")
    fpr2, tpr2 = _check_curve(curve2, "curve2")
    lo = max(fpr1[0], fpr2[0])
    hi = min(fpr1[-1], fpr2[-1])
    if lo > 0 or hi < 1:
        raise ValueError(
            "Both curves must span the whole false positive range [0, 1]; got "
            f"[{fpr1[0]}, {fpr1[-1]}] and [{fpr2[0]}, {fpr2[-1]}]."
        )
    grid = np.union1d(fpr1, fpr2)
    left1, right1 = _limits_on_grid(fpr1, tpr1, grid)
    left2, right2 = _limits_on_grid(fpr2, tpr2, grid)
    return grid, left1 - left2, right1 - right2


def roc_sup_distance(curve1, curve2):
    """Sup-norm distance between two piecewise-linear ROC curves.

    ``sup_alpha |ROC_1(alpha) - ROC_2(alpha)|``, where at a vertical segment both
    one-sided limits are taken into account. Exact: the maximum is reached at a
    knot of one of the curves.

    Parameters
    ----------
    curve1, curve2 : tuple of two array-likes
        ``(fpr, tpr)`` knots of each curve, non-decreasing, from fpr 0 to 1,
        for example the first two outputs of :func:`roc_curve` or
        :func:`roc_curve_from_counts`.

    Returns
    -------
    distance : float

    Examples
    --------
    >>> from treerank.metrics import roc_sup_distance
    >>> diagonal = ([0, 1], [0, 1])
    >>> perfect = ([0, 0, 1], [0, 1, 1])
    >>> roc_sup_distance(diagonal, perfect)
    1.0
    """
    _, diff_left, diff_right = _difference_on_grid(curve1, curve2)
    return float(max(np.abs(diff_left).max(), np.abs(diff_right).max()))


def roc_l1_distance(curve1, curve2):
    """L1 distance between two piecewise-linear ROC curves.

    ``integral_0^1 |ROC_1(alpha) - ROC_2(alpha)| d alpha``, computed exactly:
    between consecutive knots the difference is linear, and an interval where
    it changes sign is split at its root.

    Parameters
    ----------
    curve1, curve2 : tuple of two array-likes
        ``(fpr, tpr)`` knots of each curve, non-decreasing, from fpr 0 to 1.

    Returns
    -------
    distance : float

    Examples
    --------
    >>> from treerank.metrics import roc_l1_distance
    >>> roc_l1_distance(([0, 1], [0, 1]), ([0, 0, 1], [0, 1, 1]))
    0.5
    """
    grid, diff_left, diff_right = _difference_on_grid(curve1, curve2)
    width = np.diff(grid)
    a = diff_right[:-1]  # value just after the left end of each interval
    b = diff_left[1:]  # value just before the right end
    same_sign = a * b >= 0
    area_same = 0.5 * width * (np.abs(a) + np.abs(b))
    denom = np.abs(a) + np.abs(b)
    safe = np.where(denom > 0, denom, 1.0)
    area_cross = 0.5 * width * (a**2 + b**2) / safe
    return float(np.sum(np.where(same_sign, area_same, area_cross)))
