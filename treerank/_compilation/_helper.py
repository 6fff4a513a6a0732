"""The process that compiles kernels ahead of a fit: its lock, and waiting for it.

:func:`~treerank._compilation._background.start_background_compilation` starts
a second Python process that compiles kernels into numba's cache
(:mod:`treerank._compilation._warmup` run as a script). For its lifetime it
holds a lock file in the folder of its markers (:data:`LOCK_NAME`), which holds its
process id, so that concurrent fits start one process, not one each. A fit
that needs one of its kernels before it is stored waits for it
(:func:`wait_for_background_compilation`): compiling it again would take at
least as long, on a core that process uses. It waits at most a minute, and
otherwise compiles the kernel itself, as it would without the process: the
results never depend on it.

The process can die (killed, out of memory) or stop (suspended) at any time,
so the process is checked, not only its lock: a fit stops waiting as soon as
the process is gone, is a zombie, is stopped, or has used no processor time
for a few seconds (then it never waits again, and compiles what it needs
itself: never slower than without the process), and removes the lock such a
process leaves behind; a later first fit replaces a lock whose process is gone
instead of waiting for it to grow stale.

This module imports nothing of treerank but the markers
(:mod:`treerank._compilation._markers`, which import nothing of treerank): the
compiled kernels that wait for the process (the aggregation's, the forest's)
import it without a cycle.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import time
from pathlib import Path

from treerank._compilation._markers import marker_path

__all__ = ["LOCK_NAME", "wait_for_background_compilation"]

# the file the process holds in the markers' folder for its lifetime
LOCK_NAME = "treerank-warmup.lock"
# a lock older than this is left over by a process that did not finish
_STALE_LOCK_SECONDS = 600.0
# the marker directory where this process started the second process (set by
# start_background_compilation; None: nothing to wait for)
_directory = None
# the longest wait for it, in seconds (it compiles for about 10 s)
_MAX_WAIT = 60.0
# a process that used no processor time for this long is stuck (seconds)
_STALL_SECONDS = 3.0
# what the command line of the compiling process holds
_MODULE = "treerank._compilation._warmup"


def _lock_pid(lock):
    """The process id a lock holds (None: none yet, or not a lock of ours)."""
    try:
        text = lock.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return int(text) if text.isdigit() else None


def _process_state(pid):
    """``(alive, cpu_ticks)`` of a compiling process, as far as can be told.

    Dead: no such process, a zombie, or (Linux) a process that is not the
    warm-up (its id reused). Stopped (SIGSTOP): not alive either, as it does
    not progress. ``cpu_ticks`` is its processor time where ``/proc`` gives
    it, else None.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False, None
    except PermissionError:  # another user's process: it exists
        return True, None
    except OSError:
        return False, None
    proc = Path("/proc") / str(pid)
    try:
        stat = (proc / "stat").read_text()
        command = (proc / "cmdline").read_bytes()
    except OSError:  # no /proc: the signal said it exists
        return True, None
    fields = stat[stat.rfind(")") + 2 :].split()
    if fields[0] in ("Z", "X", "x", "T", "t") or _MODULE.encode() not in command:
        return False, None
    return True, int(fields[11]) + int(fields[12])  # utime + stime


def _lock_is_live(lock):
    """Whether a lock belongs to a compiling process that can still progress.

    A lock without a process id (being written, or from an older version)
    counts as live until it is stale (``_STALE_LOCK_SECONDS``).
    """
    try:
        age = time.time() - lock.stat().st_mtime
    except OSError:
        return False
    pid = _lock_pid(lock)
    if pid is None:
        return age <= _STALE_LOCK_SECONDS
    return _process_state(pid)[0]


def _remove_lock(lock, pid):
    """Remove the lock left by the process ``pid`` (not a newer process's)."""
    if _lock_pid(lock) == pid:
        lock.unlink(missing_ok=True)


def _take_lock(directory):
    """Create the lock file (False if a live process holds one)."""
    lock = directory / LOCK_NAME
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if lock.exists() and not _lock_is_live(lock):
            lock.unlink(missing_ok=True)  # stale, or its process is gone
        descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except OSError:
        return False
    os.close(descriptor)
    return True


def wait_for_background_compilation(kernel):
    """Wait while the second process compiles ``kernel``, if it does.

    When this process started it, it still runs (its lock exists, its
    process is alive and not stopped) and ``kernel`` is neither compiled here
    nor marked as compiled by it (:mod:`treerank._compilation._markers`),
    this waits until the process marks it or ends,
    at most a minute, and no longer than a few seconds
    (``_STALL_SECONDS``) without the process using processor time; after
    giving up it never waits again. A lock whose process is gone is removed.
    The call of the kernel then loads it from the cache (or compiles it, as
    without the process). Never raises.

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
        marker = marker_path(_directory, kernel)
        now = time.monotonic()
        deadline = now + _MAX_WAIT
        pid, ticks, progressed = _lock_pid(lock), None, now
        while lock.exists() and not marker.exists():
            now = time.monotonic()
            if pid is None:
                pid = _lock_pid(lock)
            if pid is not None:
                alive, used = _process_state(pid)
                if not alive:  # killed or stopped: its lock is left over
                    _remove_lock(lock, pid)
                    _directory = None
                    return
                if used is not None and used != ticks:
                    ticks, progressed = used, now
            stalled = ticks is not None and now - progressed > _STALL_SECONDS
            if now > deadline or stalled:
                _directory = None  # it does not progress: never wait again
                return
            time.sleep(0.02)
    except Exception:  # an optimization must never fail a fit
        return
