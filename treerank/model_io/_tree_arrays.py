"""The nodes of master trees as arrays, and checks of binary trees in bulk.

The master trees of a model (fully grown, numbered in depth-first preorder,
left child first) are stored as concatenated arrays with offsets
(:data:`TREE_ARRAYS`: ``node_offsets``, the children and the weighted class
counts of every node), so that a forest of hundreds of trees is a handful of
archive members. Reading them back (:func:`unpack_trees`) checks, vectorized
over all the trees at once, that they are proper binary trees numbered in
preorder (every node but the root has exactly one parent, children in
range), no deeper than ``max_depth``, with finite non-negative class counts,
a parent's counts the sum of its children's (within rounding), both classes
present at every split, whose left child is the better one. The rules of the
engine are binary trees too: :func:`check_children`, :func:`node_depths`
and :func:`segments` serve their checks as well.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.model_io._arrays import (
    check_array,
    check_declared,
    check_indices,
    check_offsets,
    offsets_from_lengths,
)

__all__ = [
    "MAX_TREES",
    "TREE_ARRAYS",
    "check_children",
    "chunk_ranges",
    "node_depths",
    "pack_trees",
    "segments",
    "subtree_ends",
    "unpack_trees",
]


#: Most trees a model file may hold (a forest's offsets are read first).
MAX_TREES = 2**20


# Entries the elementwise pre-checks look at at once (bounded temporaries)
_CHUNK = 2**18


# Masses of a node and of its children may differ by rounding (they are summed
# over different row orders); relative to the root's total mass.
_COUNT_RTOL = 1e-9


#: The arrays of the master trees' nodes.
TREE_ARRAYS = ("node_offsets", "children_left", "children_right", "n_pos", "n_neg")


def pack_trees(structures):
    """The nodes of the master trees as concatenated arrays (:data:`TREE_ARRAYS`).

    Parameters
    ----------
    structures : list of RankingTreeStructure

    Returns
    -------
    arrays : dict of str to ndarray
    """
    return {
        "node_offsets": offsets_from_lengths([s.node_count for s in structures]),
        "children_left": np.concatenate([s.children_left for s in structures]),
        "children_right": np.concatenate([s.children_right for s in structures]),
        "n_pos": np.concatenate([s.n_pos for s in structures]),
        "n_neg": np.concatenate([s.n_neg for s in structures]),
    }


def unpack_trees(arrays, n_trees, max_depth):
    """The nodes of the master trees of a file, checked (:func:`pack_trees`).

    The offsets first (their length is the number of trees), then the shapes
    of every per-node array, then the cheap necessary conditions on the
    stored arrays (in chunks), before anything is converted or derived: a
    file refused for its trees costs little more than the arrays it stores.

    Parameters
    ----------
    arrays : mapping of str to ndarray
    n_trees : int or None
        The number of trees the parameters say (None: any, at most
        :data:`MAX_TREES`).
    max_depth : int or None
        Largest depth of a tree (None: no limit).

    Returns
    -------
    trees : tuple of ndarray
        ``(node_offsets, children_left, children_right, n_pos, n_neg)``.
    split : ndarray of int
        The internal nodes (global indices, in order).
    gain : ndarray of float
        The local TPR minus FPR of every split, from the counts.
    owner : ndarray of int
        The tree of every node.
    """
    (length,) = check_declared(arrays, "node_offsets", kinds="iu")
    if n_trees is not None and length != n_trees + 1:
        raise ValueError(
            f"the parameters say {n_trees} tree(s) but the file holds {length - 1}"
        )
    if not 2 <= length <= MAX_TREES + 1:
        raise ValueError(
            f"the array node_offsets describes {length - 1} trees; a model file "
            f"holds 1 to {MAX_TREES}"
        )
    node_offsets = check_offsets(
        arrays["node_offsets"], None, "node_offsets", strict=True
    )
    n_nodes = int(node_offsets[-1])
    shape = (n_nodes,)
    check_declared(arrays, "children_left", kinds="iu", shape=shape)
    check_declared(arrays, "children_right", kinds="iu", shape=shape)
    check_declared(arrays, "n_pos", kinds="iuf", shape=shape)
    check_declared(arrays, "n_neg", kinds="iuf", shape=shape)
    _precheck_children(
        arrays["children_left"], lambda: arrays["children_right"], node_offsets
    )
    _precheck_counts(arrays["n_pos"], arrays["n_neg"], node_offsets)
    left = check_array(arrays, "children_left", kinds="iu", shape=shape, dtype=np.int64)
    right = check_array(
        arrays, "children_right", kinds="iu", shape=shape, dtype=np.int64
    )
    n_pos = check_array(arrays, "n_pos", kinds="iuf", shape=shape, dtype=np.float64)
    n_neg = check_array(arrays, "n_neg", kinds="iuf", shape=shape, dtype=np.float64)
    owner, base, size, local = segments(node_offsets)
    names = ("children_left", "children_right")
    parent = check_children(left, right, base, size, local, "tree", names)
    check_preorder(left, right, owner, local, size, "tree")
    if max_depth is not None and np.any(node_depths(parent) > max_depth):
        raise ValueError(f"a tree is deeper than max_depth={max_depth}")
    split, gain = _check_counts(n_pos, n_neg, left, right, base, local, owner)
    return (node_offsets, left, right, n_pos, n_neg), split, gain, owner


def segments(offsets):
    """Owner segment and local index of every element of concatenated arrays."""
    sizes = np.diff(offsets)
    owner = np.repeat(np.arange(sizes.shape[0]), sizes)
    base = offsets[:-1][owner]
    local = np.arange(offsets[-1], dtype=np.int64) - base
    return owner, base, sizes[owner], local


def chunk_ranges(n):
    """Ranges of at most :data:`_CHUNK` entries covering ``range(n)``."""
    return ((start, min(n, start + _CHUNK)) for start in range(0, n, _CHUNK))


def _precheck_children(left, right, node_offsets):
    """What every node of trees numbered in preorder satisfies, on the stored
    arrays in chunks: a leaf has no child; a split's left child is the next
    node, its right child comes after it, inside the tree. The full checks
    (:func:`check_children`, :func:`check_preorder`) follow; these refuse a
    hostile file (a member of zeros, say) before any array is converted, the
    left children before the right ones are even read.
    """

    def chunks():
        for start, stop in chunk_ranges(node_offsets[-1]):
            position = np.arange(start, stop)
            owner = np.searchsorted(node_offsets, position, side="right") - 1
            local = position - node_offsets[owner]
            size = node_offsets[owner + 1] - node_offsets[owner]
            yield start, stop, local, size

    for start, stop, local, size in chunks():
        part = left[start:stop]
        check_indices(
            part, size, "children_left", sentinel=-1, size_name="its tree's size"
        )
        lc = part.astype(np.int64)
        split = lc != -1
        if np.any(lc[split] <= local[split]):
            raise ValueError(
                "tree: a child is out of range or does not come after its parent"
            )
        if np.any(lc[split] != local[split] + 1):
            raise ValueError("tree: a left child must follow its parent (preorder)")
    right = right()  # read now
    for start, stop, local, size in chunks():
        part = right[start:stop]
        check_indices(
            part, size, "children_right", sentinel=-1, size_name="its tree's size"
        )
        split = left[start:stop] != -1
        rc = part.astype(np.int64)
        if np.any(rc[~split] != -1):
            raise ValueError("tree: a node has a right child but no left child")
        if np.any(rc[split] <= local[split] + 1):
            raise ValueError(
                "tree: a child is out of range or does not come after its parent"
            )


def _precheck_counts(n_pos, n_neg, node_offsets):
    """Class counts finite and non-negative, every node with some weight and
    every root with both classes, on the stored arrays in chunks."""
    for start, stop in chunk_ranges(n_pos.shape[0]):
        for name, counts in (("n_pos", n_pos), ("n_neg", n_neg)):
            part = counts[start:stop].astype(np.float64)
            if not np.all(np.isfinite(part)) or np.any(part < 0):
                raise ValueError(
                    f"the array {name} holds negative or non-finite counts"
                )
    roots = node_offsets[:-1]
    if np.any(n_pos[roots] <= 0) or np.any(n_neg[roots] <= 0):
        raise ValueError("a tree's root lacks positive or negative weight")
    for start, stop in chunk_ranges(n_pos.shape[0]):
        total = n_pos[start:stop].astype(np.float64) + n_neg[start:stop]
        if np.any(total <= 0):
            raise ValueError("a node of a tree holds no training weight")


def check_children(
    left, right, base, size, local, what, names=("children_left", "children_right")
):
    """Children local to each tree, in range and after their parent; parents.

    ``names`` are the arrays of the left and right children, for the
    messages. Returns the global parent of every node (-1 for the roots).
    With every node but the roots having exactly one parent, earlier in its
    tree, each tree is one binary tree rooted at its first node.
    """
    for children, name in zip((left, right), names):
        check_indices(children, size, name, sentinel=-1, size_name="its tree's size")
    split = left != -1
    if np.any(right[~split] != -1):
        raise ValueError(f"{what}: a node has a right child but no left child")
    ls, rs, loc, sz = left[split], right[split], local[split], size[split]
    if np.any((ls <= loc) | (ls >= sz) | (rs <= loc) | (rs >= sz)):
        raise ValueError(
            f"{what}: a child is out of range or does not come after its parent"
        )
    parents = np.flatnonzero(split)
    children = np.concatenate([ls + base[split], rs + base[split]])
    n_parents = np.bincount(children, minlength=left.shape[0])
    if np.any(n_parents[local == 0] != 0) or np.any(n_parents[local != 0] != 1):
        raise ValueError(
            f"{what}: every node but the root must have exactly one parent"
        )
    parent = np.full(left.shape[0], -1, dtype=np.int64)
    parent[children] = np.concatenate([parents, parents])
    return parent


def node_depths(parent):
    """Depth of every node from its parent pointers (pointer jumping)."""
    depth = (parent >= 0).astype(np.int64)
    ancestor = parent.copy()
    active = np.flatnonzero(ancestor >= 0)
    while active.shape[0]:
        up = ancestor[active]
        depth[active] += depth[up]
        ancestor[active] = ancestor[up]
        active = active[ancestor[active] >= 0]
    return depth


def check_preorder(left, right, owner, local, size, what):
    """Numbering in depth-first preorder, left child first.

    In preorder, with +1 for an internal node and -1 for a leaf, the running
    sum ``h`` before node i stays non-negative and ends at -1; the left child
    of node i is i + 1 and its right child is the next node of its tree at
    which ``h`` is back to ``h[i]`` (the first node after the left subtree).
    """
    split = left != -1
    step = np.where(split, 1, -1)
    before = np.cumsum(step) - step  # global running sum before each node
    start = before[local == 0]
    h = before - start[owner]
    end = h + step  # after the node
    last = local == size - 1
    if np.any(h < 0) or np.any(end[last] != -1):
        raise ValueError(f"{what}: the nodes are not numbered in preorder")
    if np.any(left[split] != local[split] + 1):
        raise ValueError(f"{what}: a left child must follow its parent (preorder)")
    order = np.lexsort((np.arange(h.shape[0]), h, owner))
    same = (owner[order][1:] == owner[order][:-1]) & (h[order][1:] == h[order][:-1])
    following = np.full(h.shape[0], -1, dtype=np.int64)
    following[order[:-1][same]] = local[order[1:][same]]
    if np.any(right[split] != following[split]):
        raise ValueError(
            f"{what}: a right child must follow its left subtree (preorder)"
        )


def subtree_ends(left, right):
    """End (exclusive) of each node's subtree in a tree numbered in preorder.

    The subtree of node i is the nodes ``i:ends[i]``: it ends after its
    rightmost leaf, reached by following right children (pointer jumping).

    Parameters
    ----------
    left, right : ndarray of int of shape (n_nodes,)
        Children (-1 at leaves) of one checked tree numbered in preorder.

    Returns
    -------
    ends : ndarray of int of shape (n_nodes,)

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.model_io._tree_arrays import subtree_ends
    >>> subtree_ends(np.array([1, 2, -1, -1, -1]), np.array([4, 3, -1, -1, -1]))
    array([5, 4, 3, 4, 5])
    """
    nodes = np.arange(left.shape[0])
    pointer = np.where(left != -1, right, nodes)
    while True:
        jumped = pointer[pointer]
        if np.array_equal(jumped, pointer):
            return pointer + 1
        pointer = jumped


def _check_counts(n_pos, n_neg, left, right, base, local, owner):
    """Finite, non-negative counts; parents the sums of their children."""
    for name, counts in (("n_pos", n_pos), ("n_neg", n_neg)):
        if not np.all(np.isfinite(counts)) or np.any(counts < 0):
            raise ValueError(f"the array {name} holds negative or non-finite counts")
    roots = local == 0
    if np.any(n_pos[roots] <= 0) or np.any(n_neg[roots] <= 0):
        raise ValueError("a tree's root lacks positive or negative weight")
    if np.any(n_pos + n_neg <= 0):
        raise ValueError("a node of a tree holds no training weight")
    split = np.flatnonzero(left != -1)
    lc, rc = left[split] + base[split], right[split] + base[split]
    scale = (n_pos + n_neg)[roots][owner[split]]
    for name, counts in (("n_pos", n_pos), ("n_neg", n_neg)):
        gap = np.abs(counts[split] - counts[lc] - counts[rc])
        if np.any(gap > _COUNT_RTOL * scale):
            raise ValueError(
                f"{name}: a node's count is not the sum of its children's counts"
            )
    if np.any(n_pos[split] <= 0) or np.any(n_neg[split] <= 0):
        raise ValueError("a split node lacks positive or negative weight")
    gain = n_pos[lc] / n_pos[split] - n_neg[lc] / n_neg[split]
    if not np.all(gain > 0):
        raise ValueError("a split's left child is not better than its right child")
    return split, gain
