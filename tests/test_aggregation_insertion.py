"""Insertion of unseen items into a fitted consensus."""

import pickle

import numpy as np
import pytest

from treerank.aggregation import ConsensusInserter, kemeny_median, kemeny_objective


def tree_like(rng, n_items, n_rankings, noise, n_leaves=(4, 12)):
    latent = rng.random(n_items)
    rankings = np.empty((n_rankings, n_items), dtype=np.int64)
    bins = []
    for b in range(n_rankings):
        k = int(rng.integers(*n_leaves))
        noisy = latent + noise * rng.standard_normal(n_items)
        edges = np.quantile(noisy, np.linspace(0, 1, k + 1)[1:-1])
        rankings[b] = k - 1 - np.searchsorted(edges, noisy)
        bins.append((k, edges))
    return rankings, latent, bins


def new_items(rng, rankings, n_new):
    """Rank vectors on the rankings' scale (values may fall between buckets)."""
    low, high = rankings.min(axis=1), rankings.max(axis=1)
    return np.column_stack(
        [rng.integers(lo - 1, hi + 2, size=n_new) for lo, hi in zip(low, high)]
    )


def cost_oracle(consensus, rankings, weights, masses, ranks):
    """Cost of every position, from the objective of the enlarged problem."""
    n_buckets = consensus.max() + 1
    positions = np.arange(2 * n_buckets + 1) / 2 - 0.5
    enlarged_rankings = np.column_stack([rankings, ranks])
    enlarged_masses = np.append(masses, 1.0)
    base = kemeny_objective(consensus, rankings, weights, masses)
    costs = []
    for position in positions:
        keys = np.append(consensus.astype(float), position)
        enlarged = np.unique(keys, return_inverse=True)[1]
        costs.append(
            kemeny_objective(enlarged, enlarged_rankings, weights, enlarged_masses)
            - base
        )
    return positions, np.array(costs)


@pytest.mark.parametrize("layout", ["small buckets", "large buckets", "mixed"])
def test_position_costs_match_oracle(rng, layout):
    rankings, _, _ = tree_like(rng, 40, 5, noise=0.3)
    weights = rng.random(5)
    masses = rng.integers(1, 4, size=40).astype(float)
    if layout == "mixed":  # buckets of 12 and 10 items (tables) among singletons
        consensus = np.concatenate([np.zeros(12), np.arange(1, 10), np.full(10, 10)])
        consensus = np.concatenate([consensus, np.arange(11, 20)]).astype(int)
    else:
        n_buckets = 4 if layout == "large buckets" else 25
        consensus = rng.integers(0, n_buckets, size=40)
    consensus = np.unique(consensus, return_inverse=True)[1]
    inserter = ConsensusInserter(consensus, rankings, masses, weights)
    ranks = new_items(rng, rankings, 12)
    positions, costs = inserter.position_costs(ranks)
    for row in range(ranks.shape[0]):
        expected_positions, expected = cost_oracle(
            consensus, rankings, weights, masses, ranks[row]
        )
        assert np.array_equal(positions, expected_positions)
        assert np.allclose(costs[row], expected - expected[0])
        # the exact method: the topmost position of least cost
        best = expected_positions[
            np.flatnonzero(np.isclose(expected, expected.min()))[0]
        ]
        assert inserter.positions(ranks[row : row + 1], method="exact")[0] == best


def test_fast_agrees_with_exact_mostly(rng):
    agree = total = 0
    for _ in range(10):
        rankings, _, _ = tree_like(rng, 300, 20, noise=0.1, n_leaves=(10, 30))
        consensus = kemeny_median(rankings).consensus
        inserter = ConsensusInserter(consensus, rankings)
        ranks = new_items(rng, rankings, 60)
        exact = inserter.positions(ranks, method="exact")
        fast = inserter.positions(ranks, method="fast")
        positions, costs = inserter.position_costs(ranks)
        # the fast position is a valid position, never better than the exact one
        index = np.searchsorted(positions, fast)
        assert np.array_equal(positions[index], fast)
        rows = np.arange(ranks.shape[0])
        best = costs[rows, np.searchsorted(positions, exact)]
        assert np.all(costs[rows, index] >= best - 1e-9)
        agree += int(np.sum(np.isclose(costs[rows, index], best)))
        total += ranks.shape[0]
    assert agree / total >= 0.95


def test_copies_of_fitted_items_go_to_their_bucket(rng):
    rankings, _, _ = tree_like(rng, 35, 7, noise=0.2)
    result = kemeny_median(rankings, method="local", window=35)
    assert result.converged
    inserter = ConsensusInserter(result.consensus, rankings)
    ranks = rankings.T  # every fitted item again
    exact = inserter.positions(ranks, method="exact")
    assert np.array_equal(exact, result.consensus)


@pytest.mark.parametrize("method", ["fast", "exact"])
def test_batch_independence(rng, method):
    rankings, _, _ = tree_like(rng, 200, 9, noise=0.2)
    weights = rng.random(9)  # float sums: the order of additions matters
    masses = rng.random(200)
    consensus = kemeny_median(rankings, weights, masses).consensus
    inserter = ConsensusInserter(consensus, rankings, masses, weights)
    ranks = new_items(rng, rankings, 40)
    batch = inserter.positions(ranks, method=method)
    single = np.array(
        [inserter.positions(ranks[i : i + 1], method=method)[0] for i in range(40)]
    )
    assert np.array_equal(batch, single)
    reversed_batch = inserter.positions(ranks[::-1], method=method)
    assert np.array_equal(reversed_batch[::-1], batch)


def test_pickle_and_rebuild_from_arrays(rng):
    rankings, _, _ = tree_like(rng, 80, 6, noise=0.2)
    masses = rng.integers(1, 3, size=80)
    consensus = kemeny_median(rankings, item_weights=masses).consensus
    inserter = ConsensusInserter(consensus, rankings, item_weights=masses)
    ranks = new_items(rng, rankings, 30)
    expected = inserter.positions(ranks)
    restored = pickle.loads(pickle.dumps(inserter))
    assert restored._compiled_state is None  # the tables are rebuilt, not stored
    assert np.array_equal(restored.positions(ranks), expected)
    rebuilt = ConsensusInserter(
        restored.consensus,
        restored.rankings,
        restored.item_weights,
        restored.ranking_weights,
    )
    assert np.array_equal(rebuilt.positions(ranks), expected)
    assert rebuilt.n_buckets == consensus.max() + 1


def test_extreme_items():
    inserter = ConsensusInserter([0, 1, 2], [[0, 1, 2], [0, 1, 2]])
    # better than everything in every ranking: above the top bucket
    positions = inserter.positions([[-5, -5], [9, 9], [1, 1]], method="fast")
    assert positions.tolist() == [-0.5, 2.5, 1.0]
    assert inserter.positions(np.empty((0, 2), dtype=int)).shape == (0,)


def test_errors():
    inserter = ConsensusInserter([0, 1], [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="ranks has 3 columns but the consensus"):
        inserter.positions([[0, 1, 2]])
    with pytest.raises(ValueError, match="ranks must be a two-dimensional"):
        inserter.positions([0, 1])
    with pytest.raises(ValueError, match='method must be "fast" or "exact"'):
        inserter.positions([[0, 1]], method="binary")
    with pytest.raises(ValueError, match="window must be an integer >= 0"):
        inserter.positions([[0, 1]], window=-1)
    with pytest.raises(ValueError, match="consensus has 3 items but 2 were expected"):
        ConsensusInserter([0, 1, 2], [[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="item_weights has 1 elements"):
        ConsensusInserter([0, 1], [[0, 1]], item_weights=[1.0])
