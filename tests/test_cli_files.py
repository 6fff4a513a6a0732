"""The command line on real-world CSV files, and every mistake's message and exit code.

The end-to-end test runs the installed command in subprocesses (real standard
input and output, a real umask); the rest call ``main`` in-process.
"""

import csv
import io
import os
import stat
import subprocess
import sys

import numpy as np
import pytest

from treerank.cli import main
from treerank.datasets import make_nested_squares
from treerank.inspection import calibrated_score
from treerank.model_io import load_model


def _frame(X, names=("x1", "x2")):
    """Rows as the CLI gives them to its models: a DataFrame of named columns."""
    import pandas as pd

    return pd.DataFrame(X, columns=list(names))


def _run(args, capsys):
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _cli(args, *, input=None, cwd=None):
    """Run ``python -m treerank`` with umask 022; returns (status, stdout, stderr)."""
    code = "import os, sys; os.umask(0o022); from treerank.cli import main; "
    code += "sys.exit(main(sys.argv[1:]))"
    result = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        input=input,
        capture_output=True,
        cwd=cwd,
        check=False,
    )
    return result.returncode, result.stdout, result.stderr.decode()


def _patients(n, *, random_state, empty_feature=False):
    """A ';' file: patient id, a text note (with empty cells), 2 features, label."""
    X, y = make_nested_squares(n, random_state=random_state)
    lines = ["patient_id;x1;note;x2;label"]
    for i, (row, label) in enumerate(zip(X, y)):
        note = "" if i % 7 == 0 else f"visit {i}, ok"
        x2 = "" if empty_feature and i == 10 else repr(float(row[1]))
        lines.append(f"P{i:05d};{float(row[0])!r};{note};{x2};{label}")
    return "\n".join(lines) + "\n", X, y


def test_end_to_end_semicolons_ids_stdin_stdout_and_modes(
    tmp_path, capsys, monkeypatch
):
    """The issue's "done when": a real CSV through fit and score, every mistake."""
    text, _, _ = _patients(800, random_state=0)
    train = tmp_path / "train.csv"
    train.write_text(text)
    model = tmp_path / "model.trk"

    # fit: ';' detected, the id column and the text column (with empty
    # cells) left out
    status, out, err = _cli(
        [
            "fit",
            train,
            "--target",
            "label",
            "--id",
            "patient_id",
            "--drop",
            "note",
            "--n-estimators",  # a small forest: this is about the files
            "10",
            "--out",
            model,
        ]
    )
    assert status == 0, err
    assert b"training AUC" in out and "delimiter ';'" in err
    fitted, metadata = load_model(model, with_metadata=True)
    assert metadata["features"] == ["x1", "x2"]
    assert metadata["id_columns"] == ["patient_id"]

    # score: from standard input to standard output, ids kept, rows in order
    new_text, X_new, _ = _patients(300, random_state=1)
    status, out, err = _cli(["score", model, "-"], input=new_text.encode())
    assert status == 0, err
    rows = list(csv.DictReader(io.StringIO(out.decode())))
    assert [r["patient_id"] for r in rows] == [f"P{i:05d}" for i in range(300)]
    np.testing.assert_array_equal(
        [float(r["score"]) for r in rows], calibrated_score(fitted, _frame(X_new))
    )

    # output files follow the umask (0644 under 022)
    scores = tmp_path / "scores.csv"
    status, _, err = _cli(["score", model, train, "--out", scores])
    assert status == 0, err
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (model, scores)}
    assert set(modes.values()) <= {0o644, 0o600}  # 0o600 until _io's fix lands
    _MODES.update(modes)

    # mistakes: message and exit status
    monkeypatch.chdir(tmp_path)
    binary = tmp_path / "data.bin"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    cases = [
        (["score", tmp_path / "none.trk", train], 1, "none.trk: no such file"),
        (["score", model, binary], 1, "is a binary file, not CSV text"),
        (["score", model, model], 1, "is a binary file, not CSV text"),
        (
            ["fit", train, "--target", "label", "--delimiter", ",", "--out", "m"],
            1,
            "pass --delimiter ';'",
        ),
        (
            ["fit", train, "--target", "label", "--out", tmp_path / "no/dir/m.trk"],
            1,
            "does not exist (pass --mkdir",
        ),
        (["fit", train, "--target", "label"], 2, "required: --out"),
        (["score", model, train, "--chunk-size", "0"], 2, "must be a positive"),
    ]
    # in-process (each a fresh run of the same entry point); argparse's own
    # usage errors exit with SystemExit(2)
    for args, expected_status, message in cases:
        try:
            status = main([str(a) for a in args])
        except SystemExit as exit_:
            status = exit_.code
        err = capsys.readouterr().err
        assert (status, message in err) == (expected_status, True), (args, err)
        assert "Traceback" not in err
    assert not (tmp_path / "no").exists()


_MODES = {}


def test_outputs_follow_the_umask(tmp_path):
    if not _MODES:
        text, _, _ = _patients(200, random_state=0)
        train = tmp_path / "train.csv"
        train.write_text(text)
        model = tmp_path / "m.trk"
        _cli(
            [
                "fit",
                train,
                "--target",
                "label",
                "--drop",
                "note",
                "patient_id",
                "--out",
                model,
            ]
        )
        _MODES["model.trk"] = stat.S_IMODE(model.stat().st_mode)
    assert set(_MODES.values()) == {0o644}


@pytest.fixture
def model_file(tmp_path, capsys):
    text, _, _ = _patients(400, random_state=0)
    train = tmp_path / "train.csv"
    train.write_text(text)
    model = tmp_path / "m.trk"
    args = ["fit", train, "--target", "label", "--id", "patient_id"]
    status, _, err = _run([*args, "--drop", "note", "--out", model], capsys)
    assert status == 0, err
    return model, train


def test_empty_feature_cells_are_missing_values(tmp_path, capsys):
    # empty cells are read as NaN, which the forest learns from
    text, _, _ = _patients(200, random_state=0, empty_feature=True)
    train = tmp_path / "train.csv"
    train.write_text(text)
    status, _, err = _run(
        [
            "fit",
            train,
            "--target",
            "label",
            "--drop",
            "note",
            "patient_id",
            "--out",
            tmp_path / "m.trk",
        ],
        capsys,
    )
    assert status == 0, err
    status, out, err = _run(["score", tmp_path / "m.trk", train], capsys)
    assert status == 0, err
    scores = [line.split(",")[-1] for line in out.strip().splitlines()[1:]]
    assert len(scores) == 200 and all(s not in ("", "nan") for s in scores)


def test_features_option_and_na_markers(tmp_path, capsys, model_file):
    model, train = model_file
    text, _, _ = _patients(50, random_state=3)
    path = tmp_path / "new.csv"
    path.write_text(text)
    out = tmp_path / "s.csv"
    status, _, err = _run(["score", model, path, "--out", out], capsys)
    assert status == 0, err
    first = out.read_text().splitlines()[:2]
    assert first[0] == "patient_id,score" and first[1].startswith("P00000,")

    # --features picks columns; --drop and --features together are a usage error
    status, _, err = _run(
        [
            "fit",
            train,
            "--target",
            "label",
            "--features",
            "x2",
            "--out",
            out.with_suffix(".trk"),
        ],
        capsys,
    )
    assert status == 0, err
    assert load_model(out.with_suffix(".trk"), with_metadata=True)[1]["features"] == [
        "x2"
    ]
    status, _, err = _run(
        [
            "fit",
            train,
            "--target",
            "label",
            "--features",
            "x2",
            "--drop",
            "note",
            "--out",
            tmp_path / "z.trk",
        ],
        capsys,
    )
    assert status == 2 and "--features and --drop do not go together" in err
    status, _, err = _run(
        ["fit", train, "--target", "label", "--drop", "nope", "--out", tmp_path / "z"],
        capsys,
    )
    assert status == 1 and "no column 'nope' (a --drop column)" in err


@pytest.mark.parametrize("chunk", ["1", "7", "100000"])
def test_chunks_give_the_same_scores(tmp_path, capsys, model_file, chunk):
    model, train = model_file
    out = tmp_path / f"s{chunk}.csv"
    status, _, err = _run(
        ["score", model, train, "--out", out, "--chunk-size", chunk, "--proba"], capsys
    )
    assert status == 0, err
    fitted = load_model(model)
    _, X, _ = _patients(400, random_state=0)
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 400
    np.testing.assert_array_equal(
        [float(r["score"]) for r in rows], calibrated_score(fitted, _frame(X))
    )
    np.testing.assert_array_equal(
        [float(r["probability"]) for r in rows], fitted.predict_proba(_frame(X))[:, 1]
    )


def test_file_formats_quotes_crlf_bom_tabs_and_trailing_blank_lines(
    tmp_path, capsys, model_file
):
    model, _ = model_file
    fitted = load_model(model)
    X, _ = make_nested_squares(5, random_state=4)
    for name, delimiter, newline, bom in [
        ("crlf.csv", ",", "\r\n", ""),
        ("bom.csv", ";", "\n", "\ufeff"),
        ("tab.tsv", "\t", "\n", ""),
        ("pipe.txt", "|", "\n", ""),
    ]:
        lines = [delimiter.join(["patient_id", "x2", "x1"])]
        for i, row in enumerate(X):
            ident = f'"id {delimiter} {i}"'  # a quoted id holding the delimiter
            values = [repr(float(row[1])), repr(float(row[0]))]
            lines.append(delimiter.join([ident, *values]))
        path = tmp_path / name
        path.write_text(bom + newline.join(lines) + newline + newline, newline="")
        out = tmp_path / (name + ".out")
        status, _, err = _run(["score", model, path, "--out", out], capsys)
        assert status == 0, (name, err)
        rows = list(csv.DictReader(out.open()))
        assert [r["patient_id"] for r in rows] == [
            f"id {delimiter} {i}" for i in range(5)
        ]
        np.testing.assert_array_equal(
            [float(r["score"]) for r in rows], calibrated_score(fitted, _frame(X))
        )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"x1,x2\n1,2\n\xff\xfe,3\n", "line 3: not UTF-8 text (byte 0xff"),
        (b"x1,x2\n1,2\n3,4\n5,x\n", "line 4, column 'x2': 'x' is not a number"),
        (b"x1,x2\n1,2\n3;4\n", "line 3: 1 field, but the header has 2"),
        (b"", "is empty"),
        (b"x1,x2\n", "has a header but no data rows"),
        (b"PK\x03\x04\x14\x00\x00\x00", "binary file"),
    ],
)
def test_score_data_errors_name_the_line(
    tmp_path, capsys, model_file, content, message
):
    model, _ = model_file
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    out = tmp_path / "s.csv"
    status, _, err = _run(["score", model, path, "--out", out], capsys)
    assert status == 1
    assert message in err, err
    assert not out.exists()


def test_permission_denied(tmp_path, capsys, model_file, monkeypatch):
    model, train = model_file
    from treerank.cli import _commands, _csv

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_csv, "open", denied, raising=False)
    status, _, err = _run(["score", model, train], capsys)
    assert status == 1 and "train.csv: permission denied (cannot read)" in err
    monkeypatch.undo()
    real_access = os.access
    monkeypatch.setattr(
        _commands.os,
        "access",
        lambda p, mode: str(p) != str(model) and real_access(p, mode),
    )
    status, _, err = _run(["score", model, train], capsys)
    assert status == 1 and "m.trk: permission denied" in err
    monkeypatch.setattr(_commands.os, "access", lambda p, mode: False)
    status, _, err = _run(["score", model, train, "--out", tmp_path / "s.csv"], capsys)
    assert status == 1 and "permission denied in" in err


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root reads every file whatever its mode",
)
def test_permission_denied_on_a_real_file(tmp_path, capsys, model_file):
    model, train = model_file
    train.chmod(0)
    status, _, err = _run(["score", model, train], capsys)
    assert status == 1 and "permission denied" in err


def test_control_characters_from_data_are_escaped(tmp_path, capsys):
    X, y = make_nested_squares(300, random_state=0)
    evil = "\x1b[31mred\r\x1b[0m"
    path = tmp_path / "evil.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow([evil, "x2", "label"])
        for row, label in zip(X, y):
            writer.writerow([*row, label])
    model = tmp_path / "m.trk"
    fit = ["fit", path, "--target", "label", "--model", "tree", "--out", model]
    status, _, err = _run(fit, capsys)
    assert status == 0, err
    status, text, _ = _run(["export", model, "--format", "text"], capsys)
    assert status == 0 and "\\x1b[31mred" in text and "\x1b" not in text
    status, dot, _ = _run(["export", model, "--format", "dot"], capsys)
    assert status == 0 and "\x1b" not in dot
    other = tmp_path / "other.csv"
    other.write_text("x2,label\n1,0\n")
    status, _, err = _run(["score", model, other], capsys)
    assert status == 1 and "\x1b" not in err and "\\x1b[31mred\\r\\x1b[0m" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("\x1b[31mred,x2,label\n1,\x1b[2J,0\n3,4,1\n")
    status, _, err = _run(["fit", bad, "--target", "label", "--out", "z"], capsys)
    assert status == 1 and "\x1b" not in err and "'\\x1b[2J' is not a number" in err


def test_every_library_error_is_a_message_not_a_traceback(
    tmp_path, capsys, model_file, monkeypatch
):
    model, train = model_file
    import treerank.model_io

    for error in (OverflowError("big"), RecursionError("deep"), KeyError("k")):

        def fail(*args, error=error, **kwargs):
            raise error

        monkeypatch.setattr(treerank.model_io, "load_model", fail)
        status, _, err = _run(["score", model, train], capsys)
        assert status == 1
        assert err.startswith("treerank score: error: ") and type(error).__name__ in err


def test_help_shows_the_defaults(capsys):
    for command, expected in [
        ("fit", ["(default: none)", "(default: auto)", "(default: forest)"]),
        ("score", ["(default: -)", "(default: 10000)"]),
        ("stability", ["(default: 20)", "(default: median)"]),
    ]:
        with pytest.raises(SystemExit) as info:
            main([command, "--help"])
        assert info.value.code == 0
        printed = capsys.readouterr().out
        for text in expected:
            assert text in " ".join(printed.split()), (command, text)
        assert "Exit status: 0 ok, 1 bad data or file, 2 bad usage." in printed


@pytest.mark.parametrize(
    "args",
    [
        ["fit", "x.csv", "--target", "y", "--out", "m", "--delimiter", "ab"],
        ["fit", "x.csv", "--target", "y", "--out", "m", "--max-depth", "-1"],
        ["fit", "x.csv", "--target", "y", "--out", "m", "--max-depth", "deep"],
        ["fit", "x.csv", "--target", "y", "--out", "m", "--min-samples-split", "1"],
        ["score"],
        ["nope"],
    ],
)
def test_usage_errors_exit_2(args, capsys):
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2


def test_model_from_stdin_or_to_stdout_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    assert _run(["score", "-", path], capsys)[0] == 2
    status, _, err = _run(["fit", path, "--target", "b", "--out", "-"], capsys)
    assert status == 2 and "cannot be written to standard output" in err
    assert not (tmp_path / "-").exists()


def test_mkdir_creates_the_folder_when_asked(tmp_path, capsys, model_file):
    model, train = model_file
    out = tmp_path / "new" / "dir" / "s.csv"
    status, _, err = _run(["score", model, train, "--out", out], capsys)
    assert status == 1 and not (tmp_path / "new").exists()
    status, _, err = _run(["score", model, train, "--out", out, "--mkdir"], capsys)
    assert status == 0 and out.exists(), err


def test_score_rows_are_valid_csv_with_exact_floats():
    from treerank.cli._commands import format_rows

    rng = np.random.default_rng(0)
    values = rng.normal(size=200) * 10.0 ** rng.integers(-300, 300, 200)
    ids = np.array(
        ["plain", "a,b", 'say "hi"', "two\nlines", "tab\there", *map(str, range(195))],
        dtype=object,
    )
    text = format_rows([ids], [values])
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert [row[0] for row in rows] == list(ids)
    np.testing.assert_array_equal([float(row[1]) for row in rows], values)
    assert format_rows([["x"], ["y"]], []) == "x,y\n"


def test_the_reader_streams_its_input():
    """One chunk of a 20 MB input reads about the chunk plus a 1 MB buffer."""
    from treerank.cli._csv import CsvSource

    X = np.random.default_rng(0).normal(size=(50_000, 20))
    buffer = io.BytesIO()
    header = ",".join(f"x{j}" for j in range(20))
    np.savetxt(buffer, X, delimiter=",", header=header, comments="", fmt="%.17g")
    size = buffer.tell()
    buffer.seek(0)
    assert size > 15_000_000
    source = CsvSource("-", stdin=buffer)
    names = source.header
    chunks = source.chunks(names, n_rows=1000)
    first_line, columns = next(chunks)
    assert first_line == 2
    np.testing.assert_array_equal(columns["x3"], X[:1000, 3])
    assert buffer.tell() < 3_000_000  # not the whole input
    rest = sum(c["x0"].shape[0] for _, c in chunks)
    assert rest == 49_000


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ([], {}),
        (["--max-depth", "none"], {"max_depth": None}),
        (["--max-depth", "4"], {"max_depth": 4}),
        (["--min-samples-split", "auto"], {"min_samples_split": "auto"}),
        (["--min-samples-split", "12"], {"min_samples_split": 12}),
    ],
)
@pytest.mark.parametrize("model", ["tree", "forest"])
def test_growth_options_reach_the_model(model, options, expected):
    from treerank import RankingForest, TreeRank
    from treerank.cli import _build_parser
    from treerank.cli._commands import _build_model

    args = _build_parser().parse_args(
        ["fit", "x.csv", "--target", "y", "--out", "m", "--model", model, *options]
    )
    built = _build_model(args)
    default = (TreeRank if model == "tree" else RankingForest)()
    for name in ("max_depth", "min_samples_split"):
        assert getattr(built, name) == expected.get(name, getattr(default, name))


@pytest.mark.parametrize("model", ["tree", "forest"])
def test_monotonic_option_constrains_the_model(tmp_path, capsys, model):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(400, 3))
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=400) > 0).astype(int)
    path = tmp_path / "train.csv"
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["up", "down", "free", "y"])
        writer.writerows([[*row, label] for row, label in zip(X.tolist(), y)])
    out = tmp_path / "m.trk"
    args = ["fit", path, "--target", "y", "--out", out, "--model", model]
    args += ["--n-estimators", "10", "--monotonic", "up=+1", "down=-1"]
    status, _, err = _run(args, capsys)
    assert status == 0, err
    fitted = load_model(out)
    assert list(fitted.monotonic_cst) == [1, -1, 0]
    # raising "up" never lowers a score, raising "down" never raises one
    names = ["up", "down", "free"]
    base = fitted.decision_function(_frame(X, names))
    for feature, sign in ((0, 1), (1, -1)):
        moved = X.copy()
        moved[:, feature] += rng.uniform(0, 0.5, size=400)
        assert np.all(
            sign * (fitted.decision_function(_frame(moved, names)) - base) >= 0
        )


@pytest.mark.parametrize(
    ("option", "status", "message"),
    [
        (["--monotonic", "nope=+1"], 1, "'nope' is not a feature column"),
        (["--monotonic", "a=+2"], 2, "must be COL=+1, COL=-1 or COL=0"),
        (["--monotonic", "a=1", "a=-1"], 2, "names 'a' twice"),
    ],
)
def test_monotonic_option_errors(tmp_path, capsys, option, status, message):
    path = tmp_path / "train.csv"
    path.write_text("a,b,y\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(40)))
    args = ["fit", path, "--target", "y", "--out", tmp_path / "m.trk", *option]
    try:
        got = main([str(a) for a in args])
    except SystemExit as exit_:  # argparse's usage errors
        got = exit_.code
    assert got == status
    assert message in capsys.readouterr().err
