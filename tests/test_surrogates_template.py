"""Template losses: gradients, closed-form minimizers, infima, grouping, domains."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import minimize

from treerank.metrics import PositionalMetric
from treerank.surrogates import (
    BregmanLoss,
    ListNetSurrogate,
    PairwiseComparisonLoss,
    PairwiseExponential,
    PairwiseHingeSurrogate,
    PairwiseLogistic,
    PairwiseSquared,
    PointwiseDifferentiableHinge,
    PointwiseExponential,
    PointwiseLogistic,
    PointwiseSquared,
    PointwiseSquaredHinge,
    SLAMSurrogate,
)

ETA = 2.0

TEMPLATE_LOSSES = {
    "pointwise_squared": PointwiseSquared(),
    "pointwise_logistic": PointwiseLogistic(eta=ETA),
    "pointwise_exponential": PointwiseExponential(eta=ETA),
    "pointwise_squared_hinge": PointwiseSquaredHinge(eta=ETA, t=1.5),
    "pointwise_diff_hinge": PointwiseDifferentiableHinge(eta=ETA, alpha=0.3),
    "pointwise_diff_hinge_margin_eta": PointwiseDifferentiableHinge(
        eta=ETA, alpha=0.7, margin=ETA
    ),
    "pairwise_squared": PairwiseSquared(),
    "pairwise_logistic": PairwiseLogistic(),
    "pairwise_exponential": PairwiseExponential(),
    "bregman_squared": BregmanLoss(),
    "bregman_entropy_exp": BregmanLoss(psi="entropy", link="exp", eta=ETA),
}

# losses whose value has kinks where the subgradient is still a gradient a.e.
LIST_LOSSES = {
    "ranknet": PairwiseComparisonLoss(phi="logistic"),
    "rankboost": PairwiseComparisonLoss(phi="exponential"),
    "squared_hinge_pairs": PairwiseComparisonLoss(phi="squared_hinge"),
    "ranksvm": PairwiseHingeSurrogate(),
    "listnet": ListNetSurrogate(),
    "slam_ndcg": SLAMSurrogate(),
    "slam_map": SLAMSurrogate(weights="map"),
    "slam_ndcg@2": SLAMSurrogate(weights="ndcg@k", k=2),
}


def _finite_difference(func, s, eps=1e-6):
    grad = np.empty_like(s)
    for i in range(s.size):
        e = np.zeros_like(s)
        e.flat[i] = eps
        grad.flat[i] = (func(s + e) - func(s - e)) / (2 * eps)
    return grad


def _random_lists(rng, n_lists=4, max_items=6):
    sizes = rng.integers(1, max_items + 1, size=n_lists)
    qid = np.repeat(np.arange(n_lists) * 7 + 3, sizes)  # non-contiguous labels
    perm = rng.permutation(qid.size)  # interleave the lists
    return qid[perm]


@pytest.mark.parametrize("name", sorted(TEMPLATE_LOSSES))
def test_template_gradient_matches_finite_differences(name, rng):
    loss = TEMPLATE_LOSSES[name]
    qid = _random_lists(rng)
    v = rng.uniform(0.05, ETA - 0.05, size=qid.size)
    s = rng.normal(size=qid.size)
    grad = loss.grad(s, v, qid=qid)
    fd = _finite_difference(lambda x: loss.value(x, v, qid=qid), s)
    assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(LIST_LOSSES))
def test_list_loss_gradient_matches_finite_differences(name, rng):
    loss = LIST_LOSSES[name]
    qid = _random_lists(rng)
    y = rng.integers(0, 2 if "map" in name else 3, size=qid.size).astype(float)
    s = rng.normal(size=qid.size)  # generic point: away from the kinks a.s.
    grad = loss.grad(s, y, qid=qid)
    fd = _finite_difference(lambda x: loss.value(x, y, qid=qid), s)
    assert_allclose(grad, fd, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(TEMPLATE_LOSSES) + sorted(LIST_LOSSES))
def test_grouped_value_is_sum_of_lists(name, rng):
    loss = {**TEMPLATE_LOSSES, **LIST_LOSSES}[name]
    qid = _random_lists(rng, n_lists=5)
    if name in TEMPLATE_LOSSES:
        t = rng.uniform(0.05, ETA - 0.05, size=qid.size)
    else:
        t = rng.integers(0, 2, size=qid.size).astype(float)
    s = rng.normal(size=qid.size)
    per_query = loss.value(s, t, qid=qid, return_per_query=True)
    grad = loss.grad(s, t, qid=qid)
    for q, value in zip(np.unique(qid), per_query):
        mask = qid == q
        assert loss.value(s[mask], t[mask]) == pytest.approx(
            value, rel=1e-12, abs=1e-12
        )
        assert_allclose(loss.grad(s[mask], t[mask]), grad[mask], atol=1e-12)
    assert loss.value(s, t, qid=qid) == pytest.approx(per_query.sum())


def test_two_dimensional_batch_equals_qid(rng):
    loss = PairwiseLogistic()
    s = rng.normal(size=(3, 4))
    v = rng.uniform(size=(3, 4))
    qid = np.repeat(np.arange(3), 4)
    assert loss.value(s, v) == pytest.approx(loss.value(s.ravel(), v.ravel(), qid=qid))
    assert_allclose(loss.grad(s, v).ravel(), loss.grad(s.ravel(), v.ravel(), qid=qid))
    assert loss.grad(s, v).shape == (3, 4)


def _numerical_minimum(loss, U):
    """Minimize l(s, U) from several starts; return (min value, argmin)."""
    best = None
    for start in (np.zeros_like(U), U, -U):
        res = minimize(
            lambda s: loss.value(s, U),
            start,
            jac=lambda s: loss.grad(s, U),
            method="L-BFGS-B",
            options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 5000},
        )
        if best is None or res.fun < best.fun:
            best = res
    return best.fun, best.x


@pytest.mark.parametrize("name", sorted(TEMPLATE_LOSSES))
def test_closed_form_minimizer_and_infimum(name, rng):
    loss = TEMPLATE_LOSSES[name]
    U = rng.uniform(0.1, ETA - 0.1, size=5)
    U[2] = ETA / 2  # the differentiable hinge's flat minimum
    s_star = loss.argmin(U)
    assert s_star is not None
    value = loss.value(s_star, U)
    assert value == pytest.approx(loss.infimum(U), rel=1e-10, abs=1e-12)
    num_value, _ = _numerical_minimum(loss, U)
    assert loss.infimum(U) <= num_value + 1e-9
    assert num_value == pytest.approx(loss.infimum(U), rel=1e-6, abs=1e-8)
    # the gradient vanishes at the closed-form minimizer
    assert_allclose(loss.grad(s_star, U), 0.0, atol=1e-9)
    # order preservation: s* sorts like U
    order = np.argsort(-U, kind="stable")
    assert np.all(np.diff(s_star[order]) <= 1e-12)


@pytest.mark.parametrize(
    ("loss", "U", "expected"),
    [
        (PointwiseLogistic(eta=1.0), [0.0, 0.5, 1.0], [-np.inf, 0.0, np.inf]),
        (PointwiseExponential(eta=1.0), [0.0, 0.5, 1.0], [-np.inf, 0.0, np.inf]),
        (PairwiseLogistic(), [0.0, 1.0, 2.0], [-np.inf, 0.0, np.log(2.0)]),
        (PairwiseExponential(), [0.0, 1.0], [-np.inf, 0.0]),
        (BregmanLoss(psi="entropy", link="exp"), [0.0, 1.0], [-np.inf, 0.0]),
    ],
)
def test_unattained_minimizers(loss, U, expected):
    assert loss.argmin(U) is None
    assert_allclose(loss.argmin(U, allow_infinite=True), expected)


@pytest.mark.parametrize(
    ("loss", "U", "infimum"),
    [
        # eta H(U / eta) at the ends is 0; at U = eta / 2 it is eta log 2
        (PointwiseLogistic(eta=2.0), [0.0, 1.0, 2.0], 2.0 * np.log(2.0)),
        (PointwiseExponential(eta=2.0), [0.0, 1.0, 2.0], 2.0),
        (PointwiseSquaredHinge(eta=2.0, t=3.0), [1.0], 1.0 * 1.0 * 9.0 / 2.0),
        (PairwiseLogistic(), [1.0, 1.0], 2.0 * np.log(2.0)),
        (PairwiseLogistic(), [0.0, 3.0], 0.0),
        (PairwiseExponential(), [1.0, 4.0, 0.0], 4.0),
    ],
)
def test_infimum_closed_forms(loss, U, infimum):
    assert loss.infimum(U) == pytest.approx(infimum)


def test_regret_constants():
    assert PointwiseSquared().regret_constant() == pytest.approx(np.sqrt(2))
    assert PointwiseLogistic(eta=4.0).regret_constant() == pytest.approx(2.0)
    assert PointwiseExponential(eta=9.0).regret_constant() == pytest.approx(3.0)
    assert PointwiseSquaredHinge(eta=2.0, t=2.0).regret_constant() == pytest.approx(1.0)
    hinge = PointwiseDifferentiableHinge(eta=1.0, alpha=0.25)
    assert hinge.regret_constant() == pytest.approx(8.0)
    assert PairwiseSquared().regret_constant() == 1.0
    assert PairwiseLogistic().regret_constant([0.5, 4.0]) == pytest.approx(4.0)
    assert BregmanLoss().regret_constant() == pytest.approx(np.sqrt(2))
    with pytest.raises(ValueError, match="pass U"):
        PairwiseExponential().regret_constant()
    with pytest.raises(ValueError, match="strong-convexity"):
        BregmanLoss(psi="entropy", link="exp").regret_constant()


def test_pairwise_losses_are_translation_invariant(rng):
    s = rng.normal(size=6)
    v = rng.uniform(size=6)
    for loss in (PairwiseSquared(), PairwiseLogistic(), PairwiseExponential()):
        assert loss.value(s + 3.7, v) == pytest.approx(loss.value(s, v))
        assert loss.grad(s, v).sum() == pytest.approx(0.0, abs=1e-12)


def test_pairwise_squared_matches_pair_sum(rng):
    s = rng.normal(size=5)
    v = rng.normal(size=5)
    i, j = np.triu_indices(5, 1)
    direct = np.sum(((v[i] - v[j]) - (s[i] - s[j])) ** 2)
    assert PairwiseSquared().value(s, v) == pytest.approx(direct)


def test_pairwise_op_form_value_matches_definition(rng):
    s = rng.normal(size=4)
    v = rng.uniform(size=4)
    i, j = np.triu_indices(4, 1)
    d = s[i] - s[j]
    direct = np.sum(v[i] * np.log1p(np.exp(-d)) + v[j] * np.log1p(np.exp(d)))
    assert PairwiseLogistic().value(s, v) == pytest.approx(direct)
    direct = np.sum(v[i] * np.exp(-d) + v[j] * np.exp(d))
    assert PairwiseExponential().value(s, v) == pytest.approx(direct)


def test_bregman_user_generator_matches_builtin(rng):
    def psi(w):
        return float(np.sum(w**2))

    def grad_psi(w):
        return 2 * w

    def hess_psi(w):
        return 2 * np.eye(w.shape[0])  # full matrix form

    def link(s):
        return s**3 + s  # increasing, not the identity

    def jac(s):
        return np.diag(3 * s**2 + 1)

    user = BregmanLoss(psi=(psi, grad_psi, hess_psi), link=(link, jac, None), mu=2.0)
    qid = _random_lists(rng)
    s = rng.normal(size=qid.size)
    v = rng.normal(size=qid.size)
    expected = BregmanLoss().value(s**3 + s, v, qid=qid)
    assert user.value(s, v, qid=qid) == pytest.approx(expected)
    fd = _finite_difference(lambda x: user.value(x, v, qid=qid), s)
    assert_allclose(user.grad(s, v, qid=qid), fd, rtol=1e-5, atol=1e-6)
    assert user.regret_constant() == pytest.approx(np.sqrt(2))
    with pytest.raises(ValueError, match="no inverse"):
        user.argmin(v[:3])


def test_bregman_entropy_exp_is_canonical(rng):
    loss = BregmanLoss(psi="entropy", link="exp")
    s = rng.normal(size=5)
    v = rng.uniform(size=5)
    assert_allclose(loss.grad(s, v), np.exp(s) - v)
    kl = np.sum(v * np.log(v / np.exp(s)) - v + np.exp(s))
    assert loss.value(s, v) == pytest.approx(kl)


def test_inner_risk_and_regret_use_expected_utility(rng):
    loss = PointwiseSquared()
    targets = rng.uniform(size=(3, 4))
    p = np.array([0.2, 0.3, 0.5])
    dist = list(zip(targets, p))
    s = rng.normal(size=4)
    U = p @ targets
    variance = p @ ((targets - U) ** 2).sum(axis=1)
    assert loss.inner_risk(s, dist) == pytest.approx(np.sum((s - U) ** 2) + variance)
    assert loss.inner_regret(s, U) == pytest.approx(np.sum((s - U) ** 2))
    assert_allclose(loss.expected_target(dist), U)


@pytest.mark.parametrize("n_items", [3, 5])
@pytest.mark.parametrize(
    ("utility", "factory"),
    [
        ("dcg", lambda n: PositionalMetric.dcg(n)),
        ("ndcg", lambda n: PositionalMetric.ndcg(n)),
        ("recall", lambda n: PositionalMetric.recall_at_k(n, 2)),
        ("precision", lambda n: PositionalMetric.precision_at_k(n, 2)),
        ("auc", lambda n: PositionalMetric.auc(n)),
    ],
)
def test_named_utilities_match_the_metric_layer(utility, factory, n_items, rng):
    metric = factory(n_items)
    binary = utility in ("recall", "precision", "auc")
    y = rng.integers(0, 2 if binary else 4, size=(6, n_items)).astype(float)
    y[0] = 0  # an empty list
    loss = PointwiseSquared().instance(utility)
    u = loss.utilities(y)
    for row, u_row in zip(y, u):
        assert_allclose(u_row, metric.utility(row), atol=1e-12)
    # a metric object as utility gives the same values
    assert_allclose(PointwiseSquared().instance(metric).utilities(y), u, atol=1e-12)


def test_instantiated_loss_uses_the_utility(rng):
    y = np.array([2.0, 1.0, 0.0, 3.0])
    s = rng.normal(size=4)
    loss = PairwiseLogistic().instance("dcg")
    assert loss.value(s, y) == pytest.approx(PairwiseLogistic().value(s, 2**y - 1))
    assert loss.requires_qid
    assert not PointwiseSquared().instance("dcg").requires_qid
    assert PointwiseSquared().instance("ndcg").requires_qid


@pytest.mark.parametrize(
    ("factory", "match"),
    [
        (lambda: PointwiseLogistic(eta=0), "eta must be a positive"),
        (lambda: PointwiseSquaredHinge(t=-1), "t must be a positive"),
        (lambda: PointwiseDifferentiableHinge(eta=10, alpha=4.9), "alpha must satisfy"),
        (lambda: PointwiseDifferentiableHinge(alpha=0.5), "alpha must satisfy"),
        (lambda: BregmanLoss(psi="cubic"), "psi must be one of"),
        (lambda: BregmanLoss(link=(np.exp,)), "link must be one of"),
        (lambda: PairwiseComparisonLoss(phi="probit"), "phi must be one of"),
        (lambda: PointwiseSquared().instance("map"), "utility must be one of"),
        (lambda: PointwiseSquared().instance("ndcg", k=0), "k must be a positive"),
    ],
)
def test_invalid_parameters(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (
            lambda: PointwiseLogistic(eta=1.0).value([0.0, 1.0], [0.5, 1.5]),
            r"\[0, eta\]",
        ),
        (lambda: PairwiseLogistic().value([0.0, 1.0], [0.5, -1.0]), "v >= 0"),
        (lambda: PointwiseSquared().value([0.0, np.nan], [0.5, 1.0]), "NaN"),
        (lambda: PointwiseSquared().value([0.0, 1.0], [0.5]), "shape"),
        (lambda: PointwiseSquared().value([0.0, 1.0], [0.5, 1], qid=[1]), "qid has"),
        (
            lambda: PointwiseSquared().value(
                np.zeros((2, 2)), np.zeros((2, 2)), qid=[0] * 4
            ),
            "qid must be None",
        ),
        (lambda: PointwiseSquared().instance("recall").value([0, 1], [2, 0]), "binary"),
        (lambda: PointwiseSquared().instance("dcg").value([0, 1], [-1, 0]), ">= 0"),
        (
            lambda: BregmanLoss(psi="entropy").value([-1.0, 1.0], [0.5, 0.5]),
            "link='exp'",
        ),
    ],
)
def test_invalid_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_single_item_and_empty_pairs():
    for loss in (
        PairwiseLogistic(),
        PairwiseSquared(),
        ListNetSurrogate(),
        SLAMSurrogate(),
    ):
        assert loss.value([0.3], [1.0]) == 0.0
        assert_allclose(loss.grad([0.3], [1.0]), [0.0])


@pytest.mark.parametrize("name", sorted(TEMPLATE_LOSSES))
def test_inner_regret_is_accurate_near_the_minimum(name, rng):
    loss = TEMPLATE_LOSSES[name]
    U = rng.uniform(0.2, ETA - 0.2, size=4)
    U[3] = ETA / 2
    s_star = loss.argmin(U)
    direction = rng.normal(size=4)
    # moderate regret: equals the difference value - infimum
    s = s_star + 0.5 * direction
    assert loss.inner_regret(s, U) == pytest.approx(
        loss.value(s, U) - loss.infimum(U), rel=1e-9, abs=1e-12
    )
    # tiny regrets scale like eps^2 (no cancellation noise), except where the
    # loss is flat (differentiable hinge at U = eta/2)
    if "diff_hinge" in name:
        return
    r1 = loss.inner_regret(s_star + 1e-3 * direction, U)
    r2 = loss.inner_regret(s_star + 1e-6 * direction, U)
    if loss.translation_invariant and np.allclose(direction, direction.mean()):
        return
    assert r2 > 0
    assert r2 / r1 == pytest.approx(1e-6, rel=1e-2)


def test_tiny_regrets_keep_their_relative_accuracy():
    # U_1 - U_2 = 3e-10 and d = -1e-9: second-order expansions give the regrets
    U = np.array([0.5 + 3e-10, 0.5])
    s = np.array([-1e-9, 0.0])
    q = U[0] / U.sum()
    kl = (q - 0.5 + 2.5e-10) ** 2 / (2 * q * (1 - q))  # KL(q || sigmoid(d))
    assert PairwiseLogistic().inner_regret(s, U) == pytest.approx(
        U.sum() * kl, rel=1e-5
    )
    gap = np.sqrt(0.5) * (3e-10 + 1e-9)
    assert PairwiseExponential().inner_regret(s, U) == pytest.approx(gap**2, rel=1e-5)
    # the naive difference value - infimum has lost every digit here
    assert PairwiseExponential().value(s, U) - PairwiseExponential().infimum(U) < 1e-16


def test_the_ndcg_utility_is_normalized_by_the_metrics_ideal_dcg():
    # one ideal DCG for ndcg_score and the "ndcg" utility: summed over the
    # sorted gains, it does not depend on the order of a list's items (the
    # surrogates' own copy summed in item order: a permutation of the items
    # changed its last bits for about a third of such lists)
    from treerank.metrics import ndcg_score
    from treerank.surrogates._groups import check_groups
    from treerank.surrogates._utility import compute_utility

    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 12))
        y = rng.random(n) * rng.choice([1.0, 3.0, 7.0])
        k = [None, 3][int(rng.integers(2))]
        perm = rng.permutation(n)
        groups = check_groups(None, n)
        u = compute_utility("ndcg", y, groups, k=k)
        u_perm = compute_utility("ndcg", y[perm], groups, k=k)
        assert np.array_equal(u[perm], u_perm)
        # the ideal ranking scores NDCG 1 under the metric as well
        assert ndcg_score(y, y, k=k) == pytest.approx(1.0)
