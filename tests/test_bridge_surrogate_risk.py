"""Tests of the empirical surrogate risk and metric regret of a scorer."""

import itertools

import numpy as np
import pytest

from treerank import TreeRank
from treerank.bridge import (
    SurrogateRiskResult,
    list_metric_regret,
    surrogate_risk,
    surrogate_risk_from_scores,
)
from treerank.datasets import make_learning_to_rank
from treerank.metrics import (
    average_precision_score,
    dcg_score,
    err_score,
    list_auc,
    ndcg_score,
    pairwise_disagreement,
    precision_at_k,
)
from treerank.surrogates import (
    DCGSurrogate,
    ERUSurrogate,
    ListNetSurrogate,
    MAPScoreSurrogate,
    MAPSurrogate,
    PairwiseComparisonLoss,
    PairwiseLogistic,
    PointwiseSquared,
    PrecisionAtQSurrogate,
    SLAMSurrogate,
)


@pytest.fixture(scope="module")
def grouped():
    X, y, qid = make_learning_to_rank(
        30, min_docs=1, max_docs=9, n_features=4, random_state=0
    )
    rng = np.random.default_rng(0)
    perm = rng.permutation(y.shape[0])
    scores = np.round(X[:, 0] + X[:, 1] + rng.normal(size=y.shape[0]), 1)
    return X[perm], y[perm], qid[perm], scores[perm]


LOSSES = [
    "slam",
    "squared",
    "squared_ndcg",
    "pairwise_logistic",
    "ranknet",
    "listnet",
    SLAMSurrogate(weights="ndcg@k", k=3),
    PointwiseSquared().instance("ndcg", k=5),
    PairwiseLogistic().instance("dcg"),
    PairwiseComparisonLoss(phi="exponential"),
    ListNetSurrogate(),
]


@pytest.mark.parametrize("loss", LOSSES, ids=repr)
def test_risk_is_the_mean_of_the_per_query_losses(grouped, loss):
    _, y, qid, scores = grouped
    result = surrogate_risk_from_scores(y, scores, qid, loss=loss)
    surrogate = result.loss
    # oracle: the loss of every query computed alone, in sorted qid order
    expected = np.array(
        [surrogate.value(scores[qid == q], y[qid == q]) for q in np.unique(qid)]
    )
    np.testing.assert_allclose(result.per_query, expected, rtol=1e-10, atol=1e-12)
    assert result.risk == pytest.approx(expected.mean(), rel=1e-10)
    np.testing.assert_array_equal(result.query_ids, np.unique(qid))


def test_surrogate_risk_of_an_estimator(grouped):
    X, y, qid, _ = grouped
    tree = TreeRank(max_depth=3, min_samples_split=10, random_state=0).fit(X, y >= 1)
    result = surrogate_risk(tree, X, y, qid, loss="slam")
    by_scores = surrogate_risk_from_scores(
        y, tree.decision_function(X), qid, loss="slam"
    )
    np.testing.assert_array_equal(result.per_query, by_scores.per_query)
    assert isinstance(result, SurrogateRiskResult)
    assert repr(result).startswith("SurrogateRiskResult(risk=")


@pytest.mark.parametrize(
    ("weights", "k", "metric"),
    [("ndcg", None, "ndcg"), ("ndcg@k", 3, "ndcg@3"), ("map", None, "map")],
)
def test_slam_upper_bounds_the_regret_of_its_metric(grouped, weights, k, metric):
    # the SLAM theorem, query by query, for tied tree scores and random scores
    X, y, qid, scores = grouped
    labels = (y >= 1).astype(float) if weights == "map" else y
    tree = TreeRank(max_depth=2, min_samples_split=10, random_state=0).fit(X, y >= 1)
    for s in (scores, tree.decision_function(X)):
        result = surrogate_risk_from_scores(
            labels, s, qid, loss=SLAMSurrogate(weights=weights, k=k)
        )
        assert result.metric == metric
        assert np.all(result.per_query >= result.per_query_regret - 1e-12)
        assert result.regret > 0


def _brute_force_best(metric, y):
    """max over all rankings of a list (scores = minus the position)."""
    n = y.shape[0]
    best = -np.inf
    for perm in itertools.permutations(range(n)):
        s = np.empty(n)
        s[list(perm)] = -np.arange(n)
        best = max(best, metric(y, s))
    return best


METRICS = {
    "ndcg@3": lambda y, s: ndcg_score(y, s, k=3),
    "dcg": lambda y, s: dcg_score(y, s),
    "err": lambda y, s: err_score(y, s, max_grade=4),
    "map": lambda y, s: average_precision_score((y >= 1).astype(int), s),
    "p@2": lambda y, s: precision_at_k((y >= 1).astype(int), s, k=2),
    "auc": lambda y, s: list_auc((y >= 1).astype(int), s),
}


@pytest.mark.parametrize("name", list(METRICS))
def test_regret_against_the_brute_force_best_ranking(grouped, name):
    _, y, qid, scores = grouped
    small = np.isin(qid, [q for q in np.unique(qid) if np.sum(qid == q) <= 5])
    y, qid, scores = y[small], qid[small], scores[small]
    mean, per_query = list_metric_regret(y, scores, qid, metric=name, max_grade=4)
    metric = METRICS[name]
    expected = np.array(
        [
            _brute_force_best(metric, y[qid == q])
            - metric(y[qid == q], scores[qid == q])
            for q in np.unique(qid)
        ]
    )
    np.testing.assert_allclose(per_query, expected, rtol=1e-10, atol=1e-12)
    assert mean == pytest.approx(expected.mean())
    assert np.all(per_query >= -1e-12)


def test_regret_of_a_loss_and_without_qid():
    y, s = np.array([2, 0, 1, 0]), np.array([0.1, 0.9, 0.4, 0.3])
    mean, per_query = list_metric_regret(y, s, metric="pd")
    assert mean == pytest.approx(pairwise_disagreement(y, s))
    assert per_query.shape == (1,)
    mean, _ = list_metric_regret(y, s, metric="auc")
    assert mean == pytest.approx(1 - 0.25)  # positives at ranks 3, 2 of 4
    mean, _ = list_metric_regret(y, s, metric="pauc@0.5")
    assert mean > 0


def test_ndcg_regret_is_one_minus_ndcg_and_zero_on_empty_queries(grouped):
    _, y, qid, scores = grouped
    _, per_query = list_metric_regret(y, scores, qid, metric="ndcg")
    _, ndcg = ndcg_score(y, scores, qid=qid, return_per_query=True)
    has_relevant = np.array([y[qid == q].max() > 0 for q in np.unique(qid)])
    assert (~has_relevant).any()
    np.testing.assert_allclose(per_query[has_relevant], 1 - ndcg[has_relevant])
    np.testing.assert_array_equal(per_query[~has_relevant], 0.0)
    mean, per_skip = list_metric_regret(y, scores, qid, metric="ndcg", empty="skip")
    assert np.isnan(per_skip[~has_relevant]).all()
    assert mean == pytest.approx(np.mean(1 - ndcg[has_relevant]))


@pytest.mark.parametrize(
    ("loss", "metric"),
    [
        ("slam", "ndcg"),
        ("slam_map", "map"),
        ("squared_ndcg", "ndcg"),
        ("pairwise_logistic", "ndcg"),
        ("squared", None),
        ("ranknet", None),
        ("ranksvm", None),
        ("listnet", None),
        (PointwiseSquared().instance("ndcg", k=4), "ndcg@4"),
        (PairwiseLogistic().instance("dcg"), "dcg"),
        (PairwiseLogistic().instance("auc"), "auc"),
        (PointwiseSquared().instance("recall"), None),
    ],
    ids=repr,
)
def test_metric_inferred_from_the_loss(loss, metric):
    y = np.array([1, 0, 0, 1, 1, 0])
    s = np.array([0.2, 0.5, 0.1, 0.4, 0.3, 0.0])
    result = surrogate_risk_from_scores(y, s, [1, 1, 1, 2, 2, 2], loss=loss)
    assert result.metric == metric
    assert (result.regret is None) == (metric is None)


def test_explicit_metric_and_none(grouped):
    _, y, qid, scores = grouped
    result = surrogate_risk_from_scores(
        y, scores, qid, loss="ranknet", metric="err@3", max_grade=4
    )
    expected, _ = list_metric_regret(y, scores, qid, metric="err@3", max_grade=4)
    assert result.metric == "err@3" and result.regret == expected
    result = surrogate_risk_from_scores(y, scores, qid, loss="slam", metric=None)
    assert result.metric is None and result.per_query_regret is None


def _fixed_size(n_queries, m, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, size=n_queries * m)
    y[:m] = 0  # an all-irrelevant list
    scores = rng.normal(size=n_queries * m)
    qid = np.repeat(np.arange(n_queries), m)
    perm = rng.permutation(y.shape[0])
    return y[perm], scores[perm], qid[perm]


@pytest.mark.parametrize(
    ("loss", "binary", "metric"),
    [
        (DCGSurrogate(n_items=4, k=2), False, "ndcg@2"),
        (DCGSurrogate(n_items=4, normalize=False), False, "dcg"),
        (ERUSurrogate(n_items=4), False, "eru"),
        (PrecisionAtQSurrogate(n_items=4, q=2), True, "p@2"),
        (MAPScoreSurrogate(n_items=4), True, "map"),
    ],
    ids=repr,
)
def test_score_based_least_squares_surrogates(loss, binary, metric):
    y, scores, qid = _fixed_size(6, 4, 0)
    if binary:
        y = (y >= 1).astype(int)
    result = surrogate_risk_from_scores(y, scores, qid, loss=loss)
    expected = [loss.value(scores[qid == q], y[qid == q]) for q in range(6)]
    np.testing.assert_allclose(result.per_query, expected, rtol=1e-12)
    assert result.metric == metric
    assert np.all(result.per_query_regret >= -1e-12)


def test_fixed_size_surrogate_errors():
    y, scores, qid = _fixed_size(3, 4, 1)
    with pytest.raises(ValueError, match="scores lists of exactly 5 items"):
        surrogate_risk_from_scores(y, scores, qid, loss=DCGSurrogate(n_items=5))
    binary = (y >= 1).astype(int)
    with pytest.raises(ValueError, match="not one score per item"):
        surrogate_risk_from_scores(binary, scores, qid, loss=MAPSurrogate(n_items=4))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"loss": "hinge"}, "loss must be one of"),
        ({"loss": 3}, "loss must be a loss name"),
        ({"loss": "slam", "metric": len}, "metric must be 'auto', None or a metric"),
        ({"loss": "slam", "metric": "foo"}, "unknown metric"),
    ],
)
def test_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        surrogate_risk_from_scores([1, 0, 2], [0.1, 0.2, 0.3], [1, 1, 2], **kwargs)


def test_input_errors():
    with pytest.raises(ValueError, match="the scores have 2 elements but y has 3"):
        surrogate_risk_from_scores([1, 0, 2], [0.1, 0.2], loss="slam")
    with pytest.raises(ValueError, match="scores must be one-dimensional"):
        surrogate_risk_from_scores([1, 0], [[0.1, 0.2]], loss="slam")
    with pytest.raises(ValueError, match="metric must be a metric name"):
        list_metric_regret([1, 0], [0.1, 0.2], metric=len)
