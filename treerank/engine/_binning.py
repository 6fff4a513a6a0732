"""Quantile binning of the features, once per fit.

Each feature is cut into at most ``max_bins`` intervals by real thresholds
``t_0 < t_1 < ... < t_{m-1}`` placed halfway between consecutive distinct values
of the (sub)sample. A value x falls in bin ``#{k : t_k < x}``, so bin b holds
``t_{b-1} < x <= t_b`` and the split "bin <= b" is exactly the rule
"x <= t_b" on raw values: trees learned on bins predict and export on raw X
with the same thresholds, in float64 (no loss of precision). Missing values
(NaN) get the reserved code :data:`MISSING_BIN`.

With at most ``max_bins`` distinct values, every distinct value has its own bin,
so a split search over the bins is an exhaustive search over the thresholds.
Otherwise the thresholds sit at the ``k / max_bins`` quantiles of the values
(one threshold per crossing, so a value carrying much of the mass keeps a bin of
its own and never straddles two).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np

__all__ = ["MAX_BINS", "MISSING_BIN", "BinMapper", "bin_thresholds"]

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
    >>> from treerank.engine import bin_thresholds
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

    Attributes
    ----------
    thresholds_ : list of ndarray
        The thresholds of each feature (see :func:`bin_thresholds`).
    n_bins_ : ndarray of int32 of shape (n_features,)
        Number of non-missing bins of each feature (codes ``0..n_bins_-1``).
    threshold_table_ : ndarray of float64 of shape (n_features, 256)
        ``threshold_table_[f, b]`` is the real threshold of the split
        "bin <= b" of feature f (``+inf`` past the last threshold).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.engine import BinMapper
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

    def __init__(self, max_bins=MAX_BINS, subsample=200_000, random_state=None):
        self.max_bins = max_bins
        self.subsample = subsample
        self.random_state = random_state

    def fit(self, X):
        """Compute the thresholds of each feature.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Real values; NaN marks a missing value.

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
        X = np.asarray(X, dtype=np.float64)
        n_samples = X.shape[0]
        if self.subsample is not None and n_samples > self.subsample:
            rng = np.random.RandomState(self.random_state)
            rows = np.sort(rng.choice(n_samples, self.subsample, replace=False))
            X = X[rows]
        self.thresholds_ = [
            bin_thresholds(X[:, j], self.max_bins) for j in range(X.shape[1])
        ]
        self.n_bins_ = np.array(
            [t.shape[0] + 1 for t in self.thresholds_], dtype=np.int32
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
        X : ndarray of shape (n_samples, n_features)

        Returns
        -------
        codes : ndarray of uint8 of shape (n_samples, n_features)
        """
        X = np.asarray(X, dtype=np.float64)
        codes = np.empty(X.shape, dtype=np.uint8)
        for j, thresholds in enumerate(self.thresholds_):
            column = X[:, j]
            codes[:, j] = np.searchsorted(thresholds, column, side="left")
            missing = np.isnan(column)
            if missing.any():
                codes[missing, j] = MISSING_BIN
        return codes

    def fit_transform(self, X):
        """Fit the thresholds on X and return its codes."""
        return self.fit(X).transform(X)
