"""The arrays of a model file: written in lean exact dtypes, checked when read.

Writing, :func:`narrow` stores every array in the smallest dtype that holds
its values exactly, and :func:`offsets_from_lengths` cuts concatenated arrays
into pieces. Reading, every array a decoder uses is checked before it is
used: its declared dtype kind and shape first (:func:`check_declared`,
nothing is read from a lazy archive yet), then its values
(:func:`check_array`); every index array from both sides
(:func:`check_indices`) and every offsets array (:func:`check_offsets`), in
chunks (bounded temporaries). :class:`ArrayView` shows the arrays under a
prefix, or with some replaced or hidden, without reading them.

Every check raises ``ValueError`` naming the array and the problem
(``load_model`` reports it as a :class:`~treerank.exceptions.ModelFileError`).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from collections.abc import Mapping

import numpy as np

__all__ = [
    "ROUNDING",
    "ArrayView",
    "check_array",
    "check_declared",
    "check_declared_pair",
    "check_indices",
    "check_offsets",
    "declared_array",
    "narrow",
    "offsets_from_lengths",
]


# Entries an elementwise check looks at at once (bounded temporaries)
_CHECK_CHUNK = 2**18
_KIND_NAMES = {"b": "booleans", "i": "integers", "u": "integers", "f": "floats"}
#: Mid-ranks, mean scores and probabilities are in [0, 1] up to the rounding
#: of their sums.
ROUNDING = 1e-9


_INTEGER_DTYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32)


def narrow(array):
    """The array in the smallest dtype that holds all its values exactly.

    Integers take the smallest integer type holding their range; floats that
    are all whole numbers (no negative zero) an integer type, else float32
    when the conversion is exact. Reading the array back into its original
    dtype gives the same bits. Booleans and empty arrays are left as they are.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.model_io._arrays import narrow
    >>> narrow(np.array([0, 3, 200])).dtype, narrow(np.array([-1.0, 7.0])).dtype
    (dtype('uint8'), dtype('int8'))
    >>> narrow(np.array([0.5, 0.25])).dtype, narrow(np.array([0.1])).dtype
    (dtype('float32'), dtype('float64'))
    """
    array = np.asarray(array)
    if array.size == 0 or array.dtype.kind not in "iuf":
        return array
    if array.dtype.kind == "f":
        finite = np.isfinite(array)
        whole = (
            np.all(finite)
            and np.all(array == np.round(array))
            and not np.any((array == 0) & np.signbit(array))
            and np.abs(array).max() < 2**31
        )
        if not whole:
            if np.any(np.abs(array[finite]) > np.finfo(np.float32).max):
                return array
            single = array.astype(np.float32)
            same = np.array_equal(single.astype(array.dtype), array, equal_nan=True)
            return single if same else array
    low, high = array.min(), array.max()
    for dtype in _INTEGER_DTYPES:
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return array.astype(dtype)
    return array


def offsets_from_lengths(lengths):
    """Offsets cutting a concatenation of pieces of these lengths (int64).

    The pack side of :func:`check_offsets`: piece ``k`` is
    ``offsets[k]:offsets[k + 1]``.

    Examples
    --------
    >>> from treerank.model_io._arrays import offsets_from_lengths
    >>> offsets_from_lengths([2, 0, 3])
    array([0, 2, 2, 5])
    """
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)


def check_declared(arrays, name, *, kinds, ndim=1, shape=None):
    """Check an array's dtype kind and shape as the file declares them.

    The check :func:`check_array` starts with; on an archive opened by
    :func:`open_archive` nothing is read, so that related arrays can all be
    checked before any of them is allocated.

    Parameters
    ----------
    arrays : mapping of str to ndarray
    name : str
    kinds : str
    ndim : int, default=1
    shape : tuple of (int or None), default=None

    Returns
    -------
    shape : tuple of int
        The declared shape.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.model_io._arrays import check_declared
    >>> check_declared({"w": np.ones((2, 3))}, "w", kinds="f", ndim=2, shape=(2, None))
    (2, 3)
    """
    if name not in arrays:
        raise ValueError(f"the array {name} is missing")
    declared_dtype, declared_shape = declared_array(arrays, name)
    if declared_dtype.kind not in kinds:
        expected = " or ".join(dict.fromkeys(_KIND_NAMES[k] for k in kinds))
        raise ValueError(
            f"the array {name} holds "
            f"{_KIND_NAMES.get(declared_dtype.kind, 'values')} ({declared_dtype}); "
            f"expected {expected}."
        )
    if len(declared_shape) != ndim or (
        shape is not None
        and any(n is not None and n != m for n, m in zip(shape, declared_shape))
    ):
        raise ValueError(
            f"the array {name} has shape {declared_shape}; expected "
            f"{tuple(shape) if shape is not None else f'{ndim} dimensions'}."
        )
    return declared_shape


def check_array(
    arrays, name, *, kinds, ndim=1, shape=None, finite=False, bounds=None, dtype=None
):
    """Take one array read by :func:`read_archive` and check what a decoder expects.

    The archive layer guarantees plain dtypes and the declared shapes; what a
    model needs of an array (its kind, its dimensions, finite values, index
    bounds) is checked here, before the decoder uses it.

    Parameters
    ----------
    arrays : dict of str to ndarray
        The arrays returned by :func:`read_archive`.
    name : str
        The array to take.
    kinds : str
        Accepted dtype kinds among ``"b"`` (bool), ``"i"``, ``"u"`` (integers)
        and ``"f"`` (floats).
    ndim : int, default=1
        Number of dimensions.
    shape : tuple of (int or None), default=None
        Expected length along each dimension (None: any).
    finite : bool, default=False
        Refuse NaN and infinity.
    bounds : tuple of (number or None, number or None), default=None
        Inclusive lower and upper bounds of the values.
    dtype : dtype, default=None
        Convert the array to this dtype (after the bounds are checked, so
        that the conversion is exact for integers within them).

    Returns
    -------
    array : ndarray

    Raises
    ------
    ValueError
        Naming the array and what is wrong (``load_model`` reports it as a
        :class:`~treerank.exceptions.ModelFileError`).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.model_io._arrays import check_array
    >>> arrays = {"left": np.array([1, -1, -1])}
    >>> check_array(arrays, "left", kinds="i", shape=(3,), bounds=(-1, 2))
    array([ 1, -1, -1])
    >>> check_array(arrays, "left", kinds="f")
    Traceback (most recent call last):
    ...
    ValueError: the array left holds integers (int64); expected floats.
    """
    # the declared dtype and shape first: a lazy archive reads nothing yet
    check_declared(arrays, name, kinds=kinds, ndim=ndim, shape=shape)
    array = arrays[name]
    if finite and array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        raise ValueError(f"the array {name} holds NaN or infinity.")
    if bounds is not None and array.size:
        low, high = bounds
        if array.dtype.kind == "f" and np.any(np.isnan(array)):
            raise ValueError(f"the array {name} holds NaN.")
        if (low is not None and array.min() < low) or (
            high is not None and array.max() > high
        ):
            raise ValueError(
                f"the array {name} holds values outside [{low}, {high}]: "
                f"{array.min()} to {array.max()}."
            )
    if dtype is not None:
        dtype = np.dtype(dtype)
        if dtype.kind in "iu" and array.dtype.kind in "iu" and array.size:
            info = np.iinfo(dtype)
            if array.min() < info.min or array.max() > info.max:
                raise ValueError(f"the array {name} does not fit {dtype}.")
        array = array.astype(dtype, copy=False)
    return array


def check_indices(indices, size, name, *, sentinel=None, size_name=None):
    """Check an array of indices from both sides: every entry in ``[0, size)``.

    The one check of every index a model file holds (children of tree nodes,
    features, thresholds of a feature, category sets, leaves of a cell,
    positions of a consensus, columns of a transformer...), so that no index
    can wrap around (a negative index reads from the end of numpy arrays) or
    run past its target.

    Parameters
    ----------
    indices : ndarray of int
        The indices (any shape).
    size : int or ndarray of int
        Length of the indexed sequence, or one length per entry (broadcast
        against ``indices``).
    name : str
        The array, for the message.
    sentinel : int or None, default=None
        A value allowed besides the indices (``-1``: "none", e.g. the children
        of a leaf).
    size_name : str or None, default=None
        What ``size`` is, for the message (e.g. "its node's number of
        features": "... outside [0, 3) (3 is its node's number of features)").

    Returns
    -------
    indices : ndarray
        ``indices`` itself (checked in chunks, without a converted copy).

    Raises
    ------
    ValueError
        Naming the array and the first index out of range.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.model_io._arrays import check_indices
    >>> check_indices(np.array([2, -1, 0]), 3, "children", sentinel=-1)
    array([ 2, -1,  0])
    >>> check_indices(np.array([[0, 4], [1, 1]]), np.array([2, 5]), "cells")
    array([[0, 4],
           [1, 1]])
    >>> check_indices(np.array([1, -1]), 3, "rule_threshold_index")
    Traceback (most recent call last):
    ...
    ValueError: the array rule_threshold_index holds the index -1, outside [0, 3).
    """
    indices = np.asarray(indices)
    if indices.dtype.kind not in "iu":
        raise ValueError(
            f"the array {name} holds {_KIND_NAMES.get(indices.dtype.kind, 'values')} "
            f"({indices.dtype}); expected integer indices."
        )
    size = np.asarray(size)
    if not indices.size:
        return indices
    # in chunks of rows, so that a huge array costs no huge temporaries
    rows = indices.reshape(indices.shape[0], -1) if indices.ndim else indices[None]
    bounds = np.broadcast_to(size, indices.shape) if size.ndim else size
    bounds = bounds.reshape(rows.shape[0], -1) if bounds.ndim else bounds
    step = max(1, _CHECK_CHUNK // max(rows.shape[1], 1))
    for start in range(0, rows.shape[0], step):
        part = rows[start : start + step]
        bound = bounds[start : start + step] if bounds.ndim else bounds
        valid = (part >= 0) & (part < bound)
        if sentinel is not None:
            valid |= part == sentinel
        if np.all(valid):
            continue
        row, column = np.unravel_index(np.argmin(valid), valid.shape)
        value = int(part[row, column])
        limit = int(bound[row, column]) if bounds.ndim else int(bound)
        notes = [
            f"{limit} is {size_name}" if size_name is not None else None,
            f"{sentinel} allowed" if sentinel is not None else None,
        ]
        notes = "; ".join(note for note in notes if note)
        raise ValueError(
            f"the array {name} holds the index {value}, outside "
            f"[0, {limit})" + (f" ({notes})." if notes else ".")
        )
    return indices


def check_offsets(offsets, total, name, *, strict=False):
    """Check an array of offsets: from 0 to ``total``, never decreasing.

    Offsets cut concatenated arrays into pieces (the nodes of each tree, the
    coefficients of each rule...): piece ``k`` is ``offsets[k]:offsets[k + 1]``.

    Parameters
    ----------
    offsets : ndarray of int of shape (n_pieces + 1,)
    total : int or None
        Length of the concatenated array (None: any, the last offset).
    name : str
        The array, for the message.
    strict : bool, default=False
        Refuse empty pieces (increasing offsets).

    Returns
    -------
    offsets : ndarray of int64

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.model_io._arrays import check_offsets
    >>> check_offsets(np.array([0, 2, 2, 5]), 5, "rule_coef_offsets")
    array([0, 2, 2, 5])
    >>> check_offsets(np.array([0, 3, 2]), 2, "node_offsets")
    Traceback (most recent call last):
    ...
    ValueError: the array node_offsets must start at 0, never decrease and end at 2.
    """
    offsets = np.asarray(offsets)
    end = "" if total is None else f" and end at {total}"
    order = "increase" if strict else "never decrease"
    if (
        offsets.dtype.kind not in "iu"
        or offsets.ndim != 1
        or offsets.shape[0] == 0
        or offsets[0] != 0
        or (total is not None and offsets[-1] != total)
    ):
        raise ValueError(f"the array {name} must start at 0, {order}{end}.")
    for start in range(0, offsets.shape[0] - 1, _CHECK_CHUNK):  # in chunks
        steps = np.diff(offsets[start : start + _CHECK_CHUNK + 1].astype(np.int64))
        if np.any(steps <= 0 if strict else steps < 0):
            raise ValueError(f"the array {name} must start at 0, {order}{end}.")
    return offsets.astype(np.int64, copy=False)


def check_declared_pair(arrays, first, second, leading=()):
    """Two arrays of one length (``second`` with ``leading`` dimensions before
    it), both checked as declared before either is read."""
    (length,) = check_declared(arrays, first, kinds="iuf")
    check_declared(
        arrays,
        second,
        kinds="iuf",
        ndim=len(leading) + 1,
        shape=(*leading, length),
    )


def declared_array(arrays, name):
    """``(dtype, shape)`` of an array, without reading it from a lazy archive."""
    declared = getattr(arrays, "declared", None)
    if declared is not None:
        return declared(name)
    array = arrays[name]
    return array.dtype, tuple(array.shape)


class ArrayView(Mapping):
    """Arrays by name over another mapping: some replaced or added, some hidden,
    or only those under a prefix (without it). Nothing is read until asked.

    Parameters
    ----------
    base : mapping of str to ndarray
    replace : dict of str to ndarray, default=None
    hide : iterable of str, default=()
    prefix : str, default=""
        Keep only the names of ``base`` starting with it, which is removed.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.model_io._arrays import ArrayView
    >>> base = {"t.a": np.zeros(2), "t.b": np.ones(3), "c": np.ones(1)}
    >>> view = ArrayView(base, prefix="t.")
    >>> sorted(view), view["b"].shape
    (['a', 'b'], (3,))
    >>> sorted(ArrayView(view, replace={"z": np.zeros(1)}, hide=["a"]))
    ['b', 'z']
    """

    def __init__(self, base, replace=None, hide=(), prefix=""):
        self._base = base
        self._replace = dict(replace or {})
        self._hide = set(hide)
        self._prefix = prefix

    def _inner(self, name):
        if name in self._replace or name in self._hide:
            raise KeyError(name)
        inner = self._prefix + name
        if inner not in self._base:
            raise KeyError(name)
        return inner

    def __getitem__(self, name):
        if name in self._replace:
            return self._replace[name]
        return self._base[self._inner(name)]

    def __contains__(self, name):
        if name in self._replace:
            return True
        try:
            self._inner(name)
        except KeyError:
            return False
        return True

    def __iter__(self):
        yield from self._replace
        for inner in self._base:
            if inner.startswith(self._prefix):
                name = inner[len(self._prefix) :]
                if name not in self._replace and name not in self._hide:
                    yield name

    def __len__(self):
        return sum(1 for _ in self)

    def declared(self, name):
        if name in self._replace:
            array = self._replace[name]
            return array.dtype, tuple(array.shape)
        return declared_array(self._base, self._inner(name))

    @property
    def budget(self):
        return getattr(self._base, "budget", None)
