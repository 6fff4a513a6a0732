"""A ranking tree with CART rules compiled into one flat routing table.

Each internal node of a ranking tree holds a LeafRank; with the CART LeafRank
that rule is itself a small binary tree whose leaves say "left" or "right". By
inlining these inner trees, with each inner leaf pointing directly to the root
of the next master node's rule (or to a master leaf), the whole ranking tree
becomes one binary decision graph over the input features. A point is routed by
about ``max_depth * inner_depth`` vectorized steps over all rows at once,
instead of one Python-level call per master node. The comparisons are those of
the inner trees (float32 feature value against float64 threshold), so the leaf
reached is exactly the one of the node-by-node traversal.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["compile_routing", "route"]


def _rule_arrays(rule):
    """(children_left, children_right, feature, threshold, left_nodes) or None."""
    arrays = getattr(rule, "_inner_tree_arrays", None)
    return None if arrays is None else arrays()


def compile_routing(structure):
    """Compile a ranking tree whose rules are all CART rules.

    Parameters
    ----------
    structure : RankingTreeStructure

    Returns
    -------
    routing : tuple or None
        ``(start, feature, threshold, next_left, next_right)``, where the
        ``next_*`` entries are flat node ids (>= 0) or ``-1 - leaf_rank`` for a
        master leaf, and ``start`` is the first flat node (or a leaf code).
        None if some rule is not a CART rule (routing falls back to the
        node-by-node traversal).
    """
    internal = np.flatnonzero(structure.children_left >= 0)
    if internal.shape[0] == 0:
        return (
            -1,
            np.zeros(0, np.intp),
            np.zeros(0),
            np.zeros(0, np.intp),
            np.zeros(0, np.intp),
        )
    rules = {}
    offsets, total = {}, 0
    for node in internal:
        arrays = _rule_arrays(structure.leafranks[node])
        if arrays is None:
            return None
        cl, cr, feature, threshold, left_nodes = arrays
        decision = np.flatnonzero(np.asarray(cl) >= 0)
        rules[node] = (
            np.asarray(cl),
            np.asarray(cr),
            np.asarray(feature),
            np.asarray(threshold),
            np.asarray(left_nodes),
            decision,
        )
        offsets[node] = total
        total += decision.shape[0]

    def entry(master_node):
        """Flat id of the first decision of a master node, or its leaf code."""
        if structure.children_left[master_node] < 0:
            return -1 - int(structure.leaf_rank[master_node])
        _, _, _, _, left_nodes, decision = rules[master_node]
        if decision.shape[0] == 0:  # a rule with no inner split
            child = (
                structure.children_left if left_nodes[0] else structure.children_right
            )[master_node]
            return entry(child)
        return offsets[master_node]

    feature_all = np.empty(total, dtype=np.intp)
    threshold_all = np.empty(total, dtype=np.float64)
    next_left = np.empty(total, dtype=np.intp)
    next_right = np.empty(total, dtype=np.intp)
    for node in internal:
        cl, cr, feature, threshold, left_nodes, decision = rules[node]
        local = np.full(cl.shape[0], -1, dtype=np.intp)
        local[decision] = np.arange(decision.shape[0]) + offsets[node]
        targets = {
            True: entry(structure.children_left[node]),
            False: entry(structure.children_right[node]),
        }

        def resolve(inner, local=local, cl=cl, left_nodes=left_nodes, targets=targets):
            return local[inner] if cl[inner] >= 0 else targets[bool(left_nodes[inner])]

        columns = structure.features[node]
        flat = local[decision]
        mapped = (
            feature[decision]
            if columns is None
            else np.asarray(columns)[feature[decision]]
        )
        feature_all[flat] = mapped
        threshold_all[flat] = threshold[decision]
        next_left[flat] = [resolve(i) for i in cl[decision]]
        next_right[flat] = [resolve(i) for i in cr[decision]]
    return entry(0), feature_all, threshold_all, next_left, next_right


def route(routing, X):
    """Leaf rank reached by each row of X (float32 values) through a routing.

    Parameters
    ----------
    routing : tuple
        As returned by :func:`compile_routing`.
    X : ndarray of shape (n_samples, n_features), dtype float32

    Returns
    -------
    leaf_rank : ndarray of int of shape (n_samples,)
    """
    start, feature, threshold, next_left, next_right = routing
    n = X.shape[0]
    node = np.full(n, start, dtype=np.intp)
    active = np.arange(n) if start >= 0 else np.zeros(0, dtype=np.intp)
    while active.shape[0]:
        current = node[active]
        values = X[active, feature[current]].astype(np.float64)
        following = np.where(
            values <= threshold[current], next_left[current], next_right[current]
        )
        node[active] = following
        active = active[following >= 0]
    return -1 - node
