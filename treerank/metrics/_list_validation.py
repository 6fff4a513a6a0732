"""The one validator of every list (query-grouped) ranking metric input.

:func:`check_list_inputs` checks relevance labels, scores, query ids and every
metric option (``ties``, ``k``, ``empty``, ``gain``, ``max_grade``,
``neutral``, ``half_life``, ...) and raises a :class:`ValueError` naming the
argument and what was expected. It also decides between the two arithmetic
paths of the list metrics: labels given as :class:`fractions.Fraction` (or a
mix of fractions and Python integers) are kept exact, so that every rational
metric (AP, ERR, precision, recall, reciprocal rank, AUC, Spearman, pairwise
disagreement) is computed in exact rational arithmetic; anything else is
converted to float64.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import numbers
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from treerank.metrics._grouping import QueryGroups, check_qid, group_qid
from treerank.metrics._ties import check_ties
from treerank.utils.validation import check_scores

__all__ = ["ListInputs", "check_list_inputs"]

_UNSET = object()

TARGETS = ("graded", "binary", "ranks", "graded_or_preference")
GAINS = ("exp2", "linear")


class ListInputs(NamedTuple):
    """Validated inputs of a list metric.

    Attributes
    ----------
    y : ndarray
        Labels: float64, or an object array of :class:`fractions.Fraction` when
        ``exact``; of shape (n,), or (n, n) for a preference matrix.
    y_score : ndarray of shape (n,) or None
        Finite float64 scores.
    groups : QueryGroups or None
        The lists (a single group when ``qid`` is None); None when only
        labels were validated.
    single : bool
        Whether the input is one list (``qid`` was None).
    exact : bool
        Whether the labels are exact fractions.
    preference : bool
        Whether ``y`` is a preference matrix.
    options : dict
        The validated metric options, by name.
    """

    y: np.ndarray
    y_score: np.ndarray
    groups: QueryGroups
    single: bool
    exact: bool
    preference: bool
    options: dict


def _preview(values, limit=6):
    values = [v.item() if hasattr(v, "item") else v for v in values]
    shown = ", ".join(repr(v) for v in values[:limit])
    return "[" + shown + (", ..." if len(values) > limit else "") + "]"


def _to_label_array(y_true, input_name):
    """Convert labels to float64, or to exact fractions when given as fractions."""
    if isinstance(y_true, np.ndarray) and y_true.dtype != object:
        y = y_true
    else:
        try:
            y = np.asarray(y_true)
        except ValueError as exc:  # ragged nested sequences
            raise ValueError(
                f"{input_name} must be an array of numbers: {exc}"
            ) from None
    if y.dtype == object:
        flat = y.ravel().tolist()
        if flat and all(
            isinstance(v, numbers.Rational) and not isinstance(v, bool) for v in flat
        ):
            if any(isinstance(v, Fraction) for v in flat):
                exact = np.empty(y.shape, dtype=object)
                exact.ravel()[:] = [Fraction(v) for v in flat]
                return exact, True
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"{input_name} must be an array of numbers: {exc}"
            ) from None
    if y.dtype.kind == "b":
        y = y.astype(np.float64)
    if y.dtype.kind not in "iuf":
        raise ValueError(
            f"{input_name} must contain numbers (relevance grades); "
            f"got dtype {y.dtype}."
        )
    y = y.astype(np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError(f"{input_name} contains NaN or infinity.")
    return y, False


def _check_int_option(value, name, *, minimum, allow_none):
    if value is None:
        if allow_none:
            return None
        raise ValueError(f"{name} is required: give an integer >= {minimum}.")
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}.")
    return int(value)


def _check_real_option(value, name, *, lower=None, strict=True, message=""):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a real number; got {value!r}.{message}")
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite; got {value!r}.{message}")
    if lower is not None and (value <= lower if strict else value < lower):
        relation = ">" if strict else ">="
        raise ValueError(f"{name} must be {relation} {lower}; got {value!r}.{message}")
    return value


def _check_empty(empty):
    if isinstance(empty, str):
        if empty != "skip":
            raise ValueError(
                f"empty must be a number (for example 0.0, 1.0 or nan) or 'skip'; "
                f"got {empty!r}."
            )
        return empty
    if isinstance(empty, bool) or not isinstance(empty, numbers.Real):
        raise ValueError(
            f"empty must be a number (for example 0.0, 1.0 or nan) or 'skip'; "
            f"got {empty!r}."
        )
    return empty


def _check_labels_1d(y, target, metric, input_name):
    if y.shape[0] == 0:
        raise ValueError(f"{input_name} is empty: a list needs at least one item.")
    negative = y < 0
    if np.any(negative):
        raise ValueError(
            f"{input_name} contains negative values "
            f"{_preview(np.unique(y[negative]))}; "
            f"{metric} needs non-negative relevance grades."
        )
    if target == "binary":
        not_binary = (y != 0) & (y != 1)
        if np.any(not_binary):
            found = _preview(np.unique(y.astype(np.float64)))
            raise ValueError(
                f"{input_name} must be binary (0/1) for {metric}; got graded labels "
                f"{found}. {metric} does not binarize graded relevance: pass for "
                f"example `{input_name} > 0` (or `>= threshold`) explicitly."
            )


def _check_ranks(y, groups, metric, input_name):
    """Every list must hold the true ranks 1..n_q (a permutation)."""
    y_float = y.astype(np.float64)
    if np.any(y_float != np.round(y_float)):
        raise ValueError(
            f"{input_name} must hold the true ranks 1..n of every list (integers) "
            f"for {metric}."
        )
    grouped = y_float[groups.order]
    index = np.repeat(np.arange(groups.n_groups), groups.sizes)
    order = np.lexsort((grouped, index))
    expected = np.arange(grouped.shape[0]) - np.repeat(groups.starts, groups.sizes) + 1
    if not np.array_equal(grouped[order], expected):
        raise ValueError(
            f"{input_name} must hold, in every list, the true ranks 1..n (1 = best) "
            f"as a permutation without ties, for {metric}."
        )


def _check_preference(y, n_score, metric, input_name):
    if y.shape[0] != y.shape[1]:
        raise ValueError(
            f"{input_name} as a preference matrix must be square (n_items, n_items); "
            f"got shape {y.shape}."
        )
    if y.shape[0] == 0:
        raise ValueError(f"{input_name} is empty: a list needs at least one item.")
    if n_score is not None and y.shape[0] != n_score:
        raise ValueError(
            f"{input_name} is a {y.shape[0]} x {y.shape[0]} preference matrix but "
            f"y_score has {n_score} elements."
        )
    if np.any(y < 0):
        raise ValueError(
            f"{input_name} (preference matrix) must be non-negative: entry [i, j] is "
            f"the weight of 'item i preferred to item j', for {metric}."
        )
    if np.any(np.diagonal(y) != 0):
        raise ValueError(
            f"{input_name} (preference matrix) must have a zero diagonal (an item is "
            "not preferred to itself)."
        )
    both = (y > 0) & (y.T > 0)
    if np.any(both):
        i, j = np.argwhere(both)[0]
        raise ValueError(
            f"{input_name} (preference matrix) states both 'i preferred to j' and "
            f"'j preferred to i' for i={i}, j={j}: at most one of y[i, j], y[j, i] "
            "may be positive."
        )


def check_list_inputs(
    y_true,
    y_score=None,
    qid=None,
    *,
    metric,
    target="graded",
    ties="average",
    k=_UNSET,
    k_required=False,
    empty=_UNSET,
    gain=_UNSET,
    max_grade=_UNSET,
    neutral=_UNSET,
    half_life=_UNSET,
    normalize=_UNSET,
    return_per_query=False,
    n_items=None,
):
    """Validate the inputs of a list metric (one list, or many with ``qid``).

    Parameters
    ----------
    y_true : array-like of shape (n,) or (n, n)
        Relevance labels (grades, 0/1, true ranks), or for
        ``target="graded_or_preference"`` a preference matrix of one list.
        Fractions make the computation exact (see the module docstring).
    y_score : array-like of shape (n,), default=None
        Scores, higher ranked first; ``None`` to validate labels only.
    qid : array-like of shape (n,), default=None
        Query id of every row; ``None`` means one list.
    metric : str
        Name of the calling metric, used in messages.
    target : {"graded", "binary", "ranks", "graded_or_preference"}, default="graded"
        What the labels must be: non-negative grades, 0/1, the true ranks
        1..n of every list, or grades or a preference matrix.
    ties : str, default="average"
        Tie policy (see :mod:`treerank.metrics._ties`).
    k : int or None, optional
        Cut-off, validated when given (``None`` allowed unless ``k_required``).
    k_required : bool, default=False
        Whether ``k=None`` is an error.
    empty : float or "skip", optional
        Value of a list on which the metric is undefined.
    gain : {"exp2", "linear"}, optional
        Gain of DCG/NDCG.
    max_grade : float, optional
        Top grade of the relevance scale (ERR); every label must be <= it.
    neutral : float, optional
        Neutral grade (expected rank utility).
    half_life : float, optional
        Half-life (expected rank utility), must be > 1.
    normalize : bool, optional
        Normalization flag (pairwise disagreement).
    return_per_query : bool, default=False
        Whether per-query values are returned.
    n_items : int, default=None
        Expected number of items (for a fixed-size list).

    Returns
    -------
    inputs : ListInputs

    Examples
    --------
    >>> from treerank.metrics._list_validation import check_list_inputs
    >>> inputs = check_list_inputs(
    ...     [1, 0, 1], [0.2, 0.5, 0.1], metric="average_precision_score",
    ...     target="binary",
    ... )
    >>> inputs.y, inputs.single, inputs.exact
    (array([1., 0., 1.]), True, False)
    """
    if target not in TARGETS:  # pragma: no cover - internal misuse
        raise ValueError(f"unknown target {target!r}")
    options = {"ties": check_ties(ties)}
    if not isinstance(return_per_query, (bool, np.bool_)):
        raise ValueError(
            f"return_per_query must be True or False; got {return_per_query!r}."
        )
    options["return_per_query"] = bool(return_per_query)
    if k is not _UNSET:
        options["k"] = _check_int_option(k, "k", minimum=1, allow_none=not k_required)
    if empty is not _UNSET:
        options["empty"] = _check_empty(empty)
    if gain is not _UNSET:
        if not isinstance(gain, str) or gain not in GAINS:
            raise ValueError(
                f"gain must be 'exp2' (2**y - 1) or 'linear' (y); got {gain!r}."
            )
        options["gain"] = gain
    if max_grade is not _UNSET:
        options["max_grade"] = _check_real_option(
            max_grade,
            "max_grade",
            lower=0,
            message=" max_grade is the top grade of the relevance scale (e.g. 4 "
            "for grades 0..4) and must be given explicitly.",
        )
    if neutral is not _UNSET:
        options["neutral"] = _check_real_option(neutral, "neutral")
    if half_life is not _UNSET:
        options["half_life"] = _check_real_option(
            half_life,
            "half_life",
            lower=1,
            message=" The weight of rank j is 2**(-(j - 1) / (half_life - 1)); "
            "half_life <= 1 does not give decreasing weights.",
        )
    if normalize is not _UNSET:
        if not isinstance(normalize, (bool, np.bool_)):
            raise ValueError(f"normalize must be True or False; got {normalize!r}.")
        options["normalize"] = bool(normalize)

    y, exact = _to_label_array(y_true, "y_true")
    # a 2-D y_true is a preference matrix where one is accepted, except for a
    # column of labels (n, 1) with n > 1
    if y.ndim == 2 and y.shape[1] == 1 and y.shape[0] != 1:
        y = y.ravel()
    preference = y.ndim == 2 and target == "graded_or_preference"
    n_score = None
    if y_score is not None:
        y_score_arr = np.asarray(y_score)
        n_score = y_score_arr.shape[0] if y_score_arr.ndim >= 1 else None
    if preference:
        if qid is not None:
            raise ValueError(
                "A preference matrix describes a single list: qid must be None "
                "(give one matrix per list and call the metric once per list)."
            )
        _check_preference(y, n_score, metric, "y_true")
        n = y.shape[0]
    else:
        if y.ndim != 1:
            raise ValueError(
                f"y_true must be one-dimensional (one label per row; use qid= for "
                f"several lists); got an array of shape {y.shape}."
            )
        n = y.shape[0]
        _check_labels_1d(y, target, metric, "y_true")
    if n_items is not None and n != n_items:
        raise ValueError(f"y_true has {n} items but {n_items} were expected.")
    if "max_grade" in options and not preference:
        above = y > options["max_grade"]
        if np.any(above):
            raise ValueError(
                f"y_true contains grades {_preview(np.unique(y[above]))} above "
                f"max_grade={options['max_grade']!r}. max_grade is the top grade of "
                "the relevance scale (not of the list) and every grade must be "
                "<= max_grade."
            )
    if y_score is not None:
        y_score = check_scores(y_score, n, input_name="y_score")
    groups = None
    if qid is not None:
        groups = group_qid(check_qid(qid, n))
    elif y_score is not None or target == "ranks":
        groups = group_qid(np.zeros(n, dtype=np.intp))
    if target == "ranks":
        _check_ranks(y, groups, metric, "y_true")
    return ListInputs(
        y=y,
        y_score=y_score,
        groups=groups,
        single=qid is None,
        exact=exact,
        preference=preference,
        options=options,
    )
