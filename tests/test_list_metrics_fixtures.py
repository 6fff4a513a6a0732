"""Fixtures A, D and E of reference/seeds-000-001.md section 3.2, exactly.

For each fixture, the expected AP / ERR of every ranking of 3 items under a small
distribution of relevance vectors is computed with the list metrics (all
support vectors evaluated at once as queries of one grouped call, in exact
rational arithmetic) and compared with the fractions of the notes; the
ranking that sorts the expected utility is shown to be sub-optimal by the
stated gap.
"""

import itertools
from fractions import Fraction as F

import numpy as np
import pytest

from treerank.metrics import average_precision_score, err_score


def _scores(ranking_text):
    """Scores realizing a ranking written as in the notes ("312": item 3 first)."""
    n = len(ranking_text)
    scores = np.zeros(n)
    for rank, item in enumerate(ranking_text):
        scores[int(item) - 1] = n - rank
    return scores


def _expected(metric, distribution, ranking_text, **options):
    """sum_y p(y) metric(y, ranking), every y of the support a query of one call."""
    labels = [[F(int(c)) for c in y] for y, _ in distribution]
    n = len(labels[0])
    y_true = [v for y in labels for v in y]
    y_score = np.tile(_scores(ranking_text), len(labels))
    qid = np.repeat(np.arange(len(labels)), n)
    _, per_query = metric(y_true, y_score, qid=qid, return_per_query=True, **options)
    assert all(isinstance(v, F) for v in per_query)
    return sum(p * v for (_, p), v in zip(distribution, per_query))


def _all_rankings(n):
    return ["".join(map(str, perm)) for perm in itertools.permutations(range(1, n + 1))]


def _sort_by_expected(distribution, utility):
    n = len(distribution[0][0])
    expected = [sum(p * utility(int(y[i])) for y, p in distribution) for i in range(n)]
    order = sorted(range(n), key=lambda i: -expected[i])
    assert len(set(expected)) == n  # no tie: the decoded ranking is unique
    return "".join(str(i + 1) for i in order), expected


FIXTURE_A = [("001", F(3, 10)), ("011", F(3, 10)), ("110", F(2, 5))]
EXPECTED_A = {
    "123": F(27, 40),
    "132": F(79, 120),
    "213": F(3, 4),
    "231": F(47, 60),
    "312": F(47, 60),
    "321": F(5, 6),
}

FIXTURE_D = [("001", F(1, 6)), ("010", F(1, 3)), ("101", F(1, 2))]
EXPECTED_D = {
    "123": F(29, 72),
    "132": F(59, 144),
    "213": F(13, 36),
    "231": F(3, 8),
    "312": F(65, 144),
    "321": F(11, 24),
}

FIXTURE_E = [("012", F(1, 4)), ("210", F(3, 4))]
EXPECTED_E = {
    "123": F(85, 128),
    "132": F(65, 96),
    "213": F(65, 128),
    "231": F(59, 128),
    "312": F(47, 96),
    "321": F(55, 128),
}


def test_fixture_a_expected_average_precision():
    values = {
        r: _expected(average_precision_score, FIXTURE_A, r) for r in _all_rankings(3)
    }
    assert values == EXPECTED_A
    decoded, expected_y = _sort_by_expected(FIXTURE_A, lambda g: g)
    assert expected_y == [F(2, 5), F(7, 10), F(3, 5)]
    assert decoded == "231"
    best = max(values.values())
    assert [r for r, v in values.items() if v == best] == ["321"]
    assert best - values[decoded] == F(1, 20)


@pytest.mark.parametrize("utility", [lambda g: g, lambda g: 2**g - 1])
def test_fixture_d_expected_err_binary(utility):
    values = {
        r: _expected(err_score, FIXTURE_D, r, max_grade=1) for r in _all_rankings(3)
    }
    assert values == EXPECTED_D
    decoded, _ = _sort_by_expected(FIXTURE_D, utility)
    assert decoded == "312"
    best = max(values.values())
    assert [r for r, v in values.items() if v == best] == ["321"]
    assert best - values[decoded] == F(1, 144)


@pytest.mark.parametrize("utility", [lambda g: g, lambda g: 2**g - 1])
def test_fixture_e_expected_err_graded(utility):
    values = {
        r: _expected(err_score, FIXTURE_E, r, max_grade=2) for r in _all_rankings(3)
    }
    assert values == EXPECTED_E
    decoded, _ = _sort_by_expected(FIXTURE_E, utility)
    assert decoded == "123"
    best = max(values.values())
    assert [r for r, v in values.items() if v == best] == ["132"]
    assert best - values[decoded] == F(5, 384)


def test_fixture_e_expected_utilities():
    _, expected_gain = _sort_by_expected(FIXTURE_E, lambda g: 2**g - 1)
    _, expected_grade = _sort_by_expected(FIXTURE_E, lambda g: g)
    assert expected_gain == [F(9, 4), F(1), F(3, 4)]
    assert expected_grade == [F(3, 2), F(1), F(1, 2)]
