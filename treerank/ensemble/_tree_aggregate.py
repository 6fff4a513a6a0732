"""TreeAggregate: fitted ranking trees combined into one ranking score.

The trees of a :class:`~treerank.RankingForest`, and the threshold trees of a
:class:`~treerank.TreeRank` fitted on ``K > 2`` ordered grades, are scored
together the same way: each row is routed to its leaf in every tree (all trees
at once in compiled code), each tree scores or orders its leaves
(:mod:`treerank.ensemble._leaf_scores`), and the trees' rankings are
combined, by the Kendall median of their bucket orders over the cells of the
common subpartition of their leaves (:mod:`treerank.aggregation`), by the
mean of their leaf scores or by a mass-weighted Borda count; the combined
score is calibrated into probabilities (:mod:`treerank.calibration`).

:class:`TreeAggregate` holds that aggregate of already fitted trees: the
aggregation of the trees' rankings of the training rows, and the scoring of
new rows. It never grows a tree and imports neither :mod:`treerank.tree` nor
the forest: the trees are read through their fitted structure
(``tree.tree_``). :class:`~treerank.RankingForest` extends it with the growth
of its randomized trees; a graded :class:`~treerank.TreeRank` builds one from
its threshold trees (its ``consensus_``).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import time

import numpy as np
from joblib import effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.parallel import Parallel, delayed

from treerank._compilation._helper import wait_for_background_compilation
from treerank._engine import (
    Router,
    bin_representatives,
    find_cell_corners,
    threshold_grids,
)
from treerank.aggregation._cell_index import CellIndex, _lookup
from treerank.aggregation._insertion import ConsensusInserter
from treerank.aggregation._insertion_kernels import _region_full_kernel
from treerank.aggregation._kemeny import (
    _DEFAULT_WINDOW,
    kemeny_median,
    kemeny_objective,
)
from treerank.aggregation._subpartition import distinct_leaf_rows
from treerank.aggregation._threads import kernel_threads
from treerank.base import RankingMixin, check_sparse_splitter
from treerank.calibration import (
    GradedCalibration,
    MonotoneCalibration,
    calibrated_probability,
    midrank_quantiles,
    quantile_calibration,
)
from treerank.ensemble._leaf_scores import (
    leaf_midranks,
    leaf_positions,
    rank_leaf_values,
    rate_leaf_values,
)
from treerank.ensemble._leaf_tables import LeafTable
from treerank.metrics._vus import volume_under_surface
from treerank.utils._categorical import feature_matrix
from treerank.utils._sparse import canonical_sparse, is_sparse

__all__ = ["TreeAggregate", "aggregate_graded"]

_INSERT_BLOCK = 1 << 16  # unseen rows placed together (bounds their memory)
# refined_objective_ not computed yet
_PENDING = "pending"
RATE_SMOOTHINGS = (30.0, 10.0, 100.0, 3.0, 0.0)
"""Pseudo-rows m of the smoothed leaf rates (``leaf_scores="rate"``), in units of
the mean weight of a training row: the candidates the out-of-bag rows choose
from, the first when there are none (and on a tie). Little smoothing suits
low-noise data (each small leaf's own rate is right), much smoothing noisy
data; chosen out of bag on the development collection it gained 0.0002-0.0003
mean AUC on each of its three suites over a fixed m = 30
(``benchmarks/results/development_study.md``)."""
RATE_RESOLUTION = 0.05
"""Width of the steps in which a tree orders its leaves by rate for the median:
leaves whose rates fall in one step are tied (the standard error of a rate
near 1/2 estimated from 100 rows)."""


def _rate_resolution(tree):
    """The step in which a tree orders its leaves by rate for the median.

    :data:`RATE_RESOLUTION` at a base rate of one half, scaled by the standard
    deviation ``sqrt(p (1 - p))`` of a row's class at the tree's base rate p
    (its root's share of positive weight): the standard error of a rate
    estimated from 100 rows where the positives are rare is smaller than at
    p = 1/2, and a fixed step would tie nearly all the leaves of a tree whose
    rates all lie below 0.05. (A base rate that rounds to 0 or 1 under
    extreme weights gives the smallest positive step: no ties.)
    """
    structure = tree.tree_
    p = structure.n_pos[0] / (structure.n_pos[0] + structure.n_neg[0])
    step = RATE_RESOLUTION * 2.0 * np.sqrt(p * (1.0 - p))
    return max(float(step), float(np.finfo(np.float64).tiny))


def _tree_leaf_ranks(tree, X):
    """Rank of each row's leaf in one fitted tree (X already validated)."""
    return tree.tree_.apply_rank(X).astype(np.int32)


def aggregate_graded(forest, X, leaf_ranks, levels, codes, grades, weight, seed):
    """Aggregate trees grown on graded data (already in ``forest``), calibrate.

    The aggregation is the aggregate's own (median, mean or Borda), on the
    trees' leaf ranks of the training rows; the leaf scores are chosen by
    their out-of-bag volume under the ROC surface (VUS), and the aggregated
    score is calibrated per threshold
    (:class:`~treerank.calibration.GradedCalibration`).
    ``levels`` are the trees' threshold codes (None for stacked trees).

    Parameters
    ----------
    forest : TreeAggregate
        Its trees installed (``estimators_``, their router, ``_n_leaves``,
        ``estimators_samples_``); aggregated and calibrated in place.
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The training rows, as checked by ``feature_matrix``.
    leaf_ranks : ndarray of int32 of shape (n_samples, n_trees)
        The leaf rank of every training row in every tree.
    levels : ndarray of int of shape (n_trees,) or None
        The grade code ``k`` of the threshold "grade >= g_k" of every tree.
    codes : ndarray of int of shape (n_samples,)
        Grade codes ``0..K-1``.
    grades : ndarray of shape (K,)
        The grades, lowest first.
    weight : ndarray of shape (n_samples,)
        Sample weights.
    seed : int
        Seed of the median solver.

    Returns
    -------
    forest : TreeAggregate
    """
    forest.classes_ = grades
    for tree in forest.estimators_:
        tree.classes_ = np.array([0, 1])
    if levels is not None:
        forest.tree_thresholds_ = grades[levels]
    _select_graded_leaf_scores(
        forest, leaf_ranks, codes, grades, weight, stacked=levels is None
    )
    forest._timed_aggregation(leaf_ranks, weight, seed, X)
    raw = forest._raw_scores(leaf_ranks)
    forest._calibration = GradedCalibration(raw, codes, weight, grades.shape[0])
    return forest


def _select_graded_leaf_scores(forest, leaf_ranks, codes, grades, weight, stacked):
    """The leaf scores chosen, and the out-of-bag scores, by their VUS."""

    def oob_vus(scores, scored):
        if np.unique(codes[scored]).shape[0] != grades.shape[0]:
            return np.nan
        return volume_under_surface(
            codes[scored], scores[scored], sample_weight=weight[scored]
        )

    # a stacked row of the trees weighs 1 / (K - 1) of its training row
    forest._select_leaf_scores(
        leaf_ranks,
        weight,
        oob_vus,
        row_weight=grades.shape[0] - 1.0 if stacked else 1.0,
    )


class TreeAggregate(RankingMixin, ClassifierMixin, BaseEstimator):
    """Fitted ranking trees aggregated into one score: median, mean or Borda.

    The fitted form shared by :class:`~treerank.RankingForest` (which extends
    it with the growth of its trees) and by the ``consensus_`` of a
    :class:`~treerank.TreeRank` fitted on ``K > 2`` ordered grades (the Kendall
    median of its threshold trees). It has no ``fit`` of its own: it is built
    from trees already fitted, by these estimators.

    The trees' leaves partition the input space; the cells of their common
    subpartition are the distinct vectors of leaf indices of the training
    rows, and each tree ranks these cells (cells within one of its leaves are
    tied). With ``aggregation="median"`` the cells are ranked by a median of
    these bucket orders for the probabilistic Kendall tau distance (a
    weighted Kemeny consensus, the cell masses as item weights); a new row
    of a seen cell gets its cell's position, a row of an unseen cell is
    inserted where its Kendall cost against the trees is smallest. The score
    of a row depends on that row alone.

    Read more in the :ref:`User Guide <forest>`.

    Parameters
    ----------
    leaf_scores : {"auto", "rank", "rate"}, default="auto"
        How each tree scores its leaves, with the default of
        :class:`~treerank.RankingForest` (see there): ``"auto"`` chooses by
        the out-of-bag AUC, ``"rank"`` without out-of-bag rows. The
        ``consensus_`` of a graded :class:`~treerank.TreeRank` is built with
        ``"rank"``: its threshold trees are fitted on all the rows, so no row
        is out of bag and ``"auto"`` would compute the rates only to choose
        ``"rank"``.
    aggregation : {"median", "mean", "borda"}, default="median"
        How the trees' rankings are combined.
    break_ties : bool, default=True
        Order the cells tied in a bucket of the median by the mean of the
        trees' leaf scores (see :class:`~treerank.RankingForest`).
    aggregation_method : str, default="auto"
        Solver of the median (see :func:`treerank.aggregation.kemeny_median`);
        its local search ("auto" beyond 7 cells) runs once, from the better of
        the Borda and mean-rank orders, with moves within 3 buckets, at every
        size.
    aggregation_max_iter : int, default=3
        Passes of the median's local search (see :class:`~treerank.RankingForest`).
    aggregation_tol : float, default=1e-5
        Relative decrease of the objective below which the search stops.
    n_jobs : int or None, default=None
        Threads routing and placing the rows of a large batch, and running
        the median's compiled passes on a large forest (the same result).
    random_state : int or None, default=None
        The seed the median was solved with (recorded with the aggregate).
    verbose : int, default=0
        If positive, print the time spent in the aggregation.

    Attributes
    ----------
    estimators_ : list of TreeRank
        The fitted trees.
    leaf_scores_ : {"rank", "rate"}
        How the trees score their leaves.
    leaf_values_ : list of ndarray
        ``leaf_values_[b][r]``: the score of the leaf of rank r of tree b.
    consensus_ : ndarray of int64 of shape (n_cells,)
        For ``aggregation="median"``: the bucket of each cell in the median.
    cells_ : ndarray of int32 of shape (n_cells, n_trees)
        For ``aggregation="median"``: each cell's leaf rank in each tree.
    cell_weights_ : ndarray of shape (n_cells,)
        The training mass of each cell.
    n_cells_ : int or None
        Number of cells of the common subpartition (``"median"``).
    consensus_objective_, refined_objective_, borda_objective_ : float or None
        Kemeny objectives of the median, of its order with the ties broken,
        and of the Borda order (``"median"`` only). ``refined_objective_``, a
        diagnostic, is computed on first access (up to a fifth of the
        aggregation's time when it was computed at every fit).
    aggregation_time_ : float
        Seconds spent aggregating.
    classes_ : ndarray of shape (2,) or (n_grades,)
        The labels, negative first (the grades, lowest first).
    tree_thresholds_ : ndarray of shape (n_trees,)
        For trees of ``K > 2`` grades each learning one threshold: the grade
        ``g`` of the problem "grade >= g" of every tree.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    treerank.RankingForest : Grows randomized trees and aggregates them.
    treerank.aggregation.kemeny_median : The median solver.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank import TreeRank
    >>> from treerank.ensemble import TreeAggregate
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(300, 2))
    >>> y = np.digitize(X[:, 0] + 0.5 * rng.normal(size=300), [-0.5, 0.5])
    >>> tree = TreeRank(max_depth=3, random_state=0).fit(X, y)
    >>> median = tree.consensus_  # the Kendall median of two threshold trees
    >>> isinstance(median, TreeAggregate), len(median.estimators_)
    (True, 2)
    >>> bool(np.array_equal(median.decision_function(X), tree.decision_function(X)))
    True
    """

    def __init__(
        self,
        *,
        leaf_scores="auto",
        aggregation="median",
        break_ties=True,
        aggregation_method="auto",
        aggregation_max_iter=3,
        aggregation_tol=1e-5,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.leaf_scores = leaf_scores
        self.aggregation = aggregation
        self.break_ties = break_ties
        self.aggregation_method = aggregation_method
        self.aggregation_max_iter = aggregation_max_iter
        self.aggregation_tol = aggregation_tol
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # ------------------------------------------------------------------
    # aggregation of the trees' rankings of the training rows
    # ------------------------------------------------------------------
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
                and binned.n_features <= len(self.estimators_)
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
        out-of-bag score (:func:`~treerank.calibration.quantile_calibration`), then
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
        row_unit = row_weight * float(positive.mean())
        if self.leaf_scores == "rate" and self._monotonic:
            raise ValueError(
                "leaf_scores='rate' cannot keep the forest monotone: leaves "
                "ordered by their rates need not follow monotonic_cst. Use "
                "leaf_scores='rank' (or 'auto', which uses it with constraints)."
            )
        if self.leaf_scores == "auto":
            kinds = ["rank"] if self._monotonic else ["rank", "rate"]
        else:
            kinds = [self.leaf_scores]
        n_oob = np.count_nonzero(self.estimators_samples_ == 0, axis=0)
        scored = (n_oob > 0) & (weight > 0)
        # (kind, smoothing in rows): the rates with each smoothing of the grid
        # when out-of-bag rows can choose between them, else the first
        smoothings = RATE_SMOOTHINGS if scored.any() else RATE_SMOOTHINGS[:1]
        candidates = [
            (kind, m)
            for kind in kinds
            for m in (smoothings if kind == "rate" else [0.0])
        ]
        results = {}
        for kind, m in candidates:
            self._rate_smoothing = m * row_unit
            values = self._leaf_value_arrays(kind)
            total = LeafTable(values).sum_out_of_sample(
                leaf_ranks,
                self.estimators_samples_,
                n_threads=self._threads(leaf_ranks),
            )
            with np.errstate(invalid="ignore", divide="ignore"):
                oob = np.where(n_oob > 0, total / n_oob, np.nan)
            criterion = oob_criterion(oob, scored) if scored.any() else np.nan
            results[(kind, m)] = (criterion, oob, values)
        chosen = candidates[0]
        for candidate in candidates[1:]:  # strictly better only: ties keep the first
            if results[candidate][0] > results[chosen][0]:
                chosen = candidate
        best = {}
        for (kind, m), result in results.items():
            if kind not in best or result[0] > results[(kind, best[kind])][0]:
                best[kind] = m
        self.oob_leaf_scores_ = {
            kind: float(results[(kind, m)][0]) for kind, m in best.items()
        }
        kind, m = chosen
        self.rate_smoothing_ = float(m) if kind == "rate" else None
        self._rate_smoothing = m * row_unit
        self.oob_score_, self.oob_decision_function_, values = results[chosen]
        self.oob_score_ = float(self.oob_score_)
        self._set_leaf_values(kind, values)

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
            trees = getattr(self, "estimators_", None)  # None: a synthetic aggregate
            steps = (
                [RATE_RESOLUTION] * len(values)
                if trees is None
                else [_rate_resolution(tree) for tree in trees]
            )
            positions = [
                leaf_positions(np.floor(v / step)) for v, step in zip(values, steps)
            ]
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
        return self._position_table().gather(leaf_ranks)

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
        keep = sample_weight > 0
        leaves, _, first, masses = distinct_leaf_rows(
            leaf_ranks[keep], sample_weight=sample_weight[keep]
        )
        cells = np.ascontiguousarray(leaves[first], dtype=np.int32)
        # a cell is a tuple of leaves; each tree ranks it at its leaf's position
        rankings = self._cell_rankings(cells)
        median = kemeny_median(
            rankings,
            item_weights=masses,
            method=self.aggregation_method,
            random_state=seed,
            tol=self.aggregation_tol,
            max_iter=self.aggregation_max_iter,
            # one search with moves of a few buckets at every size: the cost
            # grows with cells and trees (a few trees' small problems took
            # five searches over all buckets, more than 25 trees' median)
            window=_DEFAULT_WINDOW,
            multi_start=False,
            n_jobs=self.n_jobs,
        )
        self.consensus_objective_ = float(median.objective)
        borda = median.start_objectives.get("borda")
        if borda is None:  # a method that does not start from Borda
            order = kemeny_median(rankings, item_weights=masses, method="borda")
            borda = kemeny_objective(order.consensus, rankings, item_weights=masses)
        self.borda_objective_ = float(borda)
        self.n_cells_ = int(rankings.shape[1])
        self.cells_ = cells
        self.consensus_ = np.asarray(median.consensus, dtype=np.int64)
        self.cell_weights_ = np.asarray(masses, dtype=np.float64)
        self._cell_index = CellIndex(self.cells_)
        self._inserter = ConsensusInserter(
            self.consensus_, rankings, item_weights=masses
        )
        self._cell_rows = np.flatnonzero(keep)[first]  # a training row per cell
        # the objective of the order with the ties broken by the mean, on
        # first access (see refined_objective_)
        self._refined_objective = _PENDING if self.break_ties else None

    @property
    def refined_objective_(self):
        """Kemeny objective of the median's order with the ties broken."""
        try:
            value = self.__dict__["_refined_objective"]
        except KeyError:
            raise AttributeError("refined_objective_") from None
        if isinstance(value, str):  # _PENDING
            # the order of the cells that scoring gives them with the ties
            # broken by the mean (as fitted, whatever break_ties is now)
            key = self._median_scores(self.cells_, break_ties=True)
            refined = np.unique(-key, return_inverse=True)[1].ravel()
            value = float(
                kemeny_objective(
                    refined, self._inserter.rankings, item_weights=self.cell_weights_
                )
            )
            self.__dict__["_refined_objective"] = value
        return value

    @refined_objective_.setter
    def refined_objective_(self, value):
        self.__dict__["_refined_objective"] = value

    def _cell_rankings(self, cell_ranks):
        """Each tree's bucket order of the cells (shape (n_trees, n_cells)):
        the position of each cell's leaf in the tree's order of its leaves."""
        return self._position_table().gather_transposed(
            cell_ranks, n_threads=self._threads(cell_ranks)
        )

    def _threads(self, leaf_ranks):
        """Threads for the compiled passes over a (rows, trees) array of leaf
        ranks (one below the size where threads pay, see ``_threads``)."""
        return kernel_threads(leaf_ranks.shape[0], leaf_ranks.shape[1], self.n_jobs)

    def _position_table(self):
        """The trees' leaf positions by leaf rank, as a :class:`LeafTable`
        (the identity when the trees rank leaves by rank)."""
        if self._leaf_position_table is None:
            identity = np.arange(int(np.max(self._n_leaves)), dtype=np.int32)
            return LeafTable.from_flat(identity, np.zeros(len(self._n_leaves)))
        values, offsets = self._leaf_position_table
        return LeafTable.from_flat(values.astype(np.int32, copy=False), offsets)

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
        """A point of each cell, as corner codes (``_engine._cell_corners``).

        ``rows[c]`` is a training row of cell c. Model files store these few
        bytes per feature instead of one leaf per tree. None unless the trees
        are engine trees with numeric decisions only and the features are fewer
        than the trees. Row chunks run in threads (the kernel releases the GIL).
        """
        router = self._router
        if router is None or X.shape[1] > len(self.estimators_):
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
    def _install_trees(self, trees, *, monotonic):
        """Make ``trees`` the aggregate's: their router, leaf counts, monotonicity.

        ``monotonic``: the trees were grown under monotonic constraints, so
        every row is placed by the monotone insertion (:meth:`_median_scores`).
        """
        self.estimators_ = list(trees)
        self._n_leaves = np.array([tree.tree_.n_leaves for tree in self.estimators_])
        self._monotonic = bool(monotonic)
        self._build_router()

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

    def _median_scores(self, leaf_ranks, break_ties=None):
        """Scores in the median's order, ties broken by the mean leaf score.

        A row of a seen cell takes its cell's consensus bucket, a row of an
        unseen cell its Kendall-optimal position (a bucket q, or a new bucket
        between q - 1 and q, at q - 1/2); with monotonic constraints every row
        is placed by the insertion, which is monotone in its leaves. The score
        is ``-2 * position``, plus, with ``break_ties``, the mean leaf value
        (in [0, 1]) mapped into [-0.45, 0.45]: the order between buckets is
        the median's, and within a bucket the mean's. The argument
        ``break_ties`` overrides the parameter (None: as set).
        """
        rows = np.ascontiguousarray(leaf_ranks, dtype=np.int32)
        wait_for_background_compilation(_lookup)
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
        if break_ties is None:
            break_ties = self.break_ties
        if break_ties:  # leaf values lie in [0, 1]
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
        wait_for_background_compilation(_region_full_kernel)
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

    def _check_fitted(self):
        """Refuse an aggregate without trees (scikit-learn's message).

        Not :func:`~sklearn.utils.validation.check_is_fitted`, which refuses
        an object without ``fit``: a graded TreeRank's consensus has none.
        """
        if not hasattr(self, "estimators_"):
            raise NotFittedError(
                f"This {type(self).__name__} instance is not fitted yet. Call "
                "'fit' with appropriate arguments before using this estimator."
            )

    def _validate_X_predict(self, X):
        self._check_fitted()
        X = feature_matrix(self, X, reset=False, accept_sparse=True)
        if is_sparse(X):  # the trees share one splitter template
            check_sparse_splitter(self.estimators_[0]._leafrank_template())
        return X

    def _aggregated_scores(self, X):
        """The trees' aggregated scores of the rows of X (validated here)."""
        return self._raw_scores(self._leaf_ranks(self._validate_X_predict(X)))

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
        return self._aggregated_scores(X) - self._calibration.threshold_

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
        raw = self._aggregated_scores(X)
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
        self._check_fitted()
        return np.mean([tree.feature_importances_ for tree in self.estimators_], axis=0)
