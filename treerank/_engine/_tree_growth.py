"""The TreeRank kernel: a whole ranking tree grown in one compiled call.

Nodes are processed depth-first, left (better) child first, and numbered in
that order (preorder), so the leaves sorted by node id are the ranking, best
first. Each node is an index segment of the row array; a split partitions it in
place (:func:`treerank._engine._rule_growth.grow_rule`). A node becomes a leaf
when it reaches ``max_depth``, holds fewer than ``min_samples_split`` rows, is
pure, or when its rule finds no side with local TPR - FPR above ``min_gain``
(or sends every row to one side).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._jit import inner_jit, jit
from treerank._engine._prefetch import prefetch
from treerank._engine._random import shuffle_prefix
from treerank._engine._rule_growth import (
    grow_rule,
    max_rule_nodes,
    sample_for_rule,
    split_by_rule,
)
from treerank._engine._sorting import stable_argsort

__all__ = ["grow_tree"]

# a rule is grown on a node-local copy of its rows' codes, classes and weights
# (gathered once, then read in order by each level of the inner tree) when a
# row's codes fit in about a cache line: each level of the inner tree then
# reads contiguous memory instead of the node's scattered rows of ``codes``
COPY_MAX_FEATURES = 64
# rows of the node-local copy when the rules are fitted on all the node's rows
_GATHER_MAX_ROWS = 1 << 16
# loops over a node's scattered rows ask for the row this many iterations ahead
_AHEAD = 16


@inner_jit
def _prefetch_row(codes, y, w, m, row):
    """Ask for a row's codes, class, weight and multiplicity ahead of use."""
    prefetch(codes, row)
    prefetch(y, row)
    prefetch(w, row)
    prefetch(m, row)


@inner_jit
def _enlarge(array, size):
    """A copy of ``array`` with room for at least ``size`` entries."""
    out = np.empty(max(size, 2 * array.shape[0]), dtype=array.dtype)
    for i in range(array.shape[0]):
        out[i] = array[i]
    return out


@inner_jit
def _enlarge_rows(array, size):
    """A copy of a 2-d ``array`` with room for at least ``size`` rows."""
    out = np.empty((max(size, 2 * array.shape[0]), array.shape[1]), dtype=array.dtype)
    for i in range(array.shape[0]):
        for j in range(array.shape[1]):
            out[i, j] = array[i, j]
    return out


@jit
def grow_tree(
    codes,
    y,
    w,
    m,
    rows,
    n_bins,
    is_categorical,
    monotonic,
    max_depth,
    min_samples_split,
    n_features_node,
    rule_max_depth,
    min_leaf_count,
    min_leaf_fraction,
    rule_max_features,
    criterion,
    splitter,
    max_fit_rows,
    state,
    min_gain,
    copy_max_features,
):
    """Grow a ranking tree on the rows ``rows`` (all with positive weight).

    Parameters
    ----------
    codes : ndarray of uint8 of shape (n_samples, n_features)
    y : ndarray of uint8 of shape (n_samples,)
    w : ndarray of float64 of shape (n_samples,)
    m : ndarray of float64 of shape (n_samples,)
        Multiplicity of each row: the number of training rows it stands for.
        A forest merges identical rows (same bin codes, same class) into one
        row of summed weight; ``min_samples_split`` and the LeafRank's
        minimum leaf size count rows with their multiplicity, so that the
        tree grown is the one grown on the rows themselves. Sampling large
        nodes (``max_fit_rows``) counts the merged rows, whose number is
        what the time depends on.
    rows : ndarray of int64
        The rows of the tree's sample (permuted in place).
    n_bins : ndarray of int32 of shape (n_features,)
    is_categorical : ndarray of uint8 of shape (n_features,)
    monotonic : ndarray of int8 of shape (n_features,)
        Monotonic constraints of the features (see ``grow_rule``).
    max_depth : int
        Maximum depth of the master tree (-1: none).
    min_samples_split : int
    n_features_node : int
        Features drawn for each master node (FR1); 0 for all.
    rule_max_depth : int
        Depth of each LeafRank's inner tree.
    min_leaf_count : int
        Minimum rows per inner leaf (used when ``min_leaf_fraction`` is 0).
    min_leaf_fraction : float
        If positive, the minimum is ``ceil(fraction * rows of the node)``.
    rule_max_features : int
        Features drawn at each inner split (FR2); 0 for all.
    criterion : int
    splitter : int
        How the inner splits choose a numeric threshold (see ``grow_rule``).
    max_fit_rows : int
        A node of more rows fits its rule on a class-stratified sample of this
        many of them (see ``grow_rule``); 0 for no limit.
    state : ndarray of uint64 of shape (1,)
    min_gain : float
    copy_max_features : int
        Rules are grown on node-local copies of the rows when these have at
        most this many features (:data:`COPY_MAX_FEATURES`; 0 for never).

    Returns
    -------
    tuple of ndarrays
        Master nodes: children_left, children_right, n_pos, n_neg, rule_start,
        rule_stop, gain; inner nodes: feature, bin, missing_left, child_left,
        child_right, left_leaf, improvement, missing_seen, category; the
        category sets
        (uint64 of shape (n_sets, 4)); and the leaf (node id) of every
        row of ``rows`` (-1 for other rows), of shape (n_samples,).
    """
    n_samples, n_features = codes.shape
    n_node_features = n_features
    if 0 < n_features_node < n_features:
        n_node_features = n_features_node
    all_features = np.arange(n_features)
    hist_pool = np.empty((rule_max_depth + 3, n_node_features, 256, 3))
    scratch = np.empty(rows.shape[0], dtype=np.int64)
    sub = np.empty(min(max(max_fit_rows, 0), rows.shape[0]), dtype=np.int64)
    leaf_of_row = np.full(n_samples, -1, dtype=np.int32)
    # node-local copies (see COPY_MAX_FEATURES), with the argument types of
    # the global arrays: one compilation of grow_rule
    local_capacity = 0
    if n_features <= copy_max_features:
        local_capacity = min(
            rows.shape[0], max_fit_rows if max_fit_rows > 0 else _GATHER_MAX_ROWS
        )
    local_codes = np.empty((local_capacity, n_features), dtype=codes.dtype)
    local_y = np.empty(local_capacity, dtype=y.dtype)
    local_w = np.empty(local_capacity, dtype=w.dtype)
    local_m = np.empty(local_capacity, dtype=m.dtype)
    local_rows = np.empty(local_capacity, dtype=rows.dtype)

    capacity = 64
    children_left = np.empty(capacity, dtype=np.int32)
    children_right = np.empty(capacity, dtype=np.int32)
    n_pos = np.empty(capacity, dtype=np.float64)
    n_neg = np.empty(capacity, dtype=np.float64)
    rule_start = np.empty(capacity, dtype=np.int32)
    rule_stop = np.empty(capacity, dtype=np.int32)
    gains = np.empty(capacity, dtype=np.float64)

    rule_capacity = 256
    feature = np.empty(rule_capacity, dtype=np.int32)
    threshold_bin = np.empty(rule_capacity, dtype=np.uint8)
    missing_left = np.empty(rule_capacity, dtype=np.uint8)
    child_left = np.empty(rule_capacity, dtype=np.int32)
    child_right = np.empty(rule_capacity, dtype=np.int32)
    left_leaf = np.empty(rule_capacity, dtype=np.uint8)
    improvement = np.empty(rule_capacity, dtype=np.float64)
    missing_seen = np.empty(rule_capacity, dtype=np.uint8)
    category = np.empty(rule_capacity, dtype=np.int32)
    category_sets = np.empty((rule_capacity, 4), dtype=np.uint64)
    n_category_sets = np.zeros(1, dtype=np.int64)
    n_rule_nodes = np.int64(0)  # not a literal: one compilation of grow_rule

    stack_capacity = 64
    stack_start = np.empty(stack_capacity, dtype=np.int64)
    stack_stop = np.empty(stack_capacity, dtype=np.int64)
    stack_depth = np.empty(stack_capacity, dtype=np.int64)
    stack_parent = np.empty(stack_capacity, dtype=np.int64)
    stack_side = np.empty(stack_capacity, dtype=np.int64)
    stack_start[0] = 0
    stack_stop[0] = rows.shape[0]
    stack_depth[0] = 0
    stack_parent[0] = -1
    stack_side[0] = 0
    top = 1
    n_nodes = 0
    while top > 0:
        top -= 1
        start = stack_start[top]
        stop = stack_stop[top]
        depth = stack_depth[top]
        parent = stack_parent[top]
        node = n_nodes
        n_nodes += 1
        if n_nodes > capacity:
            capacity = 2 * capacity
            children_left = _enlarge(children_left, capacity)
            children_right = _enlarge(children_right, capacity)
            n_pos = _enlarge(n_pos, capacity)
            n_neg = _enlarge(n_neg, capacity)
            rule_start = _enlarge(rule_start, capacity)
            rule_stop = _enlarge(rule_stop, capacity)
            gains = _enlarge(gains, capacity)
        if parent >= 0:
            if stack_side[top] == 0:
                children_left[parent] = node
            else:
                children_right[parent] = node
        children_left[node] = -1
        children_right[node] = -1
        rule_start[node] = -1
        rule_stop[node] = -1
        gains[node] = 0.0
        P = 0.0
        N = 0.0
        count = 0.0  # rows counted with their multiplicity
        for i in range(start, stop):
            if i + _AHEAD < stop:
                _prefetch_row(codes, y, w, m, rows[i + _AHEAD])
            row = rows[i]
            count += m[row]
            if y[row] == 1:
                P += w[row]
            else:
                N += w[row]
        n_pos[node] = P
        n_neg[node] = N
        n_rows = stop - start
        n_inner = 0
        n_left = 0
        gain = 0.0
        split = not (
            (max_depth >= 0 and depth >= max_depth)
            or count < min_samples_split
            or P <= 0.0
            or N <= 0.0
        )
        if split:
            if n_node_features < n_features:
                shuffle_prefix(all_features, n_node_features, state)
                drawn = np.empty(n_node_features, dtype=np.float64)
                for j in range(n_node_features):
                    drawn[j] = all_features[j]
                ranks = stable_argsort(drawn, np.int64(n_node_features))
                node_features = np.empty(n_node_features, dtype=np.int64)
                for j in range(n_node_features):
                    node_features[j] = all_features[ranks[j]]
            else:
                node_features = all_features.copy()
            fitted_rows = rows
            fit_start = start
            fit_stop = stop
            fitted = count
            sampled = 0 < max_fit_rows < n_rows  # the rule is fitted on a sample
            if sampled:
                fit_stop = sample_for_rule(
                    rows, start, stop, y, max_fit_rows, state, sub
                )
                fitted_rows = sub
                fit_start = np.int64(0)
                fitted = 0.0
                for i in range(fit_stop):
                    fitted += m[sub[i]]
            min_leaf = min_leaf_count
            if min_leaf_fraction > 0.0:  # of the rows the rule is fitted on
                min_leaf = int(np.ceil(min_leaf_fraction * fitted))
            # a rule's leaf holds min_leaf counted rows and at least one row
            bound = min(np.int64(fitted), (fit_stop - fit_start) * max(min_leaf, 1))
            needed = n_rule_nodes + max_rule_nodes(rule_max_depth, bound, min_leaf)
            if needed > rule_capacity:
                rule_capacity = max(needed, 2 * rule_capacity)
                feature = _enlarge(feature, rule_capacity)
                threshold_bin = _enlarge(threshold_bin, rule_capacity)
                missing_left = _enlarge(missing_left, rule_capacity)
                child_left = _enlarge(child_left, rule_capacity)
                child_right = _enlarge(child_right, rule_capacity)
                left_leaf = _enlarge(left_leaf, rule_capacity)
                improvement = _enlarge(improvement, rule_capacity)
                missing_seen = _enlarge(missing_seen, rule_capacity)
                category = _enlarge(category, rule_capacity)
                category_sets = _enlarge_rows(category_sets, rule_capacity)
            sets_before = n_category_sets[0]
            n_fit = fit_stop - fit_start
            gathered = n_fit <= local_capacity
            if gathered:
                for i in range(n_fit):
                    if sampled and i + _AHEAD < n_fit:
                        ahead = fitted_rows[fit_start + i + _AHEAD]
                        _prefetch_row(codes, y, w, m, ahead)
                    row = fitted_rows[fit_start + i]
                    for f in range(n_features):
                        local_codes[i, f] = codes[row, f]
                    local_y[i] = y[row]
                    local_w[i] = w[row]
                    local_m[i] = m[row]
                    local_rows[i] = i
                rule_codes, rule_y, rule_w = local_codes, local_y, local_w
                rule_m, rule_rows, rule_start_row = local_m, local_rows, np.int64(0)
            else:
                rule_codes, rule_y, rule_w, rule_m = codes, y, w, m
                rule_rows, rule_start_row = fitted_rows, fit_start
            n_inner, n_left, gain = grow_rule(
                rule_codes,
                rule_y,
                rule_w,
                rule_m,
                rule_rows,
                rule_start_row,
                rule_start_row + n_fit,
                node_features,
                n_bins,
                is_categorical,
                monotonic,
                rule_max_depth,
                min_leaf,
                rule_max_features,
                criterion,
                splitter,
                state,
                hist_pool,
                scratch,
                feature,
                threshold_bin,
                missing_left,
                child_left,
                child_right,
                left_leaf,
                improvement,
                missing_seen,
                category,
                category_sets,
                n_category_sets,
                n_rule_nodes,
            )
            if gathered and not sampled:
                # the node's rows in the order the rule's growth left them
                for i in range(n_fit):
                    scratch[i] = rows[start + local_rows[i]]
                for i in range(n_fit):
                    rows[start + i] = scratch[i]
            if sampled:  # all the node's rows split by the rule
                n_left, gain = split_by_rule(
                    codes,
                    y,
                    w,
                    rows,
                    start,
                    stop,
                    scratch,
                    n_rule_nodes,
                    feature,
                    threshold_bin,
                    missing_left,
                    child_left,
                    child_right,
                    left_leaf,
                    category,
                    category_sets,
                )
            split = gain > min_gain and 0 < n_left < n_rows
            if not split:
                n_category_sets[0] = sets_before  # the rule is discarded
        if not split:
            for i in range(start, stop):
                leaf_of_row[rows[i]] = node
            continue
        rule_start[node] = n_rule_nodes
        rule_stop[node] = n_rule_nodes + n_inner
        gains[node] = gain
        n_rule_nodes += n_inner
        if top + 2 > stack_capacity:
            stack_capacity = 2 * stack_capacity
            stack_start = _enlarge(stack_start, stack_capacity)
            stack_stop = _enlarge(stack_stop, stack_capacity)
            stack_depth = _enlarge(stack_depth, stack_capacity)
            stack_parent = _enlarge(stack_parent, stack_capacity)
            stack_side = _enlarge(stack_side, stack_capacity)
        # right pushed first: the left child is numbered first (preorder)
        stack_start[top] = start + n_left
        stack_stop[top] = stop
        stack_depth[top] = depth + 1
        stack_parent[top] = node
        stack_side[top] = 1
        stack_start[top + 1] = start
        stack_stop[top + 1] = start + n_left
        stack_depth[top + 1] = depth + 1
        stack_parent[top + 1] = node
        stack_side[top + 1] = 0
        top += 2
    return (
        children_left[:n_nodes].copy(),
        children_right[:n_nodes].copy(),
        n_pos[:n_nodes].copy(),
        n_neg[:n_nodes].copy(),
        rule_start[:n_nodes].copy(),
        rule_stop[:n_nodes].copy(),
        gains[:n_nodes].copy(),
        feature[:n_rule_nodes].copy(),
        threshold_bin[:n_rule_nodes].copy(),
        missing_left[:n_rule_nodes].copy(),
        child_left[:n_rule_nodes].copy(),
        child_right[:n_rule_nodes].copy(),
        left_leaf[:n_rule_nodes].copy(),
        improvement[:n_rule_nodes].copy(),
        missing_seen[:n_rule_nodes].copy(),
        category[:n_rule_nodes].copy(),
        category_sets[: n_category_sets[0]].copy(),
        leaf_of_row,
    )
