"""Validation of ordered (graded) labels: K >= 2 grades, lowest preferred last."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.multiclass import type_of_target

__all__ = ["check_graded_target"]


def _preview(values, limit=10):
    values = list(values)
    text = ", ".join(
        repr(v.item() if hasattr(v, "item") else v) for v in values[:limit]
    )
    return "[" + text + (", ...]" if len(values) > limit else "]")


def check_graded_target(y, *, labels=None, input_name="y", allow_missing=False):
    """Validate ordered labels (grades) and map them to codes ``0, ..., K-1``.

    Multipartite (ordinal) ranking orders ``K >= 2`` grades: a sample of a
    higher grade should be ranked above a sample of a lower grade. Without
    ``labels``, the grades are the distinct values of ``y`` in increasing
    order (numbers or booleans: the order of the values is the order of
    preference). ``labels`` gives the order explicitly, lowest grade first,
    which also allows non-numeric grades and checks that every expected grade
    is present.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Grades.
    labels : array-like of shape (n_grades,), default=None
        The grades, from the lowest (ranked last) to the highest (ranked
        first), all distinct. None: the sorted distinct values of ``y``, which
        must then be numeric or boolean.
    input_name : str, default="y"
        Name of the argument, used in error messages.
    allow_missing : bool, default=False
        Whether a grade of ``labels`` may be absent from ``y``.

    Returns
    -------
    codes : ndarray of shape (n_samples,), dtype=intp
        Position of every sample's grade in ``grades`` (0 for the lowest).
    grades : ndarray of shape (n_grades,)
        The grades, lowest first.

    Raises
    ------
    ValueError
        If ``y`` is empty, not one-dimensional, contains NaN, has fewer than
        two grades, is non-numeric without ``labels``, contains a value
        missing from ``labels``, or (unless ``allow_missing``) lacks a grade
        of ``labels``.

    Examples
    --------
    >>> from treerank.utils import check_graded_target
    >>> codes, grades = check_graded_target([3, 1, 2, 3])
    >>> codes, grades
    (array([2, 0, 1, 2]), array([1, 2, 3]))
    >>> codes, grades = check_graded_target(
    ...     ["mid", "low", "high"], labels=["low", "mid", "high"]
    ... )
    >>> codes
    array([1, 0, 2])
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(
            f"{input_name} must be a one-dimensional array of grades; got an array "
            f"of shape {y.shape}."
        )
    if y.shape[0] == 0:
        raise ValueError(f"{input_name} is empty: at least one sample is required.")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{input_name} contains NaN or infinity.")
    if labels is None:
        if y.dtype.kind not in "biuf":
            type_of_target(y, input_name=input_name, raise_unknown=True)
            raise ValueError(
                f"{input_name} has non-numeric grades (dtype {y.dtype}), so their "
                "order is unknown: pass labels=[lowest, ..., highest] to give it."
            )
        grades = np.unique(y)
        codes = np.searchsorted(grades, y)
    else:
        grades = np.asarray(labels)
        if grades.ndim != 1:
            raise ValueError(
                f"labels must be a one-dimensional list of grades (lowest first); "
                f"got an array of shape {grades.shape}."
            )
        if grades.dtype.kind == "f" and not np.all(np.isfinite(grades)):
            raise ValueError("labels contains NaN or infinity.")
        distinct, counts = np.unique(grades, return_counts=True)
        if np.any(counts > 1):
            raise ValueError(
                f"labels must be distinct; {_preview(distinct[counts > 1])} "
                "appear more than once."
            )
        try:
            order = np.argsort(grades, kind="stable")
            position = np.searchsorted(grades[order], y)
            position = np.minimum(position, grades.shape[0] - 1)
            found = grades[order][position] == y
        except TypeError:
            raise ValueError(
                f"{input_name} and labels have incomparable types ({y.dtype} and "
                f"{grades.dtype})."
            ) from None
        if not np.all(found):
            raise ValueError(
                f"{input_name} contains values not in labels: "
                f"{_preview(np.unique(y[~found]))}; labels are {_preview(grades)}."
            )
        codes = order[position]
    n_grades = grades.shape[0]
    if n_grades < 2:
        raise ValueError(
            f"{input_name} must contain at least two grades to be ranked; got "
            f"{n_grades}: {_preview(grades)}."
        )
    if not allow_missing:
        present = np.bincount(codes, minlength=n_grades) > 0
        if not np.all(present):
            raise ValueError(
                f"{input_name} lacks the grades {_preview(grades[~present])} of "
                f"labels {_preview(grades)}: every grade needs at least one sample."
            )
    return codes.astype(np.intp, copy=False), grades
