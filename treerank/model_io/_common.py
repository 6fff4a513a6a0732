"""What every fitted estimator of a model file has: classes and features.

The description of a TreeRank or RankingForest holds its parameters
(:mod:`treerank.model_io._params`), its classes (two labels, or the ``K > 2``
grades, lowest first) with their dtype, its number of features and their
names, and the categories of its categorical features (JSON lists, rebuilt
as the estimator's category encoder). :data:`COMMON_KEYS` are the keys every
description has.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import re

import numpy as np

from treerank.model_io._params import encode_params, json_count

__all__ = ["COMMON_KEYS", "MAX_FEATURES", "decode_common", "encode_common"]


#: Largest ``n_features_in`` a model file may declare (per-feature arrays are
#: allocated from it).
MAX_FEATURES = 2**24


_CLASSES_DTYPE = re.compile(r"\|b1|[<>|][iu][1248]|[<>|]f[48]")


COMMON_KEYS = [
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


def encode_common(model, description, not_saved):
    """Write the parameters, classes and features of ``model`` into ``description``.

    ``not_saved`` collects the parameters that have no JSON value.
    """
    classes = np.asarray(model.classes_)
    description["params"] = encode_params(model, not_saved)
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


def decode_common(model, description):
    """Set the classes and features of ``model`` (parameters read) from a file."""
    model.classes_ = _decode_classes(description)
    model.n_features_in_ = json_count(
        description["n_features_in"], "n_features_in", 1, MAX_FEATURES
    )
    names = description["feature_names_in"]
    if names is not None:
        if not (isinstance(names, list) and all(isinstance(n, str) for n in names)):
            raise ValueError("feature_names_in must be a list of strings")
        if len(names) != model.n_features_in_:
            raise ValueError("feature_names_in does not match n_features_in")
        if len(set(names)) != len(names):  # no X could be given to it
            raise ValueError("feature_names_in holds a name twice")
        model.feature_names_in_ = np.asarray(names, dtype=object)
    _decode_categories(model, description)
