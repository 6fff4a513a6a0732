"""Ranking-tree structures and their splitting rules as flat numeric arrays.

A list of :class:`~treerank.tree.RankingTreeStructure` is packed into a fixed
set of concatenated arrays with offsets (so that a forest of hundreds of trees
is a handful of archive members), and unpacked into structures whose rules are
frozen (:class:`~treerank.tree.FrozenTreeLeafRank`,
:class:`~treerank.tree.FrozenLinearLeafRank`).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn import linear_model, svm

from treerank.tree._frozen import FrozenLinearLeafRank, FrozenTreeLeafRank
from treerank.tree._leafrank import ClassifierLeafRank, LeafRank
from treerank.tree._structure import RankingTreeStructure

__all__ = ["LINEAR_CLASSIFIERS", "pack_structures", "unpack_structures"]

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


def _offsets(lengths):
    return np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)


def _rule_kind(rule):
    if isinstance(rule, (LeafRank, FrozenTreeLeafRank)):
        return "tree"
    if isinstance(rule, FrozenLinearLeafRank):
        return "linear"
    if isinstance(rule, ClassifierLeafRank):
        estimator = rule.estimator_
        if type(estimator) in LINEAR_CLASSIFIERS.values():
            return "linear"
        raise ValueError(
            f"A ClassifierLeafRank around {type(estimator).__name__} cannot be saved "
            "without pickle: only LeafRank and the binary linear classifiers "
            f"{sorted(LINEAR_CLASSIFIERS)} are supported. Use joblib.dump instead."
        )
    raise ValueError(
        f"LeafRank {type(rule).__name__} cannot be saved without pickle; use "
        "joblib.dump instead."
    )


def _tree_rule_arrays(rule):
    if isinstance(rule, LeafRank):
        inner = rule.tree_.tree_
        return (
            inner.children_left,
            inner.children_right,
            inner.feature,
            inner.threshold,
            rule.left_nodes_,
        )
    return (
        rule.children_left,
        rule.children_right,
        rule.feature,
        rule.threshold,
        rule.left_nodes_,
    )


def _linear_rule_arrays(rule):
    if isinstance(rule, FrozenLinearLeafRank):
        return rule.coef, rule.intercept, rule.flip_, rule.estimator_name
    estimator = rule.estimator_
    coef = np.asarray(estimator.coef_, dtype=np.float64)
    if coef.shape[0] != 1:
        raise ValueError("Only binary linear classifiers can be saved.")
    intercept = (
        float(np.ravel(estimator.intercept_)[0])
        if np.ndim(estimator.intercept_)
        else float(estimator.intercept_)
    )
    return coef.ravel(), intercept, rule.flip_, type(estimator).__name__


def pack_structures(structures):
    """Pack ranking-tree structures into concatenated arrays.

    Parameters
    ----------
    structures : list of RankingTreeStructure

    Returns
    -------
    meta : dict
        JSON-serializable facts (rule kind, estimator name of linear rules).
    arrays : dict of str to ndarray
    """
    rules = [r for s in structures for r in s.leafranks if r is not None]
    kinds = {_rule_kind(rule) for rule in rules}
    if len(kinds) > 1:
        raise ValueError("All the splitting rules of a model must be of one kind.")
    kind = kinds.pop() if kinds else "tree"
    features = [f for s in structures for f in s.features]
    arrays = {
        "node_offsets": _offsets([s.node_count for s in structures]),
        "children_left": np.concatenate([s.children_left for s in structures]),
        "children_right": np.concatenate([s.children_right for s in structures]),
        "n_pos": np.concatenate([s.n_pos for s in structures]),
        "n_neg": np.concatenate([s.n_neg for s in structures]),
        "all_features": np.array([f is None for f in features], dtype=bool),
        "feature_offsets": _offsets([0 if f is None else len(f) for f in features]),
        "feature_values": np.concatenate(
            [np.asarray(f, dtype=np.int64) for f in features if f is not None]
            or [np.zeros(0, dtype=np.int64)]
        ),
        "rule_n_cuts": np.array([r.n_cuts_ for r in rules], dtype=np.int64),
        "rule_gain": np.array([r.gain_ for r in rules], dtype=np.float64),
        "rule_importance_offsets": _offsets(
            [len(r.feature_importances_) for r in rules]
        ),
        "rule_importances": np.concatenate(
            [np.asarray(r.feature_importances_, dtype=np.float64) for r in rules]
            or [np.zeros(0)]
        ),
    }
    meta = {"rule_kind": kind}
    if kind == "tree":
        parts = [_tree_rule_arrays(rule) for rule in rules]
        arrays["rule_node_offsets"] = _offsets([len(p[0]) for p in parts])
        for i, name in enumerate(
            [
                "rule_children_left",
                "rule_children_right",
                "rule_feature",
                "rule_threshold",
                "rule_left_nodes",
            ]
        ):
            dtype = [np.int64, np.int64, np.int64, np.float64, bool][i]
            arrays[name] = np.concatenate(
                [np.asarray(p[i], dtype=dtype) for p in parts] or [np.zeros(0, dtype)]
            )
    else:
        parts = [_linear_rule_arrays(rule) for rule in rules]
        arrays["rule_coef_offsets"] = _offsets([len(p[0]) for p in parts])
        arrays["rule_coef"] = np.concatenate([p[0] for p in parts] or [np.zeros(0)])
        arrays["rule_intercept"] = np.array([p[1] for p in parts], dtype=np.float64)
        arrays["rule_flip"] = np.array([p[2] for p in parts], dtype=bool)
        meta["estimator_names"] = [p[3] for p in parts]
    return meta, arrays


def _get(arrays, name, prefix):
    try:
        return arrays[prefix + name]
    except KeyError:
        raise ValueError(f"the array {prefix + name} is missing") from None


def unpack_structures(meta, arrays, prefix=""):
    """Rebuild the structures packed by :func:`pack_structures`.

    Raises ``ValueError`` (with what is inconsistent) on malformed input.
    """

    def get(name):
        return _get(arrays, name, prefix)

    node_offsets = get("node_offsets").astype(np.int64)
    n_nodes = int(node_offsets[-1]) if node_offsets.shape[0] else 0
    left_all, right_all = get("children_left"), get("children_right")
    n_pos_all, n_neg_all = get("n_pos"), get("n_neg")
    all_features = get("all_features")
    feature_offsets, feature_values = get("feature_offsets"), get("feature_values")
    for name, array in [
        ("children_left", left_all),
        ("children_right", right_all),
        ("n_pos", n_pos_all),
        ("n_neg", n_neg_all),
        ("all_features", all_features),
    ]:
        if array.shape != (n_nodes,):
            raise ValueError(f"{name} has {array.shape} entries for {n_nodes} nodes")
    if np.any(np.diff(node_offsets) <= 0) or np.any(np.diff(feature_offsets) < 0):
        raise ValueError("offsets must increase")
    if not (
        np.all(np.isfinite(n_pos_all))
        and np.all(n_pos_all >= 0)
        and np.all(np.isfinite(n_neg_all))
        and np.all(n_neg_all >= 0)
    ):
        raise ValueError("class counts must be finite and non-negative")
    n_cuts, gain = get("rule_n_cuts"), get("rule_gain")
    imp_offsets, importances = get("rule_importance_offsets"), get("rule_importances")
    n_rules = n_cuts.shape[0]
    if int(np.sum(left_all >= 0)) != n_rules or gain.shape != (n_rules,):
        raise ValueError("the number of rules does not match the internal nodes")
    kind = meta.get("rule_kind")
    rules = []
    if kind == "tree":
        offsets = get("rule_node_offsets")
        fields = [
            get(n)
            for n in [
                "rule_children_left",
                "rule_children_right",
                "rule_feature",
                "rule_threshold",
                "rule_left_nodes",
            ]
        ]
        for r in range(n_rules):
            a, b = int(offsets[r]), int(offsets[r + 1])
            rules.append(
                FrozenTreeLeafRank(
                    *(f[a:b] for f in fields),
                    feature_importances=importances[
                        imp_offsets[r] : imp_offsets[r + 1]
                    ],
                    n_cuts=n_cuts[r],
                    gain=gain[r],
                )
            )
    elif kind == "linear":
        offsets, coef = get("rule_coef_offsets"), get("rule_coef")
        intercept, flip = get("rule_intercept"), get("rule_flip")
        names = meta.get("estimator_names", ["linear classifier"] * n_rules)
        for r in range(n_rules):
            rules.append(
                FrozenLinearLeafRank(
                    coef[offsets[r] : offsets[r + 1]],
                    intercept[r],
                    flip[r],
                    importances[imp_offsets[r] : imp_offsets[r + 1]],
                    n_cuts[r],
                    gain[r],
                    estimator_name=str(names[r]),
                )
            )
    else:
        raise ValueError(f"unknown rule kind {kind!r}")
    structures, rule_index = [], 0
    for t in range(node_offsets.shape[0] - 1):
        a, b = int(node_offsets[t]), int(node_offsets[t + 1])
        left, right = left_all[a:b], right_all[a:b]
        if np.any(left >= b - a) or np.any(right >= b - a):
            raise ValueError("a child index points outside its tree")
        leafranks, features = [], []
        for node in range(a, b):
            if left_all[node] < 0:
                leafranks.append(None)
                features.append(None)
                continue
            rules_here = rules[rule_index]
            rule_index += 1
            leafranks.append(rules_here)
            if all_features[node]:
                features.append(None)
            else:
                features.append(
                    feature_values[
                        feature_offsets[node] : feature_offsets[node + 1]
                    ].astype(np.intp)
                )
        structures.append(
            RankingTreeStructure(
                left, right, n_pos_all[a:b], n_neg_all[a:b], leafranks, features
            )
        )
    return structures
