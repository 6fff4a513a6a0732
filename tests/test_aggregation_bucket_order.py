"""Validation and normalization of bucket orders."""

import numpy as np
import pytest

from treerank.aggregation import check_bucket_order, check_rankings, dense_bucket_order
from treerank.aggregation._bucket_order import _RankingData


def test_dense_bucket_order_keeps_order_and_ties(rng):
    values = rng.integers(-50, 50, size=200)
    dense = dense_bucket_order(values)
    assert dense.min() == 0
    assert dense.max() == np.unique(values).shape[0] - 1
    # same pairwise comparisons
    assert np.array_equal(
        np.sign(values[:, None] - values[None, :]),
        np.sign(dense[:, None] - dense[None, :]),
    )


def test_dense_bucket_order_rows_sparse_values():
    # values far apart take the sorting path, close values the counting path
    rankings = np.array([[10**12, 5, 5, -(10**12)], [3, 2, 1, 0]])
    assert np.array_equal(dense_bucket_order(rankings), [[2, 1, 1, 0], [3, 2, 1, 0]])
    assert np.array_equal(dense_bucket_order([7.0, 7.0, 1.0]), [1, 1, 0])


def test_ranking_data_compact_layout(rng):
    rankings = rng.integers(0, 40, size=(5, 300))
    rankings[1] = 3 * np.arange(300)  # 300 buckets: needs 16 bits
    weights = np.array([2.0, 1.0, 2.0, 0.5, 1.0])
    data = _RankingData(rankings, weights, None)
    # rankings are stored grouped by weight, densely, in a dtype holding K + 1
    assert np.array_equal(data.ranking_weights, weights[data.permutation])
    dense = dense_bucket_order(rankings)[data.permutation]
    assert np.array_equal(data.ranks, dense)
    assert np.array_equal(data.ranks_t, dense.T)
    assert data.ranks.dtype == np.uint16
    # one type for few buckets too (each type compiles every solver kernel)
    assert _RankingData(rankings[[0, 2]]).ranks.dtype == np.uint16
    many = np.vstack([np.arange(70_000), np.arange(70_000)[::-1]])
    assert _RankingData(many).ranks.dtype == np.int32
    assert np.array_equal(data.n_buckets, dense.max(axis=1) + 1)
    mask = rng.random((7, 5)) < 0.5
    assert np.allclose(data.weighted_counts(mask), mask @ data.ranking_weights)


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ([[0, 1]], "one-dimensional"),
        ([], "empty"),
        ([0.5, 1.0], "integer bucket indices"),
        ([0.0, np.nan], "NaN or infinity"),
        (["a", "b"], "integer bucket indices"),
    ],
)
def test_check_bucket_order_errors(value, match):
    with pytest.raises(ValueError, match=match):
        check_bucket_order(value)


def test_check_bucket_order_length():
    with pytest.raises(ValueError, match="has 2 items but 3 were expected"):
        check_bucket_order([0, 1], 3)
    assert check_bucket_order([2.0, 0.0]).dtype == np.int64


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ([0, 1, 2], "two-dimensional"),
        (np.zeros((0, 3), dtype=int), "at least one ranking and one item"),
        (np.zeros((2, 0), dtype=int), "at least one ranking and one item"),
        ([[0, 1], [0.5, 0]], "integer bucket indices"),
    ],
)
def test_check_rankings_errors(value, match):
    with pytest.raises(ValueError, match=match):
        check_rankings(value)


def test_ranking_data_weight_errors():
    with pytest.raises(ValueError, match="ranking_weights has 1 elements"):
        _RankingData([[0, 1], [1, 0]], [1.0], None)
    with pytest.raises(ValueError, match="item_weights contains negative"):
        _RankingData([[0, 1], [1, 0]], None, [1.0, -1.0])
