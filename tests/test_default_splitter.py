"""``leafrank__*`` parameters act on the default splitter (``leafrank=None``)."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

from treerank import LeafRank, RankingForest, TreeRank
from treerank.datasets import NestedSquares


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
    explicit = TreeRank(
        leafrank=TreeRank._default_leafrank().set_params(min_samples_leaf=10),
        random_state=0,
    )
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
