"""Explanations that fit the ecosystem (issue 39): shap, a default background,
a readable waterfall."""

import copy
import pickle

import numpy as np
import pytest

from treerank import RankingForest, TreeRank
from treerank.datasets import load_penguins
from treerank.inspection import Explanation, shapley_values
from treerank.model_io import load_model, save_model


@pytest.fixture(scope="module")
def penguins():
    frame = load_penguins()
    y = (frame["island"] == "Biscoe").astype(int)
    return frame.drop(columns=["island"]), y


@pytest.fixture(scope="module")
def median(penguins):
    X, y = penguins
    return RankingForest(n_estimators=10, random_state=0).fit(X, y)


# ----------------------------------------------------------------------
# the default background: training rows kept in memory at fit
# ----------------------------------------------------------------------
def test_a_fitted_model_needs_no_background(penguins, median):
    X, y = penguins
    own = shapley_values(median, X.iloc[:20], random_state=0)
    given = shapley_values(median, X.iloc[:20], background=X, random_state=0)
    # every training row (fewer than 1,000) is kept: the same explanation
    assert own.n_background == X.shape[0]
    np.testing.assert_array_equal(own.values, given.values)
    assert own.base_value == given.base_value
    tree = TreeRank(random_state=0).fit(X, y)
    assert shapley_values(tree, X.iloc[:3]).n_background == X.shape[0]


def test_at_most_1000_rows_of_positive_weight_are_kept():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 3))
    y = (X[:, 0] > 0).astype(int)
    weight = np.ones(3000)
    weight[:2500] = 0
    forest = RankingForest(n_estimators=3, random_state=0)
    forest.fit(X, y, sample_weight=weight)
    np.testing.assert_array_equal(forest._background, X[2500:])
    forest.fit(X, y)
    assert forest._background.shape == (1000, 3)
    # drawn with a seed of their own: the forest is the same
    again = RankingForest(n_estimators=3, random_state=0).fit(X, y)
    np.testing.assert_array_equal(
        again.decision_function(X), forest.decision_function(X)
    )


def test_kept_rows_are_not_pickled_copied_or_saved(penguins, median, tmp_path):
    X = penguins[0]
    for other in (pickle.loads(pickle.dumps(median)), copy.deepcopy(median)):
        assert not hasattr(other, "_background")
        np.testing.assert_array_equal(
            other.decision_function(X), median.decision_function(X)
        )
    assert hasattr(median, "_background")  # pickling did not drop the original's
    path = tmp_path / "m.trk"
    save_model(median, path)
    loaded = load_model(path)
    with pytest.raises(ValueError, match="keeps no training rows"):
        shapley_values(loaded, X.iloc[:2])
    assert shapley_values(loaded, X.iloc[:2], background=X).n_background == len(X)


# ----------------------------------------------------------------------
# shap
# ----------------------------------------------------------------------
def test_to_shap_feeds_shaps_plots(penguins, median):
    shap = pytest.importorskip("shap")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    X = penguins[0]
    explanation = shapley_values(median, X.iloc[:25], random_state=0)
    converted = explanation.to_shap()
    assert isinstance(converted, shap.Explanation)
    assert converted.shape == (25, X.shape[1] + 1)  # the proxy's own term
    assert converted.feature_names[-1] == "(median vs. mean of its trees)"
    np.testing.assert_allclose(
        converted.base_values + converted.values.sum(axis=1),
        explanation.scores,
        rtol=0,
        atol=1e-9,
    )
    assert converted.display_data[0, 0] == X["species"].iloc[0]
    shap.plots.waterfall(converted[0], show=False)
    plt.close("all")
    shap.plots.beeswarm(converted, show=False)
    plt.close("all")
    shap.plots.bar(converted, show=False)
    plt.close("all")
    tree = TreeRank(random_state=0).fit(X, penguins[1])
    exact = shapley_values(tree, X.iloc[:5]).to_shap()
    assert exact.shape == (5, X.shape[1])


def test_to_shap_without_shap(monkeypatch, penguins, median):
    import builtins

    real_import = builtins.__import__

    def no_shap(name, *args, **kwargs):
        if name == "shap":
            raise ImportError("No module named 'shap'")
        return real_import(name, *args, **kwargs)

    explanation = shapley_values(median, penguins[0].iloc[:2], random_state=0)
    monkeypatch.setattr(builtins, "__import__", no_shap)
    with pytest.raises(ImportError, match=r"pip install shap"):
        explanation.to_shap()


# ----------------------------------------------------------------------
# the waterfall: the axis covers the base value, labels do not overlap
# ----------------------------------------------------------------------
def _rendered_problems(ax):
    from figure_readability import readability_problems

    ax.figure.tight_layout()
    return readability_problems(ax.figure, dpi=100)


@pytest.mark.parametrize(
    "values",
    [
        [[-0.4, -0.3, -0.2, -0.1, -0.05]],  # all down: labels on the left edge
        [[0.4, 0.3, 0.2, 0.1, 0.05]],  # all up: the base value at the left
        [[-261.4, 120.0, -3.0, 0.5]],  # the median forest units
    ],
)
def test_waterfall_covers_the_base_and_labels_do_not_overlap(values):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from treerank.plotting import plot_waterfall

    values = np.asarray(values, dtype=float)
    base = 0.3
    names = [f"a_long_feature_name_{k}" for k in range(values.shape[1])]
    explanation = Explanation(
        values,
        base,
        base + values.sum(axis=1),
        np.arange(values.size, dtype=float).reshape(values.shape) * 1000.5,
        names,
        "interventional",
        "tree",
    )
    ax = plot_waterfall(explanation)
    low, high = ax.get_xlim()
    ends = [base, *(base + np.cumsum(values[0]))]
    assert low < min(ends) and max(ends) < high
    _, overlaps = _rendered_problems(ax)
    assert not overlaps, overlaps
    # every value label is inside the axes
    box = ax.get_window_extent()
    renderer = ax.figure.canvas.get_renderer()
    for text in ax.texts:
        extent = text.get_window_extent(renderer)
        assert box.x0 <= extent.x0 and extent.x1 <= box.x1, text.get_text()
    plt.close("all")


def test_waterfall_shows_the_proxy_term(penguins, median):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from treerank.plotting import plot_waterfall

    explanation = shapley_values(median, penguins[0].iloc[:3], random_state=0)
    ax = plot_waterfall(explanation, row=1, max_display=4)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == 4 and labels[-1] == "(median vs. mean of its trees)"
    ends = [bar.get_x() + bar.get_width() for bar in ax.patches]
    assert ends[-1] == pytest.approx(explanation.scores[1], abs=1e-12)
    assert "calibrated positive rate" in ax.get_xlabel()
    plt.close("all")
