"""The histogram engine: binning, the histogram LeafRank against exhaustive
search, trees as arrays, and routing."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

from treerank import LeafRank, RankingForest, TreeRank
from treerank._engine import (
    MISSING_BIN,
    BinMapper,
    GrowthParams,
    bin_thresholds,
    grow_ranking_tree,
    route_binned,
)
from treerank.tree import balanced_node_weights


# ----------------------------------------------------------------------
# binning
# ----------------------------------------------------------------------
def test_few_distinct_values_get_one_bin_each():
    rng = np.random.default_rng(0)
    values = rng.choice([-3.0, 0.5, 2.0, 7.25], size=200)
    thresholds = bin_thresholds(values)
    np.testing.assert_array_equal(thresholds, [-1.25, 1.25, 4.625])
    assert bin_thresholds(np.full(5, 3.0)).shape == (0,)
    assert bin_thresholds(np.full(5, np.nan)).shape == (0,)


@pytest.mark.parametrize("seed", range(5))
def test_codes_agree_with_raw_thresholds(seed):
    """bin(x) <= b exactly when x <= threshold[b], on new values too."""
    rng = np.random.default_rng(seed)
    X = np.column_stack(
        [
            rng.normal(size=3000),
            rng.integers(0, 12, size=3000).astype(float),
            np.round(rng.exponential(size=3000), 1),
        ]
    )
    mapper = BinMapper(max_bins=int(rng.integers(2, 256))).fit(X)
    X_new = np.vstack([X, rng.normal(scale=3, size=(500, 3))])
    X_new[::7, 0] = np.nan
    codes = mapper.transform(X_new)
    assert codes.dtype == np.uint8 and codes.flags.c_contiguous
    assert np.all(codes[np.isnan(X_new)] == MISSING_BIN)
    for j in range(3):
        present = ~np.isnan(X_new[:, j])
        n_bins = mapper.n_bins_[j]
        assert codes[present, j].max() < n_bins <= mapper.max_bins
        for b in range(n_bins - 1):
            np.testing.assert_array_equal(
                codes[present, j] <= b,
                X_new[present, j] <= mapper.threshold_table_[j, b],
            )


def test_quantile_bins_are_balanced_and_keep_heavy_values_whole():
    rng = np.random.default_rng(1)
    values = np.concatenate([rng.normal(size=10_000), np.zeros(5_000)])
    mapper = BinMapper(max_bins=32).fit(values[:, None])
    counts = np.bincount(mapper.transform(values[:, None])[:, 0])
    # the 5,000 zeros share one bin, the rest is spread evenly
    assert counts.max() >= 5_000
    light = np.sort(counts)[:-1]
    assert light.max() <= 3 * 15_000 / 32


def test_bin_mapper_rejects_bad_max_bins():
    for bad in (1, 256, 2.5, True):
        with pytest.raises(ValueError, match="max_bins must be an integer"):
            BinMapper(max_bins=bad).fit(np.zeros((3, 1)))


# ----------------------------------------------------------------------
# the histogram LeafRank against an exhaustive search
# ----------------------------------------------------------------------
def _term(a, b, criterion):
    total = a + b
    if total <= 0:
        return 0.0
    if criterion == "gini":
        return (a * a + b * b) / total
    if criterion == "entropy":
        return sum(v * np.log(v / total) for v in (a, b) if v > 0)
    return abs(a - b)


def _exhaustive_rule(X, y, w, depth, min_leaf, criterion):
    """Left rows of the LeafRank rule, by brute force over every threshold.

    Candidates are visited by feature, then threshold (between consecutive
    distinct values of the node), then missing values right before left, and
    the first strictly best one is kept, as the engine does.
    """
    rows = np.flatnonzero(w > 0)
    P = w[rows][y[rows] == 1].sum()
    N = w[rows][y[rows] == 0].sum()

    def masses(part):
        return w[part][y[part] == 1].sum() / P, w[part][y[part] == 0].sum() / N

    def grow(node, level):
        a, b = masses(node)
        if level >= depth or node.shape[0] < 2 * min_leaf or a == 0 or b == 0:
            return [node]
        parent = _term(a, b, criterion)
        best, best_left = -np.inf, None
        for f in range(X.shape[1]):
            values = X[node, f]
            missing = np.isnan(values)
            distinct = np.unique(values[~missing])
            cuts = distinct if missing.any() else distinct[:-1]
            for t in cuts:
                for missing_left in (False, True) if missing.any() else (False,):
                    left = (values <= t) | (missing & missing_left)
                    n_left = int(left.sum())
                    if n_left < min_leaf or node.shape[0] - n_left < min_leaf:
                        continue
                    value = (
                        _term(*masses(node[left]), criterion)
                        + _term(*masses(node[~left]), criterion)
                        - parent
                    )
                    if value > best:
                        best, best_left = value, left
        if best_left is None:
            return [node]
        return grow(node[best_left], level + 1) + grow(node[~best_left], level + 1)

    leaves = grow(rows, 0)
    stats = np.array([masses(leaf) for leaf in leaves])  # (beta, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(stats[:, 1] > 0, stats[:, 0] / stats[:, 1], np.inf)
    ratio = np.where(stats.sum(axis=1) == 0, -np.inf, ratio)
    order = np.argsort(-ratio, kind="stable")
    gains = np.concatenate([[0.0], np.cumsum(stats[order, 0] - stats[order, 1])])
    kept = int(np.argmax(gains))
    left = np.zeros(X.shape[0], dtype=bool)
    for i in order[:kept]:
        left[leaves[i]] = True
    return left, gains[kept]


def _discrete_problem(seed, missing=False):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 160))
    d = int(rng.integers(1, 4))
    X = np.round(rng.normal(size=(n, d)) * rng.integers(2, 6), 0) / 2
    logit = X[:, 0] - 0.5 * X[:, -1] ** 2 + 0.5
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    y[:2] = [0, 1]
    # multiples of 1/64 up to 1: every sum of weights is exact in any order,
    # so the search below and the engine compute the same numbers and break
    # exact ties alike (both take the first strictly best candidate); the
    # largest weight is 1, so check_training_target's normalization (division
    # by the largest weight) leaves them as they are
    w = rng.integers(6, 65, n) / 64
    w[rng.random(n) < 0.1] = 0.0
    w[:2] = 1.0
    if missing:
        X[rng.random((n, d)) < 0.15] = np.nan
    return X, y, w


@pytest.mark.parametrize("criterion", ["gini", "entropy", "youden"])
@pytest.mark.parametrize("missing", [False, True], ids=["complete", "missing"])
@pytest.mark.parametrize("seed", range(12))
def test_histogram_leafrank_equals_exhaustive_search(seed, criterion, missing):
    X, y, w = _discrete_problem(seed, missing)
    rng = np.random.default_rng(seed + 100)
    depth = int(rng.integers(1, 4))
    min_leaf = int(rng.integers(1, 8))
    leafrank = LeafRank(
        max_depth=depth, min_samples_leaf=min_leaf, criterion=criterion
    ).fit(X, y, sample_weight=w)
    expected, gain = _exhaustive_rule(X, y, w, depth, min_leaf, criterion)
    sent = leafrank.goes_left(X)
    keep = w > 0
    np.testing.assert_array_equal(sent[keep], expected[keep])
    assert leafrank.gain_ == pytest.approx(gain, abs=1e-12)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("seed", range(8))
def test_histogram_inner_tree_equals_scikit_learn(seed, criterion):
    """Same partition of the rows as DecisionTreeClassifier on balanced weights."""
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(-1, 1, size=(400, 6)) * 40) / 40  # 81 values
    y = (rng.random(400) < 1 / (1 + np.exp(-2 * X[:, 0] + X[:, 1]))).astype(int)
    w = rng.random(400) + 0.5  # continuous weights: no exact ties
    depth, min_leaf = 3, int(rng.integers(1, 30))
    ours = LeafRank(max_depth=depth, min_samples_leaf=min_leaf, criterion=criterion)
    ours.fit(X, y, sample_weight=w)
    reference = DecisionTreeClassifier(
        max_depth=depth, min_samples_leaf=min_leaf, criterion=criterion
    ).fit(X, y, sample_weight=balanced_node_weights(y, w))
    pairs = set(zip(ours.tree_.apply(X), reference.apply(X)))
    assert len(pairs) == len(set(ours.tree_.apply(X))) == len(set(reference.apply(X)))


def test_youden_criterion_is_the_leafrank_gain_at_depth_one():
    """At depth 1 the youden split is the best single threshold for TPR - FPR."""
    X, y, w = _discrete_problem(3)
    stump = LeafRank(max_depth=1, min_samples_leaf=1, criterion="youden")
    stump.fit(X, y, sample_weight=w)
    _, best = _exhaustive_rule(X, y, w, 1, 1, "youden")
    assert stump.gain_ == pytest.approx(best)


def test_missing_values_follow_the_better_side():
    """Rows with a missing value go where they score best, and NaN follows."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=600)
    y = (x > 0).astype(int)
    missing = rng.random(600) < 0.2
    y[missing] = 1  # missingness carries the signal
    X = np.where(missing, np.nan, x)[:, None]
    stump = LeafRank(max_depth=1, min_samples_leaf=1).fit(X, y)
    sides = stump.goes_left(np.array([[np.nan], [3.0], [-3.0]]))
    assert sides.tolist() == [True, True, False]


def test_missing_values_unseen_in_training_follow_the_heavier_side():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 1))
    y = (X[:, 0] > 1.0).astype(int)
    stump = LeafRank(max_depth=1, min_samples_leaf=1).fit(X, y)
    # the split is x <= ~1: the inner left child holds ~84% of the weight, and
    # it is the worse side of the rule
    assert stump.tree_.missing_left[0]
    assert not stump.goes_left(np.array([[np.nan]]))[0]
    assert not stump.goes_left(np.array([[0.0]]))[0]


# ----------------------------------------------------------------------
# trees as arrays, routing
# ----------------------------------------------------------------------
def _data(seed=0, n=3000, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (rng.random(n) < 1 / (1 + np.exp(-X[:, 0] + X[:, 1] ** 2 - 1))).astype(int)
    return X, y


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"max_features_node": 2},
        {"leafrank": LeafRank(max_depth=2, min_samples_leaf=5, max_features=1)},
        {"leafrank": LeafRank(criterion="youden", min_samples_leaf=10)},
        {"max_depth": None, "min_samples_split": 20},
    ],
)
def test_compiled_routing_equals_rule_by_rule_traversal(params):
    X, y = _data()
    X_new = np.vstack([X[:500], np.random.default_rng(1).normal(size=(2000, 5))])
    X_new[::11, 2] = np.nan
    tree = TreeRank(random_state=0, **params).fit(X, y)
    expected = tree.tree_.leaf_rank[tree.tree_.apply_node_by_node(X_new)]
    np.testing.assert_array_equal(tree.apply(X_new), expected)


def test_growth_partition_gives_the_leaves_of_training_rows():
    """The leaves read from the final partition are those of routing."""
    X, y = _data(2)
    mapper = BinMapper().fit(X)
    codes = mapper.transform(X)
    weights = np.random.default_rng(0).poisson(1.0, size=X.shape[0]).astype(float)
    rows = np.flatnonzero(weights > 0)
    params = GrowthParams(
        max_depth=6, min_samples_split=20, rule_max_depth=3, min_samples_leaf=10
    )
    grown = grow_ranking_tree(codes, y, weights, rows, mapper, params, seed=3)
    assert np.all(grown.leaf_rank_of_row[rows] >= 0)
    assert np.all(grown.leaf_rank_of_row[weights == 0] == -1)
    from treerank.tree._growing import structure_from_grown

    structure = structure_from_grown(grown, X.shape[1], 7)
    routed = np.full(X.shape[0], -1, dtype=np.int32)
    route_binned(
        structure.graph(),
        structure.rules.category_sets,
        codes,
        np.arange(X.shape[0]),
        routed,
    )
    np.testing.assert_array_equal(routed[rows], grown.leaf_rank_of_row[rows])
    np.testing.assert_array_equal(routed, structure.apply_rank(X))
    # counts of each leaf are those of the rows it holds
    leaf_pos = np.bincount(routed[rows], weights=(weights * y)[rows])
    np.testing.assert_allclose(leaf_pos, structure.n_pos[structure.leaves])


def test_forest_is_the_same_for_any_n_jobs_and_batch():
    X, y = _data(3, n=2000)
    X_new = np.random.default_rng(5).normal(size=(3000, 5))
    forests = [
        RankingForest(n_estimators=12, n_jobs=n_jobs, random_state=0).fit(X, y)
        for n_jobs in (1, 2)
    ]
    scores = [f.decision_function(X_new) for f in forests]
    np.testing.assert_array_equal(scores[0], scores[1])
    # a row's score does not depend on the batch it comes in
    single = np.concatenate(
        [forests[0].decision_function(X_new[i : i + 1]) for i in range(50)]
    )
    np.testing.assert_array_equal(single, scores[0][:50])


def test_feature_draws_per_split_are_bounded():
    """FR2: each inner split is chosen among at most max_features features."""
    X, y = _data(4, n=2000, d=8)
    tree = TreeRank(
        leafrank=LeafRank(max_depth=1, min_samples_leaf=5, max_features=1),
        max_depth=8,
        min_samples_split=10,
        random_state=0,
    ).fit(X, y)
    used = {int(rule.feature[0]) for rule in tree.tree_.leafranks if rule is not None}
    assert len(used) > 3  # random single features, not always the best one


# ----------------------------------------------------------------------
# rules of large nodes fitted on a sample (LeafRank node_subsample)
# ----------------------------------------------------------------------
def test_class_sample_draws_one_row_per_stratum_of_each_class():
    from treerank._engine._random import new_state
    from treerank._engine._rule_growth import _class_sample

    rng = np.random.default_rng(0)
    y = (rng.random(5000) < 0.1).astype(np.uint8)
    rows = np.sort(rng.choice(20_000, 5000, replace=False)).astype(np.int64)
    full_y = np.zeros(20_000, dtype=np.uint8)
    full_y[rows] = y
    sub = np.empty(1000, dtype=np.int64)
    m = _class_sample(rows, 0, 5000, full_y, 400, 600, new_state(3), sub)
    sample = sub[:m]
    assert m == 1000
    assert np.all(np.diff(sample) > 0)  # distinct, in segment order
    assert np.isin(sample, rows).all()
    assert (full_y[sample] == 1).sum() == 400
    # stratum i of a class holds exactly the i-th drawn row of the class
    for label, quota in ((1, 400), (0, 600)):
        members = rows[full_y[rows] == label]
        rank = np.searchsorted(members, sample[full_y[sample] == label])
        bounds = (np.arange(quota + 1) * members.shape[0]) // quota
        stratum = np.searchsorted(bounds, rank, side="right") - 1
        np.testing.assert_array_equal(stratum, np.arange(quota))


@pytest.mark.parametrize("missing", [False, True])
def test_rules_fitted_on_a_sample_split_all_the_rows(missing):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(6000, 4))
    y = (X[:, 0] + X[:, 1] ** 2 + rng.normal(size=6000) > 1).astype(int)
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan
    leafrank = LeafRank(max_depth=4, min_samples_leaf=10, node_subsample=500)
    tree = TreeRank(leafrank=leafrank, random_state=0).fit(X, y)
    whole = TreeRank(
        leafrank=LeafRank(max_depth=4, min_samples_leaf=10, node_subsample=None),
        random_state=0,
    ).fit(X, y)
    assert tree.tree_.node_count > 3
    # the growth's partition is the one the rules give: each leaf's training
    # counts are those of the rows routed to it
    leaves = tree.tree_.apply_rank(X)
    structure = tree.tree_
    np.testing.assert_array_equal(
        np.bincount(leaves, weights=y, minlength=structure.n_leaves),
        structure.n_pos[structure.leaves],
    )
    np.testing.assert_array_equal(
        np.bincount(leaves, weights=1 - y, minlength=structure.n_leaves),
        structure.n_neg[structure.leaves],
    )
    # a split's gain is its local TPR - FPR on all the node's rows
    gain = (
        structure.n_pos[1] / structure.n_pos[0]
        - structure.n_neg[1] / structure.n_neg[0]
    )
    assert tree.tree_.leafranks[0].gain_ == pytest.approx(gain, abs=1e-12)
    # a rule fitted on a sample ranks almost as well
    X_test = rng.normal(size=(20_000, 4))
    y_test = (X_test[:, 0] + X_test[:, 1] ** 2 + rng.normal(size=20_000) > 1).astype(
        int
    )
    assert tree.score(X_test, y_test) > whole.score(X_test, y_test) - 0.03


@pytest.mark.parametrize("max_fit_rows", [None, 150])
def test_rules_grown_on_node_local_copies_are_the_rules_of_the_rows(
    monkeypatch, max_fit_rows
):
    # the compiled growth fits each rule on a node-local copy of its rows'
    # codes, classes and weights; the growth with no copy (rules read the
    # shared arrays through the row indices) grows the same tree
    from treerank._engine import _tree_growth

    rng = np.random.default_rng(4)
    X = rng.normal(size=(500, 5))
    X[:, 4] = rng.integers(0, 6, size=500)
    X[rng.random(X.shape) < 0.05] = np.nan
    y = (np.nan_to_num(X[:, 0]) + rng.normal(size=500) > 0).astype(int)
    mapper = BinMapper(categorical=[False] * 4 + [True]).fit(X)
    codes = mapper.transform(X)
    weights = rng.poisson(1.0, size=500) * rng.random(500)
    rows = np.flatnonzero(weights > 0)
    params = GrowthParams(
        min_samples_split=20,
        rule_max_depth=3,
        min_samples_leaf=5,
        rule_max_features=2,
        max_fit_rows=max_fit_rows,
    )
    compiled = grow_ranking_tree(codes, y, weights, rows, mapper, params, seed=7)
    monkeypatch.setattr(_tree_growth, "COPY_MAX_FEATURES", 0)
    shared = grow_ranking_tree(codes, y, weights, rows, mapper, params, seed=7)
    assert compiled.children_left.shape[0] > 5
    for name in ("children_left", "n_pos", "n_neg", "rule_start", "gain"):
        np.testing.assert_array_equal(getattr(compiled, name), getattr(shared, name))
    for name in ("feature", "threshold", "left_leaf", "category", "improvement"):
        np.testing.assert_array_equal(
            getattr(compiled.rules, name), getattr(shared.rules, name)
        )
    np.testing.assert_array_equal(compiled.leaf_rank_of_row, shared.leaf_rank_of_row)


def test_nodes_no_larger_than_node_subsample_give_the_same_tree():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(800, 3))
    y = (X[:, 0] + rng.normal(size=800) > 0).astype(int)
    trees = [
        TreeRank(
            leafrank=LeafRank(max_depth=3, min_samples_leaf=5, node_subsample=m),
            random_state=0,
        ).fit(X, y)
        for m in (None, 800, 10**6)
    ]
    for other in trees[1:]:
        np.testing.assert_array_equal(
            other.decision_function(X), trees[0].decision_function(X)
        )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from([-np.inf, -2.5, -1.0, 0.0, 0.5, 1.0, 3.0, np.inf]),
        min_size=0,
        max_size=80,
    )
)
def test_stable_argsort_is_numpy_stable_argsort(values):
    from treerank._engine._sorting import stable_argsort

    keys = np.array(values, dtype=np.float64)
    np.testing.assert_array_equal(
        stable_argsort(np.concatenate([keys, [7.0, -7.0]]), keys.shape[0]),
        np.argsort(keys, kind="stable"),
    )


# ----------------------------------------------------------------------
# random thresholds (splitter="random")
# ----------------------------------------------------------------------
def _two_valued_problem(seed):
    """Features of two values each: a single threshold per feature and node."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 160))
    d = int(rng.integers(1, 5))
    X = rng.integers(0, 2, size=(n, d)) * rng.integers(1, 4, size=d).astype(float)
    logit = X[:, 0] - 0.7 * X[:, -1] + 0.3
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    y[:2] = [0, 1]
    w = rng.integers(6, 65, n) / 64
    w[:2] = 1.0
    return X, y, w


@pytest.mark.parametrize("criterion", ["gini", "entropy", "youden"])
@pytest.mark.parametrize("seed", range(10))
def test_random_thresholds_are_the_exhaustive_rule_when_each_feature_has_two_values(
    seed, criterion
):
    """A feature of two values has one threshold: drawn or searched, the same.

    Every feature is scored (``max_features=None``), so the random splitter
    meets the same candidates as the brute-force search of the best rule.
    """
    X, y, w = _two_valued_problem(seed)
    rng = np.random.default_rng(seed + 100)
    depth = int(rng.integers(1, 4))
    min_leaf = int(rng.integers(1, 6))
    leafrank = LeafRank(
        max_depth=depth,
        min_samples_leaf=min_leaf,
        criterion=criterion,
        splitter="random",
        random_state=seed,
    ).fit(X, y, sample_weight=w)
    expected, gain = _exhaustive_rule(X, y, w, depth, min_leaf, criterion)
    np.testing.assert_array_equal(leafrank.goes_left(X), expected)
    assert leafrank.gain_ == pytest.approx(gain, abs=1e-12)


def test_random_thresholds_are_uniform_over_the_node_range():
    """Over seeds, each of the 7 thresholds of 8 values is drawn about as often."""
    from scipy import stats

    rng = np.random.default_rng(0)
    X = np.repeat(np.arange(8.0), 20)[:, None]
    y = rng.integers(0, 2, X.shape[0])
    y[:2] = [0, 1]
    drawn = [
        LeafRank(max_depth=1, min_samples_leaf=1, splitter="random", random_state=s)
        .fit(X, y)
        .tree_.threshold[0]
        for s in range(700)
    ]
    values, counts = np.unique(drawn, return_counts=True)
    np.testing.assert_array_equal(values, np.arange(7) + 0.5)
    assert stats.chisquare(counts).pvalue > 1e-3
    best = LeafRank(max_depth=1, min_samples_leaf=1).fit(X, y).tree_.threshold[0]
    assert np.unique(
        [
            LeafRank(max_depth=1, min_samples_leaf=1, random_state=s)
            .fit(X, y)
            .tree_.threshold[0]
            for s in range(5)
        ]
    ).tolist() == [best]


def test_random_thresholds_include_present_against_missing():
    """With missing values, "every present value left" is one of the draws,
    and missing values go to the better side of the drawn threshold."""
    X = np.array([0.0] * 30 + [1.0] * 30 + [np.nan] * 30)[:, None]
    y = np.array([0] * 30 + [0] * 30 + [1] * 30)
    y[[0, 30]] = 1
    splits = set()
    for seed in range(40):
        rule = LeafRank(
            max_depth=1, min_samples_leaf=1, splitter="random", random_state=seed
        ).fit(X, y)
        left = rule.goes_left(X)
        splits.add((bool(left[0]), bool(left[30]), bool(left[60])))
    # bin 0 | bin 1 + missing, or present | missing: missing rows (positives)
    # are always on the side the merge keeps (left), with what goes with them
    assert splits == {(False, True, True), (False, False, True)}


def test_random_splitter_is_validated():
    X = np.arange(10.0).reshape(-1, 1)
    y = np.array([0, 1] * 5)
    with pytest.raises(ValueError, match="'splitter' parameter of LeafRank"):
        LeafRank(splitter="middle").fit(X, y)


def test_random_splitter_in_a_forest_is_reproducible_and_differs_from_best():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    y = (X[:, 0] + X[:, 1] ** 2 + rng.normal(size=600) > 1).astype(int)
    make = lambda splitter: RankingForest(  # noqa: E731
        n_estimators=10,
        leafrank=LeafRank(max_depth=4, min_samples_leaf=5, splitter=splitter),
        random_state=0,
    )
    a = make("random").fit(X, y).decision_function(X)
    b = make("random").fit(X, y).decision_function(X)
    c = make("best").fit(X, y).decision_function(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
