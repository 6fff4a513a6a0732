"""TreeRank: the recursive ranking tree, as a scikit-learn estimator."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from treerank._compilation._background import start_background_compilation
from treerank._engine import BinMapper, grow_ranking_tree
from treerank.base import RankingMixin, check_sparse_splitter, keep_background
from treerank.calibration import (
    calibrate_buckets,
    calibrated_probability,
    quantile_calibration,
)
from treerank.ensemble._tree_aggregate import TreeAggregate, aggregate_graded
from treerank.metrics._roc import roc_auc_score
from treerank.tree._default_splitter import DefaultLeafRankMixin
from treerank.tree._growing import grow_ranking_tree as grow_node_by_node
from treerank.tree._growing import structure_from_grown
from treerank.tree._leafrank import (
    LeafRank,
    resolve_leaf_size,
    resolve_max_features,
)
from treerank.tree._pruning import (
    collapse_thresholds,
    penalized_subtree,
    structural_penalty,
)
from treerank.utils._categorical import (
    CATEGORICAL_FEATURES_CONSTRAINT,
    categorical_mask,
    category_labels,
    feature_matrix,
)
from treerank.utils._graded_target import (
    check_graded_training_target,
    cumulative_targets,
    is_graded_target,
)
from treerank.utils._sklearn_compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    _fit_context,
)
from treerank.utils._sparse import canonical_sparse, is_sparse
from treerank.utils.validation import check_training_target

__all__ = ["TreeRank"]

# ``max_features``-like parameters: as in scikit-learn's trees
MAX_FEATURES_CONSTRAINT = [
    Interval(Integral, 1, None, closed="left"),
    Interval(RealNotInt, 0.0, 1.0, closed="right"),
    StrOptions({"sqrt", "log2"}),
    None,
]


_MAX_SEED = np.iinfo(np.int32).max


class BinnedData:
    """Training data binned once for the engine, shared by every tree grown on it.

    Parameters
    ----------
    X : ndarray of float64 or sparse matrix of shape (n_samples, n_features)
        A sparse X is binned column by column (:class:`~treerank._engine.BinMapper`).
    rows : ndarray of int
        The rows the bins are computed from (those of positive weight).
    max_bins : int
    seed : int
        Seed of the binning's subsample (used above 200,000 rows).
    categorical : ndarray of bool of shape (n_features,) or None, default=None
        Features holding category codes.
    """

    def __init__(self, X, rows, max_bins, seed, categorical=None):
        if is_sparse(X):
            X = canonical_sparse(X, "csc")  # read column by column
        self.mapper = BinMapper(
            max_bins=max_bins, random_state=seed, categorical=categorical
        ).fit(X if rows.shape[0] == X.shape[0] else X[rows])
        self.codes = self.mapper.transform(X)
        self.n_features = X.shape[1]


def resolve_min_samples_split(min_samples_split, n_samples):
    """The minimum number of rows to split a master node, for ``n_samples`` rows.

    ``"auto"`` scales with the data: ``max(10, ceil(n_samples / 250))``, so
    that small problems grow deep trees (a node of 10 rows can be split) while
    a tree never has more than about 500 leaves, whatever the number of rows.

    Examples
    --------
    >>> from treerank.tree._classes import resolve_min_samples_split
    >>> [resolve_min_samples_split("auto", n) for n in (400, 20_000, 1_000_000)]
    [10, 80, 4000]
    >>> resolve_min_samples_split(50, 20_000)
    50
    """
    if isinstance(min_samples_split, str):
        return max(10, -(-int(n_samples) // 250))
    return int(min_samples_split)


def check_monotonic_cst(estimator, n_features):
    """The estimator's ``monotonic_cst`` as int8 per feature, or None.

    Accepts an array of -1/0/+1 per feature, or a dict mapping feature
    indices or names (X with column names) to -1/0/+1; categorical features
    cannot be constrained.
    """
    spec = estimator.monotonic_cst
    if spec is None:
        return None
    names = getattr(estimator, "feature_names_in_", None)
    if isinstance(spec, dict):
        values = np.zeros(n_features, dtype=np.int64)
        index = {} if names is None else {str(n): j for j, n in enumerate(names)}
        for key, value in spec.items():
            if isinstance(key, str):
                if key not in index:
                    raise ValueError(
                        f"monotonic_cst names an unknown feature {key!r}"
                        + (
                            "; X has no column names."
                            if names is None
                            else f"; the features are {list(index)}."
                        )
                    )
                j = index[key]
            elif isinstance(key, Integral) and 0 <= key < n_features:
                j = int(key)
            else:
                raise ValueError(
                    f"monotonic_cst keys must be feature names or indices in "
                    f"[0, {n_features - 1}]; got {key!r}."
                )
            values[j] = value
    else:
        values = np.asarray(spec)
        if values.shape != (n_features,):
            raise ValueError(
                f"monotonic_cst must have one entry per feature ({n_features}); "
                f"got shape {values.shape}."
            )
    if not np.all(np.isin(values, (-1, 0, 1))):
        raise ValueError(
            f"monotonic_cst must hold -1, 0 or 1; got {np.unique(values).tolist()}."
        )
    values = values.astype(np.int8)
    categorical = categorical_mask(estimator)
    if categorical is not None and np.any(categorical & (values != 0)):
        raise ValueError(
            "monotonic_cst constrains a categorical feature (index "
            f"{int(np.flatnonzero(categorical & (values != 0))[0])}): categories "
            "have no order."
        )
    return values if np.any(values != 0) else None


def engine_growth_params(
    leafrank,
    *,
    max_depth,
    min_samples_split,
    max_features_node,
    n_features,
    monotonic_cst=None,
):
    """The engine's parameters of a ranking tree with a :class:`LeafRank`."""
    n_node = resolve_max_features(max_features_node, n_features, "max_features_node")
    return leafrank._growth_params(
        n_features if n_node is None else n_node,
        max_depth=max_depth,
        min_samples_split=min_samples_split,
        max_features_node=n_node,
        monotonic_cst=None if monotonic_cst is None else tuple(monotonic_cst.tolist()),
    )


def _leaf_quantiles(structure):
    """Quantile of each leaf (rank order) under the tree's training distribution."""
    leaves = structure.leaves
    mass = structure.n_pos[leaves] + structure.n_neg[leaves]
    mass = mass / mass.sum()
    return 1.0 - np.cumsum(mass) + 0.5 * mass  # mass ranked below, ties half


def fitted_treerank(template, structure, classes, n_features_in):
    """A fitted copy of the TreeRank ``template`` whose master tree is ``structure``.

    The tree is pruned at the template's ``ccp_alpha`` (no other pruning).
    Used by the forest, which grows its trees through the engine directly.
    """
    tree = copy.copy(template)
    tree.classes_ = classes
    tree.n_features_in_ = n_features_in
    tree.full_tree_ = structure
    tree.ccp_alpha_ = float(template.ccp_alpha)
    tree._set_tree(tree._prune_structure(tree.ccp_alpha_))
    return tree


def grow_engine_structure(
    data, y01, weights, rows, leafrank, params, seed, multiplicity=None
):
    """Grow a ranking tree on binned data; returns (structure, leaf rank of rows).

    ``multiplicity`` (optional): the number of training rows each row of
    ``data`` stands for (see :func:`treerank._engine.grow_ranking_tree`).
    """
    rows = rows[weights[rows] > 0]
    grown = grow_ranking_tree(
        data.codes, y01, weights, rows, data.mapper, params, seed, multiplicity
    )
    structure = structure_from_grown(grown, data.n_features, 2**leafrank.max_depth - 1)
    return structure, grown.leaf_rank_of_row


class TreeRank(DefaultLeafRankMixin, RankingMixin, ClassifierMixin, BaseEstimator):
    """TreeRank: a recursive ranking tree for bipartite ranking.

    The input space is split recursively by a LeafRank into a left (better)
    and a right (worse) child; reading the leaves from left to right gives the
    ranking, best first. Each split is a cost-sensitive classification inside
    the node, which maximizes the AUC increment of the split. The tree can be
    pruned by cost-complexity (weakest link) on the AUC, chosen by
    cross-validation on held-out folds or by a structural penalty.

    Read more in the :ref:`User Guide <treerank>`.

    Parameters
    ----------
    max_depth : int or None, default=None
        Maximum depth of the master tree (the root has depth 0), so at most
        ``2 ** max_depth`` leaves. None grows until the other rules stop.
    min_samples_split : int or "auto", default="auto"
        Minimum number of training rows (with positive weight) in a node to
        split it. ``"auto"`` scales with the n training rows:
        ``max(10, ceil(n / 250))``, so that a 400-row problem can grow a tree
        of many leaves and no tree has more than about 500 leaves.
    leafrank : LeafRank-like or None, default=None
        Template of the splitter, cloned at every node: :class:`LeafRank`,
        :class:`ClassifierLeafRank`, or any object following the LeafRank
        protocol. None is ``LeafRank()``, with its own defaults (depth 5, the
        Youden criterion, inner leaves of ``min_samples_leaf="auto"`` rows,
        resolved on the tree's training rows; see :ref:`leafrank_defaults`):
        ``TreeRank(leafrank=LeafRank())`` is the same estimator. Measured
        against a CART tuned by cross-validation on 2,000 rows, 10 training
        sets: within 0.002 AUC on nested squares and on a Gaussian design
        whose optimal scorer is linear (``benchmarks/bench_single_tree.py``).
        The default splitter's parameters can be tuned as ``leafrank__*`` even
        when ``leafrank`` is None (e.g. in a grid search); the others keep
        their defaults, ``"auto"`` leaf size included.
    max_features_node : int, float, {"sqrt", "log2"} or None, default=None
        Number of features drawn at random at each node of the master tree,
        on which the node's LeafRank is fitted (feature randomization FR1).
        None uses all features.
    pruning : {"cv", "penalty"} or None, default=None
        How to select a subtree of the fully grown master tree:

        - None: keep the tree pruned at ``ccp_alpha``;
        - "cv": choose ``lambda`` in ``AUC(T) - lambda * #leaves(T)`` by
          stratified K-fold cross-validation, each fold's AUC measured on its
          held-out part (ties go to the larger lambda);
        - "penalty": maximize ``AUC(T) - penalty_scale * pen(#leaves(T), n)``
          with the distribution-free structural penalty (see Notes), exactly
          over all admissible subtrees.
    cv : int, cross-validation generator or iterable, default=5
        Folds for ``pruning="cv"`` (an int gives stratified K-fold, shuffled
        with ``random_state``).
    ccp_alpha : float, default=0.0
        Complexity parameter ``lambda`` of the cost-complexity pruning, used
        when ``pruning`` is None (0 keeps the full tree).
    penalty_scale : float, default=1.0
        Multiplier of the structural penalty (``pruning="penalty"``).
    monotonic_cst : array-like of int of shape (n_features,), dict or None, \
default=None
        Monotonic constraints: +1 (the score never decreases when the feature
        increases, all else equal), -1 (never increases) or 0 (free), per
        feature or as a dict from feature names or indices; None for none.
        Each split's better side is then monotone in the constrained features
        (see :ref:`engine`), which makes the whole ranking monotone.
    categorical_features : "from_dtype", array-like or None, default="from_dtype"
        Which features are categorical (split by subsets of categories, see
        :class:`~treerank.utils.CategoryEncoder`): ``"from_dtype"`` takes the
        pandas columns of dtype category, string or object; or indices, names
        or a boolean mask; None for none. At most 255 categories per feature;
        a category unseen in fit is a missing value at prediction.
    random_state : int, RandomState instance or None, default=None
        Controls the feature draws of the LeafRanks (FR1 and FR2) and the
        cross-validation folds.

    Attributes
    ----------
    tree_ : RankingTreeStructure
        The (pruned) ranking tree as flat arrays: children, weighted class
        counts, ROC segments, per-split ``dauc``, leaf ranks.
    leaf_proba_ : ndarray of shape (n_leaves,)
        Calibrated ``P(Y = 1 | leaf)`` of each leaf in rank order (isotonic,
        non-increasing).
    n_positive_leaves_ : int
        Number of leading leaves predicted positive (``leaf_proba_ > 1/2``).
    full_tree_ : RankingTreeStructure
        The fully grown master tree, before pruning.
    ccp_alpha_ : float or None
        The ``lambda`` applied (None for ``pruning="penalty"``).
    cv_results_ : dict
        For ``pruning="cv"``: ``candidates`` (one lambda per subtree of the
        master tree's path, the geometric midpoint of the lambdas selecting it),
        ``mean_test_auc`` and ``std_test_auc`` (held-out AUC over the folds; the
        last candidate, the root, is scored as each fold tree's root: 1/2),
        ``n_leaves`` (of the master tree pruned at each candidate).
    classes_ : ndarray of shape (2,) or (n_grades,)
        The labels, negative first (the grades, lowest first, for ``K > 2``
        ordered grades).
    estimators_ : list of TreeRank
        Only for ``K > 2`` grades: the bipartite tree of every threshold
        "grade >= tree_thresholds_[k]" (the attributes above belong to them).
    tree_thresholds_ : ndarray of shape (n_grades - 1,)
        Only for ``K > 2`` grades: the threshold grade of each tree.
    consensus_ : TreeAggregate
        Only for ``K > 2`` grades: the Kendall median of ``estimators_``
        (:class:`~treerank.ensemble.TreeAggregate`, the fitted form of a
        :class:`RankingForest`; a model loaded from a file holds the
        equivalent RankingForest, a subclass of it).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of str
        Names of the features, when X has string column names.

    See Also
    --------
    LeafRank : The default splitter.
    RankingForest : Bagged and randomized ranking trees with median aggregation.

    Notes
    -----
    The training AUC is additive over the tree:
    ``AUC = 1/2 + sum of tree_.dauc`` (ties within leaves counted one half),
    which makes cost-complexity pruning exact and nested.

    The structural penalty of ``pruning="penalty"`` is
    ``pen(K, n) = 1/(p (1 - p)) sqrt(32 (log(16 ((n+1) q)^(2 K k)) + K) / n)``
    with q features, k cuts per LeafRank (``2**max_depth - 1`` for
    :class:`LeafRank`) and the empirical positive fraction p. It is a
    distribution-free uniform deviation bound, hence very conservative: below
    several hundred thousand samples it usually keeps only the root. Use
    ``penalty_scale`` to calibrate it, or prefer ``pruning="cv"``.

    Scores: with ``k = n_positive_leaves_``, the leaf of rank i (0 =
    leftmost, best) scores ``k - i - 1/2`` (see :meth:`decision_function`):
    an affine function of the rank whose sign is the predicted class.

    References
    ----------
    .. [1] S. Clémençon and N. Vayatis, "Tree-based ranking methods", IEEE
       Transactions on Information Theory 55(9), 2009.
    .. [2] S. Clémençon, M. Depecker and N. Vayatis, "Adaptive partitioning
       schemes for bipartite ranking", Machine Learning 83(1), 2011.

    Examples
    --------
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> X, y = make_nested_squares(2000, random_state=0)
    >>> ranker = TreeRank(random_state=0).fit(X, y)
    >>> X_test, y_test = make_nested_squares(5000, random_state=1)
    >>> bool(ranker.score(X_test, y_test) > 0.7)
    True
    """

    _parameter_constraints: dict = {
        "max_depth": [Interval(Integral, 0, None, closed="left"), None],
        "min_samples_split": [
            Interval(Integral, 2, None, closed="left"),
            StrOptions({"auto"}),
        ],
        "leafrank": [HasMethods(["fit", "goes_left"]), None],
        "max_features_node": MAX_FEATURES_CONSTRAINT,
        "pruning": [StrOptions({"cv", "penalty"}), None],
        "cv": ["cv_object"],
        "ccp_alpha": [Interval(Real, 0.0, None, closed="left")],
        "penalty_scale": [Interval(Real, 0.0, None, closed="left")],
        "monotonic_cst": ["array-like", dict, None],
        "categorical_features": CATEGORICAL_FEATURES_CONSTRAINT,
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        max_depth=None,
        min_samples_split="auto",
        leafrank=None,
        max_features_node=None,
        pruning=None,
        cv=5,
        ccp_alpha=0.0,
        penalty_scale=1.0,
        monotonic_cst=None,
        categorical_features="from_dtype",
        random_state=None,
    ):
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.leafrank = leafrank
        self.max_features_node = max_features_node
        self.pruning = pruning
        self.cv = cv
        self.ccp_alpha = ccp_alpha
        self.penalty_scale = penalty_scale
        self.monotonic_cst = monotonic_cst
        self.categorical_features = categorical_features
        self.random_state = random_state

    # ------------------------------------------------------------------
    # fitting
    # ------------------------------------------------------------------
    def _validate_training_data(self, X, y, sample_weight):
        X, y = feature_matrix(self, X, y, reset=True, accept_sparse=True)
        if is_sparse(X):
            check_sparse_splitter(self._leafrank_template())
        y01, classes, sample_weight = check_training_target(
            y, sample_weight, X.shape[0]
        )
        return X, y01, classes, sample_weight

    @staticmethod
    def _default_leafrank():
        """The splitter used when ``leafrank`` is None: ``LeafRank()``."""
        return LeafRank()

    def _leafrank_template(self):
        template = self._default_leafrank() if self.leafrank is None else self.leafrank
        validate = getattr(template, "_validate_params", None)
        if validate is not None:
            validate()
        return template

    def _grow(self, X, y01, sample_weight, rows, rng, data):
        """Grow a master tree on the rows ``rows`` (engine when ``data``).

        ``"auto"`` resolves on the whole training set, so that the fold trees of
        the cross-validated pruning and calibration split like the final tree.
        """
        n_rows = np.count_nonzero(sample_weight > 0)
        min_samples_split = resolve_min_samples_split(self.min_samples_split, n_rows)
        leafrank = resolve_leaf_size(self._leafrank_template(), n_rows)
        if data is not None:
            params = engine_growth_params(
                leafrank,
                max_depth=self.max_depth,
                min_samples_split=min_samples_split,
                max_features_node=self.max_features_node,
                n_features=X.shape[1],
                monotonic_cst=check_monotonic_cst(self, X.shape[1]),
            )
            seed = int(rng.randint(_MAX_SEED))
            return grow_engine_structure(
                data, y01, sample_weight, rows, leafrank, params, seed
            )[0]
        rows = rows[sample_weight[rows] > 0]  # zero weights: absent rows
        return grow_node_by_node(
            X[rows],
            y01[rows],
            sample_weight[rows],
            leafrank=leafrank,
            max_depth=self.max_depth,
            min_samples_split=min_samples_split,
            n_features_node=resolve_max_features(
                self.max_features_node, X.shape[1], "max_features_node"
            ),
            rng=rng,
        )

    def _binned(self, X, sample_weight, rng):
        """The binned training data if the engine grows the tree, else None."""
        leafrank = self._leafrank_template()
        categorical = categorical_mask(self)
        if not isinstance(leafrank, LeafRank):
            if categorical is not None:
                raise ValueError(
                    "Categorical features are split by the default LeafRank only; "
                    f"{type(leafrank).__name__} would read their category codes as "
                    "numbers. Encode them (e.g. one-hot) or use LeafRank."
                )
            if check_monotonic_cst(self, X.shape[1]) is not None:
                raise ValueError(
                    "monotonic_cst is enforced by the default LeafRank only; got "
                    f"{type(leafrank).__name__}."
                )
            return None
        seed = int(rng.randint(_MAX_SEED))
        return BinnedData(
            X, np.flatnonzero(sample_weight > 0), leafrank.max_bins, seed, categorical
        )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Grow the ranking tree (and prune it as ``pruning`` says).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data: numbers, NaN for missing values (each split
            learns where they go), and categorical columns (see
            ``categorical_features``); infinity is refused. A scipy sparse
            matrix or array (CSR, CSC or another format; entries not stored
            are 0.0, stored NaN are missing) is binned column by column,
            never densified: see :ref:`sparse_input`.
        y : array-like of shape (n_samples,)
            Binary labels: {0, 1}, {-1, 1}, bool, or any two numbers (the
            larger is positive). String labels are refused (ambiguous). More
            than two integer values are ordered grades (higher first): one
            bipartite tree per threshold "grade >= g", aggregated by a
            Kendall median (see :ref:`multipartite`).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; a zero weight is the same as removing the row.

        Returns
        -------
        self : TreeRank
        """
        return self._fit(X, y, sample_weight, calibrate=True)

    def _fit(self, X, y, sample_weight, *, calibrate):
        """``fit``; without ``calibrate`` the leaves keep their training rates
        (the trees of a forest, which calibrates its own scores)."""
        if self.pruning is not None and self.ccp_alpha != 0:
            raise ValueError(
                f"ccp_alpha={self.ccp_alpha} is only used with pruning=None; got "
                f"pruning={self.pruning!r}."
            )
        if is_graded_target(y):  # K > 2 ordered grades
            return self._fit_graded(X, y, sample_weight)
        X, y01, classes, sample_weight = self._validate_training_data(
            X, y, sample_weight
        )
        keep_background(self, X, sample_weight)
        self.classes_ = classes
        rng = check_random_state(self.random_state)
        data = self._binned(X, sample_weight, rng)
        if data is not None:
            # a first fit: the routing's kernels compile in a second process
            # while this one compiles the growth's (no effect on the result)
            start_background_compilation(median=False)
        rows = np.arange(X.shape[0])
        self.full_tree_ = self._grow(X, y01, sample_weight, rows, rng, data)
        if self.pruning == "cv":
            self.ccp_alpha_ = self._select_ccp_alpha_by_cv(
                X, y01, sample_weight, rng, data
            )
            structure = self._prune_structure(self.ccp_alpha_)
        elif self.pruning == "penalty":
            self.ccp_alpha_ = None
            structure = self._penalty_pruned_structure(X, y01, sample_weight)
        else:
            self.ccp_alpha_ = float(self.ccp_alpha)
            structure = self._prune_structure(self.ccp_alpha_)
        self._quantile_calibration = (
            self._out_of_fold_calibration(X, y01, sample_weight, rng, data)
            if calibrate
            else None
        )
        self._set_tree(structure)
        return self

    def _fit_graded(self, X, y, sample_weight):
        """``fit`` on ``K > 2`` ordered grades: one bipartite tree per threshold.

        One bipartite TreeRank per threshold "grade >= g_k" (``k = 1..K-1``),
        each a clone of this one (same parameters, pruning included) with its
        own seed, fitted on all the data on the labels of
        :func:`~treerank.utils._graded_target.cumulative_targets`; their
        rankings are aggregated by the Kendall median over the common
        subpartition of their leaves, exactly as a
        :class:`~treerank.RankingForest` of these ``K - 1`` trees aggregates
        them (``consensus_``, a :class:`~treerank.ensemble.TreeAggregate`).
        Sets ``classes_`` (the grades), ``estimators_``, ``tree_thresholds_``
        and ``consensus_``.
        """
        # a sparse X is refused by the members' fit when the splitter cannot read it
        X_checked, y = feature_matrix(self, X, y, reset=True, accept_sparse=True)
        codes, grades, sample_weight = check_graded_training_target(
            y, sample_weight, X_checked.shape[0]
        )
        keep_background(self, X_checked, sample_weight)
        n_grades = grades.shape[0]
        rng = check_random_state(self.random_state)
        seeds = rng.randint(_MAX_SEED, size=n_grades - 1)
        aggregation_seed = int(rng.randint(_MAX_SEED))
        trees, columns = [], []
        for target, seed in zip(cumulative_targets(codes, n_grades), seeds):
            member = clone(self).set_params(random_state=int(seed))
            member.fit(X, target, sample_weight=sample_weight)
            trees.append(member)
            columns.append(member.tree_.apply_rank(X_checked).astype(np.int32))
        consensus = self._threshold_tree_median(
            trees,
            X_checked,
            np.column_stack(columns),
            codes,
            grades,
            sample_weight,
            aggregation_seed,
        )
        self.classes_ = grades
        self.estimators_ = trees
        self.tree_thresholds_ = consensus.tree_thresholds_
        self.consensus_ = consensus
        self._calibration = consensus._calibration
        return self

    def _threshold_tree_median(self, trees, X, leaf_ranks, codes, grades, weight, seed):
        """The Kendall median of the fitted threshold trees, calibrated.

        ``trees`` are the bipartite trees of the thresholds, lowest first;
        ``X`` the training rows as checked by ``feature_matrix``;
        ``leaf_ranks`` the leaf rank of every training row in every tree;
        ``codes`` the grade codes ``0..K-1``, ``weight`` the normalized
        sample weights and ``seed`` the seed of the median solver. The trees'
        own rankings (``leaf_scores="rank"``, what ``"auto"`` would choose
        without out-of-bag rows) are aggregated by the median.
        """
        consensus = TreeAggregate(
            leaf_scores="rank", aggregation="median", random_state=seed
        )
        consensus.n_features_in_ = X.shape[1]
        consensus._category_encoder = self._category_encoder
        if hasattr(self, "feature_names_in_"):
            consensus.feature_names_in_ = self.feature_names_in_
        consensus._install_trees(
            trees, monotonic=check_monotonic_cst(self, X.shape[1]) is not None
        )
        consensus.estimators_samples_ = np.ones((len(trees), X.shape[0]), np.int32)
        levels = np.arange(1, grades.shape[0])
        aggregate_graded(consensus, X, leaf_ranks, levels, codes, grades, weight, seed)
        # the trees were binned each its own way: a point of every cell is a
        # training row of it (model files store the cells as these points)
        cell = consensus._cell_index.lookup(np.ascontiguousarray(leaf_ranks))
        seen = np.flatnonzero(cell >= 0)  # rows of zero weight may be in no cell
        rows = seen[np.unique(cell[seen], return_index=True)[1]]
        consensus._cell_corners = consensus._find_cell_corners(X, rows)
        return consensus

    def _unsupported_for_grades(self, what, error=ValueError):
        """The error of what has no meaning for a TreeRank of ``K > 2`` grades."""
        return error(
            f"{what} is not defined for a TreeRank fitted on "
            f"{self.classes_.shape[0]} grades: it is the Kendall median of "
            f"{len(self.estimators_)} bipartite trees, one per threshold "
            "'grade >= g' (tree_thresholds_). Use it on one of them, "
            "estimators_[k]."
        )

    def _set_tree(self, structure):
        """Install a (pruned) structure and its leaf probabilities.

        With an out-of-fold calibration (``_quantile_calibration``, set by
        ``fit``), each leaf's probability is read at the quantile of the leaf
        under the training distribution; otherwise (trees of a forest) the
        leaves' training positive rates are made monotone.
        """
        self.tree_ = structure
        for tree in (structure, getattr(self, "full_tree_", None)):
            if tree is not None and tree.rules is not None:
                tree.category_labels = category_labels(self)
        calibration = getattr(self, "_quantile_calibration", None)
        if calibration is None:
            self.leaf_proba_, self.n_positive_leaves_ = calibrate_buckets(
                structure.n_pos[structure.leaves], structure.n_neg[structure.leaves]
            )
            return
        knots, proba = calibration
        self.leaf_proba_ = calibrated_probability(
            _leaf_quantiles(structure), knots, proba
        )
        self.n_positive_leaves_ = int(np.count_nonzero(self.leaf_proba_ > 0.5))

    # ------------------------------------------------------------------
    # pruning
    # ------------------------------------------------------------------
    def _prune_structure(self, ccp_alpha):
        if ccp_alpha <= 0:
            return self.full_tree_
        thresholds, _ = collapse_thresholds(self.full_tree_)
        return self.full_tree_.subtree(thresholds <= ccp_alpha)

    def cost_complexity_pruning_path(self):
        """The nested optimal subtrees of the fitted master tree.

        For ``lambda`` in ``[ccp_alphas[i], ccp_alphas[i + 1])`` the subtree
        maximizing ``AUC_train(T) - lambda * #leaves(T)`` has ``n_leaves[i]``
        leaves and training AUC ``train_auc[i]``.

        Returns
        -------
        path : :class:`~sklearn.utils.Bunch`
            ``ccp_alphas`` (increasing, from 0; the last one reduces the tree to
            its root), ``n_leaves``, ``train_auc``.

        Examples
        --------
        >>> from treerank import TreeRank
        >>> from treerank.datasets import make_nested_squares
        >>> X, y = make_nested_squares(500, random_state=0)
        >>> tree = TreeRank(max_depth=3, random_state=0).fit(X, y)
        >>> path = tree.cost_complexity_pruning_path()
        >>> int(path.n_leaves[-1])
        1
        """
        check_is_fitted(self)
        if self.classes_.shape[0] > 2:  # multipartite hook
            raise self._unsupported_for_grades("pruning")
        return collapse_thresholds(self.full_tree_)[1]

    def prune(self, ccp_alpha):
        """A copy of this tree pruned at ``ccp_alpha``, without refitting.

        Pruning is applied to the master tree (``full_tree_``), so a tree can be
        pruned again with a smaller or larger ``ccp_alpha``.

        Parameters
        ----------
        ccp_alpha : float >= 0
            Complexity parameter ``lambda``.

        Returns
        -------
        pruned : TreeRank
            A new fitted estimator (``pruning=None``, ``ccp_alpha`` set).

        Examples
        --------
        >>> from treerank import TreeRank
        >>> from treerank.datasets import make_nested_squares
        >>> X, y = make_nested_squares(500, random_state=0)
        >>> tree = TreeRank(max_depth=4, random_state=0).fit(X, y)
        >>> tree.prune(1.0).n_leaves_
        1
        """
        check_is_fitted(self)
        if self.classes_.shape[0] > 2:  # multipartite hook
            raise self._unsupported_for_grades("pruning")
        if (
            not isinstance(ccp_alpha, Real)
            or not np.isfinite(ccp_alpha)
            or ccp_alpha < 0
        ):
            raise ValueError(
                f"ccp_alpha must be a finite number >= 0; got {ccp_alpha!r}."
            )
        pruned = copy.copy(self)
        pruned.pruning = None
        pruned.ccp_alpha = float(ccp_alpha)
        pruned.ccp_alpha_ = float(ccp_alpha)
        pruned._set_tree(self._prune_structure(float(ccp_alpha)))
        if hasattr(pruned, "cv_results_"):
            del pruned.cv_results_
        return pruned

    def _select_ccp_alpha_by_cv(self, X, y01, sample_weight, rng, data):
        thresholds, path = collapse_thresholds(self.full_tree_)
        alphas = path.ccp_alphas
        # One candidate per subtree of the path: the geometric midpoint of the
        # interval of lambdas that selects it. The root's interval is
        # [alphas[-1], inf): the master tree is pruned with alphas[-1], but each
        # fold's tree is scored at lambda = inf, i.e. as its root. A fold tree
        # grown on other data may keep its first split at alphas[-1], which would
        # credit the root candidate with that split's held-out AUC.
        inner = np.sqrt(alphas[1:-1] * alphas[2:])
        candidates = np.concatenate([[0.0], inner, [alphas[-1]]])[: alphas.shape[0]]
        fold_candidates = candidates.copy()
        if candidates.shape[0] > 1:
            fold_candidates[-1] = np.inf
        splitter = self._splitter(y01, rng)
        scores = []
        for train, test in splitter.split(X, y01):
            fold_weight = sample_weight[train]
            if not (
                np.any(fold_weight[y01[train] == 1] > 0)
                and np.any(fold_weight[y01[train] == 0] > 0)
            ):
                raise ValueError(
                    "A cross-validation training fold has a single class; use "
                    "fewer folds for pruning='cv'."
                )
            structure = self._grow(X, y01, sample_weight, train, rng, data)
            scores.append(
                _held_out_auc(
                    structure, X[test], y01[test], sample_weight[test], fold_candidates
                )
            )
        scores = np.asarray(scores)
        mean = np.nanmean(scores, axis=0)
        best = np.nanmax(mean)
        chosen = int(np.flatnonzero(mean >= best - 1e-12)[-1])  # ties: larger lambda
        self.cv_results_ = {
            "candidates": candidates,
            "mean_test_auc": mean,
            "std_test_auc": np.nanstd(scores, axis=0),
            "n_leaves": np.array(
                [
                    1 + int(np.sum((thresholds > c) & ~self.full_tree_.is_leaf))
                    for c in candidates
                ]
            ),
        }
        return float(candidates[chosen])

    def _splitter(self, y01, rng):
        """The cross-validation folds (``cv``), shuffled with ``rng``."""
        if isinstance(self.cv, Integral):
            return StratifiedKFold(
                n_splits=self.cv,
                shuffle=True,
                random_state=int(rng.randint(np.iinfo(np.int32).max)),
            )
        return check_cv(self.cv, y01, classifier=True)

    def _out_of_fold_calibration(self, X, y01, sample_weight, rng, data):
        """``quantile_calibration`` of out-of-fold leaf quantiles, or None.

        Each fold's tree is grown and pruned as the final tree, and each
        held-out row gets the quantile of its leaf under that tree's training
        distribution (:func:`~treerank.calibration.midrank_quantiles` of leaves): the
        calibration then maps the final tree's leaf quantiles to honest
        probabilities.
        """
        quantiles = np.full(X.shape[0], np.nan)
        weighted = sample_weight > 0
        smallest = min(np.sum(weighted & (y01 == 1)), np.sum(weighted & (y01 == 0)))
        if isinstance(self.cv, Integral):
            if smallest < 2:
                return None
            splitter = StratifiedKFold(
                n_splits=min(self.cv, smallest),
                shuffle=True,
                random_state=int(rng.randint(_MAX_SEED)),
            )
        else:
            splitter = self._splitter(y01, rng)
        rows = np.flatnonzero(weighted)  # zero weights: absent rows
        if isinstance(self.cv, Integral):  # folds of the rows of positive weight
            folds = (
                (rows[train], rows[test])
                for train, test in splitter.split(np.zeros(rows.shape[0]), y01[rows])
            )
        else:  # the user's folds index all the rows
            folds = (
                (train[weighted[train]], test[weighted[test]])
                for train, test in splitter.split(X, y01)
            )
        for train, test in folds:
            fold_weight = sample_weight[train]
            if not (
                np.any(fold_weight[y01[train] == 1] > 0)
                and np.any(fold_weight[y01[train] == 0] > 0)
            ):
                continue  # a fold with one class: its rows stay uncalibrated
            structure = self._grow(X, y01, sample_weight, train, rng, data)
            if self.pruning == "penalty":
                structure = self._penalty_pruned_structure(
                    X[train], y01[train], fold_weight, structure
                )
            elif self.ccp_alpha_:
                thresholds, _ = collapse_thresholds(structure)
                structure = structure.subtree(thresholds <= self.ccp_alpha_)
            quantiles[test] = _leaf_quantiles(structure)[structure.apply_rank(X[test])]
        scored = np.isfinite(quantiles) & (sample_weight > 0)
        if not (np.any(y01[scored] == 1) and np.any(y01[scored] == 0)):
            return None
        return quantile_calibration(
            quantiles[scored], y01[scored], sample_weight[scored]
        )

    def _penalty_pruned_structure(self, X, y01, sample_weight, structure=None):
        structure = self.full_tree_ if structure is None else structure
        if structure.n_leaves == 1:
            return structure
        keep = sample_weight > 0
        p = float(np.average(y01[keep], weights=sample_weight[keep]))
        if structure.rules is not None:
            n_cuts = structure.n_cuts
        else:
            n_cuts = max(
                getattr(leafrank, "n_cuts_", 1)
                for leafrank in structure.leafranks
                if leafrank is not None
            )
        n_samples = int(keep.sum())

        def penalty(n_leaves):
            return self.penalty_scale * structural_penalty(
                n_leaves, n_samples, X.shape[1], n_cuts, p, p
            )

        collapsed, _ = penalized_subtree(structure, penalty)
        return structure.subtree(collapsed)

    # ------------------------------------------------------------------
    # prediction
    # ------------------------------------------------------------------
    def _validate_X_predict(self, X):
        check_is_fitted(self)
        X = feature_matrix(self, X, reset=False, accept_sparse=True)
        if is_sparse(X):
            check_sparse_splitter(self._leafrank_template())
        return X

    def apply(self, X):
        """Rank of the leaf containing each sample (0 = best, leftmost leaf).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A sparse X is never densified whole (see :ref:`sparse_input`).

        Returns
        -------
        leaf_rank : ndarray of int of shape (n_samples,)
        """
        X_checked = self._validate_X_predict(X)
        # multipartite hook: one column per tree; the consensus is given X as
        # it came (it encodes the categories and checks the names itself)
        if self.classes_.shape[0] > 2:
            return self.consensus_.apply(X)
        return self.tree_.apply_rank(X_checked)

    def decision_function(self, X):
        """Ranking score: an affine function of the rank of each sample's leaf.

        With ``n_positive_leaves_ = k`` (the leading leaves whose calibrated
        probability exceeds 1/2), a sample in the leaf of rank i (0 = best)
        scores ``k - i - 1/2``: higher means ranked first, and the sign is the
        class that :meth:`predict` returns.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A sparse X is never densified whole (see :ref:`sparse_input`).

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        if self.classes_.shape[0] > 2:  # multipartite hook
            self._validate_X_predict(X)
            return self.consensus_.decision_function(X)
        ranks = self.apply(X)
        return self.n_positive_leaves_ - ranks - 0.5

    def predict_proba(self, X):
        """Calibrated estimate of ``P(Y = 1 | x)`` in each sample's leaf.

        The positive fractions of the training samples in the leaves, read in
        rank order, made non-increasing by weighted isotonic regression
        (adjacent leaves whose order is violated are pooled): the plug-in
        estimate on the concave majorant of the training ROC curve. It is
        therefore consistent with the ranking.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A sparse X is never densified whole (see :ref:`sparse_input`).

        Returns
        -------
        proba : ndarray of shape (n_samples, 2) or (n_samples, n_grades)
            Columns ordered as ``classes_`` (negative, positive). For ``K >
            2`` grades, the probability of each grade, lowest first (see
            :ref:`multipartite`).
        """
        check_is_fitted(self)
        if self.classes_.shape[0] > 2:  # multipartite hook: (n_samples, K) grades
            self._validate_X_predict(X)
            return self.consensus_.predict_proba(X)
        eta = self.leaf_proba_[self.apply(X)]
        return np.column_stack([1.0 - eta, eta])

    # ------------------------------------------------------------------
    # summaries
    # ------------------------------------------------------------------
    @property
    def n_leaves_(self):
        """Number of leaves of the (pruned) tree."""
        check_is_fitted(self)
        if self.classes_.shape[0] > 2:  # multipartite hook
            raise self._unsupported_for_grades("n_leaves_", error=AttributeError)
        return self.tree_.n_leaves

    @property
    def feature_importances_(self):
        """Importance of each feature: the dAUC of the splits it took part in.

        Each internal node's AUC increment is shared among the features in
        proportion to its LeafRank's ``feature_importances_`` (mapped back
        through the FR1 feature draw), summed over the tree and normalized to
        sum to one (all zeros for a tree with a single leaf).
        """
        check_is_fitted(self)
        if self.classes_.shape[0] > 2:  # multipartite hook: mean over the trees
            return self.consensus_.feature_importances_
        return self.tree_.feature_importances(self.n_features_in_)


def _held_out_auc(structure, X_test, y_test, w_test, candidates):
    """Held-out AUC of the subtree T(lambda) of a fold's tree, for each lambda.

    The leaf of a held-out sample in T(lambda) is its highest ancestor (or
    itself) collapsed at lambda; leaves ordered by preorder id keep the
    left-to-right order, so minus the id of that node is a valid score.
    """
    if not (np.any(y_test == 1) and np.any(y_test == 0)):
        return np.full(candidates.shape[0], np.nan)
    thresholds, _ = collapse_thresholds(structure)
    paths = structure.ancestors()  # (node_count, depth + 1)
    leaf = structure.apply(X_test)
    sample_paths = paths[leaf]  # (n_test, depth + 1)
    path_thresholds = thresholds[sample_paths]  # -inf at the leaf itself
    aucs = np.empty(candidates.shape[0])
    for i, lam in enumerate(candidates):
        first = np.argmax(path_thresholds <= lam, axis=1)
        node = sample_paths[np.arange(leaf.shape[0]), first]
        aucs[i] = roc_auc_score(y_test, -node.astype(float), sample_weight=w_test)
    return aucs
