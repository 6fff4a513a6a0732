"""Ranking-tree structures and their splitting rules as flat numeric arrays.

A list of fitted master trees (:class:`~treerank.tree.RankingTreeStructure`) is
packed into a fixed set of concatenated arrays with offsets, so that a forest of
hundreds of trees is a handful of archive members, and unpacked into structures
that predict exactly as the saved ones. This module dispatches by the kind of
the trees' rules, which the estimator's ``leafrank`` fixes
(:func:`tree_expectations`): the nodes of the trees are stored by
:mod:`~treerank.model_io._tree_arrays`, the rules by
:mod:`~treerank.model_io._rules_engine` (``"engine"``: trees grown by the
engine keep their flat rule arrays), :mod:`~treerank.model_io._rules_linear`
(``"linear"``: rebuilt as :class:`~treerank.tree.FrozenLinearLeafRank`) or
:mod:`~treerank.model_io._rules_mixed` (``"mixed"``: each node's chosen rule
of a :class:`~treerank.tree.MixedLeafRank`, a box rule or a linear rule).

Unpacking treats the arrays as hostile (a file whose digests were recomputed
after an edit) and checks, vectorized over all the trees at once, everything
prediction and the compiled routing kernels rely on, so that an inconsistent
file is refused with a message naming the problem instead of loading a model
that crashes, hangs or predicts differently (each module says what it
checks). Every check raises ``ValueError`` naming the array and the problem
(``load_model`` reports it as a :class:`~treerank.exceptions.ModelFileError`).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from typing import NamedTuple

import numpy as np

from treerank.model_io._arrays import narrow
from treerank.model_io._rules_engine import (
    ENGINE_ARRAYS,
    pack_engine,
    pack_rule_arrays,
    rule_array_names,
    unpack_engine,
)
from treerank.model_io._rules_linear import (
    LINEAR_ARRAYS,
    NODE_ARRAYS,
    pack_linear,
    unpack_linear,
)
from treerank.model_io._rules_mixed import MIXED_KINDS, pack_mixed, unpack_mixed
from treerank.model_io._tree_arrays import TREE_ARRAYS, pack_trees, unpack_trees
from treerank.tree._classes import engine_growth_params
from treerank.tree._leafrank import LeafRank, resolve_max_features
from treerank.tree._linear import LinearLeafRank
from treerank.tree._mixed import MixedLeafRank

__all__ = [
    "RuleCandidate",
    "TreeExpectations",
    "check_no_other_arrays",
    "pack_model_trees",
    "pack_structures",
    "structure_array_names",
    "tree_expectations",
    "unpack_structures",
]


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


def tree_expectations(tree_template, n_features, category_encoder=None):
    """What a TreeRank's parameters say of its trees (TreeExpectations).

    ``category_encoder`` is the model's (None without categorical features).
    """
    leafrank = tree_template._leafrank_template()
    if isinstance(leafrank, LeafRank):
        engine_growth_params(  # refuses max_features beyond n_features
            leafrank,
            max_depth=tree_template.max_depth,
            min_samples_split=tree_template.min_samples_split,
            max_features_node=tree_template.max_features_node,
            n_features=n_features,
        )
        categorical = None
        if category_encoder is not None:
            categorical = tuple(bool(c) for c in category_encoder.is_categorical_)
        return TreeExpectations(
            n_features,
            tree_template.max_depth,
            "engine",
            rule_max_depth=leafrank.max_depth,
            categorical=categorical,
        )
    n_node = resolve_max_features(
        tree_template.max_features_node, n_features, "max_features_node"
    )
    if n_node is not None and n_node >= n_features:
        n_node = None
    width = n_features if n_node is None else n_node
    if isinstance(leafrank, MixedLeafRank):
        # the candidates as the MixedLeafRank fits them (its max_features set)
        candidates = leafrank._candidates(np.random.RandomState(0))
        return TreeExpectations(
            n_features,
            tree_template.max_depth,
            "mixed",
            n_node_features=n_node,
            candidates=tuple(_rule_candidate(c, width) for c in candidates),
        )
    rule = _rule_candidate(leafrank, width)
    return TreeExpectations(
        n_features,
        tree_template.max_depth,
        "linear",
        n_node_features=n_node,
        estimator_name=rule.estimator_name,
        rule_max_features=rule.max_features,
    )


def _rule_candidate(leafrank, width):
    """What a LeafRank fitted on nodes of ``width`` features says of its rules."""
    if isinstance(leafrank, LeafRank):
        resolve_max_features(leafrank.max_features, width)  # refused beyond width
        return RuleCandidate("engine", max_depth=leafrank.max_depth)
    if isinstance(leafrank, LinearLeafRank):
        return RuleCandidate(
            "linear",
            estimator_name="LinearLeafRank",
            max_features=resolve_max_features(leafrank.max_features, width),
        )
    return RuleCandidate("linear", estimator_name=type(leafrank.estimator).__name__)


def pack_model_trees(model, structures):
    """The master trees of a TreeRank or RankingForest (pack_structures)."""
    mixed = isinstance(model.leafrank, MixedLeafRank)
    return pack_structures(structures, model.n_features_in_, mixed=mixed)


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
        In the narrowest exact dtypes (see :func:`~treerank.model_io._arrays.narrow`).
    """
    engine = {s.rules is not None for s in structures}
    if len(engine) != 1 or (mixed and engine == {True}):
        raise ValueError("All the splitting rules of a model must be of one kind.")
    arrays = pack_trees(structures)
    if engine == {True}:
        meta, rules = pack_engine(structures, arrays)
        n_features = structures[0].n_features
    elif mixed:
        if n_features is None:
            raise ValueError("n_features is needed to pack mixed rules")
        meta, rules = pack_mixed(structures, arrays)
    else:
        meta, rules = pack_linear(structures, arrays), None
    if rules is not None:
        pack_rule_arrays(rules, arrays, n_features)
    return meta, {name: narrow(array) for name, array in arrays.items()}


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
    trees, split, gain, owner = unpack_trees(arrays, expect.n_trees, expect.max_depth)
    if kind == "engine":
        return unpack_engine(arrays, trees, split, owner, expect)
    if kind == "linear":
        return unpack_linear(meta, arrays, trees, split, gain, expect)
    return unpack_mixed(meta, arrays, trees, split, owner, gain, expect)


def structure_array_names(meta, present=()):
    """Names of the arrays :func:`pack_structures` writes for trees of this kind.

    ``present`` are the names in the file (the engine rules have two forms,
    see :func:`~treerank.model_io._rules_engine.rule_array_names`).
    """
    kind = meta.get("rule_kind")
    names = set(TREE_ARRAYS)
    if kind in ("engine", "mixed"):
        names |= rule_array_names(present)
    if kind == "engine":
        return names | set(ENGINE_ARRAYS)
    names |= {*NODE_ARRAYS, *LINEAR_ARRAYS}
    return names | {MIXED_KINDS} if kind == "mixed" else names


def check_no_other_arrays(arrays, expected, meta):
    """Refuse a file holding arrays the model does not use (by name)."""
    expected = set(expected) | structure_array_names(meta, arrays)
    unexpected = sorted(set(arrays) - expected)
    if unexpected:
        raise ValueError(f"the file holds unexpected arrays {unexpected[:5]}")
