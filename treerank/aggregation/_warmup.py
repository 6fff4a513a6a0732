"""Compile the routing's and the median's kernels ahead, in a second process.

The first forest fit after installing compiles numba kernels one after the
other: the tree growth's, the routing's (a tree's decision graph, the rows
outside its sample), then the median's (common subpartition, Kemeny local
search, cell index, insertion of unseen cells). The routing's and the
median's do not depend on the trees being grown, so while the fit compiles
the growth, a second Python process can compile them on the other core and
store them in numba's cache, where the fit finds them when it gets there: on
the two-core machine of the benchmark, the first fit and scoring of a
default forest on 2,000 x 20 rows take about 10.5 s of compilation and
fitting instead of 18 s (measured by ``benchmarks/bench_engine.py``'s compile part).

:func:`start_background_compilation` starts that process, at most once per
process, only when the median's kernels are neither compiled here nor in the
cache, and never when ``TREERANK_BACKGROUND_COMPILE=0`` is set. The process
(this module run as a script, with this treerank first on its path) routes
rows through hand-made one-split trees and aggregates a synthetic forest
through the same code a fit and a prediction use, so that it compiles the
same specializations, in the order a fit needs them; then the sort of the
cells of larger forests (:func:`warm_cell_sort_kernel`), which a fit on 2,000
rows does not use. It writes nothing but numba's cache, and a lock file next
to it for its lifetime so that concurrent fits start one process, not one
each. A fit that needs one of its kernels before it is stored waits for it
(:mod:`treerank.aggregation._background_wait`: compiling it again would take at
least as long, on a core the process uses), at most a minute, and otherwise
compiles it itself, as it would without the process: the results never
depend on it.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from treerank.aggregation import _background_wait
from treerank.aggregation._background_wait import LOCK_NAME

__all__ = [
    "start_background_compilation",
    "warm_cell_sort_kernel",
    "warm_median_kernels",
    "warm_routing_kernels",
]

# set to "0" to never start the process
ENVIRONMENT_SWITCH = "TREERANK_BACKGROUND_COMPILE"
# a lock older than this is left over by a process that did not finish
_STALE_LOCK_SECONDS = 600.0
_started = False
# starts the command of its arguments in a new session, detached, and exits
_LAUNCHER = (
    "import os, subprocess, sys; "
    "subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, "
    "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True, "
    "start_new_session=os.name == 'posix'); "
    "os._exit(0)"
)


def warm_median_kernels(n_rows=2000, n_trees=100, n_leaves=40, seed=0):
    """Aggregate a synthetic forest by its Kendall median, and place new rows.

    Runs the out-of-bag sums of the choice of leaf scores, and the median's
    fit and prediction, on leaf ranks of ``n_trees``
    synthetic trees (each cuts a noisy common score into ``n_leaves``
    leaves, scored by rates), large enough for the compiled kernels
    (``n_rows * n_trees`` of at least 2^17 entries).

    Parameters
    ----------
    n_rows, n_trees, n_leaves : int
        Size of the synthetic forest.
    seed : int
        Seed of the synthetic leaf ranks.

    Returns
    -------
    aggregate : TreeAggregate
        The fitted aggregate (its trees are not real: it cannot score X).

    Examples
    --------
    >>> from treerank.aggregation._warmup import warm_median_kernels
    >>> warm_median_kernels(n_rows=200, n_trees=5, n_leaves=4).n_cells_ > 0
    True
    """
    from treerank.aggregation._leaf_tables import LeafTable
    from treerank.aggregation._tree_aggregate import TreeAggregate

    rng = np.random.default_rng(seed)
    score = rng.random(n_rows)
    leaf_ranks = np.empty((n_rows, n_trees), dtype=np.int32)
    cuts = np.linspace(0.0, 1.0, n_leaves + 1)[1:-1]
    for b in range(n_trees):
        noisy = score + 0.2 * rng.random(n_rows)
        leaf_ranks[:, b] = np.searchsorted(np.quantile(noisy, cuts), noisy)
    aggregate = TreeAggregate()
    aggregate._n_leaves = np.full(n_trees, n_leaves, dtype=np.int64)
    aggregate._monotonic = False
    values = [np.sort(rng.random(n_leaves))[::-1].copy() for _ in range(n_trees)]
    aggregate._set_leaf_values("rate", values)
    # the out-of-bag scores of the choice of leaf scores (int32 samples)
    samples = (rng.random((n_trees, n_rows)) < 0.6).astype(np.int32)
    LeafTable(values).sum_out_of_sample(leaf_ranks, samples)
    aggregate._aggregate(leaf_ranks, np.ones(n_rows), seed)
    # rows in cells the fit did not see
    new = leaf_ranks[rng.permutation(n_rows)]
    new[:, ::2] = new[::-1, ::2]
    aggregate._median_scores(new)
    return aggregate


def warm_cell_sort_kernel(n_rows=3000, n_trees=100, n_leaves=40, seed=0):
    """Find the cells of a synthetic forest too large for numpy's sort.

    The cells of a forest are sorted by a compiled kernel from 2^18 entries
    (cells x trees) on (numpy sorts smaller ones, such as a default forest's
    on 2,000 rows): this compiles it for the fits of more rows, after
    everything a first fit of 2,000 rows needs.

    Returns
    -------
    n_cells : int

    Examples
    --------
    >>> from treerank.aggregation._warmup import warm_cell_sort_kernel
    >>> warm_cell_sort_kernel(n_rows=300, n_trees=4, n_leaves=3) <= 3**4
    True
    """
    from treerank.aggregation._subpartition import distinct_leaf_rows

    rng = np.random.default_rng(seed)
    leaf_ranks = rng.integers(0, n_leaves, size=(n_rows, n_trees)).astype(np.int32)
    return int(distinct_leaf_rows(leaf_ranks)[2].shape[0])


def warm_routing_kernels(n_rows=64, n_features=3, n_trees=3, seed=0):
    """Route rows through hand-made one-split trees, as a fit and a scoring do.

    Compiles the kernels that build a tree's decision graph and route rows
    through it: by their bin codes (the training rows outside a tree's
    sample) and by their values (new rows), with the argument types a forest
    passes them.

    Parameters
    ----------
    n_rows, n_features, n_trees : int
        Size of the synthetic data and of the forest of identical stumps.
    seed : int
        Seed of the synthetic rows.

    Returns
    -------
    leaf_ranks : ndarray of int32 of shape (n_rows, n_trees)
        The leaf rank of each row in each stump, routed by value.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.aggregation._warmup import warm_routing_kernels
    >>> ranks = warm_routing_kernels(n_rows=8, n_trees=2)
    >>> ranks.shape, sorted(np.unique(ranks).tolist()) == [0, 1]
    ((8, 2), True)
    """
    from treerank.engine import Router, SplitRules, route_binned
    from treerank.tree._structure import RankingTreeStructure

    # one master split whose rule is one split on feature 0: left (the
    # better side) when x0 > 0, i.e. its rule's right leaf
    rules = SplitRules(
        feature=[0, -1, -1],
        threshold=[0.0, 0.0, 0.0],
        missing_left=[False, False, False],
        child_left=[1, -1, -1],
        child_right=[2, -1, -1],
        left_leaf=[False, False, True],
        improvement=[1.0, 0.0, 0.0],
        threshold_bin=[127, 0, 0],
    )
    structure = RankingTreeStructure(
        [1, -1, -1],
        [2, -1, -1],
        [2.0, 1.0, 1.0],
        [2.0, 1.0, 1.0],
        rules=rules,
        rule_start=[0, -1, -1],
        rule_stop=[3, -1, -1],
        n_features=n_features,
    )
    graph = structure.graph()
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 255, size=(n_rows, n_features), dtype=np.uint8)
    routed = np.full(n_rows, -1, dtype=np.int32)
    route_binned(graph, rules.category_sets, codes, np.arange(n_rows), routed)
    X = rng.normal(size=(n_rows, n_features))
    X[0, 0] = np.nan
    router = Router([graph] * n_trees, [rules.category_sets] * n_trees)
    return router.leaf_ranks(X)


def _median_kernels():
    from treerank.aggregation import _insertion, _kernels

    return (_kernels._window_sums_kernel, _insertion._region_full_kernel)


def _cold_cache_directory():
    """The cache directory of the median's kernels if none is compiled yet.

    None when one is compiled in this process or stored in numba's cache, or
    when there is no cache (caching disabled, no writable location).
    """
    directory = None
    for kernel in _median_kernels():
        if kernel.signatures:
            return None
        try:
            index = Path(kernel._cache._cache_file._index_path)
        except AttributeError:  # no cache: nothing to prepare
            return None
        if index.exists():
            return None
        directory = index.parent
    return directory


def _take_lock(directory):
    """Create the lock file (False if another process holds a recent one)."""
    lock = directory / LOCK_NAME
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if lock.exists() and time.time() - lock.stat().st_mtime > _STALE_LOCK_SECONDS:
            lock.unlink(missing_ok=True)
        descriptor = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except OSError:
        return False
    os.close(descriptor)
    return True


def start_background_compilation():
    """Start compiling the routing's and the median's kernels in a second process.

    Does nothing when ``TREERANK_BACKGROUND_COMPILE`` is ``"0"``, when it
    already ran in this process, when the kernels are compiled or cached,
    when numba does not cache, when another process is compiling them, or
    when no Python interpreter can be started; never raises.

    Returns
    -------
    started : bool
        Whether a process was started.
    """
    global _started
    if _started or os.environ.get(ENVIRONMENT_SWITCH, "1") == "0":
        return False
    _started = True
    if getattr(sys, "frozen", False) or not sys.executable:
        return False
    try:
        from numba.core import config

        if config.DISABLE_JIT:
            return False
        directory = _cold_cache_directory()
        if directory is None or not _take_lock(directory):
            return False
        # the directory holding this treerank package
        package_root = str(Path(__file__).resolve().parents[2])
        env = dict(os.environ)
        env[ENVIRONMENT_SWITCH] = "0"
    except Exception:  # an optimization must never fail a fit
        return False
    # the compiling process runs this module with this package first on its
    # path (before the working directory, which ``python -m`` would put
    # first); a short-lived launcher starts it and exits at once, so that
    # this process waits for the launcher only and holds no handle on a
    # running child (whose collection would warn that it still runs)
    code = (
        "import runpy, sys; sys.path.insert(0, sys.argv.pop(1)); "
        "runpy.run_module('treerank.aggregation._warmup', run_name='__main__')"
    )
    command = [sys.executable, "-c", code, package_root, str(directory)]
    try:
        launched = subprocess.run(
            [sys.executable, "-S", "-c", _LAUNCHER, *command],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            timeout=60,
            check=False,
        )
        if launched.returncode != 0:
            raise OSError("the launcher failed")
    except Exception:
        (directory / LOCK_NAME).unlink(missing_ok=True)
        return False
    _background_wait.started_in(directory)
    return True


def _main(argv):
    lock = Path(argv[1]) / LOCK_NAME if len(argv) > 1 else None
    try:
        # the routing first: a fit needs it after its first tree's growth,
        # and it compiles in about a second
        warm_routing_kernels()
        warm_median_kernels()
        # what the fits of more rows need, last
        warm_cell_sort_kernel()
    finally:
        if lock is not None:
            lock.unlink(missing_ok=True)


if __name__ == "__main__":
    _main(sys.argv)
