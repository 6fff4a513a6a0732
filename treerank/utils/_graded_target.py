"""Graded (ordinal) targets and the bipartite problems they reduce to.

With ``K >= 2`` ordered grades ``g_0 < g_1 < ... < g_{K-1}`` (the order of
the values is the order of preference), multipartite ranking splits into the
``K - 1`` bipartite problems "grade >= g_k" (``k = 1, ..., K - 1``). Under
the monotone likelihood ratio condition, a scorer is optimal for the volume
under the ROC surface (VUS) if and only if it is optimal for every one of
these problems (Clémençon, Robbiano and Vayatis, 2013). This module holds
what turns grades into such problems, as data: the validation of the grades
(:func:`check_graded_target` for metrics, :func:`is_graded_target` and
:func:`check_graded_training_target` for estimators), the labels of every
threshold (:func:`cumulative_targets`), the threshold of every tree of a
forest (:func:`tree_thresholds`), and the single stacked bipartite problem
that weighs every threshold at once (:func:`stacked_problem`: a row of grade
code ``c`` becomes a positive of weight ``c`` and a negative of weight
``K - 1 - c``). The estimators call these functions in ``fit``; nothing here
knows about trees.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils.multiclass import type_of_target

from treerank.utils.validation import (
    _preview,
    check_sample_weight,
    normalize_sample_weight,
)

__all__ = [
    "check_graded_target",
    "check_graded_training_target",
    "cumulative_targets",
    "is_graded_target",
    "stacked_problem",
    "tree_thresholds",
]


def _as_label_vector(y):
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    return y


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
    y = _as_label_vector(y)
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


def is_graded_target(y):
    """Whether ``y`` holds ``K > 2`` ordered grades (the multipartite case).

    Two distinct values give False: the bipartite code path handles them (and
    the inputs it refuses, such as NaN or an empty ``y``), unchanged. A
    single value, non-integer numbers with more than two distinct values (a
    continuous target) and more than two non-numeric labels raise a
    ``ValueError`` naming the problem.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels as given to ``fit``.

    Returns
    -------
    graded : bool

    Examples
    --------
    >>> from treerank.utils._graded_target import is_graded_target
    >>> is_graded_target([0, 1, 1]), is_graded_target([0, 1, 2])
    (False, True)
    """
    y = _as_label_vector(y)
    if y.ndim != 1 or y.shape[0] == 0:
        return False
    if y.dtype.kind not in "biuf":
        try:
            n_labels = np.unique(y).shape[0]
        except TypeError:  # mixed types: the bipartite path explains
            return False
        if n_labels > 2:
            raise ValueError(
                f"y has {n_labels} non-numeric labels (dtype {y.dtype}), so their "
                "order is unknown. Encode ordered grades as integers in their "
                "order of preference (the highest ranked first), e.g. with "
                "sklearn.preprocessing.OrdinalEncoder(categories=[[lowest, ..., "
                "highest]])."
            )
        return False
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        return False
    grades = np.unique(y)
    if grades.shape[0] == 1:
        raise ValueError(
            f"y has one class (a single grade): {_preview(grades)}. At least two "
            "classes (ordered grades) are needed to learn a ranking."
        )
    if grades.shape[0] == 2:
        return False
    if y.dtype.kind == "f" and np.any(grades != np.round(grades)):
        raise ValueError(
            f"y has {grades.shape[0]} distinct non-integer values (a continuous "
            "target). Ranking learns from two classes or from ordered integer "
            "grades; bin a continuous target first."
        )
    return True


def check_graded_training_target(y, sample_weight, n_samples):
    """Validate ordered grades and weights a multipartite ranker is trained on.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Integer grades (numbers with integer values), at least three distinct
        ones; higher is better.
    sample_weight : array-like of shape (n_samples,) or None
        Non-negative weights.
    n_samples : int
        Number of training rows.

    Returns
    -------
    codes : ndarray of shape (n_samples,), dtype=intp
        Position of every row's grade among ``grades`` (0 for the lowest).
    grades : ndarray of shape (n_grades,)
        The distinct grades, lowest first.
    sample_weight : ndarray of shape (n_samples,), dtype=float64
        Divided by their largest value (see
        :func:`~treerank.utils.normalize_sample_weight`).

    Raises
    ------
    ValueError
        If ``y`` is not graded (see :func:`is_graded_target`), or a grade has
        no sample with positive weight.

    Examples
    --------
    >>> from treerank.utils._graded_target import check_graded_training_target
    >>> codes, grades, weight = check_graded_training_target([5, 1, 3, 3], None, 4)
    >>> codes, grades
    (array([2, 0, 1, 1]), array([1, 3, 5]))
    """
    y = _as_label_vector(y)
    if not is_graded_target(y):
        raise ValueError("y must hold more than two ordered grades.")
    grades = np.unique(y)
    codes = np.searchsorted(grades, y).astype(np.intp)
    sample_weight = check_sample_weight(sample_weight, n_samples)
    if not np.any(sample_weight > 0):
        raise ValueError("sample_weight is all zero: no sample to learn from.")
    mass = np.bincount(codes, weights=sample_weight, minlength=grades.shape[0])
    if np.any(mass <= 0):
        raise ValueError(
            f"y has no sample with positive weight in the grades "
            f"{_preview(grades[mass <= 0])}: every grade needs one to be ranked."
        )
    return codes, grades, normalize_sample_weight(sample_weight)


def cumulative_targets(codes, n_grades):
    """The bipartite labels of the problems "grade >= g_k", ``k = 1..K-1``.

    Parameters
    ----------
    codes : ndarray of int of shape (n_samples,)
        Grade codes ``0..K-1``.
    n_grades : int
        ``K``.

    Returns
    -------
    targets : list of K - 1 ndarrays of int of shape (n_samples,)
        ``targets[k - 1]`` is 1 where ``codes >= k``.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.utils._graded_target import cumulative_targets
    >>> cumulative_targets(np.array([0, 2, 1]), 3)
    [array([0, 1, 1]), array([0, 1, 0])]
    """
    return [(codes >= k).astype(int) for k in range(1, n_grades)]


def tree_thresholds(n_trees, n_grades):
    """The threshold of every tree: cycled over ``1..K-1``.

    Tree ``b`` learns "grade >= g_k" with ``k = 1 + b mod (K - 1)``, so every
    threshold has ``n_trees / (K - 1)`` trees (up to one) and a forest of
    ``K - 1`` trees has one tree per threshold.

    Parameters
    ----------
    n_trees : int
    n_grades : int
        ``K >= 2``.

    Returns
    -------
    thresholds : ndarray of int of shape (n_trees,)
        Grade codes in ``1..K-1``.

    Examples
    --------
    >>> from treerank.utils._graded_target import tree_thresholds
    >>> tree_thresholds(5, 3)
    array([1, 2, 1, 2, 1])
    """
    return np.arange(n_trees, dtype=np.intp) % (n_grades - 1) + 1


def stacked_problem(codes, n_grades, sample_weight):
    """The bipartite problem that stacks every threshold "grade >= g_k".

    Every threshold k pairs the rows of grade >= k (positives) with the rows
    below (negatives); summed over k, a pair of grades ``c > c'`` counts
    ``c - c'`` times. Stacking gives each row of grade code ``c`` a positive
    copy of weight ``c`` and a negative copy of weight ``K - 1 - c`` (rows of
    the top grade have no negative copy, rows of the lowest no positive one),
    so that every row keeps a total weight ``K - 1``; the likelihood ratio of
    the stacked classes is increasing in the expected grade ``E[c | x]``,
    which orders like the optimal scorer of the VUS under the monotone
    likelihood ratio condition.

    Parameters
    ----------
    codes : ndarray of int of shape (n_samples,)
        Grade codes ``0..K-1``.
    n_grades : int
        ``K``.
    sample_weight : ndarray of shape (n_samples,)

    Returns
    -------
    rows : ndarray of int of shape (n_stacked,)
        The training row of every stacked row: the positive copies first.
    y01 : ndarray of uint8 of shape (n_stacked,)
    weight : ndarray of float64 of shape (n_stacked,)

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.utils._graded_target import stacked_problem
    >>> rows, y01, weight = stacked_problem(np.array([0, 1, 2]), 3, np.ones(3))
    >>> rows, y01, weight
    (array([1, 2, 0, 1]), array([1, 1, 0, 0], dtype=uint8), array([1., 2., 2., 1.]))
    """
    upper = np.flatnonzero(codes >= 1)
    lower = np.flatnonzero(codes <= n_grades - 2)
    rows = np.concatenate([upper, lower])
    y01 = np.concatenate(
        [np.ones(upper.shape[0], np.uint8), np.zeros(lower.shape[0], np.uint8)]
    )
    weight = np.concatenate(
        [
            codes[upper] * sample_weight[upper],
            (n_grades - 1 - codes[lower]) * sample_weight[lower],
        ]
    ).astype(np.float64)
    return rows, y01, weight
