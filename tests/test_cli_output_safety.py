"""CSV outputs safe to open in a spreadsheet, identifiers kept byte for byte.

The audit: ids such as ``=cmd|' /C calc'!A0``, ``+SUM(1+1)``, ``@SUM(A1)``,
a category ``=1+2`` and a column name ``=1+1|cmd`` were written verbatim into
the ``score`` and ``explain`` CSVs; ids with leading or trailing spaces or
carriage returns inside quoted values were stripped (4 of 17 ids no longer
joined back to the source). Inputs: CR-only line ends, UTF-16 files.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import csv
import io

import numpy as np
import pytest

from treerank.cli import main
from treerank.cli._text import FORMULA_STARTS, csv_field, spreadsheet_safe

IDS = [
    " lead",
    "trail ",
    "  both  ",
    "\r\rcr",
    "a\rb",
    "x\r\ny",
    "\ufeffbom",
    "mid\ufeffdle",
    "tab\t",
    "\ttab",
    "=cmd|' /C calc'!A0",
    "+SUM(1+1)",
    "@SUM(A1)",
    '=HYPERLINK("http://example.com","x")',
    "-2",
    "-x",
    "normal",
    'q"uote',
    "com,ma",
    "été",
]


def _is_formula(text):
    return text[:1] in FORMULA_STARTS and not _is_number(text)


def _quoted(text):
    return '"' + text.replace('"', '""') + '"'


def _cells(text):
    return list(csv.reader(io.StringIO(text, newline="")))


def _run(args, capsys):
    status = main([str(a) for a in args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _assert_spreadsheet_safe(rows):
    for row in rows:
        for cell in row:
            if cell[:1] in FORMULA_STARTS:
                assert _is_number(cell), repr(cell)


@pytest.fixture
def table(tmp_path):
    """A file with hostile ids, a hostile column name and hostile categories."""
    rng = np.random.default_rng(0)
    n = 120
    ids = [IDS[i % len(IDS)] + ("" if i < len(IDS) else f"#{i}") for i in range(n)]
    categories = np.array(["=1+2", "plain", "-neg", "@at"])
    cat = categories[rng.integers(0, 4, n)]
    x = rng.normal(size=n)
    y = (x + np.isin(cat, ["=1+2", "@at"]) + 0.3 * rng.normal(size=n)) > 0.5
    lines = ["id,=1+1|cmd,cat,y"]
    for i in range(n):
        number = float(x[i])
        lines.append(f"{_quoted(ids[i])},{number!r},{_quoted(cat[i])},{int(y[i])}")
    path = tmp_path / "table.csv"
    path.write_bytes(("\n".join(lines) + "\n").encode())
    return path, ids


@pytest.fixture
def model(tmp_path, table, capsys):
    path, _ = table
    out = tmp_path / "m.trk"
    status, _, err = _run(
        ["fit", path, "--target", "y", "--id", "id", "--out", out], capsys
    )
    assert status == 0, err
    return out


def test_the_rule():
    assert spreadsheet_safe("=1+1") == "'=1+1"
    for start in FORMULA_STARTS:
        assert spreadsheet_safe(start + "x") == "'" + start + "x"
    # plain numbers stay numbers; other text is unchanged
    for text in ("-2", "+3", "-1.5e-3", "-.5", "a=b", "", "'=x"):
        assert spreadsheet_safe(text) == text
    assert csv_field(" a") == '" a"' and csv_field("a\rb") == '"a\rb"'
    assert csv_field("=x", raw=True) == "=x"


@pytest.mark.parametrize("chunk_size", ["7", "10000"])
def test_score_ids_round_trip_and_formulas_are_neutralised(
    tmp_path, table, model, capsys, chunk_size
):
    path, ids = table
    # the decision scale: negative scores, which must stay plain numbers
    status, out, err = _run(
        ["score", model, path, "--chunk-size", chunk_size, "--scale", "decision"],
        capsys,
    )
    assert status == 0, err
    rows = _cells(out)
    assert rows[0] == ["id", "score"]
    _assert_spreadsheet_safe(rows)
    written = [row[0] for row in rows[1:]]
    for original, got in zip(ids, written):
        if _is_formula(original):
            assert got == "'" + original
        else:  # byte for byte
            assert got == original
    # the scores are numbers, negative ones included, never quoted
    scores = [row[1] for row in rows[1:]]
    assert any(score.startswith("-") for score in scores)
    assert all(_is_number(score) for score in scores)
    # --raw-text: every id as it is
    status, out, err = _run(
        ["score", model, path, "--chunk-size", chunk_size, "--raw-text"], capsys
    )
    assert status == 0, err
    assert [row[0] for row in _cells(out)[1:]] == ids


def test_a_byte_order_mark_inside_values_is_kept(tmp_path, capsys):
    # pandas drops a BOM at the start of its input: each chunk's first row
    values = ["\ufeffa", "b", "\ufeffc", "d", "\ufeff"]
    path = tmp_path / "bom.csv"
    rows = [f"{v},{i},{i % 2}" for i, v in enumerate(values)]
    path.write_bytes(("\ufeffid,x,y\n" + "\n".join(rows) + "\n").encode())
    out = tmp_path / "m.trk"
    assert (
        _run(["fit", path, "--target", "y", "--id", "id", "--out", out], capsys)[0] == 0
    )
    for chunk_size in ("1", "2", "100"):
        status, text, err = _run(
            ["score", out, path, "--chunk-size", chunk_size], capsys
        )
        assert status == 0, err
        assert [row[0] for row in _cells(text)[1:]] == values


def test_explain_neutralises_names_categories_and_rules(tmp_path, table, model, capsys):
    path, ids = table
    status, out, err = _run(
        [
            "explain",
            model,
            path,
            "--background",
            path,
            "--top",
            "2",
            "--direction",
            "up",
        ],
        capsys,
    )
    assert status == 0, err
    rows = _cells(out)
    _assert_spreadsheet_safe(rows)
    text = out
    # the column name and the categories appear, neutralised
    assert "'=1+1|cmd" in text and ("'=1+2" in text or "'@at" in text)
    assert [row[0] for row in rows[1:]] == [
        "'" + i if _is_formula(i) else i for i in ids
    ]
    status, raw, err = _run(
        [
            "explain",
            model,
            path,
            "--background",
            path,
            "--top",
            "2",
            "--direction",
            "up",
            "--raw-text",
        ],
        capsys,
    )
    assert status == 0, err
    raw_rows = _cells(raw)
    assert [row[0] for row in raw_rows[1:]] == ids
    assert any(cell.startswith("=1+1|cmd") for row in raw_rows for cell in row)


def test_compare_neutralises_model_names(tmp_path, capsys):
    rng = np.random.default_rng(0)
    path = tmp_path / "scores.csv"
    lines = ["=1+1|cmd,@b,-c,label"]
    lines += [
        f"{rng.normal()!r},{rng.normal()!r},{rng.normal()!r},{i % 2}" for i in range(40)
    ]
    path.write_text("\n".join(lines) + "\n")
    base = ["compare", path, "--label", "label", "--format", "csv"]
    status, out, err = _run([*base, "--n-resamples", "99"], capsys)
    assert status == 0, err
    rows = _cells(out)
    _assert_spreadsheet_safe(rows)
    assert {row[1] for row in rows[1:]} <= {"'=1+1|cmd", "'@b", "'-c"}
    assert any(
        _is_number(cell) and cell.startswith("-") for row in rows for cell in row
    )
    status, out, err = _run([*base, "--n-resamples", "99", "--raw-text"], capsys)
    assert status == 0, err
    assert {row[1] for row in _cells(out)[1:]} <= {"=1+1|cmd", "@b", "-c"}


def test_cr_only_line_ends_are_read(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = ["id,a,b,y"] + [
        f"r{i},{rng.normal()!r},{rng.normal()!r},{i % 2}" for i in range(60)
    ]
    lf, cr = tmp_path / "lf.csv", tmp_path / "cr.csv"
    lf.write_bytes(("\n".join(rows) + "\n").encode())
    cr.write_bytes(("\r".join(rows) + "\r").encode())
    outputs = []
    for path in (lf, cr):
        model = path.with_suffix(".trk")
        status, _, err = _run(
            ["fit", path, "--target", "y", "--id", "id", "--out", model], capsys
        )
        assert status == 0, err
        status, out, err = _run(["score", model, path, "--chunk-size", "7"], capsys)
        assert status == 0, err
        outputs.append(out)
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize(
    ("encoding", "name"),
    [
        ("utf-16", "UTF-16 (little-endian)"),
        ("utf-16-le", "UTF-16 (little-endian)"),
        ("utf-16-be", "UTF-16 (big-endian)"),
        ("utf-32", "UTF-32 (little-endian)"),
    ],
)
def test_utf16_files_are_named_as_an_encoding(tmp_path, capsys, encoding, name):
    path = tmp_path / "wide.csv"
    path.write_bytes("a,b,y\n1,2,0\n3,4,1\n".encode(encoding))
    status, _, err = _run(["fit", path, "--target", "y", "--out", "m.trk"], capsys)
    assert status == 1
    assert f"is {name} text, not UTF-8" in err and "iconv" in err
    assert "binary" not in err
