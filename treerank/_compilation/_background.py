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
when their kernels are neither compiled here nor marked as compiled
(:mod:`treerank._compilation._markers`), never when
``treerank.set_config(background_compilation=False)`` (or
``TREERANK_BACKGROUND_COMPILE=0`` at start-up) is set, and never where it
cannot work (:func:`unavailable_reason`: Windows, an interpreter that is not
Python, a frozen application, a worker of ``joblib`` or ``multiprocessing``).
It writes nothing but numba's cache, its markers, and a lock file next to them
for its lifetime so that concurrent fits start one process, not one each. A
fit that needs one of its kernels before it is marked waits for it
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
(:func:`~treerank._compilation._cache.caching_disabled`), or no writable
folder for its markers.
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
    _take_lock,
    wait_for_background_compilation,
)
from treerank._compilation._markers import marker_directory, marker_path
from treerank._config import ENVIRONMENT_SWITCH, get_config

__all__ = [
    "ENVIRONMENT_SWITCH",
    "LOCK_NAME",
    "PARTS",
    "start_background_compilation",
    "unavailable_reason",
    "wait_for_background_compilation",
]

# names of the Python interpreters (the file of sys.executable, or the file it
# links to): a program named otherwise (uwsgi, httpd with mod_wsgi, a host
# application embedding Python) cannot be given Python's command line
_INTERPRETERS = ("python", "pypy", "graalpy")
# what it compiles: the routing's and the leaf tables' kernels (every forest
# and tree), then the median's (a forest aggregated by it): those of large
# problems, those of small exact ones (one kernel for the whole local search)
# and the sort of the cells of large forests; the median's of the fit's size
# first
PARTS = ("routing", "median", "small-median", "cell-sort")
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
        from treerank._engine import _routing

        return (_routing.compile_graph, _routing.route_values)
    from treerank.aggregation import (
        _cell_index,
        _insertion_kernels,
        _local_search_kernels,
    )

    if part == "small-median":
        # the search's batch kernel, compiled early by both median parts; the
        # objective and starts of small problems are this part's own
        return (_local_search_kernels._batch_kernel,)
    if part == "cell-sort":
        return (_cell_index._lexicographic_kernel,)
    return (
        _local_search_kernels._window_sums_kernel,
        _insertion_kernels._region_full_kernel,
    )


def _is_python(executable):
    """Whether the file ``executable`` is a Python interpreter, by its name.

    Its name, or that of the file it links to, without ``.exe``, starts with
    ``python``, ``pypy`` or ``graalpy`` (``python3.12``, ``pypy3``, ...).
    """
    if not executable:
        return False
    path = Path(executable)
    names = [path.name]
    try:
        if not path.is_file() or not os.access(path, os.X_OK):
            return False
        names.append(path.resolve().name)
    except OSError:
        return False
    return any(
        name.lower().removesuffix(".exe").startswith(_INTERPRETERS) for name in names
    )


def _parent_process():
    """The process that started this one through ``multiprocessing`` (or None).

    Set in every child of ``multiprocessing`` (any start method), of
    ``concurrent.futures.ProcessPoolExecutor`` and of joblib's loky workers.
    """
    import multiprocessing

    return multiprocessing.parent_process()


def unavailable_reason(
    *, os_name=None, executable=None, frozen=None, parent_process=None
):
    """Why a second compiling process cannot be started here (None: it can).

    Each argument defaults to this process's own value, so that every case can
    be checked without faking it.

    - Windows (``os.name == "nt"``): the checks of the process are those of
      POSIX (``/proc``, ``os.kill(pid, 0)``, which on Windows would terminate
      it) and its detached start a POSIX session;
    - ``sys.executable`` is empty, missing, or not a Python interpreter by its
      name (``uwsgi``, ``httpd`` with mod_wsgi, an application that embeds
      Python): it would not run a Python command line;
    - a frozen application (``sys.frozen``, PyInstaller and the like):
      ``sys.executable`` is the application;
    - a child of ``multiprocessing`` (a worker of joblib's loky or
      multiprocessing backends, of ``concurrent.futures``): a pool of workers
      already uses the cores, and each would start its own.

    Parameters
    ----------
    os_name : str, default=None
        ``os.name`` if None.
    executable : str, default=None
        ``sys.executable`` if None.
    frozen : bool, default=None
        ``getattr(sys, "frozen", False)`` if None.
    parent_process : object, default=None
        ``multiprocessing.parent_process()`` if None; ``False`` for none.

    Returns
    -------
    reason : str or None

    Examples
    --------
    >>> from treerank._compilation._background import unavailable_reason
    >>> unavailable_reason(os_name="nt")
    'Windows is not supported'
    >>> unavailable_reason(os_name="posix", executable="/usr/bin/uwsgi")
    "sys.executable ('/usr/bin/uwsgi') is not a Python interpreter"
    """
    os_name = os.name if os_name is None else os_name
    if os_name == "nt":
        return "Windows is not supported"
    frozen = getattr(sys, "frozen", False) if frozen is None else frozen
    if frozen:
        return "a frozen application"
    executable = sys.executable if executable is None else executable
    if not _is_python(executable):
        return f"sys.executable ({executable!r}) is not a Python interpreter"
    parent = _parent_process() if parent_process is None else parent_process
    if parent:
        return "a child process of multiprocessing (a worker of joblib or a pool)"
    return None


def _is_cold(part, directory):
    """Whether no kernel of ``part`` is compiled here or marked in ``directory``."""
    for kernel in _part_kernels(part):
        if kernel.signatures or marker_path(directory, kernel).exists():
            return False
    return True


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

    Does nothing when ``background_compilation`` is off
    (:func:`treerank.set_config`, :func:`treerank.config_context`, or
    ``TREERANK_BACKGROUND_COMPILE=0`` at start-up), where it cannot work
    (:func:`unavailable_reason`), for a part this process already asked for,
    when the kernels are compiled or marked as compiled, when numba does not
    cache, when another process is compiling them, or when no Python
    interpreter can be started; never raises.

    Returns
    -------
    started : bool
        Whether a process was started.
    """
    if not get_config()["background_compilation"]:
        return False
    order = list(PARTS) if median else ["routing"]
    if median and small:  # the kernels of the fit's size first
        order[1], order[2] = order[2], order[1]
    wanted = [part for part in order if part not in _started]
    if not wanted:
        return False
    _started.update(wanted)
    try:
        if unavailable_reason() is not None:
            return False
        from numba.core import config

        from treerank._compilation._cache import caching_disabled

        if config.DISABLE_JIT or caching_disabled():
            return False
        directory = marker_directory()
        if directory is None:
            return False
        parts = [part for part in wanted if _is_cold(part, directory)]
        if not parts or not _take_lock(directory):
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
