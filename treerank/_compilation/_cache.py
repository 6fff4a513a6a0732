"""numba's cache for treerank's kernels, and what happens when there is none.

Every kernel is compiled by numba on first use with ``cache=True``: the
machine code is stored next to the module (or in the user's cache folder, or
``NUMBA_CACHE_DIR``) and reused by later processes, so only the very first
call after installation pays the compilation. :func:`cached_njit` declares a
kernel so, or without the cache when numba finds no writable location (a
read-only install), with one :class:`~treerank.exceptions.KernelCacheWarning`
per process; :func:`caching_disabled` tells whether that happened (the
background compilation then starts nothing: it could store nothing). The
kernels' own options are the engine's (``treerank._engine._jit``).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
import threading
import warnings

import numba

from treerank.exceptions import KernelCacheWarning

__all__ = ["cached_njit", "caching_disabled", "declared_kernels"]

# the modules whose frames stand between a kernel's declaration and the
# warning: the warning points at the module that declares the kernel
_DECLARING_MODULES = (__name__, "treerank._engine._jit")

# the kernels declared without a cache (no writable cache location), by name
_uncached = []
_uncached_lock = threading.Lock()
# every kernel declared by cached_njit in this process, in order
_declared = []


def caching_disabled():
    """Whether some kernel of this process is compiled without numba's cache.

    True when numba found no writable location to cache a kernel in (see
    :func:`cached_njit`); such kernels are compiled in each process.
    """
    return bool(_uncached)


def declared_kernels():
    """The kernels declared by :func:`cached_njit` so far in this process.

    Those of the modules imported so far, in the order of their declaration:
    the compilation ahead of a fit records which of them it compiled.

    Returns
    -------
    kernels : tuple of numba dispatchers
    """
    return tuple(_declared)


def _warn_no_cache(function):
    with _uncached_lock:
        first = not _uncached
        _uncached.append(f"{function.__module__}.{function.__qualname__}")
    if not first:  # one notice per process
        return
    # the warning points at the module that declares the kernel
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__") in _DECLARING_MODULES:
        frame, level = frame.f_back, level + 1
    # the folder of the treerank package
    folder = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    warnings.warn(
        "numba cannot cache treerank's compiled kernels: neither the package's "
        f"folder ({folder}) nor the user's cache folder is writable. They are "
        "compiled in each process instead, which adds some seconds to the first "
        "fit or scoring of every process; set the environment variable "
        "NUMBA_CACHE_DIR to a writable folder to cache them.",
        KernelCacheWarning,
        stacklevel=level,
    )


def cached_njit(function, **options):
    """``numba.njit(cache=True, **options)(function)``, or uncached if it cannot be.

    Numba refuses ``cache=True`` (a ``RuntimeError`` at declaration, that is
    when the module is imported) when no cache location is writable; the
    kernel is then declared without caching, and the first such kernel of
    the process emits one :class:`~treerank.exceptions.KernelCacheWarning`.

    Parameters
    ----------
    function : callable
        The Python function to compile.
    **options
        numba's options (``nogil``, ``no_cfunc_wrapper``, ...).

    Returns
    -------
    kernel : numba dispatcher

    Examples
    --------
    The kernels of an installed package are declared through it, and cached
    when numba has a writable cache (a function typed at a prompt has no file
    to cache next to, and would give the warning):

    >>> from treerank._engine import _binning
    >>> from treerank._compilation._cache import caching_disabled, declared_kernels
    >>> _binning._bin_rows in declared_kernels()
    True
    >>> caching_disabled()
    False
    """
    try:
        kernel = numba.njit(cache=True, **options)(function)
    except RuntimeError as error:
        if "cannot cache" not in str(error):
            raise
        _warn_no_cache(function)
        kernel = numba.njit(cache=False, **options)(function)
    _declared.append(kernel)
    return kernel
