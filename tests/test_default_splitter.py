"""``leafrank__*`` parameters act on the default splitter (``leafrank=None``)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from treerank import LeafRank, RankingForest, TreeRank
from treerank.datasets import NestedSquares
from treerank.tree._leafrank import auto_min_samples_leaf


@pytest.mark.parametrize("estimator", [TreeRank(), RankingForest(n_estimators=3)])
def test_set_params_materializes_the_default_splitter(estimator):
    default = type(estimator)._default_leafrank()
    tuned = clone(estimator).set_params(leafrank__min_samples_leaf=7)
    assert isinstance(tuned.leafrank, LeafRank)
    assert tuned.leafrank.min_samples_leaf == 7
    # every other parameter of the default splitter is kept
    expected = dict(default.get_params(), min_samples_leaf=7)
    assert tuned.leafrank.get_params() == expected
    # the original estimator is untouched and the default is not shared
    assert estimator.leafrank is None
    assert type(estimator)._default_leafrank().min_samples_leaf == (
        default.min_samples_leaf
    )


def test_set_params_with_an_explicit_splitter_is_unchanged():
    leafrank = LeafRank(max_depth=1)
    tree = TreeRank(leafrank=leafrank).set_params(leafrank__min_samples_leaf=3)
    assert tree.leafrank is leafrank
    assert leafrank.get_params()["min_samples_leaf"] == 3
    # a splitter given in the same call takes the nested parameter
    other = LeafRank(max_depth=2)
    tree = TreeRank().set_params(leafrank=other, leafrank__min_samples_leaf=9)
    assert tree.leafrank is other and other.min_samples_leaf == 9


def test_unknown_nested_parameter_is_refused():
    with pytest.raises(ValueError, match="nope"):
        TreeRank().set_params(leafrank__nope=1)


def test_tuned_default_splitter_fits_like_the_explicit_one():
    X, y = NestedSquares().sample(600, random_state=0)
    tuned = TreeRank(random_state=0).set_params(leafrank__min_samples_leaf=10)
    explicit = TreeRank(leafrank=LeafRank(min_samples_leaf=10), random_state=0)
    np.testing.assert_array_equal(
        tuned.fit(X, y).decision_function(X), explicit.fit(X, y).decision_function(X)
    )


@pytest.mark.parametrize(
    "estimator",
    [TreeRank(random_state=0), RankingForest(n_estimators=5, random_state=0)],
)
def test_grid_search_over_the_default_splitter(estimator):
    X, y = NestedSquares().sample(400, random_state=1)
    grid = {"leafrank__min_samples_leaf": [5, 40], "leafrank__max_depth": [1, 3]}
    search = GridSearchCV(estimator, grid, cv=3, scoring="roc_auc").fit(X, y)
    assert len(search.cv_results_["params"]) == 4
    best = search.best_estimator_
    assert (
        best.leafrank.min_samples_leaf
        == search.best_params_["leafrank__min_samples_leaf"]
    )
    assert best.leafrank.max_depth == search.best_params_["leafrank__max_depth"]
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_the_default_splitter_of_a_tree_is_leafrank_with_its_own_defaults():
    assert TreeRank._default_leafrank().get_params() == LeafRank().get_params()
    assert LeafRank().min_samples_leaf == "auto"


def test_the_forest_default_splitter_differs_from_leafrank_as_documented():
    forest = RankingForest._default_leafrank().get_params()
    own = LeafRank().get_params()
    differences = {name: value for name, value in forest.items() if own[name] != value}
    # the table of docs/user_guide/treerank.rst (leafrank_defaults)
    assert differences == {"min_samples_leaf": 5, "criterion": "gini"}


def test_a_given_leafrank_fits_like_the_default_one():
    X, y = NestedSquares().sample(2400, random_state=0)
    default = TreeRank(random_state=0).fit(X, y)
    given = TreeRank(leafrank=LeafRank(), random_state=0).fit(X, y)
    np.testing.assert_array_equal(
        given.decision_function(X), default.decision_function(X)
    )


@pytest.mark.parametrize("n_samples", [400, 3000])
def test_setting_another_splitter_parameter_keeps_the_auto_leaf_size(n_samples):
    X, y = NestedSquares().sample(n_samples, random_state=0)
    tuned = TreeRank(random_state=0).set_params(leafrank__max_depth=3)
    assert tuned.leafrank.min_samples_leaf == "auto"
    leaf_size = auto_min_samples_leaf(n_samples)
    explicit = TreeRank(
        leafrank=LeafRank(max_depth=3, min_samples_leaf=leaf_size), random_state=0
    )
    np.testing.assert_array_equal(
        tuned.fit(X, y).decision_function(X), explicit.fit(X, y).decision_function(X)
    )


def test_auto_leaf_size_is_resolved_on_the_tree_rows_not_the_node_rows():
    X, y = NestedSquares().sample(3000, random_state=2)
    tree = TreeRank(leafrank=LeafRank(), max_depth=3, random_state=0).fit(X, y)
    fixed = TreeRank(
        leafrank=LeafRank(min_samples_leaf=50), max_depth=3, random_state=0
    ).fit(X, y)
    np.testing.assert_array_equal(tree.decision_function(X), fixed.decision_function(X))
    assert tree.leafrank.min_samples_leaf == "auto"  # the parameter is unchanged


def test_auto_leaf_size_of_a_leafrank_fitted_alone():
    X, y = NestedSquares().sample(1000, random_state=3)
    alone = LeafRank(random_state=0).fit(X, y)
    fixed = LeafRank(min_samples_leaf=auto_min_samples_leaf(1000), random_state=0)
    np.testing.assert_array_equal(alone.goes_left(X), fixed.fit(X, y).goes_left(X))


def test_forest_resolves_a_given_auto_leaf_size_on_a_tree_sample():
    X, y = NestedSquares().sample(1200, random_state=4)
    params = {"n_estimators": 3, "max_samples": 400, "random_state": 0}
    auto = RankingForest(leafrank=LeafRank(), **params).fit(X, y)
    fixed = RankingForest(
        leafrank=LeafRank(min_samples_leaf=auto_min_samples_leaf(400)), **params
    ).fit(X, y)
    np.testing.assert_array_equal(auto.decision_function(X), fixed.decision_function(X))
    assert auto.leafrank.min_samples_leaf == "auto"


def test_the_forest_keeps_its_default_splitter_when_one_parameter_is_set():
    forest = RankingForest().set_params(leafrank__max_depth=3)
    assert forest.leafrank.get_params() == dict(
        RankingForest._default_leafrank().get_params(), max_depth=3
    )
