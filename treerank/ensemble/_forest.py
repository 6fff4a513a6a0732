"""RankingForest: bagged, feature-randomized ranking trees aggregated by a median.

The module holds the estimator's growth of its trees and the module-level
worker that grows one tree (it must be picklable for process-based and
distributed joblib backends). The aggregate of the fitted trees (the Kendall
median over the common subpartition, the mean of leaf scores or the
mass-weighted Borda count, the calibration and the scoring of new rows) is
the base class :class:`~treerank.ensemble.TreeAggregate`.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.parallel import Parallel, delayed

from treerank._compilation._background import start_background_compilation
from treerank._engine import merge_identical_rows, route_binned
from treerank.aggregation._kemeny import METHODS as KEMENY_METHODS
from treerank.aggregation._kernels import _use_compiled
from treerank.base import check_sparse_splitter, keep_background
from treerank.ensemble._multipartite import fit_graded_forest
from treerank.ensemble._tree_aggregate import TreeAggregate
from treerank.metrics._roc import roc_auc_score
from treerank.tree._classes import (
    MAX_FEATURES_CONSTRAINT,
    BinnedData,
    TreeRank,
    check_monotonic_cst,
    engine_growth_params,
    fitted_treerank,
    grow_engine_structure,
    resolve_min_samples_split,
)
from treerank.tree._default_splitter import DefaultLeafRankMixin
from treerank.tree._leafrank import LeafRank, resolve_leaf_size
from treerank.utils._categorical import (
    CATEGORICAL_FEATURES_CONSTRAINT,
    categorical_mask,
    category_labels,
    feature_matrix,
)
from treerank.utils._graded_target import is_graded_target
from treerank.utils._progress import ProgressBar
from treerank.utils._sklearn_compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    _fit_context,
)
from treerank.utils._sparse import is_sparse
from treerank.utils.validation import check_training_target

__all__ = ["RankingForest"]

_MAX_SEED = np.iinfo(np.int32).max
_MAX_DRAWS = 20


def _draw_sample(rng, n_samples, n_draw, bootstrap, y01, sample_weight):
    """Row multiplicities of one tree's training sample (both classes present)."""
    for _ in range(_MAX_DRAWS):
        if bootstrap:
            counts = np.bincount(rng.randint(0, n_samples, n_draw), minlength=n_samples)
        else:
            counts = np.zeros(n_samples, dtype=np.int64)
            counts[rng.choice(n_samples, n_draw, replace=False)] = 1
        # a class is present iff one of its rows has positive weight (boolean
        # masks: no masked copies of the weights, and no BLAS call, whose
        # threads would spin against the other trees' growth)
        held = sample_weight * counts > 0
        if np.any(held & (y01 == 1)) and np.any(held & (y01 == 0)):
            return counts
    raise ValueError(
        f"{_MAX_DRAWS} consecutive resamples of {n_draw} rows held a single class; "
        "increase max_samples."
    )


def _grow_tree(template, X, y01, sample_weight, seed, bootstrap, n_draw):
    """Grow one randomized ranking tree; runs in a joblib worker.

    Returns the fitted tree, the in-bag multiplicities and the rank of the leaf
    of every training row (used for the aggregation and out-of-bag scores).
    """
    rng = np.random.RandomState(seed)
    counts = _draw_sample(rng, X.shape[0], n_draw, bootstrap, y01, sample_weight)
    tree = clone(template).set_params(random_state=int(rng.randint(_MAX_SEED)))
    tree._fit(X, y01, sample_weight * counts, calibrate=False)
    leaf_ranks = tree.tree_.apply_rank(X).astype(np.int32)
    return tree, counts.astype(np.int32), leaf_ranks


def _grow_engine_tree(
    template, data, y01, sample_weight, seed, bootstrap, n_draw, params, merged=None
):
    """Grow one randomized ranking tree with the engine; runs in a thread.

    The in-sample rows take their leaves from the growth's final partition;
    only the out-of-sample rows are routed (through the bin codes). With
    ``merged`` (a :class:`~treerank._engine.MergedRows` and the merged rows'
    data and classes), the tree is grown on the merged rows: the tree of the
    rows themselves, grown faster (see :mod:`treerank._engine._row_merging`).
    """
    rng = np.random.RandomState(seed)
    counts = _draw_sample(
        rng, data.codes.shape[0], n_draw, bootstrap, y01, sample_weight
    )
    weights = sample_weight * counts
    multiplicity = None
    if merged is not None:
        groups, data, y01 = merged
        multiplicity = groups.sum_by_group((weights > 0).astype(np.float64))
        weights = groups.sum_by_group(weights)
    structure, leaf_ranks = grow_engine_structure(
        data,
        y01,
        weights,
        np.flatnonzero(weights > 0),
        template.leafrank,
        params,
        int(rng.randint(_MAX_SEED)),
        multiplicity,
    )
    tree = fitted_treerank(template, structure, np.array([0, 1]), data.n_features)
    if tree.tree_ is not structure:  # pruned: the growth's leaves are not final
        unrouted = np.arange(leaf_ranks.shape[0])
    else:
        unrouted = np.flatnonzero(leaf_ranks < 0)
    route_binned(
        tree.tree_.graph(),
        tree.tree_.rules.category_sets,
        data.codes,
        unrouted,
        leaf_ranks,
    )
    if merged is not None:
        leaf_ranks = leaf_ranks[merged[0].group]
    return tree, counts.astype(np.int32), leaf_ranks


def _merged_rows(data, y01, sample_weight):
    """Identical rows of ``data`` merged, with the merged rows' data and classes.

    None when the distinct rows are too many for the merge to pay.
    """
    groups = merge_identical_rows(data.codes, y01, np.flatnonzero(sample_weight > 0))
    if groups is None:
        return None
    merged_data = copy.copy(data)
    merged_data.codes = np.ascontiguousarray(data.codes[groups.representative])
    return groups, merged_data, np.asarray(y01)[groups.representative]


def _run(tasks, *, n_jobs, prefer, label, verbose):
    """Run joblib tasks, with a progress bar when verbose."""
    tasks = list(tasks)
    if not verbose:
        return Parallel(n_jobs=n_jobs, prefer=prefer)(tasks)
    bar = ProgressBar(len(tasks), label)
    try:
        parallel = Parallel(n_jobs=n_jobs, prefer=prefer, return_as="generator")
    except ValueError:  # the active backend cannot stream results
        results = Parallel(n_jobs=n_jobs, prefer=prefer)(tasks)
        bar.close()
        return results
    results = []
    for result in parallel(tasks):
        results.append(result)
        bar.update()
    bar.close()
    return results


class RankingForest(DefaultLeafRankMixin, TreeAggregate):
    """Ranking Forest: bagged randomized TreeRanks aggregated by a Kendall median.

    Each tree is a :class:`TreeRank` grown on a bootstrap sample with feature
    randomization inside its LeafRanks (``max_features``, FR2) and/or per
    master-tree node (``max_features_node``, FR1). The trees' leaves partition
    the input space; the cells of their common subpartition are the distinct
    vectors of leaf indices of the training points, and each tree ranks these
    cells (cells within one of its leaves are tied). With
    ``aggregation="median"`` the forest ranks the cells by a median of these
    bucket orders for the probabilistic Kendall tau distance (a weighted
    Kemeny consensus, the cell masses as item weights).

    A new point whose cell was seen at fit time gets its cell's consensus
    score; a point in an unseen cell is inserted where its Kendall cost
    against the trees is smallest, given its leaf in each tree. The score of
    a point depends on that point alone.

    Read more in the :ref:`User Guide <forest>`.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    max_samples : int, float or None, default=None
        Size of each tree's sample: an int, a fraction of ``n_samples``, or
        None for ``n_samples``.
    bootstrap : bool, default=True
        Draw the samples with replacement (bootstrap) or without (subsampling).
        Without bootstrap and with ``max_samples=None`` every tree sees all
        the data and only the feature randomization differs between trees.
    max_features : int, float, {"sqrt", "log2"} or None, default="sqrt"
        Features drawn at each split of a LeafRank's inner tree (FR2). Set on
        the splitter when it has a ``max_features`` parameter
        (:class:`LeafRank`, :class:`~treerank.tree.LinearLeafRank`,
        :class:`~treerank.tree.MixedLeafRank`), replacing its own (None keeps
        the splitter's own). A splitter without one
        (:class:`ClassifierLeafRank`, a custom splitter) is used as it is,
        whatever ``max_features``: it sees all the features of a node, and
        its trees are randomized by their samples and by ``max_features_node``
        only (see :ref:`leafrank_defaults`).
    max_features_node : int, float, {"sqrt", "log2"} or None, default=None
        Features drawn at each node of each master tree (FR1).
    max_depth : int or None, default=None
        Maximum depth of each tree. None grows each tree until
        ``min_samples_split`` or the LeafRank's leaf size stops it: deep trees,
        whose variance the aggregation averages out (chosen on the real-data
        benchmark, ``benchmarks/results/real_data.md``).
    min_samples_split : int or "auto", default="auto"
        Minimum number of rows of a node to split it. ``"auto"`` scales with
        the number n of training rows of positive weight:
        ``max(10, ceil(n / 250))``, so that a 400-row problem still grows
        trees of many leaves while no tree has more than about 500 leaves.
    leafrank : LeafRank-like or None, default=None
        Template of the splitter. None uses
        ``LeafRank(min_samples_leaf=5, criterion="gini")``: inner leaves of 5
        rows, much more flexible than a single TreeRank's default, since
        aggregation reduces the variance of the trees but not their bias (the
        differences from ``LeafRank()`` are listed in :ref:`leafrank_defaults`).
        ``max_features`` is then set on it. Its parameters can be tuned as
        ``leafrank__*`` even when ``leafrank`` is None (e.g. in a grid search),
        the others keeping the forest's values. A splitter given here is used
        with its own parameters (``max_features`` set as that parameter says):
        ``min_samples_leaf="auto"`` is resolved on the rows of a tree's
        sample.
    ccp_alpha : float, default=0.0
        Cost-complexity pruning of each tree (0: no pruning).
    leaf_scores : {"auto", "rank", "rate"}, default="auto"
        How each tree scores (and so orders) its leaves before the aggregation:

        - "rank": by the tree's left-to-right order, ``(K - r) / K`` for the
          leaf of rank r among K, the ranking TreeRank builds: the order of two
          leaves is decided by the split at their lowest common ancestor, which
          saw the data of both;
        - "rate": by the leaf's positive rate in the tree's sample, smoothed
          along its branch (each node's rate shrunk towards its parent's by m
          pseudo-rows; see :func:`~treerank.ensemble.rate_leaf_values`), m
          chosen out of bag among 0, 3, 10, 30 and 100 (30 without
          out-of-bag rows; ``rate_smoothing_``): every leaf is placed by its
          own data, as in a random forest. For the median, a tree ties the
          leaves whose rates fall in one step of ``0.1 sqrt(p (1 - p))``, the
          standard error of a rate estimated from 100 rows at the tree's base
          rate p: it orders two leaves only when their rates differ clearly;
        - "auto": the one of the two whose mean aggregation has the higher
          out-of-bag AUC (VUS for graded targets), "rank" on a tie or without
          out-of-bag rows.

        The rank order is the better one when the signal is weak, since the
        splits near the root decide it with much data; the rate, when the
        signal is strong and spread over several features, since one split
        cannot capture a level set of many features and the rank order never
        corrects it (see :ref:`forest`). The choice is in ``leaf_scores_``.
    aggregation : {"median", "mean", "borda"}, default="median"
        How the trees' rankings are combined:

        - "median": Kendall median over the common subpartition (above);
        - "mean": mean of the trees' leaf scores (``leaf_scores``), as the
          original R package (with rank scores) and usual bagging;
        - "borda": mean of the leaf mid-ranks under the training distribution
          (a mass-weighted Borda count).
    break_ties : bool, default=True
        With ``aggregation="median"``, whether the cells tied in a bucket of
        the median are ordered by the mean of the trees' leaf scores (the
        order between buckets stays the median's); False keeps the ties. A
        median of bucket orders can tie thousands of cells in a handful of
        buckets, and a tie counts one half of every pair it holds
        in the AUC; breaking the ties keeps the forest's resolution (see
        :ref:`forest`).
    aggregation_method : str, default="auto"
        Solver of the median (see :func:`treerank.aggregation.kemeny_median`).
        Its local search ("auto" beyond 7 cells) runs once, from the better
        of the Borda and mean-rank orders, moving cells within 3 buckets, at
        every size: its cost grows with the cells and the trees, so that the
        median of 5 trees costs less than that of 25 (the solver's extra
        starts and whole-order moves on small problems took 3 to 13 times as
        long on forests of 5 to 10 trees, for a 0.02-0.09% lower objective and
        the same test AUC).
    aggregation_max_iter : int, default=3
        Passes of the median's local search (each pass offers every cell a
        better bucket; at least 1). Later passes keep lowering the Kemeny
        objective (on 20,000 rows of ``make_classification`` and 100 trees the
        objective after 10 passes is 0.69 of Borda's, 0.99 after 3), mostly by
        merging buckets whose order the mean tie-break then decides, and they
        do not change test AUC: 3 passes minus 10, paired, -0.0001 +- 0.0005
        (34 real data sets, 5 folds) and -0.0001 +- 0.0002 / 0.0000 +- 0.0000
        (9 larger sets at 1,000-4,000 / 16,000 rows;
        ``benchmarks/results/median_passes.md``), while the 7 more took up
        to a third of the fit from a few thousand rows up
        (``benchmarks/results/predict.md``). Raise it for a closer Kemeny
        consensus (``consensus_objective_``).
    aggregation_tol : float, default=1e-5
        The local search also stops when a pass lowers the objective by less
        than this fraction of its value (0: only ``aggregation_max_iter``).
    n_jobs : int or None, default=None
        Trees grown in parallel through joblib (``-1`` for all cores). Any
        joblib backend works, e.g. Dask with
        ``joblib.parallel_config(backend="dask")``; the trees' seeds are drawn
        before dispatch, so the forest does not depend on the backend. The
        aggregation of a large forest (at least 2^18 rows x trees) runs its
        compiled passes in as many threads, with the same result.
    monotonic_cst : array-like of int of shape (n_features,), dict or None, \
default=None
        Monotonic constraints, as in :class:`TreeRank`: every tree is monotone,
        and so is the aggregated score (with ``aggregation="median"`` every
        point is then placed by the Kendall-optimal insertion, a monotone map
        of its leaves).
    categorical_features : "from_dtype", array-like or None, default="from_dtype"
        Which features are categorical, as in :class:`TreeRank` (see
        :class:`~treerank.utils.CategoryEncoder`).
    multipartite : {"stacked", "thresholds"}, default="stacked"
        Only for ``K > 2`` ordered grades (``y`` with more than two values),
        what each tree learns (see :ref:`multipartite`):

        - "stacked": one bipartite problem holding all the thresholds at once,
          a row of grade code ``c`` (``0..K-1``) being a positive of weight
          ``c`` and a negative of weight ``K - 1 - c``: its optimal scorers
          order by the expected grade and, under the monotone likelihood ratio
          condition, are optimal for the VUS; every tree learns from every
          grade;
        - "thresholds": tree ``b`` learns the single bipartite problem "grade
          >= g_k", ``k`` cycled over ``1..K-1`` (``tree_thresholds_``).

        Both are aggregated by ``aggregation`` over the training rows.
    random_state : int, RandomState instance or None, default=None
        Controls the samples, the feature randomization and the median solver.
    verbose : int, default=0
        If positive, show a progress bar while growing the trees and the time
        spent in the aggregation.

    Attributes
    ----------
    estimators_ : list of TreeRank
        The fitted trees.
    estimators_samples_ : ndarray of shape (n_estimators, n_samples)
        Multiplicity of each training row in each tree's sample.
    leaf_scores_ : {"rank", "rate"}
        How the trees score their leaves (``leaf_scores``, "auto" resolved).
    leaf_values_ : list of ndarray
        ``leaf_values_[b][r]``: the score of the leaf of rank r of tree b.
    rate_smoothing_ : float or None
        With ``leaf_scores_ == "rate"``: the pseudo-rows m of the smoothing of
        the leaf rates (chosen out of bag); None otherwise.
    oob_leaf_scores_ : dict
        With ``leaf_scores="auto"``: the out-of-bag AUC (VUS for graded
        targets) of each candidate ("rate" with its best smoothing), the
        criterion of the choice; NaN where undefined.
    oob_score_ : float
        Out-of-bag AUC (with bootstrap or subsampling): each training row is
        scored by the mean leaf score (``leaf_values_``) over the trees that
        did not see it (whatever ``aggregation``); NaN if that is undefined.
    oob_decision_function_ : ndarray of shape (n_samples,)
        Those out-of-bag scores (NaN for rows seen by every tree).
    consensus_objective_ : float or None
        For ``aggregation="median"``: the Kemeny objective of the consensus
        (see :func:`treerank.aggregation.kemeny_objective`); None otherwise.
    refined_objective_ : float or None
        The same objective for the final order of the cells, the median's
        ties broken (``break_ties=True``); None otherwise.
    borda_objective_ : float or None
        The same objective for the Borda (mean rank) order of the cells.
    n_cells_ : int or None
        Number of cells of the common subpartition (``"median"``).
    aggregation_time_ : float
        Seconds spent aggregating (common subpartition + median).
    feature_importances_ : ndarray of shape (n_features,)
        Mean of the trees' importances.
    classes_ : ndarray of shape (2,) or (n_grades,)
        The labels, negative first (the grades, lowest first, for ``K > 2``
        ordered grades).
    tree_thresholds_ : ndarray of shape (n_estimators,)
        Only for ``K > 2`` grades with ``multipartite="thresholds"``: the grade
        ``g`` of the problem "grade >= g" each tree learned.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    TreeRank : A single ranking tree.
    treerank.ensemble.TreeAggregate : The base class: the aggregation of
        the fitted trees and the scoring of new rows.
    treerank.aggregation.kemeny_median : The median solver.

    Notes
    -----
    With the default LeafRank, the trees grow on binned data, and training
    rows with the same bin codes and the same class are grown as one row of
    summed weight, counted with its multiplicity (when such groups are at most
    half of the rows): the same trees, grown in a time proportional to the
    distinct rows, which makes large tables of few categorical or small-integer
    columns fast. See :ref:`engine`.

    References
    ----------
    .. [1] S. Clémençon, M. Depecker and N. Vayatis, "Ranking forests",
       Journal of Machine Learning Research 14, 2013.

    Examples
    --------
    >>> from treerank import RankingForest
    >>> from treerank.datasets import make_nested_squares
    >>> X, y = make_nested_squares(1000, random_state=0)
    >>> forest = RankingForest(n_estimators=10, random_state=0).fit(X, y)
    >>> X_test, y_test = make_nested_squares(2000, random_state=1)
    >>> bool(forest.score(X_test, y_test) > 0.7)
    True
    """

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "max_samples": [
            Interval(Integral, 2, None, closed="left"),
            Interval(RealNotInt, 0.0, 1.0, closed="right"),
            None,
        ],
        "bootstrap": ["boolean"],
        "max_features": MAX_FEATURES_CONSTRAINT,
        "max_features_node": MAX_FEATURES_CONSTRAINT,
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        "min_samples_split": [
            Interval(Integral, 2, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "leafrank": [HasMethods(["fit", "goes_left"]), None],
        "ccp_alpha": [Interval(Real, 0.0, None, closed="left")],
        "leaf_scores": [StrOptions({"auto", "rank", "rate"})],
        "aggregation": [StrOptions({"median", "mean", "borda"})],
        "break_ties": ["boolean"],
        "multipartite": [StrOptions({"stacked", "thresholds"})],
        "aggregation_method": [StrOptions(set(KEMENY_METHODS))],
        "aggregation_max_iter": [Interval(Integral, 1, None, closed="left")],
        "aggregation_tol": [Interval(Real, 0.0, None, closed="left")],
        "n_jobs": [Integral, None],
        "monotonic_cst": ["array-like", dict, None],
        "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        n_estimators=100,
        max_samples=None,
        bootstrap=True,
        max_features="sqrt",
        max_features_node=None,
        max_depth=None,
        min_samples_split="auto",
        leafrank=None,
        ccp_alpha=0.0,
        leaf_scores="auto",
        aggregation="median",
        break_ties=True,
        aggregation_method="auto",
        aggregation_max_iter=3,
        aggregation_tol=1e-5,
        n_jobs=None,
        monotonic_cst=None,
        categorical_features="from_dtype",
        multipartite="stacked",
        random_state=None,
        verbose=0,
    ):
        super().__init__(  # the parameters of the aggregation
            leaf_scores=leaf_scores,
            aggregation=aggregation,
            break_ties=break_ties,
            aggregation_method=aggregation_method,
            aggregation_max_iter=aggregation_max_iter,
            aggregation_tol=aggregation_tol,
            n_jobs=n_jobs,
            random_state=random_state,
            verbose=verbose,
        )
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.bootstrap = bootstrap
        self.max_features = max_features
        self.max_features_node = max_features_node
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.leafrank = leafrank
        self.ccp_alpha = ccp_alpha
        self.monotonic_cst = monotonic_cst
        self.categorical_features = categorical_features
        self.multipartite = multipartite

    # ------------------------------------------------------------------
    # fitting
    # ------------------------------------------------------------------
    @staticmethod
    def _default_leafrank():
        """The splitter used when ``leafrank`` is None (before ``max_features``).

        ``LeafRank()`` but for the two values of the table of
        :ref:`leafrank_defaults`.
        """
        return LeafRank(min_samples_leaf=5, criterion="gini")

    def _tree_template(self):
        if self.leafrank is None:
            leafrank = self._default_leafrank()
        else:
            leafrank = clone(self.leafrank)
        # FR2 on the splitters that have it; the others see all the features
        has_fr2 = "max_features" in leafrank.get_params(deep=False)
        if has_fr2 and self.max_features is not None:
            leafrank.set_params(max_features=self.max_features)
        return TreeRank(
            max_depth=self.max_depth,
            min_samples_split=self.min_samples_split,
            leafrank=leafrank,
            max_features_node=self.max_features_node,
            ccp_alpha=self.ccp_alpha,
            monotonic_cst=self.monotonic_cst,
            categorical_features=self.categorical_features,
        )

    def _sample_size(self, n_samples):
        if self.max_samples is None:
            n_draw = n_samples
        elif isinstance(self.max_samples, Integral):
            if self.max_samples > n_samples and not self.bootstrap:
                raise ValueError(
                    f"max_samples={self.max_samples} exceeds n_samples={n_samples}; "
                    "without bootstrap a sample cannot be larger than the data."
                )
            n_draw = int(self.max_samples)
        else:
            n_draw = max(2, round(self.max_samples * n_samples))
        return n_draw

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Grow the trees and aggregate their rankings.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data: numbers, NaN for missing values (each split
            learns where they go), and categorical columns (see
            ``categorical_features``); infinity is refused. A scipy sparse
            matrix or array (entries not stored are 0.0, stored NaN are
            missing) is binned column by column, never densified: see
            :ref:`sparse_input`.
        y : array-like of shape (n_samples,)
            Binary labels (the larger value, or True, is positive; strings are
            refused as ambiguous), or more than two integer grades (higher
            first): what each tree then learns is set by ``multipartite``
            (by default every threshold "grade >= g" at once; with
            ``"thresholds"``, one threshold per tree, cycled over the trees;
            see :ref:`multipartite`).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights, multiplied by the bootstrap multiplicities.

        Returns
        -------
        self : RankingForest
        """
        # multipartite hook: K > 2 ordered grades (treerank.ensemble._multipartite)
        if is_graded_target(y):
            return fit_graded_forest(self, X, y, sample_weight)
        X, y = feature_matrix(self, X, y, reset=True, accept_sparse=True)
        y01, self.classes_, sample_weight = check_training_target(
            y, sample_weight, X.shape[0]
        )
        keep_background(self, X, sample_weight)
        rng = check_random_state(self.random_state)
        leaf_ranks, aggregation_seed = self._grow_trees(
            X, [y01], np.zeros(self.n_estimators, dtype=np.intp), sample_weight, rng
        )
        for tree in self.estimators_:
            tree.classes_ = self.classes_

        def oob_auc(scores, scored):
            if not (np.any(y01[scored] == 1) and np.any(y01[scored] == 0)):
                return np.nan
            return roc_auc_score(
                y01[scored], scores[scored], sample_weight=sample_weight[scored]
            )

        self._select_leaf_scores(leaf_ranks, sample_weight, oob_auc)
        self._timed_aggregation(leaf_ranks, sample_weight, aggregation_seed, X)
        raw = self._raw_scores(leaf_ranks)
        self._calibration = self._fit_calibration(raw, y01, sample_weight)
        return self

    def _grow_trees(self, X, targets, tree_target, sample_weight, rng):
        """Grow the trees; tree b learns the 0/1 labels ``targets[tree_target[b]]``.

        Installs ``estimators_``, ``estimators_samples_`` and the routing of
        the trees, and returns the leaf rank of every training row in every
        tree (in-sample rows from the growth, out-of-sample rows routed) and
        the seed of the aggregation. The seeds are drawn here, before
        dispatch, so that the forest depends neither on ``n_jobs`` nor on the
        joblib backend.
        """
        # a first fit: the routing's (and the median's) kernels compile in a
        # second process while this one compiles the growth's (no effect on
        # the result)
        start_background_compilation(
            median=self.aggregation == "median",
            small=not _use_compiled(X.shape[0], self.n_estimators),
        )
        template = self._tree_template()
        n_draw = self._sample_size(X.shape[0])
        # "auto" resolved once, on the rows of a tree's sample: all trees alike
        n_tree_rows = min(n_draw, np.count_nonzero(sample_weight > 0))
        template.min_samples_split = resolve_min_samples_split(
            template.min_samples_split, n_tree_rows
        )
        template.leafrank = resolve_leaf_size(template.leafrank, n_tree_rows)
        seeds = rng.randint(_MAX_SEED, size=self.n_estimators)
        aggregation_seed = int(rng.randint(_MAX_SEED))
        binning_seed = int(rng.randint(_MAX_SEED))
        categorical = categorical_mask(self)
        monotonic = check_monotonic_cst(self, X.shape[1])
        if is_sparse(X):
            check_sparse_splitter(template.leafrank)
        if not isinstance(template.leafrank, LeafRank) and (
            categorical is not None or monotonic is not None
        ):
            raise ValueError(
                "Categorical features and monotonic_cst need the default LeafRank; "
                f"{type(template.leafrank).__name__} would read category codes as "
                "numbers and cannot enforce monotonicity."
            )
        if isinstance(template.leafrank, LeafRank):
            # binned once, shared by all trees; the compiled growth releases
            # the GIL, so threads run trees in parallel without copies of X
            data = self._binned_data = BinnedData(
                X,
                np.flatnonzero(sample_weight > 0),
                template.leafrank.max_bins,
                binning_seed,
                categorical,
            )
            params = engine_growth_params(
                template.leafrank,
                max_depth=self.max_depth,
                min_samples_split=template.min_samples_split,
                max_features_node=self.max_features_node,
                n_features=X.shape[1],
                monotonic_cst=monotonic,
            )
            merged = {
                k: _merged_rows(data, targets[k], sample_weight)
                for k in np.unique(tree_target)
            }
            tasks = (
                delayed(_grow_engine_tree)(
                    template,
                    data,
                    targets[k],
                    sample_weight,
                    seed,
                    self.bootstrap,
                    n_draw,
                    params,
                    merged[k],
                )
                for seed, k in zip(seeds, tree_target)
            )
            prefer = "threads"
        else:
            # other LeafRanks run Python per node (they hold the GIL), so
            # processes parallelize them better than threads
            tasks = (
                delayed(_grow_tree)(
                    template, X, targets[k], sample_weight, seed, self.bootstrap, n_draw
                )
                for seed, k in zip(seeds, tree_target)
            )
            prefer = "processes"
        # `prefer` leaves the final say to an enclosing joblib.parallel_config
        results = _run(
            tasks,
            n_jobs=self.n_jobs,
            prefer=prefer,
            label="growing trees",
            verbose=self.verbose,
        )
        self._install_trees(
            [result[0] for result in results], monotonic=monotonic is not None
        )
        labels = category_labels(self)
        for tree in self.estimators_:
            tree._category_encoder = self._category_encoder
            if hasattr(self, "feature_names_in_"):
                tree.feature_names_in_ = self.feature_names_in_
            for structure in (tree.tree_, tree.full_tree_):
                if structure.rules is not None:
                    structure.category_labels = labels
        self.estimators_samples_ = np.stack([result[1] for result in results])
        leaf_ranks = np.column_stack([result[2] for result in results])
        return leaf_ranks, aggregation_seed
