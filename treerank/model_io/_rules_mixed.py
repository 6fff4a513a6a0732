"""The rules of trees grown with a MixedLeafRank, as arrays.

Each internal node holds the rule its :class:`~treerank.tree.MixedLeafRank`
chose, frozen: a box rule (a :class:`~treerank.LeafRank`'s inner tree,
stored in the engine's rule arrays, :mod:`treerank.model_io._rules_engine`,
and rebuilt as :class:`~treerank.tree.FrozenTreeLeafRank`) or a linear rule
(stored as the linear rules are, :mod:`treerank.model_io._rules_linear`),
with a flag per internal node telling which (:data:`MIXED_KINDS`).

Reading checks that each flag names a rule family one of the MixedLeafRank's
candidates can produce; the box rules as the engine rules are (no deeper
than their LeafRank's ``max_depth``, given by their ``n_cuts``, on the
node's features, no categorical split), the linear rules as linear rules,
every rule's gain against the tree's counts.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine import SplitRules
from treerank.model_io._arrays import check_array, check_indices
from treerank.model_io._rules_engine import (
    RULE_FIELDS,
    check_engine_rules,
    rule_cuts,
    unpack_rules,
)
from treerank.model_io._rules_linear import (
    check_linear_n_cuts,
    check_rule_gain,
    frozen_linear_rules,
    linear_rule,
    node_structures,
    pack_linear_rules,
    pack_node_arrays,
    unpack_linear_rules,
    unpack_node_features,
)
from treerank.tree._frozen import FrozenTreeLeafRank
from treerank.tree._mixed import freeze_leafrank

__all__ = ["MIXED_KINDS", "pack_mixed", "unpack_mixed"]


#: The array of a mixed tree's flags: one per internal master node, ``0`` for
#: a box rule, ``k >= 1`` for a linear rule of the classifier
#: ``estimators[k - 1]`` of the structures description.
MIXED_KINDS = "rule_kinds"


def pack_mixed(structures, arrays):
    """The rules of trees grown with a MixedLeafRank.

    Each internal node's rule is the one its MixedLeafRank chose, frozen (a
    loaded model's rules already are): a box rule (``FrozenTreeLeafRank``)
    or a linear rule. Returns the description and each tree's box rules as
    engine rules.
    """
    frozen = [
        [None if rule is None else freeze_leafrank(rule) for rule in s.leafranks]
        for s in structures
    ]
    internal = [rule for rules in frozen for rule in rules if rule is not None]
    linear = {
        i: linear_rule(rule)
        for i, rule in enumerate(internal)
        if not isinstance(rule, FrozenTreeLeafRank)
    }
    names = sorted({rule[5] for rule in linear.values()})
    kinds, n_cuts, gains = [], [], []
    for i, rule in enumerate(internal):
        if i in linear:
            kinds.append(1 + names.index(linear[i][5]))
            n_cuts.append(linear[i][3])
            gains.append(linear[i][4])
        else:
            kinds.append(0)
            n_cuts.append(rule.n_cuts_)
            gains.append(rule.gain_)
    pack_node_arrays(structures, arrays, n_cuts, gains)
    pack_linear_rules(list(linear.values()), arrays)
    arrays[MIXED_KINDS] = np.array(kinds, dtype=np.int64)
    return {"rule_kind": "mixed", "estimators": names}, [
        _box_rules(rules) for rules in frozen
    ]


def _box_rules(rules):
    """One tree's box rules as engine rules: ``(SplitRules, rule_start, rule_stop)``.

    ``rules`` holds each master node's frozen rule (None at leaves); the
    fields a split or an inner leaf does not use get their canonical values
    (:data:`RULE_FIELDS`).
    """
    start = np.full(len(rules), -1, dtype=np.int64)
    stop = np.full(len(rules), -1, dtype=np.int64)
    pieces, n_rule_nodes = [], 0
    for node, rule in enumerate(rules):
        if not isinstance(rule, FrozenTreeLeafRank):
            continue
        if rule.improvement is None:
            raise ValueError(
                "A FrozenTreeLeafRank without its splits' improvement cannot be "
                "saved (its feature importances would not be kept exactly)."
            )
        if any(codes is not None for codes in rule.categories):
            raise ValueError(
                "A box rule with a categorical split cannot be saved in a model "
                "of a MixedLeafRank."
            )
        split = rule.children_left >= 0
        pieces.append(
            {
                "feature": np.where(split, rule.feature, -1),
                "threshold": np.where(split, rule.threshold, 0.0),
                "missing_left": rule.missing_left & split,
                "child_left": np.where(split, rule.children_left, -1),
                "child_right": np.where(split, rule.children_right, -1),
                "left_leaf": rule.left_nodes_ & ~split,
                "improvement": np.where(split, rule.improvement, 0.0),
                "missing_seen": rule.missing_seen & split,
                "category": np.full(split.shape[0], -1),
            }
        )
        start[node] = n_rule_nodes
        n_rule_nodes += split.shape[0]
        stop[node] = n_rule_nodes
    split_rules = SplitRules(
        **{
            name: np.concatenate(
                [piece[name] for piece in pieces] or [np.zeros(0, dtype=field.dtype)]
            )
            for name, field in RULE_FIELDS.items()
        }
    )
    return split_rules, start, stop


def unpack_mixed(meta, arrays, trees, split, owner, gain, expect):
    """The trees of a MixedLeafRank of a file (checked master trees ``trees``)."""
    node_offsets, left = trees[:2]
    candidates = expect.candidates
    depths = sorted({c.max_depth for c in candidates if c.kind == "engine"})
    n_rules = split.shape[0]
    names, kinds = _mixed_kinds(meta, arrays, n_rules, candidates)
    box = kinds == 0
    node_features = unpack_node_features(arrays, n_rules, expect)
    width = node_features[3]
    n_cuts = check_array(
        arrays, "rule_n_cuts", kinds="iu", shape=(n_rules,), dtype=np.int64
    )
    rule_gain = check_rule_gain(arrays, gain)
    # box rules: n_cuts = 2**max_depth - 1 of one of the LeafRank candidates
    allowed = [rule_cuts(d) for d in depths if rule_cuts(d) is not None]
    if not np.all(np.isin(n_cuts[box], allowed)):
        raise ValueError(
            "a box rule's n_cuts must be 2**max_depth - 1 for the max_depth of a "
            f"LeafRank candidate {depths[:5]}"
        )
    for k, name in enumerate(names, start=1):
        limits = [c.max_features for c in candidates if c.estimator_name == name]
        max_features = None if None in limits else max(limits)
        check_linear_n_cuts(n_cuts[kinds == k], width[kinds == k], name, max_features)
    linear = unpack_linear_rules(arrays, width[~box], required=True)
    linear_rules = frozen_linear_rules(
        linear,
        n_cuts[~box],
        rule_gain[~box],
        [names[k - 1] for k in kinds[~box]],
    )
    box_nodes = np.zeros(left.shape[0], dtype=bool)
    box_nodes[split[box]] = True
    _, fields, _, _, first, last = unpack_rules(
        arrays,
        box_nodes,
        owner,
        node_offsets.shape[0] - 1,
        expect.n_features,
        "the nodes without a box rule",
        int(np.sum(2 * n_cuts[box] + 1)),  # 2**(depth + 1) - 1 each
    )
    box_depth = np.round(np.log2(n_cuts[box] + 1)).astype(np.int64)
    check_engine_rules(
        fields,
        first,
        last,
        box_depth,
        width[box],
        "its LeafRank's max_depth (log2 of rule_n_cuts + 1)",
        "its node's number of features",
    )
    if np.any(fields["category"] != -1):
        raise ValueError(
            "the array rule_category: a MixedLeafRank's box rule has no "
            "categorical split"
        )
    box_rules = [
        FrozenTreeLeafRank(
            children_left=fields["child_left"][a:b],
            children_right=fields["child_right"][a:b],
            feature=fields["feature"][a:b],
            threshold=fields["threshold"][a:b],
            left_nodes=fields["left_leaf"][a:b],
            feature_importances=None,
            n_cuts=cuts,
            gain=box_gain,
            missing_left=fields["missing_left"][a:b],
            missing_seen=fields["missing_seen"][a:b],
            improvement=fields["improvement"][a:b],
            n_features=n,
        )
        for a, b, cuts, box_gain, n in zip(
            first, last, n_cuts[box], rule_gain[box], width[box]
        )
    ]
    rules = [None] * n_rules
    for i, rule in zip(np.flatnonzero(box), box_rules):
        rules[i] = rule
    for i, rule in zip(np.flatnonzero(~box), linear_rules):
        rules[i] = rule
    return node_structures(trees, split, rules, node_features)


def _mixed_kinds(meta, arrays, n_rules, candidates):
    """The classifiers of a mixed file's linear rules and each node's flag,
    checked against the MixedLeafRank's candidates."""
    linear_names = {c.estimator_name for c in candidates if c.kind == "linear"}
    names = meta.get("estimators")
    if (
        not isinstance(names, list)
        or not all(isinstance(n, str) and n in linear_names for n in names)
        or len(set(names)) != len(names)
    ):
        raise ValueError(
            "structures.estimators must list distinct classifiers of the "
            f"MixedLeafRank's linear candidates {sorted(linear_names)}"
        )
    # 0: a box rule; k >= 1: a linear rule of names[k - 1]
    kinds = check_indices(
        check_array(arrays, MIXED_KINDS, kinds="iu", shape=(n_rules,)),
        len(names) + 1,
        MIXED_KINDS,
        size_name="1 + the number of linear classifiers",
    ).astype(np.int64)
    used = np.bincount(kinds, minlength=len(names) + 1)
    if np.any(used[1:] == 0):
        raise ValueError("structures.estimators lists a classifier no rule uses")
    if np.any(kinds == 0) and not any(c.kind == "engine" for c in candidates):
        raise ValueError(
            f"the array {MIXED_KINDS} marks a box rule but no candidate of the "
            "MixedLeafRank is a LeafRank"
        )
    return names, kinds
