"""treerank: bipartite ranking with tree ensembles.

The estimators (``TreeRank``, ``LeafRank``, ``LinearLeafRank``,
``MixedLeafRank``, ``ClassifierLeafRank``, ``RankingForest``) are importable
from the top level; the subpackages
(``treerank.metrics``, ``treerank.inspection``, ``treerank.datasets``, ...)
are loaded on first access, so ``import treerank`` stays light and never
imports matplotlib. ``set_config``, ``get_config`` and ``config_context`` hold
treerank's settings; ``precompile`` compiles its numba kernels ahead of a
first fit.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import importlib

__version__ = "0.1.0.dev0"

_SUBMODULES = [
    "aggregation",
    "base",
    "bridge",
    "calibration",
    "datasets",
    "ensemble",
    "exceptions",
    "export",
    "inference",
    "inspection",
    "metrics",
    "model_io",
    "plotting",
    "stability",
    "surrogates",
    "tree",
    "utils",
]

_ESTIMATORS = {
    "TreeRank": "treerank.tree",
    "LeafRank": "treerank.tree",
    "ClassifierLeafRank": "treerank.tree",
    "LinearLeafRank": "treerank.tree",
    "MixedLeafRank": "treerank.tree",
    "RankingForest": "treerank.ensemble",
}

# top-level functions, imported on first access like the estimators
_FUNCTIONS = {
    "two_sample_test": "treerank.inference",
    "config_context": "treerank._config",
    "get_config": "treerank._config",
    "set_config": "treerank._config",
    "precompile": "treerank._precompile",
}

__all__ = [*_ESTIMATORS, *_FUNCTIONS, *_SUBMODULES, "__version__"]


def __getattr__(name):
    if name in _ESTIMATORS:
        return getattr(importlib.import_module(_ESTIMATORS[name]), name)
    if name in _FUNCTIONS:
        return getattr(importlib.import_module(_FUNCTIONS[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"treerank.{name}")
    raise AttributeError(f"module 'treerank' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
