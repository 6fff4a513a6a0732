"""A streaming CSV reader for the command line, with errors that say where.

A :class:`CsvSource` opens a file (or standard input for ``-``), refuses
binary content, finds the delimiter (or takes the one given), reads the header
and then yields the rows in chunks of named columns. Numeric columns are parsed
by pandas' C parser; the structure of every chunk is checked first (every line
has as many fields as the header, no empty line inside the data), so that an
error names the file, the line and the column. Empty cells and the usual
missing-value markers (``NA``, ``NaN``, ``null``, ...) of a numeric column are
read as NaN; a value that is not a number is an error.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import csv
import io
import itertools
import os
import sys

import numpy as np

from treerank.cli._text import escape

__all__ = ["DELIMITERS", "MISSING_MARKERS", "CsvError", "CsvSource"]

DELIMITERS = (",", ";", "\t", "|")
MISSING_MARKERS = ("", "NA", "N/A", "n/a", "NaN", "nan", "NAN", "null", "NULL", "None")
_HEAD_BYTES = 1 << 16
_SNIFF_LINES = 50


class CsvError(ValueError):
    """A data error in a CSV input (the message names file, line and column)."""


def _delimiter_name(delimiter):
    return {"\t": "tab (\\t)"}.get(delimiter, repr(delimiter))


class _Prefixed(io.RawIOBase):
    """A raw stream that first returns ``head`` then the rest of ``stream``."""

    def __init__(self, head, stream):
        self._head = memoryview(head)
        self._stream = stream

    def readable(self):
        return True

    def readinto(self, buffer):
        if self._head.nbytes:
            n = min(len(buffer), self._head.nbytes)
            buffer[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _field_count(line, delimiter):
    """Number of fields of one text line, quote-aware only when needed."""
    if '"' not in line:
        return line.count(delimiter) + 1
    return len(next(csv.reader([line], delimiter=delimiter), [""]))


def _sniff(text, path):
    """The delimiter that splits the header (> 1 fields) like most first lines.

    Each candidate splits the header into ``k`` fields; among those with
    ``k > 1``, the one that splits the largest share of the next lines into
    ``k`` fields as well wins (then the larger ``k``). A header that no
    candidate splits is a single column. A wrong line is reported later, with
    its number, by the structure check.
    """
    lines = [line for line in text.splitlines()[:_SNIFF_LINES] if line.strip()]
    if not lines:
        return ","
    header, rows = lines[0], lines[1:-1] or lines[1:]  # the last may be cut
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


class CsvSource:
    """A CSV input with a header row, read in chunks.

    Parameters
    ----------
    path : str
        File name, or ``"-"`` for standard input.
    delimiter : str or None, default=None
        Field separator; None: sniffed among ``, ; TAB |`` from the first lines.
    stdin : binary file or None, default=None
        Stream read for ``"-"`` (``sys.stdin.buffer`` if None).

    Attributes
    ----------
    name : str
        How the input is named in messages.
    delimiter : str
    header : list of str
        Column names.
    """

    def __init__(self, path, *, delimiter=None, stdin=None):
        self.name = "<stdin>" if path == "-" else escape(os.fspath(path))
        if path == "-":
            stream = sys.stdin.buffer if stdin is None else stdin
        else:
            stream = self._open(os.fspath(path))
        try:
            head = stream.read(_HEAD_BYTES)
            self._stream = io.BufferedReader(_Prefixed(head, stream), 1 << 20)
            self._raw = stream
            self._check_text(head)
            text = self._decode_head(head)
            self.delimiter = _sniff(text, self.name) if delimiter is None else delimiter
            self.header = self._read_header()
        except BaseException:
            stream.close() if path != "-" else None
            raise
        self._line = 1  # lines consumed so far (the header)

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

    def _read_header(self):
        raw = self._stream.readline()
        line = raw.decode("utf-8").rstrip("\r\n")
        try:
            header = next(csv.reader([line], delimiter=self.delimiter))
        except csv.Error as exc:
            raise CsvError(f"{self.name}, line 1: malformed header ({exc}).") from None
        header = [name.strip() for name in header]
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
                f"{escape(str(duplicates))}."
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
        text = ", ".join(repr(name) for name in names)
        if more:
            text += f", ... ({more} more)"
        return escape(f"[{text}]")

    def column_index(self, name, role):
        """Index of column ``name``; a clear error if there is none."""
        if name in self.header:
            return self.header.index(name)
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
            f"{self.name} has no column {escape(repr(name))} ({role}); its columns are "
            f"{self.describe_columns()}.{hint}"
        )

    # -- chunks ---------------------------------------------------------------
    def _next_lines(self, n_rows):
        lines = list(itertools.islice(self._stream, n_rows))
        if lines and b"".join(lines).count(b'"') % 2:
            # a quoted field spans lines: read on until the quotes balance
            quotes = 1
            for line in self._stream:
                lines.append(line)
                quotes += line.count(b'"')
                if quotes % 2 == 0:
                    break
        return lines

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

    def chunks(self, columns, *, text_columns=(), n_rows=100_000):
        """Yield ``(first_line, {name: array})`` for chunks of at most ``n_rows`` rows.

        Parameters
        ----------
        columns : list of str
            Numeric columns, read as float64 (missing cells are NaN).
        text_columns : list of str
            Columns read as text (object arrays of str, nothing missing).
        n_rows : int
            Rows per chunk.
        """
        import pandas as pd

        numeric = [self.header.index(c) for c in columns]
        text = [self.header.index(c) for c in text_columns]
        usecols = sorted(set(numeric) | set(text))
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
            try:
                frame = pd.read_csv(
                    io.BytesIO(blob),
                    sep=self.delimiter,
                    header=None,
                    names=list(range(len(self.header))),
                    usecols=usecols,
                    dtype=dict.fromkeys(text, str),
                    keep_default_na=False,
                    na_values={j: list(MISSING_MARKERS) for j in numeric},
                    skip_blank_lines=True,
                    engine="c",
                    encoding="utf-8",
                    quotechar='"',
                    **options,
                )
            except pd.errors.ParserError:
                # a line with too many fields: find it and say where
                self._check_structure_slow(lines, first_line)
                raise
            if frame.shape[0] != n_kept:
                raise CsvError(
                    f"{self.name}, lines {first_line} to {first_line + len(lines) - 1}"
                    f": {n_kept} rows were expected but {frame.shape[0]} were read (a "
                    "carriage return or an unbalanced quote inside a field?)."
                )
            out = {}
            for j, name in zip(numeric, columns):
                out[name] = self._numeric(frame[j], name, first_line)
            for j, name in zip(text, text_columns):
                values = frame[j].to_numpy(dtype=object)
                out[name] = np.array([v.strip() for v in values], dtype=object)
            yield first_line, out

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
        import pandas as pd

        if series.dtype.kind in "iuf":
            values = series.to_numpy(dtype=np.float64)
        else:
            values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64)
            bad = np.flatnonzero(np.isnan(values) & series.notna().to_numpy())
            if bad.shape[0]:
                row = int(bad[0])
                raise CsvError(
                    f"{self.name}, line {first_line + row}, column "
                    f"{escape(repr(name))}: {escape(repr(str(series.iloc[row])))} is "
                    "not a number."
                )
        infinite = np.flatnonzero(np.isinf(values))
        if infinite.shape[0]:
            row = int(infinite[0])
            raise CsvError(
                f"{self.name}, line {first_line + row}, column {escape(repr(name))}: "
                f"infinite value {escape(repr(str(series.iloc[row])))}."
            )
        return values
