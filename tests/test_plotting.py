"""Plots: each renders to a non-blank PNG under Agg and draws what it should."""

import io
import itertools
import subprocess
import sys

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from treerank import LeafRank, RankingForest, TreeRank
from treerank.datasets import NestedSquares, make_nested_squares
from treerank.plotting import (
    plot_partition,
    plot_roc,
    plot_stability,
    plot_tree,
    tree_layout,
)
from treerank.stability import bootstrap_stability

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")


@pytest.fixture
def pyplot():
    import matplotlib.pyplot as plt

    plt.close("all")
    yield plt
    plt.close("all")


def _png_pixels(figure):
    """Render a figure to PNG bytes and read the pixels back."""
    import matplotlib.image as mpimg

    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=60)
    data = buffer.getvalue()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    buffer.seek(0)
    return mpimg.imread(buffer, format="png")


def _assert_not_blank(figure, min_colours=3):
    pixels = _png_pixels(figure)[..., :3]
    assert pixels.var() > 0
    colours = np.unique(pixels.reshape(-1, 3), axis=0)
    assert colours.shape[0] >= min_colours
    # a real share of the canvas is not background white
    assert np.mean(np.any(pixels < 0.95, axis=-1)) > 0.02


@pytest.fixture(scope="module")
def fitted_tree():
    X, y = make_nested_squares(1500, random_state=0)
    return TreeRank(max_depth=4, random_state=0).fit(X, y), X, y


def test_plotting_does_not_import_matplotlib_at_import_time():
    code = (
        "import sys, treerank.plotting, treerank.export, treerank.stability; "
        "assert 'matplotlib' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------
# plot_tree
# ----------------------------------------------------------------------
def test_plot_tree_draws_every_node_in_rank_order(pyplot, fitted_tree):
    tree, _, _ = fitted_tree
    t = tree.tree_
    ax = plot_tree(tree)
    _assert_not_blank(ax.figure)
    nodes = ax.collections[0]
    offsets = np.asarray(nodes.get_offsets())
    assert offsets.shape == (t.node_count, 2)
    # leaves evenly spaced, best first; y is minus the depth
    np.testing.assert_array_equal(offsets[t.leaves, 0], np.arange(t.n_leaves))
    np.testing.assert_array_equal(offsets[:, 1], -t.depth)
    # every parent centred above its two children, between them
    for node in np.flatnonzero(~t.is_leaf):
        left, right = t.children_left[node], t.children_right[node]
        assert offsets[node, 0] == pytest.approx(
            (offsets[left, 0] + offsets[right, 0]) / 2
        )
        assert offsets[left, 0] < offsets[node, 0] < offsets[right, 0]
    # size grows with the mass, the root is the largest
    sizes = np.asarray(nodes.get_sizes())
    mass = t.n_pos + t.n_neg
    order = np.argsort(mass, kind="stable")
    assert np.all(np.diff(sizes[order]) >= -1e-9)
    assert sizes[0] == pytest.approx(900.0)
    # colour: greener than red above the overall rate, redder below
    colours = np.asarray(nodes.get_facecolors())[:, :3]
    rate = t.n_pos / mass
    above, below = rate > rate[0] + 0.02, rate < rate[0] - 0.02
    assert above.any() and below.any()
    assert np.all(colours[above, 1] > colours[above, 0])
    assert np.all(colours[below, 0] > colours[below, 1])
    # by default: leaves named by rank, internal nodes by id (distinct label
    # spaces), every internal node's rule and every node's counts
    texts = [text.get_text() for text in ax.texts]
    names = {text for text in texts if text.startswith(("leaf ", "n"))}
    internal = np.flatnonzero(~t.is_leaf)
    assert names == {f"leaf {r}" for r in range(t.n_leaves)} | {
        f"n{node}" for node in internal
    }
    boxes = [text for text in texts if "+ / " in text]
    assert len(boxes) == t.node_count
    for node in range(t.node_count):  # the counts are the node's
        count = f"{int(t.n_pos[node])}+ / {int(t.n_neg[node])}-"
        assert sum(count in text for text in boxes) >= 1
    rules = [text for text in boxes if text.startswith("left if")]
    assert len(rules) == internal.shape[0]


def test_plot_tree_options_and_given_axes(pyplot, fitted_tree):
    tree, _, _ = fitted_tree
    figure, ax = pyplot.subplots()
    ax_out = plot_tree(
        tree.tree_, ax=ax, labels="none", colorbar=False, rules=False, counts=False
    )
    assert ax_out is ax
    assert len(ax.texts) == 0
    assert len(figure.axes) == 1  # no colour bar
    _assert_not_blank(figure)
    ax = plot_tree(tree, feature_names=["u", "v"], labels="id")
    rule_texts = [t.get_text() for t in ax.texts if "left if" in t.get_text()]
    assert len(rule_texts) == tree.tree_.node_count - tree.tree_.n_leaves
    assert all("x[" not in text for text in rule_texts)
    ids = {t.get_text() for t in ax.texts if "\n" not in t.get_text()}
    assert {f"n{node}" for node in range(tree.tree_.node_count)} <= ids
    with pytest.raises(ValueError, match="max_rule_lines must be"):
        plot_tree(tree, max_rule_lines=0)
    with pytest.raises(ValueError, match="fontsize must be"):
        plot_tree(tree, fontsize=-1)
    with pytest.raises(ValueError, match="labels must be"):
        plot_tree(tree, labels="names")
    with pytest.raises(ValueError, match="node_size must be a pair"):
        plot_tree(tree, node_size=(10, 5))


def _text_boxes(ax):
    """Display extents of the texts of an axes (after a draw)."""
    renderer = ax.figure.canvas.get_renderer()
    return [
        (text.get_text(), text.get_window_extent(renderer))
        for text in ax.texts
        if text.get_text()
    ]


@pytest.mark.parametrize("depth", [3, 5])
def test_plot_tree_texts_do_not_overlap_up_to_30_leaves(pyplot, depth):
    """Readable: no two texts overlap, all inside the figure, font >= 6 pt."""
    X, y = make_nested_squares(4000, random_state=0)
    tree = TreeRank(max_depth=depth, min_samples_split=30, random_state=0).fit(X, y)
    assert tree.n_leaves_ <= 32
    ax = plot_tree(tree, feature_names=["u", "v"])
    ax.figure.canvas.draw()
    boxes = _text_boxes(ax)
    assert len(boxes) == 2 * tree.tree_.node_count
    figure_box = ax.figure.bbox
    for i, (text_i, box_i) in enumerate(boxes):
        assert figure_box.x0 - 1 <= box_i.x0 and box_i.x1 <= figure_box.x1 + 1, text_i
        for text_j, box_j in boxes[i + 1 :]:
            overlap_x = min(box_i.x1, box_j.x1) - max(box_i.x0, box_j.x0)
            overlap_y = min(box_i.y1, box_j.y1) - max(box_i.y0, box_j.y0)
            assert min(overlap_x, overlap_y) <= 0.5, (text_i, text_j)
    assert min(text.get_fontsize() for text in ax.texts) >= 6


def test_tree_layout_matches_structure(fitted_tree):
    tree, _, _ = fitted_tree
    pos = tree_layout(tree)
    t = tree.tree_
    assert sorted(pos) == list(range(t.node_count))
    assert [pos[leaf][0] for leaf in t.leaves] == list(range(t.n_leaves))


# ----------------------------------------------------------------------
# plot_partition
# ----------------------------------------------------------------------
def _grid(bounds, resolution):
    x_min, x_max, y_min, y_max = bounds
    gx, gy = np.meshgrid(
        np.linspace(x_min, x_max, resolution), np.linspace(y_min, y_max, resolution)
    )
    return np.column_stack([gx.ravel(), gy.ravel()])


def test_plot_partition_shows_the_leaves_of_a_tree(pyplot, fitted_tree):
    tree, X, y = fitted_tree
    bounds = (-2.0, 2.0, -2.0, 2.0)
    ax = plot_partition(tree, X, y, bounds=bounds, grid_resolution=80)
    _assert_not_blank(ax.figure, min_colours=5)
    image = np.asarray(ax.images[0].get_array())
    assert image.shape == (80, 80)
    points = _grid(bounds, 80)
    ranks = tree.apply(points).reshape(80, 80)
    reached = np.unique(ranks)
    # one colour level per leaf reached; the best leaf is 1, the worst 0
    assert np.unique(image).shape[0] == reached.shape[0]
    expected = (reached.shape[0] - 1 - np.searchsorted(reached, ranks)) / (
        reached.shape[0] - 1
    )
    np.testing.assert_allclose(image, expected)
    # the sample points are drawn, split by class
    scatter_sizes = [len(c.get_offsets()) for c in ax.collections[-2:]]
    assert sorted(scatter_sizes) == sorted([(y == 0).sum(), (y == 1).sum()])
    assert {t.get_text() for t in ax.get_legend().get_texts()} == {
        "negative",
        "positive",
    }


def test_plot_partition_of_any_scorer(pyplot):
    X, y = make_nested_squares(400, random_state=1)
    model = LogisticRegression().fit(X, y)
    figure, ax = pyplot.subplots()
    assert plot_partition(model, X, ax=ax, grid_resolution=40, colorbar=False) is ax
    image = np.asarray(ax.images[0].get_array())
    # a continuous scorer: the scaled rank follows the linear score
    scores = model.decision_function(_grid(ax.get_xlim() + ax.get_ylim(), 40))
    assert np.corrcoef(image.ravel(), scores)[0, 1] > 0.95
    _assert_not_blank(figure)
    forest = RankingForest(n_estimators=5, random_state=0).fit(X, y)
    ax = plot_partition(forest, bounds=(-2, 2, -2, 2), grid_resolution=30)
    _assert_not_blank(ax.figure)


def test_plot_partition_with_dataframe_feature_names(pyplot):
    pd = pytest.importorskip("pandas")
    X, y = make_nested_squares(600, random_state=2)
    frame = pd.DataFrame(X, columns=["width", "height"])
    tree = TreeRank(max_depth=2, random_state=0).fit(frame, y)
    ax = plot_partition(tree, frame, y, grid_resolution=30)  # no feature-name warning
    assert ax.get_xlabel() == "width"
    assert ax.get_ylabel() == "height"


def test_plot_partition_errors(fitted_tree):
    tree, X, y = fitted_tree
    X3 = np.column_stack([X, X[:, 0]])
    with pytest.raises(ValueError, match="exactly 2 features"):
        plot_partition(TreeRank(max_depth=1).fit(X3, y), X3)
    with pytest.raises(ValueError, match="needs X"):
        plot_partition(tree)
    with pytest.raises(ValueError, match="bounds must be four finite numbers"):
        plot_partition(tree, bounds=(1, 0, 0, 1))
    with pytest.raises(ValueError, match="grid_resolution must be an int >= 2"):
        plot_partition(tree, X, grid_resolution=1)
    with pytest.raises(ValueError, match="decision_function"):
        plot_partition(object(), X)
    with pytest.raises(ValueError, match="y has 3 elements"):
        plot_partition(tree, X, y[:3])
    with pytest.raises(ValueError, match="feature_names must contain 2"):
        plot_partition(tree, X, feature_names=["a"])


# ----------------------------------------------------------------------
# plot_stability
# ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def stability_results():
    X, y = make_nested_squares(400, random_state=3)
    tree = bootstrap_stability(
        TreeRank(max_depth=3), X, y, n_bootstrap=5, random_state=0
    )
    linear = bootstrap_stability(
        LogisticRegression(), X, y, n_bootstrap=5, random_state=0
    )
    return {"TreeRank": tree, "logistic": linear}


def test_plot_stability_matrix(pyplot, stability_results):
    result = stability_results["TreeRank"]
    ax = plot_stability(result)
    _assert_not_blank(ax.figure)
    image = ax.images[0].get_array()
    assert image.shape == (5, 5)
    assert np.all(np.ma.getmaskarray(image) == np.eye(5, dtype=bool))
    np.testing.assert_array_equal(image.filled(0.0), result.pairwise)
    assert f"{result.estimate:.4f}" in ax.get_title()


def test_plot_stability_comparisons(pyplot, stability_results):
    ax = plot_stability(stability_results, kind="distances")
    _assert_not_blank(ax.figure)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["TreeRank", "logistic"]
    # the marked estimates are the results' estimates
    (errorbar,) = [
        line
        for line in ax.lines
        if line.get_marker() == "o"
        and np.shape(line.get_xdata()) == (2,)
        and np.allclose(line.get_xdata(), [1.32, 2.32])
    ]
    np.testing.assert_allclose(
        errorbar.get_ydata(), [r.estimate for r in stability_results.values()]
    )
    figure, ax = pyplot.subplots()
    assert plot_stability(stability_results, kind="auc", ax=ax) is ax
    _assert_not_blank(figure)
    points = [line for line in ax.lines if line.get_marker() == "o"]
    for line, result in zip(points, stability_results.values()):
        np.testing.assert_allclose(
            np.sort(line.get_ydata()), np.sort(result.replicate_auc)
        )
    assert "out-of-bag" in ax.get_ylabel()


def test_plot_stability_errors(stability_results):
    with pytest.raises(ValueError, match="kind must be"):
        plot_stability(stability_results["TreeRank"], kind="heatmap")
    with pytest.raises(ValueError, match="draws one result"):
        plot_stability(stability_results, kind="matrix")
    with pytest.raises(ValueError, match="must be a StabilityResult"):
        plot_stability({"a": 1.0}, kind="auc")
    with pytest.raises(ValueError, match="results must be a StabilityResult"):
        plot_stability([1, 2])


# ----------------------------------------------------------------------
# plot_roc
# ----------------------------------------------------------------------
def test_plot_roc_renders_with_optimum(pyplot, fitted_tree):
    tree, _, _ = fitted_tree
    X_test, y_test = NestedSquares().sample(2000, random_state=9)
    scores = tree.decision_function(X_test)
    ax = plot_roc(y_test, {"TreeRank": scores}, optimal_roc=NestedSquares())
    _assert_not_blank(ax.figure)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[0].startswith("ROC* (AUC* = ")
    assert labels[1] == f"TreeRank (AUC = {roc_auc_score(y_test, scores):.3f})"


# ----------------------------------------------------------------------
# plot_tree: readable at any size (no overlapping text, text >= 8 px)
# ----------------------------------------------------------------------
def _tree_with_leaves(n_rows, random_state=0):
    # small inner leaves: a tree of many leaves
    X, y = make_nested_squares(n_rows, random_state=random_state)
    leafrank = LeafRank(max_depth=5, min_samples_leaf=20)
    return TreeRank(min_samples_split=10, leafrank=leafrank, random_state=0).fit(X, y)


@pytest.fixture(scope="module")
def large_trees():
    # about 50, 200 and 500 leaves
    return {n: _tree_with_leaves(n) for n in (1500, 6000, 15000)}


@pytest.mark.parametrize("n_rows", [1500, 6000, 15000])
def test_plot_tree_is_readable_at_any_size(pyplot, large_trees, n_rows):
    from figure_readability import assert_readable

    from treerank.cli._figures import FIGURE_DPI

    tree = large_trees[n_rows]
    assert 50 <= tree.n_leaves_ <= 600
    ax = plot_tree(tree, feature_names=["width", "height"])
    figure = ax.figure
    assert_readable(figure, FIGURE_DPI)
    # sized for what is drawn: at most 32 terminal nodes, about an inch each
    width, height = figure.get_size_inches()
    assert width * FIGURE_DPI < 4000 and height * FIGURE_DPI < 3000
    texts = [t.get_text() for t in ax.texts]
    collapsed = [t for t in texts if t.startswith("leaves ")]
    leaves = [t for t in texts if t.startswith("leaf ")]
    assert len(collapsed) + len(leaves) <= 32 and collapsed
    # the collapsed subtrees and the drawn leaves cover every rank, in order
    spans = sorted(
        (int(t.split()[1].split("-")[0]), int(t.split()[1].split("-")[-1]))
        for t in collapsed + leaves
    )
    assert spans[0][0] == 0 and spans[-1][1] == tree.n_leaves_ - 1
    assert all(a[1] + 1 == b[0] for a, b in itertools.pairwise(spans))
    assert f"ranking tree: {tree.n_leaves_} leaves" in ax.get_title()


def test_plot_tree_of_200_leaves_through_the_command_line_figure(pyplot, large_trees):
    from figure_readability import assert_readable

    from treerank.cli._figures import FIGURE_DPI, tree_figure

    tree = large_trees[6000]
    assert 150 <= tree.n_leaves_ <= 300
    for options in ({}, {"max_depth": 3}, {"max_leaves": 12}):
        figure = tree_figure(tree, feature_names=["u", "v"], **options)
        assert_readable(figure, FIGURE_DPI)
        pyplot.close(figure)


def test_the_demo_tree_figure_is_readable(pyplot):
    from figure_readability import assert_readable, text_extents

    from treerank.cli._demo import demo_tree
    from treerank.cli._figures import FIGURE_DPI, tree_figure

    tree, features = demo_tree()
    figure = tree_figure(tree, feature_names=features)
    assert_readable(figure, FIGURE_DPI)
    sizes = [size for _, size, _ in text_extents(figure, FIGURE_DPI)]
    assert min(sizes) >= 11  # 8-point text at 100 dpi


def test_the_whole_tree_when_asked(pyplot, large_trees):
    from figure_readability import assert_readable

    tree = large_trees[1500]
    ax = plot_tree(tree, max_leaves=None)
    assert len(ax.collections[0].get_offsets()) == tree.tree_.node_count
    assert not any(t.get_text().startswith("leaves ") for t in ax.texts)
    assert_readable(ax.figure, 100)
    np.testing.assert_array_equal(
        np.asarray(ax.collections[0].get_offsets())[tree.tree_.leaves, 0],
        np.arange(tree.n_leaves_),
    )


@pytest.mark.parametrize("max_leaves", [1, 2, 3, 7, 20, 1000])
def test_drawn_subtree_expands_the_heaviest_nodes(large_trees, max_leaves):
    from treerank.plotting._tree import drawn_subtree

    t = large_trees[1500].tree_
    drawn, collapsed = drawn_subtree(t, max_leaves=max_leaves)
    internal = ~t.is_leaf
    expanded = drawn & internal & ~collapsed
    terminals = drawn & (t.is_leaf | collapsed)
    assert terminals.sum() == min(max_leaves, t.n_leaves)
    assert drawn[0]
    for node in np.flatnonzero(internal):
        children = [t.children_left[node], t.children_right[node]]
        assert drawn[children].all() == bool(expanded[node])
    mass = t.n_pos + t.n_neg
    if expanded.any() and collapsed.any():
        assert mass[expanded].min() >= mass[collapsed].max()
    drawn, collapsed = drawn_subtree(t, max_depth=2)
    assert t.depth[drawn].max() == 2
    assert np.all(t.depth[collapsed] == 2)


def test_plot_tree_limit_errors_and_dollar_signs(pyplot, fitted_tree):
    tree, _, _ = fitted_tree
    with pytest.raises(ValueError, match="max_leaves must be"):
        plot_tree(tree, max_leaves=0)
    with pytest.raises(ValueError, match="max_depth must be"):
        plot_tree(tree, max_depth="auto")
    ax = plot_tree(tree, feature_names=["cost $", "a$b"])
    pyplot.gcf().canvas.draw()  # no mathtext error
    rules = " ".join(t.get_text() for t in ax.texts)
    assert r"cost \$" in rules


def test_the_readability_check_sees_every_drawn_text(pyplot, fitted_tree):
    from figure_readability import readability_problems, text_extents

    tree, _, _ = fitted_tree
    ax = plot_tree(tree)
    found = [text for text, _, _ in text_extents(ax.figure, 100)]
    node_texts = [t.get_text() for t in ax.texts]
    assert sorted(t for t in found if t in node_texts) == sorted(node_texts)
    assert ax.get_title() in found and "positive rate" in found
    # and it fails where it should: overlapping or small text
    figure, ax = pyplot.subplots()
    ax.text(0.5, 0.5, "first text", fontsize=10)
    ax.text(0.52, 0.5, "second text", fontsize=10)
    ax.text(0.1, 0.1, "tiny", fontsize=5)
    small, overlaps = readability_problems(figure, 100)
    assert small == [("tiny", pytest.approx(5 * 100 / 72))]
    assert overlaps == [("first text", "second text")]
