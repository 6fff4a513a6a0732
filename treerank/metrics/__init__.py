"""Metrics for bipartite ranking (ROC family, Kendall distance), for ordered
grades (volume under the ROC surface) and for lists.

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

# --- multipartite (ordinal) ranking: K >= 2 ordered grades ---
from treerank.metrics._vus import (
    cumulative_auc_scores,
    volume_under_surface,
    volume_under_surface_from_counts,
)

__all__ = [
    "cumulative_auc_scores",
    "kendall_tau_distance",
    "partial_auc_score",
    "roc_auc_score",
    "roc_curve",
    "roc_curve_from_counts",
    "roc_l1_distance",
    "roc_sup_distance",
    "tpr_at_fpr",
    "volume_under_surface",
    "volume_under_surface_from_counts",
]

# --- list (query-grouped) ranking metrics: see below ---
from treerank.metrics._list_average_precision import average_precision_score
from treerank.metrics._list_cascade import err_score, reciprocal_rank
from treerank.metrics._list_pairwise import pairwise_disagreement
from treerank.metrics._list_positional import (
    dcg_score,
    expected_rank_utility,
    list_auc,
    ndcg_score,
    precision_at_k,
    recall_at_k,
    spearman_rho,
)
from treerank.metrics._positional import PositionalMetric

__all__ += [
    "PositionalMetric",
    "average_precision_score",
    "dcg_score",
    "err_score",
    "expected_rank_utility",
    "list_auc",
    "ndcg_score",
    "pairwise_disagreement",
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank",
    "spearman_rho",
]
