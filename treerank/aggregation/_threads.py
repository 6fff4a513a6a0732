"""Threads for the Kemeny median's compiled kernels on large problems.

The kernels of the objective (one sum per ranking) and of a local-search pass
(the window sums of each item) compute independent results for disjoint
parts of their input: the rankings, or the items. Run on parts in threads
(the kernels release the GIL) and put back together, they give the same
numbers as one call, to the last bit, whatever the number of threads; only
problems of at least ``MIN_THREADED_SIZE`` item x ranking entries use them,
so that small ones do not pay for starting threads.

The parts run in a plain thread pool, not through joblib: they share this
process's arrays, and a joblib backend chosen by the user (Dask, Ray) would
send them elsewhere.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
from concurrent.futures import ThreadPoolExecutor

from joblib import cpu_count, effective_n_jobs

__all__ = ["MIN_THREADED_SIZE", "kernel_threads", "run_on_parts", "split_range"]

# item x ranking entries from which the kernels run in threads (a forest of
# 100 trees on about 2,600 rows; measured with 2 threads: the aggregation of
# 100 trees on 10,000 rows takes 0.053 s instead of 0.072 s)
MIN_THREADED_SIZE = 1 << 18


def kernel_threads(n_items, n_rankings, n_jobs):
    """Threads for the kernels of a problem of this size.

    Parameters
    ----------
    n_items, n_rankings : int
        Size of the problem.
    n_jobs : int or None
        As in joblib: None means 1 (unless in a ``parallel_config`` context),
        -1 all processors.

    Returns
    -------
    n_threads : int
        1 below ``MIN_THREADED_SIZE`` entries, else ``effective_n_jobs(n_jobs)``
        up to the processors of this machine (a Dask or Ray backend may count
        the workers of a whole cluster: the kernels run here).

    Examples
    --------
    >>> from joblib import cpu_count
    >>> from treerank.aggregation._threads import kernel_threads
    >>> kernel_threads(1000, 10, 2)  # small: one thread
    1
    >>> kernel_threads(200_000, 100, 2) == min(2, cpu_count())
    True
    """
    if n_items * n_rankings < MIN_THREADED_SIZE:
        return 1
    return max(1, min(int(effective_n_jobs(n_jobs)), cpu_count()))


def split_range(n, n_parts):
    """``n_parts`` contiguous (start, stop) ranges of about equal length
    covering ``0 .. n``: fewer if n is smaller, and one empty range if n is 0
    (so that a kernel still runs once).

    Examples
    --------
    >>> from treerank.aggregation._threads import split_range
    >>> split_range(10, 3)
    [(0, 3), (3, 6), (6, 10)]
    >>> split_range(2, 4)
    [(0, 1), (1, 2)]
    >>> split_range(0, 2)
    [(0, 0)]
    """
    n = int(n)
    n_parts = max(1, min(int(n_parts), n))
    cuts = [(n * k) // n_parts for k in range(n_parts + 1)]
    return list(itertools.pairwise(cuts))


def run_on_parts(function, arguments):
    """``[function(*args) for args in arguments]``, one thread per item.

    The first call runs in this thread; the results are in the order of
    ``arguments``.

    Examples
    --------
    >>> from treerank.aggregation._threads import run_on_parts
    >>> run_on_parts(pow, [(2, 3), (3, 2)])
    [8, 9]
    """
    arguments = list(arguments)
    if len(arguments) <= 1:
        return [function(*args) for args in arguments]
    with ThreadPoolExecutor(max_workers=len(arguments) - 1) as pool:
        futures = [pool.submit(function, *args) for args in arguments[1:]]
        first = function(*arguments[0])
        return [first] + [future.result() for future in futures]
