"""PositionalMetric: GPPM identities, agreement with the list metrics, Bayes sets.

- the GPPM form ``offset(y) + sum_k phi(k) u_{sigma(k)}(y)`` of DCG@k, NDCG@k,
  P@k, R@k, AUC (offset -(P-1)/(2N)) and Spearman (offset -3(n-1)/(n+1)) equals
  the textbook definition for every permutation of lists of n <= 6 items;
- the object and the metric functions agree exactly (fractions) for every tie
  policy;
- ``bayes_optimal_rankings`` is the brute-force argmax set of the expected value;
- ``weight_gap_norm`` reproduces the table of reference/seeds-000-001.md
  section 4, and the worked regret fixture of the same section.
"""

import itertools
import math
from fractions import Fraction as F

import numpy as np
import pytest
from test_list_metrics_reference import (
    mean,
    ref_auc,
    ref_dcg,
    ref_ndcg,
    ref_precision_at_k,
    ref_recall_at_k,
    ref_spearman,
    tie_breakings,
)

from treerank.metrics import (
    PositionalMetric,
    dcg_score,
    list_auc,
    ndcg_score,
    precision_at_k,
    recall_at_k,
    spearman_rho,
)


def _factories(n):
    """(name, metric object, metric function, its options, labels, exact, reference)."""
    k = max(1, n // 2)
    if n < 2:  # the AUC and Spearman are undefined for one item
        pairwise = []
    else:
        pairwise = [
            ("auc", PositionalMetric.auc(n), list_auc, {}, "binary", True, ref_auc),
            (
                "spearman",
                PositionalMetric.spearman(n),
                spearman_rho,
                {},
                "ranks",
                True,
                ref_spearman,
            ),
        ]
    return [
        *pairwise,
        ("dcg", PositionalMetric.dcg(n), dcg_score, {}, "graded", False, ref_dcg),
        (
            "dcg@k-linear",
            PositionalMetric.dcg(n, k=k, gain="linear"),
            dcg_score,
            {"k": k, "gain": "linear"},
            "graded",
            False,
            lambda y, r: ref_dcg(y, r, k, "linear"),
        ),
        ("ndcg", PositionalMetric.ndcg(n), ndcg_score, {}, "graded", False, ref_ndcg),
        (
            "ndcg@k",
            PositionalMetric.ndcg(n, k=k),
            ndcg_score,
            {"k": k},
            "graded",
            False,
            lambda y, r: ref_ndcg(y, r, k),
        ),
        (
            "p@k",
            PositionalMetric.precision_at_k(n, k),
            precision_at_k,
            {"k": k},
            "binary",
            True,
            lambda y, r: ref_precision_at_k(y, r, k),
        ),
        (
            "r@k",
            PositionalMetric.recall_at_k(n, k),
            recall_at_k,
            {"k": k},
            "binary",
            True,
            lambda y, r: ref_recall_at_k(y, r, k),
        ),
    ]


def _labels(kind, n, rng, count):
    out = []
    for _ in range(count):
        if kind == "binary":
            y = rng.integers(0, 2, n)
        elif kind == "ranks":
            y = rng.permutation(n) + 1
        else:
            y = rng.integers(0, 4, n)
        out.append([F(int(v)) for v in y])
    return out


def _or_zero(value):
    return 0 if value is None else value


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_gppm_identity_for_every_permutation(n):
    rng = np.random.default_rng(n)
    for name, metric, _, _, kind, exact, reference in _factories(n):
        for y in _labels(kind, n, rng, 2 if n == 6 else 5):
            y_in = y if exact else [int(v) for v in y]
            for ranking in itertools.permutations(range(n)):
                value = metric.value(y_in, ranking)
                expected = _or_zero(reference(y, ranking))
                if exact:
                    assert isinstance(value, F), name
                    assert value == expected, (name, y, ranking)
                else:
                    assert value == pytest.approx(float(expected), abs=1e-12), name


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_auc_offset_is_minus_p_minus_one_over_two_n(n):
    auc = PositionalMetric.auc(n)
    for index, bits in enumerate(itertools.product([0, 1], repeat=n)):
        positives = sum(bits)
        negatives = n - positives
        y = [F(b) for b in bits]
        if positives == 0 or negatives == 0:
            assert auc.offset(y) == 0
            continue
        assert auc.offset(y) == F(-(positives - 1), 2 * negatives)
        if n == 6 and index % 8:  # every permutation for every 8th label vector
            continue
        for ranking in itertools.permutations(range(n)):
            assert auc.value(y, ranking) == ref_auc(bits, ranking)


def test_spearman_offset_and_utility():
    n = 5
    metric = PositionalMetric.spearman(n)
    y = [3, 1, 2, 5, 4]
    assert metric.offset(y) == F(-3 * (n - 1), n + 1)
    expected = [F(12 * (n - v), n * (n * n - 1)) for v in y]
    assert list(metric.utility([F(v) for v in y])) == expected


@pytest.mark.parametrize("ties", ["average", "pessimistic", "optimistic", "stable"])
def test_object_and_functions_agree_exactly(ties):
    rng = np.random.default_rng(0)
    for n in [1, 2, 3, 4, 5, 6]:
        for name, metric, function, options, kind, exact, _ in _factories(n):
            for y in _labels(kind, n, rng, 5):
                y_in = y if exact else [int(v) for v in y]
                scores = rng.integers(0, 3, n).astype(float)
                from_object = metric.value_from_scores(y_in, scores, ties=ties)
                from_function = function(y_in, scores, ties=ties, **options)
                if exact:
                    assert isinstance(from_object, F)
                    assert from_object == from_function, (name, y, scores)
                else:
                    assert from_object == pytest.approx(from_function, abs=1e-12)


def test_value_from_scores_averages_over_tie_orders():
    rng = np.random.default_rng(1)
    for n in [3, 5, 7]:
        for name, metric, _, _, kind, exact, _ in _factories(n):
            y = _labels(kind, n, rng, 1)[0]
            scores = [int(v) for v in rng.integers(0, 2, n)]
            orders = list(tie_breakings(scores))
            if exact:
                expected = mean(metric.value(y, r) for r in orders)
                assert metric.value_from_scores(y, np.array(scores, float)) == expected
            else:
                y_int = [int(v) for v in y]
                expected = np.mean([metric.value(y_int, r) for r in orders])
                actual = metric.value_from_scores(y_int, np.array(scores, float))
                assert actual == pytest.approx(expected, abs=1e-12), name


def _random_distribution(kind, n, rng, support):
    weights = [int(w) for w in rng.integers(1, 4, support)]
    total = sum(weights)
    labels = _labels(kind, n, rng, support)
    return [(y, F(w, total)) for y, w in zip(labels, weights)]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_bayes_optimal_rankings_are_the_brute_force_argmax(n):
    rng = np.random.default_rng(10 + n)
    for name, metric, _, _, kind, exact, _ in _factories(n):
        if not exact:
            continue
        for support in [1, 2, 3]:
            dist = _random_distribution(kind, n, rng, support)
            values = {
                r: metric.expected_value(dist, r)
                for r in itertools.permutations(range(n))
            }
            best = max(values.values())
            expected = sorted(r for r, v in values.items() if v == best)
            assert metric.bayes_optimal_rankings(dist) == expected, (name, dist)
            # sorting by expected utility always gives an optimal ranking
            utility = metric.expected_utility(dist)
            by_utility = tuple(sorted(range(n), key=lambda i: -utility[i]))
            assert by_utility in expected


def test_bayes_optimal_rankings_with_tied_expected_utilities():
    # items 0 and 1 always relevant together: every order of them is optimal
    dist = [([F(1), 1, 0], F(1, 2)), ([F(0), 0, 1], F(1, 4)), ([F(0), 0, 0], F(1, 4))]
    dcg = PositionalMetric.dcg(3)
    assert dcg.bayes_optimal_rankings(dist) == [(0, 1, 2), (1, 0, 2)]
    # strictly decreasing phi: exactly the rankings sorting U
    auc = PositionalMetric.auc(3)
    assert auc.bayes_optimal_rankings(dist) == [(0, 1, 2), (1, 0, 2)]
    # P@1 only cares about the first item
    p1 = PositionalMetric.precision_at_k(3, 1)
    assert p1.bayes_optimal_rankings(dist) == [
        (0, 1, 2),
        (0, 2, 1),
        (1, 0, 2),
        (1, 2, 0),
    ]


def test_bayes_optimal_rankings_with_float_probabilities_and_atol():
    dist = [([1, 0, 0], 0.1), ([0, 1, 0], 0.3), ([1, 0, 1], 0.2), ([0, 0, 1], 0.4)]
    metric = PositionalMetric.dcg(3)
    # E[y] = (0.3, 0.3, 0.6), but 0.1 + 0.2 != 0.3 in floating point
    assert len(metric.bayes_optimal_rankings(dist)) == 1
    assert metric.bayes_optimal_rankings(dist, atol=1e-12) == [(2, 0, 1), (2, 1, 0)]


def test_fixture_f_dcg_bayes_ranking_and_gap():
    """Fixture F of seeds-000-001.md section 3.2 (binary DCG, n = 4)."""
    dist = [
        ([0, 0, 1, 0], F(7, 33)),
        ([1, 0, 0, 0], F(9, 33)),
        ([0, 1, 1, 0], F(10, 33)),
        ([0, 0, 1, 1], F(3, 33)),
        ([1, 1, 0, 1], F(4, 33)),
    ]
    dist = [([F(v) for v in y], p) for y, p in dist]
    dcg = PositionalMetric.dcg(4)
    assert [u * 33 for u in dcg.expected_utility(dist)] == [13, 14, 20, 7]
    assert dcg.bayes_optimal_rankings(dist) == [(2, 1, 0, 3)]
    decoded = (2, 0, 1, 3)  # the RankNet-style minimizer's ranking
    assert dcg.expected_value(dist, decoded) == pytest.approx(1.158086, abs=1e-6)
    assert dcg.expected_value(dist, (2, 1, 0, 3)) == pytest.approx(1.162053, abs=1e-6)
    gap = dcg.expected_value(dist, (2, 1, 0, 3)) - dcg.expected_value(dist, decoded)
    assert gap == pytest.approx((1 / math.log2(3) - 0.5) / 33)


@pytest.mark.parametrize(
    ("n", "expected"),
    [(2, 0.369070), (3, 0.5), (4, 0.584185), (5, 0.645020), (10, 0.811622)],
)
def test_c_phi_table_for_full_dcg(n, expected):
    metric = PositionalMetric.dcg(n)
    assert metric.weight_gap_norm(2) == pytest.approx(expected, abs=1e-6)
    # C_phi(2) is smaller than ||phi||_2
    assert metric.weight_gap_norm(2) < np.linalg.norm(metric.phi)


def test_c_phi_other_exponents():
    phi = PositionalMetric.dcg(4).phi
    gaps = np.array([phi[0] - phi[3], phi[1] - phi[2]])
    metric = PositionalMetric.dcg(4)
    assert metric.weight_gap_norm(1) == pytest.approx(gaps.sum())
    assert metric.weight_gap_norm(np.inf) == pytest.approx(gaps.max())
    assert metric.weight_gap_norm(3) == pytest.approx(np.sum(gaps**3) ** (1 / 3))
    # P@2 on 4 items: phi = (1/2, 1/2, 0, 0)
    assert PositionalMetric.precision_at_k(4, 2).weight_gap_norm(2) == pytest.approx(
        math.sqrt(0.5)
    )
    with pytest.raises(ValueError, match="p must be a number >= 1"):
        metric.weight_gap_norm(0.5)


def test_worked_regret_fixture():
    """seeds-000-001.md section 4: DCG n = 3, y = (2, 1, 0), so U = (3, 1, 0)."""
    dcg = PositionalMetric.dcg(3)
    y = [2, 1, 0]
    best = dcg.value(y, (0, 1, 2))
    assert best == pytest.approx(3.630930, abs=1e-6)
    cases = [((1, 1.5, 0), 2.892789), ((2, 2, 0), 3.261860), ((0, 0, 0), 2.841240)]
    for scores, value in cases:
        assert dcg.value_from_scores(y, scores) == pytest.approx(value, abs=1e-6)
        regret = best - dcg.value_from_scores(y, scores)
        surrogate_regret = float(np.sum((np.array(scores) - np.array([3, 1, 0])) ** 2))
        bound = math.sqrt(2) * dcg.weight_gap_norm(2) * math.sqrt(surrogate_regret)
        assert regret <= bound * (1 + 1e-9) + 1e-12


def test_custom_metric_with_fraction_weights():
    metric = PositionalMetric([F(1), F(1, 2), F(1, 4)], lambda y: np.asarray(y))
    assert metric.value([F(1), 0, 1], [2, 1, 0]) == F(5, 4)
    assert metric.value_from_scores([F(1), 0, 1], [0.0, 0.0, 0.0]) == F(7, 6)
    assert metric.phi.tolist() == [1.0, 0.5, 0.25]
    assert metric.offset([0, 0, 0]) == 0
    with_offset = PositionalMetric([2.0, 1.0], lambda y: np.asarray(y), lambda y: -1.0)
    assert with_offset.value([1, 0], [0, 1]) == 1.0
    assert with_offset.expected_value([([1, 0], 0.5), ([0, 1], 0.5)], [0, 1]) == 0.5


def test_constructor_validation():
    utility = np.asarray
    with pytest.raises(ValueError, match="non-increasing"):
        PositionalMetric([1.0, 2.0], utility)
    with pytest.raises(ValueError, match=r"phi\(1\) must be positive"):
        PositionalMetric([0.0, 0.0], utility)
    with pytest.raises(ValueError, match="non-negative"):
        PositionalMetric([1.0, -1.0], utility)
    with pytest.raises(ValueError, match="non-empty one-dimensional"):
        PositionalMetric([], utility)
    with pytest.raises(ValueError, match="NaN or infinity"):
        PositionalMetric([np.inf, 1.0], utility)
    with pytest.raises(ValueError, match="utility must be a callable"):
        PositionalMetric([1.0], [1.0])
    with pytest.raises(ValueError, match="offset must be None or a callable"):
        PositionalMetric([1.0], utility, offset=0.5)
    bad = PositionalMetric([1.0, 0.5], lambda y: np.ones(3))
    with pytest.raises(ValueError, match="utility"):
        bad.value([1, 0], [0, 1])


def test_factory_validation():
    with pytest.raises(ValueError, match="n_items must be an integer >= 2"):
        PositionalMetric.auc(1)
    with pytest.raises(ValueError, match="n_items must be an integer >= 2"):
        PositionalMetric.spearman(1)
    with pytest.raises(ValueError, match="n_items must be an integer >= 1"):
        PositionalMetric.dcg(0)
    with pytest.raises(ValueError, match="gain must be"):
        PositionalMetric.ndcg(3, gain="log")
    with pytest.raises(ValueError, match="must be binary"):
        PositionalMetric.precision_at_k(3, 1).value([2, 0, 1], [0, 1, 2])
    with pytest.raises(ValueError, match="true ranks"):
        PositionalMetric.spearman(3).value([1, 1, 3], [0, 1, 2])
    with pytest.raises(ValueError, match="y_true has 2 items but 3 were expected"):
        PositionalMetric.dcg(3).value([1, 0], [0, 1, 2])


def test_ranking_validation():
    metric = PositionalMetric.dcg(3)
    for bad in ([0, 1], [0, 1, 1], [1, 2, 3], [0.5, 1, 2]):
        with pytest.raises(ValueError, match="ranking must"):
            metric.value([1, 0, 2], bad)
    assert metric.value([1, 0, 2], np.array([2.0, 0.0, 1.0])) == metric.value(
        [1, 0, 2], (2, 0, 1)
    )


def test_distribution_validation():
    metric = PositionalMetric.dcg(2)
    with pytest.raises(ValueError, match="sum to 1"):
        metric.expected_utility([([1, 0], F(1, 2))])
    with pytest.raises(ValueError, match="sum to 1"):
        metric.expected_utility([([1, 0], 0.5), ([0, 1], 0.4)])
    with pytest.raises(ValueError, match="non-negative"):
        metric.expected_utility([([1, 0], -0.5), ([0, 1], 1.5)])
    with pytest.raises(ValueError, match="2 entries"):
        metric.expected_utility([([1, 0, 0], 1.0)])
    with pytest.raises(ValueError, match="is empty"):
        metric.expected_utility([])
    with pytest.raises(ValueError, match="pairs"):
        metric.expected_utility([(1, 0, 0)])
    with pytest.raises(ValueError, match="atol"):
        metric.bayes_optimal_rankings([([1, 0], 1.0)], atol=-1)


def test_exact_conversion_of_integers_floats_fractions_and_scalars():
    # the one to_exact of the metrics and the surrogates: a float is its exact
    # binary value (the surrogates' labels are float64), a scalar stays a
    # scalar (the metrics' copy failed on one: recall_weight(1, 2, exact=True))
    from treerank.metrics._list_common import to_exact
    from treerank.metrics._positional import auc_weight, recall_weight

    exact = to_exact(np.array([[1, 0], [2, 3]]))
    assert exact.dtype == object and exact.shape == (2, 2)
    assert exact.tolist() == [[F(1), F(0)], [F(2), F(3)]]
    assert all(type(v) is F for v in exact.ravel())
    assert to_exact(np.array([0.5, 0.1])).tolist() == [F(1, 2), F(0.1)]
    assert to_exact(np.array([F(1, 3), 2], dtype=object)).tolist() == [F(1, 3), F(2)]
    assert to_exact(np.array([True, False])).tolist() == [F(1), F(0)]
    assert to_exact(np.int64(3)) == F(3) and type(to_exact(3)) is F
    assert recall_weight(1, 2, exact=True) == F(1)
    assert auc_weight(1, 3, exact=True) == F(2)
