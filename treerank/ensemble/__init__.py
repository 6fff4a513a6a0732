"""Ensembles of ranking trees, and the aggregation of fitted trees.

:class:`TreeAggregate` aggregates fitted ranking trees into one score:
routing rows to their leaves, the trees' leaf scores (and their means), their
Kendall median over the common subpartition of their leaves (or mean, or
Borda count; the rank aggregation itself is :mod:`treerank.aggregation`), the
calibration and the scoring of new rows. :class:`RankingForest` extends it
with the growth of its randomized trees; a :class:`treerank.TreeRank` fitted
on ``K > 2`` grades holds one as the median of its threshold trees.

The names below are imported on first access (PEP 562): a tree
(:mod:`treerank.tree`) uses :class:`TreeAggregate` without importing the
forest, which builds on the tree.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank._lazy import lazy_module_attributes

_LOCATIONS = {
    "RankingForest": "treerank.ensemble._forest",
    "TreeAggregate": "treerank.ensemble._tree_aggregate",
    "leaf_midranks": "treerank.ensemble._leaf_scores",
    "leaf_positions": "treerank.ensemble._leaf_scores",
    "mean_borda_scores": "treerank.ensemble._leaf_scores",
    "mean_leaf_scores": "treerank.ensemble._leaf_scores",
    "mean_leaf_values": "treerank.ensemble._leaf_scores",
    "rank_leaf_values": "treerank.ensemble._leaf_scores",
    "rate_leaf_values": "treerank.ensemble._leaf_scores",
}

__all__ = sorted(_LOCATIONS)

__getattr__, __dir__ = lazy_module_attributes(__name__, _LOCATIONS)
