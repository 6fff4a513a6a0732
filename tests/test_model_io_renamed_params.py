"""Model files that hold parameters under their former names (issue 41).

LeafRank's ``max_samples`` is now ``node_subsample``, and the forest's
``tie_breaking`` ("mean" or None) is now ``break_ties`` (True or False): a
file written before loads under the new names (``RENAMED_PARAMS`` of
:mod:`treerank.model_io._params`), while the estimators no longer accept the
old ones. The committed fixtures of ``tests/data/model_files`` hold both old
names and are checked by ``test_model_file_fixtures.py``.
"""

from pathlib import Path

import numpy as np
import pytest
from model_file_editing import rewrite_description

from treerank import LeafRank, RankingForest
from treerank.datasets import NestedSquares
from treerank.exceptions import ModelFileError
from treerank.model_io import load_model, save_model

FIXTURES = Path(__file__).resolve().parent / "data" / "model_files"


@pytest.fixture(scope="module")
def data():
    return NestedSquares().sample(300, random_state=0)


@pytest.fixture(scope="module")
def forest(data):
    X, y = data
    leafrank = LeafRank(max_depth=2, node_subsample=100)
    return RankingForest(
        n_estimators=3, max_depth=3, leafrank=leafrank, random_state=0
    ).fit(X, y)


def _older(path, tie_breaking="mean"):
    def edit(description):
        params = description["params"]
        assert params.pop("break_ties") is (tie_breaking == "mean")
        params["tie_breaking"] = tie_breaking
        if params["leafrank"] is not None:
            leafrank = params["leafrank"]["params"]
            leafrank["max_samples"] = leafrank.pop("node_subsample")

    rewrite_description(path, edit)


def test_the_fixtures_hold_the_former_names():
    import json

    from model_file_editing import read_members

    members = read_members(FIXTURES / "forest_median.trk")
    params = json.loads(members["model.json"])["params"]
    assert params["tie_breaking"] == "mean"
    assert "max_samples" in params["leafrank"]["params"]
    model = load_model(FIXTURES / "forest_median.trk")
    assert model.break_ties is True
    assert model.leafrank.node_subsample == params["leafrank"]["params"]["max_samples"]


def test_a_file_with_the_former_names_loads_under_the_new_ones(forest, data, tmp_path):
    path = tmp_path / "older.trk"
    save_model(forest, path)
    _older(path)
    loaded = load_model(path)
    assert loaded.break_ties is True
    assert loaded.leafrank.node_subsample == 100
    assert "max_samples" not in loaded.leafrank.get_params()
    X, _ = data
    np.testing.assert_array_equal(
        loaded.decision_function(X), forest.decision_function(X)
    )


def test_tie_breaking_none_loads_as_break_ties_false(data, tmp_path):
    X, y = data
    forest = RankingForest(
        n_estimators=3, max_depth=3, break_ties=False, random_state=0
    ).fit(X, y)
    path = tmp_path / "older.trk"
    save_model(forest, path)
    _older(path, tie_breaking=None)
    loaded = load_model(path)
    assert loaded.break_ties is False
    np.testing.assert_array_equal(
        loaded.decision_function(X), forest.decision_function(X)
    )


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["params"].update(tie_breaking="median"),
            "tie_breaking must be 'mean' or null",
        ),
        (
            lambda d: d["params"].update(tie_breaking="mean"),
            "holds both 'tie_breaking' and its new name 'break_ties'",
        ),
        (
            lambda d: d["params"]["leafrank"]["params"].update(max_samples=10),
            "holds both 'max_samples' and its new name 'node_subsample'",
        ),
    ],
)
def test_a_file_with_a_wrong_former_name_is_refused(forest, tmp_path, edit, message):
    path = tmp_path / "wrong.trk"
    save_model(forest, path)
    if "median" in message or "tie_breaking must" in message:
        _older(path)
    rewrite_description(path, edit)
    with pytest.raises((ModelFileError, ValueError), match=message):
        load_model(path)


def test_the_former_names_are_no_parameters():
    with pytest.raises(TypeError, match="tie_breaking"):
        RankingForest(tie_breaking="mean")
    with pytest.raises(TypeError, match="max_samples"):
        LeafRank(max_samples=100)
    with pytest.raises(ValueError, match="tie_breaking"):
        RankingForest().set_params(tie_breaking=None)


def test_break_ties_must_be_a_boolean(data):
    X, y = data
    with pytest.raises(
        ValueError,
        match="'break_ties' parameter of RankingForest must be an instance of 'bool'",
    ):
        RankingForest(n_estimators=2, break_ties="mean").fit(X, y)
