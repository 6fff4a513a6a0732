"""Functions named like scikit-learn metrics return scikit-learn's values by default.

Users compare numbers across libraries: ``treerank.metrics.X`` and
``sklearn.metrics.X`` must agree (on one list, the only input scikit-learn
takes), on untied and on heavily tied scores, with and without sample weights
where both accept them. Where treerank offers another convention (the exact
expectation over tie orders, the raw partial area, the exponential gain), it
is behind a parameter, and checked here to differ on ties.
"""

import numpy as np
import pytest
from sklearn import metrics as sk

from treerank import metrics as tm


def _cases():
    """(name, y, scores) for untied, tied and very tied scores."""
    rng = np.random.default_rng(7)
    for n in (2, 5, 17, 200):
        y = rng.integers(0, 2, n)
        y[0], y[-1] = 0, 1  # both classes
        untied = y + rng.normal(size=n)
        yield f"untied-{n}", y, untied
        yield f"tied-{n}", y, np.round(untied)  # a few large blocks
        yield f"coarse-{n}", y, rng.integers(0, 3, n).astype(float)
    yield "constant", np.array([0, 1, 1, 0, 1]), np.zeros(5)


CASES = list(_cases())
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize(("name", "y", "s"), CASES, ids=IDS)
def test_roc_auc_score_matches_sklearn(name, y, s):
    assert tm.roc_auc_score(y, s) == pytest.approx(sk.roc_auc_score(y, s), abs=1e-14)
    w = np.random.default_rng(len(y)).uniform(0.1, 2.0, len(y))
    assert tm.roc_auc_score(y, s, sample_weight=w) == pytest.approx(
        sk.roc_auc_score(y, s, sample_weight=w), abs=1e-14
    )


@pytest.mark.parametrize(("name", "y", "s"), CASES, ids=IDS)
def test_roc_curve_matches_sklearn(name, y, s):
    fpr, tpr, thresholds = tm.roc_curve(y, s)
    ref = sk.roc_curve(y, s, drop_intermediate=False)
    for ours, theirs in zip((fpr, tpr, thresholds), ref):
        np.testing.assert_array_equal(ours, theirs)
    # scikit-learn's default drops collinear knots: the same broken line
    sk_fpr, sk_tpr, _ = sk.roc_curve(y, s)
    grid = np.linspace(0, 1, 101)
    np.testing.assert_allclose(
        np.interp(grid, fpr, tpr), np.interp(grid, sk_fpr, sk_tpr), atol=1e-12
    )


@pytest.mark.parametrize("max_fpr", [0.05, 0.2, 0.5, 1.0])
@pytest.mark.parametrize(("name", "y", "s"), CASES, ids=IDS)
def test_partial_auc_score_is_sklearn_roc_auc_with_max_fpr(name, y, s, max_fpr):
    expected = sk.roc_auc_score(y, s, max_fpr=max_fpr)
    assert tm.partial_auc_score(y, s, max_fpr=max_fpr) == pytest.approx(
        expected, abs=1e-12
    )
    raw = tm.partial_auc_score(y, s, max_fpr=max_fpr, standardized=False)
    assert 0 <= raw <= max_fpr
    if max_fpr < 1 and expected != 0.5:
        assert raw != pytest.approx(expected)  # the raw area is another number


@pytest.mark.parametrize(("name", "y", "s"), CASES, ids=IDS)
def test_average_precision_score_matches_sklearn(name, y, s):
    expected = sk.average_precision_score(y, s)
    assert tm.average_precision_score(y, s) == pytest.approx(expected, abs=1e-12)
    # the exact expectation over tie orders is kept under ties="average"
    average = tm.average_precision_score(y, s, ties="average")
    if np.unique(s).shape[0] == s.shape[0]:
        assert average == pytest.approx(expected, abs=1e-12)


def test_average_precision_ties_differ_from_the_expectation():
    # one tied pair holding a relevant item: 5/6 (a step) vs 11/12 (expectation)
    y, s = [1, 0, 1, 0], [0.9, 0.8, 0.8, 0.1]
    assert tm.average_precision_score(y, s) == pytest.approx(5 / 6)
    assert sk.average_precision_score(y, s) == pytest.approx(5 / 6)
    assert tm.average_precision_score(y, s, ties="average") == pytest.approx(11 / 12)


def _graded_cases():
    rng = np.random.default_rng(11)
    for n in (3, 10, 40):
        grades = rng.integers(0, 4, n)
        grades[0] = 3
        yield f"untied-{n}", grades, rng.normal(size=n)
        yield f"tied-{n}", grades, rng.integers(0, 3, n).astype(float)


GRADED = list(_graded_cases())
GRADED_IDS = [case[0] for case in GRADED]


@pytest.mark.parametrize("k", [None, 1, 3])
@pytest.mark.parametrize(("name", "y", "s"), GRADED, ids=GRADED_IDS)
def test_dcg_and_ndcg_with_linear_gain_match_sklearn(name, y, s, k):
    assert tm.dcg_score(y, s, k=k, gain="linear") == pytest.approx(
        sk.dcg_score([y], [s], k=k), rel=1e-12
    )
    assert tm.ndcg_score(y, s, k=k, gain="linear") == pytest.approx(
        sk.ndcg_score([y], [s], k=k), rel=1e-12
    )
    # several queries of equal length: scikit-learn's rows, treerank's qid
    Y, S = np.tile(y, (3, 1)), np.vstack([s, s[::-1], np.zeros_like(s)])
    qid = np.repeat([0, 1, 2], len(y))
    assert tm.ndcg_score(Y.ravel(), S.ravel(), qid=qid, k=k, gain="linear") == (
        pytest.approx(sk.ndcg_score(Y, S, k=k), rel=1e-12)
    )


@pytest.mark.parametrize(("name", "y", "s"), CASES, ids=IDS)
def test_dcg_and_ndcg_defaults_match_sklearn_on_binary_relevance(name, y, s):
    assert tm.dcg_score(y, s) == pytest.approx(sk.dcg_score([y], [s]), rel=1e-12)
    assert tm.ndcg_score(y, s) == pytest.approx(sk.ndcg_score([y], [s]), rel=1e-12)


@pytest.mark.xfail(
    strict=True,
    reason="dcg_score/ndcg_score default to gain='exp2' (2**y - 1) while "
    "scikit-learn's gain is linear; switching the default is pending (the gain "
    "code is being changed for an overflow fix). When it lands this test passes "
    "and the xfail marker must go.",
)
def test_dcg_and_ndcg_defaults_match_sklearn_on_graded_relevance():
    y, s = GRADED[0][1], GRADED[0][2]
    assert tm.ndcg_score(y, s) == pytest.approx(sk.ndcg_score([y], [s]), rel=1e-12)
    assert tm.dcg_score(y, s) == pytest.approx(sk.dcg_score([y], [s]), rel=1e-12)
