"""Model files: exact round trips, lean content, refusal of inconsistent models.

The archive layer (digests, sizes, zip bombs) is tested in
``test_model_file_fuzz.py``; here a file's *content* is edited with valid
digests (read, edit, write again), as someone who recomputes them would, and
every inconsistency must be refused with a message naming the problem.
"""

import copy
import hashlib
import itertools
import json
import pickle
import re
import struct
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from model_file_editing import full_rule_form
from sklearn.linear_model import LogisticRegression, RidgeClassifierCV
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import LinearSVC
from sklearn.utils import get_tags

from treerank import (
    ClassifierLeafRank,
    LeafRank,
    LinearLeafRank,
    MixedLeafRank,
    RankingForest,
    TreeRank,
)
from treerank._engine import rule_children
from treerank.calibration import MonotoneCalibration, decision_offset
from treerank.datasets import GaussianMeanShift, make_nested_squares
from treerank.exceptions import ModelFileError
from treerank.model_io import (
    _arrays,
    _calibration,
    _rules_engine,
    _tree_arrays,
    load_model,
    save_model,
)
from treerank.model_io._archive import read_archive, write_archive

PROPERTY = settings(max_examples=60, derandomize=True, deadline=None, database=None)


@pytest.fixture(scope="module")
def data():
    X, y = GaussianMeanShift(n_features=4).sample(800, random_state=0)
    X_new, _ = GaussianMeanShift(n_features=4).sample(3000, random_state=1)
    X_new[::11, 1] = np.nan  # missing values follow each split's direction
    return X, y, X_new


def _same_predictions(a, b, X):
    if not get_tags(a).input_tags.allow_nan:  # a linear splitter refuses NaN
        X = X[~np.isnan(X).any(axis=1)]
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.apply(X), b.apply(X))


# ----------------------------------------------------------------------
# exact round trips
# ----------------------------------------------------------------------
TREE_PARAMS = {
    "default": {},
    "fr1-fr2": {
        "max_features_node": 2,
        "leafrank": LeafRank(max_depth=2, max_features=1),
    },
    "logistic": {"leafrank": ClassifierLeafRank(LogisticRegression()), "max_depth": 3},
    "linear-svc-fr1": {
        "leafrank": ClassifierLeafRank(LinearSVC(), random_state=3),
        "max_features_node": 3,
        "max_depth": 3,
    },
    "pruned": {"ccp_alpha": 0.005},
    "cv": {"pruning": "cv", "cv": 3},
    "penalty": {"pruning": "penalty", "penalty_scale": 0.01},
    "youden-deep": {"max_depth": None, "leafrank": LeafRank(criterion="youden")},
}


@pytest.mark.parametrize("params", TREE_PARAMS.values(), ids=list(TREE_PARAMS))
def test_treerank_round_trip_is_exact(tmp_path, data, params):
    X, y, X_new = data
    model = TreeRank(random_state=0, **params).fit(X, y)
    path = tmp_path / "model.trk"
    save_model(model, path)
    loaded = load_model(path)
    _same_predictions(model, loaded, X_new)
    assert loaded.get_params(deep=False).keys() == model.get_params(deep=False).keys()
    assert loaded.n_leaves_ == model.n_leaves_
    assert loaded.tree_.auc() == model.tree_.auc()
    assert loaded.ccp_alpha_ == model.ccp_alpha_
    np.testing.assert_array_equal(loaded.leaf_proba_, model.leaf_proba_)
    np.testing.assert_array_equal(
        loaded.feature_importances_, model.feature_importances_
    )
    if hasattr(model, "cv_results_"):
        for key, value in model.cv_results_.items():
            np.testing.assert_array_equal(loaded.cv_results_[key], value)
    # rules describe themselves identically
    for original, frozen in zip(model.tree_.leafranks, loaded.tree_.leafranks):
        if original is not None:
            assert frozen.describe() == original.describe()
    # the master tree is kept: pruning again works after loading
    path_alphas = model.cost_complexity_pruning_path().ccp_alphas
    lam = path_alphas[min(1, len(path_alphas) - 1)]
    _same_predictions(model.prune(lam), loaded.prune(lam), X_new)
    # a loaded model can be refitted, into the model it was saved from
    _same_predictions(
        loaded.fit(X, y), TreeRank(random_state=0, **params).fit(X, y), X_new
    )


def test_split_on_missingness_round_trip(tmp_path):
    """A rule 'x <= +inf' sends the non-missing values left: valid, and exact."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    X[rng.random(400) < 0.5, 0] = np.nan
    y = np.isnan(X[:, 0]) ^ (rng.random(400) < 0.1)
    model = TreeRank(max_depth=2, leafrank=LeafRank(max_depth=1), random_state=0)
    model.fit(X, y)
    assert np.any(model.tree_.rules.threshold == np.inf)
    save_model(model, tmp_path / "m.trk")
    loaded = load_model(tmp_path / "m.trk")
    _same_predictions(model, loaded, X)
    # the rules as frozen LeafRanks (threshold +inf included) describe themselves
    for rule, frozen in zip(model.tree_.leafranks, loaded.tree_.leafranks):
        if rule is not None:
            assert frozen.describe() == rule.describe()
            np.testing.assert_array_equal(frozen.goes_left(X), rule.goes_left(X))


def test_penalty_pruning_really_pruned(data):
    """The penalty case above stores a subtree strictly smaller than the master."""
    X, y, _ = data
    model = TreeRank(random_state=0, **TREE_PARAMS["penalty"]).fit(X, y)
    assert 1 < model.n_leaves_ < model.full_tree_.n_leaves


def test_feature_names_and_labels_survive(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = make_nested_squares(400, random_state=0)
    frame = pd.DataFrame(X, columns=["width", "height"])
    for labels in [np.where(y == 1, 7, -3), y == 1, np.where(y == 1, 2.5, -0.5)]:
        model = TreeRank(random_state=0).fit(frame, labels)
        save_model(model, tmp_path / "m.trk")
        loaded = load_model(tmp_path / "m.trk")
        assert list(loaded.feature_names_in_) == ["width", "height"]
        assert loaded.classes_.dtype == model.classes_.dtype
        np.testing.assert_array_equal(loaded.classes_, model.classes_)
        np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))


def test_parameters_that_are_not_plain_values(tmp_path, data):
    """Lists and infinite floats are stored; other objects take their defaults."""
    X, y, X_new = data
    model = TreeRank(
        random_state=np.random.RandomState(0),
        leafrank=ClassifierLeafRank(RidgeClassifierCV(alphas=[0.1, 1.0])),
        max_depth=2,
    ).fit(X, y)
    save_model(model, tmp_path / "m.trk")
    description, _ = read_archive(tmp_path / "m.trk")
    assert description["params_not_saved"] == ["random_state"]
    loaded = load_model(tmp_path / "m.trk")
    assert loaded.random_state is None
    assert loaded.leafrank.estimator.alphas == [0.1, 1.0]
    _same_predictions(model, loaded, X_new)
    unbounded = TreeRank(
        leafrank=ClassifierLeafRank(LogisticRegression(C=np.inf)), max_depth=2
    ).fit(X, y)
    save_model(unbounded, tmp_path / "inf.trk")
    description, _ = read_archive(tmp_path / "inf.trk")
    assert description["params"]["leafrank"]["estimator"]["params"]["C"] == {
        "float": "inf"
    }
    loaded = load_model(tmp_path / "inf.trk")
    assert loaded.leafrank.estimator.C == np.inf
    _same_predictions(unbounded, loaded, X_new)


def test_unsupported_models_are_refused(tmp_path, data):
    X, y, _ = data
    knn = TreeRank(leafrank=ClassifierLeafRank(KNeighborsClassifier()))
    with pytest.raises(ValueError, match="does not accept sample_weight"):
        knn.fit(X, y)
    with pytest.raises(ValueError, match="not fitted yet"):
        save_model(TreeRank(), tmp_path / "x.trk")
    with pytest.raises(ValueError, match="supports treerank's TreeRank"):
        save_model(LogisticRegression().fit(X, y), tmp_path / "x.trk")
    with pytest.raises(ValueError, match="include_training_data must be a bool"):
        save_model(
            TreeRank(max_depth=1).fit(X, y),
            tmp_path / "x.trk",
            include_training_data="yes",
        )
    assert not (tmp_path / "x.trk").exists()


def test_a_model_whose_parameters_changed_after_fit_is_not_saved(tmp_path, data):
    """save_model checks what it writes as load_model would: no unloadable file."""
    X, y, _ = data
    tree = TreeRank(random_state=0).fit(X, y)
    tree.set_params(max_depth=1)
    with pytest.raises(ValueError, match="deeper than max_depth=1"):
        save_model(tree, tmp_path / "x.trk")
    forest = RankingForest(n_estimators=3, random_state=0).fit(X, y)
    forest.set_params(n_estimators=4)
    with pytest.raises(ValueError, match=r"say 4 tree\(s\) but the file holds 3"):
        save_model(forest, tmp_path / "x.trk")
    assert not (tmp_path / "x.trk").exists()
    forest.set_params(n_estimators=3, n_jobs=2, verbose=1)  # runtime: fine
    save_model(forest, tmp_path / "x.trk")


def test_existing_file_is_not_overwritten_when_asked(tmp_path, data):
    X, y, _ = data
    model = TreeRank(random_state=0).fit(X, y)
    path = tmp_path / "m.trk"
    path.write_text("keep me")
    with pytest.raises(FileExistsError, match="already exists"):
        save_model(model, path, overwrite=False)
    assert path.read_text() == "keep me"


FOREST_PARAMS = {
    "median": {"aggregation": "median", "ccp_alpha": 0.002},
    "mean": {"aggregation": "mean"},
    "borda": {"aggregation": "borda", "max_depth": None},
    "subsample": {"bootstrap": False, "max_samples": 0.5},
    "linear": {
        "leafrank": ClassifierLeafRank(LogisticRegression()),
        "max_features": None,
        "max_features_node": 2,
        "max_depth": 2,
    },
}


@pytest.mark.parametrize("params", FOREST_PARAMS.values(), ids=list(FOREST_PARAMS))
def test_forest_round_trip_is_exact(tmp_path, data, params):
    X, y, X_new = data
    forest = RankingForest(n_estimators=6, random_state=0, **params).fit(X, y)
    path = tmp_path / "forest.trk"
    save_model(forest, path)
    loaded = load_model(path)
    _same_predictions(forest, loaded, X_new)
    assert loaded.oob_score_ == forest.oob_score_
    assert loaded.consensus_objective_ == forest.consensus_objective_
    assert loaded.borda_objective_ == forest.borda_objective_
    assert loaded.n_cells_ == forest.n_cells_
    np.testing.assert_array_equal(
        loaded.feature_importances_, forest.feature_importances_
    )
    for a, b in zip(loaded.estimators_, forest.estimators_):
        np.testing.assert_array_equal(a.tree_.children_left, b.tree_.children_left)
        np.testing.assert_array_equal(a.leaf_proba_, b.leaf_proba_)
    # the per-training-row arrays are not in the file
    assert loaded.estimators_samples_ is None
    assert loaded.oob_decision_function_ is None
    # and the loaded forest can be refitted like any estimator
    _same_predictions(
        loaded.fit(X, y),
        RankingForest(n_estimators=6, random_state=0, **params).fit(X, y),
        X_new,
    )


def test_training_data_is_kept_when_asked(tmp_path, data):
    X, y, X_new = data
    forest = RankingForest(n_estimators=4, random_state=0).fit(X, y)
    save_model(forest, tmp_path / "f.trk", include_training_data=True)
    loaded = load_model(tmp_path / "f.trk")
    np.testing.assert_array_equal(
        loaded.estimators_samples_, forest.estimators_samples_
    )
    assert loaded.estimators_samples_.dtype == forest.estimators_samples_.dtype
    np.testing.assert_array_equal(
        loaded.oob_decision_function_, forest.oob_decision_function_
    )
    _same_predictions(forest, loaded, X_new)


def test_runtime_settings_are_not_taken_from_the_file(tmp_path, data):
    X, y, _ = data
    forest = RankingForest(n_estimators=3, n_jobs=3, verbose=2, random_state=0)
    save_model(forest.fit(X, y), tmp_path / "f.trk")
    description, _ = read_archive(tmp_path / "f.trk")
    assert "n_jobs" not in description["params"]
    assert "verbose" not in description["params"]
    loaded = load_model(tmp_path / "f.trk")
    assert loaded.n_jobs is None and loaded.verbose == 0
    assert load_model(tmp_path / "f.trk", n_jobs=2).n_jobs == 2
    with pytest.raises(ValueError, match="n_jobs must be an int or None"):
        load_model(tmp_path / "f.trk", n_jobs="all")
    # a file asking for threads is refused, not obeyed
    path = _edited(
        tmp_path, tmp_path / "f.trk", lambda d, a: d["params"].update(n_jobs=400)
    )
    with pytest.raises(ModelFileError, match="n_jobs, a runtime setting"):
        load_model(path)


def test_metadata_round_trip(tmp_path, data):
    X, y, _ = data
    model = TreeRank(max_depth=1).fit(X, y)
    save_model(model, tmp_path / "m.trk", metadata={"columns": ["a", "b"]})
    _, metadata = load_model(tmp_path / "m.trk", with_metadata=True)
    assert metadata == {"columns": ["a", "b"]}
    with pytest.raises(ValueError, match="JSON-serializable"):
        save_model(model, tmp_path / "n.trk", metadata={"x": float("nan")})


def test_pickle_and_joblib_still_work(tmp_path, data):
    import joblib

    X, y, X_new = data
    model = TreeRank(random_state=0).fit(X, y)
    joblib.dump(model, tmp_path / "m.joblib")
    _same_predictions(model, joblib.load(tmp_path / "m.joblib"), X_new)
    _same_predictions(model, pickle.loads(pickle.dumps(model)), X_new)


# ----------------------------------------------------------------------
# lean files
# ----------------------------------------------------------------------
@pytest.mark.parametrize("aggregation", ["median", "mean", "borda"])
def test_no_array_has_one_entry_per_training_row(tmp_path, aggregation):
    n_samples = 1013
    X, y = GaussianMeanShift(n_features=3).sample(n_samples, random_state=0)
    X = np.round(X, 1)  # duplicated rows: fewer cells than rows
    forest = RankingForest(n_estimators=4, aggregation=aggregation, random_state=0).fit(
        X, y
    )
    if aggregation == "median":
        assert forest.n_cells_ < n_samples  # the cells are not the rows
    save_model(forest, tmp_path / "f.trk")
    _, arrays = read_archive(tmp_path / "f.trk")
    for name, array in arrays.items():
        assert n_samples not in array.shape, name
    save_model(forest, tmp_path / "g.trk", include_training_data=True)
    _, arrays = read_archive(tmp_path / "g.trk")
    assert arrays["estimators_samples"].shape == (4, n_samples)
    assert arrays["oob_decision_function"].shape == (n_samples,)


@pytest.mark.parametrize("aggregation", ["median", "mean", "borda"])
def test_file_size_does_not_grow_with_training_rows(tmp_path, aggregation):
    """Trees of bounded size: 16x more rows, the same file size (within 20%)."""
    sizes = []
    for n_samples in (1000, 16000):
        X, y = make_nested_squares(n_samples, random_state=0)
        forest = RankingForest(
            n_estimators=10,
            aggregation=aggregation,
            max_depth=3,
            leafrank=LeafRank(max_depth=2, min_samples_leaf=5),
            random_state=0,
        ).fit(X, y)
        save_model(forest, tmp_path / "f.trk")
        sizes.append((tmp_path / "f.trk").stat().st_size)
    assert sizes[1] < 1.2 * sizes[0], sizes


@pytest.mark.parametrize("layout", ["dense", "missing", "sparse"])
def test_median_cells_are_stored_as_points(tmp_path, layout):
    """A point per cell (few bytes per feature) instead of a leaf per tree:
    the loaded forest has the same cells, consensus and masses."""
    rng = np.random.default_rng(0)
    X, y = GaussianMeanShift(n_features=3).sample(800, random_state=0)
    if layout == "missing":
        X[rng.random(X.shape) < 0.1] = np.nan
    if layout == "sparse":
        X[np.abs(X) < 0.6] = 0.0
        X = sp.csr_matrix(X)
    forest = RankingForest(n_estimators=12, random_state=0).fit(X, y)
    save_model(forest, tmp_path / "f.trk")
    _, arrays = read_archive(tmp_path / "f.trk")
    assert "cells" not in arrays and "consensus" not in arrays
    assert arrays["cell_corners"].shape == (forest.n_cells_, 3)
    assert arrays["cell_corners"].dtype.itemsize <= 2
    assert arrays["cell_bucket_sizes"].sum() == forest.n_cells_
    loaded = load_model(tmp_path / "f.trk")
    np.testing.assert_array_equal(loaded.cells_, forest.cells_)
    np.testing.assert_array_equal(loaded.consensus_, forest.consensus_)
    np.testing.assert_array_equal(loaded.cell_weights_, forest.cell_weights_)
    np.testing.assert_array_equal(loaded._cell_corners, forest._cell_corners)
    X_new, _ = GaussianMeanShift(n_features=3).sample(500, random_state=1)
    _same_predictions(forest, loaded, X_new)
    # a loaded forest saves the same file content again
    save_model(loaded, tmp_path / "g.trk")
    _, again = read_archive(tmp_path / "g.trk")
    assert set(again) == set(arrays)
    for name in arrays:
        np.testing.assert_array_equal(again[name], arrays[name], err_msg=name)


def test_categorical_forest_stores_its_cells_as_leaves(tmp_path):
    X, y = GaussianMeanShift(n_features=3).sample(600, random_state=0)
    X[:, 0] = np.floor(np.abs(X[:, 0]) * 2) % 5
    forest = RankingForest(
        n_estimators=4, categorical_features=[0], random_state=0
    ).fit(X, y)
    save_model(forest, tmp_path / "f.trk")
    _, arrays = read_archive(tmp_path / "f.trk")
    assert "cells" in arrays and "cell_corners" not in arrays
    loaded = load_model(tmp_path / "f.trk")
    np.testing.assert_array_equal(loaded.cells_, forest.cells_)
    _same_predictions(forest, loaded, X)


def test_rules_are_stored_per_feature_and_explain_identically(tmp_path):
    """Thresholds as per-feature indices, improvements as per-feature sums:
    the rules, the forest's and every rule's feature importances are equal."""
    X, y = GaussianMeanShift(n_features=4).sample(1500, random_state=0)
    forest = RankingForest(n_estimators=5, random_state=0).fit(X, y)
    save_model(forest, tmp_path / "f.trk")
    _, arrays = read_archive(tmp_path / "f.trk")
    assert "rule_threshold" not in arrays
    assert arrays["rule_threshold_index"].dtype == np.uint8
    improvement = arrays["rule_improvement"]  # at the splits only
    assert np.count_nonzero(improvement) < 0.7 * improvement.shape[0]
    loaded = load_model(tmp_path / "f.trk")
    np.testing.assert_array_equal(
        loaded.feature_importances_, forest.feature_importances_
    )
    for a, b in zip(loaded.estimators_, forest.estimators_):
        np.testing.assert_array_equal(a.feature_importances_, b.feature_importances_)
        np.testing.assert_array_equal(a.tree_.rules.threshold, b.tree_.rules.threshold)
        for rule_a, rule_b in zip(a.tree_.leafranks, b.tree_.leafranks):
            if rule_b is not None:
                np.testing.assert_array_equal(
                    rule_a.feature_importances_, rule_b.feature_importances_
                )


def _rules_equal(a, b):
    for name in (
        "feature",
        "threshold",
        "missing_left",
        "child_left",
        "child_right",
        "left_leaf",
        "missing_seen",
        "category",
    ):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), name)


@pytest.mark.parametrize("layout", ["dense", "missing", "categorical"])
def test_rules_are_stored_by_their_layout(tmp_path, layout):
    """One split bit per rule node: no children, no rule ranges, no field at
    a node that does not use it; read back to the same rules, bit for bit."""
    X, y = GaussianMeanShift(n_features=4).sample(1500, random_state=0)
    params = {}
    if layout == "missing":
        X[::7, 1] = np.nan
    elif layout == "categorical":
        X[:, 2] = np.floor(np.abs(X[:, 2]) * 3) % 5
        params["categorical_features"] = [2]
    forest = RankingForest(n_estimators=5, random_state=0, **params).fit(X, y)
    save_model(forest, tmp_path / "f.trk")
    _, arrays = read_archive(tmp_path / "f.trk")
    assert "rule_split_bits" in arrays
    assert not {
        "rule_child_left",
        "rule_child_right",
        "rule_start",
        "rule_stop",
        "rule_left_leaf",
        "rule_missing_left",
    } & set(arrays)
    n_splits = sum(int(np.sum(t.tree_.rules.feature >= 0)) for t in forest.estimators_)
    assert arrays["rule_feature"].shape == (n_splits,)
    assert arrays["rule_missing_left_bits"].shape == ((n_splits + 7) // 8,)
    loaded = load_model(tmp_path / "f.trk")
    for a, b in zip(loaded.estimators_, forest.estimators_):
        _rules_equal(a.tree_.rules, b.tree_.rules)
        np.testing.assert_array_equal(a.tree_.rule_start, b.tree_.rule_start)
        np.testing.assert_array_equal(a.tree_.rule_stop, b.tree_.rule_stop)
    _same_predictions(forest, loaded, X)


def _breadth_first(rules, start, stop):
    """The rule at start:stop renumbered breadth first (a valid rule laid out
    otherwise than the engine grows it), or None if both layouts agree."""
    left, right = rules.child_left[start:stop], rules.child_right[start:stop]
    order, k = [0], 0
    while k < len(order):
        if left[order[k]] >= 0:
            order += [left[order[k]], right[order[k]]]
        k += 1
    if order == list(range(stop - start)):
        return None
    new = np.empty(stop - start, dtype=np.int64)
    new[order] = np.arange(stop - start)
    fields = {}
    for name in ("feature", "threshold", "missing_left", "left_leaf", "improvement"):
        fields[name] = getattr(rules, name)[start:stop][order]
    fields["missing_seen"] = rules.missing_seen[start:stop][order]
    fields["child_left"] = np.where(left[order] >= 0, new[left[order]], -1)
    fields["child_right"] = np.where(right[order] >= 0, new[right[order]], -1)
    return fields


def test_rules_laid_out_otherwise_are_stored_whole(tmp_path):
    """A rule numbered breadth first (never by the engine, but a valid rule)
    is stored with its children, and loads to the same rules and scores."""
    X, y = GaussianMeanShift(n_features=4).sample(1500, random_state=0)
    tree = TreeRank(random_state=0).fit(X, y)
    structure, rules = tree.tree_, tree.tree_.rules
    for start, stop in zip(structure.rule_start, structure.rule_stop):
        fields = _breadth_first(rules, start, stop) if start >= 0 else None
        if fields is not None:
            break
    assert fields is not None, "every rule is the same in both layouts"
    for name, values in fields.items():
        getattr(rules, name)[start:stop] = values
    expected = tree.decision_function(X)
    save_model(tree, tmp_path / "t.trk")
    _, arrays = read_archive(tmp_path / "t.trk")
    assert "rule_child_left" in arrays and "rule_split_bits" not in arrays
    loaded = load_model(tmp_path / "t.trk")
    _rules_equal(loaded.tree_.rules, rules)
    np.testing.assert_array_equal(loaded.decision_function(X), expected)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("n_features", "bytes_before"), [(2, 11_893_138), (10, 31_476_027)]
)
def test_default_forest_file_at_200000_rows_is_5x_smaller_than_before(
    tmp_path, n_features, bytes_before
):
    """The acceptance case of issue 15: a default RankingForest(100) on
    200,000 rows of 2 features (61,792 cells) and of 10 (every row its own
    cell). The sizes before the lean format: benchmarks/bench_model_size.py."""
    from treerank.datasets import make_gaussian_mean_shift

    X, y = make_gaussian_mean_shift(200_000, n_features=n_features, random_state=0)
    forest = RankingForest(n_estimators=100, random_state=0).fit(X, y)
    save_model(forest, tmp_path / "f.trk")
    assert (tmp_path / "f.trk").stat().st_size * 5 <= bytes_before
    _, arrays = read_archive(tmp_path / "f.trk")
    assert not {"estimators_samples", "oob_decision_function"} & set(arrays)
    # only the cells (with ten features, one per row) may have an entry per
    # row: their points (a byte per feature) and masses
    per_row = {name for name, array in arrays.items() if 200_000 in array.shape}
    assert per_row <= {"cell_corners", "cell_weights"}, per_row
    assert arrays["cell_corners"].shape == (forest.n_cells_, n_features)
    X_new, _ = make_gaussian_mean_shift(20_000, n_features=n_features, random_state=1)
    _same_predictions(forest, load_model(tmp_path / "f.trk"), X_new)


@PROPERTY
@given(
    scores=st.lists(st.integers(-20, 20), min_size=1, max_size=60),
    labels=st.lists(st.booleans(), min_size=60, max_size=60),
    weights=st.lists(st.sampled_from([0.5, 1.0, 3.0]), min_size=60, max_size=60),
    scale=st.sampled_from([1.0, 0.1, 1e-3]),
)
def test_compact_calibration_predicts_identically(scores, labels, weights, scale):
    scores = np.asarray(scores) * scale
    n = scores.shape[0]
    y01, w = np.asarray(labels[:n], dtype=float), np.asarray(weights[:n])
    calibration = MonotoneCalibration(scores, y01, w)
    levels, proba = _calibration.compact_calibration(calibration)
    assert levels.shape[0] <= 2 * np.unique(calibration.proba_).shape[0]
    compact = MonotoneCalibration.from_arrays(levels, proba, calibration.threshold_)
    assert decision_offset(levels, proba) == calibration.threshold_
    full = calibration.levels_
    cuts = 0.5 * (full[1:] + full[:-1])
    queries = np.concatenate(
        [
            full,
            cuts,
            np.nextafter(cuts, np.inf),
            np.nextafter(cuts, -np.inf),
            [-np.inf, np.inf, full[0] - 1, full[-1] + 1],
        ]
    )
    np.testing.assert_array_equal(
        compact.predict_proba(queries), calibration.predict_proba(queries)
    )


def test_compact_calibration_of_a_forest_is_small(data):
    X, y, _ = data
    forest = RankingForest(n_estimators=6, aggregation="mean", random_state=0)
    calibration = forest.fit(X, y)._calibration
    levels, _ = _calibration.compact_calibration(calibration)
    assert levels.shape[0] < calibration.levels_.shape[0] / 5


@PROPERTY
@given(
    values=st.lists(
        st.one_of(
            st.integers(-(2**40), 2**40).map(float),
            st.floats(allow_nan=True, allow_infinity=True, width=32),
            st.floats(allow_nan=False, allow_infinity=True),
            st.sampled_from([0.0, -0.0, 0.5, 1e39]),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_narrow_is_exact(values):
    array = np.asarray(values, dtype=np.float64)
    stored = _arrays.narrow(array)
    back = stored.astype(np.float64)
    nan = np.isnan(array)
    np.testing.assert_array_equal(np.isnan(back), nan)
    np.testing.assert_array_equal(back[~nan].view(np.int64), array[~nan].view(np.int64))
    integers = np.asarray([int(v) for v in array[~nan & np.isfinite(array)]])
    if integers.size and np.abs(integers).max() < 2**62:
        np.testing.assert_array_equal(_arrays.narrow(integers), integers)


# ----------------------------------------------------------------------
# the tree validators against brute force
# ----------------------------------------------------------------------
def _random_tree(rng, n_splits):
    """Children arrays of a random binary tree numbered in preorder."""
    left, right = [], []

    def grow(budget):
        node = len(left)
        left.append(-1)
        right.append(-1)
        if budget[0] > 0 and rng.random() < 0.7:
            budget[0] -= 1
            left[node] = grow(budget)
            right[node] = grow(budget)
        return node

    grow([n_splits])
    return np.array(left), np.array(right)


def _renumber(left, right, order):
    """The same tree with node i renamed order[i]."""
    new_left, new_right = np.full_like(left, -1), np.full_like(right, -1)
    split = left >= 0
    new_left[order[split]] = order[left[split]]
    new_right[order[split]] = order[right[split]]
    return new_left, new_right


def _walk(left, right):
    """Preorder walk from node 0: (nodes visited, depth, subtree end) or None."""
    n = left.shape[0]
    visited, depth, ends = [], {}, {}

    def visit(node, d):
        if not 0 <= node < n or node in depth or len(visited) > n:
            raise ValueError
        visited.append(node)
        depth[node] = d
        if (left[node] < 0) != (right[node] < 0) or left[node] < -1:
            raise ValueError
        if left[node] >= 0:
            visit(left[node], d + 1)
            visit(right[node], d + 1)
        ends[node] = len(visited)

    try:
        visit(0, 0)
    except (ValueError, RecursionError):
        return None
    if sorted(visited) != list(range(n)):
        return None
    return visited, depth, ends


@PROPERTY
@given(seed=st.integers(0, 2**31), n_trees=st.integers(1, 4), kind=st.integers(0, 3))
def test_validators_agree_with_brute_force(seed, n_trees, kind):
    """Accepted exactly when a recursive walk sees binary trees in preorder."""
    rng = np.random.default_rng(seed)
    lefts, rights, walks = [], [], []
    for _ in range(n_trees):
        left, right = _random_tree(rng, int(rng.integers(0, 12)))
        n = left.shape[0]
        split = np.flatnonzero(left >= 0)
        if kind == 1 and n > 1:  # another numbering, root kept first
            order = np.concatenate([[0], 1 + rng.permutation(n - 1)])
            left, right = _renumber(left, right, order)
        elif kind == 2 and split.shape[0]:  # swap the children of one split
            node = rng.choice(split)
            left[node], right[node] = right[node], left[node]
        elif kind == 3:  # point one entry anywhere
            array = left if rng.random() < 0.5 else right
            array[rng.integers(n)] = rng.integers(-2, n + 1)
        lefts.append(left)
        rights.append(right)
        walks.append(_walk(left, right))
    expected = all(w is not None and w[0] == sorted(w[0]) for w in walks)
    left, right = np.concatenate(lefts), np.concatenate(rights)
    offsets = np.concatenate([[0], np.cumsum([len(a) for a in lefts])])
    owner, base, size, local = _tree_arrays.segments(offsets)
    try:
        parent = _tree_arrays.check_children(left, right, base, size, local, "tree")
        _tree_arrays.check_preorder(left, right, owner, local, size, "tree")
    except ValueError:
        assert not expected
        return
    assert expected
    depth = _tree_arrays.node_depths(parent)
    for t, (_, depths, ends) in enumerate(walks):
        a, b = offsets[t], offsets[t + 1]
        np.testing.assert_array_equal(depth[a:b], [depths[v] for v in range(b - a)])
        np.testing.assert_array_equal(
            _tree_arrays.subtree_ends(lefts[t], rights[t]),
            [ends[v] for v in range(b - a)],
        )


# ----------------------------------------------------------------------
# inconsistent content with valid digests: refused, naming the problem
# ----------------------------------------------------------------------
def _edited(tmp_path, source, edit, name="edited.trk"):
    """Read a model file, edit its description and arrays, write it again.

    The writer recomputes every digest: only the model's consistency checks
    stand between the edit and a loaded model.
    """
    description, arrays = read_archive(source)
    arrays = {k: np.array(v) for k, v in arrays.items()}
    edit(description, arrays)
    path = tmp_path / name
    write_archive(path, description, arrays)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory, data):
    X, y, _ = data
    directory = tmp_path_factory.mktemp("files")
    models = {
        "tree": TreeRank(random_state=0),
        "linear": TreeRank(
            max_depth=3,
            max_features_node=2,
            leafrank=ClassifierLeafRank(LogisticRegression()),
            random_state=0,
        ),
        "penalty": TreeRank(pruning="penalty", penalty_scale=0.01, random_state=0),
        "cv": TreeRank(pruning="cv", cv=3, random_state=0),
        "median": RankingForest(n_estimators=4, random_state=0),
        "borda": RankingForest(n_estimators=4, aggregation="borda", random_state=0),
        # box and linear rules (both occur), on 3 of the 4 features per node
        # (FR1), each rule drawing 2 of them (max_features)
        "mixed": RankingForest(
            n_estimators=3,
            max_depth=3,
            max_features=2,
            max_features_node=3,
            leafrank=MixedLeafRank(
                [LeafRank(max_depth=2, min_samples_leaf=20), LinearLeafRank()]
            ),
            random_state=0,
        ),
    }
    paths = {}
    for name, model in models.items():
        paths[name] = directory / f"{name}.trk"
        save_model(model.fit(X, y), paths[name])
    # the tree with its rules stored whole (as in files written before the
    # rules were stored by their layout, or with rules laid out otherwise)
    description, arrays = read_archive(paths["tree"])
    paths["tree_full"] = directory / "tree_full.trk"
    write_archive(paths["tree_full"], description, full_rule_form(arrays))
    description, arrays = read_archive(paths["mixed"])
    paths["mixed_full"] = directory / "mixed_full.trk"
    write_archive(paths["mixed_full"], description, full_rule_form(arrays))
    paths["training"] = directory / "training.trk"
    save_model(models["median"], paths["training"], include_training_data=True)
    # the same forest with its cells stored as leaf tuples (as when it has no
    # corners: categorical splits, more features than trees, older files)
    models["median"]._cell_corners = None
    paths["median_cells"] = directory / "median_cells.trk"
    save_model(models["median"], paths["median_cells"])
    return paths


def _corner_outside_its_grid(array, arrays):
    # feature 1's grid is its own: a code past it is refused even when it is
    # within the range of another feature's codes
    array[0, :] = array.max(axis=0) + 2


def _leafrank(**changes):
    """The saved form of a LeafRank parameter."""
    params = {
        "criterion": "gini",
        "max_bins": 255,
        "max_depth": 3,
        "max_features": None,
        "min_samples_leaf": 50,
        "node_subsample": 65536,
        "random_state": None,
    }
    return {"class": "LeafRank", "params": {**params, **changes}}


def _set(key, value):
    def edit(description, arrays):
        description[key] = value

    return edit


def _param(key, value):
    def edit(description, arrays):
        description["params"][key] = value

    return edit


def _array(name, change):
    def edit(description, arrays):
        array = arrays[name].astype(
            np.float64 if arrays[name].dtype.kind == "f" else arrays[name].dtype
        )
        if array.dtype.kind in "iu":
            array = array.astype(np.int64)
        result = change(array, arrays)
        arrays[name] = array if result is None else result

    return edit


def _first_split_with_leaf_children(arrays):
    left, right = arrays["children_left"], arrays["children_right"]
    for node in np.flatnonzero(left >= 0):
        if left[left[node]] < 0 and left[right[node]] < 0:
            return node
    raise AssertionError("no such split")


def _swap_leaf_counts(description, arrays):
    """Swap the counts of two sibling leaves: sums kept, the worse one left."""
    node = _first_split_with_leaf_children(arrays)
    a, b = arrays["children_left"][node], arrays["children_right"][node]
    for name in ("n_pos", "n_neg"):
        counts = arrays[name].astype(np.float64)
        counts[[a, b]] = counts[[b, a]]
        arrays[name] = counts


def _two_parents(array, arrays):
    right = array
    internal = np.flatnonzero(arrays["children_left"] >= 0)
    right[0] = right[internal[1]]


def _first_rule_split(arrays):
    return int(arrays["rule_start"][0])


def _rule_leaf(arrays):
    return int(np.flatnonzero(arrays["rule_child_left"] < 0)[0])


def _swap_rule_root_children(description, arrays):
    """Children after their parent, one parent each, but not a sibling pair."""
    root = _first_rule_split(arrays)
    left = arrays["rule_child_left"].astype(np.int64)
    right = arrays["rule_child_right"].astype(np.int64)
    left[root], right[root] = right[root], left[root]
    arrays["rule_child_left"], arrays["rule_child_right"] = left, right


def _set_padding_bit(array, arrays):
    n_nodes = int(arrays["rule_offsets"][-1])
    assert n_nodes % 8, "no padding bit to set"
    array[-1] |= 1 << (n_nodes % 8)
    return array.astype(np.uint8)


def _split_the_last_rule_node(array, arrays):
    n_nodes = int(arrays["rule_offsets"][-1])
    array[(n_nodes - 1) // 8] |= 1 << ((n_nodes - 1) % 8)
    return array.astype(np.uint8)


def _merge_the_first_two_rules(array, arrays):
    """Make the first rule's last leaf a split: it takes the next rule's first
    nodes as children, so the flags describe fewer rules than internal nodes."""
    bits = np.unpackbits(array.astype(np.uint8), bitorder="little")
    n_nodes = int(arrays["rule_offsets"][-1])
    _, _, rule_sizes = rule_children(bits[:n_nodes].astype(bool))
    bits[rule_sizes[0] - 1] = 1
    return np.packbits(bits, bitorder="little")


def _all_left(array, arrays):
    start, stop = arrays["rule_start"][0], arrays["rule_stop"][0]
    leaves = np.flatnonzero(arrays["rule_child_left"][start:stop] < 0) + start
    array[leaves] = True


def _first_rule(arrays, box):
    """Index (among the internal nodes) of a mixed file's first box or linear rule."""
    kinds = arrays["rule_kinds"]
    return int(np.flatnonzero((kinds == 0) == box)[0])


def _flip_first_box_rule(description, arrays):
    """The first box rule's flag said linear, with an n_cuts a linear rule may
    have: the flags then announce one linear rule more than the file holds."""
    node = _first_rule(arrays, box=True)
    for name, value in (("rule_kinds", 1), ("rule_n_cuts", 2)):
        array = arrays[name].astype(np.int64)
        array[node] = value
        arrays[name] = array


def _candidates(*changes):
    """Edit the candidates of a mixed file's MixedLeafRank."""

    def edit(description, arrays):
        params = description["params"]["leafrank"]["params"]
        for change in changes:
            change(params)

    return edit


def _whole_thresholds(arrays):
    """A file's rule thresholds stored whole (not as a per-feature dictionary)."""
    full = _rules_engine.thresholds_from_dictionary(arrays, 4)
    for name in _rules_engine.THRESHOLD_DICTIONARY:
        del arrays[name]
    arrays["rule_threshold"] = full["rule_threshold"]


def _box_feature_past_its_node(description, arrays):
    """A box rule splitting on feature 3 of a node that drew 3 features (0-2)."""
    _whole_thresholds(arrays)
    feature = arrays["rule_feature"].astype(np.int64)
    feature[np.flatnonzero(feature >= 0)[0]] = 3
    arrays["rule_feature"] = feature


def _first_box_rule_all_left(array, arrays):
    internal = np.flatnonzero(arrays["children_left"] >= 0)
    node = internal[_first_rule(arrays, box=True)]
    tree = np.searchsorted(arrays["node_offsets"], node, side="right") - 1
    base = arrays["rule_offsets"][tree]  # the rule ranges are the tree's
    start, stop = base + arrays["rule_start"][node], base + arrays["rule_stop"][node]
    array[start:stop] |= arrays["rule_child_left"][start:stop] < 0


def _rule_range_at_a_linear_node(array, arrays):
    internal = np.flatnonzero(arrays["children_left"] >= 0)
    array[internal[_first_rule(arrays, box=False)]] = 0


def _cells_leaf_out_of_range(array, arrays):
    n_leaves = []
    offsets = arrays["node_offsets"].astype(int)
    for a, b in itertools.pairwise(offsets):
        n_leaves.append(int(np.sum(arrays["children_left"][a:b] < 0)))
    tree = int(np.argmin(n_leaves))
    array[0, tree] = n_leaves[tree]


TAMPERING = {
    # name: (file, edit, message)
    # -- the cases of issue 15
    "node with two parents": (
        "tree",
        _array("children_right", _two_parents),
        "exactly one parent",
    ),
    "classes [1, 0]": ("tree", _set("classes", [1, 0]), "increasing order"),
    "classes [1, 1]": ("tree", _set("classes", [1, 1]), "distinct labels"),
    "classes [null, 1]": ("tree", _set("classes", [None, 1]), "two finite"),
    "aggregation evil": (
        "median",
        _param("aggregation", "evil"),
        "'aggregation' parameter of RankingForest must be",
    ),
    "max_depth -7": (
        "tree",
        _param("max_depth", -7),
        "'max_depth' parameter of TreeRank must be",
    ),
    "n_jobs 400": ("median", _param("n_jobs", 400), "runtime setting"),
    # -- the cases of issue 26: parameters prediction never uses
    "aggregation_method os.system": (
        "median",
        _param("aggregation_method", "os.system"),
        "'aggregation_method' parameter of RankingForest must be a str among",
    ),
    "cv 2**63": ("cv", _param("cv", 2**63), r"params.cv = 9223372036854775808 does"),
    "leafrank parameter beyond int64": (
        "tree",
        _param("leafrank", _leafrank(max_depth=2**64)),
        "does not fit a 64-bit integer",
    ),
    "n_features_in huge": (
        "tree",
        _set("n_features_in", 2**40),
        "n_features_in must be an integer in",
    ),
    "structures empty list": ("tree", _set("structures", []), "JSON object"),
    # -- classes and features
    "classes float dtype int values": (
        "tree",
        _set("classes", [0.5, 1]),
        "two finite",
    ),
    "classes three labels": (
        "tree",
        _set("classes", [0, 1, 2]),
        "more than two grades needs its consensus",
    ),
    "classes string dtype": ("tree", _set("classes_dtype", "<U1"), "numeric dtype"),
    "classes bool values int dtype": (
        "tree",
        _set("classes", [False, True]),
        "two finite",
    ),
    "n_features_in too small": (
        "tree",
        _set("n_features_in", 1),
        r"rule_feature holds the index \d, outside \[0, 1\)",
    ),
    "feature names length": (
        "tree",
        _set("feature_names_in", ["a"]),
        "feature_names_in does not match",
    ),
    # -- the description
    "unknown estimator": ("tree", _set("estimator", "Evil"), "unknown estimator"),
    "unknown key": ("tree", _set("extra", 1), "unexpected entries"),
    "missing key": (
        "tree",
        lambda d, a: d.pop("ccp_alpha_"),
        r"lacks \['ccp_alpha_'\]",
    ),
    "metadata not an object": ("tree", _set("metadata", [1]), "metadata must be"),
    "unknown parameter": ("tree", _param("evil", 1), "unknown parameter 'evil'"),
    "missing parameter": (
        "tree",
        lambda d, a: d["params"].pop("cv"),
        r"lacks the parameters \['cv'\]",
    ),
    "bad leafrank class": (
        "tree",
        _param("leafrank", {"class": "os.system", "params": {}}),
        "unknown leafrank class",
    ),
    "leafrank parameter invalid": (
        "tree",
        _param("leafrank", _leafrank(max_bins=9999)),
        "'max_bins' parameter of LeafRank",
    ),
    "unsupported classifier": (
        "linear",
        lambda d, a: d["params"]["leafrank"]["estimator"].update(
            {"class": "KNeighborsClassifier"}
        ),
        "unsupported classifier 'KNeighborsClassifier'",
    ),
    "rule kind mismatch": (
        "tree",
        _set("structures", {"rule_kind": "linear", "estimator": "LinearSVC"}),
        "linear rules but the leafrank parameter says engine",
    ),
    "not saved but present": (
        "tree",
        _set("params_not_saved", ["max_depth"]),
        "params_not_saved lists 'max_depth' wrongly",
    ),
    "ccp_alpha_ differs": ("tree", _set("ccp_alpha_", 0.5), "differs from"),
    "ccp_alpha_ negative": ("tree", _set("ccp_alpha_", -1), ">= 0"),
    "pruning with ccp_alpha": (
        "penalty",
        _param("ccp_alpha", 0.1),
        "ccp_alpha must be 0 with pruning='penalty'",
    ),
    "deeper than max_depth": (
        "tree",
        _param("max_depth", 1),
        "deeper than max_depth=1",
    ),
    "max_features beyond the features": (
        "tree",
        _param("leafrank", _leafrank(max_features=9)),
        "exceeds the number of features",
    ),
    # -- arrays
    "unexpected array": (
        "tree",
        lambda d, a: a.update(evil=np.zeros(3)),
        r"unexpected arrays \['evil'\]",
    ),
    "missing array": (
        "tree",
        lambda d, a: a.pop("rule_feature"),
        "the array rule_feature is missing",
    ),
    "children as floats": (
        "tree",
        _array("children_left", lambda x, a: x.astype(np.float64)),
        "children_left holds floats",
    ),
    "child out of range": (
        "tree",
        _array("children_left", lambda x, a: x.__setitem__(0, 10**6)),
        r"children_left holds the index 1000000, outside \[0, \d+\) "
        r"\(\d+ is its tree's size; -1 allowed\)",
    ),
    "cycle": (
        "tree",
        _array("children_right", lambda x, a: x.__setitem__(1, 0)),
        "does not come after its parent",
    ),
    "only a right child": (
        "tree",
        _array("children_left", lambda x, a: x.__setitem__(0, -1)),
        "right child but no left child",
    ),
    "children swapped": (
        "tree",
        lambda d, a: a.update(
            children_left=np.where(
                np.arange(len(a["children_left"])) == 0,
                a["children_right"],
                a["children_left"],
            ),
            children_right=np.where(
                np.arange(len(a["children_left"])) == 0,
                a["children_left"],
                a["children_right"],
            ),
        ),
        "preorder",
    ),
    "node offsets": (
        "tree",
        _array("node_offsets", lambda x, a: x.__setitem__(-1, x[-1] - 1)),
        "children_left has shape",
    ),
    "count not a sum": (
        "tree",
        _array("n_pos", lambda x, a: x.__setitem__(-1, x[-1] + 1)),
        "n_pos: a node's count is not the sum",
    ),
    "negative count": (
        "tree",
        _array("n_neg", lambda x, a: x.__setitem__(-1, -1)),
        "negative or non-finite",
    ),
    "NaN count": (
        "tree",
        _array("n_neg", lambda x, a: np.where(np.arange(len(x)) == 1, np.nan, x)),
        "negative or non-finite",
    ),
    "left child worse": (
        "tree",
        _swap_leaf_counts,
        "left child is not better",
    ),
    "NaN threshold": (
        "tree_full",
        _array("rule_threshold_values", lambda x, a: x.__setitem__(0, np.nan)),
        "rule_threshold holds values that are not finite or \\+inf",
    ),
    "minus infinity threshold": (
        "tree_full",
        _array("rule_threshold_values", lambda x, a: x.__setitem__(0, -np.inf)),
        "rule_threshold holds values that are not finite or \\+inf",
    ),
    "threshold at an inner leaf": (
        "tree_full",
        _array("rule_threshold_index", lambda x, a: x.__setitem__(_rule_leaf(a), 1)),
        "rule_threshold must be 0.0 at inner leaves",
    ),
    "threshold index past its feature": (
        "tree_full",
        _array(
            "rule_threshold_index",
            lambda x, a: x.__setitem__(
                _first_rule_split(a), len(a["rule_threshold_values"])
            ),
        ),
        r"rule_threshold_index holds the index \d+, outside \[0, \d+\) \(\d+ is the "
        "number of thresholds of its feature\\)",
    ),
    "threshold offsets of other features": (
        "tree",
        _array("rule_threshold_offsets", lambda x, a: np.concatenate([x, x[-1:]])),
        "rule_threshold_offsets has shape",
    ),
    "thresholds stored twice": (
        "tree",
        lambda d, a: a.__setitem__("rule_threshold", np.zeros(3)),
        "both rule_threshold and rule_threshold_values",
    ),
    "feature at an inner leaf": (
        "tree_full",
        _array("rule_feature", lambda x, a: x.__setitem__(_rule_leaf(a), 0)),
        "rule_feature must be -1 at inner leaves",
    ),
    "feature out of range": (
        "tree_full",
        _array("rule_feature", lambda x, a: x.__setitem__(_first_rule_split(a), 4)),
        r"rule_feature holds the index 4, outside \[0, 4\) \(4 is the number of",
    ),
    "left leaf at a split": (
        "tree_full",
        _array(
            "rule_left_leaf", lambda x, a: x.__setitem__(_first_rule_split(a), True)
        ),
        "rule_left_leaf must be False at splits",
    ),
    "rule all left": (
        "tree_full",
        _array("rule_left_leaf", _all_left),
        "inner leaves on both sides",
    ),
    "rule children not siblings": (
        "tree_full",
        _swap_rule_root_children,
        "the children of a split must be consecutive",
    ),
    "rule leaf as root": (
        "tree_full",
        lambda d, a: [
            a.__setitem__(name, np.where(np.arange(len(a[name])) == 0, -1, a[name]))
            for name in ("rule_child_left", "rule_child_right", "rule_feature")
        ],
        "rule: every node but the root must have exactly one parent",
    ),
    "rule ranges overlap": (
        "tree_full",
        _array("rule_start", lambda x, a: x.__setitem__(1, x[1] - 1)),
        "tile the rule arrays",
    ),
    "rule range at a leaf": (
        "tree_full",
        _array(
            "rule_stop",
            lambda x, a: x.__setitem__(
                int(np.flatnonzero(a["children_left"] < 0)[0]), 3
            ),
        ),
        "-1 at the leaves",
    ),
    "rule offsets": (
        "tree_full",
        _array("rule_offsets", lambda x, a: x.__setitem__(-1, x[-1] - 1)),
        "rule_offsets does not partition",
    ),
    "rule arrays of different lengths": (
        "tree_full",
        _array("rule_improvement", lambda x, a: x[:-1]),
        "rule_improvement has",
    ),
    "n_cuts": (
        "tree",
        _array("n_cuts", lambda x, a: x + 1),
        r"n_cuts must be 2\*\*max_depth - 1",
    ),
    # -- engine rules stored by their layout (split bits)
    "split bits past the rule nodes": (
        "tree",
        _array("rule_split_bits", _set_padding_bit),
        "rule_split_bits has bits set past its",
    ),
    "split bits of a missing node": (
        "tree",
        _array("rule_split_bits", lambda x, a: x[:-1].astype(np.uint8)),
        "rule_split_bits has shape",
    ),
    "split bits end inside a rule": (
        "tree",
        _array("rule_split_bits", _split_the_last_rule_node),
        "the split flags end inside a rule",
    ),
    "split bits for another number of rules": (
        "tree",
        _array("rule_split_bits", _merge_the_first_two_rules),
        r"describes \d+ rules for \d+ internal nodes|end inside a rule",
    ),
    "split field of another length": (
        "tree",
        _array("rule_improvement", lambda x, a: x[:-1]),
        "rule_improvement has shape",
    ),
    "compact feature out of range": (
        "tree",
        _array("rule_feature", lambda x, a: x.__setitem__(0, 4)),
        r"rule_feature holds the index 4, outside \[0, 4\) \(4 is the number of",
    ),
    "leaf side bits all left": (
        "tree",
        _array("rule_left_leaf_bits", lambda x, a: np.full(x.shape, 255, np.uint8)),
        "bits set past|inner leaves on both sides",
    ),
    "children stored with split bits": (
        "tree",
        lambda d, a: a.update(rule_child_left=np.zeros(3, dtype=np.int32)),
        "the file holds both rule_child_left and rule_split_bits",
    ),
    "LeafRank max_depth huge": (
        "tree",
        _param("leafrank", _leafrank(max_depth=10**12)),
        r"n_cuts must be 2\*\*max_depth - 1 for",
    ),
    "rule deeper than the LeafRank": (
        "tree",
        lambda d, a: [
            d["params"].update(leafrank=_leafrank(max_depth=1)),
            a.update(n_cuts=np.ones_like(a["n_cuts"])),
        ],
        r"deeper than the LeafRank's max_depth=1|more than the \d+ their LeafRanks'",
    ),
    # -- linear rules
    "linear gain": (
        "linear",
        _array("rule_gain", lambda x, a: x * 0.5),
        "gain does not match",
    ),
    "linear coef NaN": (
        "linear",
        _array("rule_coef", lambda x, a: x.__setitem__(0, np.nan)),
        "rule_coef holds NaN",
    ),
    "linear features unsorted": (
        "linear",
        _array("rule_features", lambda x, a: x.__setitem__(slice(0, 2), x[1::-1])),
        "distinct and increasing",
    ),
    "linear features all": (
        "linear",
        _array("rule_all_features", lambda x, a: x.__setitem__(0, True)),
        "max_features_node=2",
    ),
    "linear n_cuts": (
        "linear",
        _array("rule_n_cuts", lambda x, a: x + 1),
        "n_cuts must be its number of features",
    ),
    "linear classifier name": (
        "linear",
        _set("structures", {"rule_kind": "linear", "estimator": "LinearSVC"}),
        "the rules come from 'LinearSVC'",
    ),
    "linear importance above 1": (
        "linear",
        _array("rule_importance", lambda x, a: x * 2),
        "rule_importance holds values outside",
    ),
    # -- mixed rules (MixedLeafRank): box and linear rules, a flag per node
    "mixed box flag said linear": (
        "mixed",
        _array("rule_kinds", lambda x, a: x.__setitem__(_first_rule(a, True), 1)),
        r"n_cuts must be in \[1, max_features\]",
    ),
    "mixed linear flag said box": (
        "mixed",
        _array("rule_kinds", lambda x, a: x.__setitem__(_first_rule(a, False), 0)),
        r"a box rule's n_cuts must be 2\*\*max_depth - 1",
    ),
    "mixed flag flipped with its n_cuts": (
        "mixed",
        _flip_first_box_rule,
        "the array rule_coef_offsets has shape",
    ),
    "mixed flag out of range": (
        "mixed",
        _array("rule_kinds", lambda x, a: x.__setitem__(0, 2)),
        r"rule_kinds holds the index 2, outside \[0, 2\)",
    ),
    "mixed flags missing": (
        "mixed",
        lambda d, a: a.pop("rule_kinds"),
        "the array rule_kinds is missing",
    ),
    "mixed classifier unknown": (
        "mixed",
        _set("structures", {"rule_kind": "mixed", "estimators": ["LinearSVC"]}),
        "must list distinct classifiers of the MixedLeafRank's linear candidates",
    ),
    "mixed classifier twice": (
        "mixed",
        _set(
            "structures",
            {"rule_kind": "mixed", "estimators": ["LinearLeafRank"] * 2},
        ),
        "must list distinct classifiers",
    ),
    "mixed classifiers not listed": (
        "mixed",
        _set("structures", {"rule_kind": "mixed"}),
        "unknown structures description",
    ),
    "mixed classifier unused": (
        "mixed",
        _array("rule_kinds", lambda x, a: np.zeros_like(x)),
        "lists a classifier no rule uses",
    ),
    "mixed rules of an engine model": (
        "tree",
        _set("structures", {"rule_kind": "mixed", "estimators": []}),
        "mixed rules but the leafrank parameter says engine",
    ),
    "mixed box rule without a LeafRank candidate": (
        "mixed",
        _candidates(lambda p: p.update(leafranks=p["leafranks"][1:])),
        "marks a box rule but no candidate of the MixedLeafRank is a LeafRank",
    ),
    "mixed box rule deeper than its LeafRank": (
        "mixed",
        lambda d, a: [
            _candidates(lambda p: p["leafranks"][0]["params"].update(max_depth=1))(
                d, a
            ),
            a.update(rule_n_cuts=np.where(a["rule_kinds"] == 0, 1, a["rule_n_cuts"])),
        ],
        r"deeper than its LeafRank's max_depth|more than the \d+ their LeafRanks'",
    ),
    "mixed box feature past its node's features": (
        "mixed_full",
        _box_feature_past_its_node,
        r"rule_feature holds the index 3, outside \[0, 3\) \(3 is its node's number of",
    ),
    "mixed box rule all left": (
        "mixed_full",
        _array("rule_left_leaf", _first_box_rule_all_left),
        "inner leaves on both sides",
    ),
    "mixed box split bits past the rule nodes": (
        "mixed",
        _array("rule_split_bits", _set_padding_bit),
        "rule_split_bits has bits set past its",
    ),
    "mixed rule range at a linear node": (
        "mixed_full",
        _array("rule_start", _rule_range_at_a_linear_node),
        "must be -1 at the nodes without a box rule",
    ),
    "mixed box rule categorical": (
        "mixed",
        _array("rule_category", lambda x, a: x.__setitem__(0, 0)),
        "a MixedLeafRank's box rule has no categorical split",
    ),
    "mixed linear n_cuts past max_features": (
        "mixed",
        _array("rule_n_cuts", lambda x, a: x.__setitem__(_first_rule(a, False), 3)),
        r"n_cuts must be in \[1, max_features\]",
    ),
    "mixed gain": (
        "mixed",
        _array("rule_gain", lambda x, a: x * 0.5),
        "gain does not match",
    ),
    "mixed importances not summing to 1": (
        "mixed",
        _array("rule_importance", lambda x, a: x * 0.5),
        "rule_importance must sum to 1",
    ),
    "mixed importances missing": (
        "mixed",
        lambda d, a: a.pop("rule_importance"),
        "the array rule_importance is missing",
    ),
    "mixed candidates not a list": (
        "mixed",
        _candidates(lambda p: p.update(leafranks="evil")),
        "leafranks must be null or a list of 1 to 64 LeafRanks",
    ),
    "mixed candidate unknown": (
        "mixed",
        _candidates(
            lambda p: p["leafranks"].__setitem__(
                0, {"class": "os.system", "params": {}}
            )
        ),
        r"leafranks\[0\]: unknown leafrank class 'os.system'",
    ),
    "mixed candidate null": (
        "mixed",
        _candidates(lambda p: p["leafranks"].__setitem__(0, None)),
        r"leafranks\[0\] must be a JSON object",
    ),
    "mixed candidate mixed": (
        "mixed",
        _candidates(
            lambda p: p["leafranks"].__setitem__(
                0, {"class": "MixedLeafRank", "params": copy.deepcopy(p)}
            )
        ),
        r"leafranks\[0\]: unknown leafrank class 'MixedLeafRank'",
    ),
    "mixed candidate parameter invalid": (
        "mixed",
        _candidates(lambda p: p["leafranks"][1]["params"].update(shrinkage=2.0)),
        "'shrinkage' parameter of LinearLeafRank",
    ),
    "mixed parameter unknown": (
        "mixed",
        _candidates(lambda p: p.update(evil=1)),
        r"params\.leafrank\.params has unexpected entries \['evil'\]",
    ),
    "mixed max_features past the node's features": (
        "mixed",
        _param("max_features", 4),
        r"max_features=4 exceeds the number of features \(3\)",
    ),
    # -- pruning
    "penalty ccp_alpha_": ("penalty", _set("ccp_alpha_", 0.0), "must be null"),
    "collapsed leaf": (
        "penalty",
        _array(
            "pruned_collapsed",
            lambda x, a: x.__setitem__(
                int(np.flatnonzero(a["children_left"] < 0)[0]), True
            ),
        ),
        "marks a leaf",
    ),
    "collapsed below collapsed": (
        "penalty",
        _array(
            "pruned_collapsed",
            lambda x, a: x.__setitem__(slice(None), a["children_left"] >= 0),
        ),
        "below a collapsed node",
    ),
    "cv candidates": (
        "cv",
        _array("cv_results.candidates", lambda x, a: x[::-1].copy()),
        "must increase",
    ),
    "cv missing results": (
        "cv",
        lambda d, a: a.pop("cv_results.n_leaves"),
        "cv_results.n_leaves is missing",
    ),
    # -- forests
    "n_estimators": (
        "median",
        _param("n_estimators", 5),
        r"the parameters say 5 tree\(s\) but the file holds",
    ),
    "cells out of the leaves": (
        "median_cells",
        _array("cells", _cells_leaf_out_of_range),
        "a cell refers to a leaf",
    ),
    "cells repeated": (
        "median_cells",
        _array("cells", lambda x, a: x.__setitem__(1, x[0])),
        "distinct and sorted",
    ),
    "cells one column": (
        "median_cells",
        _array("cells", lambda x, a: x[:, :1].copy()),
        "the array cells has shape",
    ),
    "cells and corners": (
        "median",
        lambda d, a: a.__setitem__("cells", np.zeros((2, 4), dtype=np.uint8)),
        "unexpected arrays",
    ),
    "corners outside the grid": (
        "median",
        _array("cell_corners", _corner_outside_its_grid),
        "cell_corners",
    ),
    "corners repeated": (
        "median",
        _array("cell_corners", lambda x, a: x.__setitem__(1, x[0])),
        "cell_corners holds a point twice",
    ),
    "bucket sizes total": (
        "median",
        _array("cell_bucket_sizes", lambda x, a: x.__setitem__(0, x[0] + 1)),
        "add up to",
    ),
    "bucket size zero": (
        "median",
        _array("cell_bucket_sizes", lambda x, a: x.__setitem__(0, 0)),
        "cell_bucket_sizes",
    ),
    "corners without bucket sizes": (
        "median",
        lambda d, a: a.pop("cell_bucket_sizes"),
        "cell_bucket_sizes is missing",
    ),
    "corners with a consensus": (
        "median",
        lambda d, a: a.__setitem__("consensus", np.zeros(2, dtype=np.uint8)),
        "unexpected arrays",
    ),
    "corners one column": (
        "median",
        _array("cell_corners", lambda x, a: x[:, :1].copy()),
        "the array cell_corners has shape",
    ),
    "consensus gap": (
        "median_cells",
        _array("consensus", lambda x, a: x + (x == x.max())),
        "without gaps",
    ),
    "consensus length": (
        "median_cells",
        _array("consensus", lambda x, a: x[:-1]),
        "the array consensus has shape",
    ),
    "cell weight zero": (
        "median",
        _array("cell_weights", lambda x, a: x.__setitem__(0, 0)),
        "must be positive",
    ),
    "cell weight zero (cells)": (
        "median_cells",
        _array("cell_weights", lambda x, a: x.__setitem__(0, 0)),
        "must be positive",
    ),
    "calibration reversed": (
        "median",
        _array("calibration_levels", lambda x, a: x[::-1].copy()),
        "inconsistent calibration arrays",
    ),
    "calibration proba above 1": (
        "median",
        _array("calibration_proba", lambda x, a: x * 2),
        "calibration_proba holds values outside",
    ),
    "calibration threshold": (
        "median",
        lambda d, a: d.update(calibration_threshold=d["calibration_threshold"] + 0.25),
        "calibration_threshold does not match",
    ),
    "calibration level not a cell": (
        "median",
        _array("calibration_levels", lambda x, a: x - 0.5),
        "not the score of a cell",
    ),
    "objective null": (
        "median",
        _set("consensus_objective", None),
        "consensus_objective must be a number",
    ),
    "objective for borda": (
        "borda",
        _set("consensus_objective", 1.0),
        "must be null with aggregation='borda'",
    ),
    "midranks increase": (
        "borda",
        _array("midranks", lambda x, a: np.sort(x)),
        "must not increase",
    ),
    "oob score": ("median", _set("oob_score", 2.0), "at most 1"),
    "aggregation time": ("median", _set("aggregation_time", -1), ">= 0"),
    "training data announced": (
        "median",
        _set("training_data", True),
        "estimators_samples is missing",
    ),
    "training data flag": ("median", _set("training_data", 1), "true or false"),
    "bootstrap counts": (
        "training",
        _array("estimators_samples", lambda x, a: x.__setitem__((0, 0), x[0, 0] + 1)),
        "must draw 800 rows per tree",
    ),
    "oob NaN": (
        "training",
        _array(
            "oob_decision_function",
            lambda x, a: (
                x.__setitem__(0, np.nan)
                if not np.isnan(x[0])
                else x.__setitem__(0, 0.5)
            ),
        ),
        "NaN exactly for the rows every tree saw",
    ),
    "training arrays without the flag": (
        "training",
        _set("training_data", False),
        "unexpected arrays",
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPERING))
def test_inconsistent_models_are_refused_naming_the_problem(tmp_path, files, case):
    source, edit, match = TAMPERING[case]
    path = _edited(tmp_path, files[source], edit)
    with pytest.raises(ModelFileError, match=match) as info:
        load_model(path)
    assert "describes an inconsistent model" in str(info.value)


def test_linear_file_without_importances_loads(tmp_path, files, data):
    """A linear file written before ``rule_importance``: the classifiers'
    importances, the normalized absolute coefficients, are rebuilt."""
    _, _, X_new = data
    original = load_model(files["linear"])
    path = _edited(tmp_path, files["linear"], lambda d, a: a.pop("rule_importance"))
    loaded = load_model(path)
    np.testing.assert_array_equal(
        loaded.feature_importances_, original.feature_importances_
    )
    np.testing.assert_array_equal(
        loaded.decision_function(X_new), original.decision_function(X_new)
    )


def test_the_unedited_files_load(files, data):
    """The tampering fixtures are valid before their edits."""
    _, _, X_new = data
    for path in files.values():
        assert load_model(path).decision_function(X_new).shape == (3000,)


# ----------------------------------------------------------------------
# the archive layer's refusals still reach load_model
# ----------------------------------------------------------------------
def _write_sealed(path, members):
    """Rewrite a model file from its members, with a recomputed file digest."""
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    data = path.read_bytes()
    body = data[:-2] + struct.pack("<H", 80) + b"treerank-sha256:"
    path.write_bytes(body + hashlib.sha256(body).hexdigest().encode())


def test_hand_edited_member_is_refused(tmp_path, files):
    with zipfile.ZipFile(files["tree"]) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    description = json.loads(members["model.json"])
    description["n_features_in"] = 3
    members["model.json"] = json.dumps(description).encode()
    _write_sealed(tmp_path / "m.trk", members)
    with pytest.raises(ModelFileError, match="has been modified or corrupted"):
        load_model(tmp_path / "m.trk")


def test_nan_class_label_is_refused(tmp_path, files):
    """``"classes": [NaN, 1]`` (issue 15) is not even JSON for the reader."""
    with zipfile.ZipFile(files["tree"]) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    text = members["model.json"].decode()
    edited = re.sub(r'"classes": \[[^]]*\]', '"classes": [NaN, 1]', text)
    assert edited != text
    members["model.json"] = edited.encode()
    manifest = json.loads(members["manifest.json"])
    manifest["members"]["model.json"] = {
        "size": len(members["model.json"]),
        "sha256": hashlib.sha256(members["model.json"]).hexdigest(),
    }
    members["manifest.json"] = json.dumps(manifest).encode()
    _write_sealed(tmp_path / "m.trk", members)
    with pytest.raises(ModelFileError, match=r"model\.json is not valid JSON"):
        load_model(tmp_path / "m.trk")


@pytest.mark.parametrize(
    ("content", "match"),
    [
        (b"not a zip at all", "is not a treerank model file"),
        (pickle.dumps({"a": 1}), "is not a treerank model file"),
    ],
)
def test_garbage_is_refused(tmp_path, content, match):
    path = tmp_path / "bad.trk"
    path.write_bytes(content)
    with pytest.raises(ModelFileError, match=match):
        load_model(path)


def test_max_bytes_reaches_the_reader(files):
    with pytest.raises(ModelFileError, match="max_bytes"):
        load_model(files["median"], max_bytes=1000)


def test_deep_copies_do_not_share_the_loaded_state(files, data):
    _, _, X_new = data
    model = load_model(files["median"])
    clone = copy.deepcopy(model)
    np.testing.assert_array_equal(
        clone.decision_function(X_new), model.decision_function(X_new)
    )
