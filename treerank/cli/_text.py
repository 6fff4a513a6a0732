"""Text from data, made safe to print on a terminal."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import unicodedata

__all__ = ["escape"]


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
