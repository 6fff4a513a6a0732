"""The compilation settings of the engine's kernels.

Every kernel is compiled by numba on first use with ``cache=True`` (the machine
code is stored next to the module and reused by later processes, so only the
very first call after installation pays the compilation) and ``nogil=True``
(a running kernel releases the GIL, so trees grow in threads) and
``error_model="numpy"``: a float division by zero gives inf or NaN as in numpy
instead of raising, so that no division carries a test and a branch (the
kernels guard their divisions themselves; the scoring of split candidates
then runs on several candidates at once).

Numba gives every compiled function two entry points besides its own code: a
wrapper that converts Python arguments (for calls from Python) and a C-callable
one (for passing the function as a value to other compiled code). No kernel
here is passed as a value, so the C-callable entry is never made
(``no_cfunc_wrapper``). A kernel that only other kernels call is declared with
:func:`inner_jit`: it has no Python entry either (for a helper of thirty array
arguments, unpacking them is more machine code than the helper itself), and is
compiled into the kernels that call it. Each entry is machine code that numba
optimizes again in every caller that links it: without them, the growth of a
first fit compiles in about 9.8 s instead of 10.5, and the median's and the
routing's kernels in 10.4 s instead of 11.1.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
import threading
import warnings

import numba
from numba.extending import register_jitable

from treerank.exceptions import KernelCacheWarning

__all__ = ["aggregation_jit", "cached_njit", "caching_disabled", "inner_jit", "jit"]

# the options of every kernel (see the module docstring)
KERNEL_OPTIONS = {"error_model": "numpy", "no_cfunc_wrapper": True}


# the kernels declared without a cache (no writable cache location), by name
_uncached = []
_uncached_lock = threading.Lock()


def caching_disabled():
    """Whether some kernel of this process is compiled without numba's cache.

    True when numba found no writable location to cache a kernel in (see
    :func:`cached_njit`); such kernels are compiled in each process.
    """
    return bool(_uncached)


def _warn_no_cache(function):
    with _uncached_lock:
        first = not _uncached
        _uncached.append(f"{function.__module__}.{function.__qualname__}")
    if not first:  # one notice per process
        return
    # the warning points at the module that declares the kernel
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename == __file__:
        frame, level = frame.f_back, level + 1
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
    The kernels of an installed package are cached (a function typed at a
    prompt has no file to cache next to, and would give the warning):

    >>> from treerank.engine import _binning
    >>> from treerank.engine._jit import caching_disabled
    >>> _binning._bin_rows._cache.__class__.__name__ != "NullCache"
    True
    >>> caching_disabled()
    False
    """
    try:
        return numba.njit(cache=True, **options)(function)
    except RuntimeError as error:
        if "cannot cache" not in str(error):
            raise
        _warn_no_cache(function)
        return numba.njit(cache=False, **options)(function)


def jit(function):
    """Compile ``function`` as an engine kernel (cached, releasing the GIL)."""
    return cached_njit(function, nogil=True, **KERNEL_OPTIONS)


def aggregation_jit(function):
    """Compile ``function`` as an aggregation kernel (cached, without the GIL).

    The aggregation's kernels keep numba's default ``error_model="python"``.
    """
    return cached_njit(function, nogil=True, no_cfunc_wrapper=True)


def inner_jit(function=None, *, error_model="numpy"):
    """Declare ``function`` as a kernel that only other kernels call.

    Compiled code that calls it compiles it with :data:`KERNEL_OPTIONS` (the
    kernels of the aggregation keep numba's default ``error_model="python"``)
    and no Python entry point; the calling :func:`jit` kernel is cached with
    it. Called from Python, it runs as the plain Python function it is.
    """
    options = dict(KERNEL_OPTIONS, error_model=error_model)
    if function is None:
        return register_jitable(**options)
    return register_jitable(**options)(function)
