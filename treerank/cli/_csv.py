"""A streaming CSV reader for the command line, with errors that say where.

A :class:`CsvSource` opens a file (or standard input for ``-``), refuses
binary content, finds the delimiter (or takes the one given), reads the header
and then yields the rows in chunks of named columns. Numeric columns are parsed
by pandas' C parser; the structure of every chunk is checked first (every line
has as many fields as the header, no empty line inside the data), so that an
error names the file, the line and the column. Empty cells and the usual
missing-value markers (``NA``, ``NaN``, ``null``, ...) of a numeric column are
read as NaN; a value that is not a number is an error.

Columns can also be read as text (identifiers, labels), as categories (text,
missing markers as None), or with their kind inferred from the values
(numbers, or text). The decimal mark is ``.`` or ``,`` (given, or detected from
the first lines when they show only one of the two); a number written with the
other mark gets a message that names ``--decimal``.

Text is UTF-8 (a byte order mark at the start is skipped); a file in UTF-16
or UTF-32 is refused with a message that names its encoding. Lines end with
LF or CRLF; a file whose lines end with CR alone (detected from its first
64 KB, which then hold no LF) is read with every CR as a line end, a CR inside
a quoted value included.

Limits keep a hostile file from exhausting memory or the terminal: a line
(or a quoted field spanning lines) longer than ``max_line_bytes`` is an error
naming the line, the detection of the delimiter and of the decimal mark reads
a bounded prefix of the file, and messages quote at most about 80 characters
of a field.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import csv
import io
import os
import re
import sys

import numpy as np

from treerank.cli._text import escape, shorten

__all__ = [
    "DECIMAL_MARKS",
    "DELIMITERS",
    "MAX_LINE_BYTES",
    "MISSING_MARKERS",
    "CsvError",
    "CsvSource",
    "looks_like_decimal_comma",
    "looks_like_decimal_point",
]

DELIMITERS = (",", ";", "\t", "|")
DECIMAL_MARKS = (".", ",")
MISSING_MARKERS = ("", "NA", "N/A", "n/a", "NaN", "nan", "NAN", "null", "NULL", "None")
MAX_LINE_BYTES = 16 << 20
"""Default longest line (bytes; a quoted field spanning lines counts whole)."""
_CHUNK_BYTES = 64 << 20  # a chunk holds about this much text at most
_HEAD_BYTES = 1 << 16  # the prefix read to detect the delimiter and decimal mark
_SNIFF_LINES = 50

# a number with a decimal comma that cannot be a thousands-grouped integer
# ("26,5", "0,125", "-,5", "1,5e3"; not "1,234" nor "12,345,678")
_COMMA_NUMBER = re.compile(r"^[+-]?(\d+,\d*|,\d+)([eE][+-]?\d+)?$")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+$")
_DOT_NUMBER = re.compile(r"^[+-]?(\d+\.\d*|\.\d+)([eE][+-]?\d+)?$")


class CsvError(ValueError):
    """A data error in a CSV input (the message names file, line and column)."""


def _delimiter_name(delimiter):
    return {"\t": "tab (\\t)"}.get(delimiter, repr(delimiter))


def looks_like_decimal_comma(text):
    """Whether ``text`` reads as a number written with a decimal comma.

    Examples
    --------
    >>> from treerank.cli._csv import looks_like_decimal_comma
    >>> [looks_like_decimal_comma(t) for t in ["26,5", "-0,25", "1.5", "abc"]]
    [True, True, False, False]
    """
    return bool(_COMMA_NUMBER.match(str(text).strip()))


def looks_like_decimal_point(text):
    """Whether ``text`` reads as a number written with a decimal point.

    Examples
    --------
    >>> from treerank.cli._csv import looks_like_decimal_point
    >>> [looks_like_decimal_point(t) for t in ["2.5", "-.5", "26,5", "1.2.3"]]
    [True, True, False, False]
    """
    return bool(_DOT_NUMBER.match(str(text).strip()))


def _size_text(n_bytes):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n_bytes >= size and n_bytes % size == 0:
            return f"{n_bytes // size} {unit}"
    return f"{n_bytes} bytes"


class _Prefixed(io.RawIOBase):
    """A raw stream that first returns ``head`` then the rest of ``stream``.

    With ``cr_lines``, every carriage return is read as a line feed (a file
    whose lines end with CR alone).
    """

    def __init__(self, head, stream, cr_lines=False):
        self._head = memoryview(head)
        self._stream = stream
        self._cr_lines = cr_lines

    def readable(self):
        return True

    def readinto(self, buffer):
        if self._head.nbytes:
            n = min(len(buffer), self._head.nbytes)
            data = self._head[:n]
            self._head = self._head[n:]
        else:
            data = self._stream.read(len(buffer))
            n = len(data)
        if self._cr_lines:
            data = bytes(data).replace(b"\r", b"\n")
        buffer[:n] = data
        return n


# byte order marks of the encodings a CSV file is sometimes saved in
_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32 (little-endian)"),
    (b"\x00\x00\xfe\xff", "UTF-32 (big-endian)"),
    (b"\xff\xfe", "UTF-16 (little-endian)"),
    (b"\xfe\xff", "UTF-16 (big-endian)"),
)


def _wide_encoding(head):
    """The name of a UTF-16 or UTF-32 encoding that ``head`` is in, else None.

    By its byte order mark, or without one by its NUL bytes: text of ASCII
    characters in UTF-16 has one NUL in every other byte.
    """
    for bom, name in _BOMS:
        if head.startswith(bom):
            return name
    sample = head[:4096]
    if len(sample) < 8:
        return None
    even, odd = sample[0::2], sample[1::2]
    if odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
        return "UTF-16 (little-endian)"
    if even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
        return "UTF-16 (big-endian)"
    return None


def _field_count(line, delimiter):
    """Number of fields of one text line, quote-aware only when needed."""
    if '"' not in line:
        return line.count(delimiter) + 1
    return len(next(csv.reader([line], delimiter=delimiter), [""]))


def _head_lines(text, complete):
    """The first non-blank lines of the head; a line cut by its end is left out.

    ``complete``: the head holds the whole input. The header is kept even
    when cut (a header longer than the head is still split by its delimiter).
    """
    lines = text.splitlines()
    if not complete and not text.endswith(("\n", "\r")) and len(lines) > 1:
        lines = lines[:-1]
    numbered = enumerate(lines[:_SNIFF_LINES], start=1)
    return [(number, line) for number, line in numbered if line.strip()]


def _sniff(lines, path):
    """The delimiter that splits the header (> 1 fields) like most first lines.

    Each candidate splits the header into ``k`` fields; among those with
    ``k > 1``, the one that splits the largest share of the next lines into
    ``k`` fields as well wins (then the larger ``k``). A header that no
    candidate splits is a single column. A wrong line is reported later, with
    its number, by the structure check. Only the lines of the bounded head
    are read.
    """
    lines = [line for _, line in lines]
    if not lines:
        return ","
    header, rows = lines[0], lines[1:]
    best, best_key = ",", None
    for delimiter in DELIMITERS:
        fields = _field_count(header, delimiter)
        if fields < 2:
            continue
        agree = sum(_field_count(row, delimiter) == fields for row in rows)
        key = (agree / len(rows) if rows else 1.0, fields)
        if best_key is None or key > best_key:
            best, best_key = delimiter, key
    if best_key is not None and best_key[0] < 0.5:
        raise CsvError(
            f"{path}: cannot tell the delimiter: {_delimiter_name(best)} splits the "
            f"header into {best_key[1]} fields but most of the next lines into "
            "another number; pass --delimiter."
        )
    return best


def _sniff_decimal(lines, delimiter, path):
    """``","`` when the first lines show numbers with a decimal comma only.

    Returns ``"."`` when they show decimal points only, None when they show
    neither (integers, text). With a comma delimiter a decimal comma would
    need quotes, and a quoted ``"1,234"`` is more often a thousands
    separator: nothing is detected. Numbers with both marks are an error that
    asks for ``--decimal``.
    """
    if delimiter == "," or len(lines) < 2:
        return None
    try:
        records = [
            (number, next(csv.reader([line], delimiter=delimiter)))
            for number, line in lines
        ]
    except csv.Error:
        return None
    header, comma, dot = records[0][1], None, None
    for number, record in records[1:]:
        for j, field in enumerate(record):
            field = field.strip()
            if comma is None and _COMMA_NUMBER.match(field):
                if not _THOUSANDS.match(field):
                    comma = (number, j, field)
            elif dot is None and _DOT_NUMBER.match(field):
                dot = (number, j, field)
    if comma is not None and dot is not None:

        def where(found):
            line, j, field = found
            name = header[j] if j < len(header) else f"#{j + 1}"
            return f"line {line}, column {shorten(name)}: {shorten(field)}"

        raise CsvError(
            f"{path}: cannot tell the decimal mark: {where(comma)} has a decimal "
            f"comma but {where(dot)} a decimal point; pass --decimal ',' or "
            "--decimal '.'."
        )
    if comma is not None:
        return ","
    return "." if dot is not None else None


def _categories(series):
    """Text values of a column: stripped str, None where missing."""
    values = series.to_numpy(dtype=object)
    missing = set(MISSING_MARKERS)
    out = np.empty(values.shape[0], dtype=object)
    for i, value in enumerate(values):
        if isinstance(value, str):
            value = value.strip()
            out[i] = None if value in missing else value
        else:  # NaN: an empty cell or a marker
            out[i] = None
    return out


# from this many columns read, the text columns are read in a second pass
_WIDE_COLUMNS = 256


class _NumberBlock:
    """The columns of a chunk that pandas parsed as numbers, as one float64 block.

    Taking the columns of a frame one by one costs pandas tens of
    microseconds each; a wide file's numeric columns are converted at once,
    and :meth:`get` returns a column of the block (a float64 array) or, for
    a column that is not numeric, the frame's Series.
    """

    def __init__(self, frame, columns):
        self.index = {}
        if len(columns) < _WIDE_COLUMNS:
            self.block = None
            return
        dtypes = frame.dtypes
        numeric = [j for j in columns if dtypes[j].kind in "iuf"]
        if len(numeric) == frame.shape[1]:  # no column to leave out: no copy
            numeric = list(frame.columns)
            self.block = frame.to_numpy(dtype=np.float64)
        else:
            self.block = frame[numeric].to_numpy(dtype=np.float64)
        self.index = {j: k for k, j in enumerate(numeric)}

    def get(self, j, frame):
        k = self.index.get(j)
        return frame[j] if k is None else self.block[:, k]


class CsvSource:
    """A CSV input with a header row, read in chunks.

    Parameters
    ----------
    path : str
        File name, or ``"-"`` for standard input.
    delimiter : str or None, default=None
        Field separator; None: sniffed among ``, ; TAB |`` from the first lines.
    decimal : {".", ","} or None, default=None
        Decimal mark of the numbers; None: ``","`` when the first lines show
        numbers with a decimal comma only (and the delimiter is not a comma),
        else ``default_decimal``. With a comma delimiter and a decimal comma,
        the numbers are quoted (``"26,5"``).
    default_decimal : {".", ","}, default="."
        Decimal mark when neither is given nor detected.
    max_line_bytes : int, default=MAX_LINE_BYTES
        Longest line read (a quoted field spanning lines counts whole); a
        longer one is an error naming the line.
    stdin : binary file or None, default=None
        Stream read for ``"-"`` (``sys.stdin.buffer`` if None).

    Attributes
    ----------
    name : str
        How the input is named in messages.
    delimiter : str
    decimal : str
    decimal_detected : bool
        Whether ``decimal`` was detected (rather than given or the default).
    header : list of str
        Column names.
    positions : dict of str to int
        The index of each column name.
    """

    def __init__(
        self,
        path,
        *,
        delimiter=None,
        decimal=None,
        default_decimal=".",
        max_line_bytes=MAX_LINE_BYTES,
        stdin=None,
    ):
        self.name = "<stdin>" if path == "-" else escape(os.fspath(path))
        self.max_line_bytes = int(max_line_bytes)
        if path == "-":
            stream = sys.stdin.buffer if stdin is None else stdin
        else:
            stream = self._open(os.fspath(path))
        try:
            head = stream.read(_HEAD_BYTES)
            self._raw = stream
            self._check_text(head)
            # lines ended by CR alone (old Mac files): read as line feeds
            self.cr_lines = b"\r" in head and b"\n" not in head
            if self.cr_lines:
                head = head.replace(b"\r", b"\n")
            self._stream = io.BufferedReader(
                _Prefixed(head, stream, self.cr_lines), 1 << 20
            )
            text = self._decode_head(head)
            lines = _head_lines(text, complete=len(head) < _HEAD_BYTES)
            self.delimiter = (
                _sniff(lines, self.name) if delimiter is None else delimiter
            )
            self.decimal, self.decimal_detected = decimal, False
            if decimal is None:
                found = _sniff_decimal(lines, self.delimiter, self.name)
                self.decimal_detected = found is not None
                self.decimal = default_decimal if found is None else found
            if self.decimal == self.delimiter != ",":
                raise CsvError(
                    f"{self.name}: the decimal mark {self.decimal!r} cannot also be "
                    "the delimiter; pass another --delimiter or --decimal."
                )
            self._line = 0  # lines consumed so far
            self.header = self._read_header()
            self.positions = {name: j for j, name in enumerate(self.header)}
        except BaseException:
            stream.close() if path != "-" else None
            raise

    # -- opening and checks -------------------------------------------------
    def _open(self, path):
        if os.path.isdir(path):
            raise CsvError(f"{self.name} is a directory, not a CSV file.")
        try:
            return open(path, "rb")
        except FileNotFoundError:
            raise CsvError(f"{self.name}: no such file.") from None
        except PermissionError:
            raise CsvError(f"{self.name}: permission denied (cannot read).") from None

    def _check_text(self, head):
        if not head.strip():
            raise CsvError(
                f"{self.name} is empty: a CSV file with a header row is expected."
            )
        encoding = _wide_encoding(head)
        if encoding is not None:
            raise CsvError(
                f"{self.name} is {encoding} text, not UTF-8: convert it to UTF-8 "
                f"(e.g. iconv -f {encoding.split()[0]} -t UTF-8, or save it as 'CSV "
                "UTF-8' from the spreadsheet) and read the converted file."
            )
        nul = head.find(b"\x00")
        if nul >= 0:
            raise CsvError(
                f"{self.name} is a binary file, not CSV text (NUL byte at offset "
                f"{nul})."
            )

    def _decode_head(self, head):
        if head.startswith(b"\xef\xbb\xbf"):
            self._stream.read(3)
            head = head[3:]
        text = head.decode("utf-8", errors="ignore")
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            if len(head) >= _HEAD_BYTES - 3 and exc.start >= len(head) - 3:
                return text  # a multi-byte character cut at the end of the head
            line = head[: exc.start].count(b"\n") + 1
            raise CsvError(
                f"{self.name}, line {line}: not UTF-8 text (byte "
                f"0x{head[exc.start]:02x} at offset {exc.start}): a binary file or "
                "another encoding."
            ) from None
        return text

    def _readline(self):
        """One line (bytes), at most ``max_line_bytes``: longer is an error."""
        line = self._stream.readline(self.max_line_bytes + 1)
        if len(line) > self.max_line_bytes:
            self._readline_too_long()
        return line

    def _read_header(self):
        raw = self._readline()
        self._line = 1
        line = raw.decode("utf-8").rstrip("\r\n")
        try:
            header = next(csv.reader([line], delimiter=self.delimiter))
        except csv.Error as exc:
            raise CsvError(f"{self.name}, line 1: malformed header ({exc}).") from None
        header = [name.strip() for name in header]
        if any(len(name) > 1000 for name in header):
            long = next(name for name in header if len(name) > 1000)
            raise CsvError(
                f"{self.name}, line 1: a column name of {len(long)} characters "
                f"({shorten(long)}): is the first line a header?"
            )
        if any(name == "" for name in header):
            raise CsvError(
                f"{self.name}, line 1: the header has an empty column name "
                f"(delimiter {_delimiter_name(self.delimiter)})."
            )
        seen, duplicates = set(), []
        for name in header:
            if name in seen and name not in duplicates:
                duplicates.append(name)
            seen.add(name)
        if duplicates:
            raise CsvError(
                f"{self.name}, line 1: duplicate column names "
                f"{', '.join(shorten(name) for name in duplicates[:10])}."
            )
        return header

    def close(self):
        """Close the input (standard input is left open)."""
        if self._raw is not sys.stdin.buffer:
            self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()

    # -- columns --------------------------------------------------------------
    def describe_columns(self, limit=12):
        """The column names for a message (escaped, shortened)."""
        names = self.header[:limit]
        more = len(self.header) - len(names)
        text = ", ".join(shorten(name) for name in names)
        if more:
            text += f", ... ({more} more)"
        return f"[{text}]"

    def column_index(self, name, role):
        """Index of column ``name``; a clear error if there is none."""
        if name in self.positions:
            return self.positions[name]
        hint = ""
        if len(self.header) == 1:
            joined = "".join(self.header)
            others = [d for d in DELIMITERS if d != self.delimiter and d in joined]
            if others:
                hint = (
                    " The header was split on "
                    f"{_delimiter_name(self.delimiter)} into a single column but "
                    f"contains {_delimiter_name(others[0])}: pass "
                    f"--delimiter {others[0]!r}."
                )
        raise CsvError(
            f"{self.name} has no column {shorten(name)} ({role}); its columns are "
            f"{self.describe_columns()}.{hint}"
        )

    # -- chunks ---------------------------------------------------------------
    def _next_lines(self, n_rows):
        """The next lines: at most ``n_rows`` rows and about ``_CHUNK_BYTES``.

        A quoted field may span lines: the lines are read on until its quote
        closes, within ``max_line_bytes`` from the line that opened it.
        """
        readline, limit = self._stream.readline, self.max_line_bytes + 1
        budget = max(_CHUNK_BYTES, self.max_line_bytes)
        lines, size = [], 0
        for _ in range(n_rows):
            line = readline(limit)
            if not line:
                break
            if len(line) == limit:
                self._line += len(lines)
                self._readline_too_long()
            lines.append(line)
            size += len(line)
            if size >= budget:
                break
        if not lines or b"".join(lines).count(b'"') % 2 == 0:
            return lines
        # a quoted field is open at the end: find the line that opened it
        parity, opened = 0, 0
        for index, line in enumerate(lines):
            if line.count(b'"') % 2:
                parity ^= 1
                if parity:
                    opened = index
        size = sum(map(len, lines[opened:]))
        while parity:
            if size > self.max_line_bytes:
                break
            line = readline(limit)
            if not line:
                raise CsvError(
                    f"{self.name}, line {self._line + opened + 1}: a quote opened "
                    "on this line is not closed before the end of the file (an "
                    "unbalanced quote)."
                )
            lines.append(line)
            size += len(line)
            parity ^= line.count(b'"') % 2
        if size > self.max_line_bytes:
            raise CsvError(
                f"{self.name}, line {self._line + opened + 1}: a quoted field longer "
                f"than {_size_text(self.max_line_bytes)} (an unbalanced quote?; see "
                "--max-line-size)."
            )
        return lines

    def _readline_too_long(self):
        raise CsvError(
            f"{self.name}, line {self._line + 1}: longer than "
            f"{_size_text(self.max_line_bytes)} (the longest line read; see "
            "--max-line-size)."
        )

    def _check_structure(self, lines, first_line):
        """Every line has the header's number of fields; blank lines only at the end."""
        n_columns = len(self.header)
        delimiter = self.delimiter
        blob = b"".join(lines)
        encoded = delimiter.encode()
        if (
            n_columns > 1
            and b'"' not in blob
            and blob.count(encoded) == (n_columns - 1) * len(lines)
            and not any(line.strip() == b"" for line in lines[-1:])
        ):
            # the totals agree; a line with too few fields would need another
            # with too many, which the parser reports (then checked below)
            return blob, len(lines), False
        text = blob.decode("utf-8", errors="replace")
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        try:
            records = list(reader)
        except csv.Error as exc:
            raise CsvError(
                f"{self.name}, line {first_line + reader.line_num - 1}: malformed "
                f"line ({exc})."
            ) from None
        kept, blank_at = 0, None
        line = first_line
        for record in records:
            if not record or (len(record) == 1 and record[0].strip() == ""):
                if n_columns > 1 or not record:
                    blank_at = line if blank_at is None else blank_at
                    line += 1
                    continue
            if blank_at is not None:
                raise CsvError(f"{self.name}, line {blank_at}: empty line in the data.")
            if len(record) != n_columns:
                raise CsvError(
                    f"{self.name}, line {line}: {len(record)} field"
                    f"{'s' if len(record) != 1 else ''}, but the header has "
                    f"{n_columns} columns (delimiter {_delimiter_name(delimiter)})."
                )
            kept += 1
            line += 1 + sum(field.count("\n") for field in record)
        return blob, kept, blank_at is not None

    def _check_utf8(self, blob, lines, first_line):
        try:
            blob.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return
        for offset, line in enumerate(lines):
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise CsvError(
                    f"{self.name}, line {first_line + offset}: not UTF-8 text (byte "
                    f"0x{line[exc.start]:02x}): a binary file or another encoding."
                ) from None

    def chunks(
        self,
        columns=(),
        *,
        text_columns=(),
        categorical_columns=(),
        infer_columns=(),
        n_rows=100_000,
    ):
        """Yield ``(first_line, {name: array})`` for chunks of at most ``n_rows`` rows.

        Parameters
        ----------
        columns : list of str
            Numeric columns, read as float64 (missing cells are NaN); a value
            that is not a number is an error.
        text_columns : list of str
            Columns read as text, exactly as written (object arrays of str,
            nothing missing; white space and carriage returns inside quoted
            values kept).
        categorical_columns : list of str
            Columns read as categories: object arrays of str, None where the
            cell is empty or a missing-value marker.
        infer_columns : list of str
            Columns whose kind the values decide, chunk by chunk: a float64
            array when every value of the chunk is a number (or missing;
            ``True``/``False`` are 1 and 0), else an object array as for
            ``categorical_columns``.
        n_rows : int
            Rows per chunk.
        """
        import pandas as pd

        index = self.positions.__getitem__
        numeric = [index(c) for c in columns]
        text = [index(c) for c in text_columns]
        categorical = [index(c) for c in categorical_columns]
        inferred = [index(c) for c in infer_columns]
        usecols = sorted({*numeric, *text, *categorical, *inferred})
        missing = list(MISSING_MARKERS)
        # the missing-value markers apply to every column but the text ones: a
        # table of markers per column costs pandas about 0.1 ms per column, so
        # a wide file reads its text columns in a second pass instead
        wide = len(usecols) > _WIDE_COLUMNS and 0 < len(text) < len(usecols)
        if wide:
            na_values = missing
            usecols_first = sorted({*numeric, *categorical, *inferred})
        else:
            na_values = dict.fromkeys((*numeric, *categorical, *inferred), missing)
            usecols_first = usecols
        options = {}
        if int(pd.__version__.split(".")[0]) < 3:
            options["float_precision"] = "round_trip"  # pandas 3 is exact by default
        blank_pending = None
        while True:
            first_line = self._line + 1
            lines = self._next_lines(n_rows)
            if not lines:
                return
            if blank_pending is not None:
                raise CsvError(
                    f"{self.name}, line {blank_pending}: empty line in the data."
                )
            self._check_utf8(b"".join(lines), lines, first_line)
            blob, n_kept, trailing_blank = self._check_structure(lines, first_line)
            self._line += len(lines)
            if trailing_blank:
                blank_pending = first_line + n_kept
            if n_kept == 0:
                continue
            if blob.startswith(b"\xef\xbb\xbf"):
                # pandas drops a byte order mark at the start of its input: a
                # value that starts with U+FEFF is kept whole behind a blank line
                blob = b"\n" + blob
            read = {
                "sep": self.delimiter,
                "decimal": self.decimal,
                "header": None,
                "names": range(len(self.header)),
                "keep_default_na": False,
                "skip_blank_lines": True,
                "engine": "c",
                "encoding": "utf-8",
                "quotechar": '"',
                **options,
            }
            try:
                frame = pd.read_csv(
                    io.BytesIO(blob),
                    usecols=usecols_first,
                    dtype=dict.fromkeys([*categorical, *([] if wide else text)], str),
                    na_values=na_values,
                    **read,
                )
                texts = frame
                if wide:
                    texts = pd.read_csv(
                        io.BytesIO(blob),
                        usecols=text,
                        dtype=str,
                        na_filter=False,
                        **read,
                    )
            except pd.errors.ParserError:
                # a line with too many fields: find it and say where
                self._check_structure_slow(lines, first_line)
                raise
            if frame.shape[0] != n_kept or texts.shape[0] != n_kept:
                raise CsvError(
                    f"{self.name}, lines {first_line} to {first_line + len(lines) - 1}"
                    f": {n_kept} rows were expected but {frame.shape[0]} were read (a "
                    "carriage return or an unbalanced quote inside a field?)."
                )
            out = {}
            block = _NumberBlock(frame, [*numeric, *inferred])
            for j, name in zip(numeric, columns):
                out[name] = self._numeric(block.get(j, frame), name, first_line)
            for j, name in zip(text, text_columns):
                out[name] = texts[j].to_numpy(dtype=object)  # byte for byte
            for j, name in zip(categorical, categorical_columns):
                out[name] = _categories(frame[j])
            for j, name in zip(inferred, infer_columns):
                out[name] = self._inferred(block.get(j, frame), name, first_line)
            yield first_line, out

    def _inferred(self, series, name, first_line):
        if isinstance(series, np.ndarray):  # a column of the numeric block
            return self._numeric(series, name, first_line)
        kind = series.dtype.kind
        if kind in "iufb":
            return self._numeric(series, name, first_line)
        values = series.to_numpy(dtype=object)
        present = values[~series.isna().to_numpy()]
        if present.shape[0] and all(isinstance(v, (bool, np.bool_)) for v in present):
            # True/False with missing cells: pandas' booleans, as numbers
            return self._numeric(series.astype("float64"), name, first_line)
        return _categories(series)

    def _check_structure_slow(self, lines, first_line):
        text = b"".join(lines).decode("utf-8", errors="replace")
        records = csv.reader(io.StringIO(text, newline=""), delimiter=self.delimiter)
        line = first_line
        for record in records:
            if record and len(record) != len(self.header):
                raise CsvError(
                    f"{self.name}, line {line}: {len(record)} fields, but the header "
                    f"has {len(self.header)} columns (delimiter "
                    f"{_delimiter_name(self.delimiter)})."
                )
            line += 1 + sum(field.count("\n") for field in record)

    def _numeric(self, series, name, first_line):
        if isinstance(series, np.ndarray):  # a column of the numeric block
            values = series
            if not np.isinf(values).any():
                return values
            import pandas as pd

            series = pd.Series(values)
        elif series.dtype.kind in "iufb":
            values = series.to_numpy(dtype=np.float64)
        else:
            values = self.to_numbers(series.to_numpy(dtype=object))
            bad = np.flatnonzero(np.isnan(values) & series.notna().to_numpy())
            if bad.shape[0]:
                row = int(bad[0])
                raise CsvError(
                    f"{self.name}, line {first_line + row}, column {shorten(name)}: "
                    f"{self.not_a_number(series.iloc[row])}"
                )
        infinite = np.flatnonzero(np.isinf(values))
        if infinite.shape[0]:
            row = int(infinite[0])
            raise CsvError(
                f"{self.name}, line {first_line + row}, column {shorten(name)}: "
                f"infinite value {shorten(series.iloc[row])}."
            )
        return values

    def to_numbers(self, values):
        """Text values as floats with this file's decimal mark (NaN: not a number).

        Missing values (None, NaN) are NaN too.
        """
        import pandas as pd

        text = pd.Series(values, dtype=object).astype(str).str.strip()
        if self.decimal == ",":
            invalid = text.str.contains(".", regex=False).to_numpy()
            text = text.str.replace(",", ".", regex=False)
        else:
            invalid = text.str.contains(",", regex=False).to_numpy()
        numbers = pd.to_numeric(text, errors="coerce")
        numbers = numbers.to_numpy(dtype=np.float64, copy=True)
        numbers[invalid] = np.nan
        numbers[pd.isna(pd.Series(values, dtype=object)).to_numpy()] = np.nan
        return numbers

    def not_a_number(self, value):
        """``'26,5' is not a number`` and what to do about it."""
        value = str(value)
        message = f"{shorten(value)} is not a number"
        if self.decimal == "." and looks_like_decimal_comma(value):
            return (
                f"{message}: it looks like a number with a decimal comma; pass "
                "--decimal ','."
            )
        if self.decimal == "," and _DOT_NUMBER.match(value.strip()):
            how = (
                "detected from the first lines"
                if self.decimal_detected
                else "given by --decimal"
            )
            return (
                f"{message} with the decimal comma ({how}); pass --decimal '.' if "
                "the file uses decimal points."
            )
        return message + "."
