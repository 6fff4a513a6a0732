"""Surrogate losses for learning to rank, with their calibration theory.

Losses score a list's predicted scores against its supervision
(``loss.value(scores, target, qid=...)``, ``loss.grad(...)``), vectorized over
many lists given by query ids:

- order-preserving template losses (pointwise, pairwise, Bregman) with their
  inner-risk minimizers, infima and regret constants, instantiated for a
  metric through its utility (:meth:`TemplateLoss.instance`);
- the usual pairwise comparison losses (RankNet, RankSVM), which are *not*
  order-preserving, and ListNet;
- SLAM, the listwise large-margin family that upper-bounds ``1 - NDCG``,
  ``1 - NDCG@k`` or ``1 - AP``, and its online perceptron-like learner;
- affine (low-rank) decompositions of ranking and multilabel losses with their
  least-squares surrogates and decoders, and the quadratic-surrogate estimator;
- :class:`LinearSurrogateRanker`, a scikit-learn estimator minimizing any of
  these losses over query lists (dense or sparse features);
- a calibration toolkit: Bayes-optimal rankings, inner-risk minimizers,
  calibration gaps, regret bounds and the noise conditions of the theory.

Rankings are item indices in rank order, best first (0-based). The reference
notes ``reference/seeds-000-001.md`` and ``seeds-002-003.md`` give the
derivations and correct several formulas of the source papers.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.surrogates._affine import AffineDecomposition, RankingDecomposition
from treerank.surrogates._base import SurrogateLoss
from treerank.surrogates._calibration import (
    bayes_optimal_rankings,
    calibration_gap,
    diagonal_order_is_ap_optimal,
    expected_map_target,
    expected_metric,
    expected_metric_of_scores,
    expected_preferences,
    majority_preferences_acyclic,
    metric_regret,
    minimize_inner_risk,
    order_preserving_margin,
    preserves_majority_preferences,
    regret_bound,
    weight_gap_norm,
)
from treerank.surrogates._decoders import (
    greedy_feedback_arc_decoder,
    sort_decoder,
)
from treerank.surrogates._linear_ranker import LinearSurrogateRanker, resolve_loss
from treerank.surrogates._listnet import ListNetSurrogate
from treerank.surrogates._low_rank import (
    DCGSurrogate,
    ERUSurrogate,
    MAPScoreSurrogate,
    MAPSurrogate,
    PDScoreSurrogate,
    PDSurrogate,
    PrecisionAtQSurrogate,
)
from treerank.surrogates._online import (
    OnlineListwisePerceptron,
    slam_weight_ratio_bound,
)
from treerank.surrogates._pairwise_comparison import (
    PairwiseComparisonLoss,
    PairwiseHingeSurrogate,
)
from treerank.surrogates._quadratic import (
    BlockZeroOneDecomposition,
    FScoreDecomposition,
    HammingDecomposition,
    PairwiseDisagreementDecomposition,
    PrecisionAtKDecomposition,
    QuadraticSurrogateEstimator,
    ZeroOneDecomposition,
)
from treerank.surrogates._slam import SLAMSurrogate, slam_weight_ratio, slam_weights
from treerank.surrogates._template import (
    BregmanLoss,
    InstantiatedLoss,
    PairwiseExponential,
    PairwiseLogistic,
    PairwiseSquared,
    PointwiseDifferentiableHinge,
    PointwiseExponential,
    PointwiseLogistic,
    PointwiseSquared,
    PointwiseSquaredHinge,
    TemplateLoss,
)

__all__ = [
    "AffineDecomposition",
    "BlockZeroOneDecomposition",
    "BregmanLoss",
    "DCGSurrogate",
    "ERUSurrogate",
    "FScoreDecomposition",
    "HammingDecomposition",
    "InstantiatedLoss",
    "LinearSurrogateRanker",
    "ListNetSurrogate",
    "MAPScoreSurrogate",
    "MAPSurrogate",
    "OnlineListwisePerceptron",
    "PDScoreSurrogate",
    "PDSurrogate",
    "PairwiseComparisonLoss",
    "PairwiseDisagreementDecomposition",
    "PairwiseExponential",
    "PairwiseHingeSurrogate",
    "PairwiseLogistic",
    "PairwiseSquared",
    "PointwiseDifferentiableHinge",
    "PointwiseExponential",
    "PointwiseLogistic",
    "PointwiseSquared",
    "PointwiseSquaredHinge",
    "PrecisionAtKDecomposition",
    "PrecisionAtQSurrogate",
    "QuadraticSurrogateEstimator",
    "RankingDecomposition",
    "SLAMSurrogate",
    "SurrogateLoss",
    "TemplateLoss",
    "ZeroOneDecomposition",
    "bayes_optimal_rankings",
    "calibration_gap",
    "diagonal_order_is_ap_optimal",
    "expected_map_target",
    "expected_metric",
    "expected_metric_of_scores",
    "expected_preferences",
    "greedy_feedback_arc_decoder",
    "majority_preferences_acyclic",
    "metric_regret",
    "minimize_inner_risk",
    "order_preserving_margin",
    "preserves_majority_preferences",
    "regret_bound",
    "resolve_loss",
    "slam_weight_ratio",
    "slam_weight_ratio_bound",
    "slam_weights",
    "sort_decoder",
    "weight_gap_norm",
]
