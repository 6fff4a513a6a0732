"""Compilation management: numba's cache, and kernels compiled ahead of a fit.

The compiled kernels of :mod:`treerank._engine` and :mod:`treerank.aggregation`
are declared with the decorators of ``treerank._engine._jit``, which cache them
through :mod:`treerank._compilation._cache` (and warn once when numba has no
writable cache). On a first fit, :mod:`treerank._compilation._background`
starts a second process (:mod:`treerank._compilation._warmup`) that compiles
the kernels the fit needs after its growth's (unless
``treerank.set_config(background_compilation=False)``, or where it cannot work),
:mod:`treerank._compilation._markers` records which kernels it compiled, and
:mod:`treerank._compilation._helper` holds that process's lock and the wait
for it. ``treerank.precompile`` (:mod:`treerank._precompile`) runs the same
steps in its own process.

This package sits below the estimators: the estimators and the kernels import
it, it imports no estimator (the warm-up script, run in its own process and
imported by no module of the package, drives the same code as a fit). Its
``__init__`` imports nothing, so that a kernel module can import
:mod:`treerank._compilation._cache` without running anything else.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause
