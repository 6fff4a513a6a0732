"""The LeafRank kernel: one node of a ranking tree split in two.

For the rows of a master node (an index segment ``rows[start:stop]``), grow a
class-balanced classification tree of depth ``max_depth`` from histograms
(see :mod:`treerank._engine._split_search`), sort its leaves by decreasing local
ratio ``beta / alpha`` (true over false positive rate; a leaf without negative
weight first, an empty leaf last), keep the prefix maximizing ``beta - alpha``
and make its union the left (better) side. The segment is then partitioned in
place, left rows first, so that the master tree's children are index segments
too: no copy of X, no per-node Python object.

The inner tree's nodes are written to flat output arrays from position
``base`` on (children as local indices, -1 for leaves).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._binning import MISSING_BIN
from treerank._engine._histogram import build_histograms, subtract_histograms
from treerank._engine._jit import inner_jit, jit
from treerank._engine._random import next_below, shuffle_prefix
from treerank._engine._sorting import stable_argsort
from treerank._engine._split_search import (
    SPLITTERS,
    child_term,
    search_categories,
    search_feature,
    search_random_threshold,
)

__all__ = [
    "fit_single_rule",
    "grow_rule",
    "max_rule_nodes",
    "rule_goes_left",
    "sample_for_rule",
    "split_by_rule",
]


_RANDOM = SPLITTERS["random"]


@jit
def max_rule_nodes(max_depth, n_rows, min_leaf):
    """Upper bound on the number of inner nodes of one rule."""
    by_depth = (1 << min(max_depth + 1, 40)) - 1
    by_size = 2 * (n_rows // max(min_leaf, 1)) + 1
    return min(by_depth, by_size)


@inner_jit
def _stays_leaf(depth, count, pos, neg, max_depth, min_leaf):
    return depth >= max_depth or count < 2 * min_leaf or pos <= 0.0 or neg <= 0.0


# unit roundoff of float64
_ROUNDOFF = 2.0**-53


@jit
def _remaining_weight(total, part, n_terms):
    """``total - part`` for sums of at most ``n_terms`` non-negative weights.

    A class absent from the right child leaves a residue of the rounding of
    the two sums (of either sign) instead of 0: a pure child would look
    impure, grow splits of zero gain and, drawing features for them, shift
    the rest of the tree's random stream (rescaling the weights by 3 changed
    such trees). A difference within the rounding error of the sums (at most
    ``2 n u total``) is 0.
    """
    remaining = total - part
    if remaining <= 2.0 * n_terms * _ROUNDOFF * total:
        return 0.0
    return remaining


@jit
def _partition(codes, rows, start, stop, feature, threshold_bin, missing_left, scratch):
    """Stable in-place partition of a segment by a split; returns the left size."""
    n_left = 0
    n_right = 0
    for i in range(start, stop):
        row = rows[i]
        code = codes[row, feature]
        if code == MISSING_BIN:
            left = missing_left
        else:
            left = code <= threshold_bin
        if left:
            rows[start + n_left] = row
            n_left += 1
        else:
            scratch[n_right] = row
            n_right += 1
    for i in range(n_right):
        rows[start + n_left + i] = scratch[i]
    return n_left


@jit
def _partition_categories(
    codes, rows, start, stop, feature, category_set, missing_left, scratch
):
    """Stable partition by a category subset (a 256-bit set); left size."""
    n_left = 0
    n_right = 0
    for i in range(start, stop):
        row = rows[i]
        code = codes[row, feature]
        if code == MISSING_BIN:
            left = missing_left
        else:
            left = (category_set[code >> 6] >> np.uint64(code & 63)) & np.uint64(1)
        if left:
            rows[start + n_left] = row
            n_left += 1
        else:
            scratch[n_right] = row
            n_right += 1
    for i in range(n_right):
        rows[start + n_left + i] = scratch[i]
    return n_left


@inner_jit
def _evaluate(
    hist_j,
    f,
    is_categorical,
    monotonic,
    n_bins,
    node_pos,
    node_neg,
    count,
    P,
    N,
    min_leaf,
    criterion,
    splitter,
    parent_term,
    best,
    best_order,
    low,
    high,
    work,
    state,
):
    if is_categorical[f]:
        return search_categories(
            hist_j,
            n_bins[f],
            node_pos,
            node_neg,
            count,
            P,
            N,
            min_leaf,
            criterion,
            parent_term,
            best,
            best_order,
            low,
            high,
        )
    if splitter == _RANDOM:
        return search_random_threshold(
            hist_j,
            n_bins[f],
            node_pos,
            node_neg,
            count,
            P,
            N,
            min_leaf,
            criterion,
            parent_term,
            best,
            monotonic[f],
            low,
            high,
            state,
        )
    return search_feature(
        hist_j,
        n_bins[f],
        node_pos,
        node_neg,
        count,
        P,
        N,
        min_leaf,
        criterion,
        parent_term,
        best,
        monotonic[f],
        low,
        high,
        work,
    )


@inner_jit
def grow_rule(
    codes,
    y,
    w,
    m,
    rows,
    start,
    stop,
    node_features,
    n_bins,
    is_categorical,
    monotonic,
    max_depth,
    min_leaf,
    max_features,
    criterion,
    splitter,
    state,
    hist_pool,
    scratch,
    out_feature,
    out_bin,
    out_missing_left,
    out_child_left,
    out_child_right,
    out_left_leaf,
    out_improvement,
    out_missing_seen,
    out_category,
    category_sets,
    n_category_sets,
    base,
):
    """Grow and merge the LeafRank rule of the segment ``rows[start:stop]``.

    The inner tree is grown on all the rows of the segment. A node too large
    for that is fitted on a sample (:func:`sample_for_rule`, the segment being
    the sample), then split by its rule (:func:`split_by_rule`): the master
    tree's kernel calls these three directly, so that no kernel lies between
    it and this one (each level of calls compiles the code below it again).

    Parameters
    ----------
    codes : ndarray of uint8 of shape (n_samples, n_features)
    y : ndarray of uint8 of shape (n_samples,)
        1 for positives.
    w : ndarray of float64 of shape (n_samples,)
        Positive weights of the rows in the segment.
    m : ndarray of float64 of shape (n_samples,)
        Multiplicity of each row: the number of training rows it stands for
        (all 1 unless identical rows were merged). Row counts (``min_leaf``,
        the depth of the stopping rules) count rows with their multiplicity.
    rows : ndarray of int64
        Row indices; the segment is partitioned in place, left rows first.
    node_features : ndarray of int64
        The features the rule may use.
    n_bins : ndarray of int32 of shape (n_features,)
    is_categorical : ndarray of uint8 of shape (n_features,)
        Features whose bins are categories (split by subsets).
    monotonic : ndarray of int8 of shape (n_features,)
        Monotonic constraints (+1: the rule's left side must be an up-set in
        the feature, -1 a down-set, 0 none). Each inner node carries bounds on
        its class-balanced positive proportion; a split on a constrained
        feature must order its children accordingly and splits their bounds
        at the midpoint of their values, every split keeps its children within
        the node's bounds, and the merge keeps or drops leaves of equal ratio
        together: the left side is then monotone in the constrained features.
    max_depth, min_leaf : int
        Depth of the inner tree and minimum number of rows in its leaves.
    max_features : int
        Features drawn at each inner split (0 or more than available: all).
    criterion : int
    splitter : int
        A code of :data:`~treerank._engine._split_search.SPLITTERS`: the best
        threshold of each drawn numeric feature, or one drawn at random.
    state : ndarray of uint64 of shape (1,)
        Random generator state (feature draws, random thresholds).
    hist_pool : ndarray of float64 of shape (n_slots, >= n_node_features, 256, 3)
        Work space for ``max_depth + 2`` histograms.
    scratch : ndarray of int64 of shape (>= stop - start,)
        Work space for the partitions.
    out_* : ndarrays
        Flat outputs for the inner nodes, written from ``base`` on;
        ``out_category`` is the row of ``category_sets`` holding a categorical
        split's set of categories sent left (-1 for a threshold split), and
        ``out_missing_seen`` whether the split's node had missing values.
    category_sets : ndarray of uint64 of shape (capacity, 4)
        256-bit category sets, appended from row ``n_category_sets[0]`` on
        (room for one per inner node of this rule is needed).
    n_category_sets : ndarray of int64 of shape (1,)
        Number of rows of ``category_sets`` in use (updated).

    Returns
    -------
    n_nodes : int
        Number of inner nodes written.
    n_left : int
        Number of rows sent left (they now come first in the segment).
    gain : float
        Local TPR - FPR of the left side (0 if it is empty).
    """
    n_node_features = node_features.shape[0]
    P = 0.0
    N = 0.0
    M = 0.0
    for i in range(start, stop):
        row = rows[i]
        M += m[row]
        if y[row] == 1:
            P += w[row]
        else:
            N += w[row]
    # a leaf holds at least min_leaf counted rows and at least one row
    capacity = max_rule_nodes(
        max_depth, min(np.int64(M), (stop - start) * max(min_leaf, 1)), min_leaf
    )
    seg_start = np.empty(capacity, dtype=np.int64)
    counts = np.empty(capacity, dtype=np.float64)
    seg_stop = np.empty(capacity, dtype=np.int64)
    depth = np.empty(capacity, dtype=np.int64)
    pos = np.empty(capacity, dtype=np.float64)
    neg = np.empty(capacity, dtype=np.float64)
    slot = np.full(capacity, -1, dtype=np.int64)
    stack = np.empty(capacity, dtype=np.int64)
    low = np.empty(capacity, dtype=np.float64)
    high = np.empty(capacity, dtype=np.float64)
    constrained = False
    for j in range(node_features.shape[0]):
        if monotonic[node_features[j]] != 0:
            constrained = True

    k = n_node_features
    if 0 < max_features < n_node_features:
        k = max_features
    # with few features drawn per split, histograms of the drawn features only
    # are cheaper than histograms of all features with sibling subtraction
    direct = 2 * k < n_node_features
    n_slots = hist_pool.shape[0]
    free = np.arange(n_slots)
    n_free = n_slots
    order = np.arange(n_node_features)
    # known[t, jj]: feature node_features[jj] takes a single value in inner
    # node t (found at t or an ancestor): never drawn again below t
    known = np.zeros((capacity, n_node_features), dtype=np.uint8)
    batch_features = np.empty(n_node_features, dtype=np.int64)
    best = np.empty(7, dtype=np.float64)
    best_order = np.empty(256, dtype=np.int64)
    work = np.empty((5, 256), dtype=np.float64)  # the split search's scratch

    seg_start[0] = start
    seg_stop[0] = stop
    counts[0] = M
    depth[0] = 0
    pos[0] = P
    neg[0] = N
    low[0] = 0.0
    high[0] = 1.0
    n_nodes = 1
    if not direct and not _stays_leaf(np.int64(0), M, P, N, max_depth, min_leaf):
        n_free -= 1
        slot[0] = free[n_free]
        build_histograms(
            codes,
            y,
            w,
            m,
            rows,
            start,
            stop,
            node_features,
            n_node_features,
            n_bins,
            hist_pool[slot[0]],
        )
    stack[0] = 0
    top = 1
    while top > 0:
        top -= 1
        t = stack[top]
        o = base + t
        out_child_left[o] = -1
        out_child_right[o] = -1
        out_feature[o] = -1
        out_bin[o] = 0
        out_missing_left[o] = 0
        out_left_leaf[o] = 0
        out_improvement[o] = 0.0
        out_missing_seen[o] = 0
        out_category[o] = -1
        s = seg_start[t]
        e = seg_stop[t]
        count = counts[t]
        if _stays_leaf(depth[t], count, pos[t], neg[t], max_depth, min_leaf):
            if slot[t] >= 0:
                free[n_free] = slot[t]
                n_free += 1
            continue
        parent_term = child_term(pos[t] / P, neg[t] / N, criterion)
        best[0] = -np.inf
        # not a literal: the partitions are typed (and compiled) once
        best_feature = np.int64(-1)
        best_missing = 0.0
        counted = 0
        visited = 0
        n_candidates = 0  # the features not known to be constant here
        for jj in range(n_node_features):
            if known[t, jj] == 0:
                order[n_candidates] = jj
                n_candidates += 1
        # The drawn features, each scored by the one call of _evaluate below:
        # with few features drawn (direct), a batch of them is drawn at once
        # and its histograms are built into one scratch buffer (entry q of the
        # batch); otherwise the node's histograms of all its features are in
        # its pool slot (built or subtracted from the parent's; entry jj) and
        # the features are drawn one at a time.
        source = hist_pool[0] if direct else hist_pool[slot[t]]
        while counted < k and visited < n_candidates:
            if direct:
                batch = min(k - counted, n_candidates - visited)
                shuffle_prefix(order[visited:n_candidates], batch, state)
                for q in range(batch):
                    batch_features[q] = node_features[order[visited + q]]
                build_histograms(
                    codes,
                    y,
                    w,
                    m,
                    rows,
                    s,
                    e,
                    batch_features,
                    batch,
                    n_bins,
                    source,
                )
            else:
                batch = 1
                if k < n_candidates:
                    shuffle_prefix(order[visited:n_candidates], np.int64(1), state)
            for q in range(batch):
                jj = order[visited + q]
                entry = q if direct else jj
                f = node_features[jj]
                before = best[0]
                if _evaluate(
                    source[entry],
                    f,
                    is_categorical,
                    monotonic,
                    n_bins,
                    pos[t],
                    neg[t],
                    count,
                    P,
                    N,
                    min_leaf,
                    criterion,
                    splitter,
                    parent_term,
                    best,
                    best_order,
                    low[t],
                    high[t],
                    work,
                    state,
                ):
                    counted += 1
                else:
                    known[t, jj] = 1
                if best[0] > before:
                    best_feature = f
                    best_missing = source[entry, MISSING_BIN, 2]
            visited += batch
        if best_feature < 0:
            if slot[t] >= 0:
                free[n_free] = slot[t]
                n_free += 1
            continue
        left_pos = best[3]
        left_neg = best[4]
        if best[5] > 0.5:  # a subset of categories
            threshold_bin = 0
            set_row = n_category_sets[0]
            n_category_sets[0] += 1
            category_set = category_sets[set_row]
            for word in range(4):
                category_set[word] = 0
            trained_missing_left = np.bool_(False)  # not a literal (one compilation)
            for i in range(int(best[1])):
                code = best_order[i]
                if code == MISSING_BIN:
                    trained_missing_left = True
                else:
                    category_set[code >> 6] |= np.uint64(1) << np.uint64(code & 63)
            out_category[o] = set_row
            n_left = _partition_categories(
                codes,
                rows,
                s,
                e,
                best_feature,
                category_set,
                trained_missing_left,
                scratch,
            )
        else:
            threshold_bin = int(best[1])
            trained_missing_left = best[2] > 0.5
            n_left = _partition(
                codes,
                rows,
                s,
                e,
                best_feature,
                threshold_bin,
                trained_missing_left,
                scratch,
            )
        missing_left = trained_missing_left
        out_missing_seen[o] = best_missing > 0
        if best_missing == 0:
            # no missing value here: at prediction they follow the heavier side
            missing_left = left_pos + left_neg > (pos[t] - left_pos) + (
                neg[t] - left_neg
            )
        left = n_nodes
        right = n_nodes + 1
        n_nodes += 2
        out_feature[o] = best_feature
        out_bin[o] = threshold_bin
        out_missing_left[o] = missing_left
        out_child_left[o] = left
        out_child_right[o] = right
        out_improvement[o] = best[0]
        seg_start[left] = s
        seg_stop[left] = s + n_left
        seg_start[right] = s + n_left
        seg_stop[right] = e
        counts[left] = best[6]  # rows counted with their multiplicity
        counts[right] = count - best[6]
        depth[left] = depth[t] + 1
        depth[right] = depth[t] + 1
        pos[left] = left_pos
        neg[left] = left_neg
        pos[right] = _remaining_weight(pos[t], left_pos, count)
        neg[right] = _remaining_weight(neg[t], left_neg, count)
        low[left] = low[t]
        high[left] = high[t]
        low[right] = low[t]
        high[right] = high[t]
        for jj in range(n_node_features):
            known[left, jj] = known[t, jj]
            known[right, jj] = known[t, jj]
        if monotonic[best_feature] != 0 and best[5] < 0.5:
            # children's values on either side of their midpoint, for good
            a = pos[left] / P
            b = neg[left] / N
            q_left = a / (a + b)
            a = pos[right] / P
            b = neg[right] / N
            q_right = a / (a + b)
            middle = 0.5 * (q_left + q_right)
            if monotonic[best_feature] > 0:
                high[left] = middle
                low[right] = middle
            else:
                low[left] = middle
                high[right] = middle
        if not direct:
            need_left = not _stays_leaf(
                depth[left], counts[left], pos[left], neg[left], max_depth, min_leaf
            )
            need_right = not _stays_leaf(
                depth[right],
                counts[right],
                pos[right],
                neg[right],
                max_depth,
                min_leaf,
            )
            parent_slot = slot[t]
            if need_left or need_right:
                small, big = left, right
                need_small, need_big = need_left, need_right
                if n_left > (e - s) - n_left:  # scan the child of fewer rows
                    small, big = right, left
                    need_small, need_big = need_right, need_left
                n_free -= 1
                small_slot = free[n_free]
                build_histograms(
                    codes,
                    y,
                    w,
                    m,
                    rows,
                    seg_start[small],
                    seg_stop[small],
                    node_features,
                    n_node_features,
                    n_bins,
                    hist_pool[small_slot],
                )
                if need_big:
                    subtract_histograms(
                        hist_pool[parent_slot],
                        hist_pool[small_slot],
                        node_features,
                        n_node_features,
                        n_bins,
                    )
                    slot[big] = parent_slot
                else:
                    free[n_free] = parent_slot
                    n_free += 1
                if need_small:
                    slot[small] = small_slot
                else:
                    free[n_free] = small_slot
                    n_free += 1
            else:
                free[n_free] = parent_slot
                n_free += 1
        stack[top] = right
        stack[top + 1] = left
        top += 2

    # merge: leaves by decreasing beta/alpha, best prefix of beta - alpha
    n_leaves = 0
    for t in range(n_nodes):
        if out_child_left[base + t] < 0:
            n_leaves += 1
    leaves = np.empty(n_leaves, dtype=np.int64)
    n_leaves = 0
    for t in range(n_nodes):
        if out_child_left[base + t] < 0:
            leaves[n_leaves] = t
            n_leaves += 1
    ratio = np.empty(n_leaves, dtype=np.float64)
    for i in range(n_leaves):
        t = leaves[i]
        alpha = neg[t] / N
        beta = pos[t] / P
        if alpha > 0.0:
            ratio[i] = beta / alpha
        elif beta > 0.0:
            ratio[i] = np.inf
        else:
            ratio[i] = -np.inf
    for i in range(n_leaves):
        ratio[i] = -ratio[i]  # decreasing ratio
    ranking = stable_argsort(ratio, np.int64(n_leaves))
    for i in range(n_leaves):
        ratio[i] = -ratio[i]
    cumulative = 0.0
    gain = 0.0
    n_kept = 0
    for i in range(n_leaves):
        t = leaves[ranking[i]]
        cumulative += pos[t] / P - neg[t] / N
        if (
            constrained
            and i + 1 < n_leaves
            and ratio[ranking[i + 1]] == ratio[ranking[i]]
        ):
            continue  # leaves of equal ratio are kept or dropped together
        if cumulative > gain:
            gain = cumulative
            n_kept = i + 1
    for i in range(n_kept):
        out_left_leaf[base + leaves[ranking[i]]] = 1

    # left leaves' rows first, each part in its original order
    position = np.empty(n_leaves, dtype=np.float64)
    for i in range(n_leaves):
        position[i] = seg_start[leaves[i]]
    by_position = stable_argsort(position, np.int64(n_leaves))
    n_left = 0
    n_left_rows = 0
    for side in range(2):
        for i in range(n_leaves):
            t = leaves[by_position[i]]
            if (out_left_leaf[base + t] == 1) == (side == 0):
                for j in range(seg_start[t], seg_stop[t]):
                    scratch[n_left] = rows[j]
                    n_left += 1
        if side == 0:
            n_left_rows = n_left
    for j in range(stop - start):
        rows[start + j] = scratch[j]
    return n_nodes, n_left_rows, gain


@jit
def _class_sample(rows, start, stop, y, quota_pos, quota_neg, state, sub):
    """A class-stratified sample of the segment into ``sub``; its size.

    Class c's rows (in segment order) are cut into ``quota_c`` strata of equal
    size and one row is drawn at random from each: ``quota_c`` rows spread over
    the whole segment, in segment order.
    """
    n_pos = 0
    for i in range(start, stop):
        n_pos += y[rows[i]] == 1
    n_neg = (stop - start) - n_pos
    count = np.zeros(2, dtype=np.int64)
    count[0] = n_neg
    count[1] = n_pos
    quota = np.zeros(2, dtype=np.int64)
    quota[0] = quota_neg
    quota[1] = quota_pos
    stratum = np.zeros(2, dtype=np.int64)
    target = np.zeros(2, dtype=np.int64)
    rank = np.zeros(2, dtype=np.int64)
    for c in range(2):
        if quota[c] > 0:
            high = count[c] // quota[c]
            target[c] = next_below(state, max(high, 1))
    m = 0
    for i in range(start, stop):
        row = rows[i]
        c = np.int64(y[row] == 1)
        if stratum[c] < quota[c] and rank[c] == target[c]:
            sub[m] = row
            m += 1
            stratum[c] += 1
            if stratum[c] < quota[c]:
                low = (stratum[c] * count[c]) // quota[c]
                high = ((stratum[c] + 1) * count[c]) // quota[c]
                target[c] = low + next_below(state, max(high - low, 1))
        rank[c] += 1
    return m


@inner_jit
def rule_goes_left(
    codes,
    row,
    base,
    out_feature,
    out_bin,
    out_missing_left,
    out_child_left,
    out_child_right,
    out_left_leaf,
    out_category,
    category_sets,
):
    """Whether a row's bin codes fall on the left side of the rule at ``base``."""
    t = np.int64(0)
    while out_child_left[base + t] >= 0:
        o = base + t
        code = codes[row, out_feature[o]]
        if code == MISSING_BIN:
            left = out_missing_left[o] == 1
        elif out_category[o] >= 0:
            word = category_sets[out_category[o], code >> 6]
            left = ((word >> np.uint64(code & 63)) & np.uint64(1)) == 1
        else:
            left = code <= out_bin[o]
        t = np.int64(out_child_left[o] if left else out_child_right[o])
    return out_left_leaf[base + t] == 1


@inner_jit
def sample_for_rule(rows, start, stop, y, max_fit_rows, state, sub):
    """A class-stratified sample of ``max_fit_rows`` rows of the segment; its size.

    Each class gets half of the sample, or all its rows if it has fewer (the
    other class then fills the sample): see :func:`_class_sample`. The inner
    tree compares the rates of each class within the node, which such a sample
    estimates without bias whatever the two quotas.
    """
    n_pos_rows = 0
    for i in range(start, stop):
        n_pos_rows += y[rows[i]] == 1
    n_neg_rows = (stop - start) - n_pos_rows
    quota_pos = min(n_pos_rows, max(max_fit_rows // 2, max_fit_rows - n_neg_rows))
    quota_neg = min(n_neg_rows, max_fit_rows - quota_pos)
    return _class_sample(rows, start, stop, y, quota_pos, quota_neg, state, sub)


@inner_jit
def split_by_rule(
    codes,
    y,
    w,
    rows,
    start,
    stop,
    scratch,
    base,
    out_feature,
    out_bin,
    out_missing_left,
    out_child_left,
    out_child_right,
    out_left_leaf,
    out_category,
    category_sets,
):
    """Partition ``rows[start:stop]`` by the rule at ``base`` (stable, left first).

    Returns the number of rows sent left and the local TPR - FPR of the left
    side on all the rows of the segment (0 if it is empty).
    """
    P = 0.0
    N = 0.0
    left_pos = 0.0
    left_neg = 0.0
    n_left = 0
    n_right = 0
    for i in range(start, stop):
        row = rows[i]
        left = rule_goes_left(
            codes,
            row,
            base,
            out_feature,
            out_bin,
            out_missing_left,
            out_child_left,
            out_child_right,
            out_left_leaf,
            out_category,
            category_sets,
        )
        if y[row] == 1:
            P += w[row]
            if left:
                left_pos += w[row]
        else:
            N += w[row]
            if left:
                left_neg += w[row]
        if left:
            rows[start + n_left] = row
            n_left += 1
        else:
            scratch[n_right] = row
            n_right += 1
    for i in range(n_right):
        rows[start + n_left + i] = scratch[i]
    gain = 0.0
    if n_left > 0:
        gain = left_pos / P - left_neg / N
    return n_left, gain


@jit
def fit_single_rule(
    codes,
    y,
    w,
    m,
    rows,
    node_features,
    n_bins,
    is_categorical,
    monotonic,
    max_depth,
    min_leaf,
    max_features,
    criterion,
    splitter,
    state,
    max_fit_rows,
):
    """The rule of one node holding ``rows`` (a standalone LeafRank).

    Returns the inner nodes' arrays (feature, bin, missing_left, child_left,
    child_right, left_leaf, improvement, missing_seen, category), the category
    sets, the gain, and the number of rows sent left (``rows`` is partitioned,
    left rows first). ``m`` and ``max_fit_rows`` are as in :func:`grow_rule`.
    """
    capacity = max_rule_nodes(max_depth, rows.shape[0], min_leaf)
    feature = np.empty(capacity, dtype=np.int32)
    threshold_bin = np.empty(capacity, dtype=np.uint8)
    missing_left = np.empty(capacity, dtype=np.uint8)
    child_left = np.empty(capacity, dtype=np.int32)
    child_right = np.empty(capacity, dtype=np.int32)
    left_leaf = np.empty(capacity, dtype=np.uint8)
    improvement = np.empty(capacity, dtype=np.float64)
    missing_seen = np.empty(capacity, dtype=np.uint8)
    category = np.empty(capacity, dtype=np.int32)
    category_sets = np.empty((capacity, 4), dtype=np.uint64)
    n_category_sets = np.zeros(1, dtype=np.int64)
    hist_pool = np.empty((max_depth + 3, node_features.shape[0], 256, 3))
    scratch = np.empty(rows.shape[0], dtype=np.int64)
    n = np.int64(rows.shape[0])
    if 0 < max_fit_rows < n:
        sub = np.empty(max_fit_rows, dtype=np.int64)
        n_fitted = sample_for_rule(rows, np.int64(0), n, y, max_fit_rows, state, sub)
        fitted_rows = sub
    else:
        n_fitted = n
        fitted_rows = rows
    n_nodes, n_left, gain = grow_rule(
        codes,
        y,
        w,
        m,
        fitted_rows,
        np.int64(0),
        n_fitted,
        node_features,
        n_bins,
        is_categorical,
        monotonic,
        max_depth,
        min_leaf,
        max_features,
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
        np.int64(0),
    )
    if n_fitted < n:  # every row split by the rule fitted on the sample
        n_left, gain = split_by_rule(
            codes,
            y,
            w,
            rows,
            np.int64(0),
            n,
            scratch,
            np.int64(0),
            feature,
            threshold_bin,
            missing_left,
            child_left,
            child_right,
            left_leaf,
            category,
            category_sets,
        )
    return (
        feature[:n_nodes].copy(),
        threshold_bin[:n_nodes].copy(),
        missing_left[:n_nodes].copy(),
        child_left[:n_nodes].copy(),
        child_right[:n_nodes].copy(),
        left_leaf[:n_nodes].copy(),
        improvement[:n_nodes].copy(),
        missing_seen[:n_nodes].copy(),
        category[:n_nodes].copy(),
        category_sets[: n_category_sets[0]].copy(),
        gain,
        n_left,
    )
