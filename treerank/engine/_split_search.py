"""The best threshold split of one feature, scored from the node's histogram.

Inside a LeafRank the two classes are weighted inversely to their weight in
the master node (class-balanced), so a child holding positive weight ``P_c``
and negative weight ``N_c`` has the balanced masses ``a = P_c / P`` (its local
true positive rate) and ``b = N_c / N`` (its local false positive rate). The
criteria score a split into children (a_L, b_L), (a_R, b_R) by a sum over the
children of

- ``"gini"``: ``(a^2 + b^2) / (a + b)`` -- minus the Gini impurity of the child
  times its mass, up to a constant (the proxy scikit-learn's trees maximize);
- ``"entropy"``: ``a log(a / (a + b)) + b log(b / (a + b))``;
- ``"youden"``: ``|a - b|``: the local TPR - FPR that the best union of the two
  children achieves, twice over (the LeafRank objective itself).

The improvement of a split is that sum minus the same term for the parent.
Missing values (the missing bin) go to the side that scores best; with no
missing value in the node they go, at prediction, to the side of larger weight.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.engine._binning import MISSING_BIN
from treerank.engine._jit import jit

__all__ = ["CRITERIA", "child_term", "search_feature"]

CRITERIA = {"gini": 0, "entropy": 1, "log_loss": 1, "youden": 2}
"""Criterion names and their codes in the kernels."""

_GINI, _ENTROPY, _YOUDEN = 0, 1, 2


@jit
def child_term(a, b, criterion):
    """The criterion's term of one child with balanced masses (a, b)."""
    total = a + b
    if total <= 0.0:
        return 0.0
    if criterion == _GINI:
        return (a * a + b * b) / total
    if criterion == _ENTROPY:
        value = 0.0
        if a > 0.0:
            value += a * np.log(a / total)
        if b > 0.0:
            value += b * np.log(b / total)
        return value
    return abs(a - b)


@jit
def search_feature(
    hist_j,
    n_bins,
    node_pos,
    node_neg,
    node_count,
    P,
    N,
    min_leaf,
    criterion,
    parent_term,
    best,
):
    """Improve ``best`` with the threshold splits of one feature.

    Parameters
    ----------
    hist_j : ndarray of shape (256, 3)
        The node's histogram of the feature.
    n_bins : int
        Number of non-missing bins of the feature.
    node_pos, node_neg, node_count : float
        Positive weight, negative weight and number of rows of the node.
    P, N : float
        Positive and negative weight of the master node (the class-balancing
        totals).
    min_leaf : int
        Minimum number of rows in each child.
    criterion : int
        Code of the criterion (see :data:`CRITERIA`).
    parent_term : float
        The criterion's term of the node itself.
    best : ndarray of float64 of shape (5,)
        ``(improvement, bin, missing_left, left positive weight, left negative
        weight)`` of the best split so far (improvement -inf if none); updated
        in place when a split of this feature is strictly better.

    Returns
    -------
    non_constant : bool
        Whether the feature takes at least two values (bins) in the node.
    """
    miss_pos = hist_j[MISSING_BIN, 0]
    miss_neg = hist_j[MISSING_BIN, 1]
    miss_count = hist_j[MISSING_BIN, 2]
    n_present = 1 if miss_count > 0 else 0
    for b in range(n_bins):
        if hist_j[b, 2] > 0:
            n_present += 1
    if n_present < 2:
        return False
    has_missing = miss_count > 0
    last = n_bins if has_missing else n_bins - 1
    left_pos = 0.0
    left_neg = 0.0
    left_count = 0.0
    for b in range(last):
        count = hist_j[b, 2]
        if count == 0:
            continue  # same partition as the previous threshold
        left_pos += hist_j[b, 0]
        left_neg += hist_j[b, 1]
        left_count += count
        for missing_left in range(2 if has_missing else 1):
            lp = left_pos
            ln = left_neg
            lc = left_count
            if missing_left == 1:
                lp += miss_pos
                ln += miss_neg
                lc += miss_count
            if lc < min_leaf or node_count - lc < min_leaf:
                continue
            rp = node_pos - lp
            rn = node_neg - ln
            value = (
                child_term(lp / P, ln / N, criterion)
                + child_term(rp / P, rn / N, criterion)
                - parent_term
            )
            if value > best[0]:
                best[0] = value
                best[1] = b
                best[2] = missing_left
                best[3] = lp
                best[4] = ln
    return True
