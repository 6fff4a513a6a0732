"""Surrogate losses for learning to rank (temporary init)."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.surrogates._listnet import ListNetSurrogate
from treerank.surrogates._pairwise_comparison import (
    PairwiseComparisonLoss,
    PairwiseHingeSurrogate,
)
from treerank.surrogates._slam import SLAMSurrogate, slam_vmax, slam_weights
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
    "BregmanLoss",
    "InstantiatedLoss",
    "ListNetSurrogate",
    "PairwiseComparisonLoss",
    "PairwiseExponential",
    "PairwiseHingeSurrogate",
    "PairwiseLogistic",
    "PairwiseSquared",
    "PointwiseDifferentiableHinge",
    "PointwiseExponential",
    "PointwiseLogistic",
    "PointwiseSquared",
    "PointwiseSquaredHinge",
    "SLAMSurrogate",
    "TemplateLoss",
    "slam_vmax",
    "slam_weights",
]
from treerank.surrogates._affine import AffineDecomposition, RankingDecomposition
from treerank.surrogates._low_rank import (
    DCGSurrogate,
    ERUSurrogate,
    MAPScoreSurrogate,
    MAPSurrogate,
    PDScoreSurrogate,
    PDSurrogate,
    PrecisionAtQSurrogate,
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
