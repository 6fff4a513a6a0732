"""Per-tree tables indexed by leaf rank, read for many rows in compiled code.

A forest's prediction reads, for every row and every tree, one entry of a
small per-tree table at the row's leaf rank: the leaf's score (``leaf_values_``
of :class:`~treerank.RankingForest`), its mid-rank, or its position in the
tree's order of its leaves. :class:`LeafTable` concatenates the trees' tables
once; its kernels read them without the (n_rows, n_trees) index arrays that
numpy's fancy indexing would build.

:meth:`LeafTable.mean` adds the trees' entries in tree order and divides by the
number of trees: the same floating-point operations, in the same order, as
:func:`~treerank.ensemble.mean_leaf_values`, so the results are identical to
the last bit, and each row's mean depends on that row alone.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._jit import jit
from treerank.aggregation._threads import run_on_parts, split_range

__all__ = ["LeafTable"]


@jit
def _mean_over_leaves(leaf_ranks, offsets, values, out):
    """``out[i]``: mean over trees b of ``values[offsets[b] + leaf_ranks[i, b]]``."""
    n_rows, n_trees = leaf_ranks.shape
    for i in range(np.uint64(n_rows)):
        total = values[np.uint64(offsets[0] + leaf_ranks[i, 0])]
        for b in range(np.uint64(1), np.uint64(n_trees)):
            total = total + values[np.uint64(offsets[b] + leaf_ranks[i, b])]
        out[i] = total / n_trees


@jit
def _gather_leaves(leaf_ranks, offsets, table, out):
    """``out[i, b] = table[offsets[b] + leaf_ranks[i, b]]``."""
    n_rows, n_trees = leaf_ranks.shape
    for i in range(np.uint64(n_rows)):
        for b in range(np.uint64(n_trees)):
            out[i, b] = table[np.uint64(offsets[b] + leaf_ranks[i, b])]


@jit
def _gather_leaves_transposed(leaf_ranks, offsets, table, out, start, stop):
    """``out[b, i] = table[offsets[b] + leaf_ranks[i, b]]`` for the rows
    ``start <= i < stop``, in tiles of rows."""
    n_trees = leaf_ranks.shape[1]
    tile = 64
    for i0 in range(start, stop, tile):
        i1 = min(i0 + tile, stop)
        for b in range(n_trees):
            for i in range(i0, i1):
                out[b, i] = table[np.uint64(offsets[b] + leaf_ranks[i, b])]


@jit
def _sum_over_unseen_leaves(leaf_ranks, offsets, values, samples, out, start, stop):
    """``out[i]`` for the rows ``start <= i < stop``: sum over the trees b
    with ``samples[b, i] == 0`` of ``values[offsets[b] + leaf_ranks[i, b]]``,
    added in tree order (in tiles of rows, ``samples`` being tree-major)."""
    n_trees = leaf_ranks.shape[1]
    tile = 64
    for i0 in range(start, stop, tile):
        i1 = min(i0 + tile, stop)
        for i in range(i0, i1):
            out[i] = 0.0
        for b in range(n_trees):
            for i in range(i0, i1):
                if samples[b, i] == 0:
                    out[i] += values[np.uint64(offsets[b] + leaf_ranks[i, b])]


class LeafTable:
    """The per-leaf tables of several trees, concatenated.

    Parameters
    ----------
    tables : list of ndarray
        ``tables[b][r]``: the entry of the leaf of rank r of tree b.
    dtype : dtype, default=np.float64
        Type of the concatenated entries.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.ensemble._leaf_tables import LeafTable
    >>> table = LeafTable([np.array([0.9, 0.1]), np.array([0.6, 0.5, 0.2])])
    >>> table.mean(np.array([[0, 2], [1, 0]], dtype=np.int32))
    array([0.55, 0.35])
    >>> LeafTable([np.array([1, 0]), np.array([0, 0, 1])], np.int32).gather(
    ...     np.array([[0, 2], [1, 0]]))
    array([[1, 1],
           [0, 0]], dtype=int32)
    """

    def __init__(self, tables, dtype=np.float64):
        sizes = np.array([table.shape[0] for table in tables], dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.values = np.ascontiguousarray(np.concatenate(tables), dtype=dtype)

    @classmethod
    def from_flat(cls, values, offsets):
        """The table whose tree b starts at ``values[offsets[b]]``."""
        table = cls.__new__(cls)
        table.values = np.ascontiguousarray(values)
        table.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        return table

    @staticmethod
    def _ranks(leaf_ranks):
        leaf_ranks = np.asarray(leaf_ranks)
        if leaf_ranks.dtype not in (np.int32, np.int64):
            leaf_ranks = leaf_ranks.astype(np.int64)
        return np.ascontiguousarray(leaf_ranks)

    def mean(self, leaf_ranks):
        """Mean over the trees of each row's entries, added in tree order.

        Parameters
        ----------
        leaf_ranks : ndarray of int of shape (n_rows, n_trees)

        Returns
        -------
        mean : ndarray of float64 of shape (n_rows,)
        """
        leaf_ranks = self._ranks(leaf_ranks)
        out = np.empty(leaf_ranks.shape[0], dtype=np.float64)
        if leaf_ranks.shape[0]:
            _mean_over_leaves(leaf_ranks, self.offsets, self.values, out)
        return out

    def gather(self, leaf_ranks):
        """Each row's entry in each tree.

        Parameters
        ----------
        leaf_ranks : ndarray of int of shape (n_rows, n_trees)

        Returns
        -------
        entries : ndarray of shape (n_rows, n_trees), of the table's dtype
        """
        leaf_ranks = self._ranks(leaf_ranks)
        out = np.empty(leaf_ranks.shape, dtype=self.values.dtype)
        _gather_leaves(leaf_ranks, self.offsets, self.values, out)
        return out

    def sum_out_of_sample(self, leaf_ranks, samples, n_threads=1):
        """Each row's sum of its entries over the trees whose sample lacks it.

        Parameters
        ----------
        leaf_ranks : ndarray of int of shape (n_rows, n_trees)
        samples : ndarray of int of shape (n_trees, n_rows)
            Multiplicity of each row in each tree's sample (0: not in it).
        n_threads : int, default=1
            Threads summing parts of the rows (the same sums).

        Returns
        -------
        sums : ndarray of float64 of shape (n_rows,)
            Added in tree order, as ``sum(np.where(samples[b] == 0,
            values_b[leaf_ranks[:, b]], 0.0) for b in trees)``.

        Examples
        --------
        >>> import numpy as np
        >>> from treerank.ensemble._leaf_tables import LeafTable
        >>> table = LeafTable([np.array([0.9, 0.1]), np.array([0.6, 0.5, 0.2])])
        >>> table.sum_out_of_sample(np.array([[0, 2], [1, 0]]),
        ...                         np.array([[0, 1], [0, 0]]))
        array([1.1, 0.6])
        """
        leaf_ranks = self._ranks(leaf_ranks)
        samples = np.ascontiguousarray(samples)
        out = np.empty(leaf_ranks.shape[0], dtype=np.float64)
        run_on_parts(
            _sum_over_unseen_leaves,
            (
                (leaf_ranks, self.offsets, self.values, samples, out, start, stop)
                for start, stop in split_range(leaf_ranks.shape[0], n_threads)
            ),
        )
        return out

    def gather_transposed(self, leaf_ranks, dtype=np.int64, n_threads=1):
        """:meth:`gather`, transposed: each tree's entries of the rows.

        Written straight into a C-contiguous (n_trees, n_rows) array of
        ``dtype``, without the row-major table and its transposed copy.

        Parameters
        ----------
        leaf_ranks : ndarray of int of shape (n_rows, n_trees)
        dtype : dtype, default=np.int64
        n_threads : int, default=1
            Threads writing parts of the rows.

        Returns
        -------
        entries : ndarray of shape (n_trees, n_rows)

        Examples
        --------
        >>> import numpy as np
        >>> from treerank.ensemble._leaf_tables import LeafTable
        >>> table = LeafTable([np.array([1, 0]), np.array([0, 0, 1])], np.int32)
        >>> table.gather_transposed(np.array([[0, 2], [1, 0]]))
        array([[1, 0],
               [1, 0]])
        """
        leaf_ranks = self._ranks(leaf_ranks)
        out = np.empty(leaf_ranks.shape[::-1], dtype=dtype)
        run_on_parts(
            _gather_leaves_transposed,
            (
                (leaf_ranks, self.offsets, self.values, out, start, stop)
                for start, stop in split_range(leaf_ranks.shape[0], n_threads)
            ),
        )
        return out
