"""A RankingForest in a model file.

The description holds the forest's parameters and common state
(:mod:`~treerank.model_io._common`), its master trees
(:mod:`~treerank.model_io._structures`), its out-of-bag score, aggregation
time and objectives, and how its trees score their leaves; the arrays its
aggregation (:mod:`~treerank.model_io._forest_aggregation`) and calibration
(:mod:`~treerank.model_io._calibration`). A forest of ``K > 2`` grades holds
its grades as ``classes``, one calibration row per threshold and, with
``multipartite="thresholds"``, the array ``tree_thresholds`` (the grade code
``k`` of "grade >= g_k" learned by every tree).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from treerank.ensemble._forest import RankingForest
from treerank.model_io._arrays import check_array, check_indices
from treerank.model_io._calibration import (
    pack_graded_calibration,
    pack_monotone_calibration,
    unpack_graded_calibration,
    unpack_monotone_calibration,
)
from treerank.model_io._common import COMMON_KEYS, decode_common, encode_common
from treerank.model_io._forest_aggregation import (
    decode_leaf_scores,
    encode_leaf_scores,
    pack_aggregation,
    pack_training_data,
    unpack_median,
    unpack_midranks,
    unpack_training_data,
)
from treerank.model_io._params import (
    decode_params,
    json_boolean,
    json_number,
    json_object,
    optional_json_number,
)
from treerank.model_io._structures import (
    check_no_other_arrays,
    pack_model_trees,
    tree_expectations,
    unpack_structures,
)
from treerank.tree._classes import check_monotonic_cst, fitted_treerank

__all__ = ["decode_forest", "encode_forest"]


_FOREST_KEYS = [
    "oob_score",
    "aggregation_time",
    "consensus_objective",
    "refined_objective",
    "borda_objective",
    "calibration_threshold",
    "training_data",
]
# written since the forest chooses how its trees score their leaves; a file
# without them ranks leaves by rank (the only way there was)
_FOREST_LEAF_SCORE_KEYS = ["leaf_scores", "rate_smoothing", "oob_leaf_scores"]
"""Required in the files whose parameters include leaf_scores, absent before."""


def encode_forest(model, include_training_data=False, corners=True):
    """``(description, arrays)`` of a fitted RankingForest.

    A median forest's cells are stored as the corner codes of their points
    when it has them (``corners=True``), else as leaf tuples.
    """
    description, arrays, not_saved = {"estimator": type(model).__name__}, {}, []
    encode_common(model, description, not_saved)
    meta, tree_arrays = pack_model_trees(
        model, [tree.full_tree_ for tree in model.estimators_]
    )
    arrays.update(tree_arrays)
    description["structures"] = meta
    oob = float(model.oob_score_)
    description["oob_score"] = None if math.isnan(oob) else oob
    description["aggregation_time"] = float(model.aggregation_time_)
    description["consensus_objective"] = model.consensus_objective_
    description["refined_objective"] = model.refined_objective_
    description["borda_objective"] = model.borda_objective_
    description["calibration_threshold"] = float(model._calibration.threshold_)
    description["training_data"] = bool(include_training_data)
    encode_leaf_scores(model, description)
    if model.classes_.shape[0] > 2:  # K > 2 grades
        _pack_tree_thresholds(model, arrays)
        pack_graded_calibration(model._calibration, arrays)
    else:
        pack_monotone_calibration(model._calibration, arrays)
    pack_aggregation(model, arrays, corners)
    if include_training_data:
        pack_training_data(model, arrays)
    return description, arrays


def decode_forest(description, arrays, runtime):
    """The RankingForest of :func:`encode_forest`'s output, checked."""
    params = description.get("params")
    # a file written since the parameter leaf_scores exists holds the choice
    # and its criterion; an older one holds neither (its trees rank by rank)
    written_with_leaf_scores = isinstance(params, dict) and "leaf_scores" in params
    json_object(
        description,
        "model.json",
        [
            *COMMON_KEYS,
            *_FOREST_KEYS,
            *(_FOREST_LEAF_SCORE_KEYS if written_with_leaf_scores else []),
        ],
        # the smoothing chosen out of bag (written since it is chosen)
        optional=["rate_smoothing_rows"] if written_with_leaf_scores else [],
    )
    model = decode_params(RankingForest, description, runtime)
    decode_common(model, description)
    template = model._tree_template()
    expect = tree_expectations(template, model.n_features_in_, model._category_encoder)
    expect = expect._replace(n_trees=model.n_estimators)
    structures = unpack_structures(description["structures"], arrays, expect)
    if len(structures) != model.n_estimators:
        raise ValueError(
            f"n_estimators={model.n_estimators} but the file holds "
            f"{len(structures)} trees"
        )
    trees = []
    for structure in structures:
        tree = fitted_treerank(
            template, structure, model.classes_, model.n_features_in_
        )
        if hasattr(model, "feature_names_in_"):
            tree.feature_names_in_ = model.feature_names_in_
        tree._category_encoder = model._category_encoder
        tree._set_tree(tree.tree_)  # category labels
        trees.append(tree)
    model._install_trees(
        trees, monotonic=check_monotonic_cst(model, model.n_features_in_) is not None
    )
    decode_leaf_scores(model, description)
    oob = optional_json_number(description["oob_score"], "oob_score", low=0, high=1)
    model.oob_score_ = np.nan if oob is None else oob
    model.aggregation_time_ = json_number(
        description["aggregation_time"], "aggregation_time", low=0
    )
    expected = {"calibration_levels", "calibration_proba"}
    median = model.aggregation == "median"
    for key in ("consensus_objective", "refined_objective", "borda_objective"):
        value = description[key]
        if key == "refined_objective" and not model.break_ties:
            if value is not None:
                raise ValueError("refined_objective must be null without break_ties")
            model.refined_objective_ = None
        elif median:
            setattr(model, key + "_", json_number(value, key, low=0))
        elif value is not None:
            raise ValueError(
                f"{key} must be null with aggregation={model.aggregation!r}"
            )
        else:
            setattr(model, key + "_", None)
    model.n_cells_ = None
    model._cell_corners = None
    if median:
        if "cell_corners" in arrays:
            expected |= {"cell_corners", "cell_bucket_sizes", "cell_weights"}
        else:
            expected |= {"cells", "consensus", "cell_weights"}
        unpack_median(model, arrays, model._n_leaves)
    elif model.aggregation == "borda":
        expected.add("midranks")
        unpack_midranks(model, arrays, model._n_leaves)
    if model.classes_.shape[0] > 2:  # K > 2 grades
        if model.multipartite == "thresholds":
            expected.add("tree_thresholds")
        _unpack_graded_trees(model, arrays)
        unpack_graded_calibration(model, description, arrays)
    else:
        unpack_monotone_calibration(model, description, arrays)
    if json_boolean(description["training_data"], "training_data"):
        expected |= {"estimators_samples", "oob_decision_function"}
        unpack_training_data(model, arrays)
    else:
        model.estimators_samples_ = None
        model.oob_decision_function_ = None
    check_no_other_arrays(arrays, expected, description["structures"])
    return model


def _pack_tree_thresholds(model, arrays):
    """The grade code of every tree's threshold (``multipartite="thresholds"``)."""
    if model.multipartite == "thresholds":
        codes = np.searchsorted(model.classes_, model.tree_thresholds_)
        arrays["tree_thresholds"] = codes.astype(np.int64)


def _unpack_graded_trees(model, arrays):
    """The thresholds of a graded forest's trees; the trees' own classes."""
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
    for tree in model.estimators_:
        tree.classes_ = np.array([0, 1])
