"""Vectorized operations on query groups (lists) stored as one flat array.

A list-ranking data set is a flat array of items plus a query id per item;
every list surrogate needs per-list sums, maxima, sorts, pairs and prefix
scans. This module builds the index structure once (``np.unique`` and one
stable ``argsort``) and provides those operations without a Python loop over
lists: sums use ``np.bincount``, maxima ``np.maximum.reduceat``, prefix scans a
segmented Hillis-Steele scan (``O(n log m)`` numpy work, ``m`` the largest
list), and pairs are generated with ``np.repeat`` arithmetic.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.metrics._grouping import check_qid, group_qid, segment_scan

__all__ = ["Groups", "check_groups", "segmented_scan"]


class Groups:
    """Index structure of query groups over a flat array of ``n_samples`` items.

    Parameters
    ----------
    index : ndarray of shape (n_samples,), dtype=intp
        Group number (0 .. n_groups - 1) of every item.
    n_groups : int
        Number of groups.
    labels : ndarray of shape (n_groups,)
        The query id of each group (sorted as by ``np.unique``).
    """

    def __init__(self, index, n_groups, labels):
        self.index = index
        self.n_groups = n_groups
        self.labels = labels
        self.n_samples = index.shape[0]
        self.sizes = np.bincount(index, minlength=n_groups)
        # items sorted by group, original order kept inside a group
        self.order = np.argsort(index, kind="stable")
        ends = np.cumsum(self.sizes)
        self.starts = ends - self.sizes
        self.ends = ends
        # contiguous lists of equal length: padding is a reshape
        self._regular = bool(
            n_groups
            and np.all(self.sizes == self.sizes[0])
            and np.all(index[1:] >= index[:-1])
        )

    @classmethod
    def regular(cls, n_lists, n_items):
        """Groups of ``n_lists`` contiguous lists of ``n_items`` (a 2-D batch)."""
        index = np.repeat(np.arange(n_lists, dtype=np.intp), n_items)
        groups = cls.__new__(cls)
        groups.index = index
        groups.n_groups = n_lists
        groups.labels = np.arange(n_lists)
        groups.n_samples = n_lists * n_items
        groups.sizes = np.full(n_lists, n_items, dtype=np.intp)
        groups.order = np.arange(groups.n_samples)
        groups.ends = np.cumsum(groups.sizes)
        groups.starts = groups.ends - groups.sizes
        groups._pad_rows = index
        groups._pad_cols = np.tile(np.arange(n_items), n_lists)
        groups._regular = n_lists > 0
        return groups

    @property
    def max_size(self):
        return int(self.sizes.max()) if self.n_groups else 0

    @property
    def padding_is_cheap(self):
        """Whether the lists fit a (n_groups, max_size) array at most 4x larger.

        Padded lists are sorted row by row (``O(m log m)`` per list, small
        constants); otherwise the flat algorithms sort once globally.
        """
        return self.n_groups * self.max_size <= 4 * self.n_samples + 64

    def _pad_index(self):
        if not hasattr(self, "_pad_rows"):
            self._pad_rows = self.index[self.order]
            self._pad_cols = np.arange(self.n_samples) - self.starts[self._pad_rows]
        return self._pad_rows, self._pad_cols

    def pad(self, values, fill):
        """Array of shape (n_groups, max_size): row g holds list g, then ``fill``.

        Items keep their original order inside a row.
        """
        if self._regular:
            return np.asarray(values, dtype=np.float64).reshape(self.n_groups, -1)
        rows, cols = self._pad_index()
        out = np.full((self.n_groups, self.max_size), fill, dtype=np.float64)
        out[rows, cols] = values[self.order]
        return out

    def unpad(self, padded):
        """Inverse of :meth:`pad`: the flat array of the real entries."""
        if self._regular:
            return padded.reshape(-1)
        rows, cols = self._pad_index()
        out = np.empty(self.n_samples, dtype=padded.dtype)
        out[self.order] = padded[rows, cols]
        return out

    def mask(self):
        """Boolean (n_groups, max_size) array of the real entries of :meth:`pad`."""
        return np.arange(self.max_size)[None, :] < self.sizes[:, None]

    def sum(self, values):
        """Per-group sums of ``values`` (of shape (n_samples,))."""
        return np.bincount(self.index, weights=values, minlength=self.n_groups)

    def max(self, values):
        """Per-group maxima of ``values``."""
        if self.n_samples == 0:
            return np.empty(0)
        return np.maximum.reduceat(values[self.order], self.starts)

    def min(self, values):
        """Per-group minima of ``values``."""
        if self.n_samples == 0:
            return np.empty(0)
        return np.minimum.reduceat(values[self.order], self.starts)

    def lexsort(self, *keys):
        """Stable order of the items by group, then by ``keys`` (last key primary).

        ``keys`` follow the ``np.lexsort`` convention: the last one is the most
        significant after the group; ties are broken by the original index.
        """
        idx = np.arange(self.n_samples)
        return np.lexsort((idx, *keys, self.index))

    def positions(self, order):
        """1-based position of each item of ``order`` inside its group.

        ``order`` must list the items group by group (as returned by
        :meth:`lexsort`). The result is aligned with ``order``.
        """
        return np.arange(self.n_samples) - self.starts[self.index[order]] + 1

    def pairs(self):
        """All unordered pairs ``(i, j)`` of items of the same group.

        Returns
        -------
        first, second : ndarray of shape (n_pairs,)
            Item indices; ``first`` comes before ``second`` in the group's
            stable order. ``n_pairs = sum_q m_q (m_q - 1) / 2``.
        """
        n = self.n_samples
        pos = np.arange(n)
        end = self.ends[self.index[self.order]]
        count = end - pos - 1
        total = int(count.sum())
        first = np.repeat(pos, count)
        offset = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
        second = first + 1 + offset
        return self.order[first], self.order[second]


def check_groups(qid, n_samples, *, input_name="qid"):
    """Validate query ids and build the :class:`Groups` structure.

    ``qid=None`` makes the whole array one list. Query ids need not be
    contiguous: items with equal ids form one list, in their original order.
    Validation is the metric layer's (:func:`treerank.metrics._grouping.check_qid`).
    """
    if qid is None:
        index = np.zeros(n_samples, dtype=np.intp)
        return Groups(index, 1 if n_samples else 0, np.zeros(1, dtype=np.intp))
    qid = check_qid(qid, n_samples, input_name=input_name)
    if n_samples == 0:
        return Groups(np.zeros(0, dtype=np.intp), 0, np.zeros(0, dtype=qid.dtype))
    groups = group_qid(qid)
    return Groups(groups.index, groups.n_groups, groups.ids)


def segmented_scan(values, segment, ufunc, *, max_length=None):
    """Inclusive prefix scan of ``values`` inside runs of equal ``segment``.

    Consecutive equal segment ids form a run (the array is sorted by segment,
    in either direction). The scan itself is
    :func:`treerank.metrics._grouping.segment_scan` (Hillis-Steele doubling,
    ``ceil(log2(longest run))`` vectorized passes); this adapter computes each
    element's position in its run.

    Parameters
    ----------
    values : ndarray of shape (n,)
    segment : ndarray of shape (n,)
        Segment id of each value, constant on runs.
    ufunc : numpy ufunc
        An associative binary ufunc (``np.maximum``, ``np.logaddexp``, ...).
    max_length : int or None, default=None
        Unused (the longest run is read from the positions); kept for callers.

    Returns
    -------
    scanned : ndarray of shape (n,)
    """
    out = np.array(values, dtype=np.float64, copy=True)
    n = out.shape[0]
    if n == 0:
        return out
    change = np.empty(n, dtype=bool)
    change[0] = True
    np.not_equal(segment[1:], segment[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    positions = np.arange(n) - starts[np.cumsum(change) - 1]
    return segment_scan(out, positions, ufunc)
