"""Per-row explanations (issue 28): Shapley values against brute force.

The oracle enumerates every coalition of features, builds the hybrid rows in
the input space (arrays, DataFrames with categorical columns, sparse
matrices) and scores them with the model's own ``decision_function``; the
fast algorithms must agree with it to 1e-10. The algorithms are checked on
the scale of ``decision_function`` (``scale="decision"``); the calibrated
scale, which the explanations report by default, is checked in
tests/test_inspection_scale.py.
"""

import functools
import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from treerank import LeafRank, LinearLeafRank, RankingForest, TreeRank
from treerank.inspection import Explanation
from treerank.inspection import shapley_values as _shapley_values
from treerank.inspection._enumeration import shapley_from_coalitions
from treerank.inspection._tree_sum import tree_leaf_values, tree_sum

TOL = 1e-10
shapley_values = functools.partial(_shapley_values, scale="decision")


# ----------------------------------------------------------------------
# oracles
# ----------------------------------------------------------------------
def _total(explanation):
    """Base value + values (+ the proxy's difference, for a median's proxy)."""
    total = explanation.base_value + explanation.values.sum(axis=1)
    if explanation.proxy_difference is not None:
        total = total + explanation.proxy_difference
    return total


def _shapley(v, d):
    """Shapley values of a game given as a dict {sorted tuple: value}."""
    phi = np.zeros(d)
    for j in range(d):
        for S, value in v.items():
            if j in S:
                continue
            with_j = tuple(sorted((*S, j)))
            weight = math.factorial(len(S)) * math.factorial(d - len(S) - 1)
            phi[j] += weight / math.factorial(d) * (v[with_j] - value)
    return phi


def _coalitions(d):
    return [S for r in range(d + 1) for S in itertools.combinations(range(d), r)]


def _hybrids(x, Z, S):
    """Rows taking the features of S from x, the others from Z (input space)."""
    if isinstance(Z, pd.DataFrame):
        columns = {}
        for j, name in enumerate(Z.columns):
            source = x if j in S else Z
            column = source[name] if j not in S else x[name].iloc[[0] * len(Z)]
            columns[name] = column.reset_index(drop=True)
        return pd.DataFrame(columns)
    if sparse.issparse(Z):
        dense = Z.toarray()
        dense[:, list(S)] = x.toarray()[0, list(S)]
        return sparse.csr_matrix(dense)
    H = np.array(Z, dtype=float)
    H[:, list(S)] = x[list(S)]
    return H


def _row(X, i):
    if isinstance(X, pd.DataFrame):
        return X.iloc[[i]]
    if sparse.issparse(X):
        return X[[i]]
    return X[i]


def brute_force_interventional(estimator, X, Z):
    """Exact interventional values of decision_function, from the definition."""
    d = X.shape[1]
    out = np.zeros((X.shape[0], d))
    for i in range(X.shape[0]):
        x = _row(X, i)
        v = {
            S: float(estimator.decision_function(_hybrids(x, Z, S)).mean())
            for S in _coalitions(d)
        }
        out[i] = _shapley(v, d)
    return out


def _stump_feature(rule):
    """The feature of a single-split rule."""
    return int(next(f for f in np.asarray(rule.feature) if f >= 0))


def brute_force_path_dependent(estimator, X):
    """Exact path-dependent values by recursion over the master trees."""
    values, constant = tree_leaf_values(estimator)
    trees = estimator.estimators_ if hasattr(estimator, "estimators_") else [estimator]
    d = X.shape[1]

    def expected(tree, b, x, S, node):
        s = tree.tree_
        if s.children_left[node] < 0:
            return values[b][s.leaf_rank[node]]
        left, right = s.children_left[node], s.children_right[node]
        rule = s.leafranks[node]
        if _stump_feature(rule) in S:
            goes_left = bool(rule.goes_left(x[None, :])[0])
            return expected(tree, b, x, S, left if goes_left else right)
        mass = s.n_pos + s.n_neg
        return (
            mass[left] * expected(tree, b, x, S, left)
            + mass[right] * expected(tree, b, x, S, right)
        ) / mass[node]

    def game(x, S):
        return constant + sum(
            expected(tree, b, x, S, 0) for b, tree in enumerate(trees)
        )

    out = np.zeros((X.shape[0], d))
    base = None
    for i in range(X.shape[0]):
        v = {S: game(X[i], S) for S in _coalitions(d)}
        out[i] = _shapley(v, d)
        base = v[()]
    return out, base


# ----------------------------------------------------------------------
# data
# ----------------------------------------------------------------------
def _problem(seed=0, n=500, d=5, missing=0.08):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, d))
    y = X[:, 0] - 0.7 * X[:, 1] + 0.5 * X[:, 2] * X[:, 3] + rng.normal(size=n) > 0
    X[rng.rand(n, d) < missing] = np.nan
    return X, y.astype(int)


@pytest.fixture(scope="module")
def problem():
    return _problem()


def _graded(X, y, seed=0):
    rng = np.random.RandomState(seed)
    return y + (np.nan_to_num(X[:, 2]) > rng.normal(size=X.shape[0])).astype(int)


LEAF_SCORES = ["rank", "rate"]  # how a forest's trees score their leaves


def _forest(aggregation, leaf_scores, n_estimators=6, **params):
    return RankingForest(
        n_estimators=n_estimators,
        aggregation=aggregation,
        leaf_scores=leaf_scores,
        random_state=0,
        **params,
    )


ADDITIVE = {
    "tree": lambda: TreeRank(random_state=0),
    "tree-pruned": lambda: TreeRank(ccp_alpha=0.002, random_state=0),
    "forest-mean": lambda: _forest("mean", "rank"),
    "forest-mean-rate": lambda: _forest("mean", "rate"),
    "forest-borda": lambda: _forest("borda", "rank", n_estimators=5),
    "forest-borda-rate": lambda: _forest("borda", "rate", n_estimators=5),
}


# ----------------------------------------------------------------------
# exactness
# ----------------------------------------------------------------------
def test_tree_leaf_values_are_the_forest_leaf_values(problem):
    """A rate-scored forest's values are its rates, not (K - r) / K."""
    X, y = problem
    for name in ("forest-mean", "forest-mean-rate"):
        model = ADDITIVE[name]().fit(X, y)
        values, constant = tree_leaf_values(model)
        n_trees = len(model.estimators_)
        for b, tree_values in enumerate(values):
            np.testing.assert_array_equal(tree_values, model.leaf_values_[b] / n_trees)
        K = model.estimators_[0].tree_.n_leaves
        ranks = (K - np.arange(K)) / K
        assert np.array_equal(model.leaf_values_[0], ranks) == (name == "forest-mean")
        assert constant == -model._calibration.threshold_


@pytest.mark.parametrize("name", list(ADDITIVE))
def test_tree_algorithm_is_the_brute_force(problem, name):
    X, y = problem
    model = ADDITIVE[name]().fit(X, y)
    rows, background = X[:6], X[100:107]
    explanation = shapley_values(model, rows, background=background)
    assert explanation.algorithm == "tree"
    expected = brute_force_interventional(model, rows, background)
    np.testing.assert_allclose(explanation.values, expected, rtol=0, atol=TOL)
    assert explanation.base_value == pytest.approx(
        model.decision_function(background).mean(), abs=TOL
    )


@pytest.mark.parametrize("leaf_scores", LEAF_SCORES)
def test_tree_algorithm_on_graded_forests(problem, leaf_scores):
    X, y = problem
    grades = _graded(X, y)
    model = _forest("mean", leaf_scores, n_estimators=5).fit(X, grades)
    assert model.leaf_scores_ == leaf_scores
    rows, background = X[:5], X[200:206]
    explanation = shapley_values(model, rows, background=background)
    expected = brute_force_interventional(model, rows, background)
    np.testing.assert_allclose(explanation.values, expected, rtol=0, atol=TOL)


@pytest.mark.parametrize("name", ["tree", "forest-mean", "forest-mean-rate"])
def test_tree_algorithm_on_categorical_frames(name):
    rng = np.random.RandomState(1)
    n = 500
    frame = pd.DataFrame(
        {
            "debt": rng.rand(n),
            "purpose": pd.Categorical(rng.choice(["car", "home", "study", "other"], n)),
            "age": rng.randint(18, 70, n).astype(float),
            "income": rng.normal(size=n),
        }
    )
    frame.loc[rng.rand(n) < 0.1, "income"] = np.nan
    frame.loc[rng.rand(n) < 0.05, "purpose"] = np.nan
    y = ((frame.debt < 0.5) ^ (frame.purpose == "home") ^ (rng.rand(n) < 0.15)).astype(
        int
    )
    model = ADDITIVE[name]().fit(frame, y)
    rows, background = frame.iloc[:5], frame.iloc[300:306]
    explanation = shapley_values(model, rows, background=background)
    expected = brute_force_interventional(model, rows, background)
    np.testing.assert_allclose(explanation.values, expected, rtol=0, atol=TOL)
    assert explanation.feature_names == ["debt", "purpose", "age", "income"]


@pytest.mark.parametrize("leaf_scores", LEAF_SCORES)
def test_tree_algorithm_on_sparse_input(leaf_scores):
    rng = np.random.RandomState(2)
    X = rng.normal(size=(400, 5))
    X[rng.rand(400, 5) > 0.4] = 0.0
    y = (X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=400) > 0).astype(int)
    model = _forest("mean", leaf_scores, n_estimators=4)
    model.fit(sparse.csr_matrix(X), y)
    rows, background = sparse.csr_matrix(X[:5]), sparse.csc_matrix(X[100:106])
    explanation = shapley_values(model, rows, background=background)
    dense = shapley_values(model, X[:5], background=X[100:106])
    np.testing.assert_array_equal(explanation.values, dense.values)
    expected = brute_force_interventional(model, rows, background)
    np.testing.assert_allclose(explanation.values, expected, rtol=0, atol=TOL)


STUMPS = {
    "tree": lambda: TreeRank(leafrank=LeafRank(max_depth=1), random_state=0),
    **{
        f"forest-mean-{kind}": lambda kind=kind: _forest(
            "mean",
            kind,
            n_estimators=4,
            leafrank=LeafRank(max_depth=1, min_samples_leaf=5),
            max_features=None,
        )
        for kind in LEAF_SCORES
    },
}


@pytest.mark.parametrize("name", list(STUMPS))
def test_path_dependent_is_the_brute_force(problem, name):
    X, y = problem
    model = STUMPS[name]().fit(X, y)
    rows = X[:6]
    explanation = shapley_values(
        model, rows, feature_perturbation="tree_path_dependent"
    )
    expected, base = brute_force_path_dependent(model, rows)
    np.testing.assert_allclose(explanation.values, expected, rtol=0, atol=TOL)
    assert explanation.base_value == pytest.approx(base, abs=TOL)
    np.testing.assert_allclose(
        explanation.base_value + explanation.values.sum(axis=1),
        model.decision_function(rows),
        rtol=0,
        atol=TOL,
    )


def test_path_dependent_is_refused_on_rule_graphs(problem):
    X, y = problem
    model = TreeRank(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="decision graphs are trees"):
        shapley_values(model, X[:2], feature_perturbation="tree_path_dependent")
    stumps = STUMPS["tree"]().fit(X, y)
    with pytest.raises(ValueError, match="takes no background"):
        shapley_values(
            stumps,
            X[:2],
            background=X[:5],
            feature_perturbation="tree_path_dependent",
        )


def test_exact_algorithm_is_the_brute_force_for_the_median(problem):
    X, y = problem
    model = RankingForest(n_estimators=6, random_state=0).fit(X, y)
    rows, background = X[:4], X[100:106]
    explanation = shapley_values(model, rows, background=background, algorithm="exact")
    expected = brute_force_interventional(model, rows, background)
    np.testing.assert_allclose(explanation.values, expected, rtol=0, atol=TOL)


# ----------------------------------------------------------------------
# background rows drawn per tree
# ----------------------------------------------------------------------
def brute_force_per_tree(model_sum, x, Z, rows):
    """Shapley values of the game v(S) = c + sum_b mean_{z in Z[rows[b]]} f_b(x_S, z).

    ``model_sum`` is a TreeSum; each tree b is averaged over its own rows.
    """
    d = x.shape[0]
    n_trees = model_sum.n_trees
    v = {}
    for S in _coalitions(d):
        H = np.array(Z, dtype=float)
        H[:, list(S)] = x[list(S)]
        leaf_values = model_sum.leaf_values(H)  # (n_background, n_trees)
        v[S] = model_sum.constant + sum(
            leaf_values[rows[b], b].mean() for b in range(n_trees)
        )
    return _shapley(v, d), v[()]


def _single_tree_pair_values(model_sum, b, x, z):
    """Brute-force values of tree b alone against one background row."""
    d = x.shape[0]
    v = {}
    for S in _coalitions(d):
        h = np.array(z, dtype=float)
        h[list(S)] = x[list(S)]
        v[S] = model_sum.leaf_values(h[None, :])[0, b]
    return _shapley(v, d)


@pytest.mark.parametrize(
    ("name", "proxy"),
    [
        ("forest-mean", False),
        ("forest-mean-rate", False),
        ("forest-borda-rate", False),
        ("forest-median-rate", True),
    ],
)
def test_per_tree_background_is_the_brute_force(problem, name, proxy):
    """Each tree against its own drawn rows: exact values of that game."""
    from treerank.inspection._shapley import _interventional_tree, draw_tree_rows

    X, y = problem
    if name == "forest-median-rate":
        model = _forest("median", "rate", n_estimators=5).fit(X, y)
    else:
        model = ADDITIVE[name]().fit(X, y)
    model_sum = tree_sum(model, proxy=proxy)
    rows_x, Z = X[:4], X[100:112]
    values, spread, base = _interventional_tree(
        model_sum, rows_x, Z, 3, np.random.RandomState(7), None
    )
    rows = draw_tree_rows(np.random.RandomState(7), Z.shape[0], 3, model_sum.n_trees)
    assert rows.shape == (model_sum.n_trees, 3)
    assert len({tuple(r) for r in rows}) > 1  # the trees have rows of their own
    for i, x in enumerate(rows_x):
        expected, expected_base = brute_force_per_tree(model_sum, x, Z, rows)
        np.testing.assert_allclose(values[i], expected, rtol=0, atol=TOL)
        assert base == pytest.approx(expected_base, abs=TOL)
    np.testing.assert_allclose(
        base + values.sum(axis=1), model_sum.scores(rows_x), rtol=0, atol=TOL
    )
    # the standard errors: the spread of each tree's values over its rows
    x = rows_x[0]
    variance = np.zeros(X.shape[1])
    for b in range(model_sum.n_trees):
        single = np.array(
            [_single_tree_pair_values(model_sum, b, x, Z[j]) for j in rows[b]]
        )
        variance += single.var(axis=0, ddof=1) / rows.shape[1]
    np.testing.assert_allclose(spread[0], np.sqrt(variance), rtol=1e-7, atol=1e-12)


def test_background_per_tree_choices(problem):
    from treerank.inspection._shapley import WALKS_PER_ROW, rows_per_tree

    X, y = problem
    assert rows_per_tree("auto", 1000, 100) == 2
    assert rows_per_tree("auto", 1000, 1) == WALKS_PER_ROW
    assert rows_per_tree("auto", 1000, 7) == -(-WALKS_PER_ROW // 7)
    assert rows_per_tree("auto", 30, 1) is None  # fewer rows: all of them
    assert rows_per_tree("all", 1000, 100) is None
    assert rows_per_tree(5, 1000, 100) == 5
    model = ADDITIVE["forest-mean-rate"]().fit(X, y)
    drawn = shapley_values(
        model, X[:5], background=X[:300], background_per_tree=4, random_state=0
    )
    assert drawn.background_per_tree == 4 and drawn.n_background == 300
    shared = shapley_values(
        model, X[:5], background=X[:300], background_per_tree="all", random_state=0
    )
    assert shared.background_per_tree == 300
    # the same expectation: the drawn values are close to the shared ones
    # (within a few of their standard errors)
    z = (drawn.values - shared.values) / np.maximum(drawn.background_std_errors, 1e-12)
    assert np.sqrt(np.mean(z[drawn.background_std_errors > 0] ** 2)) < 2.5
    # a row's values do not depend on the other rows explained with it
    alone = shapley_values(
        model, X[3:4], background=X[:300], background_per_tree=4, random_state=0
    )
    np.testing.assert_array_equal(alone.values, drawn.values[3:4])
    for bad in (1, 0, "some", 2.5, True):
        with pytest.raises(ValueError, match="background_per_tree must be"):
            shapley_values(model, X[:2], background=X, background_per_tree=bad)


# ----------------------------------------------------------------------
# the median forest: its mean proxy
# ----------------------------------------------------------------------
@pytest.mark.parametrize("leaf_scores", LEAF_SCORES)
def test_mean_proxy_is_the_mean_forest_of_the_same_trees(problem, leaf_scores):
    """The median's proxy values are the mean forest's, grown with the same seed."""
    from scipy.stats import kendalltau

    X, y = problem
    median = _forest("median", leaf_scores).fit(X, y)
    mean = _forest("mean", leaf_scores).fit(X, y)
    for a, b in zip(median.leaf_values_, mean.leaf_values_):
        np.testing.assert_array_equal(a, b)  # the same trees, the same leaves
    rows = X[:40]
    options = {"background": X[100:400], "random_state": 0}
    proxy = shapley_values(median, rows, **options)
    exact = shapley_values(mean, rows, **options)
    assert proxy.algorithm == "mean_proxy" and exact.algorithm == "tree"
    assert proxy.background_per_tree == exact.background_per_tree == 34
    # the proxy's values are the mean forest's, each row's put on the median's
    # scale by one non-negative factor
    factor = proxy.values.sum(axis=1) / exact.values.sum(axis=1)
    assert np.all(factor >= 0)
    np.testing.assert_allclose(
        proxy.values, factor[:, None] * exact.values, rtol=0, atol=1e-9
    )
    # the proxy's score is the mean leaf value: the mean forest's before its
    # calibration shift
    shift = mean._calibration.threshold_
    np.testing.assert_allclose(
        proxy.proxy_scores, mean.decision_function(rows) + shift, rtol=0, atol=1e-12
    )
    # the values, the base and the proxy's difference add up to the median's score
    np.testing.assert_array_equal(proxy.scores, median.decision_function(rows))
    np.testing.assert_allclose(_total(proxy), proxy.scores, rtol=0, atol=1e-9)
    tau = kendalltau(median.decision_function(rows), proxy.proxy_scores).statistic
    assert proxy.proxy_rank_agreement == pytest.approx(tau)
    assert proxy.proxy_rank_agreement > 0.8
    assert proxy[[0, 1]].proxy_rank_agreement == proxy.proxy_rank_agreement
    assert shapley_values(median, rows[:1], **options).proxy_rank_agreement is None


def test_mean_proxy_refusals(problem):
    X, y = problem
    mean = ADDITIVE["forest-mean"]().fit(X, y)
    median = RankingForest(n_estimators=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="explained exactly by algorithm='tree'"):
        shapley_values(mean, X[:2], background=X, algorithm="mean_proxy")
    with pytest.raises(ValueError, match="algorithm='mean_proxy'"):
        shapley_values(median, X[:2], background=X, algorithm="tree")
    linear = TreeRank(leafrank=LinearLeafRank(), max_depth=2, random_state=0)
    linear.fit(np.nan_to_num(X), y)
    with pytest.raises(ValueError, match="no decision graph"):
        shapley_values(linear, X[:2], background=X, algorithm="mean_proxy")


# ----------------------------------------------------------------------
# the median forest: estimates within their stated errors
# ----------------------------------------------------------------------
def test_median_estimates_meet_their_standard_errors(problem):
    """z-scores of the permutation estimates against the exact values.

    The estimates are means of independent samples, so (estimate - exact) /
    std_error is about standard normal; checked on 40 rows x 5 features.
    """
    X, y = problem
    model = RankingForest(n_estimators=10, random_state=0).fit(X, y)
    rows, background = X[:40], X[100:130]
    exact = shapley_values(model, rows, background=background, algorithm="exact")
    estimate = shapley_values(
        model,
        rows,
        background=background,
        algorithm="permutation",
        n_permutations=32,
        random_state=0,
    )
    assert estimate.algorithm == "permutation"
    z = (estimate.values - exact.values) / estimate.std_errors
    assert np.all(np.isfinite(z))
    assert np.sqrt(np.mean(z**2)) < 1.25
    assert np.mean(np.abs(z) > 3) <= 0.01
    # efficiency is exact, not only in expectation
    np.testing.assert_allclose(
        estimate.base_value + estimate.values.sum(axis=1),
        model.decision_function(rows),
        rtol=0,
        atol=1e-9,
    )


def test_graded_treerank_is_explained_as_its_median(problem):
    X, y = problem
    model = TreeRank(random_state=0).fit(X, _graded(X, y))
    rows, background = X[:3], X[100:105]
    explanation = shapley_values(model, rows, background=background, algorithm="exact")
    expected = brute_force_interventional(model, rows, background)
    np.testing.assert_allclose(explanation.values, expected, rtol=0, atol=TOL)
    estimate = shapley_values(
        model, rows, background=background, algorithm="permutation", random_state=0
    )
    assert estimate.algorithm == "permutation"
    proxy = shapley_values(model, rows, background=background)
    assert proxy.algorithm == "mean_proxy"
    np.testing.assert_allclose(_total(proxy), proxy.scores, rtol=0, atol=TOL)
    np.testing.assert_array_equal(proxy.scores, model.decision_function(rows))


def test_permutation_estimate_of_a_row_does_not_depend_on_the_batch(problem):
    X, y = problem
    model = RankingForest(n_estimators=4, random_state=0).fit(X, y)
    options = {
        "background": X[100:120],
        "algorithm": "permutation",
        "n_permutations": 4,
        "random_state": 3,
    }
    whole = shapley_values(model, X[:6], **options)
    alone = shapley_values(model, X[4:6], **options)
    np.testing.assert_array_equal(whole.values[4:], alone.values)
    np.testing.assert_array_equal(whole.std_errors[4:], alone.std_errors)


# ----------------------------------------------------------------------
# the axioms
# ----------------------------------------------------------------------
ALL_METHODS = [
    ("tree", "tree", {}),
    ("forest-mean", "tree", {}),
    ("forest-mean", "tree", {"background_per_tree": 2}),
    ("forest-median", "mean_proxy", {"background_per_tree": 3}),
    ("forest-median", "permutation", {"n_permutations": 4}),
    ("forest-median", "exact", {}),
    ("tree-linear", "permutation", {"n_permutations": 4}),
]


def _model(name):
    if name == "forest-median":
        return RankingForest(n_estimators=4, random_state=0)
    if name == "tree-linear":
        return TreeRank(leafrank=LinearLeafRank(), max_depth=3, random_state=0)
    return ADDITIVE[name]()


@pytest.mark.parametrize(("name", "algorithm", "options"), ALL_METHODS)
def test_efficiency_on_every_row(problem, name, algorithm, options):
    X, y = problem
    if name == "tree-linear":
        X = np.nan_to_num(X)
    model = _model(name).fit(X, y)
    rows = X[:30]
    explanation = shapley_values(
        model,
        rows,
        background=X[200:212],
        algorithm=algorithm,
        random_state=0,
        **options,
    )
    np.testing.assert_allclose(
        _total(explanation), explanation.scores, rtol=0, atol=1e-9
    )
    np.testing.assert_array_equal(explanation.scores, model.decision_function(rows))


@pytest.mark.parametrize(("name", "algorithm", "options"), ALL_METHODS[:6])
def test_a_feature_never_split_on_gets_zero(problem, name, algorithm, options):
    X, y = problem
    X = np.column_stack([X[:, :3], np.ones(X.shape[0])])  # constant: never split
    model = _model(name).fit(X, y)
    explanation = shapley_values(
        model,
        X[:10],
        background=X[100:110],
        algorithm=algorithm,
        random_state=0,
        **options,
    )
    assert np.all(explanation.values[:, 3] == 0.0)
    assert np.any(explanation.values[:, :3] != 0.0)


def test_a_feature_never_split_on_gets_zero_path_dependent(problem):
    X, y = problem
    X = np.column_stack([X[:, :3], np.zeros(X.shape[0])])
    model = STUMPS["forest-mean-rank"]().fit(X, y)
    explanation = shapley_values(
        model, X[:10], feature_perturbation="tree_path_dependent"
    )
    assert np.all(explanation.values[:, 3] == 0.0)


@pytest.mark.parametrize(
    ("name", "algorithm"),
    [("tree", "tree"), ("forest-mean", "tree"), ("forest-median", "exact")],
)
def test_symmetry_on_a_symmetric_design(name, algorithm):
    """y = x0 AND x1 on two fair coins: the two features play the same role."""
    grid = np.array(list(itertools.product([0.0, 1.0], repeat=2)))
    X = np.repeat(grid, 50, axis=0)
    y = (X[:, 0] * X[:, 1]).astype(int)
    model = _model(name).fit(X, y)
    explanation = shapley_values(model, grid, background=grid, algorithm=algorithm)
    for i in (0, 3):  # (0, 0) and (1, 1): symmetric rows
        assert explanation.values[i, 0] == pytest.approx(
            explanation.values[i, 1], abs=1e-12
        )
    # (0, 1) and (1, 0) swap the roles: the values swap too
    np.testing.assert_allclose(
        explanation.values[1], explanation.values[2][::-1], rtol=0, atol=1e-12
    )
    assert explanation.values[3, 0] > 0  # the best cell: both pull it up


# ----------------------------------------------------------------------
# pieces
# ----------------------------------------------------------------------
@pytest.mark.parametrize("name", list(ADDITIVE))
def test_tree_sum_scores_are_the_decision_function(problem, name):
    X, y = problem
    model = ADDITIVE[name]().fit(X, y)
    np.testing.assert_allclose(
        tree_sum(model).scores(X), model.decision_function(X), rtol=0, atol=1e-12
    )


def test_shapley_from_coalitions_is_the_definition():
    rng = np.random.RandomState(0)
    d = 4
    v = rng.normal(size=2**d)
    as_dict = {
        S: v[sum(1 << j for j in S)] for S in _coalitions(d)
    }  # the same game, keyed by tuples
    np.testing.assert_allclose(
        shapley_from_coalitions(v, d), _shapley(as_dict, d), rtol=0, atol=1e-12
    )


def test_background_std_errors_are_the_spread_over_the_background(problem):
    X, y = problem
    model = ADDITIVE["forest-mean"]().fit(X, y)
    background = X[100:108]
    explanation = shapley_values(model, X[:3], background=background)
    single = np.stack(
        [shapley_values(model, X[:3], background=z[None]).values for z in background]
    )  # (n_background, rows, features)
    np.testing.assert_allclose(explanation.values, single.mean(axis=0), atol=1e-12)
    expected = single.std(axis=0, ddof=1) / np.sqrt(background.shape[0])
    np.testing.assert_allclose(
        explanation.background_std_errors, expected, rtol=1e-6, atol=1e-12
    )


def test_explanation_of_a_row_does_not_depend_on_the_batch(problem):
    X, y = problem
    model = ADDITIVE["forest-mean"]().fit(X, y)
    whole = shapley_values(model, X[:700:7], background=X[:20], n_jobs=2)
    alone = shapley_values(model, X[7:14:7], background=X[:20])
    np.testing.assert_array_equal(whole.values[1:2], alone.values)


def test_max_background_draws_rows(problem):
    X, y = problem
    model = ADDITIVE["tree"]().fit(X, y)
    one = shapley_values(model, X[:2], background=X, max_background=30, random_state=0)
    two = shapley_values(model, X[:2], background=X, max_background=30, random_state=0)
    assert one.n_background == 30
    np.testing.assert_array_equal(one.values, two.values)
    everything = shapley_values(model, X[:2], background=X[:40], max_background=None)
    assert everything.n_background == 40


def test_explanation_object(problem):
    X, y = problem
    model = ADDITIVE["tree"]().fit(X, y)
    explanation = shapley_values(model, X[:4], background=X[:10])
    assert isinstance(explanation, Explanation)
    assert explanation.shape == (4, 5) and len(explanation) == 4
    assert "4 rows" in repr(explanation)
    frame = explanation.to_frame()
    assert list(frame.columns) == ["x0", "x1", "x2", "x3", "x4"]
    np.testing.assert_array_equal(frame.to_numpy(), explanation.values)
    np.testing.assert_allclose(
        explanation.mean_abs(), np.abs(explanation.values).mean(axis=0)
    )
    part = explanation[[3, 1]]
    np.testing.assert_array_equal(part.values, explanation.values[[3, 1]])
    np.testing.assert_array_equal(part.scores, explanation.scores[[3, 1]])
    np.testing.assert_array_equal(
        part.background_std_errors, explanation.background_std_errors[[3, 1]]
    )
    assert part.base_value == explanation.base_value
    assert explanation[2].values.shape == (1, 5)


# ----------------------------------------------------------------------
# errors
# ----------------------------------------------------------------------
def test_bad_arguments(problem):
    X, y = problem
    model = ADDITIVE["tree"]().fit(X, y)
    median = RankingForest(n_estimators=3, random_state=0).fit(X, y)
    import pickle

    shapley_values(model, X[:2])  # the rows kept at fit are the background
    unpickled = pickle.loads(pickle.dumps(model))  # keeps none
    with pytest.raises(ValueError, match="needs a background sample"):
        shapley_values(unpickled, X[:2])
    with pytest.raises(ValueError, match="feature_perturbation must be"):
        shapley_values(model, X[:2], background=X, feature_perturbation="observational")
    with pytest.raises(ValueError, match="algorithm must be"):
        shapley_values(model, X[:2], background=X, algorithm="kernel")
    with pytest.raises(ValueError, match="max_background must be"):
        shapley_values(model, X[:2], background=X, max_background=0)
    with pytest.raises(ValueError, match="n_permutations must be"):
        shapley_values(model, X[:2], background=X, n_permutations=1)
    with pytest.raises(ValueError, match="background has no rows"):
        shapley_values(model, X[:2], background=X[:0])
    with pytest.raises(ValueError, match="does not score with a sum over its trees"):
        shapley_values(median, X[:2], background=X, algorithm="tree")
    with pytest.raises(ValueError, match="computed by the tree algorithm only"):
        shapley_values(
            model,
            X[:2],
            feature_perturbation="tree_path_dependent",
            algorithm="permutation",
        )
    with pytest.raises(ValueError, match="X has 4 features"):
        shapley_values(model, X[:2, :4], background=X)


def test_what_cannot_be_explained(problem):
    X, y = problem
    with pytest.raises(TypeError, match=r"TreeRank or treerank\.RankingForest"):
        shapley_values(LogisticRegression().fit(np.nan_to_num(X), y), X[:2])
    with pytest.raises(NotFittedError):
        shapley_values(TreeRank(), X[:2], background=X)
    linear = TreeRank(leafrank=LinearLeafRank(), max_depth=2, random_state=0)
    linear.fit(np.nan_to_num(X), y)
    with pytest.raises(ValueError, match="not axis-aligned"):
        shapley_values(linear, X[:2], background=X, algorithm="tree")
    wide = np.random.RandomState(0).normal(size=(300, 17))
    labels = (wide.sum(axis=1) > 0).astype(int)
    forest = RankingForest(n_estimators=3, max_features=None, random_state=0)
    forest.fit(wide, labels)
    with pytest.raises(ValueError, match="at most 16"):
        shapley_values(forest, wide[:1], background=wide[:3], algorithm="exact")


def test_the_estimator_is_not_modified(problem):
    X, y = problem
    model = ADDITIVE["forest-mean"]().fit(X, y)
    before = model.decision_function(X)
    params = clone(model).get_params()
    shapley_values(model, X[:3], background=X[:5])
    np.testing.assert_array_equal(model.decision_function(X), before)
    assert clone(model).get_params() == params
