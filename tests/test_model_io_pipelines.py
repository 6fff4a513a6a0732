"""Whole scikit-learn pipelines in model files: exact round trips, trusted types."""

import json

import numpy as np
import pandas as pd
import pytest
from model_file_editing import rewrite_description
from sklearn.compose import ColumnTransformer
from sklearn.decomposition import PCA
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import (
    FunctionTransformer,
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
from treerank.model_io._pipelines import TRUSTED_TYPES


def _frame(n, random_state):
    rng = np.random.default_rng(random_state)
    frame = pd.DataFrame(
        {
            "age": rng.normal(50, 10, n),
            "dose": rng.exponential(2.0, n),
            "site": rng.choice(["north", "south", "east"], n),
            "grade": rng.choice(["low", "mid", "high"], n),
            "visits": rng.integers(0, 5, n),
            "comment": rng.choice(["a", "b"], n),
        }
    )
    frame.loc[rng.choice(n, n // 10, replace=False), "age"] = np.nan
    frame.loc[rng.choice(n, n // 10, replace=False), "site"] = None
    logit = 0.05 * (frame["age"].fillna(50) - 50) + (frame["site"] == "north") - 0.3
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    return frame, y


def _round_trip(model, path):
    save_model(model, path, metadata={"note": "pipeline"})
    loaded, metadata = load_model(path, with_metadata=True)
    assert metadata == {"note": "pipeline"}
    assert type(loaded) is type(model)
    return loaded


def test_standard_scaler_and_forest_round_trip_bit_identical(tmp_path):
    X = np.random.default_rng(0).normal(size=(400, 4)) * [1, 10, 100, 1000]
    y = (X[:, 0] + X[:, 1] / 10 > 0).astype(int)
    model = make_pipeline(
        StandardScaler(), RankingForest(n_estimators=8, random_state=0)
    ).fit(X, y)
    loaded = _round_trip(model, tmp_path / "pipe.trk")
    X_new = np.random.default_rng(1).normal(size=(300, 4)) * [1, 10, 100, 1000]
    for data in (X, X_new):
        np.testing.assert_array_equal(
            loaded.decision_function(data), model.decision_function(data)
        )
        np.testing.assert_array_equal(
            loaded.predict_proba(data), model.predict_proba(data)
        )
    np.testing.assert_array_equal(loaded[0].mean_, model[0].mean_)
    assert loaded.named_steps["rankingforest"].n_estimators == 8


def test_column_transformer_pipeline_round_trip_bit_identical(tmp_path):
    frame, y = _frame(500, random_state=0)
    numeric = make_pipeline(SimpleImputer(add_indicator=True), RobustScaler())
    columns = ColumnTransformer(
        [
            ("numeric", numeric, ["age"]),
            ("dose", MinMaxScaler(), ["dose"]),
            ("site", OneHotEncoder(handle_unknown="ignore"), ["site"]),
            (
                "grade",
                OrdinalEncoder(categories=[["low", "mid", "high"]]),
                ["grade"],
            ),
            ("comment", "drop", ["comment"]),
        ],
        remainder="passthrough",
        n_jobs=2,
    )
    model = Pipeline(
        [
            ("columns", columns),
            ("scale", MaxAbsScaler()),
            ("rank", TreeRank(random_state=0)),
        ],
        memory=str(tmp_path / "cache"),  # a folder of this machine
    ).fit(frame, y)
    loaded = _round_trip(model, tmp_path / "columns.trk")
    new, _ = _frame(300, random_state=1)
    new.loc[0, "site"] = "west"  # a category unseen in training
    for data in (frame, new):
        np.testing.assert_array_equal(
            loaded.decision_function(data), model.decision_function(data)
        )
    np.testing.assert_array_equal(loaded[:-1].transform(new), model[:-1].transform(new))
    assert list(loaded[0].get_feature_names_out()) == list(
        model[0].get_feature_names_out()
    )
    # runtime settings are not taken from the file
    assert loaded[0].n_jobs is None and loaded.memory is None


def test_a_column_transformer_alone(tmp_path):
    frame, _ = _frame(200, random_state=2)
    columns = ColumnTransformer(
        [("site", OneHotEncoder(sparse_output=False), ["site", "grade"])],
        remainder=StandardScaler(),
    ).fit(frame.drop(columns=["comment", "age"]))
    loaded = _round_trip(columns, tmp_path / "ct.trk")
    data = frame.drop(columns=["comment", "age"])
    np.testing.assert_array_equal(loaded.transform(data), columns.transform(data))


@pytest.mark.parametrize(
    ("step", "message"),
    [
        (PCA(n_components=2), "sklearn.decomposition._pca.PCA cannot be saved"),
        (FunctionTransformer(np.log1p), "a function is code"),
    ],
)
def test_unsupported_steps_are_refused_by_name(tmp_path, step, message):
    X = np.abs(np.random.default_rng(0).normal(size=(100, 3)))
    y = (X[:, 0] > 0.7).astype(int)
    model = make_pipeline(step, TreeRank(random_state=0)).fit(X, y)
    with pytest.raises(ValueError, match=message):
        save_model(model, tmp_path / "m.trk")
    assert not (tmp_path / "m.trk").exists()
    other = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    with pytest.raises(ValueError, match="LogisticRegression cannot be saved"):
        save_model(other, tmp_path / "m.trk")


def _tamper(path, edit):
    """Apply ``edit`` to model.json and recompute the checksums."""
    rewrite_description(path, edit)


def _saved_pipeline(tmp_path):
    X = np.random.default_rng(0).normal(size=(200, 3))
    y = (X[:, 0] > 0).astype(int)
    path = tmp_path / "pipe.trk"
    save_model(
        make_pipeline(StandardScaler(), TreeRank(random_state=0)).fit(X, y), path
    )
    return path


def _step(description, index):
    steps = dict(description["root"]["object"]["state"])["steps"]["list"]
    return steps[index]["tuple"][1]


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: _step(d, 0)["object"].update({"class": "posix.system"}),
            "names the untrusted type 'posix.system'",
        ),
        (
            lambda d: _step(d, 0)["object"].update({"class": "LogisticRegression"}),
            "names the untrusted type 'LogisticRegression'",
        ),
        (
            lambda d: _step(d, 1)["treerank"]["description"].update(
                {"estimator": "builtins.eval"}
            ),
            "names the untrusted type 'builtins.eval'",
        ),
        (
            lambda d: _step(d, 0)["object"]["state"].append(
                ["copy", {"callable": "os.system"}]
            ),
            "unknown value tag 'callable'",
        ),
        (
            lambda d: _step(d, 0)["object"]["state"].append(
                ["copy", {"numpy_type": "object_"}]
            ),
            "untrusted type 'object_'",
        ),
        (
            lambda d: _step(d, 0)["object"]["state"].append(
                ["mean_", {"array": "../../etc/passwd"}]
            ),
            "missing array",
        ),
        (
            lambda d: _step(d, 0)["object"]["state"].append(
                ["__class__", {"numpy_type": "float64"}]
            ),
            "attribute names \\['__class__'\\] are not allowed",
        ),
        (  # an attribute the class does not have (issue 26: exact attributes)
            lambda d: _step(d, 0)["object"]["state"].append(["x", {"list": [1, 2]}]),
            r"StandardScaler has no attribute \['x'\]",
        ),
    ],
)
def test_a_file_naming_an_untrusted_type_is_refused(tmp_path, edit, message):
    path = _saved_pipeline(tmp_path)
    _tamper(path, edit)
    if message is None:  # a harmless extra attribute still loads
        assert isinstance(load_model(path), Pipeline)
        return
    with pytest.raises(ModelFileError, match=message):
        load_model(path)


def test_deep_nesting_is_refused(tmp_path):
    path = _saved_pipeline(tmp_path)
    bomb = 1
    for _ in range(200):
        bomb = {"list": [bomb]}

    _tamper(path, lambda d: _step(d, 0)["object"]["state"].append(["x", bomb]))
    with pytest.raises(ModelFileError, match=r"nested (more than|[0-9]+ levels deep)"):
        load_model(path)


def test_a_function_transformer_with_a_function_is_refused_at_load(tmp_path):
    X = np.random.default_rng(0).normal(size=(100, 2))
    y = (X[:, 0] > 0).astype(int)
    columns = ColumnTransformer([("a", StandardScaler(), [0])], remainder="passthrough")
    path = tmp_path / "ct.trk"
    save_model(make_pipeline(columns, TreeRank(random_state=0)).fit(X, y), path)

    def give_it_a_function(description):
        text = json.dumps(description).replace(
            '["func", null]', '["func", {"numpy_type": "float64"}]'
        )
        description.clear()
        description.update(json.loads(text))

    _tamper(path, give_it_a_function)
    with pytest.raises(ModelFileError, match="a function is code"):
        load_model(path)


def test_trusted_types_are_the_documented_ones():
    assert sorted(TRUSTED_TYPES) == [
        "ColumnTransformer",
        "FunctionTransformer",
        "MaxAbsScaler",
        "MinMaxScaler",
        "MissingIndicator",
        "OneHotEncoder",
        "OrdinalEncoder",
        "Pipeline",
        "RobustScaler",
        "SimpleImputer",
        "StandardScaler",
    ]


# ----------------------------------------------------------------------
# issue 26: the reproducers of the audit, each resealed as an attacker would
# ----------------------------------------------------------------------
def _audit_pipeline(tmp_path):
    """Pipeline(SimpleImputer, StandardScaler, TreeRank), as in the audit."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    X[rng.random((400, 4)) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + rng.normal(size=400) > 0).astype(int)
    model = make_pipeline(SimpleImputer(), StandardScaler(), TreeRank(random_state=0))
    path = tmp_path / "pipe.trk"
    save_model(model.fit(X, y), path)
    return path


def _state(description, step):
    steps = description["root"]["object"]["state"][0][1]["list"]
    return steps[step]["tuple"][1]["object"]["state"]


def _steps(description):
    return description["root"]["object"]["state"][0][1]["list"]


def _entry(state, key):
    """The ``[key, value]`` entry of a state."""
    return next(entry for entry in state if entry[0] == key)


def _set_value(state, key, value):
    _entry(state, key)[1] = value


def _duplicate_scaler(d):
    steps = _steps(d)
    steps.insert(1, json.loads(json.dumps(steps[1])))  # the scaler applied twice
    steps[1]["tuple"][0] = "standardscaler"


def _strings(d, itemsize, count):
    _state(d, 0).append(
        [
            "statistics_",
            {
                "strings": {
                    "dtype": f"<U{itemsize}",
                    "shape": [count],
                    "values": ["a"] * count,
                }
            },
        ]
    )


AUDIT = {
    # name: (edit of the description, message)
    "transform shadowed": (
        lambda d: _state(d, 1).append(["transform", {"numpy_type": "float64"}]),
        r"the attributes \['transform'\] would shadow StandardScaler's own methods",
    ),
    "decision_function shadowed on the root": (
        lambda d: d["root"]["object"]["state"].append(
            ["decision_function", {"numpy_type": "bool"}]
        ),
        r"attributes \['decision_function'\] would shadow Pipeline's own",
    ),
    "a private method shadowed": (
        lambda d: _state(d, 1).append(["_validate_params", None]),
        "would shadow",
    ),
    "duplicated step name": (
        lambda d: _steps(d)[1]["tuple"].__setitem__(0, "simpleimputer"),
        r"step names must be distinct; \['simpleimputer'\] appear twice",
    ),
    "the scaler applied twice": (
        _duplicate_scaler,
        r"\['standardscaler'\] appear twice",
    ),
    "a step named like a parameter": (
        lambda d: _steps(d)[0]["tuple"].__setitem__(0, "memory"),
        r"step names \['memory'\] are parameter names",
    ),
    "a step name with __": (
        lambda d: _steps(d)[0]["tuple"].__setitem__(0, "a__b"),
        "without '__'",
    ),
    "with_mean missing": (
        lambda d: _state(d, 1).pop(0),
        r"the parameters \['with_mean'\] are missing",
    ),
    "a fitted attribute missing": (
        lambda d: _state(d, 1).__setitem__(
            slice(None), [kv for kv in _state(d, 1) if kv[0] != "scale_"]
        ),
        r"the fitted attributes \['scale_'\] are missing",
    ),
    "strategy a callable": (
        lambda d: _set_value(_state(d, 0), "strategy", {"numpy_type": "float64"}),
        "strategy is the type float64: a file holds no code",
    ),
    "scale_ of another length": (
        lambda d: _set_value(_state(d, 1), "n_features_in_", 3),
        r"mean_ must have shape \(3,\); got \(4,\)",
    ),
    "scale_ not a square root": (
        lambda d: _set_value(_state(d, 1), "var_", _entry(_state(d, 1), "mean_")[1]),
        "scale_ must be the square root of var_|var_ must be >= 0",
    ),
    "strings of 2.5 million characters": (
        lambda d: _strings(d, 2_500_000, 200),
        r"<U2500000 x \[200\] would take 2000000000 bytes",
    ),
    "strings of 25 million characters": (
        lambda d: _strings(d, 25_000_000, 400),
        r"<U25000000 x \[400\] would take 40000000000 bytes",
    ),
    "a nested object where a number is": (
        lambda d: _set_value(_state(d, 1), "n_features_in_", {"list": [4]}),
        "n_features_in_ must be an integer",
    ),
}


@pytest.mark.parametrize("case", sorted(AUDIT))
def test_the_audit_reproducers_are_refused(tmp_path, case):
    from treerank.model_io._archive import read_archive, write_archive

    edit, message = AUDIT[case]
    description, arrays = read_archive(_audit_pipeline(tmp_path))
    edit(description)
    write_archive(tmp_path / "edited.trk", description, arrays)
    with pytest.raises(ModelFileError, match=message):
        load_model(tmp_path / "edited.trk")


def test_every_trusted_type_states_no_class_attribute():
    """The attributes a file may give an object never shadow its class's."""
    from treerank.model_io._sklearn_state import (
        COMMON_OPTIONAL,
        FITTED,
        OPTIONAL_FITTED,
        _param_names,
    )

    for cls in TRUSTED_TYPES.values():
        names = (
            set(_param_names(cls))
            | FITTED[cls]
            | OPTIONAL_FITTED.get(cls, set())
            | COMMON_OPTIONAL
        )
        shadowing = [name for name in names if hasattr(cls, name)]
        # Pipeline's feature_names_in_ is a property: the shadow check refuses it
        assert shadowing == (["feature_names_in_"] if cls is Pipeline else []), cls


def test_a_pipeline_that_cannot_load_is_not_saved(tmp_path):
    X = np.random.default_rng(0).normal(size=(100, 2))
    y = (X[:, 0] > 0).astype(int)
    model = make_pipeline(StandardScaler(), TreeRank(random_state=0)).fit(X, y)
    model[0].scale_ = model[0].scale_[:1]  # broken after fit
    with pytest.raises(ValueError, match=r"cannot be saved: .*scale_ must have shape"):
        save_model(model, tmp_path / "m.trk")
    assert not (tmp_path / "m.trk").exists()
