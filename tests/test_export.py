"""Export of ranking trees: networkx graphs, Graphviz DOT text, indented text."""

import io
import os
import shutil
import subprocess
import warnings

import networkx as nx
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LogisticRegression

from treerank import ClassifierLeafRank, LeafRank, RankingForest, TreeRank
from treerank.export import export_graphviz, export_text, to_networkx
from treerank.export._nodes import rule_boxes
from treerank.tree import RankingTreeStructure

pydot = pytest.importorskip("pydot")
with warnings.catch_warnings():
    # pydot's parser calls pyparsing names that pyparsing >= 3.3 deprecates, at
    # import time: a third-party deprecation we cannot act on
    warnings.simplefilter("ignore", DeprecationWarning)
    import pydot.dot_parser


# ----------------------------------------------------------------------
# fixtures
# ----------------------------------------------------------------------
def _problem(seed, n=800, d=4):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, d))
    logits = 1.5 * (np.abs(X[:, 0]) < 1) + X[:, 1] - 0.5 * X[:, 2]
    y = (rng.random(n) < 1 / (1 + np.exp(-logits))).astype(int)
    w = rng.random(n) + 0.2
    return X, y, w


def _fitted_trees():
    X, y, w = _problem(0)
    return {
        "cart": TreeRank(max_depth=4, min_samples_split=40, random_state=0).fit(X, y),
        "cart_weighted": TreeRank(
            max_depth=3,
            leafrank=LeafRank(max_depth=2, min_samples_leaf=10),
            random_state=1,
        ).fit(X, y, sample_weight=w),
        "fr1": TreeRank(
            max_depth=4,
            min_samples_split=40,
            max_features_node=2,
            leafrank=LeafRank(max_depth=2, min_samples_leaf=20),
            random_state=2,
        ).fit(X, y),
        "linear": TreeRank(
            max_depth=3,
            leafrank=ClassifierLeafRank(LogisticRegression()),
            random_state=3,
        ).fit(X, y),
    }


TREES = _fitted_trees()
X_DATA, Y_DATA, W_DATA = _problem(0)


class _StubLeafRank:
    """A hand-made split rule: ``left if <feature 0 of its input> > threshold``."""

    def __init__(self, threshold, n_features_in):
        self.threshold = threshold
        self.n_features_in_ = n_features_in

    def goes_left(self, X):
        return np.asarray(X)[:, 0] > self.threshold

    def describe(self, feature_names=None):
        name = "x[0]" if feature_names is None else feature_names[0]
        return f"left if {name} > {self.threshold:g}"


def _hand_structure(n_pos=(6, 5, 4, 1, 1), n_neg=(6, 2, 0, 2, 4)):
    """Root -> (node 1 -> (leaf 2, leaf 3), leaf 4); node 1 sees feature 1 only."""
    return RankingTreeStructure(
        children_left=[1, 2, -1, -1, -1],
        children_right=[4, 3, -1, -1, -1],
        n_pos=n_pos,
        n_neg=n_neg,
        leafranks=[_StubLeafRank(50, 2), _StubLeafRank(30, 1), None, None, None],
        features=[None, np.array([1]), None, None, None],
    )


# ----------------------------------------------------------------------
# to_networkx
# ----------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(TREES))
def test_to_networkx_is_the_ranking_tree(name):
    tree = TREES[name]
    t = tree.tree_
    graph = to_networkx(tree)
    K = t.n_leaves
    assert K >= 3
    assert graph.number_of_nodes() == 2 * K - 1
    assert graph.number_of_edges() == 2 * K - 2
    assert nx.is_arborescence(graph)
    assert [n for n, d in graph.in_degree() if d == 0] == [0]
    # successors come out left first, and they are the fitted children
    for node in range(t.node_count):
        successors = list(graph.successors(node))
        if t.children_left[node] < 0:
            assert successors == []
        else:
            assert successors == [t.children_left[node], t.children_right[node]]
            assert graph.edges[node, successors[0]]["side"] == "left"
            assert graph.edges[node, successors[0]]["order"] == 0
            assert graph.edges[node, successors[1]]["side"] == "right"
            assert graph.edges[node, successors[1]]["order"] == 1
    # a depth-first traversal taking the left child first meets the leaves
    # in rank order 0..K-1
    leaves = [n for n in nx.dfs_preorder_nodes(graph, 0) if graph.out_degree(n) == 0]
    assert [graph.nodes[n]["leaf_rank"] for n in leaves] == list(range(K))
    # attributes are the fitted arrays
    for attribute in [
        "depth",
        "n_pos",
        "n_neg",
        "alpha",
        "beta",
        "alpha_lo",
        "beta_lo",
        "alpha_hi",
        "beta_hi",
        "dauc",
        "leaf_rank",
    ]:
        values = [graph.nodes[n][attribute] for n in range(t.node_count)]
        np.testing.assert_array_equal(values, getattr(t, attribute))
    assert [graph.nodes[n]["id"] for n in range(t.node_count)] == list(
        range(t.node_count)
    )
    rates = np.array([graph.nodes[n]["pos_rate"] for n in range(t.node_count)])
    np.testing.assert_allclose(rates, t.n_pos / (t.n_pos + t.n_neg))
    assert graph.graph["n_leaves"] == K
    assert graph.graph["auc"] == pytest.approx(0.5 + t.dauc.sum(), abs=1e-15)
    # leaves carry score and probability, internal nodes the rule
    for node in range(t.node_count):
        attributes = graph.nodes[node]
        assert attributes["is_leaf"] == (t.children_left[node] < 0)
        assert ("score" in attributes) == attributes["is_leaf"]
        assert ("proba" in attributes) == attributes["is_leaf"]
        assert ("rule" in attributes) != attributes["is_leaf"]


@pytest.mark.parametrize("name", sorted(TREES))
def test_leaf_scores_are_the_estimator_outputs(name):
    """The score and proba of a leaf are what the estimator gives its points."""
    tree = TREES[name]
    graph = to_networkx(tree)
    leaf_of_row = tree.tree_.leaves[tree.apply(X_DATA)]
    scores = tree.decision_function(X_DATA)
    proba = tree.predict_proba(X_DATA)[:, 1]
    for leaf in np.unique(leaf_of_row):
        rows = leaf_of_row == leaf
        assert np.all(scores[rows] == graph.nodes[leaf]["score"])
        assert np.all(proba[rows] == graph.nodes[leaf]["proba"])


def test_structure_input_scores_k_minus_rank():
    tree = TREES["cart"]
    graph = to_networkx(tree.tree_)
    K = tree.tree_.n_leaves
    for leaf in tree.tree_.leaves:
        attributes = graph.nodes[leaf]
        assert attributes["score"] == K - attributes["leaf_rank"]
        assert "proba" not in attributes
    # scores decrease from left to right, as the ranking
    leaves = tree.tree_.leaves
    assert np.all(np.diff([graph.nodes[n]["score"] for n in leaves]) < 0)


@pytest.mark.parametrize("name", ["cart", "cart_weighted", "fr1"])
def test_cart_rules_describe_the_split_exactly(name):
    """The simplified union of boxes is the region the LeafRank sends left."""
    tree = TREES[name]
    t = tree.tree_
    rng = np.random.default_rng(5)
    points = rng.uniform(-2.5, 2.5, size=(20000, X_DATA.shape[1]))
    values = points
    for node in np.flatnonzero(~t.is_leaf):
        features = t.features[node]
        local = points if features is None else points[:, features]
        expected = t.leafranks[node].goes_left(local)
        inside = np.zeros(points.shape[0], dtype=bool)
        for box in rule_boxes(t, node):
            in_box = np.ones(points.shape[0], dtype=bool)
            for feature, constraint in box.items():
                lo, hi = constraint["lo"], constraint["hi"]
                in_box &= (values[:, feature] > lo) & (values[:, feature] <= hi)
            inside |= in_box
        np.testing.assert_array_equal(inside, expected)
        # each feature appears at most once per box (conditions collapsed)
        text = to_networkx(tree).nodes[node]["rule"]
        assert text.startswith("left if (")
        assert text.count(" or (") == len(rule_boxes(t, node)) - 1


def test_fr1_rules_use_the_names_of_the_node_features():
    tree = TREES["fr1"]
    t = tree.tree_
    names = ["alpha", "bravo", "charlie", "delta"]
    graph = to_networkx(tree, feature_names=names)
    checked = 0
    for node in np.flatnonzero(~t.is_leaf):
        rule = graph.nodes[node]["rule"]
        inner = t.leafranks[node]
        used = {names[j] for j in inner.feature[inner.children_left >= 0]}
        mentioned = {name for name in names if name in rule}
        assert mentioned, rule
        assert mentioned <= used, (rule, used)
        checked += 1
    assert checked >= 2
    # without names, the global index appears (not the position in the subset)
    graph = to_networkx(tree)
    for node in np.flatnonzero(~t.is_leaf):
        indices = {
            int(s.split("]")[0]) for s in graph.nodes[node]["rule"].split("x[")[1:]
        }
        inner = t.leafranks[node]
        assert indices <= set(inner.feature[inner.children_left >= 0].tolist())


def test_linear_rule_is_the_leafrank_description():
    tree = TREES["linear"]
    t = tree.tree_
    names = ["a", "b", "c", "d"]
    graph = to_networkx(tree, feature_names=names)
    for node in np.flatnonzero(~t.is_leaf):
        assert graph.nodes[node]["rule"] == t.leafranks[node].describe(names)
        assert "*a" in graph.nodes[node]["rule"]


def test_feature_names_default_to_dataframe_columns():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X_DATA, columns=["age", "bmi", "sbp", "chol"])
    tree = TreeRank(max_depth=2, random_state=0).fit(frame, Y_DATA)
    graph = to_networkx(tree)
    assert graph.graph["feature_names"] == ["age", "bmi", "sbp", "chol"]
    assert "x[" not in graph.nodes[0]["rule"]
    assert "age" in graph.nodes[0]["rule"] or "bmi" in graph.nodes[0]["rule"]
    assert "x[" not in export_text(tree)
    # explicit names win
    assert "u0" in export_text(tree, feature_names=["u0", "u1", "u2", "u3"])


def test_loaded_model_exports_like_the_original(tmp_path):
    from treerank.model_io import load_model, save_model

    tree = TREES["cart"]
    path = tmp_path / "model.trk"
    save_model(tree, path)
    loaded = load_model(path)
    assert export_text(loaded) == export_text(tree)
    assert export_graphviz(loaded) == export_graphviz(tree)


def test_bad_inputs_are_refused_with_clear_errors():
    tree = TREES["cart"]
    with pytest.raises(ValueError, match="feature_names must contain 4 elements"):
        to_networkx(tree, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="sequence of str"):
        export_text(tree, feature_names="abcd")
    with pytest.raises(NotFittedError):
        export_text(TreeRank())
    with pytest.raises(ValueError, match="must be a fitted TreeRank"):
        export_graphviz(LogisticRegression().fit(X_DATA, Y_DATA))
    with pytest.raises(ValueError, match="must be a fitted TreeRank"):
        to_networkx(np.zeros(3))
    forest = RankingForest(n_estimators=2, aggregation="mean", random_state=0)
    forest.fit(X_DATA, Y_DATA)
    with pytest.raises(ValueError, match=r"estimators_\[0\]"):
        to_networkx(forest)
    assert to_networkx(forest.estimators_[0]).number_of_nodes() > 0
    with pytest.raises(ValueError, match="precision must be an int >= 0"):
        export_text(tree, precision=-1)
    with pytest.raises(ValueError, match="max_depth must be None or an int"):
        export_text(tree, max_depth=1.5)
    with pytest.raises(ValueError, match="out_file must be None, a path"):
        export_graphviz(tree, out_file=3)
    # a bare structure: names are checked against what its LeafRanks saw
    with pytest.raises(ValueError, match="feature_names must contain 4"):
        export_text(tree.tree_, feature_names=["a"])


# ----------------------------------------------------------------------
# export_text
# ----------------------------------------------------------------------
def test_export_text_golden_hand_made_tree():
    # counts chosen by hand: alpha = n_neg / 6, beta = n_pos / 6;
    # dAUC(root) = (5/6 * 4/6 - 2/6 * 1/6) / 2 = 1/4,
    # dAUC(node 1) = (4/6 * 2/6 - 0 * 1/6) / 2 = 1/9, AUC = 1/2 + 1/4 + 1/9
    structure = _hand_structure()
    expected = "\n".join(
        [
            "ranking tree: 3 leaves (leaf 0 = best), training AUC 0.8611",
            "node 0  #pos:#neg 6:6  rate 0.500  dAUC 0.2500",
            "|   rule: left if age > 50",
            "|-- L node 1  #pos:#neg 5:2  rate 0.714  dAUC 0.1111",
            "|   |   rule: left if bmi > 30",
            "|   |-- L node 2  leaf 0  #pos:#neg 4:0  rate 1.000  score 3",
            "|   |-- R node 3  leaf 1  #pos:#neg 1:2  rate 0.333  score 2",
            "|-- R node 4  leaf 2  #pos:#neg 1:4  rate 0.200  score 1",
        ]
    )
    assert export_text(structure, feature_names=["age", "bmi"]) == expected
    # default names: x[i] with the global index (node 1 saw feature 1 only)
    text = export_text(structure)
    assert "rule: left if x[0] > 50" in text
    assert "rule: left if x[1] > 30" in text


def test_export_text_options_golden():
    structure = _hand_structure(n_pos=(3.0, 2.5, 2.0, 0.5, 0.5))
    expected = "\n".join(
        [
            "ranking tree: 3 leaves (leaf 0 = best), training AUC 0.861",
            "node 0  #pos:#neg 3:6  rate 0.33  dAUC 0.250",
            "|-- L node 1  #pos:#neg 2.50:2  rate 0.56  dAUC 0.111",
            "|   |-- ... (2 leaves below node 1)",
            "|-- R node 4  leaf 2  #pos:#neg 0.50:4  rate 0.11  score 1",
        ]
    )
    text = export_text(structure, precision=2, rules=False, max_depth=1)
    assert text == expected


def test_export_text_lists_every_node_in_preorder():
    tree = TREES["fr1"]
    text = export_text(tree)
    node_lines = [line for line in text.splitlines() if " node " in f" {line}"]
    ids = [int(line.split("node ")[1].split()[0]) for line in node_lines]
    assert ids == list(range(tree.tree_.node_count))
    leaf_ranks = [
        int(line.split("leaf ")[1].split()[0])
        for line in node_lines
        if "  leaf " in line
    ]
    assert leaf_ranks == list(range(tree.tree_.n_leaves))
    # the printed scores are the exact leaf scores (half-integers for TreeRank)
    graph = to_networkx(tree)
    printed = [
        float(line.split("score ")[1].split()[0])
        for line in node_lines
        if "score " in line
    ]
    assert printed == [graph.nodes[leaf]["score"] for leaf in tree.tree_.leaves]
    # depth is the indentation
    for node, line in zip(ids, node_lines):
        depth = tree.tree_.depth[node]
        prefix = line.split("node ")[0]
        assert len(prefix) == (0 if depth == 0 else 4 * depth + 2)


# ----------------------------------------------------------------------
# export_graphviz
# ----------------------------------------------------------------------
def _parse(dot):
    graphs = pydot.graph_from_dot_data(dot)
    assert graphs is not None and len(graphs) == 1
    return graphs[0]


def _real_nodes(graph):
    return [
        n for n in graph.get_nodes() if n.get_name() not in ("node", "edge", "graph")
    ]


@pytest.mark.parametrize("name", sorted(TREES))
def test_export_graphviz_parses_with_pydot(name):
    tree = TREES[name]
    t = tree.tree_
    dot = export_graphviz(tree)
    graph = _parse(dot)
    nodes = _real_nodes(graph)
    assert sorted(int(n.get_name()) for n in nodes) == list(range(t.node_count))
    edges = sorted(
        (int(e.get_source()), int(e.get_destination())) for e in graph.get_edges()
    )
    expected = sorted(
        (node, int(child))
        for node in np.flatnonzero(~t.is_leaf)
        for child in (t.children_left[node], t.children_right[node])
    )
    assert edges == expected
    assert len(edges) == 2 * t.n_leaves - 2
    # the leaves sit on one rank, chained best to worst by invisible edges
    (subgraph,) = graph.get_subgraphs()
    chain = [
        (int(e.get_source()), int(e.get_destination())) for e in subgraph.get_edges()
    ]
    assert chain == list(zip(t.leaves[:-1].tolist(), t.leaves[1:].tolist()))
    assert all(e.get_style() == "invis" for e in subgraph.get_edges())
    (defaults,) = graph.get_node("graph")  # the `graph [...]` statement
    assert defaults.get_attributes()["ordering"] == "out"
    # leaf labels give the rank, internal labels the dAUC
    for n in nodes:
        node = int(n.get_name())
        label = n.get_label()
        if t.children_left[node] < 0:
            assert f"leaf {t.leaf_rank[node]}" in label
        else:
            assert "dAUC" in label and "left if" in label
    # networkx reads the same tree back (it skips the subgraph's invisible edges)
    back = nx.nx_pydot.from_pydot(graph)
    assert sorted((int(a), int(b)) for a, b in back.edges()) == expected


def test_export_graphviz_colours_follow_the_positive_rate():
    structure = _hand_structure()  # rates: 0.5, 5/7, 1, 1/3, 1/5; overall 0.5
    graph = _parse(export_graphviz(structure))
    fill = {
        int(n.get_name()): n.get_attributes()["fillcolor"].strip('"')
        for n in _real_nodes(graph)
    }
    assert fill[0] == "#ffffbf"  # the overall rate: the neutral colour
    assert fill[2] == "#1a9850"  # only positives: the green end
    rgb = {
        k: np.array([int(v[i : i + 2], 16) for i in (1, 3, 5)]) for k, v in fill.items()
    }
    greenness = {k: int(c[1]) - int(c[0]) for k, c in rgb.items()}
    by_rate = sorted(range(5), key=lambda k: [0.5, 5 / 7, 1.0, 1 / 3, 0.2][k])
    assert [greenness[k] for k in by_rate] == sorted(greenness.values())
    # a zero-rate leaf is the red end
    zero = _hand_structure(n_pos=(5, 5, 4, 1, 0), n_neg=(6, 2, 0, 2, 4))
    fill = {
        int(n.get_name()): n.get_attributes()["fillcolor"].strip('"')
        for n in _real_nodes(_parse(export_graphviz(zero)))
    }
    assert fill[4] == "#d73027"
    # the legend states the scale; filled=False drops the colours
    assert "pale yellow = 0.500 (overall)" in export_graphviz(structure)
    assert "fillcolor" not in export_graphviz(structure, filled=False)
    assert 'label="Left child' not in export_graphviz(structure, legend=False)


def test_export_graphviz_sinks(tmp_path):
    tree = TREES["cart"]
    dot = export_graphviz(tree, feature_names=["a", "b", "c", "d"])
    path = tmp_path / "tree.dot"
    assert export_graphviz(tree, path, feature_names=["a", "b", "c", "d"]) is None
    assert path.read_text(encoding="utf-8") == dot
    assert os.listdir(tmp_path) == ["tree.dot"]  # no temporary file left behind
    assert export_graphviz(tree, str(path)) is None  # a str path overwrites
    assert path.read_text(encoding="utf-8") == export_graphviz(tree)
    buffer = io.StringIO()
    assert export_graphviz(tree, buffer) is None
    assert buffer.getvalue() == export_graphviz(tree)


def test_export_graphviz_escapes_names():
    names = ['he said "hi"', "back\\slash", "c", "d"]
    tree = TREES["cart"]
    graph = _parse(export_graphviz(tree, feature_names=names))
    labels = " ".join(n.get_label() for n in _real_nodes(graph))
    used = {
        names[j]
        for j in range(4)
        if to_networkx(tree, names).nodes[0]["rule"].find(names[j]) >= 0
    }
    assert used
    for name in used:
        escaped = name.replace("\\", "\\\\").replace('"', '\\"')
        assert escaped in labels


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz dot not installed")
def test_export_graphviz_renders_with_dot(tmp_path):
    dot = export_graphviz(TREES["fr1"])
    result = subprocess.run(
        ["dot", "-Tpng"], input=dot.encode(), capture_output=True, check=True
    )
    assert result.stdout[:8] == b"\x89PNG\r\n\x1a\n"
