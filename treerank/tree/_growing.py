"""Recursive growth of a ranking tree (TreeRank's master tree).

A tree whose splitter is :class:`~treerank.LeafRank` is grown by the compiled
engine (:func:`treerank._engine.grow_ranking_tree`) and wrapped here by
:func:`structure_from_grown`; a tree with any other LeafRank (for instance a
:class:`~treerank.ClassifierLeafRank`) is grown node by node by
:func:`grow_ranking_tree`, which fits a clone of the LeafRank on each node's
rows.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import copy

import numpy as np
from sklearn.base import clone

from treerank._engine._grow import MIN_GAIN
from treerank.tree._leafrank import leafrank_fit, leafrank_goes_left
from treerank.tree._structure import RankingTreeStructure

__all__ = ["grow_ranking_tree", "structure_from_grown"]

_MAX_SEED = np.iinfo(np.int32).max
# A split must improve local TPR - FPR by more than rounding noise: the
# engine's threshold, one definition for both growths
_MIN_GAIN = MIN_GAIN


def grow_ranking_tree(
    X,
    y01,
    sample_weight,
    *,
    leafrank,
    max_depth,
    min_samples_split,
    n_features_node,
    rng,
):
    """Grow a ranking tree by recursive LeafRank splits.

    Each node is split by a clone of ``leafrank`` fitted on the node's data;
    the side it sends left is the better one. A node becomes a leaf when it has
    reached ``max_depth``, holds fewer than ``min_samples_split`` rows, is pure,
    or when its LeafRank finds no subset with local TPR - FPR > 0 or leaves a
    side without positive weight.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Validated training data; rows should have positive weight.
    y01 : ndarray of shape (n_samples,)
        Labels in {0, 1}.
    sample_weight : ndarray of shape (n_samples,)
        Positive weights.
    leafrank : LeafRank-like
        Unfitted template, cloned at every node.
    max_depth : int or None
        Maximum depth (root = 0); None for no limit.
    min_samples_split : int
        Minimum number of rows in a node to split it.
    n_features_node : int or None
        Number of features drawn at random for each node (FR1); None for all.
    rng : numpy.random.RandomState
        Source of the per-node seeds and feature draws, used in preorder.

    Returns
    -------
    RankingTreeStructure
    """
    n_samples, n_features = X.shape
    # one clone, copied (not re-cloned) at every node: a LeafRank never
    # modifies its parameters, so a shallow copy of an unfitted clone is a
    # clone, without scikit-learn's per-call introspection of the parameters
    template = clone(leafrank)
    sets_seed = "random_state" in template.get_params(deep=False)
    children_left, children_right = [], []
    n_pos_list, n_neg_list, leafranks, features_list = [], [], [], []
    # stack of (rows, depth, slot to patch in the parent); preorder, left first
    stack = [(np.arange(n_samples), 0, None)]
    while stack:
        rows, depth, parent_slot = stack.pop()
        node = len(children_left)
        if parent_slot is not None:
            parent, side = parent_slot
            (children_left if side == 0 else children_right)[parent] = node
        y_node = y01[rows]
        w_node = sample_weight[rows]
        n_pos = float(w_node[y_node == 1].sum())
        n_neg = float(w_node[y_node == 0].sum())
        children_left.append(-1)
        children_right.append(-1)
        n_pos_list.append(n_pos)
        n_neg_list.append(n_neg)
        leafranks.append(None)
        features_list.append(None)
        if (
            (max_depth is not None and depth >= max_depth)
            or rows.shape[0] < min_samples_split
            or n_pos <= 0
            or n_neg <= 0
        ):
            continue
        if n_features_node is not None and n_features_node < n_features:
            feats = np.sort(rng.choice(n_features, n_features_node, replace=False))
            X_node = X[np.ix_(rows, feats)]
        else:
            feats = None
            X_node = X[rows]
        node_leafrank = copy.copy(template)
        if sets_seed:
            # what set_params does for a plain parameter
            node_leafrank.random_state = int(rng.randint(_MAX_SEED))
        leafrank_fit(node_leafrank, X_node, y_node, w_node)
        left = leafrank_goes_left(node_leafrank, X_node)
        pos = y_node == 1
        beta_left = w_node[left & pos].sum() / n_pos
        alpha_left = w_node[left & ~pos].sum() / n_neg
        if beta_left - alpha_left <= _MIN_GAIN or left.all() or not left.any():
            continue
        leafranks[node] = node_leafrank
        features_list[node] = feats
        # push right first so that the left subtree is numbered first (preorder)
        stack.append((rows[~left], depth + 1, (node, 1)))
        stack.append((rows[left], depth + 1, (node, 0)))
    return RankingTreeStructure(
        children_left, children_right, n_pos_list, n_neg_list, leafranks, features_list
    )


def structure_from_grown(grown, n_features, n_cuts):
    """The :class:`RankingTreeStructure` of a tree grown by the engine.

    Parameters
    ----------
    grown : treerank._engine.GrownTree
    n_features : int
        Number of input features.
    n_cuts : int
        Cuts per rule (the ``k`` of the structural pruning penalty).

    Returns
    -------
    RankingTreeStructure
    """
    return RankingTreeStructure(
        grown.children_left,
        grown.children_right,
        grown.n_pos,
        grown.n_neg,
        rules=grown.rules,
        rule_start=grown.rule_start,
        rule_stop=grown.rule_stop,
        n_features=n_features,
        n_cuts=n_cuts,
    )
