"""Correctness of the list metrics against oracles.

- every tie policy of every metric against brute force over all tie-breaking
  orders (lists up to 7 items), in exact arithmetic where the metric is rational;
- scikit-learn's ``ndcg_score`` / ``dcg_score`` (linear gain, k, ties averaged) on
  random data with many ties, and ``average_precision_score`` without ties;
- grouped evaluation (``qid``) equals list-by-list evaluation, whatever the row
  order or the type of the query ids.
"""

from fractions import Fraction

import numpy as np
import pytest
from sklearn import metrics as sk_metrics
from test_list_metrics_reference import (
    mean,
    ref_auc,
    ref_average_precision,
    ref_dcg,
    ref_err,
    ref_eru,
    ref_ndcg,
    ref_pairwise_disagreement,
    ref_precision_at_k,
    ref_recall_at_k,
    ref_reciprocal_rank,
    ref_spearman,
    stable_ranking,
    tie_breakings,
)

from treerank.metrics import (
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

# name -> (function, options, labels, reference(y, ranking), exact, is_loss)
METRICS = {
    "dcg": (dcg_score, {}, "graded", lambda y, r: ref_dcg(y, r), False, False),
    "dcg@2-linear": (
        dcg_score,
        {"k": 2, "gain": "linear"},
        "graded",
        lambda y, r: ref_dcg(y, r, 2, "linear"),
        False,
        False,
    ),
    "ndcg": (ndcg_score, {}, "graded", lambda y, r: ref_ndcg(y, r), False, False),
    "ndcg@3": (
        ndcg_score,
        {"k": 3},
        "graded",
        lambda y, r: ref_ndcg(y, r, 3),
        False,
        False,
    ),
    "ap": (
        average_precision_score,
        {},
        "binary",
        ref_average_precision,
        True,
        False,
    ),
    "err": (
        err_score,
        {"max_grade": 3},
        "graded",
        lambda y, r: ref_err(y, r, 3),
        True,
        False,
    ),
    "err@2": (
        err_score,
        {"max_grade": 3, "k": 2},
        "graded",
        lambda y, r: ref_err(y, r, 3, 2),
        True,
        False,
    ),
    "p@2": (
        precision_at_k,
        {"k": 2},
        "binary",
        lambda y, r: ref_precision_at_k(y, r, 2),
        True,
        False,
    ),
    "p@9": (
        precision_at_k,
        {"k": 9},
        "binary",
        lambda y, r: ref_precision_at_k(y, r, 9),
        True,
        False,
    ),
    "r@3": (
        recall_at_k,
        {"k": 3},
        "binary",
        lambda y, r: ref_recall_at_k(y, r, 3),
        True,
        False,
    ),
    "eru": (
        expected_rank_utility,
        {"neutral": 1, "half_life": 3},
        "graded",
        lambda y, r: ref_eru(y, r, 1, 3),
        False,
        False,
    ),
    "pd": (
        pairwise_disagreement,
        {},
        "graded",
        ref_pairwise_disagreement,
        True,
        True,
    ),
    "pd-unnormalized": (
        pairwise_disagreement,
        {"normalize": False},
        "graded",
        lambda y, r: ref_pairwise_disagreement(y, r, normalize=False),
        True,
        True,
    ),
    "rr": (reciprocal_rank, {}, "binary", ref_reciprocal_rank, True, False),
    "rr@2": (
        reciprocal_rank,
        {"k": 2},
        "binary",
        lambda y, r: ref_reciprocal_rank(y, r, 2),
        True,
        False,
    ),
    "auc": (list_auc, {}, "binary", ref_auc, True, False),
    "spearman": (spearman_rho, {}, "ranks", ref_spearman, True, False),
}


def _labels(kind, n, rng):
    if kind == "binary":
        return [int(v) for v in rng.integers(0, 2, n)]
    if kind == "ranks":
        return [int(v) for v in rng.permutation(n) + 1]
    return [int(v) for v in rng.integers(0, 4, n)]


def _cases(kind, n_cases=30, seed=0):
    """Small lists with many tied scores, plus one fully tied 7-item list."""
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(n_cases):
        n = int(rng.integers(1, 8))
        scores = [int(v) for v in rng.integers(0, 3, n)]
        cases.append((_labels(kind, n, rng), scores))
    cases.append((_labels(kind, 7, rng), [0] * 7))
    cases.append((_labels(kind, 6, rng), [1, 1, 1, 0, 0, 0]))
    return cases


def _value(reference, y, ranking):
    value = reference(y, ranking)
    return Fraction(0) if value is None else value  # the default empty=0.0


def _check(actual, expected, exact):
    if exact:
        assert isinstance(actual, Fraction)
        assert actual == expected
    else:
        assert actual == pytest.approx(float(expected), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_tie_policies_match_brute_force(name):
    """average = mean over tie orders, pessimistic/optimistic = worst/best, stable."""
    function, options, kind, reference, exact, is_loss = METRICS[name]
    for y, scores in _cases(kind):
        values = [_value(reference, y, r) for r in tie_breakings(scores)]
        expected = {
            "average": mean(values) if exact else sum(values) / len(values),
            "pessimistic": max(values) if is_loss else min(values),
            "optimistic": min(values) if is_loss else max(values),
            "stable": _value(reference, y, stable_ranking(scores)),
        }
        y_in = [Fraction(v) for v in y] if exact else y
        for ties, value in expected.items():
            actual = function(y_in, np.array(scores, float), ties=ties, **options)
            _check(actual, value, exact)
        if exact:  # the float path gives the same numbers
            actual = function(y, np.array(scores, float), ties="average", **options)
            assert isinstance(actual, float)
            assert actual == pytest.approx(float(expected["average"]), abs=1e-12)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_grouped_evaluation_equals_list_by_list(name):
    """qid: per-query values are the single-list values; rows may be in any order."""
    function, options, kind = METRICS[name][:3]
    rng = np.random.default_rng(1)
    labels, scores, qids = [], [], []
    singles = {}
    for query in rng.permutation(40):
        n = int(rng.integers(1, 9))
        y = _labels(kind, n, rng)
        s = rng.integers(0, 4, n).astype(float)
        singles[int(query)] = function(y, s, **options)
        labels += y
        scores += list(s)
        qids += [int(query)] * n
    shuffle = rng.permutation(len(labels))
    y_all = np.array(labels)[shuffle]
    s_all = np.array(scores)[shuffle]
    q_all = np.array(qids)[shuffle]
    average, per_query = function(
        y_all, s_all, qid=q_all, return_per_query=True, **options
    )
    expected = np.array([singles[q] for q in sorted(singles)])
    np.testing.assert_allclose(per_query, expected, rtol=1e-12, atol=1e-12)
    assert average == pytest.approx(expected.mean(), rel=1e-12, abs=1e-12)
    # string query ids: the per-query values follow the sorted ids
    names = np.array([f"q{q:03d}" for q in q_all])
    _, per_name = function(y_all, s_all, qid=names, return_per_query=True, **options)
    np.testing.assert_allclose(per_name, expected, rtol=1e-12, atol=1e-12)


def test_tie_blocks_of_mixed_sizes_in_one_call_match_brute_force():
    """ERR's block recursion handles blocks of different sizes in one size bin."""
    rng = np.random.default_rng(5)
    y_all, s_all, q_all, expected = [], [], [], []
    for query, block in enumerate([5, 6, 7, 3, 4, 2, 7]):
        n = 7
        y = [int(v) for v in rng.integers(0, 4, n)]
        scores = [2] * (n - block) + [1] * block  # one block of the given size
        values = [ref_err(y, r, 3) for r in tie_breakings(scores)]
        expected.append(mean(values))
        y_all += [Fraction(v) for v in y]
        s_all += scores
        q_all += [query] * n
    _, per_query = err_score(
        y_all, np.array(s_all, float), qid=q_all, max_grade=3, return_per_query=True
    )
    assert list(per_query) == expected


def test_err_matches_elementary_symmetric_formula_on_large_tied_block():
    """A block of 40 tied items: E_t = e_t(x) / C(m, t) from numpy's polynomial."""
    from math import comb

    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 45)
    scores = np.r_[np.full(40, 1.0), np.full(5, 0.0)]
    x = 1 - (2.0 ** y[:40] - 1) / 4
    # prod_i (z + x_i) = sum_t e_t(x) z**(40 - t): numpy's coefficients are e_t
    e = np.poly(-x)
    mean_prod = np.array([e[t] / comb(40, t) for t in range(41)])
    block = np.sum((mean_prod[:-1] - mean_prod[1:]) / np.arange(1, 41))
    tail_go_on = mean_prod[40]
    tail = 0.0
    for j, grade in enumerate(y[40:], start=41):
        stop = (2.0**grade - 1) / 4
        tail += tail_go_on * stop / j
        tail_go_on *= 1 - stop
    assert err_score(y, scores, max_grade=2) == pytest.approx(block + tail, rel=1e-9)
    exact = err_score([Fraction(int(v)) for v in y], scores, max_grade=2)
    assert isinstance(exact, Fraction)
    assert float(exact) == pytest.approx(block + tail, rel=1e-9)


@pytest.mark.parametrize("k", [None, 1, 3, 10, 50])
def test_ndcg_and_dcg_match_sklearn_with_many_ties(k):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, (60, 12))
    scores = rng.integers(0, 3, (60, 12)).astype(float)  # heavy ties
    qid = np.repeat(np.arange(60), 12)
    ours = ndcg_score(y.ravel(), scores.ravel(), qid=qid, k=k, gain="linear")
    assert ours == pytest.approx(sk_metrics.ndcg_score(y, scores, k=k), rel=1e-12)
    ours = dcg_score(y.ravel(), scores.ravel(), qid=qid, k=k, gain="linear")
    assert ours == pytest.approx(sk_metrics.dcg_score(y, scores, k=k), rel=1e-12)
    # per row as well
    _, per_query = ndcg_score(
        y.ravel(), scores.ravel(), qid=qid, k=k, gain="linear", return_per_query=True
    )
    for row in range(0, 60, 7):
        expected = sk_metrics.ndcg_score(y[row : row + 1], scores[row : row + 1], k=k)
        assert per_query[row] == pytest.approx(expected, rel=1e-12)


def test_exp2_gain_is_linear_gain_of_transformed_labels():
    rng = np.random.default_rng(4)
    y = rng.integers(0, 5, (20, 9))
    scores = rng.integers(0, 4, (20, 9)).astype(float)
    qid = np.repeat(np.arange(20), 9)
    ours = ndcg_score(y.ravel(), scores.ravel(), qid=qid, k=5)
    assert ours == pytest.approx(sk_metrics.ndcg_score(2**y - 1, scores, k=5))


def test_average_precision_matches_sklearn_without_ties():
    rng = np.random.default_rng(2)
    for n in [2, 5, 30, 200]:
        y = rng.integers(0, 2, n)
        y[0] = 1
        scores = rng.permutation(n) + rng.random(n) * 0.1
        assert average_precision_score(y, scores) == pytest.approx(
            sk_metrics.average_precision_score(y, scores), rel=1e-12
        )


def test_list_auc_matches_sklearn_roc_auc_with_ties():
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 300)
    scores = rng.integers(0, 5, 300).astype(float)
    assert list_auc(y, scores) == pytest.approx(sk_metrics.roc_auc_score(y, scores))
    assert 1 - list_auc(y, scores) == pytest.approx(pairwise_disagreement(y, scores))


def test_spearman_matches_scipy_without_ties():
    from scipy.stats import spearmanr

    rng = np.random.default_rng(7)
    ranks = rng.permutation(25) + 1
    scores = rng.random(25)
    # the true rank 1 is the best item: correlate -rank with the score
    assert spearman_rho(ranks, scores) == pytest.approx(
        spearmanr(-ranks, scores).statistic
    )


@pytest.mark.parametrize("ties", ["average", "pessimistic", "optimistic", "stable"])
def test_preference_matrix_of_graded_labels_equals_graded_input(ties):
    rng = np.random.default_rng(8)
    for _ in range(20):
        n = int(rng.integers(1, 8))
        y = rng.integers(0, 3, n)
        scores = rng.integers(0, 3, n).astype(float)
        prefs = (y[:, None] > y[None, :]).astype(int)
        for normalize in (True, False):
            options = {"ties": ties, "normalize": normalize}
            graded = pairwise_disagreement(y, scores, **options)
            matrix = pairwise_disagreement(prefs, scores, **options)
            assert graded == pytest.approx(matrix, abs=1e-12)


def test_weighted_preference_matrix_against_brute_force():
    from test_list_metrics_reference import ref_preference_disagreement

    rng = np.random.default_rng(9)
    for _ in range(20):
        n = int(rng.integers(2, 7))
        upper = np.triu(rng.integers(0, 4, (n, n)), 1)
        flip = np.triu(rng.random((n, n)) < 0.5, 1)
        prefs = np.where(flip, upper, 0) + np.where(flip, 0, upper).T
        prefs_exact = [[Fraction(int(v)) for v in row] for row in prefs]
        scores = [int(v) for v in rng.integers(0, 3, n)]
        values = [
            ref_preference_disagreement(prefs, r) or Fraction(0)
            for r in tie_breakings(scores)
        ]
        actual = pairwise_disagreement(prefs_exact, np.array(scores, float))
        assert actual == mean(values)
        stable = ref_preference_disagreement(prefs, stable_ranking(scores))
        actual = pairwise_disagreement(
            prefs_exact, np.array(scores, float), ties="stable"
        )
        assert actual == (stable or 0)


def test_pairwise_disagreement_on_long_lists_matches_pair_counting():
    """The merge-based ascent count on lists longer than brute force allows."""
    rng = np.random.default_rng(10)
    sizes = [1, 2, 3, 64, 65, 200, 17]
    y = np.concatenate([rng.integers(0, 5, m) for m in sizes])
    scores = np.concatenate([rng.integers(0, 6, m) for m in sizes]).astype(float)
    qid = np.repeat(np.arange(len(sizes)), sizes)
    _, per_query = pairwise_disagreement(
        y, scores, qid=qid, normalize=False, return_per_query=True
    )
    start = 0
    for query, m in enumerate(sizes):
        yq, sq = y[start : start + m], scores[start : start + m]
        above = sq[:, None] > sq[None, :]
        tied = (sq[:, None] == sq[None, :]) & ~np.eye(m, dtype=bool)
        preferred = yq[:, None] > yq[None, :]
        expected = np.sum(preferred & above.T) + 0.5 * np.sum(preferred & tied)
        assert per_query[query] == expected
        start += m


def test_exact_labels_give_fractions_and_float_labels_floats():
    y = [Fraction(1), 0, 1, 0, 1]
    scores = [0.3, 0.3, 0.2, 0.9, 0.1]
    for function in (average_precision_score, list_auc, reciprocal_rank):
        assert isinstance(function(y, scores), Fraction)
        assert isinstance(function([1, 0, 1, 0, 1], scores), float)
    assert isinstance(precision_at_k(y, scores, k=2), Fraction)
    assert isinstance(err_score(y, scores, max_grade=1), Fraction)
    # DCG has irrational discounts: always a float
    assert isinstance(dcg_score(y, scores), float)
    mean_value, per_query = average_precision_score(
        y, scores, qid=[1, 1, 2, 2, 2], return_per_query=True
    )
    assert isinstance(mean_value, Fraction)
    assert per_query.dtype == object
    assert mean_value == (per_query[0] + per_query[1]) / 2


def test_single_list_with_return_per_query():
    value, per_query = ndcg_score([1, 0, 2], [0.1, 0.2, 0.3], return_per_query=True)
    assert per_query.shape == (1,)
    assert value == per_query[0]


def test_metrics_are_invariant_to_increasing_transforms_of_scores():
    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, 50)
    scores = rng.integers(0, 5, 50).astype(float)
    for function in (average_precision_score, list_auc, reciprocal_rank):
        assert function(y, scores) == pytest.approx(function(y, np.exp(scores) - 3))
    assert err_score(y, scores, max_grade=1) == pytest.approx(
        err_score(y, 10 * scores + 1, max_grade=1)
    )
