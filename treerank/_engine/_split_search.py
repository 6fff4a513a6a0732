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

from treerank._engine._binning import MISSING_BIN
from treerank._engine._jit import inner_jit, jit
from treerank._engine._random import next_below
from treerank._engine._sorting import stable_argsort

__all__ = [
    "CRITERIA",
    "SPLITTERS",
    "child_term",
    "search_categories",
    "search_feature",
    "search_random_threshold",
]

CRITERIA = {"gini": 0, "entropy": 1, "log_loss": 1, "youden": 2}
"""Criterion names and their codes in the kernels."""

SPLITTERS = {"best": 0, "random": 1}
"""How a numeric feature's threshold is chosen, and the codes in the kernels:
the best of all the node's thresholds, or one drawn at random (extremely
randomized trees; see :func:`search_random_threshold`)."""

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


@inner_jit
def _admissible(lp, ln, rp, rn, P, N, constraint, low, high):
    """Whether the children respect the node's bounds and the constraint.

    A child's value is its class-balanced positive proportion
    ``q = a / (a + b)`` (the order of beta/alpha); both children must stay in
    ``[low, high]``, and for a constraint +1 (-1) the left child, which holds
    the lower values, must not have a larger (smaller) value than the right.
    """
    a = lp / P
    b = ln / N
    q_left = a / (a + b) if a + b > 0.0 else 0.5
    a = rp / P
    b = rn / N
    q_right = a / (a + b) if a + b > 0.0 else 0.5
    if q_left < low or q_left > high or q_right < low or q_right > high:
        return False
    if constraint > 0:
        return q_left <= q_right
    if constraint < 0:
        return q_left >= q_right
    return True


@inner_jit
def _search_thresholds(
    hist_j,
    n_bins,
    node_pos,
    node_neg,
    node_count,
    P,
    N,
    min_leaf,
    parent_term,
    best,
    work,
):
    """:func:`search_feature` for "gini" without missing values, constraint
    or bounds.

    The same scores and the same choice, in three passes without branches
    on the data: the left sums at every non-empty bin (an empty bin adds
    zeros and takes no place), every candidate's score (the compiler scores
    several candidates at once), then the first best. ``work`` is scratch
    space of shape (5, >= 256).
    """
    n = 0
    left_pos = 0.0
    left_neg = 0.0
    left_count = 0.0
    last = n_bins - 1  # the last bin sends every row left
    for b in range(last):
        count = hist_j[b, 2]
        left_pos += hist_j[b, 0]
        left_neg += hist_j[b, 1]
        left_count += count
        work[0, n] = left_pos
        work[1, n] = left_neg
        work[2, n] = left_count
        work[3, n] = b
        n += count > 0
    if n + (hist_j[last, 2] > 0) < 2:
        return False
    # child_term of "gini" written out, without branches
    for i in range(n):
        a = work[0, i] / P
        b = work[1, i] / N
        total = a + b
        left = (a * a + b * b) / total
        a = (node_pos - work[0, i]) / P
        b = (node_neg - work[1, i]) / N
        total_right = a + b
        right = (a * a + b * b) / total_right
        value = (
            (left if total > 0.0 else 0.0)
            + (right if total_right > 0.0 else 0.0)
            - parent_term
        )
        lc = work[2, i]
        admitted = (lc >= min_leaf) & (node_count - lc >= min_leaf)
        work[4, i] = value if admitted else -np.inf
    chosen = -1
    top = best[0]
    for i in range(n):
        if work[4, i] > top:
            top = work[4, i]
            chosen = i
    if chosen >= 0:
        best[0] = top
        best[1] = work[3, chosen]
        best[2] = 0.0
        best[3] = work[0, chosen]
        best[4] = work[1, chosen]
        best[5] = 0.0
        best[6] = work[2, chosen]
    return True


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
    constraint,
    low,
    high,
    work,
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
    best : ndarray of float64 of shape (7,)
        ``(improvement, bin, missing_left, left positive weight, left negative
        weight, categorical, left number of rows)`` of the best split so far
        (improvement -inf if none); updated in place when a split of this
        feature is strictly better.
    constraint : int
        Monotonic constraint of the feature (+1, -1 or 0).
    low, high : float
        Bounds on the children's class-balanced positive proportions (from the
        monotonic constraints above the node; 0 and 1 without).
    work : ndarray of float64 of shape (5, >= 256)
        Scratch space.

    Returns
    -------
    non_constant : bool
        Whether the feature takes at least two values (bins) in the node.
    """
    if (
        criterion == _GINI
        and hist_j[MISSING_BIN, 2] == 0
        and constraint == 0
        and low <= 0.0
        and high >= 1.0
    ):
        return _search_thresholds(
            hist_j,
            n_bins,
            node_pos,
            node_neg,
            node_count,
            P,
            N,
            min_leaf,
            parent_term,
            best,
            work,
        )
    return _search_thresholds_and_missing(
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
        constraint,
        low,
        high,
    )


@jit
def _search_thresholds_and_missing(
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
    constraint,
    low,
    high,
):
    """:func:`search_feature` in one loop: each threshold with the missing
    values on either side, each split checked against the bounds."""
    miss_pos = hist_j[MISSING_BIN, 0]
    miss_neg = hist_j[MISSING_BIN, 1]
    miss_count = hist_j[MISSING_BIN, 2]
    has_missing = miss_count > 0
    n_present = 1 if has_missing else 0
    for b in range(n_bins):
        if hist_j[b, 2] > 0:
            n_present += 1
    if n_present < 2:
        return False
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
            if (constraint != 0 or low > 0.0 or high < 1.0) and not _admissible(
                lp, ln, rp, rn, P, N, constraint, low, high
            ):
                continue
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
                best[5] = 0.0
                best[6] = lc
    return True


@inner_jit
def search_categories(
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
    best_order,
    low,
    high,
):
    """Improve ``best`` with the category-subset splits of a categorical feature.

    For two classes and a concave impurity (and for ``"youden"``), the best
    subset of categories to send left is a prefix of the categories sorted by
    their (class-balanced) positive proportion in the node -- the same argument
    as the merge of a LeafRank's leaves by beta/alpha -- so only the prefixes of
    that order are scored. The missing bin, when the node has missing values,
    is one more category.

    Parameters are those of :func:`search_feature` (a categorical feature has
    no monotonic constraint, but the bounds apply), and ``best_order`` (int64
    of shape (256,)), which receives the order of the categories when the best
    split is found here: the left side is then its first ``best[1]`` entries,
    and ``best[5]`` is set to 1.

    Returns
    -------
    non_constant : bool
    """
    order = np.empty(n_bins + 1, dtype=np.int64)
    key = np.empty(n_bins + 1, dtype=np.float64)
    n_present = 0
    for c in range(n_bins + 1):
        code = c if c < n_bins else MISSING_BIN
        if hist_j[code, 2] > 0:
            a = hist_j[code, 0] / P
            b = hist_j[code, 1] / N
            order[n_present] = code
            key[n_present] = a / (a + b) if a + b > 0.0 else 0.0
            n_present += 1
    if n_present < 2:
        return False
    for k in range(n_present):
        key[k] = -key[k]  # decreasing key
    ranking = stable_argsort(key, np.int64(n_present))
    sorted_codes = np.empty(n_present, dtype=np.int64)
    for k in range(n_present):
        sorted_codes[k] = order[ranking[k]]
    left_pos = 0.0
    left_neg = 0.0
    left_count = 0.0
    for k in range(n_present - 1):
        code = sorted_codes[k]
        left_pos += hist_j[code, 0]
        left_neg += hist_j[code, 1]
        left_count += hist_j[code, 2]
        if left_count < min_leaf or node_count - left_count < min_leaf:
            continue
        if (low > 0.0 or high < 1.0) and not _admissible(
            left_pos,
            left_neg,
            node_pos - left_pos,
            node_neg - left_neg,
            P,
            N,
            np.int8(0),  # no constraint (a typed value: one compilation)
            low,
            high,
        ):
            continue
        value = (
            child_term(left_pos / P, left_neg / N, criterion)
            + child_term(
                (node_pos - left_pos) / P, (node_neg - left_neg) / N, criterion
            )
            - parent_term
        )
        if value > best[0]:
            best[0] = value
            best[1] = k + 1
            best[2] = 0.0
            best[3] = left_pos
            best[4] = left_neg
            best[5] = 1.0
            best[6] = left_count
            for i in range(n_present):
                best_order[i] = sorted_codes[i]
    return True


@inner_jit
def search_random_threshold(
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
    constraint,
    low,
    high,
    state,
):
    """Improve ``best`` with one threshold of one feature, drawn at random.

    The threshold bin is uniform between the lowest and the highest non-empty
    bins of the node (the split "bin <= t" for t in ``[lo, hi - 1]``, and
    ``t = hi`` -- present values against missing ones -- when the node has
    missing values; with quantile bins, a threshold uniform over the node's
    range of quantiles, as LightGBM's ``extra_trees``). Missing values go to
    the side that scores best, as in :func:`search_feature`.

    This is the split of extremely randomized trees (Geurts, Ernst and
    Wehenkel, 2006): the feature is still chosen by the criterion among the
    drawn ones, but its threshold is not fitted, so that trees grown on the
    same data differ in where they cut, and their aggregate draws a smooth
    boundary where fitted thresholds pile up at the same places.

    Parameters are those of :func:`search_feature` (without ``work``) and
    ``state``, the kernel's random generator.

    Returns
    -------
    non_constant : bool
        Whether the feature takes at least two values (bins, the missing bin
        included) in the node.
    """
    miss_pos = hist_j[MISSING_BIN, 0]
    miss_neg = hist_j[MISSING_BIN, 1]
    miss_count = hist_j[MISSING_BIN, 2]
    has_missing = miss_count > 0
    lowest = -1
    highest = -1
    for b in range(n_bins):
        if hist_j[b, 2] > 0:
            if lowest < 0:
                lowest = b
            highest = b
    if lowest < 0 or (highest == lowest and not has_missing):
        return False
    # the thresholds "bin <= t" that split the node's values: t in
    # [lowest, highest - 1], and t = highest (present values against missing
    # ones) when some are missing, as in search_feature
    n_thresholds = highest - lowest + (1 if has_missing else 0)
    threshold = lowest + next_below(state, n_thresholds)
    left_pos = 0.0
    left_neg = 0.0
    left_count = 0.0
    for b in range(lowest, threshold + 1):
        left_pos += hist_j[b, 0]
        left_neg += hist_j[b, 1]
        left_count += hist_j[b, 2]
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
        if (constraint != 0 or low > 0.0 or high < 1.0) and not _admissible(
            lp, ln, rp, rn, P, N, constraint, low, high
        ):
            continue
        value = (
            child_term(lp / P, ln / N, criterion)
            + child_term(rp / P, rn / N, criterion)
            - parent_term
        )
        if value > best[0]:
            best[0] = value
            best[1] = threshold
            best[2] = missing_left
            best[3] = lp
            best[4] = ln
            best[5] = 0.0
            best[6] = lc
    return True
