"""Volume under the ROC surface and the cumulative AUCs of ordered grades."""

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score as sk_roc_auc_score

from treerank.metrics import (
    cumulative_auc_scores,
    volume_under_surface,
    volume_under_surface_from_counts,
)
from treerank.metrics._vus import _vus_from_masses
from treerank.utils import check_graded_target


def _vus_bruteforce(y, s, w=None):
    """Exact VUS over all K-tuples (one sample per grade), as a Fraction."""
    y = list(y)
    w = [1] * len(y) if w is None else [int(v) for v in w]
    grades = sorted(set(y))
    members = [[i for i in range(len(y)) if y[i] == g] for g in grades]
    totals = [sum(w[i] for i in m) for m in members]
    value = Fraction(0)
    for tup in itertools.product(*members):
        weight = math.prod(w[i] for i in tup)
        if weight == 0:
            continue
        scores = [s[i] for i in tup]
        if any(a > b for a, b in itertools.pairwise(scores)):
            continue
        factor = 1
        for _, run in itertools.groupby(scores):
            factor *= math.factorial(len(list(run)))
        value += Fraction(weight, factor)
    return value / math.prod(totals)


def _exact_masses(y, s, w):
    """The (K, G) Fraction probabilities the dynamic program runs on."""
    grades, values = sorted(set(y)), sorted(set(s))
    mass = np.array([[Fraction(0)] * len(values) for _ in grades], dtype=object)
    for yi, si, wi in zip(y, s, w):
        mass[grades.index(yi), values.index(si)] += wi
    for k in range(len(grades)):
        total = sum(mass[k])
        mass[k] = [m / total for m in mass[k]]
    return mass


def _random_case(rng, weighted):
    n_grades = int(rng.randint(2, 5))
    n = int(rng.randint(n_grades, 10))
    y = np.concatenate([np.arange(n_grades), rng.randint(0, n_grades, n - n_grades)])
    rng.shuffle(y)
    s = rng.randint(0, int(rng.randint(1, 5)), n)  # few values: many ties
    w = rng.randint(0, 4, n) if weighted else np.ones(n, dtype=int)
    for k in range(n_grades):  # every grade keeps a positive weight
        members = np.flatnonzero(y == k)
        if w[members].sum() == 0:
            w[members[0]] = 1
    return y, s, w


def test_vus_matches_bruteforce_on_1000_random_inputs_with_ties():
    rng = np.random.RandomState(0)
    for case in range(1000):
        y, s, w = _random_case(rng, weighted=case % 2 == 1)
        expected = _vus_bruteforce(y, s, w)
        got = volume_under_surface(y, s, sample_weight=w)
        assert got == pytest.approx(float(expected), abs=1e-12), (y, s, w)
        # the same dynamic program on exact fractions gives the exact value
        assert _vus_from_masses(_exact_masses(list(y), list(s), list(w))) == expected


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 2), st.integers(-2, 2)), min_size=3, max_size=9
    ).filter(lambda rows: len({g for g, _ in rows}) == 3)
)
def test_vus_three_grades_property(rows):
    y, s = zip(*rows)
    assert volume_under_surface(y, s) == pytest.approx(
        float(_vus_bruteforce(y, s)), abs=1e-12
    )


def test_two_grades_is_the_roc_auc():
    rng = np.random.RandomState(1)
    for _ in range(200):
        n = int(rng.randint(2, 40))
        y = rng.randint(0, 2, n)
        y[:2] = [0, 1]
        s = rng.randint(0, 5, n) + (rng.rand(n) < 0.3) * rng.rand(n)
        w = rng.rand(n) * (rng.rand(n) < 0.8)
        w[:2] = 1.0
        assert volume_under_surface(y, s) == pytest.approx(sk_roc_auc_score(y, s))
        assert volume_under_surface(y, s, sample_weight=w) == pytest.approx(
            sk_roc_auc_score(y, s, sample_weight=w)
        )


def test_integer_weights_equal_repeated_rows():
    rng = np.random.RandomState(2)
    for _ in range(100):
        y, s, w = _random_case(rng, weighted=True)
        repeated = np.repeat(np.arange(y.shape[0]), w)
        assert volume_under_surface(y, s, sample_weight=w) == pytest.approx(
            volume_under_surface(y[repeated], s[repeated]), abs=1e-12
        )
        # scaling the weights changes nothing
        assert volume_under_surface(y, s, sample_weight=w) == pytest.approx(
            volume_under_surface(y, s, sample_weight=0.37 * w), abs=1e-12
        )


@pytest.mark.parametrize("n_grades", [2, 3, 4, 5])
def test_constant_scores_give_the_random_scorer_value(n_grades):
    y = np.repeat(np.arange(n_grades), 3)
    assert volume_under_surface(y, np.zeros(y.shape[0])) == pytest.approx(
        1 / math.factorial(n_grades)
    )


def test_perfect_and_reversed_scorers():
    y = np.repeat(np.arange(4), 5)
    s = y + np.linspace(0, 0.5, y.shape[0])
    assert volume_under_surface(y, s) == 1.0
    assert volume_under_surface(y, -s) == 0.0


def test_invariances():
    rng = np.random.RandomState(3)
    y = rng.randint(0, 3, 60)
    s = rng.randint(0, 8, 60).astype(float)
    value = volume_under_surface(y, s)
    # increasing transforms of the scores, permutations of the rows
    assert volume_under_surface(y, np.exp(s)) == pytest.approx(value)
    order = rng.permutation(60)
    assert volume_under_surface(y[order], s[order]) == pytest.approx(value)
    # reversing the grade order and the scores together
    assert volume_under_surface(-y, -s) == pytest.approx(value)
    assert volume_under_surface(y, -s, labels=[2, 1, 0]) == pytest.approx(value)
    # grades given by labels, in any type
    names = np.array(["low", "mid", "high"])[y]
    assert volume_under_surface(
        names, s, labels=["low", "mid", "high"]
    ) == pytest.approx(value)


def test_three_grades_large_input_runs_and_matches_a_monte_carlo_estimate():
    rng = np.random.RandomState(4)
    n = 200_000
    y = rng.randint(0, 3, n)
    s = y + rng.normal(scale=1.5, size=n)
    value = volume_under_surface(y, s)
    groups = [s[y == k] for k in range(3)]
    draws = [rng.choice(g, 400_000) for g in groups]
    estimate = np.mean((draws[0] < draws[1]) & (draws[1] < draws[2]))
    assert value == pytest.approx(estimate, abs=0.005)


@pytest.mark.parametrize(
    ("y", "s", "kwargs", "match"),
    [
        ([1, 1, 1], [0.1, 0.2, 0.3], {}, "at least two grades"),
        ([0, 1, 2], [0.1, np.nan, 0.3], {}, "y_score contains NaN"),
        ([0, 1, np.nan], [0.1, 0.2, 0.3], {}, "y_true contains NaN"),
        ([0, 1, 2], [0.1, 0.2], {}, "2 elements but 3"),
        ([0, 1, 1], [0.1, 0.2, 0.3], {"labels": [0, 1, 2]}, r"lacks the grades \[2\]"),
        ([0, 1, 3], [0.1, 0.2, 0.3], {"labels": [0, 1, 2]}, r"not in labels: \[3\]"),
        ([0, 1, 2], [0.1, 0.2, 0.3], {"labels": [0, 1, 1]}, "must be distinct"),
        (["a", "b"], [0.1, 0.2], {}, "labels=.lowest"),
        ([], [], {}, "empty"),
        ([[0, 1], [1, 0]], [0.1, 0.2], {}, "one-dimensional"),
        (
            [0, 1, 2],
            [0.1, 0.2, 0.3],
            {"sample_weight": [1, 0, 1]},
            r"grades \[1\] have zero total",
        ),
        ([0, 1, 2], [0.1, 0.2, 0.3], {"sample_weight": [1, -1, 1]}, "negative"),
    ],
)
def test_errors(y, s, kwargs, match):
    with pytest.raises(ValueError, match=match):
        volume_under_surface(y, s, **kwargs)


def test_cumulative_auc_scores_match_scikit_learn():
    rng = np.random.RandomState(5)
    for _ in range(100):
        n_grades = int(rng.randint(2, 6))
        n = int(rng.randint(n_grades, 50))
        y = np.concatenate(
            [np.arange(n_grades), rng.randint(0, n_grades, n - n_grades)]
        )
        s = rng.randint(0, 6, n).astype(float)
        w = rng.rand(n) + 0.1
        got = cumulative_auc_scores(y * 10, s, sample_weight=w)
        expected = [
            sk_roc_auc_score(y >= k, s, sample_weight=w) for k in range(1, n_grades)
        ]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)


def test_check_graded_target():
    codes, _ = check_graded_target([True, False, True])
    np.testing.assert_array_equal(codes, [1, 0, 1])
    codes, _ = check_graded_target(
        ["b", "a"], labels=["b", "x", "a"], allow_missing=True
    )
    np.testing.assert_array_equal(codes, [0, 2])
    with pytest.raises(ValueError, match=r"values not in labels: \[1, 2\]"):
        check_graded_target([1, 2], labels=["a", "b"])


def test_from_counts_equals_the_scores_version():
    rng = np.random.RandomState(6)
    for _ in range(100):
        n_buckets, n_grades = int(rng.randint(1, 6)), int(rng.randint(2, 5))
        counts = rng.randint(0, 4, size=(n_buckets, n_grades))
        counts[0] += counts.sum(axis=0) == 0
        y = np.repeat(np.tile(np.arange(n_grades), n_buckets), counts.ravel())
        bucket = np.repeat(np.repeat(np.arange(n_buckets), n_grades), counts.ravel())
        assert volume_under_surface_from_counts(counts) == pytest.approx(
            volume_under_surface(y, -bucket), abs=1e-12
        )
    with pytest.raises(ValueError, match="positive total"):
        volume_under_surface_from_counts([[1, 0], [2, 0]])
    with pytest.raises(ValueError, match="at least two grades"):
        volume_under_surface_from_counts([[1], [2]])
    with pytest.raises(ValueError, match="non-negative"):
        volume_under_surface_from_counts([[1, -1], [2, 3]])
