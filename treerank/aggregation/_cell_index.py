"""Hash index of leaf-rank rows: the cells of a forest, found in O(B) per row.

A cell of the common subpartition of B trees is a distinct row of leaf ranks
(one rank per tree). Rows are hashed to 64 bits by a compiled kernel (an
invertible multiply-xorshift step per entry, then the splitmix64 finalizer) and
kept in an open-addressing table with linear probing; two rows with the same
hash are compared entry by entry, so collisions cost time, never a wrong cell.
Building the index of n rows and looking up m rows both take O((n + m) B) time;
the table holds 2 to 4 slots per cell (8 bytes each).

:class:`CellIndex` answers "which fitted cell is this row in, if any" for the
prediction of a forest, and :func:`_distinct_rows` finds the cells of a leaf
matrix for :func:`~treerank.aggregation.common_subpartition`, sorted
lexicographically by a compiled merge sort of the distinct rows.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._jit import aggregation_jit, inner_jit
from treerank._engine._sorting import counting_argsort, stable_argsort

__all__ = ["CellIndex"]

_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_ONE = np.uint64(1)
_S29 = np.uint64(29)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@inner_jit(error_model="python")
def _hash_row(rows, i):
    h = np.uint64(0)
    for b in range(rows.shape[1]):
        h = (h ^ (np.uint64(rows[i, b]) + _ONE)) * _MULTIPLIER
        h ^= h >> _S29
    h ^= h >> _S30
    h *= _MIX1
    h ^= h >> _S27
    h *= _MIX2
    h ^= h >> _S31
    return h


@aggregation_jit
def _row_hashes(rows):
    out = np.empty(rows.shape[0], dtype=np.uint64)
    for i in range(rows.shape[0]):
        out[i] = _hash_row(rows, i)
    return out


@inner_jit(error_model="python")
def _rows_equal(a, i, b, j):
    for t in range(a.shape[1]):
        if a[i, t] != b[j, t]:
            return False
    return True


@aggregation_jit
def _insert_rows(rows, hashes, mask):
    """Cell of every row (first-appearance order) and one representative row each.

    Returns (cell_of_row, first_row_of_cell, table): ``table`` maps a slot to a
    cell id (-1 for an empty slot).
    """
    n_rows = rows.shape[0]
    table = np.full(mask + 1, -1, dtype=np.int64)
    cell_of_row = np.empty(n_rows, dtype=np.int64)
    first = np.empty(n_rows, dtype=np.int64)
    n_cells = 0
    for i in range(n_rows):
        h = hashes[i]
        slot = np.int64(h & np.uint64(mask))
        while True:
            cell = table[slot]
            if cell < 0:
                table[slot] = n_cells
                first[n_cells] = i
                cell_of_row[i] = n_cells
                n_cells += 1
                break
            r = first[cell]
            if hashes[r] == h and _rows_equal(rows, r, rows, i):
                cell_of_row[i] = cell
                break
            slot = (slot + 1) & mask
    return cell_of_row, first[:n_cells].copy(), table


@inner_jit(error_model="python")
def _tail_less(rows, i, j, t):
    """Row i < row j, lexicographically, from entry t on."""
    for c in range(t, rows.shape[1]):
        if rows[i, c] != rows[j, c]:
            return rows[i, c] < rows[j, c]
    return False


@inner_jit(error_model="python")
def _counting_argsort(values, n):
    """Stable argsort of ``values[:n]``, whole numbers >= 0 (leaf ranks): a
    counting sort when they are below 4 n + 64, else the merge sort."""
    largest = 0.0
    for p in range(n):
        largest = max(largest, values[p])
    if largest >= 4 * n + 64:
        return stable_argsort(values, n)
    keys = np.empty(n, dtype=np.int64)
    for p in range(n):
        keys[p] = np.int64(values[p])
    return counting_argsort(keys, np.int64(largest) + 1)


@aggregation_jit
def _lexicographic_kernel(rows, ids, head):
    """Most-significant-column-first sort of ``ids`` by their rows (stable).

    A segment of ids that agree on columns ``0 .. t-1`` is sorted by column t
    (stable merge sort of its values) and split into runs of equal values,
    each sorted the same way from column t + 1. Forest cells differ within a
    few columns, so the work is a few sorts of n values. ``head`` holds the
    first columns of the rows of ``ids``, column-major (contiguous reads).
    """
    n = ids.shape[0]
    n_columns = rows.shape[1]
    n_head = head.shape[0]
    order = np.arange(n)
    stack_lo = np.empty(64, dtype=np.int64)
    stack_hi = np.empty(64, dtype=np.int64)
    stack_t = np.empty(64, dtype=np.int64)
    stack_lo[0] = 0
    stack_hi[0] = n
    stack_t[0] = 0
    depth = 1
    while depth > 0:
        depth -= 1
        lo = stack_lo[depth]
        hi = stack_hi[depth]
        t = stack_t[depth]
        if hi - lo < 2 or t >= n_columns:
            continue
        if hi - lo <= 16:  # insertion sort by the rest of the rows
            for a in range(lo + 1, hi):
                current = order[a]
                b = a
                while b > lo and _tail_less(rows, ids[current], ids[order[b - 1]], t):
                    order[b] = order[b - 1]
                    b -= 1
                order[b] = current
            continue
        # float64 keys, exact for leaf ranks: the engine's stable sort, shared
        # with the other kernels (no generic argsort compiled for this one)
        values = np.empty(hi - lo, dtype=np.float64)
        if t < n_head:
            for p in range(lo, hi):
                values[p - lo] = head[t, order[p]]
        else:
            for p in range(lo, hi):
                values[p - lo] = rows[ids[order[p]], t]
        permutation = _counting_argsort(values, hi - lo)
        segment = order[lo:hi].copy()
        for p in range(hi - lo):
            order[lo + p] = segment[permutation[p]]
        start = 0
        while start < hi - lo:
            stop = start + 1
            value = values[permutation[start]]
            while stop < hi - lo and values[permutation[stop]] == value:
                stop += 1
            if stop - start > 1:
                if depth == stack_lo.shape[0]:
                    stack_lo = np.concatenate((stack_lo, np.empty_like(stack_lo)))
                    stack_hi = np.concatenate((stack_hi, np.empty_like(stack_hi)))
                    stack_t = np.concatenate((stack_t, np.empty_like(stack_t)))
                stack_lo[depth] = lo + start
                stack_hi[depth] = lo + stop
                stack_t[depth] = t + 1
                depth += 1
            start = stop
    return ids[order]


# up to this many rows, numpy sorts them in at most a few milliseconds (a
# forest's cells differ within their first columns, which numpy sorts first):
# problems of that size (a default forest's on 2,000 rows) never compile the
# kernel, about 1 s of a first fit's compilation. Beyond, the kernel is 3 to
# 40 times faster (measured on 17,592 cells of 10 trees: 7 ms more for numpy,
# a quarter of the forest's aggregation)
_NUMPY_SORT_MAX_ROWS = 1 << 12
# leading columns numpy sorts by first (doubled while rows tie on them)
_NUMPY_SORT_COLUMNS = 8


def _lexsort_rows(rows, ids):
    """:func:`_lexicographic_order` by numpy: a stable lexsort of the rows of
    ``ids`` on their leading columns, as many as break every tie (8, 16, ...)."""
    selected = rows[ids]
    n_columns = selected.shape[1]
    width = min(_NUMPY_SORT_COLUMNS, n_columns)
    while True:
        # lexsort's last key is the primary one: columns in reverse order
        order = np.lexsort(selected[:, width - 1 :: -1].T)
        if width == n_columns:
            break
        leading = selected[order, :width]
        if not np.any(np.all(leading[1:] == leading[:-1], axis=1)):
            break  # distinct leading columns: the rest cannot reorder them
        width = min(2 * width, n_columns)
    return ids[order]


def _lexicographic_order(rows, ids):
    """``ids`` (row indices) sorted by their rows, lexicographically (stable)."""
    ids = np.ascontiguousarray(ids, dtype=np.int64)
    if ids.shape[0] <= _NUMPY_SORT_MAX_ROWS:
        return _lexsort_rows(rows, ids)
    head = np.ascontiguousarray(rows[ids, :8].T)
    return _lexicographic_kernel(rows, ids, head)


@aggregation_jit
def _lookup(cells, cell_hashes, table, mask, rows, out):
    for i in range(rows.shape[0]):
        h = _hash_row(rows, i)
        slot = np.int64(h & np.uint64(mask))
        found = -1
        while True:
            cell = table[slot]
            if cell < 0:
                break
            if cell_hashes[cell] == h and _rows_equal(cells, cell, rows, i):
                found = cell
                break
            slot = (slot + 1) & mask
        out[i] = found


@aggregation_jit
def _transpose(matrix):
    """C-contiguous transpose, in cache-sized tiles."""
    n_rows, n_columns = matrix.shape
    out = np.empty((n_columns, n_rows), dtype=matrix.dtype)
    tile = 64
    for i0 in range(0, n_rows, tile):
        for j0 in range(0, n_columns, tile):
            for i in range(i0, min(i0 + tile, n_rows)):
                for j in range(j0, min(j0 + tile, n_columns)):
                    out[j, i] = matrix[i, j]
    return out


def _table_mask(n_rows):
    """Mask of a power-of-two table with at least 2 slots per row."""
    size = 2
    while size < 2 * n_rows:
        size *= 2
    return size - 1


def _distinct_rows(rows):
    """Distinct rows of a C-contiguous integer matrix, sorted lexicographically.

    Returns (cell_of_row, first_row_of_cell): the cell of every row and, for each
    cell in lexicographic order, the index of its first row.
    """
    hashes = _row_hashes(rows)
    cell_of_row, first, _ = _insert_rows(rows, hashes, _table_mask(rows.shape[0]))
    # cells are numbered by first appearance, so ``first`` is increasing
    order = _lexicographic_order(rows, first)
    relabel = np.empty(order.shape[0], dtype=np.int64)
    relabel[cell_of_row[order]] = np.arange(order.shape[0])
    return relabel[cell_of_row], order


def _check_integer_rows(rows, name, n_columns=None):
    try:
        array = np.asarray(rows)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of integers: {exc}") from None
    if array.ndim != 2:
        raise ValueError(
            f"{name} must be a two-dimensional array of leaf ranks, one row per "
            f"sample and one column per tree; got an array of shape {array.shape}."
        )
    if array.dtype.kind not in "iu":
        raise ValueError(
            f"{name} must contain integer leaf ranks; got dtype {array.dtype}."
        )
    if n_columns is not None and array.shape[1] != n_columns:
        raise ValueError(
            f"{name} has {array.shape[1]} columns but the index holds cells of "
            f"{n_columns} trees."
        )
    if array.dtype not in (np.int32, np.int64):
        array = array.astype(np.int64)
    return np.ascontiguousarray(array)


class CellIndex:
    """Hash index of the cells of a forest: the cell id of any leaf-rank row.

    Parameters
    ----------
    cell_ranks : array-like of int of shape (n_cells, n_trees)
        Distinct rows of leaf ranks, e.g. ``common_subpartition(...).cell_ranks``
        or a fitted forest's ``cells_``; cell ``c`` is row ``c``.

    Attributes
    ----------
    cell_ranks : ndarray of shape (n_cells, n_trees), dtype int32 or int64
        The cells, C-contiguous (int32 and int64 input is kept as is).
    n_cells : int
    n_trees : int

    Raises
    ------
    ValueError
        If ``cell_ranks`` is not a two-dimensional integer array with at least
        one row and one column, or holds the same row twice.

    See Also
    --------
    common_subpartition : the cells of a leaf matrix.

    Notes
    -----
    Rows are hashed to 64 bits (a compiled kernel, O(n_trees) per row) into an
    open-addressing table of 2 to 4 slots per cell; equal hashes are confirmed
    by comparing the rows, so a lookup is exact. Building the index costs
    O(n_cells n_trees) time and a lookup of m rows O(m n_trees), with no memory
    beyond the (m,) result. The table is rebuilt on first use after unpickling
    (it is not stored). The kernels release the GIL: threads may look up
    disjoint slices of a batch concurrently.

    Examples
    --------
    >>> from treerank.aggregation import CellIndex
    >>> index = CellIndex([[0, 1], [1, 0], [1, 1]])
    >>> index.lookup([[1, 0], [0, 0], [1, 1]])
    array([ 1, -1,  2])
    """

    def __init__(self, cell_ranks):
        cells = _check_integer_rows(cell_ranks, "cell_ranks")
        if cells.shape[0] == 0 or cells.shape[1] == 0:
            raise ValueError(
                "cell_ranks must have at least one cell and one tree; got shape "
                f"{cells.shape}."
            )
        self.cell_ranks = cells
        self._table = None
        self._build()

    @property
    def n_cells(self):
        """Number of cells."""
        return self.cell_ranks.shape[0]

    @property
    def n_trees(self):
        """Number of trees (columns)."""
        return self.cell_ranks.shape[1]

    def _build(self):
        cells = self.cell_ranks
        hashes = _row_hashes(cells)
        mask = _table_mask(cells.shape[0])
        cell_of_row, first, table = _insert_rows(cells, hashes, mask)
        if first.shape[0] != cells.shape[0]:
            duplicate = int(np.flatnonzero(cell_of_row != np.arange(len(cells)))[0])
            raise ValueError(
                f"cell_ranks must hold distinct rows; row {duplicate} repeats row "
                f"{int(first[cell_of_row[duplicate]])}."
            )
        self._table = (hashes, table, mask)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_table"] = None
        return state

    def lookup(self, rows):
        """Cell id of each row, or -1 for a row that is not a cell.

        Parameters
        ----------
        rows : array-like of int of shape (n_rows, n_trees)
            Leaf ranks of new samples in the same trees.

        Returns
        -------
        cell : ndarray of shape (n_rows,), dtype=int64
            Index of the row's cell in ``cell_ranks``, -1 if unseen.
        """
        rows = _check_integer_rows(rows, "rows", self.n_trees)
        if self._table is None:
            self._build()
        hashes, table, mask = self._table
        out = np.empty(rows.shape[0], dtype=np.int64)
        _lookup(self.cell_ranks, hashes, table, mask, rows, out)
        return out
