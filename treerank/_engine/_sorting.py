"""A small stable sort for the kernels.

The kernels sort short arrays (the leaves of one LeafRank rule, the categories
of one feature, the features drawn for one node). numpy's ``argsort`` in
compiled code brings its whole generic machinery into every kernel that calls
it, compiled anew for each key type; this hand-written merge sort on float64
keys is one small kernel, shared by all of them. Keys that are small whole
numbers (bucket indices, leaf ranks) are sorted by counting instead
(:func:`counting_argsort`), in linear time.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._jit import jit

__all__ = ["counting_argsort", "stable_argsort"]

_INSERTION = 16  # runs shorter than this are sorted by insertion


@jit
def stable_argsort(keys, n):
    """Indices that sort ``keys[:n]`` increasingly, equal keys in index order.

    Parameters
    ----------
    keys : ndarray of float64
    n : int

    Returns
    -------
    order : ndarray of int64 of shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> from treerank._engine._sorting import stable_argsort
    >>> stable_argsort(np.array([2.0, 1.0, 2.0, -np.inf, 1.0]), 5)
    array([3, 1, 4, 0, 2])
    """
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        order[i] = i
    # insertion sort of each run of _INSERTION entries
    for run in range(0, n, _INSERTION):
        stop = min(run + _INSERTION, n)
        for i in range(run + 1, stop):
            item = order[i]
            key = keys[item]
            j = i - 1
            while j >= run and keys[order[j]] > key:
                order[j + 1] = order[j]
                j -= 1
            order[j + 1] = item
    if n <= _INSERTION:
        return order
    # bottom-up merges of sorted runs, the left run winning ties
    buffer = np.empty(n, dtype=np.int64)
    width = _INSERTION
    while width < n:
        for left in range(0, n, 2 * width):
            middle = min(left + width, n)
            right = min(left + 2 * width, n)
            i = left
            j = middle
            k = left
            while i < middle and j < right:
                if keys[order[j]] < keys[order[i]]:
                    buffer[k] = order[j]
                    j += 1
                else:
                    buffer[k] = order[i]
                    i += 1
                k += 1
            while i < middle:
                buffer[k] = order[i]
                i += 1
                k += 1
            while j < right:
                buffer[k] = order[j]
                j += 1
                k += 1
        order, buffer = buffer, order
        width *= 2
    return order


@jit
def counting_argsort(keys, n_keys):
    """Indices that sort integer ``keys`` in ``0..n_keys-1``, equal keys in
    index order (a counting sort: O(len(keys) + n_keys)).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank._engine._sorting import counting_argsort
    >>> counting_argsort(np.array([2, 0, 1, 0]), 3)
    array([1, 3, 2, 0])
    """
    starts = np.zeros(n_keys + 1, dtype=np.int64)
    for i in range(keys.shape[0]):
        starts[keys[i] + 1] += 1
    for k in range(n_keys):
        starts[k + 1] += starts[k]
    order = np.empty(keys.shape[0], dtype=np.int64)
    for i in range(keys.shape[0]):
        k = keys[i]
        order[starts[k]] = i
        starts[k] += 1
    return order
