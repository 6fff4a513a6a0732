"""Categorical features: which columns are categorical, and their category codes.

The trees split a categorical feature by subsets of its categories. They see
it as category codes 0, 1, ..., C - 1 (NaN for a missing value); this module
decides which columns are categorical (``categorical_features``, as in
scikit-learn's ``HistGradientBoostingClassifier``) and maps their values to
codes and back to labels.

At prediction time a value of a categorical feature that was never seen in
fit is scored as a missing value. Two cases are not left silent:

- a column given as numbers (for instance a pandas categorical column's
  ``.cat.codes``) where the model learned text labels, or as text where it
  learned numbers, such that no value can match a category: a
  :class:`~treerank.exceptions.FeatureError` naming the column;
- more than :data:`UNSEEN_CATEGORY_SHARE` (5%) of a column's non-missing
  values never seen in fit: an
  :class:`~treerank.exceptions.UnseenCategoryWarning` naming the column, the
  share and examples of the values.

A pandas categorical column whose categories are declared in another order
is read by its labels: it scores as the fitted order does.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys
import warnings

import numpy as np
from sklearn.utils.validation import check_array

from treerank.exceptions import FeatureError, UnseenCategoryWarning
from treerank.utils._sklearn_compat import StrOptions, validate_data
from treerank.utils._sparse import is_sparse

__all__ = [
    "CATEGORICAL_FEATURES_CONSTRAINT",
    "MAX_CATEGORIES",
    "UNSEEN_CATEGORY_SHARE",
    "CategoryEncoder",
    "categorical_mask",
    "category_labels",
    "feature_matrix",
]

CATEGORICAL_FEATURES_CONSTRAINT = [StrOptions({"from_dtype"}), "array-like", None]
"""Parameter constraint of ``categorical_features``."""

MAX_CATEGORIES = 255
"""Most categories of one feature (codes 0..254; 255 marks missing values)."""

UNSEEN_CATEGORY_SHARE = 0.05
"""Share of a column's non-missing values unseen in fit above which a warning is
emitted (:class:`~treerank.exceptions.UnseenCategoryWarning`)."""

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _is_frame(X):
    return hasattr(X, "columns") and hasattr(X, "dtypes") and hasattr(X, "iloc")


def _column(X, j):
    return X.iloc[:, j] if _is_frame(X) else np.asarray(X, dtype=object)[:, j]


def _is_categorical_dtype(dtype):
    """A pandas dtype of category, string or object (text)."""
    import pandas as pd

    if isinstance(dtype, np.dtype) and dtype.kind in "biufcmM":
        return False  # a numpy dtype of numbers or dates (the quick answer)
    return (
        isinstance(dtype, pd.CategoricalDtype)
        or pd.api.types.is_string_dtype(dtype)
        or pd.api.types.is_object_dtype(dtype)
    )


def _is_frame_column_categorical(column):
    dtype = getattr(column, "dtype", None)
    return dtype is not None and str(dtype) == "category"


class CategoryEncoder:
    """Category codes of the categorical columns of X; other columns as floats.

    Parameters
    ----------
    categorical_features : "from_dtype", array-like or None, default="from_dtype"
        Which features are categorical:

        - ``"from_dtype"``: the columns of a pandas DataFrame whose dtype is
          ``category``, string or object (columns of text); none for an array;
        - an array of int: the indices of the categorical features;
        - an array of str: their names (X must have column names);
        - an array of bool of shape (n_features,): a mask;
        - None: no categorical feature.
    max_categories : int, default=255
        Most categories of one feature.

    Attributes
    ----------
    is_categorical_ : ndarray of bool of shape (n_features,)
    categories_ : list
        For each feature, the array of its categories (the code of a category
        is its position) or None for a numeric feature. For a pandas
        ``category`` column, its declared categories in order; otherwise the
        sorted distinct values seen in fit.

    Examples
    --------
    >>> import pandas as pd
    >>> from treerank.utils import CategoryEncoder
    >>> X = pd.DataFrame({"city": ["Lyon", "Oslo", None], "age": [30, 41, 25]})
    >>> encoder = CategoryEncoder().fit(X)
    >>> encoder.categories_[0].tolist(), encoder.categories_[1]
    (['Lyon', 'Oslo'], None)
    >>> new = pd.DataFrame({"city": ["Oslo", "Rome"], "age": [1, 2]})
    >>> encoder.transform(new, check_unseen=False)  # Rome: unseen, as missing
    array([[ 1.,  1.],
           [nan,  2.]])
    """

    def __init__(
        self, categorical_features="from_dtype", max_categories=MAX_CATEGORIES
    ):
        self.categorical_features = categorical_features
        self.max_categories = max_categories

    def _mask(self, X, n_features, names):
        spec = self.categorical_features
        if spec is None:
            return np.zeros(n_features, dtype=bool)
        if isinstance(spec, str):
            if spec != "from_dtype":
                raise ValueError(
                    "categorical_features must be 'from_dtype', None, or an array "
                    f"of indices, names or booleans; got {spec!r}."
                )
            if not _is_frame(X):
                return np.zeros(n_features, dtype=bool)
            # from the dtypes at once (taking 100,000 columns one by one takes
            # pandas seconds)
            return np.array([_is_categorical_dtype(d) for d in X.dtypes], dtype=bool)
        values = np.asarray(spec)
        if values.ndim != 1:
            raise ValueError(
                "categorical_features must be one-dimensional; got shape "
                f"{values.shape}."
            )
        mask = np.zeros(n_features, dtype=bool)
        if values.shape[0] == 0:
            return mask
        if values.dtype.kind == "b":
            if values.shape[0] != n_features:
                raise ValueError(
                    f"categorical_features has {values.shape[0]} booleans for "
                    f"{n_features} features."
                )
            return values.copy()
        if values.dtype.kind in "iu":
            if np.any(values < 0) or np.any(values >= n_features):
                raise ValueError(
                    f"categorical_features holds indices out of [0, {n_features - 1}]:"
                    f" {values.tolist()}."
                )
            mask[values] = True
            return mask
        if values.dtype.kind in "OU":
            if names is None:
                raise ValueError(
                    "categorical_features names features, but X has no column "
                    "names: pass indices or a boolean mask."
                )
            index = {name: j for j, name in enumerate(names)}
            unknown = [str(v) for v in values if str(v) not in index]
            if unknown:
                raise ValueError(
                    f"categorical_features names unknown features {unknown}; the "
                    f"features are {list(names)}."
                )
            mask[[index[str(v)] for v in values]] = True
            return mask
        raise ValueError(
            "categorical_features must hold indices, names or booleans; got dtype "
            f"{values.dtype}."
        )

    def _categories(self, column, name):
        if _is_frame_column_categorical(column):
            categories = np.asarray(column.cat.categories, dtype=object)
        else:
            import pandas as pd

            values = np.asarray(column, dtype=object)
            present = pd.unique(values[~pd.isna(values)])
            try:
                categories = np.array(sorted(present.tolist()), dtype=object)
            except TypeError:
                raise ValueError(
                    f"categorical feature {name!r} mixes values that cannot be "
                    "ordered (e.g. numbers and strings); convert it to one type."
                ) from None
        if categories.shape[0] > self.max_categories:
            raise ValueError(
                f"categorical feature {name!r} has {categories.shape[0]} categories; "
                f"at most {self.max_categories} are supported (group rare ones, or "
                "treat the feature as numeric)."
            )
        return categories

    def fit(self, X):
        """Find the categorical features and their categories.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        self : CategoryEncoder
        """
        n_features = X.shape[1] if hasattr(X, "shape") else len(X[0])
        names = [str(c) for c in X.columns] if _is_frame(X) else None
        self.is_categorical_ = self._mask(X, n_features, names)
        self.categories_ = [
            self._categories(_column(X, j), names[j] if names else j)
            if self.is_categorical_[j]
            else None
            for j in range(n_features)
        ]
        return self

    @property
    def any_categorical(self):
        """Whether some feature is categorical."""
        return bool(self.is_categorical_.any())

    def transform(self, X, *, check_unseen=True):
        """Floats for numeric columns, category codes for categorical ones.

        Unknown categories and missing values become NaN (the trees send them
        where missing values go). With ``check_unseen``, a categorical column
        whose values are all of another kind than its categories (numbers
        for text labels, or text for numbers) is refused with a
        :class:`~treerank.exceptions.FeatureError`, and one with more than
        :data:`UNSEEN_CATEGORY_SHARE` of its non-missing values unseen in fit
        gives an :class:`~treerank.exceptions.UnseenCategoryWarning`.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)
        check_unseen : bool, default=True
            Check the values unseen in fit (see above).

        Returns
        -------
        X_codes : ndarray of float64 of shape (n_samples, n_features)
        """
        n_samples = X.shape[0] if hasattr(X, "shape") else len(X)
        n_features = self.is_categorical_.shape[0]
        out = np.empty((n_samples, n_features), dtype=np.float64)
        names = [str(c) for c in X.columns] if _is_frame(X) else None
        numeric = np.flatnonzero(~self.is_categorical_)
        converted = np.zeros(n_features, dtype=bool)
        if _is_frame(X) and numeric.shape[0] > 1:
            # the numeric columns at once (one by one, a wide frame is slow)
            try:
                out[:, numeric] = X.iloc[:, numeric].to_numpy(dtype=np.float64)
            except (TypeError, ValueError):
                pass  # the column that is not numeric is named below
            else:
                converted[numeric] = True
        for j in range(n_features):
            if converted[j]:
                continue
            column = _column(X, j)
            name = names[j] if names else j
            if not self.is_categorical_[j]:
                try:
                    out[:, j] = np.asarray(column, dtype=np.float64)
                except (TypeError, ValueError) as exc:
                    raise ValueError(
                        f"feature {name!r} is not numeric ({exc}); declare it in "
                        "categorical_features (pandas columns of dtype category or "
                        "text are categorical by default)."
                    ) from None
                continue
            values = np.asarray(column, dtype=object)
            codes, unseen = self._codes(values, self.categories_[j])
            if check_unseen and unseen.any():
                self._check_unseen(name, column, values, unseen, j)
            out[:, j] = codes
        return out

    @staticmethod
    def _codes(values, categories):
        """Codes of ``values`` (NaN: missing or unseen) and the unseen mask."""
        import pandas as pd

        codes = pd.Index(categories, dtype=object).get_indexer(values)
        unseen = codes < 0
        if unseen.any():
            unseen &= ~pd.isna(values)
        codes = codes.astype(np.float64)
        codes[codes < 0] = np.nan  # missing, or a category unseen in fit
        return codes, unseen

    def unseen_categories(self, X):
        """Per categorical feature, its values never seen in fit.

        Parameters
        ----------
        X : array-like or DataFrame of shape (n_samples, n_features)

        Returns
        -------
        unseen : dict
            For each categorical feature index ``j``: ``(n_present, values)``,
            the number of non-missing values of the column and the array of
            those unseen in fit (one entry per row, repeats included).

        Examples
        --------
        >>> import pandas as pd
        >>> from treerank.utils import CategoryEncoder
        >>> encoder = CategoryEncoder().fit(pd.DataFrame({"city": ["Lyon", "Oslo"]}))
        >>> n, values = encoder.unseen_categories(
        ...     pd.DataFrame({"city": ["Oslo", "Rome", None]}))[0]
        >>> n, values.tolist()
        (2, ['Rome'])
        """
        import pandas as pd

        out = {}
        for j in np.flatnonzero(self.is_categorical_):
            values = np.asarray(_column(X, j), dtype=object)
            _, unseen = self._codes(values, self.categories_[j])
            out[int(j)] = (int((~pd.isna(values)).sum()), values[unseen])
        return out

    def _check_unseen(self, name, column, values, unseen, j):
        """Refuse values of the wrong kind, warn about many unseen values."""
        import pandas as pd

        present = ~pd.isna(values)
        n_present, n_unseen = int(present.sum()), int(unseen.sum())
        categories = self.categories_[j]
        known = _examples(categories)
        given = _value_kind(values[present])
        learned = _value_kind(categories)
        if n_unseen == n_present and None not in (given, learned) and given != learned:
            dtype = str(getattr(column, "dtype", "object"))
            shown = "" if dtype == "object" else f"dtype {dtype}: "
            if given == "number":
                hint = (
                    "category codes? Pass the labels themselves (for a pandas "
                    "categorical column, the column rather than its .cat.codes), "
                    "or refit with the codes as categories"
                )
            else:
                hint = "convert the column to numbers, as it was in fit"
            raise FeatureError(
                f"categorical feature {name!r} was fitted on {learned} categories "
                f"({known}), but X gives it {given}s ({shown}"
                f"{_examples(pd.unique(values[present]))}), none of which can be a "
                f"category of the model: {hint}."
            )
        share = n_unseen / n_present
        if share > UNSEEN_CATEGORY_SHARE:
            warnings.warn(
                f"categorical feature {name!r}: {n_unseen} of {n_present} values "
                f"({share:.0%}) are categories never seen in fit "
                f"({_examples(pd.unique(values[unseen]))}); they are scored as "
                f"missing values. The categories seen in fit are {known}.",
                UnseenCategoryWarning,
                stacklevel=_user_stacklevel(),
            )

    def labels(self):
        """Per feature, the display labels of its codes (None if numeric)."""
        return [
            None if c is None else [str(v) for v in c.tolist()]
            for c in self.categories_
        ]


def _value_kind(values):
    """``"number"`` or ``"text"`` when every value is one, else None."""
    import pandas as pd

    if len(values) == 0:
        return None
    kind = pd.api.types.infer_dtype(np.asarray(values, dtype=object), skipna=True)
    if kind in ("string", "unicode"):
        return "text"
    if kind in (
        "integer",
        "floating",
        "mixed-integer-float",
        "decimal",
        "boolean",
        "complex",
    ):
        return "number"
    return None


def _examples(values, limit=5):
    """The first ``limit`` values for a message: ``'a', 'b', ... (12 in all)``."""
    values = list(values)
    shown = ", ".join(repr(v)[:40] for v in values[:limit])
    if len(values) > limit:
        shown += f", ... ({len(values)} in all)"
    return shown


def _user_stacklevel():
    """The stack level of the first caller outside treerank and scikit-learn."""
    frame, level = sys._getframe(1), 1
    while frame is not None:
        path = frame.f_code.co_filename
        if not (path.startswith(_PACKAGE_DIR) or f"{os.sep}sklearn{os.sep}" in path):
            break
        frame, level = frame.f_back, level + 1
    return level


_NO_Y = "no_validation"


def _check_no_sparse_categorical(spec, X):
    """Refuse categorical features selected in a sparse X."""
    n_features = X.shape[1]
    mask = CategoryEncoder(spec)._mask(X, n_features, None)
    if mask.any():
        raise ValueError(
            f"categorical_features selects features {np.flatnonzero(mask).tolist()}"
            ", but X is sparse: categorical features are supported for a dense X "
            "or a DataFrame only. Pass X.toarray(), or categorical_features=None "
            "to split every feature by thresholds."
        )


def feature_matrix(estimator, X, y=_NO_Y, *, reset, accept_sparse=False):
    """Validate X (and y) for a tree estimator with ``categorical_features``.

    With ``reset`` (in ``fit``), finds the categorical features
    (:class:`CategoryEncoder`) and stores the encoder as
    ``estimator._category_encoder`` (None when no feature is categorical);
    then returns X as float64 with category codes in the categorical columns
    (unknown categories and missing values as NaN; infinity refused), and y
    checked for consistency when given. ``n_features_in_`` and
    ``feature_names_in_`` are set or checked as by scikit-learn.

    With ``accept_sparse``, a scipy sparse X is returned as a float64 CSR or
    CSC matrix (other formats become CSR), never densified; it has no
    categorical feature (``"from_dtype"`` finds none, and an explicit
    selection is refused).

    Returns
    -------
    X : ndarray of float64 of shape (n_samples, n_features), or sparse matrix
    y : ndarray, only when given (``y=None`` in ``fit`` is an error)
    """
    sparse_input = accept_sparse and is_sparse(X)
    if reset:
        spec = estimator.categorical_features
        estimator._category_encoder = None
        if sparse_input:
            if spec is not None and not isinstance(spec, str):
                _check_no_sparse_categorical(spec, X)
        elif spec is not None and not (isinstance(spec, str) and not _is_frame(X)):
            if not _is_frame(X):  # explicit features of an array: a 2-d array
                X = check_array(X, dtype=None, ensure_all_finite=False)
            encoder = CategoryEncoder(spec).fit(X)
            if encoder.any_categorical:
                estimator._category_encoder = encoder
    encoder = getattr(estimator, "_category_encoder", None)
    options = {"dtype": np.float64, "ensure_all_finite": "allow-nan"}
    if sparse_input and encoder is not None:
        raise ValueError(
            "X is sparse, but the model was fitted with categorical features "
            f"{np.flatnonzero(encoder.is_categorical_).tolist()}: pass a dense X "
            "or a DataFrame."
        )
    if accept_sparse:
        options["accept_sparse"] = ("csr", "csc")
    if encoder is None:
        if isinstance(y, str) and y == _NO_Y:
            return validate_data(estimator, X, reset=reset, **options)
        return validate_data(estimator, X, y, reset=reset, y_numeric=False, **options)
    if isinstance(y, str) and y == _NO_Y:
        validate_data(estimator, X, reset=reset, skip_check_array=True)
    else:
        validate_data(estimator, X, y, reset=reset, skip_check_array=True)
    codes = check_array(encoder.transform(X), input_name="X", **options)
    if isinstance(y, str) and y == _NO_Y:
        return codes
    y = np.asarray(y)
    if y.shape[0] != codes.shape[0]:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: "
            f"[{codes.shape[0]}, {y.shape[0]}]"
        )
    return codes, y


def categorical_mask(estimator):
    """The fitted estimator's mask of categorical features (None if none)."""
    encoder = getattr(estimator, "_category_encoder", None)
    return None if encoder is None else encoder.is_categorical_


def category_labels(estimator):
    """Per feature, the labels of its category codes (None if no categorical)."""
    encoder = getattr(estimator, "_category_encoder", None)
    return None if encoder is None else encoder.labels()
