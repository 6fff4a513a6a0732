"""Real-world features: missing values, categorical features, monotonic
constraints and calibrated probabilities (issue 13)."""

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split

from treerank import LeafRank, RankingForest, TreeRank
from treerank.exceptions import UnseenCategoryWarning
from treerank.export import export_text, to_networkx
from treerank.model_io import load_model, save_model


# ----------------------------------------------------------------------
# categorical features
# ----------------------------------------------------------------------
def _categorical_problem(seed, n=1500, levels=12, missing=0.0):
    rng = np.random.default_rng(seed)
    names = [f"level_{i:02d}" for i in range(levels)]
    effect = rng.normal(scale=2.0, size=levels)
    codes = rng.integers(0, levels, size=n)
    x = rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(effect[codes] + 0.5 * x)))).astype(int)
    city = np.array([names[c] for c in codes], dtype=object)
    city[rng.random(n) < missing] = None
    frame = pd.DataFrame({"city": city, "x": x})
    return frame, y, names, effect


@pytest.mark.parametrize("kind", ["category", "object"])
def test_categorical_columns_are_split_by_subsets(kind):
    X, y, names, _ = _categorical_problem(0)
    if kind == "category":
        X["city"] = pd.Categorical(X["city"], categories=names)
    tree = TreeRank(max_depth=2, random_state=0).fit(X, y)
    assert tree._category_encoder.is_categorical_.tolist() == [True, False]
    text = export_text(tree)
    assert "city in {" in text or "city not in {" in text
    # a subset of named categories, never a threshold on their codes
    assert "city <=" not in text and "city >" not in text
    assert tree.score(X, y) > 0.75


@pytest.mark.parametrize("missing", [0.0, 0.1])
def test_training_rows_get_the_leaves_of_their_values(missing):
    # in-bag rows take their leaves from the growth, out-of-bag rows are
    # routed through the bin codes: both must agree with routing the values
    X, y, _, _ = _categorical_problem(3, n=800, missing=missing)
    X["x"] = X["x"].where(np.random.default_rng(1).random(800) > missing)
    forest = RankingForest(n_estimators=6, aggregation="mean", random_state=0)
    forest.fit(X, y)
    ranks = forest.apply(X)
    out = forest.estimators_samples_.T == 0
    values = forest.leaf_values_
    expected = np.array(
        [
            np.mean([values[b][ranks[i, b]] for b in np.flatnonzero(out[i])])
            if out[i].any()
            else np.nan
            for i in range(ranks.shape[0])
        ]
    )
    np.testing.assert_allclose(forest.oob_decision_function_, expected, rtol=1e-12)


def test_categorical_split_is_a_prefix_by_positive_rate():
    """On one categorical feature, the first split separates the categories
    by their (class-balanced) positive rate: every category sent left has a
    higher rate than every category sent right."""
    X, y, names, _ = _categorical_problem(1, n=4000, levels=8)
    X = X[["city"]]
    stump = TreeRank(
        max_depth=1, leafrank=LeafRank(max_depth=1, min_samples_leaf=1), random_state=0
    ).fit(X, y)
    left = stump.tree_.leafranks[0].goes_left(stump._category_encoder.transform(X))
    rates = {c: y[X["city"] == c].mean() for c in names}
    sent_left = {c for c in names if left[(X["city"] == c).to_numpy()].all()}
    assert 0 < len(sent_left) < len(names)
    assert min(rates[c] for c in sent_left) > max(
        rates[c] for c in names if c not in sent_left
    )


def test_unknown_categories_behave_like_missing_values():
    X, y, _, _ = _categorical_problem(2, missing=0.1)
    forest = RankingForest(n_estimators=10, random_state=0).fit(X, y)
    probe = pd.DataFrame({"city": ["never seen", None], "x": [0.3, 0.3]})
    with pytest.warns(UnseenCategoryWarning, match="'city': 1 of 1 values"):
        scores = forest.decision_function(probe)
    assert scores[0] == scores[1]


def test_categorical_indices_names_and_masks_agree():
    X, y, _, _ = _categorical_problem(3)
    codes = X.assign(city=X["city"].astype("category").cat.codes.astype(float))
    by_index = TreeRank(categorical_features=[0], random_state=0).fit(
        codes.to_numpy(), y
    )
    by_name = TreeRank(categorical_features=["city"], random_state=0).fit(codes, y)
    by_mask = TreeRank(categorical_features=[True, False], random_state=0).fit(codes, y)
    expected = by_index.decision_function(codes.to_numpy())
    np.testing.assert_array_equal(by_name.decision_function(codes), expected)
    np.testing.assert_array_equal(by_mask.decision_function(codes), expected)


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        (["nope"], "unknown features"),
        ([5], "out of"),
        ([True], "1 booleans for 2 features"),
        ("everything", "among {'from_dtype'}"),
    ],
)
def test_bad_categorical_features(spec, match):
    X, y, _, _ = _categorical_problem(4, n=200)
    with pytest.raises(ValueError, match=match):
        TreeRank(categorical_features=spec).fit(X, y)


def test_too_many_categories_are_refused_by_name():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"id": [f"c{i}" for i in rng.integers(0, 400, 1000)]})
    y = rng.integers(0, 2, 1000)
    with pytest.raises(ValueError, match=r"'id' has .* categories; at most 255"):
        TreeRank().fit(X, y)


def test_categorical_models_round_trip_through_files(tmp_path):
    X, y, _, _ = _categorical_problem(5, missing=0.05)
    probe = X.copy()
    probe.loc[:20, "city"] = "unseen"
    for model in (TreeRank(random_state=0), RankingForest(n_estimators=8)):
        model.fit(X, y)
        save_model(model, tmp_path / "m.trk")
        loaded = load_model(tmp_path / "m.trk")
        np.testing.assert_array_equal(
            loaded.decision_function(probe), model.decision_function(probe)
        )


# ----------------------------------------------------------------------
# missing values
# ----------------------------------------------------------------------
def test_missing_values_are_learned_and_exported():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = (rng.random(2000) < 1 / (1 + np.exp(-2 * X[:, 0]))).astype(int)
    informative = rng.random(2000) < 0.2
    X[informative, 0] = np.nan
    y[informative] = 1  # missingness carries the signal
    tree = TreeRank(max_depth=2, random_state=0).fit(X, y)
    all_missing = np.full((1, 3), np.nan)
    assert tree.predict_proba(all_missing)[0, 1] > 0.5
    assert "or missing" in export_text(tree)
    graph = to_networkx(tree)
    assert any("or missing" in graph.nodes[n].get("rule", "") for n in graph.nodes)


# ----------------------------------------------------------------------
# monotonic constraints
# ----------------------------------------------------------------------
def _monotone_case(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(150, 700))
    d = int(rng.integers(2, 5))
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.1] = np.nan
    logit = np.nan_to_num(X) @ rng.normal(size=d) + np.sin(3 * np.nan_to_num(X[:, 0]))
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    cst = rng.integers(-1, 2, size=d)
    cst[rng.integers(0, d)] = rng.choice([-1, 1])
    points = rng.normal(size=(60, d))
    points[rng.random((60, d)) < 0.1] = np.nan
    return X, y, cst, points, rng


def _violations(model, cst, points, rng):
    """Points whose score drops when a constrained feature moves its way."""
    base = model.decision_function(points)
    count = 0
    for f in np.flatnonzero(cst):
        raised = points.copy()
        step = np.abs(rng.normal(size=points.shape[0])) + 0.01
        raised[:, f] = np.where(np.isnan(raised[:, f]), 0.0, raised[:, f])
        before = points.copy()
        before[:, f] = raised[:, f]
        raised[:, f] += cst[f] * step
        count += int(
            np.sum(
                model.decision_function(raised)
                < model.decision_function(before) - 1e-12
            )
        )
    del base
    return count


@pytest.mark.parametrize("seed", range(200))
def test_monotonic_constraints_hold(seed):
    """Raising a +1 feature (lowering a -1 one) of any point never lowers its
    score, for the tree and for the forest after its median aggregation."""
    X, y, cst, points, rng = _monotone_case(seed)
    tree = TreeRank(
        monotonic_cst=cst,
        min_samples_split=10,
        leafrank=LeafRank(min_samples_leaf=5),
        random_state=seed,
    ).fit(X, y)
    assert _violations(tree, cst, points, rng) == 0
    if seed % 4 == 0:  # the forest on a quarter of the cases (time)
        forest = RankingForest(
            n_estimators=8, monotonic_cst=cst, random_state=seed
        ).fit(X, y)
        assert _violations(forest, cst, points, rng) == 0


@pytest.mark.slow
@pytest.mark.parametrize("seed", [s for s in range(200) if s % 4])
def test_monotonic_constraints_hold_for_the_forest_on_every_case(seed):
    """The forest half of the test above on the other 150 of the 200 cases."""
    X, y, cst, points, rng = _monotone_case(seed)
    forest = RankingForest(n_estimators=8, monotonic_cst=cst, random_state=seed)
    assert _violations(forest.fit(X, y), cst, points, rng) == 0


def test_monotonic_constraints_bind():
    """Without the constraint the same data give violations (the test above
    can fail), and a dict by feature name means the same as the array."""
    total = 0
    for seed in range(10):
        X, y, cst, points, rng = _monotone_case(seed)
        free = TreeRank(
            min_samples_split=10, leafrank=LeafRank(min_samples_leaf=5), random_state=0
        ).fit(X, y)
        total += _violations(free, cst, points, rng)
    assert total > 0
    X, y, cst, points, _ = _monotone_case(3)
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    as_dict = {f"f{j}": int(c) for j, c in enumerate(cst)}
    a = TreeRank(monotonic_cst=cst, random_state=0).fit(frame, y)
    b = TreeRank(monotonic_cst=as_dict, random_state=0).fit(frame, y)
    probe = pd.DataFrame(points, columns=frame.columns)
    np.testing.assert_array_equal(
        a.decision_function(probe), b.decision_function(probe)
    )


def test_bad_monotonic_cst():
    X, y, _, _, _ = _monotone_case(0)
    d = X.shape[1]
    with pytest.raises(ValueError, match="one entry per feature"):
        TreeRank(monotonic_cst=[1] * (d + 1)).fit(X, y)
    with pytest.raises(ValueError, match="-1, 0 or 1"):
        TreeRank(monotonic_cst=[2] + [0] * (d - 1)).fit(X, y)
    frame, yc, _, _ = _categorical_problem(0, n=300)
    with pytest.raises(ValueError, match="constrains a categorical feature"):
        TreeRank(monotonic_cst=[1, 0]).fit(frame, yc)


# ----------------------------------------------------------------------
# calibrated probabilities
# ----------------------------------------------------------------------
def test_probabilities_are_not_the_training_fit():
    """The breast cancer split of the issue (stratified 70/30, seed 0).

    There the random forest's log loss is 0.33 (confident 0/1 probabilities,
    some wrong) and TreeRank's and the forest's are lower (0.24 and 0.17).
    Over 10 such splits (``benchmarks/results/features.md``) the forest's
    mean log loss is lower than the random forest's (0.134 vs 0.153) but it
    is lower on 3 splits of 10 only; TreeRank's is higher on average.
    """
    from sklearn.ensemble import RandomForestClassifier

    from treerank.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X, X_test, y, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=0
    )
    forest = RandomForestClassifier(random_state=0).fit(X, y)
    reference = log_loss(y_test, forest.predict_proba(X_test)[:, 1])
    for model in (TreeRank(random_state=0), RankingForest(random_state=0)):
        proba = model.fit(X, y).predict_proba(X_test)[:, 1]
        assert np.all((proba > 0) & (proba < 1))
        assert log_loss(y_test, proba) <= reference
        # consistent with the ranking and the predicted class
        scores = model.decision_function(X_test)
        order = np.argsort(scores)
        assert np.all(np.diff(proba[order]) >= -1e-12)
        np.testing.assert_array_equal(model.predict(X_test) == 1, proba > 0.5)
