"""Calibration toolkit and the fixtures of the reference notes (seeds 000-001)."""

import itertools
import math
from fractions import Fraction as F

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import minimize

from treerank.metrics import (
    PositionalMetric,
    average_precision_score,
    err_score,
)
from treerank.surrogates import (
    BregmanLoss,
    PairwiseComparisonLoss,
    PairwiseExponential,
    PairwiseLogistic,
    PairwiseSquared,
    PointwiseDifferentiableHinge,
    PointwiseExponential,
    PointwiseLogistic,
    PointwiseSquared,
    PointwiseSquaredHinge,
    bayes_optimal_rankings,
    calibration_gap,
    expected_metric,
    expected_metric_of_scores,
    expected_preferences,
    majority_preferences_acyclic,
    metric_regret,
    minimize_inner_risk,
    order_preserving_margin,
    preserves_majority_preferences,
    regret_bound,
    weight_gap_norm,
)


def _scores(ranking):
    """Scores that rank the items in the given order (best first)."""
    ranking = np.asarray(ranking)
    s = np.empty(ranking.size)
    s[ranking] = np.arange(ranking.size, 0, -1)
    return s


def _vector(bits):
    return [F(int(b)) for b in bits]


def average_precision(y, ranking):
    """AP of a ranking, through the metric layer (exact for Fraction labels)."""
    return average_precision_score(list(y), _scores(ranking), ties="stable")


def _err(max_grade):
    def err(y, ranking):
        return err_score(list(y), _scores(ranking), max_grade=max_grade, ties="stable")

    return err


def _ranking(text):
    """'312' -> (2, 0, 1): the notes number items from 1."""
    return tuple(int(c) - 1 for c in text)


# ---------------------------------------------------------------------------
# fixture F: the RankNet-style loss is not DCG-calibrated, the OP form is
# ---------------------------------------------------------------------------

FIXTURE_F = [
    (_vector("0010"), F(7, 33)),
    (_vector("1000"), F(9, 33)),
    (_vector("0110"), F(10, 33)),
    (_vector("0011"), F(3, 33)),
    (_vector("1101"), F(4, 33)),
]


def test_fixture_f_pair_probabilities():
    a = PairwiseComparisonLoss().pair_probabilities(FIXTURE_F) * 33
    expected = [[0, 9, 13, 9], [10, 0, 4, 10], [20, 10, 0, 17], [3, 3, 4, 0]]
    assert_allclose(a, expected, atol=1e-12)


def test_fixture_f_ranknet_is_not_dcg_calibrated():
    dcg = PositionalMetric.dcg(4)
    best, rankings = bayes_optimal_rankings(dcg, FIXTURE_F)
    assert rankings == [_ranking("3214")]
    assert float(best) == pytest.approx(1.162053, abs=1e-6)

    s_star = minimize_inner_risk(PairwiseComparisonLoss(phi="logistic"), FIXTURE_F)
    assert_allclose(s_star - s_star[3], [1.078155, 1.036394, 1.592483, 0], atol=2e-6)
    decoded = tuple(np.argsort(-s_star))
    assert decoded == _ranking("3124")
    assert float(expected_metric(dcg, FIXTURE_F, decoded)) == pytest.approx(
        1.158086, abs=1e-6
    )
    gap = calibration_gap(PairwiseComparisonLoss(phi="logistic"), dcg, FIXTURE_F)
    assert float(gap) == pytest.approx((1 / math.log2(3) - 0.5) / 33, abs=1e-9)
    assert float(gap) == pytest.approx(0.003967, abs=1e-6)


def test_fixture_f_order_preserving_form_is_calibrated():
    dcg = PositionalMetric.dcg(4)
    loss = PairwiseLogistic().instance("dcg")
    s_star = minimize_inner_risk(loss, FIXTURE_F)
    # minimizer log E[y] + const, relative to item 4
    assert_allclose(
        s_star - s_star[3], [*np.log(np.array([13, 14, 20]) / 7).tolist(), 0]
    )
    assert_allclose(s_star - s_star[3], [0.61904, 0.69315, 1.04982, 0], atol=1e-5)
    # the numerical minimizer of the exact inner risk agrees
    s_num = minimize_inner_risk(loss, FIXTURE_F, method="numerical")
    assert_allclose(s_num - s_num[3], s_star - s_star[3], atol=1e-5)
    assert calibration_gap(loss, dcg, FIXTURE_F) == 0


# ---------------------------------------------------------------------------
# fixtures A, D, E: regressing any transform of the labels is not AP/ERR-optimal
# ---------------------------------------------------------------------------

FIXTURE_A = [
    (_vector("001"), F(3, 10)),
    (_vector("011"), F(3, 10)),
    (_vector("110"), F(2, 5)),
]


def test_fixture_a_expected_ap_table():
    table = {
        "123": F(27, 40),
        "132": F(79, 120),
        "213": F(3, 4),
        "231": F(47, 60),
        "312": F(47, 60),
        "321": F(5, 6),
    }
    for text, value in table.items():
        assert expected_metric(average_precision, FIXTURE_A, _ranking(text)) == value
    assert bayes_optimal_rankings(average_precision, FIXTURE_A) == (
        F(5, 6),
        [_ranking("321")],
    )


def test_fixture_a_relevance_regression_is_not_ap_optimal():
    loss = PointwiseSquared().instance("identity")
    s_star = minimize_inner_risk(loss, FIXTURE_A)
    assert_allclose(s_star, [2 / 5, 7 / 10, 3 / 5])
    assert tuple(np.argsort(-s_star)) == _ranking("231")
    assert calibration_gap(loss, average_precision, FIXTURE_A) == F(1, 20)
    # the exponential-gain utility decodes the same way (binary labels)
    dcg_loss = PointwiseSquared().instance("dcg")
    assert calibration_gap(dcg_loss, average_precision, FIXTURE_A) == F(1, 20)


def test_fixture_d_err_binary():
    dist = [
        (_vector("001"), F(1, 6)),
        (_vector("010"), F(1, 3)),
        (_vector("101"), F(1, 2)),
    ]
    err = _err(1)
    assert bayes_optimal_rankings(err, dist) == (F(11, 24), [_ranking("321")])
    assert expected_metric(err, dist, _ranking("312")) == F(65, 144)
    gap = calibration_gap(PointwiseSquared().instance("identity"), err, dist)
    assert gap == F(1, 144)


def test_fixture_e_err_graded():
    dist = [([F(0), F(1), F(2)], F(1, 4)), ([F(2), F(1), F(0)], F(3, 4))]
    err = _err(2)
    assert bayes_optimal_rankings(err, dist) == (F(65, 96), [_ranking("132")])
    table = {
        "123": F(85, 128),
        "213": F(65, 128),
        "231": F(59, 128),
        "312": F(47, 96),
        "321": F(55, 128),
    }
    for text, value in table.items():
        assert expected_metric(err, dist, _ranking(text)) == value
    for utility in ("identity", "dcg"):
        loss = PointwiseSquared().instance(utility)
        assert tuple(np.argsort(-minimize_inner_risk(loss, dist))) == _ranking("123")
        assert calibration_gap(loss, err, dist) == F(5, 384)


# ---------------------------------------------------------------------------
# quantitative regret bounds ([P1] section 5; reference notes section 4)
# ---------------------------------------------------------------------------


def _utility_metric(phi):
    """The positional metric with u(y) = y: a template loss's target is U itself."""
    return PositionalMetric(phi, lambda y: np.asarray(y))


DCG3 = PositionalMetric.dcg(3)


@pytest.mark.parametrize(
    ("s", "value", "perf", "sur", "bound"),
    [
        ((1, 1.5, 0), 2.892789, 0.738140, 4.25, 1.457738),
        ((2, 2, 0), 3.261860, 0.369070, 2.0, 1.0),
        ((0, 0, 0), 2.841240, 0.789690, 10.0, 2.236068),
    ],
)
def test_worked_regret_table(s, value, perf, sur, bound):
    dist = [([F(2), F(1), F(0)], F(1))]  # U = 2^y - 1 = (3, 1, 0)
    loss = PointwiseSquared().instance("dcg")
    U = loss.expected_utility(dist)
    assert_allclose(U, [3, 1, 0])
    assert DCG3.weight_gap_norm(2) == pytest.approx(0.5)
    assert float(bayes_optimal_rankings(DCG3, dist)[0]) == pytest.approx(
        3.630930, abs=1e-6
    )
    assert float(expected_metric_of_scores(DCG3, dist, s)) == pytest.approx(
        value, abs=1e-6
    )
    assert float(metric_regret(DCG3, dist, s)) == pytest.approx(perf, abs=1e-6)
    assert loss.inner_regret(s, U) == pytest.approx(sur)
    assert regret_bound(loss, DCG3, sur) == pytest.approx(bound, abs=1e-6)
    # Theorem 3.2: a misordered s has regret >= min phi gap * min U gap / n!
    assert float(metric_regret(DCG3, dist, s)) >= 0.130930 * 1 / 6 - 1e-6


def test_worked_regret_pairwise_squared():
    U = np.array([3.0, 1.0, 0.0])
    loss = PairwiseSquared()
    assert loss.inner_regret([1, 1.5, 0], U) == pytest.approx(10.5)
    assert regret_bound(loss, DCG3, 10.5) == pytest.approx(1.620185, abs=1e-6)


@pytest.mark.parametrize(
    ("n", "expected"),
    [(2, 0.369070), (3, 0.5), (4, 0.584185), (5, 0.645020), (10, 0.811622)],
)
def test_c_phi_dcg(n, expected):
    metric = PositionalMetric.dcg(n)
    assert metric.weight_gap_norm(2) == pytest.approx(expected, abs=1e-6)
    assert weight_gap_norm(metric.phi) == pytest.approx(expected, abs=1e-6)
    assert weight_gap_norm([1.0]) == 0.0


ETA = 1.0
BOUND_LOSSES = {
    "pointwise_squared": PointwiseSquared(),
    "pointwise_logistic": PointwiseLogistic(eta=ETA),
    "pointwise_exponential": PointwiseExponential(eta=ETA),
    "pointwise_squared_hinge": PointwiseSquaredHinge(eta=ETA, t=1.0),
    "pointwise_diff_hinge": PointwiseDifferentiableHinge(eta=ETA, alpha=0.3),
    "pairwise_squared": PairwiseSquared(),
    "pairwise_logistic": PairwiseLogistic(),
    "pairwise_exponential": PairwiseExponential(),
    "bregman_entropy": BregmanLoss(psi="entropy", link="exp", eta=ETA),
}


def _phis(n):
    dcg = 1 / np.log2(np.arange(2, n + 2))
    return {
        "dcg": dcg,
        "dcg@2": np.where(np.arange(n) < 2, dcg, 0.0),
        "p@2": np.where(np.arange(n) < 2, 0.5, 0.0),
        "linear": np.arange(n, 0, -1, dtype=float),
    }


def _ratio(loss, metric, U, s):
    """perf_regret / bound for a point mass at U (the bound only needs U)."""
    dist = [(U, 1.0)]
    perf = float(metric_regret(metric, dist, s))
    sur = loss.inner_regret(s, U)
    bound = regret_bound(loss, metric, sur, U=U)
    return perf, bound


@pytest.mark.parametrize("name", sorted(BOUND_LOSSES))
def test_regret_bound_on_random_problems(name, rng):
    loss = BOUND_LOSSES[name]
    for trial in range(60):
        n = int(rng.integers(2, 6))
        U = rng.uniform(0.02, ETA - 0.02, size=n)
        s_star = loss.argmin(U)
        kind = trial % 3
        if kind == 0:
            s = rng.normal(size=n) * 2
        elif kind == 1:  # perturbed minimizer, two entries swapped
            s = s_star + rng.normal(size=n) * 0.1
            i, j = rng.choice(n, size=2, replace=False)
            s[[i, j]] = s[[j, i]]
        else:  # a tie at the minimizer
            s = s_star.copy()
            i, j = rng.choice(n, size=2, replace=False)
            s[i] = s[j]
        for phi in _phis(n).values():
            perf, bound = _ratio(loss, _utility_metric(phi), U, s)
            assert perf <= bound * (1 + 1e-9) + 1e-12


@pytest.mark.parametrize("name", sorted(BOUND_LOSSES))
def test_regret_bound_with_label_distributions(name, rng):
    """Inner risks of genuine distributions: the regret only depends on U."""
    loss = BOUND_LOSSES[name]
    metric = PositionalMetric.dcg(4)
    for _ in range(10):
        labels = rng.integers(0, 2, size=(3, 4))
        p = rng.dirichlet(np.ones(3))
        dist = [(row, q) for row, q in zip(labels.astype(float), p)]
        U = p @ labels
        s = rng.normal(size=4)
        risk = loss.inner_risk(s, dist)
        s_star = minimize_inner_risk(loss, dist)
        finite = np.all(np.isfinite(s_star))
        if finite:  # the inner regret is the risk minus the minimal risk
            assert loss.inner_regret(s, U) == pytest.approx(
                risk - loss.inner_risk(s_star, dist), abs=1e-9
            )
        perf = float(metric_regret(metric, dist, s))
        assert perf <= regret_bound(loss, metric, loss.inner_regret(s, U), U=U) + 1e-12


def _adversarial_ratio(loss, metric, n, rng, n_starts):
    worst = 0.0

    def negative_ratio(x):
        U = np.clip(x[:n], 0.001, ETA - 0.001)
        perf, bound = _ratio(loss, metric, U, x[n:])
        return -perf / bound if bound > 1e-12 else 0.0

    for _ in range(n_starts):
        U = rng.uniform(0.05, ETA - 0.05, size=n)
        s = loss.argmin(U)
        i, j = rng.choice(n, size=2, replace=False)
        s[i] = s[j] = 0.5 * (s[i] + s[j])  # start at a tie: a misorder nearby
        res = minimize(
            negative_ratio,
            np.r_[U, s],
            method="Nelder-Mead",
            options={"maxiter": 600, "xatol": 1e-10, "fatol": 1e-12},
        )
        worst = max(worst, -res.fun)
    return worst


@pytest.mark.parametrize("name", ["pointwise_squared", "pairwise_squared"])
def test_adversarial_search_is_nearly_tight_and_never_above_one(name, rng):
    loss = BOUND_LOSSES[name]
    metric = _utility_metric([1.0, 0.0])  # n = 2: C_phi(2) = phi(1) - phi(2)
    worst = _adversarial_ratio(loss, metric, 2, rng, n_starts=4)
    assert worst <= 1 + 1e-9
    assert worst >= 0.95


def test_tightness_witness_pointwise_squared():
    # n = 2, s = ((a+b)/2 - e, (a+b)/2 + e): the ratio tends to 1
    a, b = 0.8, 0.3
    metric = _utility_metric([1.0, 0.0])
    U = np.array([a, b])
    for eps in (1e-2, 1e-4):
        s = np.array([(a + b) / 2 - eps, (a + b) / 2 + eps])
        perf, bound = _ratio(PointwiseSquared(), metric, U, s)
        assert 1 - 10 * eps / (a - b) <= perf / bound <= 1


# ---------------------------------------------------------------------------
# positive controls: OP losses with the metric's utility are calibrated
# ---------------------------------------------------------------------------


def _random_distribution(rng, n, n_support, labels):
    weights = rng.integers(1, 10, size=n_support)
    total = int(weights.sum())
    return [([F(int(v)) for v in labels(rng)], F(int(w), total)) for w in weights]


METRICS = {
    "dcg@3": (lambda n: PositionalMetric.dcg(n, k=3), 3),
    "ndcg@2": (lambda n: PositionalMetric.ndcg(n, k=2), 3),
    "p@2": (lambda n: PositionalMetric.precision_at_k(n, 2), 2),
    "r@2": (lambda n: PositionalMetric.recall_at_k(n, 2), 2),
    "auc": (lambda n: PositionalMetric.auc(n), 2),
    "spearman": (lambda n: PositionalMetric.spearman(n), None),
}

OP_LOSSES = {
    "pointwise_squared": lambda: PointwiseSquared(),
    "pointwise_logistic": lambda: PointwiseLogistic(eta=8.0),
    "pairwise_logistic": lambda: PairwiseLogistic(),
    "pairwise_squared": lambda: PairwiseSquared(),
    "bregman_entropy": lambda: BregmanLoss(psi="entropy", link="exp"),
}


@pytest.mark.parametrize("metric_name", sorted(METRICS))
@pytest.mark.parametrize("loss_name", sorted(OP_LOSSES))
def test_op_losses_with_the_metric_utility_are_calibrated(metric_name, loss_name, rng):
    factory, n_grades = METRICS[metric_name]
    n = 4
    metric = factory(n)
    if n_grades is None:  # Spearman: the labels are true ranks 1..n

        def labels(r):
            return r.permutation(n) + 1

    else:

        def labels(r):
            return r.integers(0, n_grades, size=n)

    loss = OP_LOSSES[loss_name]().instance(metric)
    for _ in range(6):
        dist = _random_distribution(rng, n, 3, labels)
        U = loss.expected_utility(dist)
        if loss_name == "pointwise_logistic" and U.max() >= 8.0:
            continue
        assert calibration_gap(loss, metric, dist) == 0


# ---------------------------------------------------------------------------
# toolkit details
# ---------------------------------------------------------------------------


def test_tie_averaging_is_exact():
    dist = [([F(1), F(0), F(0)], F(1, 3)), ([F(0), F(1), F(0)], F(2, 3))]
    metric = PositionalMetric.precision_at_k(3, 1)
    # items 0 and 1 tied on top: half of each
    assert expected_metric_of_scores(metric, dist, [1.0, 1.0, 0.0]) == F(1, 2)
    # infinite scores (unattained minimizers) sort correctly and tie together
    assert expected_metric_of_scores(metric, dist, [-np.inf, np.inf, -np.inf]) == F(
        2, 3
    )
    value = expected_metric_of_scores(
        metric, dist, [1.0, 1.0 + 1e-12, 0.0], tie_tol=1e-9
    )
    assert value == F(1, 2)


def test_bayes_optimal_rankings_agree_with_the_metric_layer(rng):
    metric = PositionalMetric.ndcg(5, k=3)
    for _ in range(5):
        dist = _random_distribution(rng, 5, 3, lambda r: r.integers(0, 3, size=5))
        _, brute = bayes_optimal_rankings(metric, dist)
        assert brute == metric.bayes_optimal_rankings(dist)
        # the generic (callable) path finds the same set
        _, generic = bayes_optimal_rankings(lambda y, r: metric.value(y, r), dist)
        assert generic == brute


def test_op_margin_is_positive_iff_order_matters():
    U = [2.0, 1.0, 1.0]
    for loss in (PointwiseSquared(), PairwiseLogistic(), PointwiseLogistic(eta=3.0)):
        assert order_preserving_margin(loss, U, 0, 1) > 1e-4
        assert order_preserving_margin(loss, U, 1, 2) == pytest.approx(0.0, abs=1e-7)
    # squared loss: inf over s_0 <= s_1 of (s-U)^2 is (U_0 - U_1)^2 / 2
    assert order_preserving_margin(PointwiseSquared(), U, 0, 1) == pytest.approx(
        0.5, abs=1e-6
    )


def test_noise_condition_p_dag_and_p_f():
    cycle = [[0, 1, 0], [0, 0, 1], [1, 0, 0]]
    assert not majority_preferences_acyclic(cycle)
    dist = [
        (np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]]), F(1, 2)),
        (np.array([[0, 0, 0], [0, 0, 0], [2, 0, 0]]), F(1, 2)),
    ]
    expected = expected_preferences(dist)
    assert expected[2, 0] == F(1) and expected[0, 1] == F(1, 2)
    assert not majority_preferences_acyclic(expected)  # 0 > 1 > 2 > 0

    def net(y):
        return y.sum(axis=1) - y.sum(axis=0)

    acyclic = [(dist[0][0], F(1))]
    assert majority_preferences_acyclic(expected_preferences(acyclic))
    assert preserves_majority_preferences(acyclic, net)
    assert not preserves_majority_preferences(acyclic, lambda y: -net(y))


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: bayes_optimal_rankings(DCG3, []), "empty"),
        (lambda: bayes_optimal_rankings(DCG3, [([1, 0, 0], 0.5)]), "sum to 1"),
        (lambda: bayes_optimal_rankings(DCG3, [([1, 0, 0], F(1, 2))]), "sum to 1"),
        (
            lambda: bayes_optimal_rankings(DCG3, [([1, 0], 0.5), ([1, 0, 0], 0.5)]),
            "shapes",
        ),
        (
            lambda: bayes_optimal_rankings(DCG3, [([1, 0, 0], -1.0), ([0, 0, 0], 2.0)]),
            ">= 0",
        ),
        (lambda: bayes_optimal_rankings("dcg", [([1, 0, 0], 1.0)]), "metric must be"),
        (lambda: bayes_optimal_rankings(DCG3, [(np.zeros(9), 1.0)]), "at most 8 items"),
        (
            lambda: minimize_inner_risk(PointwiseSquared(), [([1.0], 1.0)], method="x"),
            "method",
        ),
        (
            lambda: minimize_inner_risk(
                PairwiseComparisonLoss(), [([1.0, 0.0], 1.0)], method="closed_form"
            ),
            "no closed-form",
        ),
    ],
)
def test_invalid_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_all_rankings_enumerated_once():
    seen = set()
    dist = [([F(1), F(0), F(0), F(0)], F(1))]
    _, best = bayes_optimal_rankings(lambda y, r: F(0), dist)
    for r in best:
        seen.add(r)
    assert seen == set(itertools.permutations(range(4)))


@pytest.mark.parametrize(
    "distribution",
    [
        # a NaN probability of a type other than float: the surrogates' own
        # check let it through (the sum is NaN, and NaN is not far from 1)
        [([1, 0, 0], 1.0), ([0, 1, 0], np.float32("nan"))],
        [([1, 0, 0], True)],  # the templates' check took it for 1.0
        [([1, 0, 0], "1")],  # ... and a string for a number
    ],
)
def test_every_distribution_check_refuses_what_is_not_a_probability(distribution):
    # the metrics, the calibration functions and the templates share one check
    for call in (
        lambda: DCG3.expected_utility(distribution),
        lambda: bayes_optimal_rankings(DCG3, distribution),
        lambda: PointwiseSquared().expected_target(distribution),
    ):
        with pytest.raises(ValueError, match="probabilities must be non-negative"):
            call()


def test_exact_probabilities_must_sum_to_one_exactly_everywhere():
    # rational probabilities 1e-12 away from summing to 1: the metrics and the
    # calibration functions refused them, the templates accepted them
    off = [([1.0, 0.0, 0.0], F(1, 3)), ([0.0, 1.0, 0.0], F(2, 3) + F(1, 10**12))]
    with pytest.raises(ValueError, match="sum to 1"):
        PointwiseSquared().expected_target(off)
    exact = [([1.0, 0.0, 0.0], F(1, 3)), ([0.0, 1.0, 0.0], F(2, 3))]
    assert_allclose(PointwiseSquared().expected_target(exact), [1 / 3, 2 / 3, 0])
