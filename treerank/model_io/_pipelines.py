"""Whole scikit-learn Pipelines and ColumnTransformers in treerank model files.

A fitted :class:`~sklearn.pipeline.Pipeline` or
:class:`~sklearn.compose.ColumnTransformer` is stored as a tree of JSON values
and numeric arrays, without pickle. Every object in it must be of a *trusted*
type, named in :data:`TRUSTED_TYPES`:

- the composites ``Pipeline`` and ``ColumnTransformer`` (column lists,
  ``"passthrough"`` and ``"drop"``);
- the transformers ``StandardScaler``, ``MinMaxScaler``, ``MaxAbsScaler``,
  ``RobustScaler``, ``SimpleImputer`` (with its ``MissingIndicator``),
  ``OneHotEncoder`` and ``OrdinalEncoder``;
- the identity ``FunctionTransformer`` that ColumnTransformer fits for
  ``"passthrough"`` columns (``func`` and ``inverse_func`` None; any other
  function is code, and refused);
- treerank's ``TreeRank`` and ``RankingForest``, stored by the per-estimator
  format of :mod:`treerank.model_io` (through two callables, so that this
  module does not depend on that format).

A scikit-learn object is stored as its class name and its state (the
``__getstate__`` dictionary: parameters and fitted attributes), every value
encoded by a small grammar: JSON numbers, strings, booleans and null;
non-finite floats, numpy scalars, dtypes and numeric types by name; numeric
arrays as archive members; arrays of strings; lists, tuples, dicts keyed by
strings or integers, and slices (of indices or column names); and nested
trusted objects. Anything else is refused when
saving, naming its type and where it is.

Loading looks every class name up in :data:`TRUSTED_TYPES` (an unknown name is
refused, by name, before anything is built), builds the object without
calling its constructor and gives it its state with ``__setstate__`` (so
scikit-learn warns when the file was written by another version of it), then
checks it completely (:func:`~treerank.model_io._sklearn_state.check_object`:
exactly its parameters and fitted attributes, none shadowing the class's,
their constraints, types, shapes and relations; a Pipeline's step names and
widths). Runtime settings are not taken from the file: ``n_jobs`` and a
Pipeline's ``memory`` are reset to None; attribute names must be identifiers
without leading double underscores. Arrays of strings are charged against the
file's memory budget by their declared item size before they are allocated,
and stored at the width of their longest value. :func:`encode_composite`'s
output is checked the same way before a file is written.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
import sklearn
from sklearn.compose import ColumnTransformer
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    RobustScaler,
    StandardScaler,
)

from treerank.exceptions import ModelFileError
from treerank.model_io._archive import DEFAULT_MAX_BYTES, MemoryBudget
from treerank.model_io._arrays import ArrayView
from treerank.model_io._sklearn_state import check_object

__all__ = [
    "COMPOSITE",
    "TRUSTED_TYPES",
    "decode_composite",
    "encode_composite",
    "is_composite",
]

COMPOSITE = "sklearn-composite"

TRUSTED_TYPES = {
    cls.__name__: cls
    for cls in (
        Pipeline,
        ColumnTransformer,
        StandardScaler,
        MinMaxScaler,
        MaxAbsScaler,
        RobustScaler,
        SimpleImputer,
        MissingIndicator,
        OneHotEncoder,
        OrdinalEncoder,
        FunctionTransformer,
    )
}
_TREERANK_TYPES = ("TreeRank", "RankingForest")
_NUMPY_TYPES = {
    np.dtype(name).type.__name__: np.dtype(name).type
    for name in (
        "bool",
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float16",
        "float32",
        "float64",
    )
}
# settings of the machine, not of the model: never taken from a file
_RUNTIME_SETTINGS = {"n_jobs": None, "memory": None}
_MAX_DEPTH = 64
_MAX_NDIM = 32


def is_composite(model):
    """Whether ``model`` is a Pipeline or ColumnTransformer (saved by this module)."""
    return type(model) in (Pipeline, ColumnTransformer)


def _is_treerank(obj):
    return (
        type(obj).__name__ in _TREERANK_TYPES
        and type(obj).__module__.split(".")[0] == "treerank"
    )


def _check_identity(obj, where):
    """Only the identity FunctionTransformer is data; any function is code."""
    if isinstance(obj, FunctionTransformer) and (
        obj.func is not None or obj.inverse_func is not None
    ):
        raise ValueError(
            f"{where}: a FunctionTransformer with a function cannot be saved "
            "without pickle (a function is code); only the identity "
            "(func=None), as ColumnTransformer uses for 'passthrough', is "
            "supported."
        )


class _Encoder:
    """Encode a value tree; numeric arrays go to ``self.arrays``."""

    def __init__(self, encode_estimator):
        self.encode_estimator = encode_estimator
        self.arrays = {}
        self.n_arrays = 0
        self.n_treerank = 0

    def estimator(self, obj, where):
        if _is_treerank(obj):
            description, arrays = self.encode_estimator(obj)
            prefix = f"t{self.n_treerank}."
            self.n_treerank += 1
            for name, array in arrays.items():
                self.arrays[prefix + name] = array
            return {"treerank": {"description": description, "prefix": prefix}}
        cls = type(obj)
        if TRUSTED_TYPES.get(cls.__name__) is not cls:
            raise ValueError(
                f"{where}: {cls.__module__}.{cls.__qualname__} cannot be saved "
                "without pickle; supported steps: treerank's TreeRank and "
                f"RankingForest and scikit-learn's {', '.join(sorted(TRUSTED_TYPES))}."
            )
        _check_identity(obj, where)
        state = obj.__getstate__()
        if not isinstance(state, dict):
            raise ValueError(f"{where}: {cls.__name__} has no dictionary state.")
        return {
            "object": {
                "class": cls.__name__,
                "state": [
                    [key, self.value(value, f"{where}.{key}")]
                    for key, value in state.items()
                ],
            }
        }

    def value(self, value, where):
        if value is None or isinstance(value, (bool, str)):
            return value
        if type(value) is int:
            return value
        if type(value) is float:
            return value if math.isfinite(value) else {"float": repr(value)}
        if isinstance(value, np.generic):
            if value.dtype.kind not in "biuf":
                raise ValueError(f"{where}: numpy scalar of dtype {value.dtype}.")
            return {"scalar": [value.dtype.str, self.value(value.item(), where)]}
        if isinstance(value, np.dtype):
            return {"dtype": value.str}
        if isinstance(value, type) and _NUMPY_TYPES.get(value.__name__) is value:
            return {"numpy_type": value.__name__}
        if isinstance(value, np.ndarray):
            return self.ndarray(value, where)
        if type(value) in (list, tuple):
            items = [self.value(v, f"{where}[{i}]") for i, v in enumerate(value)]
            return {type(value).__name__: items}
        if type(value) is dict:
            if not all(
                isinstance(k, str) or (type(k) is int and abs(k) < 2**53) for k in value
            ):
                raise ValueError(f"{where}: a dict with keys other than str and int.")
            return {
                "dict": [[k, self.value(v, f"{where}.{k}")] for k, v in value.items()]
            }
        if type(value) is slice:
            return {
                "slice": [
                    self.value(v, where) for v in (value.start, value.stop, value.step)
                ]
            }
        if hasattr(value, "get_params"):
            return self.estimator(value, where)
        raise ValueError(
            f"{where}: a value of type {type(value).__module__}."
            f"{type(value).__qualname__} cannot be saved without pickle."
        )

    def ndarray(self, array, where):
        if array.dtype.kind in "biuf":
            key = f"p{self.n_arrays}"
            self.n_arrays += 1
            self.arrays[key] = array
            return {"array": key}
        if array.dtype.kind in "OU":
            flat = array.ravel().tolist()
            for item in flat:
                if not (
                    item is None
                    or isinstance(item, (str, bool, int, float))
                    or isinstance(item, np.generic)
                ):
                    raise ValueError(
                        f"{where}: an array holding a {type(item).__name__}."
                    )
            return {
                "strings": {
                    "dtype": array.dtype.str,
                    "shape": list(array.shape),
                    "values": [self.value(_plain(item), where) for item in flat],
                }
            }
        raise ValueError(f"{where}: an array of dtype {array.dtype}.")


def _plain(item):
    return item.item() if isinstance(item, np.generic) else item


def encode_composite(model, encode_estimator):
    """Describe a fitted Pipeline or ColumnTransformer as JSON and arrays.

    Parameters
    ----------
    model : Pipeline or ColumnTransformer
    encode_estimator : callable
        ``encode_estimator(treerank_estimator) -> (description, arrays)``, the
        model-file encoding of a TreeRank or RankingForest step.

    Returns
    -------
    description : dict
    arrays : dict of str to ndarray
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model)
    encoder = _Encoder(encode_estimator)
    root = encoder.estimator(model, type(model).__name__)
    return (
        {
            "estimator": COMPOSITE,
            "sklearn_version": sklearn.__version__,
            "root": root,
        },
        encoder.arrays,
    )


class _Decoder:
    def __init__(self, arrays, decode_estimator, source, budget):
        self.source = source
        self.budget = budget
        self.arrays = arrays
        self.decode_estimator = decode_estimator
        self.used = set()
        # what check_object found of each rebuilt object (by id: the objects
        # stay alive in the model being rebuilt)
        self.checked = {}

    def value(self, value, where, depth=0):
        if depth > _MAX_DEPTH:
            raise ValueError(f"{where}: nested more than {_MAX_DEPTH} levels.")
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            if not math.isfinite(value):
                raise ValueError(f"{where}: a bare non-finite number.")
            return value
        if isinstance(value, list):
            raise ValueError(f"{where}: an untagged list.")
        if not isinstance(value, dict) or len(value) != 1:
            raise ValueError(f"{where}: an unknown value.")
        ((tag, body),) = value.items()
        method = getattr(self, f"_tag_{tag}", None)
        if method is None:
            raise ValueError(f"{where}: unknown value tag {tag!r}.")
        return method(body, where, depth + 1)

    def _items(self, body, where, depth):
        if not isinstance(body, list):
            raise ValueError(f"{where}: a list was expected.")
        return [self.value(v, f"{where}[{i}]", depth) for i, v in enumerate(body)]

    def _tag_list(self, body, where, depth):
        return self._items(body, where, depth)

    def _tag_tuple(self, body, where, depth):
        return tuple(self._items(body, where, depth))

    def _tag_dict(self, body, where, depth):
        if not isinstance(body, list):
            raise ValueError(f"{where}: a dict was expected.")
        out = {}
        for item in body:
            if not (
                isinstance(item, list)
                and len(item) == 2
                and (
                    isinstance(item[0], str)
                    or (type(item[0]) is int and abs(item[0]) < 2**53)
                )
            ):
                raise ValueError(f"{where}: a dict entry must be [key, value].")
            value = self.value(item[1], f"{where}.{item[0]}", depth)
            if item[0] in out:
                raise ValueError(f"{where}: the key {item[0]!r} appears twice.")
            out[item[0]] = value
        return out

    def _tag_float(self, body, where, depth):
        if body not in ("nan", "inf", "-inf"):
            raise ValueError(f"{where}: bad non-finite float {body!r}.")
        return float(body)

    def _tag_scalar(self, body, where, depth):
        if not (isinstance(body, list) and len(body) == 2):
            raise ValueError(f"{where}: a scalar is [dtype, value].")
        dtype = self._numeric_dtype(body[0], where)
        return np.array(self.value(body[1], where, depth), dtype=dtype)[()]

    def _numeric_dtype(self, text, where, kinds="biuf"):
        try:
            dtype = np.dtype(text) if isinstance(text, str) else None
        except TypeError:
            dtype = None
        if dtype is None or dtype.kind not in kinds:
            raise ValueError(f"{where}: unsupported dtype {text!r}.")
        return dtype

    def _tag_dtype(self, body, where, depth):
        return self._numeric_dtype(body, where, kinds="biufOU")

    def _tag_numpy_type(self, body, where, depth):
        cls = _NUMPY_TYPES.get(body) if isinstance(body, str) else None
        if cls is None:
            raise ValueError(f"{where}: untrusted type {body!r}.")
        return cls

    def _tag_slice(self, body, where, depth):
        items = self._items(body, where, depth)
        if len(items) != 3 or not all(
            v is None or (isinstance(v, (int, str)) and not isinstance(v, bool))
            for v in items
        ):
            raise ValueError(
                f"{where}: a slice is [start, stop, step] of integers or names."
            )
        return slice(*items)

    def _tag_array(self, body, where, depth):
        if not isinstance(body, str) or body not in self.arrays or "." in body:
            raise ValueError(f"{where}: missing array {body!r}.")
        self.used.add(body)
        return self.arrays[body]

    def _tag_strings(self, body, where, depth):
        if not isinstance(body, dict) or set(body) != {"dtype", "shape", "values"}:
            raise ValueError(f"{where}: bad array of strings.")
        dtype = self._numeric_dtype(body["dtype"], where, kinds="OU")
        shape = body["shape"]
        values = body["values"]
        if not (
            isinstance(shape, list)
            and len(shape) <= _MAX_NDIM
            and all(type(n) is int and n >= 0 for n in shape)
            and isinstance(values, list)
            and math.prod(shape) == len(values)
        ):
            raise ValueError(f"{where}: the shape does not match the values.")
        # what the file declares is charged before anything is allocated
        self.budget.charge(len(values) * dtype.itemsize, f"{where}: {dtype} x {shape}")
        items = [self.value(v, where, depth) for v in values]
        if dtype.kind == "U":
            if not all(isinstance(v, str) for v in items):
                raise ValueError(f"{where}: an array of str holds other values.")
            longest = max((len(v) for v in items), default=0)
            if longest > dtype.itemsize // 4:
                raise ValueError(f"{where}: a value is longer than its dtype {dtype}.")
            # the values' own width: a wider dtype would only widen, at predict
            # time, the columns compared with these values
            dtype = np.dtype(f"<U{max(longest, 1)}")
        elif not all(
            v is None or isinstance(v, (str, bool, int, float)) for v in items
        ):
            raise ValueError(f"{where}: an array of objects holds an object.")
        out = np.empty(len(items), dtype=dtype)
        out[:] = items
        return out.reshape(shape)

    def _tag_treerank(self, body, where, depth):
        if not isinstance(body, dict) or set(body) != {"description", "prefix"}:
            raise ValueError(f"{where}: bad treerank step.")
        prefix = body["prefix"]
        if not isinstance(prefix, str) or not prefix.endswith("."):
            raise ValueError(f"{where}: bad array prefix.")
        arrays = ArrayView(self.arrays, prefix=prefix)  # read when used
        self.used.update(prefix + k for k in arrays)
        description = body["description"]
        if not isinstance(description, dict):
            raise ValueError(f"{where}: bad treerank step.")
        if description.get("estimator") not in _TREERANK_TYPES:
            raise ModelFileError(
                f"{self.source}: refused: {where} names the untrusted type "
                f"{description.get('estimator')!r}."
            )
        return self.decode_estimator(description, arrays)

    def _tag_object(self, body, where, depth):
        if not isinstance(body, dict) or set(body) != {"class", "state"}:
            raise ValueError(f"{where}: bad object.")
        name = body["class"]
        cls = TRUSTED_TYPES.get(name) if isinstance(name, str) else None
        if cls is None:
            raise ModelFileError(
                f"{self.source}: refused: {where} names the untrusted type "
                f"{name!r}; a model file may only hold "
                f"{', '.join(sorted(TRUSTED_TYPES))} and treerank's TreeRank and "
                "RankingForest."
            )
        state = self._tag_dict(body["state"], f"{where}({name})", depth)
        bad = [
            key
            for key in state
            if not isinstance(key, str)
            or key.startswith("__")
            or not key.isidentifier()
        ]
        if bad:
            raise ValueError(f"{where}: attribute names {bad[:3]} are not allowed.")
        for key, default in _RUNTIME_SETTINGS.items():
            if key in state:
                state[key] = default
        keys = set(state)
        obj = cls.__new__(cls)
        obj.__setstate__(state)
        _check_identity(obj, where)
        check_object(obj, keys, where, self.checked)
        return obj


def decode_composite(description, arrays, decode_estimator, *, source="model file"):
    """Rebuild a Pipeline or ColumnTransformer from :func:`encode_composite` output.

    Parameters
    ----------
    description : dict
    arrays : dict of str to ndarray
    decode_estimator : callable
        ``decode_estimator(description, arrays) -> estimator`` for the
        TreeRank and RankingForest steps.
    source : str, default="model file"
        The file, for messages.

    Returns
    -------
    model : Pipeline or ColumnTransformer

    Raises
    ------
    ModelFileError
        For a type that is not trusted (by name).
    ValueError
        For any other inconsistency (``load_model`` turns it into a
        ModelFileError).
    """
    if set(description) - {
        "estimator",
        "sklearn_version",
        "root",
        "metadata",
        "params_not_saved",
    }:
        raise ValueError("unexpected keys in the description of a pipeline")
    budget = getattr(arrays, "budget", None) or MemoryBudget(DEFAULT_MAX_BYTES)
    decoder = _Decoder(arrays, decode_estimator, source, budget)
    root = description.get("root")
    if not isinstance(root, dict) or set(root) != {"object"}:
        raise ValueError("the root of a pipeline file must be an object")
    model = decoder.value(root, "root")
    if not is_composite(model):
        raise ValueError(
            "the root of a pipeline file must be a Pipeline or ColumnTransformer"
        )
    if not decoder.checked[id(model)][0]:
        raise ValueError("the root of a pipeline file is not fitted")
    unused = set(arrays) - decoder.used
    if unused:
        raise ValueError(f"arrays {sorted(unused)[:5]} are not used by the model")
    return model
