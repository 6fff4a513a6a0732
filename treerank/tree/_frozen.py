"""Fitted LeafRanks rebuilt from plain arrays (for model files without pickle).

A saved model stores each node's splitting rule as numbers: the inner CART
tree's arrays for :class:`~treerank.LeafRank` (real thresholds compared in
float64, and where missing values go), the coefficients of a linear classifier
for :class:`~treerank.ClassifierLeafRank`. The frozen classes below apply these
rules exactly as the original objects did, so a loaded model predicts bit for
bit like the saved one.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.validation import check_array

from treerank.tree._leafrank import (
    box_rules,
    describe_boxes,
    describe_linear,
    split_importances,
    traverse_binary_tree,
)

__all__ = [
    "FrozenLinearLeafRank",
    "FrozenTreeLeafRank",
    "describe_linear_rule",
    "linear_decision",
]


def linear_decision(X, coef, intercept):
    """``X @ coef + intercept``, on the features with a non-zero coefficient.

    A row whose value is missing (NaN) in a feature of non-zero coefficient
    gets NaN; a missing value in a feature the rule does not use is ignored.
    With every coefficient non-zero this is exactly the decision function of
    scikit-learn's linear classifiers (the same operations).

    Parameters
    ----------
    X : ndarray of float64 of shape (n_samples, n_features)
    coef : ndarray of float64 of shape (n_features,)
    intercept : float

    Returns
    -------
    decision : ndarray of float64 of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree._frozen import linear_decision
    >>> linear_decision(np.array([[1.0, np.nan], [np.nan, 2.0]]),
    ...                 np.array([2.0, 0.0]), -1.0)
    array([ 1., nan])
    """
    used = np.flatnonzero(coef)
    if used.shape[0] < coef.shape[0]:
        X, coef = X[:, used], coef[used]
    return (X @ coef[:, None] + intercept).ravel()


def describe_linear_rule(coef, intercept, flip, name):
    """Text of the rule ``left if (coef.x + intercept > 0) != flip``.

    Written with the non-zero terms only, as ``left if 0.5*a - 2*b > 1``. A
    flipped rule is inclusive and sends the rows with a missing value left
    (see :class:`~treerank.tree.FrozenLinearLeafRank`), which the text says;
    otherwise they go right, as a condition on a missing value does not hold.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree._frozen import describe_linear_rule
    >>> describe_linear_rule(np.array([0.5, 0.0, -2.0]), -1.0, False,
    ...                      lambda i: "abc"[i])
    'left if 0.5*a - 2*c > 1'
    >>> describe_linear_rule(np.array([-0.5, 0.0, 2.0]), 1.0, True,
    ...                      lambda i: "abc"[i])
    'left if 0.5*a - 2*c >= 1 (missing values: left)'
    """
    used = np.flatnonzero(coef)
    if used.shape[0] == 0:
        return (
            "no split (left side empty)" if not flip else "left if a value is missing"
        )
    # left iff c.x > -b; with flip, left iff c.x <= -b iff (-c).x >= b
    sign = -1.0 if flip else 1.0
    terms = []
    for i in used:
        c = sign * float(coef[i])
        text = f"{abs(c):.6g}*{name(int(i))}"
        if not terms:
            terms.append(text if c > 0 else "-" + text)
        else:
            terms.append(("+ " if c > 0 else "- ") + text)
    op = ">=" if flip else ">"
    rule = f"left if {' '.join(terms)} {op} {-sign * float(intercept):.6g}"
    return rule + " (missing values: left)" if flip else rule


class _FrozenBase:
    """Shared behaviour of frozen rules: validation and feature names."""

    def goes_left(self, X):
        """Whether each point goes to the left (better) child.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        left : ndarray of bool of shape (n_samples,)
        """
        X = check_array(X, dtype=np.float64, ensure_all_finite="allow-nan")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but the rule expects "
                f"{self.n_features_in_}."
            )
        return self._goes_left_arrays(X)

    def _name(self, feature_names):
        if feature_names is not None and len(feature_names) != self.n_features_in_:
            raise ValueError(
                f"feature_names must contain {self.n_features_in_} elements; got "
                f"{len(feature_names)}."
            )

        def name(index):
            return f"x[{index}]" if feature_names is None else str(feature_names[index])

        return name

    def get_params(self, deep=True):
        """A frozen rule has no parameters (it is never refitted)."""
        return {}


class FrozenTreeLeafRank(_FrozenBase):
    """The rule of a fitted :class:`~treerank.LeafRank`, from its arrays.

    Parameters
    ----------
    children_left, children_right : ndarray of int
        Inner tree's children (-1 for leaves), parents before children.
    feature : ndarray of int
        Split feature of each inner node.
    threshold : ndarray of float64
        Split threshold of each inner node (left when ``x <= threshold``;
        ``+inf`` sends every non-missing value left).
    left_nodes : ndarray of bool
        Inner leaves forming the left (better) side.
    feature_importances : ndarray of float or None
        Importances of the features in the rule; None to compute them from
        ``improvement`` when asked (then ``n_features`` is required).
    n_cuts : int
        Complexity used by the structural pruning penalty.
    gain : float
        Local TPR - FPR of the left side on the training data.
    missing_left : ndarray of bool or None, default=None
        Where missing values (NaN) go at each inner node (None: right).
    missing_seen : ndarray of bool or None, default=None
        Whether each split saw missing values in training (descriptions
        mention missing values only there).
    categories : list or None, default=None
        Per node, the tuple of category codes a categorical split sends left
        (None for a threshold split; the feature then holds category codes).
    category_labels : sequence or None, default=None
        Per feature, the labels of its category codes (None for a numeric
        feature), used in descriptions.
    improvement : ndarray of float or None, default=None
        Criterion improvement of each split, the basis of the feature
        importances (as :class:`~treerank.LeafRank` computes them); kept so
        that a model file stores the rule exactly.
    n_features : int or None, default=None
        Number of features of the rule, when ``feature_importances`` is None.

    Attributes
    ----------
    feature_importances_ : ndarray of shape (n_features,)
        The given importances, or the normalized non-negative improvements
        of the splits per feature (computed on each access, so that many
        rules over many features do not hold one array each).
    n_features_in_ : int
    n_cuts_ : int
    gain_ : float

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree import FrozenTreeLeafRank
    >>> rule = FrozenTreeLeafRank(
    ...     children_left=[1, -1, -1], children_right=[2, -1, -1], feature=[0, -2, -2],
    ...     threshold=[1.5, -2.0, -2.0], left_nodes=[False, False, True],
    ...     feature_importances=[1.0], n_cuts=1, gain=1.0)
    >>> rule.goes_left(np.array([[0.0], [2.0]]))
    array([False,  True])
    >>> rule.describe(["age"])
    'left if (age > 1.5)'
    """

    def __init__(
        self,
        children_left,
        children_right,
        feature,
        threshold,
        left_nodes,
        feature_importances,
        n_cuts,
        gain,
        missing_left=None,
        missing_seen=None,
        categories=None,
        category_labels=None,
        improvement=None,
        n_features=None,
    ):
        self.children_left = np.asarray(children_left, dtype=np.intp)
        self.children_right = np.asarray(children_right, dtype=np.intp)
        self.feature = np.asarray(feature, dtype=np.intp)
        self.threshold = np.asarray(threshold, dtype=np.float64)
        self.left_nodes_ = np.asarray(left_nodes, dtype=bool)
        self.missing_left = (
            np.zeros(self.children_left.shape, dtype=bool)
            if missing_left is None
            else np.asarray(missing_left, dtype=bool)
        )
        self.missing_seen = (
            np.zeros(self.children_left.shape, dtype=bool)
            if missing_seen is None
            else np.asarray(missing_seen, dtype=bool)
        )
        self.categories = (
            [None] * self.children_left.shape[0]
            if categories is None
            else [None if c is None else tuple(int(v) for v in c) for c in categories]
        )
        self.category_labels = category_labels
        self.improvement = (
            None if improvement is None else np.asarray(improvement, dtype=np.float64)
        )
        if feature_importances is None:
            if self.improvement is None or n_features is None:
                raise ValueError(
                    "A frozen tree rule needs its feature_importances, or its "
                    "improvement and n_features."
                )
            self._importances = None
            self.n_features_in_ = int(n_features)
        else:
            self._importances = np.asarray(feature_importances, dtype=np.float64)
            self.n_features_in_ = int(self._importances.shape[0])
        self.n_cuts_ = int(n_cuts)
        self.gain_ = float(gain)
        n = self.children_left.shape[0]
        if not (
            n >= 1
            and all(
                a.shape == (n,)
                for a in (
                    self.children_right,
                    self.feature,
                    self.threshold,
                    self.left_nodes_,
                    self.missing_left,
                    self.missing_seen,
                    *(() if self.improvement is None else (self.improvement,)),
                )
            )
            and len(self.categories) == n
        ):
            raise ValueError(
                "The arrays of a frozen tree rule must all have one entry per node."
            )
        internal = self.children_left >= 0
        nodes = np.arange(n)
        if np.any(
            internal & ((self.children_left <= nodes) | (self.children_right <= nodes))
        ):
            raise ValueError("A frozen tree rule must list parents before children.")
        if np.any(internal & (self.children_right >= n)) or np.any(
            self.children_left >= n
        ):
            raise ValueError("A frozen tree rule refers to a node that does not exist.")
        if np.any(
            internal & ((self.feature < 0) | (self.feature >= self.n_features_in_))
        ):
            raise ValueError(
                "A frozen tree rule splits on a feature that does not exist."
            )
        threshold = self.threshold[internal]
        if not np.all(np.isfinite(threshold) | (threshold == np.inf)):
            raise ValueError("A frozen tree rule has a NaN or -inf threshold.")

    @property
    def feature_importances_(self):
        """Importance of each feature in the rule (normalized)."""
        if self._importances is not None:
            return self._importances
        return split_importances(
            self.children_left, self.feature, self.improvement, self.n_features_in_
        )

    def _goes_left_arrays(self, X):
        return self._goes_left_rows(X, np.arange(X.shape[0]), None)

    def _goes_left_rows(self, X, rows, columns):
        node = traverse_binary_tree(
            self.children_left,
            self.children_right,
            self.feature,
            self.threshold,
            self.missing_left,
            X,
            rows,
            columns,
            self.categories,
        )
        return self.left_nodes_[node]

    def _category_labels(self, index, codes):
        labels = None if self.category_labels is None else self.category_labels[index]
        if labels is None:
            return tuple(codes)
        return tuple(labels[c] if c < len(labels) else c for c in codes)

    def left_rules(self, feature_names=None):
        """The left side as a union of boxes (see ``LeafRank.left_rules``)."""
        return box_rules(
            self.children_left,
            self.children_right,
            self.feature,
            self.threshold,
            self.left_nodes_,
            self._name(feature_names),
            self.missing_left,
            self.missing_seen,
            self.categories,
            self._category_labels,
        )

    def describe(self, feature_names=None):
        """A human-readable description of the left (better) side."""
        return describe_boxes(self.left_rules(feature_names))


class FrozenLinearLeafRank(_FrozenBase):
    """The rule of a fitted linear LeafRank, from its coefficients.

    Left when ``X @ coef + intercept > 0`` (``<= 0`` when ``flip``), exactly
    as the binary linear classifier of a :class:`~treerank.ClassifierLeafRank`
    predicted its positive class, or as a
    :class:`~treerank.tree.LinearLeafRank` decided. A row with a missing value
    (NaN) in a feature of non-zero coefficient goes right, or left when
    ``flip`` (see :func:`linear_decision`).

    Parameters
    ----------
    coef : ndarray of shape (n_features,)
    intercept : float
    flip : bool
    feature_importances : ndarray of shape (n_features,)
    n_cuts : int
    gain : float
    estimator_name : str
        Name of the classifier, for descriptions.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree import FrozenLinearLeafRank
    >>> rule = FrozenLinearLeafRank([1.0, -1.0], 0.0, False, [0.5, 0.5], 2, 0.5)
    >>> rule.goes_left(np.array([[2.0, 1.0], [0.0, 1.0]]))
    array([ True, False])
    """

    def __init__(
        self,
        coef,
        intercept,
        flip,
        feature_importances,
        n_cuts,
        gain,
        estimator_name="linear classifier",
    ):
        self.coef = np.asarray(coef, dtype=np.float64).ravel()
        self.intercept = float(intercept)
        self.flip_ = bool(flip)
        self.feature_importances_ = np.asarray(feature_importances, dtype=np.float64)
        self.n_features_in_ = int(self.coef.shape[0])
        self.n_cuts_ = int(n_cuts)
        self.gain_ = float(gain)
        self.estimator_name = str(estimator_name)
        if self.feature_importances_.shape != self.coef.shape:
            raise ValueError("coef and feature_importances must have the same length.")
        if not (np.all(np.isfinite(self.coef)) and np.isfinite(self.intercept)):
            raise ValueError("A frozen linear rule has non-finite coefficients.")

    def _goes_left_arrays(self, X):
        # the same operations as LinearClassifierMixin.decision_function
        decision = linear_decision(
            np.asarray(X, dtype=np.float64), self.coef, self.intercept
        )
        return (decision > 0) != self.flip_

    def describe(self, feature_names=None):
        """A human-readable description of the left (better) side."""
        if self.estimator_name == "LinearLeafRank":
            return describe_linear_rule(
                self.coef, self.intercept, self.flip_, self._name(feature_names)
            )
        return describe_linear(
            self.coef, self.intercept, self.flip_, self._name(feature_names)
        )
