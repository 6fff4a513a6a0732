"""Every invariant of a fitted model is checked at load.

A file edited by someone who recomputes its checksums reaches the decoders;
an edit that breaks an invariant a fitted model satisfies must be refused
there (``ModelFileError``), not load a model that predicts differently or
raises at its first prediction. The audit found four: a threshold grid no
longer ascending (19 of 300 scores changed), all-zero Borda mid-ranks (a
constant ranker), a scaler's ``var_`` of -2 and an imputer whose
``missing_values`` is a string (loaded, then every prediction raised).

The slow structural fuzz edits files of eleven model kinds 3,000 times each
(arrays and ``model.json``: values changed, swapped, copied, zeroed, sorted,
reversed, shuffled, and edits aimed at each invariant) and counts the loads
that predict differently without an error among the edits that break an
invariant (an independent check in this file says which do): none.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import collections
import functools
import hashlib
import itertools
import json
import os
import pathlib
import tempfile
import warnings

import numpy as np
import pandas as pd
import pytest
from model_file_editing import load_array, read_members, with_array, write_sealed
from sklearn.compose import make_column_transformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from treerank import LeafRank, LinearLeafRank, MixedLeafRank, RankingForest, TreeRank
from treerank.datasets import make_nested_squares
from treerank.exceptions import ModelFileError
from treerank.model_io import load_model, save_model


def _frame(X):
    frame = pd.DataFrame(X, columns=["a", "b"])
    frame["c"] = np.where(np.nan_to_num(X[:, 0]) > 0.5, "hi", "lo")
    return frame


def _graded(X):
    return (X[:, 0] > 0.3).astype(int) + (X[:, 1] > 0.5)


def _forest(**options):
    return RankingForest(n_estimators=3, max_depth=3, random_state=0, **options)


MIXED = MixedLeafRank([LeafRank(max_depth=2, min_samples_leaf=10), LinearLeafRank()])

#: name: (estimator, features of X, labels of y)
KINDS = {
    "tree": (lambda: TreeRank(max_depth=3, random_state=0), None, None),
    "tree_graded": (lambda: TreeRank(max_depth=2, random_state=0), None, _graded),
    "tree_linear": (
        lambda: TreeRank(max_depth=2, leafrank=LinearLeafRank(), random_state=0),
        None,
        None,
    ),
    "tree_mixed": (
        lambda: TreeRank(max_depth=2, leafrank=MIXED, random_state=0),
        None,
        None,
    ),
    "forest_median": (_forest, None, None),
    "forest_median_categorical": (_forest, _frame, None),
    "forest_mean": (lambda: _forest(aggregation="mean"), None, None),
    "forest_borda": (lambda: _forest(aggregation="borda"), None, None),
    "forest_graded": (lambda: _forest(multipartite="thresholds"), None, _graded),
    "pipeline_impute_scale": (
        lambda: make_pipeline(
            SimpleImputer(), StandardScaler(), TreeRank(max_depth=3, random_state=0)
        ),
        None,
        None,
    ),
    "pipeline_columns": (
        lambda: make_pipeline(
            make_column_transformer(
                (OneHotEncoder(), ["c"]), remainder=StandardScaler()
            ),
            _forest(aggregation="borda"),
        ),
        _frame,
        None,
    ),
}


def _data(seed, n):
    X, y = make_nested_squares(n, random_state=seed)
    X[::7, 0] = np.nan
    return X, y


def _inputs(kind, X):
    features = KINDS[kind][1]
    return X if features is None else features(X)


def _predictions(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # feature names
        return [model.decision_function(X), model.predict_proba(X)]


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Each kind's model file (members), its predictions on new rows and the
    rows."""
    folder = tmp_path_factory.mktemp("kinds")
    X, y = _data(0, 200)
    X_check, _ = _data(1, 300)
    out = {}
    for kind, (make, _, labels) in KINDS.items():
        path = folder / f"{kind}.trk"
        model = make().fit(_inputs(kind, X), y if labels is None else labels(X))
        save_model(model, path)
        check = _inputs(kind, X_check)
        out[kind] = (read_members(path), _predictions(model, check), check)
    return out


def _load(tmp_path, members):
    path = tmp_path / "edited.trk"
    write_sealed(path, members)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scikit-learn versions
        return load_model(path)


def _refused(tmp_path, members, match):
    with pytest.raises(ModelFileError, match=match):
        _load(tmp_path, members)


# ----------------------------------------------------------------------
# the audit's edits, and one per invariant
# ----------------------------------------------------------------------
def test_a_threshold_grid_out_of_order_is_refused(saved, tmp_path):
    members, _, _ = saved["tree"]
    values = load_array(members, "rule_threshold_values")
    offsets = load_array(members, "rule_threshold_offsets")
    start = next(
        int(a) for a, b in itertools.pairwise(offsets) if b - a >= 2
    )  # a feature with two thresholds: swap them
    edited = values.copy()
    edited[[start, start + 1]] = edited[[start + 1, start]]
    _refused(tmp_path, with_array(members, "rule_threshold_values", edited), "strictly")


@pytest.mark.parametrize(
    "edit",
    ["all zero", "halved", "one raised", "one copied", "shifted"],
)
def test_midranks_that_are_not_those_of_masses_are_refused(saved, tmp_path, edit):
    members, _, _ = saved["forest_borda"]
    midranks = load_array(members, "midranks").astype(np.float64)
    edited = {
        "all zero": np.zeros_like(midranks),
        "halved": midranks / 2,
        "one raised": midranks + np.eye(1, midranks.shape[0], 1)[0] * 0.01,
        "one copied": np.where(
            np.arange(midranks.shape[0]) == 1, midranks[0], midranks
        ),
        "shifted": np.clip(midranks - 0.01, 0, 1),
    }[edit]
    assert not np.array_equal(edited, midranks)
    _refused(tmp_path, with_array(members, "midranks", edited), "midranks")


@pytest.mark.parametrize("kind", ["forest_median", "forest_median_categorical"])
@pytest.mark.parametrize("edit", ["mass scaled", "masses swapped", "objective"])
def test_median_cells_masses_and_consensus_must_agree(saved, tmp_path, kind, edit):
    members, _, _ = saved[kind]
    weights = load_array(members, "cell_weights")
    if edit == "mass scaled":  # in the file's dtype (the manifest declares it)
        edited = weights.copy()
        edited[0] = edited[0] + 1 if edited.dtype.kind in "iu" else edited[0] * 3
        members = with_array(members, "cell_weights", edited)
    elif edit == "masses swapped":
        j = int(np.flatnonzero(weights != weights[0])[0])
        edited = weights.copy()
        edited[[0, j]] = edited[[j, 0]]
        members = with_array(members, "cell_weights", edited)
    else:
        description = json.loads(members["model.json"])
        description["consensus_objective"] += 1.0
        members = {**members, "model.json": json.dumps(description).encode()}
    _refused(tmp_path, members, "objective")


def test_a_consensus_edit_is_refused(saved, tmp_path):
    members, _, _ = saved["forest_median_categorical"]
    consensus = load_array(members, "consensus")
    j = int(np.flatnonzero(consensus != consensus[0])[0])
    edited = consensus.copy()
    edited[[0, j]] = edited[[j, 0]]
    _refused(tmp_path, with_array(members, "consensus", edited), "objective")
    members, _, _ = saved["forest_median"]
    sizes = load_array(members, "cell_bucket_sizes")
    assert not np.array_equal(sizes, sizes[::-1])
    _refused(tmp_path, with_array(members, "cell_bucket_sizes", sizes[::-1]), None)


def _state_edit(members, cls, attribute, value):
    """``members`` with ``attribute`` of the first ``cls`` object set to ``value``
    (a JSON value of the pipeline grammar)."""
    description = json.loads(members["model.json"])

    def visit(node):
        if isinstance(node, dict):
            if node.get("class") == cls:
                for entry in node["state"]:
                    if entry[0] == attribute:
                        entry[1] = value
                        return True
            return any(visit(v) for v in node.values())
        if isinstance(node, list):
            return any(visit(v) for v in node)
        return False

    assert visit(description)
    return {**members, "model.json": json.dumps(description).encode()}


def _state_array(members, cls, attribute):
    """The member name of an array attribute of the first ``cls`` object."""
    description = json.loads(members["model.json"])
    found = []

    def visit(node):
        if isinstance(node, dict):
            if node.get("class") == cls:
                found.extend(e[1]["array"] for e in node["state"] if e[0] == attribute)
            for v in node.values():
                visit(v)
        elif isinstance(node, list):
            for v in node:
                visit(v)

    visit(description)
    return found[0]


@pytest.mark.parametrize("value", ["x", None, {"float": "inf"}])
def test_an_imputer_whose_missing_values_breaks_transform_is_refused(
    saved, tmp_path, value
):
    members, _, _ = saved["pipeline_impute_scale"]
    edited = _state_edit(members, "SimpleImputer", "missing_values", value)
    _refused(tmp_path, edited, "SimpleImputer")


def test_a_scaler_with_a_negative_variance_is_refused(saved, tmp_path):
    members, _, _ = saved["pipeline_impute_scale"]
    name = _state_array(members, "StandardScaler", "var_")
    var = load_array(members, name).copy()
    var[0] = -2.0
    _refused(tmp_path, with_array(members, name, var), "var_")
    scale = _state_array(members, "StandardScaler", "scale_")
    edited = with_array(members, name, var)
    edited = with_array(edited, scale, np.ones_like(load_array(members, scale)))
    _refused(tmp_path, edited, "var_")


def test_unedited_files_load_and_predict_identically(saved, tmp_path):
    for kind, (members, reference, X) in saved.items():
        model = _load(tmp_path, members)
        for got, expected in zip(_predictions(model, X), reference):
            np.testing.assert_array_equal(got, expected, err_msg=kind)


# ----------------------------------------------------------------------
# the structural fuzz
# ----------------------------------------------------------------------
def _prefixes(members, base):
    """The prefixes of the array members named ``<prefix><base>``."""
    out = []
    for name in members:
        if name.startswith("arrays/") and name.endswith(base + ".npy"):
            out.append(name[len("arrays/") : -len(base + ".npy")])
    return out


@functools.lru_cache(maxsize=4096)
def _decoded(content):
    """The array of a member's bytes, read-only (an edit changes one member:
    the invariant checks read the others again and again)."""
    array = load_array({"arrays/a.npy": content}, "a")
    array.flags.writeable = False
    return array


def _array(members, name):
    return _decoded(members[f"arrays/{name}.npy"])


def _grids_ascending(members):
    for prefix in _prefixes(members, "rule_threshold_values"):
        values = _array(members, prefix + "rule_threshold_values")
        offsets = _array(members, prefix + "rule_threshold_offsets")
        for start, stop in itertools.pairwise(offsets):
            part = values[int(start) : int(stop)]
            if not np.all(np.diff(part) > 0):
                return False
    return True


def _tree_leaf_counts(members, prefix):
    offsets = _array(members, prefix + "node_offsets").astype(np.int64)
    leaf = _array(members, prefix + "children_left") < 0
    return [int(leaf[a:b].sum()) for a, b in itertools.pairwise(offsets)]


def _midranks_of_masses(members):
    """Each tree's mid-ranks, sorted, are those of non-negative masses of sum 1."""
    for prefix in _prefixes(members, "midranks"):
        midranks = _array(members, prefix + "midranks").astype(np.float64)
        cuts = np.cumsum(_tree_leaf_counts(members, prefix))[:-1]
        for tree in np.split(midranks, cuts):
            levels = np.unique(tree)[::-1]  # best first
            masses, last = [], 1.0
            for level in levels:
                masses.append(2 * (last - level) - (masses[-1] if masses else 0.0))
                last = level
            if min(masses) < -1e-6 or abs(sum(masses) - 1) > 1e-6:
                return False
    return True


def _counts_add_up(members):
    for prefix in _prefixes(members, "n_pos"):
        left = _array(members, prefix + "children_left").astype(np.int64)
        right = _array(members, prefix + "children_right").astype(np.int64)
        offsets = _array(members, prefix + "node_offsets").astype(np.int64)
        for name in ("n_pos", "n_neg"):
            counts = _array(members, prefix + name).astype(np.float64)
            for a, b in itertools.pairwise(offsets):
                nodes = np.flatnonzero(left[a:b] >= 0)
                local = counts[a:b]
                if local[nodes].shape[0] and not np.allclose(
                    local[nodes],
                    local[left[a:b][nodes]] + local[right[a:b][nodes]],
                    rtol=1e-9,
                ):
                    return False
    return True


_MEDIAN = ("cells", "consensus", "cell_weights", "cell_corners", "cell_bucket_sizes")


def _median_unchanged(members, original):
    for name in original:
        base = name[len("arrays/") : -len(".npy")] if name.endswith(".npy") else None
        if base is not None and base.rsplit(".", 1)[-1] in _MEDIAN:
            if members[name] != original[name]:
                return False
    before = json.loads(original["model.json"])
    after = json.loads(members["model.json"])
    for key in ("consensus_objective", "borda_objective"):
        if key in before and before.get(key) != after.get(key):
            return False
    return True


def broken_invariant(members, original):
    """The invariant of fitted models an edited file breaks, or None (this
    file's own checks, independent of the loader's)."""
    checks = {
        "threshold grid": _grids_ascending,
        "midranks": _midranks_of_masses,
        "counts": _counts_add_up,
    }
    try:
        for name, check in checks.items():
            if not check(members):
                return name
    except (ValueError, IndexError, TypeError):
        return None  # malformed beyond the invariants: the loader's job
    return None if _median_unchanged(members, original) else "median"


def _aggregates(model):
    """The median aggregates inside a model (forests, a graded TreeRank's)."""
    if hasattr(model, "steps"):
        return _aggregates(model.steps[-1][1])
    consensus = getattr(model, "consensus_", None)
    if consensus is not None and hasattr(consensus, "cells_"):
        return [consensus]
    return [model] if getattr(model, "aggregation", None) == "median" else []


def _objectives(model):
    """The Kendall objectives of each median aggregate's consensus and of the
    Borda order of its cells, recomputed from its cells, masses and consensus."""
    from treerank.aggregation import kemeny_median, kemeny_objective

    out = []
    for aggregate in _aggregates(model):
        rankings = aggregate._cell_rankings(aggregate.cells_)
        weights = aggregate.cell_weights_
        borda = kemeny_median(rankings, item_weights=weights, method="borda")
        out.append(
            (
                kemeny_objective(aggregate.consensus_, rankings, item_weights=weights),
                kemeny_objective(borda.consensus, rankings, item_weights=weights),
            )
        )
    return out


def _array_edit(array, rng):
    """One random edit of an array (same dtype and shape)."""
    edited = array.copy()
    flat = edited.reshape(-1)
    if flat.size == 0:
        return None
    i, j = rng.integers(flat.size, size=2)
    if edited.dtype.kind == "b":
        flat[i] = ~flat[i]
        return edited
    info = np.finfo if edited.dtype.kind == "f" else np.iinfo
    low, high = info(edited.dtype).min, info(edited.dtype).max
    operation = rng.integers(10)
    if operation == 0:
        flat[i] = flat[j]
    elif operation == 1:
        flat[i], flat[j] = flat[j], flat[i]
    elif operation == 2:
        flat[i] = 0
    elif operation == 3:
        flat[:] = 0
    elif operation == 4:
        flat[i] = flat[i] + 1 if flat[i] < high else low
    elif operation == 5:
        flat[i] = flat[i] - 1 if flat[i] > low else high
    elif operation == 6:
        flat[:] = flat[::-1].copy()
    elif operation == 7:
        flat[:] = np.sort(flat)
    elif operation == 8:
        rng.shuffle(flat)
    elif edited.dtype.kind == "f":
        flat[i] = flat[i] * rng.choice([-1.0, 0.5, 1.5, 1 + 1e-9])
    else:
        flat[i] = rng.integers(low, high, endpoint=True, dtype=edited.dtype)
    return edited


def _json_leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _json_leaves(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _json_leaves(item, (*path, index))
    else:
        yield path, value


def _json_edit(description, rng):
    """One random edit of a scalar of model.json (``None`` if a no-op)."""
    leaves = [(p, v) for p, v in _json_leaves(description) if p]
    path, value = leaves[rng.integers(len(leaves))]
    if isinstance(value, bool):
        new = not value
    elif isinstance(value, (int, float)):
        new = [0, -2, 1, value + 1, value - 1, value * 2, -value, 0.5][rng.integers(8)]
        if isinstance(value, float) and rng.random() < 0.3:
            new = value * (1 + 1e-6)
    elif isinstance(value, str):
        new = ["", "x", "rank", "rate", "mean", "median", "nan", value + "x"][
            rng.integers(8)
        ]
    else:
        new = [0, 1.5, "x", True][rng.integers(4)]
    if new == value and type(new) is type(value):
        return None
    target = description
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return description


def _aimed_edit(members, rng):
    """An edit aimed at an invariant: grids, mid-ranks, the median, counts, or
    a calibration (None when the file has none of those arrays)."""
    targets = [
        name
        for name in members
        if name.endswith(
            (
                "rule_threshold_values.npy",
                "midranks.npy",
                "cell_weights.npy",
                "consensus.npy",
                "cell_corners.npy",
                "cell_bucket_sizes.npy",
                "n_pos.npy",
                "n_neg.npy",
                "calibration_proba.npy",
            )
        )
    ]
    if not targets:
        return None
    name = targets[rng.integers(len(targets))][len("arrays/") : -len(".npy")]
    array = load_array(members, name)
    edited = array.astype(np.float64) if array.dtype.kind == "f" else array.copy()
    flat = edited.reshape(-1)
    if flat.size < 2:
        return None
    i, j = rng.choice(flat.size, size=2, replace=False)
    operation = rng.integers(5)
    if operation == 0:  # swap two
        flat[i], flat[j] = flat[j], flat[i]
    elif operation == 1:  # copy one onto another
        flat[i] = flat[j]
    elif operation == 2 and edited.dtype.kind == "f":  # scale one a little
        flat[i] *= 1 + rng.choice([-0.1, 0.1, 1e-3])
    elif operation == 3 and edited.dtype.kind == "f":  # scale all
        flat *= rng.choice([0.5, 0.9, 1.1])
    else:  # reverse
        flat[:] = flat[::-1].copy()
    return with_array(members, name, edited.astype(array.dtype))


def _edit(members, rng):
    """A random structural edit: aimed, of an array, or of model.json."""
    arrays = sorted(n for n in members if n.startswith("arrays/"))
    roll = rng.random()
    if roll < 0.35:
        return _aimed_edit(members, rng)
    if roll < 0.8:
        name = arrays[rng.integers(len(arrays))][len("arrays/") : -len(".npy")]
        edited = _array_edit(load_array(members, name), rng)
        return None if edited is None else with_array(members, name, edited)
    description = _json_edit(json.loads(members["model.json"]), rng)
    if description is None:
        return None
    return {**members, "model.json": json.dumps(description).encode()}


# what a model of other columns or categories says of these rows
_OTHER_DATA = ("feature names should match", "Found unknown categories")

# per model kind (TREERANK_FUZZ_EDITS for a quicker run while developing)
N_EDITS = int(os.environ.get("TREERANK_FUZZ_EDITS", "3000"))


@pytest.fixture
def scratch(tmp_path):
    """A folder for the edited files: in memory (tmpfs) where there is one."""
    shm = pathlib.Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        with tempfile.TemporaryDirectory(dir=shm) as folder:
            yield pathlib.Path(folder)
    else:
        yield tmp_path


def _digest(members):
    """A digest of a set of members (names and bytes)."""
    digest = hashlib.sha256()
    for name in sorted(members):
        content = members[name]
        digest.update(f"{name}\0{len(content)}\0".encode())
        digest.update(content)
    return digest.digest()


def _fuzz_outcome(folder, edited, members, reference, X, original):
    """(broken invariant or None, outcome, failure or None) of an edited file."""
    broken = broken_invariant(edited, members)
    try:
        model = _load(folder, edited)
    except ModelFileError:
        return broken, "refused", None
    try:
        predictions = _predictions(model, X)
    except ValueError as exc:
        if not any(text in str(exc) for text in _OTHER_DATA):
            raise
        # the file renames the features or an encoder's categories: a
        # model of other data, which refuses these rows by their names
        return broken, "different, a valid model of other data", None
    except Exception as exc:  # a load that raises later
        return broken, "raises at predict", f"raises at predict: {exc!r:.200}"
    same = all(
        np.array_equal(a, b, equal_nan=True) for a, b in zip(predictions, reference)
    )
    if same:
        return broken, "identical", None
    if broken == "median" and _objectives(model) == original:
        # another consensus of the cells with the same objectives: a
        # median as good as the fitted one (telling them apart would take
        # the median's search again)
        return broken, "different, an equally good median", None
    if broken is not None:
        failure = f"predicts differently, {broken} broken"
        return broken, "different, invariant broken", failure
    return broken, "different, a valid model", None


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_structural_fuzz_refuses_every_invariant_break(saved, scratch, kind):
    members, reference, X = saved[kind]
    original = _objectives(_load(scratch, members))
    rng = np.random.default_rng(sorted(KINDS).index(kind))
    counts = collections.Counter()
    failures = []
    breaking = 0  # edits that break an invariant (this file's checks)
    # about half the random edits repeat an earlier one: a file already
    # checked has the same outcome (the checks and the load are deterministic)
    # and counts again without being loaded again
    outcomes = {}
    while sum(counts.values()) < N_EDITS:
        edited = _edit(members, rng)
        if edited is None or edited == members:
            continue
        key = _digest(edited)
        if key not in outcomes:
            outcomes[key] = _fuzz_outcome(
                scratch, edited, members, reference, X, original
            )
        broken, outcome, failure = outcomes[key]
        breaking += broken is not None
        counts[outcome] += 1
        if failure is not None:
            failures.append(failure)
    print(
        f"{kind}: {breaking} edits break an invariant, {len(outcomes)} distinct "
        f"files; {dict(counts)}"
    )
    assert not failures, (kind, dict(counts), failures[:5])
    assert breaking > N_EDITS // 10  # the aimed edits reach the invariants
