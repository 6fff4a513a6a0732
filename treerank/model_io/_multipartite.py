"""Model files of rankers fitted on ``K > 2`` ordered grades.

A multipartite RankingForest is stored as a bipartite one (same keys) plus,
with ``multipartite="thresholds"``, the array ``tree_thresholds`` (the grade
code ``k`` of "grade >= g_k" learned by every tree); its calibration arrays
hold one row per threshold (``calibration_proba`` of shape
``(K - 1, n_levels)``). A multipartite TreeRank
is the Kendall median of its ``K - 1`` threshold trees, a RankingForest: its
description holds that forest's description under ``"consensus"`` and its
arrays under the prefix ``consensus.``. A file of a multipartite model has
more than two ``classes``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.base import GradedCalibration
from treerank.model_io._archive import (
    ArrayView,
    check_array,
    check_declared,
    check_indices,
)

__all__ = [
    "decode_graded_forest",
    "decode_graded_treerank",
    "encode_graded_forest",
    "encode_graded_treerank",
]

_PREFIX = "consensus."


def encode_graded_forest(model, arrays):
    """Add what a multipartite forest needs beyond the bipartite keys."""
    if model.multipartite == "thresholds":
        codes = np.searchsorted(model.classes_, model.tree_thresholds_)
        arrays["tree_thresholds"] = codes.astype(np.int64)
    arrays["calibration_levels"] = np.asarray(model._calibration.levels_)
    arrays["calibration_proba"] = np.asarray(model._calibration.proba_)


def decode_graded_forest(model, description, arrays):
    """Finish decoding a multipartite forest: trees, thresholds, calibration."""
    n_grades = model.classes_.shape[0]
    if model.multipartite == "thresholds":
        codes = check_indices(
            check_array(
                arrays, "tree_thresholds", kinds="iu", shape=(len(model.estimators_),)
            ),
            n_grades,
            "tree_thresholds",
            size_name="the grades",
        )
        if np.any(codes == 0):
            raise ValueError(
                "the array tree_thresholds holds 0: a tree cannot learn "
                "'grade >= the lowest grade'"
            )
        model.tree_thresholds_ = model.classes_[codes]
    if float(description["calibration_threshold"]) != 0.0:
        raise ValueError("a multipartite forest has a zero decision offset")
    for tree in model.estimators_:
        tree.classes_ = np.array([0, 1])
    (n_levels,) = check_declared(arrays, "calibration_levels", kinds="iuf")
    check_declared(
        arrays,
        "calibration_proba",
        kinds="iuf",
        ndim=2,
        shape=(n_grades - 1, n_levels),
    )
    levels = check_array(
        arrays, "calibration_levels", kinds="iuf", finite=True, dtype=np.float64
    )
    proba = check_array(
        arrays,
        "calibration_proba",
        kinds="iuf",
        ndim=2,
        shape=(n_grades - 1, levels.shape[0]),
        bounds=(0, 1),
        dtype=np.float64,
    )
    model._calibration = GradedCalibration.from_arrays(levels, proba)
    return model


def encode_graded_treerank(model, description, arrays, encode_whole):
    """Describe a multipartite TreeRank by its consensus forest.

    ``encode_whole(forest)`` is the ``(description, arrays)`` of a forest.
    """
    if model.pruning is not None:
        raise ValueError(
            f"a TreeRank of more than two grades with pruning={model.pruning!r} "
            "cannot be saved: its threshold trees are pruned each its own way; use "
            "pruning=None (ccp_alpha prunes them alike)"
        )
    forest_description, forest_arrays = encode_whole(model.consensus_)
    forest_description["metadata"] = None
    description["structures"] = None
    description["ccp_alpha_"] = None
    description["consensus"] = forest_description
    arrays.update({_PREFIX + name: value for name, value in forest_arrays.items()})


def decode_graded_treerank(model, description, arrays, decode_forest):
    """The multipartite TreeRank ``model`` (parameters read) and its consensus."""
    forest_arrays = ArrayView(arrays, prefix=_PREFIX)  # read when used
    if len(forest_arrays) != len(arrays):
        raise ValueError("a multipartite TreeRank has only consensus arrays")
    if description["structures"] is not None or description["ccp_alpha_"] is not None:
        raise ValueError("a multipartite TreeRank has no trees of its own")
    consensus = decode_forest(description["consensus"], forest_arrays, {})
    if not np.array_equal(model.classes_, consensus.classes_):
        raise ValueError("the consensus does not have the tree's grades")
    if model.classes_.shape[0] < 3 or consensus.n_features_in_ != model.n_features_in_:
        raise ValueError("inconsistent multipartite TreeRank")
    model.estimators_ = consensus.estimators_
    model.tree_thresholds_ = consensus.tree_thresholds_
    model.consensus_ = consensus
    model._calibration = consensus._calibration
    return model
