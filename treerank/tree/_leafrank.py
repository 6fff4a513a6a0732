"""LeafRank: the cost-sensitive splitter that cuts a ranking-tree node in two.

At a node C, TreeRank looks for the subset C' of C maximizing the AUC increment,
which is proportional to ``beta(C')/beta(C) - alpha(C')/alpha(C)``: the local true
positive rate minus the local false positive rate. That is a classification
problem inside the node with the two classes weighted inversely to their
(weighted) counts in the node, so any classifier accepting ``sample_weight`` can
serve.

The LeafRank protocol, all that :class:`~treerank.TreeRank` relies on:

- ``fit(X, y, sample_weight=None) -> self`` with ``y`` in {0, 1} (1 = positive);
- ``goes_left(X) -> ndarray of bool``: True for points sent to the left, better,
  child;
- ``describe(feature_names=None) -> str``: a human-readable rule for export;
- ``feature_importances_``: non-negative shares of the input features in the
  rule (summing to one, or all zero for a rule that uses none);
- ``n_cuts_``: the complexity ``k`` used by the structural pruning penalty;
- a ``random_state`` parameter, which TreeRank sets per node.

Optionally, for speed, a LeafRank may implement ``_fit_arrays(X, y01,
sample_weight)`` and ``_goes_left_arrays(X)`` on already validated float64
arrays (TreeRank validates the data once per tree instead of at every node).

Two implementations are provided: :class:`LeafRank` (a depth-limited CART tree
grown from histograms, whose leaves are merged by decreasing beta/alpha, the
lecture's algorithm; TreeRank and RankingForest run it inside the compiled
engine of :mod:`treerank._engine`) and :class:`ClassifierLeafRank` (an adapter
for any scikit-learn classifier, fitted node by node).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral
from typing import NamedTuple

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import check_random_state, get_tags
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

from treerank._engine import (
    CRITERIA,
    MAX_BINS,
    SPLITTERS,
    BinMapper,
    GrowthParams,
    fit_rule,
)
from treerank.base import _accepts_sparse
from treerank.utils._sklearn_compat import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    validate_data,
)
from treerank.utils._sparse import is_sparse, values_at
from treerank.utils.validation import check_sample_weight, check_training_target

__all__ = [
    "BaseLeafRank",
    "ClassifierLeafRank",
    "LeafRank",
    "RuleTree",
    "SplitCondition",
    "auto_min_samples_leaf",
    "balanced_node_weights",
    "leafrank_fit",
    "leafrank_goes_left",
    "leafrank_goes_left_rows",
    "resolve_leaf_size",
    "resolve_max_features",
    "split_importances",
    "traverse_binary_tree",
]

_MAX_SEED = np.iinfo(np.int32).max


def leafrank_fit(leafrank, X, y01, sample_weight):
    """Fit a LeafRank on validated arrays, without re-validation if supported."""
    fit_arrays = getattr(leafrank, "_fit_arrays", None)
    if fit_arrays is not None:
        return fit_arrays(X, y01, sample_weight)
    return leafrank.fit(X, y01, sample_weight=sample_weight)


def leafrank_goes_left(leafrank, X):
    """Sides chosen by a fitted LeafRank for validated arrays."""
    goes_left = getattr(leafrank, "_goes_left_arrays", None)
    if goes_left is None:
        goes_left = leafrank.goes_left
    return np.asarray(goes_left(X), dtype=bool)


def leafrank_goes_left_rows(leafrank, X, rows, columns):
    """Sides chosen for the rows ``rows`` of X, the rule seeing ``X[:, columns]``.

    Uses the LeafRank's ``_goes_left_rows`` when it has one (no copy of the
    node's rows), else copies them and calls :func:`leafrank_goes_left`.
    ``columns`` is None for all features.
    """
    goes_left_rows = getattr(leafrank, "_goes_left_rows", None)
    if goes_left_rows is not None:
        return np.asarray(goes_left_rows(X, rows, columns), dtype=bool)
    X_node = X[rows] if columns is None else X[np.ix_(rows, columns)]
    return leafrank_goes_left(leafrank, X_node)


def category_table(categories):
    """Lookup table of categorical splits: ``table[node, code]`` is True when
    the split sends category ``code`` left; None without categorical split.

    ``categories`` lists, per node, the tuple of codes sent left (None for a
    threshold split).
    """
    if categories is None or all(c is None for c in categories):
        return None
    table = np.zeros((len(categories), 256), dtype=bool)
    for node, codes in enumerate(categories):
        if codes is not None:
            table[node, list(codes)] = True
    return table


def traverse_binary_tree(
    children_left,
    children_right,
    feature,
    threshold,
    missing_left,
    X,
    rows,
    columns,
    categories=None,
):
    """Leaf reached by each row in a binary tree of threshold splits.

    A row goes left at node t when ``X[row, feature[t]] <= threshold[t]``, or
    when that value is NaN and ``missing_left[t]``; at a categorical split
    (``categories``, see :func:`category_table`) when its category code is in
    the split's set (a value that is not a code counts as missing). Gathers
    only the tested feature of each row at each level (no copy of the rows;
    X may be a scipy sparse matrix, whose entries not stored are 0.0);
    ``columns`` maps the tree's feature indices to columns of X (None:
    identity).

    Returns
    -------
    node : ndarray of int of shape (len(rows),)
    """
    table = category_table(categories)
    node = np.zeros(rows.shape[0], dtype=np.intp)
    active = np.arange(rows.shape[0])
    while active.shape[0]:
        current = node[active]
        left = children_left[current]
        internal = left >= 0
        active, current, left = active[internal], current[internal], left[internal]
        if active.shape[0] == 0:
            break
        tested = feature[current]
        if columns is not None:
            tested = columns[tested]
        values = values_at(X, rows[active], tested)
        missing = np.isnan(values)
        go_left = values <= threshold[current]
        if table is not None:
            categorical = np.array([categories[t] is not None for t in current])
            if categorical.any():
                codes = np.where(categorical & ~missing, values, -1.0)
                valid = (codes >= 0) & (codes < 255) & (codes == np.floor(codes))
                missing |= categorical & ~valid
                in_set = table[current, np.where(valid, codes, 0).astype(np.intp)]
                go_left = np.where(categorical, in_set, go_left)
        go_left = np.where(missing, missing_left[current], go_left)
        node[active] = np.where(go_left, left, children_right[current])
    return node


class RuleTree:
    """The inner tree of a LeafRank rule, as arrays (the ``tree_`` of LeafRank).

    Parameters
    ----------
    children_left, children_right : ndarray of int
        Children of each inner node (-1 at leaves), parents before children.
    feature : ndarray of int
        Feature tested at each split (-1 at leaves).
    threshold : ndarray of float64
        A row goes left when its value is at most the threshold.
    missing_left : ndarray of bool
        Where missing values (NaN) go at each split.
    missing_seen : ndarray of bool or None, default=None
        Whether each split saw missing values in training.
    categories : list or None, default=None
        Per node, the tuple of category codes a categorical split sends left
        (None for a threshold split).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree import RuleTree
    >>> tree = RuleTree([1, -1, -1], [2, -1, -1], [0, -1, -1], [1.5, 0, 0],
    ...                 [True, False, False])
    >>> tree.apply(np.array([[0.0], [2.0], [np.nan]]))
    array([1, 2, 1])
    """

    def __init__(
        self,
        children_left,
        children_right,
        feature,
        threshold,
        missing_left,
        missing_seen=None,
        categories=None,
    ):
        self.children_left = np.asarray(children_left, dtype=np.intp)
        self.children_right = np.asarray(children_right, dtype=np.intp)
        self.feature = np.asarray(feature, dtype=np.intp)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.missing_left = np.asarray(missing_left, dtype=bool)
        n = self.children_left.shape[0]
        self.missing_seen = (
            np.ones(n, dtype=bool)
            if missing_seen is None
            else np.asarray(missing_seen, dtype=bool)
        )
        self.categories = [None] * n if categories is None else list(categories)

    @property
    def node_count(self):
        """Number of inner nodes."""
        return int(self.children_left.shape[0])

    def apply(self, X):
        """Inner leaf of each row of X (validated float64 array or sparse matrix)."""
        if not is_sparse(X):
            X = np.asarray(X, dtype=np.float64)
        return traverse_binary_tree(
            self.children_left,
            self.children_right,
            self.feature,
            self.threshold,
            self.missing_left,
            X,
            np.arange(X.shape[0]),
            None,
            self.categories,
        )


def split_importances(children_left, feature, improvement, n_features):
    """Feature importances of a rule tree: each feature's non-negative split
    improvements, summed in node order and normalized (all zero without any).

    Parameters
    ----------
    children_left : ndarray of int of shape (n_nodes,)
        -1 at the leaves.
    feature : ndarray of int of shape (n_nodes,)
        Feature of each split.
    improvement : ndarray of float of shape (n_nodes,)
        Criterion improvement of each split.
    n_features : int

    Returns
    -------
    importances : ndarray of float64 of shape (n_features,)

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree._leafrank import split_importances
    >>> split_importances(np.array([1, -1, -1]), np.array([1, -1, -1]),
    ...                   np.array([0.5, 0.0, 0.0]), 2)
    array([0., 1.])
    """
    split = children_left >= 0
    importances = np.bincount(
        feature[split],
        weights=np.maximum(improvement[split], 0.0),
        minlength=n_features,
    )
    total = importances.sum()
    return importances / total if total > 0 else importances


def auto_min_samples_leaf(n_samples):
    """The inner leaf size of ``LeafRank(min_samples_leaf="auto")``.

    ``min(50, max(20, ceil(n_samples / 40)))`` for ``n_samples`` training rows
    of the ranking tree: a tree's order of its leaves rests on the ratios of
    the inner leaves its LeafRanks keep, estimated from their rows; 50 rows
    (the original R package's ``minsplit``) from 2,000 training rows on, 20 on
    the smallest problems, whose trees would otherwise have too few leaves.

    Examples
    --------
    >>> from treerank.tree._leafrank import auto_min_samples_leaf
    >>> [auto_min_samples_leaf(n) for n in (300, 1000, 2000, 100_000)]
    [20, 25, 50, 50]
    """
    return int(min(50, max(20, -(-int(n_samples) // 40))))


def resolve_leaf_size(leafrank, n_samples):
    """``leafrank`` with its ``"auto"`` leaf size set for a tree of ``n_samples`` rows.

    A ranking tree resolves ``min_samples_leaf="auto"`` once, on its own
    training rows (of positive weight), so that every node's rule has the same
    leaf size. A splitter without an ``"auto"`` value is returned as is; one
    with it (:class:`LeafRank`, or a :class:`~treerank.tree.MixedLeafRank`
    holding one) is returned as a resolved copy, never changed in place.
    """
    resolve = getattr(leafrank, "_resolve_leaf_size", None)
    return leafrank if resolve is None else resolve(n_samples)


def resolve_max_features(max_features, n_features, name="max_features"):
    """Number of features drawn, as in scikit-learn's trees (None: all).

    Examples
    --------
    >>> from treerank.tree import resolve_max_features
    >>> resolve_max_features("sqrt", 20), resolve_max_features(0.5, 9)
    (4, 4)
    """
    if max_features is None:
        return None
    if isinstance(max_features, str):
        value = np.sqrt(n_features) if max_features == "sqrt" else np.log2(n_features)
        return max(1, int(value))
    if isinstance(max_features, Integral):
        if max_features > n_features:
            raise ValueError(
                f"{name}={max_features} exceeds the number of features ({n_features})."
            )
        return int(max_features)
    return max(1, int(max_features * n_features))


def balanced_node_weights(y, sample_weight):
    """Class-balanced weights of a node: each class gets half the total weight.

    A positive i gets ``w_i * n / (2 W+)`` and a negative ``w_i * n / (2 W-)``,
    where ``W+`` and ``W-`` are the class totals and ``n`` the number of rows,
    so that the weighted classification error is proportional to
    ``1 - (local TPR - local FPR)``. The rescaling by ``n / 2`` keeps the
    weights of order one.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)
        Labels in {0, 1}.
    sample_weight : ndarray of shape (n_samples,)
        Non-negative weights.

    Returns
    -------
    weights : ndarray of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree import balanced_node_weights
    >>> balanced_node_weights(np.array([1, 0, 0, 0]), np.ones(4))
    array([2.        , 0.66666667, 0.66666667, 0.66666667])
    """
    pos = y == 1
    total_pos = sample_weight[pos].sum()
    total_neg = sample_weight[~pos].sum()
    if total_pos <= 0 or total_neg <= 0:
        raise ValueError(
            "Both classes need a positive total weight in the node to be split."
        )
    scale = np.where(pos, 1.0 / total_pos, 1.0 / total_neg)
    return sample_weight * scale * (y.shape[0] / 2.0)


def _local_rates(y, sample_weight, mask):
    """Local (beta, alpha) = (TPR, FPR) of the subset ``mask`` of a node."""
    pos = y == 1
    beta = sample_weight[pos & mask].sum() / sample_weight[pos].sum()
    alpha = sample_weight[~pos & mask].sum() / sample_weight[~pos].sum()
    return beta, alpha


class BaseLeafRank(ClassifierMixin, BaseEstimator):
    """Base class of LeafRanks: validation shared by the implementations.

    Subclasses implement ``_fit_arrays(X, y01, sample_weight)`` and
    ``_goes_left_arrays(X)`` on validated float64 arrays;
    the public ``fit`` and ``goes_left`` validate and call them. See the
    module docstring for the protocol.

    For scikit-learn, a LeafRank is a binary classifier (tags: classifier,
    binary only): the splitter solves a class-balanced classification, and
    :meth:`predict` returns the positive class (``classes_[1]``) on the left
    side, :meth:`score` its balanced accuracy ``(1 + TPR - FPR) / 2``, the
    criterion the split maximizes.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y, sample_weight=None):
        """Learn the split of a node.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The node's data. A scipy sparse X (entries not stored are 0.0) is
            accepted when the splitter's ``input_tags.sparse`` tag is True:
            :class:`LeafRank` bins it column by column, a
            :class:`ClassifierLeafRank` passes it to its classifier.
        y : array-like of shape (n_samples,)
            Binary labels (the larger value, or True, is positive).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights.

        Returns
        -------
        self : object
        """
        self._validate_params()
        X, y01, classes, sample_weight = self._validate_fit_input(X, y, sample_weight)
        self._fit_arrays(X, y01, sample_weight)
        self.classes_ = classes
        return self

    def goes_left(self, X):
        """Whether each point goes to the left (better) child.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        left : ndarray of bool of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(
            self,
            X,
            reset=False,
            dtype=np.float64,
            ensure_all_finite="allow-nan",
            accept_sparse=self._sparse_formats(),
        )
        return self._goes_left_arrays(X)

    def predict(self, X):
        """The positive class on the left (better) side, the negative elsewhere.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where :meth:`goes_left` is True, else ``classes_[0]``.
        """
        check_is_fitted(self)
        return self.classes_[self.goes_left(X).astype(np.intp)]

    def score(self, X, y, sample_weight=None):
        """Balanced accuracy of :meth:`predict`: ``(1 + TPR - FPR) / 2``.

        The class-balanced criterion a LeafRank maximizes (local TPR minus
        local FPR, up to an affine map), not the plain accuracy. With a
        single class in ``y``, the rate of that class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            True labels, among ``classes_``.
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        score : float
        """
        check_is_fitted(self)
        left = self.goes_left(X)
        y = np.asarray(y).ravel()
        if y.shape != left.shape:
            raise ValueError(f"y has {y.shape[0]} labels for {left.shape[0]} rows.")
        if not np.all(np.isin(y, self.classes_)):
            raise ValueError(
                f"y holds labels other than the classes {self.classes_.tolist()}."
            )
        weight = check_sample_weight(sample_weight, y.shape[0])
        is_positive = y == self.classes_[1]
        rates = []  # the true positive and true negative rates
        for rows, side in ((is_positive, True), (~is_positive, False)):
            if weight[rows].sum() > 0:
                rates.append(np.average(left[rows] == side, weights=weight[rows]))
        if not rates:
            raise ValueError("sample_weight is all zero: the score is undefined.")
        return float(np.mean(rates))

    def _sparse_formats(self):
        """The sparse formats validation accepts: CSR and CSC if the tags say so."""
        return ("csr", "csc") if _accepts_sparse(self) else False

    def _validate_fit_input(self, X, y, sample_weight):
        X, y = validate_data(
            self,
            X,
            y,
            ensure_min_samples=2,
            dtype=np.float64,
            ensure_all_finite="allow-nan",
            accept_sparse=self._sparse_formats(),
        )
        y01, classes, sample_weight = check_training_target(
            y, sample_weight, X.shape[0]
        )
        return X, y01, classes, sample_weight

    def _format_feature(self, index, feature_names):
        if feature_names is None:
            return f"x[{index}]"
        return str(feature_names[index])

    def _check_feature_names(self, feature_names):
        if feature_names is not None and len(feature_names) != self.n_features_in_:
            raise ValueError(
                f"feature_names must contain {self.n_features_in_} elements; got "
                f"{len(feature_names)}."
            )


class LeafRank(BaseLeafRank):
    """CART LeafRank: a class-balanced classification tree merged by beta/alpha.

    The splitter of the lecture's TreeRank: a classification tree of depth
    ``max_depth`` is grown on the node's data with the two classes weighted
    inversely to their weights in the node; its leaves are sorted by
    decreasing local ratio ``beta/alpha`` (a leaf with no negative and some
    positive weight first), and the prefix of that order maximizing
    ``beta - alpha`` (local TPR minus local FPR) forms the left, better, side.
    The union of leaves it keeps is the best union of the inner tree's leaves.

    The inner tree is grown from histograms: each feature is cut into at most
    ``max_bins`` quantile bins (one bin per value when there are fewer
    distinct values, which makes the search exhaustive), and each split is
    the best threshold between bins. Inside :class:`~treerank.TreeRank` and
    :class:`~treerank.RankingForest` the data are binned once per fit and the
    rule runs in the compiled engine (:mod:`treerank._engine`); this class then
    only carries the parameters. A scipy sparse X is binned one column at a
    time and gives the rule of ``X.toarray()`` (see :ref:`sparse_input`).

    Read more in the :ref:`User Guide <leafrank>`.

    Parameters
    ----------
    max_depth : int, default=5
        Depth of the inner classification tree.
    min_samples_leaf : int, float or "auto", default="auto"
        Minimum number of samples (rows of positive weight) in a leaf of the
        inner tree; a float is a fraction of the node's samples. A leaf's
        ratio beta/alpha is estimated from its samples, and the merge step
        keeps the leaves with the highest ratios, so very small leaves are
        selected on noise. ``"auto"`` is ``min(50, max(20, ceil(n / 40)))``
        for the n training rows of the ranking tree (the same at every node;
        the rows of ``fit`` when the LeafRank is fitted alone): 50, the
        original R package's ``minsplit``, from 2,000 rows on, 20 on the
        smallest problems. It depends on the data only, never on the other
        parameters. A node with fewer than ``2 * min_samples_leaf`` samples
        is not split.
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Features drawn at each split of the inner tree (feature randomization
        FR2 of the Ranking Forest), as in scikit-learn's trees: the search
        goes on past ``max_features`` features until it has seen that many
        non-constant ones.
    criterion : {"gini", "entropy", "log_loss", "youden"}, default="youden"
        Split criterion of the inner tree, on the class-balanced weights:
        the Gini impurity, the entropy (``"log_loss"`` is an alias), or
        ``"youden"``, which maximizes the local TPR - FPR of the split (Youden's
        J statistic) directly: the LeafRank objective itself, applied greedily.
    splitter : {"best", "random"}, default="best"
        How an inner split chooses the threshold of a numeric feature, as
        scikit-learn's ``DecisionTreeClassifier`` and ``ExtraTreeClassifier``:
        ``"best"`` scores every threshold of each drawn feature; ``"random"``
        draws one threshold per drawn feature, uniformly between the node's
        lowest and highest bins, and keeps the feature whose drawn threshold
        scores best (extremely randomized trees). Categorical features are
        split by their best subset either way. In a forest, random thresholds
        make the trees cut at different places and their aggregate draw a
        smoother boundary (see :ref:`forest`).
    max_bins : int, default=255
        Largest number of bins per feature (2 to 255).
    node_subsample : int or None, default=65536
        A node of more rows fits its rule on a subsample of ``node_subsample``
        of them (None: on all of them), drawn at random within each class and
        spread over the node's rows; all the rows are then split by the rule.
        The inner tree compares the rates of each class within the node, which
        such a sample estimates without bias and, beyond some tens of
        thousands of rows, precisely enough: large nodes cost the time of the
        sample plus one pass of their rows through the rule.
    random_state : int, RandomState instance or None, default=None
        Seed of the feature draws (``max_features``) and of the sample when
        the LeafRank is fitted alone; inside a TreeRank or a forest the tree's
        seed is used.

    Attributes
    ----------
    tree_ : RuleTree
        The fitted inner tree (children, features, real thresholds, where
        missing values go).
    left_nodes_ : ndarray of bool of shape (`tree_.node_count`,)
        True for the inner-tree leaves forming the left side.
    gain_ : float
        Local TPR minus local FPR of the left side on the training data.
    n_cuts_ : int
        ``2 ** max_depth - 1``, the number of axis-parallel cuts the inner tree
        may use (the ``k`` of the structural pruning penalty).
    feature_importances_ : ndarray of shape (n_features,)
        Criterion improvements of the inner tree's splits per feature,
        normalized.
    classes_ : ndarray of shape (2,)
        The labels, negative first: :meth:`predict` returns ``classes_[1]``
        on the left side.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    ClassifierLeafRank : Any scikit-learn classifier as a LeafRank.
    TreeRank : The ranking tree grown with a LeafRank at every node.

    References
    ----------
    .. [1] S. Clémençon, M. Depecker and N. Vayatis, "Adaptive partitioning
       schemes for bipartite ranking", Machine Learning 83(1), 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank import LeafRank
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0], [4.0], [5.0]])
    >>> y = np.array([0, 0, 1, 0, 1, 1])
    >>> leafrank = LeafRank(max_depth=1, min_samples_leaf=1).fit(X, y)
    >>> leafrank.goes_left(X)
    array([False, False,  True,  True,  True,  True])
    >>> round(leafrank.gain_, 3)
    0.667
    """

    _parameter_constraints: dict = {
        "max_depth": [Interval(Integral, 1, None, closed="left")],
        "min_samples_leaf": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0.0, 1.0, closed="neither"),
            StrOptions({"auto"}),
        ],
        "max_features": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0.0, 1.0, closed="right"),
            StrOptions({"sqrt", "log2"}),
            None,
        ],
        "criterion": [StrOptions(set(CRITERIA))],
        "splitter": [StrOptions(set(SPLITTERS))],
        "max_bins": [Interval(Integral, 2, MAX_BINS, closed="both")],
        "node_subsample": [Interval(Integral, 2, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        max_depth=5,
        min_samples_leaf="auto",
        max_features=None,
        criterion="youden",
        splitter="best",
        max_bins=MAX_BINS,
        node_subsample=65536,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.criterion = criterion
        self.splitter = splitter
        self.max_bins = max_bins
        self.node_subsample = node_subsample
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        return tags

    def _resolve_leaf_size(self, n_samples):
        """This LeafRank with ``min_samples_leaf="auto"`` resolved (see
        :func:`resolve_leaf_size`)."""
        if not isinstance(self.min_samples_leaf, str):  # "auto", the only string
            return self
        return clone(self).set_params(min_samples_leaf=auto_min_samples_leaf(n_samples))

    def _growth_params(self, n_features, **master):
        """The engine's parameters of this rule for nodes of ``n_features``.

        A growth needs ``min_samples_leaf="auto"`` resolved first
        (:func:`resolve_leaf_size`), as ``min_samples_split="auto"``.
        """
        return GrowthParams(
            rule_max_depth=self.max_depth,
            min_samples_leaf=self.min_samples_leaf,
            rule_max_features=resolve_max_features(self.max_features, n_features),
            criterion=self.criterion,
            splitter=self.splitter,
            max_fit_rows=self.node_subsample,
            **master,
        )

    def _fit_arrays(self, X, y01, sample_weight):
        self.n_features_in_ = X.shape[1]
        self.classes_ = np.array([0, 1])
        rows = np.flatnonzero(sample_weight > 0)
        pos = y01[rows] == 1
        if not pos.any() or pos.all():
            raise ValueError(
                "Both classes need a positive total weight in the node to be split."
            )
        mapper = BinMapper(max_bins=self.max_bins, subsample=None).fit(X[rows])
        codes = mapper.transform(X)
        seed = check_random_state(self.random_state).randint(_MAX_SEED)
        rules, gain = fit_rule(
            codes,
            y01,
            sample_weight,
            rows,
            mapper,
            self._resolve_leaf_size(rows.shape[0])._growth_params(X.shape[1]),
            seed,
        )
        arrays = rules.arrays(0, rules.n_nodes)
        self.tree_ = RuleTree(
            rules.child_left,
            rules.child_right,
            rules.feature,
            rules.threshold,
            rules.missing_left,
            rules.missing_seen,
            arrays["categories"],
        )
        self.left_nodes_ = rules.left_leaf.copy()
        self._improvement = rules.improvement
        self.gain_ = gain
        self.n_cuts_ = 2**self.max_depth - 1
        return self

    def _goes_left_arrays(self, X):
        return self.left_nodes_[self.tree_.apply(X)]

    @property
    def feature_importances_(self):
        check_is_fitted(self)
        return split_importances(
            self.tree_.children_left,
            self.tree_.feature,
            self._improvement,
            self.n_features_in_,
        )

    def left_rules(self, feature_names=None):
        """The left side as a union of boxes (one per kept inner-tree leaf).

        Parameters
        ----------
        feature_names : sequence of str or None, default=None
            Names of the features (``x[i]`` if None).

        Returns
        -------
        rules : list of list of tuple
            One list per kept leaf, each a list of conditions
            (:class:`SplitCondition`: feature, op, value, missing) combined
            with AND.
        """
        check_is_fitted(self)
        self._check_feature_names(feature_names)
        tree = self.tree_
        return box_rules(
            tree.children_left,
            tree.children_right,
            tree.feature,
            tree.threshold,
            self.left_nodes_,
            lambda index: self._format_feature(index, feature_names),
            tree.missing_left,
            tree.missing_seen,
            tree.categories,
        )

    def describe(self, feature_names=None):
        """A human-readable description of the left (better) side.

        Parameters
        ----------
        feature_names : sequence of str or None, default=None
            Names of the features (``x[i]`` if None).

        Returns
        -------
        description : str

        Examples
        --------
        >>> import numpy as np
        >>> from treerank import LeafRank
        >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
        >>> leafrank = LeafRank(max_depth=1, min_samples_leaf=1).fit(X, [0, 0, 1, 1])
        >>> leafrank.describe(["age"])
        'left if (age > 1.5)'
        """
        return describe_boxes(self.left_rules(feature_names))


class ClassifierLeafRank(BaseLeafRank):
    """Any scikit-learn classifier accepting ``sample_weight`` as a LeafRank.

    The classifier is cloned and fitted on the node's data with the two classes
    weighted inversely to their weights in the node; the points it predicts
    positive form the left, better, side. Its weighted error is then
    ``(1 - (local TPR - local FPR)) / 2``, so it is trained for the LeafRank
    criterion. If, on the node's data, the predicted-positive side has a lower
    TPR - FPR than its complement, the sides are swapped.

    Read more in the :ref:`User Guide <leafrank>`.

    Parameters
    ----------
    estimator : classifier
        An unfitted scikit-learn classifier whose ``fit`` accepts
        ``sample_weight``, for example ``LogisticRegression()`` or
        ``LinearSVC()``. It is cloned, never fitted in place.
    random_state : int, RandomState instance or None, default=None
        If not None and the estimator has a ``random_state`` parameter, it is
        set from this seed (TreeRank sets it per node).

    Attributes
    ----------
    estimator_ : classifier
        The fitted clone.
    flip_ : bool
        Whether the left side is the predicted-negative side.
    gain_ : float
        Local TPR minus local FPR of the left side on the training data.
    n_cuts_ : int
        ``n_features_in_``: the complexity used by the structural pruning
        penalty (a linear rule in d dimensions has VC dimension d + 1).
    feature_importances_ : ndarray of shape (n_features,)
        Normalized ``|coef_|`` for linear models, the estimator's own
        ``feature_importances_`` if it has some, else uniform.
    classes_ : ndarray of shape (2,)
        The labels, negative first: :meth:`predict` returns ``classes_[1]``
        on the left side.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.linear_model import LogisticRegression
    >>> from treerank import ClassifierLeafRank
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> leafrank = ClassifierLeafRank(LogisticRegression()).fit(X, [0, 0, 1, 1])
    >>> leafrank.goes_left(X)
    array([False, False,  True,  True])
    """

    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "predict"])],
        "random_state": ["random_state"],
    }

    def __init__(self, estimator, *, random_state=None):
        self.estimator = estimator
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            inner = get_tags(self.estimator).input_tags
        except (AttributeError, TypeError, ValueError):
            inner = None
        tags.input_tags.allow_nan = inner is not None and inner.allow_nan
        tags.input_tags.sparse = inner is not None and inner.sparse
        return tags

    def _fit_arrays(self, X, y01, sample_weight):
        self.n_features_in_ = X.shape[1]
        self.classes_ = np.array([0, 1])
        if not has_fit_parameter(self.estimator, "sample_weight"):
            raise ValueError(
                f"estimator {type(self.estimator).__name__} does not accept "
                "sample_weight in fit; a LeafRank needs class-balanced weights."
            )
        estimator = clone(self.estimator)
        if self.random_state is not None and "random_state" in estimator.get_params():
            seed = check_random_state(self.random_state).randint(np.iinfo(np.int32).max)
            estimator.set_params(random_state=seed)
        estimator.fit(X, y01, sample_weight=balanced_node_weights(y01, sample_weight))
        self.estimator_ = estimator
        self.flip_ = False
        predicted_positive = self._predicted_positive(X)
        beta, alpha = _local_rates(y01, sample_weight, predicted_positive)
        if beta - alpha < 0:
            self.flip_ = True
            beta, alpha = 1 - beta, 1 - alpha
        self.gain_ = float(max(beta - alpha, 0.0))
        self.n_cuts_ = int(X.shape[1])
        return self

    def _predicted_positive(self, X):
        prediction = np.asarray(self.estimator_.predict(X))
        classes = getattr(self.estimator_, "classes_", np.array([0, 1]))
        return prediction == classes[-1]

    def _goes_left_arrays(self, X):
        return self._predicted_positive(X) != self.flip_

    @property
    def feature_importances_(self):
        check_is_fitted(self)
        estimator = self.estimator_
        if hasattr(estimator, "coef_"):
            weights = (
                np.abs(np.asarray(estimator.coef_, dtype=np.float64))
                .reshape(-1, self.n_features_in_)
                .sum(axis=0)
            )
        elif hasattr(estimator, "feature_importances_"):
            weights = np.asarray(estimator.feature_importances_, dtype=np.float64)
        else:
            weights = np.ones(self.n_features_in_)
        total = weights.sum()
        return weights / total if total > 0 else weights

    def describe(self, feature_names=None):
        """A human-readable description of the left (better) side.

        For a linear model, the rule ``w.x + b > 0`` (or ``< 0`` when the sides
        were swapped) with its coefficients; otherwise the estimator's name.

        Parameters
        ----------
        feature_names : sequence of str or None, default=None
            Names of the features (``x[i]`` if None).

        Returns
        -------
        description : str
        """
        check_is_fitted(self)
        self._check_feature_names(feature_names)
        estimator = self.estimator_
        coef = getattr(estimator, "coef_", None)
        if coef is None or np.asarray(coef).size != self.n_features_in_:
            side = "negative" if self.flip_ else "positive"
            return f"left if {type(estimator).__name__} predicts {side}"
        intercept = float(np.ravel(getattr(estimator, "intercept_", [0.0]))[0])
        return describe_linear(
            np.asarray(coef, dtype=np.float64).ravel(),
            intercept,
            self.flip_,
            lambda index: self._format_feature(index, feature_names),
        )


class SplitCondition(NamedTuple):
    """One condition of a box of a LeafRank's left side.

    Attributes
    ----------
    feature : str
        Display name of the feature.
    op : {"<=", ">", "in", "not in"}
        Comparison with ``value``: a threshold for ``"<="``/``">"``, a tuple
        of category labels for ``"in"``/``"not in"``.
    value : float or tuple
    missing : bool
        Whether missing values satisfy the condition, when the split saw
        missing values in training (False otherwise: a split that saw none
        sends them to its side of larger training weight, not reported here).
    """

    feature: str
    op: str
    value: object
    missing: bool


def box_rules(
    children_left,
    children_right,
    feature,
    threshold,
    left_nodes,
    name,
    missing_left=None,
    missing_seen=None,
    categories=None,
    category_labels=None,
):
    """The union of boxes formed by the kept leaves of a binary tree.

    Parameters
    ----------
    children_left, children_right, feature, threshold : ndarray
        The tree's arrays (parents before children, -1 for leaves; a point
        goes left when ``x[feature] <= threshold``).
    left_nodes : ndarray of bool
        The leaves forming the union.
    name : callable
        Maps a feature index to its display name.
    missing_left, missing_seen : ndarray of bool or None, default=None
        Where missing values go at each split, and whether the split saw any
        in training (only those are reported).
    categories : list or None, default=None
        For each node, the tuple of category codes sent left by a categorical
        split (None for a threshold split).
    category_labels : callable or None, default=None
        Maps ``(feature index, codes)`` to display labels (the codes if None).

    Returns
    -------
    rules : list of list of SplitCondition
        One list of conditions per kept leaf.
    """
    n = len(children_left)
    if missing_left is None:
        missing_left = np.zeros(n, dtype=bool)
    if missing_seen is None:
        missing_seen = np.zeros(n, dtype=bool)
    paths = {0: []}
    rules = []
    for node in range(n):
        conditions = paths.pop(node)
        left, right = children_left[node], children_right[node]
        if left == -1:
            if left_nodes[node]:
                rules.append(conditions)
            continue
        index = int(feature[node])
        feature_name = name(index)
        seen = bool(missing_seen[node])
        to_left = bool(missing_left[node])
        codes = None if categories is None else categories[node]
        if codes is None:
            cut = float(threshold[node])
            go_left = SplitCondition(feature_name, "<=", cut, seen and to_left)
            go_right = SplitCondition(feature_name, ">", cut, seen and not to_left)
        else:
            labels = (
                tuple(codes)
                if category_labels is None
                else category_labels(index, codes)
            )
            go_left = SplitCondition(feature_name, "in", labels, seen and to_left)
            go_right = SplitCondition(
                feature_name, "not in", labels, seen and not to_left
            )
        paths[left] = [*conditions, go_left]
        paths[right] = [*conditions, go_right]
    return rules


def format_condition(condition):
    """Text of one condition: ``age <= 41.5``, ``city in {A, B} or missing``."""
    feature, op, value, missing = condition
    if op in ("in", "not in"):
        text = f"{feature} {op} {{{', '.join(str(v) for v in value)}}}"
    else:
        text = f"{feature} {op} {value:.6g}"
    return text + " or missing" if missing else text


def describe_boxes(rules):
    """Text of a union of boxes: ``left if (a <= 1 and b > 2) or (...)``."""
    if not rules:
        return "no split (left side empty)"
    boxes = []
    for conditions in rules:
        if not conditions:
            boxes.append("(everything)")
        else:
            boxes.append(
                "("
                + " and ".join(
                    format_condition(c) if not c.missing else f"({format_condition(c)})"
                    for c in conditions
                )
                + ")"
            )
    return "left if " + " or ".join(boxes)


def describe_linear(coef, intercept, flip, name):
    """Text of a linear rule: ``left if 0.5*x[0] + -1*x[1] + 0.2 > 0``."""
    terms = " + ".join(f"{c:.6g}*{name(i)}" for i, c in enumerate(coef))
    op = "<=" if flip else ">"
    return f"left if {terms} + {intercept:.6g} {op} 0"
