"""The median's kernels compiled ahead in a second process on a first fit."""

import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numba
import numpy as np
import pytest

import treerank
from treerank import RankingForest
from treerank._compilation import _background as background
from treerank._compilation import _helper as lock_holder
from treerank._compilation._background import (
    LOCK_NAME,
    PARTS,
    start_background_compilation,
    wait_for_background_compilation,
)
from treerank._compilation._markers import marker_directory, marker_path
from treerank._compilation._warmup import (
    _main,
    warm_cell_sort_kernel,
    warm_median_kernels,
    warm_routing_kernels,
)


class Spawned:
    """Stands for subprocess.run: records the processes started."""

    def __init__(self):
        self.calls = []

    def __call__(self, command, **kwargs):
        self.calls.append(command)
        return subprocess.CompletedProcess(command, 0, stdout=b"4242")

    def parts(self, index=0):
        """The parts the process ``index`` was asked to compile, in order."""
        return [arg for arg in self.calls[index] if arg in PARTS]


@pytest.fixture
def cold(monkeypatch, tmp_path):
    """A first fit in an empty cache (tmp_path); the processes started recorded.

    The kernels this test session compiled count as not compiled.
    """
    spawned = Spawned()
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(background, "_started", set())
    monkeypatch.setattr(lock_holder, "_directory", None)
    monkeypatch.setattr(
        background,
        "_is_cold",
        lambda part, directory: (
            not any(
                marker_path(directory, k).exists()
                for k in background._part_kernels(part)
            )
        ),
    )
    monkeypatch.setattr(background.subprocess, "run", spawned)
    before = treerank.get_config()["background_compilation"]
    treerank.set_config(background_compilation=True)
    yield spawned, marker_directory()
    treerank.set_config(background_compilation=before)


def test_a_first_fit_starts_one_process(cold):
    spawned, directory = cold
    assert start_background_compilation()
    # its lock, in the markers' folder in numba's cache folder, names it
    assert directory.parent == Path(numba.config.CACHE_DIR)
    assert (directory / LOCK_NAME).read_text() == "4242\n"
    assert spawned.parts() == list(PARTS)
    # once per process
    assert not start_background_compilation()
    assert not start_background_compilation(median=False)
    assert len(spawned.calls) == 1


def test_each_part_is_started_once(cold):
    # a tree or a mean forest asks for the routing's kernels only; a median
    # forest fitted later in the same process for the median's only
    spawned, directory = cold
    assert start_background_compilation(median=False)
    assert spawned.parts(0) == ["routing"]
    assert not start_background_compilation(median=False)
    (directory / LOCK_NAME).unlink()  # that process is done
    assert start_background_compilation()
    assert spawned.parts(1) == ["median", "small-median", "cell-sort"]
    assert not start_background_compilation()
    assert len(spawned.calls) == 2


def test_a_small_fit_asks_for_its_kernels_first(cold):
    spawned, _ = cold
    assert start_background_compilation(small=True)
    assert spawned.parts() == ["routing", "small-median", "median", "cell-sort"]


def test_only_the_parts_without_markers_are_compiled(cold):
    spawned, directory = cold
    directory.mkdir(parents=True)
    for part in PARTS:
        if part != "median":
            for kernel in background._part_kernels(part):
                marker_path(directory, kernel).touch()
    assert start_background_compilation()
    assert spawned.parts() == ["median"]


def test_nothing_to_do_when_every_part_is_marked(cold):
    spawned, directory = cold
    directory.mkdir(parents=True)
    for part in PARTS:
        for kernel in background._part_kernels(part):
            marker_path(directory, kernel).touch()
    assert not start_background_compilation()
    assert spawned.calls == []
    assert not (directory / LOCK_NAME).exists()


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


def test_switched_off_no_process_is_started(cold):
    spawned, directory = cold
    with treerank.config_context(background_compilation=False):
        assert not start_background_compilation()
    assert spawned.calls == []
    assert not (directory / LOCK_NAME).exists()
    # the parts were not asked for: on again, they are started
    assert start_background_compilation()


def test_switched_off_for_the_process(cold):
    spawned, directory = cold
    treerank.set_config(background_compilation=False)
    assert not start_background_compilation()
    assert spawned.calls == []
    assert not (directory / LOCK_NAME).exists()


def test_a_recent_lock_means_another_process_compiles(cold):
    spawned, directory = cold
    directory.mkdir(parents=True)
    (directory / LOCK_NAME).write_text("")
    assert not start_background_compilation()
    assert spawned.calls == []


def test_a_stale_lock_is_replaced(cold):
    spawned, directory = cold
    directory.mkdir(parents=True)
    lock = directory / LOCK_NAME
    lock.write_text("")
    old = time.time() - 2 * lock_holder._STALE_LOCK_SECONDS
    os.utime(lock, (old, old))
    assert start_background_compilation()
    assert len(spawned.calls) == 1
    assert lock.read_text() == "4242\n"


def test_a_failed_start_never_fails_the_fit(cold, monkeypatch):
    _, directory = cold

    def refuse(*args, **kwargs):
        raise OSError("no processes here")

    monkeypatch.setattr(background.subprocess, "run", refuse)
    assert not start_background_compilation()
    assert not (directory / LOCK_NAME).exists()  # released for another try


def test_the_kernels_compiled_in_this_process_are_not_cold(tmp_path):
    # the test session has compiled (or loaded) these kernels: no markers
    # needed
    warm_routing_kernels()
    warm_median_kernels(n_rows=1400, n_trees=100, n_leaves=8)
    assert not background._is_cold("routing", tmp_path)
    assert not background._is_cold("median", tmp_path)


@pytest.mark.parametrize("aggregation", ["median", "mean", "borda"])
def test_a_forest_asks_for_the_median_only_when_it_uses_it(cold, aggregation):
    spawned, _ = cold
    X = np.random.default_rng(0).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    RankingForest(n_estimators=3, aggregation=aggregation, random_state=0).fit(X, y)
    # a small problem (180 cells x trees at most): its median's kernels first
    expected = ["routing", "small-median", "median", "cell-sort"]
    assert spawned.parts() == (expected if aggregation == "median" else ["routing"])


def test_a_large_median_forest_asks_for_the_large_kernels_first(cold):
    spawned, _ = cold
    X = np.random.default_rng(0).normal(size=(1400, 3))
    y = (X[:, 0] > 0).astype(int)
    RankingForest(n_estimators=100, max_depth=1, random_state=0).fit(X, y)
    assert spawned.parts() == list(PARTS)


def test_a_tree_asks_for_the_routing(cold):
    from sklearn.linear_model import LogisticRegression

    from treerank import TreeRank
    from treerank.tree import ClassifierLeafRank

    spawned, _ = cold
    X = np.random.default_rng(0).normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    # another LeafRank grows node by node: no engine kernels, no process
    leafrank = ClassifierLeafRank(LogisticRegression())
    TreeRank(leafrank=leafrank, max_depth=2, random_state=0).fit(X, y)
    assert spawned.calls == []
    TreeRank(random_state=0).fit(X, y)
    assert spawned.parts() == ["routing"]


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
    env["TREERANK_BACKGROUND_COMPILE"] = "0"
    markers = tmp_path / "markers"
    subprocess.run(
        [sys.executable, "-m", "treerank._compilation._warmup", str(markers)],
        env=env,
        check=True,
        timeout=600,
    )
    # it marked what it compiled, for a waiting fit
    for part in PARTS:
        for kernel in background._part_kernels(part):
            assert marker_path(markers, kernel).exists()
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
    assert any(name.startswith("treerank._engine._tree_growth") for name in compiled)
    ahead = ("treerank.aggregation", "treerank._engine._routing")
    assert [n for n in compiled if n.startswith(ahead)] == []


def _kernel(compiled=False):
    """Stands for a numba kernel: its signatures and its Python function."""

    def kernel_function():
        pass

    return SimpleNamespace(
        signatures=["sig"] if compiled else [], py_func=kernel_function
    )


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


def test_a_fit_waits_until_the_kernel_is_marked(compiling):
    kernel = _kernel()
    marker = marker_path(compiling, kernel)
    _after(0.3, marker.touch)
    start = time.monotonic()
    wait_for_background_compilation(kernel)
    assert 0.25 < time.monotonic() - start < 10.0
    assert marker.exists()


def test_a_fit_waits_until_the_process_ends(compiling):
    kernel = _kernel()  # never marked (another specialization)
    _after(0.3, (compiling / LOCK_NAME).unlink)
    start = time.monotonic()
    wait_for_background_compilation(kernel)
    assert 0.25 < time.monotonic() - start < 10.0
    assert not marker_path(compiling, kernel).exists()


def test_no_wait_for_a_kernel_compiled_here_or_without_the_process(
    compiling, monkeypatch
):
    start = time.monotonic()
    wait_for_background_compilation(_kernel(compiled=True))
    monkeypatch.setattr(lock_holder, "_directory", None)  # nothing started here
    wait_for_background_compilation(_kernel())
    assert time.monotonic() - start < 0.2


def test_a_process_that_does_not_progress_is_waited_for_once(compiling, monkeypatch):
    monkeypatch.setattr(lock_holder, "_MAX_WAIT", 0.3)
    kernel = _kernel()
    start = time.monotonic()
    wait_for_background_compilation(kernel)
    assert time.monotonic() - start >= 0.3
    start = time.monotonic()
    wait_for_background_compilation(kernel)  # given up: the fit compiles
    assert time.monotonic() - start < 0.2


def test_the_warm_up_marks_its_kernels_and_releases_its_lock(tmp_path):
    # run in this process on the parts asked (compiled already, or loaded)
    (tmp_path / LOCK_NAME).write_text("1\n")
    _main(["_warmup", str(tmp_path), "routing"])
    assert not (tmp_path / LOCK_NAME).exists()
    for kernel in background._part_kernels("routing"):
        assert marker_path(tmp_path, kernel).exists()


def test_the_cell_sort_part_is_last_and_a_first_fit_does_not_need_it():
    # numpy sorts the cells of a forest of at most 4,096 cells (the engine
    # guide), such as the default median warm-up's (a first fit's size: 2,000
    # rows, 100 trees); the cell-sort part's forest has more
    assert PARTS[-1] == "cell-sort"
    assert warm_median_kernels().n_cells_ <= 4096
    assert warm_cell_sort_kernel() > 4096


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


# where a second process cannot work: nothing is started


def test_this_interpreter_can_start_it():
    # the test session: a Python interpreter, not frozen, not a worker
    assert background.unavailable_reason() is None


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ({"os_name": "nt"}, "Windows"),
        ({"frozen": True}, "frozen"),
        ({"executable": ""}, "not a Python interpreter"),
        ({"executable": "/nonexistent/python3"}, "not a Python interpreter"),
        ({"parent_process": object()}, "child process"),
    ],
)
def test_where_it_cannot_work(case, expected):
    assert expected in background.unavailable_reason(**case)


def test_an_embedded_interpreter_is_not_python(tmp_path):
    # uwsgi, httpd (mod_wsgi), an application embedding Python: sys.executable
    # is the host program, which would not run Python's command line
    host = tmp_path / "uwsgi"
    host.write_text("#!/bin/sh\n")
    host.chmod(0o755)
    reason = background.unavailable_reason(executable=str(host), parent_process=False)
    assert "not a Python interpreter" in reason
    # a link with another name to a Python interpreter is one
    link = tmp_path / "myapp"
    link.symlink_to(os.path.realpath(sys.executable))
    assert background.unavailable_reason(executable=str(link)) is None
    named = tmp_path / "python3.99"
    named.write_text("#!/bin/sh\n")
    named.chmod(0o755)
    assert background.unavailable_reason(executable=str(named)) is None


def test_an_embedded_interpreter_starts_nothing(cold, monkeypatch, tmp_path):
    spawned, directory = cold
    monkeypatch.setattr(sys, "executable", str(tmp_path / "uwsgi"))
    assert not start_background_compilation()
    assert spawned.calls == []
    assert not (directory / LOCK_NAME).exists()


def test_a_frozen_application_starts_nothing(cold, monkeypatch):
    spawned, _ = cold
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    assert not start_background_compilation()
    assert spawned.calls == []


def _reason_in_worker(_):
    from treerank._compilation._background import unavailable_reason

    return unavailable_reason()


@pytest.mark.parametrize("backend", ["loky", "multiprocessing"])
def test_a_joblib_worker_starts_nothing(backend):
    # multiprocessing.parent_process() is set in loky's workers too
    from joblib import Parallel, delayed

    reasons = Parallel(n_jobs=2, backend=backend)(
        delayed(_reason_in_worker)(i) for i in range(2)
    )
    assert all("child process" in reason for reason in reasons), reasons


def test_a_process_pool_worker_starts_nothing():
    import concurrent.futures
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=context) as pool:
        reason = pool.submit(_reason_in_worker, 0).result(timeout=300)
    assert "child process" in reason
