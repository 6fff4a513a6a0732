"""The Kendall median of a graded TreeRank's threshold trees, as a RankingForest.

A :class:`~treerank.TreeRank` fitted on ``K > 2`` ordered grades grows one
bipartite tree per threshold "grade >= g_k" (``k = 1..K-1``) and scores with
the Kendall median of their rankings over the common subpartition of their
leaves: exactly a :class:`~treerank.RankingForest` of these ``K - 1`` trees
(``consensus_``), which this module assembles from the fitted trees.

This is the one place where a tree needs the ensemble: the median of trees is
the forest's, and the forest's trees are TreeRanks. ``TreeRank`` imports this
module inside its graded ``fit`` (see ``tests/test_import_graph.py``).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.ensemble._forest import RankingForest
from treerank.ensemble._multipartite import aggregate_graded

__all__ = ["threshold_tree_median"]


def threshold_tree_median(tree, trees, X, leaf_ranks, codes, grades, weight, seed):
    """The RankingForest of a graded TreeRank's threshold trees, aggregated.

    Parameters
    ----------
    tree : TreeRank
        The graded TreeRank being fitted (its parameters describe the trees;
        ``feature_matrix`` has already set its input attributes).
    trees : list of K - 1 fitted TreeRank
        The bipartite tree of every threshold, lowest first.
    X : {ndarray, sparse matrix} of shape (n_samples, n_features)
        The training rows, as checked by ``feature_matrix``.
    leaf_ranks : ndarray of int32 of shape (n_samples, K - 1)
        The leaf rank of every training row in every tree.
    codes : ndarray of int of shape (n_samples,)
        Grade codes ``0..K-1``.
    grades : ndarray of shape (K,)
        The grades, lowest first.
    weight : ndarray of shape (n_samples,)
        Normalized sample weights.
    seed : int
        Seed of the aggregation (also the forest's ``random_state``).

    Returns
    -------
    consensus : RankingForest
        Fitted: ``leaf_scores="rank"`` (the trees' own rankings),
        ``aggregation="median"``, calibrated per threshold.
    """
    n_grades = grades.shape[0]
    levels = np.arange(1, n_grades)
    # a forest whose parameters describe its trees (model files check them)
    leafrank = tree._leafrank_template()
    consensus = RankingForest(
        n_estimators=n_grades - 1,
        bootstrap=False,
        max_features=getattr(leafrank, "max_features", None),
        max_features_node=tree.max_features_node,
        max_depth=tree.max_depth,
        min_samples_split=tree.min_samples_split,
        leafrank=leafrank,
        ccp_alpha=tree.ccp_alpha,
        leaf_scores="rank",  # the trees' own rankings: a median of TreeRanks
        aggregation="median",
        multipartite="thresholds",
        monotonic_cst=tree.monotonic_cst,
        categorical_features=tree.categorical_features,
        random_state=seed,
    )
    consensus.n_features_in_ = X.shape[1]
    consensus._category_encoder = tree._category_encoder
    if hasattr(tree, "feature_names_in_"):
        consensus.feature_names_in_ = tree.feature_names_in_
    consensus.estimators_ = trees
    consensus._build_router()
    consensus.estimators_samples_ = np.ones((n_grades - 1, X.shape[0]), dtype=np.int32)
    consensus._n_leaves = np.array([t.tree_.n_leaves for t in trees])
    consensus._monotonic = False
    aggregate_graded(consensus, X, leaf_ranks, levels, codes, grades, weight, seed)
    # the trees were binned each its own way: a point of every cell is a
    # training row of it (model files store the cells as these points)
    cell = consensus._cell_index.lookup(np.ascontiguousarray(leaf_ranks))
    seen = np.flatnonzero(cell >= 0)  # rows of zero weight may be in no cell
    rows = seen[np.unique(cell[seen], return_index=True)[1]]
    consensus._cell_corners = consensus._find_cell_corners(X, rows)
    return consensus
