"""``save_model`` and ``load_model``: treerank models as files, without pickle."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import json
import numbers

import numpy as np

from treerank.base import MonotoneCalibration
from treerank.ensemble._forest import RankingForest
from treerank.exceptions import ModelFileError
from treerank.model_io._archive import read_archive, write_archive
from treerank.model_io._structures import (
    LINEAR_CLASSIFIERS,
    pack_structures,
    unpack_structures,
)
from treerank.tree._classes import TreeRank
from treerank.tree._leafrank import ClassifierLeafRank, LeafRank
from treerank.tree._linear import LinearLeafRank

# LeafRanks whose parameters are all primitives, saved by class name
_PLAIN_LEAFRANKS = {cls.__name__: cls for cls in (LeafRank, LinearLeafRank)}

__all__ = ["decode_estimator", "encode_estimator", "load_model", "save_model"]


# ----------------------------------------------------------------------
# parameters
# ----------------------------------------------------------------------
def _is_primitive(value):
    return value is None or isinstance(value, (bool, str, numbers.Real))


def _primitive(value):
    if isinstance(value, np.generic):
        return value.item()
    return value


def _encode_params(params, not_saved, prefix=""):
    encoded = {}
    for name, value in params.items():
        if name == "leafrank":
            encoded[name] = _encode_leafrank(value, not_saved)
        elif _is_primitive(value) or isinstance(value, np.generic):
            encoded[name] = _primitive(value)
        else:
            encoded[name] = None
            not_saved.append(prefix + name)
    return encoded


def _encode_leafrank(leafrank, not_saved):
    if leafrank is None:
        return None
    plain = [
        name for name, cls in _PLAIN_LEAFRANKS.items() if isinstance(leafrank, cls)
    ]
    if plain:
        return {
            "class": plain[0],
            "params": _encode_params(
                leafrank.get_params(deep=False), not_saved, "leafrank__"
            ),
        }
    if isinstance(leafrank, ClassifierLeafRank):
        estimator = leafrank.estimator
        name = type(estimator).__name__
        if LINEAR_CLASSIFIERS.get(name) is not type(estimator):
            raise ValueError(
                f"A ClassifierLeafRank around {name} cannot be saved without pickle; "
                f"supported: LeafRank and {sorted(LINEAR_CLASSIFIERS)}. Use "
                "joblib.dump."
            )
        return {
            "class": "ClassifierLeafRank",
            "random_state": _primitive(leafrank.random_state)
            if _is_primitive(leafrank.random_state)
            else None,
            "estimator": {
                "class": name,
                "params": _encode_params(
                    estimator.get_params(deep=False), not_saved, "leafrank__estimator__"
                ),
            },
        }
    raise ValueError(
        f"leafrank {type(leafrank).__name__} cannot be saved without pickle; use "
        "joblib.dump."
    )


def _decode_leafrank(encoded):
    if encoded is None:
        return None
    if not isinstance(encoded, dict):
        raise ValueError("leafrank must be a JSON object")
    if encoded.get("class") in _PLAIN_LEAFRANKS:
        return _PLAIN_LEAFRANKS[encoded["class"]](**encoded["params"])
    if encoded.get("class") == "ClassifierLeafRank":
        spec = encoded["estimator"]
        cls = LINEAR_CLASSIFIERS.get(spec.get("class"))
        if cls is None:
            raise ValueError(f"unsupported classifier {spec.get('class')!r}")
        return ClassifierLeafRank(
            cls(**spec["params"]), random_state=encoded["random_state"]
        )
    raise ValueError(f"unknown leafrank class {encoded.get('class')!r}")


def _decode_params(cls, encoded):
    params = dict(encoded)
    if "leafrank" in params:
        params["leafrank"] = _decode_leafrank(params["leafrank"])
    valid = set(cls().get_params(deep=False))
    unknown = set(params) - valid
    if unknown:
        raise ValueError(f"unknown parameters {sorted(unknown)} for {cls.__name__}")
    return cls(**params)


# ----------------------------------------------------------------------
# fitted state shared by the estimators
# ----------------------------------------------------------------------
def _encode_common(estimator, description):
    classes = np.asarray(estimator.classes_)
    description["classes"] = [_primitive(c) for c in classes]
    description["classes_dtype"] = classes.dtype.str
    description["n_features_in"] = int(estimator.n_features_in_)
    names = getattr(estimator, "feature_names_in_", None)
    description["feature_names_in"] = None if names is None else [str(n) for n in names]


def _decode_common(estimator, description):
    dtype = np.dtype(description["classes_dtype"])
    if dtype.kind not in "biuf":
        raise ValueError("classes must be numbers or booleans")
    classes = np.asarray(description["classes"], dtype=dtype)
    if classes.shape != (2,):
        raise ValueError("a model has exactly two classes")
    estimator.classes_ = classes
    estimator.n_features_in_ = int(description["n_features_in"])
    names = description.get("feature_names_in")
    if names is not None:
        if len(names) != estimator.n_features_in_:
            raise ValueError("feature_names_in does not match n_features_in")
        estimator.feature_names_in_ = np.asarray(names, dtype=object)


def _check_features(structures, n_features):
    for structure in structures:
        if structure.rules is not None:
            continue  # checked when unpacked
        for rule, features in zip(structure.leafranks, structure.features):
            if rule is None:
                continue
            width = n_features if features is None else len(features)
            if features is not None and (
                np.any(features < 0) or np.any(features >= n_features)
            ):
                raise ValueError("a node uses a feature index out of range")
            if rule.n_features_in_ != width:
                raise ValueError("a splitting rule does not match its node's features")


# ----------------------------------------------------------------------
# TreeRank
# ----------------------------------------------------------------------
def _encode_treerank(model, not_saved):
    pruned = model.tree_ is not model.full_tree_
    structures = [model.full_tree_, model.tree_] if pruned else [model.full_tree_]
    meta, arrays = pack_structures(structures)
    description = {
        "estimator": "TreeRank",
        "params": _encode_params(model.get_params(deep=False), not_saved),
        "structures": meta,
        "pruned": pruned,
        "ccp_alpha_": model.ccp_alpha_,
    }
    _encode_common(model, description)
    if hasattr(model, "cv_results_"):
        for key, value in model.cv_results_.items():
            arrays[f"cv_results.{key}"] = np.asarray(value)
    return description, arrays


def _decode_treerank(description, arrays):
    model = _decode_params(TreeRank, description["params"])
    _decode_common(model, description)
    structures = unpack_structures(
        description["structures"], arrays, model.n_features_in_
    )
    if len(structures) != (2 if description["pruned"] else 1):
        raise ValueError("wrong number of tree structures")
    _check_features(structures, model.n_features_in_)
    model.full_tree_ = structures[0]
    ccp = description.get("ccp_alpha_")
    model.ccp_alpha_ = None if ccp is None else float(ccp)
    model._set_tree(structures[-1])
    cv = {
        k[len("cv_results.") :]: v
        for k, v in arrays.items()
        if k.startswith("cv_results.")
    }
    if cv:
        model.cv_results_ = cv
    return model


# ----------------------------------------------------------------------
# RankingForest
# ----------------------------------------------------------------------
def _encode_forest(model, not_saved):
    trees = model.estimators_
    structures, pruned = [], []
    for tree in trees:
        pruned.append(tree.tree_ is not tree.full_tree_)
        structures.append(tree.full_tree_)
        if pruned[-1]:
            structures.append(tree.tree_)
    meta, arrays = pack_structures(structures)
    tree_params = trees[0].get_params(deep=False)
    tree_params.pop("random_state")
    description = {
        "estimator": "RankingForest",
        "params": _encode_params(model.get_params(deep=False), not_saved),
        "tree_params": _encode_params(tree_params, not_saved, "tree__"),
        "structures": meta,
        "tree_pruned": pruned,
        "tree_ccp_alpha": [tree.ccp_alpha_ for tree in trees],
        "oob_score": None if np.isnan(model.oob_score_) else float(model.oob_score_),
        "aggregation_time": float(model.aggregation_time_),
        "consensus_objective": model.consensus_objective_,
        "borda_objective": model.borda_objective_,
        "threshold": model._calibration.threshold_,
    }
    _encode_common(model, description)
    arrays["estimators_samples"] = model.estimators_samples_
    arrays["oob_decision_function"] = model.oob_decision_function_
    arrays["calibration_levels"] = model._calibration.levels_
    arrays["calibration_proba"] = model._calibration.proba_
    if model.aggregation == "median":
        arrays["cells"] = model.cells_
        arrays["consensus"] = model.consensus_
        arrays["cell_weights"] = model.cell_weights_
    elif model.aggregation == "borda":
        arrays["midrank_offsets"] = np.concatenate(
            [[0], np.cumsum([len(m) for m in model._midranks])]
        )
        arrays["midranks"] = np.concatenate(model._midranks)
    return description, arrays


def _decode_forest(description, arrays):
    from treerank.aggregation import ConsensusInserter

    model = _decode_params(RankingForest, description["params"])
    _decode_common(model, description)
    structures = unpack_structures(
        description["structures"], arrays, model.n_features_in_
    )
    _check_features(structures, model.n_features_in_)
    pruned = description["tree_pruned"]
    if len(structures) != len(pruned) + sum(pruned):
        raise ValueError("the tree structures do not match the number of trees")
    trees, cursor = [], 0
    for b, is_pruned in enumerate(pruned):
        tree = _decode_params(TreeRank, description["tree_params"])
        tree.classes_ = model.classes_
        tree.n_features_in_ = model.n_features_in_
        tree.full_tree_ = structures[cursor]
        ccp = description["tree_ccp_alpha"][b]
        tree.ccp_alpha_ = None if ccp is None else float(ccp)
        tree._set_tree(structures[cursor + 1] if is_pruned else structures[cursor])
        cursor += 2 if is_pruned else 1
        trees.append(tree)
    model.estimators_ = trees
    model._build_router()
    model.estimators_samples_ = np.asarray(arrays["estimators_samples"])
    model.oob_decision_function_ = np.asarray(arrays["oob_decision_function"])
    oob = description["oob_score"]
    model.oob_score_ = np.nan if oob is None else float(oob)
    model.aggregation_time_ = float(description["aggregation_time"])
    model._n_leaves = np.array([tree.tree_.n_leaves for tree in trees])
    n_samples = model.oob_decision_function_.shape[0]
    if model.estimators_samples_.shape != (len(trees), n_samples):
        raise ValueError("estimators_samples does not match the number of trees")
    model.consensus_objective_ = description["consensus_objective"]
    model.borda_objective_ = description["borda_objective"]
    model.n_cells_ = None
    if model.aggregation == "median":
        cells = np.ascontiguousarray(arrays["cells"], dtype=np.int32)
        if cells.ndim != 2 or cells.shape[1] != len(trees):
            raise ValueError("cells must have one column per tree")
        if np.any(cells < 0) or np.any(cells >= model._n_leaves[None, :]):
            raise ValueError("a cell refers to a leaf that does not exist")
        model.cells_ = cells
        model.consensus_ = np.asarray(arrays["consensus"], dtype=np.int64)
        model.cell_weights_ = np.asarray(arrays["cell_weights"], dtype=np.float64)
        model.n_cells_ = int(cells.shape[0])
        model._inserter = ConsensusInserter(
            model.consensus_, cells.T, item_weights=model.cell_weights_
        )
    elif model.aggregation == "borda":
        offsets, values = arrays["midrank_offsets"], arrays["midranks"]
        if offsets.shape[0] != len(trees) + 1:
            raise ValueError("midranks do not match the number of trees")
        model._midranks = [
            values[offsets[b] : offsets[b + 1]] for b in range(len(trees))
        ]
        if any(m.shape[0] != k for m, k in zip(model._midranks, model._n_leaves)):
            raise ValueError("midranks do not match the trees' leaves")
    model._calibration = MonotoneCalibration.from_arrays(
        arrays["calibration_levels"],
        arrays["calibration_proba"],
        description["threshold"],
    )
    return model


_ENCODERS = {"TreeRank": _encode_treerank, "RankingForest": _encode_forest}
_DECODERS = {"TreeRank": _decode_treerank, "RankingForest": _decode_forest}


# ----------------------------------------------------------------------
# the interface used by _pipelines.py (a TreeRank or RankingForest step)
# ----------------------------------------------------------------------
def encode_estimator(model):
    """``(description, arrays)`` of a fitted TreeRank or RankingForest."""
    not_saved = []
    description, arrays = _ENCODERS[type(model).__name__](model, not_saved)
    description["params_not_saved"] = not_saved
    return description, arrays


def decode_estimator(description, arrays):
    """The TreeRank or RankingForest of :func:`encode_estimator`'s output."""
    return _DECODERS[description["estimator"]](description, arrays)


def save_model(model, path, *, metadata=None, overwrite=True):
    """Save a fitted ranker or pipeline to a file that loads without pickle.

    The file is a zip archive of JSON metadata and numpy arrays (see
    :mod:`treerank.model_io`), written atomically. A scikit-learn
    :class:`~sklearn.pipeline.Pipeline` or
    :class:`~sklearn.compose.ColumnTransformer` is saved whole when every step
    is a TreeRank, a RankingForest or a supported scikit-learn transformer
    (``StandardScaler``, ``MinMaxScaler``, ``MaxAbsScaler``, ``RobustScaler``,
    ``SimpleImputer``, ``OneHotEncoder``, ``OrdinalEncoder``; column lists,
    ``"passthrough"`` and ``"drop"``); any other step is refused by name.
    Splitting rules are stored as numbers, so only :class:`~treerank.LeafRank`
    and binary linear classifiers inside :class:`~treerank.ClassifierLeafRank`
    are supported; for anything else use ``joblib.dump``. Parameters that are
    not plain JSON values (a ``RandomState`` instance, a cross-validation
    splitter) are saved as None and listed under ``params_not_saved`` in the
    file: predictions do not depend on them.

    Parameters
    ----------
    model : TreeRank, RankingForest, Pipeline or ColumnTransformer
        A fitted model.
    path : str or path-like
        Destination (conventionally ``*.trk``).
    metadata : dict or None, default=None
        Extra JSON-serializable information stored with the model (for
        example the data columns it was trained on); read it back with
        ``load_model(path, with_metadata=True)``.
    overwrite : bool, default=True
        If False, refuse to replace an existing file (``FileExistsError``).

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
    encoder = _ENCODERS.get(name)
    if _pipelines.is_composite(model):  # hook: whole scikit-learn pipelines
        description, arrays = _pipelines.encode_composite(model, encode_estimator)
    else:
        if encoder is None or type(model).__module__.split(".")[0] != "treerank":
            raise ValueError(
                "save_model supports treerank's TreeRank and RankingForest and "
                f"scikit-learn Pipelines and ColumnTransformers of them; got {name}."
            )
        if not hasattr(model, "classes_"):
            raise ValueError(f"This {name} is not fitted yet: fit it before saving.")
        not_saved = []
        description, arrays = encoder(model, not_saved)
        description["params_not_saved"] = not_saved
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise ValueError(f"metadata must be a dict; got {type(metadata).__name__}.")
        try:
            json.dumps(metadata)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"metadata must be JSON-serializable: {exc}") from None
    description["metadata"] = metadata
    write_archive(path, description, arrays, overwrite=overwrite)


def load_model(path, *, with_metadata=False):
    """Load a model saved by :func:`save_model` (no code is executed).

    Parameters
    ----------
    path : str or path-like
    with_metadata : bool, default=False
        Also return the ``metadata`` given to :func:`save_model`.

    Returns
    -------
    model : TreeRank, RankingForest, Pipeline or ColumnTransformer
        A fitted model predicting exactly as the saved one. Its splitting
        rules are frozen (:class:`~treerank.tree.FrozenTreeLeafRank` or
        :class:`~treerank.tree.FrozenLinearLeafRank`); ``fit`` works as usual.
    metadata : dict or None
        Only if ``with_metadata`` is True.

    Raises
    ------
    treerank.exceptions.ModelFileError
        If the file is not a treerank model, is corrupted or was edited, or
        describes an inconsistent model.
    """
    from treerank.model_io import _pipelines

    description, arrays = read_archive(path)
    try:
        if description.get("estimator") == _pipelines.COMPOSITE:  # hook: pipelines
            model = _pipelines.decode_composite(
                description, arrays, decode_estimator, source=str(path)
            )
        else:
            decoder = _DECODERS[description["estimator"]]
            model = decoder(description, arrays)
        metadata = description.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            raise ValueError("metadata must be a JSON object")
    except ModelFileError:
        raise
    except Exception as exc:  # hostile content: every failure is the file's
        raise ModelFileError(
            f"{path} describes an inconsistent model ({type(exc).__name__}: {exc})"
        ) from None
    return (model, metadata) if with_metadata else model
