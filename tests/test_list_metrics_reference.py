"""Independent reference definitions of the list metrics, for the other tests.

Every function scores one *strict* ranking (item indices, best first) straight
from the textbook definition, in exact rational arithmetic where the metric is
rational. ``tie_breakings`` enumerates every ranking compatible with tied
scores, so that ``ties="average"`` can be checked by brute-force averaging.
The tests at the bottom pin the references to hand-computed values.
"""

import itertools
import math
from fractions import Fraction

import pytest

# ---------------------------------------------------------------------------
# rankings
# ---------------------------------------------------------------------------


def tie_breakings(scores):
    """Every ranking (tuple of item indices, best first) compatible with scores."""
    n = len(scores)
    levels = sorted(set(scores), reverse=True)
    blocks = [[i for i in range(n) if scores[i] == level] for level in levels]
    for parts in itertools.product(*(itertools.permutations(b) for b in blocks)):
        yield tuple(i for part in parts for i in part)


def stable_ranking(scores):
    return tuple(sorted(range(len(scores)), key=lambda i: (-scores[i], i)))


def positions(ranking):
    """1-based position of every item."""
    pos = [0] * len(ranking)
    for rank, item in enumerate(ranking, start=1):
        pos[item] = rank
    return pos


def mean(values):
    values = list(values)
    return sum(values, Fraction(0)) / len(values)


# ---------------------------------------------------------------------------
# metrics of one strict ranking; None means "undefined"
# ---------------------------------------------------------------------------


def ref_gain(grade, gain):
    return 2.0 ** float(grade) - 1.0 if gain == "exp2" else float(grade)


def ref_dcg(y, ranking, k=None, gain="exp2"):
    cut = len(ranking) if k is None else min(k, len(ranking))
    return sum(ref_gain(y[ranking[j]], gain) / math.log2(j + 2) for j in range(cut))


def ref_ndcg(y, ranking, k=None, gain="exp2"):
    ideal = sorted(range(len(y)), key=lambda i: -float(y[i]))
    best = ref_dcg(y, ideal, k, gain)
    if best == 0:
        return None
    return ref_dcg(y, ranking, k, gain) / best


def ref_average_precision(y, ranking):
    relevant = sum(Fraction(v) for v in y)
    if relevant == 0:
        return None
    hits = 0
    total = Fraction(0)
    for j, item in enumerate(ranking, start=1):
        if y[item]:
            hits += 1
            total += Fraction(hits, j)
    return total / relevant


def ref_err(y, ranking, max_grade, k=None):
    cut = len(ranking) if k is None else min(k, len(ranking))
    go_on = Fraction(1)
    total = Fraction(0)
    for j in range(cut):
        stop = Fraction(2 ** int(y[ranking[j]]) - 1, 2**max_grade)
        total += go_on * stop / (j + 1)
        go_on *= 1 - stop
    return total


def ref_precision_at_k(y, ranking, k):
    return Fraction(sum(int(y[i]) for i in ranking[:k]), k)


def ref_recall_at_k(y, ranking, k):
    relevant = sum(int(v) for v in y)
    if relevant == 0:
        return None
    return Fraction(sum(int(y[i]) for i in ranking[:k]), relevant)


def ref_reciprocal_rank(y, ranking, k=None):
    if not any(y):
        return None
    for j, item in enumerate(ranking, start=1):
        if y[item]:
            return Fraction(1, j) if k is None or j <= k else Fraction(0)
    raise AssertionError  # pragma: no cover


def ref_eru(y, ranking, neutral, half_life):
    return sum(
        max(float(y[item]) - neutral, 0.0) * 2.0 ** (-j / (half_life - 1.0))
        for j, item in enumerate(ranking)
    )


def ref_auc(y, ranking):
    pos = positions(ranking)
    relevant = [i for i in range(len(y)) if y[i]]
    irrelevant = [i for i in range(len(y)) if not y[i]]
    if not relevant or not irrelevant:
        return None
    right = sum(1 for i in relevant for j in irrelevant if pos[i] < pos[j])
    return Fraction(right, len(relevant) * len(irrelevant))


def ref_spearman(true_ranks, ranking):
    n = len(ranking)
    if n < 2:
        return None
    pos = positions(ranking)
    squares = sum((pos[i] - int(true_ranks[i])) ** 2 for i in range(n))
    return 1 - Fraction(6 * squares, n * (n * n - 1))


def ref_pairwise_disagreement(y, ranking, normalize=True):
    pos = positions(ranking)
    n = len(y)
    pairs = [(i, j) for i in range(n) for j in range(n) if y[i] > y[j]]
    wrong = sum(1 for i, j in pairs if pos[i] > pos[j])
    if not normalize:
        return Fraction(wrong)
    if not pairs:
        return None
    return Fraction(wrong, len(pairs))


def ref_preference_disagreement(prefs, ranking, normalize=True):
    pos = positions(ranking)
    n = len(prefs)
    wrong = sum(
        Fraction(prefs[i][j]) for i in range(n) for j in range(n) if pos[i] > pos[j]
    )
    total = sum(Fraction(prefs[i][j]) for i in range(n) for j in range(n))
    if not normalize:
        return wrong
    if total == 0:
        return None
    return wrong / total


# ---------------------------------------------------------------------------
# the references themselves, against hand-computed values
# ---------------------------------------------------------------------------


def test_tie_breakings_enumerates_block_permutations():
    assert sorted(tie_breakings([1, 2, 1, 0])) == [(1, 0, 2, 3), (1, 2, 0, 3)]
    assert len(list(tie_breakings([0] * 4))) == 24
    assert stable_ranking([1, 2, 1, 0]) == (1, 0, 2, 3)


def test_references_on_hand_computed_lists():
    y = [1, 0, 1, 0]
    ranking = (0, 1, 2, 3)
    assert ref_average_precision(y, ranking) == Fraction(5, 6)
    assert ref_auc(y, ranking) == Fraction(3, 4)
    assert ref_precision_at_k(y, ranking, 3) == Fraction(2, 3)
    assert ref_recall_at_k(y, ranking, 1) == Fraction(1, 2)
    assert ref_reciprocal_rank([0, 0, 1], (0, 1, 2)) == Fraction(1, 3)
    assert ref_reciprocal_rank([0, 0, 1], (0, 1, 2), k=2) == 0
    assert ref_pairwise_disagreement([2, 1, 0], (2, 1, 0)) == 1
    assert ref_spearman([1, 2, 3], (2, 1, 0)) == -1
    # ERR with grades 2, 0, 1 on a 0..2 scale: 3/4 + 1/4 * 1 * 1/4 / 3
    assert ref_err([2, 0, 1], (0, 1, 2), 2) == Fraction(3, 4) + Fraction(1, 48)
    assert ref_dcg([3, 2, 0], (0, 1, 2), gain="linear") == pytest.approx(
        3 + 2 / math.log2(3)
    )
    assert ref_eru([3, 1, 2], (0, 1, 2), 1, 2) == pytest.approx(2.25)
    assert ref_ndcg([0, 0], (0, 1)) is None
