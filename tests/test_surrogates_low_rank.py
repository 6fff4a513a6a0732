"""Low-rank least-squares surrogates (Ramaswamy et al. 2013) and their decoders."""

import itertools
from fractions import Fraction as F

import numpy as np
import pytest
from numpy.testing import assert_allclose

from treerank.metrics import (
    average_precision_score,
    dcg_score,
    expected_rank_utility,
    ndcg_score,
    pairwise_disagreement,
    precision_at_k,
)
from treerank.surrogates import (
    DCGSurrogate,
    ERUSurrogate,
    MAPScoreSurrogate,
    MAPSurrogate,
    PDScoreSurrogate,
    PDSurrogate,
    PrecisionAtQSurrogate,
    diagonal_order_is_ap_optimal,
    expected_map_target,
    greedy_feedback_arc_decoder,
    majority_preferences_acyclic,
    preserves_majority_preferences,
)
from treerank.surrogates._decoders import all_rankings

M = 4
RANKINGS = np.array(all_rankings(M))


def _scores(ranking):
    s = np.empty(len(ranking))
    s[np.asarray(ranking)] = np.arange(len(ranking), 0, -1)
    return s


def _labels(n_grades, m=M):
    return np.array(list(itertools.product(range(n_grades), repeat=m)))


def _exact(row):
    return [F(int(v)) for v in row]


def _per_label(metric, labels, ranking, exact=False, **kwargs):
    """Metric of one ranking for every label vector (one query per label)."""
    n_labels, m = labels.shape
    y = labels.ravel()
    if exact:
        y = np.array(_exact(y), dtype=object)
    qid = np.repeat(np.arange(n_labels), m)
    scores = np.tile(_scores(ranking), n_labels)
    _, per_query = metric(y, scores, qid=qid, return_per_query=True, **kwargs)
    return per_query


# ---------------------------------------------------------------------------
# each decomposition reproduces its target loss (all labels, all rankings, m = 4)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("q", [1, 2, 4])
def test_precision_at_q_decomposition_is_exact(q):
    sur = PrecisionAtQSurrogate(M, q=q)
    labels = _labels(2)
    L = sur.loss_matrix(RANKINGS, labels, exact=True)
    for a, ranking in enumerate(RANKINGS):
        precision = _per_label(precision_at_k, labels, ranking, exact=True, k=q)
        assert all(isinstance(v, F) for v in precision)
        assert np.all(L[a] == 1 - precision)


@pytest.mark.parametrize("half_life", [2, 3.5])
def test_eru_decomposition(half_life):
    sur = ERUSurrogate(M, neutral=1, half_life=half_life, max_grade=3)
    labels = _labels(4)
    L = sur.loss_matrix(RANKINGS, labels)
    for a, ranking in enumerate(RANKINGS):
        eru = _per_label(
            expected_rank_utility, labels, ranking, neutral=1, half_life=half_life
        )
        assert_allclose(L[a], sur.offset - eru, atol=1e-12)
    assert L.min() >= -1e-12  # z keeps the loss non-negative
    assert L.min() == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("k", [None, 2])
@pytest.mark.parametrize("normalize", [True, False])
def test_dcg_decomposition(k, normalize):
    sur = DCGSurrogate(M, k=k, normalize=normalize)
    labels = _labels(3)
    L = sur.loss_matrix(RANKINGS, labels)
    for a, ranking in enumerate(RANKINGS):
        if normalize:
            expected = 1 - _per_label(ndcg_score, labels, ranking, k=k)
        else:
            expected = -_per_label(dcg_score, labels, ranking, k=k)
        assert_allclose(L[a], expected, atol=1e-12)


def test_map_decomposition_is_exact():
    sur = MAPSurrogate(M)
    labels = _labels(2)
    L = sur.loss_matrix(RANKINGS, labels, exact=True)
    for a, ranking in enumerate(RANKINGS):
        ap = _per_label(average_precision_score, labels, ranking, exact=True)
        assert all(isinstance(v, F) for v in ap)
        assert np.all(L[a] == 1 - ap)
    # dimension r (r + 1) / 2 and the symmetric matrix form
    assert sur.dim == 10
    u = sur.target([1, 1, 0, 1])
    assert_allclose(sur.to_matrix(u), np.outer([1, 1, 0, 1], [1, 1, 0, 1]) / 3)


def _random_preferences(rng, m=M, exact=False):
    y = np.zeros((m, m), dtype=object if exact else float)
    for i, j in itertools.combinations(range(m), 2):
        weight = int(rng.integers(0, 4))
        if rng.random() < 0.5:
            i, j = j, i
        y[i, j] = F(weight) if exact else float(weight)
    if exact:
        y[y == 0] = F(0)
    return y


def test_pd_decomposition_is_exact(rng):
    sur = PDSurrogate(M)
    for _ in range(20):
        y = _random_preferences(rng, exact=True)
        L = sur.loss_matrix(RANKINGS, y, exact=True)[:, 0]
        for ranking, value in zip(RANKINGS, L):
            expected = pairwise_disagreement(y, _scores(ranking), normalize=False)
            assert value == expected


# ---------------------------------------------------------------------------
# decoders: exact (calibrated everywhere) and efficient (on their noise sets)
# ---------------------------------------------------------------------------


def _random_distribution(rng, labels, n_support=4):
    idx = rng.choice(len(labels), size=n_support, replace=False)
    p = rng.dirichlet(np.ones(n_support))
    return labels[idx], p


def _is_optimal(sur, labels, p, ranking, tol=1e-10):
    risks = sur.loss_matrix(RANKINGS, labels) @ p
    mine = sur.loss_matrix(np.asarray(ranking)[None], labels)[0] @ p
    return mine <= risks.min() + tol


@pytest.mark.parametrize(
    ("sur", "n_grades"),
    [
        (PrecisionAtQSurrogate(M, q=1), 2),
        (PrecisionAtQSurrogate(M, q=2), 2),
        (ERUSurrogate(M, neutral=1, half_life=3), 4),
        (DCGSurrogate(M), 3),
        (DCGSurrogate(M, k=2), 3),
        (MAPSurrogate(M), 2),
    ],
)
def test_decoders_are_bayes_optimal_for_every_distribution(sur, n_grades, rng):
    labels = _labels(n_grades)
    for _ in range(150):
        support, p = _random_distribution(rng, labels)
        g_star = p @ sur.target(support)
        assert _is_optimal(sur, support, p, sur.decode(g_star))
        # the brute-force decoder attains the same expected loss
        assert _is_optimal(sur, support, p, sur.decode_exact(g_star))


def test_map_diagonal_decoder_on_p_reinforce(rng):
    labels = _labels(2)
    sur = MAPSurrogate(M, decoder="diagonal")
    inside = outside = failures_outside = 0
    for _ in range(400):
        idx = rng.choice(len(labels), size=3, replace=False)
        weights = rng.integers(1, 6, size=3)
        dist = [
            (_exact(labels[i]), F(int(w), int(weights.sum())))
            for i, w in zip(idx, weights)
        ]
        u = expected_map_target(dist)  # exact
        p = np.array([float(q) for _, q in dist])
        support = labels[idx]
        g_star = p @ sur.target(support)
        assert_allclose(sur.to_matrix(g_star), u.astype(float), atol=1e-12)
        ranking = sur.decode(g_star)
        if diagonal_order_is_ap_optimal(u):
            inside += 1
            assert _is_optimal(sur, support, p, ranking)
        else:
            outside += 1
            failures_outside += not _is_optimal(sur, support, p, ranking)
        # the score-based surrogate (target y / |y|) decodes like the diagonal
        score = MAPScoreSurrogate(M)
        assert_allclose(p @ score.target(support), np.diag(sur.to_matrix(g_star)))
    assert inside > 50 and outside > 50
    assert failures_outside > 0  # outside P_reinforce sorting the diagonal can fail


def test_pd_greedy_decoder_on_p_dag(rng):
    sur = PDSurrogate(M, decoder="greedy")
    exact = PDSurrogate(M)
    checked = 0
    for _ in range(150):
        ys = [_random_preferences(rng) for _ in range(3)]
        p = rng.dirichlet(np.ones(3))
        support = np.stack(ys)
        g_star = p @ sur.target(support)
        expected = sum(q * y for q, y in zip(p, ys))
        assert_allclose(sur.to_matrix(g_star), expected)
        assert _is_optimal(exact, support, p, exact.decode(g_star))
        if majority_preferences_acyclic(expected):
            checked += 1
            assert _is_optimal(exact, support, p, sur.decode(g_star))
            # on P_DAG the optimum is the sum over pairs of min(E y_ij, E y_ji)
            optimum = np.sum(np.minimum(expected, expected.T)) / 2
            risk = exact.loss_matrix(sur.decode(g_star)[None], support)[0] @ p
            assert risk == pytest.approx(optimum)
    assert checked > 20


def test_pd_score_surrogate_on_p_f(rng):
    sur = PDScoreSurrogate(M)
    exact = PDSurrogate(M)
    checked = 0
    for _ in range(150):
        ys = [_random_preferences(rng) for _ in range(3)]
        p = rng.dirichlet(np.ones(3))
        dist = list(zip(ys, p))

        def net(y):
            return y.sum(axis=1) - y.sum(axis=0)

        g_star = p @ sur.target(np.stack(ys))
        assert_allclose(g_star, sum(q * net(y) for y, q in dist))
        if preserves_majority_preferences(dist, net):
            checked += 1
            assert _is_optimal(exact, np.stack(ys), p, sur.decode(g_star))
    assert checked > 10


def test_greedy_decoder_breaks_cycles_deterministically():
    # 0 > 1 (3), 1 > 2 (2), 2 > 0 (1): the lightest edge 2 -> 0 is deleted
    w = np.zeros((3, 3))
    w[0, 1], w[1, 2], w[2, 0] = 3, 2, 1
    assert greedy_feedback_arc_decoder(w).tolist() == [0, 1, 2]
    # no preference at all: the lexicographic order
    assert greedy_feedback_arc_decoder(np.zeros((3, 3))).tolist() == [0, 1, 2]


# ---------------------------------------------------------------------------
# constants, surrogate values, errors
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sur",
    [
        PrecisionAtQSurrogate(M, q=2),
        ERUSurrogate(M, half_life=3, max_grade=2),
        DCGSurrogate(M),
        DCGSurrogate(M, k=2),
        MAPSurrogate(M),
        PDSurrogate(M),
    ],
)
def test_output_norm_by_enumeration(sur):
    F_all = sur.output_embedding(RANKINGS)
    assert np.linalg.norm(F_all, axis=1).max() == pytest.approx(sur.F_norm)


def test_u_max_by_enumeration():
    assert np.abs(MAPSurrogate(M).target(_labels(2))).max() == pytest.approx(1.0)
    assert np.abs(DCGSurrogate(M).target(_labels(4))).max() == pytest.approx(1.0)
    assert PrecisionAtQSurrogate(M, q=2).U_max == 1.0
    sur = ERUSurrogate(M, neutral=1, half_life=3, max_grade=3)
    assert np.abs(sur.target(_labels(4))).max() == pytest.approx(sur.U_max)


def test_surrogate_value_and_gradient(rng):
    sur = MAPSurrogate(M)
    y = np.array([1, 0, 1, 1])
    u = rng.normal(size=sur.dim)
    target = sur.target(y)
    assert sur.value(u, y) == pytest.approx(np.sum((u - target) ** 2))
    assert_allclose(sur.grad(u, y), 2 * (u - target))
    batch = np.stack([y, 1 - y])
    U = rng.normal(size=(2, sur.dim))
    assert sur.value(U, batch) == pytest.approx(
        sur.value(U[0], y) + sur.value(U[1], 1 - y)
    )


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: MAPSurrogate(9).decode(np.zeros(45)), "at most 8 items"),
        (lambda: PDSurrogate(9).decode(np.zeros(72)), "at most 8 items"),
        (lambda: PrecisionAtQSurrogate(3, q=4), "q must be <="),
        (lambda: ERUSurrogate(3, half_life=1), "half_life must be a number > 1"),
        (lambda: MAPSurrogate(3).target([2, 0, 1]), "binary"),
        (lambda: PDSurrogate(2).target([[0, 1], [1, 0]]), "DAG"),
        (lambda: PDSurrogate(2).target([[1, 0], [0, 0]]), "zero diagonal"),
        (lambda: DCGSurrogate(3).loss([0, 0, 1], [1, 0, 0]), "permutations"),
        (lambda: DCGSurrogate(3).decode(np.zeros(4)), "theta must have shape"),
        (lambda: DCGSurrogate(3).loss([0, 1, 2], [1, 0, 0], exact=True), "exact=True"),
        (lambda: MAPSurrogate(3, decoder="greedy"), "decoder must be"),
    ],
)
def test_invalid(call, match):
    with pytest.raises(ValueError, match=match):
        call()
