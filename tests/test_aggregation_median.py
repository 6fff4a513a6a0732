"""Kemeny median of bucket orders: exact solvers, heuristics and local search."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from treerank.aggregation import MedianResult, kemeny_median, kemeny_objective
from treerank.aggregation._bucket_order import _RankingData
from treerank.aggregation._kernels import _weight_groups
from treerank.aggregation._local_search import _apply_batch, _best_moves


# ----------------------------------------------------------------------------
# independent oracles
# ----------------------------------------------------------------------------
def objective_oracle(consensus, rankings, weights, masses):
    """Exact objective by a loop over rankings and pairs (Fractions)."""
    total = Fraction(0)
    n = len(consensus)
    for w, ranking in zip(weights, rankings):
        for i in range(n):
            for j in range(i + 1, n):
                a = int(np.sign(int(consensus[i]) - int(consensus[j])))
                b = int(np.sign(int(ranking[i]) - int(ranking[j])))
                if a * b < 0:
                    u = Fraction(1)
                elif (a == 0) != (b == 0):
                    u = Fraction(1, 2)
                else:
                    continue
                total += Fraction(int(w)) * int(masses[i]) * int(masses[j]) * u
    return total


def all_bucket_orders(n_items):
    """Every bucket order of n items, from all maps items -> 0..n-1 kept dense."""
    for assignment in itertools.product(range(n_items), repeat=n_items):
        used = sorted(set(assignment))
        if used == list(range(len(used))):
            yield np.array(assignment)


def brute_force_median(rankings, weights, masses):
    best = None
    for order in all_bucket_orders(rankings.shape[1]):
        value = objective_oracle(order, rankings, weights, masses)
        if best is None or value < best:
            best = value
    return best


def random_instance(rng, max_items=7, max_rankings=9):
    n_items = int(rng.integers(2, max_items + 1))
    n_rankings = int(rng.integers(1, max_rankings + 1))
    n_levels = int(rng.integers(1, n_items + 1))  # few levels -> many ties
    rankings = rng.integers(0, n_levels, size=(n_rankings, n_items))
    weights = rng.integers(1, 4, size=n_rankings)
    masses = rng.integers(1, 4, size=n_items)
    return rankings, weights, masses


def tree_like_rankings(rng, n_items, n_rankings, noise, n_leaves=(8, 30)):
    """Leaf ranks of noisy copies of one latent score, cut into quantile bins."""
    latent = rng.random(n_items)
    rankings = np.empty((n_rankings, n_items), dtype=np.int64)
    for b in range(n_rankings):
        k = int(rng.integers(*n_leaves))
        noisy = latent + noise * rng.standard_normal(n_items)
        edges = np.quantile(noisy, np.linspace(0, 1, k + 1)[1:-1])
        rankings[b] = k - 1 - np.searchsorted(edges, noisy)
    return rankings


# ----------------------------------------------------------------------------
# exact solvers
# ----------------------------------------------------------------------------
def test_exact_matches_brute_force(rng):
    for _ in range(25):
        rankings, weights, masses = random_instance(rng, max_items=5, max_rankings=4)
        result = kemeny_median(rankings, weights, masses, method="exact")
        expected = brute_force_median(rankings, weights, masses)
        assert result.objective == float(expected)
        assert objective_oracle(result.consensus, rankings, weights, masses) == expected
        assert result.converged


def test_exact_consensus_is_dense(rng):
    rankings, weights, masses = random_instance(rng)
    consensus = kemeny_median(rankings, weights, masses, method="exact").consensus
    assert consensus.dtype == np.int64
    assert set(consensus) == set(range(consensus.max() + 1))


def test_exact_known_medians():
    # Condorcet order
    assert np.array_equal(
        kemeny_median([[0, 1, 2], [0, 2, 1], [1, 0, 2]], method="exact").consensus,
        [0, 1, 2],
    )
    # two items tied in every ranking stay tied
    result = kemeny_median([[0, 0, 1], [1, 1, 0], [0, 0, 2]], method="exact")
    assert result.consensus[0] == result.consensus[1]
    # one item, one ranking
    assert kemeny_median([[3]]).consensus.tolist() == [0]
    assert kemeny_median([[2, 0, 1]]).objective == 0.0


def test_ilp_matches_exact(rng):
    for _ in range(8):
        rankings, weights, masses = random_instance(rng, max_items=6, max_rankings=5)
        exact = kemeny_median(rankings, weights, masses, method="exact")
        ilp = kemeny_median(rankings, weights, masses, method="ilp")
        assert ilp.objective == pytest.approx(exact.objective)
        assert ilp.converged


def test_ilp_beyond_enumeration(rng):
    rankings = tree_like_rankings(rng, 14, 9, noise=0.2, n_leaves=(3, 8))
    ilp = kemeny_median(rankings, method="ilp")
    local = kemeny_median(rankings, method="local")
    assert ilp.converged
    assert ilp.objective <= local.objective + 1e-9
    assert ilp.objective == kemeny_objective(ilp.consensus, rankings)


# ----------------------------------------------------------------------------
# the default against the exact optimum (200 random small instances)
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["auto", "local"])
def test_default_close_to_exact_on_random_instances(method):
    rng = np.random.default_rng(2024)
    hits, worst = 0, 0.0
    for _ in range(200):
        rankings, weights, masses = random_instance(rng)
        exact = kemeny_median(rankings, weights, masses, method="exact").objective
        result = kemeny_median(rankings, weights, masses, method=method)
        assert result.objective >= exact - 1e-9
        hits += result.objective <= exact + 1e-9
        if exact > 0:
            worst = max(worst, (result.objective - exact) / exact)
        else:
            assert result.objective == 0
        # never worse than the Borda and mean-rank orders
        for start in ("borda", "mean"):
            reference = kemeny_median(rankings, weights, masses, method=start)
            assert result.objective <= reference.objective + 1e-9
    assert hits >= 190
    assert worst <= 0.02


# ----------------------------------------------------------------------------
# constructive heuristics
# ----------------------------------------------------------------------------
def test_borda_and_mean_definitions(rng):
    rankings, weights, masses = random_instance(rng, max_items=12)
    n_items = rankings.shape[1]
    borda = np.zeros(n_items)
    mean = np.zeros(n_items)
    for w, ranking in zip(weights, rankings):
        levels = np.unique(ranking)
        for i in range(n_items):
            above = masses[ranking < ranking[i]].sum()
            tied = masses[ranking == ranking[i]].sum() - masses[i]
            borda[i] += w * (above + tied / 2)
            mean[i] += w * np.searchsorted(levels, ranking[i]) / levels.shape[0]
    for method, key in (("borda", borda), ("mean", mean)):
        consensus = kemeny_median(rankings, weights, masses, method=method).consensus
        expected = np.unique(key, return_inverse=True)[1]
        assert np.array_equal(consensus, expected), method


def test_copeland_definition(rng):
    rankings, weights, masses = random_instance(rng, max_items=12)
    n_items = rankings.shape[1]
    score = np.zeros(n_items)
    for i in range(n_items):
        for j in range(n_items):
            if i == j:
                continue
            pref = np.sum(weights * np.sign(rankings[:, j] - rankings[:, i]))
            score[i] += masses[j] * (1.0 if pref > 0 else 0.5 if pref == 0 else 0.0)
    consensus = kemeny_median(rankings, weights, masses, method="copeland").consensus
    assert np.array_equal(consensus, np.unique(-score, return_inverse=True)[1])


@pytest.mark.parametrize("method", ["borda", "mean", "copeland", "kwiksort", "local"])
def test_methods_return_valid_consensus(rng, method):
    rankings = tree_like_rankings(rng, 60, 7, noise=0.1)
    masses = rng.integers(1, 5, size=60)
    result = kemeny_median(rankings, None, masses, method=method, random_state=0)
    consensus = result.consensus
    assert consensus.shape == (60,)
    assert set(consensus) == set(range(consensus.max() + 1))
    assert result.objective == kemeny_objective(consensus, rankings, None, masses)
    assert result.method == method


def test_kwiksort_seeded_and_good_on_consistent_rankings(rng):
    rankings = rng.integers(0, 10, size=(5, 40))
    first = kemeny_median(rankings, method="kwiksort", random_state=3)
    second = kemeny_median(rankings, method="kwiksort", random_state=3)
    assert np.array_equal(first.consensus, second.consensus)
    # identical rankings: every pivot split agrees with them
    same = np.tile(rankings[0], (4, 1))
    result = kemeny_median(same, method="kwiksort", random_state=0, n_restarts=1)
    assert result.objective == 0.0


# ----------------------------------------------------------------------------
# local search
# ----------------------------------------------------------------------------
def test_single_move_gains_match_objective(rng):
    # the gain of each item's best move equals the drop of the objective
    rankings = tree_like_rankings(rng, 40, 6, noise=0.2)
    masses = rng.integers(1, 4, size=40).astype(float)
    weights = rng.integers(1, 3, size=6).astype(float)
    data = _RankingData(rankings, weights, masses)
    consensus = np.unique(rng.integers(0, 12, size=40), return_inverse=True)[1]
    before = kemeny_objective(consensus, rankings, weights, masses)
    _, moves = _best_moves(data, consensus, np.arange(40), 40, _weight_groups(data))
    assert moves["item"].shape[0] > 0
    for item, gain, key in zip(moves["item"], moves["gain"], moves["key"]):
        keys = consensus.astype(float)
        keys[item] = key
        after = kemeny_objective(
            np.unique(keys, return_inverse=True)[1], rankings, weights, masses
        )
        assert before - after == gain  # integral weights: exact


@pytest.mark.parametrize("weights", ["integral", "float"])
def test_batch_delta_is_exact(rng, weights):
    # applying many moves at once: the reported change is the true change
    for _ in range(5):
        rankings = tree_like_rankings(rng, 50, 5, noise=0.3)
        masses = rng.integers(1, 4, size=50).astype(float)
        if weights == "float":
            masses += rng.random(50)
        data = _RankingData(rankings, None, masses)
        consensus = np.unique(rng.integers(0, 15, size=50), return_inverse=True)[1]
        before = kemeny_objective(consensus, rankings, None, masses)
        groups = _weight_groups(data)
        _, moves = _best_moves(data, consensus, np.arange(50), 3, groups)
        accepted, delta = _apply_batch(data, consensus, moves, groups)
        assert delta < 0
        keys = consensus.astype(float)
        keys[moves["item"][accepted]] = moves["key"][accepted]
        after = kemeny_objective(
            np.unique(keys, return_inverse=True)[1], rankings, None, masses
        )
        if data.exact:  # every term a multiple of 1/2: exact
            assert after - before == delta
        else:
            assert after - before == pytest.approx(delta)


def test_local_search_on_larger_problem(rng):
    rankings = tree_like_rankings(rng, 4000, 30, noise=0.05, n_leaves=(40, 80))
    masses = rng.integers(1, 3, size=4000)
    result = kemeny_median(rankings, item_weights=masses)
    assert result.method == "local"
    assert result.objective == kemeny_objective(
        result.consensus, rankings, None, masses
    )
    # strictly better than both constructive starts here
    assert result.objective < min(result.start_objectives.values())
    assert set(result.start_objectives) == {"borda", "mean"}
    assert result.n_iter >= 1


def test_multi_start_chooses_the_starts(rng):
    # a small problem (M^2 B <= 2e6): "auto" searches from the five best of
    # Borda, mean rank, Copeland, KwikSort and the input rankings; False from
    # the better of Borda and mean rank alone, as a large problem does
    rankings = tree_like_rankings(rng, 60, 6, noise=0.2, n_leaves=(5, 12))
    auto = kemeny_median(rankings, random_state=0)
    assert {"copeland", "kwiksort", "ranking_0"} <= set(auto.start_objectives)
    single = kemeny_median(rankings, random_state=0, multi_start=False)
    assert set(single.start_objectives) == {"borda", "mean"}
    assert single.start in ("borda", "mean")
    assert single.objective <= min(single.start_objectives.values())
    assert single.objective == kemeny_objective(single.consensus, rankings)
    # and True asks for them on a problem too large for "auto"
    large = tree_like_rankings(rng, 700, 5, noise=0.2, n_leaves=(10, 30))
    assert set(kemeny_median(large, random_state=0).start_objectives) == {
        "borda",
        "mean",
    }
    forced = kemeny_median(large, random_state=0, multi_start=True)
    assert "copeland" in forced.start_objectives


@pytest.mark.parametrize("bad", ["yes", None, 1, "Auto"])
def test_multi_start_rejects_other_values(bad):
    with pytest.raises(ValueError, match="multi_start must be True, False or"):
        kemeny_median([[0, 1, 2], [1, 0, 2]], multi_start=bad)


def test_local_search_converges_to_local_optimum(rng):
    rankings = tree_like_rankings(rng, 30, 8, noise=0.2, n_leaves=(4, 10))
    result = kemeny_median(rankings, method="local", window=30)
    assert result.converged
    data = _RankingData(rankings)
    consensus = result.consensus.astype(np.intp)
    _, moves = _best_moves(data, consensus, np.arange(30), 30, _weight_groups(data))
    assert moves["item"].shape[0] == 0


def test_max_iter_and_tol_stop_early(rng):
    rankings = tree_like_rankings(rng, 600, 10, noise=0.02, n_leaves=(20, 40))
    one = kemeny_median(rankings, max_iter=1, window=2)
    assert one.n_iter == 1 and not one.converged
    full = kemeny_median(rankings, window=2)
    assert full.objective <= one.objective
    loose = kemeny_median(rankings, window=2, tol=0.5)
    assert loose.n_iter == 1


# ----------------------------------------------------------------------------
# invariances
# ----------------------------------------------------------------------------
def test_exact_invariances(rng):
    rankings, weights, masses = random_instance(rng, max_items=6, max_rankings=5)
    value = kemeny_median(rankings, weights, masses, method="exact").objective
    perm = rng.permutation(rankings.shape[1])
    assert (
        kemeny_median(
            rankings[:, perm], weights, masses[perm], method="exact"
        ).objective
        == value
    )
    order = rng.permutation(rankings.shape[0])
    assert (
        kemeny_median(rankings[order], weights[order], masses, method="exact").objective
        == value
    )
    repeated = np.repeat(rankings, weights, axis=0)
    assert kemeny_median(repeated, None, masses, method="exact").objective == value


def test_integer_item_weights_are_repeated_items(rng):
    rankings = rng.integers(0, 3, size=(4, 3))
    masses = np.array([2, 1, 3])
    weighted = kemeny_median(rankings, None, masses, method="exact")
    repeated = kemeny_median(np.repeat(rankings, masses, axis=1), method="exact")
    assert weighted.objective == repeated.objective
    # the copies of an item are tied in the median of the repeated problem
    owner = np.repeat(np.arange(3), masses)
    for item in range(3):
        assert np.unique(repeated.consensus[owner == item]).shape[0] == 1


def test_local_invariances_with_integer_weights(rng):
    # one start, deterministic search: exact sums make rankings' order and
    # repetition irrelevant
    rankings = tree_like_rankings(rng, 700, 6, noise=0.05, n_leaves=(10, 30))
    weights = rng.integers(1, 4, size=6)
    base = kemeny_median(rankings, weights, window=2)
    order = rng.permutation(6)
    permuted = kemeny_median(rankings[order], weights[order], window=2)
    assert np.array_equal(permuted.consensus, base.consensus)
    repeated = kemeny_median(np.repeat(rankings, weights, axis=0), window=2)
    assert np.array_equal(repeated.consensus, base.consensus)
    assert repeated.objective == base.objective


# ----------------------------------------------------------------------------
# result object and errors
# ----------------------------------------------------------------------------
def test_result_object():
    result = kemeny_median([[0, 1, 2], [0, 2, 1], [1, 0, 2]])
    assert isinstance(result, MedianResult)
    consensus, objective = result
    assert consensus is result.consensus
    assert objective == result.objective == 2.0
    assert result.normalized_objective == pytest.approx(2 * 2.0 / (3 * 9))
    assert "MedianResult(n_items=3, n_buckets=3" in repr(result)
    # no weight at all: the normalized objective is undefined
    assert np.isnan(kemeny_median([[0, 1]], ranking_weights=[0]).normalized_objective)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "spearman"}, "method must be one of"),
        ({"max_iter": 0}, "max_iter must be an integer >= 1"),
        ({"window": -1}, "window must be an integer >= 0"),
        ({"window": "wide"}, "window must be an integer >= 0"),
        ({"n_restarts": 1.5}, "n_restarts must be an integer >= 1"),
        ({"time_limit": -1}, "time_limit must be a finite real number > 0"),
        ({"time_limit": 0}, "time_limit must be a finite real number > 0"),
        ({"time_limit": float("nan")}, "time_limit must be a finite real number"),
        ({"time_limit": "10"}, "time_limit must be a finite real number"),
        ({"time_limit": True}, "time_limit must be a finite real number"),
        ({"tol": -0.1}, "tol must be a finite real number >= 0"),
        ({"tol": float("inf")}, "tol must be a finite real number >= 0"),
        ({"tol": None}, "tol must be a finite real number >= 0"),
        ({"random_state": "seed"}, "cannot be used to seed"),
    ],
)
def test_parameter_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        kemeny_median([[0, 1, 2], [2, 1, 0]], **kwargs)


def test_objective_and_distance_parameter_errors():
    from treerank.aggregation import kendall_tau_distance

    with pytest.raises(ValueError, match="normalize must be True or False"):
        kemeny_objective([0, 1], [[0, 1]], normalize="yes")
    with pytest.raises(ValueError, match="normalize must be True or False"):
        kendall_tau_distance([0, 1], [1, 0], normalize=None)


def test_valid_time_limit_is_accepted():
    result = kemeny_median([[0, 1, 2], [2, 1, 0]], method="ilp", time_limit=30)
    assert result.converged


def test_size_limits():
    with pytest.raises(
        ValueError, match=r'"exact" enumerates .* at most 7 items; got 8'
    ):
        kemeny_median(np.zeros((2, 8), dtype=int), method="exact")
    with pytest.raises(ValueError, match=r'"ilp" accepts at most 60 items; got 61'):
        kemeny_median(np.zeros((2, 61), dtype=int), method="ilp")


def test_input_errors():
    with pytest.raises(ValueError, match="rankings must be a two-dimensional"):
        kemeny_median([0, 1, 2])
    with pytest.raises(ValueError, match="item_weights has 2 elements"):
        kemeny_median([[0, 1, 2]], item_weights=[1, 2])
    with pytest.raises(ValueError, match="ranking_weights contains negative"):
        kemeny_median([[0, 1, 2]], ranking_weights=[-1])
