"""Write the model-file fixtures of ``test_model_file_fixtures.py``.

Run from the repository root: ``python tests/data/model_files/generate.py``.
The committed files were written by the code of commit 858b3ab (before the
model_io modules were split by concept, issue 27); they are kept as written,
so that files of that version must keep loading and predicting identically.
Regenerating them with a later version tests nothing about older files.

Every model ``<name>.trk`` comes with ``<name>.npz``: the input ``X`` (or the
columns ``X__<column>`` of a data frame) and the fitted model's predictions
on it before saving (``decision_function``, ``predict_proba``, ``predict``
and, for a TreeRank or RankingForest, ``apply``).
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from treerank import (
    ClassifierLeafRank,
    LeafRank,
    LinearLeafRank,
    MixedLeafRank,
    RankingForest,
    TreeRank,
)
from treerank.model_io import load_model, save_model

HERE = Path(__file__).resolve().parent


def bipartite(n, random_state, missing=True):
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n, 3))
    logit = 1.5 * X[:, 0] - X[:, 1] + 0.5 * X[:, 0] * X[:, 2]
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    if missing:
        X[rng.choice(n, n // 12, replace=False), 1] = np.nan
    return X, y


def graded(n, random_state):
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n, 3))
    latent = X[:, 0] - 0.7 * X[:, 2] + rng.logistic(size=n) * 0.7
    y = np.digitize(latent, [-0.8, 0.0, 0.8])  # four grades 0..3
    return X, y


def categorical(n, random_state):
    rng = np.random.default_rng(random_state)
    X = rng.normal(size=(n, 3))
    X[:, 2] = rng.integers(0, 5, n)  # a categorical column, codes 0..4
    logit = X[:, 0] + np.where(np.isin(X[:, 2], [1, 3]), 1.0, -1.0)
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    return X, y


def frame(n, random_state):
    rng = np.random.default_rng(random_state)
    data = pd.DataFrame(
        {
            "age": rng.normal(50, 10, n),
            "dose": rng.exponential(2.0, n),
            "site": rng.choice(["north", "south", "east"], n),
        }
    )
    data.loc[rng.choice(n, n // 10, replace=False), "age"] = np.nan
    logit = 0.08 * (data["age"].fillna(50) - 50) + (data["site"] == "north") - 0.3
    y = (rng.uniform(size=n) < 1 / (1 + np.exp(-logit))).astype(int)
    return data, y


def forest(**params):
    defaults = {"n_estimators": 4, "max_depth": 3, "random_state": 0}
    return RankingForest(**{**defaults, **params})


def models():
    X, y = bipartite(240, 0)
    X_new, _ = bipartite(60, 1)
    X_lin, y_lin = bipartite(240, 0, missing=False)
    X_lin_new, _ = bipartite(60, 1, missing=False)
    X_g, y_g = graded(240, 2)
    X_g_new, _ = graded(60, 3)
    X_c, y_c = categorical(240, 4)
    X_c_new, _ = categorical(60, 5)
    F, y_f = frame(240, 6)
    F_new, _ = frame(60, 7)
    tree_params = {"max_depth": 3, "random_state": 0}
    # the LeafRank defaults of 858b3ab, spelled out since LeafRank()'s own
    # defaults became TreeRank's (issue 41): the same models are fitted today
    leafrank = LeafRank(max_depth=2, min_samples_leaf=50, criterion="gini")
    yield "treerank", TreeRank(**tree_params), X, y, X_new, {}
    yield (
        "treerank_pruned_cv",
        TreeRank(pruning="cv", cv=3, leafrank=leafrank, **tree_params),
        X,
        y,
        X_new,
        {},
    )
    yield (
        "treerank_linear",
        TreeRank(leafrank=LinearLeafRank(), **tree_params),
        X_lin,
        y_lin,
        X_lin_new,
        {},
    )
    yield (
        "treerank_classifier",
        TreeRank(leafrank=ClassifierLeafRank(LogisticRegression()), **tree_params),
        X_lin,
        y_lin,
        X_lin_new,
        {},
    )
    yield (
        "treerank_mixed",
        TreeRank(leafrank=MixedLeafRank(random_state=0), **tree_params),
        X_lin,
        y_lin,
        X_lin_new,
        {},
    )
    yield (
        "treerank_graded",
        TreeRank(leafrank=leafrank, **tree_params),
        X_g,
        y_g,
        X_g_new,
        {},
    )
    yield "forest_median", forest(leafrank=leafrank), X, y, X_new, {}
    yield (
        "forest_median_training_data",
        forest(leafrank=leafrank, random_state=1),
        X,
        y,
        X_new,
        {"include_training_data": True},
    )
    yield "forest_mean", forest(aggregation="mean", leafrank=leafrank), X, y, X_new, {}
    yield (
        "forest_borda",
        forest(aggregation="borda", leaf_scores="rate", leafrank=leafrank),
        X,
        y,
        X_new,
        {},
    )
    yield (
        "forest_linear",
        forest(leafrank=LinearLeafRank(), max_features=None),
        X_lin,
        y_lin,
        X_lin_new,
        {},
    )
    yield (
        "forest_mixed",
        forest(leafrank=MixedLeafRank(random_state=0), max_features=None),
        X_lin,
        y_lin,
        X_lin_new,
        {},
    )
    yield (
        "forest_categorical",
        forest(categorical_features=[2], leafrank=leafrank),
        X_c,
        y_c,
        X_c_new,
        {},
    )
    yield "forest_graded_stacked", forest(leafrank=leafrank), X_g, y_g, X_g_new, {}
    yield (
        "forest_graded_thresholds",
        forest(multipartite="thresholds", n_estimators=6, leafrank=leafrank),
        X_g,
        y_g,
        X_g_new,
        {},
    )
    yield (
        "pipeline_scaler_forest",
        make_pipeline(SimpleImputer(), StandardScaler(), forest(leafrank=leafrank)),
        X,
        y,
        X_new,
        {},
    )
    yield (
        "pipeline_columns_treerank",
        Pipeline(
            [
                (
                    "columns",
                    ColumnTransformer(
                        [
                            ("numbers", SimpleImputer(), ["age", "dose"]),
                            ("site", OneHotEncoder(handle_unknown="ignore"), ["site"]),
                        ]
                    ),
                ),
                ("rank", TreeRank(**tree_params)),
            ]
        ),
        F,
        y_f,
        F_new,
        {},
    )


def predictions(model, X):
    out = {
        "decision_function": model.decision_function(X),
        "predict_proba": model.predict_proba(X),
        "predict": model.predict(X),
    }
    if isinstance(model, (TreeRank, RankingForest)):
        out["apply"] = model.apply(X)
    return out


def inputs(X):
    if isinstance(X, pd.DataFrame):
        return {
            f"X__{column}": X[column].to_numpy(
                dtype=np.float64 if pd.api.types.is_numeric_dtype(X[column]) else str
            )
            for column in X.columns
        }
    return {"X": X}


def main(names):
    for name, model, X, y, X_new, options in models():
        if names and name not in names:
            continue
        model.fit(X, y)
        expected = predictions(model, X_new)
        path = HERE / f"{name}.trk"
        save_model(model, path, metadata={"fixture": name}, **options)
        loaded = load_model(path)
        for what, values in predictions(loaded, X_new).items():
            np.testing.assert_array_equal(values, expected[what], err_msg=name)
        np.savez_compressed(HERE / f"{name}.npz", **inputs(X_new), **expected)
        print(f"{name}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
