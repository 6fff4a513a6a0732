"""Per-bucket mass queries (the primitive of the local search and insertion)."""

import numpy as np
import pytest

from treerank.aggregation._bucket_index import _BucketIndex
from treerank.aggregation._bucket_order import _RankingData


def brute_sums(consensus, ranks, weights, masses, query_lt, query_le, bucket):
    members = np.flatnonzero(consensus == bucket)
    below = sum(
        weights[b] * masses[j] * (ranks[b, j] < query_lt[b])
        for b in range(ranks.shape[0])
        for j in members
    )
    at_most = sum(
        weights[b] * masses[j] * (ranks[b, j] < query_le[b])
        for b in range(ranks.shape[0])
        for j in members
    )
    return below, at_most


def instance(rng, integral):
    n_items, n_rankings = int(rng.integers(5, 60)), int(rng.integers(1, 6))
    rankings = rng.integers(0, int(rng.integers(1, 9)), size=(n_rankings, n_items))
    if integral:
        weights = rng.integers(0, 3, size=n_rankings).astype(float)
        masses = rng.integers(0, 4, size=n_items).astype(float)
    else:
        weights, masses = rng.random(n_rankings), rng.random(n_items)
    # a few large buckets and singletons
    consensus = np.sort(rng.integers(0, int(rng.integers(1, 15)), size=n_items))
    consensus = np.unique(consensus, return_inverse=True)[1][rng.permutation(n_items)]
    data = _RankingData(rankings, weights, masses)
    return data, consensus


@pytest.mark.parametrize("integral", [True, False])
@pytest.mark.parametrize("small_max", [0, 3, 100])
@pytest.mark.parametrize("cache", [False, True])
def test_sums_against_brute_force(rng, integral, small_max, cache):
    for _ in range(4):
        data, consensus = instance(rng, integral)
        index = _BucketIndex(data, consensus, small_max=small_max, cache_tables=cache)
        n_buckets = consensus.max() + 1
        ranks, weights = data.ranks.astype(int), data.ranking_weights
        masses = data.item_weights
        # items of the data as queries (atmost: rank <= the item's rank)
        rows = rng.integers(0, data.n_items, size=30)
        buckets = rng.integers(0, n_buckets, size=30)
        better, atmost = index.sums(data.ranks_t, None, rows, buckets)
        for p in range(30):
            k = ranks[:, rows[p]]
            expected = brute_sums(
                consensus, ranks, weights, masses, k, k + 1, buckets[p]
            )
            assert np.allclose([better[p], atmost[p]], expected)
        # items of the data against the buckets around their own
        window = int(rng.integers(0, 4))
        items = np.arange(data.n_items)
        w_better, w_atmost, valid = index.window_sums(items, window)
        for i in items:
            for s in range(2 * window + 1):
                q = consensus[i] + s - window
                assert valid[i, s] == (0 <= q < n_buckets)
                if valid[i, s]:
                    k = ranks[:, i]
                    expected = brute_sums(
                        consensus, ranks, weights, masses, k, k + 1, q
                    )
                    assert np.allclose([w_better[i, s], w_atmost[i, s]], expected)
        # new queries against runs of buckets
        # thresholds in 0..K_b, as the insertion produces them
        upper = rng.integers(0, data.n_buckets + 1, size=(12, data.n_rankings))
        lower = upper - rng.integers(0, 2, size=upper.shape) * (upper > 0)
        lower, upper = lower.astype(data.ranks.dtype), upper.astype(data.ranks.dtype)
        first = rng.integers(0, n_buckets, size=12)
        last = np.minimum(first + rng.integers(1, 6, size=12), n_buckets)
        first[:4], last[:4] = first[4], last[4]  # some queries share a run
        r_better, r_atmost, r_valid = index.range_sums(lower, upper, first, last)
        for i in range(12):
            for s in range(r_better.shape[1]):
                q = first[i] + s
                assert r_valid[i, s] == (q < last[i])
                if r_valid[i, s]:
                    expected = brute_sums(
                        consensus, ranks, weights, masses, lower[i], upper[i], q
                    )
                    assert np.allclose([r_better[i, s], r_atmost[i, s]], expected)
