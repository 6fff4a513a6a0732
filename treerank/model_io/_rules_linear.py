"""Linear rules as arrays: LinearLeafRank and linear classifiers' rules.

The rule of a :class:`~treerank.tree.LinearLeafRank` or of a
:class:`~treerank.ClassifierLeafRank` around a binary linear classifier
(:data:`LINEAR_CLASSIFIERS`) is ``left if (coef.x + intercept > 0) != flip``:
its coefficients, intercept, side and feature importances
(:data:`LINEAR_ARRAYS`), with, per internal master node, the features it was
fitted on (all, or a sorted draw of ``max_features_node`` of them), its
complexity and its gain (:data:`NODE_ARRAYS`, which the rules of a
MixedLeafRank share). The rules are rebuilt as
:class:`~treerank.tree.FrozenLinearLeafRank`.

Reading checks finite coefficients on the node's features, feature
importances in [0, 1] summing to one over the rule, the complexity
(``n_cuts``) and gain that :class:`~treerank.ClassifierLeafRank` or
:class:`~treerank.tree.LinearLeafRank` would have, every rule's gain against
the tree's counts.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools

import numpy as np
from sklearn import linear_model, svm

from treerank.model_io._arrays import (
    check_array,
    check_declared,
    check_indices,
    check_offsets,
    offsets_from_lengths,
)
from treerank.tree._frozen import FrozenLinearLeafRank
from treerank.tree._leafrank import ClassifierLeafRank
from treerank.tree._linear import LinearLeafRank
from treerank.tree._structure import RankingTreeStructure

__all__ = [
    "LINEAR_ARRAYS",
    "LINEAR_CLASSIFIERS",
    "NODE_ARRAYS",
    "check_linear_n_cuts",
    "check_rule_gain",
    "frozen_linear_rules",
    "linear_rule",
    "node_structures",
    "pack_linear",
    "pack_linear_rules",
    "pack_node_arrays",
    "unpack_linear",
    "unpack_linear_rules",
    "unpack_node_features",
]


# Binary linear classifiers whose ``predict`` is ``decision_function > 0`` with
# ``decision_function = X @ coef_.T + intercept_``: their rule is two arrays.
LINEAR_CLASSIFIERS = {
    cls.__name__: cls
    for cls in (
        linear_model.LogisticRegression,
        linear_model.LogisticRegressionCV,
        linear_model.RidgeClassifier,
        linear_model.RidgeClassifierCV,
        linear_model.SGDClassifier,
        linear_model.Perceptron,
        linear_model.PassiveAggressiveClassifier,
        svm.LinearSVC,
    )
}


# The gain of a rule, computed by its LeafRank, against the one of the master
# tree's counts; the sum of a linear rule's feature importances against 1.
_GAIN_ATOL = 1e-9


# one entry per internal master node (linear and mixed rules)
NODE_ARRAYS = (
    "rule_all_features",
    "rule_feature_offsets",
    "rule_features",
    "rule_n_cuts",
    "rule_gain",
)
# one entry per linear rule (rule_importance: absent from older linear files)
LINEAR_ARRAYS = (
    "rule_coef_offsets",
    "rule_coef",
    "rule_importance",
    "rule_intercept",
    "rule_flip",
)


def pack_linear(structures, arrays):
    """The arrays of trees with linear rules; the description of the rules."""
    rules = [
        linear_rule(rule)
        for s in structures
        for rule in s.leafranks
        if rule is not None
    ]
    names = {rule[5] for rule in rules}
    if len(names) > 1:
        raise ValueError(
            f"The linear rules of a model come from one classifier: {sorted(names)}."
        )
    pack_node_arrays(structures, arrays, [r[3] for r in rules], [r[4] for r in rules])
    pack_linear_rules(rules, arrays)
    return {"rule_kind": "linear", "estimator": names.pop() if names else None}


def linear_rule(rule):
    """(coef, intercept, flip, n_cuts, gain, estimator name, feature
    importances) of a linear rule; other rules are refused."""
    if isinstance(rule, LinearLeafRank):  # its frozen rule
        rule = rule.freeze()
    if isinstance(rule, FrozenLinearLeafRank):
        return (
            rule.coef,
            rule.intercept,
            rule.flip_,
            rule.n_cuts_,
            rule.gain_,
            rule.estimator_name,
            rule.feature_importances_,
        )
    if not isinstance(rule, ClassifierLeafRank):
        raise ValueError(
            f"LeafRank {type(rule).__name__} cannot be saved without pickle; use "
            "joblib.dump instead."
        )
    estimator = rule.estimator_
    if type(estimator) not in LINEAR_CLASSIFIERS.values():
        raise ValueError(
            f"A ClassifierLeafRank around {type(estimator).__name__} cannot be "
            "saved without pickle: only LeafRank and the binary linear "
            f"classifiers {sorted(LINEAR_CLASSIFIERS)} are supported. Use "
            "joblib.dump instead."
        )
    coef = np.asarray(estimator.coef_, dtype=np.float64)
    if coef.ndim != 1 and coef.shape[0] != 1:  # RidgeClassifier: 1-D coef_
        raise ValueError("Only binary linear classifiers can be saved.")
    intercept = float(np.ravel(estimator.intercept_)[0])
    return (
        coef.ravel(),
        intercept,
        rule.flip_,
        rule.n_cuts_,
        rule.gain_,
        type(estimator).__name__,
        rule.feature_importances_,
    )


def pack_node_arrays(structures, arrays, n_cuts, gains):
    """The arrays with one entry per internal node: features (FR1), n_cuts, gain."""
    features = [
        f for s in structures for f, leaf in zip(s.features, s.is_leaf) if not leaf
    ]
    arrays.update(
        {
            "rule_all_features": np.array([f is None for f in features], dtype=bool),
            "rule_feature_offsets": offsets_from_lengths(
                [0 if f is None else len(f) for f in features]
            ),
            "rule_features": np.concatenate(
                [np.asarray(f, dtype=np.int64) for f in features if f is not None]
                or [np.zeros(0, dtype=np.int64)]
            ),
            "rule_n_cuts": np.array(n_cuts, dtype=np.int64),
            "rule_gain": np.array(gains, dtype=np.float64),
        }
    )


def pack_linear_rules(rules, arrays):
    """The arrays of the linear rules (tuples of :func:`linear_rule`)."""
    arrays.update(
        {
            "rule_coef_offsets": offsets_from_lengths([len(r[0]) for r in rules]),
            "rule_coef": np.concatenate([r[0] for r in rules] or [np.zeros(0)]),
            "rule_importance": np.concatenate(
                [np.asarray(r[6], dtype=np.float64) for r in rules] or [np.zeros(0)]
            ),
            "rule_intercept": np.array([r[1] for r in rules], dtype=np.float64),
            "rule_flip": np.array([r[2] for r in rules], dtype=bool),
        }
    )


def unpack_linear(meta, arrays, trees, split, gain, expect):
    """The trees with linear rules of a file (checked master trees ``trees``)."""
    name = meta.get("estimator")
    n_rules = split.shape[0]
    if n_rules and name != expect.estimator_name:
        raise ValueError(
            f"the rules come from {name!r} but the leafrank parameter holds "
            f"{expect.estimator_name!r}"
        )
    node_features = unpack_node_features(arrays, n_rules, expect)
    width = node_features[3]
    n_cuts = check_array(
        arrays, "rule_n_cuts", kinds="iu", shape=(n_rules,), dtype=np.int64
    )
    check_linear_n_cuts(n_cuts, width, expect.estimator_name, expect.rule_max_features)
    rule_gain = check_rule_gain(arrays, gain)
    linear = unpack_linear_rules(arrays, width, required=False)
    rules = frozen_linear_rules(linear, n_cuts, rule_gain, [name] * n_rules)
    return node_structures(trees, split, rules, node_features)


def unpack_node_features(arrays, n_rules, expect):
    """The features each internal node's rule was fitted on (FR1).

    Returns ``(all_features, feature_offsets, features, width)``: whether a
    rule saw all the features, where its draw is in ``features``, and its
    number of features.
    """
    all_features = check_array(arrays, "rule_all_features", kinds="b", shape=(n_rules,))
    (n_drawn,) = check_declared(arrays, "rule_features", kinds="iu")
    feature_offsets = check_offsets(
        check_array(arrays, "rule_feature_offsets", kinds="iu", shape=(n_rules + 1,)),
        n_drawn,
        "rule_feature_offsets",
    )
    features = check_indices(
        check_array(arrays, "rule_features", kinds="iu"),
        expect.n_features,
        "rule_features",
    ).astype(np.intp)
    widths = np.diff(feature_offsets)
    n_node = expect.n_node_features
    if n_node is None:
        if not np.all(all_features) or np.any(widths != 0):
            raise ValueError("every rule uses all the features (no max_features_node)")
    elif np.any(all_features) or np.any(widths != n_node):
        raise ValueError(f"every rule must use max_features_node={n_node} features")
    if features.shape[0]:
        owner = np.repeat(np.arange(n_rules), widths)
        increasing = np.diff(features) > 0
        if not np.all(increasing | (owner[1:] != owner[:-1])):
            raise ValueError("a rule's features must be distinct and increasing")
    width = np.where(all_features, expect.n_features, widths)
    return all_features, feature_offsets, features, width


def check_rule_gain(arrays, gain):
    """The gain of each internal node's rule, as its counts say (a local TPR
    minus FPR, in [0, 1] up to the rounding of the LeafRank's sums)."""
    rule_gain = check_array(
        arrays,
        "rule_gain",
        kinds="iuf",
        shape=gain.shape,
        bounds=(0, 1 + _GAIN_ATOL),
        dtype=np.float64,
    )
    if np.any(np.abs(rule_gain - gain) > _GAIN_ATOL):
        raise ValueError("a rule's gain does not match the tree's counts")
    return rule_gain


def check_linear_n_cuts(n_cuts, width, name, max_features):
    """A linear rule's complexity: the features it uses."""
    if name == "LinearLeafRank":
        # the features the rule uses: at least one, at most its width
        limit = width if max_features is None else np.minimum(width, max_features)
        if np.any(n_cuts < 1) or np.any(n_cuts > limit):
            bound = "its width" if max_features is None else "max_features"
            raise ValueError(f"a linear rule's n_cuts must be in [1, {bound}]")
    elif np.any(n_cuts != width):
        raise ValueError("a linear rule's n_cuts must be its number of features")


def unpack_linear_rules(arrays, width, required):
    """The linear rules' coefficients, importances, intercepts and sides.

    ``width`` is each rule's number of features. ``rule_importance`` is
    ``required`` (else, absent from a file written before it, the
    importances are the normalized absolute coefficients).

    Returns
    -------
    coef_offsets, coef, importance, intercept, flip : ndarray
    """
    n_rules = width.shape[0]
    (n_coef,) = check_declared(arrays, "rule_coef", kinds="iuf")
    coef_offsets = check_offsets(
        check_array(arrays, "rule_coef_offsets", kinds="iu", shape=(n_rules + 1,)),
        n_coef,
        "rule_coef_offsets",
    )
    if np.any(np.diff(coef_offsets) != width):
        raise ValueError("the array rule_coef_offsets does not match the features")
    coef = check_array(arrays, "rule_coef", kinds="iuf", finite=True, dtype=np.float64)
    if required or "rule_importance" in arrays:
        importance = check_array(
            arrays,
            "rule_importance",
            kinds="iuf",
            shape=coef.shape,
            bounds=(0, 1),
            dtype=np.float64,
        )
        owner = np.repeat(np.arange(n_rules), width)
        totals = np.bincount(owner, weights=importance, minlength=n_rules)
        if np.any((totals != 0) & (np.abs(totals - 1) > _GAIN_ATOL)):
            raise ValueError(
                "the array rule_importance must sum to 1 (or 0) over each rule"
            )
    else:  # a file written before rule_importance: the classifiers' importances
        importance = np.abs(coef)
        for a, b in itertools.pairwise(coef_offsets):
            total = importance[a:b].sum()
            if total > 0:
                importance[a:b] /= total
    intercept = check_array(
        arrays,
        "rule_intercept",
        kinds="iuf",
        shape=(n_rules,),
        finite=True,
        dtype=np.float64,
    )
    flip = check_array(arrays, "rule_flip", kinds="b", shape=(n_rules,))
    return coef_offsets, coef, importance, intercept, flip


def frozen_linear_rules(linear, n_cuts, gain, names):
    """The frozen linear rules from :func:`unpack_linear_rules`'s arrays.

    ``names`` are the rules' classifiers: a LinearLeafRank's rule has
    non-zero coefficients on at most its ``n_cuts`` features.
    """
    coef_offsets, coef, importance, intercept, flip = linear
    own = np.array([name == "LinearLeafRank" for name in names], dtype=bool)
    owner = np.repeat(np.arange(own.shape[0]), np.diff(coef_offsets))
    used = np.bincount(owner, weights=coef != 0, minlength=own.shape[0])
    if np.any(used[own] > n_cuts[own]):
        raise ValueError("a LinearLeafRank's rule uses more features than its n_cuts")
    return [
        FrozenLinearLeafRank(
            coef[a:b],
            intercept[r],
            flip[r],
            importance[a:b],
            n_cuts[r],
            gain[r],
            estimator_name=str(names[r]),
        )
        for r, (a, b) in enumerate(itertools.pairwise(coef_offsets))
    ]


def node_structures(trees, split, rules, node_features):
    """Trees whose internal nodes ``split`` hold ``rules`` (in node order),
    fitted on the features of ``node_features`` (:func:`unpack_node_features`)."""
    node_offsets, left, right, n_pos, n_neg = trees
    all_features, feature_offsets, features = node_features[:3]
    leafranks = [None] * left.shape[0]
    node_feature_lists = [None] * left.shape[0]
    for r, node in enumerate(split):
        leafranks[node] = rules[r]
        if not all_features[r]:
            node_feature_lists[node] = features[
                feature_offsets[r] : feature_offsets[r + 1]
            ]
    structures = []
    for t in range(node_offsets.shape[0] - 1):
        a, b = int(node_offsets[t]), int(node_offsets[t + 1])
        structures.append(
            RankingTreeStructure(
                left[a:b],
                right[a:b],
                n_pos[a:b],
                n_neg[a:b],
                leafranks[a:b],
                node_feature_lists[a:b],
            )
        )
    return structures
