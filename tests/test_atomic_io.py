"""Atomic file output: permissions, durability, exclusive creation, cleanup."""

import errno
import os
import stat
import threading

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
    with pytest.raises(OSError, match="No space left"):
        save_model(tree, tmp_path / "tree.trk")
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
