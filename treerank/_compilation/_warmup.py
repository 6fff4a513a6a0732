"""Compile the kernels a first fit needs after the growth's, in a second process.

This module, run as a script by
:func:`~treerank._compilation._background.start_background_compilation`,
compiles them into numba's cache in the order a fit needs them (see that
module), through the same code a fit and a prediction use, so that it
compiles the same specializations:

- ``routing``: rows routed through hand-made one-split trees, by bin codes
  and by values (:func:`warm_routing_kernels`), and the leaf tables'
  out-of-bag sums and means (:func:`warm_leaf_table_kernels`);
- ``median``: a synthetic forest of 2,000 rows and 100 trees aggregated by its
  median and new rows placed in it (:func:`warm_median_kernels`);
- ``small-median``: the same on 300 rows, a small exact problem (the same
  search and insertion kernels as large ones; its objective and starts in
  numpy);
- ``cell-sort``: the sort of the cells of forests of more than 4,096 cells
  (:func:`warm_cell_sort_kernel`), which a fit on 2,000 rows does not use.

After each step, and before each compilation (when numba has stored the
kernels compiled before it in its cache), it writes the markers of the kernels
it compiled (or loaded from the cache) in the directory of its lock
(:func:`~treerank._compilation._markers.record_compiled`), which a fit waiting
for one of them watches. ``treerank precompile`` runs the same steps in its own
process (:mod:`treerank._precompile`), after a growth step
(:func:`warm_growth_kernels`) that the background process leaves to the fit.

Its arguments are the directory of the lock and markers (the lock is removed
when it ends) and the parts to compile, in that order (all when none is
given).
"""

import sys
from pathlib import Path

import numpy as np

from treerank._compilation._background import PARTS
from treerank._compilation._cache import caching_disabled, declared_kernels
from treerank._compilation._helper import LOCK_NAME
from treerank._compilation._markers import record_compiled

__all__ = [
    "STEPS",
    "warm_cell_sort_kernel",
    "warm_growth_kernels",
    "warm_leaf_table_kernels",
    "warm_median_kernels",
    "warm_routing_kernels",
]


def warm_median_kernels(n_rows=2000, n_trees=100, n_leaves=40, seed=0, checkpoint=None):
    """Aggregate a synthetic forest by its Kendall median, and place new rows.

    Runs the median's fit and prediction, on leaf ranks of ``n_trees``
    synthetic trees (each cuts a noisy common score into ``n_leaves``
    leaves, scored by rates), large enough for the compiled kernels
    (``n_rows * n_trees`` of at least 2^17 entries).

    Parameters
    ----------
    n_rows, n_trees, n_leaves : int
        Size of the synthetic forest.
    seed : int
        Seed of the synthetic leaf ranks.
    checkpoint : callable or None, default=None
        Called without arguments between the fit (the median's search) and
        the placement of new rows, whose kernels a fit needs later.

    Returns
    -------
    aggregate : TreeAggregate
        The fitted aggregate (its trees are not real: it cannot score X).

    Examples
    --------
    >>> from treerank._compilation._warmup import warm_median_kernels
    >>> warm_median_kernels(n_rows=200, n_trees=5, n_leaves=4).n_cells_ > 0
    True
    """
    from treerank.ensemble._tree_aggregate import TreeAggregate

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
    aggregate._aggregate(leaf_ranks, np.ones(n_rows), seed)
    if checkpoint is not None:
        checkpoint()
    # rows in cells the fit did not see
    new = leaf_ranks[rng.permutation(n_rows)]
    new[:, ::2] = new[::-1, ::2]
    aggregate._median_scores(new)
    return aggregate


def warm_leaf_table_kernels(n_rows=200, n_trees=5, n_leaves=4, seed=0):
    """Sum and average leaf values as a forest's fit and scoring do.

    Compiles the leaf tables' kernels with the argument types a forest passes
    them: the out-of-bag sums of its choice of leaf scores (int32 samples)
    and the mean over the trees of the values of the rows' leaves.

    Returns
    -------
    mean : ndarray of shape (n_rows,)
        The mean leaf value of each synthetic row.

    Examples
    --------
    >>> from treerank._compilation._warmup import warm_leaf_table_kernels
    >>> mean = warm_leaf_table_kernels(n_rows=10)
    >>> mean.shape, bool(((0 <= mean) & (mean <= 1)).all())
    ((10,), True)
    """
    from treerank.ensemble._leaf_tables import LeafTable

    rng = np.random.default_rng(seed)
    leaf_ranks = rng.integers(0, n_leaves, size=(n_rows, n_trees)).astype(np.int32)
    table = LeafTable([rng.random(n_leaves) for _ in range(n_trees)])
    samples = (rng.random((n_trees, n_rows)) < 0.6).astype(np.int32)
    table.sum_out_of_sample(leaf_ranks, samples)
    return table.mean(leaf_ranks)


def warm_cell_sort_kernel(n_rows=5000, n_trees=100, n_leaves=40, seed=0):
    """Find the cells of a synthetic forest too large for numpy's sort.

    The cells of a forest are sorted by a compiled kernel from 4,097 cells on
    (numpy sorts fewer, such as a default forest's on 2,000 rows): this
    compiles it for the fits of more rows, after everything a first fit of
    2,000 rows needs.

    Returns
    -------
    n_cells : int

    Examples
    --------
    >>> from treerank._compilation._warmup import warm_cell_sort_kernel
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
    >>> from treerank._compilation._warmup import warm_routing_kernels
    >>> ranks = warm_routing_kernels(n_rows=8, n_trees=2)
    >>> ranks.shape, sorted(np.unique(ranks).tolist()) == [0, 1]
    ((8, 2), True)
    """
    from treerank._engine import Router, SplitRules, route_binned
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


def warm_growth_kernels(n_rows=300, n_features=4, seed=0):
    """Fit and score a small default tree and forest, as a first fit does.

    Compiles the kernels whose specializations depend on the trees being
    grown (binning, histograms, split search, the LeafRank's and the master
    tree's growth), which the background process leaves to the fit, on
    numeric data with missing values.

    Parameters
    ----------
    n_rows, n_features : int
        Size of the synthetic data.
    seed : int
        Seed of the synthetic data.

    Returns
    -------
    scores : ndarray of shape (n_rows,)
        The forest's ``decision_function`` on the training rows.

    Examples
    --------
    >>> from treerank._compilation._warmup import warm_growth_kernels
    >>> warm_growth_kernels(n_rows=80, n_features=2).shape
    (80,)
    """
    from treerank._config import config_context
    from treerank.ensemble import RankingForest
    from treerank.tree import TreeRank

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features))
    y = (X[:, 0] + 0.5 * rng.normal(size=n_rows) > 0).astype(int)
    X[::17, -1] = np.nan
    with config_context(background_compilation=False):
        TreeRank(random_state=seed).fit(X, y).decision_function(X)
        forest = RankingForest(n_estimators=10, random_state=seed).fit(X, y)
        return forest.decision_function(X)


def _small_median(checkpoint=None):
    # a small exact problem: the whole local search in one kernel
    warm_median_kernels(n_rows=300, n_trees=100, n_leaves=20, checkpoint=checkpoint)


# the steps of each part, in order; each step takes a checkpoint (called
# within the step when part of its kernels are needed earlier than the rest)
STEPS = {
    "routing": (
        lambda checkpoint=None: warm_routing_kernels(),
        lambda checkpoint=None: warm_leaf_table_kernels(),
    ),
    "median": (lambda checkpoint=None: warm_median_kernels(checkpoint=checkpoint),),
    "small-median": (_small_median,),
    "cell-sort": (lambda checkpoint=None: warm_cell_sort_kernel(),),
}


def _main(argv):
    directory = Path(argv[1]) if len(argv) > 1 else None
    lock = directory / LOCK_NAME if directory is not None else None
    recorded = set()  # the ids of the kernels marked

    def checkpoint():
        # the markers of what is now compiled, and so cached
        if directory is None or caching_disabled():
            return
        kernels = [k for k in declared_kernels() if id(k) not in recorded]
        kernels = [k for k in kernels if k.signatures]
        try:
            record_compiled(directory, kernels)
        except OSError:  # the fit then waits until this process ends
            return
        recorded.update(id(k) for k in kernels)

    from numba.core import event

    class MarkBeforeEachCompilation(event.Listener):
        # numba stores a kernel in its cache after its compilation event ends,
        # before the next compilation starts: when one starts, every kernel
        # compiled so far is cached, and marked now, so that a waiting fit
        # goes on without waiting for the end of the step
        def on_start(self, ev):
            checkpoint()

        def on_end(self, ev):
            pass

    try:
        with event.install_listener("numba:compile", MarkBeforeEachCompilation()):
            # in the order asked (the order a fit needs them)
            for part in argv[2:] or PARTS:
                for step in STEPS[part]:
                    step(checkpoint=checkpoint)
                    checkpoint()
    finally:
        if lock is not None:
            lock.unlink(missing_ok=True)


if __name__ == "__main__":
    _main(sys.argv)
