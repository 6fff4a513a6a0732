"""The median's kernels compiled ahead in a second process on a first fit."""

import os
import subprocess
import sys
import textwrap
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from treerank import RankingForest
from treerank._compilation import _background as background
from treerank._compilation import _helper as lock_holder
from treerank._compilation import _warmup
from treerank._compilation._background import (
    ENVIRONMENT_SWITCH,
    LOCK_NAME,
    PARTS,
    start_background_compilation,
    wait_for_background_compilation,
)
from treerank._compilation._warmup import (
    warm_median_kernels,
    warm_routing_kernels,
)


class Spawned:
    """Stands for subprocess.run: records the commands and environments."""

    def __init__(self):
        self.calls = []

    def __call__(self, command, **kwargs):
        self.calls.append((command, kwargs))
        return subprocess.CompletedProcess(command, 0)


@pytest.fixture
def cold(monkeypatch, tmp_path):
    """A first fit: nothing started yet, no kernel cached, spawning recorded."""
    spawned = Spawned()
    monkeypatch.setattr(background, "_started", set())
    monkeypatch.setattr(lock_holder, "_directory", None)
    monkeypatch.setattr(background, "_is_cold", lambda part: True)
    monkeypatch.setattr(
        background, "_cold_cache_directory", lambda parts: tmp_path if parts else None
    )
    monkeypatch.setattr(background.subprocess, "run", spawned)
    monkeypatch.delenv(ENVIRONMENT_SWITCH, raising=False)
    return spawned, tmp_path


def test_a_first_fit_starts_one_process(cold):
    spawned, directory = cold
    assert start_background_compilation()
    assert (directory / LOCK_NAME).exists()
    ((command, kwargs),) = spawned.calls
    # a launcher starts the compiling process detached and exits
    # (without the site module: it needs the standard library only)
    assert command[:4] == [sys.executable, "-S", "-c", background._LAUNCHER]
    assert command[4:6] == [sys.executable, "-c"]
    # which runs this module with this treerank first on its path, whatever
    # the working directory holds, and starts no process itself
    import treerank

    root = os.path.dirname(os.path.dirname(os.path.realpath(treerank.__file__)))
    assert command[7:] == [root, str(directory), *PARTS]
    assert "treerank._compilation._warmup" in command[6]
    assert kwargs["env"][ENVIRONMENT_SWITCH] == "0"
    assert kwargs["stdout"] == subprocess.PIPE  # the launcher writes the pid
    # once per process
    assert not start_background_compilation()
    assert not start_background_compilation(median=False)
    assert len(spawned.calls) == 1


def test_each_part_is_started_once(cold):
    # a tree or a mean forest asks for the routing's kernels only; a median
    # forest fitted later in the same process for the median's only
    spawned, directory = cold
    assert start_background_compilation(median=False)
    assert spawned.calls[0][0][9:] == ["routing"]
    assert not start_background_compilation(median=False)
    (directory / LOCK_NAME).unlink()  # that process is done
    assert start_background_compilation()
    assert spawned.calls[1][0][9:] == ["median", "small median", "cell sort"]
    assert not start_background_compilation()
    assert len(spawned.calls) == 2


def test_a_small_fit_asks_for_its_kernels_first(cold):
    spawned, _ = cold
    assert start_background_compilation(small=True)
    parts = spawned.calls[0][0][9:]
    assert parts == ["routing", "small median", "median", "cell sort"]


def test_only_the_cold_parts_are_compiled(cold, monkeypatch):
    spawned, _ = cold
    monkeypatch.setattr(background, "_is_cold", lambda part: part == "median")
    assert start_background_compilation()
    assert spawned.calls[0][0][9:] == ["median"]


def test_a_failing_launcher_releases_the_lock(cold, monkeypatch):
    _, directory = cold
    monkeypatch.setattr(
        background.subprocess,
        "run",
        lambda command, **kwargs: subprocess.CompletedProcess(command, 1),
    )
    assert not start_background_compilation()
    assert not (directory / LOCK_NAME).exists()


def test_the_launcher_leaves_no_child_behind(tmp_path):
    # the launcher starts its command and exits at once; the command runs on
    import time as clock

    marker = tmp_path / "ran"
    started = clock.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-S",
            "-c",
            background._LAUNCHER,
            sys.executable,
            "-c",
            "import pathlib, sys, time; time.sleep(4); "
            "pathlib.Path(sys.argv[1]).write_text('done')",
            str(marker),
        ],
        check=True,
        timeout=60,
    )
    assert clock.perf_counter() - started < 3  # did not wait for the 4 s
    deadline = clock.perf_counter() + 60
    while not marker.exists() and clock.perf_counter() < deadline:
        clock.sleep(0.1)
    assert marker.read_text() == "done"


def test_switched_off_by_the_environment(cold, monkeypatch):
    spawned, _ = cold
    monkeypatch.setenv(ENVIRONMENT_SWITCH, "0")
    assert not start_background_compilation()
    assert spawned.calls == []


def test_a_recent_lock_means_another_process_compiles(cold):
    spawned, directory = cold
    (directory / LOCK_NAME).write_text("")
    assert not start_background_compilation()
    assert spawned.calls == []


def test_a_stale_lock_is_replaced(cold):
    spawned, directory = cold
    lock = directory / LOCK_NAME
    lock.write_text("")
    old = time.time() - 2 * lock_holder._STALE_LOCK_SECONDS
    os.utime(lock, (old, old))
    assert start_background_compilation()
    assert len(spawned.calls) == 1
    assert lock.stat().st_mtime > old + 1


def test_nothing_to_do_when_the_kernels_are_cached(cold, monkeypatch):
    spawned, _ = cold
    monkeypatch.setattr(background, "_is_cold", lambda part: False)
    assert not start_background_compilation()
    assert spawned.calls == []


def test_a_failed_start_never_fails_the_fit(cold, monkeypatch):
    _, directory = cold

    def refuse(*args, **kwargs):
        raise OSError("no processes here")

    monkeypatch.setattr(background.subprocess, "run", refuse)
    assert not start_background_compilation()
    assert not (directory / LOCK_NAME).exists()  # released for another try


def test_the_cache_of_this_process_is_not_cold():
    # the test session has compiled (or loaded) these kernels
    warm_routing_kernels()
    warm_median_kernels(n_rows=1400, n_trees=100, n_leaves=8)
    assert not any(background._is_cold(part) for part in PARTS)
    assert background._cold_cache_directory(PARTS) is None


@pytest.mark.parametrize("aggregation", ["median", "mean", "borda"])
def test_a_forest_asks_for_the_median_only_when_it_uses_it(monkeypatch, aggregation):
    calls = []
    monkeypatch.setattr(
        "treerank.ensemble._forest.start_background_compilation",
        lambda median, small: calls.append((median, small)),
    )
    X = np.random.default_rng(0).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    RankingForest(n_estimators=3, aggregation=aggregation, random_state=0).fit(X, y)
    assert calls == [(aggregation == "median", True)]  # 180 cells x trees at most
    calls.clear()
    X = np.random.default_rng(0).normal(size=(1400, 3))
    y = (X[:, 0] > 0).astype(int)
    RankingForest(n_estimators=100, aggregation=aggregation, max_depth=1).fit(X, y)
    assert calls == [(aggregation == "median", False)]


def test_a_tree_asks_for_the_routing(monkeypatch):
    from sklearn.linear_model import LogisticRegression

    from treerank import TreeRank
    from treerank.tree import ClassifierLeafRank

    calls = []
    monkeypatch.setattr(
        "treerank.tree._classes.start_background_compilation",
        lambda median: calls.append(median),
    )
    X = np.random.default_rng(0).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    TreeRank(random_state=0).fit(X, y)
    assert calls == [False]
    # another LeafRank grows node by node: no engine kernels
    calls.clear()
    leafrank = ClassifierLeafRank(LogisticRegression())
    TreeRank(leafrank=leafrank, max_depth=2, random_state=0).fit(X, y)
    assert calls == []


def test_the_stumps_send_rows_by_their_first_feature():
    # the hand-made trees are valid ranking trees: x0 > 0 is the better
    # leaf (rank 0) in every tree, a missing x0 goes to one side in all
    ranks = warm_routing_kernels(n_rows=50, n_trees=2, seed=3)
    rng = np.random.default_rng(3)
    rng.integers(0, 255, size=(50, 3), dtype=np.uint8)  # the codes it routes first
    X = rng.normal(size=(50, 3))
    expected = np.where(X[:, 0] > 0, 0, 1)
    np.testing.assert_array_equal(ranks[1:, 0], expected[1:])
    np.testing.assert_array_equal(ranks[:, 0], ranks[:, 1])
    assert ranks[0, 0] in (0, 1)


def test_the_synthetic_forest_is_aggregated():
    aggregate = warm_median_kernels(n_rows=300, n_trees=6, n_leaves=5, seed=1)
    assert aggregate.consensus_.shape == (aggregate.n_cells_,)
    assert aggregate.consensus_objective_ <= aggregate.borda_objective_ + 1e-9


_FIRST_FIT = textwrap.dedent(
    """
    import json
    from numba.core import event
    from sklearn.datasets import make_classification
    import treerank

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            function = ev.data["dispatcher"].py_func
            compiled.append(function.__module__ + "." + function.__qualname__)

        def on_end(self, ev):
            pass

    event.register("numba:compile", Listener())
    X, y = make_classification(2000, 20, n_informative=8, random_state=0)
    forest = treerank.RankingForest(random_state=0).fit(X, y)
    forest.decision_function(X + 0.01)
    print(json.dumps(compiled))
    """
)


@pytest.mark.slow
def test_the_process_compiles_what_a_first_fit_needs(tmp_path):
    # in an empty cache, the process's stumps and synthetic forest compile the
    # same specializations as a default forest's fit and scoring: after it,
    # the fit compiles no kernel of the aggregation package or of the routing
    import json

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env[ENVIRONMENT_SWITCH] = "0"
    subprocess.run(
        [sys.executable, "-m", "treerank._compilation._warmup", str(tmp_path)],
        env=env,
        check=True,
        timeout=600,
    )
    result = subprocess.run(
        [sys.executable, "-c", _FIRST_FIT],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    compiled = json.loads(result.stdout.splitlines()[-1])
    # the growth's kernels are left to the fit; the routing's are not
    assert any(name.startswith("treerank.engine._tree_growth") for name in compiled)
    ahead = ("treerank.aggregation", "treerank.engine._routing")
    assert [n for n in compiled if n.startswith(ahead)] == []


def _kernel(index_path, compiled=False):
    """Stands for a cached numba kernel: its signatures and cache index file."""
    cache = SimpleNamespace(_cache_file=SimpleNamespace(_index_path=str(index_path)))
    return SimpleNamespace(signatures=["sig"] if compiled else [], _cache=cache)


def _after(seconds, action):
    timer = threading.Timer(seconds, action)
    timer.start()
    return timer


@pytest.fixture
def compiling(monkeypatch, tmp_path):
    """This process started the second process, which still runs (its lock)."""
    monkeypatch.setattr(lock_holder, "_directory", tmp_path)
    (tmp_path / LOCK_NAME).touch()
    return tmp_path


def test_a_fit_waits_until_the_kernel_is_cached(compiling):
    index = compiling / "kernel.nbi"
    _after(0.3, index.touch)
    start = time.monotonic()
    wait_for_background_compilation(_kernel(index))
    assert 0.25 < time.monotonic() - start < 10.0
    assert index.exists()


def test_a_fit_waits_until_the_process_ends(compiling):
    index = compiling / "kernel.nbi"  # never stored (another specialization)
    _after(0.3, (compiling / LOCK_NAME).unlink)
    start = time.monotonic()
    wait_for_background_compilation(_kernel(index))
    assert 0.25 < time.monotonic() - start < 10.0
    assert not index.exists()


def test_no_wait_for_a_kernel_compiled_here_or_without_the_process(
    compiling, monkeypatch
):
    index = compiling / "kernel.nbi"
    start = time.monotonic()
    wait_for_background_compilation(_kernel(index, compiled=True))
    monkeypatch.setattr(lock_holder, "_directory", None)  # nothing started here
    wait_for_background_compilation(_kernel(index))
    assert time.monotonic() - start < 0.2


def test_a_process_that_does_not_progress_is_waited_for_once(compiling, monkeypatch):
    monkeypatch.setattr(lock_holder, "_MAX_WAIT", 0.3)
    kernel = _kernel(compiling / "kernel.nbi")
    start = time.monotonic()
    wait_for_background_compilation(kernel)
    assert time.monotonic() - start >= 0.3
    start = time.monotonic()
    wait_for_background_compilation(kernel)  # given up: the fit compiles
    assert time.monotonic() - start < 0.2


def test_the_cell_sort_kernel_is_compiled_last(monkeypatch):
    # after the first fit's kernels, a forest too large for numpy's sort
    from treerank.aggregation import _cell_index

    steps = []
    original = _cell_index._lexicographic_kernel

    def sort_kernel(*args):
        steps.append(("sort kernel", args[1].shape[0]))
        return original(*args)

    monkeypatch.setattr(_cell_index, "_lexicographic_kernel", sort_kernel)
    names = ("warm_routing_kernels", "warm_leaf_table_kernels", "warm_median_kernels")
    for name in names:
        monkeypatch.setattr(
            _warmup, name, lambda name=name, **kwargs: steps.append((name, kwargs))
        )
    _warmup._main(["_warmup"])
    assert [step[0] for step in steps] == [*names, names[2], "sort kernel"]
    assert steps[2][1] == {}  # 2,000 rows, then a small exact problem
    assert steps[3][1]["n_rows"] * steps[3][1]["n_trees"] < 1 << 17
    assert steps[4][1] > _cell_index._NUMPY_SORT_MAX_ROWS
    # the parts asked, in their order
    steps.clear()
    _warmup._main(["_warmup", "nowhere", "small median", "routing"])
    assert [step[0] for step in steps] == [names[2], *names[:2]]
    # a first fit's forest (2,000 rows, 100 trees) is sorted by numpy
    steps.clear()
    monkeypatch.undo()
    monkeypatch.setattr(_cell_index, "_lexicographic_kernel", sort_kernel)
    warm_median_kernels()
    assert steps == []


def test_a_fit_waits_for_the_kernels_it_calls(monkeypatch):
    # the median's search and the insertion run in compiled kernels at every
    # size: a forest's fit waits for the search's kernels, its scoring of
    # unseen cells for the insertion's
    from sklearn.datasets import make_classification

    from treerank.aggregation import _kemeny
    from treerank.ensemble import _tree_aggregate

    waited = []
    for module in (_kemeny, _tree_aggregate):  # the median's, the scoring's
        monkeypatch.setattr(
            module,
            "wait_for_background_compilation",
            lambda kernel: waited.append(kernel.py_func.__name__),
        )
    X, y = make_classification(300, 5, random_state=0)
    forest = RankingForest(n_estimators=5, random_state=0).fit(X, y)
    assert waited == ["_batch_kernel", "_lookup"]
    waited.clear()
    forest.decision_function(X + 1)
    assert "_region_full_kernel" in waited
