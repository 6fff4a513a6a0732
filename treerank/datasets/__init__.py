"""Data sets for bipartite ranking.

Synthetic distributions whose regression function eta(x) = P(Y=1 | X=x) is
known in closed form, with their optimal ROC curve ROC* and AUC*, two offline
real data sets (one with missing values and categories), and query-grouped
learning-to-rank data (graded relevance from a known latent-utility model) with
converters between query ids and group sizes, and a design with ordered grades
whose optimal scorer and volume under the ROC surface are known.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.datasets._breast_cancer import load_breast_cancer
from treerank.datasets._distribution import RankingDistribution
from treerank.datasets._gaussian import (
    GaussianMeanShift,
    GaussianScale,
    make_gaussian_mean_shift,
    make_gaussian_scale,
)
from treerank.datasets._learning_to_rank import (
    make_learning_to_rank,
    qid_to_sizes,
    sizes_to_qid,
)
from treerank.datasets._nested_squares import NestedSquares, make_nested_squares
from treerank.datasets._ordinal_squares import (
    OrdinalNestedSquares,
    make_ordinal_nested_squares,
)
from treerank.datasets._penguins import load_penguins

__all__ = [
    "GaussianMeanShift",
    "GaussianScale",
    "NestedSquares",
    "OrdinalNestedSquares",
    "RankingDistribution",
    "load_breast_cancer",
    "load_penguins",
    "make_gaussian_mean_shift",
    "make_gaussian_scale",
    "make_learning_to_rank",
    "make_nested_squares",
    "make_ordinal_nested_squares",
    "qid_to_sizes",
    "sizes_to_qid",
]
