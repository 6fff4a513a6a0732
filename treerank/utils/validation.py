"""Input validation shared by every treerank estimator and metric."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers

import numpy as np
from sklearn.utils.multiclass import type_of_target

__all__ = [
    "check_bipartite_target",
    "check_sample_weight",
    "check_scores",
    "check_training_target",
]


def check_bipartite_target(y, *, input_name="y", allow_single_class=False):
    """Validate binary labels for bipartite ranking and map them to {0, 1}.

    The positive class (mapped to 1, ranked first) is determined without
    guessing: for boolean labels it is ``True``; for numeric labels it is the
    larger of the two values (``1`` in {0, 1} and {-1, 1}, as ``classes_[1]``
    in scikit-learn). Non-numeric labels (for example strings) have no obvious
    positive class and are refused: encode them first, e.g. ``y == "sick"``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Labels with exactly two distinct values.
    input_name : str, default="y"
        Name of the argument, used in error messages.
    allow_single_class : bool, default=False
        Whether a single class is accepted (it is then mapped to 1 if it is
        the positive value of a {0, 1}, {-1, 1} or boolean encoding, else
        an error is raised as the positive class cannot be told).

    Returns
    -------
    y01 : ndarray of shape (n_samples,), dtype=int
        1 for the positive class, 0 for the negative class.
    classes : ndarray of shape (2,)
        The original labels, negative first.

    Raises
    ------
    ValueError
        If ``y`` is empty, not one-dimensional, contains NaN, has more than two
        classes, has one class (unless allowed), or is not numeric/boolean.

    Examples
    --------
    >>> from treerank.utils.validation import check_bipartite_target
    >>> y01, classes = check_bipartite_target([-1, 1, 1, -1])
    >>> y01
    array([0, 1, 1, 0])
    >>> classes
    array([-1,  1])
    """
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(
            f"{input_name} must be a one-dimensional array of binary labels; "
            f"got an array of shape {y.shape}."
        )
    if y.shape[0] == 0:
        raise ValueError(f"{input_name} is empty: at least one sample is required.")
    if y.dtype.kind not in "biuf":
        # unknown label types (e.g. mixed objects) get scikit-learn's message
        type_of_target(y, input_name=input_name, raise_unknown=True)
        raise ValueError(
            f"{input_name} has non-numeric labels (dtype {y.dtype}), so the positive "
            "class is ambiguous. Encode the labels as 0/1 (or bool), for example "
            f"`{input_name} == 'positive_label'`."
        )
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{input_name} contains NaN or infinity.")
    classes = np.unique(y)
    if classes.shape[0] > 2:
        kind = type_of_target(y, input_name=input_name)
        raise ValueError(
            f"{input_name} must contain exactly two classes for bipartite ranking; "
            f"got {classes.shape[0]} classes ({kind} target): "
            f"{_preview(classes)}. Only binary classification is supported."
        )
    if classes.shape[0] == 1:
        if not allow_single_class:
            raise ValueError(
                f"{input_name} must contain exactly two classes for bipartite "
                f"ranking; got 1 class: {_preview(classes)}."
            )
        value = classes[0]
        if y.dtype.kind == "b":
            positive = bool(value)
        elif value in (0, 1, -1):
            positive = value == 1
        else:
            raise ValueError(
                f"{input_name} contains the single label {value!r}: it is not clear "
                "whether it is the positive class. Use 0/1 labels."
            )
        return np.full(y.shape[0], int(positive)), classes
    return (y == classes[1]).astype(int), classes


def _preview(values, limit=10):
    values = list(values)
    text = ", ".join(
        repr(v.item() if hasattr(v, "item") else v) for v in values[:limit]
    )
    if len(values) > limit:
        text += ", ..."
    return "[" + text + "]"


def check_sample_weight(sample_weight, n_samples, *, input_name="sample_weight"):
    """Validate sample weights: finite, non-negative, one per sample.

    Parameters
    ----------
    sample_weight : array-like of shape (n_samples,) or None
        Weights; ``None`` means unit weights.
    n_samples : int
        Expected length.
    input_name : str, default="sample_weight"
        Name of the argument, used in error messages.

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,), dtype=float64

    Examples
    --------
    >>> from treerank.utils.validation import check_sample_weight
    >>> check_sample_weight(None, 3)
    array([1., 1., 1.])
    """
    if sample_weight is None:
        return np.ones(n_samples, dtype=np.float64)
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, sample_weight, dtype=np.float64)
    try:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{input_name} must be an array of numbers: {exc}") from None
    if sample_weight.ndim != 1:
        raise ValueError(
            f"{input_name} must be one-dimensional; got shape {sample_weight.shape}."
        )
    if sample_weight.shape[0] != n_samples:
        raise ValueError(
            f"{input_name} has {sample_weight.shape[0]} elements but there are "
            f"{n_samples} samples."
        )
    if not np.all(np.isfinite(sample_weight)):
        raise ValueError(f"{input_name} contains NaN or infinity.")
    if np.any(sample_weight < 0):
        raise ValueError(
            f"{input_name} contains negative values; weights must be >= 0."
        )
    return sample_weight


def check_scores(y_score, n_samples=None, *, input_name="y_score"):
    """Validate a one-dimensional array of finite real scores.

    Parameters
    ----------
    y_score : array-like of shape (n_samples,)
        Scores (higher means ranked first).
    n_samples : int or None, default=None
        Expected length, if known.
    input_name : str, default="y_score"
        Name of the argument, used in error messages.

    Returns
    -------
    y_score : ndarray of shape (n_samples,), dtype=float64

    Examples
    --------
    >>> from treerank.utils.validation import check_scores
    >>> check_scores([3, 1, 2])
    array([3., 1., 2.])
    """
    try:
        y_score = np.asarray(y_score, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{input_name} must be an array of numbers: {exc}") from None
    if y_score.ndim == 2 and y_score.shape[1] == 1:
        y_score = y_score.ravel()
    if y_score.ndim != 1:
        raise ValueError(
            f"{input_name} must be one-dimensional; got shape {y_score.shape}."
        )
    if n_samples is not None and y_score.shape[0] != n_samples:
        raise ValueError(
            f"{input_name} has {y_score.shape[0]} elements but {n_samples} were "
            "expected."
        )
    if not np.all(np.isfinite(y_score)):
        raise ValueError(f"{input_name} contains NaN or infinity.")
    return y_score


def check_training_target(y, sample_weight, n_samples):
    """Validate the labels and weights a ranker is trained on.

    Binary labels (see :func:`check_bipartite_target`), valid weights, and
    both classes present with positive weight.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Binary labels.
    sample_weight : array-like of shape (n_samples,) or None
        Non-negative weights.
    n_samples : int
        Number of training rows.

    Returns
    -------
    y01 : ndarray of shape (n_samples,), dtype=int
    classes : ndarray of shape (2,)
    sample_weight : ndarray of shape (n_samples,), dtype=float64

    Examples
    --------
    >>> from treerank.utils import check_training_target
    >>> y01, classes, weights = check_training_target([2, 5, 5], None, 3)
    >>> y01, classes
    (array([0, 1, 1]), array([2, 5]))
    """
    y01, classes = check_bipartite_target(y)
    sample_weight = check_sample_weight(sample_weight, n_samples)
    if not np.any(sample_weight > 0):
        raise ValueError("sample_weight is all zero: no sample to learn from.")
    for label, name in [(1, "positive"), (0, "negative")]:
        if not np.any((sample_weight > 0) & (y01 == label)):
            raise ValueError(
                f"y has no {name} sample with positive weight: both classes are "
                "needed to learn a ranking."
            )
    return y01, classes, sample_weight
