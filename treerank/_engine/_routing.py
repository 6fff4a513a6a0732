"""Routing of rows through ranking trees, in compiled code.

A ranking tree whose nodes hold LeafRank rules (each a small binary tree whose
leaves say "left" or "right") is one binary decision graph over the features:
each inner leaf points directly to the first decision of the master child it
sends its rows to, or to a master leaf. :func:`compile_graph` builds that graph
from the tree's flat arrays, and the routing kernels follow it for every row,
one tree after another, without Python in the loop:

- :func:`route_values` on raw values (float64; NaN follows the split's missing
  direction): prediction and export work on raw X; :func:`route_values_csr`
  on a sparse X in CSR form, one bounded block of dense rows at a time. Each
  block of rows is first coded: a value becomes its rank among the thresholds
  of its feature (:func:`threshold_codes`), two bytes that the decisions
  compare exactly as they would the value; rows with a missing value, and the
  forests with categorical splits, are routed on their values;
- :func:`route_codes` on bin codes (the missing bin follows the same
  direction): training rows, exactly as the growth partitioned them.

A graph node ``g`` tests ``feature[g]``; a row goes to ``next_left[g]`` when its
value is at most ``threshold[g]`` (bin code at most ``threshold_bin[g]``), to
``next_right[g]`` otherwise; a negative target ``-1 - r`` is the master leaf of
rank r (0 = best). A forest is the concatenation of its trees' graphs with
per-tree entry points.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._binning import MISSING_BIN
from treerank._engine._jit import inner_jit, jit
from treerank.utils._sparse import canonical_sparse, is_sparse

__all__ = [
    "CATEGORICAL",
    "MISSING_RIGHT",
    "NODE_DTYPE",
    "SPARSE_BLOCK_BYTES",
    "Router",
    "compile_graph",
    "route_binned",
    "route_codes",
    "route_values",
    "route_values_csr",
    "threshold_codes",
]


@jit
def compile_graph(
    children_left,
    children_right,
    rule_start,
    rule_stop,
    leaf_rank,
    rule_feature,
    rule_threshold,
    rule_bin,
    rule_missing_left,
    rule_child_left,
    rule_child_right,
    rule_left_leaf,
    rule_category,
):
    """The decision graph of a ranking tree (see the module docstring).

    The rule of an internal master node m is the inner nodes
    ``rule_start[m]:rule_stop[m]``, its root first, with children numbered
    locally (from the rule's root); the rule of a master leaf (for instance a
    node kept as a leaf in a pruned tree) is ignored.

    Returns
    -------
    entry : int
        The root's first decision (or its leaf code for a one-leaf tree).
    feature, threshold, threshold_bin, missing_left, next_left, next_right, \
category : ndarrays of shape (n_decisions,)
        ``category`` is the row of the tree's category sets of a categorical
        split (left when the code is in the set), -1 for a threshold split.
    """
    n_master = children_left.shape[0]
    # side of each inner node: 0 if all the inner leaves below it are on the
    # left side of the master split, 1 if all are on the right, 2 if mixed; a
    # node with a single side decides nothing and is skipped by the graph
    side = np.full(rule_feature.shape[0], 2, dtype=np.int8)
    flat = np.full(rule_feature.shape[0], -1, dtype=np.int64)
    n_decisions = 0
    for m in range(n_master):
        if children_left[m] < 0:
            continue
        base = rule_start[m]
        for r in range(rule_stop[m] - 1, base - 1, -1):
            if rule_child_left[r] < 0:
                side[r] = 0 if rule_left_leaf[r] == 1 else 1
            else:
                a = side[base + rule_child_left[r]]
                if a == side[base + rule_child_right[r]]:
                    side[r] = a
        for r in range(base, rule_stop[m]):
            if side[r] == 2:
                flat[r] = n_decisions
                n_decisions += 1
    entry_of = np.empty(n_master, dtype=np.int64)
    for m in range(n_master - 1, -1, -1):  # children after their parent
        if children_left[m] < 0:
            entry_of[m] = -1 - leaf_rank[m]
        else:
            r = rule_start[m]
            if side[r] == 0:
                entry_of[m] = entry_of[children_left[m]]
            elif side[r] == 1:
                entry_of[m] = entry_of[children_right[m]]
            else:
                entry_of[m] = flat[r]
    feature = np.empty(n_decisions, dtype=np.int32)
    threshold = np.empty(n_decisions, dtype=np.float64)
    threshold_bin = np.empty(n_decisions, dtype=np.uint8)
    missing_left = np.empty(n_decisions, dtype=np.uint8)
    next_left = np.empty(n_decisions, dtype=np.int32)
    next_right = np.empty(n_decisions, dtype=np.int32)
    category = np.empty(n_decisions, dtype=np.int32)
    for m in range(n_master):
        if children_left[m] < 0:
            continue
        base = rule_start[m]
        for r in range(base, rule_stop[m]):
            if side[r] != 2:
                continue
            g = flat[r]
            feature[g] = rule_feature[r]
            threshold[g] = rule_threshold[r]
            threshold_bin[g] = rule_bin[r]
            missing_left[g] = rule_missing_left[r]
            category[g] = rule_category[r]
            for branch in range(2):
                if branch == 0:
                    child = base + rule_child_left[r]
                else:
                    child = base + rule_child_right[r]
                if side[child] == 2:
                    target = flat[child]
                elif side[child] == 0:
                    target = entry_of[children_left[m]]
                else:
                    target = entry_of[children_right[m]]
                if branch == 0:
                    next_left[g] = target
                else:
                    next_right[g] = target
    return (
        entry_of[0],
        feature,
        threshold,
        threshold_bin,
        missing_left,
        next_left,
        next_right,
        category,
    )


NODE_DTYPE = np.dtype(
    [("threshold", np.float64), ("left", np.int32), ("right", np.int32)]
)
"""A decision of a routing graph: 16 bytes, four to a cache line.

The feature it tests and its flags are in a separate array of uint32 (see
:data:`MISSING_RIGHT` and :data:`CATEGORICAL`); for a categorical split,
``threshold`` holds the row of its category set.
"""

MISSING_RIGHT = np.uint32(1 << 31)
"""Flag of a decision's test word: missing values go right."""
CATEGORICAL = np.uint32(1 << 30)
"""Flag of a decision's test word: the split is on category codes."""
_FEATURE_MASK = np.uint32((1 << 30) - 1)

# rows of a block routed through one tree before the next tree: their codes
# (2 bytes per feature the forest tests) stay in cache while the tree's
# decisions are read once per block; at most _CODE_BLOCK_BYTES of codes, at
# least 128 rows (measured on 20,000 rows: 3,276 rows of 20 features best
# with trees of 570 to 1,800 decisions, 448 rows of 146 features on sylva;
# see :meth:`Router.leaf_ranks`)
_ROW_BLOCK = 4096
_CODE_BLOCK_BYTES = 1 << 17
_MIN_BLOCK_ROWS = 128
# rows of a block routed on their values (no code layout: categorical splits)
_VALUE_BLOCK_ROWS = 256
SPARSE_BLOCK_BYTES = 1 << 23
"""Largest dense block of rows of a sparse X while it is routed (8 MiB)."""
# thresholds of one feature that a forest's graph can rank in 16-bit codes
_MAX_CODES = (1 << 16) - 1
_CODE_BITS = np.uint64(16)
_CODE_MASK = np.uint64(_MAX_CODES)


# rows of bin codes routed side by side through one tree
_CODE_BLOCK_ROWS = 512


@inner_jit
def _in_set(category_sets, row, code):
    """Whether category ``code`` is in row ``row`` of the 256-bit sets."""
    word = category_sets[row, code >> 6]
    return np.int64((word >> np.uint64(code & 63)) & np.uint64(1))


def threshold_codes(nodes, tests):
    """The graph on threshold codes: each value replaced by its rank among the
    thresholds of its feature.

    For a feature f with the sorted distinct thresholds ``t_0 < ... < t_m-1``
    (those of every decision on f), the code of a value v that is not NaN is
    ``c(v) = #{i : t_i < v}``, and a decision "v <= t_j" is the decision
    "c(v) <= j": if v <= t_j, every t_i < v is below t_j, so c(v) <= j; if
    v > t_j, the thresholds t_0, ..., t_j are all below v, so c(v) >= j + 1.
    Routing on codes therefore sends every row the way its values do, on
    integers of 2 bytes instead of floats of 8.

    A code is found by descending a complete binary search tree of the
    thresholds stored level by level (node i has the children 2 i and
    2 i + 1, the root is 1; the ``2^p - 1`` nodes of depth p are the m
    thresholds padded with +inf): going to ``2 i + (t[i] < v)`` p times ends
    at node ``2^p + c(v)``, with no branch on a comparison (a +inf never lies
    below a value, so the padding adds nothing to the count).

    Parameters
    ----------
    nodes : ndarray of :data:`NODE_DTYPE`
    tests : ndarray of uint32

    Returns
    -------
    layout : tuple or None
        ``(used, search, search_start, depth, words, children)``: ``used``
        the features tested (a row's codes are those of ``X[:, used]``); the
        search tree of ``used[u]`` at ``search[search_start[u]:]``, of depth
        ``depth[u]`` (its first entry unused); ``words[g]`` the column of
        decision g's feature in the codes, shifted left by 16 bits, or the
        code of its threshold; ``children[2 g]`` and ``children[2 g + 1]`` its
        left and right targets. None when some decision is categorical, a
        threshold is NaN or a feature has more than 65,535 thresholds (the
        rows are then routed on their values).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank._engine import Router
    >>> from treerank._engine._routing import threshold_codes
    >>> graph = (0, np.array([0, 0], np.int32), np.array([1.5, 0.5]),
    ...          np.array([1, 0], np.uint8), np.array([1, 1], np.uint8),
    ...          np.array([1, -3], np.int32), np.array([-1, -2], np.int32),
    ...          np.array([-1, -1], np.int32))
    >>> router = Router([graph])
    >>> used, search, start, depth, words, children = threshold_codes(
    ...     router.nodes, router.tests)
    >>> search[1:4], depth, words & 0xFFFF
    (array([1.5, 0.5, inf]), array([2]), array([1, 0], dtype=uint64))
    """
    n = nodes.shape[0]
    thresholds = np.ascontiguousarray(nodes["threshold"], dtype=np.float64)
    if np.any(tests & CATEGORICAL) or np.isnan(thresholds).any():
        return None
    children = np.empty(2 * n, dtype=np.int32)
    children[0::2] = nodes["left"]
    children[1::2] = nodes["right"]
    features = (tests & _FEATURE_MASK).astype(np.int64)
    used, column = np.unique(features, return_inverse=True)
    column = column.reshape(-1)
    order = np.lexsort((thresholds, column))
    sorted_column, sorted_threshold = column[order], thresholds[order]
    # a new distinct threshold (0.0 and -0.0 are one: they compare equal)
    new = np.ones(n, dtype=bool)
    new[1:] = (sorted_column[1:] != sorted_column[:-1]) | (
        sorted_threshold[1:] != sorted_threshold[:-1]
    )
    grid = sorted_threshold[new]
    grid_start = np.searchsorted(sorted_column[new], np.arange(used.shape[0] + 1))
    sizes = np.diff(grid_start)
    if n and sizes.max() > _MAX_CODES:
        return None
    # the code of a threshold is its index among its feature's thresholds
    code = np.empty(n, dtype=np.int64)
    code[order] = np.cumsum(new) - 1 - grid_start[sorted_column]
    words = (column.astype(np.uint64) << _CODE_BITS) | code.astype(np.uint64)
    # the search trees: node i of level L = floor(log2 i) holds the threshold
    # of in-order rank (2 (i - 2^L) + 1) 2^(depth - L - 1) - 1
    depth = np.array([int(m).bit_length() for m in sizes], dtype=np.int64)
    search_start = np.concatenate([[0], np.cumsum(1 << depth)]).astype(np.int64)
    search = np.full(int(search_start[-1]), np.inf)
    for u in range(used.shape[0]):
        node = np.arange(1, 1 << depth[u])
        level = np.floor(np.log2(node)).astype(np.int64)
        rank = (2 * (node - (1 << level)) + 1) * (1 << (depth[u] - level - 1)) - 1
        real = rank < sizes[u]
        search[search_start[u] + node[real]] = grid[grid_start[u] + rank[real]]
    return used.astype(np.int64), search, search_start, depth, words, children


@inner_jit
def _code_rows(X, first, size, used, search, search_start, depth, codes, order):
    """Codes of the rows ``first:first + size`` of X, and which are plain.

    Row k of the block writes its codes at ``codes[k * n_used:(k + 1) * n_used]``
    (:func:`threshold_codes`). ``order`` lists the plain rows (no missing value
    in a tested feature) first, the others after (from the end); returns the
    number of plain rows. With ``codes`` empty (no code layout), every row is
    left to the general step.
    """
    n_used = used.shape[0]
    if codes.shape[0] == 0:
        for k in range(size):
            order[k] = k
        return 0
    n_plain = 0
    n_general = 0
    one = np.uint64(1)
    for k in range(size):
        row = first + k
        plain = True
        at = k * n_used
        for u in range(n_used):
            value = X[row, used[u]]
            plain &= value == value
            base = np.uint64(search_start[u])
            i = one
            for _ in range(depth[u]):
                i = (i << one) + np.uint64(search[base + i] < value)
            codes[at + u] = i - (one << np.uint64(depth[u]))
        if plain:
            order[n_plain] = k
            n_plain += 1
        else:
            n_general += 1
            order[size - n_general] = k
    return n_plain


@inner_jit
def _plain_pass(codes, n_used, words, children, entry, order, n_plain, rows, at, leaf):
    """Leaves of the plain rows ``order[:n_plain]`` of a block in one tree.

    The rows advance together one decision at a time: the active rows and
    their decisions (``rows``, ``at``) are compacted after each step, a row
    leaving when it reaches a leaf, and the child is picked by index
    (``children[2 g + (code > threshold code)]``), not by a branch: the rows'
    paths are independent chains the processor overlaps, and no branch is
    mispredicted on the split outcomes. Indices are unsigned (no wraparound
    of negative indices in the hot loop).
    """
    for a in range(n_plain):
        k = order[a]
        rows[a] = k
        at[a] = entry
        leaf[k] = entry
    n_active = np.uint64(n_plain) if entry >= 0 else np.uint64(0)
    width = np.uint64(n_used)
    one = np.uint64(1)
    while n_active > 0:
        kept = np.uint64(0)
        for a in range(n_active):
            k = np.uint64(rows[a])
            g = np.uint64(at[a])
            word = words[g]
            code = np.uint64(codes[k * width + (word >> _CODE_BITS)])
            following = children[(g << one) + np.uint64(code > (word & _CODE_MASK))]
            leaf[k] = following
            rows[kept] = k
            at[kept] = following
            kept += np.uint64(following >= 0)
        n_active = kept


@inner_jit
def _general_pass(
    X, first, nodes, tests, category_sets, entry, order, n, rows, at, leaf
):
    """Leaves of the rows ``order[:n]`` of a block in one tree, on their values.

    The general step: a missing value follows the split's missing direction,
    a categorical split tests its category set (X holds category codes).
    Otherwise as :func:`_plain_pass`.
    """
    base = np.uint64(first)
    for a in range(n):
        k = order[a]
        rows[a] = k
        at[a] = entry
        leaf[k] = entry
    n_active = np.uint64(n) if entry >= 0 else np.uint64(0)
    while n_active > 0:
        kept = np.uint64(0)
        for a in range(n_active):
            k = np.uint64(rows[a])
            g = np.uint64(at[a])
            test = tests[g]
            node = nodes[g]
            value = X[base + k, np.uint64(test & _FEATURE_MASK)]
            if value != value:  # NaN: the split's missing direction
                following = node.right if test & MISSING_RIGHT else node.left
            elif test & CATEGORICAL:
                code = np.int64(value)
                if not 0 <= code < MISSING_BIN:  # not a category code
                    following = node.right if test & MISSING_RIGHT else node.left
                elif _in_set(category_sets, np.int64(node.threshold), code):
                    following = node.left
                else:
                    following = node.right
            else:
                following = node.right if value > node.threshold else node.left
            leaf[k] = following
            rows[kept] = k
            at[kept] = following
            kept += np.uint64(following >= 0)
        n_active = kept


@inner_jit
def _route_block(
    X, first, size, entries, nodes, tests, category_sets, layout, work, out, start
):
    """Leaf ranks of the rows ``first:first + size`` of X in every tree, into
    ``out[start:start + size]``.

    The rows are coded once (:func:`_code_rows`); then the block goes through
    one tree, then the next. A plain row (no missing value in a tested
    feature) is routed on its codes (:func:`_plain_pass`), the others on
    their values (:func:`_general_pass`), which sends a row the same way.
    ``layout`` is that of :func:`threshold_codes` (empty arrays if None),
    ``work`` the work arrays (codes, order, rows, at, leaf) of a block.
    """
    used, search, search_start, depth, words, children = layout
    codes, order, rows, at, leaf = work
    n_plain = _code_rows(
        X, first, size, used, search, search_start, depth, codes, order
    )
    n_general = size - n_plain
    general = order[n_plain:size]
    for b in range(entries.shape[0]):
        entry = entries[b]
        if n_plain > 0:
            _plain_pass(
                codes,
                used.shape[0],
                words,
                children,
                entry,
                order,
                n_plain,
                rows,
                at,
                leaf,
            )
        if n_general > 0:
            _general_pass(
                X,
                first,
                nodes,
                tests,
                category_sets,
                entry,
                general,
                n_general,
                rows,
                at,
                leaf,
            )
        for k in range(size):
            out[np.uint64(start + k), np.uint64(b)] = -1 - leaf[k]


@inner_jit
def _work_arrays(block_rows, layout):
    """The work arrays of :func:`_route_block` for blocks of ``block_rows`` rows."""
    n_used = layout[0].shape[0]
    n_codes = block_rows * n_used if layout[4].shape[0] > 0 else 0
    return (
        np.empty(n_codes, dtype=np.uint16),
        np.empty(block_rows, dtype=np.uint32),
        np.empty(block_rows, dtype=np.uint32),
        np.empty(block_rows, dtype=np.int32),
        np.empty(block_rows, dtype=np.int32),
    )


@jit
def route_values(X, entries, nodes, tests, category_sets, layout, block_rows, out):
    """Leaf rank of every row of X in every tree (``out`` of shape (n, n_trees)).

    ``entries[b]`` is tree b's entry point, its node ids already offset into
    the concatenated ``nodes`` (records of :data:`NODE_DTYPE`; leaf codes are
    not offset) and ``tests`` (the feature and flags of each decision);
    ``category_sets`` holds the category sets of the categorical splits (X
    then holds category codes); ``layout`` is the graph on threshold codes
    (:func:`threshold_codes`; with an empty ``words``, every row is routed on
    its values). A block of ``block_rows`` rows goes through one tree, then
    the next, so that both stay in cache (:func:`_route_block`).
    """
    work = _work_arrays(block_rows, layout)
    for start in range(0, X.shape[0], block_rows):
        size = min(block_rows, X.shape[0] - start)
        _route_block(
            X,
            start,
            size,
            entries,
            nodes,
            tests,
            category_sets,
            layout,
            work,
            out,
            start,
        )


@jit
def route_values_csr(
    data, indices, indptr, entries, nodes, tests, category_sets, layout, block, out
):
    """:func:`route_values` on a canonical CSR matrix (data, indices, indptr).

    Each block of rows is written into ``block`` (a dense work array of zeros
    with ``n_features`` columns, whose row count sets the block size), routed
    as dense rows, and its stored entries reset to zero: the leaves are those
    of ``X.toarray()`` (an entry not stored is 0.0), the extra time is linear
    in the stored entries, and the memory is that of ``block``.
    """
    n_samples = indptr.shape[0] - 1
    block_rows = block.shape[0]
    work = _work_arrays(block_rows, layout)
    for start in range(0, n_samples, block_rows):
        size = min(block_rows, n_samples - start)
        for k in range(size):
            for e in range(indptr[start + k], indptr[start + k + 1]):
                block[k, indices[e]] = data[e]
        _route_block(
            block,
            0,
            size,
            entries,
            nodes,
            tests,
            category_sets,
            layout,
            work,
            out,
            start,
        )
        for k in range(size):
            for e in range(indptr[start + k], indptr[start + k + 1]):
                block[k, indices[e]] = 0.0


@jit
def route_codes(
    codes,
    rows,
    entry,
    feature,
    threshold_bin,
    missing_left,
    next_left,
    next_right,
    category,
    category_sets,
    out,
):
    """Leaf rank of the rows ``rows`` of the bin codes in one tree, into ``out``.

    As in :func:`_route_block`, a block of rows advances one level at a time
    and each step picks the child by a select, not a branch: the rows' paths
    are independent chains the processor overlaps.
    """
    block = max(1, min(rows.shape[0], _CODE_BLOCK_ROWS))
    current = np.empty(block, dtype=np.int32)
    active = np.empty(block, dtype=np.int64)
    for start in range(0, rows.shape[0], block):
        size = min(block, rows.shape[0] - start)
        for k in range(size):
            current[k] = entry
            active[k] = k
        n_active = size if entry >= 0 else 0
        while n_active > 0:
            kept = 0
            for a in range(n_active):
                k = active[a]
                node = current[k]
                code = codes[rows[start + k], feature[node]]
                if code == MISSING_BIN:
                    go_left = missing_left[node] == 1
                elif category[node] >= 0:
                    set_row = np.int64(category[node])
                    go_left = _in_set(category_sets, set_row, np.int64(code)) == 1
                else:
                    go_left = code <= threshold_bin[node]
                left = next_left[node]
                right = next_right[node]
                following = left if go_left else right
                current[k] = following
                active[kept] = k
                kept += following >= 0
            n_active = kept
        for k in range(size):
            out[rows[start + k]] = -1 - current[k]


class Router:
    """The decision graphs of one or several ranking trees, ready to route X.

    Parameters
    ----------
    graphs : list of tuple
        One graph per tree, as returned by :func:`compile_graph`.
    category_sets : list of ndarray or None, default=None
        The category sets of each tree (``SplitRules.category_sets``), when
        some splits are categorical.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank._engine import Router
    >>> # one split x[0] <= 1.5, right side better: leaf 0 is "x[0] > 1.5"
    >>> graph = (0, np.array([0], np.int32), np.array([1.5]),
    ...          np.array([0], np.uint8), np.array([1], np.uint8),
    ...          np.array([-2], np.int32), np.array([-1], np.int32),
    ...          np.array([-1], np.int32))
    >>> Router([graph]).leaf_ranks(np.array([[0.0], [3.0], [np.nan]]))
    array([[1],
           [0],
           [1]], dtype=int32)
    """

    def __init__(self, graphs, category_sets=None):
        sizes = np.array([g[1].shape[0] for g in graphs], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        entries = np.array([g[0] for g in graphs], dtype=np.int64)
        self.entries = np.where(entries >= 0, entries + offsets, entries)
        nodes = np.empty(int(sizes.sum()), dtype=NODE_DTYPE)
        nodes["threshold"] = np.concatenate([g[2] for g in graphs])
        for side, index in (("left", 5), ("right", 6)):
            nodes[side] = np.concatenate(
                [
                    np.where(g[index] >= 0, g[index] + o, g[index])
                    for g, o in zip(graphs, offsets)
                ]
            )
        features = np.concatenate([g[1] for g in graphs]).astype(np.int64)
        if features.size and features.max() > int(_FEATURE_MASK):
            raise ValueError(
                f"routing supports at most {int(_FEATURE_MASK) + 1} features; a "
                f"split tests feature {int(features.max())}."
            )
        tests = features.astype(np.uint32)
        tests[np.concatenate([g[4] for g in graphs]) == 0] |= MISSING_RIGHT
        if category_sets is None:
            category_sets = [np.zeros((0, 4), dtype=np.uint64)] * len(graphs)
        set_offsets = np.concatenate(
            [[0], np.cumsum([sets.shape[0] for sets in category_sets])[:-1]]
        )
        category = np.concatenate(
            [np.where(g[7] >= 0, g[7] + o, -1) for g, o in zip(graphs, set_offsets)]
        )
        categorical = category >= 0
        tests[categorical] |= CATEGORICAL
        nodes["threshold"][categorical] = category[categorical]
        self.nodes = nodes
        self.tests = tests
        self.category_sets = np.ascontiguousarray(
            np.concatenate([np.zeros((0, 4), np.uint64), *category_sets]),
            dtype=np.uint64,
        )
        self._layout = self._code_layout()

    def _code_layout(self):
        """The graph on threshold codes (:func:`threshold_codes`), as arrays.

        Empty arrays (``words`` among them) when the graph has no code layout.
        """
        layout = threshold_codes(self.nodes, self.tests)
        if layout is None:
            layout = (
                np.zeros(0, np.int64),
                np.zeros(0, np.float64),
                np.zeros(1, np.int64),
                np.zeros(0, np.int64),
                np.zeros(0, np.uint64),
                np.zeros(0, np.int32),
            )
        return tuple(np.ascontiguousarray(part) for part in layout)

    def __getstate__(self):
        # the code layout is derived from the decisions: rebuilt, not stored
        state = self.__dict__.copy()
        state.pop("_layout", None)
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._layout = self._code_layout()

    @property
    def n_trees(self):
        """Number of trees."""
        return int(self.entries.shape[0])

    def leaf_ranks(self, X, out=None):
        """Rank of the leaf of every row of X in every tree.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Raw values, NaN for missing. A sparse X (any scipy format, an entry
            not stored being 0.0) is routed in CSR form, one block of at most
            8 MiB of dense rows at a time.
        out : ndarray of int32 of shape (n_samples, n_trees), default=None
            Where to write the result.

        Returns
        -------
        leaf_ranks : ndarray of int32 of shape (n_samples, n_trees)
        """
        if is_sparse(X):
            X = canonical_sparse(X, "csr")
        else:
            X = np.ascontiguousarray(X, dtype=np.float64)
        if out is None:
            out = np.empty((X.shape[0], self.n_trees), dtype=np.int32)
        layout = self._layout
        if layout[4].shape[0] > 0:  # a block's codes within _CODE_BLOCK_BYTES
            rows = _CODE_BLOCK_BYTES // (2 * max(1, layout[0].shape[0]))
            rows = max(_MIN_BLOCK_ROWS, rows)
        else:  # rows routed on their values (8 bytes a value)
            rows = _VALUE_BLOCK_ROWS
        rows = max(1, min(_ROW_BLOCK, rows))
        if is_sparse(X):
            rows = max(1, min(rows, SPARSE_BLOCK_BYTES // (8 * X.shape[1] + 1)))
            route_values_csr(
                X.data,
                X.indices,
                X.indptr,
                self.entries,
                self.nodes,
                self.tests,
                self.category_sets,
                layout,
                np.zeros((rows, X.shape[1])),
                out,
            )
        else:
            route_values(
                X,
                self.entries,
                self.nodes,
                self.tests,
                self.category_sets,
                layout,
                rows,
                out,
            )
        return out


def route_binned(graph, category_sets, codes, rows, out):
    """Leaf ranks of the rows ``rows`` of bin codes in one tree, into ``out[rows]``.

    Parameters
    ----------
    graph : tuple
        The tree's graph (:func:`compile_graph`) from rules that kept their
        bins (a tree grown on these codes).
    category_sets : ndarray of uint64 of shape (n_sets, 4)
        The tree's category sets.
    codes : ndarray of uint8 of shape (n_samples, n_features)
    rows : ndarray of int
    out : ndarray of int32 of shape (n_samples,)

    Returns
    -------
    out : ndarray of int32
    """
    entry, feature, _, threshold_bin, missing_left, next_left, next_right, cat = graph
    route_codes(
        codes,
        np.asarray(rows, dtype=np.int64),
        entry,
        feature,
        threshold_bin,
        missing_left,
        next_left,
        next_right,
        cat,
        np.ascontiguousarray(category_sets, dtype=np.uint64),
        out,
    )
    return out
