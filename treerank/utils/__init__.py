"""Utilities: input validation shared by estimators and metrics."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.utils._categorical import CategoryEncoder
from treerank.utils._graded_target import check_graded_target
from treerank.utils.validation import (
    check_bipartite_target,
    check_sample_weight,
    check_scores,
    check_training_target,
    normalize_sample_weight,
)

__all__ = [
    "CategoryEncoder",
    "check_bipartite_target",
    "check_graded_target",
    "check_sample_weight",
    "check_scores",
    "check_training_target",
    "normalize_sample_weight",
]
