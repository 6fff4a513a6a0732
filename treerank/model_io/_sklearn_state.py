"""The state of the scikit-learn objects a model file may hold, checked at load.

A Pipeline or ColumnTransformer is stored as each object's class name and
state (:mod:`treerank.model_io._pipelines`). A state is data that becomes the
object's attributes: an edited file could otherwise add an attribute named
``transform`` that shadows the method, drop a parameter (``'StandardScaler'
object has no attribute 'with_mean'`` at predict time), give a scale of the
wrong length, or name two steps alike. So every object of a trusted type is
checked when it is rebuilt, before anything uses it:

- **attributes**: exactly its parameters (the arguments of its
  constructor), and either no fitted attribute (a template, such as the
  transformers a ColumnTransformer clones) or exactly the fitted attributes
  of :data:`FITTED`, a few optional ones aside (``feature_names_in_``,
  ``_sklearn_version``, ``_sklearn_output_config``); none may be an
  attribute of the class (a method, a property, a class constant);
- **parameters**: the estimator's own constraints
  (``_validate_params``), the checks its ``fit`` makes (a ``feature_range``
  whose minimum is below its maximum...), and no code: a parameter that may
  be a function (``strategy``, ``func``, ``feature_name_combiner``...) must
  be one of the strings it accepts;
- **fitted attributes**: their types, dtypes and shapes, and the relations
  between them (``scale_`` has ``n_features_in_`` finite positive entries; a
  numeric ``categories_`` entry is sorted and distinct; the private
  attributes that scikit-learn derives from the public ones are what it
  would derive);
- **composites**: a Pipeline's step names are distinct strings, without
  ``__``, that are not parameter names, and each step reads as many columns
  as the previous one writes; a ColumnTransformer's columns are in range,
  its fitted transformers are its transformers fitted, in order, and its
  output slices are where their outputs land.

Each check raises ``ValueError`` naming the object's place in the file and
the problem (``load_model`` reports it as a
:class:`~treerank.exceptions.ModelFileError`). :func:`check_object` is the
entry point; :func:`shape_of` gives the number of columns a checked object
reads and writes.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import inspect
import math
import numbers

import numpy as np
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

__all__ = [
    "COMMON_OPTIONAL",
    "FITTED",
    "OPTIONAL_FITTED",
    "check_object",
    "shape_of",
]

#: Attributes any object may have: feature names (when fitted on a
#: DataFrame), the version of scikit-learn that wrote it, and its output
#: container (``set_output``).
COMMON_OPTIONAL = frozenset(
    {"feature_names_in_", "_sklearn_version", "_sklearn_output_config"}
)

#: The fitted attributes of each trusted type, all present once fitted.
FITTED = {
    StandardScaler: {"n_features_in_", "n_samples_seen_", "mean_", "var_", "scale_"},
    MinMaxScaler: {
        "n_features_in_",
        "n_samples_seen_",
        "scale_",
        "min_",
        "data_min_",
        "data_max_",
        "data_range_",
    },
    MaxAbsScaler: {"n_features_in_", "n_samples_seen_", "max_abs_", "scale_"},
    RobustScaler: {"n_features_in_", "center_", "scale_"},
    SimpleImputer: {"n_features_in_", "statistics_", "indicator_", "_fit_dtype"},
    MissingIndicator: {"n_features_in_", "_n_features", "features_", "_precomputed"},
    OneHotEncoder: {
        "n_features_in_",
        "categories_",
        "_infrequent_enabled",
        "drop_idx_",
        "_drop_idx_after_grouping",
        "_n_features_outs",
    },
    OrdinalEncoder: {
        "n_features_in_",
        "categories_",
        "_infrequent_enabled",
        "_missing_indices",
    },
    FunctionTransformer: {"n_features_in_"},
    ColumnTransformer: {
        "n_features_in_",
        "_columns",
        "_transformer_to_input_indices",
        "_remainder",
        "sparse_output_",
        "transformers_",
        "output_indices_",
    },
    Pipeline: set(),
}
#: Fitted attributes that only some versions of scikit-learn or some fits
#: have (the infrequent categories only when grouping them is enabled).
OPTIONAL_FITTED = {
    SimpleImputer: {"_fill_dtype"},
    OneHotEncoder: {"_infrequent_indices", "_default_to_infrequent_mappings"},
    OrdinalEncoder: {"_infrequent_indices", "_default_to_infrequent_mappings"},
}
# version-dependent attributes that the installed scikit-learn's transform
# uses when its fit sets them (found by fitting a tiny imputer, once)
_VERSIONED = {SimpleImputer: ("_fill_dtype",)}
_REQUIRED_HERE = {}


def _required_here(cls):
    """The version-dependent fitted attributes this scikit-learn sets."""
    if cls not in _REQUIRED_HERE:
        names = _VERSIONED.get(cls, ())
        if names:
            fitted = cls().fit(np.array([[0.0], [1.0]]))
            names = tuple(name for name in names if name in fitted.__dict__)
        _REQUIRED_HERE[cls] = set(names)
    return _REQUIRED_HERE[cls]


# parameters that may be functions in scikit-learn: only these strings here
_STRING_ONLY = {
    SimpleImputer: {"strategy": {"mean", "median", "most_frequent", "constant"}},
    OneHotEncoder: {"feature_name_combiner": {"concat"}},
    FunctionTransformer: {"feature_names_out": {"one-to-one", None}},
}
_MAX_FEATURES = 2**24
_MAX_VERSION = 64


# ----------------------------------------------------------------------
# values
# ----------------------------------------------------------------------
class _Where:
    """An object's place in the file (for the messages), and what the checks
    of its nested objects found (``checked``: see :func:`check_object`)."""

    def __init__(self, where, cls, checked):
        self.text = f"{where} ({cls.__name__})"
        self.checked = checked

    def fail(self, message):
        raise ValueError(f"{self.text}: {message}")

    def fitted(self, obj):
        """Whether a nested object is fitted (a ranker always is)."""
        return _is_treerank(obj) or self.checked.get(id(obj), (False,))[0]

    def shape(self, obj):
        return shape_of(obj, self.checked)


def _is_flag(value):
    return isinstance(value, (bool, np.bool_))


def _is_integer(value):
    return isinstance(value, (numbers.Integral, np.integer)) and not _is_flag(value)


def _is_real(value):
    return isinstance(value, (numbers.Real, np.number)) and not _is_flag(value)


def _is_missing(value):
    return value is None or (_is_real(value) and math.isnan(value))


def _flag(where, obj, name):
    value = getattr(obj, name)
    if not _is_flag(value):
        where.fail(f"{name} must be true or false; got {type(value).__name__}")
    return bool(value)


def _count(where, value, name, low=0, high=2**62):
    if not _is_integer(value) or not low <= value <= high:
        where.fail(f"{name} must be an integer in [{low}, {high}]; got {value!r:.40}")
    return int(value)


def _vector(where, value, name, n, kinds, *, allow_nan=False, low=None, strict=False):
    """A 1-D array of ``n`` numbers of the dtype ``kinds``; finite (or NaN)."""
    if not isinstance(value, np.ndarray) or value.dtype.kind not in kinds:
        kind = value.dtype if isinstance(value, np.ndarray) else type(value).__name__
        where.fail(f"{name} must be an array of kind {kinds!r}; got {kind}")
    if value.shape != (n,):
        where.fail(f"{name} must have shape ({n},); got {value.shape}")
    if value.dtype.kind == "f":
        bad = ~np.isfinite(value)
        if allow_nan:
            bad &= ~np.isnan(value)
        if np.any(bad):
            where.fail(f"{name} holds infinite{'' if allow_nan else ' or NaN'} values")
    if low is not None:
        present = value[~np.isnan(value)] if value.dtype.kind == "f" else value
        if np.any(present < low) or (strict and np.any(present == low)):
            where.fail(f"{name} must be {'>' if strict else '>='} {low}")
    return value


def _optional_vector(where, value, name, n, present, **options):
    """A vector when ``present``, else None."""
    if present:
        return _vector(where, value, name, n, "f", **options)
    if value is not None:
        where.fail(f"{name} must be null with these parameters")
    return None


def _labels(where, value, name, *, sort):
    """Categories of one feature: distinct, at most one missing value (last),
    all strings or all numbers; sorted if ``sort`` (numbers always are, as
    scikit-learn searches them by bisection)."""
    if not isinstance(value, np.ndarray) or value.ndim != 1 or value.shape[0] == 0:
        where.fail(f"{name} must be a non-empty 1-D array")
    if value.dtype.kind not in "OUfiub":
        where.fail(f"{name} has dtype {value.dtype}")
    items = value.tolist()
    missing = [i for i, item in enumerate(items) if _is_missing(item)]
    if len(missing) > 1 or (missing and missing[0] != len(items) - 1):
        where.fail(f"{name} holds a missing value that is not the last category")
    present = items[: len(items) - len(missing)]
    strings = all(isinstance(item, str) for item in present)
    reals = all(_is_real(item) or _is_flag(item) for item in present)
    if not (strings or reals):
        where.fail(f"{name} mixes strings and numbers")
    if len(set(present)) != len(present):
        where.fail(f"{name} holds a category twice")
    if (sort or (reals and value.dtype.kind != "O")) and present != sorted(present):
        where.fail(f"{name} must be sorted")
    return items


def _same(a, b):
    """Equality of plain values, arrays and nested lists, NaN equal to NaN."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a, dtype=object), np.asarray(b, dtype=object)
        return a.shape == b.shape and all(_same(x, y) for x, y in zip(a.flat, b.flat))
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(_same(x, y) for x, y in zip(a, b))
        )
    if _is_missing(a) or _is_missing(b):
        return (a is None and b is None) or (
            _is_real(a) and _is_real(b) and math.isnan(a) and math.isnan(b)
        )
    if _is_flag(a) or _is_flag(b):
        return _is_flag(a) and _is_flag(b) and bool(a) == bool(b)
    if _is_real(a) and _is_real(b):
        return a == b
    return type(a) is type(b) and a == b


# ----------------------------------------------------------------------
# attributes and parameters
# ----------------------------------------------------------------------
def _param_names(cls):
    return [
        name for name in inspect.signature(cls.__init__).parameters if name != "self"
    ]


def _check_keys(where, cls, keys):
    """The attribute names: the parameters, then all the fitted attributes or
    none. Returns whether the object is fitted."""
    shadowing = sorted(key for key in keys if hasattr(cls, key))
    if shadowing:
        where.fail(
            f"the attributes {shadowing[:3]} would shadow {cls.__name__}'s own "
            "methods or properties"
        )
    params = set(_param_names(cls))
    fitted = FITTED[cls]
    allowed = params | fitted | OPTIONAL_FITTED.get(cls, set()) | COMMON_OPTIONAL
    unknown = sorted(keys - allowed)
    if unknown:
        where.fail(
            f"{cls.__name__} has no attribute {unknown[:3]} (the file may have been "
            "written by another version of scikit-learn)"
        )
    missing = sorted(params - keys)
    if missing:
        where.fail(f"the parameters {missing[:5]} are missing")
    present = keys & (fitted | OPTIONAL_FITTED.get(cls, set()))
    required = fitted | _required_here(cls)
    if present and required - keys:
        missing = sorted(required - keys)
        where.fail(f"the fitted attributes {missing[:5]} are missing")
    if cls is Pipeline:
        return True  # fitted when its steps are (checked by the pipeline)
    if "feature_names_in_" in keys and not present:
        where.fail("feature_names_in_ belongs to a fitted object")
    return bool(present)


def _no_code(where, value, name, allow_type=False):
    """A value is data: a type (a callable) only for a ``dtype`` parameter."""
    if isinstance(value, type):
        if not allow_type:
            where.fail(f"{name} is the type {value.__name__}: a file holds no code")
        return
    if isinstance(value, (list, tuple)):
        for item in value:
            _no_code(where, item, name)
    elif isinstance(value, dict):
        for item in value.values():
            _no_code(where, item, name)


def _check_params(where, obj):
    cls = type(obj)
    for name in _param_names(cls):
        value = getattr(obj, name)
        _no_code(where, value, name, allow_type=name == "dtype")
        allowed = _STRING_ONLY.get(cls, {}).get(name)
        if allowed is not None and value not in allowed:
            where.fail(f"{name} must be one of {sorted(map(str, allowed))}")
    if cls in (OneHotEncoder, OrdinalEncoder):  # "no_validation" in scikit-learn
        dtype = obj.dtype
        if not (
            isinstance(dtype, type)
            and issubclass(dtype, (np.number, np.bool_))
            and np.dtype(dtype).kind in "biuf"
        ):
            where.fail("dtype must be a numpy numeric type")
    try:
        obj._validate_params()
    except ValueError as exc:
        where.fail(str(exc))


def _check_common(where, obj, fitted):
    version = obj.__dict__.get("_sklearn_version")
    if version is not None and not (
        isinstance(version, str) and 0 < len(version) <= _MAX_VERSION
    ):
        where.fail("_sklearn_version must be a version string")
    config = obj.__dict__.get("_sklearn_output_config")
    if config is not None and not (
        isinstance(config, dict)
        and set(config) <= {"transform"}
        and all(value in ("default", "pandas") for value in config.values())
    ):
        where.fail(
            "_sklearn_output_config must be {'transform': 'default' or 'pandas'}"
        )
    if not fitted:
        return None
    n = _count(where, obj.n_features_in_, "n_features_in_", 1, _MAX_FEATURES)
    names = obj.__dict__.get("feature_names_in_")
    if names is not None and not (
        isinstance(names, np.ndarray)
        and names.dtype.kind == "O"
        and names.shape == (n,)
        and all(isinstance(name, str) for name in names.tolist())
    ):
        where.fail(f"feature_names_in_ must be {n} strings (an object array)")
    return n


# ----------------------------------------------------------------------
# the transformers
# ----------------------------------------------------------------------
def _samples_seen(where, value, n):
    """``n_samples_seen_``: a count, or one per feature."""
    if isinstance(value, np.ndarray):
        _vector(where, value, "n_samples_seen_", n, "iuf", low=0)
    elif not (_is_real(value) and math.isfinite(value) and value >= 0):
        where.fail("n_samples_seen_ must be a non-negative number or one per feature")


def _standard_scaler(where, obj, n):
    _samples_seen(where, obj.n_samples_seen_, n)
    scaled = obj.with_std
    _optional_vector(where, obj.mean_, "mean_", n, obj.with_mean or scaled)
    var = _optional_vector(where, obj.var_, "var_", n, scaled, low=0)
    scale = _optional_vector(where, obj.scale_, "scale_", n, scaled, low=0, strict=True)
    # each scale the standard deviation, or 1 for a constant feature
    if scaled and np.any((scale != np.sqrt(var)) & (scale != 1)):
        where.fail("scale_ must be the square root of var_ (or 1)")
    return n


def _nonzero_scale(scale):
    """Scales as scikit-learn's fits leave them: 1 where a scale is below ten
    machine epsilons (a constant feature), so that nothing is divided by 0."""
    return np.where(scale < 10 * np.finfo(scale.dtype).eps, 1.0, scale).astype(
        scale.dtype
    )


def _min_max_scaler(where, obj, n):
    low, high = _range(where, obj.feature_range, "feature_range")
    if not low < high:
        where.fail("feature_range must have its minimum below its maximum")
    _count(where, obj.n_samples_seen_, "n_samples_seen_")
    for name in ("scale_", "min_", "data_min_", "data_max_", "data_range_"):
        # NaN for a feature without values in the training rows
        _vector(where, getattr(obj, name), name, n, "f", allow_nan=True)
    # what fit derives from the range of the data and feature_range
    data_range = obj.data_max_ - obj.data_min_
    scale = (high - low) / _nonzero_scale(data_range)
    for name, expected in (
        ("data_range_", data_range),
        ("scale_", scale),
        ("min_", low - obj.data_min_ * scale),
    ):
        if not np.array_equal(getattr(obj, name), expected, equal_nan=True):
            where.fail(f"{name} is not what fit derives from the data range")
    return n


def _max_abs_scaler(where, obj, n):
    _count(where, obj.n_samples_seen_, "n_samples_seen_")
    _vector(where, obj.max_abs_, "max_abs_", n, "f", allow_nan=True, low=0)
    _vector(where, obj.scale_, "scale_", n, "f", allow_nan=True, low=0, strict=True)
    if not np.array_equal(obj.scale_, _nonzero_scale(obj.max_abs_), equal_nan=True):
        where.fail("scale_ must be max_abs_ (1 where it is about 0)")
    return n


def _range(where, value, name):
    if not (
        isinstance(value, tuple)
        and len(value) == 2
        and all(_is_real(v) and math.isfinite(v) for v in value)
    ):
        where.fail(f"{name} must be a tuple of two finite numbers")
    return value


def _robust_scaler(where, obj, n):
    low, high = _range(where, obj.quantile_range, "quantile_range")
    if not 0 <= low <= high <= 100:
        where.fail(
            "quantile_range must be (q_min, q_max) with 0 <= q_min <= q_max <= 100"
        )
    _optional_vector(
        where, obj.center_, "center_", n, obj.with_centering, allow_nan=True
    )
    _optional_vector(
        where,
        obj.scale_,
        "scale_",
        n,
        obj.with_scaling,
        allow_nan=True,
        low=0,
        strict=True,
    )
    return n


def _dtype(where, value, name, kinds="iufO"):
    if not isinstance(value, np.dtype) or value.kind not in kinds:
        where.fail(f"{name} must be a numeric or object dtype")
    return value


def _simple_imputer(where, obj, n):
    fill = obj.fill_value
    if not (fill is None or isinstance(fill, str) or _is_real(fill) or _is_flag(fill)):
        where.fail("fill_value must be null, a string or a number")
    fit_dtype = _dtype(where, obj._fit_dtype, "_fit_dtype")
    fill_dtype = obj.__dict__.get("_fill_dtype")
    if fill_dtype is not None:
        _dtype(where, fill_dtype, "_fill_dtype")
    statistics = obj.statistics_
    if not isinstance(statistics, np.ndarray) or statistics.dtype.kind not in "fO":
        where.fail("statistics_ must be an array of floats or objects")
    if statistics.shape != (n,):
        where.fail(f"statistics_ must have shape ({n},); got {statistics.shape}")
    values = statistics.tolist()
    numeric = fit_dtype.kind != "O" or (
        fill_dtype is not None and fill_dtype.kind != "O"
    )
    for value in values:
        if not (value is None or isinstance(value, str) or _is_real(value)):
            where.fail("statistics_ must hold strings, numbers or null")
        if numeric and not _is_real(value):
            where.fail("statistics_ of numeric data must hold numbers")
        if _is_real(value) and math.isinf(value):
            where.fail("statistics_ holds an infinite value")
    kept = n
    if obj.strategy != "constant" and not obj.keep_empty_features:
        kept = sum(1 for value in values if not (_is_real(value) and math.isnan(value)))
    indicator = obj.indicator_
    if obj.add_indicator != (indicator is not None):
        where.fail("indicator_ must be a MissingIndicator exactly with add_indicator")
    if indicator is None:
        return kept
    if type(indicator) is not MissingIndicator:
        where.fail("indicator_ must be a MissingIndicator")
    if not (
        indicator._precomputed is True
        and indicator.error_on_new is False
        and indicator.features == "missing-only"
        and indicator.n_features_in_ == n
        and _same(indicator.missing_values, obj.missing_values)
    ):
        where.fail("indicator_ is not the MissingIndicator this SimpleImputer fits")
    return kept + where.shape(indicator)[1]


def _missing_indicator(where, obj, n):
    if not _is_flag(obj._precomputed):
        where.fail("_precomputed must be true or false")
    if _count(where, obj._n_features, "_n_features") != n:
        where.fail("_n_features must be n_features_in_")
    features = obj.features_
    if not (
        isinstance(features, np.ndarray)
        and features.ndim == 1
        and features.dtype.kind in "iu"
    ):
        where.fail("features_ must be a 1-D array of feature indices")
    if np.any(features < 0) or np.any(features >= n) or np.any(np.diff(features) <= 0):
        where.fail(f"features_ must be increasing feature indices in [0, {n})")
    if obj.features == "all" and not np.array_equal(features, np.arange(n)):
        where.fail("features_ must be every feature with features='all'")
    return int(features.shape[0])


def _infrequent(where, obj, n, categories):
    """The infrequent categories of each feature and their mapping, as
    scikit-learn derives it; returns the indices (None per feature)."""
    enabled = _flag(where, obj, "_infrequent_enabled")
    grouping = obj.min_frequency is not None or obj.max_categories is not None
    if enabled != grouping:
        where.fail(
            "_infrequent_enabled must say whether min_frequency or max_categories "
            "is set"
        )
    keys = {"_infrequent_indices", "_default_to_infrequent_mappings"}
    if not enabled:
        if keys & set(obj.__dict__):
            where.fail("infrequent categories without min_frequency or max_categories")
        return [None] * n
    if not keys <= set(obj.__dict__):
        where.fail("the infrequent categories are missing")
    indices, mappings = obj._infrequent_indices, obj._default_to_infrequent_mappings
    if not (isinstance(indices, list) and isinstance(mappings, list)) or not (
        len(indices) == len(mappings) == n
    ):
        where.fail(
            "_infrequent_indices and its mappings must list one entry per feature"
        )
    for i, (index, mapping, cats) in enumerate(zip(indices, mappings, categories)):
        if index is None:
            if mapping is not None:
                where.fail(f"feature {i} maps categories but has no infrequent one")
            continue
        size = len(cats)
        if not (
            isinstance(index, np.ndarray)
            and index.dtype.kind in "iu"
            and index.ndim == 1
            and 0 < index.shape[0] <= size
            and np.all(index >= 0)
            and np.all(index < size)
            and np.all(np.diff(index) > 0)
        ):
            where.fail(f"_infrequent_indices[{i}] must be increasing category indices")
        expected = np.empty(size, dtype=np.int64)
        frequent = np.setdiff1d(np.arange(size), index)
        expected[frequent] = np.arange(frequent.shape[0])
        expected[index] = frequent.shape[0]
        if not (isinstance(mapping, np.ndarray) and np.array_equal(mapping, expected)):
            where.fail(
                f"_default_to_infrequent_mappings[{i}] is not the mapping of its "
                "infrequent categories"
            )
    return indices


def _categories(where, obj, n):
    categories = obj.categories_
    if not (isinstance(categories, list) and len(categories) == n):
        where.fail(f"categories_ must be a list of {n} arrays")
    auto = isinstance(obj.categories, str)
    items = [
        _labels(where, cats, f"categories_[{i}]", sort=auto)
        for i, cats in enumerate(categories)
    ]
    given = obj.categories
    if not auto and not (
        isinstance(given, list)
        and len(given) == n
        and all(
            _same(np.asarray(g, dtype=object).ravel().tolist(), c)
            for g, c in zip(given, items)
        )
    ):
        where.fail("categories_ must be the categories given by the parameter")
    return categories


def _drop_indices(where, value, name, n, sizes):
    if value is None:
        return None
    if not (isinstance(value, np.ndarray) and value.shape == (n,)):
        where.fail(f"{name} must be null or one entry per feature")
    out = value.tolist()
    for i, index in enumerate(out):
        if index is not None and not (_is_integer(index) and 0 <= index < sizes[i]):
            where.fail(
                f"{name}[{i}] must be null or a category index in [0, {sizes[i]})"
            )
    return out


def _one_hot_encoder(where, obj, n):
    categories = _categories(where, obj, n)
    infrequent = _infrequent(where, obj, n, categories)
    sizes = [len(c) for c in categories]
    grouped = [
        size if index is None else size - index.shape[0] + 1
        for size, index in zip(sizes, infrequent)
    ]
    after = _drop_indices(
        where, obj._drop_idx_after_grouping, "_drop_idx_after_grouping", n, grouped
    )
    drop_idx = _drop_indices(where, obj.drop_idx_, "drop_idx_", n, sizes)
    drop = obj.drop
    if drop is None:
        expected = None
    elif isinstance(drop, str):
        expected = [0 if drop == "first" or size == 2 else None for size in grouped]
    else:
        expected = after  # which categories: checked through drop_idx_ below
        values = np.asarray(drop, dtype=object).tolist()
        if after is None or len(values) != n:
            where.fail("drop must list one category per feature")
        for i, (value, cats) in enumerate(zip(values, categories)):
            found = [j for j, c in enumerate(cats.tolist()) if _same(c, value)]
            if not found or drop_idx[i] != found[0]:
                where.fail(f"drop_idx_[{i}] is not the index of the dropped category")
    if not _same(after, expected):
        where.fail("_drop_idx_after_grouping is not what drop gives")
    if after is not None:
        for i, (index, mapping) in enumerate(
            zip(
                after, obj.__dict__.get("_default_to_infrequent_mappings") or [None] * n
            )
        ):
            original = drop_idx[i] if drop_idx is not None else None
            if index is None or mapping is None:
                if original != index:
                    where.fail(f"drop_idx_[{i}] must be _drop_idx_after_grouping[{i}]")
            elif original is None or mapping[original] != index:
                where.fail(f"drop_idx_[{i}] does not map to the dropped group")
    elif drop_idx is not None:
        where.fail("drop_idx_ must be null without drop")
    outs = [
        g - (0 if after is None or after[i] is None else 1)
        for i, g in enumerate(grouped)
    ]
    declared = obj._n_features_outs
    if not (
        isinstance(declared, list)
        and [int(v) if _is_integer(v) else None for v in declared] == outs
    ):
        where.fail(f"_n_features_outs must be {outs[:10]}")
    return sum(outs)


def _ordinal_encoder(where, obj, n):
    categories = _categories(where, obj, n)
    _infrequent(where, obj, n, categories)
    missing = obj._missing_indices
    expected = {
        i: len(cats) - 1
        for i, cats in enumerate(categories)
        if _is_missing(cats.tolist()[-1])
    }
    if not (isinstance(missing, dict) and missing == expected):
        where.fail(f"_missing_indices must be {expected}")
    unknown = obj.unknown_value
    cardinalities = [len(c) for c in categories]
    if obj.handle_unknown == "use_encoded_value":
        if not (_is_integer(unknown) or (_is_real(unknown) and math.isnan(unknown))):
            where.fail("unknown_value must be an integer or NaN with use_encoded_value")
        if _is_integer(unknown) and 0 <= unknown < max(cardinalities):
            where.fail("unknown_value must not be the code of a category")
    elif unknown is not None:
        where.fail(
            "unknown_value must be null unless handle_unknown='use_encoded_value'"
        )
    value = obj.encoded_missing_value
    nan_codes = (_is_real(unknown) and math.isnan(unknown)) or (
        missing and math.isnan(value)
    )
    if nan_codes and np.dtype(obj.dtype).kind != "f":
        where.fail("dtype must be a float type to encode with NaN")
    if missing and not math.isnan(value):
        if any(0 <= value < cardinalities[i] for i in missing):
            where.fail("encoded_missing_value must not be the code of a category")
    return n


def _function_transformer(where, obj, n):
    if obj.func is not None or obj.inverse_func is not None:
        where.fail("only the identity FunctionTransformer (func=None) is data")
    if obj.kw_args not in (None, {}) or obj.inv_kw_args not in (None, {}):
        where.fail("the identity FunctionTransformer takes no kw_args")
    return n


# ----------------------------------------------------------------------
# composites
# ----------------------------------------------------------------------
_TREERANK = ("TreeRank", "RankingForest")


def _is_treerank(obj):
    return type(obj).__name__ in _TREERANK and type(obj).__module__.startswith(
        "treerank."
    )


def shape_of(obj, checked):
    """``(columns read, columns written)`` of a checked object.

    ``checked`` is the record :func:`check_object` keeps. None where it does
    not apply: a TreeRank or RankingForest writes no columns, an unfitted
    template has no width.
    """
    if _is_treerank(obj):
        return int(obj.n_features_in_), None
    return checked.get(id(obj), (False, (None, None)))[1]


def _check_names(where, names, cls, what):
    if not all(isinstance(name, str) for name in names):
        where.fail(f"the {what} names must be strings")
    if len(set(names)) != len(names):
        twice = sorted({name for name in names if names.count(name) > 1})
        where.fail(f"the {what} names must be distinct; {twice[:3]} appear twice")
    bad = [name for name in names if "__" in name or not name]
    if bad:
        where.fail(f"the {what} names {bad[:3]} must be non-empty, without '__'")
    clash = sorted(set(names) & set(_param_names(cls)))
    if clash:
        where.fail(f"the {what} names {clash[:3]} are parameter names")


def _pipeline(where, obj):
    steps = obj.steps
    if not (
        isinstance(steps, list)
        and steps
        and all(isinstance(step, tuple) and len(step) == 2 for step in steps)
    ):
        where.fail("steps must be a non-empty list of (name, estimator) pairs")
    _check_names(where, [name for name, _ in steps], Pipeline, "step")
    transform_input = obj.transform_input
    if transform_input is not None and not all(
        isinstance(name, str) for name in transform_input
    ):
        where.fail("transform_input must be null or a list of names")
    estimators = [
        (k, name, step)
        for k, (name, step) in enumerate(steps)
        if not (step is None or (isinstance(step, str) and step == "passthrough"))
    ]
    for k, name, step in estimators:
        if isinstance(step, str) or not hasattr(step, "get_params"):
            where.fail(f"step {name!r} must be an estimator or 'passthrough'")
        if _is_treerank(step) and k != len(steps) - 1:
            where.fail(f"step {name!r}: a ranker can only be the last step")
    if not estimators:
        where.fail("a pipeline of 'passthrough' steps only")
    fitted = [where.fitted(step) for _, _, step in estimators]
    if not any(fitted):
        return False, (None, None)  # a template (in a ColumnTransformer)
    width = first = None
    for (_, name, step), is_fitted in zip(estimators, fitted):
        if not is_fitted:
            where.fail(f"step {name!r} is not fitted")
        read, written = where.shape(step)
        if width is not None and read != width:
            where.fail(
                f"step {name!r} reads {read} columns but the previous step writes "
                f"{width}"
            )
        first = read if first is None else first
        width = written
    return True, (first, width)


def _column_indices(where, spec, n, names, what):
    """The columns a ColumnTransformer's column specification selects."""
    if isinstance(spec, str) or _is_integer(spec):
        return _column_indices(where, [spec], n, names, what)
    if isinstance(spec, slice):
        start, stop, step = spec.start, spec.stop, spec.step
        if all(v is None or _is_integer(v) for v in (start, stop, step)):
            if step == 0:
                where.fail(f"{what}: a slice step of 0")
            return list(range(n))[spec]
        if names is None or step is not None:
            where.fail(f"{what}: a slice of column names needs feature names")
        lookup = {name: i for i, name in enumerate(names)}
        if any(v is not None and v not in lookup for v in (start, stop)):
            where.fail(f"{what}: a slice of unknown column names")
        a = 0 if start is None else lookup[start]
        b = n - 1 if stop is None else lookup[stop]
        return list(range(a, b + 1))  # label slices include their end
    if isinstance(spec, np.ndarray):
        spec = spec.tolist()
    if not isinstance(spec, list):
        where.fail(f"{what}: unsupported column specification {type(spec).__name__}")
    if spec and all(_is_flag(v) for v in spec):
        if len(spec) != n:
            where.fail(f"{what}: a boolean mask of {len(spec)} columns for {n}")
        return [i for i, v in enumerate(spec) if v]
    if all(isinstance(v, str) for v in spec):
        if spec and names is None:
            where.fail(f"{what}: column names without feature_names_in_")
        lookup = {}
        for i, name in enumerate([] if names is None else names):
            lookup.setdefault(name, []).append(i)
        if any(len(lookup.get(v, ())) != 1 for v in spec):
            where.fail(f"{what}: a column name is unknown or not unique")
        return [lookup[v][0] for v in spec]
    if all(_is_integer(v) for v in spec):
        if any(not -n <= v < n for v in spec):
            where.fail(f"{what}: a column index outside [-{n}, {n})")
        return [int(v) % n for v in spec]
    where.fail(f"{what}: columns must be all names, all indices or a boolean mask")
    return None


def _column_params(where, obj):
    """The transformers of a ColumnTransformer (templates) and its settings."""
    specs = obj.transformers
    if not (
        isinstance(specs, list)
        and all(isinstance(t, tuple) and len(t) == 3 for t in specs)
    ):
        where.fail("transformers must be a list of (name, transformer, columns)")
    labels = [t[0] for t in specs]
    _check_names(where, labels, ColumnTransformer, "transformer")  # 'remainder' too
    for label, transformer in [
        *((t[0], t[1]) for t in specs),
        ("remainder", obj.remainder),
    ]:
        if isinstance(transformer, str):
            if transformer not in ("drop", "passthrough"):
                where.fail(f"{label!r} must be a transformer, 'drop' or 'passthrough'")
        elif _is_treerank(transformer) or not hasattr(transformer, "get_params"):
            where.fail(f"{label!r} must be a transformer")
    weights = obj.transformer_weights
    if weights is not None and not (
        isinstance(weights, dict)
        and set(weights) <= {*labels, "remainder"}
        and all(_is_real(w) and math.isfinite(w) for w in weights.values())
    ):
        where.fail("transformer_weights must map transformer names to finite numbers")
    verbose_names = obj.verbose_feature_names_out
    if not (_is_flag(verbose_names) or isinstance(verbose_names, str)):
        where.fail("verbose_feature_names_out must be true, false or a format string")
    return specs, labels


def _column_transformer(where, obj, n):
    specs, labels = _column_params(where, obj)
    names = obj.__dict__.get("feature_names_in_")
    names = None if names is None else names.tolist()
    if not _is_flag(obj.sparse_output_):
        where.fail("sparse_output_ must be true or false")
    # the columns of each transformer, then of the remainder
    if not (isinstance(obj._columns, list) and len(obj._columns) == len(specs)):
        where.fail("_columns must list each transformer's columns")
    selected = []
    for (label, _, columns), stored in zip(specs, obj._columns):
        if not _same(columns, stored):
            where.fail(f"_columns: the columns of {label!r} must be its columns")
        selected.append(_column_indices(where, columns, n, names, label))
    used = {i for indices in selected for i in indices}
    rest = [i for i in range(n) if i not in used]
    remainder = obj._remainder
    if not (
        isinstance(remainder, tuple)
        and len(remainder) == 3
        and remainder[0] == "remainder"
        and type(remainder[1]) is type(obj.remainder)
        and (not isinstance(obj.remainder, str) or remainder[1] == obj.remainder)
    ):
        where.fail("_remainder must be ('remainder', remainder, its columns)")
    if _column_indices(where, remainder[2], n, names, "remainder") != rest:
        where.fail(f"the remainder's columns must be the unused columns {rest[:10]}")
    indices = obj._transformer_to_input_indices
    expected = dict(zip(labels, selected))
    expected["remainder"] = rest
    if not (
        isinstance(indices, dict)
        and set(indices) == set(expected)
        and all(
            isinstance(indices[k], list) and indices[k] == expected[k] for k in expected
        )
    ):
        where.fail("_transformer_to_input_indices must be each transformer's columns")
    # the fitted transformers: each transformer fitted on its columns, in order
    fitted = obj.transformers_
    entries = list(specs)
    if rest:  # the remainder, when it has columns
        entries.append(("remainder", obj.remainder, remainder[2]))
    if not (isinstance(fitted, list) and len(fitted) == len(entries)):
        where.fail(
            "transformers_ must list the transformers, and the remainder when it "
            "has columns"
        )
    slices, start = {"remainder": (0, 0)}, 0
    for (label, template, columns), item, cols in zip(
        entries, fitted, [*selected, rest]
    ):
        if not (isinstance(item, tuple) and len(item) == 3 and item[0] == label):
            where.fail(f"transformers_ must hold {label!r} in its place")
        if not _same(item[2], columns):
            where.fail(f"transformers_: the columns of {label!r} must be its columns")
        step = item[1]
        if (isinstance(template, str) and template == "drop") or not cols:
            # never fitted: the template itself
            if type(step) is not type(template) or (
                isinstance(template, str) and step != template
            ):
                where.fail(f"transformers_: {label!r} must be its unfitted transformer")
            slices[label] = (0, 0)
            continue
        if isinstance(template, str):  # passthrough: the identity, fitted
            if type(step) is not FunctionTransformer:
                where.fail(f"transformers_: {label!r} must be the fitted identity")
        elif type(step) is not type(template):
            where.fail(f"transformers_: {label!r} must be its transformer, fitted")
        if not where.fitted(step):
            where.fail(f"transformers_: {label!r} is not fitted")
        read, written = where.shape(step)
        if read != len(cols):
            where.fail(
                f"transformers_: {label!r} reads {read} columns but is given "
                f"{len(cols)}"
            )
        slices[label] = (start, start + written)
        start += written
    output = obj.output_indices_
    if not (
        isinstance(output, dict)
        and set(output) == set(slices)
        and all(
            isinstance(output[k], slice)
            and (output[k].start, output[k].stop, output[k].step) == (*slices[k], None)
            for k in slices
        )
    ):
        where.fail("output_indices_ must be where each transformer's output lands")
    return start


_TRANSFORMERS = {
    StandardScaler: _standard_scaler,
    MinMaxScaler: _min_max_scaler,
    MaxAbsScaler: _max_abs_scaler,
    RobustScaler: _robust_scaler,
    SimpleImputer: _simple_imputer,
    MissingIndicator: _missing_indicator,
    OneHotEncoder: _one_hot_encoder,
    OrdinalEncoder: _ordinal_encoder,
    FunctionTransformer: _function_transformer,
    ColumnTransformer: _column_transformer,
}


def check_object(obj, keys, where, checked):
    """Check an object of a trusted type rebuilt from a file's state.

    Parameters
    ----------
    obj : object
        The object, given its state (``__setstate__``); its nested objects
        have been checked already.
    keys : set of str
        The attribute names of the state.
    where : str
        Its place in the file, for the messages.
    checked : dict
        What the checks found so far, by object id: ``(fitted, (columns read,
        columns written))``; the entry of ``obj`` is added. The caller keeps
        the objects alive while it uses it.

    Raises
    ------
    ValueError
        Naming the place and the problem.
    """
    cls = type(obj)
    place = _Where(where, cls, checked)
    fitted = _check_keys(place, cls, set(keys))
    _check_params(place, obj)
    if cls is ColumnTransformer and not fitted:
        _column_params(place, obj)
    n = _check_common(place, obj, fitted and cls is not Pipeline)
    if cls is Pipeline:
        fitted, shape = _pipeline(place, obj)
    elif fitted:
        shape = (n, _TRANSFORMERS[cls](place, obj, n))
        _smoke_transform(place, obj, shape)
    else:
        shape = (None, None)
    checked[id(obj)] = (fitted, shape)


def _smoke_input(obj, n):
    """Rows a fitted transformer must accept, or None (composites, identity)."""
    cls = type(obj)
    if cls in (StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler):
        return np.zeros((1, n))
    if cls is MissingIndicator and obj._precomputed:
        return np.zeros((1, n), dtype=bool)  # the mask its imputer gives it
    if cls in (SimpleImputer, MissingIndicator):
        fit_dtype = obj.__dict__.get("_fit_dtype", np.dtype(np.float64))
        if fit_dtype.kind == "O":
            if cls is MissingIndicator:
                return None
            return np.array([obj.statistics_], dtype=object)
        # a row of zeros and, when it is a number, a row of the missing value
        missing = obj.missing_values
        rows = [[0.0] * n]
        if _is_real(missing) and not _is_flag(missing):
            rows.append([float(missing)] * n)
        return np.array(rows)
    if cls in (OneHotEncoder, OrdinalEncoder):
        return np.array([[c[0] for c in obj.categories_]], dtype=object)
    return None


def _smoke_transform(where, obj, shape):
    """``transform`` of a row the transformer was fitted on must work.

    The checks above are those of each attribute and of their relations; a
    state can pass them and still make ``transform`` raise (a SimpleImputer
    whose ``missing_values`` is a string while it was fitted on numbers), which
    would fail every prediction of the loaded model: it is refused here, with
    scikit-learn's own message.
    """
    import warnings

    X = _smoke_input(obj, shape[0])
    if X is None:
        return
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # feature names, versions
            out = obj.transform(X)
    except Exception as exc:  # the transformer's own refusal
        detail = str(exc).split(". ")[0][:200]
        where.fail(f"transform fails on a row of its inputs ({detail})")
    width = out.shape[1] if hasattr(out, "shape") and len(out.shape) == 2 else None
    if width != shape[1]:
        where.fail(f"transform writes {width} columns, not {shape[1]}")
