"""Metrics for bipartite ranking (ROC family, Kendall distance) and for lists.

Functions named ``*_score`` return a value to maximize; ``*_distance`` a value
to minimize.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

# --- bipartite ranking: ROC analysis and Kendall distance between scorers ---
from treerank.metrics._kendall import kendall_tau_distance
from treerank.metrics._roc import (
    partial_auc_score,
    roc_auc_score,
    roc_curve,
    roc_curve_from_counts,
    tpr_at_fpr,
)
from treerank.metrics._roc_distance import roc_l1_distance, roc_sup_distance

__all__ = [
    "kendall_tau_distance",
    "partial_auc_score",
    "roc_auc_score",
    "roc_curve",
    "roc_curve_from_counts",
    "roc_l1_distance",
    "roc_sup_distance",
    "tpr_at_fpr",
]

# --- list (query-grouped) ranking metrics: see below ---
