"""A forest's aggregation in a model file: leaf scores, median cells, mid-ranks.

What a RankingForest needs, beyond its trees, to score a row as it did:

- how its trees score their leaves (``leaf_scores_``, by rank or by rate):
  the values are recomputed from the trees, the file holds the choice, the
  smoothing of the rates and the out-of-bag criteria;
- with ``aggregation="median"``, the cells of the common subpartition, their
  consensus positions and masses. A cell is stored as a point inside it, a
  code per feature, when its forest has those points (see
  :mod:`treerank._engine._cell_corners`): the consensus is then the sizes of
  its buckets, the cells in the consensus order; else as its leaves, sorted;
- with ``aggregation="borda"``, the leaf mid-ranks of every tree;
- with ``include_training_data=True``, the per-training-row arrays
  ``estimators_samples_`` and ``oob_decision_function_``.

Reading checks that the cells are distinct (as points, they are routed to
their leaves), that the consensus uses the positions 0, 1, ... without gaps,
that the masses are positive, that the stored Kendall objectives of the
consensus and of the Borda order are those the cells, masses and consensus
give (an edited mass or consensus position changes them), that the mid-ranks
are in [0, 1], non-increasing along each tree's order of its leaves and the
mid-ranks of non-negative masses adding up to 1, and that the training arrays
draw the rows the forest's sampling draws.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from treerank._engine import corner_values, threshold_grids
from treerank.model_io._arrays import (
    ROUNDING,
    check_array,
    check_declared,
    check_indices,
    narrow,
)
from treerank.model_io._params import json_number

__all__ = [
    "OBJECTIVE_ROUNDING",
    "decode_leaf_scores",
    "encode_leaf_scores",
    "pack_aggregation",
    "pack_training_data",
    "unpack_median",
    "unpack_midranks",
    "unpack_training_data",
]


OBJECTIVE_ROUNDING = 1e-9
"""Relative difference allowed between a stored and a recomputed objective."""


def encode_leaf_scores(model, description):
    """How the trees score their leaves: the choice, the smoothing, the criteria."""
    description["leaf_scores"] = model.leaf_scores_
    description["rate_smoothing"] = float(model._rate_smoothing)
    # the pseudo-rows chosen out of bag (a file of an earlier version has none)
    chosen = getattr(model, "rate_smoothing_", None)
    description["rate_smoothing_rows"] = None if chosen is None else float(chosen)
    description["oob_leaf_scores"] = {
        kind: None if math.isnan(value) else float(value)
        for kind, value in model.oob_leaf_scores_.items()
    }


def decode_leaf_scores(model, description):
    """How the trees score their leaves: the values are recomputed from the trees."""
    kind = description.get("leaf_scores", "rank")
    if kind not in ("rank", "rate"):
        raise ValueError(f"leaf_scores must be 'rank' or 'rate'; got {kind!r}")
    if model.leaf_scores != "auto" and kind != model.leaf_scores:
        raise ValueError(
            f"leaf_scores is {kind!r} but the parameter leaf_scores is "
            f"{model.leaf_scores!r}"
        )
    model._rate_smoothing = json_number(
        description.get("rate_smoothing", 0.0), "rate_smoothing", low=0
    )
    chosen = description.get("rate_smoothing_rows")
    model.rate_smoothing_ = (
        None
        if chosen is None or kind != "rate"
        else json_number(chosen, "rate_smoothing_rows", low=0)
    )
    oob = description.get("oob_leaf_scores", {kind: None})
    if model.leaf_scores != "auto":
        candidates = (kind,)
    else:  # monotone forests only rank their leaves by rank
        candidates = ("rank",) if model._monotonic else ("rank", "rate")
    if not isinstance(oob, dict) or set(oob) != set(candidates):
        raise ValueError(f"oob_leaf_scores must have the entries {list(candidates)}")
    model.oob_leaf_scores_ = {
        key: np.nan if value is None else json_number(value, "oob_leaf_scores", low=0)
        for key, value in oob.items()
    }
    model._set_leaf_values(kind, model._leaf_value_arrays(kind))


def pack_aggregation(model, arrays, corners=True):
    """The arrays of the median (cells) or of the Borda count (mid-ranks).

    A median forest's cells are stored as the corner codes of their points
    when it has them (``corners=True``), else as leaf tuples.
    """
    if model.aggregation == "median":
        cell_corners = getattr(model, "_cell_corners", None)
        if corners and cell_corners is not None:
            # the cells as points, in the consensus order: the consensus is
            # then the sizes of its buckets
            order = np.argsort(model.consensus_, kind="stable")
            arrays["cell_corners"] = narrow(cell_corners[order])
            arrays["cell_bucket_sizes"] = narrow(np.bincount(model.consensus_))
            arrays["cell_weights"] = narrow(model.cell_weights_[order])
        else:
            arrays["cells"] = narrow(model.cells_)
            arrays["consensus"] = narrow(model.consensus_)
            arrays["cell_weights"] = narrow(model.cell_weights_)
    elif model.aggregation == "borda":
        arrays["midranks"] = narrow(np.concatenate(model._midranks))


def unpack_median(model, arrays, n_leaves):
    """The median of a forest: cells, consensus, masses, and their indexes.

    The stored objectives (``consensus_objective_``, ``borda_objective_``, set
    by the caller) must be those of the cells, masses and consensus: the
    Kendall objective of the consensus, and that of the Borda order of the
    cells (a function of their rankings and masses alone).
    """
    from treerank.aggregation import (
        CellIndex,
        ConsensusInserter,
        kemeny_median,
        kemeny_objective,
    )

    _set_median(model, arrays, n_leaves)
    rankings = model._cell_rankings(model.cells_)
    weights = model.cell_weights_
    consensus = kemeny_objective(model.consensus_, rankings, item_weights=weights)
    borda = kemeny_median(rankings, item_weights=weights, method="borda").consensus
    borda = kemeny_objective(borda, rankings, item_weights=weights)
    for name, value in (
        ("consensus_objective", consensus),
        ("borda_objective", borda),
    ):
        stored = getattr(model, name + "_")
        if not abs(float(value) - stored) <= OBJECTIVE_ROUNDING * max(1.0, stored):
            raise ValueError(
                f"{name} is {stored!r}, but the cells, their masses and the "
                f"consensus give {float(value)!r}: they are not the fitted median"
            )
    model._inserter = ConsensusInserter(
        model.consensus_, rankings, item_weights=weights
    )
    model._cell_index = CellIndex(model.cells_)


def _set_median(model, arrays, n_leaves):
    if "cell_corners" in arrays:
        cells, consensus, weights = _median_from_corners(model, arrays)
    else:
        cells, consensus, weights = _median_from_cells(arrays, n_leaves)
    n_cells = cells.shape[0]
    used = np.zeros(n_cells, dtype=bool)
    used[consensus] = True
    n_buckets = int(consensus.max()) + 1
    if not np.all(used[:n_buckets]):
        raise ValueError("the consensus must use the positions 0, 1, ... without gaps")
    if np.any(weights <= 0):
        raise ValueError("the cell weights must be positive")
    model.cells_ = np.ascontiguousarray(cells)
    model.consensus_ = consensus
    model.cell_weights_ = weights
    model.n_cells_ = int(n_cells)


def _median_from_corners(model, arrays):
    """Cells, consensus and masses of a file storing the cells as points.

    ``cell_corners`` holds a point of every cell (corner codes,
    :mod:`treerank._engine._cell_corners`) in the consensus order,
    ``cell_bucket_sizes`` the number of cells in each bucket of the consensus,
    ``cell_weights`` their masses in the same order. The cells are the leaves
    of the points, sorted lexicographically as a fitted forest holds them.
    """
    from treerank.aggregation import common_subpartition

    grids = (
        None
        if model._router is None
        else threshold_grids(model._router, model.n_features_in_)
    )
    if grids is None:
        raise ValueError(
            "cell_corners need trees of numeric threshold rules (store cells)"
        )
    limits = np.array([grid.shape[0] + 1 for grid in grids])
    # the shapes of the three arrays, and the small ones, before the corners
    n_cells, _ = check_declared(
        arrays, "cell_corners", kinds="iu", ndim=2, shape=(None, model.n_features_in_)
    )
    if n_cells == 0:
        raise ValueError("the array cell_corners is empty")
    (n_buckets,) = check_declared(arrays, "cell_bucket_sizes", kinds="iu")
    if n_buckets > n_cells:
        raise ValueError(
            f"the array cell_bucket_sizes has {n_buckets} buckets for {n_cells} cells"
        )
    check_declared(arrays, "cell_weights", kinds="iuf", shape=(n_cells,))
    sizes = check_array(
        arrays, "cell_bucket_sizes", kinds="iu", bounds=(1, n_cells), dtype=np.int64
    )
    if sizes.sum() != n_cells:
        raise ValueError(
            f"the cell_bucket_sizes add up to {int(sizes.sum())} for "
            f"{n_cells} cell corners"
        )
    weights = _cell_weights(arrays, n_cells)
    codes = check_array(
        arrays, "cell_corners", kinds="iu", ndim=2, shape=(None, model.n_features_in_)
    )
    # a code per feature, 0 to the number of its thresholds + 1 (missing)
    check_indices(
        codes,
        limits[None, :] + 1,
        "cell_corners",
        size_name="a code of the grid of its feature's thresholds",
    )
    _precheck_distinct_rows(codes, "cell_corners")
    leaves = model._router.leaf_ranks(corner_values(codes, grids))
    sub = common_subpartition(leaves)
    if sub.cell_ranks.shape[0] != n_cells:
        raise ValueError(
            "the cell corners must be distinct cells: two of them fall in the same cell"
        )
    cell = sub.cell_index  # sorted position of each point's cell
    consensus = np.empty(n_cells, dtype=np.int64)
    consensus[cell] = np.repeat(np.arange(sizes.shape[0]), sizes)
    sorted_weights = np.empty(n_cells, dtype=np.float64)
    sorted_weights[cell] = weights
    corners = np.empty(codes.shape, dtype=np.uint16)
    corners[cell] = codes
    model._cell_corners = corners
    return sub.cell_ranks.astype(np.int32), consensus, sorted_weights


def _median_from_cells(arrays, n_leaves):
    """Cells, consensus and masses of a file storing the cells as leaf tuples."""
    n_cells, _ = check_declared(
        arrays, "cells", kinds="iu", ndim=2, shape=(None, n_leaves.shape[0])
    )
    if n_cells == 0:
        raise ValueError("the array cells is empty")
    check_declared(arrays, "consensus", kinds="iu", shape=(n_cells,))
    check_declared(arrays, "cell_weights", kinds="iuf", shape=(n_cells,))
    cells = check_array(
        arrays, "cells", kinds="iu", ndim=2, shape=(None, n_leaves.shape[0])
    )
    # each cell's leaf in every tree
    cells = check_indices(
        cells,
        n_leaves[None, :],
        "cells",
        size_name="a cell refers to a leaf that its tree does not have",
    ).astype(np.int32)
    if not _lexicographically_increasing(cells):
        raise ValueError("the cells must be distinct and sorted (lexicographically)")
    consensus = check_indices(
        check_array(arrays, "consensus", kinds="iu", shape=(n_cells,)),
        n_cells,
        "consensus",
        size_name="a position among the cells",
    ).astype(np.int64)
    weights = _cell_weights(arrays, n_cells)
    return cells, consensus, weights


def _cell_weights(arrays, n_cells):
    weights = check_array(
        arrays,
        "cell_weights",
        kinds="iuf",
        shape=(n_cells,),
        finite=True,
        dtype=np.float64,
    )
    if np.any(weights <= 0):
        raise ValueError("the cell weights must be positive")
    return weights


def _lexicographically_increasing(rows, chunk=8192):
    """Whether the rows of an integer matrix increase strictly (lexicographic)."""
    for start in range(0, rows.shape[0] - 1, chunk):
        block = rows[start : start + chunk + 1].astype(np.int64)
        diff = block[1:] - block[:-1]
        nonzero = diff != 0
        first = np.argmax(nonzero, axis=1)
        if not np.all(nonzero[np.arange(first.shape[0]), first]):
            return False
        if np.any(diff[np.arange(first.shape[0]), first] < 0):
            return False
    return True


def _precheck_distinct_rows(codes, name, chunk=2**18):
    """No two equal rows within any chunk of rows: a cheap necessary condition
    of distinct cells, checked before the corners are routed (a member of
    zeros, say, is refused without routing millions of copies of one point).
    """
    for start in range(0, codes.shape[0], chunk):
        part = np.ascontiguousarray(codes[start : start + chunk])
        rows = part.view(np.dtype((np.void, part.dtype.itemsize * part.shape[1])))
        if np.unique(rows).shape[0] != part.shape[0]:
            raise ValueError(
                f"the array {name} holds a point twice: two cells would be one"
            )


def unpack_midranks(model, arrays, n_leaves):
    """The leaf mid-ranks of every tree (``aggregation="borda"``)."""
    midranks = check_array(
        arrays,
        "midranks",
        kinds="iuf",
        shape=(int(n_leaves.sum()),),
        bounds=(-ROUNDING, 1 + ROUNDING),
        dtype=np.float64,
    )
    cuts = np.cumsum(n_leaves)[:-1]
    model._midranks = np.split(midranks, cuts)
    for b, tree_midranks in enumerate(model._midranks):
        # along the tree's order of its leaves (its leaf scores)
        positions = model._tree_positions(b)
        order = np.argsort(positions, kind="stable")
        if np.any(np.diff(tree_midranks[order]) > ROUNDING):
            raise ValueError("midranks must not increase from a tree's best leaf")
        _check_midrank_masses(tree_midranks, positions, b)


def _check_midrank_masses(midranks, positions, tree):
    """The mid-ranks of a tree are those of masses: non-negative, adding up to 1.

    The mid-rank of the leaves at position p (best first) is the mass of the
    positions after p plus half their own, so the masses follow from the
    mid-ranks: ``w_0 = 2 (1 - m_0)``, ``w_p = 2 (m_{p-1} - m_p) - w_{p-1}``,
    and the last mid-rank is half the last mass. Leaves at one position share
    its mid-rank. All-zero mid-ranks (a constant ranker), or mid-ranks scaled
    or shifted, imply a negative mass or a total other than 1: refused.
    """
    present, first = np.unique(positions, return_index=True)
    values = midranks[first]  # one mid-rank per position, best first
    if np.any(np.abs(midranks - values[np.searchsorted(present, positions)]) > 0):
        raise ValueError(
            f"midranks of tree {tree}: leaves at one position have different mid-ranks"
        )
    masses = np.empty(values.shape[0])
    previous_midrank, previous_mass = 1.0, 0.0
    for p, midrank in enumerate(values.tolist()):
        masses[p] = 2.0 * (previous_midrank - midrank) - previous_mass
        previous_midrank, previous_mass = midrank, masses[p]
    tolerance = ROUNDING * max(1, values.shape[0])
    if np.any(masses < -tolerance) or abs(values[-1] - masses[-1] / 2) > tolerance:
        raise ValueError(
            f"midranks of tree {tree} are not the mid-ranks of any masses (they "
            "imply a negative mass, or masses that do not add up to 1)"
        )


def pack_training_data(model, arrays):
    """The per-training-row arrays (``include_training_data=True``)."""
    arrays["estimators_samples"] = narrow(model.estimators_samples_)
    arrays["oob_decision_function"] = narrow(model.oob_decision_function_)


def unpack_training_data(model, arrays):
    """The per-training-row arrays, consistent with the forest's sampling."""
    n_trees = len(model.estimators_)
    _, n_rows = check_declared(
        arrays, "estimators_samples", kinds="iu", ndim=2, shape=(n_trees, None)
    )
    check_declared(arrays, "oob_decision_function", kinds="iuf", shape=(n_rows,))
    samples = check_array(
        arrays,
        "estimators_samples",
        kinds="iu",
        ndim=2,
        shape=(n_trees, None),
        bounds=(0, None),
        dtype=np.int32,
    )
    n_samples = samples.shape[1]
    oob = check_array(
        arrays,
        "oob_decision_function",
        kinds="iuf",
        shape=(n_samples,),
        dtype=np.float64,
    )
    n_draw = model._sample_size(n_samples)
    if np.any(samples.sum(axis=1, dtype=np.int64) != n_draw) or (
        not model.bootstrap and samples.max(initial=0) > 1
    ):
        raise ValueError(
            f"estimators_samples must draw {n_draw} rows per tree "
            f"(bootstrap={model.bootstrap})"
        )
    seen_by_all = np.all(samples > 0, axis=0)
    if np.any(np.isnan(oob) != seen_by_all) or np.any(oob[~seen_by_all] < 0):
        raise ValueError(
            "oob_decision_function must be NaN exactly for the rows every tree saw"
        )
    if np.any(oob[~seen_by_all] > 1):
        raise ValueError("oob_decision_function must be in [0, 1]")
    model.estimators_samples_ = samples
    model.oob_decision_function_ = oob
