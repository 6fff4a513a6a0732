"""A small deterministic random generator for the compiled kernels.

The kernels draw feature subsets from their own generator (SplitMix64), seeded
by the caller: a tree's draws depend on its seed only, not on the thread or
process that grows it, nor on numba's global random state.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._jit import inner_jit

__all__ = ["new_state", "next_below", "shuffle_prefix"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def new_state(seed):
    """Generator state (a one-element uint64 array) from an integer seed."""
    return np.array([int(seed) % (1 << 64)], dtype=np.uint64)


@inner_jit
def _next_u64(state):
    state[0] += _GOLDEN
    z = state[0]
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@inner_jit
def next_below(state, n):
    """A uniform integer in [0, n) (n >= 1)."""
    return np.int64(_next_u64(state) % np.uint64(n))


@inner_jit
def shuffle_prefix(values, k, state):
    """Put a uniform random draw of k entries of ``values`` in front, in place.

    Partial Fisher-Yates: ``values[:k]`` is a uniform sample without
    replacement, in random order.
    """
    n = values.shape[0]
    for i in range(min(k, n)):
        j = i + next_below(state, n - i)
        tmp = values[i]
        values[i] = values[j]
        values[j] = tmp
