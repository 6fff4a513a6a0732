"""Columns no estimator can read: the package's own error, naming the column.

The audit: a datetime column raised numpy's ``DTypePromotionError`` naming no
column, and duplicate column names narwhals' ``DuplicateError``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
import pandas as pd
import pytest

from treerank import RankingForest, TreeRank
from treerank.exceptions import FeatureError
from treerank.surrogates import LinearSurrogateRanker
from treerank.tree import LeafRank


def _data(n=60):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    return X, np.arange(n) % 2


ESTIMATORS = [
    lambda: TreeRank(max_depth=2, random_state=0),
    lambda: RankingForest(n_estimators=3, random_state=0),
    lambda: LeafRank(random_state=0),
    lambda: LinearSurrogateRanker(loss="squared"),
]


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize(
    ("column", "match"),
    [
        (pd.date_range("2020-01-01", periods=60), "'when' holds dates or times"),
        (
            pd.date_range("2020-01-01", periods=60, tz="Europe/Paris"),
            r"'when' holds dates or times \(dtype datetime64\[.*Europe/Paris\]\)",
        ),
        (pd.timedelta_range("1D", periods=60), "'when' holds durations"),
        (pd.period_range("2020-01", periods=60, freq="M"), "'when' holds dates"),
    ],
)
def test_dates_and_durations_are_refused_by_name(make, column, match):
    X, y = _data()
    with pytest.raises(FeatureError, match=match):
        make().fit(X.assign(when=column), y)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_duplicate_column_names_are_refused(make):
    X, y = _data()
    twice = pd.concat([X, X[["a"]]], axis=1)
    with pytest.raises(FeatureError, match=r"duplicate column names: 'a' \(2 times\)"):
        make().fit(twice, y)
    model = make().fit(X, y)
    same_names = pd.DataFrame(X.to_numpy(), columns=["a", "a"])
    predict = getattr(model, "decision_function", None) or model.predict
    with pytest.raises(FeatureError, match="duplicate column names"):
        predict(same_names)


def test_a_date_column_at_predict_time_is_refused():
    X, y = _data()
    model = TreeRank(max_depth=2, random_state=0).fit(X, y)
    when = pd.date_range("2020-01-01", periods=60)
    with pytest.raises(FeatureError, match="'b' holds dates or times"):
        model.decision_function(X.assign(b=when))
