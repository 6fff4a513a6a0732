"""Estimator parameters in a model file: JSON values, LeafRanks, validation.

A parameter is saved as its JSON value (non-finite floats as ``{"float":
"nan"}``...); a value that has none (a ``RandomState`` instance, a
cross-validation splitter) is listed under ``params_not_saved`` and takes its
default when loaded. The ``leafrank`` parameter is saved by class:
:class:`~treerank.LeafRank` and :class:`~treerank.tree.LinearLeafRank` by
their parameters, a :class:`~treerank.ClassifierLeafRank` with its binary
linear classifier, a :class:`~treerank.tree.MixedLeafRank` with its
candidates. Loading rebuilds the estimator and validates the parameters by
its own constraints (``_validate_params``); the runtime settings
(:data:`RUNTIME_PARAMS`) are never written nor read, parameters added
after a file was written take the value of the behaviour it had
(``_LATER_PARAMS``), and parameters renamed since are read under their new
names (:data:`RENAMED_PARAMS`). The helpers ``json_*`` check the JSON values of a
description.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import math

import numpy as np

from treerank.model_io._rules_linear import LINEAR_CLASSIFIERS
from treerank.tree._leafrank import ClassifierLeafRank, LeafRank
from treerank.tree._linear import LinearLeafRank
from treerank.tree._mixed import MixedLeafRank

__all__ = [
    "RENAMED_PARAMS",
    "RUNTIME_PARAMS",
    "decode_params",
    "decode_value",
    "encode_params",
    "encode_value",
    "json_boolean",
    "json_count",
    "json_number",
    "json_object",
    "optional_json_number",
]


# LeafRanks whose parameters are all plain values, saved by class name
_PLAIN_LEAFRANKS = {cls.__name__: cls for cls in (LeafRank, LinearLeafRank)}
# Most candidates of a MixedLeafRank a file may list.
_MAX_CANDIDATES = 64


#: Parameters that are settings of the machine running the model, not of the
#: model: never written, never read (the loaded model gets ``n_jobs`` from
#: :func:`load_model` and the default of the others).
RUNTIME_PARAMS = ("n_jobs", "verbose")


_NON_FINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class _NotSaved(Exception):
    """A parameter value that is not plain JSON (saved as not saved)."""


def json_object(value, what, required, optional=()):
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


def json_number(value, what, *, low=None, high=None):
    """A finite JSON number in ``[low, high]``, as a float."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{what} must be a number; got {type(value).__name__}")
    value = float(value)
    if not math.isfinite(value) or (low is not None and value < low):
        raise ValueError(f"{what} must be a finite number >= {low}; got {value}")
    if high is not None and value > high:
        raise ValueError(f"{what} must be at most {high}; got {value}")
    return value


def optional_json_number(value, what, **bounds):
    """:func:`json_number`, or None."""
    return None if value is None else json_number(value, what, **bounds)


def json_count(value, what, low, high):
    """A JSON integer in ``[low, high]`` (not a bool)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or not low <= value <= high
    ):
        raise ValueError(f"{what} must be an integer in [{low}, {high}]; got {value!r}")
    return value


def json_boolean(value, what):
    """A JSON boolean."""
    if not isinstance(value, bool):
        raise ValueError(f"{what} must be true or false")
    return value


def encode_value(value):
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
        return [encode_value(item) for item in value]
    raise _NotSaved


def decode_value(value, what):
    """A parameter value from its JSON form (:func:`encode_value`)."""
    if isinstance(value, dict):
        json_object(value, what, ["float"])
        if value["float"] not in _NON_FINITE:
            raise ValueError(f"{what} must be 'inf', '-inf' or 'nan'")
        return _NON_FINITE[value["float"]]
    if isinstance(value, list):
        return [decode_value(item, what) for item in value]
    if (
        isinstance(value, int)
        and not isinstance(value, bool)
        and not _INT64_MIN <= value <= _INT64_MAX
    ):
        # (cv=2**63 passed the constraints and failed only on refit)
        raise ValueError(f"{what} = {value} does not fit a 64-bit integer")
    return value


def _param_names(cls):
    signature = inspect.signature(cls.__init__)
    return [name for name in signature.parameters if name != "self"]


def encode_params(estimator, not_saved, prefix=""):
    """The JSON form of an estimator's parameters (the leafrank by class).

    The names of the parameters without a JSON value are appended to
    ``not_saved`` (with ``prefix``); the runtime settings are left out.
    """
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
            encoded[name] = encode_value(value)
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
            "params": encode_params(leafrank, not_saved, prefix),
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
                params["random_state"] = encode_value(leafrank.random_state)
            except _NotSaved:
                not_saved.append(prefix + "random_state")
        else:
            params["random_state"] = None
        return {
            "class": "ClassifierLeafRank",
            "params": params,
            "estimator": {
                "class": name,
                "params": encode_params(estimator, not_saved, prefix + "estimator__"),
            },
        }
    if type(leafrank) is MixedLeafRank and not candidate:
        params = encode_params(leafrank, not_saved, prefix)
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
        name: decode_value(value, f"{what}.{name}") for name, value in encoded.items()
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
        json_object(encoded, what, ["class", "params"])
        params = _renamed(kind, encoded["params"], what)
        later = _LATER_PARAMS.get(kind, {})
        if isinstance(params, dict) and later:
            # a file written before the parameter existed: the behaviour it had
            params = {**later, **params}
        return _build(_PLAIN_LEAFRANKS[kind], params, not_saved, prefix, what)
    if kind == "ClassifierLeafRank":
        json_object(encoded, what, ["class", "params", "estimator"])
        spec = json_object(
            encoded["estimator"], f"{what}.estimator", ["class", "params"]
        )
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
        json_object(encoded, what, ["class", "params"])
        params = json_object(
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
    # rules were fitted on all the rows of a node, their thresholds searched
    "LeafRank": {"node_subsample": None, "splitter": "best"},
}


def _tie_breaking_value(value):
    """``break_ties`` of a file's ``tie_breaking``."""
    if value not in ("mean", None):
        raise ValueError(f"params.tie_breaking must be 'mean' or null; got {value!r}")
    return value == "mean"


#: Parameters renamed since files were written: class name -> {old name: (new
#: name, the new value of an old value)}. A file holding an old name loads
#: as the estimator of the new one (the old names are no parameters any more).
RENAMED_PARAMS = {
    # LeafRank's per-node subsample was called max_samples, as the forest's
    # per-tree sample (issue 41)
    "LeafRank": {"max_samples": ("node_subsample", lambda value: value)},
    # the forest's tie_breaking had one value, "mean", or None (issue 41)
    "RankingForest": {"tie_breaking": ("break_ties", _tie_breaking_value)},
}


def _renamed(kind, params, what):
    """``params`` of a file with the old names of ``kind``'s parameters renamed."""
    renames = RENAMED_PARAMS.get(kind, {})
    if not isinstance(params, dict) or not any(old in params for old in renames):
        return params
    params = dict(params)
    for old, (new, convert) in renames.items():
        if old in params:
            if new in params:
                raise ValueError(f"{what} holds both {old!r} and its new name {new!r}")
            params[new] = convert(params.pop(old))
    return params


def decode_params(cls, description, runtime):
    """The estimator ``cls`` of a file's parameters, validated.

    ``runtime`` holds the runtime settings given to ``load_model``.
    """
    not_saved = description["params_not_saved"]
    if not (isinstance(not_saved, list) and all(isinstance(n, str) for n in not_saved)):
        raise ValueError("params_not_saved must be a list of names")
    encoded = description["params"]
    if not isinstance(encoded, dict) or "leafrank" not in encoded:
        raise ValueError("params must be a JSON object with a leafrank")
    leafrank = _decode_leafrank(encoded["leafrank"], not_saved)
    encoded = {k: v for k, v in encoded.items() if k != "leafrank"}
    encoded = _renamed(cls.__name__, encoded, "params")
    for name, value in _LATER_PARAMS.get(cls.__name__, {}).items():
        # a file written before the parameter existed: the behaviour it had
        encoded.setdefault(name, value)
    runtime = {k: v for k, v in runtime.items() if k in _param_names(cls)}
    return _build(
        cls, encoded, not_saved, "", "params", extra={"leafrank": leafrank, **runtime}
    )
