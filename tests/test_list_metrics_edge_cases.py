"""Edge cases of the list metrics, one test each.

From reference/seeds-000-001.md section 6.5 and reference/seeds-002-003.md
section 9, plus input validation (a clear ValueError naming the argument).
"""

import inspect
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

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

ALL_METRICS = [
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
]
EVERY_SCORE_ORDER = [np.array(p, float) for p in itertools.permutations(range(4))]

# ---------------------------------------------------------------------------
# seeds-000-001.md section 6.5
# ---------------------------------------------------------------------------


def test_all_zero_relevance_dcg_and_err_are_zero_for_every_ranking():
    y = np.zeros(4)
    for scores in EVERY_SCORE_ORDER:
        assert dcg_score(y, scores) == 0
        assert dcg_score(y, scores, k=2, gain="linear") == 0
        assert err_score(y, scores, max_grade=3) == 0
        assert expected_rank_utility(y, scores) == 0


def test_all_zero_relevance_ndcg_follows_empty():
    y = np.zeros(4)
    scores = np.arange(4.0)
    assert ndcg_score(y, scores) == 0.0  # sklearn's convention
    assert ndcg_score(y, scores, empty=1.0) == 1.0  # LightGBM / XGBoost
    assert math.isnan(ndcg_score(y, scores, empty=np.nan))
    # grouped: "skip" leaves the query out of the mean, 0.0 averages it in
    y2 = [1, 0, 0, 0, 0, 0]
    s2 = [1.0, 0.0, 0.5, 1.0, 0.0, 0.5]
    qid = [0, 0, 0, 1, 1, 1]
    assert ndcg_score(y2, s2, qid=qid) == 0.5
    mean, per_query = ndcg_score(y2, s2, qid=qid, empty="skip", return_per_query=True)
    assert mean == 1.0
    assert per_query[0] == 1.0 and math.isnan(per_query[1])
    assert math.isnan(ndcg_score(y, scores, empty="skip"))


def test_all_zero_relevance_ap_recall_and_reciprocal_rank_follow_empty():
    y = [0, 0, 0]
    scores = [0.3, 0.2, 0.1]
    for function in (average_precision_score, reciprocal_rank):
        assert function(y, scores) == 0.0
        assert function(y, scores, empty=0.25) == 0.25
    assert recall_at_k(y, scores, k=2) == 0.0
    assert recall_at_k(y, scores, k=2, empty=1.0) == 1.0


def test_all_zero_relevance_auc_is_undefined():
    assert list_auc([0, 0, 0], [1, 2, 3]) == 0.0
    assert math.isnan(list_auc([0, 0, 0], [1, 2, 3], empty=np.nan))
    assert math.isnan(list_auc([0, 0], [1, 2], empty="skip"))


def test_undefined_values_are_constant_in_the_ranking():
    """Whatever the convention, it does not depend on the ranking."""
    y = [0, 0, 0, 0]
    for function in (ndcg_score, average_precision_score, list_auc, reciprocal_rank):
        values = {function(y, s, empty=0.5) for s in EVERY_SCORE_ORDER}
        assert values == {0.5}
    assert len({recall_at_k(y, s, k=2, empty=0.5) for s in EVERY_SCORE_ORDER}) == 1
    # so the Bayes-optimal set is every ranking
    dist = [([0, 0, 0, 0], Fraction(1))]
    for metric in (PositionalMetric.ndcg(4), PositionalMetric.recall_at_k(4, 2)):
        assert len(metric.bayes_optimal_rankings(dist)) == 24


def test_all_relevant_list():
    y = [1, 1, 1, 1]
    for scores in EVERY_SCORE_ORDER:
        assert ndcg_score(y, scores) == pytest.approx(1.0)
        assert average_precision_score(y, scores) == 1.0
    assert list_auc(y, np.arange(4.0)) == 0.0  # undefined: N = 0
    assert math.isnan(list_auc(y, np.arange(4.0), empty=np.nan))


def test_ties_average_is_the_average_over_tie_orders():
    y = [1, 0, 0, 1]
    scores = [0.5, 0.5, 0.5, 0.5]  # every order of the 4 items is equally likely
    orders = [np.array(p, float) for p in itertools.permutations(range(4))]
    expected = np.mean([average_precision_score(y, -o) for o in orders])
    assert average_precision_score(y, scores, ties="average") == pytest.approx(expected)
    # the default is scikit-learn's: one threshold, every item at precision 2/4
    assert average_precision_score(y, scores) == 0.5


def test_k_larger_than_the_list_is_the_whole_list():
    y = [2, 0, 1]
    scores = [0.1, 0.7, 0.4]
    assert ndcg_score(y, scores, k=10) == ndcg_score(y, scores)
    assert dcg_score(y, scores, k=3) == dcg_score(y, scores, k=None)
    assert err_score(y, scores, max_grade=2, k=9) == err_score(y, scores, max_grade=2)
    assert recall_at_k([1, 0, 1], scores, k=5) == 1.0
    assert (
        PositionalMetric.dcg(3, k=7).phi.tolist()
        == PositionalMetric.dcg(3).phi.tolist()
    )


def test_precision_denominator_is_k_even_beyond_the_list():
    """k > n: missing ranks count as irrelevant (denominator k, not min(k, n))."""
    assert precision_at_k([1, 1, 0], [0.3, 0.2, 0.1], k=5) == 2 / 5
    assert precision_at_k([Fraction(1), 1], [0.3, 0.2], k=4) == Fraction(1, 2)
    assert PositionalMetric.precision_at_k(2, 4).value([1, 1], [0, 1]) == 0.5


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "2"])
def test_k_must_be_a_positive_integer(k):
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        ndcg_score([1, 0], [0.1, 0.2], k=k)
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        precision_at_k([1, 0], [0.1, 0.2], k=k)
    with pytest.raises(ValueError, match="k must be an integer >= 1"):
        PositionalMetric.dcg(3, k=k)


def test_k_none_means_the_whole_list_and_is_refused_where_required():
    y, scores = [1, 0, 1, 0, 1], [5, 4, 3, 2, 1]
    assert dcg_score(y, scores, k=None) == dcg_score(y, scores, k=5)
    with pytest.raises(ValueError, match="k is required"):
        precision_at_k(y, scores, k=None)
    with pytest.raises(ValueError, match="k is required"):
        recall_at_k(y, scores, k=None)


def test_single_item_lists():
    """n = 1: every metric is permutation-invariant; trivially 1, or undefined."""
    assert ndcg_score([2], [0.3]) == 1.0
    assert ndcg_score([0], [0.3], empty=np.nan) != ndcg_score([0], [0.3], empty=np.nan)
    assert average_precision_score([1], [0.3]) == 1.0
    assert precision_at_k([1], [0.3], k=1) == 1.0
    assert reciprocal_rank([1], [0.3]) == 1.0
    assert err_score([1], [0.3], max_grade=2) == 0.25  # R(1) = 1/4 on a 0..2 scale
    assert list_auc([1], [0.3], empty=-1.0) == -1.0  # undefined
    assert spearman_rho([1], [0.3], empty=-1.0) == -1.0  # undefined
    assert pairwise_disagreement([3], [0.3], empty=-1.0) == -1.0  # no pair
    assert pairwise_disagreement([3], [0.3], normalize=False) == 0.0
    # the regret-bound constant of a single item is 0
    assert PositionalMetric.dcg(1).weight_gap_norm(2) == 0.0
    assert PositionalMetric.precision_at_k(1, 1).weight_gap_norm(1) == 0.0


def test_two_item_lists():
    """n = 2: C_phi(2) = phi(1) - phi(2); y = (1, 0) by hand."""
    dcg = PositionalMetric.dcg(2)
    assert dcg.weight_gap_norm(2) == pytest.approx(1 - 1 / math.log2(3))
    assert dcg.weight_gap_norm(2) == pytest.approx(0.369070, abs=1e-6)
    worst = np.array([0.0, 1.0])
    assert ndcg_score([1, 0], worst) == pytest.approx(1 / math.log2(3))
    # 1 - AP of the worst ranking is the SLAM weight vMAP_1 = 1/2
    assert average_precision_score([1, 0], worst) == 0.5
    assert list_auc([1, 0], worst) == 0.0
    assert list_auc([1, 0], [0.5, 0.5]) == 0.5


@pytest.mark.parametrize(
    "function", [average_precision_score, list_auc, reciprocal_rank]
)
def test_graded_labels_are_refused_by_binary_metrics(function):
    with pytest.raises(ValueError, match=r"must be binary.*does not binarize"):
        function([2, 0, 1], [0.1, 0.2, 0.3])
    # explicit binarization is the documented way
    y = np.array([2, 0, 1])
    function(y > 0, [0.1, 0.2, 0.3])


def test_graded_labels_are_refused_by_precision_and_recall():
    for function in (precision_at_k, recall_at_k):
        with pytest.raises(ValueError, match="binary"):
            function([2, 0, 1], [0.1, 0.2, 0.3], k=1)


def test_err_max_grade_is_the_scale_maximum():
    y = [1, 0, 1]
    scores = [0.3, 0.2, 0.1]
    # a list whose largest grade is 1 on a 0..3 scale is not a binary list
    assert err_score(y, scores, max_grade=3) == pytest.approx(
        1 / 8 + (7 / 8) * (1 / 8) / 3
    )
    assert err_score(y, scores, max_grade=1) == pytest.approx(1 / 2 + (1 / 4) / 3)
    with pytest.raises(ValueError, match=r"above max_grade=1.*scale"):
        err_score([2, 0], [0.1, 0.2], max_grade=1)
    with pytest.raises(TypeError):
        err_score(y, scores)  # max_grade has no default
    with pytest.raises(ValueError, match="max_grade must be > 0"):
        err_score(y, scores, max_grade=0)


@pytest.mark.parametrize("half_life", [1, 0.5, -2, np.inf])
def test_eru_half_life_must_exceed_one(half_life):
    with pytest.raises(ValueError, match="half_life"):
        expected_rank_utility([2, 1], [0.1, 0.2], half_life=half_life)


def test_eru_neutral_grade():
    # items at or below the neutral grade have no utility
    assert expected_rank_utility([2, 2, 5], [3, 2, 1], neutral=2, half_life=2) == 0.75
    with pytest.raises(ValueError, match="neutral must be finite"):
        expected_rank_utility([2, 1], [0.1, 0.2], neutral=np.nan)


def test_preference_matrix_is_validated():
    scores = [0.1, 0.2, 0.3]
    with pytest.raises(ValueError, match="non-negative"):
        pairwise_disagreement([[0, -1, 0], [0, 0, 0], [0, 0, 0]], scores)
    with pytest.raises(ValueError, match="at most one of"):
        pairwise_disagreement([[0, 1, 0], [2, 0, 0], [0, 0, 0]], scores)
    with pytest.raises(ValueError, match="zero diagonal"):
        pairwise_disagreement([[1, 0, 0], [0, 0, 0], [0, 0, 0]], scores)
    with pytest.raises(ValueError, match="square"):
        pairwise_disagreement([[0, 1, 0], [0, 0, 0]], scores)
    with pytest.raises(ValueError, match="qid must be None"):
        pairwise_disagreement(np.zeros((3, 3)), scores, qid=[0, 0, 1])
    with pytest.raises(ValueError, match="3 x 3 preference matrix but y_score has 2"):
        pairwise_disagreement(np.zeros((3, 3)), [0.1, 0.2])


def test_bayes_optimal_rankings_refuse_a_huge_set():
    dist = [([0] * 11, Fraction(1))]  # every ranking of 11 items is optimal
    with pytest.raises(ValueError, match="optimal rankings"):
        PositionalMetric.dcg(11).bayes_optimal_rankings(dist)


# ---------------------------------------------------------------------------
# seeds-002-003.md section 9
# ---------------------------------------------------------------------------


def test_all_relevances_equal():
    for scores in EVERY_SCORE_ORDER:
        assert ndcg_score([2, 2, 2, 2], scores) == pytest.approx(1.0)
        assert average_precision_score([1, 1, 1, 1], scores) == 1.0
    assert ndcg_score([0, 0, 0, 0], np.arange(4.0), empty=-1.0) == -1.0
    assert average_precision_score([0, 0, 0, 0], np.arange(4.0), empty=-1.0) == -1.0
    # no pair with different grades: the normalized disagreement is undefined
    assert pairwise_disagreement([2, 2, 2], [1, 2, 3], empty=-1.0) == -1.0
    assert pairwise_disagreement([2, 2, 2], [1, 2, 3], normalize=False) == 0.0


def test_all_tied_scores_depend_on_the_tie_rule_only_through_the_policy():
    y = [0, 1, 2]
    scores = [0.0, 0.0, 0.0]
    stable = ndcg_score(y, scores, ties="stable")
    pessimistic = ndcg_score(y, scores, ties="pessimistic")
    optimistic = ndcg_score(y, scores, ties="optimistic")
    average = ndcg_score(y, scores)
    # stable keeps the input order (0, 1, 2), which is here the worst order
    assert stable == pessimistic == pytest.approx(0.586883, abs=1e-6)
    assert optimistic == 1.0
    assert pessimistic < average < optimistic
    # deterministic: the same call gives the same value
    assert ndcg_score(y, scores, ties="stable") == stable


def test_relevance_ties_are_not_pairs():
    # y = (1, 1, 0): the pairs are (0, 2) and (1, 2) only
    assert pairwise_disagreement([1, 1, 0], [0.1, 0.2, 0.3], normalize=False) == 2
    assert pairwise_disagreement([1, 1, 0], [0.1, 0.2, 0.3]) == 1.0
    assert pairwise_disagreement([1, 1, 0], [0.2, 0.1, 0.0]) == 0.0


def test_graded_labels_and_pairwise_disagreement():
    """PD takes graded labels explicitly: every pair y_i > y_j is a preference."""
    assert pairwise_disagreement([2, 1, 0], [0.3, 0.1, 0.2], normalize=False) == 1
    assert pairwise_disagreement([2, 1, 0], [0.3, 0.1, 0.2]) == pytest.approx(1 / 3)


def test_negative_relevance_is_refused():
    for function in (ndcg_score, dcg_score, pairwise_disagreement):
        with pytest.raises(ValueError, match="negative values"):
            function([1, -1, 0], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="negative values"):
        err_score([1, -1, 0], [0.1, 0.2, 0.3], max_grade=2)


def test_non_integer_relevance_is_accepted_by_graded_metrics():
    # gain 2**2.5 - 1 is defined; DCG stays a weighted sum of gains
    value = dcg_score([2.5, 0.0], [0.9, 0.1])
    assert value == pytest.approx(2**2.5 - 1)
    assert ndcg_score([2.5, 0.5], [0.1, 0.9]) < 1.0


# ---------------------------------------------------------------------------
# input validation
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("function", ALL_METRICS, ids=lambda f: f.__name__)
def test_common_signature(function):
    """(y_true, y_score, *, qid=None, ties="average", empty=0.0, return_per_query).

    ``average_precision_score`` defaults to scikit-learn's ``ties="threshold"``.
    """
    parameters = inspect.signature(function).parameters
    assert list(parameters)[:2] == ["y_true", "y_score"]
    ties = "threshold" if function is average_precision_score else "average"
    expected = {"qid": None, "ties": ties, "empty": 0.0, "return_per_query": False}
    for name, default in expected.items():
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
        assert parameters[name].default == default
    options = {"k": 1} if function in (precision_at_k, recall_at_k) else {}
    if function is err_score:
        options = {"max_grade": 1}
    with pytest.raises(ValueError, match="empty must be a number"):
        function([1, 0], [0.1, 0.2], empty="none", **options)


def test_lengths_must_match():
    with pytest.raises(ValueError, match="y_score has 2 elements but 3 were expected"):
        ndcg_score([1, 0, 1], [0.1, 0.2])
    with pytest.raises(ValueError, match="qid has 2 elements but there are 3 rows"):
        ndcg_score([1, 0, 1], [0.1, 0.2, 0.3], qid=[1, 1])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_scores_and_labels_must_be_finite(bad):
    with pytest.raises(ValueError, match="y_score contains NaN or infinity"):
        average_precision_score([1, 0], [0.1, bad])
    with pytest.raises(ValueError, match="y_true contains NaN or infinity"):
        dcg_score([1.0, bad], [0.1, 0.2])
    with pytest.raises(ValueError, match="qid contains NaN or infinity"):
        dcg_score([1.0, 0.0], [0.1, 0.2], qid=[1.0, bad])


def test_empty_input_is_refused():
    with pytest.raises(ValueError, match="y_true is empty"):
        ndcg_score([], [])


def test_two_dimensional_labels_are_refused_where_no_matrix_is_meant():
    with pytest.raises(ValueError, match="one-dimensional"):
        ndcg_score([[1, 0], [0, 1]], [0.1, 0.2])


def test_non_numeric_labels_are_refused():
    with pytest.raises(ValueError, match="y_true must contain numbers"):
        ndcg_score(["a", "b"], [0.1, 0.2])


@pytest.mark.parametrize("ties", ["mean", None, "AVERAGE"])
def test_unknown_tie_policy(ties):
    with pytest.raises(ValueError, match="ties must be one of"):
        dcg_score([1, 0], [0.1, 0.2], ties=ties)


@pytest.mark.parametrize("empty", ["zero", None, True])
def test_unknown_empty_policy(empty):
    with pytest.raises(ValueError, match="empty must be a number"):
        ndcg_score([1, 0], [0.1, 0.2], empty=empty)


def test_unknown_gain():
    with pytest.raises(ValueError, match="gain must be 'exp2'"):
        ndcg_score([1, 0], [0.1, 0.2], gain="exponential")


def test_return_per_query_must_be_boolean():
    with pytest.raises(ValueError, match="return_per_query must be True or False"):
        ndcg_score([1, 0], [0.1, 0.2], return_per_query="yes")


def test_spearman_needs_true_ranks():
    with pytest.raises(ValueError, match=r"true ranks 1\.\.n"):
        spearman_rho([1, 2, 2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"true ranks 1\.\.n"):
        spearman_rho([0, 1, 2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match=r"true ranks 1\.\.n"):
        spearman_rho([1.5, 2, 3], [0.1, 0.2, 0.3])
    # per query
    assert spearman_rho([1, 2, 2, 1], [0.5, 0.1, 0.1, 0.9], qid=[0, 0, 1, 1]) == 1.0
