"""Atomic file output: permissions, durability, exclusive creation, cleanup."""

import errno
import os
import stat
import threading
import time

import numpy as np
import pytest

from treerank import TreeRank
from treerank.datasets import make_nested_squares
from treerank.utils._io import atomic_path, atomic_write


@pytest.fixture
def umask():
    """Set the process umask for one test, then restore it."""
    previous = os.umask(0o022)
    os.umask(previous)
    saved = []

    def set_umask(value):
        saved.append(os.umask(value))

    yield set_umask
    os.umask(previous)


def _mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def _write_and_fail(path, error, **kwargs):
    with atomic_path(path, **kwargs) as tmp:
        with open(tmp, "wb") as handle:
            handle.write(b"partial")
        raise error


def _delete_and_fail(path):
    with atomic_path(path) as tmp:
        os.remove(tmp)
        raise ValueError("writer failed")


def _write_while_another_process_creates(path):
    with atomic_write(path, overwrite=False) as handle:
        handle.write("mine")
        path.write_text("theirs")  # another process wins the race


def _leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.startswith(".tmp-"))


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
@pytest.mark.parametrize(("mask", "expected"), [(0o022, 0o644), (0o077, 0o600)])
def test_files_get_the_permissions_of_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    with atomic_write(tmp_path / "text.txt") as handle:
        handle.write("x")
    with atomic_path(tmp_path / "raw.bin") as tmp:
        with open(tmp, "wb") as handle:
            handle.write(b"x")
    with atomic_write(tmp_path / "excl.txt", overwrite=False) as handle:
        handle.write("x")
    for name in ("text.txt", "raw.bin", "excl.txt"):
        assert _mode(tmp_path / name) == expected, name


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_a_read_only_umask_still_lets_the_writer_write(tmp_path, umask):
    """atomic_write writes through the descriptor that created the file."""
    umask(0o277)
    with atomic_write(tmp_path / "private.txt") as handle:
        handle.write("secret")
    assert _mode(tmp_path / "private.txt") == 0o400
    assert (tmp_path / "private.txt").read_text() == "secret"


@pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")
def test_model_files_and_exports_are_readable_by_others(tmp_path, umask):
    from treerank.export import export_graphviz
    from treerank.model_io import save_model

    umask(0o022)
    X, y = make_nested_squares(200, random_state=0)
    tree = TreeRank(max_depth=2, random_state=0).fit(X, y)
    save_model(tree, tmp_path / "tree.trk")
    save_model(tree, tmp_path / "excl.trk", overwrite=False)
    export_graphviz(tree, out_file=tmp_path / "tree.dot")
    for name in ("tree.trk", "excl.trk", "tree.dot"):
        assert _mode(tmp_path / name) == 0o644, name
    assert _leftovers(tmp_path) == []


def test_content_replaces_the_old_file_only_on_success(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError, match="writer failed"):
        _write_and_fail(path, RuntimeError("writer failed"))
    assert path.read_text() == "old"
    assert _leftovers(tmp_path) == []
    with atomic_write(path) as handle:
        handle.write("new")
    assert path.read_text() == "new"
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("overwrite", [True, False])
def test_temporary_file_is_removed_after_keyboard_interrupt(tmp_path, overwrite):
    path = tmp_path / "out.bin"
    with pytest.raises(KeyboardInterrupt):
        _write_and_fail(path, KeyboardInterrupt(), overwrite=overwrite)
    assert not path.exists()
    assert _leftovers(tmp_path) == []


def test_temporary_file_is_removed_when_the_writer_deletes_or_replaces_it(tmp_path):
    path = tmp_path / "out.bin"
    # a writer that replaces the file by path (as some libraries do)
    with atomic_path(path) as tmp:
        os.remove(tmp)
        with open(tmp, "wb") as handle:
            handle.write(b"fresh")
    assert path.read_bytes() == b"fresh"
    # a writer that deletes it and fails
    with pytest.raises(ValueError, match="writer failed"):
        _delete_and_fail(path)
    assert path.read_bytes() == b"fresh"
    assert _leftovers(tmp_path) == []


def test_failed_model_save_leaves_nothing(tmp_path, monkeypatch):
    from treerank.model_io import _archive, save_model

    X, y = make_nested_squares(200, random_state=0)
    tree = TreeRank(max_depth=2, random_state=0).fit(X, y)

    def failing_write_array(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_archive.np.lib.format, "write_array", failing_write_array)
    with pytest.raises(OSError, match="No space left") as info:
        save_model(tree, tmp_path / "tree.trk")
    assert f"cannot write {tmp_path / 'tree.trk'}: " in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_missing_directory_is_not_created(tmp_path):
    from treerank.model_io import save_model

    X, y = make_nested_squares(200, random_state=0)
    tree = TreeRank(max_depth=2, random_state=0).fit(X, y)
    missing = tmp_path / "no" / "such"
    with pytest.raises(FileNotFoundError, match=r"directory .*no.such does not exist"):
        save_model(tree, missing / "tree.trk")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        with atomic_write(missing / "x.txt") as handle:
            handle.write("x")  # pragma: no cover - never reached
    assert not (tmp_path / "no").exists()


def test_overwrite_false_refuses_an_existing_file(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("keep me")
    with pytest.raises(FileExistsError, match="already exists"):
        with atomic_write(path, overwrite=False) as handle:
            handle.write("x")  # pragma: no cover - refused before the body
    assert path.read_text() == "keep me"
    # a dangling symbolic link is a name in use too
    if hasattr(os, "symlink"):
        link = tmp_path / "link.txt"
        os.symlink(tmp_path / "nowhere", link)
        with pytest.raises(FileExistsError):
            with atomic_write(link, overwrite=False) as handle:
                handle.write("x")  # pragma: no cover
        assert os.path.islink(link) and not (tmp_path / "nowhere").exists()


def test_overwrite_false_is_exclusive_when_the_name_appears_meanwhile(tmp_path):
    """No check-then-replace race: a file created during the write is kept."""
    path = tmp_path / "out.txt"
    with pytest.raises(FileExistsError, match="already exists"):
        _write_while_another_process_creates(path)
    assert path.read_text() == "theirs"
    assert _leftovers(tmp_path) == []


def test_concurrent_exclusive_writers_exactly_one_wins(tmp_path):
    path = tmp_path / "out.txt"
    barrier = threading.Barrier(8)
    outcomes = []

    def writer(k):
        try:
            with atomic_write(path, overwrite=False) as handle:
                handle.write(f"writer {k}")
                barrier.wait(timeout=10)  # everyone passed the early check
        except FileExistsError:
            outcomes.append(None)
        else:
            outcomes.append(k)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [k for k in outcomes if k is not None]
    assert len(winners) == 1
    assert path.read_text() == f"writer {winners[0]}"
    assert _leftovers(tmp_path) == []


def test_exclusive_create_without_hard_links(tmp_path, monkeypatch):
    """File systems without hard links fall back to an exclusive reservation."""

    def no_link(src, dst):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_link)
    path = tmp_path / "out.txt"
    with atomic_write(path, overwrite=False) as handle:
        handle.write("first")
    assert path.read_text() == "first"
    path.unlink()
    with pytest.raises(FileExistsError):
        _write_while_another_process_creates(path)
    assert path.read_text() == "theirs"
    assert _leftovers(tmp_path) == []


def test_file_and_directory_are_flushed_to_disk(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync

    def recording_fsync(fd):
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    with atomic_write(tmp_path / "out.txt") as handle:
        handle.write("x")
        assert synced == []
    assert False in synced  # the file
    if os.name == "posix":
        assert synced[-1] is True  # then its directory, after the rename


def test_bad_arguments(tmp_path):
    with pytest.raises(TypeError, match="path must be a str or path-like"):
        with atomic_path(None):
            pass  # pragma: no cover
    with pytest.raises(ValueError, match="non-empty"):
        with atomic_path(""):
            pass  # pragma: no cover
    with pytest.raises(TypeError, match="overwrite must be a bool"):
        with atomic_path(tmp_path / "x", overwrite="no"):
            pass  # pragma: no cover
    with pytest.raises(IsADirectoryError):
        with atomic_path(tmp_path):
            pass  # pragma: no cover
    with pytest.raises(ValueError, match="mode must be"):
        with atomic_write(tmp_path / "x", mode="a"):
            pass  # pragma: no cover
    # bytes paths work like str paths
    with atomic_write(os.fsencode(tmp_path / "b.txt")) as handle:
        handle.write("b")
    assert (tmp_path / "b.txt").read_text() == "b"
    assert np.all([not name.startswith(".tmp-") for name in os.listdir(tmp_path)])


# ----------------------------------------------------------------------
# only regular files are replaced (issue 26, item 4)
# ----------------------------------------------------------------------
def _make_special(kind, path, tmp_path):
    """Create a special file of ``kind`` at ``path`` (skip where impossible)."""
    if kind == "symlink to a file":
        (tmp_path / "target.txt").write_text("target")
        os.symlink(tmp_path / "target.txt", path)
    elif kind == "dangling symlink":
        os.symlink(tmp_path / "nowhere", path)
    elif kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("needs named pipes")
        os.mkfifo(path)
    elif kind == "character device":
        try:  # a copy of /dev/full (major 1, minor 7 on Linux); root only
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 7))
        except (AttributeError, PermissionError, OSError):
            pytest.skip("cannot create a device node here")
    elif kind == "socket":
        socket = pytest.importorskip("socket")
        if not hasattr(socket, "AF_UNIX") or len(str(path)) > 100:
            pytest.skip("needs a short Unix socket path")
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.close()
    else:
        raise AssertionError(kind)


def _identity(path):
    """What must not change about a special file: type, device, link target."""
    info = os.lstat(path)
    target = os.readlink(path) if stat.S_ISLNK(info.st_mode) else None
    return stat.S_IFMT(info.st_mode), info.st_rdev, info.st_ino, target


SPECIAL_KINDS = [
    "symlink to a file",
    "dangling symlink",
    "fifo",
    "character device",
    "socket",
]


def _save_tree(path, overwrite):
    from treerank.model_io import save_model

    X, y = make_nested_squares(100, random_state=0)
    save_model(
        TreeRank(max_depth=1, random_state=0).fit(X, y), path, overwrite=overwrite
    )


def _write_text(path, overwrite):
    with atomic_write(path, overwrite=overwrite) as handle:
        handle.write("x")


def _write_path(path, overwrite):
    with atomic_path(path, overwrite=overwrite) as tmp:
        with open(tmp, "wb") as handle:
            handle.write(b"x")


@pytest.mark.skipif(os.name != "posix", reason="POSIX special files")
@pytest.mark.parametrize("writer", [_save_tree, _write_text, _write_path])
@pytest.mark.parametrize("overwrite", [True, False])
@pytest.mark.parametrize("kind", SPECIAL_KINDS)
def test_special_files_are_never_replaced(tmp_path, kind, overwrite, writer):
    """`--out /dev/full --force` replaced the machine's /dev/full with a model."""
    path = tmp_path / "out.trk"
    _make_special(kind, path, tmp_path)
    before = _identity(path)
    with pytest.raises(FileExistsError, match="not a regular file") as info:
        writer(path, overwrite)
    assert str(path) in str(info.value) and ".tmp-" not in str(info.value)
    assert _identity(path) == before
    assert _leftovers(tmp_path) == []
    if kind == "symlink to a file":
        assert (tmp_path / "target.txt").read_text() == "target"


def test_a_directory_is_never_replaced(tmp_path):
    (tmp_path / "out.trk").mkdir()
    for overwrite in (True, False):
        with pytest.raises(IsADirectoryError, match=r"out\.trk: it is a directory"):
            _write_text(tmp_path / "out.trk", overwrite)
    assert (tmp_path / "out.trk").is_dir()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_special_file_appearing_during_the_write_is_not_replaced(tmp_path):
    path = tmp_path / "out.txt"

    def write_while_a_pipe_appears():
        with atomic_write(path) as handle:
            handle.write("x")
            os.mkfifo(path)  # created by someone else meanwhile

    with pytest.raises(FileExistsError, match="named pipe"):
        write_while_a_pipe_appears()
    assert stat.S_ISFIFO(os.lstat(path).st_mode)
    assert _leftovers(tmp_path) == []


# ----------------------------------------------------------------------
# errors name the user's path and the reason (issue 25, item 8)
# ----------------------------------------------------------------------
def _failing_creation(code, monkeypatch):
    """Make the creation of temporary files fail with ``code``."""
    real_open = os.open

    def failing_open(path, flags, *args, **kwargs):
        if os.path.basename(path).startswith(".tmp-"):
            raise OSError(code, os.strerror(code), path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", failing_open)


@pytest.mark.parametrize(
    ("code", "exception", "reason"),
    [
        (errno.EACCES, PermissionError, "permission denied in the directory"),
        (errno.EPERM, PermissionError, "permission denied in the directory"),
        (errno.EROFS, OSError, "is on a read-only file system"),
        (errno.ENOENT, FileNotFoundError, "files cannot be created in the directory"),
        (errno.ENOSPC, OSError, "No space left on device"),
        (errno.ENAMETOOLONG, OSError, "the file name is too long"),
    ],
)
def test_creation_errors_name_the_path_and_the_reason(
    tmp_path, monkeypatch, code, exception, reason
):
    _failing_creation(code, monkeypatch)
    path = tmp_path / "model.trk"
    for writer in (_save_tree, _write_text, _write_path):
        with pytest.raises(exception, match=reason) as info:
            writer(path, True)
        message = str(info.value)
        assert info.value.errno == code
        assert f"cannot write {path}: " in message and ".tmp-" not in message
        assert str(tmp_path) in message or "too long" in message or "space" in message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_proc_is_reported_with_the_users_path():
    """`--out /proc/x.trk` gave "[Errno 2] No such file or directory:
    '/proc/.tmp-929b5f303b30-x.trk'"."""
    with pytest.raises(OSError) as info:
        _save_tree("/proc/x.trk", True)
    message = str(info.value)
    assert "cannot write /proc/x.trk: " in message and ".tmp-" not in message
    assert (
        "files cannot be created in the directory /proc" in message  # root
        or "permission denied in the directory /proc" in message
    )


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="root ignores permissions"
)
def test_a_read_only_directory_is_reported(tmp_path):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(PermissionError, match="permission denied in the dir"):
            _save_tree(folder / "m.trk", True)
    finally:
        folder.chmod(0o700)


def test_errors_while_writing_and_renaming_name_the_users_path(tmp_path, monkeypatch):
    path = tmp_path / "out.txt"

    def failing_replace(src, dst):
        raise OSError(errno.EBUSY, "Device or resource busy", src, dst)

    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", failing_replace)
        with pytest.raises(OSError, match="Device or resource busy") as info:
            _write_text(path, True)
    assert str(info.value) == f"[Errno {errno.EBUSY}] cannot write {path}: " + (
        "Device or resource busy"
    )
    # an error of the writer about the temporary file, by its name
    with pytest.raises(PermissionError) as info:
        with atomic_path(path) as tmp:
            raise PermissionError(errno.EACCES, "Permission denied", tmp)
    assert f"cannot write {path}" in str(info.value)
    assert ".tmp-" not in str(info.value)
    # an error of the writer about another file is the writer's own
    with pytest.raises(FileNotFoundError, match=r"elsewhere\.csv"):
        with atomic_path(path):
            raise FileNotFoundError(errno.ENOENT, "No such file", "elsewhere.csv")
    assert _leftovers(tmp_path) == []


def test_a_missing_directory_or_a_file_in_the_way(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError, match="file is not a directory"):
        _write_text(tmp_path / "file" / "out.txt", True)
    with pytest.raises(FileNotFoundError, match="missing does not exist") as info:
        _write_text(tmp_path / "missing" / "out.txt", True)
    assert f"cannot write {tmp_path / 'missing' / 'out.txt'}" in str(info.value)


# ----------------------------------------------------------------------
# temporary files of killed writes (issue 26, item 7)
# ----------------------------------------------------------------------
def _aged(path, seconds):
    then = time.time() - seconds
    os.utime(path, (then, then), follow_symlinks=False)


def test_stale_temporary_files_are_removed_after_a_day(tmp_path):
    from treerank.utils._io import STALE_AGE

    day = STALE_AGE
    stale = tmp_path / ".tmp-0123456789ab-model.trk"
    fresh = tmp_path / ".tmp-ba9876543210-model.trk"
    other_name = tmp_path / ".tmp-notours-model.trk"
    user_file = tmp_path / "notes.txt"
    for path in (stale, fresh, other_name, user_file):
        path.write_text("left over")
    _aged(stale, day + 60)
    _aged(fresh, day - 60)
    _aged(other_name, 10 * day)
    _aged(user_file, 10 * day)
    folder = tmp_path / ".tmp-aaaaaaaaaaaa-folder"  # the pattern, not a file
    folder.mkdir()
    _aged(folder, 10 * day)
    link = tmp_path / ".tmp-bbbbbbbbbbbb-link"
    os.symlink(user_file, link)
    _aged(link, 10 * day)
    _write_text(tmp_path / "out.txt", True)
    assert not stale.exists()
    assert fresh.exists() and other_name.exists() and user_file.exists()
    assert folder.is_dir() and os.path.islink(link)
    assert (tmp_path / "out.txt").read_text() == "x"


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() != 0, reason="needs root to chown"
)
def test_stale_temporary_files_of_other_users_are_kept(tmp_path):
    theirs = tmp_path / ".tmp-0123456789ab-model.trk"
    theirs.write_text("someone else's")
    os.chown(theirs, 54321, -1)
    _aged(theirs, 3 * 24 * 3600)
    _write_text(tmp_path / "out.txt", True)
    assert theirs.exists()


def test_a_failed_write_removes_no_stale_file(tmp_path):
    stale = tmp_path / ".tmp-0123456789ab-model.trk"
    stale.write_text("left over")
    _aged(stale, 3 * 24 * 3600)
    with pytest.raises(RuntimeError):
        _write_and_fail(tmp_path / "out.txt", RuntimeError("writer failed"))
    assert stale.exists()  # cleaned by the next successful write
    _write_text(tmp_path / "out.txt", True)
    assert not stale.exists()


# ----------------------------------------------------------------------
# the command line
# ----------------------------------------------------------------------
@pytest.fixture
def train_csv(tmp_path):
    X, y = make_nested_squares(200, random_state=0)
    path = tmp_path / "train.csv"
    rows = ["x1,x2,label"] + [f"{a},{b},{c}" for (a, b), c in zip(X, y)]
    path.write_text("\n".join(rows) + "\n")
    return path


def _cli(args, capsys):
    from treerank.cli import main

    status = main([str(a) for a in args])
    return status, capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize("force", [True, False])
def test_cli_refuses_a_special_output_before_fitting(
    tmp_path, train_csv, capsys, force
):
    fifo = tmp_path / "out.trk"
    os.mkfifo(fifo)
    options = ["--force"] if force else []
    status, err = _cli(
        ["fit", train_csv, "--target", "label", "--out", fifo, *options], capsys
    )
    assert status == 1
    assert "named pipe (FIFO), not a regular file" in err and str(fifo) in err
    assert "fitting" not in err  # refused before any work
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux /proc")
def test_cli_reports_proc_with_the_users_path(train_csv, capsys):
    status, err = _cli(
        ["fit", train_csv, "--target", "label", "--out", "/proc/x.trk", "--force"],
        capsys,
    )
    assert status == 1
    assert "/proc/x.trk" in err and ".tmp-" not in err
    assert "cannot be created" in err or "permission denied" in err
