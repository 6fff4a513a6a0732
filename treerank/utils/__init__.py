"""Utilities: input validation shared by estimators and metrics."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.utils.validation import (
    check_bipartite_target,
    check_sample_weight,
    check_scores,
)

__all__ = ["check_bipartite_target", "check_sample_weight", "check_scores"]
