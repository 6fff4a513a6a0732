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
- missing parent directories are not created: the error names the directory;
- only a regular file is ever replaced: a symbolic link, a named pipe, a
  device, a socket or a directory at the destination is refused
  (:func:`refuse_special_file`), ``overwrite=True`` included, so that saving
  never turns ``/dev/full`` or a link into a regular file (checked before the
  temporary file is created and again just before the rename; POSIX has no
  rename conditional on the type of its target, so a name swapped in between
  those two instants is replaced, as by any ``mv``);
- an error names the user's path and the reason (permission denied, a missing
  or read-only directory, a file system that does not accept new files, no
  space left...), never the temporary file;
- after a successful write, the temporary files of this naming pattern
  (``.tmp-<12 hex digits>-<name>``) that a killed process left in the same
  directory are removed once they are more than a day old (:data:`STALE_AGE`;
  only regular files owned by the current user, so that a shared directory's
  other files are never touched; a write in progress updates its temporary
  file's modification time, so only a writer stalled for a whole day could
  lose it).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import contextlib
import errno
import os
import re
import secrets
import stat
import time

__all__ = ["STALE_AGE", "atomic_path", "atomic_write", "refuse_special_file"]

#: Age in seconds past which a temporary file of a killed write is removed.
STALE_AGE = 24 * 3600
# Most directory entries one save looks at for stale temporary files.
_MAX_SCANNED = 10_000
_TEMPORARY = re.compile(r"\.tmp-[0-9a-f]{12}-.+", re.DOTALL)

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


def _cannot_write(code, path, reason):
    """``OSError(code, "cannot write <path>: <reason>")``, of the errno's subclass
    (``PermissionError`` for ``EACCES``...)."""
    return OSError(code, f"cannot write {path}: {reason}")


_FILE_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def refuse_special_file(path):
    """Refuse a destination that exists and is not a regular file.

    Saving creates a regular file or replaces one; a symbolic link (even to a
    regular file), a named pipe, a device, a socket or a directory at the
    destination is an error, whatever ``overwrite`` says: replacing it would
    silently turn ``/dev/full`` or a link into an ordinary file.

    Parameters
    ----------
    path : str or path-like
        The destination.

    Raises
    ------
    IsADirectoryError
        If ``path`` is a directory.
    FileExistsError
        If ``path`` is a symbolic link, a named pipe, a device or a socket.

    Examples
    --------
    >>> import os, tempfile
    >>> from treerank.utils._io import refuse_special_file
    >>> folder = tempfile.mkdtemp()
    >>> refuse_special_file(os.path.join(folder, "new.trk"))  # nothing there: fine
    >>> os.symlink(os.path.join(folder, "new.trk"), os.path.join(folder, "link.trk"))
    >>> refuse_special_file(os.path.join(folder, "link.trk"))
    Traceback (most recent call last):
    ...
    FileExistsError: [Errno 17] cannot write .../link.trk: it is a symbolic link, ...
    """
    path = _check_path(path)
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return  # nothing there (the missing folder is reported by the writer)
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, f"cannot write {path}: it is a directory")
    kind = next((kind for test, kind in _FILE_KINDS if test(mode)), "a special file")
    raise FileExistsError(
        errno.EEXIST,
        f"cannot write {path}: it is {kind}, not a regular file, and treerank only "
        "creates or replaces regular files (remove it, or choose another name)",
    )


# errors of writing a file's content that name no file
_WRITE_ERRORS = {
    errno.ENOSPC,
    errno.EIO,
    errno.EFBIG,
    errno.EROFS,
    getattr(errno, "EDQUOT", errno.ENOSPC),
}


def _is_about_the_file(exc, tmp):
    """Whether an error raised while writing is about the temporary file."""
    if not isinstance(exc, OSError) or exc.errno is None:
        return False
    if exc.filename is None:
        return exc.errno in _WRITE_ERRORS
    return os.fsdecode(exc.filename) == tmp


def _write_error(exc, path, directory):
    """The error of writing ``path``, told with the user's path and the reason.

    ``exc`` is the error of an operation on the temporary file (its creation,
    its content, its rename onto ``path``), whose name means nothing to the
    user.
    """
    code = exc.errno
    if code in (errno.EACCES, errno.EPERM):
        reason = f"permission denied in the directory {directory}"
    elif code == errno.EROFS:
        reason = f"the directory {directory} is on a read-only file system"
    elif code == errno.ENOENT:
        reason = (
            f"files cannot be created in the directory {directory}"
            if os.path.isdir(directory)
            else f"the directory {directory} does not exist"
        )
    elif code == errno.ENAMETOOLONG:
        reason = "the file name is too long"
    else:
        reason = exc.strerror or os.strerror(code)
    return _cannot_write(code, path, reason)


def _check_directory(path, directory):
    """The destination's directory exists and is a directory (not created)."""
    try:
        info = os.stat(directory)
    except FileNotFoundError:
        raise _cannot_write(
            errno.ENOENT,
            path,
            f"the directory {directory} does not exist (create it first; it is "
            "not created automatically)",
        ) from None
    except OSError as exc:
        raise _write_error(exc, path, directory) from None
    if not stat.S_ISDIR(info.st_mode):
        raise _cannot_write(errno.ENOTDIR, path, f"{directory} is not a directory")


def _remove_stale_temporaries(directory):
    """Remove the temporary files that killed writes left in ``directory``.

    Only regular files named as :func:`_create_temporary` names them, owned
    by the current user and unmodified for :data:`STALE_AGE` seconds; at most
    :data:`_MAX_SCANNED` entries are looked at. Best effort: any error is
    ignored (the write itself has succeeded).
    """
    now = time.time()
    uid = os.getuid() if hasattr(os, "getuid") else None
    with contextlib.suppress(OSError), os.scandir(directory) as entries:
        for count, entry in enumerate(entries):
            if count >= _MAX_SCANNED:
                break
            if not _TEMPORARY.fullmatch(entry.name):
                continue
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if (
                    stat.S_ISREG(info.st_mode)
                    and now - info.st_mtime > STALE_AGE
                    and (uid is None or info.st_uid == uid)
                ):
                    os.remove(entry.path)


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
        If ``overwrite`` is False and ``path`` exists, or if ``path`` is not
        a regular file (a symbolic link, a named pipe, a device, a socket).
    IsADirectoryError
        If ``path`` is a directory.
    OSError
        If the file cannot be written (``PermissionError`` for a permission
        denied...): the message names ``path`` and the reason, never the
        temporary file.

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
    takes over its descriptor, and flushes the file to disk. Errors about
    the temporary file are reported with the user's path
    (:func:`_write_error`).
    """
    path = _check_path(path)
    if not isinstance(overwrite, bool):
        raise TypeError(f"overwrite must be a bool; got {overwrite!r}.")
    directory, name = os.path.split(os.path.abspath(path))
    if not name or path.endswith((os.sep, os.altsep or os.sep)):
        raise IsADirectoryError(
            errno.EISDIR, f"cannot write {path}: it names a directory"
        )
    _check_directory(path, directory)
    refuse_special_file(path)
    if not overwrite and os.path.lexists(path):
        raise _exists_error(path)  # early exit; the exclusive link decides
    try:
        stage = _Stage(*_create_temporary(directory, name))
    except OSError as exc:
        raise _write_error(exc, path, directory) from None
    try:
        yield stage
        stage.close()
        refuse_special_file(path)  # again, just before the rename
        _publish(stage.tmp, path, overwrite)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            stage.close()  # if the body did not get to close it
        with contextlib.suppress(OSError):
            os.remove(stage.tmp)
        if _is_about_the_file(exc, stage.tmp):
            raise _write_error(exc, path, directory) from None
        raise
    _fsync_directory(directory)
    _remove_stale_temporaries(directory)


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
