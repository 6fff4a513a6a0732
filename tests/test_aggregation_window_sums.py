"""Per-bucket masses of the local search's window sums, against brute force."""

import numpy as np
import pytest

from treerank.aggregation._bucket_order import _RankingData
from treerank.aggregation._kernels import _gather_sorted, _weight_groups, bucket_order
from treerank.aggregation._local_search_kernels import _window_sums_kernel


def brute_sums(consensus, ranks, weights, masses, item, bucket):
    """``better`` and ``atmost`` of an item against a bucket, item left out."""
    members = [j for j in np.flatnonzero(consensus == bucket) if j != item]
    below = sum(
        weights[b] * masses[j] * (ranks[b, j] < ranks[b, item])
        for b in range(ranks.shape[0])
        for j in members
    )
    at_most = sum(
        weights[b] * masses[j] * (ranks[b, j] <= ranks[b, item])
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
    return _RankingData(rankings, weights, masses), consensus


def window_sums(data, consensus, window, tables):
    """The kernel's sums by item, laid out as ``_local_search._best_moves`` does."""
    order = bucket_order(consensus)
    position = np.empty_like(order)
    position[order] = np.arange(order.shape[0])
    sizes = np.bincount(consensus)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    sorted_t, sorted_r = _gather_sorted(data.ranks_t, order)
    bounds, values = _weight_groups(data)
    better, atmost, valid = _window_sums_kernel(
        position,  # every item, in item order (slot = item's sorted position)
        np.arange(data.n_items),
        window,
        consensus[order],
        np.arange(data.n_items),
        starts,
        tables,
        sorted_r,
        sorted_t,
        data.item_weights[order],
        bounds,
        values,
    )
    # the kernel leaves nothing out: its own bucket counts the item itself
    return better, atmost, valid


@pytest.mark.parametrize("integral", [True, False])
@pytest.mark.parametrize("tables", ["none", "all", "some"])
def test_window_sums_against_brute_force(rng, integral, tables):
    for _ in range(4):
        data, consensus = instance(rng, integral)
        n_buckets = consensus.max() + 1
        table = {
            "none": np.zeros(n_buckets, dtype=bool),
            "all": np.ones(n_buckets, dtype=bool),
            "some": rng.random(n_buckets) < 0.5,
        }[tables]
        window = int(rng.integers(0, 4))
        better, atmost, valid = window_sums(data, consensus, window, table)
        ranks, weights = data.ranks.astype(int), data.ranking_weights
        masses = data.item_weights
        for i in range(data.n_items):
            for s in range(2 * window + 1):
                q = consensus[i] + s - window
                assert valid[i, s] == (0 <= q < n_buckets)
                if not valid[i, s]:
                    continue
                expected = brute_sums(consensus, ranks, weights, masses, i, q)
                if q == consensus[i]:  # the item against itself
                    own = masses[i] * weights.sum()
                    expected = (expected[0], expected[1] + own)
                if integral:  # exact sums: the same numbers, whatever the order
                    assert (better[i, s], atmost[i, s]) == expected
                else:
                    assert np.allclose([better[i, s], atmost[i, s]], expected)
