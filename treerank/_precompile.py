"""Compile treerank's numba kernels ahead of a first fit: :func:`precompile`.

treerank's kernels are compiled by numba on their first use and stored in
numba's cache, so that only the first fit after installing pays the
compilation (tens of seconds). :func:`precompile` (the command
``treerank precompile``) pays it at a chosen time instead -- when building a
container image, or in a CI step before the tests -- by running, in this
process, the same steps as the process that compiles kernels ahead of a first
fit (:mod:`treerank._compilation._warmup`), after a small fit of a tree and a
forest for the growth's kernels. It is idempotent: a second run loads every
kernel from the cache in seconds and says so.

It writes the markers of the kernels it compiled
(:mod:`treerank._compilation._markers`), so that a later fit starts no second
process for them.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import time

__all__ = ["PRECOMPILE_PARTS", "check_can_precompile", "precompile"]

# the parts, in the order they are compiled: the growth's (a small tree and
# forest), then those of the background compilation
# (treerank._compilation._background.PARTS)
PRECOMPILE_PARTS = ("growth", "routing", "median", "small-median", "cell-sort")


def _check_parts(parts):
    if parts is None:
        return list(PRECOMPILE_PARTS)
    if isinstance(parts, str):
        parts = [parts]
    try:
        parts = list(parts)
    except TypeError:
        raise TypeError(
            f"parts must be None or a list of part names among {PRECOMPILE_PARTS}; "
            f"got {parts!r}."
        ) from None
    unknown = [part for part in parts if part not in PRECOMPILE_PARTS]
    if unknown or not parts:
        raise ValueError(
            f"parts must be None or a non-empty list of part names among "
            f"{PRECOMPILE_PARTS}; got {parts!r}."
        )
    # each once, in the order of PRECOMPILE_PARTS
    return [part for part in PRECOMPILE_PARTS if part in parts]


def _kernel_name(kernel):
    function = kernel.py_func
    return f"{function.__module__}.{function.__qualname__}"


def check_can_precompile():
    """Raise a RuntimeError saying why kernels compiled here would not be reused.

    When numba's JIT is disabled (``NUMBA_DISABLE_JIT``), or numba has no
    writable cache folder (once the kernels' modules are imported).
    """
    from numba.core import config

    from treerank._compilation._background import _part_kernels
    from treerank._compilation._cache import caching_disabled
    from treerank._engine import _binning  # noqa: F401 (declares the growth's)

    if config.DISABLE_JIT:
        raise RuntimeError(
            "numba's JIT is disabled (NUMBA_DISABLE_JIT): there is nothing to compile."
        )
    for part in PRECOMPILE_PARTS[1:]:  # import (declare) every part's kernels
        _part_kernels(part)
    if caching_disabled():
        raise RuntimeError(
            "numba cannot cache treerank's kernels (no writable cache folder): "
            "kernels compiled now would be compiled again by every process. Set "
            "the environment variable NUMBA_CACHE_DIR to a writable folder."
        )


def precompile(parts=None):
    """Compile treerank's numba kernels into numba's cache, in this process.

    Runs a small fit and scoring of a tree and a forest (the ``"growth"``
    part: binning, split search, growth) and the steps of the background
    compilation (``"routing"``: routing and leaf tables; ``"median"`` and
    ``"small-median"``: a forest aggregated by its median, large and small
    problems; ``"cell-sort"``: the cells of large forests), so that the first
    fit of a later process loads its kernels from the cache instead of
    compiling them. A kernel already in the cache is loaded, not compiled
    again: a second call is fast. The kernels are compiled for the argument
    types a default fit uses; an unusual fit (other options, other data
    types) may still compile a few.

    Background compilation is off while it runs. The cache is numba's (the
    environment variable ``NUMBA_CACHE_DIR``, or next to the package, or the
    user's cache folder); see the engine guide.

    Parameters
    ----------
    parts : list of str or None, default=None
        The parts to compile, among ``"growth"``, ``"routing"``,
        ``"median"``, ``"small-median"`` and ``"cell-sort"``; all if None.
        They are compiled in that order.

    Returns
    -------
    report : dict
        For each part compiled, in order, a dict: ``"compiled"``, the names
        (``module.function``) of the kernels compiled now; ``"cached"``, those
        loaded from numba's cache; ``"seconds"``, the wall time of the part.

    Raises
    ------
    RuntimeError
        When numba's JIT is disabled (``NUMBA_DISABLE_JIT``) or numba has no
        writable cache (set ``NUMBA_CACHE_DIR``): a kernel compiled here would
        not be reused by any other process.

    See Also
    --------
    treerank.set_config : Whether a first fit compiles kernels in a second
        process.

    Examples
    --------
    >>> import treerank
    >>> report = treerank.precompile(parts=["routing"])
    >>> list(report), sorted(report["routing"])
    (['routing'], ['cached', 'compiled', 'seconds'])

    The same from the command line (for instance ``RUN treerank precompile``
    in a Dockerfile)::

        $ treerank precompile
    """
    parts = _check_parts(parts)
    check_can_precompile()
    from numba.core import event

    from treerank._compilation._cache import declared_kernels
    from treerank._compilation._markers import marker_directory, record_compiled
    from treerank._compilation._warmup import STEPS, warm_growth_kernels
    from treerank._config import config_context

    steps = dict(STEPS, growth=(lambda checkpoint=None: warm_growth_kernels(),))
    report = {}
    for part in parts:
        ready = {_kernel_name(k) for k in declared_kernels() if k.signatures}
        started = time.perf_counter()
        with config_context(background_compilation=False):
            with event.install_recorder("numba:compile") as recorder:
                for step in steps[part]:
                    step()
        seconds = time.perf_counter() - started
        # treerank's kernels (not numba's own functions compiled with them)
        now = [_kernel_name(k) for k in declared_kernels() if k.signatures]
        compiled = []
        for _, record in recorder.buffer:
            name = _kernel_name(record.data["dispatcher"])
            if record.is_start and name in now and name not in compiled:
                compiled.append(name)
        cached = [name for name in now if name not in ready and name not in compiled]
        report[part] = {"compiled": compiled, "cached": cached, "seconds": seconds}
    directory = marker_directory()
    if directory is not None:
        try:
            record_compiled(directory, declared_kernels())
        except OSError:  # the markers only save a later fit a second process
            pass
    return report
