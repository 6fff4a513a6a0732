"""Text from data, made safe to print on a terminal."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import unicodedata

__all__ = ["escape", "shorten"]


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
