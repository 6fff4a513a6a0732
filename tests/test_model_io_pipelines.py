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
