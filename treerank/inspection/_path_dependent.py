"""Exact path-dependent Shapley values of trees with node masses, compiled.

The path-dependent game of a decision tree (Lundberg et al., 2020) fills the
features outside a coalition S from the tree itself: going down from the
root, a decision on a feature of S follows x, and a decision on another
feature goes both ways, each child weighted by its share of the training
mass of the node. A leaf of value ``v`` is thus reached with weight

    prod over the features k of its path of (o_k if k in S else z_k),

where ``o_k`` is 1 when x follows every decision of the path on k (0
otherwise) and ``z_k`` the product of the mass shares of those decisions, and
``v(S)`` is the sum over the leaves of ``v`` times that weight.

The Shapley value of feature j in one leaf's product game is, with U the
features of the path,

    (o_j - z_j) * sum over S in U - {j} of |S|! (|U| - |S| - 1)! / |U|!
                  * prod_{k in S} o_k * prod_{k in U - S - {j}} z_k
    = (o_j - z_j) * integral from 0 to 1 of
                  prod_{k in U - {j}} (z_k + t (o_k - z_k)) dt,

because ``s! (u - 1 - s)! / u!`` is the integral of ``t^s (1 - t)^(u - 1 - s)``
over [0, 1]. The integrand is a polynomial of degree ``|U| - 1`` in t, which
Gauss-Legendre quadrature on ``ceil(|U| / 2)`` nodes integrates exactly; the
products leaving out one factor come from prefix and suffix products (no
division). A row costs ``O(L D^2)`` per tree of L leaves and depth D.

Only a tree has this game: the training masses that weigh the children of
each decision are those of a tree's nodes. A ranking tree compiles to a tree
only when each of its LeafRank rules is a single split (for instance
``LeafRank(max_depth=1)``); then the decisions are the master nodes, whose
training masses the model keeps. The graph of deeper rules merges the inner
leaves of a side into the same child, and the model keeps no mass for the
inner decisions (and the tree it unfolds into has leaves that no training row
reaches), so the path-dependent form is refused there.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank._engine._jit import jit
from treerank.inspection._interventional import _FEATURE_MASK, follow

__all__ = ["decision_masses", "gauss_legendre_table", "path_dependent_values"]


def decision_masses(graph, leaf_masses):
    """Training mass of every decision of a tree-shaped graph.

    Parameters
    ----------
    graph : tuple
        A tree's decision graph (:func:`~treerank._engine.compile_graph`).
    leaf_masses : ndarray of shape (n_leaves,)
        Training mass of each leaf, by rank.

    Returns
    -------
    masses : ndarray of float64 of shape (n_decisions,), or None
        The mass below each decision; None when the graph is not a tree (a
        decision or a leaf reached from two decisions).
    max_depth : int
        Most decisions on a path from the entry.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.inspection._path_dependent import decision_masses
    >>> graph = (0, np.array([0], np.int32), np.array([1.5]),
    ...          np.array([0], np.uint8), np.array([1], np.uint8),
    ...          np.array([-2], np.int32), np.array([-1], np.int32),
    ...          np.array([-1], np.int32))
    >>> decision_masses(graph, np.array([3.0, 1.0]))
    (array([4.]), 1)
    """
    entry, _, _, _, _, next_left, next_right, _ = graph
    n = next_left.shape[0]
    leaf_masses = np.asarray(leaf_masses, dtype=np.float64)
    reached = np.zeros(n, dtype=np.int64)
    leaf_reached = np.zeros(leaf_masses.shape[0], dtype=np.int64)
    for child in np.concatenate([next_left, next_right]):
        if child >= 0:
            reached[child] += 1
        else:
            leaf_reached[-1 - child] += 1
    if entry < 0:
        return np.zeros(0), 0
    if np.any(reached > 1) or np.any(leaf_reached > 1):
        return None, 0
    masses = np.zeros(n)
    depth = np.zeros(n, dtype=np.int64)
    order = []  # preorder from the entry
    stack = [int(entry)]
    while stack:
        g = stack.pop()
        order.append(g)
        for child in (next_left[g], next_right[g]):
            if child >= 0:
                depth[child] = depth[g] + 1
                stack.append(int(child))
    for g in reversed(order):  # children before their parent
        total = 0.0
        for child in (next_left[g], next_right[g]):
            total += masses[child] if child >= 0 else leaf_masses[-1 - child]
        masses[g] = total
    return masses, int(depth[order].max()) + 1


def gauss_legendre_table(max_nodes):
    """Gauss-Legendre nodes and weights on [0, 1], for 1 to ``max_nodes`` nodes.

    Returns
    -------
    nodes, weights : ndarray of shape (max_nodes + 1, max_nodes)
        Row m holds the m-node rule (zero padded); row 0 is empty.
    """
    nodes = np.zeros((max_nodes + 1, max(max_nodes, 1)))
    weights = np.zeros_like(nodes)
    for m in range(1, max_nodes + 1):
        t, w = np.polynomial.legendre.leggauss(m)
        nodes[m, :m] = 0.5 * (t + 1.0)
        weights[m, :m] = 0.5 * w
    return nodes, weights


@jit
def _leaf_contribution(value, unique, n_unique, one, zero, gl_nodes, gl_weights, phi):
    """Add one leaf's Shapley values (the integral form) to ``phi``."""
    m = (n_unique + 1) // 2
    prefix = np.empty(n_unique + 1)
    suffix = np.empty(n_unique + 1)
    integral = np.zeros(n_unique)
    for q in range(m):
        t = gl_nodes[m, q]
        prefix[0] = 1.0
        for i in range(n_unique):
            k = unique[i]
            prefix[i + 1] = prefix[i] * (zero[k] + t * (one[k] - zero[k]))
        suffix[n_unique] = 1.0
        for i in range(n_unique - 1, -1, -1):
            k = unique[i]
            suffix[i] = suffix[i + 1] * (zero[k] + t * (one[k] - zero[k]))
        for i in range(n_unique):
            integral[i] += gl_weights[m, q] * prefix[i] * suffix[i + 1]
    for i in range(n_unique):
        k = unique[i]
        phi[k] += value * (one[k] - zero[k]) * integral[i]


@jit
def path_dependent_values(
    X,
    entries,
    nodes,
    tests,
    category_sets,
    masses,
    leaf_masses,
    mass_offset,
    values,
    value_offset,
    gl_nodes,
    gl_weights,
    max_depth,
    out,
):
    """Path-dependent Shapley values of a sum of trees, for every row of X.

    Parameters
    ----------
    X : ndarray of float64 of shape (n_samples, n_features)
    entries, nodes, tests, category_sets :
        Tree-shaped decision graphs, as in :class:`~treerank._engine.Router`.
    masses : ndarray of float64 of shape (n_decisions,)
        Training mass of each decision (:func:`decision_masses`).
    leaf_masses : ndarray of float64
        Training mass of tree b's leaf of rank r at
        ``leaf_masses[mass_offset[b] + r]``.
    mass_offset : ndarray of int64 of shape (n_trees,)
    values : ndarray of float64
        Leaf values, tree b's leaf of rank r at ``values[value_offset[b] + r]``.
    value_offset : ndarray of int64 of shape (n_trees,)
    gl_nodes, gl_weights : ndarray
        :func:`gauss_legendre_table` for at least half the deepest path.
    max_depth : int
        Most decisions on a path of any of the trees.
    out : ndarray of float64 of shape (n_samples, n_features)
        Receives the values (overwritten).
    """
    n_features = X.shape[1]
    one = np.ones(n_features)
    zero = np.ones(n_features)
    count = np.zeros(n_features, dtype=np.int64)
    unique = np.empty(n_features, dtype=np.int64)
    # the edge into each depth: its feature and the factors it replaced
    edge_feature = np.empty(max_depth, dtype=np.int64)
    saved_one = np.empty(max_depth)
    saved_zero = np.empty(max_depth)
    stack_node = np.empty(2 * max_depth + 2, dtype=np.int64)
    stack_depth = np.empty(2 * max_depth + 2, dtype=np.int64)
    stack_feature = np.empty(2 * max_depth + 2, dtype=np.int64)
    stack_one = np.empty(2 * max_depth + 2)
    stack_zero = np.empty(2 * max_depth + 2)
    for i in range(X.shape[0]):
        phi = out[i]
        phi[:] = 0.0
        x = X[i]
        for b in range(entries.shape[0]):
            entry = entries[b]
            if entry < 0:
                continue
            tree_values = values[value_offset[b] :]
            tree_leaf_masses = leaf_masses[mass_offset[b] :]
            n_unique = 0
            depth = 0
            stack_node[0] = entry
            stack_depth[0] = 0
            stack_feature[0] = -1
            stack_one[0] = 1.0
            stack_zero[0] = 1.0
            sp = 1
            while sp > 0:
                sp -= 1
                g = stack_node[sp]
                target = stack_depth[sp]
                while depth > target:  # undo the edges below the target depth
                    depth -= 1
                    k = edge_feature[depth]
                    one[k] = saved_one[depth]
                    zero[k] = saved_zero[depth]
                    count[k] -= 1
                    if count[k] == 0:
                        n_unique -= 1
                k = stack_feature[sp]
                if k >= 0:
                    edge_feature[depth] = k
                    saved_one[depth] = one[k]
                    saved_zero[depth] = zero[k]
                    if count[k] == 0:
                        unique[n_unique] = k
                        n_unique += 1
                        one[k] = 1.0
                        zero[k] = 1.0
                    count[k] += 1
                    one[k] *= stack_one[sp]
                    zero[k] *= stack_zero[sp]
                    depth += 1
                if g < 0:
                    if n_unique > 0:
                        _leaf_contribution(
                            tree_values[-1 - g],
                            unique,
                            n_unique,
                            one,
                            zero,
                            gl_nodes,
                            gl_weights,
                            phi,
                        )
                    continue
                feature = np.int64(tests[g] & _FEATURE_MASK)
                goes = follow(x[feature], g, nodes, tests, category_sets)
                for side in range(2):
                    child = nodes[g].left if side == 0 else nodes[g].right
                    if child >= 0:
                        child_mass = masses[child]
                    else:
                        child_mass = tree_leaf_masses[-1 - child]
                    stack_node[sp] = child
                    stack_depth[sp] = depth
                    stack_feature[sp] = feature
                    stack_one[sp] = 1.0 if goes == child else 0.0
                    stack_zero[sp] = child_mass / masses[g]
                    sp += 1
            while depth > 0:  # restore the factors for the next tree
                depth -= 1
                k = edge_feature[depth]
                one[k] = saved_one[depth]
                zero[k] = saved_zero[depth]
                count[k] -= 1
