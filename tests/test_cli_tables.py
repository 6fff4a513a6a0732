"""The command line on tables as people write them (issue 25).

Text columns are categorical features, ``--categorical``/``--numeric`` force
the kind of a column, decimal commas are read (given or detected), models keep
the CSV's column names and categories, and a CLI model gives the scores of the
same model used from Python on ``pandas.read_csv`` of the same file (warnings
are errors in this suite: no feature-name warning either).
"""

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from treerank.cli import main
from treerank.exceptions import UnseenCategoryWarning
from treerank.inspection import calibrated_score
from treerank.model_io import load_model, save_model

SITES = ["Lyon", "Oslo", "Rome", "Porto"]


def _run(args, capsys):
    try:
        status = main([str(a) for a in args])
    except SystemExit as exit_:  # argparse's own usage errors
        status = exit_.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _patients(n, *, random_state, unseen=None):
    """A ';' file with decimal commas: id, age, site (text), bmi, grade, label.

    Some site and bmi cells are empty; ``unseen``: a site name for every 5th
    row (a category the training data does not have).
    """
    rng = np.random.default_rng(random_state)
    lines = ["patient_id;age;site;bmi;grade;label"]
    for i in range(n):
        site = str(rng.choice(SITES)) if unseen is None or i % 5 else unseen
        age = int(rng.integers(20, 90))
        bmi = float(rng.normal(26, 4))
        grade = int(rng.integers(1, 4))
        logit = 0.06 * (age - 55) + 1.5 * (site == "Lyon") + 0.2 * (bmi - 26)
        label = int(rng.random() < 1 / (1 + np.exp(-logit)))
        bmi_text = "" if i % 17 == 3 else f"{bmi:.1f}".replace(".", ",")
        site_text = "" if i % 23 == 5 else site
        lines.append(f"P{i:04d};{age};{site_text};{bmi_text};{grade};{label}")
    return "\n".join(lines) + "\n"


def _python_frame(path):
    """The same file read by pandas as a user would, features only."""
    frame = pd.read_csv(path, sep=";", decimal=",")
    return frame.drop(columns=["patient_id", "label"], errors="ignore")


def _scores(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def patients(tmp_path):
    train = tmp_path / "patients.csv"
    train.write_text(_patients(500, random_state=0))
    new = tmp_path / "new.csv"
    # new rows have no label column
    lines = _patients(60, random_state=1, unseen="Paris").splitlines()
    new.write_text("\n".join(line.rsplit(";", 1)[0] for line in lines) + "\n")
    return train, new


@pytest.mark.parametrize("model", ["tree", "forest"])
def test_a_table_with_text_ids_empty_cells_and_decimal_commas(
    tmp_path, capsys, patients, model
):
    train, new = patients
    out = tmp_path / "m.trk"
    options = ["--n-estimators", "8"] if model == "forest" else []
    fit = ["fit", train, "--target", "label", "--id", "patient_id"]
    status, _, err = _run([*fit, "--model", model, *options, "--out", out], capsys)
    assert status == 0, err
    assert "delimiter ';', decimal comma, detected" in err
    assert "categorical features: 'site' (4 categories)" in err
    fitted, metadata = load_model(out, with_metadata=True)
    assert metadata["features"] == ["age", "site", "bmi", "grade"]
    assert metadata["categorical"] == {"site": "text"}
    assert metadata["decimal"] == ","
    # the model knows the CSV's names and categories, as if fitted in Python
    assert list(fitted.feature_names_in_) == ["age", "site", "bmi", "grade"]
    X_train = _python_frame(train)
    y_train = pd.read_csv(train, sep=";")["label"].to_numpy()
    assert fitted.score(X_train, y_train) > 0.7

    # score new rows, one in five of an unseen site: the library's mapping
    scores_csv = tmp_path / "scores.csv"
    status, _, err = _run(["score", out, new, "--out", scores_csv], capsys)
    assert status == 0, err
    rows = _scores(scores_csv)
    # the unseen site is reported once for the whole file, as a warning
    assert err.count("warning:") == 1
    assert "column 'site': 11 of 57 values (19%) are categories the model" in err
    X_new = _python_frame(new)
    assert (X_new["site"] == "Paris").sum() == 11
    # a DataFrame: no feature-name warning; the unseen site is warned about
    with pytest.warns(UnseenCategoryWarning, match="'site': 11 of 57"):
        expected = calibrated_score(fitted, X_new)
    np.testing.assert_array_equal([float(r["score"]) for r in rows], expected)
    assert [r["patient_id"] for r in rows] == [f"P{i:04d}" for i in range(60)]
    # an unseen category scores as a missing one, as in the library
    as_missing = X_new.copy()
    as_missing.loc[as_missing["site"] == "Paris", "site"] = None
    np.testing.assert_array_equal(calibrated_score(fitted, as_missing), expected)


def test_python_and_cli_fit_the_same_model(tmp_path, capsys, patients):
    from treerank import RankingForest

    train, _ = patients
    out = tmp_path / "m.trk"
    status, _, err = _run(
        ["fit", train, "--target", "label", "--id", "patient_id", "--out", out],
        capsys,
    )
    assert status == 0, err
    cli = load_model(out)
    X = _python_frame(train)
    y = pd.read_csv(train, sep=";")["label"].to_numpy()
    python = RankingForest(random_state=0).fit(X, y)  # the default model
    np.testing.assert_array_equal(cli.decision_function(X), python.decision_function(X))


def test_integer_codes_as_categories(tmp_path, capsys, patients):
    train, new = patients
    out = tmp_path / "m.trk"
    base = ["fit", train, "--target", "label", "--id", "patient_id"]
    status, _, err = _run([*base, "--out", out], capsys)
    assert status == 0, err
    assert "grade" not in load_model(out, with_metadata=True)[1]["categorical"]
    status, _, err = _run(
        [*base, "--categorical", "grade", "--out", out, "--force"], capsys
    )
    assert status == 0, err
    assert "'grade' (3 categories)" in err
    fitted, metadata = load_model(out, with_metadata=True)
    assert metadata["categorical"] == {"site": "text", "grade": "number"}
    # the categories are the numbers themselves: a pandas integer column matches
    X_new = _python_frame(new)
    assert X_new["grade"].dtype.kind == "i"
    scores_csv = tmp_path / "s.csv"
    assert _run(["score", out, new, "--out", scores_csv], capsys)[0] == 0
    with pytest.warns(UnseenCategoryWarning, match="'site'"):
        expected = calibrated_score(fitted, X_new)
    np.testing.assert_array_equal(
        [float(r["score"]) for r in _scores(scores_csv)], expected
    )
    status, text, _ = _run(["export", out, "--tree", "0"], capsys)
    assert status == 0 and "grade in {" in text


@pytest.mark.parametrize(
    ("options", "status", "message"),
    [
        (["--numeric", "site"], 1, "line 2, column 'site': 'Lyon' is not a number"),
        (["--categorical", "age", "--numeric", "age"], 2, "both --categorical and"),
        (["--categorical", "nope"], 1, "no column 'nope' (a --categorical column)"),
        (["--categorical", "label"], 1, "--categorical 'label': not a feature"),
        (["--numeric", "patient_id"], 1, "--numeric 'patient_id': not a feature"),
        (["--decimal", "x"], 2, "--decimal: must be '.' or ','; got 'x'"),
        (["--splitter", "linear"], 2, "--splitter linear splits numeric features"),
        (["--max-line-size", "12"], 2, "must be a size of at least 1K"),
    ],
)
def test_option_errors(tmp_path, capsys, options, status, message):
    train = tmp_path / "t.csv"
    train.write_text(
        "patient_id;age;site;label\nP1;30;Lyon;0\nP2;40;Oslo;1\nP3;50;Lyon;1\n"
    )
    base = ["fit", train, "--target", "label", "--id", "patient_id"]
    got, _, err = _run([*base, *options, "--out", tmp_path / "m.trk"], capsys)
    assert (got, message in err) == (status, True), err
    assert not (tmp_path / "m.trk").exists()


@pytest.mark.parametrize(
    ("content", "options", "message"),
    [
        # the first lines show both marks
        (
            "a;b;label\n26,5;2.5;0\n27,5;3.5;1\n",
            [],
            "cannot tell the decimal mark: line 2, column 'a': '26,5' has a "
            "decimal comma but line 2, column 'b': '2.5' a decimal point; pass "
            "--decimal ',' or --decimal '.'",
        ),
        # a decimal comma after the detected lines
        (
            "a;label\n" + "".join(f"{i};{i % 2}\n" for i in range(60)) + "26,5;1\n",
            [],
            "line 62, column 'a': '26,5' is not a number: it looks like a number "
            "with a decimal comma; pass --decimal ','",
        ),
        # a comma delimiter: nothing is detected, the message says what to do
        (
            'a,label\n"26,5",0\n"27,5",1\n',
            [],
            "line 2, column 'a': '26,5' and the other values of the column look "
            "like numbers with a decimal comma; pass --decimal ','",
        ),
        # the decimal comma given, a column of decimal points
        (
            "a;b;label\n1;2.5;0\n2;3.5;1\n",
            ["--decimal", ","],
            "look like numbers with a decimal point; pass --decimal '.'",
        ),
        # a column of numbers with one word
        (
            "a;b;label\n1;2;0\n3;n.a.;1\n",
            [],
            "line 3, column 'b': 'n.a.' is not a number, but other values of the "
            "column are (line 2). Correct the value (an empty cell or NA is a "
            "missing value), or pass --categorical b",
        ),
        # a text target
        (
            "a;label\n1;sick\n2;healthy\n",
            [],
            "the target column 'label' is not numeric (its values are 'healthy', "
            "'sick'); pass --positive LABEL",
        ),
        # free text: too many categories
        (
            "note;label\n" + "".join(f"visit {i};{i % 2}\n" for i in range(300)),
            [],
            "column 'note' is categorical with 300 distinct values, more than the "
            "255 categories a feature can have: leave it out with --drop",
        ),
    ],
)
def test_data_errors_name_the_option(tmp_path, capsys, content, options, message):
    path = tmp_path / "d.csv"
    path.write_text(content)
    status, _, err = _run(
        ["fit", path, "--target", "label", *options, "--out", tmp_path / "m.trk"],
        capsys,
    )
    assert status == 1
    assert message in err, err


@pytest.mark.parametrize("options", [["--decimal", ","], ["--decimal", "comma"]])
def test_decimal_option_reads_what_detection_cannot(tmp_path, capsys, options):
    from treerank.cli._csv import CsvSource
    from treerank.cli._data import read_training_data

    rows = "".join(f"{i};{i % 2}\n" for i in range(60))
    path = tmp_path / "d.csv"
    path.write_text("a;label\n" + rows + "26,5;1\n")
    status, _, err = _run(
        ["fit", path, "--target", "label", *options, "--out", tmp_path / "m.trk"],
        capsys,
    )
    assert status == 0, err
    with CsvSource(path, decimal=",") as source:
        data = read_training_data(source, "label")
    assert data.X["a"].iloc[-1] == 26.5 and data.categorical == {}
    # a comma delimiter with quoted decimal commas
    quoted = tmp_path / "q.csv"
    quoted.write_text('a,label\n"26,5",0\n"27,25",1\n3,0\n')
    with CsvSource(quoted, decimal=",") as source:
        data = read_training_data(source, "label")
    np.testing.assert_array_equal(data.X["a"], [26.5, 27.25, 3.0])


def test_mixed_column_as_categories_when_asked(tmp_path, capsys):
    path = tmp_path / "d.csv"
    rows = [f"{i % 7};{i % 2}" for i in range(200)] + ["n.a.;1"]
    path.write_text("a;label\n" + "\n".join(rows) + "\n")
    out = tmp_path / "m.trk"
    status, _, err = _run(
        ["fit", path, "--target", "label", "--categorical", "a", "--out", out], capsys
    )
    assert status == 0, err
    _, metadata = load_model(out, with_metadata=True)
    assert metadata["categorical"] == {"a": "text"}  # not every value is a number


def test_true_false_columns_are_numbers_as_in_pandas(tmp_path, capsys):
    rng = np.random.default_rng(0)
    flag = rng.random(300) < 0.5
    y = (flag ^ (rng.random(300) < 0.2)).astype(int)
    path = tmp_path / "d.csv"
    path.write_text(
        "flag,x,label\n"
        + "".join(f"{f},{v},{t}\n" for f, v, t in zip(flag, rng.normal(size=300), y))
    )
    out = tmp_path / "m.trk"
    status, _, err = _run(["fit", path, "--target", "label", "--out", out], capsys)
    assert status == 0, err
    fitted, metadata = load_model(out, with_metadata=True)
    assert metadata["categorical"] == {}
    frame = pd.read_csv(path)
    assert frame["flag"].dtype == bool
    scores = tmp_path / "s.csv"
    assert _run(["score", out, path, "--out", scores], capsys)[0] == 0
    np.testing.assert_array_equal(
        [float(r["score"]) for r in _scores(scores)],
        calibrated_score(fitted, frame[["flag", "x"]]),
    )


def test_an_id_that_is_also_a_feature(tmp_path, capsys, patients):
    train, new = patients
    out = tmp_path / "m.trk"
    base = ["fit", train, "--target", "label", "--id", "patient_id"]
    assert _run([*base, "--out", out], capsys)[0] == 0
    scores = tmp_path / "s.csv"
    status, _, err = _run(
        ["score", out, new, "--id", "patient_id", "age", "site", "--out", scores],
        capsys,
    )
    assert status == 0, err
    rows = _scores(scores)
    X_new = _python_frame(new)
    assert [int(r["age"]) for r in rows] == X_new["age"].tolist()
    with pytest.warns(UnseenCategoryWarning, match="'site'"):
        expected = calibrated_score(load_model(out), X_new)
    np.testing.assert_array_equal([float(r["score"]) for r in rows], expected)


def test_models_fitted_on_arrays_still_score(tmp_path, capsys):
    from treerank import TreeRank

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] > 0).astype(int)
    model = TreeRank(max_depth=2, random_state=0).fit(X, y)
    path = tmp_path / "m.trk"
    save_model(model, path, metadata={"features": ["a", "b"]})
    data = tmp_path / "x.csv"
    np.savetxt(data, X, delimiter=",", header="a,b", comments="")
    scores = tmp_path / "s.csv"
    status, _, err = _run(["score", path, data, "--out", scores], capsys)
    assert status == 0, err  # and no feature-name warning (an error here)
    np.testing.assert_array_equal(
        [float(r["score"]) for r in _scores(scores)], calibrated_score(model, X)
    )


@pytest.mark.parametrize(
    "metadata",
    [
        {"features": ["a", "b"], "categorical": {"a": "colour"}},
        {"features": ["a", "b"], "categorical": {"zz": "text"}},
        {"features": ["a", "b"], "categorical": ["a"]},
        {"features": ["a", "b"], "decimal": ";"},
        {"features": ["a", 3]},
    ],
)
def test_score_refuses_metadata_it_did_not_write(tmp_path, capsys, metadata):
    from treerank import TreeRank

    X = np.random.default_rng(0).normal(size=(100, 2))
    model = TreeRank(max_depth=1, random_state=0).fit(X, X[:, 0] > 0)
    path = tmp_path / "m.trk"
    save_model(model, path, metadata=metadata)
    data = tmp_path / "x.csv"
    data.write_text("a,b\n1,2\n")
    status, _, err = _run(["score", path, data], capsys)
    assert status == 1
    assert "score it from Python instead" in err


def test_graded_targets_with_text_columns(tmp_path, capsys):
    """A graded TreeRank scores a DataFrame with categories (its consensus
    encodes them once, not twice)."""
    from treerank import TreeRank

    rng = np.random.default_rng(0)
    site = rng.choice(["a", "b", "c", "d"], 600)
    grade = np.select([site == "a", site == "b"], [2, 1], 0)
    grade = np.where(rng.random(600) < 0.2, rng.integers(0, 3, 600), grade)
    X = pd.DataFrame({"site": site, "z": rng.normal(size=600)})
    tree = TreeRank(random_state=0).fit(X, grade)
    # the same fit on the category codes, declared categorical
    codes = np.column_stack([np.searchsorted(["a", "b", "c", "d"], site), X["z"]])
    on_codes = TreeRank(categorical_features=[0], random_state=0).fit(codes, grade)
    np.testing.assert_array_equal(
        tree.decision_function(X), on_codes.decision_function(codes)
    )
    np.testing.assert_array_equal(tree.apply(X), on_codes.apply(codes))
    np.testing.assert_array_equal(tree.predict_proba(X), on_codes.predict_proba(codes))
    assert tree.score(X, grade) > 0.6
    # and from the command line
    path = tmp_path / "g.csv"
    X.assign(grade=grade).to_csv(path, index=False)
    out = tmp_path / "g.trk"
    status, printed, err = _run(
        ["fit", path, "--target", "grade", "--out", out], capsys
    )
    assert status == 0, err
    assert float(printed.split("VUS ")[1].split(";")[0]) > 0.6


# ----------------------------------------------------------------------
# stability --out by extension
# ----------------------------------------------------------------------
@pytest.fixture
def small_csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2))
    y = (X[:, 0] + rng.normal(size=150) > 0).astype(int)
    path = tmp_path / "d.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": y}).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(
    ("name", "magic"),
    [("s.png", b"\x89PNG"), ("s.svg", b"<?xml"), ("s.pdf", b"%PDF"), ("S.PNG", None)],
)
def test_stability_writes_a_plot_by_extension(tmp_path, capsys, small_csv, name, magic):
    out = tmp_path / name
    args = ["stability", small_csv, "--target", "label", "--n-bootstrap", "3"]
    status, _, err = _run([*args, "--max-depth", "2", "--out", out], capsys)
    assert status == 0, err
    head = out.read_bytes()[:8]
    assert head.startswith(magic or b"\x89PNG")
    assert f"wrote {out}" in err


def test_stability_json_and_refused_extensions(tmp_path, capsys, small_csv):
    args = ["stability", small_csv, "--target", "label", "--n-bootstrap", "3"]
    args += ["--max-depth", "2"]
    out = tmp_path / "s.json"
    assert _run([*args, "--out", out], capsys)[0] == 0
    assert json.loads(out.read_text())["n_bootstrap"] == 3
    for bad in ("s.txt", "stab", "s.png.bak"):
        status, _, err = _run([*args, "--out", tmp_path / bad], capsys)
        assert status == 2, bad
        assert "chosen by its extension, .json (the summary) or .png" in err
        assert not (tmp_path / bad).exists()


# ----------------------------------------------------------------------
# progress: one line per fit in a log, a live bar on a terminal
# ----------------------------------------------------------------------
def _cli(args, **kwargs):
    code = "import sys; from treerank.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *map(str, args)], check=False, **kwargs
    )


def test_forest_fit_logs_one_line_when_stderr_is_a_file(tmp_path, small_csv):
    args = ["fit", small_csv, "--target", "label", "--model", "forest"]
    args += ["--n-estimators", "12", "--out", tmp_path / "f.trk"]
    result = _cli(args, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "\r" not in result.stderr
    assert [line.split(" ")[0] for line in lines] == ["reading", "fitting", "fitted"]
    assert lines[2].startswith("fitted RankingForest in ")
    assert "(12 trees; median aggregation " in lines[2]
    assert "aggregation (median)" not in result.stdout  # the forest stays quiet


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_forest_fit_draws_a_live_bar_on_a_terminal(tmp_path, small_csv):
    leader, follower = os.openpty()
    args = ["fit", small_csv, "--target", "label", "--model", "forest"]
    args += ["--n-estimators", "12", "--out", tmp_path / "f.trk"]
    try:
        result = _cli(args, stdout=subprocess.PIPE, stderr=follower)
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    err = b"".join(chunks).decode()
    assert result.returncode == 0, err
    assert "\rgrowing trees [" in err and "12/12" in err
    assert "fitted RankingForest" not in err  # the bar said it


# ----------------------------------------------------------------------
# export png: the drawn part of a large tree
# ----------------------------------------------------------------------
def test_export_png_options(tmp_path, capsys, small_csv):
    model = tmp_path / "m.trk"
    fit = ["fit", small_csv, "--target", "label", "--model", "tree", "--out", model]
    assert _run(fit, capsys)[0] == 0
    cases = (["--max-leaves", "4"], ["--max-depth", "2"], ["--max-leaves", "all"])
    for index, options in enumerate(cases):
        png = tmp_path / f"t{index}.png"
        status, _, err = _run(
            ["export", model, "--format", "png", *options, "--out", png], capsys
        )
        assert status == 0, err
        assert png.read_bytes()[:4] == b"\x89PNG"
    status, _, err = _run(["export", model, "--max-leaves", "4"], capsys)
    assert status == 2 and "apply to --format png only" in err
    status, _, err = _run(["export", model, "--max-leaves", "0"], capsys)
    assert status == 2 and "must be a positive integer, 'auto' or 'all'" in err


def test_readme_pandas_frame_warning_free_scoring(tmp_path, capsys, patients):
    """The README's claim: a CLI model scores a DataFrame in Python."""
    train, new = patients
    out = tmp_path / "m.trk"
    base = ["fit", train, "--target", "label", "--id", "patient_id", "--out", out]
    base += ["--n-estimators", "10"]  # a small forest: this is about the frames
    assert _run(base, capsys)[0] == 0
    code = (
        "import warnings, pandas as pd; warnings.simplefilter('error');"
        # the new rows have an unseen site on purpose: a warning of its own
        "from treerank.exceptions import UnseenCategoryWarning as W;"
        "warnings.simplefilter('ignore', W);"
        "from treerank.model_io import load_model;"
        f"m = load_model({str(out)!r});"
        f"X = pd.read_csv({str(new)!r}, sep=';', decimal=',');"
        "print(len(m.decision_function(X.drop(columns='patient_id'))))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "60"
