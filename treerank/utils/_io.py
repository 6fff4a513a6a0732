"""Atomic file output: a file is either fully written or not there at all."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import contextlib
import os
import tempfile

__all__ = ["atomic_path", "atomic_write"]


@contextlib.contextmanager
def atomic_path(path, *, overwrite=True):
    """Yield a temporary path next to ``path``, renamed onto it on success.

    The temporary file lives in the same directory, so the final
    :func:`os.replace` is atomic: readers never see a partial file, and an
    exception leaves any previous file untouched.

    Parameters
    ----------
    path : str or path-like
        Destination.
    overwrite : bool, default=True
        If False and ``path`` exists, raise ``FileExistsError``.

    Yields
    ------
    tmp_path : str
        Where to write.
    """
    path = os.fspath(path)
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"{path} already exists (use --force to overwrite).")
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    suffix = os.path.splitext(path)[1]
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=suffix, dir=directory)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(tmp)
        raise


@contextlib.contextmanager
def atomic_write(path, mode="w", *, overwrite=True, encoding="utf-8"):
    """Open a temporary file for writing, renamed onto ``path`` on success.

    Parameters
    ----------
    path : str or path-like
        Destination.
    mode : {"w", "wb"}, default="w"
        Text or binary.
    overwrite : bool, default=True
        If False and ``path`` exists, raise ``FileExistsError``.
    encoding : str, default="utf-8"
        Encoding in text mode.

    Yields
    ------
    file : file object
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb'; got {mode!r}.")
    with atomic_path(path, overwrite=overwrite) as tmp:
        kwargs = {"encoding": encoding} if mode == "w" else {}
        with open(tmp, mode, **kwargs) as handle:
            yield handle
