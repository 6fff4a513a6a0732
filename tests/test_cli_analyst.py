"""An analyst's day with the command line (issue 39), end to end.

A credit table as analysts get them: text columns, a text target with a
third value, an R-style row-number column, an empty column and a constant
one. ``fit`` (the forest by default), ``score``, ``explain``, ``compare`` and
``export`` run on it; a model saved from Python, and one fitted on an array,
are scored and explained by the command line.
"""

import csv

import numpy as np
import pandas as pd
import pytest

from treerank import RankingForest, TreeRank
from treerank.cli import main
from treerank.inspection import calibrated_score
from treerank.model_io import load_model, save_model


def _run(args, capsys):
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _read(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


def _applications(n, seed):
    rng = np.random.RandomState(seed)
    income = rng.lognormal(10.5, 0.5, n).round(0)
    debt = rng.uniform(0, 0.6, n).round(3)
    purpose = rng.choice(["car", "home", "education", "other"], n)
    risk = 3 * debt - np.log(income / 30000) + (purpose == "other") * 0.8
    risk += rng.normal(0, 0.6, n)
    deny = np.where(risk > np.quantile(risk, 0.7), "yes", "no").astype(object)
    deny[rng.rand(n) < 0.03] = "maybe"  # a third value: counted as negative
    return pd.DataFrame(
        {
            "rownames": np.arange(1, n + 1),
            "income": income,
            "debt_ratio": debt,
            "purpose": purpose,
            "comment": "",  # an empty column
            "branch": "north",  # a constant one
            "deny": deny,
        }
    )


@pytest.fixture(scope="module")
def day(tmp_path_factory):
    folder = tmp_path_factory.mktemp("analyst")
    train = folder / "applications.csv"
    _applications(400, 0).to_csv(train, index=False)
    new = folder / "new.csv"
    _applications(60, 1).drop(columns="deny").to_csv(new, index=False)
    return folder, train, new


@pytest.fixture(scope="module")
def fitted(day):
    folder, train, _ = day
    model = folder / "model.trk"
    status = main(
        [
            "fit",
            str(train),
            "--target",
            "deny",
            "--positive",
            "yes",
            "--id",
            "rownames",
            "--n-estimators",
            "15",
            "--out",
            str(model),
        ]
    )
    assert status == 0
    return model


def test_fit_names_what_it_decided(day, capsys, tmp_path):
    _, train, _ = day
    out = tmp_path / "m.trk"
    fit = ["fit", train, "--target", "deny", "--positive", "yes"]
    status, _, err = _run([*fit, "--n-estimators", "5", "--out", out], capsys)
    assert status == 0, err
    # the forest by default
    assert "fitting RankingForest" in err
    assert isinstance(load_model(out), RankingForest)
    # the values counted as negative, named
    assert (
        "the 2 other values of 'deny' are all counted as negative: 'maybe', 'no'"
        in (err)
    )
    # empty and constant columns left out, with a notice
    assert "left out 1 empty column (no value in any row): 'comment'" in err
    assert "left out 1 constant column (the same value in every row): 'branch'" in err
    features = load_model(out, with_metadata=True)[1]["features"]
    assert features == ["rownames", "income", "debt_ratio", "purpose"]
    # the row numbers are used as a feature, but not silently
    assert "column 'rownames' looks like a row identifier" in err
    assert "--id rownames" in err and "--drop rownames" in err
    # no notice once it is an --id
    status, _, err = _run(
        [*fit, "--id", "rownames", "--n-estimators", "5", "--out", out, "--force"],
        capsys,
    )
    assert status == 0 and "row identifier" not in err


def test_positive_errors_list_the_values(day, capsys, tmp_path):
    _, train, _ = day
    status, _, err = _run(
        [
            "fit",
            train,
            "--target",
            "deny",
            "--positive",
            "Yes",
            "--out",
            tmp_path / "m",
        ],
        capsys,
    )
    assert status == 1
    assert "the values of 'deny' are 'maybe', 'no', 'yes'" in err
    assert "did you mean 'yes'?" in err


def test_score_and_explain_agree(day, fitted, capsys, tmp_path):
    _, _, new = day
    scores, reasons = tmp_path / "scores.csv", tmp_path / "reasons.csv"
    status, _, err = _run(["score", fitted, new, "--out", scores], capsys)
    assert status == 0, err
    assert "(calibrated positive rate)" in err
    status, _, err = _run(
        ["explain", fitted, new, "--reasons-for", "positive", "--out", reasons], capsys
    )
    assert status == 0, err
    scored, explained = _read(scores), _read(reasons)
    assert [r["rownames"] for r in scored] == [str(i) for i in range(1, 61)]
    assert [r["rownames"] for r in explained] == [str(i) for i in range(1, 61)]
    # the same score in both files, on the calibrated scale
    assert [r["score"] for r in scored] == [r["score"] for r in explained]
    model = load_model(fitted)
    X = pd.read_csv(new)[["income", "debt_ratio", "purpose"]]
    np.testing.assert_array_equal(
        [float(r["score"]) for r in scored], calibrated_score(model, X)
    )
    # every line adds up: base + reasons + the others + the proxy's difference
    for line in explained:
        parts = [line["base"], line["other_contributions"], line["proxy_difference"]]
        parts += [line[f"contribution_{k}"] for k in (1, 2, 3)]
        total = sum(float(p) for p in parts if p)
        assert total == pytest.approx(float(line["score"]), abs=1e-9)
        # adverse-action reasons when the positive class is the bad outcome
        assert line["reasons_for"] == "deny = yes"
        for k in (1, 2, 3):
            if line[f"contribution_{k}"]:
                assert float(line[f"contribution_{k}"]) > 0
                rule = line[f"rule_{k}"]
                if line[f"reason_{k}"] in ("income", "debt_ratio"):
                    assert " = " not in rule
    assert "reasons for positive" in err and "towards deny = yes" in err
    assert "Each score is a calibrated positive rate" in err
    assert "proxy" not in err.split("Each score")[0]


def test_reasons_for_negative_by_default(day, fitted, capsys, tmp_path):
    _, _, new = day
    out = tmp_path / "r.csv"
    status, _, err = _run(["explain", fitted, new, "--top", "2", "--out", out], capsys)
    assert status == 0, err
    lines = _read(out)
    assert {line["reasons_for"] for line in lines} == {"deny != yes"}
    assert all(
        float(line["contribution_1"]) < 0 for line in lines if line["contribution_1"]
    )
    assert "--reasons-for positive: towards deny = yes" in err
    status, _, err = _run(
        ["explain", fitted, new, "--reasons-for", "positive", "--direction", "up"],
        capsys,
    )
    assert status == 2 and "give one" in err


def test_compare_takes_text_labels(day, fitted, capsys, tmp_path):
    _, train, _ = day
    scores = tmp_path / "train-scores.csv"
    assert _run(["score", fitted, train, "--out", scores], capsys)[0] == 0
    table = pd.read_csv(train)[["deny", "debt_ratio"]]
    table["forest"] = pd.read_csv(scores)["score"]
    runs = tmp_path / "runs.csv"
    table.to_csv(runs, index=False)
    status, _, err = _run(["compare", runs, "--label", "deny"], capsys)
    assert status == 1
    assert "its values are 'maybe', 'no', 'yes'" in err and "--positive" in err
    status, report, err = _run(
        [
            "compare",
            runs,
            "--label",
            "deny",
            "--positive",
            "yes",
            "--n-resamples",
            "199",
        ],
        capsys,
    )
    assert status == 0, err
    assert "forest" in report and "debt_ratio" in report
    assert "all counted as negative: 'maybe', 'no'" in err
    status, _, err = _run(
        ["compare", runs, "--label", "deny", "--positive", "YES"], capsys
    )
    assert status == 1 and "the values of 'deny' are 'maybe', 'no', 'yes'" in err


def test_export_asks_which_tree_of_a_forest(fitted, capsys, tmp_path):
    png = tmp_path / "tree.png"
    status, _, err = _run(["export", fitted, "--format", "png", "--out", png], capsys)
    assert status == 2
    assert "a forest of 15 trees" in err and "--tree INDEX (0 to 14)" in err
    assert not png.exists()
    status, _, err = _run(
        ["export", fitted, "--format", "png", "--tree", "3", "--out", png], capsys
    )
    assert status == 0, err
    assert png.read_bytes()[:4] == b"\x89PNG"
    status, text, _ = _run(["export", fitted, "--tree", "14"], capsys)
    assert status == 0 and "leaf 0" in text


def test_a_model_saved_from_python_scores_and_explains(day, capsys, tmp_path):
    """The README's penguins model: fitted on a DataFrame, saved with save_model."""
    from treerank.datasets import load_penguins

    frame = load_penguins()
    y = (frame["island"] == "Biscoe").astype(int)
    X = frame.drop(columns=["island"])
    ranker = RankingForest(n_estimators=10, random_state=0).fit(X, y)
    path = tmp_path / "penguins.trk"
    save_model(ranker, path)
    birds = tmp_path / "birds.csv"
    frame.to_csv(birds, index=False)
    scores, reasons = tmp_path / "s.csv", tmp_path / "r.csv"
    status, _, err = _run(["score", path, birds, "--out", scores], capsys)
    assert status == 0, err
    np.testing.assert_array_equal(
        [float(r["score"]) for r in _read(scores)], calibrated_score(ranker, X)
    )
    status, _, err = _run(["explain", path, birds, "--out", reasons], capsys)
    assert status == 0, err
    lines = _read(reasons)
    assert [r["score"] for r in lines] == [r["score"] for r in _read(scores)]
    assert {r["reasons_for"] for r in lines} == {"class 0"}
    assert {r["reason_1"] for r in lines} - {""} <= set(X.columns)
    # a pipeline with an encoder of text columns, saved whole
    from sklearn.compose import make_column_transformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    numbers = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm"]
    encode = make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["species"]),
        ("passthrough", numbers),
    )
    pipe = make_pipeline(encode, TreeRank(random_state=0))
    pipe.fit(X[["species", *numbers]], y)
    piped = tmp_path / "pipe.trk"
    save_model(pipe, piped)
    status, _, err = _run(["score", piped, birds, "--out", tmp_path / "p.csv"], capsys)
    assert status == 0, err
    np.testing.assert_array_equal(
        [float(r["score"]) for r in _read(tmp_path / "p.csv")],
        calibrated_score(pipe, X[["species", *numbers]]),
    )


def test_a_model_without_names_takes_columns_by_position(capsys, tmp_path):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + X[:, 2] > 0).astype(int)
    model = TreeRank(random_state=0).fit(X, y)
    path = tmp_path / "array.trk"
    save_model(model, path)
    data = tmp_path / "x.csv"
    table = pd.DataFrame(X, columns=["a", "b", "c"])
    table.insert(0, "key", [f"k{i}" for i in range(200)])
    table.to_csv(data, index=False)
    out = tmp_path / "s.csv"
    status, _, err = _run(["score", path, data, "--id", "key", "--out", out], capsys)
    assert status == 0, err
    assert (
        "the model records no column names: its 3 features are taken by position "
        f"from {data}'s columns 'a', 'b', 'c'" in err
    )
    np.testing.assert_array_equal(
        [float(r["score"]) for r in _read(out)], calibrated_score(model, X)
    )
    status, _, err = _run(["explain", path, data, "--id", "key"], capsys)
    assert status == 0 and "taken by position" in err
    # without --id the key is a fourth column: refused, with the count
    status, _, err = _run(["score", path, data], capsys)
    assert status == 1 and "has 4 columns besides the --id columns" in err
