"""``treerank compare`` end to end on CSV files of scores."""

import csv

import numpy as np
import pytest

from treerank.bridge import compare
from treerank.cli import main


@pytest.fixture
def runs_csv(tmp_path):
    rng = np.random.RandomState(0)
    qid = np.repeat([f"q{i}" for i in range(25)], 6)
    y = rng.randint(0, 3, qid.shape[0])
    columns = {
        "query": qid,
        "bm25": y + rng.normal(size=qid.shape[0]),
        "forest": y + rng.normal(scale=0.5, size=qid.shape[0]),
        "random": rng.normal(size=qid.shape[0]),
        "grade": y,
    }
    path = tmp_path / "runs.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for row in zip(*columns.values()):
            writer.writerow(row)
    return path, columns


def _run(args, capsys):
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_compare_markdown_matches_the_python_function(runs_csv, capsys):
    path, columns = runs_csv
    status, out, err = _run(
        [
            "compare",
            path,
            "--label",
            "grade",
            "--qid",
            "query",
            "--metrics",
            "ndcg@3,map",
            "--test",
            "student",
        ],
        capsys,
    )
    assert status == 0, err
    assert "compared 3 models on 25 queries (student test, holm correction)" in err
    expected = compare(
        {m: columns[m] for m in ["bm25", "forest", "random"]},
        columns["grade"],
        columns["query"],
        metrics=["ndcg@3", "map"],
        test="student",
    )
    assert out == expected.to_markdown() + "\n"


def test_compare_csv_latex_models_and_baseline(runs_csv, tmp_path, capsys):
    path, _ = runs_csv
    out = tmp_path / "report.csv"
    args = [
        "compare",
        path,
        "--label",
        "grade",
        "--qid",
        "query",
        "--models",
        "forest,bm25",
        "--baseline",
        "forest",
        "--test",
        "permutation",
        "--n-resamples",
        "999",
        "--format",
        "csv",
        "--out",
        out,
    ]
    status, _, err = _run(args, capsys)
    assert status == 0, err
    with open(out) as handle:
        rows = list(csv.DictReader(handle))
    assert [r["metric"] for r in rows] == ["ndcg@10", "map", "mrr"]
    assert {(r["model_a"], r["model_b"]) for r in rows} == {("forest", "bm25")}
    assert all(0 < float(r["pvalue"]) <= 1 for r in rows)
    # no overwrite without --force: a file error, before any work
    status, _, err = _run(args, capsys)
    assert status == 1 and "already exists" in err
    status, latex, _ = _run(
        [
            "compare",
            path,
            "--label",
            "grade",
            "--format",
            "latex",
            "--test",
            "student",
            "--models",
            "forest,bm25,random",
            "--threshold",
            "2",
        ],
        capsys,
    )
    assert status == 0 and latex.count("\\begin{tabular}") == 2


@pytest.mark.parametrize(
    ("extra", "message", "code"),
    [
        (["--label", "nope"], "no column 'nope' (the --label)", 1),
        (["--label", "grade", "--qid", "zz"], "no column 'zz' (the --qid)", 1),
        (
            ["--label", "grade", "--models", "bm25,xx"],
            "no column 'xx' (a --models score column)",
            1,
        ),
        (["--label", "grade", "--models", "bm25"], "at least two score columns", 2),
        (
            ["--label", "grade", "--models", "bm25,query"],
            "column 'query': 'q0' is not a number",
            1,
        ),
        (
            ["--label", "grade", "--test", "permutation", "--models", "bm25,forest"],
            "--test permutation needs --qid",
            2,
        ),
    ],
)
def test_compare_errors(runs_csv, capsys, extra, message, code):
    """Data and file errors exit 1, options that do not go together 2."""
    path, _ = runs_csv
    status, _, err = _run(["compare", path, *extra], capsys)
    assert status == code and message in err, err


def test_compare_missing_value_names_line_and_column(runs_csv, capsys):
    path, _ = runs_csv
    lines = path.read_text().splitlines()
    fields = lines[3].split(",")
    fields[1] = ""
    lines[3] = ",".join(fields)
    path.write_text("\n".join(lines) + "\n")
    status, _, err = _run(
        ["compare", path, "--label", "grade", "--models", "bm25,forest"], capsys
    )
    assert status == 1 and "line 4, column 'bm25': missing value" in err, err


def test_compare_missing_file(tmp_path, capsys):
    status, _, err = _run(["compare", tmp_path / "x.csv", "--label", "y"], capsys)
    assert status == 1 and "no such file" in err
