"""LeafRank: the cost-sensitive node splitter."""

import itertools

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.neighbors import KNeighborsClassifier
from sklearn.svm import LinearSVC

from treerank import ClassifierLeafRank, LeafRank
from treerank.tree import balanced_node_weights


def _local_gain(mask, y, w):
    pos = y == 1
    return w[mask & pos].sum() / w[pos].sum() - w[mask & ~pos].sum() / w[~pos].sum()


@pytest.mark.parametrize("seed", range(25))
def test_left_side_is_the_best_union_of_inner_leaves(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(30, 120))
    X = rng.normal(size=(n, 3))
    y = (rng.random(n) < 1 / (1 + np.exp(-X[:, 0] + X[:, 1] ** 2 - 0.5))).astype(int)
    if y.min() == y.max():
        y[0] = 1 - y[0]
    w = rng.random(n) + 0.05
    depth = int(rng.integers(1, 4))
    leafrank = LeafRank(max_depth=depth, min_samples_leaf=1, random_state=seed).fit(
        X, y, sample_weight=w
    )
    inner = leafrank.tree_
    leaf_of = inner.apply(X)
    leaves = np.flatnonzero(inner.children_left == -1)
    assert leaves.shape[0] <= 2**depth
    best = 0.0
    for r in range(len(leaves) + 1):
        for subset in itertools.combinations(leaves, r):
            best = max(best, _local_gain(np.isin(leaf_of, subset), y, w))
    left = leafrank.goes_left(X)
    assert _local_gain(left, y, w) == pytest.approx(best, abs=1e-12)
    assert leafrank.gain_ == pytest.approx(best, abs=1e-12)


def test_balanced_weights_give_each_class_half_the_mass():
    rng = np.random.default_rng(0)
    y = (rng.random(100) < 0.1).astype(int)
    w = rng.random(100)
    bw = balanced_node_weights(y, w)
    assert bw[y == 1].sum() == pytest.approx(bw[y == 0].sum())
    assert bw.sum() == pytest.approx(100)
    with pytest.raises(ValueError, match="Both classes"):
        balanced_node_weights(np.zeros(3, dtype=int), np.ones(3))


def test_leafrank_describe_and_rules():
    X = np.array([[0.0, 5.0], [1.0, 5.0], [2.0, 5.0], [3.0, 5.0]])
    leafrank = LeafRank(max_depth=1, min_samples_leaf=1).fit(X, [0, 0, 1, 1])
    assert leafrank.describe() == "left if (x[0] > 1.5)"
    assert leafrank.describe(["age", "bmi"]) == "left if (age > 1.5)"
    assert leafrank.left_rules() == [[("x[0]", ">", 1.5, False)]]
    with pytest.raises(ValueError, match="feature_names must contain 2 elements"):
        leafrank.describe(["age"])
    np.testing.assert_allclose(leafrank.feature_importances_, [1.0, 0.0])


def test_leafrank_without_useful_split_keeps_left_empty():
    X = np.zeros((20, 2))
    y = np.array([0, 1] * 10)
    leafrank = LeafRank().fit(X, y)
    assert not leafrank.goes_left(X).any()
    assert leafrank.gain_ == 0.0
    assert leafrank.describe() == "no split (left side empty)"


@pytest.mark.parametrize("estimator", [LogisticRegression(), LinearSVC()])
def test_classifier_leafrank_linear(estimator):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    # rare positives: without class balancing, a classifier would predict none
    y = (X[:, 0] + 0.3 * rng.normal(size=300) > 1.3).astype(int)
    leafrank = ClassifierLeafRank(estimator).fit(X, y)
    left = leafrank.goes_left(X)
    assert _local_gain(left, y, np.ones(300)) == pytest.approx(leafrank.gain_)
    assert leafrank.gain_ > 0.7
    assert leafrank.feature_importances_[0] > 0.8
    assert leafrank.describe(["a", "b"]).startswith("left if ")
    assert "*a" in leafrank.describe(["a", "b"])
    assert estimator.__dict__.get("coef_") is None  # the template is not fitted


def test_classifier_leafrank_flips_a_worse_predicted_positive_side():
    class Contrarian(LogisticRegression):
        def predict(self, X):
            return 1 - super().predict(X)

    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 1))
    y = (X[:, 0] > 0).astype(int)
    leafrank = ClassifierLeafRank(Contrarian()).fit(X, y)
    assert leafrank.flip_
    assert _local_gain(leafrank.goes_left(X), y, np.ones(200)) > 0.9
    assert "<= 0" in leafrank.describe()


def test_classifier_leafrank_requires_sample_weight():
    X = np.arange(10.0).reshape(-1, 1)
    y = np.array([0, 1] * 5)
    with pytest.raises(ValueError, match="does not accept sample_weight"):
        ClassifierLeafRank(KNeighborsClassifier()).fit(X, y)


def test_leafrank_parameter_validation():
    X = np.arange(10.0).reshape(-1, 1)
    y = np.array([0, 1] * 5)
    with pytest.raises(ValueError, match="'max_depth' parameter of LeafRank"):
        LeafRank(max_depth=0).fit(X, y)
    with pytest.raises(ValueError, match="non-numeric labels"):
        LeafRank().fit(X, ["a", "b"] * 5)


def test_frozen_rule_of_a_leafrank_is_the_same_rule():
    """freeze_leafrank keeps where missing values go, whether each split saw
    some, a threshold +inf (all non-missing values left) and the splits'
    improvements: the frozen rule routes, describes itself and weighs its
    features as the LeafRank does."""
    from treerank.tree import FrozenTreeLeafRank
    from treerank.tree._mixed import freeze_leafrank

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    X[rng.random(300) < 0.5, 0] = np.nan
    y = np.isnan(X[:, 0]) ^ (rng.random(300) < 0.1)
    leafrank = LeafRank(max_depth=2, min_samples_leaf=5).fit(X, y)
    assert np.any(leafrank.tree_.threshold == np.inf)
    frozen = freeze_leafrank(leafrank)
    X_new = rng.normal(size=(500, 3))
    X_new[::3, 0] = np.nan
    np.testing.assert_array_equal(frozen.goes_left(X_new), leafrank.goes_left(X_new))
    assert frozen.describe(list("abc")) == leafrank.describe(list("abc"))
    np.testing.assert_array_equal(
        frozen.feature_importances_, leafrank.feature_importances_
    )
    # the importances computed from the improvements when asked
    lazy = FrozenTreeLeafRank(
        frozen.children_left,
        frozen.children_right,
        frozen.feature,
        frozen.threshold,
        frozen.left_nodes_,
        None,
        frozen.n_cuts_,
        frozen.gain_,
        missing_left=frozen.missing_left,
        improvement=frozen.improvement,
        n_features=3,
    )
    np.testing.assert_array_equal(
        lazy.feature_importances_, leafrank.feature_importances_
    )
    with pytest.raises(ValueError, match="needs its feature_importances"):
        FrozenTreeLeafRank([-1], [-1], [-1], [0.0], [True], None, 1, 0.0)
    with pytest.raises(ValueError, match="NaN or -inf threshold"):
        FrozenTreeLeafRank(
            [1, -1, -1],
            [2, -1, -1],
            [0, -1, -1],
            [-np.inf, 0, 0],
            [False, True, False],
            [1.0],
            1,
            0.5,
        )
