"""Quantile binning of the features, once per fit.

Each feature is cut into at most ``max_bins`` intervals by real thresholds
``t_0 < t_1 < ... < t_{m-1}`` placed halfway between consecutive distinct values
of the (sub)sample. A value x falls in bin ``#{k : t_k < x}``, so bin b holds
``t_{b-1} < x <= t_b`` and the split "bin <= b" is exactly the rule
"x <= t_b" on raw values: trees learned on bins predict and export on raw X
with the same thresholds, in float64 (no loss of precision). Missing values
(NaN) get the reserved code :data:`MISSING_BIN`.

A categorical feature holds category codes 0, 1, ..., C - 1 (C <= 255): each
code is its own bin, and the trees split it by subsets of categories.

With at most ``max_bins`` distinct values, every distinct value has its own bin,
so a split search over the bins is an exhaustive search over the thresholds.
Otherwise the thresholds sit at the ``k / max_bins`` quantiles of the values
(one threshold per crossing, so a value carrying much of the mass keeps a bin of
its own and never straddles two).

X may be a scipy sparse matrix: it is read one column at a time (an entry not
stored is the value 0.0, a stored NaN is missing), so that only the codes, one
byte per value, are dense.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np

from treerank._engine._jit import jit
from treerank.utils._sparse import canonical_sparse, is_sparse, sparse_column

__all__ = [
    "MAX_BINS",
    "MISSING_BIN",
    "BinMapper",
    "bin_representatives",
    "bin_thresholds",
]

MISSING_BIN = 255
"""Code of a missing value (NaN): the last of the 256 codes of a byte."""

MAX_BINS = 255
"""Largest number of bins of a feature (codes 0..254; 255 is missing)."""


def _midpoints(lower, upper):
    """Points m with lower <= m < upper, halfway when representable."""
    mid = lower + (upper - lower) / 2.0
    # with adjacent floats, halfway rounds to upper: keep the lower value, which
    # still separates the two (a value v goes left when v <= threshold)
    return np.where(mid < upper, mid, lower)


def bin_thresholds(values, max_bins=MAX_BINS):
    """Thresholds cutting one feature into at most ``max_bins`` bins.

    Parameters
    ----------
    values : ndarray of shape (n_samples,)
        Values of the feature; NaN values are ignored.
    max_bins : int, default=255
        Largest number of bins (between 2 and 255).

    Returns
    -------
    thresholds : ndarray of float64 of shape (n_bins - 1,)
        Increasing; empty for a constant (or all-missing) feature.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank._engine import bin_thresholds
    >>> bin_thresholds(np.array([3.0, 1.0, 2.0, 2.0, np.nan]))
    array([1.5, 2.5])
    >>> bin_thresholds(np.arange(100.0), max_bins=4)
    array([24.5, 49.5, 74.5])
    """
    values = np.asarray(values, dtype=np.float64)
    values = values[~np.isnan(values)]
    if values.shape[0] == 0:
        return np.zeros(0)
    distinct, counts = np.unique(values, return_counts=True)
    if distinct.shape[0] <= max_bins:
        return _midpoints(distinct[:-1], distinct[1:])
    cumulative = np.cumsum(counts)
    targets = np.arange(1, max_bins) * (cumulative[-1] / max_bins)
    # the distinct value at which the cumulative count reaches each target:
    # cut just above it
    index = np.unique(np.searchsorted(cumulative, targets, side="left"))
    index = index[index < distinct.shape[0] - 1]
    return _midpoints(distinct[index], distinct[index + 1])


def _distinct_midpoints(X):
    """:func:`bin_thresholds` of every column of a dense X, at once.

    For an X of at most ``max_bins`` rows, where every column has at most
    ``max_bins`` distinct values: the midpoints of consecutive distinct values
    of each column, computed for all the columns by one sort (the same
    thresholds, bit for bit, as :func:`bin_thresholds` column by column, in a
    fraction of the time of a file of many columns and few rows).
    """
    ordered = np.sort(X, axis=0)  # each column increasing, NaN last
    lower, upper = ordered[:-1], ordered[1:]
    new = (upper != lower) & ~np.isnan(upper)  # a new distinct value
    with np.errstate(invalid="ignore"):
        middle = _midpoints(lower, upper)
    counts = new.sum(axis=0)
    values = middle.T[new.T]  # column by column, increasing
    return np.split(values, np.cumsum(counts)[:-1])


def _check_category_codes(column, index):
    """Number of categories of a column of codes (integers in [0, 254])."""
    present = column[~np.isnan(column)]
    if present.shape[0] == 0:
        return 1
    if (
        np.any(present < 0)
        or np.any(present >= MISSING_BIN)
        or np.any(present != np.floor(present))
    ):
        raise ValueError(
            f"categorical feature {index} must hold category codes: integers in "
            f"[0, {MISSING_BIN - 1}] (NaN for missing)."
        )
    return int(present.max()) + 1


# values of X from which transform bins in one compiled pass (_bin_rows)
_COMPILED_MIN_VALUES = 1 << 20
# or columns: a per-column search costs about 10 microseconds each
_COMPILED_MIN_COLUMNS = 1 << 12


@jit
def _bin_rows(X, threshold_table, numeric, codes):
    """Codes of the numeric columns of a dense C-contiguous X.

    ``codes[i, j]`` is the number of thresholds of feature j below ``X[i, j]``
    (``searchsorted`` side "left"), :data:`MISSING_BIN` for NaN. The row of
    ``threshold_table`` is padded with +inf to 256 entries, so that eight
    halvings find any code; the features of a row are searched side by side
    (independent chains of loads) and the side of each halving is a select.
    """
    n_samples, n_features = X.shape
    for i in range(n_samples):
        for j in range(n_features):
            if not numeric[j]:
                continue
            value = X[i, j]
            table = threshold_table[j]
            low = 0
            step = 128
            while step > 0:
                low += step * np.int64(table[low + step - 1] < value)
                step >>= 1
            codes[i, j] = MISSING_BIN if value != value else low


def _as_columns(X):
    """X as float64, dense or canonical CSC (cheap columns)."""
    if is_sparse(X):
        return canonical_sparse(X, "csc")
    return np.asarray(X, dtype=np.float64)


def _column(X, j):
    """Column j of X (from :func:`_as_columns`) as a dense float64 array."""
    return sparse_column(X, j) if is_sparse(X) else X[:, j]


class BinMapper:
    """Quantile bins of every feature, fitted once and shared by all trees.

    Parameters
    ----------
    max_bins : int, default=255
        Largest number of bins per feature (2 to 255); a feature with fewer
        distinct values gets one bin per value.
    subsample : int or None, default=200_000
        Number of rows the quantiles are computed from (drawn without
        replacement when there are more rows); None uses all rows.
    random_state : int, RandomState instance or None, default=None
        Draws the subsample.
    categorical : array-like of bool of shape (n_features,) or None, default=None
        Features holding category codes (integers in ``[0, 254]``; NaN for
        missing): each code is its own bin.

    Attributes
    ----------
    thresholds_ : list of ndarray
        The thresholds of each feature (see :func:`bin_thresholds`).
    n_bins_ : ndarray of int32 of shape (n_features,)
        Number of non-missing bins of each feature (codes ``0..n_bins_-1``);
        for a categorical feature, one more than its largest code.
    is_categorical_ : ndarray of uint8 of shape (n_features,)
    threshold_table_ : ndarray of float64 of shape (n_features, 256)
        ``threshold_table_[f, b]`` is the real threshold of the split
        "bin <= b" of feature f (``+inf`` past the last threshold).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank._engine import BinMapper
    >>> X = np.array([[0.0, 5.0], [1.0, np.nan], [2.0, 5.0], [3.0, 7.0]])
    >>> mapper = BinMapper().fit(X)
    >>> mapper.transform(X)
    array([[  0,   0],
           [  1, 255],
           [  2,   0],
           [  3,   1]], dtype=uint8)
    >>> mapper.threshold_table_[0, :3]
    array([0.5, 1.5, 2.5])
    """

    def __init__(
        self, max_bins=MAX_BINS, subsample=200_000, random_state=None, categorical=None
    ):
        self.max_bins = max_bins
        self.subsample = subsample
        self.random_state = random_state
        self.categorical = categorical

    def fit(self, X):
        """Compute the thresholds of each feature.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            Real values; NaN marks a missing value. A sparse X is read one
            column at a time (an entry not stored is 0.0).

        Returns
        -------
        self : BinMapper
        """
        if (
            not isinstance(self.max_bins, Integral)
            or isinstance(self.max_bins, bool)
            or not 2 <= self.max_bins <= MAX_BINS
        ):
            raise ValueError(
                f"max_bins must be an integer in [2, {MAX_BINS}]; "
                f"got {self.max_bins!r}."
            )
        X = _as_columns(X)
        n_samples, n_features = X.shape
        categorical = (
            np.zeros(n_features, dtype=bool)
            if self.categorical is None
            else np.asarray(self.categorical, dtype=bool)
        )
        if categorical.shape != (n_features,):
            raise ValueError(
                f"categorical must have one entry per feature ({n_features}); got "
                f"shape {categorical.shape}."
            )
        self.is_categorical_ = categorical.astype(np.uint8)
        n_categories = {
            j: _check_category_codes(_column(X, j), j)
            for j in np.flatnonzero(categorical)
        }
        if self.subsample is not None and n_samples > self.subsample:
            rng = np.random.RandomState(self.random_state)
            rows = np.sort(rng.choice(n_samples, self.subsample, replace=False))
            X = _as_columns(X[rows])
        if not is_sparse(X) and 1 < X.shape[0] <= self.max_bins:
            # few rows: every distinct value has its own bin, for all the
            # columns at once
            self.thresholds_ = _distinct_midpoints(X)
            for j in np.flatnonzero(categorical):
                self.thresholds_[j] = np.zeros(0)
        else:
            self.thresholds_ = [
                np.zeros(0)
                if categorical[j]
                else bin_thresholds(_column(X, j), self.max_bins)
                for j in range(n_features)
            ]
        self.n_bins_ = np.array(
            [
                n_categories[j] if categorical[j] else t.shape[0] + 1
                for j, t in enumerate(self.thresholds_)
            ],
            dtype=np.int32,
        )
        table = np.full((X.shape[1], MISSING_BIN + 1), np.inf)
        for j, thresholds in enumerate(self.thresholds_):
            table[j, : thresholds.shape[0]] = thresholds
        self.threshold_table_ = table
        return self

    def transform(self, X):
        """Bin codes of X: uint8, C-contiguous, 255 for missing values.

        Parameters
        ----------
        X : {ndarray, sparse matrix} of shape (n_samples, n_features)
            A sparse X is read one column at a time.

        Returns
        -------
        codes : ndarray of uint8 of shape (n_samples, n_features)
        """
        X = _as_columns(X)
        codes = np.empty(X.shape, dtype=np.uint8)
        # the compiled pass for large X only: its one-time compilation costs
        # more than numpy's per-column searches of a small X
        dense = not is_sparse(X) and (
            X.size >= _COMPILED_MIN_VALUES or X.shape[1] >= _COMPILED_MIN_COLUMNS
        )
        if dense:
            numeric = ~np.asarray(self.is_categorical_, dtype=bool)
            _bin_rows(np.ascontiguousarray(X), self.threshold_table_, numeric, codes)
        for j, thresholds in enumerate(self.thresholds_):
            if dense and not self.is_categorical_[j]:
                continue  # binned above
            column = _column(X, j)
            if self.is_categorical_[j]:
                _check_category_codes(column, j)
                # a category unseen in fit is a missing value
                missing = np.isnan(column) | (column >= self.n_bins_[j])
                codes[:, j] = np.where(missing, MISSING_BIN, column).astype(np.uint8)
                continue
            codes[:, j] = np.searchsorted(thresholds, column, side="left")
            codes[np.isnan(column), j] = MISSING_BIN
        return codes

    def fit_transform(self, X):
        """Fit the thresholds on X and return its codes."""
        return self.fit(X).transform(X)


def bin_representatives(codes, n_bins, threshold_table):
    """A value inside each bin: the rows of codes turned back into values.

    A value of bin ``b < n_bins - 1`` is its upper threshold
    ``threshold_table[f, b]``, a value of the last bin the next float above the
    last threshold, and the missing code is NaN; every split "bin <= b" treats
    these values as it treats the rows they come from (a split of a numeric
    feature is at one of its bins' thresholds).

    Parameters
    ----------
    codes : ndarray of uint8 of shape (n_samples, n_features)
    n_bins : ndarray of int of shape (n_features,)
    threshold_table : ndarray of float64 of shape (n_features, 256)

    Returns
    -------
    values : ndarray of float64 of shape (n_samples, n_features)

    Examples
    --------
    >>> import numpy as np
    >>> from treerank._engine import BinMapper, bin_representatives
    >>> X = np.array([[0.0], [1.0], [2.0], [np.nan]])
    >>> mapper = BinMapper().fit(X)
    >>> values = bin_representatives(mapper.transform(X), mapper.n_bins_,
    ...                              mapper.threshold_table_)
    >>> bool(np.array_equal(mapper.transform(values), mapper.transform(X)))
    True
    """
    codes = np.asarray(codes)
    values = np.empty(codes.shape, dtype=np.float64)
    for j in range(codes.shape[1]):
        table = threshold_table[j].copy()
        last = int(n_bins[j]) - 1
        table[last] = (
            np.nextafter(threshold_table[j, last - 1], np.inf) if last > 0 else 0.0
        )
        table[MISSING_BIN] = np.nan
        values[:, j] = table[codes[:, j]]
    return values
