"""Decoders from surrogate predictions to rankings.

A *ranking* is the array of item indices in rank order, best first (0-based),
as returned by ``np.argsort(-scores, kind="stable")``; ``positions`` are the
1-based ranks of the items (``positions[ranking[k]] = k + 1``). The reference
papers use both conventions; everything here converts explicitly.

Brute-force decoders enumerate the ``n!`` permutations and are guarded to
``n <= 8`` (40320 permutations) with a clear error.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
from functools import lru_cache

import networkx as nx
import numpy as np

__all__ = [
    "MAX_BRUTE_FORCE_ITEMS",
    "all_rankings",
    "check_brute_force",
    "greedy_feedback_arc_decoder",
    "positions_from_rankings",
    "sort_decoder",
]

MAX_BRUTE_FORCE_ITEMS = 8


def check_brute_force(n_items, what="the brute-force decoder"):
    """Raise a ``ValueError`` if ``n_items!`` is too large to enumerate."""
    if n_items > MAX_BRUTE_FORCE_ITEMS:
        raise ValueError(
            f"{what} enumerates all {n_items}! rankings; it is limited to lists of "
            f"at most {MAX_BRUTE_FORCE_ITEMS} items (got {n_items}). Use an "
            "efficient decoder (sorting, greedy) for longer lists."
        )


@lru_cache(maxsize=16)
def _all_rankings_cached(n_items):
    rankings = np.array(list(itertools.permutations(range(n_items))), dtype=np.intp)
    rankings.setflags(write=False)
    return rankings


def all_rankings(n_items):
    """All ``n_items!`` rankings in lexicographic order, as an array (guarded)."""
    check_brute_force(n_items, "enumerating rankings")
    return _all_rankings_cached(n_items).reshape(-1, n_items)


def positions_from_rankings(rankings):
    """1-based positions of the items for one ranking (n,) or a batch (b, n)."""
    rankings = np.asarray(rankings)
    positions = np.empty_like(rankings)
    ranks = np.arange(1, rankings.shape[-1] + 1)
    np.put_along_axis(
        positions, rankings, np.broadcast_to(ranks, rankings.shape), axis=-1
    )
    return positions


def sort_decoder(theta):
    """Sort items by decreasing ``theta`` (ties by index): one ranking per row.

    Parameters
    ----------
    theta : array-like of shape (n_items,) or (n_rows, n_items)

    Returns
    -------
    rankings : ndarray of the shape of ``theta``
        Item indices, best first.

    Examples
    --------
    >>> from treerank.surrogates import sort_decoder
    >>> sort_decoder([0.2, 0.9, 0.2])
    array([1, 0, 2])
    """
    theta = np.asarray(theta, dtype=np.float64)
    return np.argsort(-theta, axis=-1, kind="stable")


def greedy_feedback_arc_decoder(weights):
    """Ramaswamy et al.'s Algorithm 1 for pairwise disagreement.

    Build the digraph with an edge ``i -> j`` of weight ``(w_ij - w_ji)_+`` for
    every strictly positive weight; while it has a cycle, delete the lightest
    edge (ties by ``(i, j)``); return the lexicographically smallest topological
    order (``i -> j`` puts ``i`` before ``j``).

    Parameters
    ----------
    weights : array-like of shape (n_items, n_items)
        ``weights[i, j]``: (expected) preference of ``i`` over ``j``.

    Returns
    -------
    ranking : ndarray of shape (n_items,)

    Notes
    -----
    O(E (n + E)) for ``E`` edges: each deletion is followed by a cycle check.
    Exact on P_DAG (when the positive part is already acyclic).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.surrogates import greedy_feedback_arc_decoder
    >>> w = np.array([[0, 3, 0], [0, 0, 2], [1, 0, 0]])  # a cycle 0 > 1 > 2 > 0
    >>> greedy_feedback_arc_decoder(w)  # the lightest edge, 2 -> 0, is dropped
    array([0, 1, 2])
    """
    w = np.asarray(weights, dtype=np.float64)
    n = w.shape[0]
    net = np.maximum(w - w.T, 0.0)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    src, dst = np.nonzero(net > 0)
    edges = sorted(zip(net[src, dst], src, dst))
    graph.add_edges_from((int(i), int(j)) for _, i, j in edges)
    for _, i, j in edges:
        if nx.is_directed_acyclic_graph(graph):
            break
        graph.remove_edge(int(i), int(j))
    return np.array(list(nx.lexicographical_topological_sort(graph)), dtype=np.intp)
