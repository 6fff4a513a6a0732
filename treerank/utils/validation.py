"""Input validation shared by every treerank estimator and metric."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers

import numpy as np
from sklearn.utils.multiclass import type_of_target

__all__ = [
    "check_bipartite_target",
    "check_frame_columns",
    "check_sample_weight",
    "check_scores",
    "check_training_target",
    "normalize_sample_weight",
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


def check_frame_columns(X):
    """Refuse a DataFrame's columns that no treerank estimator can read.

    Two columns of the same name, and columns of dates, times or durations
    (datetime64, timezone-aware datetimes, timedelta64, periods), raise a
    :class:`~treerank.exceptions.FeatureError` naming them, with what to do;
    anything else (arrays included) passes unchanged. Every estimator's
    validation calls it first.

    Parameters
    ----------
    X : object
        The ``X`` given to ``fit`` or a prediction method.

    Examples
    --------
    >>> import pandas as pd
    >>> from treerank.utils.validation import check_frame_columns
    >>> seen = pd.to_datetime(["2024-01-02", "2024-03-04"])
    >>> check_frame_columns(pd.DataFrame({"age": [30, 41], "seen": seen}))
    Traceback (most recent call last):
    ...
    treerank.exceptions.FeatureError: X column 'seen' holds dates or times ...
    """
    columns = getattr(X, "columns", None)
    dtypes = getattr(X, "dtypes", None)
    if columns is None or dtypes is None or isinstance(X, np.ndarray):
        return
    from treerank.exceptions import FeatureError

    try:
        names = list(columns)
    except TypeError:
        return
    if len(set(map(repr, names))) != len(names):
        counts = {}
        for name in names:
            counts[repr(name)] = counts.get(repr(name), 0) + 1
        repeated = [f"{name} ({n} times)" for name, n in counts.items() if n > 1]
        raise FeatureError(
            f"X has duplicate column names: {', '.join(repeated[:10])}; each "
            "feature needs a name of its own (rename or drop the copies)."
        )
    if not hasattr(X, "iloc"):  # not pandas: its own library checks the types
        return
    import pandas as pd

    for name, dtype in zip(names, list(dtypes)):
        if pd.api.types.is_datetime64_any_dtype(dtype) or isinstance(
            dtype, pd.PeriodDtype
        ):
            raise FeatureError(
                f"X column {name!r} holds dates or times (dtype {dtype}): a "
                "feature must hold numbers or categories. Convert it, e.g. to "
                "days since a reference date (X[col] - X[col].min()).dt.days, to "
                "its parts (.dt.year, .dt.month), or drop it."
            )
        if pd.api.types.is_timedelta64_dtype(dtype):
            raise FeatureError(
                f"X column {name!r} holds durations (dtype {dtype}): a feature "
                "must hold numbers or categories. Convert it to numbers, e.g. "
                "X[col].dt.total_seconds(), or drop it."
            )


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


def normalize_sample_weight(sample_weight):
    """Training weights divided by their largest value: in [0, 1], scale-free.

    A ranker's fit depends on the weights only through their ratios, but its
    sums of weights, and the products of sums in its objectives (pairs of a
    positive and a negative, of two cells), overflow for weights near the
    float64 limit: weights of 1e160 made a forest's Kemeny objective infinite.
    Divided by their largest value, the weights are at most 1, their sums at
    most the number of rows and the products of two sums at most its square,
    for any finite weights.

    What is guaranteed of a rescaling ``c * w`` (``c > 0``):

    - uniform weights of any finite positive value become exactly 1 (``c / c``
      is exactly 1 in IEEE arithmetic), so they fit the same model as unit
      weights, bit for bit;
    - whenever the products ``c * w_i`` are exact in float64 (``c`` a power
      of two, or integer weights times an integer with products below 2**53),
      the normalized weights are bit-identical: each is the correctly rounded
      quotient of the same two real numbers;
    - otherwise ``c * w_i`` was already rounded by the caller; each normalized
      weight then differs from the one of ``w`` by at most 2 units in the last
      place (a relative 4.5e-16), the change any rounding of the weights
      makes; a model can differ only where such a change reorders two equal
      candidate splits.

    A positive weight more than ~1e308 times smaller than the largest one
    underflows in the division; it is kept as the smallest positive float
    (5e-324) rather than dropped, so that the rows with positive weight stay
    the same.

    Parameters
    ----------
    sample_weight : ndarray of shape (n_samples,)
        Finite non-negative weights, not all zero (see
        :func:`check_sample_weight`).

    Returns
    -------
    sample_weight : ndarray of shape (n_samples,), dtype=float64
        The weights divided by their maximum (the input itself when its
        maximum is already 1).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.utils.validation import normalize_sample_weight
    >>> normalize_sample_weight(np.array([1e300, 5e299, 0.0]))
    array([1. , 0.5, 0. ])
    >>> normalize_sample_weight(np.full(3, 7.3))
    array([1., 1., 1.])
    """
    largest = sample_weight.max()
    if largest == 1.0 or not largest > 0:
        return sample_weight
    normalized = sample_weight / largest
    underflow = (normalized == 0) & (sample_weight > 0)
    if np.any(underflow):
        normalized[underflow] = np.nextafter(0.0, 1.0)
    return normalized


def check_training_target(y, sample_weight, n_samples):
    """Validate the labels and weights a ranker is trained on.

    Binary labels (see :func:`check_bipartite_target`), valid weights, and
    both classes present with positive weight. The weights are returned
    divided by their largest value (:func:`normalize_sample_weight`): a
    fitted model depends on their ratios only, nothing overflows for finite
    weights up to the float64 limit, and uniform weights of any value fit the
    same model as unit weights.

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
        In [0, 1], with maximum 1.

    Examples
    --------
    >>> from treerank.utils import check_training_target
    >>> y01, classes, weights = check_training_target([2, 5, 5], [4, 2, 0], 3)
    >>> y01, classes, weights
    (array([0, 1, 1]), array([2, 5]), array([1. , 0.5, 0. ]))
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
    return y01, classes, normalize_sample_weight(sample_weight)
