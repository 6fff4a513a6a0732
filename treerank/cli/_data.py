"""CSV input and output of the command line (standard library only)."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import csv
import os

import numpy as np

from treerank.utils._io import atomic_write

__all__ = ["read_features", "read_training_data", "write_scores"]


def _read_rows(path):
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file.")
    if os.path.isdir(path):
        raise ValueError(f"{path} is a directory, not a CSV file.")
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = list(csv.reader(handle))
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if not rows:
        raise ValueError(f"{path} is empty: a CSV file with a header row is expected.")
    header = [name.strip() for name in rows[0]]
    if any(name == "" for name in header):
        raise ValueError(f"{path}: the header has an empty column name.")
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise ValueError(f"{path}: duplicate column names {duplicates}.")
    data = rows[1:]
    if not data:
        raise ValueError(f"{path} has a header but no data rows.")
    for line, row in enumerate(data, start=2):
        if len(row) != len(header):
            raise ValueError(
                f"{path}, line {line}: {len(row)} fields, but the header has "
                f"{len(header)} columns."
            )
    return header, data


def _numeric_column(path, name, values):
    column = np.empty(len(values), dtype=np.float64)
    for line, text in enumerate(values, start=2):
        text = text.strip()
        if text == "":
            raise ValueError(
                f"{path}, line {line}: missing value in column {name!r} (treerank "
                "needs complete numeric data)."
            )
        try:
            value = float(text)
        except ValueError:
            raise ValueError(
                f"{path}, line {line}: non-numeric value {text!r} in column {name!r}."
            ) from None
        if not np.isfinite(value):
            raise ValueError(
                f"{path}, line {line}: non-finite value in column {name!r}."
            )
        column[line - 2] = value
    return column


def _feature_matrix(path, header, data, names):
    columns = [header.index(name) for name in names]
    X = np.empty((len(data), len(names)), dtype=np.float64)
    for j, (index, name) in enumerate(zip(columns, names)):
        X[:, j] = _numeric_column(path, name, [row[index] for row in data])
    return X


def read_training_data(path, target, positive=None):
    """Read a CSV file with a header into features and binary labels.

    Parameters
    ----------
    path : str
        The CSV file; every column but ``target`` is a numeric feature.
    target : str
        Name of the label column.
    positive : str or None, default=None
        Value of the target that is the positive class. Needed when the
        target is not numeric; for a numeric target the larger value is
        positive unless this is given.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), dtype=int
        1 for the positive class.
    feature_names : list of str
    """
    header, data = _read_rows(path)
    if target not in header:
        raise ValueError(
            f"{path} has no column {target!r} (the --target); its columns are {header}."
        )
    features = [name for name in header if name != target]
    if not features:
        raise ValueError(f"{path} has no feature column besides the target {target!r}.")
    raw = [row[header.index(target)].strip() for row in data]
    if positive is not None:
        y = np.array([value == positive for value in raw], dtype=int)
        if not y.any():
            raise ValueError(
                f"{path}: no row has {target} == {positive!r} (the --positive value)."
            )
    else:
        try:
            values = np.array([float(value) for value in raw])
        except ValueError:
            raise ValueError(
                f"{path}: the target column {target!r} is not numeric; pass "
                "--positive LABEL to say which value is the positive class."
            ) from None
        levels = np.unique(values)
        if levels.shape[0] > 2:
            raise ValueError(
                f"{path}: the target column {target!r} has {levels.shape[0]} distinct "
                "values; bipartite ranking needs two (or use --positive)."
            )
        y = (values == levels[-1]).astype(int)
    if np.unique(y).shape[0] < 2:
        raise ValueError(
            f"{path}: the target column {target!r} has a single class; both classes "
            "are needed to learn a ranking."
        )
    X = _feature_matrix(path, header, data, features)
    return X, y, features


def read_features(path, feature_names):
    """Read the named feature columns of a CSV file (other columns are ignored).

    Parameters
    ----------
    path : str
    feature_names : list of str

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    """
    header, data = _read_rows(path)
    missing = [name for name in feature_names if name not in header]
    if missing:
        raise ValueError(f"{path} lacks the model's feature columns {missing}.")
    return _feature_matrix(path, header, data, feature_names)


def write_scores(path, scores, proba, *, overwrite):
    """Write one ``score,probability`` row per sample, atomically."""
    with atomic_write(path, overwrite=overwrite) as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["score", "probability"])
        for score, p in zip(scores, proba):
            writer.writerow([repr(float(score)), repr(float(p))])
