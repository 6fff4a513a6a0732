"""Online SLAM perceptron (Chaudhuri & Tewari): per-round and cumulative bounds."""

import itertools

import numpy as np
import pytest
from numpy.testing import assert_allclose

from treerank.metrics import average_precision_score, ndcg_score
from treerank.surrogates import (
    OnlineListwisePerceptron,
    SLAMSurrogate,
    slam_weight_ratio,
    slam_weight_ratio_bound,
    slam_weights,
)

D, M = 5, 10


def _stream(seed, measure, n_rounds, gamma, noise=0.0):
    """Synthetic stream of the reference notes (section 3.4): unit documents,
    grades = thresholds below u*.x, margin gamma between grades."""
    rng = np.random.default_rng(seed)
    u_star = rng.normal(size=D)
    u_star /= np.linalg.norm(u_star)
    n_grades = 2 if measure == "map" else 4
    thresholds = (
        np.linspace(-0.5, 0.5, n_grades - 1) if n_grades > 2 else np.array([0.0])
    )
    queries = []
    while len(queries) < n_rounds:
        X = rng.normal(size=(4 * M, D))
        X /= np.linalg.norm(X, axis=1, keepdims=True)
        proj = X @ u_star
        keep = np.all(np.abs(proj[:, None] - thresholds[None, :]) >= gamma / 2, axis=1)
        X, proj = X[keep][:M], proj[keep][:M]
        if X.shape[0] < M:
            continue
        y = np.sum(proj[:, None] > thresholds[None, :], axis=1).astype(float)
        if measure == "map" and not 0 < y.sum() < M:
            continue
        if noise and rng.random() < noise:
            i, j = rng.choice(M, size=2, replace=False)
            y[[i, j]] = y[[j, i]]
        queries.append((X, y))
    return queries, u_star


def _learner(measure, **kwargs):
    params = {"measure": measure, "feature_bound": 1.0, "max_items": M}
    if measure != "map":
        params["max_grade"] = 3
    if measure == "ndcg@k":
        params["k"] = 3
    params.update(kwargs)
    return OnlineListwisePerceptron(**params)


def _play(learner, queries):
    predictions = []
    for X, y in queries:
        if hasattr(learner, "coef_"):
            predictions.append(np.argsort(-learner.decision_function(X), kind="stable"))
        else:
            predictions.append(np.arange(len(y)))
        learner.partial_fit(X, y)
    return predictions


@pytest.mark.parametrize("measure", ["ndcg", "map", "ndcg@k"])
def test_per_round_inequalities_and_regret(measure):
    queries, u_star = _stream(0, measure, 300, gamma=0.05, noise=0.2)
    learner = _learner(measure)
    _play(learner, queries)
    m = 3 if measure == "ndcg@k" else M
    losses = np.array(learner.round_losses_)
    surrogates = np.array(learner.round_surrogates_)
    sq = np.array(learner.round_grad_sq_norms_)
    vmax = np.array(learner.round_vmax_)
    updated = np.array(learner.round_updated_)
    assert learner.n_updates_ == updated.sum() > 0
    # the SLAM loss upper-bounds the measure loss at every update round
    assert np.all(surrogates[updated] >= losses[updated] - 1e-12)
    assert np.all(losses[~updated] == 0)
    # Proposition 4: ||z_t||^2 <= 4 m R_X^2 v_max^t f_t(w_t)
    assert np.all(sq <= 4 * m * 1.0 * vmax * surrogates + 1e-12)
    assert np.all(vmax <= learner.v_max_ + 1e-9)
    # online-gradient regret inequality (15), for several comparators
    rng = np.random.default_rng(1)
    for u in (np.zeros(D), u_star / 0.05, rng.normal(size=D) * 5):
        sum_f_u = learner.comparator_surrogate_sum(u, queries)
        assert learner.cumulative_surrogate_ - sum_f_u <= learner.regret_bound(u) + 1e-9
        # Theorem 5 / Corollary 7 (eq. 17 / 19) with the theory step size
        assert learner.cumulative_loss_ <= learner.loss_bound(u, sum_f_u) + 1e-9
    assert learner.cumulative_loss_ == pytest.approx(losses.sum())


@pytest.mark.parametrize("measure", ["ndcg", "map"])
def test_separable_stream_margin_bound(measure):
    gamma = 0.1
    queries, u_star = _stream(2, measure, 400, gamma=gamma)
    learner = _learner(measure)
    _play(learner, queries)
    # u*/gamma has zero SLAM loss on every round (margin gamma between grades)
    assert learner.comparator_surrogate_sum(u_star / gamma, queries) == 0.0
    assert learner.cumulative_loss_ <= learner.margin_bound(gamma)
    assert learner.margin_bound(gamma) == pytest.approx(
        4 * M * learner.v_max_ / gamma**2
    )


def test_tiny_step_sizes_give_identical_predictions():
    queries, _ = _stream(3, "ndcg", 200, gamma=0.05, noise=0.2)
    base = _learner("ndcg", max_items=M)
    base.partial_fit(*queries[0])
    theory = base.learning_rate_
    runs = []
    for eta in (theory / 10, theory / 1000):
        learner = _learner("ndcg", learning_rate=eta)
        runs.append((_play(learner, queries), learner))
    (pred_a, a), (pred_b, b) = runs
    assert all(np.array_equal(p, q) for p, q in zip(pred_a, pred_b))
    assert a.round_losses_ == b.round_losses_
    assert_allclose(
        a.coef_ / np.linalg.norm(a.coef_), b.coef_ / np.linalg.norm(b.coef_)
    )


def test_step_size_one_is_not_scale_free():
    # the paper's claim "predictions do not depend on eta" fails (reference notes)
    queries, _ = _stream(4, "ndcg", 400, gamma=0.05, noise=0.2)
    literal = _learner("ndcg", learning_rate=1.0)
    tiny = _learner("ndcg", learning_rate=1e-4)
    _play(literal, queries)
    _play(tiny, queries)
    assert literal.round_losses_ != tiny.round_losses_


def test_theory_step_size_value():
    learner = _learner("map").partial_fit(np.eye(3)[:2], [1, 0])
    assert learner.v_max_ == M / 2
    assert learner.learning_rate_ == pytest.approx(1 / (4 * M * 1.0 * (M / 2)))
    learner = _learner("ndcg@k", feature_bound=2.0).partial_fit(np.eye(3)[:2], [1, 0])
    assert learner.v_max_ == pytest.approx(7 * 2.0)  # (G_max / G(1)) log2(k + 1)
    assert learner.learning_rate_ == pytest.approx(1 / (4 * 3 * 4.0 * 14.0))


@pytest.mark.parametrize("m", [2, 3, 4, 5, 6])
def test_default_vmax_bounds_every_label_vector(m):
    labels = np.array(list(itertools.product(range(4), repeat=m)), float)
    v = slam_weights(labels)
    assert (
        np.max(slam_weight_ratio(v))
        <= slam_weight_ratio_bound("ndcg", m, max_grade=3) + 1e-9
    )
    vk = slam_weights(labels, weights="ndcg@k", k=2)
    assert (
        np.max(slam_weight_ratio(vk))
        <= slam_weight_ratio_bound("ndcg@k", m, k=2, max_grade=3) + 1e-9
    )
    binary = labels[np.all(labels <= 1, axis=1)]
    vm = slam_weights(binary, weights="map")
    assert np.max(slam_weight_ratio(vm)) <= slam_weight_ratio_bound("map", m) + 1e-9


def test_fit_equals_partial_fit_loop():
    queries, _ = _stream(5, "map", 50, gamma=0.05, noise=0.2)
    X = np.vstack([q[0] for q in queries])
    y = np.concatenate([q[1] for q in queries])
    qid = np.repeat(np.arange(len(queries)) * 3 + 1, M)
    fitted = _learner("map").fit(X, y, qid=qid)
    online = _learner("map")
    _play(online, queries)
    assert_allclose(fitted.coef_, online.coef_)
    assert fitted.round_losses_ == online.round_losses_
    # refitting starts from scratch
    assert_allclose(fitted.fit(X, y, qid=qid).coef_, online.coef_)


def test_measure_loss_uses_the_metric_layer():
    queries, _ = _stream(6, "ndcg", 5, gamma=0.05)
    learner = _learner("ndcg")
    for X, y in queries:
        s = learner.decision_function(X) if hasattr(learner, "coef_") else np.zeros(M)
        expected = 1 - ndcg_score(y, s, ties="stable")
        learner.partial_fit(X, y)
        assert learner.round_losses_[-1] == pytest.approx(max(expected, 0.0))
        if learner.round_updated_[-1]:
            assert learner.round_surrogates_[-1] == pytest.approx(
                SLAMSurrogate().value(s, y)
            )
    learner = _learner("map")
    X, y = _stream(7, "map", 1, gamma=0.05)[0][0]
    learner.partial_fit(X, y)
    assert learner.round_losses_[0] == pytest.approx(
        1 - average_precision_score(y.astype(int), np.zeros(M), ties="stable")
    )


@pytest.mark.parametrize(
    ("params", "X", "y", "match"),
    [
        (
            {"learning_rate": "theory", "feature_bound": None},
            np.eye(2),
            [1, 0],
            "feature_bound",
        ),
        ({"max_items": 1}, np.eye(2) * 0.5, [1, 0], "max_items=1"),
        ({"feature_bound": 0.5}, np.eye(2), [1, 0], "feature_bound = 0.5"),
        ({"v_max": 1.0, "max_items": 5}, np.eye(5) * 0.5, [1, 1, 1, 1, 0], "v_max"),
        ({"learning_rate": -1.0}, np.eye(2), [1, 0], "learning_rate"),
        ({}, np.eye(2), [2, 0], "binary"),
    ],
)
def test_invalid(params, X, y, match):
    learner = _learner("map", **params)
    with pytest.raises(ValueError, match=match):
        learner.partial_fit(X, y)


def test_invalid_measure():
    with pytest.raises(ValueError, match="measure must be"):
        OnlineListwisePerceptron(measure="err").partial_fit(np.eye(2), [1, 0])


def test_fit_requires_qid():
    with pytest.raises(ValueError, match="qid is required"):
        _learner("map").fit(np.eye(3), [1, 0, 0])
