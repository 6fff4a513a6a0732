"""Bipartite metrics: ROC curves, AUC, partial AUC, ROC distances, Kendall distance."""

import itertools

import numpy as np
import pytest
from scipy import integrate, stats
from sklearn import metrics as sk_metrics
from sklearn.exceptions import UndefinedMetricWarning

from treerank.metrics import (
    kendall_tau_distance,
    partial_auc_score,
    roc_auc_score,
    roc_curve,
    roc_curve_from_counts,
    roc_l1_distance,
    roc_sup_distance,
    tpr_at_fpr,
)


def _auc_bruteforce(y, s, w=None):
    """Weighted fraction of (positive, negative) pairs ranked right, ties 1/2."""
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
    diff = s[pos][:, None] - s[neg][None, :]
    pair_w = w[pos][:, None] * w[neg][None, :]
    return float(
        ((diff > 0) + 0.5 * (diff == 0)).ravel() @ pair_w.ravel() / pair_w.sum()
    )


def _kendall_bruteforce(a, b, w):
    num = den = 0.0
    for i, j in itertools.combinations(range(len(a)), 2):
        d1, d2 = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
        u = 1.0 if d1 * d2 < 0 else (0.5 if (d1 == 0) != (d2 == 0) else 0.0)
        num += w[i] * w[j] * u
        den += w[i] * w[j]
    return num, den


@pytest.mark.parametrize("seed", range(5))
def test_roc_auc_matches_bruteforce_with_ties_and_weights(seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, 60)
    s = rng.integers(0, 6, 60).astype(float)  # many ties
    w = rng.random(60)
    assert roc_auc_score(y, s, sample_weight=w) == pytest.approx(
        _auc_bruteforce(y, s, w), abs=1e-12
    )


def test_roc_curve_is_sklearns_with_all_knots():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 50)
    s = rng.normal(size=50)
    fpr, tpr, thr = roc_curve(y, s)
    ref = sk_metrics.roc_curve(y, s, drop_intermediate=False)
    for a, b in zip((fpr, tpr, thr), ref):
        np.testing.assert_array_equal(a, b)


def test_auc_labels_minus_one_one_and_bool():
    s = np.array([0.1, 0.4, 0.35, 0.8])
    assert roc_auc_score([-1, -1, 1, 1], s) == roc_auc_score([0, 0, 1, 1], s)
    assert roc_auc_score([False, False, True, True], s) == roc_auc_score(
        [0, 0, 1, 1], s
    )


def test_auc_single_class_warns_and_returns_nan():
    with pytest.warns(UndefinedMetricWarning, match="Only one class"):
        assert np.isnan(roc_auc_score([1, 1, 1], [0.1, 0.2, 0.3]))


@pytest.mark.parametrize(
    ("y", "s", "match"),
    [
        (["a", "b"], [0.1, 0.2], "non-numeric labels"),
        ([0, 1, 2], [0.1, 0.2, 0.3], "exactly two classes"),
        ([0, 1], [0.1, np.nan], "y_score contains NaN"),
        ([0, 1, 1], [0.1, 0.2], "y_score has 2 elements but 3"),
        ([], [], "empty"),
    ],
)
def test_auc_bad_input(y, s, match):
    with pytest.raises(ValueError, match=match):
        roc_auc_score(y, s)


def test_roc_curve_from_counts_equals_roc_of_tied_scores():
    rng = np.random.default_rng(1)
    buckets = rng.integers(0, 5, 200)  # bucket 0 is the best
    y = (rng.random(200) < 0.2 + 0.15 * (4 - buckets)).astype(int)
    w = rng.random(200) + 0.1
    pos = np.bincount(buckets, weights=w * y, minlength=5)
    neg = np.bincount(buckets, weights=w * (1 - y), minlength=5)
    fpr, tpr = roc_curve_from_counts(pos, neg)
    ref_fpr, ref_tpr, _ = sk_metrics.roc_curve(y, -buckets, sample_weight=w)
    np.testing.assert_allclose(fpr, ref_fpr, atol=1e-12)
    np.testing.assert_allclose(tpr, ref_tpr, atol=1e-12)
    assert integrate.trapezoid(tpr, fpr) == pytest.approx(
        _auc_bruteforce(y, -buckets.astype(float), w), abs=1e-12
    )


def test_roc_curve_from_counts_errors():
    with pytest.raises(ValueError, match="same length"):
        roc_curve_from_counts([1, 2], [1])
    with pytest.raises(ValueError, match="non-negative"):
        roc_curve_from_counts([1, -2], [1, 1])
    with pytest.raises(ValueError, match="Both classes"):
        roc_curve_from_counts([0, 0], [1, 1])


@pytest.mark.parametrize("max_fpr", [0.05, 0.3, 0.5, 1.0])
def test_partial_auc_raw_and_standardized(max_fpr):
    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 300)
    s = y + rng.normal(size=300)
    s[:30] = 0.0  # a tied block
    fpr, tpr, _ = sk_metrics.roc_curve(y, s)
    raw, _ = integrate.quad(
        lambda t: np.interp(t, fpr, tpr),
        0,
        max_fpr,
        points=fpr[fpr < max_fpr],
        limit=500,
    )
    assert partial_auc_score(
        y, s, max_fpr=max_fpr, standardized=False
    ) == pytest.approx(raw, abs=1e-9)
    assert partial_auc_score(y, s, max_fpr=max_fpr, standardized=True) == pytest.approx(
        sk_metrics.roc_auc_score(y, s, max_fpr=max_fpr), abs=1e-12
    )


def test_partial_auc_rejects_bad_max_fpr():
    with pytest.raises(ValueError, match=r"max_fpr must be a number in \(0, 1\]"):
        partial_auc_score([0, 1], [0.1, 0.2], max_fpr=0)


def test_tpr_at_fpr_interpolates_and_takes_top_of_vertical_segments():
    y = np.array([0, 0, 1, 1])
    s = np.array([0.1, 0.4, 0.35, 0.8])
    # knots (0,0) (0,.5) (.5,.5) (.5,1) (1,1)
    np.testing.assert_allclose(
        tpr_at_fpr(y, s, [0.0, 0.25, 0.5, 0.75]), [0.5, 0.5, 1.0, 1.0]
    )
    with pytest.raises(ValueError, match=r"fpr must lie in \[0, 1\]"):
        tpr_at_fpr(y, s, 1.5)


def _dense_sup_and_l1(c1, c2, n=200001):
    grid = np.linspace(0, 1, n)
    d = np.abs(np.interp(grid, *c1) - np.interp(grid, *c2))
    return d.max(), integrate.trapezoid(d, grid)


def test_roc_distances_match_dense_evaluation_on_concave_curves():
    rng = np.random.default_rng(3)
    for _ in range(20):
        curves = []
        for _ in range(2):
            slopes = np.sort(rng.random(6))[::-1]
            widths = rng.dirichlet(np.ones(6))
            fpr = np.concatenate([[0], np.cumsum(widths)])
            tpr = np.concatenate([[0], np.cumsum(widths * slopes)])
            fpr[-1] = 1.0
            tpr /= tpr[-1]
            curves.append((fpr, tpr))
        sup, l1 = _dense_sup_and_l1(*curves)
        assert roc_sup_distance(*curves) >= sup - 1e-12
        assert roc_sup_distance(*curves) == pytest.approx(sup, abs=1e-5)
        assert roc_l1_distance(*curves) == pytest.approx(l1, abs=1e-7)


def test_roc_distances_exact_values_with_vertical_segments():
    perfect = ([0, 0, 1], [0, 1, 1])
    diagonal = ([0, 1], [0, 1])
    worst = ([0, 1, 1], [0, 0, 1])
    assert roc_sup_distance(perfect, diagonal) == 1.0
    assert roc_l1_distance(perfect, diagonal) == 0.5
    assert roc_sup_distance(perfect, worst) == 1.0
    assert roc_l1_distance(perfect, worst) == 1.0
    # crossing curves: |x^... | integral split at the crossing point
    c1 = ([0, 0.5, 1], [0, 0.75, 1])
    c2 = ([0, 0.5, 1], [0, 0.25, 1])
    assert roc_l1_distance(c1, c2) == pytest.approx(0.25)
    c3 = ([0, 0.5, 1], [0, 1.0, 1])
    c4 = ([0, 1], [0, 1])
    # difference 1.0*t on [0,.5] then 1-t... : integral = 0.25
    assert roc_l1_distance(c3, c4) == pytest.approx(0.25)
    c5 = ([0, 0.25, 0.75, 1], [0, 0.5, 0.5, 1])  # crosses the diagonal at 0.5
    assert roc_l1_distance(c5, c4) == pytest.approx(
        integrate.quad(
            lambda t: abs(np.interp(t, *c5) - t), 0, 1, points=[0.25, 0.5, 0.75]
        )[0],
        abs=1e-10,
    )


def test_roc_distances_reject_bad_curves():
    with pytest.raises(ValueError, match="non-decreasing"):
        roc_sup_distance(([0, 1, 0.5], [0, 1, 1]), ([0, 1], [0, 1]))
    with pytest.raises(ValueError, match=r"span the whole false positive range"):
        roc_l1_distance(([0, 0.5], [0, 1]), ([0, 1], [0, 1]))
    with pytest.raises(ValueError, match="pair"):
        roc_l1_distance(np.zeros(3), ([0, 1], [0, 1]))


@pytest.mark.parametrize("seed", range(30))
def test_kendall_distance_matches_bruteforce(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 25))
    a = rng.integers(0, 4, n).astype(float)
    b = rng.integers(0, 4, n).astype(float)
    w = rng.random(n) * (rng.random(n) > 0.2)
    w[:2] += 0.5
    num, den = _kendall_bruteforce(a, b, w)
    assert kendall_tau_distance(
        a, b, sample_weight=w, normalize=False
    ) == pytest.approx(num, abs=1e-12)
    assert kendall_tau_distance(a, b, sample_weight=w) == pytest.approx(
        num / den, abs=1e-12
    )


def test_kendall_distance_invariances_and_scipy_reference():
    rng = np.random.default_rng(7)
    a = rng.normal(size=3000)
    b = a + rng.normal(size=3000)
    d = kendall_tau_distance(a, b)
    # no ties: d = (1 - tau_a) / 2
    assert d == pytest.approx((1 - stats.kendalltau(a, b).statistic) / 2, abs=1e-12)
    # monotone transforms and symmetry
    assert kendall_tau_distance(np.exp(a), 3 * b - 1) == pytest.approx(d, abs=1e-15)
    assert kendall_tau_distance(b, a) == pytest.approx(d, abs=1e-15)
    # permutation of the sample
    perm = rng.permutation(3000)
    assert kendall_tau_distance(a[perm], b[perm]) == pytest.approx(d, abs=1e-15)
    # integer weights == repeated rows (unnormalized pair sums)
    counts = rng.integers(0, 3, 200)
    x, z = rng.integers(0, 5, 200), rng.integers(0, 5, 200)
    repeated = kendall_tau_distance(
        np.repeat(x, counts), np.repeat(z, counts), normalize=False
    )
    weighted = kendall_tau_distance(x, z, sample_weight=counts, normalize=False)
    assert weighted == pytest.approx(repeated, abs=1e-9)


def test_kendall_distance_errors():
    with pytest.raises(ValueError, match="At least two samples"):
        kendall_tau_distance([1.0], [2.0])
    with pytest.raises(ValueError, match="s2 has 2 elements but 3"):
        kendall_tau_distance([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="sample_weight contains negative"):
        kendall_tau_distance([1, 2], [1, 2], sample_weight=[1, -1])
    with pytest.raises(ValueError, match="no pair of positive weight"):
        kendall_tau_distance([1, 2], [1, 2], sample_weight=[1, 0])
