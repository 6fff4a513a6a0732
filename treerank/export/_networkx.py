"""A ranking tree as a networkx directed graph."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import networkx as nx
import numpy as np

from treerank.export._nodes import (
    check_feature_names,
    leaf_scores,
    positive_rate,
    resolve_tree,
    rule_text,
)

__all__ = ["to_networkx"]


def to_networkx(tree, feature_names=None):
    """Convert a fitted ranking tree to a :class:`networkx.DiGraph`.

    Nodes are the tree's node ids (depth-first preorder, the left child
    first); every internal node has an edge to its left (better) child added
    before the edge to its right (worse) child, so the successors of a node
    come out left first and a depth-first traversal
    (:func:`networkx.dfs_preorder_nodes`) meets the leaves in rank order, best
    first.

    Parameters
    ----------
    tree : TreeRank or RankingTreeStructure
        A fitted :class:`~treerank.TreeRank` or its ``tree_``.
    feature_names : sequence of str or None, default=None
        Names of the features, used in the split rules. Defaults to the
        estimator's ``feature_names_in_`` when it was fitted on a DataFrame,
        else ``x[i]``.

    Returns
    -------
    graph : networkx.DiGraph
        A tree (an arborescence rooted at node 0) with these attributes.

        Every node:

        - ``id`` (int), ``depth`` (int, 0 at the root), ``is_leaf`` (bool);
        - ``n_pos``, ``n_neg`` (float): weighted positive and negative
          training counts; ``pos_rate``: ``n_pos / (n_pos + n_neg)``;
        - ``alpha``, ``beta``: the node's false and true positive masses;
          ``alpha_lo``, ``beta_lo``, ``alpha_hi``, ``beta_hi``: the ROC
          segment it occupies;
        - ``dauc``: the AUC gain of the node's split (0 for a leaf);
        - ``leaf_rank``: 0 for the best leaf up to K - 1, -1 for internal
          nodes (as ``tree_.leaf_rank``).

        Leaves also carry ``score`` (the value of ``decision_function`` on
        the leaf for a TreeRank; ``K - leaf_rank`` for a bare structure) and,
        for a TreeRank, ``proba`` (the calibrated ``P(Y = 1 | leaf)``).
        Internal nodes also carry ``rule``, the LeafRank's description of the
        left (better) side, with the names of the features it was fitted on.

        Edges carry ``side`` (``"left"`` or ``"right"``) and ``order`` (0 for
        left, 1 for right). The graph attributes are ``n_leaves``, ``auc``
        (training AUC, ``1/2 + sum of dauc``) and ``feature_names``.

    See Also
    --------
    export_graphviz : The tree as Graphviz DOT text.
    export_text : The tree as indented text.
    treerank.plotting.plot_tree : Draw the tree with matplotlib.

    Notes
    -----
    Cost O(node count) plus one ``describe`` call per internal node.

    Examples
    --------
    >>> import networkx as nx
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.export import to_networkx
    >>> X, y = make_nested_squares(500, random_state=0)
    >>> tree = TreeRank(max_depth=2, random_state=0).fit(X, y)
    >>> graph = to_networkx(tree, feature_names=["u", "v"])
    >>> graph.number_of_nodes() == 2 * tree.n_leaves_ - 1
    True
    >>> nx.is_arborescence(graph)
    True
    >>> order = nx.dfs_preorder_nodes(graph, 0)
    >>> leaves = [n for n in order if graph.out_degree(n) == 0]
    >>> [graph.nodes[n]["leaf_rank"] for n in leaves] == list(range(tree.n_leaves_))
    True
    >>> graph.nodes[0]["rule"]
    'left if ...'
    """
    structure, estimator = resolve_tree(tree)
    names = check_feature_names(feature_names, structure, estimator)
    rates = positive_rate(structure)
    scores, proba = leaf_scores(structure, estimator)
    graph = nx.DiGraph(
        n_leaves=structure.n_leaves,
        auc=structure.auc(),
        feature_names=None if names is None else list(names),
    )
    for node in range(structure.node_count):
        is_leaf = bool(structure.children_left[node] < 0)
        attributes = {
            "id": node,
            "depth": int(structure.depth[node]),
            "is_leaf": is_leaf,
            "n_pos": float(structure.n_pos[node]),
            "n_neg": float(structure.n_neg[node]),
            "pos_rate": float(rates[node]),
            "alpha": float(structure.alpha[node]),
            "beta": float(structure.beta[node]),
            "alpha_lo": float(structure.alpha_lo[node]),
            "beta_lo": float(structure.beta_lo[node]),
            "alpha_hi": float(structure.alpha_hi[node]),
            "beta_hi": float(structure.beta_hi[node]),
            "dauc": float(structure.dauc[node]),
            "leaf_rank": int(structure.leaf_rank[node]),
        }
        if is_leaf:
            rank = int(structure.leaf_rank[node])
            attributes["score"] = float(scores[rank])
            if proba is not None:
                attributes["proba"] = float(proba[rank])
        else:
            attributes["rule"] = rule_text(structure, node, names)
        graph.add_node(node, **attributes)
    for node in np.flatnonzero(~structure.is_leaf):
        node = int(node)
        graph.add_edge(node, int(structure.children_left[node]), side="left", order=0)
        graph.add_edge(node, int(structure.children_right[node]), side="right", order=1)
    return graph
