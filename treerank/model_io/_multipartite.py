"""Model files of rankers fitted on ``K > 2`` ordered grades.

A multipartite RankingForest is stored as a bipartite one (same keys) plus the
array ``tree_thresholds`` (the grade code ``k`` of "grade >= g_k" learned by
every tree); its calibration arrays hold one row per threshold
(``calibration_proba`` of shape ``(K - 1, n_levels)``). A multipartite TreeRank
is the Kendall median of its ``K - 1`` threshold trees, a RankingForest: its
description holds that forest's description under ``"consensus"`` and its
arrays under the prefix ``consensus.``. The format version is unchanged: the
layout of bipartite models is untouched, and a file of a multipartite model
has more than two ``classes``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.ensemble._multipartite import GradedCalibration

__all__ = [
    "decode_graded_forest",
    "decode_graded_treerank",
    "encode_graded_forest",
    "encode_graded_treerank",
]

_PREFIX = "consensus."


def encode_graded_forest(model, arrays):
    """Add what a multipartite forest needs beyond the bipartite keys."""
    codes = np.searchsorted(model.classes_, model.tree_thresholds_)
    arrays["tree_thresholds"] = codes.astype(np.int64)


def decode_graded_forest(model, description, arrays):
    """Finish decoding a multipartite forest: trees, thresholds, calibration."""
    n_grades = model.classes_.shape[0]
    codes = np.asarray(arrays["tree_thresholds"])
    if codes.shape != (len(model.estimators_),) or np.any(
        (codes < 1) | (codes >= n_grades)
    ):
        raise ValueError("tree_thresholds must give every tree a grade 1..K-1")
    if float(description["threshold"]) != 0.0:
        raise ValueError("a multipartite forest has a zero decision offset")
    for tree in model.estimators_:
        tree.classes_ = np.array([0, 1])
    model.tree_thresholds_ = model.classes_[codes]
    calibration = GradedCalibration.from_arrays(
        arrays["calibration_levels"], arrays["calibration_proba"]
    )
    if calibration.proba_.shape[0] != n_grades - 1:
        raise ValueError("the calibration needs one row per threshold")
    model._calibration = calibration
    return model


def encode_graded_treerank(
    model, encode_forest, encode_params, encode_common, not_saved
):
    """``(description, arrays)`` of a multipartite TreeRank."""
    forest_description, forest_arrays = encode_forest(model.consensus_, not_saved)
    description = {
        "estimator": "TreeRank",
        "params": encode_params(model.get_params(deep=False), not_saved),
        "consensus": forest_description,
    }
    encode_common(model, description)
    arrays = {_PREFIX + name: value for name, value in forest_arrays.items()}
    return description, arrays


def decode_graded_treerank(description, arrays, decode_forest, decode_tree):
    """The multipartite TreeRank of :func:`encode_graded_treerank`'s output."""
    forest_arrays = {
        name[len(_PREFIX) :]: value
        for name, value in arrays.items()
        if name.startswith(_PREFIX)
    }
    if len(forest_arrays) != len(arrays):
        raise ValueError("a multipartite TreeRank has only consensus arrays")
    consensus = decode_forest(description["consensus"], forest_arrays)
    model = decode_tree(description)
    if not np.array_equal(model.classes_, consensus.classes_):
        raise ValueError("the consensus does not have the tree's grades")
    if model.classes_.shape[0] < 3 or consensus.n_features_in_ != model.n_features_in_:
        raise ValueError("inconsistent multipartite TreeRank")
    model.estimators_ = consensus.estimators_
    model.tree_thresholds_ = consensus.tree_thresholds_
    model.consensus_ = consensus
    model._calibration = consensus._calibration
    return model
