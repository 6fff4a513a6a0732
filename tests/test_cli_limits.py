"""The CSV reader's limits (issue 26, item 6): a hostile file cannot fill the
memory or the terminal.

Messages quote at most about 80 characters of a field; a line longer than
``--max-line-size`` (16 MB by default) is an error naming the line; the
detection of the delimiter and of the decimal mark reads a bounded prefix.
"""

import io

import pytest

from treerank.cli import main
from treerank.cli._csv import _HEAD_BYTES, CsvError, CsvSource


def _run(args, capsys):
    try:
        status = main([str(a) for a in args])
    except SystemExit as exit_:
        status = exit_.code
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize(
    ("content", "quoted"),
    [
        # a huge value in a numeric column
        ("a,b,label\n1,2,0\n3," + "7x" * 50_000 + ",1\n", "'7x7x7x"),
        # a huge label in a numeric target
        ("a,label\n1,0\n2," + "z" * 100_000 + "\n3,1\n", "'zzzz"),
        # a huge positive label that no row has
        ("a,label\n1,0\n2,1\n", None),
    ],
)
def test_messages_quote_at_most_80_characters_of_a_field(
    tmp_path, capsys, content, quoted
):
    path = tmp_path / "d.csv"
    path.write_text(content)
    options = [] if quoted else ["--positive", "p" * 100_000]
    status, _, err = _run(
        ["fit", path, "--target", "label", *options, "--out", tmp_path / "m"], capsys
    )
    assert status == 1
    assert len(err) < 600, err[:600]
    assert "characters)" in err
    if quoted:
        assert quoted in err


def test_long_column_names_are_shortened(tmp_path, capsys):
    path = tmp_path / "d.csv"
    long_name = "n" * 5000
    path.write_text(f"{long_name},label\n1,0\n2,1\n")
    status, _, err = _run(["fit", path, "--target", "label", "--out", "m"], capsys)
    assert status == 1 and "a column name of 5000 characters" in err
    assert len(err) < 400
    path.write_text("a,label\n1,0\n2,1\n")
    status, _, err = _run(["fit", path, "--target", "x" * 5000, "--out", "m"], capsys)
    assert status == 1 and "(5000 characters)" in err and len(err) < 500


@pytest.mark.parametrize("command", ["fit", "score"])
def test_a_line_longer_than_the_limit_is_an_error_naming_it(tmp_path, capsys, command):
    path = tmp_path / "d.csv"
    long_field = "word " * 2000
    path.write_text(f"a,note,label\n1,x,0\n3,{long_field},1\n5,y,1\n")
    out = tmp_path / "m.trk"
    if command == "score":
        good = tmp_path / "good.csv"
        good.write_text("a,label\n1,0\n3,1\n5,1\n7,0\n")
        assert _run(["fit", good, "--target", "label", "--out", out], capsys)[0] == 0
        args = ["score", out, path]
    else:
        args = ["fit", path, "--target", "label", "--drop", "note", "--out", out]
    status, _, err = _run([*args, "--max-line-size", "4K"], capsys)
    assert status == 1
    assert "d.csv, line 3: longer than 4 KB (the longest line read; see " in err
    assert "--max-line-size" in err
    # a larger limit reads it
    status, _, err = _run([*args, "--max-line-size", "1M", "--force"], capsys)
    assert status == 0, err


def test_the_default_limit_is_16_megabytes(tmp_path, capsys):
    path = tmp_path / "d.csv"
    with open(path, "w") as handle:
        handle.write("a,b,label\n1,2,0\n3,")
        handle.write("1" * (16 << 20))
        handle.write(",1\n")
    status, _, err = _run(
        ["fit", path, "--target", "label", "--out", tmp_path / "m"], capsys
    )
    assert status == 1 and "line 3: longer than 16 MB" in err
    assert len(err) < 400


@pytest.mark.parametrize("chunk", ["10000", "5"])
def test_an_unbalanced_quote_is_bounded_by_the_limit(tmp_path, capsys, chunk):
    path = tmp_path / "d.csv"
    body = "".join(f"{i},{i % 2},0\n" for i in range(2000))
    path.write_text('a,b,label\n1,2,0\n3,"4,1\n' + body)
    args = ["fit", path, "--target", "label", "--chunk-size", chunk, "--out", "m"]
    status, _, err = _run([*args, "--max-line-size", "4K"], capsys)
    assert status == 1
    assert "line 3: a quoted field longer than 4 KB (an unbalanced quote?" in err
    # within the limit, the quote is still open at the end of the file
    status, _, err = _run(args, capsys)
    assert status == 1
    assert "line 3: a quote opened on this line is not closed before the end" in err


class _CountingStream(io.RawIOBase):
    """A binary stream of ``head`` then ``size`` bytes of ``fill``, counting reads."""

    def __init__(self, head, fill, size):
        self._head, self._fill, self._left = head, fill, size
        self.bytes_read = 0

    def readable(self):
        return True

    def readinto(self, buffer):
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
        else:
            n = min(len(buffer), self._left)
            buffer[:n] = self._fill * n
            self._left -= n
        self.bytes_read += n
        return n


def test_the_detection_reads_a_bounded_prefix():
    # a header, then a data line of 50 MB: the delimiter and the decimal
    # mark are found from the header without reading the line
    stream = _CountingStream(b"a;b;label\n1;", b"7", 50 << 20)
    source = CsvSource("-", stdin=io.BufferedReader(stream), max_line_bytes=1 << 20)
    assert source.delimiter == ";" and source.header == ["a", "b", "label"]
    assert stream.bytes_read <= _HEAD_BYTES + (1 << 20) + (1 << 16)
    with pytest.raises(CsvError, match="line 2: longer than 1 MB"):
        next(source.chunks(["a", "b"], text_columns=["label"]))
    assert stream.bytes_read <= _HEAD_BYTES + 3 * (1 << 20)


def test_a_line_cut_by_the_prefix_does_not_mislead_the_detection(tmp_path, capsys):
    # line 2 is longer than the prefix the detection reads: it is cut there,
    # and left out of the detection (it used to make the delimiter ambiguous)
    path = tmp_path / "d.csv"
    note = "word " * (2 * _HEAD_BYTES // 5)
    rows = "".join(f"{i};{i % 3};{i % 2};short\n" for i in range(50))
    path.write_text(f"a;b;label;note\n1;2;0;{note}\n" + rows)
    status, _, err = _run(
        ["fit", path, "--target", "label", "--drop", "note", "--out", tmp_path / "m"],
        capsys,
    )
    assert status == 0, err
    assert "delimiter ';'" in err


def test_compare_reads_decimal_commas_and_honours_the_line_limit(tmp_path, capsys):
    path = tmp_path / "s.csv"
    rows = "".join(f"{i % 7},{(i * 3) % 5},{i % 2}\n" for i in range(40))
    path.write_text("m1;m2;label\n" + rows.replace(",", ";") + "0,5;1,5;1\n")
    status, out, err = _run(["compare", path, "--label", "label"], capsys)
    assert status == 0, err
    assert "m1" in out
    status, _, err = _run(
        ["compare", path, "--label", "label", "--decimal", "."], capsys
    )
    assert status == 1 and "'0,5' is not a number" in err
    path.write_text("m1,m2,label\n1,2,0\n" + "3," + "4" * 5000 + ",1\n")
    status, _, err = _run(
        ["compare", path, "--label", "label", "--max-line-size", "4K"], capsys
    )
    assert status == 1 and "line 3: longer than 4 KB" in err
