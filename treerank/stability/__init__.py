"""Stability of ranking algorithms: the bootstrap Kendall instability.

:func:`bootstrap_stability` works with any estimator that has a
``decision_function``, so TreeRank and RankingForest (or any scikit-learn
scorer) are compared with one call each.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.stability._bootstrap import StabilityResult, bootstrap_stability

__all__ = ["StabilityResult", "bootstrap_stability"]
