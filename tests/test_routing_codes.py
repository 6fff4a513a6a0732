"""Routing on threshold codes (issue 38) against a plain traversal in Python.

The compiled routing codes each row once (a value's rank among the thresholds
of its feature) and walks the trees on the codes; rows with a missing value,
and forests with categorical splits, take the step on values. Every leaf must
be the one that following the graph decision by decision on the raw values
gives: the brute force below reads the router's arrays one row, one tree and
one decision at a time, in Python, from the rules of the module docstring.
"""

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_classification

from treerank import RankingForest
from treerank._engine import MISSING_BIN, Router, _routing
from treerank._engine._routing import (
    _FEATURE_MASK,
    CATEGORICAL,
    MISSING_RIGHT,
    _code_rows,
    threshold_codes,
)


def brute_force_leaf_ranks(router, X):
    """Leaf rank of each row in each tree, decision by decision, in Python."""
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    out = np.empty((X.shape[0], router.n_trees), dtype=np.int64)
    for i in range(X.shape[0]):
        for b, entry in enumerate(router.entries):
            g = int(entry)
            while g >= 0:
                test = int(router.tests[g])
                node = router.nodes[g]
                value = X[i, test & int(_FEATURE_MASK)]
                missing_right = bool(test & int(MISSING_RIGHT))
                if np.isnan(value):
                    right = missing_right
                elif test & int(CATEGORICAL):
                    code = int(value)
                    if not 0 <= code < MISSING_BIN:
                        right = missing_right
                    else:
                        words = router.category_sets[int(node["threshold"])]
                        right = not (int(words[code // 64]) >> (code % 64)) & 1
                else:
                    right = value > node["threshold"]
                g = int(node["right"] if right else node["left"])
            out[i, b] = -1 - g
    return out


def forest_router(forest):
    return Router(
        [tree.tree_.graph() for tree in forest.estimators_],
        [tree.tree_.rules.category_sets for tree in forest.estimators_],
    )


def thresholds_of(router):
    features = (router.tests & _FEATURE_MASK).astype(np.int64)
    thresholds = router.nodes["threshold"]
    return features, thresholds


def edge_rows(router, n_features, seed, n_rows=240):
    """Rows whose values sit on the thresholds, one float away, at +-inf, at
    +-0.0, very large, or missing."""
    rng = np.random.default_rng(seed)
    features, thresholds = thresholds_of(router)
    X = rng.normal(size=(n_rows, n_features))
    for j in range(n_features):
        on = thresholds[(features == j) & np.isfinite(thresholds)]
        if on.size == 0:
            continue
        picks = on[rng.integers(0, on.size, n_rows)]
        kind = rng.integers(0, 4, n_rows)
        X[:, j] = np.where(kind == 0, picks, X[:, j])
        X[:, j] = np.where(kind == 1, np.nextafter(picks, np.inf), X[:, j])
        X[:, j] = np.where(kind == 2, np.nextafter(picks, -np.inf), X[:, j])
    special = np.array([np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308, np.nan])
    where = rng.random(X.shape) < 0.08
    X[where] = special[rng.integers(0, special.size, where.sum())]
    X[:8] = special[rng.integers(0, special.size - 1, (8, n_features))]  # no NaN
    return X


@pytest.fixture(scope="module")
def numeric_forest():
    X, y = make_classification(900, 6, n_informative=4, random_state=0)
    X[np.random.default_rng(0).random(X.shape) < 0.05] = np.nan
    forest = RankingForest(n_estimators=6, random_state=0).fit(X[:600], y[:600])
    return forest, X[600:]


@pytest.mark.parametrize("block", [1, 7, 2048])
def test_codes_route_every_row_as_the_brute_force(numeric_forest, block, monkeypatch):
    forest, X_test = numeric_forest
    router = forest_router(forest)
    assert router._layout[4].shape[0] == router.nodes.shape[0]  # routed on codes
    X = np.vstack([X_test, edge_rows(router, X_test.shape[1], 1)])
    monkeypatch.setattr(_routing, "_ROW_BLOCK", block)
    expected = brute_force_leaf_ranks(router, X)
    np.testing.assert_array_equal(router.leaf_ranks(X), expected)
    np.testing.assert_array_equal(router.leaf_ranks(sp.csr_matrix(X)), expected)


def test_the_code_of_a_value_is_its_rank_among_the_thresholds(numeric_forest):
    forest, X_test = numeric_forest
    router = forest_router(forest)
    used, search, start, depth, words, children = router._layout
    X = edge_rows(router, X_test.shape[1], 2)
    X = X[~np.isnan(X).any(axis=1)]
    codes = np.empty(X.shape[0] * used.shape[0], dtype=np.uint16)
    order = np.empty(X.shape[0], dtype=np.uint32)
    # the helper runs as plain Python here
    n_plain = _code_rows(X, 0, X.shape[0], used, search, start, depth, codes, order)
    assert n_plain == X.shape[0]
    codes = codes.reshape(X.shape[0], used.shape[0])
    features, thresholds = thresholds_of(router)
    for u, f in enumerate(used):
        grid = np.unique(thresholds[features == f])
        np.testing.assert_array_equal(
            codes[:, u], np.searchsorted(grid, X[:, f], side="left")
        )
        # each decision on f: "x <= t" is "code <= its threshold code"
        for g in np.flatnonzero(features == f):
            assert int(words[g]) >> 16 == u
            left = codes[:, u] <= (int(words[g]) & 0xFFFF)
            np.testing.assert_array_equal(left, X[:, f] <= thresholds[g])
    np.testing.assert_array_equal(children[0::2], router.nodes["left"])
    np.testing.assert_array_equal(children[1::2], router.nodes["right"])


def test_threshold_codes_merge_equal_thresholds_and_keep_infinities():
    # one feature, decisions on -inf, -0.0, 0.0, 1.0 (twice) and +inf: a chain
    thresholds = np.array([-np.inf, -0.0, 0.0, 1.0, 1.0, np.inf])
    n = thresholds.shape[0]
    left = -1 - np.arange(n)  # decision g's left leaf is rank g
    right = np.append(np.arange(1, n), -1 - n)
    graph = (
        0,
        np.zeros(n, np.int32),
        thresholds,
        np.zeros(n, np.uint8),
        np.zeros(n, np.uint8),  # missing values go right
        left.astype(np.int32),
        right.astype(np.int32),
        np.full(n, -1, np.int32),
    )
    router = Router([graph])
    used, search, start, depth, words, _ = threshold_codes(router.nodes, router.tests)
    assert used.tolist() == [0] and start.tolist() == [0, 8]
    np.testing.assert_array_equal(words & 0xFFFF, [0, 1, 1, 2, 2, 3])
    # 4 distinct thresholds padded with +inf to 7, level by level
    assert depth.tolist() == [3]
    np.testing.assert_array_equal(
        search[1:], [np.inf, 0.0, np.inf, -np.inf, 1.0, np.inf, np.inf]
    )
    values = np.array(
        [-np.inf, -1e308, -0.0, 0.0, 5e-324, 0.5, 1.0, 1.5, 1e308, np.inf, np.nan]
    )
    X = values[:, None]
    np.testing.assert_array_equal(
        router.leaf_ranks(X), brute_force_leaf_ranks(router, X)
    )


def test_categorical_forest_routes_on_values():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(rng.normal(size=(700, 3)), columns=list("abc"))
    frame.loc[rng.random(700) < 0.1, "a"] = np.nan
    frame["colour"] = pd.Categorical(rng.choice(list("pqrstu"), 700))
    y = (frame["b"] + frame["colour"].isin(["p", "q"]) > 0.5).astype(int)
    forest = RankingForest(n_estimators=5, random_state=0).fit(frame[:500], y[:500])
    router = forest._router
    assert np.any(router.tests & CATEGORICAL)
    assert router._layout[4].shape[0] == 0  # no code layout: the step on values
    X = forest._validate_X_predict(frame[500:])
    X = np.vstack([X, X[:20]])
    X[-20:, 3] = [-1, 0.5, 254, 255, 300, np.nan, 5, 2, 1e9, -0.0] * 2  # odd codes
    np.testing.assert_array_equal(
        router.leaf_ranks(X), brute_force_leaf_ranks(router, X)
    )


def test_features_with_too_many_thresholds_route_on_values(numeric_forest, monkeypatch):
    forest, X_test = numeric_forest
    monkeypatch.setattr(_routing, "_MAX_CODES", 3)
    router = forest_router(forest)
    assert threshold_codes(router.nodes, router.tests) is None
    assert router._layout[4].shape[0] == 0
    X = np.vstack([X_test, edge_rows(router, X_test.shape[1], 4)])
    np.testing.assert_array_equal(
        router.leaf_ranks(X), brute_force_leaf_ranks(router, X)
    )


def test_a_pickled_router_rebuilds_its_codes(numeric_forest):
    forest, X_test = numeric_forest
    router = forest_router(forest)
    expected = router.leaf_ranks(X_test)
    state = router.__getstate__()
    assert "_layout" not in state  # derived from the decisions: not stored
    np.testing.assert_array_equal(
        pickle.loads(pickle.dumps(router)).leaf_ranks(X_test), expected
    )
    # a router pickled before the codes existed (with its old flag)
    old = Router.__new__(Router)
    old.__setstate__(dict(state, general=False))
    np.testing.assert_array_equal(old.leaf_ranks(X_test), expected)


def test_one_leaf_trees_and_no_decision():
    graph = (
        -1,
        np.zeros(0, np.int32),
        np.zeros(0),
        np.zeros(0, np.uint8),
        np.zeros(0, np.uint8),
        np.zeros(0, np.int32),
        np.zeros(0, np.int32),
        np.zeros(0, np.int32),
    )
    router = Router([graph, graph])
    X = np.array([[0.0, np.nan], [1.0, 2.0]])
    np.testing.assert_array_equal(router.leaf_ranks(X), np.zeros((2, 2)))
