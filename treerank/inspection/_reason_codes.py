"""Reason codes: the features that pull a row's score down (or up), with rules.

In credit scoring, an applicant who is refused is told the main reasons
("adverse action" reason codes). For a ranking score the natural reasons for a
low rank are the features with the most negative contributions: those that
pull the row's score furthest below the base value (the mean score of the
reference population). Each reason is given with the row's value and the
condition it met on the feature (:mod:`treerank.inspection._conditions`).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np

from treerank.inspection._conditions import row_conditions
from treerank.inspection._shapley import shapley_values
from treerank.inspection._tree_sum import check_explainable, model_router

__all__ = ["reason_codes", "top_reasons"]

_DIRECTIONS = ("down", "up")


def _check_top(top, direction):
    if isinstance(top, bool) or not isinstance(top, Integral) or top < 1:
        raise ValueError(f"top must be a positive integer; got {top!r}.")
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be 'down' or 'up'; got {direction!r}.")


def top_reasons(values, top, direction="down"):
    """The ``top`` features of each row with the largest pull in a direction.

    Parameters
    ----------
    values : ndarray of shape (n_samples, n_features)
        Contributions.
    top : int
    direction : {"down", "up"}, default="down"
        "down": the most negative contributions, most negative first; "up":
        the most positive, largest first. Contributions of the other sign, and
        zeros, are never reasons.

    Returns
    -------
    features : ndarray of int of shape (n_samples, top)
        Feature indices, -1 where a row has fewer reasons. Ties go to the
        feature of lower index.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.inspection._reason_codes import top_reasons
    >>> top_reasons(np.array([[0.5, -0.2, -0.7, 0.0]]), 3)
    array([[ 2,  1, -1]])
    """
    _check_top(top, direction)
    signed = values if direction == "down" else -values
    order = np.argsort(signed, axis=1, kind="stable")[:, :top]
    chosen = np.take_along_axis(signed, order, axis=1) < 0
    features = np.where(chosen, order, -1)
    if features.shape[1] < top:  # fewer features than reasons asked
        pad = np.full((features.shape[0], top - features.shape[1]), -1)
        features = np.concatenate([features, pad], axis=1)
    return features


def reason_codes(
    estimator,
    X,
    *,
    background=None,
    top=3,
    direction="down",
    explanation=None,
    **kwargs,
):
    """The features that pull each row's score down (or up), with their rules.

    For each row, the ``top`` features whose contributions to its score
    (:func:`shapley_values`) are the most negative (``direction="down"``: why
    the row is ranked low) or the most positive (``"up"``: why it is ranked
    high), each with the row's value and the condition it met on the feature,
    such as ``"debt_ratio > 0.43"``: the interval that the decisions of the
    row's paths (in every tree) put on the feature, over which the row keeps
    its paths, hence its score, the other features unchanged (a category set
    for a categorical feature, "is missing" for a missing value). In a forest
    of many trees the interval is narrow.

    Read more in the :ref:`User Guide <inspection>`.

    Parameters
    ----------
    estimator : TreeRank or RankingForest
        A fitted ranker.
    X : {array-like, sparse matrix, DataFrame} of shape (n_samples, n_features)
        The rows.
    background : {array-like, sparse matrix, DataFrame} or None, default=None
        The background sample of :func:`shapley_values` (not needed with an
        ``explanation``).
    top : int, default=3
        Reasons per row (a row has fewer when fewer features pull its score
        in that direction).
    direction : {"down", "up"}, default="down"
    explanation : Explanation or None, default=None
        The Shapley values of these rows, if already computed.
    **kwargs
        Passed to :func:`shapley_values` (``feature_perturbation``,
        ``algorithm``, ``random_state``, ...).

    Returns
    -------
    reasons : pandas.DataFrame
        One line per reason: ``row`` (the index of X when it is a DataFrame,
        else the position), ``reason`` (1 for the strongest), ``feature``,
        ``value`` (the row's value, as text), ``contribution``, ``rule``, and
        ``std_error`` when the contributions are estimates.

    See Also
    --------
    shapley_values : The contributions.

    Examples
    --------
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.inspection import reason_codes
    >>> X, y = make_nested_squares(500, random_state=0)
    >>> tree = TreeRank(random_state=0).fit(X, y)
    >>> reasons = reason_codes(tree, X[:2], background=X[:50], top=2)
    >>> list(reasons.columns)
    ['row', 'reason', 'feature', 'value', 'contribution', 'rule']
    """
    import pandas as pd

    _check_top(top, direction)
    check_explainable(estimator)
    if explanation is None:
        explanation = shapley_values(estimator, X, background=background, **kwargs)
    elif explanation.values.shape[0] != _n_rows(X):
        raise ValueError(
            f"explanation has {explanation.values.shape[0]} rows but X has "
            f"{_n_rows(X)}; pass the explanation of these rows."
        )
    index = X.index if isinstance(X, pd.DataFrame) else np.arange(_n_rows(X))
    table = reason_table(estimator, explanation, top, direction)
    lines = []
    for i in range(len(explanation)):
        for rank in range(top):
            feature = table["features"][i, rank]
            if feature < 0:
                break
            line = {
                "row": index[i],
                "reason": rank + 1,
                "feature": explanation.feature_names[feature],
                "value": explanation.display_value(i, feature),
                "contribution": float(explanation.values[i, feature]),
                "rule": table["rules"][i][rank],
            }
            if explanation.std_errors is not None:
                line["std_error"] = float(explanation.std_errors[i, feature])
            lines.append(line)
    columns = ["row", "reason", "feature", "value", "contribution", "rule"]
    if explanation.std_errors is not None:
        columns.append("std_error")
    return pd.DataFrame(lines, columns=columns)


def _n_rows(X):
    return X.shape[0] if hasattr(X, "shape") else len(X)


def reason_table(estimator, explanation, top, direction):
    """Top features and their rules for every row of an explanation.

    Parameters
    ----------
    estimator : TreeRank or RankingForest
    explanation : Explanation
    top : int
    direction : {"down", "up"}

    Returns
    -------
    table : dict
        ``features`` (ndarray of int of shape (n_samples, top), -1 where a
        row has fewer reasons) and ``rules`` (list of lists of str).
    """
    features = top_reasons(explanation.values, top, direction)
    conditions = row_conditions(
        model_router(estimator),
        explanation.data,
        explanation.feature_names,
        explanation.category_labels,
    )
    rules = [
        [conditions.rule(i, int(k)) for k in row if k >= 0]
        for i, row in enumerate(features)
    ]
    return {"features": features, "rules": rules}
