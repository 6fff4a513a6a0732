"""Tests of the synthetic learning-to-rank generator and the qid/size helpers."""

import numpy as np
import pytest
from scipy.stats import norm

from treerank.datasets import make_learning_to_rank, qid_to_sizes, sizes_to_qid
from treerank.metrics import ndcg_score


def test_shapes_grades_and_list_lengths():
    X, y, qid = make_learning_to_rank(
        50, min_docs=3, max_docs=7, n_features=6, max_grade=3, random_state=0
    )
    assert X.shape == (y.shape[0], 6) == (qid.shape[0], 6)
    assert y.dtype.kind == "i" and y.min() >= 0 and y.max() <= 3
    # queries 0..49 in increasing order, rows contiguous
    assert np.array_equal(np.unique(qid), np.arange(50))
    assert np.all(np.diff(qid) >= 0)
    sizes = np.bincount(qid)
    assert sizes.min() >= 3 and sizes.max() <= 7
    # lengths vary
    assert np.unique(sizes).shape[0] > 1


def test_deterministic_given_random_state():
    first = make_learning_to_rank(10, random_state=3)
    second = make_learning_to_rank(10, random_state=3)
    other = make_learning_to_rank(10, random_state=4)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0][:5], other[0][:5])


def test_grades_follow_the_model_without_noise():
    # noise=0: the grade is the number of cut points below the utility, and the
    # utility is the documented function of X and the query offsets
    cutoffs = [-0.5, 0.3, 1.0]
    X, y, qid, utility = make_learning_to_rank(
        30,
        n_features=5,
        n_informative=4,
        max_grade=3,
        interaction=0.7,
        query_offset=0.8,
        noise=0.0,
        cutoffs=cutoffs,
        return_utility=True,
        random_state=1,
    )
    expected_grade = (utility[:, None] > np.asarray(cutoffs)[None, :]).sum(axis=1)
    np.testing.assert_array_equal(y, expected_grade)
    products = X[:, 0] * X[:, 1] + X[:, 2] * X[:, 3]
    f = X[:, :4].sum(axis=1) / 2 + 0.7 * products / np.sqrt(2)
    sd = np.sqrt(1 + 0.7**2 + 0.8**2)
    # utility - f / sd is the query offset / sd: constant inside every query
    offset = utility - f / sd
    for q in np.unique(qid):
        assert np.ptp(offset[qid == q]) < 1e-12


def test_linear_gaussian_model_grade_frequencies():
    # interaction=0: z is standard normal, P(y >= g) = 1 - Phi(cutoff_g)
    _, y, _ = make_learning_to_rank(
        4000, min_docs=10, max_docs=10, interaction=0.0, random_state=0
    )
    n = y.shape[0]
    cutoffs = np.linspace(0.5, 2.0, 4)
    for g, c in enumerate(cutoffs, start=1):
        p = norm.sf(c)
        observed = np.mean(y >= g)
        # queries share an offset (design effect below 2): 6 binomial errors
        assert abs(observed - p) < 6 * np.sqrt(p * (1 - p) / n)


def test_sorting_by_utility_is_best():
    # the noise-free utility is a Bayes-optimal scorer: it beats a noisy version
    # of itself and random scores on NDCG@10
    _, y, qid, utility = make_learning_to_rank(300, return_utility=True, random_state=0)
    rng = np.random.default_rng(0)
    best = ndcg_score(y, utility, qid=qid, k=10)
    noisy = ndcg_score(y, utility + rng.normal(size=y.shape[0]), qid=qid, k=10)
    random = ndcg_score(y, rng.normal(size=y.shape[0]), qid=qid, k=10)
    assert best > noisy > random


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_queries": 0}, "n_queries must be an integer >= 1"),
        ({"min_docs": 5, "max_docs": 4}, "max_docs must be >= min_docs"),
        ({"n_informative": 11}, "n_informative must be <= n_features"),
        ({"max_grade": 0}, "max_grade must be an integer >= 1"),
        ({"noise": -1.0}, "noise must be a finite number >= 0"),
        ({"query_offset": np.inf}, "query_offset must be a finite number"),
        ({"cutoffs": [1.0, 0.5, 2.0, 3.0]}, "strictly increasing"),
        ({"cutoffs": [1.0, 2.0]}, "one cut point per grade"),
        ({"n_informative": 1}, "interaction > 0 needs n_informative >= 2"),
        ({"n_queries": 2.5}, "n_queries must be an integer"),
    ],
)
def test_generator_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_learning_to_rank(**kwargs)


def test_qid_sizes_round_trip():
    qid = np.array([7, 7, 2, 2, 2, 9])
    sizes, ids = qid_to_sizes(qid, return_ids=True)
    np.testing.assert_array_equal(sizes, [2, 3, 1])
    np.testing.assert_array_equal(ids, [7, 2, 9])
    np.testing.assert_array_equal(sizes_to_qid(sizes, ids), qid)
    # default ids of sizes_to_qid are 0..n_groups-1
    np.testing.assert_array_equal(qid_to_sizes(sizes_to_qid([1, 4])), [1, 4])
    _, _, qid = make_learning_to_rank(12, random_state=0)
    np.testing.assert_array_equal(sizes_to_qid(qid_to_sizes(qid)), qid)


def test_qid_to_sizes_strings_and_empty():
    sizes, ids = qid_to_sizes(np.array(["b", "b", "a"]), return_ids=True)
    np.testing.assert_array_equal(sizes, [2, 1])
    np.testing.assert_array_equal(ids, ["b", "a"])
    assert qid_to_sizes(np.array([], dtype=int)).shape == (0,)


def test_qid_to_sizes_errors():
    with pytest.raises(ValueError, match=r"rows of queries \[1\] are not contiguous"):
        qid_to_sizes([1, 1, 2, 1])
    with pytest.raises(ValueError, match="one-dimensional"):
        qid_to_sizes([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="NaN"):
        qid_to_sizes([1.0, np.nan])
    with pytest.raises(ValueError, match="sizes must be non-negative"):
        sizes_to_qid([2, -1])
