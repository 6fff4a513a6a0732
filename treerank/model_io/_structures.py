"""Ranking-tree structures and their splitting rules as flat numeric arrays.

A list of :class:`~treerank.tree.RankingTreeStructure` is packed into a fixed
set of concatenated arrays with offsets (so that a forest of hundreds of trees
is a handful of archive members), and unpacked into structures predicting as
the saved ones: trees grown by the engine keep their flat rule arrays
(:class:`~treerank.engine.SplitRules`); linear rules are rebuilt as
:class:`~treerank.tree.FrozenLinearLeafRank`.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn import linear_model, svm

from treerank.engine import SplitRules
from treerank.tree._frozen import FrozenLinearLeafRank
from treerank.tree._leafrank import ClassifierLeafRank
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


# the arrays of the engine's rules, and their dtypes in the file
_ENGINE_RULE_FIELDS = {
    "feature": np.int32,
    "threshold": np.float64,
    "missing_left": bool,
    "child_left": np.int32,
    "child_right": np.int32,
    "left_leaf": bool,
    "improvement": np.float64,
}


def _pack_engine(structures, arrays):
    """Concatenated rules of engine trees, rule ranges offset per tree."""
    rule_offsets = _offsets([s.rules.n_nodes for s in structures])
    for name, dtype in _ENGINE_RULE_FIELDS.items():
        arrays["rule_" + name] = np.concatenate(
            [getattr(s.rules, name).astype(dtype) for s in structures]
        )
    arrays["rule_offsets"] = rule_offsets
    arrays["rule_start"] = np.concatenate([s.rule_start for s in structures])
    arrays["rule_stop"] = np.concatenate([s.rule_stop for s in structures])
    arrays["n_cuts"] = np.array([s.n_cuts for s in structures], dtype=np.int64)
    return {"rule_kind": "engine"}


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
        All grown by the engine, or all with linear rules.

    Returns
    -------
    meta : dict
        JSON-serializable facts (rule kind, estimator name of linear rules).
    arrays : dict of str to ndarray
    """
    arrays = {
        "node_offsets": _offsets([s.node_count for s in structures]),
        "children_left": np.concatenate([s.children_left for s in structures]),
        "children_right": np.concatenate([s.children_right for s in structures]),
        "n_pos": np.concatenate([s.n_pos for s in structures]),
        "n_neg": np.concatenate([s.n_neg for s in structures]),
    }
    engine = [s.rules is not None for s in structures]
    if all(engine):
        return _pack_engine(structures, arrays), arrays
    if any(engine):
        raise ValueError("All the splitting rules of a model must be of one kind.")
    # a rule with a frozen form (LinearLeafRank.freeze) is saved as that
    rules = [
        getattr(r, "freeze", lambda r=r: r)()
        for s in structures
        for r in s.leafranks
        if r is not None
    ]
    for rule in rules:
        _rule_kind(rule)
    features = [f for s in structures for f in s.features]
    arrays.update(
        {
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
    )
    parts = [_linear_rule_arrays(rule) for rule in rules]
    arrays["rule_coef_offsets"] = _offsets([len(p[0]) for p in parts])
    arrays["rule_coef"] = np.concatenate([p[0] for p in parts] or [np.zeros(0)])
    arrays["rule_intercept"] = np.array([p[1] for p in parts], dtype=np.float64)
    arrays["rule_flip"] = np.array([p[2] for p in parts], dtype=bool)
    meta = {"rule_kind": "linear", "estimator_names": [p[3] for p in parts]}
    return meta, arrays


def _get(arrays, name, prefix):
    try:
        return arrays[prefix + name]
    except KeyError:
        raise ValueError(f"the array {prefix + name} is missing") from None


def _check_binary_tree(left, right, what):
    """``left``/``right`` (-1 at leaves) form one binary tree rooted at 0.

    Children come after their parent and every node but the root has exactly
    one parent, so traversals end and reach every node.
    """
    n = left.shape[0]
    nodes = np.arange(n)
    split = left >= 0
    if np.any(right[~split] >= 0) or np.any(right[split] < 0):
        raise ValueError(f"{what}: a node has exactly one child")
    children = np.concatenate([left[split], right[split]])
    if (
        np.any(left[split] <= nodes[split])
        or np.any(right[split] <= nodes[split])
        or np.any(children >= n)
    ):
        raise ValueError(f"{what}: children must come after their parent, in range")
    if children.shape[0] != n - 1 or np.unique(children).shape[0] != n - 1:
        raise ValueError(
            f"{what}: every node but the root must have exactly one parent"
        )


def _check_tree_arrays(left, right, n_pos, n_neg):
    """The master-tree arrays of one tree: a binary tree in preorder, counts."""
    _check_binary_tree(left, right, "tree")
    split = left >= 0
    if np.any(left[split] != np.flatnonzero(split) + 1):
        raise ValueError("tree: the left child must follow its parent (preorder)")
    if not (
        np.all(np.isfinite(n_pos))
        and np.all(n_pos >= 0)
        and np.all(np.isfinite(n_neg))
        and np.all(n_neg >= 0)
    ):
        raise ValueError("class counts must be finite and non-negative")


def unpack_structures(meta, arrays, n_features, prefix=""):
    """Rebuild the structures packed by :func:`pack_structures`.

    ``n_features`` is the model's number of input features. Raises
    ``ValueError`` (with what is inconsistent) on malformed input.
    """

    def get(name):
        return _get(arrays, name, prefix)

    node_offsets = get("node_offsets").astype(np.int64)
    n_nodes = int(node_offsets[-1]) if node_offsets.shape[0] else 0
    left_all, right_all = get("children_left"), get("children_right")
    n_pos_all, n_neg_all = get("n_pos"), get("n_neg")
    for name, array in [
        ("children_left", left_all),
        ("children_right", right_all),
        ("n_pos", n_pos_all),
        ("n_neg", n_neg_all),
    ]:
        if array.shape != (n_nodes,):
            raise ValueError(f"{name} has {array.shape} entries for {n_nodes} nodes")
    if (
        node_offsets.shape[0] < 2
        or node_offsets[0] != 0
        or np.any(np.diff(node_offsets) <= 0)
    ):
        raise ValueError("node offsets must start at 0 and increase")
    kind = meta.get("rule_kind")
    if kind == "engine":
        return _unpack_engine(
            get, node_offsets, left_all, right_all, n_pos_all, n_neg_all, n_features
        )
    if kind == "linear":
        return _unpack_linear(
            get, meta, node_offsets, left_all, right_all, n_pos_all, n_neg_all
        )
    raise ValueError(f"unknown rule kind {kind!r}")


def _unpack_engine(
    get, node_offsets, left_all, right_all, n_pos_all, n_neg_all, n_features
):
    n_trees = node_offsets.shape[0] - 1
    rule_offsets = get("rule_offsets").astype(np.int64)
    fields = {name: get("rule_" + name) for name in _ENGINE_RULE_FIELDS}
    n_rule_nodes = fields["feature"].shape[0]
    for name, array in fields.items():
        if array.shape != (n_rule_nodes,):
            raise ValueError(f"rule_{name} has shape {array.shape}")
    if (
        rule_offsets.shape != (n_trees + 1,)
        or rule_offsets[0] != 0
        or rule_offsets[-1] != n_rule_nodes
        or np.any(np.diff(rule_offsets) < 0)
    ):
        raise ValueError("rule offsets do not match the rules")
    rule_start_all, rule_stop_all = get("rule_start"), get("rule_stop")
    n_cuts = get("n_cuts")
    if rule_start_all.shape != left_all.shape or rule_stop_all.shape != left_all.shape:
        raise ValueError("rule ranges must have one entry per node")
    if n_cuts.shape != (n_trees,) or np.any(n_cuts < 1):
        raise ValueError("n_cuts must be a positive number per tree")
    if not np.all(np.isfinite(fields["threshold"])):
        raise ValueError("a rule has a non-finite threshold")
    if np.any(fields["feature"] >= n_features):
        raise ValueError("a rule uses a feature index out of range")
    structures = []
    for t in range(n_trees):
        a, b = int(node_offsets[t]), int(node_offsets[t + 1])
        left, right = left_all[a:b], right_all[a:b]
        _check_tree_arrays(left, right, n_pos_all[a:b], n_neg_all[a:b])
        r0, r1 = int(rule_offsets[t]), int(rule_offsets[t + 1])
        rules = SplitRules(**{name: array[r0:r1] for name, array in fields.items()})
        start, stop = rule_start_all[a:b], rule_stop_all[a:b]
        _check_rules(rules, left >= 0, start, stop)
        structures.append(
            RankingTreeStructure(
                left,
                right,
                n_pos_all[a:b],
                n_neg_all[a:b],
                rules=rules,
                rule_start=start,
                rule_stop=stop,
                n_features=n_features,
                n_cuts=int(n_cuts[t]),
            )
        )
    return structures


def _check_rules(rules, internal, start, stop):
    """Each internal node's rule: a binary tree over its range, split at the root."""
    n = rules.n_nodes
    if (
        np.any(start[internal] < 0)
        or np.any(stop[internal] > n)
        or np.any(stop[internal] <= start[internal])
    ):
        raise ValueError("a rule range is out of bounds")
    for a, b in zip(start[internal], stop[internal]):
        left = rules.child_left[a:b]
        if left[0] < 0:
            raise ValueError("a rule's root must be a split")
        _check_binary_tree(left, rules.child_right[a:b], "rule")
        if np.any(rules.feature[a:b][left >= 0] < 0):
            raise ValueError("a rule splits on a negative feature index")


def _unpack_linear(get, meta, node_offsets, left_all, right_all, n_pos_all, n_neg_all):
    all_features = get("all_features")
    feature_offsets, feature_values = get("feature_offsets"), get("feature_values")
    if all_features.shape != left_all.shape:
        raise ValueError("all_features must have one entry per node")
    if np.any(np.diff(feature_offsets) < 0):
        raise ValueError("offsets must increase")
    n_cuts, gain = get("rule_n_cuts"), get("rule_gain")
    imp_offsets, importances = get("rule_importance_offsets"), get("rule_importances")
    n_rules = n_cuts.shape[0]
    if int(np.sum(left_all >= 0)) != n_rules or gain.shape != (n_rules,):
        raise ValueError("the number of rules does not match the internal nodes")
    offsets, coef = get("rule_coef_offsets"), get("rule_coef")
    intercept, flip = get("rule_intercept"), get("rule_flip")
    names = meta.get("estimator_names", ["linear classifier"] * n_rules)
    rules = [
        FrozenLinearLeafRank(
            coef[offsets[r] : offsets[r + 1]],
            intercept[r],
            flip[r],
            importances[imp_offsets[r] : imp_offsets[r + 1]],
            n_cuts[r],
            gain[r],
            estimator_name=str(names[r]),
        )
        for r in range(n_rules)
    ]
    structures, rule_index = [], 0
    for t in range(node_offsets.shape[0] - 1):
        a, b = int(node_offsets[t]), int(node_offsets[t + 1])
        left, right = left_all[a:b], right_all[a:b]
        _check_tree_arrays(left, right, n_pos_all[a:b], n_neg_all[a:b])
        leafranks, features = [], []
        for node in range(a, b):
            if left_all[node] < 0:
                leafranks.append(None)
                features.append(None)
                continue
            leafranks.append(rules[rule_index])
            rule_index += 1
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
