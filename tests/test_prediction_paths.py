"""The fast prediction paths of RankingForest against reference computations.

Routing, leaf tables and the insertion of unseen cells were rewritten for
speed (issue 24); every score must stay what the plain computation gives, to
the last bit: leaves by the node-by-node traversal of each tree's rule objects,
seen cells by the hash index, unseen cells by the numpy insertion (the
compiled one places them identically), tie-breaks by ``mean_leaf_values``.
"""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification

from treerank import RankingForest
from treerank._engine import _routing
from treerank.ensemble import _tree_aggregate, mean_leaf_values
from treerank.ensemble._leaf_scores import mean_borda_scores
from treerank.ensemble._leaf_tables import LeafTable


# ----------------------------------------------------------------------------
# data and references
# ----------------------------------------------------------------------------
def numeric_design(n, seed, missing=0.0):
    X, y = make_classification(
        2 * n, 8, n_informative=5, flip_y=0.05, random_state=seed
    )
    if missing:
        rng = np.random.default_rng(seed)
        X[rng.random(X.shape) < missing] = np.nan
    return X[:n], y[:n], X[n:]


def categorical_design(n, seed):
    rng = np.random.default_rng(seed)
    X, y = make_classification(
        2 * n, 4, n_informative=3, n_redundant=1, random_state=seed
    )
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame.loc[rng.random(2 * n) < 0.1, "a"] = np.nan
    frame["colour"] = pd.Categorical(rng.choice(list("pqrstu"), 2 * n))
    y = y ^ (frame["colour"].isin(["p", "q"]).to_numpy() & (rng.random(2 * n) < 0.4))
    return frame.iloc[:n], y.astype(int)[:n], frame.iloc[n:]


def sparse_design(n, seed):
    rng = np.random.default_rng(seed)
    X = sp.random(2 * n, 30, density=0.15, random_state=seed, format="csr")
    signal = np.asarray(X[:, :5].sum(axis=1)).ravel()
    y = (signal + rng.normal(0, 0.3, 2 * n) > np.median(signal)).astype(int)
    return X[:n], y[:n], X[n:]


def reference_leaf_ranks(forest, X):
    """Each tree's leaf by the traversal of its rule objects, node by node."""
    X = forest._validate_X_predict(X)
    if sp.issparse(X):
        X = X.toarray()  # an entry not stored is 0.0
    return np.column_stack(
        [
            tree.tree_.leaf_rank[tree.tree_.apply_node_by_node(X)]
            for tree in forest.estimators_
        ]
    ).astype(np.int32)


def reference_raw_scores(forest, leaf_ranks):
    """The forest's scores from plain numpy pieces and a fresh inserter."""
    if forest.aggregation == "mean":
        return mean_leaf_values(leaf_ranks, forest.leaf_values_)
    if forest.aggregation == "borda":
        return mean_borda_scores(leaf_ranks, forest._midranks)
    positions = forest._positions(leaf_ranks).astype(np.int64)
    monotonic = forest._monotonic
    search = "bisect" if monotonic else "gallop"
    inserter = type(forest._inserter)(
        forest._inserter.consensus,
        forest._inserter.rankings,
        forest._inserter.item_weights,
        forest._inserter.ranking_weights,
    )
    if monotonic:
        position = inserter.positions(positions, search=search)
    else:
        cell = forest._cell_index.lookup(leaf_ranks)
        seen = cell >= 0
        position = np.empty(leaf_ranks.shape[0])
        position[seen] = forest.consensus_[cell[seen]]
        if not seen.all():
            position[~seen] = inserter.positions(positions[~seen], search=search)
    scores = -2.0 * position
    if forest.break_ties:
        scores += 0.9 * (mean_leaf_values(leaf_ranks, forest.leaf_values_) - 0.5)
    return scores


DESIGNS = {
    "numeric": lambda: numeric_design(600, 0),
    "missing": lambda: numeric_design(600, 1, missing=0.15),
    "categorical": lambda: categorical_design(600, 2),
    "sparse": lambda: sparse_design(600, 3),
}


# ----------------------------------------------------------------------------
# routing
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("design", list(DESIGNS))
def test_routing_matches_the_node_by_node_traversal(design, monkeypatch):
    X, y, X_test = DESIGNS[design]()
    forest = RankingForest(n_estimators=12, random_state=0).fit(X, y)
    expected = reference_leaf_ranks(forest, X_test)
    assert np.array_equal(forest.apply(X_test), expected)
    # blocks of a few rows (the last one partial): the same leaves
    monkeypatch.setattr(_routing, "_ROW_BLOCK", 7)
    assert np.array_equal(forest.apply(X_test), expected)
    # a row's leaves depend on that row alone
    rows = [0, 3, 17]
    subset = X_test.iloc[rows] if hasattr(X_test, "iloc") else X_test[rows]
    assert np.array_equal(forest.apply(subset), expected[rows])


def test_rows_with_and_without_missing_values_in_one_block(rng):
    # the plain step (no missing value) and the general step (missing
    # values) must send a row the same way: the same row with a missing value
    # in a feature no tree reads has the same leaves
    X, y, X_test = numeric_design(500, 4, missing=0.1)
    X = X.copy()
    X[:, 7] = 0.0  # a constant feature: never split on
    forest = RankingForest(n_estimators=10, random_state=1).fit(X, y)
    X_test = X_test.copy()
    X_test[:, 7] = 0.0
    masked = X_test.copy()
    masked[::2, 7] = np.nan  # every other row takes the general step
    assert np.array_equal(forest.apply(masked), forest.apply(X_test))
    assert np.array_equal(forest.apply(masked), reference_leaf_ranks(forest, masked))


def test_wide_rows(monkeypatch):
    # 600 features, and sparse blocks capped by their bytes (3 rows)
    X, y = make_classification(700, 600, n_informative=6, random_state=5)
    forest = RankingForest(n_estimators=4, random_state=0).fit(X[:400], y[:400])
    expected = reference_leaf_ranks(forest, X[400:])
    assert np.array_equal(forest.apply(X[400:]), expected)
    monkeypatch.setattr(_routing, "SPARSE_BLOCK_BYTES", 3 * 8 * 600)
    assert np.array_equal(forest.apply(sp.csr_matrix(X[400:])), expected)


# ----------------------------------------------------------------------------
# leaf tables
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_leaf_table_mean_is_mean_leaf_values_to_the_last_bit(rng, dtype):
    values = [rng.random(int(k)) for k in rng.integers(1, 40, size=37)]
    leaf_ranks = np.column_stack(
        [rng.integers(0, v.shape[0], size=500) for v in values]
    ).astype(dtype)
    expected = mean_leaf_values(leaf_ranks, values)
    assert np.array_equal(LeafTable(values).mean(leaf_ranks), expected)
    # a row's mean depends on that row alone
    assert np.array_equal(LeafTable(values).mean(leaf_ranks[5:6]), expected[5:6])


def test_leaf_table_gather_is_fancy_indexing(rng):
    tables = [rng.integers(0, 9, size=int(k)) for k in rng.integers(1, 30, size=20)]
    leaf_ranks = np.column_stack(
        [rng.integers(0, t.shape[0], size=300) for t in tables]
    )
    expected = np.column_stack([t[leaf_ranks[:, b]] for b, t in enumerate(tables)])
    found = LeafTable(tables, np.int32).gather(leaf_ranks)
    assert found.dtype == np.int32
    assert np.array_equal(found, expected)


# ----------------------------------------------------------------------------
# whole scores
# ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("design", "params"),
    [
        ("numeric", {"leaf_scores": "rank"}),
        ("numeric", {"leaf_scores": "rate"}),
        ("missing", {}),
        ("categorical", {}),
        ("sparse", {}),
        ("numeric", {"aggregation": "mean"}),
        ("missing", {"aggregation": "borda"}),
        ("numeric", {"break_ties": False}),
    ],
)
def test_scores_match_the_reference_computation(design, params):
    X, y, X_test = DESIGNS[design]()
    forest = RankingForest(n_estimators=15, random_state=3, **params).fit(X, y)
    leaf_ranks = reference_leaf_ranks(forest, X_test)
    expected = reference_raw_scores(forest, leaf_ranks)
    threshold = forest._calibration.threshold_
    assert np.array_equal(forest.decision_function(X_test), expected - threshold)


def test_monotone_forest_scores_match_the_reference():
    X, y, X_test = numeric_design(600, 6)
    forest = RankingForest(
        n_estimators=15, monotonic_cst=[1, 0, -1, 0, 0, 0, 0, 0], random_state=0
    ).fit(X, y)
    leaf_ranks = reference_leaf_ranks(forest, X_test)
    expected = reference_raw_scores(forest, leaf_ranks)
    assert np.array_equal(forest._raw_scores(forest._leaf_ranks(X_test)), expected)


@pytest.fixture(scope="module")
def large_forest():
    # 2,700 cells x 50 trees: threads and pieces of the insertion
    X, y, X_test = numeric_design(2700, 7, missing=0.05)
    forest = RankingForest(n_estimators=50, random_state=0).fit(X, y)
    return forest, X_test


def test_large_forest_scores_match_the_reference(large_forest):
    forest, X_test = large_forest
    leaf_ranks = reference_leaf_ranks(forest, X_test)
    expected = reference_raw_scores(forest, leaf_ranks)
    assert np.array_equal(forest._raw_scores(forest._leaf_ranks(X_test)), expected)


def test_scores_do_not_depend_on_the_batch(large_forest, monkeypatch):
    forest, X_test = large_forest
    scores = forest.decision_function(X_test)
    # unseen rows placed in pieces of 100: the same scores
    monkeypatch.setattr(_tree_aggregate, "_INSERT_BLOCK", 100)
    assert np.array_equal(forest.decision_function(X_test), scores)
    for rows in ([0], [5, 1], list(range(40, 90))):
        assert np.array_equal(forest.decision_function(X_test[rows]), scores[rows])
