"""Where treerank records the kernels compiled ahead, and under which key.

numba caches every kernel (``cache=True``) but says, in its public interface,
neither whether a kernel is in its cache nor where the cache is. The process
that compiles kernels ahead of a first fit
(:mod:`treerank._compilation._warmup`) and ``treerank precompile`` therefore
record what they compiled themselves: after each step (and, in the process,
before each compilation), one empty *marker* file
per kernel compiled (or loaded from the cache), named by the kernel's module
and name, in a folder named by a key of

- treerank's version, numba's version, Python's version and the machine;
- a hash of the source of every module of the subpackages that declare
  kernels (:data:`KERNEL_PACKAGES`), so that any change to a kernel (or to a
  kernel it calls) invalidates every marker.

A fit starts the second process only for kernels without a marker, and waits
for a kernel until its marker appears (:mod:`treerank._compilation._helper`);
the lock of that process lives in the same folder. A marker that lies (numba's
cache removed by hand, or invalidated by a source file's new time stamp) costs
nothing but speed: the fit then compiles the kernel itself, as without the
process.

The folder is chosen by a public rule (:func:`marker_root`): numba's
``numba.config.CACHE_DIR`` (the environment variable ``NUMBA_CACHE_DIR``) if
set; else the ``__pycache__`` folder of the treerank package, where numba
caches its kernels, if it is writable; else the user's cache folder
(``$XDG_CACHE_HOME/treerank`` or ``~/.cache/treerank``, ``~/Library/Caches/
treerank`` on macOS, ``%LOCALAPPDATA%\\treerank`` on Windows) if writable;
else none, and nothing is recorded (nor started).

This module imports nothing of treerank (the waiting kernels import it through
:mod:`treerank._compilation._helper`), and numba only when asked for the
folder or the key.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import hashlib
import os
import platform
import sys
import threading
from pathlib import Path

__all__ = [
    "KERNEL_PACKAGES",
    "marker_directory",
    "marker_path",
    "marker_root",
    "record_compiled",
    "source_key",
]

# the treerank package's folder
_PACKAGE = Path(__file__).resolve().parents[1]
# the subpackages whose modules declare kernels (and the kernels they call):
# their source is hashed into the markers' key
KERNEL_PACKAGES = ("_compilation", "_engine", "aggregation", "ensemble", "inspection")
_key = None
_key_lock = threading.Lock()


def _writable(folder):
    """Whether ``folder`` is, or can be created as, a writable folder."""
    folder = Path(folder)
    while not folder.exists():
        if folder.parent == folder:
            return False
        folder = folder.parent
    return folder.is_dir() and os.access(folder, os.W_OK | os.X_OK)


def _user_cache_folder():
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA")
        return Path(base) / "treerank" if base else None
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "treerank"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "treerank"


def marker_root():
    """The folder of treerank's compilation markers, or None when none is writable.

    In this order: numba's cache folder ``numba.config.CACHE_DIR`` (set by the
    environment variable ``NUMBA_CACHE_DIR``) if set; the ``__pycache__``
    folder of the treerank package if writable; the user's cache folder
    (``treerank`` in ``$XDG_CACHE_HOME``, ``~/.cache``, ``~/Library/Caches``
    on macOS or ``%LOCALAPPDATA%`` on Windows) if writable.

    Returns
    -------
    root : pathlib.Path or None

    Examples
    --------
    >>> from treerank._compilation._markers import marker_root
    >>> marker_root() is not None  # a writable cache in the test environment
    True
    """
    from numba import config

    if getattr(config, "CACHE_DIR", ""):
        return Path(config.CACHE_DIR)
    candidates = [_PACKAGE / "__pycache__"]
    try:
        candidates.append(_user_cache_folder())
    except (RuntimeError, KeyError):  # no home folder
        pass
    for folder in candidates:
        if folder is not None and _writable(folder):
            return folder
    return None


def source_key():
    """A hash of treerank's and numba's versions and of its kernels' source.

    Computed once per process (a few milliseconds: the modules of
    :data:`KERNEL_PACKAGES` are read and hashed).

    Returns
    -------
    key : str
        16 hexadecimal digits.
    """
    global _key
    with _key_lock:
        if _key is None:
            import numba

            # imported before any of its modules
            package = sys.modules[__name__.split(".")[0]]
            digest = hashlib.sha256()
            for text in (
                getattr(package, "__version__", ""),
                numba.__version__,
                sys.version,
                platform.machine(),
            ):
                digest.update(text.encode() + b"\0")
            paths = (_PACKAGE / name for name in KERNEL_PACKAGES)
            for path in sorted(p for folder in paths for p in folder.rglob("*.py")):
                digest.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
            _key = digest.hexdigest()[:16]
        return _key


def marker_directory(root=None):
    """The folder of this treerank's markers (and lock) under ``root``.

    Parameters
    ----------
    root : path-like or None, default=None
        :func:`marker_root` if None.

    Returns
    -------
    directory : pathlib.Path or None
        None when there is no root.
    """
    root = marker_root() if root is None else Path(root)
    return None if root is None else root / f"treerank-kernels-{source_key()}"


def marker_path(directory, kernel):
    """The marker of a numba kernel in ``directory`` (existing or not).

    Parameters
    ----------
    directory : pathlib.Path
        See :func:`marker_directory`.
    kernel : numba dispatcher
        A kernel declared with ``cached_njit``: named by its Python function.

    Returns
    -------
    path : pathlib.Path
    """
    function = kernel.py_func
    return directory / f"{function.__module__}.{function.__qualname__}"


def record_compiled(directory, kernels):
    """Write the marker of every kernel of ``kernels`` compiled in this process.

    A kernel is compiled (or was loaded from numba's cache) in this process
    when it has a signature; numba stored it in its cache as it compiled it.

    Parameters
    ----------
    directory : pathlib.Path
        See :func:`marker_directory` (created if needed).
    kernels : iterable of numba dispatchers

    Returns
    -------
    recorded : list of str
        The names of the markers written now (not those already there).
    """
    recorded = []
    directory.mkdir(parents=True, exist_ok=True)
    for kernel in kernels:
        if not kernel.signatures:
            continue
        path = marker_path(directory, kernel)
        if not path.exists():
            path.touch()
            recorded.append(path.name)
    return recorded
