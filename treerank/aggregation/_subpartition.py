"""Common subpartition of the leaves of several ranking trees.

The leaves of tree b partition the input space; the common subpartition has as
cells the non-empty intersections of one leaf of each tree. On a reference
sample, a cell is a distinct row of the (n_samples, B) matrix of the samples'
leaves, and tree b ranks the cells by the rank of the leaf that contains them:
the cells inside one leaf are tied, which makes one bucket order of the cells
per tree (DESIGN §5.2).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from typing import NamedTuple

import numpy as np

from treerank.aggregation._cell_index import _distinct_rows, _transpose
from treerank.utils.validation import check_sample_weight

__all__ = ["CommonSubpartition", "common_subpartition"]


class CommonSubpartition(NamedTuple):
    """Cells of a common subpartition (see :func:`common_subpartition`).

    Attributes
    ----------
    cell_index : ndarray of shape (n_samples,), dtype=int64
        Cell of each sample, in 0..n_cells-1.
    cell_weights : ndarray of shape (n_cells,), dtype=float64
        Mass of each cell: the sum of its samples' weights (their number without
        weights). Divide by the sum for the empirical probabilities mu.
    cell_ranks : ndarray of shape (n_cells, n_trees), dtype=int64
        Leaf rank of each cell in each tree (the distinct rows of the input),
        sorted lexicographically.
    rankings : ndarray of shape (n_trees, n_cells), dtype=int64
        Each tree's bucket order of the cells: ``cell_ranks.T`` as a C-contiguous
        array, ready for :func:`kemeny_median`.

    Examples
    --------
    >>> from treerank.aggregation import common_subpartition
    >>> cells = common_subpartition([[0, 1], [0, 1], [1, 0]])
    >>> cells.n_cells
    2
    """

    cell_index: np.ndarray
    cell_weights: np.ndarray
    cell_ranks: np.ndarray
    rankings: np.ndarray

    @property
    def n_cells(self):
        """Number of cells."""
        return self.cell_ranks.shape[0]


def _check_leaf_matrix(leaf_matrix):
    try:
        leaves = np.asarray(leaf_matrix)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"leaf_matrix must be an array of integers: {exc}") from None
    if leaves.ndim != 2:
        raise ValueError(
            "leaf_matrix must be a two-dimensional array of shape (n_samples, "
            f"n_trees) holding leaf ranks; got an array of shape {leaves.shape}."
        )
    if leaves.shape[0] == 0 or leaves.shape[1] == 0:
        raise ValueError(
            "leaf_matrix must have at least one sample and one tree; got shape "
            f"{leaves.shape}."
        )
    if leaves.dtype.kind == "f":
        if not np.all(np.isfinite(leaves)) or not np.all(leaves == np.floor(leaves)):
            raise ValueError("leaf_matrix must contain integer leaf ranks.")
    elif leaves.dtype.kind not in "iu":
        raise ValueError(
            f"leaf_matrix must contain integer leaf ranks; got dtype {leaves.dtype}."
        )
    if leaves.dtype not in (np.int32, np.int64):
        leaves = leaves.astype(np.int64)
    if leaves.min() < 0:
        raise ValueError(
            "leaf_matrix contains negative values; leaf ranks must be >= 0 (0 = the "
            "best leaf of the tree)."
        )
    return leaves


def distinct_leaf_rows(leaf_matrix, sample_weight=None):
    """The cells of :func:`common_subpartition` without their rank tables.

    Returns
    -------
    leaves : ndarray of int32 or int64 of shape (n_samples, n_trees)
        The validated leaf matrix (not copied when int32 or int64).
    cell_index : ndarray of int64 of shape (n_samples,)
    first : ndarray of int64 of shape (n_cells,)
        A sample of each cell (the cells in lexicographic order): the cells'
        leaf ranks are ``leaves[first]``.
    cell_weights : ndarray of float64 of shape (n_cells,)

    A caller that needs the cells' ranks in another form (the forest keeps
    them as int32) builds them from ``leaves[first]``, without the two int64
    tables of ``common_subpartition``.
    """
    leaves = _check_leaf_matrix(leaf_matrix)
    weights = check_sample_weight(sample_weight, leaves.shape[0])
    cell_index, first = _distinct_rows(np.ascontiguousarray(leaves))
    cell_weights = np.bincount(cell_index, weights=weights, minlength=first.shape[0])
    return leaves, cell_index, first, cell_weights


def common_subpartition(leaf_matrix, sample_weight=None):
    """Cells of the common subpartition of B ranking trees, with masses and ranks.

    Parameters
    ----------
    leaf_matrix : array-like of shape (n_samples, n_trees)
        Entry (i, b) is the rank of the leaf of tree b that contains sample i
        (0 = the best leaf of that tree; the leaves of a ranking tree read from
        left to right).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights; a cell's mass is the sum of its samples'
        weights. Samples of zero weight still get a cell (possibly of mass 0).

    Returns
    -------
    cells : CommonSubpartition
        Named tuple ``(cell_index, cell_weights, cell_ranks, rankings)``: the cell
        of each sample, the mass of each cell, each cell's leaf rank in every
        tree (n_cells, n_trees), and each tree's bucket order of the cells
        (n_trees, n_cells).

    Raises
    ------
    ValueError
        If ``leaf_matrix`` is not a two-dimensional array of non-negative integers
        or ``sample_weight`` is invalid.

    Notes
    -----
    A cell is a distinct row of ``leaf_matrix``. Each row is hashed to 64 bits
    by a compiled kernel and inserted into an open-addressing hash table (equal
    hashes are confirmed by comparing the rows), which finds the cells in
    O(n_samples n_trees) time; the distinct rows are then sorted
    lexicographically by a merge sort that compares rows up to their first
    difference, O(n_cells log(n_cells)) comparisons. int32 and int64 input is
    not copied. :class:`CellIndex` finds the cells of new rows the same way.

    Examples
    --------
    >>> from treerank.aggregation import common_subpartition
    >>> leaves = [[0, 1], [1, 0], [0, 1], [1, 1]]  # 4 samples, 2 trees
    >>> cells = common_subpartition(leaves)
    >>> cells.cell_index
    array([0, 1, 0, 2])
    >>> cells.cell_weights
    array([2., 1., 1.])
    >>> cells.rankings  # tree 0 ties cells 1 and 2, tree 1 ties cells 0 and 2
    array([[0, 1, 1],
           [1, 0, 1]])
    """
    leaves, cell_index, first, cell_weights = distinct_leaf_rows(
        leaf_matrix, sample_weight
    )
    cell_ranks = leaves[first].astype(np.int64, copy=False)
    return CommonSubpartition(
        cell_index=cell_index,
        cell_weights=cell_weights,
        cell_ranks=cell_ranks,
        rankings=_transpose(cell_ranks),
    )
