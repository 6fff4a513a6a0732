"""Waiting for the second process that compiles kernels ahead of a first fit.

:mod:`treerank.aggregation._warmup` starts a process that compiles the
routing's and the median's kernels into numba's cache while a first fit
compiles the growth's, and records here where. A fit that reaches one of
those kernels before the process has stored it waits for it
(:func:`wait_for_background_compilation`) instead of compiling it a second
time, which would take at least as long, on a core the process uses.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import time
from pathlib import Path

__all__ = ["LOCK_NAME", "started_in", "wait_for_background_compilation"]

# the file the process holds next to the cache for its lifetime
LOCK_NAME = "treerank-warmup.lock"
# the cache directory where this process started the second process
_directory = None
# the longest wait for it, in seconds (it compiles for about 10 s)
_MAX_WAIT = 60.0


def started_in(directory):
    """Record that this process started the second process, caching in ``directory``."""
    global _directory
    _directory = Path(directory)


def wait_for_background_compilation(kernel):
    """Wait while the second process compiles ``kernel``, if it does.

    When this process started it (:func:`started_in`), it still runs (its
    lock exists) and ``kernel`` is neither compiled here nor cached, this
    waits until the kernel is cached or the process ends, at most a minute
    (after which it never waits again); the call of the kernel then loads it
    from the cache (or compiles it, as without the process). Never raises.

    Parameters
    ----------
    kernel : numba dispatcher
        A kernel compiled with ``cache=True``.
    """
    global _directory
    if _directory is None or kernel.signatures:
        return
    try:
        lock = _directory / LOCK_NAME
        index = Path(kernel._cache._cache_file._index_path)
        deadline = time.monotonic() + _MAX_WAIT
        while lock.exists() and not index.exists():
            if time.monotonic() > deadline:
                _directory = None  # it does not progress: never wait again
                return
            time.sleep(0.02)
    except Exception:  # an optimization must never fail a fit
        return
