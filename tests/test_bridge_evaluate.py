"""Tests of treerank.bridge.evaluate: agreement with the metric functions."""

import functools

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.metrics import roc_auc_score as sk_roc_auc_score

from treerank import TreeRank
from treerank.bridge import EvaluationResult, evaluate, evaluate_from_scores
from treerank.datasets import make_learning_to_rank
from treerank.metrics import (
    average_precision_score,
    dcg_score,
    err_score,
    expected_rank_utility,
    list_auc,
    ndcg_score,
    pairwise_disagreement,
    partial_auc_score,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
    tpr_at_fpr,
)

# name -> (function, options, binary labels)
NAMED = {
    "ndcg": (ndcg_score, {}, False),
    "ndcg@5": (ndcg_score, {"k": 5}, False),
    "dcg@3": (dcg_score, {"k": 3}, False),
    "err": (err_score, {"max_grade": 4}, False),
    "err@4": (err_score, {"max_grade": 4, "k": 4}, False),
    "eru": (expected_rank_utility, {}, False),
    "pd": (pairwise_disagreement, {}, False),
    "map": (average_precision_score, {"ties": "average"}, True),
    "p@5": (precision_at_k, {"k": 5}, True),
    "r@5": (recall_at_k, {"k": 5}, True),
    "mrr": (reciprocal_rank, {}, True),
    "mrr@3": (reciprocal_rank, {"k": 3}, True),
    "auc": (list_auc, {}, True),
}


@pytest.fixture(scope="module")
def grouped():
    """Graded data with shuffled rows and non-contiguous, unsorted string ids."""
    X, y, qid = make_learning_to_rank(
        25, min_docs=2, max_docs=12, n_features=4, random_state=0
    )
    rng = np.random.default_rng(1)
    perm = rng.permutation(y.shape[0])
    names = np.array([f"q{(7 * q) % 25:02d}" for q in range(25)])
    scores = np.round(X[:, 0] + rng.normal(size=y.shape[0]), 1)  # with ties
    return X[perm], y[perm], names[qid[perm]], scores[perm]


def _per_query_by_hand(function, options, y, scores, qid, binary):
    labels = (y >= 1).astype(float) if binary else y
    values = []
    for q in np.unique(qid):
        rows = qid == q
        values.append(function(labels[rows], scores[rows], **options))
    return np.array(values)


@pytest.mark.parametrize("name", list(NAMED))
def test_evaluate_equals_metric_functions_query_by_query(grouped, name):
    _, y, qid, scores = grouped
    function, options, binary = NAMED[name]
    result = evaluate_from_scores(
        y, scores, qid, metrics=name, max_grade=4, n_bootstrap=0
    )
    expected = _per_query_by_hand(function, options, y, scores, qid, binary)
    np.testing.assert_allclose(result.per_query[name], expected, rtol=1e-12, atol=0)
    assert result.means[name] == pytest.approx(expected.mean(), rel=1e-12)
    np.testing.assert_array_equal(result.query_ids, np.unique(qid))
    assert result.n_queries == 25
    assert result.greater_is_better[name] == (name != "pd")


def test_evaluate_with_an_estimator_equals_its_scores(grouped):
    X, y, qid, _ = grouped
    tree = TreeRank(max_depth=3, min_samples_split=10, random_state=0).fit(X, y >= 1)
    result = evaluate(
        tree, X, y, qid, metrics=["ndcg@10", "map"], n_bootstrap=50, random_state=0
    )
    scores = tree.decision_function(X)
    by_scores = evaluate_from_scores(
        y, scores, qid, metrics=["ndcg@10", "map"], n_bootstrap=50, random_state=0
    )
    for name in ("ndcg@10", "map"):
        np.testing.assert_array_equal(result.per_query[name], by_scores.per_query[name])
        assert result.ci[name] == by_scores.ci[name]
    expected = _per_query_by_hand(ndcg_score, {"k": 10}, y, scores, qid, False)
    np.testing.assert_allclose(result.per_query["ndcg@10"], expected, rtol=1e-12)


def test_options_are_passed_to_the_metrics(grouped):
    _, y, qid, scores = grouped
    result = evaluate_from_scores(
        y,
        scores,
        qid,
        metrics=["ndcg@5", "map", "p@3"],
        gain="linear",
        ties="pessimistic",
        threshold=2,
        empty=1.0,
        n_bootstrap=0,
    )
    options = {"ties": "pessimistic", "empty": 1.0}
    expected = _per_query_by_hand(
        ndcg_score, {"k": 5, "gain": "linear", **options}, y, scores, qid, False
    )
    np.testing.assert_allclose(result.per_query["ndcg@5"], expected, rtol=1e-12)
    labels = (y >= 2).astype(float)
    for name, function, extra in [
        ("map", average_precision_score, {}),
        ("p@3", precision_at_k, {"k": 3}),
    ]:
        expected = [
            function(labels[qid == q], scores[qid == q], **extra, **options)
            for q in np.unique(qid)
        ]
        np.testing.assert_allclose(result.per_query[name], expected, rtol=1e-12)


def test_empty_skip_leaves_queries_out(grouped):
    _, y, qid, scores = grouped
    result = evaluate_from_scores(
        y,
        scores,
        qid,
        metrics="map",
        threshold=3,
        empty="skip",
        n_bootstrap=300,
        random_state=0,
    )
    values = result.per_query["map"]
    assert np.isnan(values).any() and not np.isnan(values).all()
    assert result.means["map"] == pytest.approx(np.nanmean(values), rel=1e-12)
    assert not np.isnan(result.bootstrap_means["map"]).any()
    low, high = result.ci["map"]
    assert low <= result.means["map"] <= high


def test_callables_per_query_and_vectorized(grouped):
    _, y, qid, scores = grouped

    def top_grade(y_true, y_score):
        return float(y_true[np.argmax(y_score)])

    result = evaluate_from_scores(
        y,
        scores,
        qid,
        metrics={
            "top": top_grade,
            "ndcg3": functools.partial(ndcg_score, k=3),
            "named": "ndcg@3",
        },
        n_bootstrap=0,
    )
    expected = [top_grade(y[qid == q], scores[qid == q]) for q in np.unique(qid)]
    np.testing.assert_array_equal(result.per_query["top"], expected)
    np.testing.assert_array_equal(result.per_query["ndcg3"], result.per_query["named"])
    # a callable's name is its function's name
    named = evaluate_from_scores(y, scores, qid, metrics=[top_grade], n_bootstrap=0)
    assert list(named.means) == ["top_grade"]


def test_bipartite_metrics_without_qid():
    X, y, _ = make_learning_to_rank(10, random_state=2)
    scores = np.round(X[:, 0] + X[:, 1], 1)
    result = evaluate_from_scores(
        y, scores, metrics=["auc", "pauc@0.2", "tpr@0.1", "map"], n_bootstrap=0
    )
    relevant = (y >= 1).astype(int)
    assert result.means["auc"] == pytest.approx(sk_roc_auc_score(relevant, scores))
    assert result.means["pauc@0.2"] == pytest.approx(
        partial_auc_score(relevant, scores, max_fpr=0.2)
    )
    assert result.means["tpr@0.1"] == pytest.approx(tpr_at_fpr(relevant, scores, 0.1))
    assert result.means["map"] == pytest.approx(
        average_precision_score(relevant, scores, ties="average")
    )
    assert result.per_query is None and result.query_ids is None
    assert result.n_queries is None and result.ci is None


def test_default_metrics():
    y, s, q = [1, 0, 2, 0], [0.3, 0.1, 0.2, 0.4], [1, 1, 2, 2]
    assert list(evaluate_from_scores(y, s, n_bootstrap=0).means) == ["auc"]
    assert list(evaluate_from_scores(y, s, q, n_bootstrap=0).means) == [
        "ndcg",
        "ndcg@10",
        "map",
        "mrr",
    ]


def test_bootstrap_over_queries_matches_a_brute_force_loop(grouped):
    _, y, qid, scores = grouped
    result = evaluate_from_scores(
        y,
        scores,
        qid,
        metrics=["ndcg@5", "mrr"],
        n_bootstrap=400,
        confidence=0.9,
        random_state=42,
    )
    rng = np.random.RandomState(42)
    draws = rng.randint(0, 25, size=(400, 25))
    for name in ("ndcg@5", "mrr"):
        values = result.per_query[name]
        replicates = np.array([values[d].mean() for d in draws])
        np.testing.assert_allclose(result.bootstrap_means[name], replicates, rtol=1e-12)
        low, high = np.quantile(replicates, [0.05, 0.95])
        assert result.ci[name] == pytest.approx((low, high), rel=1e-12)
    assert result.confidence == 0.9 and result.n_bootstrap == 400


def test_bootstrap_interval_properties(grouped):
    _, y, qid, scores = grouped
    wide = evaluate_from_scores(
        y,
        scores,
        qid,
        metrics="ndcg",
        n_bootstrap=500,
        confidence=0.99,
        random_state=0,
    ).ci["ndcg"]
    narrow = evaluate_from_scores(
        y,
        scores,
        qid,
        metrics="ndcg",
        n_bootstrap=500,
        confidence=0.5,
        random_state=0,
    ).ci["ndcg"]
    assert wide[0] < narrow[0] < narrow[1] < wide[1]
    # a constant per-query value has a degenerate interval
    perfect = evaluate_from_scores(y, y, qid, metrics="ndcg", empty=1.0, random_state=0)
    assert perfect.ci["ndcg"] == (1.0, 1.0)


def test_bootstrap_without_qid_is_stratified_and_reproducible():
    rng = np.random.default_rng(0)
    y = np.r_[np.zeros(40), np.ones(10)]
    scores = y + rng.normal(size=50)
    first = evaluate_from_scores(y, scores, n_bootstrap=100, random_state=1)
    second = evaluate_from_scores(y, scores, n_bootstrap=100, random_state=1)
    np.testing.assert_array_equal(
        first.bootstrap_means["auc"], second.bootstrap_means["auc"]
    )
    # every replicate keeps both classes: the AUC is always defined
    assert np.all(np.isfinite(first.bootstrap_means["auc"]))
    low, high = first.ci["auc"]
    assert low < first.means["auc"] < high


def test_response_methods():
    X, y, qid = make_learning_to_rank(12, random_state=0)
    regressor = LinearRegression().fit(X, y)  # predict only
    result = evaluate(regressor, X, y, qid, metrics="ndcg", n_bootstrap=0)
    expected = ndcg_score(y, regressor.predict(X), qid=qid)
    assert result.means["ndcg"] == pytest.approx(expected, rel=1e-12)
    classifier = LogisticRegression().fit(X, y >= 1)
    by_proba = evaluate(
        classifier,
        X,
        y,
        qid,
        metrics="ndcg",
        response_method="predict_proba",
        n_bootstrap=0,
    )
    by_decision = evaluate(classifier, X, y, qid, metrics="ndcg", n_bootstrap=0)
    # the positive-class probability is a monotone transform of the decision
    assert by_proba.means["ndcg"] == pytest.approx(by_decision.means["ndcg"])


def test_repr():
    result = evaluate_from_scores(
        [1, 0, 0, 1],
        [0.9, 0.2, 0.4, 0.3],
        [1, 1, 2, 2],
        metrics="map",
        n_bootstrap=10,
        random_state=0,
    )
    assert isinstance(result, EvaluationResult)
    assert repr(result).startswith("EvaluationResult(2 queries: map=0.7500 [")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"metrics": "ndcg@0"}, "must be an integer >= 1"),
        ({"metrics": "ndcg@x"}, "must be an integer >= 1"),
        ({"metrics": "p"}, r"needs a cut-off: write p@<an integer k >= 1>"),
        ({"metrics": "map@3"}, "takes no cut-off"),
        ({"metrics": "pauc@1.5"}, r"must be a rate in \(0, 1\]"),
        ({"metrics": "foo"}, "unknown metric 'foo'"),
        ({"metrics": "err"}, "needs the top grade of the relevance scale"),
        ({"metrics": "pauc@0.1"}, "not computed per query"),
        ({"metrics": ["map", "map"]}, "duplicate names"),
        ({"metrics": []}, "metrics is empty"),
        ({"metrics": [3]}, "a metric must be a name or a callable"),
        ({"metrics": "map", "threshold": "1"}, "threshold must be a finite number"),
        ({"n_bootstrap": -1}, "n_bootstrap must be an integer >= 0"),
        ({"confidence": 1.0}, r"confidence must be a number in \(0, 1\)"),
        ({"metrics": "ndcg", "ties": "random"}, "ties"),
    ],
)
def test_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        evaluate_from_scores([1, 0, 2], [0.1, 0.2, 0.3], [1, 1, 2], **kwargs)


def test_input_errors():
    with pytest.raises(ValueError, match="the scores have 2 elements but y has 3"):
        evaluate_from_scores([1, 0, 2], [0.1, 0.2], n_bootstrap=0)
    with pytest.raises(ValueError, match="qid has 2 elements"):
        evaluate_from_scores([1, 0, 2], [0.1, 0.2, 0.3], [1, 2], n_bootstrap=0)
    with pytest.raises(ValueError, match="y contains NaN"):
        evaluate_from_scores([1, np.nan], [0.1, 0.2], n_bootstrap=0)
    with pytest.raises(ValueError, match="no decision_function, predict_proba or"):
        evaluate(object(), [[0.0]], [1], n_bootstrap=0)
    with pytest.raises(ValueError, match="response_method must be one of"):
        evaluate(LinearRegression(), [[0.0]], [1], response_method="score")
