"""Shared machinery of the list metrics: exact arithmetic, query summaries, docs.

Every list metric computes one value per list (query) from arrays in ranked
layout, then :func:`summarize_queries` applies the empty-list policy and
returns the value of a single list, or the mean over queries (optionally with
the per-query values).

Exact path: when the labels are :class:`fractions.Fraction` objects, the
metrics keep every intermediate quantity rational; integer ratios must then be
formed with :func:`int_ratio` (``int / int`` would give a float).

The list metrics take the same arguments: their common descriptions are
written once (:data:`SHARED_DOCS`) and filled into each docstring by
:func:`shared_doc`.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from fractions import Fraction

import numpy as np

__all__ = ["SHARED_DOCS", "int_ratio", "shared_doc", "summarize_queries", "to_exact"]

_FRACTION = np.frompyfunc(Fraction, 2, 1)


def int_ratio(numerator, denominator, exact):
    """Elementwise ``numerator / denominator`` of integer arrays.

    Exact fractions when ``exact``, float64 otherwise.

    Examples
    --------
    >>> from treerank.metrics._list_common import int_ratio
    >>> int_ratio(np.array([1, 2]), np.array([3, 4]), exact=True)
    array([Fraction(1, 3), Fraction(1, 2)], dtype=object)
    >>> int_ratio(np.array([1, 2]), np.array([4, 4]), exact=False)
    array([0.25, 0.5 ])
    """
    if exact:
        return _FRACTION(np.asarray(numerator), np.asarray(denominator)).astype(object)
    return np.asarray(numerator, dtype=np.float64) / denominator


def to_exact(values):
    """:class:`fractions.Fraction` of every number of ``values``, exactly.

    Integers, booleans and fractions keep their value; a float becomes the
    fraction of its exact binary value (``0.5`` is ``1/2``; ``0.1`` is not
    ``1/10``), so arithmetic on the result is that of the given numbers.

    Parameters
    ----------
    values : array-like of numbers
        Integers, booleans, floats or fractions, of any shape.

    Returns
    -------
    exact : ndarray of object or Fraction
        An object array of fractions of the shape of ``values``; a single
        :class:`fractions.Fraction` when ``values`` is a scalar.

    Examples
    --------
    >>> from treerank.metrics._list_common import to_exact
    >>> to_exact(np.array([0, 2]))
    array([Fraction(0, 1), Fraction(2, 1)], dtype=object)
    >>> to_exact(0.75)
    Fraction(3, 4)
    """
    values = np.asarray(values, dtype=object)
    exact = np.empty(values.shape, dtype=object)
    exact.ravel()[:] = [Fraction(v) for v in values.ravel().tolist()]
    return exact if values.shape else exact[()]


def _is_fraction_array(values):
    return all(isinstance(v, Fraction) for v in values.tolist())


def _scalar(value):
    if isinstance(value, Fraction):
        return value
    return float(value)


def summarize_queries(values, inputs, defined=None):
    """Apply the empty-list policy and aggregate per-query values.

    Parameters
    ----------
    values : ndarray of shape (n_groups,)
        Metric value of every list (entries of undefined lists are ignored).
    inputs : ListInputs
        The validated inputs (``single``, ``exact`` and the ``empty`` and
        ``return_per_query`` options are used).
    defined : ndarray of shape (n_groups,) of bool, default=None
        Which lists have a defined value; ``None`` means all.

    Returns
    -------
    value : float or Fraction
        The value of the single list, or the mean over the queries.
    per_query : ndarray of shape (n_groups,)
        Only when ``return_per_query``: the per-query values, in the order of
        the sorted unique query ids.
    """
    n_groups = values.shape[0]
    empty = inputs.options.get("empty", 0.0)
    exact = inputs.exact and values.dtype == object
    if exact:
        per_query = np.empty(n_groups, dtype=object)
        per_query[:] = list(values)
    else:
        per_query = np.asarray(values, dtype=np.float64).copy()
    used = np.ones(n_groups, dtype=bool)
    if defined is not None and not np.all(defined):
        undefined = ~np.asarray(defined, dtype=bool)
        if empty == "skip":
            fill = math.nan
            used = ~undefined
        elif exact and math.isfinite(empty):
            fill = Fraction(empty)
        else:
            fill = float(empty)
        per_query[undefined] = fill
    chosen = per_query[used]
    if chosen.shape[0] == 0:
        mean = math.nan
    elif exact and _is_fraction_array(chosen):
        mean = sum(chosen.tolist(), Fraction(0)) / chosen.shape[0]
    else:
        mean = float(np.mean(chosen.astype(np.float64)))
    if exact and not _is_fraction_array(per_query):
        per_query = per_query.astype(np.float64)
    if inputs.single:
        mean = _scalar(per_query[0])
    mean = _scalar(mean)
    if inputs.options.get("return_per_query", False):
        return mean, per_query
    return mean


#: The descriptions of the arguments and results every list metric shares, by
#: name (numpydoc entries, unindented).
SHARED_DOCS = {
    "y_score": (
        "y_score : array-like of shape (n_samples,)\n    Scores, higher ranked first."
    ),
    "qid": (
        "qid : array-like of shape (n_samples,), default=None\n"
        "    Query id of every row; ``None`` means a single list."
    ),
    "ties": (
        'ties : {"average", "pessimistic", "optimistic", "stable"}, '
        'default="average"\n'
        "    Tie policy (see :func:`~treerank.metrics.dcg_score`)."
    ),
    "return_per_query": (
        "return_per_query : bool, default=False\n"
        "    Also return the value of every query."
    ),
    "per_query": (
        "per_query : ndarray of shape (n_queries,)\n    Only if ``return_per_query``."
    ),
}


def shared_doc(function):
    """Fill the shared descriptions into the docstring of a list metric.

    A docstring line holding only ``%(name)s`` is replaced by
    ``SHARED_DOCS[name]``, indented as that line.

    Examples
    --------
    >>> from treerank.metrics._list_common import shared_doc
    >>> def metric(y_true, y_score):
    ...     pass
    >>> metric.__doc__ = "Parameters\\n----------\\n%(y_score)s"
    >>> print(shared_doc(metric).__doc__)
    Parameters
    ----------
    y_score : array-like of shape (n_samples,)
        Scores, higher ranked first.
    """
    if function.__doc__ is None:  # python -OO
        return function
    lines = []
    for line in function.__doc__.split("\n"):
        key = line.strip()
        if key.startswith("%(") and key.endswith(")s"):
            indent = line[: len(line) - len(line.lstrip())]
            lines += [indent + text for text in SHARED_DOCS[key[2:-2]].split("\n")]
        else:
            lines.append(line)
    function.__doc__ = "\n".join(lines)
    return function
