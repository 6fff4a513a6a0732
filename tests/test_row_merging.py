"""Identical rows merged into one row of summed weight and counted multiplicity.

Oracles: the groups against a brute-force comparison of rows; a tree grown on
merged rows against the tree grown on the rows themselves (the engine's and the
forest's, with the merge switched off).
"""

import numpy as np
import pandas as pd
import pytest

import treerank.ensemble._forest as forest_module
from treerank import RankingForest
from treerank._engine import (
    BinMapper,
    GrowthParams,
    grow_ranking_tree,
    merge_identical_rows,
)


def _discrete_codes(seed, n=400, d=3, levels=3):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, levels, size=(n, d)).astype(np.uint8)
    y01 = rng.integers(0, 2, size=n)
    return codes, y01


@pytest.mark.parametrize("seed", range(5))
def test_groups_are_the_rows_of_equal_codes_and_class(seed):
    codes, y01 = _discrete_codes(seed)
    merged = merge_identical_rows(codes, y01, np.arange(codes.shape[0]))
    assert merged is not None
    # brute force: two rows share a group iff codes and class are equal
    same_group = merged.group[:, None] == merged.group[None, :]
    same_row = np.all(codes[:, None, :] == codes[None, :, :], axis=2) & (
        y01[:, None] == y01[None, :]
    )
    np.testing.assert_array_equal(same_group, same_row)
    # each representative is the first row of its group, groups in row order
    for g, row in enumerate(merged.representative):
        assert merged.group[row] == g
        assert np.flatnonzero(merged.group == g)[0] == row
    assert np.all(np.diff(merged.representative) > 0)
    weights = np.random.default_rng(seed).random(codes.shape[0])
    np.testing.assert_allclose(
        merged.sum_by_group(weights),
        [weights[merged.group == g].sum() for g in range(merged.n_groups)],
    )


def test_no_merge_when_distinct_rows_are_many():
    codes, y01 = _discrete_codes(0, n=400, d=6, levels=50)
    assert merge_identical_rows(codes, y01, np.arange(400)) is None
    # the same codes repeated 4 times: a quarter of the rows are distinct
    merged = merge_identical_rows(
        np.tile(codes, (4, 1)), np.tile(y01, 4), np.arange(1600)
    )
    assert merged is not None and merged.n_groups == 400
    # only the rows that may be drawn count
    assert (
        merge_identical_rows(np.tile(codes, (4, 1)), np.tile(y01, 4), np.arange(400))
        is None
    )


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("min_samples_leaf", [1, 7])
def test_engine_tree_of_merged_rows_is_the_tree_of_the_rows(seed, min_samples_leaf):
    """Summed integer weights and counted multiplicities: the same tree."""
    rng = np.random.default_rng(seed)
    n = 3000
    X = np.column_stack(
        [rng.integers(0, 4, n), rng.integers(0, 6, n), rng.integers(0, 3, n)]
    ).astype(float)
    X[rng.random(n) < 0.1, 1] = np.nan
    y = X[:, 0] + np.nan_to_num(X[:, 1], nan=2.0) / 2 + rng.normal(size=n) > 2.5
    y = y.astype(np.uint8)
    mapper = BinMapper().fit(X)
    codes = mapper.transform(X)
    weights = rng.poisson(1.0, size=n).astype(float)  # bootstrap-like counts
    rows = np.flatnonzero(weights > 0)
    params = GrowthParams(
        max_depth=None,
        min_samples_split=30,
        rule_max_depth=3,
        min_samples_leaf=min_samples_leaf,
    )
    plain = grow_ranking_tree(codes, y, weights, rows, mapper, params, seed=5)
    merged = merge_identical_rows(codes, y, rows)
    assert merged is not None and merged.n_groups < n // 10
    merged_weights = merged.sum_by_group(weights)

    def grow_merged(multiplicity):
        return grow_ranking_tree(
            codes[merged.representative],
            y[merged.representative],
            merged_weights,
            np.flatnonzero(merged_weights > 0),
            mapper,
            params,
            seed=5,
            multiplicity=multiplicity,
        )

    grown = grow_merged(merged.sum_by_group((weights > 0).astype(float)))
    for name in ("children_left", "children_right", "n_pos", "n_neg", "gain"):
        np.testing.assert_array_equal(getattr(grown, name), getattr(plain, name))
    for name in ("feature", "threshold_bin", "left_leaf"):
        np.testing.assert_array_equal(
            getattr(grown.rules, name), getattr(plain.rules, name)
        )
    np.testing.assert_array_equal(
        grown.leaf_rank_of_row[merged.group][rows], plain.leaf_rank_of_row[rows]
    )
    # the counts matter: without multiplicities the tree differs
    uncounted = grow_merged(None)
    assert uncounted.children_left.shape != plain.children_left.shape or not (
        np.array_equal(uncounted.n_pos, plain.n_pos)
    )


def _table(seed, n=3000):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "site": pd.Categorical(rng.choice(["a", "b", "c", "d"], n)),
            "age": rng.integers(20, 30, n).astype(float),
            "flag": rng.integers(0, 2, n).astype(float),
        }
    )
    X.loc[rng.random(n) < 0.05, "age"] = np.nan
    logit = (X["site"].cat.codes - 1.5) + np.nan_to_num(X["age"] - 25) / 3
    y = (rng.random(n) < 1 / (1 + np.exp(-logit.to_numpy()))).astype(int)
    return X, y


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"aggregation": "mean", "leaf_scores": "rate"},
        {"bootstrap": False, "max_samples": 0.7},
    ],
)
def test_forest_of_merged_rows_is_the_forest_of_the_rows(params, monkeypatch):
    X, y = _table(0)
    weight = np.random.default_rng(1).integers(0, 3, y.shape[0]).astype(float)
    X_new, _ = _table(1, n=500)
    merged = RankingForest(n_estimators=12, random_state=0, **params).fit(
        X, y, sample_weight=weight
    )
    monkeypatch.setattr(forest_module, "merge_identical_rows", lambda *a, **k: None)
    plain = RankingForest(n_estimators=12, random_state=0, **params).fit(
        X, y, sample_weight=weight
    )
    for a, b in zip(merged.estimators_, plain.estimators_):
        np.testing.assert_array_equal(a.tree_.children_left, b.tree_.children_left)
        np.testing.assert_array_equal(a.tree_.n_pos, b.tree_.n_pos)
        np.testing.assert_array_equal(a.tree_.n_neg, b.tree_.n_neg)
    np.testing.assert_array_equal(merged.estimators_samples_, plain.estimators_samples_)
    assert merged.leaf_scores_ == plain.leaf_scores_
    np.testing.assert_array_equal(
        merged.decision_function(X), plain.decision_function(X)
    )
    np.testing.assert_array_equal(
        merged.decision_function(X_new), plain.decision_function(X_new)
    )


def test_forest_merges_the_rows_of_a_discrete_table(monkeypatch):
    """The merge is used on a table of few distinct rows (and not bypassed)."""
    X, y = _table(2)
    calls = []
    original = forest_module.merge_identical_rows

    def spy(*args, **kwargs):
        result = original(*args, **kwargs)
        calls.append(result)
        return result

    monkeypatch.setattr(forest_module, "merge_identical_rows", spy)
    RankingForest(n_estimators=3, random_state=0).fit(X, y)
    assert len(calls) == 1 and calls[0] is not None
    assert calls[0].n_groups <= 4 * 11 * 2 * 2
