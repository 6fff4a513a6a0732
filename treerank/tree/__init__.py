"""Ranking trees: the LeafRank splitters and the TreeRank estimator."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.tree._classes import TreeRank
from treerank.tree._frozen import FrozenLinearLeafRank, FrozenTreeLeafRank
from treerank.tree._leafrank import (
    BaseLeafRank,
    ClassifierLeafRank,
    LeafRank,
    RuleTree,
    balanced_node_weights,
    resolve_max_features,
)
from treerank.tree._linear import LinearLeafRank
from treerank.tree._mixed import MixedLeafRank
from treerank.tree._pruning import structural_penalty
from treerank.tree._structure import RankingTreeStructure

__all__ = [
    "BaseLeafRank",
    "ClassifierLeafRank",
    "FrozenLinearLeafRank",
    "FrozenTreeLeafRank",
    "LeafRank",
    "LinearLeafRank",
    "MixedLeafRank",
    "RankingTreeStructure",
    "RuleTree",
    "TreeRank",
    "balanced_node_weights",
    "resolve_max_features",
    "structural_penalty",
]
