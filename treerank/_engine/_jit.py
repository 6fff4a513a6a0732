"""The compilation settings of the engine's kernels.

Every kernel is compiled by numba on first use with ``cache=True`` (the machine
code is stored next to the module and reused by later processes, so only the
very first call after installation pays the compilation; see
:mod:`treerank._compilation._cache`) and ``nogil=True``
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

from numba.extending import register_jitable

from treerank._compilation._cache import cached_njit

__all__ = ["aggregation_jit", "inner_jit", "jit"]

# the options of every kernel (see the module docstring)
KERNEL_OPTIONS = {"error_model": "numpy", "no_cfunc_wrapper": True}


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
