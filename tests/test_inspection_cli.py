"""``treerank explain``: reason codes of a CSV file from the command line."""

import csv

import numpy as np
import pandas as pd
import pytest
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from treerank import TreeRank
from treerank.cli import main
from treerank.exceptions import UnseenCategoryWarning
from treerank.inspection import calibrated_score, reason_codes, shapley_values
from treerank.model_io import load_model, save_model

FEATURES = ["debt_ratio", "age", "income"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("explain")
    rng = np.random.RandomState(0)
    n = 300
    frame = pd.DataFrame(
        {
            "applicant": [f'Smith, "J." #{i}' for i in range(n)],
            "debt_ratio": rng.rand(n).round(4),
            "age": rng.randint(18, 80, n),
            "income": rng.normal(50, 10, n).round(2),
        }
    )
    frame["default"] = ((frame.debt_ratio > 0.5) ^ (rng.rand(n) < 0.2)).astype(int)
    frame["income"] = frame["income"].astype(object)
    frame.loc[rng.rand(n) < 0.1, "income"] = ""  # missing values
    train = folder / "train.csv"
    frame.to_csv(train, index=False)
    data = folder / "new.csv"
    frame.iloc[:40].drop(columns="default").to_csv(data, index=False)
    models = {}
    for kind, extra in (
        ("tree", ["--model", "tree"]),
        ("forest", ["--model", "forest", "--n-estimators", "5"]),
        ("mean", ["--model", "forest", "--n-estimators", "5", "--aggregation", "mean"]),
    ):
        path = folder / f"{kind}.trk"
        status = main(
            [
                "fit",
                str(train),
                "--target",
                "default",
                "--id",
                "applicant",
                *extra,
                "--out",
                str(path),
            ]
        )
        assert status == 0
        models[kind] = path
    return folder, train, data, models, frame


def _run(args, capsys):
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _read(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.parametrize(
    ("kind", "algorithm"),
    [
        ("tree", "auto"),
        ("forest", "auto"),
        ("forest", "permutation"),
        ("mean", "auto"),
    ],
)
def test_explain_writes_reason_codes(files, capsys, kind, algorithm):
    folder, train, data, models, frame = files
    out = folder / f"reasons-{kind}-{algorithm}.csv"
    status, _, err = _run(
        [
            "explain",
            models[kind],
            data,
            "--algorithm",
            algorithm,
            "--top",
            "3",
            "--background",
            train,
            "--n-background",
            "25",
            "--out",
            out,
            "--force",
        ],
        capsys,
    )
    assert status == 0, err
    assert "reasons of 40 rows" in err
    lines = _read(out)
    assert len(lines) == 40
    assert [line["applicant"] for line in lines] == list(frame.applicant[:40])
    header = list(lines[0])
    assert header[:8] == [
        "applicant",
        "score",
        "base",
        "reasons_for",
        "reason_1",
        "value_1",
        "contribution_1",
        "rule_1",
    ]
    assert ("std_error_1" in header) == (algorithm == "permutation")
    assert ("proxy_difference" in header) == (kind == "forest" and algorithm == "auto")
    assert header[-1] in ("other_contributions", "proxy_difference")
    if kind == "forest" and algorithm == "auto":
        assert "average of the forest's trees" in err
    assert {line["reasons_for"] for line in lines} == {"default = 0"}
    model = load_model(models[kind])
    X = frame.iloc[:40][FEATURES].replace("", np.nan).astype(float)
    np.testing.assert_array_equal(
        [float(line["score"]) for line in lines], calibrated_score(model, X)
    )
    for line in lines:  # every line adds up to its score
        parts = [line["base"], line["other_contributions"]]
        parts += [line[f"contribution_{k}"] for k in (1, 2, 3)]
        parts.append(line.get("proxy_difference") or "0")
        total = sum(float(part) for part in parts if part)
        assert total == pytest.approx(float(line["score"]), abs=1e-9)
    for line in lines:
        contributions = [
            float(line[f"contribution_{k}"])
            for k in (1, 2, 3)
            if line[f"contribution_{k}"]
        ]
        assert contributions == sorted(contributions)
        assert all(c < 0 for c in contributions)
        for k in (1, 2, 3):
            if line[f"reason_{k}"]:
                assert line[f"reason_{k}"] in FEATURES
                rule = line[f"rule_{k}"]  # empty: not tested on the row's paths
                assert rule.startswith(line[f"reason_{k}"]) or " < " in rule or not rule
                assert " = " not in rule
    missing = [
        line
        for line, income in zip(lines, frame.income[:40])
        if income == "" and "income" in {line[f"reason_{k}"] for k in (1, 2, 3)}
    ]
    for line in missing:
        k = next(k for k in (1, 2, 3) if line[f"reason_{k}"] == "income")
        assert line[f"value_{k}"] == "missing"
        assert line[f"rule_{k}"] == "income is missing"


def test_explain_matches_the_library(files, capsys):
    folder, _train, data, models, frame = files
    out = folder / "reasons-library.csv"
    background = folder / "background.csv"
    frame.iloc[100:130].to_csv(background, index=False)
    status, _, err = _run(
        [
            "explain",
            models["tree"],
            data,
            "--background",
            background,
            "--top",
            "2",
            "--out",
            out,
        ],
        capsys,
    )
    assert status == 0, err
    model = load_model(models["tree"])
    as_float = frame[FEATURES].replace("", np.nan).astype(float)
    expected = reason_codes(
        model,
        as_float.iloc[:40],
        background=as_float.iloc[100:130],
        top=2,
    )
    lines = _read(out)
    got = [
        (i, k, float(line[f"contribution_{k}"]))
        for i, line in enumerate(lines)
        for k in (1, 2)
        if line[f"contribution_{k}"]
    ]
    assert [(i, k) for i, k, _ in got] == list(zip(expected["row"], expected["reason"]))
    np.testing.assert_allclose([c for _, _, c in got], expected["contribution"])


@pytest.mark.parametrize("algorithm", ["mean_proxy", "permutation"])
def test_reasons_do_not_depend_on_the_chunks(files, capsys, algorithm):
    folder, _train, data, models, _ = files
    outputs = []
    for chunk in ("7", "1000"):
        out = folder / f"chunk-{chunk}.csv"
        status, _, err = _run(
            [
                "explain",
                models["forest"],
                data,
                "--algorithm",
                algorithm,
                "--chunk-size",
                chunk,
                "--n-permutations",
                "4",
                "--n-background",
                "10",
                "--out",
                out,
                "--force",
            ],
            capsys,
        )
        assert status == 0, err
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]


def test_explain_refuses_what_it_cannot_explain(files, capsys, tmp_path):
    _folder, train, data, models, frame = files
    # not a model file: exit 1
    status, _, err = _run(["explain", train, data], capsys)
    assert status == 1
    assert "not a treerank model file" in err
    # a model of the wrong kind (a pipeline): exit 1
    X = frame[["debt_ratio", "age"]].to_numpy(dtype=float)
    pipeline = make_pipeline(StandardScaler(), TreeRank(random_state=0))
    pipeline.fit(X, frame["default"])
    path = tmp_path / "pipeline.trk"
    save_model(pipeline, path, metadata={"features": ["debt_ratio", "age"]})
    status, _, err = _run(["explain", path, data], capsys)
    assert status == 1
    assert "explains a TreeRank or RankingForest" in err
    # a model without the names of its features takes the columns by position:
    # a file with another number of columns is refused, exit 1
    bare = tmp_path / "bare.trk"
    save_model(TreeRank(random_state=0).fit(X, frame["default"]), bare)
    status, _, err = _run(["explain", bare, data], capsys)
    assert status == 1
    assert "taken by position" in err and "has 4 columns" in err
    # data without the model's columns: exit 1
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    status, _, err = _run(["explain", models["tree"], other], capsys)
    assert status == 1
    assert "lacks the model's feature columns" in err
    # standard input needs a background: usage error, exit 2
    status, _, err = _run(["explain", models["tree"], "-"], capsys)
    assert status == 2
    assert "--background" in err
    # an algorithm the model does not allow: usage error, exit 2
    status, _, err = _run(
        ["explain", models["forest"], data, "--algorithm", "tree"], capsys
    )
    assert status == 2
    assert "algorithm='mean_proxy'" in err
    status, _, err = _run(
        ["explain", models["tree"], data, "--algorithm", "mean_proxy"], capsys
    )
    assert status == 2
    try:
        status = main(
            ["explain", str(models["tree"]), str(data), "--background-per-tree", "1"]
        )
    except SystemExit as exit_:
        status = exit_.code
    assert status == 2
    assert "must be an integer >= 2, 'auto' or 'all'" in capsys.readouterr().err
    # an existing output is not replaced
    out = tmp_path / "exists.csv"
    out.write_text("keep")
    status, _, err = _run(["explain", models["tree"], data, "--out", out], capsys)
    assert status == 1
    assert out.read_text() == "keep"


SITES = ["Lyon", "Oslo", "Rome", "Porto"]


def _patients(n, *, random_state, label=True, unseen=None):
    """A ';' file with decimal commas: id, age, site (text), bmi, grade, label.

    Some site and bmi cells are empty; ``unseen``: a site name for every 5th
    row (a category the training data does not have).
    """
    rng = np.random.default_rng(random_state)
    lines = ["patient_id;age;site;bmi;grade" + (";label" if label else "")]
    for i in range(n):
        site = str(rng.choice(SITES)) if unseen is None or i % 5 else unseen
        age = int(rng.integers(20, 90))
        bmi = float(rng.normal(26, 4))
        grade = int(rng.integers(1, 4))
        logit = 0.06 * (age - 55) + 1.5 * (site == "Lyon") + 0.2 * (bmi - 26)
        logit += 0.8 * (grade == 2)
        y = int(rng.random() < 1 / (1 + np.exp(-logit)))
        bmi_text = "" if i % 17 == 3 else f"{bmi:.1f}".replace(".", ",")
        site_text = "" if i % 23 == 5 else site
        line = f"P{i:04d};{age};{site_text};{bmi_text};{grade}"
        lines.append(line + (f";{y}" if label else ""))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("kind", ["mean", "median"])
def test_explain_reads_the_file_as_score_does(tmp_path, capsys, kind):
    """Text columns, decimal commas, --categorical codes, unseen categories.

    The scores are `treerank score`'s bit for bit, and the contributions those
    of the library on the file read by pandas (the background file whole).
    """
    train, new = tmp_path / "train.csv", tmp_path / "new.csv"
    train.write_text(_patients(300, random_state=0))
    new.write_text(_patients(30, random_state=1, label=False, unseen="Paris"))
    model_path = tmp_path / "m.trk"
    status, _, err = _run(
        [
            "fit",
            train,
            "--target",
            "label",
            "--id",
            "patient_id",
            "--categorical",
            "grade",
            "--model",
            "forest",
            "--n-estimators",
            "4",
            "--aggregation",
            kind,
            "--out",
            model_path,
        ],
        capsys,
    )
    assert status == 0, err
    scores_csv, reasons_csv = tmp_path / "scores.csv", tmp_path / "reasons.csv"
    assert _run(["score", model_path, new, "--out", scores_csv], capsys)[0] == 0
    options = ["--background", train, "--n-background", "1000", "--top", "4"]
    options += ["--n-permutations", "4", "--random-state", "3"]
    status, _, err = _run(
        ["explain", model_path, new, *options, "--out", reasons_csv], capsys
    )
    assert status == 0, err
    lines, scores = _read(reasons_csv), _read(scores_csv)
    assert [line["patient_id"] for line in lines] == [f"P{i:04d}" for i in range(30)]
    assert [line["score"] for line in lines] == [line["score"] for line in scores]

    model = load_model(model_path)
    X_new = pd.read_csv(new, sep=";", decimal=",").drop(columns="patient_id")
    background = pd.read_csv(train, sep=";", decimal=",")
    background = background.drop(columns=["patient_id", "label"])
    with pytest.warns(UnseenCategoryWarning, match="'site'"):
        expected = shapley_values(
            model,
            X_new,
            background=background,
            max_background=None,
            n_permutations=4,
            random_state=3,
        )
    features = list(X_new.columns)
    n_reasons = 0
    for i, line in enumerate(lines):
        for k in range(1, 5):
            if not line[f"reason_{k}"]:
                continue
            j = features.index(line[f"reason_{k}"])
            assert float(line[f"contribution_{k}"]) == pytest.approx(
                expected.values[i, j], abs=1e-12
            )
            value = line[f"value_{k}"]
            if features[j] == "site":  # a label, or missing (empty, or unseen)
                site = X_new["site"].iloc[i]
                assert value == (site if site in SITES else "missing")
            elif features[j] == "grade":
                assert value == str(X_new["grade"].iloc[i])
            n_reasons += 1
    assert n_reasons > 30
    # the decimal mark is an option, as for score: a wrong one is a data error
    status, _, err = _run(
        ["explain", model_path, new, *options, "--decimal", ".", "--out", "-"],
        capsys,
    )
    assert status == 1
    assert "line 2, column 'bmi'" in err, err
