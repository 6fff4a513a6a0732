"""Categorical features at prediction time: codes, unseen labels, reordering.

The audit: a forest fitted on a pandas categorical column and asked to score
``df.c.cat.codes`` (or labels it never saw) gave no warning while its AUC
fell from 1.000 to 0.717. Codes are now refused, many unseen values warned
about (naming the column), and reordered categories score identically.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import warnings

import numpy as np
import pandas as pd
import pytest

from treerank import RankingForest, TreeRank
from treerank.cli import main
from treerank.exceptions import FeatureError, UnseenCategoryWarning
from treerank.model_io import load_model, save_model
from treerank.utils import CategoryEncoder
from treerank.utils._categorical import UNSEEN_CATEGORY_SHARE

ESTIMATORS = {
    "tree": lambda: TreeRank(max_depth=3, random_state=0),
    "forest": lambda: RankingForest(n_estimators=5, random_state=0),
}


def _problem(n=240, seed=0):
    rng = np.random.default_rng(seed)
    c = rng.choice(["b", "a", "d", "c"], n)
    X = pd.DataFrame(
        {
            "c": pd.Categorical(c, categories=["a", "b", "c", "d"]),
            "x": rng.normal(size=n),
        }
    )
    y = np.isin(c, ["a", "c"]).astype(int)
    return X, y


@pytest.fixture(scope="module", params=sorted(ESTIMATORS))
def fitted(request):
    X, y = _problem()
    return ESTIMATORS[request.param]().fit(X, y), X, y


def test_codes_instead_of_labels_are_refused(fitted, tmp_path):
    model, X, _ = fitted
    codes = X.assign(c=X["c"].cat.codes)
    with pytest.raises(FeatureError, match=r"'c' was fitted on text categories"):
        model.decision_function(codes)
    with pytest.raises(FeatureError, match=r"\.cat\.codes"):
        model.decision_function(codes.assign(c=codes["c"].astype(float)))
    # as an array of objects, and after a round trip through a model file
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "X does not have valid feature names")
        with pytest.raises(FeatureError, match="feature 0"):
            model.decision_function(codes.to_numpy(dtype=object))
    save_model(model, tmp_path / "m.trk")
    with pytest.raises(FeatureError, match="'c'"):
        load_model(tmp_path / "m.trk").decision_function(codes)
    # a FeatureError is a ValueError, as scikit-learn's input errors are
    assert issubclass(FeatureError, ValueError)


def test_missing_codes_are_still_missing_values(fitted):
    model, X, _ = fitted
    missing = X.assign(c=np.nan)  # a float column of NaN: missing, not codes
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = model.decision_function(missing)
    np.testing.assert_array_equal(
        scores, model.decision_function(X.assign(c=pd.Series([None] * len(X))))
    )


def test_unseen_labels_warn_with_the_column_and_score_as_missing(fitted):
    model, X, _ = fitted
    upper = X.assign(c=X["c"].astype(str).str.upper())
    with pytest.warns(UnseenCategoryWarning) as caught:
        scores = model.decision_function(upper)
    assert len(caught) == 1
    message = str(caught[0].message)
    assert f"'c': {len(X)} of {len(X)} values (100%)" in message
    assert "'A'" in message and "'a', 'b', 'c', 'd'" in message
    # the warning points at the caller, not inside treerank
    assert caught[0].filename == __file__
    as_missing = X.assign(c=pd.Series([None] * len(X), dtype=object))
    np.testing.assert_array_equal(scores, model.decision_function(as_missing))


def test_a_few_unseen_values_below_the_share_are_silent(fitted):
    model, X, _ = fitted
    some = X["c"].astype(object).copy()
    n_unseen = int(UNSEEN_CATEGORY_SHARE * len(X))  # at the share: silent
    some.iloc[:n_unseen] = "new"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.decision_function(X.assign(c=some))
    some.iloc[: n_unseen + 1] = "new"  # past it: warned
    with pytest.warns(UnseenCategoryWarning, match=f"{n_unseen + 1} of {len(X)}"):
        model.decision_function(X.assign(c=some))


def test_reordered_or_extended_categories_score_identically(fitted):
    model, X, _ = fitted
    expected = model.decision_function(X)
    reordered = X.assign(c=X["c"].cat.reorder_categories(["d", "c", "b", "a"]))
    extended = X.assign(c=X["c"].cat.add_categories(["z"]))
    as_text = X.assign(c=X["c"].astype(str))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for frame in (reordered, extended, as_text):
            np.testing.assert_array_equal(model.decision_function(frame), expected)


def test_text_instead_of_numeric_categories_is_refused():
    X, y = _problem()
    numbers = X.assign(c=X["c"].cat.codes.astype("category"))
    model = TreeRank(max_depth=3, random_state=0).fit(numbers, y)
    as_text = numbers.assign(c=numbers["c"].astype(str))
    with pytest.raises(FeatureError, match="fitted on number categories"):
        model.decision_function(as_text)
    # the numbers themselves score as in fit
    np.testing.assert_array_equal(
        model.decision_function(numbers.assign(c=numbers["c"].astype(int))),
        model.decision_function(numbers),
    )


def test_encoder_counts_unseen_values():
    encoder = CategoryEncoder().fit(pd.DataFrame({"city": ["Lyon", "Oslo"], "x": 1}))
    counts = encoder.unseen_categories(
        pd.DataFrame({"city": ["Rome", "Rome", None, "Oslo"], "x": 2})
    )
    assert list(counts) == [0]
    n_present, values = counts[0]
    assert n_present == 3 and values.tolist() == ["Rome", "Rome"]
    # transform can skip the checks
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        codes = encoder.transform(
            pd.DataFrame({"city": [0, 1], "x": 2}), check_unseen=False
        )
    assert np.isnan(codes[:, 0]).all()


def _write(path, frame, y=None):
    frame = frame.copy()
    if y is not None:
        frame["label"] = y
    frame.to_csv(path, index=False)


def test_cli_reports_unseen_categories_once_per_file(tmp_path, capsys):
    X, y = _problem()
    train, new = tmp_path / "train.csv", tmp_path / "new.csv"
    _write(train, X, y)
    model = tmp_path / "m.trk"
    assert main(["fit", str(train), "--target", "label", "--out", str(model)]) == 0
    capsys.readouterr()
    # the codes of the categories, in chunks of 50 rows: one warning, whole file
    _write(new, X.assign(c=X["c"].cat.codes))
    scores = tmp_path / "s.csv"
    status = main(
        ["score", str(model), str(new), "--chunk-size", "50", "--out", str(scores)]
    )
    err = capsys.readouterr().err
    assert status == 0, err
    assert err.count("warning:") == 1
    assert (
        f"treerank score: warning: column 'c': {len(X)} of {len(X)} values (100%) "
        "are categories the model never saw (such as '" in err
    )
    assert "The model's categories are 'a', 'b', 'c', 'd'." in err
    # a few unseen values: silent
    few = X["c"].astype(str).copy()
    few.iloc[:3] = "new"
    _write(new, X.assign(c=few))
    status = main(["score", str(model), str(new), "--out", str(scores), "--force"])
    err = capsys.readouterr().err
    assert status == 0 and "warning" not in err
    # explain counts the same way
    _write(new, X.assign(c=X["c"].astype(str).str.upper()))
    status = main(
        ["explain", str(model), str(new), "--background", str(train), "--out", "-"]
    )
    err = capsys.readouterr().err
    assert status == 0, err
    assert err.count("treerank explain: warning: column 'c'") == 1
