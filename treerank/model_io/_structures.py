"""Ranking-tree structures and their splitting rules as flat numeric arrays.

A list of fitted master trees (:class:`~treerank.tree.RankingTreeStructure`) is
packed into a fixed set of concatenated arrays with offsets, so that a forest of
hundreds of trees is a handful of archive members, and unpacked into structures
that predict exactly as the saved ones: trees grown by the engine keep their flat
rule arrays (:class:`~treerank.engine.SplitRules`, one table of fields,
:data:`RULE_FIELDS`); linear rules are rebuilt as
:class:`~treerank.tree.FrozenLinearLeafRank`; the rules of a
:class:`~treerank.tree.MixedLeafRank` (``"mixed"``) are each node's chosen
rule, a box rule (a :class:`~treerank.LeafRank`'s inner tree, stored in the
engine's rule arrays and rebuilt as :class:`~treerank.tree.FrozenTreeLeafRank`)
or a linear rule (stored as the linear rules are), with a flag per internal
node telling which (:data:`MIXED_KINDS`). The engine rules are written
compactly and read back exactly: ``threshold`` as each node's index among the
distinct thresholds of its feature (:data:`THRESHOLD_DICTIONARY`);
``improvement`` as each rule's sum per feature, on the rule's first split of
that feature (0 on its other splits): what feature importances use, to the
last bit; and the rules by their layout (:data:`RULE_SPLIT_BITS`): one bit per
node telling whether it splits gives the children and the rule ranges of the
master nodes (:func:`~treerank.engine.rule_children`), and each field is stored
only at the nodes that use it. Rules laid out otherwise (never by the engine)
are written whole, as files written before the compact layout are; both load.

Unpacking treats the arrays as hostile (a file whose digests were recomputed
after an edit) and checks, vectorized over all the trees at once, everything
prediction and the compiled routing kernels rely on, so that an inconsistent
file is refused with a message naming the problem instead of loading a model
that crashes, hangs or predicts differently:

- master trees: proper binary trees numbered in depth-first preorder, left
  child first (every node but the root has exactly one parent, children in
  range), no deeper than ``max_depth``; class counts finite, non-negative,
  a parent's counts the sum of its children's (within rounding), both classes
  present at every split, whose left child is the better one;
- engine rules: the rules of the internal nodes tile the rule arrays in node
  order; each rule is a proper binary tree over its range (children allocated
  in sibling pairs after their parent, as the engine does), no deeper than the
  LeafRank's ``max_depth``, splitting on existing features at finite
  thresholds (or ``+inf``: all non-missing values left), with inner leaves on
  both sides of the master split and canonical values (:data:`RULE_FIELDS`)
  in the fields a split or a leaf does not use;
- linear rules: finite coefficients on the node's features (all, or a sorted
  draw of ``max_features_node`` of them), feature importances in [0, 1]
  summing to one over the rule, the complexity and gain that
  :class:`~treerank.ClassifierLeafRank` or
  :class:`~treerank.tree.LinearLeafRank` would have;
- mixed rules: each internal node's flag names a rule family one of the
  MixedLeafRank's candidates can produce; the box rules are checked as the
  engine rules are (no deeper than their LeafRank's ``max_depth``, given by
  their ``n_cuts``, on the node's features, no categorical split), the
  linear rules as above, every rule's gain against the tree's counts.

Every check raises ``ValueError`` naming the array and the problem
(``load_model`` reports it as a :class:`~treerank.exceptions.ModelFileError`).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
from typing import NamedTuple

import numpy as np
from sklearn import linear_model, svm

from treerank.engine import (
    SplitRules,
    rule_children,
    rule_improvements_per_feature,
)
from treerank.model_io._archive import (
    ArrayView,
    check_array,
    check_declared,
    check_indices,
    check_offsets,
)
from treerank.tree._frozen import FrozenLinearLeafRank, FrozenTreeLeafRank
from treerank.tree._leafrank import ClassifierLeafRank
from treerank.tree._linear import LinearLeafRank
from treerank.tree._mixed import freeze_leafrank
from treerank.tree._structure import RankingTreeStructure

__all__ = [
    "LINEAR_CLASSIFIERS",
    "MAX_TREES",
    "MIXED_KINDS",
    "RULE_FIELDS",
    "RuleCandidate",
    "RuleField",
    "TreeExpectations",
    "narrow",
    "pack_structures",
    "structure_array_names",
    "subtree_ends",
    "unpack_structures",
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

#: Most trees a model file may hold (a forest's offsets are read first).
MAX_TREES = 2**20
# Entries the elementwise pre-checks look at at once (bounded temporaries)
_CHUNK = 2**18

# Masses of a node and of its children may differ by rounding (they are summed
# over different row orders); relative to the root's total mass.
_COUNT_RTOL = 1e-9
# The gain of a rule, computed by its LeafRank, against the one of the master
# tree's counts; the sum of a linear rule's feature importances against 1.
_GAIN_ATOL = 1e-9


class RuleField(NamedTuple):
    """How one array of :class:`~treerank.engine.SplitRules` is stored and checked.

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
#: children and features are checked structurally by ``_check_engine_rules``.
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


class RuleCandidate(NamedTuple):
    """What one candidate LeafRank of a MixedLeafRank says of the rules it gives.

    Attributes
    ----------
    kind : {"engine", "linear"}
        ``"engine"`` for a :class:`~treerank.LeafRank` (box rules),
        ``"linear"`` for :class:`~treerank.tree.LinearLeafRank` or a
        :class:`~treerank.ClassifierLeafRank` around a linear classifier.
    max_depth : int or None
        The LeafRank's ``max_depth`` (box rules).
    estimator_name : str or None
        ``"LinearLeafRank"`` or the classifier's class name (linear rules).
    max_features : int or None
        Most features a LinearLeafRank's rule uses (its ``max_features``
        resolved on a node's features); None for all.
    """

    kind: str
    max_depth: int | None = None
    estimator_name: str | None = None
    max_features: int | None = None


class TreeExpectations(NamedTuple):
    """What the estimator's parameters say of its master trees.

    Attributes
    ----------
    n_features : int
        Number of input features.
    max_depth : int or None
        Largest depth of a master tree (None: no limit).
    rule_kind : {"engine", "linear", "mixed"}
        ``"engine"`` for :class:`~treerank.LeafRank`, ``"linear"`` for
        :class:`~treerank.tree.LinearLeafRank` or a
        :class:`~treerank.ClassifierLeafRank` around a linear classifier,
        ``"mixed"`` for a :class:`~treerank.tree.MixedLeafRank`.
    rule_max_depth : int or None
        Depth of the LeafRank's inner tree (engine rules).
    n_node_features : int or None
        Features drawn per master node (FR1) when fewer than ``n_features``
        (linear and mixed rules); None for all.
    estimator_name : str or None
        ``"LinearLeafRank"`` or the linear classifier's class name (linear
        rules).
    rule_max_features : int or None
        Most features a LinearLeafRank's rule uses (linear rules).
    candidates : tuple of RuleCandidate
        The MixedLeafRank's candidates, in order (mixed rules).
    categorical : tuple of bool or None
        Which features are categorical (engine rules split them by category
        sets only, and the others by thresholds only); None: none is.
    n_trees : int or None
        Number of trees (None: any, at most :data:`MAX_TREES`).
    """

    n_features: int
    max_depth: int | None
    rule_kind: str
    rule_max_depth: int | None = None
    n_node_features: int | None = None
    estimator_name: str | None = None
    rule_max_features: int | None = None
    candidates: tuple = ()
    categorical: tuple | None = None
    n_trees: int | None = None


# ----------------------------------------------------------------------
# lean dtypes
# ----------------------------------------------------------------------
_INTEGER_DTYPES = (np.uint8, np.int8, np.uint16, np.int16, np.uint32, np.int32)


def narrow(array):
    """The array in the smallest dtype that holds all its values exactly.

    Integers take the smallest integer type holding their range; floats that
    are all whole numbers (no negative zero) an integer type, else float32
    when the conversion is exact. Reading the array back into its original
    dtype gives the same bits. Booleans and empty arrays are left as they are.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.model_io._structures import narrow
    >>> narrow(np.array([0, 3, 200])).dtype, narrow(np.array([-1.0, 7.0])).dtype
    (dtype('uint8'), dtype('int8'))
    >>> narrow(np.array([0.5, 0.25])).dtype, narrow(np.array([0.1])).dtype
    (dtype('float32'), dtype('float64'))
    """
    array = np.asarray(array)
    if array.size == 0 or array.dtype.kind not in "iuf":
        return array
    if array.dtype.kind == "f":
        finite = np.isfinite(array)
        whole = (
            np.all(finite)
            and np.all(array == np.round(array))
            and not np.any((array == 0) & np.signbit(array))
            and np.abs(array).max() < 2**31
        )
        if not whole:
            if np.any(np.abs(array[finite]) > np.finfo(np.float32).max):
                return array
            single = array.astype(np.float32)
            same = np.array_equal(single.astype(array.dtype), array, equal_nan=True)
            return single if same else array
    low, high = array.min(), array.max()
    for dtype in _INTEGER_DTYPES:
        info = np.iinfo(dtype)
        if info.min <= low and high <= info.max:
            return array.astype(dtype)
    return array


_TREE_ARRAYS = ("node_offsets", "children_left", "children_right", "n_pos", "n_neg")
# the engine rules of the master nodes that have one (all the internal nodes
# of an engine tree, the box rules of a mixed one)
_RULE_ARRAYS = ("rule_offsets", "rule_start", "rule_stop")
_ENGINE_ARRAYS = ("n_cuts", "category_set_offsets", "category_sets")
# one entry per internal master node (linear and mixed rules)
_NODE_ARRAYS = (
    "rule_all_features",
    "rule_feature_offsets",
    "rule_features",
    "rule_n_cuts",
    "rule_gain",
)
# one entry per linear rule (rule_importance: absent from older linear files)
_LINEAR_ARRAYS = (
    "rule_coef_offsets",
    "rule_coef",
    "rule_importance",
    "rule_intercept",
    "rule_flip",
)
#: The array of a mixed tree's flags: one per internal master node, ``0`` for
#: a box rule, ``k >= 1`` for a linear rule of the classifier
#: ``estimators[k - 1]`` of the structures description.
MIXED_KINDS = "rule_kinds"


def structure_array_names(meta, present=()):
    """Names of the arrays :func:`pack_structures` writes for trees of this kind.

    ``present`` are the names in the file: engine thresholds stored as a
    dictionary (:data:`THRESHOLD_DICTIONARY`) replace ``rule_threshold``.
    """
    kind = meta.get("rule_kind")
    names = set(_TREE_ARRAYS)
    if kind in ("engine", "mixed"):
        rules = {*_RULE_ARRAYS, *("rule_" + n for n in RULE_FIELDS)}
        if THRESHOLD_DICTIONARY[1] in present:
            rules = (rules - {"rule_threshold"}) | set(THRESHOLD_DICTIONARY)
        if RULE_SPLIT_BITS in present:
            rules = _compact_array_names(rules)
        names |= rules
    if kind == "engine":
        return names | set(_ENGINE_ARRAYS)
    names |= {*_NODE_ARRAYS, *_LINEAR_ARRAYS}
    return names | {MIXED_KINDS} if kind == "mixed" else names


#: The arrays of the engine rules' thresholds stored per feature: each inner
#: rule node's index among the distinct thresholds of its feature, those
#: thresholds (feature after feature), and where each feature's start.
THRESHOLD_DICTIONARY = (
    "rule_threshold_index",
    "rule_threshold_values",
    "rule_threshold_offsets",
)


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


def _check_one_threshold_form(arrays):
    if "rule_threshold" in arrays and THRESHOLD_DICTIONARY[1] in arrays:
        raise ValueError(
            f"the file holds both rule_threshold and {THRESHOLD_DICTIONARY[1]}"
        )


def _thresholds_from_dictionary(arrays, n_features):
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


#: The engine rules stored by their layout (:func:`~treerank.engine.rule_children`):
#: one bit per inner node telling whether it splits replaces the children and
#: the rule ranges (``rule_start``, ``rule_stop``) of the master nodes, which
#: follow from it; the fields a split uses are stored at the splits only, the
#: side of the inner leaves at the leaves only, and the flags as bits (the
#: fields' values elsewhere are the canonical ones of :data:`RULE_FIELDS`).
RULE_SPLIT_BITS = "rule_split_bits"
_AT_SPLITS = ("feature", "threshold", "threshold_index", "improvement", "category")
_BITS = {"missing_left": "splits", "missing_seen": "splits", "left_leaf": "leaves"}
_DERIVED = ("rule_child_left", "rule_child_right", "rule_start", "rule_stop")


def _compact_array_names(names):
    """The names of the arrays of an engine file once its rules are compacted."""
    return (names - set(_DERIVED) - {"rule_" + n for n in _BITS}) | {
        RULE_SPLIT_BITS,
        *(f"rule_{n}_bits" for n in _BITS),
    }


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
    tree_owner = _segments(arrays["node_offsets"])[0]
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
    for start, stop in _chunks(packed.shape[0]):
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


def _expand_rule_nodes(arrays, rule_nodes, tree_owner, rule_offsets):
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


def _improvement_per_feature(rules, rule_start, rule_stop, nodes):
    """A tree's rule improvements as each rule's sum per feature, on its first
    split of that feature (0 on the other splits); ``nodes`` are the master
    nodes with a rule.

    Feature importances only use those sums
    (:func:`~treerank.engine.rule_improvements_per_feature`, by
    :func:`~treerank.engine.rule_feature_importances` and by each rule's own
    ``feature_importances_``): they are kept exactly, and the other splits
    get a run of zeros that compresses to almost nothing.
    """
    _, _, sums, first_split = rule_improvements_per_feature(
        rules, rule_start, rule_stop, nodes
    )
    improvement = np.zeros(rules.n_nodes, dtype=np.float64)
    improvement[first_split] = sums
    return improvement


def _offsets(lengths):
    return np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)]).astype(np.int64)


# ----------------------------------------------------------------------
# packing
# ----------------------------------------------------------------------
def pack_structures(structures, n_features=None, *, mixed=False):
    """Pack fitted master trees into concatenated arrays.

    Parameters
    ----------
    structures : list of RankingTreeStructure
        Fully grown master trees (``full_tree_``), all grown by the engine, all
        with linear rules, or all grown with a MixedLeafRank.
    n_features : int or None, default=None
        The model's number of features (needed for mixed rules).
    mixed : bool, default=False
        Whether the trees were grown with a :class:`~treerank.tree.MixedLeafRank`
        (whose nodes may all have chosen one kind of rule).

    Returns
    -------
    meta : dict
        JSON-serializable facts: the rule kind (and the linear classifiers).
    arrays : dict of str to ndarray
        In the narrowest exact dtypes (see :func:`narrow`).
    """
    engine = {s.rules is not None for s in structures}
    if len(engine) != 1 or (mixed and engine == {True}):
        raise ValueError("All the splitting rules of a model must be of one kind.")
    arrays = {
        "node_offsets": _offsets([s.node_count for s in structures]),
        "children_left": np.concatenate([s.children_left for s in structures]),
        "children_right": np.concatenate([s.children_right for s in structures]),
        "n_pos": np.concatenate([s.n_pos for s in structures]),
        "n_neg": np.concatenate([s.n_neg for s in structures]),
    }
    if engine == {True}:
        meta, rules = _pack_engine(structures, arrays)
        n_features = structures[0].n_features
    elif mixed:
        if n_features is None:
            raise ValueError("n_features is needed to pack mixed rules")
        meta, rules = _pack_mixed(structures, arrays)
    else:
        meta, rules = _pack_linear(structures, arrays), None
    if rules is not None:
        rule_nodes = _pack_rules(rules, arrays)
        _threshold_dictionary(arrays, n_features)
        _compact_rule_nodes(arrays, rule_nodes)
    return meta, {name: narrow(array) for name, array in arrays.items()}


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
    arrays["rule_offsets"] = _offsets([r.n_nodes for r, _, _ in rules])
    arrays["rule_start"] = np.concatenate([start for _, start, _ in rules])
    arrays["rule_stop"] = np.concatenate([stop for _, _, stop in rules])
    return arrays["rule_start"] >= 0


def _pack_engine(structures, arrays):
    arrays["category_set_offsets"] = _offsets(
        [s.rules.category_sets.shape[0] for s in structures]
    )
    arrays["category_sets"] = np.concatenate(
        [s.rules.category_sets for s in structures]
    ).astype(np.uint64)
    arrays["n_cuts"] = np.array([s.n_cuts for s in structures], dtype=np.int64)
    rules = [(s.rules, s.rule_start, s.rule_stop) for s in structures]
    return {"rule_kind": "engine"}, rules


def _linear_rule(rule):
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


def _pack_node_arrays(structures, arrays, n_cuts, gains):
    """The arrays with one entry per internal node: features (FR1), n_cuts, gain."""
    features = [
        f for s in structures for f, leaf in zip(s.features, s.is_leaf) if not leaf
    ]
    arrays.update(
        {
            "rule_all_features": np.array([f is None for f in features], dtype=bool),
            "rule_feature_offsets": _offsets(
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


def _pack_linear_rules(rules, arrays):
    """The arrays of the linear rules (tuples of :func:`_linear_rule`)."""
    arrays.update(
        {
            "rule_coef_offsets": _offsets([len(r[0]) for r in rules]),
            "rule_coef": np.concatenate([r[0] for r in rules] or [np.zeros(0)]),
            "rule_importance": np.concatenate(
                [np.asarray(r[6], dtype=np.float64) for r in rules] or [np.zeros(0)]
            ),
            "rule_intercept": np.array([r[1] for r in rules], dtype=np.float64),
            "rule_flip": np.array([r[2] for r in rules], dtype=bool),
        }
    )


def _pack_linear(structures, arrays):
    rules = [
        _linear_rule(rule)
        for s in structures
        for rule in s.leafranks
        if rule is not None
    ]
    names = {rule[5] for rule in rules}
    if len(names) > 1:
        raise ValueError(
            f"The linear rules of a model come from one classifier: {sorted(names)}."
        )
    _pack_node_arrays(structures, arrays, [r[3] for r in rules], [r[4] for r in rules])
    _pack_linear_rules(rules, arrays)
    return {"rule_kind": "linear", "estimator": names.pop() if names else None}


def _pack_mixed(structures, arrays):
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
        i: _linear_rule(rule)
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
    _pack_node_arrays(structures, arrays, n_cuts, gains)
    _pack_linear_rules(list(linear.values()), arrays)
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


# ----------------------------------------------------------------------
# binary trees, vectorized over many trees
# ----------------------------------------------------------------------
def _segments(offsets):
    """Owner segment and local index of every element of concatenated arrays."""
    sizes = np.diff(offsets)
    owner = np.repeat(np.arange(sizes.shape[0]), sizes)
    base = offsets[:-1][owner]
    local = np.arange(offsets[-1], dtype=np.int64) - base
    return owner, base, sizes[owner], local


def _chunks(n):
    """Ranges of at most :data:`_CHUNK` entries covering ``range(n)``."""
    return ((start, min(n, start + _CHUNK)) for start in range(0, n, _CHUNK))


def _precheck_children(left, right, node_offsets):
    """What every node of trees numbered in preorder satisfies, on the stored
    arrays in chunks: a leaf has no child; a split's left child is the next
    node, its right child comes after it, inside the tree. The full checks
    (:func:`_check_children`, :func:`_check_preorder`) follow; these refuse a
    hostile file (a member of zeros, say) before any array is converted, the
    left children before the right ones are even read.
    """

    def chunks():
        for start, stop in _chunks(node_offsets[-1]):
            position = np.arange(start, stop)
            owner = np.searchsorted(node_offsets, position, side="right") - 1
            local = position - node_offsets[owner]
            size = node_offsets[owner + 1] - node_offsets[owner]
            yield start, stop, local, size

    for start, stop, local, size in chunks():
        part = left[start:stop]
        check_indices(
            part, size, "children_left", sentinel=-1, size_name="its tree's size"
        )
        lc = part.astype(np.int64)
        split = lc != -1
        if np.any(lc[split] <= local[split]):
            raise ValueError(
                "tree: a child is out of range or does not come after its parent"
            )
        if np.any(lc[split] != local[split] + 1):
            raise ValueError("tree: a left child must follow its parent (preorder)")
    right = right()  # read now
    for start, stop, local, size in chunks():
        part = right[start:stop]
        check_indices(
            part, size, "children_right", sentinel=-1, size_name="its tree's size"
        )
        split = left[start:stop] != -1
        rc = part.astype(np.int64)
        if np.any(rc[~split] != -1):
            raise ValueError("tree: a node has a right child but no left child")
        if np.any(rc[split] <= local[split] + 1):
            raise ValueError(
                "tree: a child is out of range or does not come after its parent"
            )


def _precheck_counts(n_pos, n_neg, node_offsets):
    """Class counts finite and non-negative, every node with some weight and
    every root with both classes, on the stored arrays in chunks."""
    for start, stop in _chunks(n_pos.shape[0]):
        for name, counts in (("n_pos", n_pos), ("n_neg", n_neg)):
            part = counts[start:stop].astype(np.float64)
            if not np.all(np.isfinite(part)) or np.any(part < 0):
                raise ValueError(
                    f"the array {name} holds negative or non-finite counts"
                )
    roots = node_offsets[:-1]
    if np.any(n_pos[roots] <= 0) or np.any(n_neg[roots] <= 0):
        raise ValueError("a tree's root lacks positive or negative weight")
    for start, stop in _chunks(n_pos.shape[0]):
        total = n_pos[start:stop].astype(np.float64) + n_neg[start:stop]
        if np.any(total <= 0):
            raise ValueError("a node of a tree holds no training weight")


def _check_children(
    left, right, base, size, local, what, names=("children_left", "children_right")
):
    """Children local to each tree, in range and after their parent; parents.

    ``names`` are the arrays of the left and right children, for the
    messages. Returns the global parent of every node (-1 for the roots).
    With every node but the roots having exactly one parent, earlier in its
    tree, each tree is one binary tree rooted at its first node.
    """
    for children, name in zip((left, right), names):
        check_indices(children, size, name, sentinel=-1, size_name="its tree's size")
    split = left != -1
    if np.any(right[~split] != -1):
        raise ValueError(f"{what}: a node has a right child but no left child")
    ls, rs, loc, sz = left[split], right[split], local[split], size[split]
    if np.any((ls <= loc) | (ls >= sz) | (rs <= loc) | (rs >= sz)):
        raise ValueError(
            f"{what}: a child is out of range or does not come after its parent"
        )
    parents = np.flatnonzero(split)
    children = np.concatenate([ls + base[split], rs + base[split]])
    n_parents = np.bincount(children, minlength=left.shape[0])
    if np.any(n_parents[local == 0] != 0) or np.any(n_parents[local != 0] != 1):
        raise ValueError(
            f"{what}: every node but the root must have exactly one parent"
        )
    parent = np.full(left.shape[0], -1, dtype=np.int64)
    parent[children] = np.concatenate([parents, parents])
    return parent


def _depths(parent):
    """Depth of every node from its parent pointers (pointer jumping)."""
    depth = (parent >= 0).astype(np.int64)
    ancestor = parent.copy()
    active = np.flatnonzero(ancestor >= 0)
    while active.shape[0]:
        up = ancestor[active]
        depth[active] += depth[up]
        ancestor[active] = ancestor[up]
        active = active[ancestor[active] >= 0]
    return depth


def _check_preorder(left, right, owner, local, size, what):
    """Numbering in depth-first preorder, left child first.

    In preorder, with +1 for an internal node and -1 for a leaf, the running
    sum ``h`` before node i stays non-negative and ends at -1; the left child
    of node i is i + 1 and its right child is the next node of its tree at
    which ``h`` is back to ``h[i]`` (the first node after the left subtree).
    """
    split = left != -1
    step = np.where(split, 1, -1)
    before = np.cumsum(step) - step  # global running sum before each node
    start = before[local == 0]
    h = before - start[owner]
    end = h + step  # after the node
    last = local == size - 1
    if np.any(h < 0) or np.any(end[last] != -1):
        raise ValueError(f"{what}: the nodes are not numbered in preorder")
    if np.any(left[split] != local[split] + 1):
        raise ValueError(f"{what}: a left child must follow its parent (preorder)")
    order = np.lexsort((np.arange(h.shape[0]), h, owner))
    same = (owner[order][1:] == owner[order][:-1]) & (h[order][1:] == h[order][:-1])
    following = np.full(h.shape[0], -1, dtype=np.int64)
    following[order[:-1][same]] = local[order[1:][same]]
    if np.any(right[split] != following[split]):
        raise ValueError(
            f"{what}: a right child must follow its left subtree (preorder)"
        )


def subtree_ends(left, right):
    """End (exclusive) of each node's subtree in a tree numbered in preorder.

    The subtree of node i is the nodes ``i:ends[i]``: it ends after its
    rightmost leaf, reached by following right children (pointer jumping).

    Parameters
    ----------
    left, right : ndarray of int of shape (n_nodes,)
        Children (-1 at leaves) of one checked tree numbered in preorder.

    Returns
    -------
    ends : ndarray of int of shape (n_nodes,)

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.model_io._structures import subtree_ends
    >>> subtree_ends(np.array([1, 2, -1, -1, -1]), np.array([4, 3, -1, -1, -1]))
    array([5, 4, 3, 4, 5])
    """
    nodes = np.arange(left.shape[0])
    pointer = np.where(left != -1, right, nodes)
    while True:
        jumped = pointer[pointer]
        if np.array_equal(jumped, pointer):
            return pointer + 1
        pointer = jumped


def _check_counts(n_pos, n_neg, left, right, base, local, owner):
    """Finite, non-negative counts; parents the sums of their children."""
    for name, counts in (("n_pos", n_pos), ("n_neg", n_neg)):
        if not np.all(np.isfinite(counts)) or np.any(counts < 0):
            raise ValueError(f"the array {name} holds negative or non-finite counts")
    roots = local == 0
    if np.any(n_pos[roots] <= 0) or np.any(n_neg[roots] <= 0):
        raise ValueError("a tree's root lacks positive or negative weight")
    if np.any(n_pos + n_neg <= 0):
        raise ValueError("a node of a tree holds no training weight")
    split = np.flatnonzero(left != -1)
    lc, rc = left[split] + base[split], right[split] + base[split]
    scale = (n_pos + n_neg)[roots][owner[split]]
    for name, counts in (("n_pos", n_pos), ("n_neg", n_neg)):
        gap = np.abs(counts[split] - counts[lc] - counts[rc])
        if np.any(gap > _COUNT_RTOL * scale):
            raise ValueError(
                f"{name}: a node's count is not the sum of its children's counts"
            )
    if np.any(n_pos[split] <= 0) or np.any(n_neg[split] <= 0):
        raise ValueError("a split node lacks positive or negative weight")
    gain = n_pos[lc] / n_pos[split] - n_neg[lc] / n_neg[split]
    if not np.all(gain > 0):
        raise ValueError("a split's left child is not better than its right child")
    return split, gain


# ----------------------------------------------------------------------
# unpacking
# ----------------------------------------------------------------------
def unpack_structures(meta, arrays, expect):
    """Rebuild and check the master trees packed by :func:`pack_structures`.

    Parameters
    ----------
    meta : dict
        The JSON facts written by :func:`pack_structures`.
    arrays : dict of str to ndarray
        The arrays read from the file.
    expect : TreeExpectations
        What the estimator's parameters say of the trees.

    Returns
    -------
    structures : list of RankingTreeStructure

    Raises
    ------
    ValueError
        Naming the array and the inconsistency.
    """
    if not isinstance(meta, dict):
        raise ValueError("structures must be a JSON object")
    kind = meta.get("rule_kind")
    expected_keys = {
        "engine": {"rule_kind"},
        "linear": {"rule_kind", "estimator"},
        "mixed": {"rule_kind", "estimators"},
    }
    if kind not in expected_keys or set(meta) != expected_keys[kind]:
        raise ValueError(f"unknown structures description {sorted(meta)[:5]}")
    if kind != expect.rule_kind:
        raise ValueError(
            f"the trees have {kind} rules but the leafrank parameter says "
            f"{expect.rule_kind} rules"
        )
    # the offsets first (their length is the number of trees), then the shapes
    # of every per-node array, then the cheap necessary conditions on the
    # stored arrays (in chunks), before anything is converted or derived: a
    # file refused for its trees costs little more than the arrays it stores
    n_trees = expect.n_trees
    (length,) = check_declared(arrays, "node_offsets", kinds="iu")
    if n_trees is not None and length != n_trees + 1:
        raise ValueError(
            f"the parameters say {n_trees} tree(s) but the file holds {length - 1}"
        )
    if not 2 <= length <= MAX_TREES + 1:
        raise ValueError(
            f"the array node_offsets describes {length - 1} trees; a model file "
            f"holds 1 to {MAX_TREES}"
        )
    node_offsets = check_offsets(
        arrays["node_offsets"], None, "node_offsets", strict=True
    )
    n_nodes = int(node_offsets[-1])
    shape = (n_nodes,)
    check_declared(arrays, "children_left", kinds="iu", shape=shape)
    check_declared(arrays, "children_right", kinds="iu", shape=shape)
    check_declared(arrays, "n_pos", kinds="iuf", shape=shape)
    check_declared(arrays, "n_neg", kinds="iuf", shape=shape)
    _precheck_children(
        arrays["children_left"], lambda: arrays["children_right"], node_offsets
    )
    _precheck_counts(arrays["n_pos"], arrays["n_neg"], node_offsets)
    left = check_array(arrays, "children_left", kinds="iu", shape=shape, dtype=np.int64)
    right = check_array(
        arrays, "children_right", kinds="iu", shape=shape, dtype=np.int64
    )
    n_pos = check_array(arrays, "n_pos", kinds="iuf", shape=shape, dtype=np.float64)
    n_neg = check_array(arrays, "n_neg", kinds="iuf", shape=shape, dtype=np.float64)
    owner, base, size, local = _segments(node_offsets)
    names = ("children_left", "children_right")
    parent = _check_children(left, right, base, size, local, "tree", names)
    _check_preorder(left, right, owner, local, size, "tree")
    if expect.max_depth is not None and np.any(_depths(parent) > expect.max_depth):
        raise ValueError(f"a tree is deeper than max_depth={expect.max_depth}")
    split, gain = _check_counts(n_pos, n_neg, left, right, base, local, owner)
    trees = (node_offsets, left, right, n_pos, n_neg)
    if kind == "engine":
        return _unpack_engine(arrays, trees, split, owner, expect)
    if kind == "linear":
        return _unpack_linear(meta, arrays, trees, split, gain, expect)
    return _unpack_mixed(meta, arrays, trees, split, owner, gain, expect)


def _unpack_rules(
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
        :func:`_check_engine_rules`).
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
    arrays = _expand_rule_nodes(arrays, rule_nodes, owner, rule_offsets)
    arrays = _thresholds_from_dictionary(arrays, n_features)
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


def _unpack_engine(arrays, trees, split, owner, expect):
    node_offsets, left, right, n_pos, n_neg = trees
    n_trees = node_offsets.shape[0] - 1
    n_cuts = check_array(arrays, "n_cuts", kinds="iu", shape=(n_trees,))
    cuts = _cuts(expect.rule_max_depth)
    if cuts is None or np.any(n_cuts != cuts):
        value = "" if cuts is None else f" = {cuts}"
        raise ValueError(
            f"n_cuts must be 2**max_depth - 1{value} for the LeafRank's max_depth"
        )
    rule_offsets, fields, start, stop, first, last = _unpack_rules(
        arrays,
        left >= 0,
        owner,
        n_trees,
        expect.n_features,
        "the leaves",
        int(np.count_nonzero(left >= 0)) * (2 * cuts + 1),  # 2**(depth + 1) - 1
    )
    _check_engine_rules(
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


def _cuts(max_depth):
    """``2**max_depth - 1``, the cuts of a LeafRank's rule (None past int64:
    never computed for a huge depth read from a file)."""
    return 2**max_depth - 1 if max_depth < 63 else None


def _check_engine_rules(fields, first, last, max_depth, n_features, deep, features):
    """Every rule a proper binary tree over its range; fields canonical.

    ``max_depth`` and ``n_features`` bound every rule, or each rule its own
    (arrays with one entry per rule); ``deep`` and ``features`` say those
    bounds in the messages.
    """
    if not first.shape[0]:
        return
    offsets = np.concatenate([first, last[-1:]])
    owner, base, size, local = _segments(offsets)
    cl, cr = (
        fields["child_left"].astype(np.int64),
        fields["child_right"].astype(np.int64),
    )
    names = ("rule_child_left", "rule_child_right")
    parent = _check_children(cl, cr, base, size, local, "rule", names)
    split = cl != -1
    if np.any(cr[split] != cl[split] + 1):
        raise ValueError("rule: the children of a split must be consecutive")
    if not np.all(split[local == 0]):
        raise ValueError("rule: a rule's root must be a split")
    if isinstance(max_depth, np.ndarray):
        max_depth = max_depth[owner]
    if np.any(_depths(parent) > max_depth):
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


def _unpack_node_features(arrays, n_rules, expect):
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


def _check_rule_gain(arrays, gain):
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


def _check_linear_n_cuts(n_cuts, width, name, max_features):
    """A linear rule's complexity: the features it uses."""
    if name == "LinearLeafRank":
        # the features the rule uses: at least one, at most its width
        limit = width if max_features is None else np.minimum(width, max_features)
        if np.any(n_cuts < 1) or np.any(n_cuts > limit):
            bound = "its width" if max_features is None else "max_features"
            raise ValueError(f"a linear rule's n_cuts must be in [1, {bound}]")
    elif np.any(n_cuts != width):
        raise ValueError("a linear rule's n_cuts must be its number of features")


def _unpack_linear_rules(arrays, width, required):
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


def _linear_rules(linear, n_cuts, gain, names):
    """The frozen linear rules from :func:`_unpack_linear_rules`'s arrays.

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


def _unpack_linear(meta, arrays, trees, split, gain, expect):
    name = meta.get("estimator")
    n_rules = split.shape[0]
    if n_rules and name != expect.estimator_name:
        raise ValueError(
            f"the rules come from {name!r} but the leafrank parameter holds "
            f"{expect.estimator_name!r}"
        )
    node_features = _unpack_node_features(arrays, n_rules, expect)
    width = node_features[3]
    n_cuts = check_array(
        arrays, "rule_n_cuts", kinds="iu", shape=(n_rules,), dtype=np.int64
    )
    _check_linear_n_cuts(n_cuts, width, expect.estimator_name, expect.rule_max_features)
    rule_gain = _check_rule_gain(arrays, gain)
    linear = _unpack_linear_rules(arrays, width, required=False)
    rules = _linear_rules(linear, n_cuts, rule_gain, [name] * n_rules)
    return _node_structures(trees, split, rules, node_features)


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


def _unpack_mixed(meta, arrays, trees, split, owner, gain, expect):
    node_offsets, left = trees[:2]
    candidates = expect.candidates
    depths = sorted({c.max_depth for c in candidates if c.kind == "engine"})
    n_rules = split.shape[0]
    names, kinds = _mixed_kinds(meta, arrays, n_rules, candidates)
    box = kinds == 0
    node_features = _unpack_node_features(arrays, n_rules, expect)
    width = node_features[3]
    n_cuts = check_array(
        arrays, "rule_n_cuts", kinds="iu", shape=(n_rules,), dtype=np.int64
    )
    rule_gain = _check_rule_gain(arrays, gain)
    # box rules: n_cuts = 2**max_depth - 1 of one of the LeafRank candidates
    allowed = [_cuts(d) for d in depths if _cuts(d) is not None]
    if not np.all(np.isin(n_cuts[box], allowed)):
        raise ValueError(
            "a box rule's n_cuts must be 2**max_depth - 1 for the max_depth of a "
            f"LeafRank candidate {depths[:5]}"
        )
    for k, name in enumerate(names, start=1):
        limits = [c.max_features for c in candidates if c.estimator_name == name]
        max_features = None if None in limits else max(limits)
        _check_linear_n_cuts(n_cuts[kinds == k], width[kinds == k], name, max_features)
    linear = _unpack_linear_rules(arrays, width[~box], required=True)
    linear_rules = _linear_rules(
        linear,
        n_cuts[~box],
        rule_gain[~box],
        [names[k - 1] for k in kinds[~box]],
    )
    box_nodes = np.zeros(left.shape[0], dtype=bool)
    box_nodes[split[box]] = True
    _, fields, _, _, first, last = _unpack_rules(
        arrays,
        box_nodes,
        owner,
        node_offsets.shape[0] - 1,
        expect.n_features,
        "the nodes without a box rule",
        int(np.sum(2 * n_cuts[box] + 1)),  # 2**(depth + 1) - 1 each
    )
    box_depth = np.round(np.log2(n_cuts[box] + 1)).astype(np.int64)
    _check_engine_rules(
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
    return _node_structures(trees, split, rules, node_features)


def _node_structures(trees, split, rules, node_features):
    """Trees whose internal nodes ``split`` hold ``rules`` (in node order),
    fitted on the features of ``node_features`` (:func:`_unpack_node_features`)."""
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
