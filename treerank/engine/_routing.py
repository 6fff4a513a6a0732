"""Routing of rows through ranking trees, in compiled code.

A ranking tree whose nodes hold LeafRank rules (each a small binary tree whose
leaves say "left" or "right") is one binary decision graph over the features:
each inner leaf points directly to the first decision of the master child it
sends its rows to, or to a master leaf. :func:`compile_graph` builds that graph
from the tree's flat arrays, and the routing kernels follow it for every row,
one tree after another, without Python in the loop:

- :func:`route_values` on raw values (float64; NaN follows the split's missing
  direction): prediction and export work on raw X; :func:`route_values_csr`
  on a sparse X in CSR form, one bounded block of dense rows at a time;
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

from treerank.engine._binning import MISSING_BIN
from treerank.engine._jit import inner_jit, jit
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

# rows routed through one tree before the next tree: a row reads only the
# features its path tests, so even wide rows keep a block's working set small
# (measured best at 256 for 20 to 212 features and trees of 13 to 500 leaves)
_ROW_BLOCK = 256
SPARSE_BLOCK_BYTES = 1 << 23
"""Largest dense block of rows of a sparse X while it is routed (8 MiB)."""


# rows of bin codes routed side by side through one tree
_CODE_BLOCK_ROWS = 512


@inner_jit
def _in_set(category_sets, row, code):
    """Whether category ``code`` is in row ``row`` of the 256-bit sets."""
    word = category_sets[row, code >> 6]
    return np.int64((word >> np.uint64(code & 63)) & np.uint64(1))


@inner_jit
def _route_block(
    X,
    first,
    size,
    entries,
    nodes,
    tests,
    category_sets,
    general,
    order,
    current,
    active,
    out,
    start,
):
    """Leaf ranks of the rows ``first:first + size`` of X in every tree, into
    ``out[start:start + size]``.

    The rows advance together one level at a time, and each step picks the
    child by index instead of by a branch: the rows' paths are independent
    chains the processor overlaps, and no branch is mispredicted on the split
    outcomes. A row without a missing value, in a forest without categorical
    splits (``general`` False), takes the plain step ``value > threshold``;
    the others the general step (missing direction, category sets), which
    sends such a row the same way. Indices are unsigned (no wraparound of
    negative indices in the hot loop). ``order``, ``current`` and ``active``
    are work arrays of at least ``size`` entries.
    """
    base = np.uint64(first)
    n_features = X.shape[1]
    # the plain rows first, the rows with a missing value (or all) after
    n_plain = 0
    n_general = 0
    for k in range(size):
        plain = not general
        if plain:
            row = base + np.uint64(k)
            for j in range(n_features):
                value = X[row, np.uint64(j)]
                if value != value:
                    plain = False
                    break
        if plain:
            order[n_plain] = k
            n_plain += 1
        else:
            n_general += 1
            order[size - n_general] = k
    for b in range(entries.shape[0]):
        entry = entries[b]
        for k in range(size):
            current[k] = entry
        if entry >= 0:
            for a in range(n_plain):
                active[a] = order[a]
            n_active = n_plain
            while n_active > 0:
                kept = np.uint64(0)
                for a in range(np.uint64(n_active)):
                    k = np.uint64(active[a])
                    g = np.uint64(current[k])
                    node = nodes[g]
                    value = X[base + k, np.uint64(tests[g] & _FEATURE_MASK)]
                    following = node.right if value > node.threshold else node.left
                    current[k] = following
                    active[kept] = k
                    kept += np.uint64(following >= 0)
                n_active = np.int64(kept)
            for a in range(n_general):
                active[a] = order[n_plain + a]
            n_active = n_general
            while n_active > 0:
                kept = np.uint64(0)
                for a in range(np.uint64(n_active)):
                    k = np.uint64(active[a])
                    g = np.uint64(current[k])
                    test = tests[g]
                    node = nodes[g]
                    value = X[base + k, np.uint64(test & _FEATURE_MASK)]
                    if value != value:  # NaN: the split's missing direction
                        following = node.right if test & MISSING_RIGHT else node.left
                    elif test & CATEGORICAL:
                        code = np.int64(value)
                        if not 0 <= code < MISSING_BIN:  # not a category code
                            if test & MISSING_RIGHT:
                                following = node.right
                            else:
                                following = node.left
                        elif _in_set(category_sets, np.int64(node.threshold), code):
                            following = node.left
                        else:
                            following = node.right
                    else:
                        following = node.right if value > node.threshold else node.left
                    current[k] = following
                    active[kept] = k
                    kept += np.uint64(following >= 0)
                n_active = np.int64(kept)
        for k in range(size):
            out[np.uint64(start + k), np.uint64(b)] = -1 - current[k]


@jit
def route_values(X, entries, nodes, tests, category_sets, general, block_rows, out):
    """Leaf rank of every row of X in every tree (``out`` of shape (n, n_trees)).

    ``entries[b]`` is tree b's entry point, its node ids already offset into
    the concatenated ``nodes`` (records of :data:`NODE_DTYPE`; leaf codes are
    not offset) and ``tests`` (the feature and flags of each decision);
    ``category_sets`` holds the category sets of the categorical splits (X
    then holds category codes), and ``general`` says whether there are any.
    A block of ``block_rows`` rows goes through one tree, then the next, so
    that both stay in cache (:func:`_route_block`).
    """
    order = np.empty(block_rows, dtype=np.uint32)
    current = np.empty(block_rows, dtype=np.int32)
    active = np.empty(block_rows, dtype=np.uint32)
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
            general,
            order,
            current,
            active,
            out,
            start,
        )


@jit
def route_values_csr(
    data, indices, indptr, entries, nodes, tests, category_sets, general, block, out
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
    order = np.empty(block_rows, dtype=np.uint32)
    current = np.empty(block_rows, dtype=np.int32)
    active = np.empty(block_rows, dtype=np.uint32)
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
            general,
            order,
            current,
            active,
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
    >>> from treerank.engine import Router
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
        self.general = bool(categorical.any())
        nodes["threshold"][categorical] = category[categorical]
        self.nodes = nodes
        self.tests = tests
        self.category_sets = np.ascontiguousarray(
            np.concatenate([np.zeros((0, 4), np.uint64), *category_sets]),
            dtype=np.uint64,
        )

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
        rows = _ROW_BLOCK
        general = getattr(self, "general", None)
        if general is None:  # a router pickled before the flag existed
            general = bool(np.any(self.tests & CATEGORICAL))
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
                general,
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
                general,
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
