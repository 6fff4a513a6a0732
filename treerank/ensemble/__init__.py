"""Ensembles of ranking trees."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.ensemble._forest import RankingForest
from treerank.ensemble._leaf_scores import (
    leaf_midranks,
    leaf_positions,
    mean_borda_scores,
    mean_leaf_scores,
    mean_leaf_values,
    rank_leaf_values,
    rate_leaf_values,
)

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
