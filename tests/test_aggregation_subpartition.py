"""Common subpartition of the leaves of several ranking trees."""

import numpy as np
import pytest

from treerank.aggregation import CommonSubpartition, common_subpartition


def subpartition_oracle(leaves, weights):
    """Cells as the blocks of the intersection of the trees' partitions."""
    n_samples, n_trees = leaves.shape
    blocks = [set(range(n_samples))]
    for b in range(n_trees):  # refine by the partition of tree b
        refined = []
        for block in blocks:
            for leaf in np.unique(leaves[list(block), b]):
                part = {i for i in block if leaves[i, b] == leaf}
                refined.append(part)
        blocks = refined
    return {
        tuple(int(v) for v in leaves[min(block)]): (
            frozenset(block),
            float(sum(weights[i] for i in block)),
        )
        for block in blocks
    }


@pytest.mark.parametrize("max_leaf", [3, 300, 70000])
def test_matches_intersection_of_partitions(rng, max_leaf):
    for _ in range(5):
        n_samples, n_trees = int(rng.integers(1, 60)), int(rng.integers(1, 5))
        leaves = rng.integers(0, 4, size=(n_samples, n_trees))
        leaves[:, 0] *= max_leaf // 3  # exercise 1-, 2- and 4-byte keys
        weights = rng.random(n_samples)
        cells = common_subpartition(leaves, sample_weight=weights)
        oracle = subpartition_oracle(leaves, weights)
        assert cells.n_cells == len(oracle)
        for cell in range(cells.n_cells):
            key = tuple(int(v) for v in cells.cell_ranks[cell])
            members, mass = oracle[key]
            assert frozenset(np.flatnonzero(cells.cell_index == cell)) == members
            assert cells.cell_weights[cell] == pytest.approx(mass)
        assert np.array_equal(cells.rankings, cells.cell_ranks.T)
        assert cells.rankings.flags["C_CONTIGUOUS"]
        # cells sorted lexicographically by their leaf-rank vectors
        order = np.lexsort(cells.cell_ranks.T[::-1])
        assert np.array_equal(order, np.arange(cells.n_cells))


def test_unweighted_masses_are_counts():
    leaves = [[0, 2], [1, 0], [0, 2], [0, 2], [1, 1]]
    cells = common_subpartition(leaves)
    assert isinstance(cells, CommonSubpartition)
    assert cells.cell_index.tolist() == [0, 1, 0, 0, 2]
    assert cells.cell_weights.tolist() == [3.0, 1.0, 1.0]
    # tree 0 ties cells 1 and 2 (same leaf), tree 1 orders all three
    assert cells.rankings.tolist() == [[0, 1, 1], [2, 0, 1]]


def test_zero_weight_samples_keep_a_cell():
    cells = common_subpartition([[0], [1]], sample_weight=[0.0, 2.0])
    assert cells.n_cells == 2
    assert cells.cell_weights.tolist() == [0.0, 2.0]


def test_integral_float_leaves_are_accepted():
    cells = common_subpartition(np.array([[0.0, 1.0], [0.0, 1.0]]))
    assert cells.n_cells == 1
    assert cells.cell_ranks.dtype == np.int64


@pytest.mark.parametrize(
    ("leaves", "match"),
    [
        ([0, 1, 2], "two-dimensional"),
        (np.zeros((0, 2), dtype=int), "at least one sample and one tree"),
        ([[0, -1]], "negative values"),
        ([[0.5, 1.0]], "integer leaf ranks"),
        ([["a", "b"]], "integer leaf ranks"),
    ],
)
def test_errors(leaves, match):
    with pytest.raises(ValueError, match=match):
        common_subpartition(leaves)


def test_sample_weight_errors():
    with pytest.raises(ValueError, match="sample_weight has 1 elements"):
        common_subpartition([[0], [1]], sample_weight=[1.0])
