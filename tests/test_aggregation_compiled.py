"""Compiled aggregation kernels against oracles.

The local search and the insertion have one implementation each (compiled
kernels at every size); they are checked against brute force, exact
arithmetic and invariances. The objective and the constructive starts still
have an interpreted and a compiled version, compared here as well.
"""

import itertools
import tracemalloc

import joblib
import numpy as np
import pytest
from test_aggregation_median import tree_like_rankings

from treerank.aggregation import (
    ConsensusInserter,
    _kernels,
    _local_search_kernels,
    kemeny_median,
    kemeny_objective,
)
from treerank.aggregation import _insertion as insertion_module
from treerank.aggregation._bucket_order import _RankingData
from treerank.aggregation._heuristics import _borda, _borda_costs
from treerank.aggregation._local_search import _best_moves, _local_search
from treerank.aggregation._objective import _objective, _pair_sums, _pair_sums_compiled


@pytest.fixture
def compiled(monkeypatch):
    """Force the compiled objective and starts whatever the problem size."""
    monkeypatch.setattr(_kernels, "_COMPILED_MIN_SIZE", 0)


def instance(rng, n_items, n_rankings, noise, weights):
    rankings = tree_like_rankings(rng, n_items, n_rankings, noise)
    masses = rng.integers(1, 4, size=n_items).astype(float)
    if weights == "uniform":
        ranking_weights = None
    elif weights == "groups":  # few distinct integer weights
        ranking_weights = rng.integers(1, 4, size=n_rankings).astype(float)
    else:  # many distinct float weights, float masses
        ranking_weights = rng.random(n_rankings) + 0.1
        masses = rng.random(n_items) + 0.5
    return _RankingData(rankings, ranking_weights, masses)


# ----------------------------------------------------------------------------
# objective and Borda
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("weights", ["uniform", "groups", "float"])
def test_compiled_objective_matches_numpy(rng, weights):
    for n_buckets in (1, 5, 60, 2000):
        data = instance(rng, 2000, 12, 0.2, weights)
        consensus = np.unique(rng.integers(0, n_buckets, 2000), return_inverse=True)[1]
        expected = _pair_sums(consensus, data)
        found = _pair_sums_compiled(consensus, data)
        if weights == "float":
            assert np.allclose(found, expected, rtol=1e-12)
        else:  # integer masses: exact
            assert np.array_equal(found, expected)


def test_compiled_objective_matches_oracle(rng, compiled):
    # small problems, pair by pair
    for _ in range(20):
        n_items = int(rng.integers(2, 12))
        rankings = rng.integers(0, 4, size=(int(rng.integers(1, 6)), n_items))
        consensus = rng.integers(0, 4, size=n_items)
        masses = rng.integers(1, 4, size=n_items)
        expected = 0.0
        for ranking in rankings:
            for i in range(n_items):
                for j in range(i + 1, n_items):
                    a = np.sign(consensus[i] - consensus[j])
                    b = np.sign(ranking[i] - ranking[j])
                    u = 1.0 if a * b < 0 else 0.5 if (a == 0) != (b == 0) else 0.0
                    expected += masses[i] * masses[j] * u
        assert kemeny_objective(consensus, rankings, None, masses) == expected


@pytest.mark.parametrize("weights", ["uniform", "groups", "float"])
def test_compiled_borda_matches_numpy(rng, monkeypatch, weights):
    data = instance(rng, 3000, 15, 0.3, weights)
    monkeypatch.setattr(_kernels, "_COMPILED_MIN_SIZE", 1 << 62)
    expected_costs, expected = _borda_costs(data), _borda(data)
    monkeypatch.setattr(_kernels, "_COMPILED_MIN_SIZE", 0)
    assert np.allclose(_borda_costs(data), expected_costs, rtol=1e-12)
    if weights != "float":
        assert np.array_equal(_borda(data), expected)


@pytest.mark.parametrize("weights", ["uniform", "groups", "float"])
def test_compiled_mean_rank_matches_numpy(rng, monkeypatch, weights):
    from treerank.aggregation._heuristics import _mean_rank

    data = instance(rng, 3000, 15, 0.3, weights)
    monkeypatch.setattr(_kernels, "_COMPILED_MIN_SIZE", 1 << 62)
    expected = _mean_rank(data)
    monkeypatch.setattr(_kernels, "_COMPILED_MIN_SIZE", 0)
    assert np.array_equal(_mean_rank(data), expected)


# ----------------------------------------------------------------------------
# local search
# ----------------------------------------------------------------------------
def single_move_objectives(consensus, rankings, weights, masses, item):
    """Objective of every position of ``item``, the others kept (brute force)."""
    n_buckets = int(consensus.max()) + 1
    values = []
    for target in np.arange(2 * n_buckets + 1) / 2.0 - 0.5:
        keys = consensus.astype(float)
        keys[item] = target
        moved = np.unique(keys, return_inverse=True)[1]
        values.append(kemeny_objective(moved, rankings, weights, masses))
    return np.array(values)


@pytest.mark.parametrize("weights", ["uniform", "groups", "float"])
def test_search_tracks_the_objective_to_a_local_optimum(rng, weights):
    # the objective tracked by exact changes is the true one (to the last bit
    # with integral weights), and a converged search with a window of every
    # bucket leaves no single move that lowers it (brute force over every
    # position of every item)
    data = instance(rng, 40, 6, 0.2, weights)
    rankings = data.ranks[np.argsort(data.permutation)]
    ranking_weights = data.ranking_weights[np.argsort(data.permutation)]
    start = _borda(data)
    value = _objective(start, data)
    found, tracked, _, converged = _local_search(
        data, start, value, window=40, max_iter=100
    )
    assert converged
    true = kemeny_objective(found, rankings, ranking_weights, data.item_weights)
    if data.exact:
        assert tracked == true
    else:
        assert tracked == pytest.approx(true, rel=1e-12)
    assert true <= value
    for item in range(40):
        values = single_move_objectives(
            found, rankings, ranking_weights, data.item_weights, item
        )
        assert values.min() >= true - 1e-9 * true


@pytest.mark.parametrize("weights", ["uniform", "groups", "float"])
def test_search_window_limits_moves_and_passes(rng, weights):
    # a larger problem, a window of 3 buckets: every pass lowers F, the
    # tracked value is the true one, and the search stops at a local optimum
    # of the window (no mover left among all items)
    data = instance(rng, 1500, 20, 0.1, weights)
    start = _borda(data)
    value = _objective(start, data)
    found, tracked, passes, converged = _local_search(
        data, start, value, window=3, max_iter=100
    )
    assert converged and passes >= 1 and tracked < value
    if data.exact:
        assert tracked == _objective(found, data)
    else:
        assert tracked == pytest.approx(_objective(found, data), rel=1e-12)
    groups = _kernels._weight_groups(data)
    _, moves = _best_moves(data, found, np.arange(data.n_items), 3, groups)
    assert moves["item"].shape[0] == 0


def test_median_matches_brute_force_oracle(compiled):
    # the default method, on random small instances
    # (the tests folder is on sys.path; a "tests" package may be installed)
    from test_aggregation_median import brute_force_median, random_instance

    rng = np.random.default_rng(7)
    for _ in range(25):
        rankings, weights, masses = random_instance(rng, max_items=5, max_rankings=4)
        exact = float(brute_force_median(rankings, weights, masses))
        result = kemeny_median(rankings, weights, masses, method="local")
        assert result.objective >= exact - 1e-9
        assert result.objective <= result.start_objectives["borda"] + 1e-9


# ----------------------------------------------------------------------------
# insertion
# ----------------------------------------------------------------------------
def new_rows(rng, rankings, n_new):
    low, high = rankings.min(axis=1), rankings.max(axis=1)
    return np.column_stack(
        [rng.integers(lo - 1, hi + 2, size=n_new) for lo, hi in zip(low, high)]
    )


def fitted_inserter(rng, n_items=3000, n_rankings=25, weights=False):
    rankings = tree_like_rankings(rng, n_items, n_rankings, 0.1, n_leaves=(10, 40))
    masses = rng.integers(1, 4, size=n_items)
    ranking_weights = rng.integers(1, 3, size=n_rankings) if weights else None
    consensus = kemeny_median(rankings, ranking_weights, masses, max_iter=5).consensus
    inserter = ConsensusInserter(consensus, rankings, masses, ranking_weights)
    return inserter, rankings


def set_tables(monkeypatch, tables):
    """Make the inserters built next read their runs one way."""
    if tables != "full":
        monkeypatch.setattr(insertion_module, "_FULL_TABLE_BUDGET", 0)
    else:  # at once, not after enough placed items
        monkeypatch.setattr(insertion_module, "_FULL_TABLE_ITEMS_PER_ENTRY", 0)
    budget = 0 if tables == "none" else 1 << 23
    monkeypatch.setattr(insertion_module, "_BUCKET_TABLE_BUDGET", budget)
    if tables == "every bucket":
        monkeypatch.setattr(insertion_module, "_SMALL_BUCKET", 0)


@pytest.mark.parametrize("search", ["gallop", "bisect"])
@pytest.mark.parametrize("weights", [False, True])
def test_insertion_does_not_depend_on_the_tables(rng, monkeypatch, weights, search):
    # positions read from full (gap x rank) tables, or scanned bucket by
    # bucket with buckets read from prefix tables or member by member: the
    # same sums (integral weights), so the same positions, for both methods
    inserter, rankings = fitted_inserter(rng, weights=weights)
    ranks = new_rows(rng, rankings, 400)
    ranks[:50] = rankings.T[:50]  # fitted items again
    results = []
    for tables in ("full", "none", "large buckets", "every bucket"):
        with monkeypatch.context() as patch:
            set_tables(patch, tables)
            fresh = ConsensusInserter(*inserter_arrays(inserter))
            found = [fresh.positions(ranks, window=w, search=search) for w in (2, 0, 7)]
            found.append(fresh.positions(ranks[:100], method="exact"))
            results.append(found)
    for found in results[1:]:
        for got, expected in zip(found, results[0]):
            assert np.array_equal(got, expected)
    # the exact method is the topmost position of least cost (position_costs,
    # itself checked against the objective in test_aggregation_insertion.py)
    positions, costs = inserter.position_costs(ranks[:100])
    assert np.array_equal(results[0][3], positions[np.argmin(costs, axis=1)])


def inserter_arrays(inserter):
    return (
        inserter.consensus,
        inserter.rankings,
        inserter.item_weights,
        inserter.ranking_weights,
    )


def test_full_tables_are_built_once_enough_items_were_placed(rng, monkeypatch):
    # a few new items are placed without the full (gap x rank) tables; once
    # the items placed over all calls reach the entries' share, the tables are
    # built, and the positions are the same either way
    inserter, rankings = fitted_inserter(rng)
    ranks = new_rows(rng, rankings, 400)
    first = inserter.positions(ranks)
    state = inserter._compiled()
    entries = state["full_entries"]
    assert entries is not None and state["full_tables"] is None
    assert state["placed"] == 400
    needed = int(np.ceil(entries * insertion_module._FULL_TABLE_ITEMS_PER_ENTRY))
    calls = 0
    while state["full_tables"] is None:
        assert np.array_equal(inserter.positions(ranks), first)
        calls += 1
    # built by the call that reached the share, not before
    assert calls == int(np.ceil(needed / 400)) - 1
    assert np.array_equal(inserter.positions(ranks), first)
    eager = ConsensusInserter(
        inserter.consensus, rankings, inserter.item_weights, inserter.ranking_weights
    )
    monkeypatch.setattr(insertion_module, "_FULL_TABLE_ITEMS_PER_ENTRY", 0)
    assert np.array_equal(eager.positions(ranks), first)
    assert eager._compiled()["full_tables"] is not None


def test_scanned_insertion_counts_beyond_16_bits(monkeypatch):
    # the member-by-member scan counts rankings in 16-bit counters only when
    # there are fewer than 65,536 of them: with 70,000 rankings that all put
    # the fitted items above a new item, the counts exceed 65,535
    n_rankings = 70_000
    rankings = np.tile(np.array([[0], [1], [2], [3]]), n_rankings).T
    inserter = ConsensusInserter([0, 1, 2, 3], rankings)
    ranks = np.array([np.full(n_rankings, 4), np.full(n_rankings, 2)])
    monkeypatch.setattr(insertion_module, "_FULL_TABLE_BUDGET", 0)
    monkeypatch.setattr(insertion_module, "_BUCKET_TABLE_BUDGET", 0)
    got = inserter.positions(ranks)
    assert inserter._compiled()["full_tables"] is None
    assert np.array_equal(got, inserter.positions(ranks, method="exact"))
    assert np.array_equal(got, [3.5, 2.0])


def test_galloping_and_bisection_agree_on_unimodal_costs(rng):
    # every ranking is the consensus itself, up to ties: the cost of a new
    # item is unimodal along the consensus, so both searches of the block
    # boundary find the exact optimum, whatever the guessed start
    n_items = 3000
    consensus = np.sort(rng.integers(0, 1500, size=n_items))
    rankings = np.vstack([consensus // k for k in (1, 2, 3, 5, 8)])
    inserter = ConsensusInserter(consensus, rankings)
    ranks = rankings.T[rng.integers(0, n_items, size=300)] + rng.integers(
        -2, 3, size=(300, 1)
    )
    # and items past either end, whatever block the search starts from
    ends = np.vstack([rankings.min(axis=1) - 1, rankings.max(axis=1) + 1])
    ranks = np.vstack([ranks, ends, ends[::-1]])
    exact = inserter.positions(ranks, method="exact")
    assert exact[-4] == -0.5 and exact[-3] == inserter.n_buckets - 0.5
    for search in ("gallop", "bisect"):
        got = inserter.positions(ranks, search=search)
        assert np.array_equal(got, exact)


def test_a_search_started_far_from_an_end_reaches_it(monkeypatch):
    # a galloping step that would leave the consensus probes its end: an item
    # below every fitted item, started from the top block, lands at the bottom
    n_items = 3000
    consensus = np.arange(n_items) // 2
    rankings = np.vstack([consensus // k for k in (1, 2, 3)])
    inserter = ConsensusInserter(consensus, rankings)
    bottom = rankings.max(axis=1)[None, :] + 1
    top = rankings.min(axis=1)[None, :] - 1

    def swapped_keys(lower, upper, table, ranking_weights):
        # the search of the bottom item starts at the top block, and vice versa
        return np.where(lower[:, 0] == 0, 1e9, -1e9)

    monkeypatch.setattr(insertion_module, "_item_keys", swapped_keys)
    positions = inserter.positions(np.vstack([bottom, top]))
    assert np.array_equal(positions, [inserter.n_buckets - 0.5, -0.5])


def test_positions_rejects_an_unknown_search(rng):
    inserter, rankings = fitted_inserter(rng, n_items=200, n_rankings=5)
    with pytest.raises(ValueError, match="search must be"):
        inserter.positions(rankings.T[:3], search="linear")


def test_fast_insertion_is_a_valid_position(rng):
    # (its agreement with the exact optimum: test_aggregation_insertion.py)
    inserter, rankings = fitted_inserter(rng, n_items=800, n_rankings=10)
    ranks = new_rows(rng, rankings, 200)
    fast = inserter.positions(ranks)
    positions, costs = inserter.position_costs(ranks)
    rows = np.arange(ranks.shape[0])
    fast_cost = costs[rows, np.searchsorted(positions, fast)]
    assert np.array_equal(positions[np.searchsorted(positions, fast)], fast)
    assert np.all(fast_cost >= costs.min(axis=1) - 1e-9)
    exact = inserter.positions(ranks, method="exact")
    assert np.array_equal(costs[rows, np.searchsorted(positions, exact)], costs.min(1))


def test_insertion_does_not_depend_on_chunks_or_batch(rng, monkeypatch):
    inserter, rankings = fitted_inserter(rng, weights=True)
    ranks = new_rows(rng, rankings, 300)
    whole = inserter.positions(ranks)
    for chunk in (1, 7, 64):
        monkeypatch.setattr(insertion_module, "_CHUNK", chunk)
        assert np.array_equal(inserter.positions(ranks), whole)
    permutation = rng.permutation(300)
    assert np.array_equal(inserter.positions(ranks[permutation]), whole[permutation])
    singles = [inserter.positions(ranks[i : i + 1])[0] for i in range(0, 300, 37)]
    assert np.array_equal(singles, whole[::37])


def test_insertion_memory_is_bounded_by_the_chunk(rng):
    inserter, rankings = fitted_inserter(rng, n_items=2000, n_rankings=20)
    inserter.positions(new_rows(rng, rankings, 10))  # builds the tables
    peaks = []
    for n_new in (20_000, 80_000):
        ranks = new_rows(rng, rankings, n_new)
        tracemalloc.start()
        inserter.positions(ranks)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        # less the result, and the visiting order of the chunks (a
        # sort key and a permutation, 8 bytes each per row)
        peaks.append(peak - 8 * n_new - 16 * n_new)
    # per-chunk work only: the same peak for 4x more rows, a few copies of one
    # chunk of the input (int64), far below the input itself
    chunk_bytes = insertion_module._CHUNK * 20 * 8
    assert peaks[1] <= peaks[0] + 64 * 1024
    assert peaks[1] < 3 * chunk_bytes < 80_000 * 20 * 8 / 4


def test_compiled_insertion_state_is_not_pickled(rng):
    import pickle

    inserter, rankings = fitted_inserter(rng, n_items=500, n_rankings=8)
    ranks = new_rows(rng, rankings, 20)
    expected = inserter.positions(ranks)
    assert inserter._compiled_state is not None
    restored = pickle.loads(pickle.dumps(inserter))
    assert restored._compiled_state is None
    assert np.array_equal(restored.positions(ranks), expected)


@pytest.mark.parametrize("weights", ["uniform", "groups", "float"])
def test_compiled_recoding_matches_numpy(rng, monkeypatch, weights):
    from treerank.aggregation import _bucket_order

    rankings = tree_like_rankings(rng, 500, 12, 0.2) * 3 - 7  # gaps and negative values
    rankings[0, :5] = 10**6  # a row too wide for direct addressing ...
    ranking_weights = {
        "uniform": None,
        "groups": rng.integers(1, 4, size=12).astype(float),
        "float": rng.random(12),
    }[weights]
    monkeypatch.setattr(_bucket_order, "_COMPACT_MIN_SIZE", 1 << 62)
    expected = _RankingData(rankings, ranking_weights)
    monkeypatch.setattr(_bucket_order, "_COMPACT_MIN_SIZE", 0)
    assert _bucket_order._compact_ranks(rankings, np.arange(12)) is None
    rankings[0, :5] = 0  # ... and now every row is compiled
    monkeypatch.setattr(_bucket_order, "_COMPACT_MIN_SIZE", 1 << 62)
    expected = _RankingData(rankings, ranking_weights)
    monkeypatch.setattr(_bucket_order, "_COMPACT_MIN_SIZE", 0)
    found = _RankingData(rankings, ranking_weights)
    for name in ("ranks", "ranks_t", "n_buckets", "permutation"):
        assert np.array_equal(getattr(found, name), getattr(expected, name)), name
        assert getattr(found, name).dtype == getattr(expected, name).dtype, name
    assert found.ranks_t.flags["C_CONTIGUOUS"] and found.ranks.flags["C_CONTIGUOUS"]


# ----------------------------------------------------------------------------
# exact arithmetic
# ----------------------------------------------------------------------------
def test_exact_arithmetic_dispatch(rng):
    rankings = tree_like_rankings(rng, 300, 5, 0.2)  # 1,500 entries
    exact = _RankingData(rankings, None, rng.integers(1, 4, size=300))
    fractional = _RankingData(rankings, None, rng.random(300) + 0.5)
    assert exact.exact and not fractional.exact
    assert _kernels._compiled_for(exact) and not _kernels._compiled_for(fractional)
    too_large = _RankingData(rankings, None, np.full(300, 2.0**21))
    assert not too_large.exact  # W (sum m)^2 reaches 2^52
    tiny = _RankingData(rankings[:, :100], None, None)  # 500 entries
    assert tiny.exact and not _kernels._compiled_for(tiny)


def test_compiled_copeland_and_kwiksort_match_numpy(rng, monkeypatch):
    from treerank.aggregation._heuristics import _copeland, _kwiksort
    from treerank.aggregation._kemeny import _kwiksort_best

    for trial in range(60):
        n_items = int(rng.integers(1, 250))
        n_rankings = int(rng.integers(1, 9))
        rankings = rng.integers(0, int(rng.integers(1, 15)), (n_rankings, n_items))
        weights = None if trial % 2 else rng.integers(1, 4, n_rankings)
        data = _RankingData(rankings, weights, rng.integers(1, 5, n_items))
        results = []
        for minimum in (1 << 62, 0):
            monkeypatch.setattr(_kernels, "_COMPILED_MIN_SIZE", minimum)
            generator = np.random.RandomState(trial)
            runs = [_kwiksort(data, generator) for _ in range(2)]
            runs.append(_kwiksort_best(data, generator, 5))
            # the generator is left where the numpy runs leave it
            results.append((_copeland(data), runs, generator.random_sample()))
        (copeland, runs, after), (copeland_c, runs_c, after_c) = results
        assert np.array_equal(copeland_c, copeland)
        assert all(np.array_equal(a, b) for a, b in zip(runs_c, runs))
        assert after_c == after


def test_batch_correction_skips_only_pairs_that_cancel(rng):
    # the exact shortcut leaves the correction and the dominated moves as the
    # full comparison of every overlapping pair computes them
    data = instance(rng, 400, 9, 0.3, "uniform")
    bounds, values = _kernels._weight_groups(data)
    for _ in range(20):
        n_moves = int(rng.integers(2, 120))
        items = np.sort(rng.choice(400, n_moves, replace=False))
        old = rng.integers(0, 12, 400).astype(np.float64)
        new = old.copy()
        new[items] = rng.integers(0, 24, n_moves) / 2.0 - 0.25 * rng.integers(0, 2)
        lo = np.minimum(old[items], np.floor(new[items])).astype(np.int64)
        hi = np.maximum(old[items], np.ceil(new[items])).astype(np.int64)
        rank = rng.permutation(n_moves)
        chosen = np.arange(n_moves)
        args = (chosen, rank, items, lo, hi, old, new, data.ranks_t)
        rest = (data.item_weights, bounds, values, data.total_weight)
        full = _local_search_kernels._batch_kernel(*args, *rest, False)
        fast = _local_search_kernels._batch_kernel(*args, *rest, True)
        assert fast[0] == full[0]
        assert np.array_equal(fast[1], full[1])


def test_search_keys_are_borda_scores(rng):
    # the search key of an item is its Borda score: the weighted sum over
    # rankings of the mass ranked strictly above it plus half the mass tied
    # with it (brute force), for fitted items and new ones alike
    rankings = rng.integers(0, 4, size=(3, 40))
    masses = rng.integers(1, 4, size=40).astype(float)
    weights = np.array([1.0, 2.0, 3.0])
    inserter = ConsensusInserter(rankings.sum(axis=0), rankings, masses, weights)
    data = inserter._compiled()["data"]
    table = insertion_module._borda_table(data)

    def borda(items):  # items: (n, 3) ranks on the scale of the rankings
        scores = np.zeros(items.shape[0])
        for b in range(3):
            r = rankings[b][None, :]
            v = items[:, b][:, None]
            above = (masses * (r < v)).sum(axis=1)
            tied = (masses * (r == v)).sum(axis=1)
            scores += weights[b] * (above + 0.5 * tied)
        return scores

    fitted = insertion_module._item_keys(
        data.ranks_t, None, table, data.ranking_weights
    )
    np.testing.assert_allclose(fitted, borda(rankings.T))
    new = rng.integers(-1, 6, size=(30, 3))
    # direct maps of the (compact) values, computing the keys in a kernel
    assert inserter._compiled()["threshold_maps"] is not None
    keys = inserter._thresholds(new)[2]
    np.testing.assert_allclose(keys, borda(new))
    # values too spread for maps: binary searches and the same sums in numpy
    spread = ConsensusInserter(rankings.sum(axis=0), rankings * 10**6, masses, weights)
    assert spread._compiled()["threshold_maps"] is None
    assert np.array_equal(spread._thresholds(new * 10**6)[2], keys)


def test_sweep_order_is_the_stable_sort_of_the_lows(rng):
    # a counting sort of the lows (bucket indices, -1 for the first gap): the
    # stable order of numpy's sort
    lo = rng.integers(-1, 40, size=300)
    chosen = rng.permutation(300)[:200]
    order, sorted_lo = _local_search_kernels._sweep_order(lo, chosen)
    expected = np.argsort(lo[chosen], kind="stable")
    assert np.array_equal(order, expected)
    assert np.array_equal(sorted_lo, lo[chosen][expected])


def _batch_by_brute_force(chosen, rank, items, lo, hi, old, new, data):
    """Correction and dominated moves of a batch, pair by pair in Python."""
    bounds, values = _kernels._weight_groups(data)
    weight = np.repeat(values, np.diff(bounds))  # per stored ranking
    total = data.total_weight

    def cost(better, worse, relation):
        tied = total - better - worse
        if relation < 0:
            return worse + 0.5 * tied
        if relation > 0:
            return better + 0.5 * tied
        return 0.5 * (better + worse)

    correction = 0.0
    dominated = np.zeros(lo.shape[0], dtype=bool)
    for x, a in enumerate(chosen):
        for b in chosen[x + 1 :]:
            if lo[b] > hi[a] or lo[a] > hi[b]:
                continue  # disjoint spans: the moves do not interact
            dominated[a if rank[a] > rank[b] else b] = True
            i, j = items[a], items[b]
            row_i, row_j = data.ranks_t[i], data.ranks_t[j]
            better = float(weight @ (row_i < row_j))
            worse = float(weight @ (row_i > row_j))
            relations = [
                np.sign(u - v) for u in (new[i], old[i]) for v in (new[j], old[j])
            ]
            signs = (1, -1, -1, 1)
            pair = sum(s * cost(better, worse, r) for s, r in zip(signs, relations))
            correction += data.item_weights[i] * data.item_weights[j] * pair
    return correction, dominated


@pytest.mark.parametrize(
    ("n_rankings", "weights"),
    [(9, "uniform"), (9, "groups"), (60, "uniform"), (60, "float")],
)
def test_batch_kernel_matches_brute_force(rng, n_rankings, weights):
    # crowded moves (a move meets more than 32 others: the counts run ranking
    # by ranking) and sparse ones (move by move), few and many rankings
    data = instance(rng, 300, n_rankings, 0.3, weights)
    bounds, values = _kernels._weight_groups(data)
    for n_buckets, n_moves in ((4, 150), (40, 60)):
        items = np.sort(rng.choice(300, n_moves, replace=False))
        old = rng.integers(0, n_buckets, 300).astype(np.float64)
        new = old.copy()
        new[items] = rng.integers(
            0, 2 * n_buckets, n_moves
        ) / 2.0 - 0.25 * rng.integers(0, 2, n_moves)
        lo = np.minimum(old[items], np.floor(new[items])).astype(np.int64)
        hi = np.maximum(old[items], np.ceil(new[items])).astype(np.int64)
        rank = rng.permutation(n_moves)
        chosen = np.sort(rng.choice(n_moves, n_moves - 5, replace=False))
        found = _local_search_kernels._batch_kernel(
            chosen,
            rank,
            items,
            lo,
            hi,
            old,
            new,
            data.ranks_t,
            data.item_weights,
            bounds,
            values,
            data.total_weight,
            data.exact,
        )
        expected = _batch_by_brute_force(chosen, rank, items, lo, hi, old, new, data)
        assert found[0] == pytest.approx(expected[0], rel=1e-12, abs=1e-9)
        if data.exact:
            assert found[0] == expected[0]
        assert np.array_equal(found[1], expected[1])


def test_upper_bound_is_searchsorted_right(rng):
    values = np.sort(rng.integers(-2, 30, size=200)).astype(np.float64)
    for value in range(-4, 33):
        expected = np.searchsorted(values, value, side="right")
        assert _local_search_kernels._upper_bound(values, value) == expected
    assert _local_search_kernels._upper_bound(values[:0], 3) == 0


@pytest.mark.parametrize("weights", ["uniform", "groups", "float"])
def test_threaded_median_equals_one_thread(monkeypatch, weights):
    # the objective's rankings and the window sums' items in threads: the
    # same sums, so the same passes, median and objectives to the last bit
    from treerank.aggregation import _threads

    monkeypatch.setattr(_threads, "MIN_THREADED_SIZE", 0)
    monkeypatch.setattr(_threads, "cpu_count", lambda: 8)  # 3 parts anywhere
    rng = np.random.default_rng(7)
    rankings = tree_like_rankings(rng, 3000, 45, 0.3)
    masses = rng.integers(1, 4, size=3000).astype(float)
    ranking_weights = None
    if weights == "groups":
        ranking_weights = rng.integers(1, 3, size=45).astype(float)
    elif weights == "float":
        ranking_weights = rng.random(45) + 0.1
        masses = rng.random(3000) + 0.5
    results = [
        kemeny_median(
            rankings,
            ranking_weights,
            masses,
            random_state=0,
            max_iter=4,
            window=3,
            multi_start=False,
            n_jobs=n_jobs,
        )
        for n_jobs in (1, 2, 3)
    ]
    for found in results[1:]:
        assert np.array_equal(found.consensus, results[0].consensus)
        assert found.objective == results[0].objective
        assert found.start_objectives == results[0].start_objectives
        assert found.n_iter == results[0].n_iter


@pytest.mark.parametrize("n_jobs", [1.5, 0, True, "2"])
def test_median_n_jobs_must_be_a_nonzero_integer(n_jobs):
    with pytest.raises(ValueError, match="n_jobs must be a nonzero integer"):
        kemeny_median([[0, 1, 2], [0, 2, 1]], n_jobs=n_jobs)


def test_kernel_threads_only_on_large_problems():
    from treerank.aggregation._threads import MIN_THREADED_SIZE, kernel_threads

    assert kernel_threads(MIN_THREADED_SIZE // 8 - 1, 8, 2) == 1
    assert kernel_threads(MIN_THREADED_SIZE // 8, 8, 2) == min(2, joblib.cpu_count())
    assert kernel_threads(MIN_THREADED_SIZE, 1, None) == 1
    # never more threads than this machine's processors (a cluster backend
    # may count a whole cluster's workers)
    assert kernel_threads(MIN_THREADED_SIZE, 1, 10_000) == joblib.cpu_count()


@pytest.mark.parametrize("n", [0, 1, 2, 7, 100])
@pytest.mark.parametrize("n_parts", [1, 2, 3, 8])
def test_split_range_covers_the_range_in_even_parts(n, n_parts):
    from treerank.aggregation._threads import split_range

    parts = split_range(n, n_parts)
    assert parts[0][0] == 0 and parts[-1][1] == n
    assert all(a[1] == b[0] for a, b in itertools.pairwise(parts))
    sizes = [stop - start for start, stop in parts]
    assert len(parts) == max(1, min(n, n_parts))
    assert max(sizes) - min(sizes) <= 1
