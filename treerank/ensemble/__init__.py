"""Ensembles of ranking trees.

:class:`RankingForest` grows its randomized trees here and aggregates them as
its base class :class:`~treerank.aggregation.TreeAggregate` does; the trees'
leaf scores and their means (defined with the aggregate, in
:mod:`treerank.aggregation`) are public here, where a forest's user looks for
them.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.aggregation._leaf_scores import (
    leaf_midranks,
    leaf_positions,
    mean_borda_scores,
    mean_leaf_scores,
    mean_leaf_values,
    rank_leaf_values,
    rate_leaf_values,
)
from treerank.ensemble._forest import RankingForest

__all__ = [
    "RankingForest",
    "leaf_midranks",
    "leaf_positions",
    "mean_borda_scores",
    "mean_leaf_scores",
    "mean_leaf_values",
    "rank_leaf_values",
    "rate_leaf_values",
]
