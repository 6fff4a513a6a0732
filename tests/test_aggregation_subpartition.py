"""Common subpartition of the leaves of several ranking trees."""

import numpy as np
import pytest

from treerank.aggregation import CommonSubpartition, common_subpartition
from treerank.aggregation._subpartition import distinct_leaf_rows
from treerank.ensemble._leaf_tables import LeafTable


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


# ----------------------------------------------------------------------------
# hashing: against np.unique, under forced collisions, and the lookup index
# ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int16])
def test_hashing_matches_numpy_unique(rng, dtype):
    for n_samples, n_trees, n_leaves in [(500, 3, 4), (2000, 40, 3), (300, 1, 50)]:
        leaves = rng.integers(0, n_leaves, size=(n_samples, n_trees)).astype(dtype)
        cells = common_subpartition(leaves)
        unique, inverse = np.unique(
            leaves.astype(np.int64), axis=0, return_inverse=True
        )
        assert np.array_equal(cells.cell_ranks, unique)
        assert np.array_equal(cells.cell_index, inverse.ravel())
        assert cells.cell_ranks.dtype == np.int64


def test_hash_collisions_are_resolved_by_comparing_rows(rng):
    from treerank.aggregation._cell_index import _insert_rows

    leaves = rng.integers(0, 3, size=(400, 4)).astype(np.int64)
    same_hash = np.zeros(400, dtype=np.uint64)  # every row collides
    cell_of_row, first, _ = _insert_rows(leaves, same_hash, np.int64(1023))
    _, expected = np.unique(leaves, axis=0, return_inverse=True)
    # same partition of the rows (cells numbered by first appearance)
    assert first.shape[0] == np.unique(expected).shape[0]
    assert np.array_equal(expected.ravel()[first][cell_of_row], expected.ravel())
    assert np.array_equal(np.sort(first), first)


def test_cell_index_lookup(rng):
    from treerank.aggregation import CellIndex

    leaves = rng.integers(0, 5, size=(3000, 6))
    cells = common_subpartition(leaves)
    index = CellIndex(cells.cell_ranks)
    assert index.n_cells == cells.n_cells and index.n_trees == 6
    # every sample finds its own cell
    assert np.array_equal(index.lookup(leaves), cells.cell_index)
    # new rows: found exactly when they are a cell, whatever their dtype
    new = rng.integers(0, 7, size=(2000, 6)).astype(np.int32)
    found = index.lookup(new)
    known = {tuple(row): c for c, row in enumerate(cells.cell_ranks.tolist())}
    expected = [known.get(tuple(row), -1) for row in new.tolist()]
    assert found.tolist() == expected
    assert (found >= 0).any() and (found < 0).any()
    assert index.lookup(np.empty((0, 6), dtype=int)).shape == (0,)
    # rebuilt after pickling, same answers
    import pickle

    restored = pickle.loads(pickle.dumps(index))
    assert restored._table is None
    assert np.array_equal(restored.lookup(new), found)


def test_cell_index_errors():
    from treerank.aggregation import CellIndex

    with pytest.raises(ValueError, match="cell_ranks must hold distinct rows"):
        CellIndex([[0, 1], [0, 1]])
    with pytest.raises(ValueError, match="cell_ranks must be a two-dimensional"):
        CellIndex([0, 1])
    with pytest.raises(ValueError, match="at least one cell and one tree"):
        CellIndex(np.zeros((0, 3), dtype=int))
    with pytest.raises(ValueError, match="cell_ranks must contain integer"):
        CellIndex([[0.5, 1.0]])
    index = CellIndex([[0, 1], [1, 0]])
    with pytest.raises(ValueError, match="rows has 3 columns but the index"):
        index.lookup([[0, 1, 2]])
    with pytest.raises(ValueError, match="rows must contain integer"):
        index.lookup([[0.0, 1.0]])


@pytest.fixture(params=["numpy", "kernel"])
def sort_path(request, monkeypatch):
    """The cells sorted by numpy (small problems) or by the compiled kernel."""
    from treerank.aggregation import _cell_index

    limit = 1 << 62 if request.param == "numpy" else -1
    monkeypatch.setattr(_cell_index, "_NUMPY_SORT_MAX_ROWS", limit)
    return request.param


def test_lexicographic_order_of_long_shared_prefixes(rng, sort_path):
    # rows that agree on their first 12 columns (past the column-major head
    # of the kernel, past numpy's first 8 columns), long and short runs, large
    # values: the same cells and order as np.unique
    prefix = np.tile(rng.integers(0, 2**40, size=12), (3000, 1))
    tail = rng.integers(0, 3, size=(3000, 6)) * (2**35)
    leaves = np.concatenate([prefix, tail], axis=1)
    leaves[::7, 0] += 1  # a second run of prefixes
    cells = common_subpartition(leaves)
    unique, inverse = np.unique(leaves, axis=0, return_inverse=True)
    assert np.array_equal(cells.cell_ranks, unique)
    assert np.array_equal(cells.cell_index, inverse.ravel())


@pytest.mark.parametrize("n_columns", [1, 3, 8, 9, 40])
def test_numpy_and_kernel_sort_the_cells_alike(n_columns):
    # random rows with repeats and ties on up to all leading columns, any
    # subset of ids in any order: the same stable lexicographic order
    from treerank.aggregation._cell_index import (
        _lexicographic_kernel,
        _lexsort_rows,
    )

    rng = np.random.default_rng(n_columns)
    for n_values in (2, 5, 1000):
        rows = rng.integers(0, n_values, size=(400, n_columns)).astype(np.int32)
        rows[200:260] = rows[0]  # repeated rows keep their order (stable)
        rows[300:, :-1] = rows[1, :-1]  # tied on all but the last column
        ids = rng.permutation(400)[:350].astype(np.int64)
        head = np.ascontiguousarray(rows[ids, :8].T)
        expected = _lexicographic_kernel(rows, ids, head)
        np.testing.assert_array_equal(_lexsort_rows(rows, ids), expected)
        # the definition: sorted by the tuple of the row, then by position
        keys = sorted(range(350), key=lambda k: (tuple(rows[ids[k]]), k))
        np.testing.assert_array_equal(expected, ids[keys])


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_distinct_leaf_rows_are_the_cells_of_common_subpartition(dtype):
    rng = np.random.default_rng(4)
    leaves = rng.integers(0, 3, size=(500, 4)).astype(dtype)
    weights = rng.random(500)
    cells = common_subpartition(leaves, sample_weight=weights)
    kept, cell_index, first, masses = distinct_leaf_rows(leaves, weights)
    assert kept.dtype == dtype and np.shares_memory(kept, leaves)
    np.testing.assert_array_equal(cell_index, cells.cell_index)
    np.testing.assert_array_equal(kept[first], cells.cell_ranks)
    np.testing.assert_array_equal(masses, cells.cell_weights)
    # first: each cell's first sample
    np.testing.assert_array_equal(first, np.unique(cell_index, return_index=True)[1])


def test_transposed_gather_is_the_transpose_of_the_gather():
    rng = np.random.default_rng(5)
    tables = [rng.integers(0, 9, size=k).astype(np.int32) for k in (3, 7, 1, 5)]
    table = LeafTable(tables, np.int32)
    ranks = np.column_stack([rng.integers(0, t.shape[0], 300) for t in tables])
    transposed = table.gather_transposed(ranks)
    assert transposed.dtype == np.int64 and transposed.flags.c_contiguous
    np.testing.assert_array_equal(transposed, table.gather(ranks).T)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("n_rows", [0, 1, 130, 301])
def test_leaf_table_passes_in_threads_equal_numpy(n_threads, n_rows):
    # parts of the rows in threads: the gathered entries and the out-of-sample
    # sums (added in tree order) of the numpy expressions
    rng = np.random.default_rng(n_rows)
    tables = [rng.random(k) for k in (3, 7, 1, 5)]
    table = LeafTable(tables)
    ranks = np.column_stack([rng.integers(0, t.shape[0], n_rows) for t in tables])
    samples = rng.integers(0, 2, size=(4, n_rows)).astype(np.int32)
    gathered = table.gather_transposed(ranks, dtype=np.float64, n_threads=n_threads)
    expected = np.array([t[ranks[:, b]] for b, t in enumerate(tables)])
    np.testing.assert_array_equal(gathered, expected.reshape(4, n_rows))
    sums = table.sum_out_of_sample(ranks, samples, n_threads=n_threads)
    total = np.zeros(n_rows)
    for b, t in enumerate(tables):
        total = total + np.where(samples[b] == 0, t[ranks[:, b]], 0.0)
    np.testing.assert_array_equal(sums, total)
