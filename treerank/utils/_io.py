"""Atomic, durable file output: a file is either fully written or not there at all.

Every file treerank writes (model files, exported trees, plots and outputs of
the command line) goes through :func:`atomic_path` or :func:`atomic_write`:

- the content is written to a temporary file in the destination's directory,
  flushed to disk (``fsync``), then renamed onto the destination, and the
  directory itself is flushed, so that after a crash the destination holds
  either its old content or the complete new one;
- the file gets the permissions of an ordinary new file (``0o666`` minus the
  process umask, e.g. ``0o644`` under the usual umask ``0o022``), not the
  private ``0o600`` of :func:`tempfile.mkstemp`;
- with ``overwrite=False`` the destination is created exclusively (a hard link
  of the finished temporary file, which fails if the name exists): two
  processes saving to the same name cannot both succeed, and an existing file
  is never replaced, whatever happens between a check and the write;
- the temporary file is removed on every exit the process controls (an
  exception in the writer, ``KeyboardInterrupt``); only a hard kill
  (``SIGKILL``, power loss) can leave a ``.tmp-*`` file behind;
- missing parent directories are not created: the error names the directory.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import contextlib
import errno
import os
import secrets

__all__ = ["atomic_path", "atomic_write"]

# errors of os.link on file systems without hard links (FAT, some network and
# FUSE file systems): fall back to an exclusive create followed by a rename
_NO_HARD_LINKS = {
    errno.EPERM,
    errno.EACCES,
    errno.EXDEV,
    errno.EMLINK,
    getattr(errno, "ENOTSUP", errno.EPERM),
    getattr(errno, "EOPNOTSUPP", errno.EPERM),
    getattr(errno, "ENOSYS", errno.EPERM),
}
_MAX_NAME_TAIL = 100  # keep temporary names well under NAME_MAX (255)


def _check_path(path):
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(
            f"path must be a str or path-like object; got {type(path).__name__}."
        )
    path = os.fsdecode(os.fspath(path))
    if not path:
        raise ValueError("path must be a non-empty file name; got ''.")
    return path


def _exists_error(path):
    return FileExistsError(
        errno.EEXIST,
        f"{path} already exists (use --force on the command line, or "
        "overwrite=True in Python, to replace it)",
        path,
    )


def _fsync_file(path):
    # Windows' _commit needs a writable descriptor; POSIX accepts a read-only one
    fd = os.open(path, os.O_RDWR if os.name == "nt" else os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_directory(directory):
    """Flush a directory entry change (a rename) to disk; best effort."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
    try:
        fd = os.open(directory, flags)
    except OSError:  # e.g. Windows, where directories cannot be opened
        return
    try:
        with contextlib.suppress(OSError):  # some file systems refuse it
            os.fsync(fd)
    finally:
        os.close(fd)


def _create_temporary(directory, name):
    """Create an empty, exclusive temporary file next to the destination.

    Created with mode ``0o666`` so that the umask applies, as for any new file.
    Returns its path and an open, readable and writable descriptor (the caller
    closes it).
    """
    tail = name[-_MAX_NAME_TAIL:]
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    flags |= getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = os.path.join(directory, f".tmp-{secrets.token_hex(6)}-{tail}")
        try:
            fd = os.open(tmp, flags, 0o666)
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
        return tmp, fd
    raise FileExistsError(  # pragma: no cover
        f"could not create a temporary file in {directory}"
    )


def _publish(tmp, path, overwrite):
    """Move the finished temporary file onto ``path`` (exclusively if asked)."""
    if overwrite:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise _exists_error(path) from None
    except OSError as exc:
        if exc.errno not in _NO_HARD_LINKS:
            raise
        # no hard links here: reserve the name exclusively, then rename onto it
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            raise _exists_error(path) from None
        os.close(fd)
        try:
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.remove(path)  # our own empty reservation
            raise
        return
    os.remove(tmp)


@contextlib.contextmanager
def atomic_path(path, *, overwrite=True):
    """Yield a temporary path next to ``path``, moved onto it on success.

    The temporary file lives in the same directory, so the final rename is
    atomic: readers never see a partial file, and an exception (or
    ``KeyboardInterrupt``) in the body leaves any previous file untouched and
    removes the temporary file. The new file is flushed to disk together with
    its directory entry, and gets the permissions of an ordinary new file
    (``0o666`` minus the umask).

    Parameters
    ----------
    path : str or path-like
        Destination. Its directory must exist.
    overwrite : bool, default=True
        If False, refuse to replace an existing file: the destination is
        created exclusively, so that of two concurrent writers at most one
        succeeds, and ``FileExistsError`` is raised if the name exists (before
        anything is written, and again at the end if the name appeared
        meanwhile).

    Yields
    ------
    tmp_path : str
        Where to write (an existing empty file; the body may write it by path
        or replace it).

    Raises
    ------
    FileNotFoundError
        If the destination's directory does not exist (it is not created).
    FileExistsError
        If ``overwrite`` is False and ``path`` exists.

    Examples
    --------
    >>> import os, tempfile
    >>> from treerank.utils._io import atomic_path
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_path(path) as tmp:
    ...     with open(tmp, "w") as handle:
    ...         _ = handle.write("done")
    >>> open(path).read()
    'done'
    """
    with _staged(path, overwrite) as stage:
        stage.close()
        yield stage.tmp
        _fsync_file(stage.tmp)


class _Stage:
    """The temporary file of a write and its descriptor, closed exactly once."""

    def __init__(self, tmp, fd):
        self.tmp = tmp
        self.fd = fd

    def take_fd(self):
        """Hand the descriptor over to a file object (which will close it)."""
        fd, self.fd = self.fd, None
        return fd

    def close(self):
        if self.fd is not None:
            os.close(self.take_fd())


@contextlib.contextmanager
def _staged(path, overwrite):
    """The common core: checks, temporary file, cleanup, publication, fsync.

    Yields a :class:`_Stage`; the body writes the temporary file, closes or
    takes over its descriptor, and flushes the file to disk.
    """
    path = _check_path(path)
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite must be a bool; got {overwrite!r}.")
    directory, name = os.path.split(os.path.abspath(path))
    if not name or path.endswith((os.sep, os.altsep or os.sep)):
        raise IsADirectoryError(errno.EISDIR, "path names a directory", path)
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            errno.ENOENT,
            f"the directory {directory} does not exist (create it first; "
            "it is not created automatically)",
            path,
        )
    if os.path.isdir(path):
        raise IsADirectoryError(errno.EISDIR, "path is a directory", path)
    if not overwrite and os.path.lexists(path):
        raise _exists_error(path)  # early exit; the exclusive link decides
    stage = _Stage(*_create_temporary(directory, name))
    try:
        yield stage
        stage.close()
        _publish(stage.tmp, path, overwrite)
    except BaseException:
        with contextlib.suppress(OSError):
            stage.close()  # if the body did not get to close it
        with contextlib.suppress(OSError):
            os.remove(stage.tmp)
        raise
    _fsync_directory(directory)


@contextlib.contextmanager
def atomic_write(path, mode="w", *, overwrite=True, encoding="utf-8"):
    """Open a temporary file for writing, moved onto ``path`` on success.

    See :func:`atomic_path` for the guarantees (atomic, durable, umask
    permissions, exclusive creation with ``overwrite=False``, cleanup).

    Parameters
    ----------
    path : str or path-like
        Destination. Its directory must exist.
    mode : {"w", "wb", "w+b"}, default="w"
        Text or binary; ``"w+b"`` can also read back what was written (for
        instance to checksum it) before the file is published.
    overwrite : bool, default=True
        If False and ``path`` exists, raise ``FileExistsError``.
    encoding : str, default="utf-8"
        Encoding in text mode.

    Yields
    ------
    file : file object

    Examples
    --------
    >>> import os, tempfile
    >>> from treerank.utils._io import atomic_write
    >>> path = os.path.join(tempfile.mkdtemp(), "out.txt")
    >>> with atomic_write(path) as handle:
    ...     _ = handle.write("done")
    >>> open(path).read()
    'done'
    """
    if mode not in ("w", "wb", "w+b"):
        raise ValueError(f"mode must be 'w', 'wb' or 'w+b'; got {mode!r}.")
    kwargs = {"encoding": encoding} if mode == "w" else {}
    with _staged(path, overwrite) as stage:
        # written through the descriptor that created the file: works whatever
        # permissions the umask gives it
        with os.fdopen(stage.take_fd(), mode, **kwargs) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
