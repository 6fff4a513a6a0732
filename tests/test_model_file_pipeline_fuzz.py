"""Hostile Pipeline files: state edited as an attacker would (issue 26, items 1, 5).

An audit loaded 19 edited Pipeline files that then failed at predict time
(``'StandardScaler' object has no attribute 'with_mean'``, ``'NoneType'
object is not callable``, shape mismatches blamed on the user's X), and files
whose state key ``transform`` shadowed the method. Every object's state is now
checked at load (``model_io/_sklearn_state.py``). Here the description of
saved pipelines is edited structurally (keys added, removed or renamed, values
of another type, arrays of other shapes, step names, classes), the file
resealed with ``write_archive`` (valid digests), and the outcome must be a
``ModelFileError`` at load or a model predicting exactly as the original:
never an error at predict time, never other predictions.
"""

import copy
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.impute import MissingIndicator, SimpleImputer
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    MaxAbsScaler,
    MinMaxScaler,
    OneHotEncoder,
    OrdinalEncoder,
    RobustScaler,
    StandardScaler,
)

from treerank import RankingForest, TreeRank
from treerank.exceptions import ModelFileError
from treerank.model_io import load_model, save_model
from treerank.model_io._archive import read_archive, write_archive
from treerank.model_io._sklearn_state import COMMON_OPTIONAL, FITTED, OPTIONAL_FITTED

RNG = np.random.default_rng(0)
N = 240
FRAME = pd.DataFrame(
    {
        "age": RNG.normal(50, 10, N),
        "dose": RNG.exponential(2.0, N),
        "site": RNG.choice(
            ["north", "south", "east", "west"], N, p=[0.4, 0.3, 0.25, 0.05]
        ),
        "grade": RNG.choice(["low", "mid", "high"], N),
        "visits": RNG.integers(0, 5, N).astype(float),
    }
)
FRAME.loc[RNG.choice(N, 20, replace=False), "age"] = np.nan
Y = ((FRAME["age"].fillna(50) > 50) ^ (FRAME["site"] == "north")).astype(int).to_numpy()
NUMERIC = FRAME[["age", "dose", "visits"]].to_numpy()


def _tree():
    return TreeRank(max_depth=3, random_state=0)


PIPELINES = {
    "impute-scale": (
        lambda: make_pipeline(
            SimpleImputer(add_indicator=True), StandardScaler(), _tree()
        ),
        NUMERIC,
    ),
    "columns": (
        lambda: make_pipeline(
            ColumnTransformer(
                [
                    (
                        "num",
                        make_pipeline(SimpleImputer(), RobustScaler()),
                        ["age", "dose"],
                    ),
                    (
                        "site",
                        OneHotEncoder(handle_unknown="ignore", drop="if_binary"),
                        ["site"],
                    ),
                    ("grade", OrdinalEncoder(), ["grade"]),
                ],
                remainder="passthrough",
            ),
            MaxAbsScaler(),
            _tree(),
        ),
        FRAME,
    ),
    "infrequent-forest": (
        lambda: make_pipeline(
            ColumnTransformer(
                [
                    ("site", OneHotEncoder(min_frequency=20, sparse_output=False), [2]),
                    ("num", MinMaxScaler(clip=True), [1, 4]),
                    ("drop", "drop", [3]),
                ]
            ),
            RankingForest(n_estimators=3, max_depth=3, random_state=0),
        ),
        FRAME.fillna({"age": 50}).to_numpy(dtype=object),
    ),
    "indicator": (
        lambda: Pipeline(
            [
                ("mask", MissingIndicator(features="all")),
                ("rank", _tree()),
            ]
        ),
        NUMERIC,
    ),
    "ordinal-infrequent": (
        lambda: make_pipeline(
            ColumnTransformer(
                [("cat", OrdinalEncoder(max_categories=3), ["site", "grade"])],
                remainder=StandardScaler(),
            ),
            _tree(),
        ),
        FRAME.fillna({"age": 50}),
    ),
    "columns-alone": (
        lambda: ColumnTransformer(
            [("site", OneHotEncoder(drop="first", sparse_output=False), ["site"])],
            remainder=SimpleImputer(strategy="median"),
        ),
        FRAME[["site", "age", "dose"]],
    ),
}


def _predict(model, X):
    if isinstance(model, ColumnTransformer):
        return np.asarray(model.transform(X), dtype=float)
    return model.decision_function(X)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    directory = tmp_path_factory.mktemp("pipelines")
    out = {}
    for name, (make, X) in PIPELINES.items():
        model = make()
        model.fit(X) if isinstance(model, ColumnTransformer) else model.fit(X, Y)
        path = directory / f"{name}.trk"
        save_model(model, path)
        out[name] = (path, _predict(model, X), X)
    return out


# ----------------------------------------------------------------------
# walking and editing a description
# ----------------------------------------------------------------------
def _objects(node, out):
    """The ``{"class", "state"}`` bodies of every scikit-learn object."""
    if isinstance(node, dict):
        if set(node) == {"object"} and isinstance(node["object"], dict):
            out.append(node["object"])
        if set(node) == {"treerank"}:
            return  # a ranker: its own format, fuzzed elsewhere
        for value in node.values():
            _objects(value, out)
    elif isinstance(node, list):
        for value in node:
            _objects(value, out)
    return out


def _slots(node, out):
    """(container, key) of every value inside the objects' states."""
    if isinstance(node, dict):
        if set(node) == {"treerank"}:
            return out
        for key, value in node.items():
            if key in ("list", "tuple", "dict", "state", "slice", "values"):
                _slots(value, out)
            elif key in ("object",):
                _slots(value, out)
            elif key not in ("class",):
                out.append((node, key))
                _slots(value, out)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out.append((node, i))
            _slots(value, out)
    return out


NAMES = sorted(
    {"transform", "fit", "decision_function", "predict", "get_params", "set_params"}
    | {"_validate_params", "named_steps", "n_features_in_", "steps", "memory"}
    | {"scale_", "mean_", "categories_", "statistics_", "features_", "x", "copy"}
    | set(COMMON_OPTIONAL)
    | {name for names in FITTED.values() for name in names}
    | {name for names in OPTIONAL_FITTED.values() for name in names}
)


def _random_value(rng, arrays):
    keys = sorted(k for k in arrays if "." not in k)
    pool = [
        None,
        True,
        0,
        1,
        -1,
        2**40,
        0.5,
        {"float": "nan"},
        {"float": "inf"},
        "",
        "passthrough",
        "drop",
        "transform",
        {"list": []},
        {"list": [1, 2, 3]},
        {"list": ["a", "b"]},
        {"tuple": [1, 2]},
        {"tuple": ["x", "drop", {"list": [0]}]},
        {"dict": [["a", 1]]},
        {"dict": [[0, 1]]},
        {"numpy_type": "float64"},
        {"numpy_type": "bool"},
        {"dtype": "<f8"},
        {"dtype": "|O"},
        {"scalar": ["<i8", 3]},
        {"scalar": ["<f8", 0.5]},
        {"slice": [0, 2, None]},
        {"slice": ["age", "dose", None]},
        {"strings": {"dtype": "<U3", "shape": [2], "values": ["a", "b"]}},
        {"strings": {"dtype": "|O", "shape": [1, 1], "values": [None]}},
    ]
    if keys:
        pool.append({"array": str(rng.choice(keys))})
    return copy.deepcopy(pool[int(rng.integers(len(pool)))])


def _json_kind(value):
    """The JSON type of a value, or the tag of a tagged one; all numbers
    alike (1 for 0.5 is an edit of a value, not of a type)."""
    if isinstance(value, dict) and len(value) == 1:
        tag = next(iter(value))
        return "number" if tag in ("scalar", "float") else tag
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return "number"
    return type(value).__name__


def _reshape(rng, array):
    """Another shape or dtype kind (the values themselves are the model's:
    an edit of values, NaN in a scaler's center for instance, is not
    structural, and a file can always change a model's numbers)."""
    kind = int(rng.integers(6))
    if kind == 0:
        return array[:-1]
    if kind == 1:
        return np.concatenate([array.ravel(), array.ravel()[:1]])
    if kind == 2:
        return array.reshape(-1, 1) if array.ndim == 1 else array.ravel()
    if kind == 3:
        return array.astype(bool)
    if kind == 4:
        return (
            np.round(array).astype(np.int64)
            if array.dtype.kind == "f"
            else array.astype(float)
        )
    return np.zeros((0, *array.shape[1:]), dtype=array.dtype)


def _step_lists(description):
    """The ``steps`` lists of the pipelines and ``transformers`` of the
    ColumnTransformers (lists of tagged tuples)."""
    out = []
    for body in _objects(description["root"], []):
        for entry in body.get("state") or []:
            if not (isinstance(entry, list) and len(entry) == 2):
                continue
            key, value = entry
            if key in ("steps", "transformers", "transformers_") and isinstance(
                value, dict
            ):
                out.append(value.get("list"))
    return [
        lst
        for lst in out
        if isinstance(lst, list)
        and lst
        and all(
            isinstance(s, dict) and isinstance(s.get("tuple"), list) and s["tuple"]
            for s in lst
        )
    ]


def _mutate(rng, description, arrays, edited):
    """One random structural edit; returns its name."""
    objects = _objects(description["root"], [])
    body = objects[int(rng.integers(len(objects)))]
    state = body["state"]
    if not isinstance(state, list):
        return None
    kind = int(rng.integers(9))
    if kind == 0:  # a new attribute (maybe a method's name)
        state.append([str(rng.choice(NAMES)), _random_value(rng, arrays)])
        return "add"
    if kind == 1 and state:  # an attribute removed
        del state[int(rng.integers(len(state)))]
        return "remove"
    if kind == 2 and state:  # an attribute renamed
        entry = state[int(rng.integers(len(state)))]
        if isinstance(entry, list) and entry:
            entry[0] = str(rng.choice(NAMES))
            return "rename"
    if kind == 3:  # a value of another type, anywhere in the states
        slots = _slots(state, [])
        if slots:
            container, key = slots[int(rng.integers(len(slots)))]
            new = _random_value(rng, arrays)
            if _json_kind(new) != _json_kind(container[key]):
                # (another value of the same kind, a feature name for a
                # feature name, is an edit of the model, not of its structure)
                container[key] = new
                return "value"
    if kind == 4:  # a numeric array of another shape or dtype (once each: two
        # changes of dtype in a row could round its values, an edit of values)
        keys = sorted(k for k in arrays if "." not in k and k not in edited)
        if keys:
            key = str(rng.choice(keys))
            arrays[key] = _reshape(rng, arrays[key])
            edited.add(key)
            return "array"
    if kind == 5:  # step or transformer names
        lists = _step_lists(description)
        if lists:
            steps = lists[int(rng.integers(len(lists)))]
            i = int(rng.integers(len(steps)))
            names = [str(s["tuple"][0]) for s in steps]
            choice = rng.choice([*names, "__x", "memory", "remainder", "", "a__b"])
            steps[i]["tuple"][0] = str(choice)
            return "step name"
    if kind == 6:  # a step duplicated (its name then appears twice)
        # (removing or reordering steps that read and write the same columns
        # gives another consistent pipeline: an edit of the model, as an edit of
        # its numbers is, which no check can tell from the saved one)
        lists = _step_lists(description)
        if lists:
            steps = lists[int(rng.integers(len(lists)))]
            i, j = (int(v) for v in rng.integers(len(steps), size=2))
            steps.insert(j, copy.deepcopy(steps[i]))
            return "duplicated step"
    if kind == 7:  # another trusted class with this state
        body["class"] = str(
            rng.choice(
                [
                    *("StandardScaler", "MinMaxScaler", "MaxAbsScaler"),
                    *("RobustScaler", "OneHotEncoder", "OrdinalEncoder"),
                    *("SimpleImputer", "Pipeline", "MissingIndicator"),
                    *("FunctionTransformer", "ColumnTransformer"),
                ]
            )
        )
        return "class"
    if kind == 8 and state:  # an attribute duplicated under its own name
        state.append(copy.deepcopy(state[int(rng.integers(len(state)))]))
        return "duplicate"
    return None


def _fuzz(tmp_path, saved, name, n_cases, seed):
    source, reference, X = saved[name]
    base_description, base_arrays = read_archive(source)
    rng = np.random.default_rng(seed)
    outcomes = {"refused": 0, "identical": 0}
    path = tmp_path / "fuzzed.trk"
    for case in range(n_cases):
        description = copy.deepcopy(base_description)
        arrays = dict(base_arrays)
        edited = set()
        edits = [
            _mutate(rng, description, arrays, edited)
            for _ in range(int(rng.integers(1, 3)))
        ]
        if not any(edits):
            continue
        try:
            write_archive(path, description, arrays)
        except ValueError:
            continue  # not even writable (e.g. a non-JSON value): never a file
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # scikit-learn's version warnings
            try:
                model = load_model(path)
            except ModelFileError:
                outcomes["refused"] += 1
                continue
            # loaded: it must predict exactly as the original
            try:
                scores = _predict(model, X)
            except Exception as exc:  # the failure this test exists for
                raise AssertionError(
                    f"{name}, case {case}, edits {edits}: loaded, then "
                    f"{type(exc).__name__} at predict time: {exc}\n"
                    f"{json.dumps(description)[:3000]}"
                ) from None
        np.testing.assert_array_equal(
            scores, reference, err_msg=f"{name}, case {case}, edits {edits}"
        )
        outcomes["identical"] += 1
    return outcomes


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_structural_fuzz_of_pipeline_files(tmp_path, saved, name):
    outcomes = _fuzz(tmp_path, saved, name, n_cases=40, seed=26)
    assert outcomes["refused"] > 0
    print(name, outcomes)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_structural_fuzz_of_pipeline_files_at_length(tmp_path, saved, name):
    outcomes = _fuzz(tmp_path, saved, name, n_cases=600, seed=2026)
    assert outcomes["refused"] > 0
    print(name, outcomes)
