"""Query grouping and segment operations (treerank.metrics._grouping, _ties)."""

from fractions import Fraction

import numpy as np
import pytest

from treerank.metrics import average_precision_score, err_score, ndcg_score
from treerank.metrics._grouping import (
    check_qid,
    group_qid,
    segment_exclusive_scan,
    segment_index,
    segment_lexsort,
    segment_positions,
    segment_scan,
    segment_sum,
    sizes_to_qid,
)
from treerank.metrics._ties import check_ties, rank_lists, tie_averaged


def _naive_groups(qid):
    ids = sorted(set(qid.tolist()))
    rows = {q: [i for i, v in enumerate(qid.tolist()) if v == q] for q in ids}
    return ids, rows


@pytest.mark.parametrize(
    "qid",
    [
        np.array([3, 3, 5, 5, 5, 9]),  # sorted: O(n) path
        np.array([5, 3, 9, 3, 5, 5]),  # unsorted
        np.array(["b", "a", "b", "c", "a", "a"]),  # strings
        np.array([2.5, -1.0, 2.5, 0.0]),  # floats
        np.array([7]),
    ],
)
def test_group_qid_matches_naive_grouping(qid):
    groups = group_qid(qid)
    ids, rows = _naive_groups(qid)
    assert groups.ids.tolist() == ids
    assert groups.n_groups == len(ids)
    assert groups.sizes.tolist() == [len(rows[q]) for q in ids]
    assert (
        groups.starts.tolist() == np.cumsum([0, *groups.sizes.tolist()])[:-1].tolist()
    )
    for g, q in enumerate(ids):
        start, size = groups.starts[g], groups.sizes[g]
        assert groups.order[start : start + size].tolist() == rows[q]  # stable
        assert np.all(groups.index[rows[q]] == g)


def test_group_qid_with_many_groups_uses_a_wide_index():
    rng = np.random.default_rng(0)
    qid = rng.integers(0, 70000, 200000)
    groups = group_qid(qid)
    assert groups.n_groups > 65536
    regrouped = qid[groups.order]
    assert np.all(np.diff(regrouped) >= 0)
    assert np.array_equal(np.repeat(groups.ids, groups.sizes), regrouped)


def test_sizes_to_qid_round_trip():
    sizes = np.array([2, 1, 3])
    qid = sizes_to_qid(sizes, ids=[10, 20, 30])
    assert qid.tolist() == [10, 10, 20, 30, 30, 30]
    groups = group_qid(qid)
    assert groups.sizes.tolist() == sizes.tolist()
    assert groups.ids.tolist() == [10, 20, 30]
    assert sizes_to_qid(groups.sizes, groups.ids).tolist() == qid.tolist()
    assert sizes_to_qid([0, 2]).tolist() == [1, 1]
    with pytest.raises(ValueError, match="non-negative"):
        sizes_to_qid([1, -1])
    with pytest.raises(ValueError, match="integers"):
        sizes_to_qid([1.5])
    with pytest.raises(ValueError, match="ids has shape"):
        sizes_to_qid([1, 2], ids=[1])


def test_check_qid_errors():
    with pytest.raises(ValueError, match="one-dimensional"):
        check_qid(np.zeros((2, 2)), 4)
    with pytest.raises(ValueError, match="qid has 2 elements but there are 3 rows"):
        check_qid([1, 2], 3)
    with pytest.raises(ValueError, match="NaN or infinity"):
        check_qid([1.0, np.nan], 2)
    with pytest.raises(ValueError, match="cannot be compared"):
        check_qid(np.array([1, "a"], dtype=object), 2)
    with pytest.raises(ValueError, match="complex"):
        check_qid(np.array([1j, 2j]), 2)
    assert check_qid(np.array([[1], [2]]), 2).tolist() == [1, 2]
    with pytest.raises(ValueError, match="qid is empty"):
        group_qid(np.array([], dtype=int))


def _segments(rng, sizes):
    sizes = np.asarray(sizes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    values = rng.integers(1, 5, sizes.sum())
    return values, starts, sizes


@pytest.mark.parametrize("sizes", [[1], [3, 1, 4], [1] * 5, [17, 2, 33, 1, 64, 65]])
def test_segment_scans_match_loops(sizes):
    rng = np.random.default_rng(1)
    values, starts, sizes = _segments(rng, sizes)
    positions = segment_positions(starts, sizes)
    expected_sum, expected_prod = [], []
    for start, size in zip(starts, sizes):
        block = values[start : start + size]
        expected_sum += np.cumsum(block).tolist()
        expected_prod += [
            int(np.prod(block[: i + 1], dtype=object)) for i in range(size)
        ]
    assert segment_scan(values, positions, np.add).tolist() == expected_sum
    exact = np.array([Fraction(int(v)) for v in values], dtype=object)
    assert segment_scan(exact, positions, np.multiply).tolist() == expected_prod
    exclusive = segment_exclusive_scan(values, positions, np.add, 0)
    assert (exclusive + values).tolist() == expected_sum
    assert np.all(exclusive[positions == 0] == 0)
    assert segment_sum(values, starts).tolist() == [
        int(values[s : s + m].sum()) for s, m in zip(starts, sizes)
    ]
    assert (
        segment_index(sizes).tolist()
        == np.repeat(np.arange(len(sizes)), sizes).tolist()
    )


@pytest.mark.parametrize("n_sizes", [3, 60])  # few sizes: 2-D sorts; many: one sort
def test_segment_lexsort_sorts_every_segment_stably(n_sizes):
    rng = np.random.default_rng(2)
    sizes = rng.integers(1, n_sizes + 1, 200)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    primary = rng.integers(0, 3, sizes.sum()).astype(float)
    secondary = rng.integers(0, 2, sizes.sum()).astype(float)
    perm = segment_lexsort((secondary, primary), starts, sizes)
    for start, size in zip(starts, sizes):
        rows = list(range(start, start + size))
        expected = sorted(rows, key=lambda i: (primary[i], secondary[i], i))
        assert perm[start : start + size].tolist() == expected


def test_rank_lists_blocks_and_positions():
    groups = group_qid(np.array([1, 0, 1, 0, 1, 0]))
    scores = np.array([0.5, 0.2, 0.5, 0.9, 0.1, 0.2])
    ranked = rank_lists(groups, scores, ties="average")
    # query 0: rows 1, 3, 5 -> 3 first, then 1 and 5 tied; query 1: 0, 2 tied, 4
    assert ranked.order.tolist() == [3, 1, 5, 0, 2, 4]
    assert ranked.position.tolist() == [1, 2, 3, 1, 2, 3]
    assert ranked.block_sizes.tolist() == [1, 2, 2, 1]
    assert ranked.offset.tolist() == [0, 0, 1, 0, 1, 0]
    assert not ranked.all_singletons
    averaged = tie_averaged(np.array([1.0, 2.0, 4.0, 1.0, 3.0, 5.0]), ranked)
    assert averaged.tolist() == [1.0, 3.0, 3.0, 2.0, 2.0, 5.0]
    goodness = np.array([0, 1, 1, 0, 0, 2])
    pessimistic = rank_lists(groups, scores, ties="pessimistic", goodness=goodness)
    assert pessimistic.order.tolist() == [3, 1, 5, 0, 2, 4]
    optimistic = rank_lists(groups, scores, ties="optimistic", goodness=goodness)
    assert optimistic.order.tolist() == [3, 5, 1, 2, 0, 4]
    assert optimistic.all_singletons
    with pytest.raises(ValueError, match="needs the relevance"):
        rank_lists(groups, scores, ties="optimistic")
    with pytest.raises(ValueError, match="ties must be one of"):
        check_ties("random")


def test_metrics_on_lists_of_many_distinct_sizes():
    """More than 32 distinct list sizes: the single-sort path, list by list."""
    rng = np.random.default_rng(3)
    sizes = np.arange(1, 61)
    qid = np.repeat(rng.permutation(60), sizes)
    y = rng.integers(0, 3, sizes.sum())
    scores = rng.integers(0, 5, sizes.sum()).astype(float)
    for function, options, labels in [
        (ndcg_score, {"k": 5}, y),
        (average_precision_score, {}, (y > 1).astype(int)),
        (err_score, {"max_grade": 2}, y),
    ]:
        _, per_query = function(
            labels, scores, qid=qid, return_per_query=True, **options
        )
        for g, q in enumerate(np.unique(qid)):
            rows = qid == q
            expected = function(labels[rows], scores[rows], **options)
            assert per_query[g] == pytest.approx(expected, rel=1e-12, abs=1e-12)
