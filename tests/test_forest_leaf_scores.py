"""How the trees of a RankingForest score their leaves (``leaf_scores``)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from model_file_editing import rewrite_description
from sklearn.metrics import roc_auc_score

from treerank import LeafRank, RankingForest, TreeRank
from treerank.aggregation import kemeny_median
from treerank.datasets import NestedSquares
from treerank.ensemble import (
    TreeAggregate,
    leaf_positions,
    mean_leaf_scores,
    mean_leaf_values,
    rank_leaf_values,
    rate_leaf_values,
)
from treerank.metrics import volume_under_surface
from treerank.model_io import load_model, save_model


@pytest.fixture(scope="module")
def squares():
    X, y = NestedSquares().sample(600, random_state=0)
    X_new = NestedSquares().sample(400, random_state=1)[0]
    return X, y, X_new


def _recursive_rates(tree, smoothing):
    """The smoothed rates by a plain recursion from the root (the oracle)."""
    rates = {}

    def visit(node, parent_rate):
        total = tree.n_pos[node] + tree.n_neg[node]
        if parent_rate is None:
            rate = tree.n_pos[node] / total
        else:
            rate = (tree.n_pos[node] + smoothing * parent_rate) / (total + smoothing)
        rates[node] = rate
        if tree.children_left[node] >= 0:
            visit(tree.children_left[node], rate)
            visit(tree.children_right[node], rate)

    visit(0, None)
    return np.array([rates[leaf] for leaf in tree.leaves])


@pytest.mark.parametrize("smoothing", [0.0, 3.0, 30.0, 1e6])
def test_rate_leaf_values_follow_the_recursion(squares, smoothing):
    X, y, _ = squares
    tree = TreeRank(random_state=0).fit(X, y).tree_
    values = rate_leaf_values(tree, smoothing)
    np.testing.assert_allclose(values, _recursive_rates(tree, smoothing), rtol=1e-12)
    assert np.all((values >= 0) & (values <= 1))
    if smoothing == 0.0:  # the leaves' own rates
        leaves = tree.leaves
        raw = tree.n_pos[leaves] / (tree.n_pos[leaves] + tree.n_neg[leaves])
        np.testing.assert_allclose(values, raw, rtol=1e-12)
    if smoothing == 1e6:  # everything shrunk to the root's rate
        np.testing.assert_allclose(
            values, tree.n_pos[0] / (tree.n_pos[0] + tree.n_neg[0]), atol=1e-3
        )


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 5), min_size=1, max_size=30))
def test_leaf_positions_are_dense_ranks(values):
    values = np.array(values, dtype=float)
    positions = leaf_positions(values)
    distinct = np.unique(values)[::-1]  # highest first
    expected = np.searchsorted(-distinct, -values)
    np.testing.assert_array_equal(positions, expected)


def test_rank_values_reproduce_the_mean_of_normalized_ranks():
    rng = np.random.default_rng(0)
    n_leaves = np.array([3, 7, 1, 5])
    ranks = np.column_stack([rng.integers(0, k, 50) for k in n_leaves])
    values = [rank_leaf_values(k) for k in n_leaves]
    np.testing.assert_array_equal(
        mean_leaf_values(ranks, values), mean_leaf_scores(ranks, n_leaves)
    )


def _oob_auc(forest, X, y, values):
    """Out-of-bag AUC of the mean of leaf values, by hand."""
    ranks = forest.apply(X)
    out = forest.estimators_samples_.T == 0
    scores = np.array(
        [
            np.mean([values[b][ranks[i, b]] for b in np.flatnonzero(out[i])])
            if out[i].any()
            else np.nan
            for i in range(X.shape[0])
        ]
    )
    scored = np.isfinite(scores)
    return roc_auc_score(y[scored], scores[scored]), scores


def test_auto_chooses_the_candidate_with_the_higher_oob_auc(squares):
    X, y, _ = squares
    forest = RankingForest(n_estimators=15, aggregation="mean", random_state=0)
    forest.fit(X, y)
    assert set(forest.oob_leaf_scores_) == {"rank", "rate"}
    results = {}
    for kind in ("rank", "rate"):
        twin = RankingForest(
            n_estimators=15, aggregation="mean", leaf_scores=kind, random_state=0
        ).fit(X, y)
        auc, scores = _oob_auc(twin, X, y, twin.leaf_values_)
        assert forest.oob_leaf_scores_[kind] == pytest.approx(auc, abs=1e-12)
        assert twin.oob_score_ == pytest.approx(auc, abs=1e-12)
        np.testing.assert_allclose(twin.oob_decision_function_, scores, rtol=1e-12)
        results[kind] = auc
    best = "rate" if results["rate"] > results["rank"] else "rank"
    assert forest.leaf_scores_ == best
    assert forest.oob_score_ == pytest.approx(results[best], abs=1e-12)


def test_rate_smoothing_is_chosen_out_of_bag(squares):
    """The smoothing of the rates is the one of the grid whose mean
    aggregation has the highest out-of-bag AUC (the first on a tie)."""
    X, y, _ = squares
    forest = RankingForest(
        n_estimators=15, aggregation="mean", leaf_scores="rate", random_state=0
    ).fit(X, y)
    grid = (30.0, 10.0, 100.0, 3.0, 0.0)
    aucs = []
    for m in grid:
        values = [rate_leaf_values(tree.tree_, m) for tree in forest.estimators_]
        aucs.append(_oob_auc(forest, X, y, values)[0])
    best = grid[int(np.argmax(aucs))]
    assert forest.rate_smoothing_ == best
    assert forest.oob_leaf_scores_["rate"] == pytest.approx(max(aucs), abs=1e-12)
    assert forest.oob_score_ == pytest.approx(max(aucs), abs=1e-12)
    # without out-of-bag rows there is nothing to choose with: 30
    whole = RankingForest(
        n_estimators=4, bootstrap=False, leaf_scores="rate", random_state=0
    ).fit(X, y)
    assert whole.rate_smoothing_ == 30.0
    # a forest scored by rank has no smoothing
    ranked = RankingForest(n_estimators=4, leaf_scores="rank", random_state=0)
    assert ranked.fit(X, y).rate_smoothing_ is None


def test_rate_forest_scores_are_the_mean_of_smoothed_leaf_rates(squares):
    X, y, X_new = squares
    forest = RankingForest(
        n_estimators=12, aggregation="mean", leaf_scores="rate", random_state=0
    ).fit(X, y)
    ranks = forest.apply(X_new)
    smoothing = forest.rate_smoothing_  # rows of unit weight
    assert smoothing in (0.0, 3.0, 10.0, 30.0, 100.0)
    expected = np.mean(
        [
            rate_leaf_values(tree.tree_, smoothing)[ranks[:, b]]
            for b, tree in enumerate(forest.estimators_)
        ],
        axis=0,
    )
    raw = forest.decision_function(X_new) + forest._calibration.threshold_
    np.testing.assert_allclose(raw, expected, rtol=1e-12)
    # the smoothing unit follows the weights: uniform weights change nothing
    scaled = RankingForest(
        n_estimators=12, aggregation="mean", leaf_scores="rate", random_state=0
    ).fit(X, y, sample_weight=np.full(y.shape[0], 7.0))
    np.testing.assert_allclose(
        scaled.decision_function(X_new), forest.decision_function(X_new), rtol=1e-12
    )


@pytest.mark.parametrize("leaf_scores", ["rank", "rate"])
def test_median_aggregates_each_trees_order_of_its_leaves(squares, leaf_scores):
    X, y, _ = squares
    forest = RankingForest(
        n_estimators=10, leaf_scores=leaf_scores, random_state=0
    ).fit(X, y)
    # each tree ranks a cell at the position of its leaf among the tree's
    # leaves ordered by their values (ties share a position); rates are
    # compared in steps of 0.1 sqrt(p (1 - p)), p the tree's base rate
    values = forest.leaf_values_
    if leaf_scores == "rate":
        steps = []
        for tree in forest.estimators_:
            p = tree.tree_.n_pos[0] / (tree.tree_.n_pos[0] + tree.tree_.n_neg[0])
            steps.append(0.1 * np.sqrt(p * (1 - p)))
        values = [np.floor(v / step) for v, step in zip(values, steps)]
    positions = np.column_stack(
        [
            leaf_positions(values[b])[forest.cells_[:, b]]
            for b in range(forest.n_estimators)
        ]
    )
    if leaf_scores == "rank":
        np.testing.assert_array_equal(positions, forest.cells_)
    median = kemeny_median(
        np.ascontiguousarray(positions.T),
        item_weights=forest.cell_weights_,
        method=forest.aggregation_method,
        # the forest's solver: one search from the better of Borda and the
        # mean rank, moves within 3 buckets, its passes and tolerance
        max_iter=forest.aggregation_max_iter,
        tol=forest.aggregation_tol,
        window=3,
        multi_start=False,
    )
    assert forest.consensus_objective_ == pytest.approx(median.objective, rel=1e-12)
    np.testing.assert_array_equal(forest.consensus_, median.consensus)
    # a training row of a cell scores in its cell's bucket
    ranks = forest.apply(X)
    scores = forest.decision_function(X) + forest._calibration.threshold_
    bucket = -np.round(scores / 2)
    _, cell_of_row = np.unique(ranks, axis=0, return_inverse=True)
    np.testing.assert_array_equal(bucket, forest.consensus_[cell_of_row.ravel()])


@pytest.mark.parametrize("aggregation", ["median", "mean", "borda"])
def test_rate_forest_batch_invariance_and_model_file(squares, tmp_path, aggregation):
    X, y, X_new = squares
    forest = RankingForest(
        n_estimators=8, aggregation=aggregation, leaf_scores="rate", random_state=0
    ).fit(X, y)
    full = forest.decision_function(X_new)
    for i in (0, 7, 399):
        assert forest.decision_function(X_new[i : i + 1])[0] == full[i]
    path = tmp_path / "forest.trk"
    save_model(forest, path)
    loaded = load_model(path)
    assert loaded.leaf_scores_ == "rate"
    assert loaded.rate_smoothing_ == forest.rate_smoothing_
    np.testing.assert_array_equal(loaded.decision_function(X_new), full)
    for a, b in zip(loaded.leaf_values_, forest.leaf_values_):
        np.testing.assert_array_equal(a, b)


def test_monotone_forests_rank_their_leaves_by_rank():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=400) > 0).astype(int)
    forest = RankingForest(n_estimators=5, monotonic_cst=[1, 0, 0], random_state=0).fit(
        X, y
    )
    assert forest.leaf_scores_ == "rank"
    assert set(forest.oob_leaf_scores_) == {"rank"}
    with pytest.raises(ValueError, match="leaf_scores='rate' cannot keep"):
        RankingForest(n_estimators=5, monotonic_cst=[1, 0, 0], leaf_scores="rate").fit(
            X, y
        )


def test_graded_forest_chooses_by_out_of_bag_vus():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(900, 4))
    score = X[:, 0] + X[:, 1] ** 2 + 0.5 * rng.normal(size=900)
    grades = np.digitize(score, np.quantile(score, [0.4, 0.75]))
    forest = RankingForest(n_estimators=12, aggregation="mean", random_state=0)
    forest.fit(X, grades)
    for kind in ("rank", "rate"):
        twin = RankingForest(
            n_estimators=12, aggregation="mean", leaf_scores=kind, random_state=0
        ).fit(X, grades)
        scores = twin.oob_decision_function_
        scored = np.isfinite(scores)
        vus = volume_under_surface(grades[scored], scores[scored])
        assert forest.oob_leaf_scores_[kind] == pytest.approx(vus, abs=1e-12)
    best = max(forest.oob_leaf_scores_, key=forest.oob_leaf_scores_.get)
    assert forest.leaf_scores_ == best


def test_files_written_before_leaf_scores_and_rule_samples_load_as_then(
    squares, tmp_path
):
    # a file without leaf_scores (forest) nor max_samples (its LeafRank)
    # describes trees scored by rank and rules fitted on all the node's rows
    X, y, X_new = squares
    forest = RankingForest(
        n_estimators=6,
        leaf_scores="rank",
        leafrank=LeafRank(max_depth=4, min_samples_leaf=5),
        random_state=0,
    )
    forest.fit(X, y)
    path = tmp_path / "old.trk"
    save_model(forest, path)

    def older(description):
        description["params"].pop("leaf_scores")
        for key in (
            "leaf_scores",
            "rate_smoothing",
            "oob_leaf_scores",
            "rate_smoothing_rows",
        ):
            description.pop(key)
        description["params"]["leafrank"]["params"].pop("node_subsample")
        description["params"]["leafrank"]["params"].pop("splitter")

    rewrite_description(path, older)
    loaded = load_model(path)
    assert loaded.leaf_scores == "rank" and loaded.leaf_scores_ == "rank"
    assert loaded.leafrank.node_subsample is None
    assert loaded.leafrank.splitter == "best"
    np.testing.assert_array_equal(
        loaded.decision_function(X_new), forest.decision_function(X_new)
    )


@pytest.mark.parametrize("key", ["leaf_scores", "rate_smoothing", "oob_leaf_scores"])
def test_a_file_with_leaf_scores_must_hold_all_of_them(squares, tmp_path, key):
    from treerank.exceptions import ModelFileError

    X, y, _ = squares
    forest = RankingForest(n_estimators=4, leaf_scores="rate", random_state=0)
    path = tmp_path / "forest.trk"
    save_model(forest.fit(X, y), path)
    rewrite_description(path, lambda description: description.pop(key))
    with pytest.raises(ModelFileError, match=key):
        load_model(path)


def test_the_aggregate_has_the_defaults_of_the_forest():
    # TreeAggregate's parameters are the forest's aggregation parameters
    aggregate = TreeAggregate().get_params()
    forest = RankingForest().get_params()
    assert {name: forest[name] for name in aggregate} == aggregate
    assert aggregate["leaf_scores"] == "auto"
