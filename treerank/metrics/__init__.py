"""Metrics for bipartite ranking (ROC family, Kendall distance), for ordered
grades (volume under the ROC surface) and for lists.

Functions named ``*_score`` return a value to maximize; ``*_distance`` a value
to minimize. The functions are imported on first access (PEP 562): the
estimators need the ROC functions only, not the list metrics.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank._lazy import lazy_module_attributes

_LOCATIONS = {
    # --- bipartite ranking: ROC analysis and Kendall distance between scorers ---
    "kendall_tau_distance": "treerank.metrics._kendall",
    "partial_auc_score": "treerank.metrics._roc",
    "roc_auc_score": "treerank.metrics._roc",
    "roc_curve": "treerank.metrics._roc",
    "roc_curve_from_counts": "treerank.metrics._roc",
    "tpr_at_fpr": "treerank.metrics._roc",
    "roc_l1_distance": "treerank.metrics._roc_distance",
    "roc_sup_distance": "treerank.metrics._roc_distance",
    # --- multipartite (ordinal) ranking: K >= 2 ordered grades ---
    "cumulative_auc_scores": "treerank.metrics._vus",
    "volume_under_surface": "treerank.metrics._vus",
    "volume_under_surface_from_counts": "treerank.metrics._vus",
    # --- list (query-grouped) ranking metrics ---
    "PositionalMetric": "treerank.metrics._positional",
    "average_precision_score": "treerank.metrics._list_average_precision",
    "dcg_score": "treerank.metrics._list_positional",
    "err_score": "treerank.metrics._list_cascade",
    "expected_rank_utility": "treerank.metrics._list_positional",
    "list_auc": "treerank.metrics._list_positional",
    "ndcg_score": "treerank.metrics._list_positional",
    "pairwise_disagreement": "treerank.metrics._list_pairwise",
    "precision_at_k": "treerank.metrics._list_positional",
    "recall_at_k": "treerank.metrics._list_positional",
    "reciprocal_rank": "treerank.metrics._list_cascade",
    "spearman_rho": "treerank.metrics._list_positional",
}

__all__ = sorted(_LOCATIONS)

__getattr__, __dir__ = lazy_module_attributes(__name__, _LOCATIONS)
