"""Model files of trees and forests grown with a MixedLeafRank.

Each internal node keeps the rule its MixedLeafRank chose: a box rule (the
LeafRank's inner tree, stored in the engine's rule arrays) or a linear rule
(stored by its coefficients), with a flag per node (``rule_kinds``). The
refusals of edited mixed files are among the tampering cases of
``test_model_io.py``; random corruptions of a mixed file in
``test_model_file_fuzz.py``.
"""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB

from treerank import (
    ClassifierLeafRank,
    LeafRank,
    LinearLeafRank,
    MixedLeafRank,
    RankingForest,
    TreeRank,
)
from treerank.datasets import GaussianMeanShift
from treerank.model_io import load_model, save_model
from treerank.model_io._archive import read_archive
from treerank.tree import FrozenLinearLeafRank, FrozenTreeLeafRank


@pytest.fixture(scope="module")
def data():
    X, y = GaussianMeanShift(n_features=4).sample(300, random_state=0)
    X[::13, 2] = np.nan  # MixedLeafRank and both its candidates take NaN
    X_new, _ = GaussianMeanShift(n_features=4).sample(1000, random_state=1)
    X_new[::7, 1] = np.nan
    return X, y, X_new


def _trees(model):
    return [model] if isinstance(model, TreeRank) else model.estimators_


def _chosen(model):
    """The class of the rule each MixedLeafRank of the model chose."""
    return [
        type(rule.leafrank_).__name__
        for tree in _trees(model)
        for rule in tree.full_tree_.leafranks
        if rule is not None
    ]


def _check_round_trip(model, path, X_new):
    """Saved, loaded, saved again: identical predictions, rules, files."""
    save_model(model, path)
    loaded = load_model(path)
    for method in ("decision_function", "predict_proba", "predict", "apply"):
        np.testing.assert_array_equal(
            getattr(loaded, method)(X_new), getattr(model, method)(X_new), method
        )
    np.testing.assert_array_equal(
        loaded.feature_importances_, model.feature_importances_
    )
    assert isinstance(loaded.leafrank, MixedLeafRank)
    assert repr(loaded.leafrank) == repr(model.leafrank)
    for tree, loaded_tree in zip(_trees(model), _trees(loaded)):
        np.testing.assert_array_equal(loaded_tree.leaf_proba_, tree.leaf_proba_)
        np.testing.assert_array_equal(
            loaded_tree.feature_importances_, tree.feature_importances_
        )
        full, loaded_full = tree.full_tree_, loaded_tree.full_tree_
        for node, rule in enumerate(full.leafranks):
            frozen = loaded_full.leafranks[node]
            if rule is None:
                assert frozen is None
                continue
            chosen = rule.leafrank_  # the loaded node holds its rule, frozen
            boxes = isinstance(chosen, LeafRank)
            assert type(frozen) is (
                FrozenTreeLeafRank if boxes else FrozenLinearLeafRank
            )
            assert frozen.describe() == rule.describe()
            assert frozen.n_cuts_ == chosen.n_cuts_ and frozen.gain_ == chosen.gain_
            np.testing.assert_array_equal(
                frozen.feature_importances_, rule.feature_importances_
            )
            features = full.features[node]
            loaded_features = loaded_full.features[node]
            assert (features is None) == (loaded_features is None)
            if features is not None:
                np.testing.assert_array_equal(loaded_features, features)
    # a loaded model saves the same file content again
    description, arrays = read_archive(path)
    save_model(loaded, path.with_suffix(".again"))
    description_again, again = read_archive(path.with_suffix(".again"))
    assert description_again == description
    assert set(again) == set(arrays)
    for name, array in arrays.items():
        assert again[name].dtype == array.dtype, name
        np.testing.assert_array_equal(again[name], array, err_msg=name)
    return loaded, arrays


MODELS = {
    "tree": TreeRank(leafrank=MixedLeafRank(), max_depth=4, random_state=0),
    "tree-fr1-max-features": TreeRank(
        leafrank=MixedLeafRank(max_features=2, random_state=3),
        max_features_node=3,
        pruning="cv",
        cv=2,
        max_depth=3,
        random_state=0,
    ),
    "forest": RankingForest(
        n_estimators=3, leafrank=MixedLeafRank(), max_depth=3, random_state=0
    ),
    "forest-three-candidates": RankingForest(
        n_estimators=3,
        leafrank=MixedLeafRank(
            [
                ClassifierLeafRank(LogisticRegression()),
                LeafRank(max_depth=2, min_samples_leaf=10),
                LinearLeafRank(),
            ]
        ),
        max_features=None,
        aggregation="mean",
        max_depth=3,
        random_state=0,
    ),
}


@pytest.mark.parametrize("name", list(MODELS))
def test_mixed_round_trip_is_exact(tmp_path, data, name):
    X, y, X_new = data
    if name == "forest-three-candidates":  # LogisticRegression refuses NaN
        X, X_new = np.nan_to_num(X), np.nan_to_num(X_new)
    model = MODELS[name].fit(X, y)
    _, arrays = _check_round_trip(model, tmp_path / "m.trk", X_new)
    kinds = arrays["rule_kinds"]
    chosen = _chosen(model)
    assert kinds.shape == (len(chosen),)
    np.testing.assert_array_equal(kinds == 0, [c == "LeafRank" for c in chosen])
    if name == "forest-three-candidates":  # two classifiers of linear rules
        assert set(chosen) == {"LeafRank", "LinearLeafRank", "ClassifierLeafRank"}
        description, _ = read_archive(tmp_path / "m.trk")
        names = description["structures"]["estimators"]
        assert names == ["LinearLeafRank", "LogisticRegression"]
        np.testing.assert_array_equal(
            kinds, [{"LeafRank": 0, "LinearLeafRank": 1}.get(c, 2) for c in chosen]
        )


def test_a_forest_with_both_kinds_of_rules(tmp_path, data):
    """The trees of this forest cut some nodes by boxes, others by half-spaces."""
    X, y, X_new = data
    forest = RankingForest(
        n_estimators=3,
        leafrank=MixedLeafRank(
            [LeafRank(max_depth=2, min_samples_leaf=10), LinearLeafRank()]
        ),
        max_depth=3,
        random_state=0,
    ).fit(X, y)
    chosen = _chosen(forest)
    assert {"LeafRank", "LinearLeafRank"} <= set(chosen)
    # both kinds within one tree too
    assert any(
        {type(r.leafrank_).__name__ for r in tree.full_tree_.leafranks if r}
        == {"LeafRank", "LinearLeafRank"}
        for tree in forest.estimators_
    )
    _, arrays = _check_round_trip(forest, tmp_path / "f.trk", X_new)
    assert set(np.unique(arrays["rule_kinds"])) == {0, 1}
    description, _ = read_archive(tmp_path / "f.trk")
    assert description["structures"] == {
        "rule_kind": "mixed",
        "estimators": ["LinearLeafRank"],
    }
    # the box rules are stored as the engine's: by their layout, compactly
    assert "rule_split_bits" in arrays and "rule_child_left" not in arrays
    assert arrays["rule_offsets"].shape == (4,)


@pytest.mark.parametrize(
    "candidates",
    [[LinearLeafRank()], [LeafRank(max_depth=2, min_samples_leaf=10)]],
    ids=["linear-only", "boxes-only"],
)
def test_mixed_with_one_kind_of_rule(tmp_path, data, candidates):
    """A MixedLeafRank whose nodes all chose one kind stays a mixed model."""
    X, y, X_new = data
    tree = TreeRank(
        leafrank=MixedLeafRank(candidates), max_depth=3, random_state=0
    ).fit(X, y)
    _, arrays = _check_round_trip(tree, tmp_path / "t.trk", X_new)
    boxes = isinstance(candidates[0], LeafRank)
    assert np.all((arrays["rule_kinds"] == 0) == boxes)
    assert (arrays["rule_coef"].shape[0] == 0) == boxes


def test_box_rule_splitting_on_missingness(tmp_path):
    """A box rule 'x <= +inf' (non-missing values left) is frozen and saved."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    X[rng.random(300) < 0.5, 0] = np.nan
    y = np.isnan(X[:, 0]) ^ (rng.random(300) < 0.1)
    tree = TreeRank(
        leafrank=MixedLeafRank([LeafRank(max_depth=1, min_samples_leaf=5)]),
        max_depth=2,
        random_state=0,
    ).fit(X, y)
    rule = tree.tree_.leafranks[0].freeze()
    assert rule.threshold[0] == np.inf
    _check_round_trip(tree, tmp_path / "t.trk", X)


def test_candidates_parameters_not_saved(tmp_path, data):
    """A candidate's RandomState seed is listed as not saved, and defaults."""
    X, y, X_new = data
    tree = TreeRank(
        leafrank=MixedLeafRank(
            [LeafRank(random_state=np.random.RandomState(0)), LinearLeafRank()]
        ),
        max_depth=2,
        random_state=0,
    ).fit(X, y)
    save_model(tree, tmp_path / "t.trk")
    description, _ = read_archive(tmp_path / "t.trk")
    assert description["params_not_saved"] == ["leafrank__leafranks__0__random_state"]
    loaded = load_model(tmp_path / "t.trk")
    assert loaded.leafrank.leafranks[0].random_state is None
    np.testing.assert_array_equal(
        loaded.decision_function(X_new), tree.decision_function(X_new)
    )


def test_unsupported_candidates_are_refused_at_save(tmp_path, data):
    X, y, _ = data
    X = np.nan_to_num(X)  # GaussianNB refuses NaN
    bayes = TreeRank(
        leafrank=MixedLeafRank([LeafRank(), ClassifierLeafRank(GaussianNB())]),
        max_depth=2,
        random_state=0,
    ).fit(X, y)
    with pytest.raises(
        ValueError,
        match=r"leafrank\.leafranks\[1\]: a ClassifierLeafRank around GaussianNB "
        "cannot be saved without pickle",
    ):
        save_model(bayes, tmp_path / "x.trk")
    nested = TreeRank(
        leafrank=MixedLeafRank([MixedLeafRank()]), max_depth=1, random_state=0
    ).fit(X, y)
    with pytest.raises(
        ValueError,
        match=r"leafrank\.leafranks\[0\]: MixedLeafRank cannot be saved without pickle",
    ):
        save_model(nested, tmp_path / "x.trk")
    assert not (tmp_path / "x.trk").exists()
