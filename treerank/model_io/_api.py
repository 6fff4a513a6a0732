"""``save_model`` and ``load_model``: treerank models as files, without pickle.

What a file holds (``model.json`` and arrays, see
:mod:`treerank.model_io._archive` for the container):

- the estimator's hyper-parameters, except the runtime settings ``n_jobs`` and
  ``verbose`` (the loaded model takes ``n_jobs`` from :func:`load_model`);
- the classes, the number and names of the features;
- the fully grown master trees (:mod:`treerank.model_io._structures`); a tree
  pruned at ``ccp_alpha_`` is pruned again at load (pruning is a deterministic
  function of the master tree), a tree pruned by the structural penalty stores
  the nodes it collapsed;
- for a forest, what prediction needs: the cells of the common subpartition,
  their consensus positions and masses (``aggregation="median"``; a cell is
  stored as a point inside it, a code per feature, when its forest has those
  points, see :mod:`treerank.engine._cell_corners`, else as its leaves), the leaf
  mid-ranks (``"borda"``), and the isotonic calibration as a step function
  (only the levels around its steps, which predict identically). The
  per-training-row arrays (``estimators_samples_``, ``oob_decision_function_``)
  are stored only with ``include_training_data=True``.

Loading validates everything against the estimator's own parameter
constraints and the structure of its fitted trees; an inconsistent file is a
:class:`~treerank.exceptions.ModelFileError` naming the problem. Writing
validates the same way, so every file :func:`save_model` writes loads.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import json
import math
import numbers
import re

import numpy as np

from treerank.base import MonotoneCalibration
from treerank.engine import corner_values, threshold_grids
from treerank.ensemble._forest import RankingForest
from treerank.exceptions import ModelFileError
from treerank.model_io import _multipartite
from treerank.model_io._archive import (
    DEFAULT_MAX_BYTES,
    check_array,
    check_declared,
    check_indices,
    open_archive,
    write_archive,
)
from treerank.model_io._structures import (
    LINEAR_CLASSIFIERS,
    RuleCandidate,
    TreeExpectations,
    narrow,
    pack_structures,
    structure_array_names,
    subtree_ends,
    unpack_structures,
)
from treerank.tree._classes import (
    TreeRank,
    check_monotonic_cst,
    engine_growth_params,
    fitted_treerank,
)
from treerank.tree._leafrank import ClassifierLeafRank, LeafRank, resolve_max_features
from treerank.tree._linear import LinearLeafRank
from treerank.tree._mixed import MixedLeafRank

# LeafRanks whose parameters are all plain values, saved by class name
_PLAIN_LEAFRANKS = {cls.__name__: cls for cls in (LeafRank, LinearLeafRank)}
# Most candidates of a MixedLeafRank a file may list.
_MAX_CANDIDATES = 64

__all__ = [
    "MAX_FEATURES",
    "RUNTIME_PARAMS",
    "decode_estimator",
    "encode_estimator",
    "load_model",
    "save_model",
]

#: Parameters that are settings of the machine running the model, not of the
#: model: never written, never read (the loaded model gets ``n_jobs`` from
#: :func:`load_model` and the default of the others).
RUNTIME_PARAMS = ("n_jobs", "verbose")
#: Largest ``n_features_in`` a model file may declare (per-feature arrays are
#: allocated from it).
MAX_FEATURES = 2**24

# Mid-ranks and mean scores are in [0, 1] up to the rounding of their sums.
_ROUNDING = 1e-9
_CLASSES_DTYPE = re.compile(r"\|b1|[<>|][iu][1248]|[<>|]f[48]")
_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class _NotSaved(Exception):
    """A parameter value that is not plain JSON (saved as not saved)."""


# ----------------------------------------------------------------------
# JSON values
# ----------------------------------------------------------------------
def _object(value, what, required, optional=()):
    """A JSON object with exactly the ``required`` keys (and maybe ``optional``)."""
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a JSON object")
    missing = [key for key in required if key not in value]
    if missing:
        raise ValueError(f"{what} lacks {missing}")
    unexpected = sorted(set(value) - set(required) - set(optional))
    if unexpected:
        raise ValueError(f"{what} has unexpected entries {unexpected[:5]}")
    return value


def _number(value, what, *, low=None, high=None):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a number; got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or (low is not None and value < low):
        raise ValueError(f"{what} must be a finite number >= {low}; got {value}")
    if high is not None and value > high:
        raise ValueError(f"{what} must be at most {high}; got {value}")
    return value


def _optional_number(value, what, **bounds):
    return None if value is None else _number(value, what, **bounds)


def _count(value, what, low, high):
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not low <= value <= high
    ):
        raise ValueError(f"{what} must be an integer in [{low}, {high}]; got {value!r}")
    return value


def _boolean(value, what):
    if not isinstance(value, bool):
        raise ValueError(f"{what} must be true or false")
    return value


def _encode_value(value):
    """The JSON form of a parameter value (``_NotSaved`` if it has none)."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, str, int)):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return {"float": "nan" if math.isnan(value) else repr(value)}
    if isinstance(value, (list, tuple)):
        return [_encode_value(item) for item in value]
    raise _NotSaved


def _decode_value(value, what):
    if isinstance(value, dict):
        _object(value, what, ["float"])
        if value["float"] not in _NON_FINITE:
            raise ValueError(f"{what} must be 'inf', '-inf' or 'nan'")
        return _NON_FINITE[value["float"]]
    if isinstance(value, list):
        return [_decode_value(item, what) for item in value]
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and not _INT64_MIN <= value <= _INT64_MAX
    ):
        # (cv=2**63 passed the constraints and failed only on refit)
        raise ValueError(f"{what} = {value} does not fit a 64-bit integer")
    return value


# ----------------------------------------------------------------------
# parameters
# ----------------------------------------------------------------------
def _param_names(cls):
    signature = inspect.signature(cls.__init__)
    return [name for name in signature.parameters if name != "self"]


def _encode_params(estimator, not_saved, prefix=""):
    encoded = {}
    for name, value in estimator.get_params(deep=False).items():
        if name in RUNTIME_PARAMS:
            continue
        if name == "leafrank" and not prefix:
            encoded[name] = _encode_leafrank(value, not_saved)
            continue
        if name == "leafranks" and isinstance(estimator, MixedLeafRank):
            continue  # the candidates: see _encode_leafrank
        try:
            encoded[name] = _encode_value(value)
        except _NotSaved:
            not_saved.append(prefix + name)
    return encoded


def _encode_leafrank(
    leafrank, not_saved, prefix="leafrank__", what="leafrank", candidate=False
):
    """The JSON form of the leafrank parameter, or of a MixedLeafRank's
    ``candidate``.

    ``prefix`` is the parameters' path for ``params_not_saved``; ``what``
    names the LeafRank in the messages. A MixedLeafRank is saved with its
    candidates, which cannot be MixedLeafRanks themselves.
    """
    if leafrank is None:
        return None
    if type(leafrank) in _PLAIN_LEAFRANKS.values():
        return {
            "class": type(leafrank).__name__,
            "params": _encode_params(leafrank, not_saved, prefix),
        }
    if type(leafrank) is ClassifierLeafRank:
        estimator = leafrank.estimator
        name = type(estimator).__name__
        if LINEAR_CLASSIFIERS.get(name) is not type(estimator):
            raise ValueError(
                f"{what}: a ClassifierLeafRank around {name} cannot be saved without "
                f"pickle; supported: LeafRank, LinearLeafRank and "
                f"{sorted(LINEAR_CLASSIFIERS)}. Use joblib.dump."
            )
        params = {}
        if leafrank.random_state is not None:
            try:
                params["random_state"] = _encode_value(leafrank.random_state)
            except _NotSaved:
                not_saved.append(prefix + "random_state")
        else:
            params["random_state"] = None
        return {
            "class": "ClassifierLeafRank",
            "params": params,
            "estimator": {
                "class": name,
                "params": _encode_params(estimator, not_saved, prefix + "estimator__"),
            },
        }
    if type(leafrank) is MixedLeafRank and not candidate:
        params = _encode_params(leafrank, not_saved, prefix)
        candidates = leafrank.leafranks
        params["leafranks"] = None
        if candidates is not None:
            params["leafranks"] = [
                _encode_leafrank(
                    item,
                    not_saved,
                    f"{prefix}leafranks__{i}__",
                    f"{what}.leafranks[{i}]",
                    candidate=True,
                )
                for i, item in enumerate(candidates)
            ]
        return {"class": "MixedLeafRank", "params": params}
    raise ValueError(
        f"{what}: {type(leafrank).__name__} cannot be saved without pickle; "
        "supported: LeafRank, LinearLeafRank, MixedLeafRank (of those) and "
        "ClassifierLeafRank around a binary linear classifier. Use joblib.dump."
    )


def _build(cls, encoded, not_saved, prefix, what, extra=None):
    """An estimator from its saved parameters, validated by its own constraints."""
    names = _param_names(cls)
    if not isinstance(encoded, dict):
        raise ValueError(f"{what} must be a JSON object")
    for name in encoded:
        if name in RUNTIME_PARAMS:
            raise ValueError(
                f"{what} holds {name}, a runtime setting that model files never "
                "store (pass n_jobs to load_model)"
            )
        if name not in names:
            raise ValueError(f"{what} holds an unknown parameter {name!r}")
    defaulted = [n[len(prefix) :] for n in not_saved if n.startswith(prefix)]
    defaulted = [n for n in defaulted if "__" not in n]
    for name in defaulted:
        if name not in names or name in encoded:
            raise ValueError(f"params_not_saved lists {prefix + name!r} wrongly")
    params = {
        name: _decode_value(value, f"{what}.{name}") for name, value in encoded.items()
    }
    params.update(extra or {})
    missing = set(names) - set(params) - set(defaulted) - set(RUNTIME_PARAMS)
    if missing:
        raise ValueError(f"{what} lacks the parameters {sorted(missing)}")
    estimator = cls(**params)
    estimator._validate_params()
    return estimator


def _decode_leafrank(
    encoded, not_saved, prefix="leafrank__", what="params.leafrank", candidate=False
):
    """The leafrank parameter (or a MixedLeafRank's ``candidate``) of a file."""
    if encoded is None and not candidate:
        return None
    if not isinstance(encoded, dict):
        raise ValueError(
            f"{what} must be a JSON object" + ("" if candidate else " or null")
        )
    kind = encoded.get("class")
    if isinstance(kind, str) and kind in _PLAIN_LEAFRANKS:
        _object(encoded, what, ["class", "params"])
        params = encoded["params"]
        later = _LATER_PARAMS.get(kind, {})
        if isinstance(params, dict) and later:
            # a file written before the parameter existed: the behaviour it had
            params = {**later, **params}
        return _build(_PLAIN_LEAFRANKS[kind], params, not_saved, prefix, what)
    if kind == "ClassifierLeafRank":
        _object(encoded, what, ["class", "params", "estimator"])
        spec = _object(encoded["estimator"], f"{what}.estimator", ["class", "params"])
        name = spec["class"]
        cls = LINEAR_CLASSIFIERS.get(name) if isinstance(name, str) else None
        if cls is None:
            raise ValueError(f"{what}: unsupported classifier {str(name)[:40]!r}")
        estimator = _build(
            cls, spec["params"], not_saved, prefix + "estimator__", f"{what}.estimator"
        )
        return _build(
            ClassifierLeafRank,
            encoded["params"],
            not_saved,
            prefix,
            what,
            extra={"estimator": estimator},
        )
    if kind == "MixedLeafRank" and not candidate:
        _object(encoded, what, ["class", "params"])
        params = _object(
            encoded["params"],
            f"{what}.params",
            ["leafranks"],
            _param_names(MixedLeafRank),
        )
        candidates = params["leafranks"]
        if candidates is not None:
            if not (
                isinstance(candidates, list) and 1 <= len(candidates) <= _MAX_CANDIDATES
            ):
                raise ValueError(
                    f"{what}.params.leafranks must be null or a list of 1 to "
                    f"{_MAX_CANDIDATES} LeafRanks"
                )
            candidates = [
                _decode_leafrank(
                    item,
                    not_saved,
                    f"{prefix}leafranks__{i}__",
                    f"{what}.params.leafranks[{i}]",
                    candidate=True,
                )
                for i, item in enumerate(candidates)
            ]
        return _build(
            MixedLeafRank,
            {key: value for key, value in params.items() if key != "leafranks"},
            not_saved,
            prefix,
            what,
            extra={"leafranks": candidates},
        )
    raise ValueError(f"{what}: unknown leafrank class {str(kind)[:40]!r}")


# parameters added after the current file format, with the value that gives
# the behaviour of the files written before them
_LATER_PARAMS = {
    "RankingForest": {"multipartite": "thresholds", "leaf_scores": "rank"},
    # rules were fitted on all the rows of a node
    "LeafRank": {"max_samples": None},
}


def _decode_estimator(cls, description, runtime):
    not_saved = description["params_not_saved"]
    if not (isinstance(not_saved, list) and all(isinstance(n, str) for n in not_saved)):
        raise ValueError("params_not_saved must be a list of names")
    encoded = description["params"]
    if not isinstance(encoded, dict) or "leafrank" not in encoded:
        raise ValueError("params must be a JSON object with a leafrank")
    leafrank = _decode_leafrank(encoded["leafrank"], not_saved)
    encoded = {k: v for k, v in encoded.items() if k != "leafrank"}
    for name, value in _LATER_PARAMS.get(cls.__name__, {}).items():
        # a file written before the parameter existed: the behaviour it had
        encoded.setdefault(name, value)
    runtime = {k: v for k, v in runtime.items() if k in _param_names(cls)}
    return _build(
        cls, encoded, not_saved, "", "params", extra={"leafrank": leafrank, **runtime}
    )


# ----------------------------------------------------------------------
# fitted state shared by the estimators
# ----------------------------------------------------------------------
_COMMON_KEYS = [
    "estimator",
    "params",
    "params_not_saved",
    "classes",
    "classes_dtype",
    "n_features_in",
    "feature_names_in",
    "categories",
    "structures",
    "metadata",
]


def _encode_common(model, description, not_saved):
    classes = np.asarray(model.classes_)
    description["params"] = _encode_params(model, not_saved)
    description["params_not_saved"] = not_saved
    description["classes"] = [c.item() for c in classes]
    description["classes_dtype"] = classes.dtype.str
    description["n_features_in"] = int(model.n_features_in_)
    names = getattr(model, "feature_names_in_", None)
    description["feature_names_in"] = None if names is None else [str(n) for n in names]
    description["categories"] = _encode_categories(model)


def _encode_categories(model):
    """The categories of each categorical feature (JSON lists), or None."""
    encoder = getattr(model, "_category_encoder", None)
    if encoder is None:
        return None
    out = []
    for j, categories in enumerate(encoder.categories_):
        if categories is None:
            out.append(None)
            continue
        values = [v.item() if isinstance(v, np.generic) else v for v in categories]
        if not all(
            isinstance(v, (str, int, float))
            and not isinstance(v, bool)
            and (not isinstance(v, float) or math.isfinite(v))
            for v in values
        ):
            raise ValueError(
                f"the categories of feature {j} are not strings or finite numbers; "
                "they cannot be saved in a model file"
            )
        out.append(values)
    return out


def _decode_categories(model, description):
    """The category encoder of the categorical features (None without)."""
    from treerank.utils import CategoryEncoder
    from treerank.utils._categorical import MAX_CATEGORIES

    categories = description["categories"]
    model._category_encoder = None
    if categories is None:
        return
    if not isinstance(categories, list) or len(categories) != model.n_features_in_:
        raise ValueError("categories must list one entry per feature")
    encoder = CategoryEncoder()
    encoder.is_categorical_ = np.array([c is not None for c in categories])
    if not encoder.is_categorical_.any():
        raise ValueError("categories lists no categorical feature")
    encoder.categories_ = []
    for j, values in enumerate(categories):
        if values is None:
            encoder.categories_.append(None)
            continue
        if (
            not isinstance(values, list)
            or not 1 <= len(values) <= MAX_CATEGORIES
            or not all(
                isinstance(v, (str, int, float)) and not isinstance(v, bool)
                for v in values
            )
            or len({(type(v).__name__, v) for v in values}) != len(values)
        ):
            raise ValueError(f"categories of feature {j} are not distinct labels")
        encoder.categories_.append(np.array(values, dtype=object))
    model._category_encoder = encoder


def _decode_classes(description):
    dtype = description["classes_dtype"]
    if not (isinstance(dtype, str) and _CLASSES_DTYPE.fullmatch(dtype)):
        raise ValueError(f"classes_dtype {str(dtype)[:20]!r} is not a numeric dtype")
    dtype = np.dtype(dtype)
    values = description["classes"]
    if not (isinstance(values, list) and 2 <= len(values) <= 2**16):
        raise ValueError("classes must be a list of two labels (or of K grades)")
    for value in values:
        is_bool = isinstance(value, bool)
        if (
            (dtype.kind == "b") != is_bool
            or (dtype.kind in "iu" and not isinstance(value, int))
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            raise ValueError(f"classes must be two finite {dtype} values; got {values}")
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not all(info.min <= v <= info.max for v in values):
            raise ValueError(f"classes {values} do not fit {dtype}")
    classes = np.asarray(values, dtype=dtype)
    if classes.tolist() != values:
        raise ValueError(f"classes {values} are not exactly {dtype} values")
    if np.any(classes[1:] <= classes[:-1]):
        raise ValueError(
            f"classes must be distinct labels in increasing order (negative "
            f"first); got {values[:10]}"
        )
    return classes


def _decode_common(model, description):
    model.classes_ = _decode_classes(description)
    model.n_features_in_ = _count(
        description["n_features_in"], "n_features_in", 1, MAX_FEATURES
    )
    names = description["feature_names_in"]
    if names is not None:
        if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            raise ValueError("feature_names_in must be a list of strings")
        if len(names) != model.n_features_in_:
            raise ValueError("feature_names_in does not match n_features_in")
        model.feature_names_in_ = np.asarray(names, dtype=object)
    _decode_categories(model, description)


def _expectations(tree_template, n_features, category_encoder=None):
    """What a TreeRank's parameters say of its trees (TreeExpectations).

    ``category_encoder`` is the model's (None without categorical features).
    """
    leafrank = tree_template._leafrank_template()
    if isinstance(leafrank, LeafRank):
        engine_growth_params(  # refuses max_features beyond n_features
            leafrank,
            max_depth=tree_template.max_depth,
            min_samples_split=tree_template.min_samples_split,
            max_features_node=tree_template.max_features_node,
            n_features=n_features,
        )
        categorical = None
        if category_encoder is not None:
            categorical = tuple(bool(c) for c in category_encoder.is_categorical_)
        return TreeExpectations(
            n_features,
            tree_template.max_depth,
            "engine",
            rule_max_depth=leafrank.max_depth,
            categorical=categorical,
        )
    n_node = resolve_max_features(
        tree_template.max_features_node, n_features, "max_features_node"
    )
    if n_node is not None and n_node >= n_features:
        n_node = None
    width = n_features if n_node is None else n_node
    if isinstance(leafrank, MixedLeafRank):
        # the candidates as the MixedLeafRank fits them (its max_features set)
        candidates = leafrank._candidates(np.random.RandomState(0))
        return TreeExpectations(
            n_features,
            tree_template.max_depth,
            "mixed",
            n_node_features=n_node,
            candidates=tuple(_rule_candidate(c, width) for c in candidates),
        )
    rule = _rule_candidate(leafrank, width)
    return TreeExpectations(
        n_features,
        tree_template.max_depth,
        "linear",
        n_node_features=n_node,
        estimator_name=rule.estimator_name,
        rule_max_features=rule.max_features,
    )


def _rule_candidate(leafrank, width):
    """What a LeafRank fitted on nodes of ``width`` features says of its rules."""
    if isinstance(leafrank, LeafRank):
        resolve_max_features(leafrank.max_features, width)  # refused beyond width
        return RuleCandidate("engine", max_depth=leafrank.max_depth)
    if isinstance(leafrank, LinearLeafRank):
        return RuleCandidate(
            "linear",
            estimator_name="LinearLeafRank",
            max_features=resolve_max_features(leafrank.max_features, width),
        )
    return RuleCandidate("linear", estimator_name=type(leafrank.estimator).__name__)


def _pack(model, structures):
    """The master trees of a TreeRank or RankingForest (pack_structures)."""
    mixed = isinstance(model.leafrank, MixedLeafRank)
    return pack_structures(structures, model.n_features_in_, mixed=mixed)


# ----------------------------------------------------------------------
# TreeRank
# ----------------------------------------------------------------------
_CV_RESULTS = ("candidates", "mean_test_auc", "std_test_auc", "n_leaves")


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


def _encode_treerank(model, description, arrays, not_saved):
    if model.classes_.shape[0] > 2:  # multipartite hook (model_io/_multipartite.py)
        _multipartite.encode_graded_treerank(model, description, arrays, _encode)
        return
    meta, tree_arrays = _pack(model, [model.full_tree_])
    arrays.update(tree_arrays)
    description["structures"] = meta
    description["ccp_alpha_"] = (
        None if model.ccp_alpha_ is None else _encode_value(float(model.ccp_alpha_))
    )
    if model.pruning == "penalty":
        arrays["pruned_collapsed"] = _collapsed_nodes(model.full_tree_, model.tree_)
    if hasattr(model, "cv_results_"):
        for key in _CV_RESULTS:
            arrays[f"cv_results.{key}"] = narrow(np.asarray(model.cv_results_[key]))
    calibration = getattr(model, "_quantile_calibration", None)
    if calibration is not None:
        arrays["calibration_knots"], arrays["calibration_knot_proba"] = calibration


def _decode_quantile_calibration(arrays):
    """The out-of-fold calibration of a TreeRank (None if the file has none)."""
    if "calibration_knots" not in arrays:
        return None
    _check_declared_pair(arrays, "calibration_knots", "calibration_knot_proba")
    knots = check_array(
        arrays, "calibration_knots", kinds="iuf", finite=True, dtype=np.float64
    )
    proba = check_array(
        arrays,
        "calibration_knot_proba",
        kinds="iuf",
        shape=knots.shape,
        bounds=(0, 1),
        dtype=np.float64,
    )
    if (
        knots.shape[0] == 0
        or np.any(np.diff(knots) <= 0)
        or np.any(np.diff(proba) < 0)
        or np.any((knots < -_ROUNDING) | (knots > 1 + _ROUNDING))
    ):
        raise ValueError(
            "the calibration knots must increase in [0, 1] with non-decreasing "
            "probabilities"
        )
    return knots, proba


def _decode_treerank(description, arrays, runtime):
    if "consensus" in description:  # multipartite hook (model_io/_multipartite.py)
        _object(description, "model.json", [*_COMMON_KEYS, "ccp_alpha_", "consensus"])
        model = _decode_estimator(TreeRank, description, runtime)
        _decode_common(model, description)
        return _multipartite.decode_graded_treerank(
            model, description, arrays, _decode_forest
        )
    _object(description, "model.json", [*_COMMON_KEYS, "ccp_alpha_"])
    model = _decode_estimator(TreeRank, description, runtime)
    _decode_common(model, description)
    if model.classes_.shape[0] != 2:
        raise ValueError("a TreeRank of more than two grades needs its consensus")
    model._quantile_calibration = _decode_quantile_calibration(arrays)
    expected = set()
    if model._quantile_calibration is not None:
        expected = {"calibration_knots", "calibration_knot_proba"}
    if model.pruning is not None and model.ccp_alpha != 0:
        raise ValueError(f"ccp_alpha must be 0 with pruning={model.pruning!r}")
    expect = _expectations(model, model.n_features_in_, model._category_encoder)
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
        ccp = _decode_value(ccp, "ccp_alpha_")
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
    _check_no_other_arrays(arrays, expected, description["structures"])
    return model


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


def _check_no_other_arrays(arrays, expected, meta):
    expected = set(expected) | structure_array_names(meta, arrays)
    unexpected = sorted(set(arrays) - expected)
    if unexpected:
        raise ValueError(f"the file holds unexpected arrays {unexpected[:5]}")


# ----------------------------------------------------------------------
# RankingForest
# ----------------------------------------------------------------------
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


def _compact_calibration(calibration):
    """The levels around the steps of the isotonic calibration (and the ends).

    ``MonotoneCalibration`` maps a score to the probability of the nearest
    level (midpoints between consecutive levels). Keeping both levels around
    each change of probability, and the first and last levels, keeps every
    midpoint where the probability changes, computed from the same two
    numbers, and the decision threshold: predictions are bit-identical.
    """
    levels, proba = calibration.levels_, calibration.proba_
    keep = np.zeros(levels.shape[0], dtype=bool)
    keep[[0, -1]] = True
    steps = np.flatnonzero(proba[1:] != proba[:-1])
    keep[steps] = True
    keep[steps + 1] = True
    return levels[keep], proba[keep]


def _calibration_threshold(levels, proba):
    """The decision offset of ``MonotoneCalibration`` on these levels."""
    above = np.flatnonzero(proba > 0.5)
    if above.shape[0] == 0:
        return float(levels[-1] + 1.0)
    if above[0] == 0:
        return float(levels[0] - 1.0)
    return float(0.5 * (levels[above[0] - 1] + levels[above[0]]))


def _encode_forest(
    model, description, arrays, not_saved, include_training_data, corners=True
):
    meta, tree_arrays = _pack(model, [tree.full_tree_ for tree in model.estimators_])
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
    description["leaf_scores"] = model.leaf_scores_
    description["rate_smoothing"] = float(model._rate_smoothing)
    description["oob_leaf_scores"] = {
        kind: None if math.isnan(value) else float(value)
        for kind, value in model.oob_leaf_scores_.items()
    }
    if model.classes_.shape[0] > 2:  # multipartite hook (model_io/_multipartite.py)
        _multipartite.encode_graded_forest(model, arrays)
    else:
        levels, proba = _compact_calibration(model._calibration)
        arrays["calibration_levels"] = narrow(levels)
        arrays["calibration_proba"] = narrow(proba)
    if model.aggregation == "median":
        cell_corners = getattr(model, "_cell_corners", None)
        if corners and cell_corners is not None:
            # the cells as points, in the consensus order: the consensus is
            # then the sizes of its buckets
            order = np.argsort(model.consensus_, kind="stable")
            arrays["cell_corners"] = narrow(cell_corners[order])
            arrays["cell_bucket_sizes"] = narrow(np.bincount(model.consensus_))
            arrays["cell_weights"] = narrow(model.cell_weights_[order])
        else:
            arrays["cells"] = narrow(model.cells_)
            arrays["consensus"] = narrow(model.consensus_)
            arrays["cell_weights"] = narrow(model.cell_weights_)
    elif model.aggregation == "borda":
        arrays["midranks"] = narrow(np.concatenate(model._midranks))
    if include_training_data:
        arrays["estimators_samples"] = narrow(model.estimators_samples_)
        arrays["oob_decision_function"] = narrow(model.oob_decision_function_)


def _decode_forest(description, arrays, runtime):
    from treerank.aggregation import CellIndex, ConsensusInserter

    params = description.get("params")
    # a file written since the parameter leaf_scores exists holds the choice
    # and its criterion; an older one holds neither (its trees rank by rank)
    written_with_leaf_scores = isinstance(params, dict) and "leaf_scores" in params
    _object(
        description,
        "model.json",
        [
            *_COMMON_KEYS,
            *_FOREST_KEYS,
            *(_FOREST_LEAF_SCORE_KEYS if written_with_leaf_scores else []),
        ],
    )
    model = _decode_estimator(RankingForest, description, runtime)
    _decode_common(model, description)
    template = model._tree_template()
    expect = _expectations(template, model.n_features_in_, model._category_encoder)
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
    model.estimators_ = trees
    model._build_router()
    model._monotonic = check_monotonic_cst(model, model.n_features_in_) is not None
    n_leaves = np.array([tree.tree_.n_leaves for tree in trees])
    model._n_leaves = n_leaves
    _decode_leaf_scores(model, description)
    oob = _optional_number(description["oob_score"], "oob_score", low=0, high=1)
    model.oob_score_ = np.nan if oob is None else oob
    model.aggregation_time_ = _number(
        description["aggregation_time"], "aggregation_time", low=0
    )
    expected = {"calibration_levels", "calibration_proba"}
    median = model.aggregation == "median"
    for key in ("consensus_objective", "refined_objective", "borda_objective"):
        value = description[key]
        if key == "refined_objective" and model.tie_breaking is None:
            if value is not None:
                raise ValueError("refined_objective must be null without tie_breaking")
            model.refined_objective_ = None
        elif median:
            setattr(model, key + "_", _number(value, key, low=0))
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
        _decode_median(model, arrays, n_leaves)
        model._inserter = ConsensusInserter(
            model.consensus_,
            model._cell_rankings(model.cells_),
            item_weights=model.cell_weights_,
        )
        model._cell_index = CellIndex(model.cells_)
    elif model.aggregation == "borda":
        expected.add("midranks")
        midranks = check_array(
            arrays,
            "midranks",
            kinds="iuf",
            shape=(int(n_leaves.sum()),),
            bounds=(-_ROUNDING, 1 + _ROUNDING),
            dtype=np.float64,
        )
        cuts = np.cumsum(n_leaves)[:-1]
        model._midranks = np.split(midranks, cuts)
        for b, tree_midranks in enumerate(model._midranks):
            # along the tree's order of its leaves (its leaf scores)
            order = np.argsort(model._tree_positions(b), kind="stable")
            if np.any(np.diff(tree_midranks[order]) > _ROUNDING):
                raise ValueError("midranks must not increase from a tree's best leaf")
    if model.classes_.shape[0] > 2:  # multipartite hook (model_io/_multipartite.py)
        if model.multipartite == "thresholds":
            expected.add("tree_thresholds")
        _multipartite.decode_graded_forest(model, description, arrays)
    else:
        _decode_calibration(model, description, arrays)
    if _boolean(description["training_data"], "training_data"):
        expected |= {"estimators_samples", "oob_decision_function"}
        _decode_training_data(model, arrays)
    else:
        model.estimators_samples_ = None
        model.oob_decision_function_ = None
    _check_no_other_arrays(arrays, expected, description["structures"])
    return model


def _decode_leaf_scores(model, description):
    """How the trees score their leaves: the values are recomputed from the trees."""
    kind = description.get("leaf_scores", "rank")
    if kind not in ("rank", "rate"):
        raise ValueError(f"leaf_scores must be 'rank' or 'rate'; got {kind!r}")
    if model.leaf_scores != "auto" and kind != model.leaf_scores:
        raise ValueError(
            f"leaf_scores is {kind!r} but the parameter leaf_scores is "
            f"{model.leaf_scores!r}"
        )
    model._rate_smoothing = _number(
        description.get("rate_smoothing", 0.0), "rate_smoothing", low=0
    )
    oob = description.get("oob_leaf_scores", {kind: None})
    if model.leaf_scores != "auto":
        candidates = (kind,)
    else:  # monotone forests only rank their leaves by rank
        candidates = ("rank",) if model._monotonic else ("rank", "rate")
    if not isinstance(oob, dict) or set(oob) != set(candidates):
        raise ValueError(f"oob_leaf_scores must have the entries {list(candidates)}")
    model.oob_leaf_scores_ = {
        key: np.nan if value is None else _number(value, "oob_leaf_scores", low=0)
        for key, value in oob.items()
    }
    model._set_leaf_values(kind, model._leaf_value_arrays(kind))


def _lexicographically_increasing(rows, chunk=8192):
    """Whether the rows of an integer matrix increase strictly (lexicographic)."""
    for start in range(0, rows.shape[0] - 1, chunk):
        block = rows[start : start + chunk + 1].astype(np.int64)
        diff = block[1:] - block[:-1]
        nonzero = diff != 0
        first = np.argmax(nonzero, axis=1)
        if not np.all(nonzero[np.arange(first.shape[0]), first]):
            return False
        if np.any(diff[np.arange(first.shape[0]), first] < 0):
            return False
    return True


def _median_from_corners(model, arrays):
    """Cells, consensus and masses of a file storing the cells as points.

    ``cell_corners`` holds a point of every cell (corner codes,
    :mod:`treerank.engine._cell_corners`) in the consensus order,
    ``cell_bucket_sizes`` the number of cells in each bucket of the consensus,
    ``cell_weights`` their masses in the same order. The cells are the leaves
    of the points, sorted lexicographically as a fitted forest holds them.
    """
    from treerank.aggregation import common_subpartition

    grids = (
        None
        if model._router is None
        else threshold_grids(model._router, model.n_features_in_)
    )
    if grids is None:
        raise ValueError(
            "cell_corners need trees of numeric threshold rules (store cells)"
        )
    limits = np.array([grid.shape[0] + 1 for grid in grids])
    # the shapes of the three arrays, and the small ones, before the corners
    n_cells, _ = check_declared(
        arrays, "cell_corners", kinds="iu", ndim=2, shape=(None, model.n_features_in_)
    )
    if n_cells == 0:
        raise ValueError("the array cell_corners is empty")
    (n_buckets,) = check_declared(arrays, "cell_bucket_sizes", kinds="iu")
    if n_buckets > n_cells:
        raise ValueError(
            f"the array cell_bucket_sizes has {n_buckets} buckets for {n_cells} cells"
        )
    check_declared(arrays, "cell_weights", kinds="iuf", shape=(n_cells,))
    sizes = check_array(
        arrays, "cell_bucket_sizes", kinds="iu", bounds=(1, n_cells), dtype=np.int64
    )
    if sizes.sum() != n_cells:
        raise ValueError(
            f"the cell_bucket_sizes add up to {int(sizes.sum())} for "
            f"{n_cells} cell corners"
        )
    weights = _cell_weights(arrays, n_cells)
    codes = check_array(
        arrays, "cell_corners", kinds="iu", ndim=2, shape=(None, model.n_features_in_)
    )
    # a code per feature, 0 to the number of its thresholds + 1 (missing)
    check_indices(
        codes,
        limits[None, :] + 1,
        "cell_corners",
        size_name="a code of the grid of its feature's thresholds",
    )
    _precheck_distinct_rows(codes, "cell_corners")
    leaves = model._router.leaf_ranks(corner_values(codes, grids))
    sub = common_subpartition(leaves)
    if sub.cell_ranks.shape[0] != n_cells:
        raise ValueError(
            "the cell corners must be distinct cells: two of them fall in the same cell"
        )
    cell = sub.cell_index  # sorted position of each point's cell
    consensus = np.empty(n_cells, dtype=np.int64)
    consensus[cell] = np.repeat(np.arange(sizes.shape[0]), sizes)
    sorted_weights = np.empty(n_cells, dtype=np.float64)
    sorted_weights[cell] = weights
    corners = np.empty(codes.shape, dtype=np.uint16)
    corners[cell] = codes
    model._cell_corners = corners
    return sub.cell_ranks.astype(np.int32), consensus, sorted_weights


def _precheck_distinct_rows(codes, name, chunk=2**18):
    """No two equal rows within any chunk of rows: a cheap necessary condition
    of distinct cells, checked before the corners are routed (a member of
    zeros, say, is refused without routing millions of copies of one point).
    """
    for start in range(0, codes.shape[0], chunk):
        part = np.ascontiguousarray(codes[start : start + chunk])
        rows = part.view(np.dtype((np.void, part.dtype.itemsize * part.shape[1])))
        if np.unique(rows).shape[0] != part.shape[0]:
            raise ValueError(
                f"the array {name} holds a point twice: two cells would be one"
            )


def _cell_weights(arrays, n_cells):
    weights = check_array(
        arrays,
        "cell_weights",
        kinds="iuf",
        shape=(n_cells,),
        finite=True,
        dtype=np.float64,
    )
    if np.any(weights <= 0):
        raise ValueError("the cell weights must be positive")
    return weights


def _median_from_cells(arrays, n_leaves):
    """Cells, consensus and masses of a file storing the cells as leaf tuples."""
    n_cells, _ = check_declared(
        arrays, "cells", kinds="iu", ndim=2, shape=(None, n_leaves.shape[0])
    )
    if n_cells == 0:
        raise ValueError("the array cells is empty")
    check_declared(arrays, "consensus", kinds="iu", shape=(n_cells,))
    check_declared(arrays, "cell_weights", kinds="iuf", shape=(n_cells,))
    cells = check_array(
        arrays, "cells", kinds="iu", ndim=2, shape=(None, n_leaves.shape[0])
    )
    # each cell's leaf in every tree
    cells = check_indices(
        cells,
        n_leaves[None, :],
        "cells",
        size_name="a cell refers to a leaf that its tree does not have",
    ).astype(np.int32)
    if not _lexicographically_increasing(cells):
        raise ValueError("the cells must be distinct and sorted (lexicographically)")
    consensus = check_indices(
        check_array(arrays, "consensus", kinds="iu", shape=(n_cells,)),
        n_cells,
        "consensus",
        size_name="a position among the cells",
    ).astype(np.int64)
    weights = _cell_weights(arrays, n_cells)
    return cells, consensus, weights


def _decode_median(model, arrays, n_leaves):
    if "cell_corners" in arrays:
        cells, consensus, weights = _median_from_corners(model, arrays)
    else:
        cells, consensus, weights = _median_from_cells(arrays, n_leaves)
    n_cells = cells.shape[0]
    used = np.zeros(n_cells, dtype=bool)
    used[consensus] = True
    n_buckets = int(consensus.max()) + 1
    if not np.all(used[:n_buckets]):
        raise ValueError("the consensus must use the positions 0, 1, ... without gaps")
    if np.any(weights <= 0):
        raise ValueError("the cell weights must be positive")
    model.cells_ = np.ascontiguousarray(cells)
    model.consensus_ = consensus
    model.cell_weights_ = weights
    model.n_cells_ = int(n_cells)


def _check_declared_pair(arrays, first, second, leading=()):
    """Two arrays of one length (``second`` with ``leading`` dimensions before
    it), both checked as declared before either is read."""
    (length,) = check_declared(arrays, first, kinds="iuf")
    check_declared(
        arrays,
        second,
        kinds="iuf",
        ndim=len(leading) + 1,
        shape=(*leading, length),
    )


def _decode_calibration(model, description, arrays):
    _check_declared_pair(arrays, "calibration_levels", "calibration_proba")
    levels = check_array(
        arrays, "calibration_levels", kinds="iuf", finite=True, dtype=np.float64
    )
    proba = check_array(
        arrays,
        "calibration_proba",
        kinds="iuf",
        shape=levels.shape,
        bounds=(0, 1),
        dtype=np.float64,
    )
    threshold = _number(description["calibration_threshold"], "calibration_threshold")
    model._calibration = MonotoneCalibration.from_arrays(levels, proba, threshold)
    if model.aggregation == "median":
        scores = model._raw_scores(model.cells_)
        if not np.all(np.isin(levels, scores)):
            raise ValueError("a calibration level is not the score of a cell")
    elif np.any(levels < -_ROUNDING) or np.any(levels > 1 + _ROUNDING):
        raise ValueError("the calibration levels must be in [0, 1]")
    if threshold != _calibration_threshold(levels, proba):
        raise ValueError("calibration_threshold does not match the calibration")


def _decode_training_data(model, arrays):
    n_trees = len(model.estimators_)
    _, n_rows = check_declared(
        arrays, "estimators_samples", kinds="iu", ndim=2, shape=(n_trees, None)
    )
    check_declared(arrays, "oob_decision_function", kinds="iuf", shape=(n_rows,))
    samples = check_array(
        arrays,
        "estimators_samples",
        kinds="iu",
        ndim=2,
        shape=(n_trees, None),
        bounds=(0, None),
        dtype=np.int32,
    )
    n_samples = samples.shape[1]
    oob = check_array(
        arrays,
        "oob_decision_function",
        kinds="iuf",
        shape=(n_samples,),
        dtype=np.float64,
    )
    n_draw = model._sample_size(n_samples)
    if np.any(samples.sum(axis=1, dtype=np.int64) != n_draw) or (
        not model.bootstrap and samples.max(initial=0) > 1
    ):
        raise ValueError(
            f"estimators_samples must draw {n_draw} rows per tree "
            f"(bootstrap={model.bootstrap})"
        )
    seen_by_all = np.all(samples > 0, axis=0)
    if np.any(np.isnan(oob) != seen_by_all) or np.any(oob[~seen_by_all] < 0):
        raise ValueError(
            "oob_decision_function must be NaN exactly for the rows every tree saw"
        )
    if np.any(oob[~seen_by_all] > 1):
        raise ValueError("oob_decision_function must be in [0, 1]")
    model.estimators_samples_ = samples
    model.oob_decision_function_ = oob


# ----------------------------------------------------------------------
# public functions
# ----------------------------------------------------------------------
_DECODERS = {"TreeRank": _decode_treerank, "RankingForest": _decode_forest}


def _encode(model, include_training_data=False, corners=True):
    """``(description, arrays)`` of a fitted TreeRank or RankingForest.

    A median forest's cells are stored as the corner codes of their points
    when it has them (``corners=True``), else as leaf tuples.
    """
    description, arrays, not_saved = {"estimator": type(model).__name__}, {}, []
    _encode_common(model, description, not_saved)
    if isinstance(model, TreeRank):
        _encode_treerank(model, description, arrays, not_saved)
    else:
        _encode_forest(
            model, description, arrays, not_saved, include_training_data, corners
        )
    return description, arrays


def encode_estimator(model):
    """``(description, arrays)`` of a fitted TreeRank or RankingForest (for the
    steps of a pipeline, :mod:`treerank.model_io._pipelines`)."""
    return _encode(model)


def decode_estimator(description, arrays):
    """The TreeRank or RankingForest of :func:`encode_estimator`'s output."""
    description = {**description, "metadata": None}
    return _decode(description, arrays, {})[0]


def _decode(description, arrays, runtime):
    name = description.get("estimator")
    decoder = _DECODERS.get(name) if isinstance(name, str) else None
    if decoder is None:
        raise ValueError(f"unknown estimator {str(name)[:40]!r}")
    metadata = description.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise ValueError("metadata must be a JSON object")
    return decoder(description, arrays, runtime), metadata


def save_model(
    model, path, *, metadata=None, overwrite=True, include_training_data=False
):
    """Save a fitted TreeRank or RankingForest to a file that loads without pickle.

    The file is a zip archive of JSON metadata and numpy arrays (see
    :mod:`treerank.model_io`), written atomically. It holds what prediction
    needs: the parameters, the master trees and, for a forest, the
    aggregation and its calibration (the cells of the common subpartition
    with ``aggregation="median"``: one per distinct leaf tuple of the
    training rows). Splitting rules are stored as numbers, so only
    :class:`~treerank.LeafRank`, :class:`~treerank.tree.LinearLeafRank`,
    binary linear classifiers inside :class:`~treerank.ClassifierLeafRank`
    and :class:`~treerank.tree.MixedLeafRank` choosing among those are
    supported; for anything else use ``joblib.dump``. Parameters that are
    not plain JSON values (a ``RandomState`` instance, a cross-validation
    splitter) are listed under ``params_not_saved`` in the file and take
    their default values when loaded: predictions do not depend on them. The
    runtime settings ``n_jobs`` and ``verbose`` are not saved.

    Before writing, the model is checked exactly as :func:`load_model`
    checks a file, so every file written loads.

    Parameters
    ----------
    model : TreeRank, RankingForest, Pipeline or ColumnTransformer
        A fitted model. A scikit-learn :class:`~sklearn.pipeline.Pipeline` or
        :class:`~sklearn.compose.ColumnTransformer` is saved whole when every
        step is a TreeRank, a RankingForest or a supported scikit-learn
        transformer (``StandardScaler``, ``MinMaxScaler``, ``MaxAbsScaler``,
        ``RobustScaler``, ``SimpleImputer``, ``OneHotEncoder``,
        ``OrdinalEncoder``; column lists, ``"passthrough"`` and ``"drop"``);
        any other step is refused by name.
    path : str or path-like
        Destination (conventionally ``*.trk``); its directory must exist.
    metadata : dict or None, default=None
        Extra JSON-serializable information stored with the model (for
        example the data columns it was trained on); read it back with
        ``load_model(path, with_metadata=True)``.
    overwrite : bool, default=True
        If False, refuse to replace an existing file (``FileExistsError``).
    include_training_data : bool, default=False
        Also store a forest's per-training-row arrays,
        ``estimators_samples_`` (which rows each tree saw: it reveals who was
        in the training set) and ``oob_decision_function_``, for out-of-bag
        analysis. Without them the file does not grow with the number of
        training rows beyond the cells of a median forest, and the loaded
        forest has ``estimators_samples_ = None`` and
        ``oob_decision_function_ = None`` (``oob_score_`` is kept); it
        predicts identically. Ignored for a TreeRank, which stores no
        per-row array.

    Raises
    ------
    ValueError
        If the model is not a fitted TreeRank or RankingForest, cannot be
        stored without pickle, or its parameters no longer describe its
        fitted state (changed with ``set_params`` after ``fit``).

    Examples
    --------
    >>> import os, tempfile
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.model_io import load_model, save_model
    >>> X, y = make_nested_squares(500, random_state=0)
    >>> tree = TreeRank(random_state=0).fit(X, y)
    >>> path = os.path.join(tempfile.mkdtemp(), "tree.trk")
    >>> save_model(tree, path)
    >>> bool((load_model(path).decision_function(X) == tree.decision_function(X)).all())
    True
    """
    from treerank.model_io import _pipelines

    name = type(model).__name__
    if type(model) not in (TreeRank, RankingForest) and not _pipelines.is_composite(
        model
    ):
        raise ValueError(
            "save_model supports treerank's TreeRank and RankingForest and "
            f"scikit-learn Pipelines and ColumnTransformers of them; got {name}."
        )
    if not _pipelines.is_composite(model) and not hasattr(model, "classes_"):
        raise ValueError(f"This {name} is not fitted yet: fit it before saving.")
    if not isinstance(include_training_data, bool):
        raise ValueError(
            f"include_training_data must be a bool; got {include_training_data!r}."
        )
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise ValueError(f"metadata must be a dict; got {type(metadata).__name__}.")
        try:
            json.dumps(metadata, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"metadata must be JSON-serializable: {exc}") from None
    if _pipelines.is_composite(model):  # hook: whole scikit-learn pipelines
        description, arrays = _pipelines.encode_composite(model, encode_estimator)
        description["metadata"] = metadata
        try:  # the file must load: the checks of load_model, before writing
            _pipelines.decode_composite(
                json.loads(json.dumps(description)), arrays, decode_estimator
            )
        except ValueError as exc:
            raise ValueError(f"This {name} cannot be saved: {exc}") from None
        write_archive(path, description, arrays, overwrite=overwrite)
        return
    description, arrays = _encode(model, include_training_data)
    description["metadata"] = metadata
    try:
        # the file must load: the same checks as load_model, before writing
        decoded = _decode(json.loads(json.dumps(description)), arrays, {})[0]
        if "cell_corners" in arrays and not np.array_equal(
            decoded.cells_, model.cells_
        ):  # never expected: the corners must route to the cells
            description, arrays = _encode(model, include_training_data, corners=False)
            description["metadata"] = metadata
    except ValueError as exc:
        raise ValueError(
            f"This {name} cannot be saved: its fitted state is inconsistent with "
            f"its parameters ({exc}). Refit it, or restore the parameters it was "
            "fitted with."
        ) from None
    write_archive(path, description, arrays, overwrite=overwrite)


def load_model(path, *, with_metadata=False, n_jobs=None, max_bytes=DEFAULT_MAX_BYTES):
    """Load a model saved by :func:`save_model` (no code is executed).

    The file is treated as hostile: its size is bounded, its digests are
    verified, and the model it describes is checked completely (its
    parameters by the estimator's own constraints, its trees, rules, counts,
    classes and aggregation arrays for consistency) before it is returned.

    Parameters
    ----------
    path : str or path-like
    with_metadata : bool, default=False
        Also return the ``metadata`` given to :func:`save_model`.
    n_jobs : int or None, default=None
        ``n_jobs`` of a loaded RankingForest (never read from the file). A
        TreeRank has no such parameter.
    max_bytes : int, default=1 GiB
        Largest total decompressed size of the file's members.

    Returns
    -------
    model : TreeRank or RankingForest
        A fitted model predicting exactly as the saved one. Its splitting
        rules are frozen (the engine's rule arrays, or per node a
        :class:`~treerank.tree.FrozenLinearLeafRank` or, for a
        MixedLeafRank's box rules, a :class:`~treerank.tree.FrozenTreeLeafRank`);
        ``fit`` works as usual.
        A forest saved without ``include_training_data`` has
        ``estimators_samples_ = None`` and ``oob_decision_function_ = None``.
    metadata : dict or None
        Only if ``with_metadata`` is True.

    Raises
    ------
    TypeError
        If ``path`` is not a str or path-like object.
    treerank.exceptions.ModelFileError
        If the file is not a treerank model, is corrupted or was edited, or
        describes an inconsistent model; the message names the problem.
    """
    if n_jobs is not None and (
        isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral)
    ):
        raise ValueError(f"n_jobs must be an int or None; got {n_jobs!r}.")
    from treerank.model_io import _pipelines

    # the arrays are read when the decoders first use them, after their
    # declared dtypes and shapes were checked (open_archive)
    with open_archive(path, max_bytes=max_bytes) as (description, arrays):
        try:
            if description.get("estimator") == _pipelines.COMPOSITE:  # pipelines
                model = _pipelines.decode_composite(
                    description, arrays, decode_estimator, source=str(path)
                )
                metadata = description.get("metadata")
                if metadata is not None and not isinstance(metadata, dict):
                    raise ValueError("metadata must be a JSON object")
            else:
                model, metadata = _decode(description, arrays, {"n_jobs": n_jobs})
        except ModelFileError:
            raise  # an array refused by the archive layer, or an untrusted type
        except Exception as exc:  # hostile content: every failure is the file's
            detail = (
                str(exc)
                if isinstance(exc, ValueError)
                else f"{type(exc).__name__}: {exc}"
            )
            raise ModelFileError(
                f"{path} describes an inconsistent model: {detail[:500].rstrip('.')}."
            ) from None
    return (model, metadata) if with_metadata else model
