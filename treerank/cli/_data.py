"""Training data and features of the command line, read from CSV sources."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.cli._csv import CsvError
from treerank.cli._text import escape

__all__ = ["TrainingData", "read_training_data", "select_features"]


class TrainingData:
    """Features, labels and bookkeeping read from a training file.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features)
        Features; NaN where a cell was empty or a missing-value marker.
    y : ndarray of shape (n_samples,)
        1 for the positive class, or the grades (integers, higher is better)
        of a target with more than two values.
    features : list of str
    first_missing : tuple of (int, str) or None
        Line and column of the first missing feature value.
    """

    def __init__(self, X, y, features, first_missing):
        self.X, self.y, self.features = X, y, features
        self.first_missing = first_missing


def select_features(source, *, target=None, ids=(), drop=(), features=None):
    """Feature columns of a source: ``features`` if given, else the remaining ones.

    Parameters
    ----------
    source : CsvSource
    target : str or None
        Label column (never a feature).
    ids : sequence of str
        Identifier columns (never features).
    drop : sequence of str
        Columns left out.
    features : sequence of str or None
        Explicit feature columns.

    Returns
    -------
    features : list of str
    """
    for name in ids:
        source.column_index(name, "an --id column")
    for name in drop:
        source.column_index(name, "a --drop column")
    excluded = set(ids) | set(drop) | ({target} if target is not None else set())
    if features is not None:
        for name in features:
            source.column_index(name, "a --features column")
        clash = [name for name in features if name in excluded]
        if clash:
            raise CsvError(
                f"columns {escape(str(clash))} are listed in --features and also as "
                "the target, an --id or a --drop column."
            )
        return list(features)
    chosen = [name for name in source.header if name not in excluded]
    if not chosen:
        raise CsvError(
            f"{source.name} has no feature column left (target "
            f"{escape(repr(target))}, ids {escape(str(list(ids)))}, dropped "
            f"{escape(str(list(drop)))})."
        )
    return chosen


def _first_missing(blocks, features):
    for first_line, X in blocks:
        rows, cols = np.nonzero(np.isnan(X))
        if rows.shape[0]:
            return first_line + int(rows[0]), features[int(cols[0])]
    return None


def _labels(source, raw, lines, target, positive):
    missing = np.flatnonzero(np.isin(raw, ("", "NA", "NaN", "nan", "null", "None")))
    if missing.shape[0]:
        row = int(missing[0])
        raise CsvError(
            f"{source.name}, line {lines[row]}, column {escape(repr(target))}: "
            "missing target value (every row needs its label)."
        )
    if positive is not None:
        y = (raw == positive).astype(int)
        if not y.any():
            raise CsvError(
                f"{source.name}: no row has {escape(target)} == "
                f"{escape(repr(positive))} (the --positive value)."
            )
        return y
    try:
        values = raw.astype(np.float64)
    except ValueError:
        levels = sorted(set(raw.tolist()))[:5]
        raise CsvError(
            f"{source.name}: the target column {escape(repr(target))} is not numeric "
            f"(values such as {escape(str(levels))}); pass --positive LABEL to say "
            "which value is the positive class."
        ) from None
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.shape[0]:
        row = int(bad[0])
        raise CsvError(
            f"{source.name}, line {lines[row]}, column {escape(repr(target))}: "
            f"target value {escape(repr(raw[row]))} is not a finite number."
        )
    levels = np.unique(values)
    if levels.shape[0] > 2:
        if np.any(levels != np.round(levels)):
            raise CsvError(
                f"{source.name}: the target column {escape(repr(target))} has "
                f"{levels.shape[0]} distinct values, not all integers (a continuous "
                "target); ranking needs two classes or ordered integer grades (or "
                "use --positive LABEL)."
            )
        return values.astype(np.int64)  # ordered grades: multipartite ranking
    return (values == levels[-1]).astype(int)


def read_training_data(
    source, target, *, positive=None, ids=(), drop=(), features=None, n_rows=100_000
):
    """Read features and binary labels from a CSV source.

    Parameters
    ----------
    source : CsvSource
    target : str
        Label column. With ``positive`` None it must hold two numbers (the
        larger is positive) or more than two integer grades (multipartite
        ranking, higher grades first).
    positive : str or None, default=None
        The label value of the positive class (any text).
    ids, drop, features :
        See :func:`select_features`.
    n_rows : int, default=100_000
        Rows per chunk.

    Returns
    -------
    data : TrainingData
    """
    source.column_index(target, "the --target")
    names = select_features(
        source, target=target, ids=ids, drop=drop, features=features
    )
    blocks, labels, lines = [], [], []
    for first_line, columns in source.chunks(
        names, text_columns=[target], n_rows=n_rows
    ):
        X = np.column_stack([columns[name] for name in names])
        blocks.append((first_line, X))
        labels.append(columns[target])
        lines.append(first_line + np.arange(X.shape[0]))
    if not blocks:
        raise CsvError(f"{source.name} has a header but no data rows.")
    raw = np.concatenate(labels)
    y = _labels(source, raw, np.concatenate(lines), target, positive)
    if np.unique(y).shape[0] < 2:
        raise CsvError(
            f"{source.name}: the target column {escape(repr(target))} has a single "
            "class; both classes are needed to learn a ranking."
        )
    X = np.concatenate([block for _, block in blocks])
    return TrainingData(X, y, names, _first_missing(blocks, names))
