"""Text from data, made safe to print on a terminal or to open in a spreadsheet.

CSV outputs (``score``, ``explain``, ``compare --format csv``) are often
opened in a spreadsheet, which runs a cell starting with ``=``, ``+``, ``-``
or ``@`` as a formula (``=HYPERLINK(...)``, ``=cmd|' /C calc'!A0``), and
treats a leading tab or carriage return alike in some programs. Every text
cell written from data -- identifiers, category values, column names, rule
texts, not the numbers the command computes -- that starts with one of
these characters is written with a single quote ``'`` before it, as OWASP
recommends (:func:`spreadsheet_safe`): a spreadsheet shows it as text, and
the quote is easy to strip. A cell that is a plain number (``-2``,
``+1.5e3``) is left alone: a spreadsheet reads it as that number, not as a
formula. ``--raw-text`` writes every cell as it is. Apart from that quote,
text cells are written byte for byte (CSV-quoted when they hold a comma, a
quote, a line break or leading or trailing white space).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import re
import unicodedata

__all__ = ["FORMULA_STARTS", "csv_field", "escape", "shorten", "spreadsheet_safe"]

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""

_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _escaped(char):
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escape(text):
    """Replace control and format characters by visible escapes.

    Column names, values and file names come from data: printed raw, an
    ANSI escape sequence could recolor or rewrite the terminal, a carriage
    return hide the start of a message, a bidirectional override reorder it.
    Every character of a Unicode "other" category (control, format,
    surrogate, private use, unassigned) is replaced by a Python-style escape;
    letters of any script are kept.

    Parameters
    ----------
    text : str

    Returns
    -------
    safe : str

    Examples
    --------
    >>> from treerank.cli._text import escape
    >>> escape("\\x1b[31mred\\x1b[0m")
    '\\\\x1b[31mred\\\\x1b[0m'
    >>> escape("âge\\tpoids\\u202e")
    'âge\\\\x09poids\\\\u202e'
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(
        _escaped(c) if unicodedata.category(c)[0] == "C" else c for c in text
    )


def shorten(text, limit=80):
    """``repr`` of a value from data for a message: escaped, at most ~``limit`` chars.

    A field can be megabytes long; a message quotes its start and says how
    long it is.

    Parameters
    ----------
    text : str
    limit : int, default=80
        Characters of ``text`` quoted at most.

    Returns
    -------
    quoted : str

    Examples
    --------
    >>> from treerank.cli._text import shorten
    >>> shorten("26,5")
    "'26,5'"
    >>> shorten("x" * 1000, limit=10)
    "'xxxxxxxxxx'... (1000 characters)"
    """
    text = str(text)
    if len(text) <= limit:
        return escape(repr(text))
    return f"{escape(repr(text[:limit]))}... ({len(text)} characters)"


def spreadsheet_safe(text):
    """``text`` with a ``'`` before it if a spreadsheet would run it as a formula.

    A text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
    return (:data:`FORMULA_STARTS`) gets a single quote in front, unless it
    is a plain number such as ``-2`` or ``+1.5e3``.

    Parameters
    ----------
    text : str

    Returns
    -------
    safe : str

    Examples
    --------
    >>> from treerank.cli._text import spreadsheet_safe
    >>> print(spreadsheet_safe("=HYPERLINK('http://x')"))
    '=HYPERLINK('http://x')
    >>> spreadsheet_safe("@SUM(A1)"), spreadsheet_safe("-2.5"), spreadsheet_safe("a-b")
    ("'@SUM(A1)", '-2.5', 'a-b')
    """
    text = str(text)
    if text[:1] in FORMULA_STARTS and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def csv_field(text, *, raw=False):
    """One CSV cell of text: spreadsheet-safe unless ``raw``, quoted as needed.

    Quoted (``"..."``, inner quotes doubled) when it holds a comma, a quote,
    a carriage return or a line feed, or starts or ends with white space; the
    text itself is kept byte for byte.

    Parameters
    ----------
    text : str
    raw : bool, default=False
        Write the text as it is (no quote before a formula).

    Returns
    -------
    field : str

    Examples
    --------
    >>> from treerank.cli._text import csv_field
    >>> csv_field(" lead"), csv_field("a,b"), csv_field("=1+1")
    ('" lead"', '"a,b"', "'=1+1")
    >>> csv_field("=1+1", raw=True)
    '=1+1'
    """
    text = str(text) if raw else spreadsheet_safe(text)
    if any(c in text for c in ',"\r\n') or text[:1].isspace() or text[-1:].isspace():
        return '"' + text.replace('"', '""') + '"'
    return text
