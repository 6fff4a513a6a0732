"""The single door through which treerank uses scikit-learn's private helpers.

scikit-learn's parameter-validation machinery (``Interval``, ``StrOptions``,
``_fit_context``) is private. Importing it in one place keeps the rest of the
package on public names and makes a change in scikit-learn a one-file fix.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from sklearn.base import _fit_context
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    RealNotInt,
    StrOptions,
    validate_params,
)
from sklearn.utils.validation import validate_data as _sklearn_validate_data

__all__ = [
    "HasMethods",
    "Interval",
    "RealNotInt",
    "StrOptions",
    "_fit_context",
    "validate_data",
    "validate_params",
]


def validate_data(estimator, /, X="no_validation", y="no_validation", **kwargs):
    """scikit-learn's ``validate_data``, after treerank's checks of X's columns.

    Duplicate column names and columns of dates or durations raise a
    :class:`~treerank.exceptions.FeatureError` naming them
    (:func:`~treerank.utils.validation.check_frame_columns`) rather than a
    third-party error naming no column.
    """
    from treerank.utils.validation import check_frame_columns

    check_frame_columns(X)
    return _sklearn_validate_data(estimator, X, y, **kwargs)
