"""A second process that compiles kernels ahead of a first fit, and waiting for it.

The first fit after installing compiles numba kernels one after the other:
the tree growth's, then the routing's (a tree's decision graph, the rows
outside its sample, new rows) and the leaf tables' (out-of-bag sums, means),
then, for a forest aggregated by its median, the median's (common
subpartition, Kemeny local search, cell index, insertion of unseen cells).
Only the growth's depend on the trees being grown, so while the fit compiles
them, a second Python process can compile the others on the other core and
store them in numba's cache, where the fit finds them when it gets there: on
the two-core machine of the benchmark, the first fit and scoring of a
default forest on 2,000 x 20 rows take about 10.5 s of compilation and
fitting instead of 18 s (measured by ``benchmarks/bench_engine.py``'s compile
part).

:func:`start_background_compilation` starts that process
(:mod:`treerank._compilation._warmup` run as a script, with this treerank first
on its path) for the parts a fit needs, each at most once per process, only
when their kernels are neither compiled here nor in the cache, and never when
``TREERANK_BACKGROUND_COMPILE=0`` is set. It writes nothing but numba's
cache, and a lock file next to it for its lifetime so that concurrent fits
start one process, not one each. A fit that needs one of its kernels before
it is stored waits for it
(:func:`~treerank._compilation._helper.wait_for_background_compilation`):
compiling it again would take at least as long, on a core that process uses.
It waits at most a minute, and otherwise compiles the kernel itself, as it
would without the process: the results never depend on it.

The process can die (killed, out of memory) or stop (suspended) at any time, so
the lock holds its process id, and the process is checked, not only its lock
(:mod:`treerank._compilation._helper`): a fit stops waiting as soon as the
process is gone, is a zombie, is stopped, or has used no processor time for a
few seconds (then it never waits again, and compiles what it needs itself:
never slower than without the process), and removes the lock such a process
leaves behind; a later first fit replaces a lock whose process is gone instead
of waiting for it to grow stale. Nothing is started when numba has no writable
cache to store the kernels in
(:func:`~treerank._compilation._cache.caching_disabled`).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import subprocess
import sys
from pathlib import Path

from treerank._compilation import _helper
from treerank._compilation._helper import (
    LOCK_NAME,
    _index_path,
    _take_lock,
    wait_for_background_compilation,
)

__all__ = [
    "ENVIRONMENT_SWITCH",
    "LOCK_NAME",
    "PARTS",
    "start_background_compilation",
    "wait_for_background_compilation",
]

# set to "0" to never start the process
ENVIRONMENT_SWITCH = "TREERANK_BACKGROUND_COMPILE"
# what it compiles: the routing's and the leaf tables' kernels (every forest
# and tree), then the median's (a forest aggregated by it): those of large
# problems, those of small exact ones (one kernel for the whole local search)
# and the sort of the cells of large forests; the median's of the fit's size
# first
PARTS = ("routing", "median", "small median", "cell sort")
# the parts this process asked for (started or found compiled)
_started = set()
# starts the command of its arguments in a new session, detached, writes its
# process id and exits
_LAUNCHER = (
    "import os, subprocess, sys; "
    "p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, "
    "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True, "
    "start_new_session=os.name == 'posix'); "
    "sys.stdout.write(str(p.pid)); sys.stdout.flush(); "
    "os._exit(0)"
)


def _part_kernels(part):
    """Two kernels of ``part`` that only its warm-up compiles early."""
    if part == "routing":
        from treerank.engine import _routing

        return (_routing.compile_graph, _routing.route_values)
    from treerank.aggregation import (
        _cell_index,
        _insertion_kernels,
        _local_search_kernels,
    )

    if part == "small median":
        return (_local_search_kernels._local_search_kernel,)
    if part == "cell sort":
        return (_cell_index._lexicographic_kernel,)
    return (
        _local_search_kernels._window_sums_kernel,
        _insertion_kernels._region_full_kernel,
    )


def _is_cold(part):
    """Whether no kernel of ``part`` is compiled here or stored in the cache."""
    for kernel in _part_kernels(part):
        index = _index_path(kernel)
        if kernel.signatures or index is None or index.exists():
            return False
    return True


def _cold_cache_directory(parts=PARTS):
    """The directory of the lock if some of ``parts`` is cold, else None.

    The lock lives next to the median's kernels in the cache, whatever the
    parts; None as well when numba does not cache (caching disabled, no
    writable location).
    """
    if not any(_is_cold(part) for part in parts):
        return None
    index = _index_path(_part_kernels("median")[0])
    return None if index is None else index.parent


def start_background_compilation(median=True, small=False):
    """Start compiling the kernels a first fit needs after the growth's.

    Parameters
    ----------
    median : bool, default=True
        Also the median's kernels (a forest aggregated by its median), after
        the routing's and the leaf tables' (every forest and tree).
    small : bool, default=False
        The fit's median is a small problem (fewer than 2^17 cells x trees):
        its kernels first, then those of large problems.

    Does nothing when ``TREERANK_BACKGROUND_COMPILE`` is ``"0"``, for a part
    this process already asked for, when the kernels are compiled or cached,
    when numba does not cache, when another process is compiling them, or
    when no Python interpreter can be started; never raises.

    Returns
    -------
    started : bool
        Whether a process was started.
    """
    if os.environ.get(ENVIRONMENT_SWITCH, "1") == "0":
        return False
    order = list(PARTS) if median else ["routing"]
    if median and small:  # the kernels of the fit's size first
        order[1], order[2] = order[2], order[1]
    wanted = [part for part in order if part not in _started]
    if not wanted:
        return False
    _started.update(wanted)
    if getattr(sys, "frozen", False) or not sys.executable:
        return False
    try:
        from numba.core import config

        from treerank._compilation._cache import caching_disabled

        if config.DISABLE_JIT or caching_disabled():
            return False
        parts = [part for part in wanted if _is_cold(part)]
        directory = _cold_cache_directory(parts)
        if directory is None or not _take_lock(directory):
            return False
        # the directory holding this treerank package
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env[ENVIRONMENT_SWITCH] = "0"
    except Exception:  # an optimization must never fail a fit
        return False
    # the compiling process runs the warm-up module with this package first
    # on its path (before the working directory, which ``python -m`` would
    # put first); a short-lived launcher starts it and exits at once, so that
    # this process waits for the launcher only and holds no handle on a
    # running child (whose collection would warn that it still runs)
    code = (
        "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); "
        "runpy.run_module('treerank._compilation._warmup', run_name='__main__')"
    )
    command = [sys.executable, "-c", code, package_root, str(directory), *parts]
    lock = directory / LOCK_NAME
    try:
        launched = subprocess.run(
            [sys.executable, "-S", "-c", _LAUNCHER, *command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            timeout=60,
            check=False,
        )
        if launched.returncode != 0:
            raise OSError("the launcher failed")
        pid = (launched.stdout or b"").strip()
        if pid.isdigit():  # the lock names the process that holds it
            lock.write_text(pid.decode() + "\n", encoding="ascii")
    except Exception:
        lock.unlink(missing_ok=True)
        return False
    _helper._directory = directory
    return True
