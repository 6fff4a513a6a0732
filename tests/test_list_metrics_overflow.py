"""List metrics never return NaN or infinity silently (overflow and underflow).

Exponential gains ``2**y - 1`` overflow float64 from ``y = 1024`` on, and sums
of large linear gains overflow too. NDCG and ERR are scale-free and are
computed exactly with per-list scaling; DCG and ERU, whose values can truly
exceed float64, raise a clear error instead of returning ``inf`` or ``nan``.
Oracles: exact rational arithmetic (Python integers for ``2**y``). Warnings
are errors in the test suite, so an overflow warning fails these tests too.
"""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from treerank.metrics import (
    PositionalMetric,
    average_precision_score,
    dcg_score,
    err_score,
    expected_rank_utility,
    list_auc,
    ndcg_score,
    pairwise_disagreement,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
    spearman_rho,
)
from treerank.metrics._positional import dcg_discount

FUZZ = settings(max_examples=80, derandomize=True, deadline=None, database=None)
BIG = np.finfo(np.float64).max
TINY = np.finfo(np.float64).smallest_subnormal


def test_the_reported_case():
    assert ndcg_score([1100.0, 1.0, 0.0], [3, 2, 1]) == 1.0
    # reversed: DCG = 2**1100 / log2(4) + ..., IDCG = 2**1100 + ...
    assert ndcg_score([1100.0, 1.0, 0.0], [1, 2, 3]) == pytest.approx(0.5, rel=1e-15)
    with pytest.raises(ValueError, match=r"dcg_score overflows float64.*ndcg_score"):
        dcg_score([1100.0, 1.0, 0.0], [3, 2, 1])


def _exact_ndcg(y, scores, k, gain):
    """NDCG in rational arithmetic: exact gains, the metric's own discounts."""
    n = len(y)
    discount = [Fraction(float(d)) for d in dcg_discount(np.arange(1, n + 1), k)]
    if gain == "exp2":
        gains = [2 ** int(g) - 1 for g in y]
    else:
        gains = [Fraction(float(g)) for g in y]
    order = sorted(range(n), key=lambda i: -scores[i])
    dcg = sum(gains[i] * d for i, d in zip(order, discount))
    ideal = sum(g * d for g, d in zip(sorted(gains, reverse=True), discount))
    return None if ideal == 0 else dcg / ideal


@FUZZ
@given(
    y=st.lists(st.integers(0, 1500), min_size=1, max_size=7),
    seed=st.integers(0, 2**32 - 1),
    k=st.one_of(st.none(), st.integers(1, 7)),
)
def test_ndcg_with_huge_exponential_gains_matches_exact_arithmetic(y, seed, k):
    scores = np.random.default_rng(seed).permutation(len(y)).astype(float)
    expected = _exact_ndcg(y, scores, k, "exp2")
    value = ndcg_score(np.array(y, dtype=float), scores, k=k)
    if expected is None:
        assert value == 0.0
    else:
        assert value == pytest.approx(float(expected), rel=1e-12, abs=1e-300)
    # the positional-measure object agrees
    metric = PositionalMetric.ndcg(len(y), k=k)
    assert metric.value_from_scores(y, scores) == pytest.approx(value, rel=1e-12)


@FUZZ
@given(
    y=st.lists(st.floats(0, BIG, allow_subnormal=True), min_size=1, max_size=6),
    seed=st.integers(0, 2**32 - 1),
)
def test_ndcg_with_huge_linear_gains_matches_exact_arithmetic(y, seed):
    scores = np.random.default_rng(seed).permutation(len(y)).astype(float)
    expected = _exact_ndcg(y, scores, None, "linear")
    value = ndcg_score(y, scores, gain="linear")
    if expected is None:
        assert value == 0.0
    else:
        assert value == pytest.approx(float(expected), rel=1e-12, abs=1e-300)


@FUZZ
@given(
    y=st.lists(st.integers(0, 3000), min_size=1, max_size=6),
    top=st.integers(1, 1000),
    seed=st.integers(0, 2**32 - 1),
)
def test_err_with_huge_grades_matches_exact_arithmetic(y, top, seed):
    max_grade = max(y) + top
    scores = np.random.default_rng(seed).permutation(len(y)).astype(float)
    exact = err_score([Fraction(g) for g in y], scores, max_grade=max_grade)
    assert isinstance(exact, Fraction)
    value = err_score(np.array(y, dtype=float), scores, max_grade=max_grade)
    # the float path computes 1 - R(g): absolute accuracy, about 1e-16
    assert value == pytest.approx(float(exact), rel=1e-12, abs=1e-15)


def test_err_with_an_astronomical_max_grade_does_not_build_huge_integers():
    value = err_score([Fraction(1), 0], [1.0, 0.0], max_grade=1e300)
    assert value == 0.0  # every stopping probability underflows to 0


def test_dcg_is_finite_while_it_fits():
    assert dcg_score([1000.0, 0.0], [1, 0]) == 2.0**1000 - 1
    assert dcg_score([BIG / 2, BIG / 4], [1, 0], gain="linear") == pytest.approx(
        BIG / 2 + BIG / 4 / np.log2(3)
    )
    # a mean over queries that would overflow is refused too
    with pytest.raises(ValueError, match="overflows float64"):
        dcg_score([1023.0, 1023.0], [1, 0], qid=[0, 1])
    assert dcg_score([1022.0, 1022.0], [1, 0], qid=[0, 1]) == 2.0**1022 - 1


def test_positional_metric_refuses_overflowing_values():
    with pytest.raises(ValueError, match="DCG gain overflows"):
        PositionalMetric.dcg(2).value([1100, 0], [0, 1])
    with pytest.raises(ValueError, match="overflows float64"):
        PositionalMetric.dcg(2, gain="linear").value([BIG, BIG], [0, 1])
    with pytest.raises(ValueError, match=r"utility\(y\) returned NaN"):
        PositionalMetric([1.0, 0.5], lambda y: np.array([np.nan, 0.0])).value(
            [1, 0], [0, 1]
        )


def _graded(name):
    return name in {
        "dcg",
        "ndcg",
        "ndcg_linear",
        "dcg_linear",
        "eru",
        "err",
        "pairwise",
    }


METRICS = {
    "dcg": lambda y, s, **kw: dcg_score(y, s, **kw),
    "dcg_linear": lambda y, s, **kw: dcg_score(y, s, gain="linear", **kw),
    "ndcg": lambda y, s, **kw: ndcg_score(y, s, **kw),
    "ndcg_linear": lambda y, s, **kw: ndcg_score(y, s, gain="linear", **kw),
    "eru": lambda y, s, **kw: expected_rank_utility(y, s, **kw),
    "err": lambda y, s, **kw: err_score(
        y, s, max_grade=max(float(np.max(y)), 1.0), **kw
    ),
    "pairwise": lambda y, s, **kw: pairwise_disagreement(y, s, **kw),
    "precision": lambda y, s, **kw: precision_at_k(y, s, k=2, **kw),
    "recall": lambda y, s, **kw: recall_at_k(y, s, k=2, **kw),
    "auc": lambda y, s, **kw: list_auc(y, s, **kw),
    "ap": lambda y, s, **kw: average_precision_score(y, s, **kw),
    "rr": lambda y, s, **kw: reciprocal_rank(y, s, **kw),
    "spearman": lambda y, s, **kw: spearman_rho(y, s, **kw),
}
# metrics whose value can truly exceed float64: they may refuse, never return inf
UNBOUNDED = {"dcg", "dcg_linear", "eru"}

GRADED_LABELS = [
    [1100.0, 1.0, 0.0, 2.0],
    [1023.0, 1023.0, 1022.0, 0.0],
    [BIG, BIG, 0.0, 1.0],
    [BIG, BIG, BIG, BIG],
    [TINY, 0.0, 0.0, TINY],
    [0.0, 0.0, 0.0, 0.0],
    [2000.0, 1999.0, 2000.0, 1.0],
]
BINARY_LABELS = [[1, 0, 1, 0], [1, 1, 1, 1], [0, 0, 0, 0], [0, 0, 0, 1]]
RANK_LABELS = [[1, 2, 3, 4], [4, 3, 2, 1], [2, 1, 4, 3]]
SCORES = [
    [BIG, -BIG, TINY, 0.0],
    [0.0, 0.0, 0.0, 0.0],
    [-TINY, TINY, 0.0, -0.0],
    [1e300, 1e300, -1e300, 5.0],
]


def _labels_for(name):
    if _graded(name):
        return GRADED_LABELS
    if name == "spearman":
        return RANK_LABELS
    return BINARY_LABELS


def _evaluate(metric, labels, scores, qid, ties):
    """(value, per-query values), or the message of the ValueError raised."""
    try:
        return metric(
            np.array(labels),
            np.array(scores),
            qid=qid,
            ties=ties,
            return_per_query=True,
        )
    except ValueError as exc:
        return str(exc)


@pytest.mark.parametrize("name", sorted(METRICS))
@pytest.mark.parametrize("ties", ["average", "pessimistic"])
def test_every_list_metric_is_finite_or_refuses_on_extreme_inputs(name, ties):
    metric = METRICS[name]
    n_finite = 0
    for y in _labels_for(name):
        for scores in SCORES:
            for qid in (None, [0, 0, 1, 1]):
                labels = y
                if name == "spearman" and qid is not None:
                    labels = [1, 2, 2, 1]  # a permutation of the ranks per list
                outcome = _evaluate(metric, labels, scores, qid, ties)
                if isinstance(outcome, str):
                    assert name in UNBOUNDED, (name, labels, scores, outcome)
                    assert "overflows float64" in outcome
                    continue
                value, per_query = outcome
                assert np.isfinite(float(value)), (name, labels, scores)
                assert np.all(np.isfinite(per_query.astype(float))), (name, labels)
                n_finite += 1
    assert n_finite > 0
