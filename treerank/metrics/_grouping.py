"""Query grouping: qid arrays, group boundaries and segment operations.

Many ranked lists are passed as flat arrays with a query id per row (``qid``,
the convention of scikit-learn's ``groups=``). This module turns a qid array
into a :class:`QueryGroups` (sorted unique ids, the group of every row, group
sizes and boundaries, and the permutation that makes the groups contiguous)
and back (:func:`sizes_to_qid`). It also provides the vectorized *segment*
operations that the list metrics use on such a grouped layout: sums, inclusive
and exclusive scans (cumulative sums and products that restart at every
segment), and a sort that orders every segment independently.

Segments are always non-empty and contiguous; they are described by their
``starts`` (offsets in the flat array) and ``sizes``. Every function works on
float arrays and on object arrays of :class:`fractions.Fraction` alike (the
exact path of the list metrics), so no operation here divides or takes logs.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from typing import NamedTuple

import numpy as np

__all__ = [
    "QueryGroups",
    "check_qid",
    "group_qid",
    "segment_exclusive_scan",
    "segment_index",
    "segment_lexsort",
    "segment_positions",
    "segment_scan",
    "segment_sum",
    "sizes_to_qid",
]

# Above this number of distinct segment sizes, :func:`segment_lexsort` sorts the
# whole array once (keyed by segment) instead of one 2-D sort per size.
_MAX_SIZE_BUCKETS = 32


class QueryGroups(NamedTuple):
    """Rows of a flat array grouped by query id.

    Attributes
    ----------
    ids : ndarray of shape (n_groups,)
        The sorted unique query ids; group ``g`` is the query ``ids[g]``.
    index : ndarray of shape (n_samples,), dtype=intp
        The group of every row, in ``range(n_groups)``.
    sizes : ndarray of shape (n_groups,), dtype=intp
        Number of rows of every group (all >= 1).
    starts : ndarray of shape (n_groups,), dtype=intp
        Offset of every group in the grouped layout ``order``.
    order : ndarray of shape (n_samples,), dtype=intp
        Permutation of the rows listing group 0 first, then group 1, ...;
        inside a group, rows keep their original order (stable).
    """

    ids: np.ndarray
    index: np.ndarray
    sizes: np.ndarray
    starts: np.ndarray
    order: np.ndarray

    @property
    def n_groups(self):
        """Number of groups."""
        return self.sizes.shape[0]


def check_qid(qid, n_samples, *, input_name="qid"):
    """Validate an array of query ids.

    Parameters
    ----------
    qid : array-like of shape (n_samples,)
        One query id per row. Integers, floats (finite) and strings are
        accepted; rows of one query need not be contiguous.
    n_samples : int
        Expected length.
    input_name : str, default="qid"
        Name of the argument, used in error messages.

    Returns
    -------
    qid : ndarray of shape (n_samples,)

    Raises
    ------
    ValueError
        If ``qid`` is not one-dimensional, has the wrong length, contains NaN
        or infinity, or mixes types that cannot be sorted.

    Examples
    --------
    >>> from treerank.metrics._grouping import check_qid
    >>> check_qid([3, 3, 1], 3)
    array([3, 3, 1])
    """
    qid = np.asarray(qid)
    if qid.ndim == 2 and qid.shape[1] == 1:
        qid = qid.ravel()
    if qid.ndim != 1:
        raise ValueError(
            f"{input_name} must be one-dimensional (one query id per row); got an "
            f"array of shape {qid.shape}."
        )
    if qid.shape[0] != n_samples:
        raise ValueError(
            f"{input_name} has {qid.shape[0]} elements but there are {n_samples} "
            "rows: give one query id per row."
        )
    if qid.dtype.kind == "f" and not np.all(np.isfinite(qid)):
        raise ValueError(f"{input_name} contains NaN or infinity.")
    if qid.dtype.kind == "c":
        raise ValueError(f"{input_name} must not be complex.")
    if qid.dtype.kind == "O":
        try:
            np.unique(qid)
        except TypeError as exc:
            raise ValueError(
                f"{input_name} mixes query ids that cannot be compared: {exc}"
            ) from None
    return qid


def group_qid(qid):
    """Group rows by query id.

    Parameters
    ----------
    qid : ndarray of shape (n_samples,)
        Query ids (validated, see :func:`check_qid`), at least one row.

    Returns
    -------
    groups : QueryGroups
        Sorted unique ids, group index of every row, group sizes and starts,
        and the stable permutation that makes groups contiguous.

    Notes
    -----
    O(n) when ``qid`` is already non-decreasing (the usual LETOR layout),
    O(n log n) otherwise.

    Examples
    --------
    >>> from treerank.metrics._grouping import group_qid
    >>> groups = group_qid(np.array([7, 2, 7, 2, 2]))
    >>> groups.ids, groups.sizes, groups.starts
    (array([2, 7]), array([3, 2]), array([0, 3]))
    >>> groups.order
    array([1, 3, 4, 0, 2])
    """
    qid = np.asarray(qid)
    n = qid.shape[0]
    if n == 0:
        raise ValueError("qid is empty: at least one row is required.")
    if qid.dtype.kind in "biuf" and (n == 1 or bool(np.all(qid[1:] >= qid[:-1]))):
        change = np.empty(n, dtype=bool)
        change[0] = True
        np.not_equal(qid[1:], qid[:-1], out=change[1:])
        starts = np.flatnonzero(change)
        sizes = np.diff(np.append(starts, n))
        index = np.cumsum(change) - 1
        return QueryGroups(
            ids=qid[starts],
            index=index.astype(np.intp),
            sizes=sizes.astype(np.intp),
            starts=starts.astype(np.intp),
            order=np.arange(n, dtype=np.intp),
        )
    ids, index = np.unique(qid, return_inverse=True)
    index = index.ravel().astype(np.intp)
    sizes = np.bincount(index, minlength=ids.shape[0]).astype(np.intp)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])).astype(np.intp)
    key = index.astype(np.uint16) if ids.shape[0] <= 65536 else index
    order = np.argsort(key, kind="stable").astype(np.intp)  # radix sort if uint16
    return QueryGroups(ids=ids, index=index, sizes=sizes, starts=starts, order=order)


def sizes_to_qid(sizes, ids=None):
    """Query id of every row, from group sizes (rows of a group contiguous).

    This is the inverse of :func:`group_qid` on contiguous data, and converts
    the "group sizes" convention (LightGBM's ``group=``) to query ids.

    Parameters
    ----------
    sizes : array-like of shape (n_groups,)
        Number of rows of every group (non-negative integers).
    ids : array-like of shape (n_groups,), default=None
        Query id of every group; ``None`` means ``0, 1, ..., n_groups - 1``.

    Returns
    -------
    qid : ndarray of shape (sum(sizes),)

    Examples
    --------
    >>> from treerank.metrics._grouping import sizes_to_qid
    >>> sizes_to_qid([2, 1, 3])
    array([0, 0, 1, 2, 2, 2])
    >>> sizes_to_qid([1, 2], ids=["a", "b"])
    array(['a', 'b', 'b'], dtype='<U1')
    """
    sizes = np.asarray(sizes)
    if sizes.ndim != 1 or sizes.dtype.kind not in "iu":
        raise ValueError("sizes must be a one-dimensional array of integers.")
    if np.any(sizes < 0):
        raise ValueError("sizes must be non-negative.")
    if ids is None:
        ids = np.arange(sizes.shape[0])
    ids = np.asarray(ids)
    if ids.shape != sizes.shape:
        raise ValueError(
            f"ids has shape {ids.shape} but sizes has shape {sizes.shape}."
        )
    return np.repeat(ids, sizes)


def segment_index(sizes):
    """Segment of every element of a segmented array.

    Examples
    --------
    >>> from treerank.metrics._grouping import segment_index
    >>> segment_index(np.array([2, 1, 3]))
    array([0, 0, 1, 2, 2, 2])
    """
    return np.repeat(np.arange(sizes.shape[0], dtype=np.intp), sizes)


def segment_positions(starts, sizes):
    """0-based position of every element inside its segment.

    Examples
    --------
    >>> from treerank.metrics._grouping import segment_positions
    >>> segment_positions(np.array([0, 2, 3]), np.array([2, 1, 3]))
    array([0, 1, 0, 0, 1, 2])
    """
    n = int(np.sum(sizes))
    return np.arange(n, dtype=np.intp) - np.repeat(starts, sizes)


def segment_sum(values, starts):
    """Sum of every (non-empty, contiguous) segment.

    Examples
    --------
    >>> from treerank.metrics._grouping import segment_sum
    >>> segment_sum(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 1]))
    array([1., 9.])
    """
    if values.shape[0] == 0:
        return values[:0].copy()
    return np.add.reduceat(values, starts)


def segment_scan(values, positions, op):
    """Inclusive scan (running ``op``) restarting at every segment.

    Uses the doubling (Hillis-Steele) scheme: ``ceil(log2(max segment size))``
    vectorized passes, each combining every element with the one ``d`` places
    before it in the same segment. No division is involved, so products are
    exact for :class:`fractions.Fraction` inputs and accurate for floats (each
    result is a balanced product tree of its inputs).

    Parameters
    ----------
    values : ndarray of shape (n,)
        Values, segment by segment.
    positions : ndarray of shape (n,)
        0-based position of every element in its segment
        (see :func:`segment_positions`).
    op : {numpy.add, numpy.multiply}
        Associative operation.

    Returns
    -------
    scan : ndarray of shape (n,)

    Notes
    -----
    O(n log m) for segments of size at most m.

    Examples
    --------
    >>> from treerank.metrics._grouping import segment_scan
    >>> segment_scan(np.array([1, 2, 3, 4, 5]), np.array([0, 1, 2, 0, 1]), np.add)
    array([1, 3, 6, 4, 9])
    """
    out = values.copy()
    n = out.shape[0]
    if n == 0:
        return out
    longest = int(positions.max()) + 1
    shift = 1
    while shift < longest:
        has_pred = positions[shift:] >= shift
        combined = op(out[:-shift], out[shift:])
        out[shift:] = np.where(has_pred, combined, out[shift:])
        shift *= 2
    return out


def segment_exclusive_scan(values, positions, op, identity):
    """Exclusive scan restarting at every segment (``identity`` at a segment start).

    Examples
    --------
    >>> from treerank.metrics._grouping import segment_exclusive_scan
    >>> segment_exclusive_scan(
    ...     np.array([2, 3, 4, 5]), np.array([0, 1, 2, 0]), np.multiply, 1
    ... )
    array([1, 2, 6, 1])
    """
    inclusive = segment_scan(values, positions, op)
    out = np.empty_like(inclusive)
    if out.shape[0] == 0:
        return out
    out[1:] = inclusive[:-1]
    out[positions == 0] = identity
    return out


def segment_lexsort(keys, starts, sizes):
    """Permutation sorting every segment by ``keys`` (last key primary; stable).

    Parameters
    ----------
    keys : sequence of ndarray of shape (n,)
        Sort keys as for :func:`numpy.lexsort`: the last one is the primary
        key. Ties on all keys keep the original order.
    starts, sizes : ndarray of shape (n_segments,)
        Segment boundaries (segments contiguous and non-empty).

    Returns
    -------
    perm : ndarray of shape (n,), dtype=intp
        ``array[perm]`` has every segment sorted; segments stay in place.

    Notes
    -----
    Segments of equal size are sorted together as the rows of a 2-D array
    (many small sorts are much faster than one large sort). With more than a
    few dozen distinct sizes, one global sort keyed by segment is used.
    O(n log m) for segments of size at most m.

    Examples
    --------
    >>> from treerank.metrics._grouping import segment_lexsort
    >>> scores = np.array([0.1, 0.9, 0.5, 0.2, 0.8])
    >>> segment_lexsort((-scores,), np.array([0, 2]), np.array([2, 3]))
    array([1, 0, 4, 2, 3])
    """
    n = int(np.sum(sizes))
    distinct = np.unique(sizes)
    if distinct.shape[0] > _MAX_SIZE_BUCKETS:
        return np.lexsort((*keys, segment_index(sizes))).astype(np.intp)
    perm = np.empty(n, dtype=np.intp)
    for size in distinct:
        first = starts[sizes == size][:, None]
        rows = first + np.arange(size, dtype=np.intp)
        if size == 1:
            perm[rows] = rows
            continue
        if len(keys) == 1:
            within = np.argsort(keys[0][rows], axis=-1, kind="stable")
        else:
            within = np.lexsort(tuple(key[rows] for key in keys), axis=-1)
        perm[rows] = first + within
    return perm
