"""A point of every cell of a median forest (treerank._engine._cell_corners)."""

import numpy as np
import pytest
import scipy.sparse as sp

from treerank import RankingForest
from treerank._engine import corner_values, find_cell_corners, threshold_grids
from treerank.aggregation import common_subpartition
from treerank.datasets import GaussianMeanShift


def _forest_data(seed, missing):
    rng = np.random.default_rng(seed)
    X, y = GaussianMeanShift(n_features=3).sample(600, random_state=seed)
    X = np.round(X, 1)  # ties: several rows per cell
    if missing:
        X[rng.random(X.shape) < 0.15] = np.nan
    return X, y


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("missing", [False, True])
def test_corners_route_to_the_cells_they_stand_for(seed, missing):
    X, y = _forest_data(seed, missing)
    forest = RankingForest(n_estimators=8, random_state=seed).fit(X, y)
    grids = threshold_grids(forest._router, X.shape[1])
    points = corner_values(forest._cell_corners, grids)
    np.testing.assert_array_equal(forest._leaf_ranks(points), forest.cells_)


@pytest.mark.parametrize("seed", range(3))
def test_a_corner_is_the_lowest_point_of_its_rows_box(seed):
    """Invariances: the corner lies at or below the row in every feature, and
    any point of the row's box (the corner itself) has the same corner."""
    X, y = _forest_data(seed, missing=True)
    forest = RankingForest(n_estimators=6, random_state=seed).fit(X, y)
    router = forest._router
    grids = threshold_grids(router, X.shape[1])
    codes = find_cell_corners(router, X, grids)
    points = corner_values(codes, grids)
    np.testing.assert_array_equal(router.leaf_ranks(points), router.leaf_ranks(X))
    observed = ~np.isnan(X)
    for f, grid in enumerate(grids):  # the corner's atom is at or below the row's
        own_atom = np.searchsorted(grid, X[observed[:, f], f], side="left")
        assert np.all(codes[observed[:, f], f] <= own_atom)
    np.testing.assert_array_equal(find_cell_corners(router, points, grids), codes)


def _python_corner(router, row, grids):
    """The corner by a plain walk of every tree's decisions (the oracle)."""
    from treerank._engine._routing import _FEATURE_MASK, MISSING_RIGHT

    low = np.full(row.shape[0], -np.inf)
    tested = np.zeros(row.shape[0], dtype=bool)
    for g in router.entries:
        while g >= 0:
            f = int(router.tests[g] & _FEATURE_MASK)
            threshold = router.nodes["threshold"][g]
            tested[f] = True
            if np.isnan(row[f]):
                right = bool(router.tests[g] & MISSING_RIGHT)
            else:
                right = row[f] > threshold
                if right:
                    low[f] = max(low[f], threshold)
            g = router.nodes["right" if right else "left"][g]
    codes = []
    for f, grid in enumerate(grids):
        if np.isnan(row[f]):
            codes.append(grid.shape[0] + 1 if tested[f] else 0)
        else:
            codes.append(int(np.searchsorted(grid, low[f], side="right")))
    return codes


@pytest.mark.parametrize("missing", [False, True])
def test_corners_equal_a_plain_walk_of_the_decisions(missing):
    X, y = _forest_data(5, missing)
    forest = RankingForest(n_estimators=4, random_state=0).fit(X, y)
    router = forest._router
    grids = threshold_grids(router, X.shape[1])
    codes = find_cell_corners(router, X[:150], grids)
    for row, code in zip(X[:150], codes):
        assert list(code) == _python_corner(router, row, grids)


def test_sparse_input_gives_the_dense_corners():
    X, y = _forest_data(0, missing=False)
    X[np.abs(X) < 0.5] = 0.0
    forest = RankingForest(n_estimators=6, random_state=0).fit(X, y)
    grids = threshold_grids(forest._router, X.shape[1])
    np.testing.assert_array_equal(
        find_cell_corners(forest._router, sp.csr_matrix(X), grids),
        find_cell_corners(forest._router, X, grids),
    )
    sparse = RankingForest(n_estimators=6, random_state=0).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(sparse._cell_corners, forest._cell_corners)


def test_corners_only_where_they_describe_the_cells():
    X, y = _forest_data(0, missing=False)
    # more features than trees: the leaves are the smaller description
    assert RankingForest(n_estimators=2, random_state=0).fit(X, y)._cell_corners is None
    # categorical splits: cells are not threshold boxes
    Xc = X.copy()
    Xc[:, 0] = np.floor(np.abs(Xc[:, 0]) * 2) % 5
    categorical = RankingForest(
        n_estimators=4, categorical_features=[0], random_state=0
    ).fit(Xc, y)
    assert threshold_grids(categorical._router, 3) is None
    assert categorical._cell_corners is None
    # other aggregations remember no cell
    assert (
        RankingForest(n_estimators=4, aggregation="mean", random_state=0)
        .fit(X, y)
        ._cell_corners
        is None
    )


def test_corner_codes_out_of_their_grid_are_refused():
    X, y = _forest_data(0, missing=False)
    forest = RankingForest(n_estimators=4, random_state=0).fit(X, y)
    grids = threshold_grids(forest._router, 3)
    codes = np.zeros((1, 3), dtype=np.int64)
    codes[0, 1] = grids[1].shape[0] + 2
    with pytest.raises(ValueError, match="feature 1 is outside"):
        corner_values(codes, grids)


def test_one_point_per_cell_of_the_training_rows():
    X, y = _forest_data(2, missing=True)
    forest = RankingForest(n_estimators=5, random_state=0).fit(X, y)
    cells = common_subpartition(forest._leaf_ranks(X))
    assert forest._cell_corners.shape == (cells.cell_ranks.shape[0], X.shape[1])
    assert forest._cell_corners.dtype == np.uint16


@pytest.mark.parametrize("missing", [0.0, 0.15])
def test_corners_found_at_save_from_bin_codes_equal_those_of_the_rows(missing):
    # the forest keeps the bin codes of one row per cell and finds the corners
    # from them when a file needs them: the same corners as from the rows
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1500, 4))
    X[:, 2] = np.round(X[:, 2])  # few distinct values
    y = (X[:, 0] + X[:, 1] ** 2 + rng.normal(size=1500) > 1).astype(int)
    X[rng.random(X.shape) < missing] = np.nan
    forest = RankingForest(n_estimators=8, random_state=0).fit(X, y)
    assert "_corner_source" in forest.__dict__
    ranks = forest.apply(X)
    # a training row of each cell, the cells in lexicographic order
    _, rows = np.unique(ranks, axis=0, return_index=True)
    np.testing.assert_array_equal(forest.cells_, ranks[rows])
    expected = forest._find_cell_corners(X, rows)
    np.testing.assert_array_equal(forest._cell_corners, expected)
    assert "_corner_source" not in forest.__dict__
