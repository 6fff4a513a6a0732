"""The calibrated score (issue 39): one readable scale, explained exactly.

``calibrated_score`` keeps the ranking of ``decision_function`` and reads as
the calibrated positive rate (expected grade for graded targets); the
explanations add up to it on every row, for every model kind, the median
forest's mean proxy included (with its difference as its own term).
"""

import numpy as np
import pytest

from treerank import RankingForest, TreeRank
from treerank.datasets import load_penguins
from treerank.inspection import calibrated_score, shapley_values
from treerank.inspection._scale import scale_knots, score_scale
from treerank.model_io import load_model, save_model


@pytest.fixture(scope="module")
def penguins():
    frame = load_penguins()
    y = (frame["island"] == "Biscoe").astype(int)
    grades = frame["island"].map({"Biscoe": 2, "Dream": 1, "Torgersen": 0})
    return frame.drop(columns=["island"]), y, grades


MODELS = {
    "tree": lambda: TreeRank(random_state=0),
    "median": lambda: RankingForest(n_estimators=12, random_state=0),
    "mean": lambda: RankingForest(n_estimators=12, aggregation="mean", random_state=0),
    "borda": lambda: RankingForest(
        n_estimators=12, aggregation="borda", random_state=0
    ),
}


@pytest.fixture(scope="module")
def fitted(penguins):
    X, y, grades = penguins
    models = {name: make().fit(X, y) for name, make in MODELS.items()}
    models["graded tree"] = TreeRank(random_state=0).fit(X, grades)
    models["graded median"] = RankingForest(n_estimators=12, random_state=0).fit(
        X, grades
    )
    return models


def test_knots_are_strictly_increasing_and_within_bounds():
    levels = np.arange(8.0)
    values = np.array([0.0, 0.1, 0.1, 0.1, 0.5, 0.5, 0.9, 1.0])
    x, y = scale_knots(levels, values)
    assert np.all(np.diff(x) > 0)
    assert np.all(np.diff(y) > 0) and y[0] >= 0 and y[-1] <= 1
    # a step at a bound starts at its lowest score
    x, y = scale_knots(levels, np.array([0, 0, 0, 0.5, 0.5, 1, 1, 1.0]))
    assert x.tolist() == [0.0, 3.5, 7.0] and y.tolist() == [0.0, 0.5, 1.0]
    # a single step still ranks (a tenth of the distance to the bound)
    x, y = scale_knots(levels, np.full(8, 0.3))
    assert y.tolist() == pytest.approx([0.27, 0.3, 0.33])


@pytest.mark.parametrize(
    "name", ["tree", "median", "mean", "borda", "graded tree", "graded median"]
)
def test_calibrated_score_keeps_the_ranking(penguins, fitted, name):
    X, _, grades = penguins
    model = fitted[name]
    decision = model.decision_function(X)
    score = calibrated_score(model, X)
    order = np.argsort(decision, kind="stable")
    # same order, and rows ranked apart stay apart
    assert np.all(np.diff(score[order]) >= 0)
    apart = np.diff(decision[order]) > 0
    assert np.all(np.diff(score[order])[apart] > 0)
    if name.startswith("graded"):
        assert grades.min() <= score.min() and score.max() <= grades.max()
    else:
        assert np.all((score > 0) & (score < 1))
        # within a step of the calibrated probability
        proba = model.predict_proba(X)[:, 1]
        assert np.corrcoef(score, proba)[0, 1] > 0.9


@pytest.mark.parametrize("name", ["tree", "median", "mean"])
def test_a_loaded_model_has_the_same_scale(penguins, fitted, name, tmp_path):
    X = penguins[0]
    path = tmp_path / "m.trk"
    save_model(fitted[name], path)
    np.testing.assert_array_equal(
        calibrated_score(load_model(path), X), calibrated_score(fitted[name], X)
    )


@pytest.mark.parametrize(
    "name", ["tree", "median", "mean", "borda", "graded tree", "graded median"]
)
@pytest.mark.parametrize("scale", ["calibrated", "decision"])
@pytest.mark.parametrize("algorithm", ["auto", "permutation"])
def test_base_plus_contributions_is_the_reported_score(
    penguins, fitted, name, scale, algorithm
):
    X = penguins[0]
    model = fitted[name]
    rows = X.iloc[::7]
    explanation = shapley_values(
        model,
        rows,
        background=X,
        scale=scale,
        algorithm=algorithm,
        n_permutations=4,
        random_state=0,
    )
    reported = (
        calibrated_score(model, rows)
        if scale == "calibrated"
        else model.decision_function(rows)
    )
    np.testing.assert_array_equal(explanation.scores, reported)
    np.testing.assert_allclose(explanation.total(), reported, rtol=0, atol=1e-9)
    median = "median" in name or name == "graded tree"
    assert (explanation.proxy_difference is not None) == (
        median and algorithm == "auto"
    )


def test_treerank_is_explained_exactly_on_the_calibrated_scale(penguins, fitted):
    """A TreeRank's calibrated score is a value per leaf: its tree, exactly."""
    from itertools import combinations
    from math import factorial

    X = penguins[0][["bill_length_mm", "flipper_length_mm", "body_mass_g"]]
    y = penguins[1]
    model = TreeRank(max_depth=3, random_state=0).fit(X, y)
    rows, background = X.iloc[:5], X.iloc[100:110]
    explanation = shapley_values(model, rows, background=background)
    d = X.shape[1]
    for i in range(rows.shape[0]):
        value = {}
        for r in range(d + 1):
            for S in combinations(range(d), r):
                hybrid = background.copy()
                for j in S:
                    hybrid.iloc[:, j] = rows.iloc[i, j]
                value[S] = calibrated_score(model, hybrid).mean()
        phi = np.zeros(d)
        for j in range(d):
            for S, v in value.items():
                if j not in S:
                    with_j = tuple(sorted((*S, j)))
                    weight = factorial(len(S)) * factorial(d - len(S) - 1)
                    phi[j] += weight / factorial(d) * (value[with_j] - v)
        np.testing.assert_allclose(explanation.values[i], phi, rtol=0, atol=1e-10)


def test_forest_values_keep_the_signs_of_its_own_units(penguins, fitted):
    """Each row's values are its values in the forest's units times a factor >= 0."""
    X = penguins[0]
    model = fitted["mean"]
    options = {"background": X, "random_state": 0}
    on_scale = shapley_values(model, X.iloc[:30], **options)
    own = shapley_values(model, X.iloc[:30], scale="decision", **options)
    factor = on_scale.values.sum(axis=1) / own.values.sum(axis=1)
    assert np.all(factor >= 0)
    np.testing.assert_allclose(
        on_scale.values, factor[:, None] * own.values, rtol=0, atol=1e-12
    )
    assert on_scale.base_value == pytest.approx(
        float(score_scale(model)(np.array([own.base_value]))[0])
    )


def test_the_proxy_difference_is_small_where_median_and_mean_agree(penguins, fitted):
    X = penguins[0]
    model = fitted["median"]
    explanation = shapley_values(model, X, background=X, random_state=0)
    assert explanation.algorithm == "mean_proxy"
    assert explanation.scale == "calibrated positive rate"
    # the proxy ranks as the median does, so its difference is a small part
    spread = explanation.scores.max() - explanation.scores.min()
    assert np.median(np.abs(explanation.proxy_difference)) < 0.05 * spread
    assert explanation.proxy_rank_agreement > 0.8
    part = explanation[[3, 1]]
    np.testing.assert_array_equal(
        part.proxy_difference, explanation.proxy_difference[[3, 1]]
    )


def test_scale_is_checked(penguins, fitted):
    with pytest.raises(ValueError, match="scale must be one of"):
        shapley_values(
            fitted["tree"], penguins[0][:2], background=penguins[0], scale="x"
        )
