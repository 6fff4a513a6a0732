"""RankingForest: bagged, feature-randomized ranking trees aggregated by a median.

The module holds the estimator and the module-level worker that grows one tree
(it must be picklable for process-based and distributed joblib backends). The
aggregation itself is delegated to :mod:`treerank.aggregation` (Kendall median
over the common subpartition) or to :mod:`treerank.ensemble._leaf_scores`
(mean of leaf scores, mass-weighted Borda).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
import time
from numbers import Integral, Real

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import check_is_fitted

from treerank.aggregation._kemeny import METHODS as KEMENY_METHODS
from treerank.base import (
    MonotoneCalibration,
    RankingMixin,
    calibrated_probability,
    midrank_quantiles,
    quantile_calibration,
)
from treerank.engine import (
    Router,
    bin_representatives,
    find_cell_corners,
    merge_identical_rows,
    route_binned,
    threshold_grids,
)
from treerank.ensemble._leaf_scores import (
    leaf_midranks,
    leaf_positions,
    rank_leaf_values,
    rate_leaf_values,
)
from treerank.ensemble._leaf_tables import LeafTable
from treerank.ensemble._multipartite import fit_graded_forest
from treerank.metrics._roc import roc_auc_score
from treerank.tree._classes import (
    MAX_FEATURES_CONSTRAINT,
    BinnedData,
    TreeRank,
    check_monotonic_cst,
    check_sparse_splitter,
    engine_growth_params,
    fitted_treerank,
    grow_engine_structure,
    resolve_min_samples_split,
)
from treerank.tree._default_splitter import DefaultLeafRankMixin
from treerank.tree._leafrank import LeafRank
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
from treerank.utils._sparse import canonical_sparse, is_sparse
from treerank.utils.validation import check_training_target

__all__ = ["RankingForest"]

_MAX_SEED = np.iinfo(np.int32).max
_MAX_DRAWS = 20
_INSERT_BLOCK = 1 << 16  # unseen rows placed together (bounds their memory)
RATE_SMOOTHING = 30.0
"""Pseudo-rows m of the smoothed leaf rates (``leaf_scores="rate"``), in units of
the mean weight of a training row."""
RATE_RESOLUTION = 0.05
"""Width of the steps in which a tree orders its leaves by rate for the median:
leaves whose rates fall in one step are tied (the standard error of a rate
near 1/2 estimated from 100 rows)."""


def _draw_sample(rng, n_samples, n_draw, bootstrap, y01, sample_weight):
    """Row multiplicities of one tree's training sample (both classes present)."""
    for _ in range(_MAX_DRAWS):
        if bootstrap:
            counts = np.bincount(rng.randint(0, n_samples, n_draw), minlength=n_samples)
        else:
            counts = np.zeros(n_samples, dtype=np.int64)
            counts[rng.choice(n_samples, n_draw, replace=False)] = 1
        weight = sample_weight * counts
        if weight[y01 == 1].sum() > 0 and weight[y01 == 0].sum() > 0:
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
    ``merged`` (a :class:`~treerank.engine.MergedRows` and the merged rows'
    data and classes), the tree is grown on the merged rows: the tree of the
    rows themselves, grown faster (see :mod:`treerank.engine._row_merging`).
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


def _tree_leaf_ranks(tree, X):
    """Rank of each row's leaf in one fitted tree (X already validated)."""
    return tree.tree_.apply_rank(X).astype(np.int32)


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


class RankingForest(DefaultLeafRankMixin, RankingMixin, ClassifierMixin, BaseEstimator):
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
        the LeafRank template, which must then have a ``max_features``
        parameter.
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
        ``LeafRank(max_depth=5, min_samples_leaf=5)``: much more flexible than
        a single TreeRank's default, since aggregation reduces the variance of
        the trees but not their bias. Its parameters can be tuned as
        ``leafrank__*`` even when ``leafrank`` is None (e.g. in a grid search).
    ccp_alpha : float, default=0.0
        Cost-complexity pruning of each tree (0: no pruning).
    leaf_scores : {"auto", "rank", "rate"}, default="auto"
        How each tree scores (and so orders) its leaves before the aggregation:

        - "rank": by the tree's left-to-right order, ``(K - r) / K`` for the
          leaf of rank r among K, the ranking TreeRank builds: the order of two
          leaves is decided by the split at their lowest common ancestor, which
          saw the data of both;
        - "rate": by the leaf's positive rate in the tree's sample, smoothed
          along its branch (each node's rate shrunk towards its parent's by 30
          pseudo-rows; see :func:`~treerank.ensemble.rate_leaf_values`): every
          leaf is placed by its own data, as in a random forest. For the
          median, a tree ties the leaves whose rates fall in one step of 0.05
          (the resolution of a rate estimated from 100 rows): it orders two
          leaves only when their rates differ clearly;
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
    tie_breaking : {"mean"} or None, default="mean"
        With ``aggregation="median"``, how the cells tied in a bucket of the
        median are ordered: ``"mean"`` by the mean of the trees' leaf scores
        (the order between buckets stays the median's), None keeps the
        ties. A median of bucket orders can tie thousands of cells in a
        handful of buckets, and a tie counts one half of every pair it holds
        in the AUC; breaking the ties keeps the forest's resolution (see
        :ref:`forest`).
    aggregation_method : str, default="auto"
        Solver of the median (see :func:`treerank.aggregation.kemeny_median`).
    aggregation_max_iter : int, default=10
        Passes of the median's local search (each pass offers every cell a
        better bucket; at least 1). Measured on 20,000 cells and 100 trees:
        Borda's Kemeny objective is lowered by 0.63% after 10 passes (1.9 s),
        0.81% after 15 and 0.88% at convergence (3.5 s); test AUC does not
        change measurably (``benchmarks/bench_forest.py``). Fewer passes
        leave many more buckets: on breast cancer (398 training rows) the
        median has 5 or 6 buckets after 10 passes, 27 to 57 after 3, for the
        same test AUC once the mean breaks the ties.
    aggregation_tol : float, default=1e-5
        The local search also stops when a pass lowers the objective by less
        than this fraction of its value (0: only ``aggregation_max_iter``).
    n_jobs : int or None, default=None
        Trees grown in parallel through joblib (``-1`` for all cores). Any
        joblib backend works, e.g. Dask with
        ``joblib.parallel_config(backend="dask")``; the trees' seeds are drawn
        before dispatch, so the forest does not depend on the backend.
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
    oob_leaf_scores_ : dict
        With ``leaf_scores="auto"``: the out-of-bag AUC (VUS for graded
        targets) of each candidate, the criterion of the choice; NaN where
        undefined.
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
        ties broken (``tie_breaking="mean"``); None otherwise.
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
        "tie_breaking": [StrOptions({"mean"}), None],
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
        tie_breaking="mean",
        aggregation_method="auto",
        aggregation_max_iter=10,
        aggregation_tol=1e-5,
        n_jobs=None,
        monotonic_cst=None,
        categorical_features="from_dtype",
        multipartite="stacked",
        random_state=None,
        verbose=0,
    ):
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.bootstrap = bootstrap
        self.max_features = max_features
        self.max_features_node = max_features_node
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.leafrank = leafrank
        self.ccp_alpha = ccp_alpha
        self.leaf_scores = leaf_scores
        self.aggregation = aggregation
        self.tie_breaking = tie_breaking
        self.aggregation_method = aggregation_method
        self.aggregation_max_iter = aggregation_max_iter
        self.aggregation_tol = aggregation_tol
        self.n_jobs = n_jobs
        self.monotonic_cst = monotonic_cst
        self.categorical_features = categorical_features
        self.multipartite = multipartite
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------
    # fitting
    # ------------------------------------------------------------------
    @staticmethod
    def _default_leafrank():
        """The splitter used when ``leafrank`` is None."""
        return LeafRank(max_depth=5, min_samples_leaf=5)

    def _tree_template(self):
        if self.leafrank is None:
            leafrank = self._default_leafrank()
        else:
            leafrank = clone(self.leafrank)
        if self.max_features is not None:
            if "max_features" not in leafrank.get_params(deep=False):
                raise ValueError(
                    f"max_features={self.max_features!r} needs a LeafRank with a "
                    f"max_features parameter; {type(leafrank).__name__} has none "
                    "(use max_features=None, or max_features_node for FR1)."
                )
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
        template = self._tree_template()
        n_draw = self._sample_size(X.shape[0])
        # "auto" resolved once, on the rows of a tree's sample: all trees alike
        template.min_samples_split = resolve_min_samples_split(
            template.min_samples_split,
            min(n_draw, np.count_nonzero(sample_weight > 0)),
        )
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
        self.estimators_ = [result[0] for result in results]
        self._build_router()
        labels = category_labels(self)
        for tree in self.estimators_:
            tree._category_encoder = self._category_encoder
            if hasattr(self, "feature_names_in_"):
                tree.feature_names_in_ = self.feature_names_in_
            for structure in (tree.tree_, tree.full_tree_):
                if structure.rules is not None:
                    structure.category_labels = labels
        self.estimators_samples_ = np.stack([result[1] for result in results])
        self._n_leaves = np.array([t.tree_.n_leaves for t in self.estimators_])
        self._monotonic = monotonic is not None
        leaf_ranks = np.column_stack([result[2] for result in results])
        return leaf_ranks, aggregation_seed

    def _timed_aggregation(self, leaf_ranks, sample_weight, seed, X):
        start = time.perf_counter()
        self._aggregate(leaf_ranks, sample_weight, seed)
        self.aggregation_time_ = time.perf_counter() - start
        self._cell_corners = None
        binned = self.__dict__.pop("_binned_data", None)
        if self.aggregation == "median":
            if (
                binned is not None
                and self._router is not None
                and binned.n_features <= self.n_estimators
            ):
                # the points of the cells are found when a model file needs
                # them, from the bin codes of a training row of each cell (the
                # trees may have been grown on other rows, e.g. stacked grades)
                rows = X[self._cell_rows]
                self._corner_source = (
                    binned.mapper.transform(rows),
                    binned.mapper.n_bins_,
                    binned.mapper.threshold_table_,
                )
            del self._cell_rows
        if self.verbose:
            print(f"aggregation ({self.aggregation}): {self.aggregation_time_:.2f} s")

    def _fit_calibration(self, raw, y01, sample_weight):
        """Probabilities of the training scores' levels, from out-of-bag data.

        The positive rate is fitted as a function of the quantile of the
        out-of-bag score (:func:`~treerank.base.quantile_calibration`), then
        read at the quantile of each distinct final score among the training
        scores: a monotone map of the final score whose values are not the
        optimism of the training fit. Without out-of-bag rows (no bootstrap,
        no subsampling), the training scores are calibrated in sample.
        """
        oob = self.oob_decision_function_
        scored = np.isfinite(oob) & (sample_weight > 0)
        if not (np.any(y01[scored] == 1) and np.any(y01[scored] == 0)):
            return MonotoneCalibration(raw, y01, sample_weight)
        quantiles = midrank_quantiles(oob[scored], oob[scored], sample_weight[scored])
        knots, proba = quantile_calibration(
            quantiles, y01[scored], sample_weight[scored]
        )
        keep = sample_weight > 0
        levels = np.unique(raw[keep])
        at_levels = midrank_quantiles(levels, raw[keep], sample_weight[keep])
        return MonotoneCalibration.from_levels(
            levels, calibrated_probability(at_levels, knots, proba)
        )

    def _select_leaf_scores(self, leaf_ranks, weight, oob_criterion, row_weight=1.0):
        """Choose how the trees score their leaves; set the out-of-bag scores.

        ``weight`` is the weight of the training rows, ``oob_criterion(scores,
        scored)`` the out-of-bag measure of scores on the rows ``scored`` (AUC,
        or VUS for grades). Each candidate is scored out of bag by the mean of
        its leaf values over the trees that did not see the row. A training
        row weighs ``row_weight`` times its weight in the trees (the number of
        grades minus one for stacked grades): the unit of the rates' smoothing.
        """
        positive = weight[weight > 0]
        self._rate_smoothing = RATE_SMOOTHING * row_weight * float(positive.mean())
        if self.leaf_scores == "rate" and self._monotonic:
            raise ValueError(
                "leaf_scores='rate' cannot keep the forest monotone: leaves "
                "ordered by their rates need not follow monotonic_cst. Use "
                "leaf_scores='rank' (or 'auto', which uses it with constraints)."
            )
        if self.leaf_scores == "auto":
            candidates = ["rank"] if self._monotonic else ["rank", "rate"]
        else:
            candidates = [self.leaf_scores]
        out_of_bag = self.estimators_samples_.T == 0  # (n_samples, n_trees)
        n_oob = out_of_bag.sum(axis=1)
        scored = (n_oob > 0) & (weight > 0)
        results = {}
        for kind in candidates:
            values = self._leaf_value_arrays(kind)
            total = np.zeros(leaf_ranks.shape[0])
            for b, tree_values in enumerate(values):
                total += np.where(out_of_bag[:, b], tree_values[leaf_ranks[:, b]], 0.0)
            with np.errstate(invalid="ignore", divide="ignore"):
                oob = np.where(n_oob > 0, total / n_oob, np.nan)
            criterion = oob_criterion(oob, scored) if scored.any() else np.nan
            results[kind] = (criterion, oob, values)
        chosen = candidates[0]
        for kind in candidates[1:]:  # strictly better only: ties keep "rank"
            if results[kind][0] > results[chosen][0]:
                chosen = kind
        self.oob_leaf_scores_ = {kind: float(results[kind][0]) for kind in candidates}
        self.oob_score_, self.oob_decision_function_, values = results[chosen]
        self.oob_score_ = float(self.oob_score_)
        self._set_leaf_values(chosen, values)

    def _leaf_value_arrays(self, kind):
        """The leaf values of every tree for a way of scoring leaves."""
        if kind == "rank":
            return [rank_leaf_values(k) for k in self._n_leaves]
        return [
            rate_leaf_values(tree.tree_, self._rate_smoothing)
            for tree in self.estimators_
        ]

    def _set_leaf_values(self, kind, values):
        """Install the leaf values and each tree's order of its leaves."""
        self.leaf_scores_ = kind
        self.leaf_values_ = values
        if kind == "rank":  # a tree's leaf rank is its position
            self._leaf_position_table = None
        else:
            # rates closer than their resolution are tied in the tree's order
            positions = [leaf_positions(np.floor(v / RATE_RESOLUTION)) for v in values]
            self._leaf_position_table = (
                np.concatenate(positions),
                np.concatenate([[0], np.cumsum(self._n_leaves[:-1])]).astype(np.int64),
            )

    def _tree_positions(self, b):
        """Position of each leaf of tree b (by rank) in the tree's order."""
        if self._leaf_position_table is None:
            return np.arange(self._n_leaves[b])
        table, offsets = self._leaf_position_table
        return table[offsets[b] : offsets[b] + self._n_leaves[b]]

    def _positions(self, leaf_ranks):
        """Each tree's position of each row's leaf in its order of its leaves."""
        if self._leaf_position_table is None:
            return leaf_ranks
        table, offsets = self._leaf_position_table
        positions = LeafTable.from_flat(table.astype(np.int32, copy=False), offsets)
        return positions.gather(leaf_ranks)

    def _aggregate(self, leaf_ranks, sample_weight, seed):
        self.consensus_objective_ = None
        self.refined_objective_ = None
        self.borda_objective_ = None
        self.n_cells_ = None
        if self.aggregation == "borda":
            self._midranks = []
            keep = sample_weight > 0
            for b in range(leaf_ranks.shape[1]):
                # the mid-ranks of the tree's positions, read at its leaves
                positions = self._tree_positions(b)
                masses = np.bincount(
                    positions[leaf_ranks[keep, b]],
                    weights=sample_weight[keep],
                    minlength=int(positions.max()) + 1,
                )
                self._midranks.append(leaf_midranks(masses)[positions])
        elif self.aggregation == "median":
            self._fit_median(leaf_ranks, sample_weight, seed)

    def _fit_median(self, leaf_ranks, sample_weight, seed):
        from treerank.aggregation import (
            CellIndex,
            ConsensusInserter,
            common_subpartition,
            kemeny_median,
            kemeny_objective,
        )

        keep = sample_weight > 0
        cells = common_subpartition(leaf_ranks[keep], sample_weight=sample_weight[keep])
        masses = cells.cell_weights
        # a cell is a tuple of leaves; each tree ranks it at its leaf's position
        rankings = self._cell_rankings(cells.cell_ranks, cells.rankings)
        median = kemeny_median(
            rankings,
            item_weights=masses,
            method=self.aggregation_method,
            random_state=seed,
            tol=self.aggregation_tol,
            max_iter=self.aggregation_max_iter,
        )
        self.consensus_objective_ = float(median.objective)
        borda = median.start_objectives.get("borda")
        if borda is None:  # a method that does not start from Borda
            order = kemeny_median(rankings, item_weights=masses, method="borda")
            borda = kemeny_objective(order.consensus, rankings, item_weights=masses)
        self.borda_objective_ = float(borda)
        self.n_cells_ = int(rankings.shape[1])
        self.cells_ = np.ascontiguousarray(cells.cell_ranks, dtype=np.int32)
        self.consensus_ = np.asarray(median.consensus, dtype=np.int64)
        self.cell_weights_ = np.asarray(masses, dtype=np.float64)
        self._cell_index = CellIndex(self.cells_)
        self._inserter = ConsensusInserter(
            self.consensus_, rankings, item_weights=masses
        )
        first = np.unique(cells.cell_index, return_index=True)[1]
        self._cell_rows = np.flatnonzero(keep)[first]  # a training row per cell
        self.refined_objective_ = None
        if self.tie_breaking == "mean":
            key = self._median_scores(self.cells_)  # the final order of the cells
            refined = np.unique(-key, return_inverse=True)[1].ravel()
            self.refined_objective_ = float(
                kemeny_objective(refined, rankings, item_weights=masses)
            )

    def _cell_rankings(self, cell_ranks, rankings=None):
        """Each tree's bucket order of the cells (shape (n_trees, n_cells)).

        ``cell_ranks`` holds each cell's leaf rank in each tree; ``rankings``,
        if given, is its transpose, reused when the trees rank leaves by rank.
        """
        if self._leaf_position_table is None and rankings is not None:
            return rankings
        return np.ascontiguousarray(self._positions(cell_ranks).T, dtype=np.int64)

    @property
    def _cell_corners(self):
        """A point of each cell as corner codes, or None (found on first use).

        At fit the forest keeps the bin codes of one training row per cell;
        the corners (:meth:`_find_cell_corners`) are computed from them only
        when they are asked for (by :func:`~treerank.model_io.save_model`),
        and the codes are then dropped.
        """
        source = self.__dict__.pop("_corner_source", None)
        if source is not None:
            codes, n_bins, thresholds = source
            values = bin_representatives(codes, n_bins, thresholds)
            self.__dict__["_corners"] = self._find_cell_corners(
                values, np.arange(values.shape[0])
            )
        return self.__dict__.get("_corners")

    @_cell_corners.setter
    def _cell_corners(self, corners):
        self.__dict__.pop("_corner_source", None)
        self.__dict__["_corners"] = corners

    def _find_cell_corners(self, X, rows):
        """A point of each cell, as corner codes (:mod:`treerank.engine._cell_corners`).

        ``rows[c]`` is a training row of cell c. Model files store these few
        bytes per feature instead of one leaf per tree. None unless the trees
        are engine trees with numeric decisions only and the features are fewer
        than the trees. Row chunks run in threads (the kernel releases the GIL).
        """
        router = self._router
        if router is None or X.shape[1] > self.n_estimators:
            return None
        grids = threshold_grids(router, X.shape[1])
        if grids is None:
            return None
        n_chunks = min(effective_n_jobs(self.n_jobs), max(1, rows.shape[0] // 10_000))
        chunks = np.array_split(rows, n_chunks)
        parts = Parallel(n_jobs=n_chunks, prefer="threads")(
            delayed(find_cell_corners)(router, X[chunk], grids) for chunk in chunks
        )
        codes = np.concatenate(parts)
        return codes.astype(np.uint16) if codes.max(initial=0) < 2**16 else codes

    # ------------------------------------------------------------------
    # scoring
    # ------------------------------------------------------------------
    def _build_router(self):
        """Concatenate the trees' decision graphs (engine trees only)."""
        self._router = None
        if all(tree.tree_.rules is not None for tree in self.estimators_):
            self._router = Router(
                [tree.tree_.graph() for tree in self.estimators_],
                [tree.tree_.rules.category_sets for tree in self.estimators_],
            )

    def _leaf_ranks(self, X):
        """Leaf rank of each row in each tree, shape (n_samples, n_estimators).

        Engine trees are routed together in compiled code, in row chunks run
        in threads (the kernel releases the GIL); each row's leaves depend on
        that row alone.
        """
        router = self._router
        if is_sparse(X):
            X = canonical_sparse(X, "csr")  # cheap row slices
        if router is None:
            columns = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(_tree_leaf_ranks)(tree, X) for tree in self.estimators_
            )
            return np.column_stack(columns)
        out = np.empty((X.shape[0], router.n_trees), dtype=np.int32)
        n_chunks = min(effective_n_jobs(self.n_jobs), max(1, X.shape[0] // 10_000))
        if n_chunks <= 1:
            return router.leaf_ranks(X, out=out)
        chunks = np.array_split(np.arange(X.shape[0]), n_chunks)
        parts = Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(router.leaf_ranks)(X[chunk]) for chunk in chunks
        )
        for chunk, part in zip(chunks, parts):
            out[chunk] = part
        return out

    def _raw_scores(self, leaf_ranks):
        # compiled means, the same operations as mean_leaf_values and
        # mean_borda_scores (the trees added in order)
        if self.aggregation == "mean":
            return LeafTable(self.leaf_values_).mean(leaf_ranks)
        if self.aggregation == "borda":
            return LeafTable(self._midranks).mean(leaf_ranks)
        return self._median_scores(leaf_ranks)

    def _median_scores(self, leaf_ranks):
        """Scores in the median's order, ties broken by the mean leaf score.

        A row of a seen cell takes its cell's consensus bucket, a row of an
        unseen cell its Kendall-optimal position (a bucket q, or a new bucket
        between q - 1 and q, at q - 1/2); with monotonic constraints every row
        is placed by the insertion, which is monotone in its leaves. The score
        is ``-2 * position``, plus, with ``tie_breaking="mean"``, the mean
        leaf value (in [0, 1]) mapped into [-0.45, 0.45]: the order between
        buckets is the median's, and within a bucket the mean's.
        """
        rows = np.ascontiguousarray(leaf_ranks, dtype=np.int32)
        if getattr(self, "_monotonic", False):
            position = self._insert(rows)
        else:
            cell = self._cell_index.lookup(rows)
            position = np.empty(rows.shape[0], dtype=np.float64)
            seen = cell >= 0
            position[seen] = self.consensus_[cell[seen]]
            if not seen.all():
                unseen = np.flatnonzero(~seen)
                position[unseen] = self._insert(rows, unseen)
        scores = -2.0 * position
        if self.tie_breaking == "mean":  # leaf values lie in [0, 1]
            scores += 0.9 * (LeafTable(self.leaf_values_).mean(rows) - 0.5)
        return scores

    def _insert(self, rows, index=None):
        """Consensus positions of the unseen cells ``rows[index]`` (all rows if None).

        Each row is placed independently of the others, so the rows go in
        pieces of at most ``_INSERT_BLOCK`` (bounded memory: a piece's leaf
        positions are gathered when it is placed), in threads for large
        batches (the insertion kernels release the GIL).
        """
        # with monotonic constraints, the bisection keeps the placement monotone
        search = "bisect" if getattr(self, "_monotonic", False) else "gallop"
        if index is None:
            index = np.arange(rows.shape[0])
        n_rows = index.shape[0]
        n_jobs = min(effective_n_jobs(self.n_jobs), max(1, n_rows // 2000))
        n_pieces = max(n_jobs, -(-n_rows // _INSERT_BLOCK), 1)

        def place(piece):
            positions = self._positions(rows[piece])
            return self._inserter.positions(
                np.ascontiguousarray(positions, dtype=np.int32), search=search
            )

        pieces = np.array_split(index, n_pieces)
        if n_jobs <= 1:
            parts = [place(piece) for piece in pieces]
        else:
            parts = Parallel(n_jobs=self.n_jobs, prefer="threads")(
                delayed(place)(piece) for piece in pieces
            )
        return np.concatenate(parts)

    def _validate_X_predict(self, X):
        check_is_fitted(self)
        X = feature_matrix(self, X, reset=False, accept_sparse=True)
        if is_sparse(X):
            leafrank = self.leafrank
            check_sparse_splitter(
                self._default_leafrank() if leafrank is None else leafrank
            )
        return X

    def decision_function(self, X):
        """Aggregated ranking score of each sample (higher = ranked first).

        A monotone function of the aggregated ranking (for ``"median"``: minus
        the position in the consensus bucket order), shifted so that the
        score is positive exactly where :meth:`predict` returns the positive
        class. The score of a sample depends on that sample alone.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A sparse X is never densified whole (see :ref:`sparse_input`).

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        X = self._validate_X_predict(X)
        raw = self._raw_scores(self._leaf_ranks(X))
        return raw - self._calibration.threshold_

    def predict_proba(self, X):
        """Calibrated ``P(Y = 1 | x)``: isotonic in the aggregated score.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A sparse X is never densified whole (see :ref:`sparse_input`).

        Returns
        -------
        proba : ndarray of shape (n_samples, 2) or (n_samples, n_grades)
            For ``K > 2`` grades, the probability of each grade (lowest
            first), from ``P(Y >= g | score)`` calibrated per threshold.
        """
        X = self._validate_X_predict(X)
        raw = self._raw_scores(self._leaf_ranks(X))
        if self.classes_.shape[0] > 2:  # multipartite hook: (n_samples, K) grades
            return self._calibration.predict_proba(raw)
        eta = self._calibration.predict_proba(raw)
        return np.column_stack([1.0 - eta, eta])

    def apply(self, X):
        """Rank of each sample's leaf in each tree (0 = the tree's best leaf).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A sparse X is never densified whole (see :ref:`sparse_input`).

        Returns
        -------
        leaf_ranks : ndarray of int of shape (n_samples, n_estimators)
        """
        X = self._validate_X_predict(X)
        return self._leaf_ranks(X)

    @property
    def feature_importances_(self):
        """Mean of the trees' normalized importances."""
        check_is_fitted(self)
        return np.mean([tree.feature_importances_ for tree in self.estimators_], axis=0)
