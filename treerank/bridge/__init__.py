"""The bridge between tree scorers, list metrics and surrogate losses.

- :func:`evaluate` scores query-grouped (or plain bipartite) data with any
  fitted estimator and reports list metrics per query (``"ndcg@10"``,
  ``"map"``, ``"err"``, ...) or bipartite metrics (``"auc"``), with their means
  and bootstrap confidence intervals over queries (:class:`EvaluationResult`);
- :func:`compare` compares several rankers on the same data: metric means,
  paired tests of their differences (bootstrap, permutation, Student or
  DeLong) with Holm's correction, and report tables (:class:`ComparisonResult`);
- :func:`make_list_scorer` builds scikit-learn scorers of the list metrics
  that receive ``qid`` through metadata routing, for ``cross_validate`` and
  ``GridSearchCV`` with grouped folds;
- :func:`surrogate_risk` computes the empirical risk of any surrogate of
  :mod:`treerank.surrogates` for a scorer, with the regret of the metric the
  surrogate targets (:func:`list_metric_regret`);
- :class:`LeafEmbedding` turns the leaves of a ranking tree or forest into a
  sparse one-hot design, on which
  :class:`~treerank.surrogates.LinearSurrogateRanker` learns leaf scores for a
  list metric;
- :func:`check_qid`, :func:`group_qid` and :class:`QueryGroups` validate and
  group query ids (:func:`treerank.datasets.qid_to_sizes` and
  :func:`treerank.datasets.sizes_to_qid` convert to and from group sizes).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.bridge._compare import ComparisonResult, compare, holm_correction
from treerank.bridge._evaluate import (
    EvaluationResult,
    evaluate,
    evaluate_from_scores,
)
from treerank.bridge._leaf_features import LeafEmbedding
from treerank.bridge._scorers import ListScorer, make_list_scorer
from treerank.bridge._surrogate_risk import (
    SurrogateRiskResult,
    list_metric_regret,
    surrogate_risk,
    surrogate_risk_from_scores,
)
from treerank.metrics._grouping import QueryGroups, check_qid, group_qid

__all__ = [
    "ComparisonResult",
    "EvaluationResult",
    "LeafEmbedding",
    "ListScorer",
    "QueryGroups",
    "SurrogateRiskResult",
    "check_qid",
    "compare",
    "evaluate",
    "evaluate_from_scores",
    "group_qid",
    "holm_correction",
    "list_metric_regret",
    "make_list_scorer",
    "surrogate_risk",
    "surrogate_risk_from_scores",
]
