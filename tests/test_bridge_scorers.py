"""Tests of the list scorers inside scikit-learn's grouped cross-validation."""

import pickle

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate
from sklearn.pipeline import make_pipeline

from treerank import TreeRank
from treerank.bridge import LeafEmbedding, ListScorer, make_list_scorer
from treerank.datasets import make_learning_to_rank
from treerank.metrics import average_precision_score, ndcg_score, pairwise_disagreement
from treerank.surrogates import LinearSurrogateRanker


@pytest.fixture(scope="module")
def data():
    X, y, qid = make_learning_to_rank(
        24, min_docs=4, max_docs=15, n_features=5, random_state=0
    )
    return X, y, qid


def _fold_scores(estimator, X, y, qid, metric, fit_qid):
    """Hand-computed metric of every GroupKFold test fold."""
    scores = []
    for train, test in GroupKFold(3).split(X, y, qid):
        model = clone(estimator)
        if fit_qid:
            model.fit(X[train], y[train], qid=qid[train])
        else:
            model.fit(X[train], y[train])
        scores.append(metric(y[test], model.decision_function(X[test]), qid[test]))
    return np.array(scores)


def _ndcg10(y, s, q):
    return ndcg_score(y, s, qid=q, k=10)


def _map(y, s, q):
    return average_precision_score((y >= 1).astype(int), s, qid=q, ties="average")


def test_cross_validate_with_grouped_folds(data):
    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        model = LinearSurrogateRanker(loss="slam", alpha=0.1).set_fit_request(qid=True)
        cv = cross_validate(
            model,
            X,
            y,
            cv=GroupKFold(3),
            scoring={
                "ndcg": make_list_scorer("ndcg@10"),
                "map": make_list_scorer("map"),
            },
            params={"qid": qid, "groups": qid},
            error_score="raise",
            return_indices=True,
        )
    # every query is entirely in one test fold
    for test in cv["indices"]["test"]:
        assert not np.isin(qid[test], np.delete(qid, test)).any()
    plain = LinearSurrogateRanker(loss="slam", alpha=0.1)
    np.testing.assert_allclose(
        cv["test_ndcg"], _fold_scores(plain, X, y, qid, _ndcg10, True), rtol=1e-12
    )
    np.testing.assert_allclose(
        cv["test_map"], _fold_scores(plain, X, y, qid, _map, True), rtol=1e-12
    )


def test_cross_validate_with_groups_alias(data):
    # one array: GroupKFold splits on groups, the scorer and fit use it as qid
    X, y, qid = data
    with sklearn.config_context(enable_metadata_routing=True):
        model = LinearSurrogateRanker(loss="squared_ndcg").set_fit_request(qid="groups")
        scorer = make_list_scorer("ndcg@10").set_score_request(qid="groups")
        cv = cross_validate(
            model,
            X,
            y,
            cv=GroupKFold(3),
            scoring=scorer,
            params={"groups": qid},
            error_score="raise",
        )
    expected = _fold_scores(
        LinearSurrogateRanker(loss="squared_ndcg"), X, y, qid, _ndcg10, True
    )
    np.testing.assert_allclose(cv["test_score"], expected, rtol=1e-12)


def test_cross_validate_a_tree_with_binary_labels(data):
    # a bipartite ranker does not take qid; only the scorer and the splitter do
    X, y, qid = data
    relevant = (y >= 1).astype(int)
    tree = TreeRank(max_depth=2, min_samples_split=10, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        cv = cross_validate(
            tree,
            X,
            relevant,
            cv=GroupKFold(3),
            scoring=make_list_scorer("map"),
            params={"qid": qid, "groups": qid},
            error_score="raise",
        )
    np.testing.assert_allclose(
        cv["test_score"], _fold_scores(tree, X, relevant, qid, _map, False), rtol=1e-12
    )


def test_grid_search_with_grouped_folds(data):
    X, y, qid = data
    pipe = make_pipeline(
        LeafEmbedding(
            TreeRank(max_depth=3, min_samples_split=10, random_state=0), threshold=1
        ),
        LinearSurrogateRanker(loss="squared_ndcg"),
    )
    grid = {"linearsurrogateranker__alpha": [0.01, 10.0]}
    with sklearn.config_context(enable_metadata_routing=True):
        pipe.named_steps["linearsurrogateranker"].set_fit_request(qid=True)
        search = GridSearchCV(
            pipe,
            grid,
            scoring=make_list_scorer("ndcg@10"),
            cv=GroupKFold(3),
            error_score="raise",
        ).fit(X, y, qid=qid, groups=qid)
        refit_score = search.score(X, y, qid=qid)
    for i, alpha in enumerate(grid["linearsurrogateranker__alpha"]):
        expected = []
        for train, test in GroupKFold(3).split(X, y, qid):
            model = clone(pipe).set_params(linearsurrogateranker__alpha=alpha)
            model.fit(X[train], y[train], linearsurrogateranker__qid=qid[train])
            expected.append(
                _ndcg10(y[test], model.decision_function(X[test]), qid[test])
            )
        for fold, value in enumerate(expected):
            assert search.cv_results_[f"split{fold}_test_score"][i] == pytest.approx(
                value, rel=1e-12
            )
    best = np.argmax(search.cv_results_["mean_test_score"])
    assert search.best_params_ == {
        "linearsurrogateranker__alpha": grid["linearsurrogateranker__alpha"][best]
    }
    full = clone(pipe).set_params(**search.best_params_)
    full.fit(X, y, linearsurrogateranker__qid=qid)
    assert refit_score == pytest.approx(_ndcg10(y, full.decision_function(X), qid))


def test_without_routing_the_scorer_refuses_to_guess(data):
    X, y, qid = data
    model = LinearSurrogateRanker(loss="slam", alpha=0.1)
    with pytest.raises(ValueError, match="needs the query id of every test document"):
        cross_validate(
            model,
            X,
            y,
            groups=qid,
            cv=GroupKFold(3),
            scoring=make_list_scorer("ndcg@10"),
            params={"qid": qid},
            error_score="raise",
        )


def test_direct_call_and_loss_sign(data):
    X, y, qid = data
    model = LinearSurrogateRanker(loss="slam", alpha=0.1).fit(X, y, qid=qid)
    scores = model.decision_function(X)
    assert make_list_scorer("ndcg@10")(model, X, y, qid=qid) == pytest.approx(
        ndcg_score(y, scores, qid=qid, k=10)
    )
    scorer = make_list_scorer("pd")
    assert scorer.name == "neg_pd"
    assert scorer(model, X, y, qid=qid) == pytest.approx(
        -pairwise_disagreement(y, scores, qid=qid)
    )
    err = make_list_scorer("err@5", max_grade=4)
    assert repr(err) == "make_list_scorer('err@5', max_grade=4)"
    assert repr(make_list_scorer("map")) == "make_list_scorer('map')"


def test_metadata_request():
    scorer = make_list_scorer("map")
    assert isinstance(scorer, ListScorer)
    request = scorer.get_metadata_routing()
    assert request.score.requests == {"qid": True}
    scorer.set_score_request(qid="groups")
    assert scorer.get_metadata_routing().score.requests == {"qid": "groups"}
    scorer.set_score_request(qid=False)
    assert scorer.get_metadata_routing().score.requests == {"qid": False}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"metric": "pauc@0.1"}, "is not a list metric"),
        ({"metric": ["map", "ndcg"]}, "one metric"),
        ({"metric": "err"}, "needs the top grade"),
        ({"metric": "map", "response_method": "score"}, "response_method"),
    ],
)
def test_scorer_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_list_scorer(**kwargs)


def test_request_errors():
    with pytest.raises(ValueError, match="qid must be True"):
        make_list_scorer("map").set_score_request(qid=3)


def test_scorer_pickles(data):
    X, y, qid = data
    model = LinearSurrogateRanker(loss="slam", alpha=0.1).fit(X, y, qid=qid)
    scorer = make_list_scorer("ndcg@10").set_score_request(qid="groups")
    copy = pickle.loads(pickle.dumps(scorer))
    assert copy(model, X, y, qid=qid) == scorer(model, X, y, qid=qid)
    assert copy.get_metadata_routing().score.requests == {"qid": "groups"}
