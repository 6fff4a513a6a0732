"""The rules of engine trees (a LeafRank's inner trees) as flat arrays.

Trees grown by the engine keep their flat rule arrays
(:class:`~treerank._engine.SplitRules`, one table of fields,
:data:`RULE_FIELDS`, file names ``rule_<field>``); the box rules of a
:class:`~treerank.tree.MixedLeafRank` are stored the same way. The rules are
written compactly and read back exactly: ``threshold`` as each node's index
among the distinct thresholds of its feature (:data:`THRESHOLD_DICTIONARY`);
``improvement`` as each rule's sum per feature, on the rule's first split of
that feature (0 on its other splits): what feature importances use, to the
last bit; and the rules by their layout (:data:`RULE_SPLIT_BITS`): one bit per
node telling whether it splits gives the children and the rule ranges of the
master nodes (:func:`~treerank._engine.rule_children`), and each field is stored
only at the nodes that use it. Rules laid out otherwise (never by the engine)
are written whole, as files written before the compact layout are; both load.

Reading checks that the rules of the internal nodes tile the rule arrays in
node order; that each feature's thresholds are stored in increasing order;
that each rule is a proper binary tree over its range (children
allocated in sibling pairs after their parent, as the engine does), no
deeper than the LeafRank's ``max_depth``, splitting on existing features at
finite thresholds (or ``+inf``: all non-missing values left), with inner
leaves on both sides of the master split and canonical values
(:data:`RULE_FIELDS`) in the fields a split or a leaf does not use; and that
categorical features are split by category sets, numeric ones by thresholds.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from typing import NamedTuple

import numpy as np

from treerank._engine import (
    SplitRules,
    rule_children,
    rule_improvements_per_feature,
)
from treerank.model_io._arrays import (
    ArrayView,
    check_array,
    check_declared,
    check_indices,
    check_offsets,
    offsets_from_lengths,
)
from treerank.model_io._tree_arrays import (
    check_children,
    chunk_ranges,
    node_depths,
    segments,
)
from treerank.tree._structure import RankingTreeStructure

__all__ = [
    "ENGINE_ARRAYS",
    "RULE_FIELDS",
    "RULE_SPLIT_BITS",
    "THRESHOLD_DICTIONARY",
    "RuleField",
    "check_engine_rules",
    "expand_rule_nodes",
    "pack_engine",
    "pack_rule_arrays",
    "rule_array_names",
    "rule_cuts",
    "thresholds_from_dictionary",
    "unpack_engine",
    "unpack_rules",
]


class RuleField(NamedTuple):
    """How one array of :class:`~treerank._engine.SplitRules` is stored and checked.

    Attributes
    ----------
    dtype : numpy dtype
        The dtype of the ``SplitRules`` attribute.
    kinds : str
        Dtype kinds accepted in a file (``"b"``, ``"iu"`` or ``"f"``; the
        writer may store integers and floats in a narrower exact dtype).
    at_leaves : object or None
        The value every inner leaf holds (None: no constraint).
    at_splits : object or None
        The value every inner split holds (None: no constraint).
    finite : {"finite", "finite or +inf", None}
        The values allowed: finite ones, also ``+inf`` (a threshold sending
        every non-missing value left: the engine's split on missingness), or
        any (None).
    """

    dtype: type
    kinds: str
    at_leaves: object
    at_splits: object
    finite: str | None


#: The arrays of the engine's rules (file name ``rule_<name>``): a new field of
#: ``SplitRules`` (a keyword of its constructor) is one more entry here. The
#: children and features are checked structurally by ``check_engine_rules``.
RULE_FIELDS = {
    "feature": RuleField(np.int32, "iu", -1, None, None),
    "threshold": RuleField(np.float64, "iuf", 0.0, None, "finite or +inf"),
    "missing_left": RuleField(np.bool_, "b", False, None, None),
    "child_left": RuleField(np.int32, "iu", -1, None, None),
    "child_right": RuleField(np.int32, "iu", -1, None, None),
    "left_leaf": RuleField(np.bool_, "b", None, False, None),
    "improvement": RuleField(np.float64, "iuf", 0.0, None, "finite"),
    "missing_seen": RuleField(np.bool_, "b", False, None, None),
    "category": RuleField(np.int32, "iu", -1, None, None),
}


# the engine rules of the master nodes that have one (all the internal nodes
# of an engine tree, the box rules of a mixed one)
_RULE_ARRAYS = ("rule_offsets", "rule_start", "rule_stop")
ENGINE_ARRAYS = ("n_cuts", "category_set_offsets", "category_sets")


#: The arrays of the engine rules' thresholds stored per feature: each inner
#: rule node's index among the distinct thresholds of its feature, those
#: thresholds (feature after feature), and where each feature's start.
THRESHOLD_DICTIONARY = (
    "rule_threshold_index",
    "rule_threshold_values",
    "rule_threshold_offsets",
)


#: The engine rules stored by their layout (:func:`~treerank._engine.rule_children`):
#: one bit per inner node telling whether it splits replaces the children and
#: the rule ranges (``rule_start``, ``rule_stop``) of the master nodes, which
#: follow from it; the fields a split uses are stored at the splits only, the
#: side of the inner leaves at the leaves only, and the flags as bits (the
#: fields' values elsewhere are the canonical ones of :data:`RULE_FIELDS`).
RULE_SPLIT_BITS = "rule_split_bits"
_AT_SPLITS = ("feature", "threshold", "threshold_index", "improvement", "category")
_BITS = {"missing_left": "splits", "missing_seen": "splits", "left_leaf": "leaves"}
_DERIVED = ("rule_child_left", "rule_child_right", "rule_start", "rule_stop")


def rule_array_names(present=()):
    """Names of the engine rule arrays :func:`pack_rule_arrays` writes.

    ``present`` are the names in the file: engine thresholds stored as a
    dictionary (:data:`THRESHOLD_DICTIONARY`) replace ``rule_threshold``, and
    rules stored by their layout (:data:`RULE_SPLIT_BITS`) the arrays that
    follow from it.
    """
    rules = {*_RULE_ARRAYS, *("rule_" + n for n in RULE_FIELDS)}
    if THRESHOLD_DICTIONARY[1] in present:
        rules = (rules - {"rule_threshold"}) | set(THRESHOLD_DICTIONARY)
    if RULE_SPLIT_BITS in present:
        rules = _compact_array_names(rules)
    return rules


def pack_engine(structures, arrays):
    """The arrays of engine trees beyond their rules; their rules, per tree."""
    arrays["category_set_offsets"] = offsets_from_lengths(
        [s.rules.category_sets.shape[0] for s in structures]
    )
    arrays["category_sets"] = np.concatenate(
        [s.rules.category_sets for s in structures]
    ).astype(np.uint64)
    arrays["n_cuts"] = np.array([s.n_cuts for s in structures], dtype=np.int64)
    rules = [(s.rules, s.rule_start, s.rule_stop) for s in structures]
    return {"rule_kind": "engine"}, rules


def pack_rule_arrays(rules, arrays, n_features):
    """Write the engine rules of the trees, compactly where they allow it.

    ``rules`` holds one ``(SplitRules, rule_start, rule_stop)`` per tree (the
    engine rules of an engine tree, or a mixed tree's box rules); the
    thresholds are then stored per feature (:data:`THRESHOLD_DICTIONARY`) and
    the rules by their layout (:data:`RULE_SPLIT_BITS`).
    """
    rule_nodes = _pack_rules(rules, arrays)
    _threshold_dictionary(arrays, n_features)
    _compact_rule_nodes(arrays, rule_nodes)


def _pack_rules(rules, arrays):
    """Write the engine rule arrays of the trees' rules.

    ``rules`` holds one ``(SplitRules, rule_start, rule_stop)`` per tree; the
    master nodes with a rule are those with ``rule_start >= 0``. Returns that
    mask over all the master nodes.
    """
    for name in RULE_FIELDS:
        arrays["rule_" + name] = np.concatenate(
            [
                _improvement_per_feature(
                    split_rules, start, stop, np.flatnonzero(start >= 0)
                )
                if name == "improvement"
                else getattr(split_rules, name)
                for split_rules, start, stop in rules
            ]
        )
    arrays["rule_offsets"] = offsets_from_lengths([r.n_nodes for r, _, _ in rules])
    arrays["rule_start"] = np.concatenate([start for _, start, _ in rules])
    arrays["rule_stop"] = np.concatenate([stop for _, _, stop in rules])
    return arrays["rule_start"] >= 0


def _improvement_per_feature(rules, rule_start, rule_stop, nodes):
    """A tree's rule improvements as each rule's sum per feature, on its first
    split of that feature (0 on the other splits); ``nodes`` are the master
    nodes with a rule.

    Feature importances only use those sums
    (:func:`~treerank._engine.rule_improvements_per_feature`, by
    :func:`~treerank._engine.rule_feature_importances` and by each rule's own
    ``feature_importances_``): they are kept exactly, and the other splits
    get a run of zeros that compresses to almost nothing.
    """
    _, _, sums, first_split = rule_improvements_per_feature(
        rules, rule_start, rule_stop, nodes
    )
    improvement = np.zeros(rules.n_nodes, dtype=np.float64)
    improvement[first_split] = sums
    return improvement


def _threshold_dictionary(arrays, n_features):
    """Store ``rule_threshold`` as per-feature indices into its distinct values.

    A forest's thresholds are the bin edges of its features (at most 254 per
    feature) repeated over up to millions of rule nodes: one byte per node
    instead of eight.
    """
    feature = arrays["rule_feature"]
    threshold = arrays["rule_threshold"]
    inner = feature >= 0
    if np.any(threshold[~inner] != 0.0):  # never: inner leaves hold 0.0
        return
    pairs, which = np.unique(
        np.column_stack([feature[inner], threshold[inner]]).astype(np.float64),
        axis=0,
        return_inverse=True,
    )
    offsets = np.searchsorted(pairs[:, 0], np.arange(n_features + 1), side="left")
    index = np.zeros(threshold.shape[0], dtype=np.int64)
    index[inner] = which.ravel() - offsets[feature[inner]]
    del arrays["rule_threshold"]
    arrays[THRESHOLD_DICTIONARY[0]] = index
    arrays[THRESHOLD_DICTIONARY[1]] = pairs[:, 1].copy()
    arrays[THRESHOLD_DICTIONARY[2]] = offsets.astype(np.int64)


def _compact_array_names(names):
    """The names of the arrays of an engine file once its rules are compacted."""
    return (names - set(_DERIVED) - {"rule_" + n for n in _BITS}) | {
        RULE_SPLIT_BITS,
        *(f"rule_{n}_bits" for n in _BITS),
    }


def _compact_rule_nodes(arrays, rule_nodes):
    """Store the engine rules by their layout (:data:`RULE_SPLIT_BITS`).

    ``rule_nodes`` are the master nodes that have a rule. Left as they are
    when the rules are not laid out as the engine grows them or hold
    non-canonical values where a field is unused (never for fitted trees):
    the loader reads both forms.
    """
    split = arrays["rule_child_left"] >= 0
    child_left, child_right, sizes = rule_children(split)
    if not (
        np.array_equal(child_left, arrays["rule_child_left"])
        and np.array_equal(child_right, arrays["rule_child_right"])
    ):
        return
    tree_owner = segments(arrays["node_offsets"])[0]
    try:
        start, stop = _rule_ranges(
            sizes, rule_nodes, tree_owner, arrays["rule_offsets"]
        )
    except ValueError:
        return
    if not (
        np.array_equal(start, arrays["rule_start"])
        and np.array_equal(stop, arrays["rule_stop"])
    ):
        return
    for name, field in RULE_FIELDS.items():
        values = arrays.get("rule_" + name)
        if values is None:  # the thresholds, stored as a dictionary
            values = arrays[THRESHOLD_DICTIONARY[0]]
            field = field._replace(at_leaves=0)
        for mask, value in ((~split, field.at_leaves), (split, field.at_splits)):
            if value is not None and np.any(values[mask] != value):
                return
    for name in _DERIVED:
        del arrays[name]
    for name in _AT_SPLITS:
        if "rule_" + name in arrays:
            arrays["rule_" + name] = arrays["rule_" + name][split]
    for name, where in _BITS.items():
        values = arrays.pop("rule_" + name)
        kept = values[split] if where == "splits" else values[~split]
        arrays[f"rule_{name}_bits"] = np.packbits(kept, bitorder="little")
    arrays[RULE_SPLIT_BITS] = np.packbits(split, bitorder="little")


def unpack_engine(arrays, trees, split, owner, expect):
    """The engine trees of a file (checked master trees ``trees``), checked."""
    node_offsets, left, right, n_pos, n_neg = trees
    n_trees = node_offsets.shape[0] - 1
    n_cuts = check_array(arrays, "n_cuts", kinds="iu", shape=(n_trees,))
    cuts = rule_cuts(expect.rule_max_depth)
    if cuts is None or np.any(n_cuts != cuts):
        value = "" if cuts is None else f" = {cuts}"
        raise ValueError(
            f"n_cuts must be 2**max_depth - 1{value} for the LeafRank's max_depth"
        )
    rule_offsets, fields, start, stop, first, last = unpack_rules(
        arrays,
        left >= 0,
        owner,
        n_trees,
        expect.n_features,
        "the leaves",
        int(np.count_nonzero(left >= 0)) * (2 * cuts + 1),  # 2**(depth + 1) - 1
    )
    check_engine_rules(
        fields,
        first,
        last,
        expect.rule_max_depth,
        expect.n_features,
        f"the LeafRank's max_depth={expect.rule_max_depth}",
        "the number of features",
    )
    n_sets, _ = check_declared(
        arrays, "category_sets", kinds="u", ndim=2, shape=(None, 4)
    )
    set_offsets = check_offsets(
        check_array(arrays, "category_set_offsets", kinds="iu", shape=(n_trees + 1,)),
        n_sets,
        "category_set_offsets",
    )
    category_sets = check_array(
        arrays, "category_sets", kinds="u", ndim=2, shape=(None, 4), dtype=np.uint64
    )
    # each split's category set among its tree's (-1: a threshold split)
    check_indices(
        fields["category"],
        np.repeat(np.diff(set_offsets), np.diff(rule_offsets)),
        "rule_category",
        sentinel=-1,
        size_name="its tree's number of category sets",
    )
    _check_split_kinds(fields, expect.categorical, expect.n_features)
    structures = []
    for t in range(n_trees):
        a, b = int(node_offsets[t]), int(node_offsets[t + 1])
        r0, r1 = int(rule_offsets[t]), int(rule_offsets[t + 1])
        c0, c1 = int(set_offsets[t]), int(set_offsets[t + 1])
        rules = SplitRules(
            **{name: array[r0:r1] for name, array in fields.items()},
            category_sets=category_sets[c0:c1],
        )
        structures.append(
            RankingTreeStructure(
                left[a:b],
                right[a:b],
                n_pos[a:b],
                n_neg[a:b],
                rules=rules,
                rule_start=start[a:b],
                rule_stop=stop[a:b],
                n_features=expect.n_features,
                n_cuts=int(n_cuts[t]),
            )
        )
    return structures


def unpack_rules(
    arrays, rule_nodes, owner, n_trees, n_features, without, max_rule_nodes=None
):
    """The engine rule arrays of a file, with the ranges of the master nodes.

    Parameters
    ----------
    arrays : dict of str to ndarray
    rule_nodes : ndarray of bool of shape (n_master_nodes,)
        The master nodes that have a rule (checked trees).
    owner : ndarray of int
        The tree of each master node.
    n_trees : int
    n_features : int
        The model's number of features.
    without : str
        What the master nodes without a rule are, for the messages.
    max_rule_nodes : int or None, default=None
        Most rule nodes the LeafRanks' ``max_depth`` allows (a rule of depth
        d has at most ``2**(d + 1) - 1`` nodes), checked before the rules
        are read.

    Returns
    -------
    rule_offsets : ndarray of int64 of shape (n_trees + 1,)
    fields : dict of str to ndarray
        The :data:`RULE_FIELDS` over all the rule nodes.
    start, stop : ndarray of int64 of shape (n_master_nodes,)
        Each master node's rule range in its tree's rules (-1 without rule).
    first, last : ndarray of int64
        The rule ranges of the nodes ``rule_nodes`` in the whole arrays, which
        they tile in node order (the rules themselves are checked by
        :func:`check_engine_rules`).
    """
    rule_offsets = check_offsets(
        check_array(arrays, "rule_offsets", kinds="iu", shape=(n_trees + 1,)),
        None,
        "rule_offsets",
    )
    if max_rule_nodes is not None and rule_offsets[-1] > max_rule_nodes:
        raise ValueError(
            f"the rules hold {int(rule_offsets[-1])} nodes, more than the "
            f"{max_rule_nodes} their LeafRanks' max_depth allows"
        )
    arrays = expand_rule_nodes(arrays, rule_nodes, owner, rule_offsets)
    arrays = thresholds_from_dictionary(arrays, n_features)
    fields = {}
    for name, field in RULE_FIELDS.items():
        fields[name] = check_array(
            arrays, "rule_" + name, kinds=field.kinds, shape=(None,), dtype=field.dtype
        )
    lengths = [array.shape[0] for array in fields.values()]
    n_rule_nodes = max(set(lengths), key=lengths.count)  # the odd one is named
    for name, array in fields.items():
        if array.shape != (n_rule_nodes,):
            raise ValueError(
                f"the array rule_{name} has {array.shape[0]} entries for "
                f"{n_rule_nodes} rule nodes"
            )
    if rule_offsets[-1] != n_rule_nodes:
        raise ValueError("the array rule_offsets does not partition the rules")
    # each master node's range in its tree's rules (the tiling is checked below)
    start, stop = (
        check_indices(
            check_array(arrays, name, kinds="iu", shape=rule_nodes.shape),
            n_rule_nodes + end,
            name,
            sentinel=-1,
        ).astype(np.int64)
        for name, end in (("rule_start", 0), ("rule_stop", 1))
    )
    if np.any(start[~rule_nodes] != -1) or np.any(stop[~rule_nodes] != -1):
        raise ValueError(f"rule_start and rule_stop must be -1 at {without}")
    # the rules of the nodes tile the rule arrays, in node order
    nodes = np.flatnonzero(rule_nodes)
    base = rule_offsets[owner[nodes]]
    first, last = start[nodes] + base, stop[nodes] + base
    if np.any(start[nodes] < 0) or np.any(last <= first):
        raise ValueError("a rule range is empty or out of bounds")
    expected_first = np.concatenate([[0], last[:-1]])
    if (
        np.any(first != expected_first)
        or (last.shape[0] and last[-1] != n_rule_nodes)
        or (not last.shape[0] and n_rule_nodes)
        or np.any(last > rule_offsets[owner[nodes] + 1])
    ):
        raise ValueError(
            "the rules of the internal nodes must tile the rule arrays, in node order"
        )
    return rule_offsets, fields, start, stop, first, last


def _rule_ranges(rule_sizes, rule_nodes, tree_owner, rule_offsets):
    """``rule_start`` and ``rule_stop`` of the master nodes, from the rules' sizes.

    The rules of a forest's master nodes ``rule_nodes`` (the internal nodes,
    or a mixed tree's box rules) follow one another in node order, each
    tree's from the tree's own ``rule_offsets`` entry.
    """
    n_splits = int(np.count_nonzero(rule_nodes))
    if rule_sizes.shape[0] != n_splits:
        raise ValueError(
            f"the array {RULE_SPLIT_BITS} describes {rule_sizes.shape[0]} rules "
            f"for {n_splits} internal nodes with a rule"
        )
    first = np.cumsum(rule_sizes) - rule_sizes
    local = first - rule_offsets[tree_owner[rule_nodes]]
    start = np.full(rule_nodes.shape[0], -1, dtype=np.int64)
    stop = np.full(rule_nodes.shape[0], -1, dtype=np.int64)
    start[rule_nodes] = local
    stop[rule_nodes] = local + rule_sizes
    return start, stop


def _check_one_threshold_form(arrays):
    if "rule_threshold" in arrays and THRESHOLD_DICTIONARY[1] in arrays:
        raise ValueError(
            f"the file holds both rule_threshold and {THRESHOLD_DICTIONARY[1]}"
        )


def thresholds_from_dictionary(arrays, n_features):
    """The ``rule_threshold`` array of a file (stored whole or per feature)."""
    index_name, values_name, offsets_name = THRESHOLD_DICTIONARY
    _check_one_threshold_form(arrays)
    if values_name not in arrays:
        return arrays
    feature = check_indices(
        check_array(arrays, "rule_feature", kinds="iu"),
        n_features,
        "rule_feature",
        sentinel=-1,
        size_name="the number of features",
    )
    index = check_array(arrays, index_name, kinds="iu", shape=feature.shape)
    field = RULE_FIELDS["threshold"]
    (n_values,) = check_declared(arrays, values_name, kinds=field.kinds)
    offsets = check_offsets(
        check_array(arrays, offsets_name, kinds="iu", shape=(n_features + 1,)),
        n_values,
        offsets_name,
    )
    values = check_array(arrays, values_name, kinds=field.kinds, dtype=np.float64)
    _check_ascending_grids(values, offsets, values_name)
    inner = feature >= 0
    # each split's index among the thresholds of its own feature (a negative
    # one would read the previous feature's)
    inner_index = check_indices(
        index[inner],
        np.diff(offsets)[feature[inner]],
        index_name,
        size_name="the number of thresholds of its feature",
    )
    # an inner leaf (feature -1) reads 0.0 from index 0; any other index gives
    # a non-zero threshold, which the checks of the rules then refuse
    threshold = np.where(index == 0, 0.0, 1.0)
    threshold[inner] = values[offsets[feature[inner]] + inner_index]
    return ArrayView(arrays, replace={"rule_threshold": threshold})


def _check_ascending_grids(values, offsets, name):
    """Each feature's distinct thresholds in increasing order, as written.

    The writer stores them sorted and distinct (``np.unique``); a file whose
    grid is out of order gives its splits other thresholds than the ones
    they were fitted with, so it is refused.
    """
    if values.shape[0] < 2:
        return
    # inf - inf is NaN (no warning): between two features' grids the step is
    # not read, and a NaN within a grid is refused by the rules' checks
    with np.errstate(invalid="ignore"):
        steps = np.diff(values)
    within = np.ones(steps.shape[0], dtype=bool)
    # the step from a feature's last threshold to the next feature's first
    ends = offsets[1:-1] - 1
    within[ends[(ends >= 0) & (ends < steps.shape[0])]] = False
    steps = steps[within]
    # a NaN is refused by the checks of the rules' thresholds, by name
    if not np.all((steps > 0) | np.isnan(steps)):
        raise ValueError(
            f"the array {name} must hold each feature's thresholds in strictly "
            "increasing order"
        )


def _unpack_bits(arrays, name, count):
    """``count`` flags stored as bits (little bit order, zero padding)."""
    packed = check_array(
        arrays,
        name,
        kinds="iu",
        shape=((count + 7) // 8,),
        bounds=(0, 255),
        dtype=np.uint8,
    )
    bits = np.unpackbits(packed, bitorder="little")
    if np.any(bits[count:]):
        raise ValueError(f"the array {name} has bits set past its {count} entries")
    return bits[:count].astype(bool)


def _precheck_rule_bits(arrays, n_nodes, n_rules):
    """The split bits describe exactly ``n_rules`` whole rules, read in chunks.

    Laid out as the engine grows them, each rule has one more inner leaf than
    splits: with ``+1`` per split and ``-1`` per inner leaf, the running sum
    reaches a new minimum exactly where a rule ends. So the flags hold whole
    rules if the final sum is the minimum, and ``n_rules`` of them if it is
    ``-n_rules``. Checked before the bits are unpacked (eight bytes per
    byte of the file) and the rules derived from them.
    """
    packed = check_array(
        arrays, RULE_SPLIT_BITS, kinds="iu", shape=((n_nodes + 7) // 8,)
    )
    total = lowest = 0
    for start, stop in chunk_ranges(packed.shape[0]):
        bits = np.unpackbits(packed[start:stop].astype(np.uint8), bitorder="little")
        bits = bits[: max(0, n_nodes - 8 * start)]
        if not bits.shape[0]:
            break
        running = np.cumsum(bits.astype(np.int64) * 2 - 1) + total
        lowest = min(lowest, int(running.min()))
        total = int(running[-1])
    if total != lowest:
        raise ValueError("the split flags end inside a rule")
    if -total != n_rules:
        raise ValueError(
            f"the array {RULE_SPLIT_BITS} describes {-total} rules for {n_rules} "
            "internal nodes with a rule"
        )


def expand_rule_nodes(arrays, rule_nodes, tree_owner, rule_offsets):
    """The engine rule arrays of a file, in full (stored compact or not).

    Parameters
    ----------
    arrays : dict of str to ndarray
        The file's arrays.
    rule_nodes, tree_owner : ndarray of shape (n_master_nodes,)
        Which master nodes have a rule (the internal nodes, or a mixed
        tree's box rules), and the tree of each (checked).
    rule_offsets : ndarray of int64
        Each tree's first rule node, checked to partition the rule nodes.

    Returns
    -------
    arrays : mapping of str to ndarray
        With the children, the rule ranges and every field at every node (the
        canonical values where a field is unused) instead of the bits; the
        checks of the full form follow.
    """
    if RULE_SPLIT_BITS not in arrays:
        return arrays
    _check_one_threshold_form(arrays)
    whole = (*_DERIVED, *("rule_" + name for name in _BITS))
    stored = [name for name in whole if name in arrays]
    if stored:
        raise ValueError(f"the file holds both {stored[0]} and {RULE_SPLIT_BITS}")
    n_nodes = int(rule_offsets[-1])
    _precheck_rule_bits(arrays, n_nodes, int(np.count_nonzero(rule_nodes)))
    split = _unpack_bits(arrays, RULE_SPLIT_BITS, n_nodes)
    n_splits = int(np.count_nonzero(split))
    child_left, child_right, sizes = rule_children(split)
    start, stop = _rule_ranges(sizes, rule_nodes, tree_owner, rule_offsets)
    full = {
        "rule_child_left": child_left,
        "rule_child_right": child_right,
        "rule_start": start,
        "rule_stop": stop,
    }
    hidden = [RULE_SPLIT_BITS]
    for name in _AT_SPLITS:
        if "rule_" + name not in arrays:
            continue
        field = RULE_FIELDS.get(name) or RuleField(np.int64, "iu", 0, None, None)
        dtype = np.float64 if "f" in field.kinds else np.int64
        values = check_array(
            arrays, "rule_" + name, kinds=field.kinds, shape=(n_splits,), dtype=dtype
        )
        out = np.full(n_nodes, field.at_leaves, dtype=dtype)
        out[split] = values
        full["rule_" + name] = out
    for name, where in _BITS.items():
        bits = f"rule_{name}_bits"
        count = n_splits if where == "splits" else n_nodes - n_splits
        values = _unpack_bits(arrays, bits, count)
        out = np.zeros(n_nodes, dtype=bool)
        out[split if where == "splits" else ~split] = values
        full["rule_" + name] = out
        hidden.append(bits)
    return ArrayView(arrays, replace=full, hide=hidden)


def _check_split_kinds(fields, categorical, n_features):
    """A categorical feature is split by a category set (threshold 0.0), a
    numeric feature by a threshold (category -1), as the engine splits them."""
    split = fields["child_left"] >= 0
    mask = np.zeros(n_features, dtype=bool)
    if categorical is not None:
        mask[:] = categorical
    on_categories = mask[fields["feature"][split]]
    by_set = fields["category"][split] >= 0
    if np.any(by_set != on_categories):
        raise ValueError(
            "the array rule_category: a split on a categorical feature must use a "
            "category set, and a split on a numeric feature a threshold"
        )
    if np.any(fields["threshold"][split][by_set] != 0.0):
        raise ValueError("the array rule_threshold must be 0.0 at categorical splits")


def rule_cuts(max_depth):
    """``2**max_depth - 1``, the cuts of a LeafRank's rule (None past int64:
    never computed for a huge depth read from a file)."""
    return 2**max_depth - 1 if max_depth < 63 else None


def check_engine_rules(fields, first, last, max_depth, n_features, deep, features):
    """Every rule a proper binary tree over its range; fields canonical.

    ``max_depth`` and ``n_features`` bound every rule, or each rule its own
    (arrays with one entry per rule); ``deep`` and ``features`` say those
    bounds in the messages.
    """
    if not first.shape[0]:
        return
    offsets = np.concatenate([first, last[-1:]])
    owner, base, size, local = segments(offsets)
    cl, cr = (
        fields["child_left"].astype(np.int64),
        fields["child_right"].astype(np.int64),
    )
    names = ("rule_child_left", "rule_child_right")
    parent = check_children(cl, cr, base, size, local, "rule", names)
    split = cl != -1
    if np.any(cr[split] != cl[split] + 1):
        raise ValueError("rule: the children of a split must be consecutive")
    if not np.all(split[local == 0]):
        raise ValueError("rule: a rule's root must be a split")
    if isinstance(max_depth, np.ndarray):
        max_depth = max_depth[owner]
    if np.any(node_depths(parent) > max_depth):
        raise ValueError(f"rule: a rule is deeper than {deep}")
    for name, field in RULE_FIELDS.items():
        values = fields[name]
        if field.finite is not None:
            allowed = np.isfinite(values)
            if field.finite == "finite or +inf":
                allowed |= values == np.inf
            if not np.all(allowed):
                raise ValueError(
                    f"the array rule_{name} holds values that are not "
                    f"{field.finite} (NaN or infinity)"
                )
        for mask, value, where in (
            (~split, field.at_leaves, "inner leaves"),
            (split, field.at_splits, "splits"),
        ):
            if value is not None and np.any(values[mask] != value):
                raise ValueError(f"the array rule_{name} must be {value} at {where}")
    if isinstance(n_features, np.ndarray):
        n_features = n_features[owner][split]
    check_indices(
        fields["feature"][split], n_features, "rule_feature", size_name=features
    )
    left_leaf = fields["left_leaf"]
    n_left = np.bincount(owner, weights=left_leaf & ~split, minlength=first.shape[0])
    n_leaves = np.bincount(owner, weights=~split, minlength=first.shape[0])
    if np.any(n_left == 0) or np.any(n_left == n_leaves):
        raise ValueError("rule: a rule must have inner leaves on both sides")
