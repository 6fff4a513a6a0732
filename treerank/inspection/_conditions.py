"""The condition each row meets on each feature, read from its paths.

A row's path through a tree tests some features: a numeric decision sends it
left when its value is at most the threshold, a categorical one when its
category is in the decision's set, and a missing value follows the
decision's missing direction. On each feature, the decisions of the row's
paths in all the trees of the model (one tree for a TreeRank) bound its value
to an interval (or its category to a set): values of that feature for which
the row takes the same path in every tree, the other features unchanged, so
for which its score does not change (a value outside may still reach the
same leaves, through another inner leaf of a rule). That interval, written
as a rule
("debt_ratio > 0.43", "0.2 < age <= 0.5", "purpose in {car, education}",
"income is missing"), is the condition the row met on the feature. In a
forest of many trees it is narrow: it is where the row's score is constant.
A feature that the row's paths never test has no condition (an empty rule):
never a value written as an equality.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine import MISSING_BIN
from treerank._engine._jit import jit
from treerank._engine._routing import CATEGORICAL
from treerank.inspection._interventional import _FEATURE_MASK, follow

__all__ = ["RowConditions", "row_conditions"]


@jit
def _path_bounds(
    X, entries, nodes, tests, category_sets, lower, upper, missing, allowed
):
    """Bounds (and category sets) of every row's paths on every feature.

    ``allowed[i, k]`` (4 words: a 256-bit set of category codes) is
    intersected with the set of each categorical decision (or its
    complement, for a row sent right); it has shape (n_samples, n_features,
    4), or (0, 0, 4) when no decision is categorical.
    """
    for i in range(X.shape[0]):
        for b in range(entries.shape[0]):
            g = entries[b]
            while g >= 0:
                test = tests[g]
                k = np.int64(test & _FEATURE_MASK)
                value = X[i, k]
                node = nodes[g]
                goes = follow(value, g, nodes, tests, category_sets)
                if test & CATEGORICAL:
                    code = np.int64(value) if value == value else -1
                    if not 0 <= code < MISSING_BIN:
                        missing[i, k] = True
                    else:
                        row = np.int64(node.threshold)
                        for w in range(4):
                            word = category_sets[row, w]
                            if goes == node.left:
                                allowed[i, k, w] &= word
                            else:
                                allowed[i, k, w] &= ~word
                elif value != value:
                    missing[i, k] = True
                elif goes == node.left:
                    upper[i, k] = min(upper[i, k], node.threshold)
                else:
                    lower[i, k] = max(lower[i, k], node.threshold)
                g = goes


def _number(value, digits=6):
    return f"{value:.{digits}g}"


def _bound(bound, value, upper):
    """A bound as short text that the row's value still meets once rounded.

    Six significant digits, more when rounding would put the row's value on
    the wrong side of the written bound (a value just above a threshold).
    """
    for digits in (6, 9, 12, 17):
        text = _number(bound, digits)
        written = float(text)
        if (value <= written) if upper else (value > written):
            return text
    return repr(float(bound))


class RowConditions:
    """The conditions the rows met on each feature (see the module docstring).

    Parameters
    ----------
    data : ndarray of float64 of shape (n_samples, n_features)
        The rows as the trees read them.
    lower, upper : ndarray of float64 of shape (n_samples, n_features) or None
        Bounds of each numeric feature (``lower < x <= upper``; infinite when
        no decision bounds it); None when the model has no decision graph.
    missing : ndarray of bool of shape (n_samples, n_features) or None
        Whether the row's value was missing at a decision on the feature.
    allowed : ndarray of uint64 of shape (n_samples, n_features, 4) or None
        Category sets of the categorical features (None without categorical
        decisions).
    feature_names : list of str
    category_labels : list or None
        Per feature, the labels of its category codes.
    """

    def __init__(
        self, data, lower, upper, missing, allowed, feature_names, category_labels
    ):
        self.data = data
        self.lower = lower
        self.upper = upper
        self.missing = missing
        self.allowed = allowed
        self.feature_names = feature_names
        self.category_labels = category_labels

    def _labels(self, feature):
        if self.category_labels is None:
            return None
        return self.category_labels[feature]

    def rule(self, row, feature):
        """The condition of ``row`` on ``feature``, as text.

        Parameters
        ----------
        row, feature : int

        Returns
        -------
        rule : str
            An interval (``"0.2 < age <= 0.5"``, ``"age > 0.2"``), a set of
            categories (``"purpose in {car, education}"``, or ``"purpose =
            car"`` for one), ``"income is missing"``; empty when the row's
            paths never test the feature (its contribution then comes from
            the background rows' paths only) or the model has no decision
            graph.
        """
        if self.lower is None:  # no decision graph: no interval to state
            return ""
        name = self.feature_names[feature]
        value = self.data[row, feature]
        labels = self._labels(feature)
        if value != value or (labels is not None and not 0 <= int(value) < len(labels)):
            return f"{name} is missing" if self.missing[row, feature] else ""
        if labels is not None:
            return self._category_rule(row, feature, name, labels)
        low, high = self.lower[row, feature], self.upper[row, feature]
        if np.isfinite(low) and np.isfinite(high):
            return (
                f"{_bound(low, value, False)} < {name} <= {_bound(high, value, True)}"
            )
        if np.isfinite(low):
            return f"{name} > {_bound(low, value, False)}"
        if np.isfinite(high):
            return f"{name} <= {_bound(high, value, True)}"
        return ""  # the row's paths never test the feature

    def _category_rule(self, row, feature, name, labels):
        code = int(self.data[row, feature])
        if self.allowed is None:  # no categorical decision in the model
            return ""
        words = self.allowed[row, feature]
        members = [
            c for c in range(len(labels)) if (int(words[c >> 6]) >> (c & 63)) & 1
        ]
        if len(members) == len(labels):  # never tested on the row's paths
            return ""
        if len(members) <= 1:
            return f"{name} = {labels[code]}"
        return f"{name} in {{{', '.join(str(labels[c]) for c in members)}}}"


def row_conditions(tree_sum_or_router, data, feature_names, category_labels):
    """The conditions each row met, from the decision graphs of a model.

    Parameters
    ----------
    tree_sum_or_router : Router or None
        The decision graphs of the model's trees (None for trees of other
        splitters: there are then no rules).
    data : ndarray of float64 of shape (n_samples, n_features)
    feature_names : list of str
    category_labels : list or None

    Returns
    -------
    RowConditions
    """
    router = tree_sum_or_router
    if router is None:
        return RowConditions(data, None, None, None, None, feature_names, None)
    n, d = data.shape
    lower = np.full((n, d), -np.inf)
    upper = np.full((n, d), np.inf)
    missing = np.zeros((n, d), dtype=bool)
    categorical = bool(np.any(router.tests & CATEGORICAL))
    allowed = np.full(
        (n, d, 4) if categorical else (0, 0, 4), np.iinfo(np.uint64).max, np.uint64
    )
    _path_bounds(
        data,
        router.entries,
        router.nodes,
        router.tests,
        router.category_sets,
        lower,
        upper,
        missing,
        allowed,
    )
    return RowConditions(
        data,
        lower,
        upper,
        missing,
        allowed if categorical else None,
        feature_names,
        category_labels,
    )
