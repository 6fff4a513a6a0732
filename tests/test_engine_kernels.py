"""The growth's inner kernels against their plain definitions: the split
search's fast path, the stable partitions, the binning, the routing of codes
and the prefetch hint (none of which may change a result)."""

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treerank._engine import (
    MISSING_BIN,
    BinMapper,
    GrowthParams,
    _binning,
    grow_ranking_tree,
    route_binned,
)
from treerank._engine._prefetch import prefetch
from treerank._engine._rule_growth import _partition, _partition_categories
from treerank._engine._split_search import (
    CRITERIA,
    _search_thresholds_and_missing,
    child_term,
    search_feature,
)
from treerank.tree._growing import structure_from_grown


def _random_histogram(rng, n_bins, fill):
    """A histogram with a fraction ``fill`` of non-empty bins, no missing value."""
    hist = np.zeros((256, 3))
    used = rng.random(n_bins) < fill
    hist[:n_bins, 0] = np.where(used, rng.integers(0, 4, n_bins) * 0.7, 0.0)
    hist[:n_bins, 1] = np.where(used, rng.integers(0, 4, n_bins) * 1.3, 0.0)
    hist[:n_bins, 2] = np.where(used, rng.integers(1, 6, n_bins), 0.0)
    return hist


def _search(hist, n_bins, criterion, min_leaf, general=False):
    pos, neg, count = hist[:, 0].sum(), hist[:, 1].sum(), hist[:, 2].sum()
    P, N = pos * 1.5, neg * 1.25  # the master node is larger than the node
    parent = child_term(pos / P, neg / N, criterion)
    best = np.full(7, -np.inf)
    arguments = (hist, n_bins, pos, neg, count, P, N, min_leaf, criterion, parent)
    if general:
        non_constant = _search_thresholds_and_missing(*arguments, best, 0, 0.0, 1.0)
    else:
        non_constant = search_feature(*arguments, best, 0, 0.0, 1.0, np.empty((5, 256)))
    return non_constant, best


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_bins=st.integers(2, 255),
    fill=st.sampled_from([0.02, 0.3, 1.0]),
    criterion=st.sampled_from(sorted(set(CRITERIA.values()))),
    min_leaf=st.integers(1, 12),
)
def test_threshold_search_fast_path_equals_the_general_loop(
    seed, n_bins, fill, criterion, min_leaf
):
    """Without missing values or bounds, search_feature takes a three-pass path:
    it must choose the split of the general loop, with the same bits."""
    rng = np.random.default_rng(seed)
    hist = _random_histogram(rng, n_bins, fill)
    if hist[:n_bins, 0].sum() == 0 or hist[:n_bins, 1].sum() == 0:
        hist[0, 0:3] = (1.0, 1.0, 2.0)  # both classes present
    fast = _search(hist, n_bins, criterion, min_leaf)
    general = _search(hist, n_bins, criterion, min_leaf, general=True)
    assert fast[0] == general[0]
    np.testing.assert_array_equal(fast[1], general[1])


def test_threshold_search_brute_force():
    """The chosen split is the first best over the thresholds at non-empty bins."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        n_bins = int(rng.integers(2, 60))
        hist = _random_histogram(rng, n_bins, 0.5)
        hist[0, 0:3] += (1.0, 1.0, 2.0)
        non_constant, best = _search(hist, n_bins, 0, 2)
        pos, neg, count = hist[:, 0].sum(), hist[:, 1].sum(), hist[:, 2].sum()
        P, N = pos * 1.5, neg * 1.25
        parent = child_term(pos / P, neg / N, 0)
        candidates = []
        for b in range(n_bins - 1):
            if hist[b, 2] == 0:
                continue
            lp, ln, lc = (
                hist[: b + 1, 0].sum(),
                hist[: b + 1, 1].sum(),
                hist[: b + 1, 2].sum(),
            )
            if lc < 2 or count - lc < 2:
                continue
            value = (
                child_term(lp / P, ln / N, 0)
                + child_term((pos - lp) / P, (neg - ln) / N, 0)
                - parent
            )
            candidates.append((value, b))
        assert non_constant == (np.count_nonzero(hist[:n_bins, 2]) >= 2)
        if not candidates:
            assert best[0] == -np.inf
            continue
        top = max(value for value, _ in candidates)
        first = min(b for value, b in candidates if np.isclose(value, top, rtol=1e-12))
        assert best[1] == first
        assert np.isclose(best[0], top, rtol=1e-12)


@settings(max_examples=100, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_rows=st.integers(0, 300),
    threshold=st.integers(0, 254),
    missing_left=st.booleans(),
)
def test_partitions_are_stable_and_put_the_left_rows_first(
    seed, n_rows, threshold, missing_left
):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 256, size=(n_rows + 5, 2)).astype(np.uint8)
    rows = rng.permutation(n_rows + 5)
    start, stop = 2, n_rows + 2
    segment = rows[start:stop].copy()
    code = codes[segment, 1]
    left = np.where(code == MISSING_BIN, missing_left, code <= threshold)
    expected = np.concatenate([segment[left], segment[~left]])
    outside = rows[[0, 1, -3, -2, -1]].copy()

    by_threshold = rows.copy()
    scratch = np.empty(n_rows + 5, dtype=np.int64)
    n_left = _partition(
        codes, by_threshold, start, stop, 1, threshold, missing_left, scratch
    )
    assert n_left == left.sum()
    np.testing.assert_array_equal(by_threshold[start:stop], expected)
    np.testing.assert_array_equal(by_threshold[[0, 1, -3, -2, -1]], outside)

    # the same split as a set of categories: the codes 0..threshold
    category_set = np.zeros(4, dtype=np.uint64)
    for c in range(threshold + 1):
        category_set[c >> 6] |= np.uint64(1) << np.uint64(c & 63)
    by_set = rows.copy()
    n_left = _partition_categories(
        codes, by_set, start, stop, 1, category_set, missing_left, scratch
    )
    assert n_left == left.sum()
    np.testing.assert_array_equal(by_set, by_threshold)


def test_prefetch_changes_nothing():
    """A hint: compiled, the loop's result is unchanged; in Python, a no-op."""

    def total(values, rows):
        result = 0.0
        for i in range(rows.shape[0]):
            if i + 4 < rows.shape[0]:
                prefetch(values, rows[i + 4])
            result += values[rows[i]]
        return result

    values = np.arange(1000, dtype=np.float64)
    rows = np.random.default_rng(0).permutation(1000)
    assert numba.njit(total)(values, rows) == total(values, rows) == values.sum()
    grid = np.zeros((10, 3), dtype=np.uint8)
    assert prefetch(grid, 3) is None


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    max_bins=st.integers(2, 255),
    fortran=st.booleans(),
    compiled=st.booleans(),
)
def test_binning_kernel_is_searchsorted(seed, max_bins, fortran, compiled):
    """The binning (compiled, as for a large X, or by numpy, as for a small
    one) gives numpy's searchsorted (side "left") codes, on values between, at
    and beyond the thresholds, infinities, -0.0 and NaN."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.normal(size=400),
            rng.integers(-3, 4, size=400).astype(float),
            rng.exponential(size=400),
        ]
    )
    mapper = BinMapper(max_bins=max_bins).fit(X)
    X_new = np.vstack([X, rng.normal(scale=4, size=(100, 3))])
    X_new[:60, 1] = mapper.threshold_table_[1, rng.integers(0, 3, 60)]
    X_new[rng.random(X_new.shape) < 0.05] = np.nan
    X_new[:6, 0] = [np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308]
    if fortran:
        X_new = np.asfortranarray(X_new)
    threshold = 0 if compiled else _binning._COMPILED_MIN_VALUES
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_binning, "_COMPILED_MIN_VALUES", threshold)
        codes = mapper.transform(X_new)
    for j, thresholds in enumerate(mapper.thresholds_):
        expected = np.searchsorted(thresholds, X_new[:, j], side="left")
        expected[np.isnan(X_new[:, j])] = MISSING_BIN
        np.testing.assert_array_equal(codes[:, j], expected)


def test_routing_codes_in_blocks_gives_each_rows_leaf():
    """Rows of bin codes routed side by side, in blocks, with missing values
    and a categorical feature, reach the leaves that routing raw X reaches."""
    rng = np.random.default_rng(5)
    n = 3000
    X = rng.normal(size=(n, 4))
    X[:, 3] = rng.integers(0, 9, size=n)
    y = (X[:, 0] + (X[:, 3] % 3 == 0) + rng.normal(scale=0.5, size=n) > 0.8).astype(
        np.uint8
    )
    X[rng.random((n, 4)) < 0.08] = np.nan
    categorical = np.array([False, False, False, True])
    mapper = BinMapper(categorical=categorical).fit(X)
    codes = mapper.transform(X)
    weights = np.ones(n)
    params = GrowthParams(
        max_depth=6, min_samples_split=40, rule_max_depth=3, min_samples_leaf=10
    )
    grown = grow_ranking_tree(codes, y, weights, np.arange(n), mapper, params, seed=1)
    structure = structure_from_grown(grown, X.shape[1], 7)
    assert structure.rules.category_sets.shape[0] > 0  # a categorical split
    rows = rng.permutation(n)[: n - 7]  # not a multiple of the block
    routed = np.full(n, -1, dtype=np.int32)
    route_binned(structure.graph(), structure.rules.category_sets, codes, rows, routed)
    np.testing.assert_array_equal(routed[rows], structure.apply_rank(X[rows]))
    assert np.all(np.delete(routed, rows) == -1)
    # no rows (a tree whose sample holds every row): nothing written
    untouched = routed.copy()
    route_binned(
        structure.graph(),
        structure.rules.category_sets,
        codes,
        np.array([], dtype=np.int64),
        routed,
    )
    np.testing.assert_array_equal(routed, untouched)
