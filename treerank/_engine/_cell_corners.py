"""A point of every cell of a forest's common subpartition, in a few bytes per feature.

A median forest must remember the cells of its training rows (their tuples of
leaves, one leaf per tree) to recognize them and place new rows among them.
Stored as leaves, a cell takes one integer per tree. When the trees split on
numeric thresholds, a cell is as well described by one point inside it: the
point's leaves, found by routing it, are the cell. This module finds such a
point for each cell with few bytes per *feature*, for forests with fewer
features than trees.

**The threshold grid.** The numeric decisions of all the trees' routing graphs
on feature f use a finite set of finite thresholds ``t_0 < t_1 < ... < t_{m-1}``
(a threshold ``+inf`` sends every non-missing value left and separates
nothing). They cut the values of f into the m + 1 *atoms* ``(-inf, t_0]``,
``(t_0, t_1]``, ..., ``(t_{m-1}, +inf)``; every decision treats all the values of
an atom alike. Atom k (k < m) is represented by the value ``t_k`` itself, the
last atom by the next float64 above ``t_{m-1}``, and code ``m + 1`` is the
missing value (NaN).

**The corner of a cell.** Take a training row of the cell (the first one) and
follow its path through every tree's graph. The decisions on f it meets, "go
right because x_f > t" or "go left because x_f <= t", confine x_f to an
interval ``(lo_f, hi_f]`` with both ends on the grid, and every point of the
box ``prod_f (lo_f, hi_f]`` takes exactly the same decisions, hence the same
leaves. The corner is the lowest atom of that box in every feature: code
``searchsorted(grid_f, lo_f, side="right")`` (0 when the path never goes right
on f). A row whose value is missing keeps the missing code when some decision
on its path tested f (the decision followed the missing direction), and code 0
when none did (its value was never read). The corner says no more about the
row than the box its paths confine it to.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._jit import jit
from treerank._engine._routing import _FEATURE_MASK, CATEGORICAL, MISSING_RIGHT

__all__ = ["corner_values", "find_cell_corners", "threshold_grids"]

_CORNER_BLOCK = 8192  # rows densified at a time for a sparse X


def threshold_grids(router, n_features):
    """The sorted finite thresholds of the numeric decisions on each feature.

    Parameters
    ----------
    router : Router
        The routing graphs of the forest's trees.
    n_features : int

    Returns
    -------
    grids : list of ndarray of float64, or None
        ``grids[f]`` holds the distinct finite thresholds of the decisions on
        feature f, increasing; None when some decision is categorical (cells
        are then not described by threshold boxes).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank._engine import Router, threshold_grids
    >>> graph = (0, np.array([0, 0], np.int32), np.array([1.5, 0.5]),
    ...          np.array([1, 0], np.uint8), np.array([1, 1], np.uint8),
    ...          np.array([1, -3], np.int32), np.array([-1, -2], np.int32),
    ...          np.array([-1, -1], np.int32))
    >>> threshold_grids(Router([graph]), 2)
    [array([0.5, 1.5]), array([], dtype=float64)]
    """
    tests = router.tests
    if np.any(tests & CATEGORICAL):
        return None
    features = (tests & _FEATURE_MASK).astype(np.int64)
    thresholds = router.nodes["threshold"]
    finite = np.isfinite(thresholds)
    return [np.unique(thresholds[finite & (features == f)]) for f in range(n_features)]


def _flat_grids(grids):
    sizes = np.array([grid.shape[0] for grid in grids], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    values = np.concatenate([np.zeros(0), *grids]).astype(np.float64)
    return values, offsets


@jit
def _corners(X, entries, nodes, tests, grid_values, grid_offsets, out):
    """Corner codes of the rows of X (see the module docstring) into ``out``.

    As in the routing kernels, a block of rows goes through one tree, then the
    next (the tree's decisions stay in cache), the rows advancing together one
    level at a time, and the bound of a row is raised without a branch on the
    split's outcome.
    """
    n_features = X.shape[1]
    block = 1024
    low = np.empty((block, n_features), dtype=np.float64)
    missing_tested = np.empty((block, n_features), dtype=np.bool_)
    current = np.empty(block, dtype=np.int64)
    active = np.empty(block, dtype=np.int64)
    for first in range(0, X.shape[0], block):
        size = min(block, X.shape[0] - first)
        low[:size] = -np.inf
        missing_tested[:size] = False
        for b in range(entries.shape[0]):
            entry = entries[b]
            for k in range(size):
                current[k] = entry
                active[k] = k
            n_active = size if entry >= 0 else 0
            while n_active > 0:
                kept = 0
                for a in range(n_active):
                    k = active[a]
                    g = current[k]
                    test = tests[g]
                    node = nodes[g]
                    f = test & _FEATURE_MASK
                    value = X[first + k, f]
                    if value != value:
                        missing_tested[k, f] = True
                        following = node.right if test & MISSING_RIGHT else node.left
                    else:
                        right = value > node.threshold
                        following = node.right if right else node.left
                        bound = node.threshold if right else -np.inf
                        low[k, f] = max(low[k, f], bound)
                    current[k] = following
                    active[kept] = k
                    kept += following >= 0
                n_active = kept
        for k in range(size):
            for f in range(n_features):
                start = grid_offsets[f]
                stop = grid_offsets[f + 1]
                value = X[first + k, f]
                if value != value:
                    out[first + k, f] = stop - start + 1 if missing_tested[k, f] else 0
                elif low[k, f] == -np.inf:
                    out[first + k, f] = 0
                else:
                    out[first + k, f] = np.searchsorted(
                        grid_values[start:stop], low[k, f], "right"
                    )


def find_cell_corners(router, X, grids):
    """The corner code of each row of X in every feature.

    Parameters
    ----------
    router : Router
        The routing graphs of the forest's trees (numeric decisions only).
    X : {ndarray, sparse matrix} of shape (n_rows, n_features)
        One row per cell (raw values, NaN missing); a sparse X is densified a
        block of rows at a time.
    grids : list of ndarray
        :func:`threshold_grids` of the router.

    Returns
    -------
    codes : ndarray of int32 of shape (n_rows, n_features)
        The corner of each row's box (module docstring): routing
        ``corner_values(codes, grids)`` gives each row's own leaves.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank._engine import (
    ...     Router, corner_values, find_cell_corners, threshold_grids)
    >>> # x0 <= 1.5 ? (x0 <= 0.5 ? leaf 2 : leaf 1) : leaf 0
    >>> graph = (0, np.array([0, 0], np.int32), np.array([1.5, 0.5]),
    ...          np.array([1, 0], np.uint8), np.array([1, 1], np.uint8),
    ...          np.array([1, -3], np.int32), np.array([-1, -2], np.int32),
    ...          np.array([-1, -1], np.int32))
    >>> router = Router([graph])
    >>> grids = threshold_grids(router, 2)
    >>> X = np.array([[0.2, 7.0], [1.0, -3.0], [9.0, 0.0], [np.nan, 1.0]])
    >>> codes = find_cell_corners(router, X, grids)
    >>> codes
    array([[0, 0],
           [1, 0],
           [2, 0],
           [3, 0]], dtype=int32)
    >>> corner_values(codes, grids)[:, 0]
    array([0.5, 1.5, 1.5, nan])
    >>> bool(np.all(router.leaf_ranks(corner_values(codes, grids))
    ...             == router.leaf_ranks(X)))
    True
    """
    from treerank.utils._sparse import canonical_sparse, is_sparse

    grid_values, grid_offsets = _flat_grids(grids)
    out = np.empty((X.shape[0], X.shape[1]), dtype=np.int32)
    sparse = is_sparse(X)
    if sparse:
        X = canonical_sparse(X, "csr")
    step = _CORNER_BLOCK if sparse else max(1, X.shape[0])
    for start in range(0, X.shape[0], step):
        block = X[start : start + step]
        block = block.toarray() if sparse else block
        _corners(
            np.ascontiguousarray(block, dtype=np.float64),
            router.entries,
            router.nodes,
            router.tests,
            grid_values,
            grid_offsets,
            out[start : start + step],
        )
    return out


def corner_values(codes, grids):
    """The point of each corner code: raw feature values that route like it.

    Parameters
    ----------
    codes : ndarray of int of shape (n_rows, n_features)
        Codes in ``0..len(grids[f]) + 1`` for feature f.
    grids : list of ndarray

    Returns
    -------
    X : ndarray of float64 of shape (n_rows, n_features)
        Atom k < m of feature f is ``grids[f][k]``, atom m the next float above
        ``grids[f][-1]`` (0.0 for a feature without threshold), code m + 1 NaN.

    Raises
    ------
    ValueError
        If a code is outside its feature's range.
    """
    codes = np.asarray(codes)
    X = np.empty(codes.shape, dtype=np.float64)
    for f, grid in enumerate(grids):
        m = grid.shape[0]
        column = codes[:, f].astype(np.int64)
        if column.size and (column.min() < 0 or column.max() > m + 1):
            raise ValueError(f"a corner code of feature {f} is outside 0..{m + 1}")
        top = np.nextafter(grid[-1], np.inf) if m else 0.0
        atoms = np.concatenate([grid, [top, np.nan]])
        X[:, f] = atoms[column]
    return X
