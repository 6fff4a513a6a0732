"""LinearLeafRank (oblique splits) and MixedLeafRank (a choice per node)."""

import copy

import numpy as np
import pytest
from sklearn.base import clone

from treerank import (
    LeafRank,
    LinearLeafRank,
    MixedLeafRank,
    RankingForest,
    TreeRank,
)
from treerank.export import export_text, to_networkx
from treerank.model_io import load_model, save_model
from treerank.tree import FrozenLinearLeafRank, FrozenTreeLeafRank
from treerank.tree._frozen import linear_decision
from treerank.tree._linear import best_linear_cut, fisher_direction
from treerank.tree._mixed import freeze_leafrank, local_gain


def _gain(mask, y, w):
    pos = y == 1
    return w[mask & pos].sum() / w[pos].sum() - w[mask & ~pos].sum() / w[~pos].sum()


def _brute_force_cut(s, y, w, min_samples_leaf):
    """Best local TPR - FPR over every half-line of s, missing rows on either side."""
    missing = np.isnan(s)
    values = np.unique(s[~missing])
    thresholds = np.concatenate(
        [[values[0] - 1], (values[:-1] + values[1:]) / 2, [values[-1] + 1]]
    )
    best = 0.0
    for t in thresholds:
        for half in (s > t, s < t):
            for with_missing in (False, True):
                left = half | (missing & with_missing)
                n_left = int(left.sum())
                if min(n_left, s.shape[0] - n_left) < min_samples_leaf:
                    continue
                best = max(best, _gain(left, y, w))
    return best


def _data(seed, n=None, n_features=3, missing=0.0):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(20, 60)) if n is None else n
    X = rng.normal(size=(n, n_features))
    y = (X @ rng.normal(size=n_features) + rng.normal(size=n) > 0).astype(int)
    y[:2] = [0, 1]
    if missing:
        X[rng.random(X.shape) < missing] = np.nan
    return X, y, rng.random(n) + 0.1


@pytest.mark.parametrize("seed", range(30))
def test_threshold_is_the_best_cut_of_the_projection(seed):
    # oracle: every threshold between distinct projections, both half-lines,
    # missing rows on either side
    X, y, w = _data(seed, missing=0.1 if seed % 2 else 0.0)
    min_samples_leaf = 1 + seed % 4
    split = LinearLeafRank(min_samples_leaf=min_samples_leaf).fit(X, y, sample_weight=w)
    s = linear_decision(X, split.coef_, 0.0)
    best = _brute_force_cut(s, y, w, min_samples_leaf)
    assert split.gain_ == pytest.approx(best, abs=1e-12)
    left = split.goes_left(X)
    assert _gain(left, y, w) == pytest.approx(split.gain_, abs=1e-12)
    if split.gain_ > 0:
        assert min(left.sum(), (~left).sum()) >= min_samples_leaf


@pytest.mark.parametrize("seed", range(30))
def test_best_linear_cut_against_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    s = rng.integers(0, 6, size=n).astype(float)  # many ties
    s[rng.random(n) < 0.2] = np.nan
    y = rng.integers(0, 2, size=n)
    y[:2] = [0, 1]
    w = rng.random(n) + 0.1
    if np.all(np.isnan(s)):
        s[0] = 1.0
    min_samples_leaf = 1 + seed % 3
    gain, upper, missing_left, low, high = best_linear_cut(s, y, w, min_samples_leaf)
    assert gain == pytest.approx(_brute_force_cut(s, y, w, min_samples_leaf), abs=1e-12)
    if gain > 0:
        # the returned description is the subset that reaches the gain
        side = s >= high if upper else s <= low
        left = side | (np.isnan(s) & missing_left)
        assert _gain(left, y, w) == pytest.approx(gain, abs=1e-12)
        assert low < high


def test_gain_is_the_local_tpr_minus_fpr_on_imbalanced_weighted_data():
    X, y, w = _data(0, n=500, n_features=6, missing=0.05)
    y[np.random.default_rng(1).random(500) < 0.8] = 0
    split = LinearLeafRank().fit(X, y, sample_weight=w)
    assert split.gain_ == pytest.approx(_gain(split.goes_left(X), y, w), abs=1e-12)
    assert split.gain_ > 0


def test_invariant_to_affine_rescaling_of_each_feature():
    X, y, w = _data(2, n=300, n_features=5, missing=0.05)
    rng = np.random.default_rng(3)
    scale = rng.choice([-1, 1], 5) * 10.0 ** rng.uniform(-4, 4, 5)
    shift = rng.normal(size=5) * 1e3
    a = LinearLeafRank().fit(X, y, sample_weight=w)
    b = LinearLeafRank().fit(X * scale + shift, y, sample_weight=w)
    np.testing.assert_array_equal(a.goes_left(X), b.goes_left(X * scale + shift))
    assert b.gain_ == pytest.approx(a.gain_, abs=1e-12)
    np.testing.assert_allclose(b.feature_importances_, a.feature_importances_)
    assert b.shrinkage_ == pytest.approx(a.shrinkage_)


def test_invariant_to_row_order_and_weight_scale():
    X, y, w = _data(4, n=200, n_features=4)
    a = LinearLeafRank().fit(X, y, sample_weight=w)
    order = np.random.default_rng(0).permutation(200)
    b = LinearLeafRank().fit(X[order], y[order], sample_weight=3.0 * w[order])
    np.testing.assert_array_equal(a.goes_left(X), b.goes_left(X))
    assert b.gain_ == pytest.approx(a.gain_)


def test_zero_weights_are_removed_rows():
    X, y, w = _data(5, n=120, n_features=3)
    w[:30] = 0
    a = LinearLeafRank().fit(X, y, sample_weight=w)
    b = LinearLeafRank().fit(X[30:], y[30:], sample_weight=w[30:])
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert a.intercept_ == b.intercept_


def test_fisher_direction_matches_the_discriminant():
    # no shrinkage: the direction is S^-1 (m+ - m-) in standardized units, and
    # on raw features proportional to the classic discriminant
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3)) @ np.array([[2, 0, 0], [1, 1, 0], [0, 3, 0.5]])
    y = (rng.random(400) < 0.3).astype(int)
    X[y == 1] += [1.0, -0.5, 0.2]
    weight = np.where(y == 1, 0.5 / (y == 1).sum(), 0.5 / (y == 0).sum())
    direction, center, scale, lam = fisher_direction(X, y, weight, shrinkage=0.0)
    assert lam == 0.0
    mean_pos, mean_neg = X[y == 1].mean(0), X[y == 0].mean(0)
    within = 0.5 * np.cov(X[y == 1].T, bias=True) + 0.5 * np.cov(X[y == 0].T, bias=True)
    expected = np.linalg.solve(within, mean_pos - mean_neg)
    raw = direction / scale
    np.testing.assert_allclose(raw / raw[0], expected / expected[0], rtol=1e-6)
    np.testing.assert_allclose(center, (mean_pos + mean_neg) / 2)
    assert np.abs(direction).sum() == pytest.approx(1.0)


def test_ledoit_wolf_shrinkage_grows_with_dimension_over_rows():
    rng = np.random.default_rng(0)
    mixing = np.eye(20) + 0.8 * rng.normal(size=(20, 20))  # correlated features

    def shrinkage(n, mixing):
        X = rng.normal(size=(n, 20)) @ mixing
        y = (rng.random(n) < 0.5).astype(int)
        y[:2] = [0, 1]
        weight = np.where(y == 1, 0.5 / y.sum(), 0.5 / (n - y.sum()))
        return fisher_direction(X, y, weight)[3]

    few, many = shrinkage(40, mixing), shrinkage(4000, mixing)
    assert 0 <= many < 0.05 < few <= 1
    # identity covariance: the truth is the target, shrink (almost) fully
    assert shrinkage(4000, np.eye(20)) > 0.5


def test_singular_covariance_gives_the_separating_direction():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 3.0], [3.0, 2.0]])
    split = LinearLeafRank(shrinkage=0.0).fit(X, [0, 0, 1, 1])
    assert split.gain_ == 1.0
    np.testing.assert_allclose(split.feature_importances_, [0.5, 0.5])


def test_missing_values_go_to_the_best_side():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    # missing x[0] is a strong sign of a positive
    missing = rng.random(400) < 0.2
    y[missing] = (rng.random(missing.sum()) < 0.95).astype(int)
    X[missing, 0] = np.nan
    split = LinearLeafRank().fit(X, y)
    assert split.missing_left_ and split.flip_
    assert split.goes_left(X)[missing].all()
    assert "(missing values: left)" in split.describe()
    # and a strong sign of a negative: right
    y[missing] = 1 - y[missing]
    split = LinearLeafRank().fit(X, y)
    assert not split.missing_left_
    assert not split.goes_left(X)[missing].any()


def test_missing_values_in_unused_features_are_ignored():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(int)
    X[:, 2] = 7.0  # constant: not used
    split = LinearLeafRank().fit(X, y)
    assert split.coef_[2] == 0 and 2 not in split.features_
    X_nan = X.copy()
    X_nan[:, 2] = np.nan
    np.testing.assert_array_equal(split.goes_left(X_nan), split.goes_left(X))
    frozen = split.freeze()
    np.testing.assert_array_equal(frozen.goes_left(X_nan), split.goes_left(X))


def test_unseen_missing_values_go_to_the_heavier_side():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] > 1.0).astype(int)  # the left side is the small one
    split = LinearLeafRank().fit(X, y)
    left = split.goes_left(X)
    assert left.sum() < (~left).sum()
    assert not split.goes_left(np.array([[np.nan, 0.0]]))[0]
    split = LinearLeafRank().fit(X, 1 - y)  # now the left side is the large one
    assert split.goes_left(np.array([[np.nan, 0.0]]))[0]


def test_max_features_draws_usable_features():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 10))
    X[:, :5] = 1.0  # constant
    y = (X[:, 5:].sum(1) > 0).astype(int)
    split = LinearLeafRank(max_features=3, random_state=0).fit(X, y)
    assert split.features_.shape == (3,) and np.all(split.features_ >= 5)
    assert split.n_cuts_ == 3
    assert np.count_nonzero(split.coef_) == 3
    importances = split.feature_importances_
    assert importances.sum() == pytest.approx(1.0)
    assert np.all(importances[:5] == 0)
    other = LinearLeafRank(max_features=3, random_state=1).fit(X, y)
    assert not np.array_equal(other.features_, split.features_)


def test_no_split_without_signal():
    X = np.ones((10, 2))
    split = LinearLeafRank().fit(X, [0, 1] * 5)
    assert split.gain_ == 0.0 and not split.goes_left(X).any()
    assert split.describe() == "no split (left side empty)"
    assert not split.feature_importances_.any()
    # identical class means: no direction
    X = np.array([[0.0], [1.0], [0.0], [1.0]])
    split = LinearLeafRank().fit(X, [0, 0, 1, 1])
    assert split.gain_ == 0.0


def test_protocol_and_validation():
    X, y, _ = _data(6, n=100, n_features=3)
    split = LinearLeafRank(random_state=0)
    assert clone(split).get_params() == split.get_params()
    with pytest.raises(AttributeError):
        split.feature_importances_  # noqa: B018
    split.fit(X, y)
    assert split.n_features_in_ == 3
    assert isinstance(split.goes_left(X), np.ndarray)
    assert split.describe(["a", "b", "c"]).startswith("left if ")
    with pytest.raises(ValueError, match="feature_names must contain 3"):
        split.describe(["a"])
    with pytest.raises(ValueError, match="shrinkage"):
        LinearLeafRank(shrinkage=2.0).fit(X, y)
    with pytest.raises(ValueError, match="min_samples_leaf"):
        LinearLeafRank(min_samples_leaf=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        split.goes_left(X[:, :2])


def test_frozen_rule_is_the_same_rule():
    for seed in range(10):
        X, y, w = _data(seed, n=80, n_features=4, missing=0.1)
        split = LinearLeafRank(max_features=2, random_state=seed).fit(
            X, y, sample_weight=w
        )
        frozen = split.freeze()
        assert isinstance(frozen, FrozenLinearLeafRank)
        X_new, _, _ = _data(seed + 100, n=300, n_features=4, missing=0.2)
        np.testing.assert_array_equal(frozen.goes_left(X_new), split.goes_left(X_new))
        assert frozen.describe(list("abcd")) == split.describe(list("abcd"))
        assert frozen.n_cuts_ == split.n_cuts_ and frozen.gain_ == split.gain_


def test_treerank_training_partition_matches_prediction_with_missing_values():
    X, y, _ = _data(7, n=1500, n_features=6, missing=0.1)
    tree = TreeRank(leafrank=LinearLeafRank(), max_features_node=4, random_state=0)
    tree.fit(X, y)
    structure = tree.tree_
    leaf = structure.apply(X)
    for node in structure.leaves:
        in_leaf = leaf == node
        assert structure.n_pos[node] == (y[in_leaf] == 1).sum()
        assert structure.n_neg[node] == (y[in_leaf] == 0).sum()
    np.testing.assert_array_equal(structure.apply_node_by_node(X), leaf)
    assert structure.n_leaves > 4


def test_forest_sets_max_features_and_ranks_a_linear_problem():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 6))
    y = (X @ [1.0, 1.0, 1.0, 0.5, 0, 0] + 0.5 * rng.normal(size=1200) > 0).astype(int)
    X_test = rng.normal(size=(3000, 6))
    y_test = X_test @ [1.0, 1.0, 1.0, 0.5, 0, 0] + 0.5 * rng.normal(size=3000) > 0
    sqrt = RankingForest(n_estimators=2, leafrank=LinearLeafRank(), random_state=0)
    sqrt.fit(X, y)
    assert sqrt.estimators_[0].leafrank.max_features == "sqrt"
    rule = sqrt.estimators_[0].tree_.leafranks[0]
    assert np.count_nonzero(rule.coef_) == 2  # sqrt(6) features
    # the two splitters compared with the same leaf scores (the trees' ranks)
    linear = RankingForest(
        n_estimators=20,
        leafrank=LinearLeafRank(),
        max_features=None,
        aggregation="mean",
        leaf_scores="rank",
        random_state=0,
    ).fit(X, y)
    boxes = RankingForest(
        n_estimators=20, aggregation="mean", leaf_scores="rank", random_state=0
    ).fit(X, y)
    assert linear.score(X_test, y_test) > boxes.score(X_test, y_test) + 0.01


def test_export_reads_the_linear_rule():
    X, y, _ = _data(8, n=400, n_features=2)
    tree = TreeRank(leafrank=LinearLeafRank(), max_depth=1, random_state=0).fit(X, y)
    text = export_text(tree, feature_names=["age", "dose"])
    rule = tree.tree_.leafranks[0]
    assert rule.describe(["age", "dose"]) in text
    assert "*age" in text and "*dose" in text
    graph = to_networkx(tree, feature_names=["age", "dose"])
    assert any(
        rule.describe(["age", "dose"]) in str(data.values())
        for _, data in graph.nodes(data=True)
    )


@pytest.mark.parametrize(
    "model",
    [
        TreeRank(leafrank=LinearLeafRank(), random_state=0),
        TreeRank(leafrank=LinearLeafRank(max_features=2), pruning="cv", random_state=0),
        RankingForest(n_estimators=4, leafrank=LinearLeafRank(), random_state=0),
    ],
    ids=["tree", "tree-cv", "forest"],
)
def test_save_load_round_trip_is_exact(tmp_path, model):
    X, y, _ = _data(9, n=600, n_features=5, missing=0.05)
    X_new, _, _ = _data(10, n=2000, n_features=5, missing=0.1)
    model = clone(model).fit(X, y)
    save_model(model, tmp_path / "m.trk")
    loaded = load_model(tmp_path / "m.trk")
    np.testing.assert_array_equal(
        loaded.decision_function(X_new), model.decision_function(X_new)
    )
    assert isinstance(loaded.get_params()["leafrank"], LinearLeafRank)
    np.testing.assert_array_equal(
        loaded.feature_importances_, model.feature_importances_
    )
    first = model if hasattr(model, "tree_") else model.estimators_[0]
    first_loaded = loaded if hasattr(loaded, "tree_") else loaded.estimators_[0]
    for rule, frozen in zip(first.tree_.leafranks, first_loaded.tree_.leafranks):
        if rule is not None:
            assert frozen.describe() == rule.describe()


# ---------------------------------------------------------------------------
# MixedLeafRank
# ---------------------------------------------------------------------------


def test_mixed_chooses_the_linear_rule_on_a_diagonal_boundary():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    split = MixedLeafRank(random_state=0).fit(X, y)
    assert isinstance(split.leafrank_, LinearLeafRank) and split.chosen_ == 1
    assert split.selection_gains_[1] > split.selection_gains_[0]
    assert split.gain_ == pytest.approx(_gain(split.goes_left(X), y, np.ones(600)))
    assert split.describe() == split.leafrank_.describe()
    assert isinstance(split.freeze(), FrozenLinearLeafRank)


def test_mixed_chooses_the_boxes_on_a_box():
    rng = np.random.default_rng(1)
    X = rng.uniform(-1, 1, size=(1000, 2))
    y = ((np.abs(X[:, 0]) < 0.5) & (np.abs(X[:, 1]) < 0.5)).astype(int)
    split = MixedLeafRank(
        [LeafRank(max_depth=2, min_samples_leaf=20), LinearLeafRank()],
        random_state=0,
    ).fit(X, y)
    assert isinstance(split.leafrank_, LeafRank)
    assert split.n_cuts_ == 3
    frozen = split.freeze()
    assert isinstance(frozen, FrozenTreeLeafRank)
    np.testing.assert_array_equal(frozen.goes_left(X), split.goes_left(X))
    assert split.left_rules() == split.leafrank_.left_rules()


def test_mixed_train_selection_is_the_largest_training_gain():
    X, y, w = _data(11, n=300, n_features=3)
    split = MixedLeafRank(selection="train", random_state=0).fit(X, y, sample_weight=w)
    assert split.selection_gains_.shape == (2,)
    assert split.selection_gains_[split.chosen_] == split.selection_gains_.max()
    assert split.gain_ == pytest.approx(split.selection_gains_.max())


def test_mixed_held_out_choice_uses_unseen_rows():
    # pure noise: the boxes win on their own rows, not on held-out ones more
    # often than the half-space
    rng = np.random.default_rng(3)
    train_wins = holdout_wins = 0
    for seed in range(10):
        X = rng.normal(size=(300, 5))
        y = (rng.random(300) < 0.5).astype(int)
        template = [LeafRank(max_depth=3, min_samples_leaf=5), LinearLeafRank()]
        train = MixedLeafRank(template, selection="train", random_state=seed)
        holdout = MixedLeafRank(template, random_state=seed)
        train_wins += train.fit(X, y).chosen_ == 0
        holdout_wins += holdout.fit(X, y).chosen_ == 0
    assert train_wins >= 8
    assert holdout_wins <= train_wins - 3


def test_mixed_sets_max_features_and_seeds_and_keeps_templates_unfitted():
    X, y, _ = _data(12, n=300, n_features=6)
    templates = [LeafRank(), LinearLeafRank()]
    split = MixedLeafRank(templates, max_features=2, random_state=0).fit(X, y)
    assert split.leafrank_.max_features == 2
    assert split.leafrank_.random_state is not None
    assert not hasattr(templates[1], "coef_") and not hasattr(templates[0], "tree_")
    again = MixedLeafRank(templates, max_features=2, random_state=0).fit(X, y)
    np.testing.assert_array_equal(again.goes_left(X), split.goes_left(X))
    # a shallow copy of an unfitted MixedLeafRank fits as a clone does
    copied = copy.copy(MixedLeafRank(templates, max_features=2, random_state=0))
    np.testing.assert_array_equal(copied.fit(X, y).goes_left(X), split.goes_left(X))


def test_mixed_small_class_falls_back_to_training_rows():
    X = np.arange(12, dtype=float).reshape(-1, 1)
    y = np.array([0] * 11 + [1])
    split = MixedLeafRank(
        [LeafRank(max_depth=1, min_samples_leaf=1), LinearLeafRank()], random_state=0
    ).fit(X, y)
    assert split.gain_ == 1.0


def test_mixed_validation():
    X, y, _ = _data(13, n=100, n_features=2)
    with pytest.raises(ValueError, match="at least one"):
        MixedLeafRank([]).fit(X, y)
    with pytest.raises(ValueError, match="LeafRank-like"):
        MixedLeafRank([LinearLeafRank(), "tree"]).fit(X, y)
    with pytest.raises(ValueError, match="holdout_fraction"):
        MixedLeafRank(holdout_fraction=1.0).fit(X, y)
    with pytest.raises(ValueError, match="shrinkage"):
        MixedLeafRank([LinearLeafRank(shrinkage=-1.0)]).fit(X, y)


def test_mixed_in_a_forest():
    X, y, _ = _data(14, n=800, n_features=6, missing=0.02)
    forest = RankingForest(
        n_estimators=3, leafrank=MixedLeafRank(), random_state=0
    ).fit(X, y)
    rules = [r for t in forest.estimators_ for r in t.tree_.leafranks if r is not None]
    assert all(r.leafrank_.max_features == "sqrt" for r in rules)
    assert forest.score(X, y) > 0.8
    structure = forest.estimators_[0].tree_
    np.testing.assert_array_equal(structure.apply_node_by_node(X), structure.apply(X))


def test_local_gain_and_freeze_helpers():
    y = np.array([1, 1, 0, 0])
    assert local_gain(np.array([True, False, False, False]), y, np.ones(4)) == 0.5
    assert local_gain(np.ones(2, dtype=bool), np.ones(2, dtype=int), np.ones(2)) == 0
    rule = LeafRank(max_depth=1, min_samples_leaf=1).fit(
        np.arange(4.0).reshape(-1, 1), [0, 0, 1, 1]
    )
    assert freeze_leafrank(rule).describe() == rule.describe()
