"""The peers of the accuracy benchmarks, as a user gets them.

Every peer runs at the defaults its library gives, with the data as a table:
text columns are pandas ``category`` columns and missing values stay missing.
Each model takes the categories the way its library offers:

- scikit-learn's random forests and extremely randomized trees have no
  categorical splits: categories are one-hot encoded (a column per level, NaN
  its own level); missing numbers stay NaN (both split on them natively);
- ``HistGradientBoostingClassifier``, LightGBM and XGBoost split pandas
  categories natively (XGBoost with ``enable_categorical=True``);
- CatBoost takes the category columns as ``cat_features`` (missing categories
  as the level ``"NA"``, as CatBoost refuses NaN there);
- treerank's estimators take the table as it is.

Two peers are tuned by an inner 3-fold cross-validation on the training part
only (``GridSearchCV(scoring="roc_auc")``), over small grids of the
parameters that matter most, then refitted on the whole training part:
``RF(tuned)`` and ``LightGBM(tuned)``.

Every model gets ``random_state`` (``random_seed`` for CatBoost) and
``n_jobs`` threads (one thread when fit times are compared).
"""

import numpy as np
import pandas as pd

__all__ = [
    "PEER_SPECS",
    "make_peer",
    "peer_scores",
]

# label -> (library, constructor text written in the report)
PEER_SPECS = {
    "RF100": ("scikit-learn", "RandomForestClassifier()"),
    "RF300": ("scikit-learn", "RandomForestClassifier(n_estimators=300)"),
    "ET100": ("scikit-learn", "ExtraTreesClassifier()"),
    "ET300": ("scikit-learn", "ExtraTreesClassifier(n_estimators=300)"),
    "HGB": ("scikit-learn", "HistGradientBoostingClassifier()"),
    "LightGBM": ("lightgbm", "LGBMClassifier(verbose=-1)"),
    "XGBoost": ("xgboost", "XGBClassifier(enable_categorical=True)"),
    "CatBoost": ("catboost", "CatBoostClassifier(verbose=0)"),
    "RF(tuned)": (
        "scikit-learn",
        "GridSearchCV(RandomForestClassifier(), {max_features: [sqrt, 0.33], "
        "min_samples_leaf: [1, 5, 20]}, cv=3)",
    ),
    "LightGBM(tuned)": (
        "lightgbm",
        "GridSearchCV(LGBMClassifier(verbose=-1), {num_leaves: [15, 63], "
        "learning_rate: [0.03, 0.1], n_estimators: [100, 400]}, cv=3)",
    ),
}

# the features drawn per split and the leaf size: larger draws where few
# features carry the signal, larger leaves where the labels are noisy (a third
# of the features rather than all of them: a few sets have 200 to 1,600)
RF_GRID = {"max_features": ["sqrt", 0.33], "min_samples_leaf": [1, 5, 20]}
LGBM_GRID = {
    "num_leaves": [15, 63],
    "learning_rate": [0.03, 0.1],
    "n_estimators": [100, 400],
}


def _categorical_columns(X):
    if not isinstance(X, pd.DataFrame):
        return []
    return [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]


def _one_hot(estimator, categorical):
    """``estimator`` behind a one-hot encoding of the ``categorical`` columns."""
    if not categorical:
        return estimator
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    encoder = ColumnTransformer(
        [
            (
                "one_hot",
                OneHotEncoder(handle_unknown="ignore", sparse_output=False),
                categorical,
            )
        ],
        remainder="passthrough",
        verbose_feature_names_out=False,
    )
    return make_pipeline(encoder, estimator)


class _CatBoostTable:
    """CatBoost with the table's category columns as ``cat_features``."""

    def __init__(self, categorical, seed, n_jobs):
        self.categorical = categorical
        self.random_state = seed
        self.n_jobs = n_jobs

    def get_params(self, deep=True):
        return {"random_state": self.random_state}

    def set_params(self, **params):
        self.random_state = params.pop("random_state", self.random_state)
        if params:
            raise ValueError(f"unknown parameters {sorted(params)}")
        return self

    def _prepare(self, X):
        if not self.categorical:
            return X
        X = X.copy()
        for column in self.categorical:
            X[column] = X[column].astype(object).where(X[column].notna(), "NA")
            X[column] = X[column].astype(str)
        return X

    def fit(self, X, y):
        from catboost import CatBoostClassifier

        self.model = CatBoostClassifier(
            verbose=0,
            random_seed=self.random_state,
            thread_count=self.n_jobs,
            cat_features=self.categorical or None,
            allow_writing_files=False,
        )
        self.model.fit(self._prepare(X), y)
        return self

    def decision_function(self, X):
        return self.model.predict(self._prepare(X), prediction_type="RawFormulaVal")


def make_peer(label, X, seed=0, n_jobs=1):
    """A fresh estimator for the peer ``label`` of :data:`PEER_SPECS`.

    ``X`` is the training table (its category columns decide the encoding).
    """
    categorical = _categorical_columns(X)
    if label in ("RF100", "RF300", "ET100", "ET300", "RF(tuned)"):
        from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier

        cls = ExtraTreesClassifier if label.startswith("ET") else RandomForestClassifier
        n_estimators = 300 if label.endswith("300") else 100
        forest = cls(n_estimators=n_estimators, random_state=seed, n_jobs=n_jobs)
        if label != "RF(tuned)":
            return _one_hot(forest, categorical)
        from sklearn.model_selection import GridSearchCV, StratifiedKFold

        model = _one_hot(forest, categorical)
        prefix = "randomforestclassifier__" if categorical else ""
        grid = {prefix + k: v for k, v in RF_GRID.items()}
        return GridSearchCV(
            model,
            grid,
            scoring="roc_auc",
            cv=StratifiedKFold(3, shuffle=True, random_state=seed),
            n_jobs=1,
        )
    if label == "HGB":
        from sklearn.ensemble import HistGradientBoostingClassifier

        return HistGradientBoostingClassifier(
            random_state=seed, categorical_features="from_dtype"
        )
    if label in ("LightGBM", "LightGBM(tuned)"):
        from lightgbm import LGBMClassifier

        model = LGBMClassifier(verbose=-1, random_state=seed, n_jobs=n_jobs)
        if label == "LightGBM":
            return model
        from sklearn.model_selection import GridSearchCV, StratifiedKFold

        return GridSearchCV(
            model,
            LGBM_GRID,
            scoring="roc_auc",
            cv=StratifiedKFold(3, shuffle=True, random_state=seed),
            n_jobs=1,
        )
    if label == "XGBoost":
        from xgboost import XGBClassifier

        return XGBClassifier(
            enable_categorical=True,
            tree_method="hist",
            random_state=seed,
            n_jobs=n_jobs,
        )
    if label == "CatBoost":
        return _CatBoostTable(categorical, seed, n_jobs)
    raise ValueError(f"unknown peer {label!r}; expected one of {list(PEER_SPECS)}")


def peer_scores(estimator, X):
    """Ranking scores of a fitted peer: a margin where there is one, else P(y=1).

    Margins (boosting's raw scores) do not saturate into ties at 0 and 1 as
    probabilities can; a forest's score is its predicted probability.
    """
    model = getattr(estimator, "best_estimator_", estimator)
    name = type(model).__name__
    if name == "LGBMClassifier":
        return model.predict(X, raw_score=True)
    if name == "XGBClassifier":
        return model.predict(X, output_margin=True)
    if name in ("_CatBoostTable", "HistGradientBoostingClassifier"):
        return model.decision_function(X)
    return np.asarray(model.predict_proba(X))[:, 1]
