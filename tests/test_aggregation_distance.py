"""Kendall tau distance between bucket orders and the Kemeny objective."""

from fractions import Fraction

import numpy as np
import pytest

from treerank.aggregation import kemeny_objective, kendall_tau_distance
from treerank.aggregation._bucket_order import _RankingData
from treerank.aggregation._objective import _ConsensusBlocks, _pair_sums
from treerank.metrics import kendall_tau_distance as scorer_kendall


def pair_sum_oracle(r1, r2, masses):
    """sum_{i<j} m_i m_j U_ij by a double loop, in exact arithmetic."""
    total = Fraction(0)
    r1, r2 = [int(v) for v in r1], [int(v) for v in r2]
    n = len(r1)
    for i in range(n):
        for j in range(i + 1, n):
            a = (r1[i] > r1[j]) - (r1[i] < r1[j])
            b = (r2[i] > r2[j]) - (r2[i] < r2[j])
            if a * b < 0:
                u = Fraction(1)
            elif (a == 0) != (b == 0):
                u = Fraction(1, 2)
            else:
                u = Fraction(0)
            total += Fraction(int(masses[i])) * Fraction(int(masses[j])) * u
    return total


def random_instance(rng, n_items, n_rankings, weighted=True):
    rankings = rng.integers(0, rng.integers(1, n_items + 2), size=(n_rankings, n_items))
    masses = rng.integers(0, 4, size=n_items) if weighted else np.ones(n_items, int)
    weights = (
        rng.integers(0, 4, size=n_rankings) if weighted else np.ones(n_rankings, int)
    )
    return rankings, weights, masses


def test_distance_matches_oracle(rng):
    for _ in range(30):
        n = int(rng.integers(1, 25))
        r1, r2 = rng.integers(0, 5, size=(2, n))
        masses = rng.integers(0, 4, size=n)
        expected = pair_sum_oracle(r1, r2, masses)
        raw = kendall_tau_distance(r1, r2, item_weights=masses, normalize=False)
        assert raw == pytest.approx(float(expected), abs=1e-12)
        if masses.sum():
            normalized = kendall_tau_distance(r1, r2, item_weights=masses)
            exact = 2 * expected / Fraction(int(masses.sum())) ** 2
            assert normalized == pytest.approx(float(exact), abs=1e-12)


def test_distance_known_values():
    assert kendall_tau_distance([0, 1, 2], [0, 1, 2]) == 0.0
    # reversal: every pair discordant, normalized 2 * 3 / 9
    assert kendall_tau_distance([0, 1, 2], [2, 1, 0]) == pytest.approx(2 / 3)
    # tied in one ranking only: one half per pair
    assert kendall_tau_distance([0, 0], [0, 1], normalize=False) == 0.5
    # only the order of the bucket indices matters
    assert kendall_tau_distance([5, 9, 9], [0, 1, 1]) == 0.0


def test_distance_relation_to_scorer_distance(rng):
    # unit masses: probabilistic distance = (1 - 1/M) * U-statistic of the metric
    r1, r2 = rng.integers(0, 6, size=(2, 40))
    ours = kendall_tau_distance(r1, r2)
    u_statistic = scorer_kendall(-r1, -r2)
    assert ours == pytest.approx((1 - 1 / 40) * u_statistic)


def test_distance_integer_weights_are_repeated_items(rng):
    r1, r2 = rng.integers(0, 4, size=(2, 12))
    counts = rng.integers(1, 4, size=12)
    weighted = kendall_tau_distance(r1, r2, item_weights=counts, normalize=False)
    repeated = kendall_tau_distance(
        np.repeat(r1, counts), np.repeat(r2, counts), normalize=False
    )
    assert weighted == pytest.approx(repeated)


def test_distance_errors():
    with pytest.raises(ValueError, match="r2 has 2 items but 3 were expected"):
        kendall_tau_distance([0, 1, 2], [0, 1])
    with pytest.raises(ValueError, match="item_weights are all zero"):
        kendall_tau_distance([0, 1], [1, 0], item_weights=[0, 0])
    with pytest.raises(ValueError, match="item_weights contains negative"):
        kendall_tau_distance([0, 1], [1, 0], item_weights=[1, -1])


def test_objective_matches_oracle(rng):
    for trial in range(40):
        n_items = int(rng.integers(1, 30))
        rankings, weights, masses = random_instance(
            rng, n_items, int(rng.integers(1, 6))
        )
        consensus = rng.integers(0, rng.integers(1, n_items + 2), size=n_items)
        expected = sum(
            Fraction(int(w)) * pair_sum_oracle(consensus, r, masses)
            for w, r in zip(weights, rankings)
        )
        value = kemeny_objective(consensus, rankings, weights, masses)
        assert value == float(expected), trial  # integer weights: exact


def test_objective_float_weights_match_distance_sum(rng):
    rankings = rng.integers(0, 30, size=(6, 500))
    weights = rng.random(6)
    masses = rng.random(500)
    consensus = rng.integers(0, 80, size=500)
    expected = sum(
        w * kendall_tau_distance(consensus, r, item_weights=masses, normalize=False)
        for w, r in zip(weights, rankings)
    )
    assert kemeny_objective(consensus, rankings, weights, masses) == pytest.approx(
        expected, rel=1e-12
    )


@pytest.mark.parametrize("block_size", [1, 2, 5, 16, 64])
def test_pair_sums_against_generic_counter(rng, block_size):
    # the one-sweep evaluator agrees with the generic O(n log^2 n) counter
    from treerank.metrics._kendall import _kendall_pair_sum

    rankings = rng.integers(0, 12, size=(4, 300))
    # consensus with large and small buckets
    consensus = np.sort(rng.integers(0, 60, size=300))
    consensus[:80] = 0
    masses = rng.random(300)
    data = _RankingData(rankings, None, masses)
    dense = np.unique(consensus, return_inverse=True)[1]
    sums = _pair_sums(dense, data, _ConsensusBlocks(dense, masses, block_size))
    for b, stored in enumerate(data.permutation):
        expected, _ = _kendall_pair_sum(
            -consensus.astype(float), -rankings[stored].astype(float), masses
        )
        assert sums[b] == pytest.approx(expected, rel=1e-12)


def test_objective_normalized():
    rankings = [[0, 1, 2], [2, 1, 0]]
    masses = np.array([1.0, 2.0, 3.0])
    raw = kemeny_objective([0, 1, 2], rankings, [1.0, 3.0], masses)
    normalized = kemeny_objective(
        [0, 1, 2], rankings, [1.0, 3.0], masses, normalize=True
    )
    # mean over rankings (weights 1/4, 3/4) of the probabilistic distances
    distances = [
        kendall_tau_distance([0, 1, 2], r, item_weights=masses) for r in rankings
    ]
    assert normalized == pytest.approx(0.25 * distances[0] + 0.75 * distances[1])
    assert normalized == pytest.approx(2 * raw / (4 * 6**2))
    with pytest.raises(ValueError, match="normalized objective is undefined"):
        kemeny_objective([0, 1, 2], rankings, [0, 0], normalize=True)


def test_objective_invariances(rng):
    rankings, weights, masses = random_instance(rng, 25, 5)
    consensus = rng.integers(0, 10, size=25)
    value = kemeny_objective(consensus, rankings, weights, masses)
    # permuting the items
    perm = rng.permutation(25)
    assert kemeny_objective(
        consensus[perm], rankings[:, perm], weights, masses[perm]
    ) == pytest.approx(value)
    # permuting the rankings together with their weights
    order = rng.permutation(5)
    assert kemeny_objective(
        consensus, rankings[order], weights[order], masses
    ) == pytest.approx(value)
    # integer ranking weights = repeated rankings
    assert kemeny_objective(
        consensus, np.repeat(rankings, weights, axis=0), None, masses
    ) == pytest.approx(value)
    # integer item weights = repeated items
    assert kemeny_objective(
        np.repeat(consensus, masses),
        np.repeat(rankings, masses, axis=1),
        weights,
    ) == pytest.approx(value)
    # only the order of bucket indices matters
    assert kemeny_objective(
        3 * consensus + 7, 2 * rankings - 5, weights, masses
    ) == pytest.approx(value)


def test_objective_errors():
    with pytest.raises(ValueError, match="consensus has 2 items but 3 were expected"):
        kemeny_objective([0, 1], [[0, 1, 2]])
    with pytest.raises(ValueError, match="rankings must be a two-dimensional"):
        kemeny_objective([0, 1], [0, 1])
