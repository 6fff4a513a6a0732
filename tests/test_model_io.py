"""Model files: exact round trips, refusal of corrupted or edited files."""

import hashlib
import json
import pickle
import struct
import zipfile

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import LinearSVC

from treerank import ClassifierLeafRank, LeafRank, TreeRank
from treerank.datasets import GaussianMeanShift, make_nested_squares
from treerank.exceptions import ModelFileError
from treerank.model_io import load_model, save_model


@pytest.fixture(scope="module")
def data():
    X, y = GaussianMeanShift(n_features=4).sample(800, random_state=0)
    X_new, _ = GaussianMeanShift(n_features=4).sample(3000, random_state=1)
    return X, y, X_new


def _same_predictions(a, b, X):
    np.testing.assert_array_equal(a.decision_function(X), b.decision_function(X))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_array_equal(a.apply(X), b.apply(X))


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"max_features_node": 2, "leafrank": LeafRank(max_depth=2, max_features=1)},
        {"leafrank": ClassifierLeafRank(LogisticRegression())},
        {"leafrank": ClassifierLeafRank(LinearSVC())},
        {"ccp_alpha": 0.005},
        {"pruning": "cv", "cv": 3},
    ],
    ids=["default", "fr1-fr2", "logistic", "linear-svc", "pruned", "cv"],
)
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
    np.testing.assert_array_equal(
        loaded.feature_importances_, model.feature_importances_
    )
    # rules describe themselves identically
    for original, frozen in zip(model.tree_.leafranks, loaded.tree_.leafranks):
        if original is not None:
            assert frozen.describe() == original.describe()
    # the master tree is kept: pruning again works after loading
    lam = model.cost_complexity_pruning_path().ccp_alphas[1]
    _same_predictions(model.prune(lam), loaded.prune(lam), X_new)
    # a loaded model can be refitted, into the model it was saved from
    _same_predictions(
        loaded.fit(X, y), TreeRank(random_state=0, **params).fit(X, y), X_new
    )


def test_feature_names_and_labels_survive(tmp_path):
    pd = pytest.importorskip("pandas")
    X, y = make_nested_squares(400, random_state=0)
    frame = pd.DataFrame(X, columns=["width", "height"])
    model = TreeRank(random_state=0).fit(frame, np.where(y == 1, 7, -3))
    save_model(model, tmp_path / "m.trk")
    loaded = load_model(tmp_path / "m.trk")
    assert list(loaded.feature_names_in_) == ["width", "height"]
    np.testing.assert_array_equal(loaded.classes_, [-3, 7])
    np.testing.assert_array_equal(loaded.predict(frame), model.predict(frame))


def test_unsupported_models_are_refused(tmp_path, data):
    X, y, _ = data
    knn = TreeRank(leafrank=ClassifierLeafRank(KNeighborsClassifier()))
    with pytest.raises(ValueError, match="does not accept sample_weight"):
        knn.fit(X, y)
    with pytest.raises(ValueError, match="not fitted yet"):
        save_model(TreeRank(), tmp_path / "x.trk")
    with pytest.raises(ValueError, match="supports treerank's TreeRank"):
        save_model(LogisticRegression().fit(X, y), tmp_path / "x.trk")
    assert not (tmp_path / "x.trk").exists()


def test_existing_file_is_not_overwritten_when_asked(tmp_path, data):
    X, y, _ = data
    model = TreeRank(random_state=0).fit(X, y)
    path = tmp_path / "m.trk"
    path.write_text("keep me")
    with pytest.raises(FileExistsError, match="already exists"):
        save_model(model, path, overwrite=False)
    assert path.read_text() == "keep me"


def _write_sealed(path, members):
    """Rewrite a model file from its members, with a recomputed file digest.

    The digest at the end of the file catches any damage first; the tests of
    the member checks recompute it, as someone editing the file would.
    """
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    data = path.read_bytes()
    body = data[:-2] + struct.pack("<H", 80) + b"treerank-sha256:"
    path.write_bytes(body + hashlib.sha256(body).hexdigest().encode())


def _rewrite_member(path, member, transform):
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    members[member] = transform(members[member])
    _write_sealed(path, members)


def test_hand_edited_file_is_refused(tmp_path, data):
    X, y, _ = data
    path = tmp_path / "m.trk"
    save_model(TreeRank(random_state=0).fit(X, y), path)

    def edit(content):
        description = json.loads(content)
        description["n_features_in"] = 3
        return json.dumps(description).encode()

    _rewrite_member(path, "model.json", edit)
    with pytest.raises(ModelFileError, match="has been modified or corrupted"):
        load_model(path)


def test_edited_array_is_refused(tmp_path, data):
    X, y, _ = data
    path = tmp_path / "m.trk"
    save_model(TreeRank(random_state=0).fit(X, y), path)
    _rewrite_member(
        path, "arrays/rule_threshold.npy", lambda b: b[:-8] + np.float64(0.5).tobytes()
    )
    with pytest.raises(
        ModelFileError, match=r"arrays/rule_threshold\.npy does not match its checksum"
    ):
        load_model(path)


def test_inconsistent_model_with_valid_checksums_is_refused(tmp_path, data):
    """Even with recomputed digests, an inconsistent model does not load."""
    X, y, _ = data
    path = tmp_path / "m.trk"
    save_model(TreeRank(random_state=0).fit(X, y), path)
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
    description = json.loads(members["model.json"])
    description["n_features_in"] = 2  # the rules use 4 features
    members["model.json"] = json.dumps(description).encode()
    manifest = json.loads(members["manifest.json"])
    manifest["members"]["model.json"] = {
        "size": len(members["model.json"]),
        "sha256": hashlib.sha256(members["model.json"]).hexdigest(),
    }
    members["manifest.json"] = json.dumps(manifest).encode()
    _write_sealed(path, members)
    with pytest.raises(ModelFileError, match="inconsistent model"):
        load_model(path)


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


def test_truncated_file_is_refused(tmp_path, data):
    X, y, _ = data
    path = tmp_path / "m.trk"
    save_model(TreeRank(random_state=0).fit(X, y), path)
    path.write_bytes(path.read_bytes()[:-200])
    with pytest.raises(ModelFileError):
        load_model(path)


def test_pickle_and_joblib_still_work(tmp_path, data):
    import joblib

    X, y, X_new = data
    model = TreeRank(random_state=0).fit(X, y)
    joblib.dump(model, tmp_path / "m.joblib")
    _same_predictions(model, joblib.load(tmp_path / "m.joblib"), X_new)


@pytest.mark.parametrize("aggregation", ["median", "mean", "borda"])
def test_forest_round_trip_is_exact(tmp_path, data, aggregation):
    from treerank import RankingForest

    X, y, X_new = data
    forest = RankingForest(
        n_estimators=6, aggregation=aggregation, ccp_alpha=0.002, random_state=0
    ).fit(X, y)
    path = tmp_path / "forest.trk"
    save_model(forest, path)
    loaded = load_model(path)
    _same_predictions(forest, loaded, X_new)
    assert loaded.oob_score_ == forest.oob_score_
    assert loaded.consensus_objective_ == forest.consensus_objective_
    assert loaded.estimators_samples_ is None
    assert loaded.oob_decision_function_ is None
    np.testing.assert_array_equal(
        loaded.feature_importances_, forest.feature_importances_
    )
    # and the loaded forest can be refitted like any estimator
    assert loaded.fit(X, y).n_features_in_ == 4
