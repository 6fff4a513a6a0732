"""Statistical inference with rankers: the two-sample test by ranking.

- :func:`two_sample_test` tests whether two samples come from the same
  distribution by learning a scorer that ranks one above the other on part of
  the data, and comparing the held-out scores with the Mann-Whitney (AUC)
  statistic;
- :func:`mann_whitney_auc_test` is that final test on given scores: exact
  (ties included), asymptotic or permutation p-values.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.inference._mann_whitney import AUCTestResult, mann_whitney_auc_test
from treerank.inference._two_sample import TwoSampleTestResult, two_sample_test

__all__ = [
    "AUCTestResult",
    "TwoSampleTestResult",
    "mann_whitney_auc_test",
    "two_sample_test",
]
