"""The compilation settings of the engine's kernels.

Every kernel is compiled by numba on first use with ``cache=True`` (the machine
code is stored next to the module and reused by later processes, so only the
very first call after installation pays the compilation) and ``nogil=True``
(a running kernel releases the GIL, so trees grow in threads) and
``error_model="numpy"``: a float division by zero gives inf or NaN as in numpy
instead of raising, so that no division carries a test and a branch (the
kernels guard their divisions themselves; the scoring of split candidates
then runs on several candidates at once).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numba

__all__ = ["jit"]


def jit(function):
    """Compile ``function`` as an engine kernel (cached, releasing the GIL)."""
    return numba.njit(cache=True, nogil=True, error_model="numpy")(function)
