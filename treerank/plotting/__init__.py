"""Plots (matplotlib is imported inside the functions, never at package import)."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.plotting._explanation import plot_contribution_summary, plot_waterfall
from treerank.plotting._partition import plot_partition
from treerank.plotting._roc import plot_roc
from treerank.plotting._stability import plot_stability
from treerank.plotting._tree import plot_tree, tree_layout

__all__ = [
    "plot_contribution_summary",
    "plot_partition",
    "plot_roc",
    "plot_stability",
    "plot_tree",
    "plot_waterfall",
    "tree_layout",
]
