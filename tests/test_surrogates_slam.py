"""SLAM surrogate: golden values, LP form, upper-bound property, convexity."""

import itertools
from fractions import Fraction

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import linprog

from treerank.metrics import average_precision_score, ndcg_score
from treerank.surrogates import (
    ListNetSurrogate,
    PairwiseHingeSurrogate,
    SLAMSurrogate,
    slam_weight_ratio,
    slam_weights,
)
from treerank.surrogates._groups import check_groups
from treerank.surrogates._slam import (
    _compute_weights,
    _slam_dispatch,
    _slam_weights_flat,
)

# ---------------------------------------------------------------------------
# reference implementations (one list at a time)
# ---------------------------------------------------------------------------


def _naive_slam(s, y, v, margin=1.0):
    """Eq. (11) of Chaudhuri & Tewari with the O(m^2) matrix b_ij."""
    s, y, v = map(np.asarray, (s, y, v))
    m = s.shape[0]
    value, grad = 0.0, np.zeros(m)
    for i in range(m):
        lower = np.flatnonzero(y < y[i])
        if lower.size == 0:
            continue
        # ties in the score: the least relevant, then the lowest index
        lower = lower[np.lexsort((lower, y[lower]))]
        best = lower[np.argmax(s[lower])]  # argmax returns the first maximum
        c = margin + s[best] - s[i]
        if c > 0:
            value += v[i] * c
            grad[best] += v[i]
            grad[i] -= v[i]
    return value, grad


def _lp_slam(s, y, v, margin=1.0):
    """The LP (3): min sum v_i d_i, d >= 0, s_i + d_i >= margin + s_j if y_i > y_j."""
    m = len(s)
    rows, rhs = [], []
    for i in range(m):
        for j in range(m):
            if y[i] > y[j]:
                row = np.zeros(m)
                row[i] = -1.0
                rows.append(row)
                rhs.append(s[i] - margin - s[j])
    if not rows:
        return 0.0
    res = linprog(v, A_ub=np.array(rows), b_ub=np.array(rhs), bounds=[(0, None)] * m)
    return res.fun


def _stable_scores(ranking):
    """Strictly decreasing scores along a ranking (item ranking[k] gets m - k)."""
    m = len(ranking)
    s = np.empty(m)
    s[np.asarray(ranking)] = m - np.arange(m)
    return s


# ---------------------------------------------------------------------------
# golden values (reference notes, seeds-002-003 §2.3)
# ---------------------------------------------------------------------------


def test_golden_values_ndcg():
    y = [2, 1, 0]
    s = [0.1, 0.5, 0.3]
    assert ndcg_score(y, s, ties="stable") == pytest.approx(0.688529, abs=1e-6)
    assert_allclose(slam_weights(y), [0.413117, 0.036060, 0.0], atol=1e-6)
    value, grad = SLAMSurrogate().value_and_grad(s, y)
    assert value == pytest.approx(0.607212, abs=1e-6)
    assert_allclose(grad, [-0.413117, 0.377058, 0.036060], atol=1e-6)


def test_golden_values_ndcg_at_k():
    y = [2, 1, 0]
    s = [0.1, 0.5, 0.3]
    assert ndcg_score(y, s, k=1, ties="stable") == pytest.approx(1 / 3)
    assert_allclose(slam_weights(y, weights="ndcg@k", k=1), [1, 0, 0])
    assert SLAMSurrogate("ndcg@k", k=1).value(s, y) == pytest.approx(1.4)
    assert ndcg_score(y, s, k=2, ties="stable") == pytest.approx(0.275412, abs=1e-6)
    assert_allclose(
        slam_weights(y, weights="ndcg@k", k=2), [0.826235, 0.173765, 0], atol=1e-6
    )
    assert SLAMSurrogate("ndcg@k", k=2).value(s, y) == pytest.approx(1.295741, abs=1e-6)


def test_golden_values_weights():
    v = slam_weights([3, 2, 1, 0])
    assert_allclose(v, [0.424290, 0.063960, 0.007380, 0], atol=1e-6)
    assert v.sum() == pytest.approx(0.495630, abs=1e-6)
    assert_allclose(slam_weights([1, 1, 0, 0, 0], weights="map"), [0.375, 0.3, 0, 0, 0])
    v = slam_weights([1, 1, 1, 1, 0], weights="map")
    assert_allclose(v, [1 / 8, 1 / 12, 1 / 16, 1 / 20, 0])
    assert slam_weight_ratio(v) == pytest.approx(2.5)
    # m = 2, R = (1, 0)
    assert_allclose(slam_weights([1, 0], weights="map"), [0.5, 0])
    assert_allclose(slam_weights([1, 0]), [1 - 1 / np.log2(3), 0])


def test_golden_values_map():
    y = [1, 0, 1, 0]
    s = [0.2, 0.9, 0.1, 0.5]
    ap = average_precision_score(np.array(y), s, ties="stable")
    assert ap == pytest.approx(5 / 12)
    assert_allclose(slam_weights(y, weights="map"), [1 / 3, 0, 1 / 4, 0])
    value, grad = SLAMSurrogate(weights="map").value_and_grad(s, y)
    assert value == pytest.approx(1.016667, abs=1e-6)
    assert_allclose(grad, [-1 / 3, 7 / 12, -1 / 4, 0])


def test_golden_values_all_tied_scores():
    y = [0, 1, 2]
    s = [0.0, 0.0, 0.0]
    assert ndcg_score(y, s, ties="stable") == pytest.approx(0.586883, abs=1e-6)
    assert SLAMSurrogate().value(s, y) == pytest.approx(0.449177, abs=1e-6)


def test_map_weights_are_tight():
    # R = (1, 1, 0): the worst ranking has 1 - AP = 5/12 = v_1 + v_2
    v = slam_weights([1, 1, 0], weights="map")
    worst = 1 - average_precision_score(np.array([1, 1, 0]), [0, 1, 2], ties="stable")
    assert worst == pytest.approx(5 / 12)
    assert v.sum() == pytest.approx(5 / 12)


# ---------------------------------------------------------------------------
# the closed form equals the LP; the vectorized path equals the reference
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("weights", ["ndcg", "map", "ndcg@k"])
def test_closed_form_equals_lp(weights, rng):
    loss = SLAMSurrogate(weights, k=2 if weights == "ndcg@k" else None, margin=0.7)
    for _ in range(25):
        m = int(rng.integers(1, 7))
        y = rng.integers(0, 2 if weights == "map" else 4, size=m).astype(float)
        s = rng.normal(size=m).round(1)  # ties in the scores too
        v = loss.list_weights(y)
        assert loss.value(s, y) == pytest.approx(_lp_slam(s, y, v, 0.7), abs=1e-9)


@pytest.mark.parametrize("grades", ["integers", "reals"])
def test_vectorized_equals_naive_reference(grades, rng):
    sizes = rng.integers(1, 12, size=40)
    qid = np.repeat(np.arange(40), sizes)
    qid = qid[rng.permutation(qid.size)]
    if grades == "integers":
        y = rng.integers(0, 4, size=qid.size).astype(float)
    else:  # real-valued relevance, with a few ties
        y = np.round(rng.uniform(0, 3, size=qid.size), 1)
    s = rng.integers(-3, 4, size=qid.size).astype(float)  # many score ties
    for weights in ("ndcg", "ndcg@k"):
        loss = SLAMSurrogate(weights, k=3 if weights == "ndcg@k" else None)
        v = loss.list_weights(y, qid=qid)
        per_query, grad = loss.value_and_grad(s, y, qid=qid, return_per_query=True)
        for q, value in zip(np.unique(qid), per_query):
            mask = qid == q
            ref_value, ref_grad = _naive_slam(s[mask], y[mask], v[mask])
            assert value == pytest.approx(ref_value, abs=1e-12)
            assert_allclose(grad[mask], ref_grad, atol=1e-12)


@pytest.mark.parametrize("layout", ["padded", "flat"])
@pytest.mark.parametrize("smoothing", [None, 0.3])
def test_padded_and_flat_layouts_agree(layout, smoothing, rng):
    # one long list among short ones: the automatic choice is the flat layout
    sizes = np.r_[rng.integers(1, 6, size=30), 200]
    qid = np.repeat(np.arange(sizes.size), sizes)
    qid = qid[rng.permutation(qid.size)]
    y = rng.integers(0, 4, size=qid.size).astype(float)
    s = rng.integers(-3, 4, size=qid.size).astype(float)
    groups = check_groups(qid, qid.size)
    assert not groups.padding_is_cheap
    v = _compute_weights(y, groups, "ndcg", None, "exp2")
    assert_allclose(v, _slam_weights_flat(y, groups, "ndcg", None, "exp2"), atol=1e-15)
    per_query, grad = _slam_dispatch(s, y, v, groups, 1.0, smoothing, layout=layout)
    ref_q, ref_g = _slam_dispatch(s, y, v, groups, 1.0, smoothing, layout="flat")
    assert_allclose(per_query, ref_q, atol=1e-10)
    assert_allclose(grad, ref_g, atol=1e-10)
    if smoothing is None:
        for q, value in zip(np.unique(qid), per_query):
            mask = qid == q
            ref_value, ref_grad = _naive_slam(s[mask], y[mask], v[mask])
            assert value == pytest.approx(ref_value, abs=1e-12)
            assert_allclose(grad[mask], ref_grad, atol=1e-12)


def test_weights_are_computed_per_list(rng):
    sizes = rng.integers(1, 9, size=30)
    qid = np.repeat(np.arange(30), sizes)
    y = rng.integers(0, 3, size=qid.size).astype(float)
    for weights, k in (("ndcg", None), ("ndcg@k", 2), ("map", None)):
        labels = (y > 0).astype(float) if weights == "map" else y
        v = slam_weights(labels, qid=qid, weights=weights, k=k)
        for q in np.unique(qid):
            mask = qid == q
            assert_allclose(
                v[mask], slam_weights(labels[mask], weights=weights, k=k), atol=1e-15
            )


# ---------------------------------------------------------------------------
# upper-bound property, exhaustively for lists of up to 6 items
# ---------------------------------------------------------------------------


def _all_lists(m, n_grades):
    """Every label vector times every ranking, as a batch of rows."""
    labels = np.array(list(itertools.product(range(n_grades), repeat=m)), float)
    rankings = np.array(list(itertools.permutations(range(m))))
    y = np.repeat(labels, len(rankings), axis=0)
    ranking = np.tile(rankings, (len(labels), 1))
    return y, ranking


def _measure(y, ranking, weights, k):
    """1 - metric of every row (through the metric layer, stable ties)."""
    n_rows, m = y.shape
    s = np.empty(y.shape)
    np.put_along_axis(s, ranking, m - np.arange(m)[None, :].repeat(n_rows, 0), axis=1)
    qid = np.repeat(np.arange(n_rows), m)
    if weights == "map":
        keep = y.sum(axis=1) > 0
        loss = np.zeros(n_rows)
        _, ap = average_precision_score(
            y[keep].ravel().astype(int),
            s[keep].ravel(),
            qid=np.repeat(np.arange(keep.sum()), m),
            ties="stable",
            return_per_query=True,
        )
        loss[keep] = 1 - ap
        return loss, s
    _, nd = ndcg_score(
        y.ravel(),
        s.ravel(),
        qid=qid,
        k=k,
        ties="stable",
        empty=1.0,
        return_per_query=True,
    )
    return 1 - nd, s


def _envelope(y, ranking, v):
    """inf of SLAM over the scores inducing the ranking: sum of v_i over the
    items with a less relevant item ranked above them."""
    y_ranked = np.take_along_axis(y, ranking, axis=1)
    v_ranked = np.take_along_axis(v, ranking, axis=1)
    prefix_min = np.minimum.accumulate(y_ranked, axis=1)
    beaten = np.zeros(y.shape, dtype=bool)
    beaten[:, 1:] = prefix_min[:, :-1] < y_ranked[:, 1:]
    return np.sum(v_ranked * beaten, axis=1)


# m = 6 with graded labels (524,880 label-ranking pairs, all k) takes several
# seconds: marked slow, and also run by benchmarks/bench_slam.py
EXHAUSTIVE = [
    pytest.param(weights, m, marks=pytest.mark.slow)
    if m == 6 and weights != "map"
    else (weights, m)
    for weights in ("ndcg", "ndcg@k", "map")
    for m in range(1, 7)
]


@pytest.mark.parametrize(("weights", "m"), EXHAUSTIVE)
def test_upper_bound_exhaustive(weights, m):
    y, ranking = _all_lists(m, 2 if weights == "map" else 3)
    for k in range(1, m + 1) if weights == "ndcg@k" else [None]:
        v = slam_weights(y, weights=weights, k=k)
        rml, s = _measure(y, ranking, weights, k)
        # the infimum of SLAM over all scores inducing each ranking
        assert np.all(_envelope(y, ranking, v) >= rml - 1e-12)
        if m <= 5 or k in (None, 2):
            loss = SLAMSurrogate(weights, k=k)
            assert np.all(loss.value(s, y, return_per_query=True) >= rml - 1e-12)


@pytest.mark.parametrize("weights", ["ndcg", "map", "ndcg@k"])
def test_upper_bound_with_score_ties(weights, rng):
    loss = SLAMSurrogate(weights, k=2 if weights == "ndcg@k" else None)
    m, n_lists = 6, 3000
    y = rng.integers(0, 2 if weights == "map" else 4, size=(n_lists, m)).astype(float)
    y[:, 0] = 1  # at least one relevant item
    s = rng.integers(0, 3, size=(n_lists, m)).astype(float)
    qid = np.repeat(np.arange(n_lists), m)
    if weights == "map":
        _, metric = average_precision_score(
            y.ravel().astype(int),
            s.ravel(),
            qid=qid,
            ties="stable",
            return_per_query=True,
        )
    else:
        _, metric = ndcg_score(
            y.ravel(),
            s.ravel(),
            qid=qid,
            k=loss.k,
            ties="stable",
            return_per_query=True,
        )
    assert np.all(loss.value(s, y, return_per_query=True) >= 1 - metric - 1e-12)


# ---------------------------------------------------------------------------
# structural properties
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("weights", ["ndcg", "map"])
def test_convexity_translation_and_gradient_sum(weights, rng):
    loss = SLAMSurrogate(weights)
    for _ in range(200):
        m = int(rng.integers(2, 9))
        y = rng.integers(0, 2 if weights == "map" else 4, size=m).astype(float)
        a, b = rng.normal(size=(2, m)) * 2
        fa, ga = loss.value_and_grad(a, y)
        fb = loss.value(b, y)
        # midpoint convexity and the subgradient inequality
        assert loss.value((a + b) / 2, y) <= (fa + fb) / 2 + 1e-12
        assert fb >= fa + ga @ (b - a) - 1e-12
        # translation invariance and zero-sum gradient
        assert loss.value(a + 5.3, y) == pytest.approx(fa, abs=1e-12)
        assert ga.sum() == pytest.approx(0.0, abs=1e-12)
        # l1 norm of the gradient, independent of m
        v = loss.list_weights(y)
        assert np.abs(ga).sum() <= 2 * v.sum() + 1e-12
        assert v.sum() <= 1 + 1e-12


def test_zero_iff_margin_satisfied(rng):
    y = np.array([2.0, 0.0, 1.0, 1.0])
    loss = SLAMSurrogate()
    s = np.array([3.0, 0.0, 1.0, 1.5])  # every pair with y_i > y_j: s_i >= s_j + 1
    assert loss.value(s, y) == 0.0
    s[3] = 0.5  # margin violated against the irrelevant item
    assert loss.value(s, y) > 0


def test_weight_properties(rng):
    for _ in range(300):
        m = int(rng.integers(1, 10))
        y = rng.integers(0, 5, size=m).astype(float)
        v = slam_weights(y)
        assert np.all(v >= 0) and v.sum() <= 1 + 1e-12
        assert np.all(v[y == y.min()] == 0)
        vk = slam_weights(y, weights="ndcg@k", k=3)
        if np.any(y > 0):
            assert vk.sum() == pytest.approx(1.0)
            ratio = (2.0 ** y.max() - 1) / 1.0 * np.log2(min(3, m) + 1)
            assert slam_weight_ratio(vk) <= ratio + 1e-9
        yb = (y > 1).astype(float)
        vm = slam_weights(yb, weights="map")
        r = yb.sum()
        assert vm.sum() <= 1 + 1e-12
        if 0 < r < m:
            assert slam_weight_ratio(vm) == pytest.approx(m / (m - r + 1))
            assert slam_weight_ratio(vm) <= m / 2 + 1e-12


def test_all_equal_relevance_gives_zero():
    for weights in ("ndcg", "map", "ndcg@k"):
        loss = SLAMSurrogate(weights, k=2 if weights == "ndcg@k" else None)
        assert loss.value([0.3, -1.0, 2.0], [1, 1, 1]) == 0.0
        assert_allclose(loss.grad([0.3, -1.0, 2.0], [1, 1, 1]), 0.0)
    assert_allclose(slam_weights([0, 0, 0], weights="map"), 0.0)


def test_exact_map_weights_as_fractions():
    # v_i = n0 / (r (n0 + i)): check the r = 2, m = 5 case exactly
    v = slam_weights([1, 0, 0, 1, 0], weights="map")
    expected = [Fraction(3, 2 * 4), 0, 0, Fraction(3, 2 * 5), 0]
    assert_allclose(v, [float(x) for x in expected], rtol=1e-15)


def test_custom_weights():
    y = np.array([2.0, 1.0, 0.0])
    s = np.array([0.1, 0.5, 0.3])
    fixed = SLAMSurrogate(weights=[1.0, 1.0, 1.0])
    func = SLAMSurrogate(weights=lambda y_list: np.ones_like(y_list))
    # with v = 1: c_0 = 1 + 0.5 - 0.1, c_1 = 1 + 0.3 - 0.5, c_2 = 0
    assert fixed.value(s, y) == pytest.approx(1.4 + 0.8)
    assert func.value(s, y) == pytest.approx(1.4 + 0.8)
    with pytest.raises(ValueError, match="weights has 3 entries"):
        fixed.value(np.zeros(4), np.arange(4.0))


# ---------------------------------------------------------------------------
# smoothing, other listwise losses
# ---------------------------------------------------------------------------


def test_smoothed_slam(rng):
    loss = SLAMSurrogate()
    qid = np.repeat(np.arange(6), 7)
    y = rng.integers(0, 3, size=qid.size).astype(float)
    s = rng.normal(size=qid.size) * 30  # wide spread: log-domain stability
    exact = loss.value(s, y, qid=qid)
    v = loss.list_weights(y, qid=qid)
    for mu in (1.0, 0.1, 0.01):
        value, grad = loss.smoothed_value_and_grad(s, y, smoothing=mu, qid=qid)
        assert exact - 1e-9 <= value <= exact + mu * np.log(7) * v.sum() + 1e-9
        eps = 1e-6 * mu
        fd = np.array(
            [
                (
                    loss.smoothed_value_and_grad(s + eps * e, y, smoothing=mu, qid=qid)[
                        0
                    ]
                    - loss.smoothed_value_and_grad(
                        s - eps * e, y, smoothing=mu, qid=qid
                    )[0]
                )
                / (2 * eps)
                for e in np.eye(s.size)
            ]
        )
        assert_allclose(grad, fd, rtol=1e-4, atol=1e-6)
    value, _ = loss.smoothed_value_and_grad(s, y, smoothing=1e-4, qid=qid)
    assert value == pytest.approx(exact, abs=1e-3)


def test_ranksvm_gradient_norm_grows_with_m():
    for m, r in ((6, 2), (10, 5), (20, 7)):
        y = np.r_[np.ones(r), np.zeros(m - r)]
        grad = PairwiseHingeSurrogate().grad(np.zeros(m), y)
        assert np.abs(grad).sum() == pytest.approx(2 * r * (m - r))
        slam_grad = SLAMSurrogate(weights="map").grad(np.zeros(m), y)
        assert np.abs(slam_grad).sum() <= 2.0 + 1e-12


def test_listnet(rng):
    loss = ListNetSurrogate()
    for _ in range(50):
        m = int(rng.integers(1, 8))
        y = rng.integers(0, 4, size=m).astype(float)
        s = rng.normal(size=m) * 3
        p = np.exp(y) / np.exp(y).sum()
        q = np.exp(s) / np.exp(s).sum()
        value, grad = loss.value_and_grad(s, y)
        assert value == pytest.approx(-np.sum(p * np.log(q)))
        assert_allclose(grad, q - p, atol=1e-12)
        assert np.abs(grad).sum() <= 2 + 1e-12


@pytest.mark.parametrize(
    ("factory", "match"),
    [
        (lambda: SLAMSurrogate(weights="err"), "weights must be one of"),
        (lambda: SLAMSurrogate(weights="ndcg@k"), "integer k"),
        (lambda: SLAMSurrogate(weights="ndcg", k=3), "k is only used"),
        (lambda: SLAMSurrogate(margin=-1), "margin"),
        (lambda: SLAMSurrogate(weights=[1.0, -1.0]), "non-negative"),
        (lambda: slam_weights([2, 1, 0], weights="map"), "binary"),
        (lambda: slam_weights([1, -1, 0]), ">= 0"),
        (
            lambda: SLAMSurrogate().smoothed_value_and_grad([0], [1], smoothing=0),
            "positive",
        ),
    ],
)
def test_invalid(factory, match):
    with pytest.raises(ValueError, match=match):
        factory()


@pytest.mark.parametrize("margin", [-1, np.inf, np.nan, True, "1", None])
def test_the_margin_is_checked_alike(margin):
    # SLAM and the pairwise comparison loss share one check of their margin
    from treerank.surrogates import PairwiseComparisonLoss

    for factory in (SLAMSurrogate, PairwiseComparisonLoss):
        with pytest.raises(ValueError, match="margin must be a finite number >= 0"):
            factory(margin=margin)
