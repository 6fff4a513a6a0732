"""A TreeRank in a model file.

The description holds the tree's parameters and common state
(:mod:`~treerank.model_io._common`), its fully grown master tree
(:mod:`~treerank.model_io._structures`) and the ``ccp_alpha_`` it was pruned
at: a tree pruned at ``ccp_alpha_`` is pruned again at load (pruning is a
deterministic function of the master tree), a tree pruned by the structural
penalty stores the nodes it collapsed, a tree pruned by cross-validation its
``cv_results_``; and the arrays of its out-of-fold calibration
(:mod:`~treerank.model_io._calibration`).

A TreeRank of ``K > 2`` grades is the Kendall median of its ``K - 1``
threshold trees (``consensus_``, a :class:`~treerank.ensemble.TreeAggregate`):
its description holds the description of the RankingForest of these trees
under ``"consensus"`` (the forest's parameters describe the trees, the
aggregate's state is the forest's) and its arrays under the prefix
``consensus.``. A loaded graded TreeRank's ``consensus_`` is that
RankingForest, a TreeAggregate.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from treerank.ensemble._forest import RankingForest
from treerank.model_io._arrays import ArrayView, check_array, narrow
from treerank.model_io._calibration import (
    pack_quantile_calibration,
    unpack_quantile_calibration,
)
from treerank.model_io._common import COMMON_KEYS, decode_common, encode_common
from treerank.model_io._forest import decode_forest, encode_forest
from treerank.model_io._params import (
    decode_params,
    decode_value,
    encode_value,
    json_object,
)
from treerank.model_io._structures import (
    check_no_other_arrays,
    pack_model_trees,
    tree_expectations,
    unpack_structures,
)
from treerank.model_io._tree_arrays import subtree_ends
from treerank.tree._classes import TreeRank

__all__ = ["decode_treerank", "encode_treerank"]


_CV_RESULTS = ("candidates", "mean_test_auc", "std_test_auc", "n_leaves")


# the arrays of a graded TreeRank's consensus forest
_PREFIX = "consensus."


def encode_treerank(model):
    """``(description, arrays)`` of a fitted TreeRank."""
    description, arrays, not_saved = {"estimator": type(model).__name__}, {}, []
    encode_common(model, description, not_saved)
    if model.classes_.shape[0] > 2:  # K > 2 grades: the consensus forest
        _encode_graded(model, description, arrays)
        return description, arrays
    meta, tree_arrays = pack_model_trees(model, [model.full_tree_])
    arrays.update(tree_arrays)
    description["structures"] = meta
    description["ccp_alpha_"] = (
        None if model.ccp_alpha_ is None else encode_value(float(model.ccp_alpha_))
    )
    if model.pruning == "penalty":
        arrays["pruned_collapsed"] = _collapsed_nodes(model.full_tree_, model.tree_)
    if hasattr(model, "cv_results_"):
        for key in _CV_RESULTS:
            arrays[f"cv_results.{key}"] = narrow(np.asarray(model.cv_results_[key]))
    pack_quantile_calibration(getattr(model, "_quantile_calibration", None), arrays)
    return description, arrays


def decode_treerank(description, arrays, runtime):
    """The TreeRank of :func:`encode_treerank`'s output, checked."""
    if "consensus" in description:  # K > 2 grades: the consensus forest
        json_object(
            description, "model.json", [*COMMON_KEYS, "ccp_alpha_", "consensus"]
        )
        model = decode_params(TreeRank, description, runtime)
        decode_common(model, description)
        return _decode_graded(model, description, arrays)
    json_object(description, "model.json", [*COMMON_KEYS, "ccp_alpha_"])
    model = decode_params(TreeRank, description, runtime)
    decode_common(model, description)
    if model.classes_.shape[0] != 2:
        raise ValueError("a TreeRank of more than two grades needs its consensus")
    model._quantile_calibration = unpack_quantile_calibration(arrays)
    expected = set()
    if model._quantile_calibration is not None:
        expected = {"calibration_knots", "calibration_knot_proba"}
    if model.pruning is not None and model.ccp_alpha != 0:
        raise ValueError(f"ccp_alpha must be 0 with pruning={model.pruning!r}")
    expect = tree_expectations(model, model.n_features_in_, model._category_encoder)
    expect = expect._replace(n_trees=1)
    structures = unpack_structures(description["structures"], arrays, expect)
    if len(structures) != 1:
        raise ValueError(f"a TreeRank has one tree; the file holds {len(structures)}")
    full = structures[0]
    model.full_tree_ = full
    ccp = description["ccp_alpha_"]
    if model.pruning == "penalty":
        if ccp is not None:
            raise ValueError("ccp_alpha_ must be null with pruning='penalty'")
        model.ccp_alpha_ = None
        collapsed = check_array(
            arrays, "pruned_collapsed", kinds="b", shape=(full.node_count,)
        )
        _check_collapsed(collapsed, full)
        model._set_tree(full.subtree(collapsed))
        expected.add("pruned_collapsed")
    else:
        ccp = decode_value(ccp, "ccp_alpha_")
        if isinstance(ccp, bool) or not isinstance(ccp, (int, float)):
            raise ValueError("ccp_alpha_ must be a number")
        if math.isnan(ccp) or ccp < 0:
            raise ValueError(f"ccp_alpha_ must be >= 0; got {ccp}")
        if model.pruning is None and ccp != model.ccp_alpha:
            raise ValueError(
                f"ccp_alpha_={ccp} differs from the parameter ccp_alpha="
                f"{model.ccp_alpha} (pruning=None)"
            )
        model.ccp_alpha_ = float(ccp)
        model._set_tree(model._prune_structure(model.ccp_alpha_))
    if model.pruning == "cv":
        model.cv_results_ = _decode_cv_results(arrays, model.ccp_alpha_)
        expected |= {"cv_results." + key for key in _CV_RESULTS}
    check_no_other_arrays(arrays, expected, description["structures"])
    return model


def _collapsed_nodes(full, pruned):
    """Internal nodes of ``full`` that are leaves of its subtree ``pruned``."""
    collapsed = np.zeros(full.node_count, dtype=bool)
    stack = [(0, 0)]
    while stack:
        f, p = stack.pop()
        if pruned.children_left[p] < 0:
            collapsed[f] = full.children_left[f] >= 0
            continue
        stack.append((full.children_right[f], pruned.children_right[p]))
        stack.append((full.children_left[f], pruned.children_left[p]))
    return collapsed


def _check_collapsed(collapsed, full):
    if np.any(collapsed & full.is_leaf):
        raise ValueError("pruned_collapsed marks a leaf")
    ends = subtree_ends(full.children_left, full.children_right)
    below = np.concatenate([[0], np.cumsum(collapsed)])
    inside = below[ends] - below[np.arange(full.node_count) + 1]
    if np.any(inside[collapsed] != 0):
        raise ValueError("pruned_collapsed marks a node below a collapsed node")


def _decode_cv_results(arrays, ccp_alpha):
    candidates = check_array(
        arrays, "cv_results.candidates", kinds="iuf", bounds=(0, None), dtype=np.float64
    )
    shape = candidates.shape
    if not shape[0] or np.any(np.diff(candidates) <= 0):
        raise ValueError("cv_results.candidates must increase")
    if ccp_alpha not in candidates:
        raise ValueError("ccp_alpha_ is not one of cv_results.candidates")
    results = {"candidates": candidates}
    for key in ("mean_test_auc", "std_test_auc"):
        values = check_array(
            arrays, f"cv_results.{key}", kinds="iuf", shape=shape, dtype=np.float64
        )
        if np.any(values[~np.isnan(values)] < 0) or np.any(values > 1):
            raise ValueError(f"cv_results.{key} must be in [0, 1] or NaN")
        results[key] = values
    results["n_leaves"] = check_array(
        arrays, "cv_results.n_leaves", kinds="iu", shape=shape, bounds=(1, None)
    ).astype(np.int64)
    return results


def _encode_graded(model, description, arrays):
    """Describe a multipartite TreeRank by its consensus forest."""
    if model.pruning is not None:
        raise ValueError(
            f"a TreeRank of more than two grades with pruning={model.pruning!r} "
            "cannot be saved: its threshold trees are pruned each its own way; use "
            "pruning=None (ccp_alpha prunes them alike)"
        )
    forest_description, forest_arrays = encode_forest(_consensus_forest(model))
    forest_description["metadata"] = None
    description["structures"] = None
    description["ccp_alpha_"] = None
    description["consensus"] = forest_description
    arrays.update({_PREFIX + name: value for name, value in forest_arrays.items()})


def _consensus_forest(model):
    """The RankingForest of a graded TreeRank's threshold trees, as files hold it.

    The forest's parameters describe the trees (clones of ``model``, each
    grown on all the rows: no bootstrap, one threshold per tree) and the
    seed of the median (``random_state``); its fitted state is the
    consensus's. A consensus loaded from a file is already this forest.
    """
    consensus = model.consensus_
    if isinstance(consensus, RankingForest):
        return consensus
    leafrank = model._leafrank_template()
    forest = RankingForest(
        n_estimators=len(consensus.estimators_),
        bootstrap=False,
        max_features=getattr(leafrank, "max_features", None),
        max_features_node=model.max_features_node,
        max_depth=model.max_depth,
        min_samples_split=model.min_samples_split,
        leafrank=leafrank,
        ccp_alpha=model.ccp_alpha,
        multipartite="thresholds",
        monotonic_cst=model.monotonic_cst,
        categorical_features=model.categorical_features,
    )
    # the aggregation's parameters (leaf_scores, aggregation, random_state,
    # ...) and fitted attributes are the consensus's own
    forest.__dict__.update(vars(consensus))
    return forest


def _decode_graded(model, description, arrays):
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
