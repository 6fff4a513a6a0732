"""Bucket orders (rankings with ties): validation and normalization.

A ranking of M items is an integer array of bucket indices: a smaller value is a
better bucket (0 is conventionally the top one) and equal values are tied. Only
the order of the values matters, so ``[0, 2, 2]`` and ``[5, 9, 9]`` are the same
bucket order; :func:`dense_bucket_order` maps any of them to the dense form
``0..Q-1``.

This module also holds the compact internal representation shared by the
solvers (:class:`_RankingData`): each ranking re-coded densely, stored in the
smallest unsigned integer type that fits, in both (B, M) and (M, B) layouts, with
validated item and ranking weights.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools

import numpy as np

from treerank._engine._jit import aggregation_jit
from treerank.utils.validation import check_sample_weight

__all__ = ["check_bucket_order", "check_rankings", "dense_bucket_order"]


def _as_integer_array(values, input_name):
    """Array of integer bucket indices; integral floats are accepted."""
    try:
        array = np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"{input_name} must be an array of integer bucket indices: {exc}"
        ) from None
    if array.dtype.kind in "iu":
        return array.astype(np.int64, copy=False)
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{input_name} contains NaN or infinity.")
        if not np.all(array == np.floor(array)):
            raise ValueError(
                f"{input_name} must contain integer bucket indices (smaller = "
                "better, equal = tied); got non-integral values."
            )
        return array.astype(np.int64)
    raise ValueError(
        f"{input_name} must contain integer bucket indices (smaller = better, "
        f"equal = tied); got an array of dtype {array.dtype}."
    )


def check_bucket_order(ranking, n_items=None, *, input_name="ranking"):
    """Validate one bucket order.

    Parameters
    ----------
    ranking : array-like of shape (n_items,)
        Integer bucket indices: a smaller value is a better bucket, equal values
        are tied. Integral floats are accepted.
    n_items : int, default=None
        Expected number of items, if known.
    input_name : str, default="ranking"
        Name of the argument, used in error messages.

    Returns
    -------
    ranking : ndarray of shape (n_items,), dtype=int64
        The values as given (not re-coded).

    Raises
    ------
    ValueError
        If the array is not one-dimensional, is empty, has the wrong length, or
        holds non-integral, infinite or non-numeric values.

    Examples
    --------
    >>> from treerank.aggregation import check_bucket_order
    >>> check_bucket_order([0, 2, 2, 1])
    array([0, 2, 2, 1])
    """
    ranking = _as_integer_array(ranking, input_name)
    if ranking.ndim != 1:
        raise ValueError(
            f"{input_name} must be a one-dimensional array of bucket indices; got "
            f"an array of shape {ranking.shape}."
        )
    if ranking.shape[0] == 0:
        raise ValueError(f"{input_name} is empty: at least one item is required.")
    if n_items is not None and ranking.shape[0] != n_items:
        raise ValueError(
            f"{input_name} has {ranking.shape[0]} items but {n_items} were expected."
        )
    return ranking


def check_rankings(rankings, n_items=None, *, input_name="rankings"):
    """Validate a stack of bucket orders over the same items.

    Parameters
    ----------
    rankings : array-like of shape (n_rankings, n_items)
        One bucket order per row (see :func:`check_bucket_order`).
    n_items : int, default=None
        Expected number of items (columns), if known.
    input_name : str, default="rankings"
        Name of the argument, used in error messages.

    Returns
    -------
    rankings : ndarray of shape (n_rankings, n_items), dtype=int64

    Raises
    ------
    ValueError
        If the array is not two-dimensional, has no row or no column, or holds
        invalid values.

    Examples
    --------
    >>> from treerank.aggregation import check_rankings
    >>> check_rankings([[0, 1, 1], [1, 0, 2]]).shape
    (2, 3)
    """
    rankings = _as_integer_array(rankings, input_name)
    if rankings.ndim != 2:
        raise ValueError(
            f"{input_name} must be a two-dimensional array of shape (n_rankings, "
            f"n_items), one bucket order per row; got an array of shape "
            f"{rankings.shape}."
        )
    if rankings.shape[0] == 0 or rankings.shape[1] == 0:
        raise ValueError(
            f"{input_name} must have at least one ranking and one item; got shape "
            f"{rankings.shape}."
        )
    if n_items is not None and rankings.shape[1] != n_items:
        raise ValueError(
            f"{input_name} ranks {rankings.shape[1]} items but {n_items} were expected."
        )
    return rankings


def _dense_rows(rankings):
    """Re-code each row of an int64 (B, M) array densely as 0..Q_b-1.

    Returns the dense array and the number of buckets of each row.
    """
    n_rows, n_items = rankings.shape
    low = rankings.min(axis=1)
    high = rankings.max(axis=1)
    dense = np.empty((n_rows, n_items), dtype=np.int64)
    n_buckets = np.empty(n_rows, dtype=np.int64)
    for b in range(n_rows):
        row = rankings[b] - low[b]
        span = int(high[b] - low[b]) + 1
        if span <= 4 * n_items + 64:
            # direct addressing: code = number of distinct values below
            code = np.cumsum(np.bincount(row, minlength=span) > 0) - 1
            dense[b] = code[row]
            n_buckets[b] = code[-1] + 1
        else:
            values, inverse = np.unique(row, return_inverse=True)
            dense[b] = inverse.ravel()
            n_buckets[b] = values.shape[0]
    return dense, n_buckets


@aggregation_jit
def _bucket_codes(rankings, low, span):
    """Per row, the dense code of every value of ``low[b] .. low[b] + span[b] - 1``.

    Returns (codes, offsets, n_buckets): row b's codes are
    ``codes[offsets[b] : offsets[b + 1]]`` (-1 for an absent value).
    """
    n_rows, n_items = rankings.shape
    offsets = np.zeros(n_rows + 1, dtype=np.int64)
    for b in range(n_rows):
        offsets[b + 1] = offsets[b] + span[b]
    codes = np.full(offsets[n_rows], -1, dtype=np.int64)
    n_buckets = np.empty(n_rows, dtype=np.int64)
    for b in range(n_rows):
        base = offsets[b] - low[b]
        for i in range(n_items):
            codes[base + rankings[b, i]] = 0
        count = 0
        for k in range(offsets[b], offsets[b + 1]):
            if codes[k] == 0:
                codes[k] = count
                count += 1
        n_buckets[b] = count
    return codes, offsets, n_buckets


@aggregation_jit
def _apply_codes(rankings, low, codes, offsets, permutation, ranks, ranks_t):
    """Dense ranks of the rows ``permutation``, in both layouts."""
    n_rows, n_items = ranks.shape
    block = 256
    for begin in range(0, n_items, block):
        end = min(begin + block, n_items)
        for r in range(n_rows):
            b = permutation[r]
            base = offsets[b] - low[b]
            for i in range(begin, end):
                code = codes[base + rankings[b, i]]
                ranks[r, i] = code
                ranks_t[i, r] = code


def _compact_ranks(rankings, permutation, n_buckets_hint=None):
    """Dense compact ranks (B, M) and (M, B) of the rows ``permutation``.

    Compiled for large inputs with a small range of values per row; None when
    the values of a row span more than 4 M + 64 integers (use _dense_rows).
    """
    low = rankings.min(axis=1)
    span = rankings.max(axis=1) - low + 1
    if np.any(span > 4 * rankings.shape[1] + 64):
        return None
    codes, offsets, n_buckets = _bucket_codes(rankings, low, span)
    dtype = _compact_dtype(int(n_buckets.max()))
    ranks = np.empty(rankings.shape, dtype=dtype)
    ranks_t = np.empty(rankings.shape[::-1], dtype=dtype)
    _apply_codes(rankings, low, codes, offsets, permutation, ranks, ranks_t)
    return ranks, ranks_t, n_buckets


def dense_bucket_order(ranking):
    """Re-code bucket indices densely, keeping the order and the ties.

    Parameters
    ----------
    ranking : array-like of shape (n_items,) or (n_rankings, n_items)
        One bucket order, or one per row.

    Returns
    -------
    dense : ndarray of the same shape, dtype=int64
        Values ``0..Q-1`` (per row), where Q is the number of distinct values:
        the best bucket is 0 and equal inputs stay equal.

    Examples
    --------
    >>> from treerank.aggregation import dense_bucket_order
    >>> dense_bucket_order([5, 9, 9, -1])
    array([1, 2, 2, 0])
    """
    values = _as_integer_array(ranking, "ranking")
    if values.ndim == 1:
        row = check_bucket_order(values, input_name="ranking")
        return _dense_rows(row[None, :])[0][0]
    return _dense_rows(check_rankings(values, input_name="ranking"))[0]


def _dot(a, b):
    """Inner product without BLAS.

    Multi-threaded BLAS calls on short vectors are slow on a loaded machine
    and their summation order may depend on the array size; the solvers' many
    small products use this instead.
    """
    return float(np.multiply(a, b).sum())


# inputs with at least this many entries are re-coded by compiled kernels
_COMPACT_MIN_SIZE = 1 << 17


def _compact_dtype(max_value):
    # one type for every ranking of up to 65,535 buckets: each type is another
    # compilation of every solver kernel (about 4.5 s on first use, in the
    # middle of a user's session); uint8 would halve the memory of rankings
    # of few buckets at that price
    if max_value <= np.iinfo(np.uint16).max:
        return np.uint16
    return np.int32


class _RankingData:
    """Validated rankings and weights in the solvers' compact layout.

    Attributes
    ----------
    ranks : ndarray of shape (B, M)
        Dense bucket indices per ranking: uint16, or int32 beyond 65,535
        buckets (so that ``rank + 1`` still fits).
    ranks_t : ndarray of shape (M, B)
        The same, item-major and C-contiguous (fast row gathers).
    n_buckets : ndarray of shape (B,)
        Number of buckets of each ranking.
    item_weights : ndarray of shape (M,)
    ranking_weights : ndarray of shape (B,)
    mass_dtype : type
        int64 when the item weights are integers (mass tables are then summed
        exactly and faster), float64 otherwise.
    weight_groups : list of (start, stop, value) or None
        When the ranking weights take few distinct values, the rankings are
        stored sorted by weight and these are the runs of equal weight (sums
        over rankings are then exact integer counts times a weight).
    permutation : ndarray of shape (B,)
        Original index of each stored ranking.
    exact : bool
        Whether the item and ranking weights are integers and
        ``total_weight * (sum of item weights)^2 < 2^52``: every partial sum of
        the objective is then exact in float64, and the compiled kernels give
        the numpy solvers' results to the last bit.
    """

    def __init__(self, rankings, ranking_weights=None, item_weights=None):
        rankings = check_rankings(rankings)
        n_rankings, n_items = rankings.shape
        ranking_weights = check_sample_weight(
            ranking_weights, n_rankings, input_name="ranking_weights"
        )
        item_weights = check_sample_weight(
            item_weights, n_items, input_name="item_weights"
        )
        values = np.unique(ranking_weights)
        if values.shape[0] <= 8:
            permutation = np.argsort(ranking_weights, kind="stable")
            sorted_weights = ranking_weights[permutation]
            cuts = np.flatnonzero(np.diff(sorted_weights)) + 1
            bounds = np.concatenate([[0], cuts, [n_rankings]])
            self.weight_groups = [
                (int(a), int(b), float(sorted_weights[a]))
                for a, b in itertools.pairwise(bounds)
            ]
        else:
            permutation = np.arange(n_rankings)
            self.weight_groups = None
        self.permutation = permutation
        compact = None
        if n_items * n_rankings >= _COMPACT_MIN_SIZE:
            compact = _compact_ranks(rankings, permutation)
        if compact is None:
            dense, n_buckets = _dense_rows(rankings)
            dtype = _compact_dtype(int(n_buckets.max()))
            self.ranks = np.ascontiguousarray(dense[permutation], dtype=dtype)
            self.ranks_t = np.ascontiguousarray(self.ranks.T)
        else:
            self.ranks, self.ranks_t, n_buckets = compact
        self.n_buckets = n_buckets[permutation].astype(np.int64)
        self.ranking_weights = ranking_weights[permutation]
        self.item_weights = item_weights
        # integral masses: mass tables are summed in int64, which numpy
        # vectorizes (float prefix sums are several times slower) and is exact
        integral = bool(np.all(item_weights == np.floor(item_weights)))
        self.mass_dtype = (
            np.int64 if integral and item_weights.sum() < 2.0**52 else np.float64
        )
        self.total_weight = float(self.ranking_weights.sum())
        # threads of the compiled kernels (set by kemeny_median; see _threads)
        self.n_threads = 1
        self.n_rankings = n_rankings
        self.n_items = n_items
        # every partial sum of the objective and of the moves' costs is exact
        self.exact = (
            integral
            and bool(np.all(self.ranking_weights == np.floor(self.ranking_weights)))
            and self.total_weight * float(item_weights.sum()) ** 2 < 2.0**52
        )

    def weighted_counts(self, mask):
        """``sum_b w_b * mask[:, b]`` for a boolean (P, B) array, exact when possible.

        With few distinct ranking weights the counts are integers summed per
        group of equal weight; otherwise a float64 sum per row.
        """
        if self.weight_groups is None:
            # row by row (not a BLAS product) so that each row's sum does not
            # depend on how many rows are processed together
            return (mask * self.ranking_weights).sum(axis=1)
        out = np.zeros(mask.shape[0], dtype=np.float64)
        for start, stop, value in self.weight_groups:
            if value == 0.0:
                continue
            counts = mask[:, start:stop].sum(axis=1, dtype=np.intp)
            out += value * counts
        return out
