"""Command-line usage: its error (exit status 2) and the parsers of option values.

The option-value parsers are ``argparse`` types: each turns the text of an
option into its value or raises ``argparse.ArgumentTypeError`` saying what was
expected. :class:`UsageError` is raised for options that do not go together.
Every command module imports them from here.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse

__all__ = [
    "UsageError",
    "background_per_tree",
    "byte_size",
    "decimal_mark",
    "delimiter",
    "max_leaves",
    "min_samples_split",
    "monotonic_constraint",
    "positive_int",
    "tree_depth",
]


class UsageError(Exception):
    """Options that do not go together (exit status 2)."""


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a positive integer; got {text!r}"
        ) from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text}")
    return value


def _integer_or_words(name, minimum, words, expected):
    """An ``argparse`` type: an integer >= ``minimum`` or one of ``words``."""

    def parse(text):
        word = text.strip().lower()
        if word in words:
            return word
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be {expected}; got {text!r}")
        return value

    parse.__name__ = name
    return parse


tree_depth = _integer_or_words(
    "tree_depth", 1, ("none",), "a positive integer or 'none'"
)
max_leaves = _integer_or_words(
    "max_leaves", 1, ("auto", "all"), "a positive integer, 'auto' or 'all'"
)
min_samples_split = _integer_or_words(
    "min_samples_split", 2, ("auto",), "an integer >= 2 or 'auto'"
)
background_per_tree = _integer_or_words(
    "background_per_tree", 2, ("auto", "all"), "an integer >= 2, 'auto' or 'all'"
)


def monotonic_constraint(text):
    column, sep, sign = text.rpartition("=")
    signs = {"+1": 1, "1": 1, "-1": -1, "0": 0}
    if not sep or not column or sign.strip() not in signs:
        raise argparse.ArgumentTypeError(
            f"must be COL=+1, COL=-1 or COL=0; got {text!r}"
        )
    return column, signs[sign.strip()]


def delimiter(text):
    named = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}
    value = named.get(text.lower(), text)
    if len(value) != 1 or value in '\r\n"' or value.isalnum():
        raise argparse.ArgumentTypeError(
            f"must be one character such as ',' ';' '|' or 'tab'; got {text!r}"
        )
    return value


def decimal_mark(text):
    named = {"comma": ",", "point": ".", "dot": ".", "period": "."}
    value = named.get(text.strip().lower(), text.strip())
    if value not in (".", ","):
        raise argparse.ArgumentTypeError(f"must be '.' or ','; got {text!r}")
    return value


_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def byte_size(text):
    stripped = text.strip().upper().removesuffix("B")
    unit = stripped[-1:] if stripped[-1:] in ("K", "M", "G") else ""
    try:
        value = int(stripped[: len(stripped) - len(unit)]) * _SIZE_UNITS[unit]
    except ValueError:
        value = 0
    if value < 1024:
        raise argparse.ArgumentTypeError(
            f"must be a size of at least 1K such as 4096, 512K, 16M or 1G; got {text!r}"
        )
    return value
