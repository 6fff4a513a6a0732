"""The command line (``treerank ...``) end to end in a temporary folder."""

import csv
import json
import subprocess
import sys

import numpy as np
import pytest

from treerank.cli import main
from treerank.datasets import make_nested_squares
from treerank.inspection import calibrated_score
from treerank.model_io import load_model


def _write_csv(path, X, y, target="label", names=("x1", "x2"), labels=None):
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([*names, target])
        for row, label in zip(X, y):
            writer.writerow([*row, label if labels is None else labels[label]])


@pytest.fixture
def train_csv(tmp_path):
    X, y = make_nested_squares(600, random_state=0)
    path = tmp_path / "train.csv"
    _write_csv(path, X, y)
    return path, X, y


def _frame(X, names=("x1", "x2")):
    """Rows as the CLI gives them to its models: a DataFrame of named columns."""
    import pandas as pd

    return pd.DataFrame(X, columns=list(names))


def _run(args, capsys):
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("model", ["tree", "forest"])
def test_fit_score_export_round_trip(tmp_path, train_csv, capsys, model):
    path, _, _ = train_csv
    out = tmp_path / f"{model}.trk"
    options = ["--n-estimators", "5"] if model == "forest" else []
    status, printed, _ = _run(
        ["fit", path, "--target", "label", "--model", model, *options, "--out", out],
        capsys,
    )
    assert status == 0 and "training AUC" in printed
    fitted, metadata = load_model(out, with_metadata=True)
    assert metadata["features"] == ["x1", "x2"] and metadata["target"] == "label"

    # score: rows in order, the model's own scores
    X_new, _ = make_nested_squares(50, random_state=3)
    new_csv = tmp_path / "new.csv"
    with open(new_csv, "w", newline="") as handle:  # columns in another order + extra
        writer = csv.writer(handle)
        writer.writerow(["id", "x2", "x1"])
        for i, row in enumerate(X_new):
            writer.writerow([i, row[1], row[0]])
    scores_csv = tmp_path / "scores.csv"
    status = _run(["score", out, new_csv, "--out", scores_csv, "--proba"], capsys)[0]
    assert status == 0
    with open(scores_csv) as handle:
        rows = list(csv.DictReader(handle))
    np.testing.assert_array_equal(
        [float(r["score"]) for r in rows], calibrated_score(fitted, _frame(X_new))
    )
    np.testing.assert_array_equal(
        [float(r["probability"]) for r in rows],
        fitted.predict_proba(_frame(X_new))[:, 1],
    )

    # export in every format: a forest's tree is named (no silent tree 0)
    if model == "forest":
        status, _, err = _run(["export", out, "--format", "png", "--out", "x"], capsys)
        assert status == 2 and "a forest of 5 trees" in err and "--tree" in err
    which = ["--tree", "0"] if model == "forest" else []
    status, dot, _ = _run(["export", out, "--format", "dot", *which], capsys)
    assert status == 0 and dot.startswith("digraph")
    pydot = pytest.importorskip("pydot")
    assert pydot.graph_from_dot_data(dot)
    status, text, _ = _run(["export", out, "--format", "text", *which], capsys)
    assert status == 0 and "leaf 0" in text and "x1" in text + dot
    json_path = tmp_path / "tree.json"
    json_args = ["export", out, "--format", "json", *which, "--out", json_path]
    assert _run(json_args, capsys)[0] == 0
    graph = json.loads(json_path.read_text())
    tree = fitted if model == "tree" else fitted.estimators_[0]
    assert len(graph["nodes"]) == 2 * tree.n_leaves_ - 1
    png = tmp_path / "tree.png"
    assert (
        _run(["export", out, "--format", "png", *which, "--out", png], capsys)[0] == 0
    )
    assert png.read_bytes().startswith(b"\x89PNG")
    assert not list(tmp_path.glob(".tmp-*"))


def test_string_target_with_positive_label(tmp_path, capsys):
    X, y = make_nested_squares(300, random_state=1)
    path = tmp_path / "data.csv"
    _write_csv(path, X, y, labels={0: "healthy", 1: "sick"})
    status, _, err = _run(
        ["fit", path, "--target", "label", "--out", tmp_path / "m"], capsys
    )
    assert (
        status == 1
        and "is not numeric (its values are 'healthy', 'sick'); pass --positive" in err
    )
    status, _, _ = _run(
        [
            "fit",
            path,
            "--target",
            "label",
            "--positive",
            "sick",
            "--out",
            tmp_path / "m",
        ],
        capsys,
    )
    assert status == 0
    model = load_model(tmp_path / "m")
    assert model.score(_frame(X), y) > 0.7  # "sick" was taken as the positive class


def test_stability_command(tmp_path, train_csv, capsys):
    path, _, _ = train_csv
    out = tmp_path / "stability.json"
    status, printed, _ = _run(
        ["stability", path, "--target", "label", "--n-bootstrap", "3", "--out", out],
        capsys,
    )
    assert status == 0 and "bootstrap Kendall instability" in printed
    summary = json.loads(out.read_text())
    assert summary["n_bootstrap"] == 3 and 0 < summary["instability"] < 0.5
    assert summary["model"] == "TreeRank"


@pytest.mark.parametrize(
    ("content", "target", "message"),
    [
        ("", "label", "is empty"),
        ("x1,x2,label\n", "label", "has a header but no data rows"),
        ("x1,x2,label\n1,2,0\n3,4,1\n", "y", "has no column 'y'"),
        (
            "x1,x2,label\n1,abc,0\n3,4,1\n",
            "label",
            "line 2, column 'x2': 'abc' is not a number",
        ),
        ("x1,x2,label\n1,inf,0\n3,4,1\n", "label", "infinite value 'inf'"),
        ("x1,x2,label\n1,2,\n3,4,1\n", "label", "line 2, column 'label': missing"),
        ("x1,x2,label\n1,2,1\n3,4,1\n", "label", "single class"),
        ("x1,x2,label\n1,2,0\n3,4,1\n5,6,2.5\n", "label", "continuous"),
        ("x1,x2,label\n1,2,0\n3,4\n", "label", "line 3: 2 fields, but the"),
        ("x1,x2,label\n1,2,0\n3,4,1,5\n", "label", "line 3: 4 fields, but the"),
        ("x1,x2,label\n1,2,0\n\n3,4,1\n", "label", "line 3: empty line"),
        ("x1,x1,label\n1,2,0\n3,4,1\n", "label", "duplicate column names"),
        ("label\n0\n1\n", "label", "no feature column"),
        ("x1,x2,label\n1,2,0\n3,4,1\n", "x9", "has no column 'x9'"),
    ],
)
def test_fit_bad_input(tmp_path, capsys, content, target, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    out = tmp_path / "m.trk"
    status, _, err = _run(["fit", path, "--target", target, "--out", out], capsys)
    assert status == 1
    assert message in err
    assert not out.exists()


def test_missing_input_file(tmp_path, capsys):
    status, _, err = _run(
        ["fit", tmp_path / "nope.csv", "--target", "y", "--out", tmp_path / "m"], capsys
    )
    assert status == 1 and "nope.csv: no such file" in err


def test_outputs_are_not_overwritten_without_force(tmp_path, train_csv, capsys):
    path, _, _ = train_csv
    out = tmp_path / "m.trk"
    out.write_text("previous")
    status, _, err = _run(["fit", path, "--target", "label", "--out", out], capsys)
    assert status == 1 and "already exists (use --force" in err
    assert out.read_text() == "previous"
    status, _, _ = _run(
        ["fit", path, "--target", "label", "--out", out, "--force"], capsys
    )
    assert status == 0 and load_model(out).n_features_in_ == 2
    scores = tmp_path / "scores.csv"
    scores.write_text("keep")
    status, _, err = _run(["score", out, path, "--out", scores], capsys)
    assert status == 1 and "already exists" in err and scores.read_text() == "keep"


def test_score_errors(tmp_path, train_csv, capsys):
    path, _, _ = train_csv
    model = tmp_path / "m.trk"
    fit = ["fit", path, "--target", "label", "--model", "tree", "--out", model]
    assert _run(fit, capsys)[0] == 0
    other = tmp_path / "other.csv"
    other.write_text("x1,z\n1,2\n")
    status, _, err = _run(["score", model, other, "--out", tmp_path / "s.csv"], capsys)
    assert status == 1 and "lacks the model's feature columns ['x2']" in err
    broken = tmp_path / "broken.trk"
    broken.write_bytes(b"garbage")
    status, _, err = _run(["score", broken, path, "--out", tmp_path / "s.csv"], capsys)
    assert status == 1 and "is not a treerank model file" in err
    status, _, err = _run(["export", model, "--tree", "3"], capsys)
    assert status == 2 and "--tree applies to forests and TreeRanks of" in err
    status, _, err = _run(["export", model, "--format", "png"], capsys)
    assert status == 2 and "needs --out" in err
    assert not list(tmp_path.glob("s.csv*"))


def test_demo_writes_report_plots_and_graphs(tmp_path, capsys):
    out = tmp_path / "demo"
    status, printed, _ = _run(["demo", "--output-dir", out], capsys)
    assert status == 0
    for row in [
        "| nested squares | TreeRank |",
        "| nested squares | RankingForest |",
        "| breast cancer | RankingForest |",
        "| TreeRank | ",
        "| RankingForest (30",
    ]:
        assert row in printed
    for name in [
        "roc_nested_squares.png",
        "roc_breast_cancer.png",
        "tree_nested_squares.dot",
        "tree_nested_squares.png",
        "tree_nested_squares.txt",
        "stability_nested_squares.png",
        "summary.md",
    ]:
        assert (out / name).stat().st_size > 0
    assert (out / "tree_nested_squares.dot").read_text().startswith("digraph")
    lines = [
        line for line in printed.splitlines() if line.startswith("| nested squares")
    ]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    for row in cells:  # test AUC within 0.03 of AUC*
        assert abs(float(row[4]) - float(row[5])) < 0.03
    assert not list(out.glob(".tmp-*"))
    # the time spent compiling kernels is reported apart from the fit times
    assert "| kernel compilation (s) |" in printed and "numba kernels" in printed
    assert "numba kernels" in (out / "summary.md").read_text()
    # a second run does not replace the folder's files without --force
    summary = (out / "summary.md").read_text()
    status, _, err = _run(["demo", "--output-dir", out], capsys)
    assert status == 1 and "already exists and is not empty" in err
    assert "--force" in err and (out / "summary.md").read_text() == summary
    # an existing empty folder is filled
    empty = tmp_path / "empty"
    empty.mkdir()
    from treerank.cli._checks import check_output_dir

    check_output_dir(empty, force=False)


def test_compile_timer_measures_numba_compilation():
    import numba

    from treerank.cli._demo import CompileTimer

    @numba.njit
    def add_one(x):  # a new function: compiled on its first call
        return x + 1

    timer = CompileTimer()
    with timer:
        assert add_one(1) == 2
    assert timer.count == 1 and timer.seconds > 0
    again = CompileTimer()
    with again:
        assert add_one(2) == 3  # compiled already
    assert again.count == 0 and again.seconds == 0.0


def test_python_dash_m_runs_the_cli():
    result = subprocess.run(
        [sys.executable, "-m", "treerank", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    assert result.stdout.startswith("treerank ")


def test_unknown_command_is_an_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["nope"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize("model", ["tree", "forest"])
def test_fit_score_export_graded_target(tmp_path, capsys, model):
    from treerank.datasets import make_ordinal_nested_squares

    X, y = make_ordinal_nested_squares(600, random_state=0)
    path = tmp_path / "graded.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["x1", "x2", "grade"])
        for row, grade in zip(X, y):
            writer.writerow([row[0], row[1], int(grade) * 2 + 1])  # grades 1, 3, 5
    out = tmp_path / "graded.trk"
    options = ["--n-estimators", "6"] if model == "forest" else []
    status, printed, err = _run(
        ["fit", path, "--target", "grade", "--model", model, *options, "--out", out],
        capsys,
    )
    assert status == 0 and "training VUS" in printed
    assert "3 ordered grades (1: " in err
    fitted = load_model(out)
    np.testing.assert_array_equal(fitted.classes_, [1, 3, 5])
    scores_csv = tmp_path / "scores.csv"
    assert _run(["score", out, path, "--out", scores_csv, "--proba"], capsys)[0] == 0
    with open(scores_csv) as handle:
        rows = list(csv.DictReader(handle))
    np.testing.assert_array_equal(
        [float(r["score"]) for r in rows], calibrated_score(fitted, _frame(X))
    )
    proba = np.array([[float(r[f"probability_{g}"]) for g in (1, 3, 5)] for r in rows])
    np.testing.assert_allclose(proba, fitted.predict_proba(_frame(X)), rtol=1e-15)
    # a graded TreeRank is exported threshold tree by threshold tree
    status, text, _ = _run(["export", out, "--format", "text", "--tree", "1"], capsys)
    assert status == 0 and "leaf 0" in text
    # what each tree of a graded forest learns
    fit = ["fit", path, "--target", "grade", "--model", model, *options]
    out = tmp_path / "thresholds.trk"
    status, _, err = _run([*fit, "--multipartite", "thresholds", "--out", out], capsys)
    if model == "tree":
        assert status == 2 and "--multipartite applies to --model forest" in err
        return
    assert status == 0, err
    fitted = load_model(out)
    assert fitted.multipartite == "thresholds"
    # tree b learns "grade >= g" for the grades 3, 5 in turn
    np.testing.assert_array_equal(fitted.tree_thresholds_, [3, 5, 3, 5, 3, 5])


@pytest.mark.parametrize("model", ["tree", "forest"])
@pytest.mark.parametrize("splitter", ["linear", "mixed"])
def test_fit_with_oblique_splitters_saves_and_scores(
    tmp_path, train_csv, capsys, model, splitter
):
    from treerank.tree import LinearLeafRank, MixedLeafRank

    path, X, _ = train_csv
    out = tmp_path / f"{model}-{splitter}.trk"
    options = ["--n-estimators", "3"] if model == "forest" else []
    fit = ["fit", path, "--target", "label", "--model", model, *options]
    status, _, err = _run([*fit, "--splitter", splitter, "--out", out], capsys)
    assert status == 0, err
    fitted = load_model(out)
    kind = LinearLeafRank if splitter == "linear" else MixedLeafRank
    assert isinstance(fitted.leafrank, kind)
    if model == "forest":
        assert fitted.max_features is None  # oblique rules see every feature
    scores_csv = tmp_path / "scores.csv"
    assert _run(["score", out, path, "--out", scores_csv], capsys)[0] == 0
    with open(scores_csv) as handle:
        scores = [float(r["score"]) for r in csv.DictReader(handle)]
    np.testing.assert_array_equal(scores, calibrated_score(fitted, _frame(X)))
    # monotone constraints are the axis-aligned LeafRank's only
    status, _, err = _run(
        [*fit, "--splitter", splitter, "--monotonic", "x1=+1", "--out", out, "--force"],
        capsys,
    )
    assert status != 0 and "monotonic_cst" in err
