"""Every index a model file holds is checked from both sides (issue 26, item 2).

A negative ``rule_threshold_index`` was accepted (only its upper bound was
checked): numpy read the index from the end of the previous feature's
thresholds, and a TreeRank loaded with 20 of its 400 scores changed. Every
index array now goes through one check (``_arrays.check_indices``), and
every offsets array through ``_arrays.check_offsets``. The files are edited
as an attacker would (``read_archive``, edit, ``write_archive``, which
recomputes every digest).
"""

import numpy as np
import pytest

from treerank import LeafRank, LinearLeafRank, MixedLeafRank, RankingForest, TreeRank
from treerank.datasets import make_nested_squares
from treerank.exceptions import ModelFileError
from treerank.model_io import load_model, save_model
from treerank.model_io._archive import read_archive, write_archive
from treerank.model_io._arrays import check_indices, check_offsets

RNG = np.random.default_rng(0)
X, Y = make_nested_squares(300, random_state=0)
X = np.c_[X, RNG.normal(size=(300, 2))]
GRADES = np.digitize(X[:, 0], [0.35, 0.65])
X_CHECK = np.c_[make_nested_squares(400, random_state=1)[0], RNG.normal(size=(400, 2))]
X_CAT = np.c_[X[:, :2], RNG.integers(0, 5, 300)]
X_CAT_CHECK = np.c_[X_CHECK[:, :2], RNG.integers(0, 5, 400)]

MODELS = {
    # name: (estimator, X, y, X_check)
    "tree": (TreeRank(max_depth=3, random_state=0), X, Y, X_CHECK),
    "forest": (  # more trees than features: its cells are stored as points
        RankingForest(n_estimators=5, max_depth=3, random_state=0),
        X,
        Y,
        X_CHECK,
    ),
    "categorical forest": (
        RankingForest(
            n_estimators=3, max_depth=3, categorical_features=[2], random_state=0
        ),
        X_CAT,
        Y,
        X_CAT_CHECK,
    ),
    "linear": (
        RankingForest(
            n_estimators=2,
            max_depth=2,
            leafrank=LinearLeafRank(),
            max_features_node=2,
            aggregation="borda",
            random_state=0,
        ),
        X,
        Y,
        X_CHECK,
    ),
    "mixed": (
        RankingForest(
            n_estimators=2,
            max_depth=3,
            leafrank=MixedLeafRank(
                [LeafRank(max_depth=2, min_samples_leaf=10), LinearLeafRank()]
            ),
            random_state=0,
        ),
        X,
        Y,
        X_CHECK,
    ),
    "graded": (
        RankingForest(
            n_estimators=4, max_depth=2, multipartite="thresholds", random_state=0
        ),
        X,
        GRADES,
        X_CHECK,
    ),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    directory = tmp_path_factory.mktemp("indices")
    out = {}
    for name, (estimator, X_fit, y, X_check) in MODELS.items():
        model = estimator.fit(X_fit, y)
        path = directory / f"{name.replace(' ', '_')}.trk"
        save_model(model, path)
        out[name] = (path, model.decision_function(X_check), X_check)
    return out


def _edited(tmp_path, source, name, position, value):
    description, arrays = read_archive(source)
    array = arrays[name].astype(np.int64)
    array.flat[position] = value
    arrays[name] = array
    path = tmp_path / "edited.trk"
    write_archive(path, description, arrays)
    return path


def test_the_issue_reproducer_a_negative_threshold_index(tmp_path):
    """A split on a feature past the first, its index 0 made -1: it read the
    last threshold of the previous feature."""
    tree = TreeRank(random_state=0).fit(X, Y)
    source = tmp_path / "tree.trk"
    save_model(tree, source)
    _, arrays = read_archive(source)
    index, feature = arrays["rule_threshold_index"], arrays["rule_feature"]
    position = int(np.flatnonzero((feature > 0) & (index == 0))[0])
    path = _edited(tmp_path, source, "rule_threshold_index", position, -1)
    with pytest.raises(
        ModelFileError,
        match=r"rule_threshold_index holds the index -1, outside \[0, \d+\) "
        r"\(\d+ is the number of thresholds of its feature\)",
    ):
        load_model(path)


# the integer arrays of each file kind that index something (or cut arrays)
INDEX_ARRAYS = {
    "tree": [
        "children_left",
        "children_right",
        "node_offsets",
        "rule_feature",
        "rule_threshold_index",
        "rule_threshold_offsets",
        "rule_offsets",
        "category_set_offsets",
    ],
    "forest": ["cell_corners", "cell_bucket_sizes", "rule_threshold_index"],
    "categorical forest": ["cells", "consensus", "rule_category"],
    "linear": ["rule_features", "rule_feature_offsets", "rule_coef_offsets"],
    "mixed": ["rule_kinds", "rule_feature", "rule_threshold_index", "cells"],
    "graded": ["tree_thresholds"],
}
CASES = [
    (kind, name, where, value)
    for kind, names in INDEX_ARRAYS.items()
    for name in names
    for where in ("first", "last")
    for value in (-2, -1, 2**31 - 1, 2**62)
]


@pytest.mark.parametrize(
    ("kind", "name", "where", "value"),
    CASES,
    ids=["-".join(map(str, c)) for c in CASES],
)
def test_index_arrays_are_checked_from_both_sides(
    tmp_path, files, kind, name, where, value
):
    """Refused, or (a value the array may hold there, such as -1 for "no
    child" at a leaf) loaded with identical predictions; never anything else."""
    source, reference, X_check = files[kind]
    _, arrays = read_archive(source)
    assert name in arrays, (kind, sorted(arrays))
    if arrays[name].size == 0:
        pytest.skip("empty array")
    position = 0 if where == "first" else arrays[name].size - 1
    if arrays[name].flat[position] == value:
        pytest.skip("unchanged")
    path = _edited(tmp_path, source, name, position, value)
    try:
        model = load_model(path)
    except ModelFileError as exc:
        message = str(exc)
    else:
        np.testing.assert_array_equal(model.decision_function(X_check), reference)
        return
    assert "describes an inconsistent model" in message


def _negative_entries(tmp_path, files, kind, per_array):
    """Every integer array of the file, ``per_array`` entries spread evenly
    made -2: refused, or identical predictions."""
    source, reference, X_check = files[kind]
    description, arrays = read_archive(source)
    n_cases = n_refused = 0
    for name, array in sorted(arrays.items()):
        if array.dtype.kind not in "iu" or array.size == 0:
            continue
        spread = np.linspace(0, array.size - 1, per_array).astype(int)
        for position in np.unique(spread):
            edited = dict(arrays)
            edited[name] = array.astype(np.int64)
            edited[name].flat[position] = -2
            path = tmp_path / "edited.trk"
            write_archive(path, description, edited)
            n_cases += 1
            try:
                model = load_model(path)
            except ModelFileError:
                n_refused += 1
                continue
            np.testing.assert_array_equal(
                model.decision_function(X_check), reference, err_msg=(name, position)
            )
    assert n_refused > 0.9 * n_cases, (n_refused, n_cases)


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_integer_entries_made_negative_are_refused_or_harmless(tmp_path, files, kind):
    _negative_entries(tmp_path, files, kind, per_array=3)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(MODELS))
def test_many_integer_entries_made_negative(tmp_path, files, kind):
    _negative_entries(tmp_path, files, kind, per_array=60)


def test_check_indices_and_offsets():
    assert check_indices(np.array([0, 2]), 3, "a").tolist() == [0, 2]
    for bad, size in (([-1], 3), ([3], 3), ([2**63 - 1], 3), ([0, 5], [1, 5])):
        with pytest.raises(ValueError, match="the array a holds the index"):
            check_indices(np.array(bad), np.array(size), "a")
    with pytest.raises(ValueError, match="expected integer indices"):
        check_indices(np.array([0.5]), 3, "a")
    big = np.array([2**64 - 1], dtype=np.uint64)
    with pytest.raises(ValueError, match="18446744073709551615"):
        check_indices(big, 3, "a")
    assert check_offsets(np.array([0, 0, 3]), 3, "o").tolist() == [0, 0, 3]
    for bad in ([1, 3], [0, 2, 1, 3], [0, 2], [], [[0, 3]]):
        with pytest.raises(ValueError, match="the array o must start at 0"):
            check_offsets(np.array(bad, dtype=np.int64), 3, "o")
    with pytest.raises(ValueError, match="increase"):
        check_offsets(np.array([0, 0, 3]), 3, "o", strict=True)


@pytest.mark.parametrize("turn", ["set to threshold", "threshold to set"])
def test_split_kinds_follow_the_features(tmp_path, files, turn):
    """The engine splits a categorical feature by a category set and a numeric
    one by a threshold; a file that swaps them routes rows elsewhere."""
    source = files["categorical forest"][0]
    _, arrays = read_archive(source)
    category, feature = arrays["rule_category"], arrays["rule_feature"]
    if turn == "set to threshold":
        position, value = int(np.flatnonzero(category >= 0)[0]), -1
    else:
        position, value = int(np.flatnonzero((category < 0) & (feature != 2))[0]), 0
    path = _edited(tmp_path, source, "rule_category", position, value)
    with pytest.raises(ModelFileError, match="a split on a categorical feature"):
        load_model(path)
