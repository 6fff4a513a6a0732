"""Utilities: input validation shared by estimators and metrics.

The names below are imported on first access (PEP 562), so that importing a
private helper of this package (``treerank.utils._io``, ``_progress``) stays
light: the command line's help does not import scikit-learn.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank._lazy import lazy_module_attributes

_LOCATIONS = {
    "CategoryEncoder": "treerank.utils._categorical",
    "check_bipartite_target": "treerank.utils.validation",
    "check_graded_target": "treerank.utils._graded_target",
    "check_sample_weight": "treerank.utils.validation",
    "check_scores": "treerank.utils.validation",
    "check_training_target": "treerank.utils.validation",
}

__all__ = sorted(_LOCATIONS)

__getattr__, __dir__ = lazy_module_attributes(
    __name__, _LOCATIONS, submodules=["validation"]
)
