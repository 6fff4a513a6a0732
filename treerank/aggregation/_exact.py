"""Exact Kemeny medians with ties: enumeration of weak orders, and an ILP.

**Enumeration.** The bucket orders (weak orders) of n items are built by
inserting item n into each bucket order of the first n - 1 items, either into
one of its Q buckets or alone into one of its Q + 1 gaps; their numbers are the
Fubini numbers 1, 3, 13, 75, 541, 4683, 47293 for n = 1..7. For each unordered
pair the three costs (i above j, tied, i below j) are computed once, and the
objective of every bucket order is a gather and a sum: O(Fubini(M) M^2) time.

**Integer program** (scipy's HiGHS through :func:`scipy.optimize.milp`). For
each pair {i, j} three binaries a_ij (i above j), a_ji (j above i) and t_ij
(tied) with a_ij + a_ji + t_ij = 1; with P(x, y) the "x above y" variable and
T(x, y) the tie variable, the relation is a weak order if and only if, for all
distinct x, y, z,

    P(x,y) + P(y,z) - P(x,z) <= 1,    P(x,y) + T(y,z) - P(x,z) <= 1,
    T(x,y) + P(y,z) - P(x,z) <= 1,    T(x,y) + T(y,z) - T(x,z) <= 1

(transitivity of "above or tied" and of ties). That is 3 M (M-1) / 2 variables
and about 2 M^3 transitivity constraints, which are added lazily (only those
violated by the current solution, re-solving until none is).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import functools

import numpy as np

__all__ = []

MAX_EXACT_ITEMS = 7
MAX_ILP_ITEMS = 60


@functools.cache
def _weak_orders(n_items):
    """All bucket orders of ``n_items`` items, dense, one per row (int8)."""
    orders = np.zeros((1, 1), dtype=np.int8)
    for n in range(1, n_items):
        n_buckets = orders.max(axis=1).astype(np.intp) + 1
        n_children = 2 * n_buckets + 1
        parent = np.repeat(np.arange(orders.shape[0]), n_children)
        run_start = np.repeat(np.cumsum(n_children) - n_children, n_children)
        choice = np.arange(parent.shape[0]) - run_start
        # even choice 2g: new bucket at gap g; odd choice 2q + 1: join bucket q
        previous = orders[parent].astype(np.intp)
        is_gap = choice % 2 == 0
        place = choice // 2
        shifted = previous + (is_gap[:, None] & (previous >= place[:, None]))
        orders = np.empty((parent.shape[0], n + 1), dtype=np.int8)
        orders[:, :n] = shifted
        orders[:, n] = place
    return orders[:, :n_items] if n_items > 0 else orders[:, :0]


def _pair_tables(data):
    """Pairs (i < j) and their costs with i above j, tied, i below j."""
    first, second = np.triu_indices(data.n_items, k=1)
    rows_i = data.ranks_t[first]
    rows_j = data.ranks_t[second]
    better = data.weighted_counts(rows_i < rows_j)
    worse = data.weighted_counts(rows_i > rows_j)
    tied = data.total_weight - better - worse
    mass = data.item_weights[first] * data.item_weights[second]
    costs = np.stack(
        [
            mass * (worse + 0.5 * tied),
            mass * 0.5 * (better + worse),
            mass * (better + 0.5 * tied),
        ],
        axis=1,
    )
    return first, second, costs


def _exact_enumeration(data):
    """Best bucket order by enumeration (first one in enumeration order)."""
    n_items = data.n_items
    if n_items == 1:
        return np.zeros(1, dtype=np.intp)
    orders = _weak_orders(n_items)
    first, second, costs = _pair_tables(data)
    relation = np.sign(
        orders[:, first].astype(np.int8) - orders[:, second].astype(np.int8)
    ).astype(np.intp)
    pair_index = np.arange(first.shape[0])
    values = costs[pair_index[None, :], relation + 1].sum(axis=1)
    return orders[int(np.argmin(values))].astype(np.intp)


def _relation_matrices(solution, first, second, n_items):
    """Dense "above" and "tied" 0/1 matrices from the pair variables."""
    above = np.zeros((n_items, n_items), dtype=np.int8)
    tied = np.zeros((n_items, n_items), dtype=np.int8)
    above[first, second] = solution[:, 0]
    above[second, first] = solution[:, 2]
    tied[first, second] = solution[:, 1]
    tied[second, first] = solution[:, 1]
    return above, tied


def _violated_triples(above, tied):
    """Triples (x, y, z) violating each of the four transitivity constraints."""
    n_items = above.shape[0]
    index = np.arange(n_items)
    distinct = (
        (index[:, None, None] != index[None, :, None])
        & (index[None, :, None] != index[None, None, :])
        & (index[:, None, None] != index[None, None, :])
    )
    found = []
    for left, right, last in (
        (above, above, above),
        (above, tied, above),
        (tied, above, above),
        (tied, tied, tied),
    ):
        # left[x, y] + right[y, z] - last[x, z] > 1
        total = left[:, :, None] + right[None, :, :] - last[:, None, :]
        found.append(np.argwhere((total > 1) & distinct))
    return found


def _exact_ilp(data, time_limit=None):
    """Kemeny median with ties by integer programming (scipy HiGHS).

    The transitivity constraints are added lazily: solve with the constraints
    found so far, add those the solution violates, repeat until it is a weak
    order (then it is optimal for the full program).

    Returns (consensus, proven_optimal).
    """
    import time

    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_array

    n_items = data.n_items
    if n_items == 1:
        return np.zeros(1, dtype=np.intp), True
    first, second, costs = _pair_tables(data)
    n_pairs = first.shape[0]
    n_vars = 3 * n_pairs
    pair_id = np.full((n_items, n_items), -1, dtype=np.intp)
    pair_id[first, second] = np.arange(n_pairs)
    pair_id[second, first] = np.arange(n_pairs)

    def above_var(x, y):  # variable index of "x above y"
        return 3 * pair_id[x, y] + np.where(x < y, 0, 2)

    def tie_var(x, y):
        return 3 * pair_id[x, y] + 1

    variable_of = (
        (above_var, above_var, above_var),
        (above_var, tie_var, above_var),
        (tie_var, above_var, above_var),
        (tie_var, tie_var, tie_var),
    )
    rows = [np.repeat(np.arange(n_pairs), 3)]
    cols = [np.arange(n_vars)]
    vals = [np.ones(n_vars)]
    n_rows = n_pairs
    start = time.perf_counter()
    proven = True
    while True:
        matrix = coo_array(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
            shape=(n_rows, n_vars),
        ).tocsr()
        lower = np.concatenate([np.ones(n_pairs), np.full(n_rows - n_pairs, -np.inf)])
        options = {}
        if time_limit is not None:
            options["time_limit"] = max(
                float(time_limit) - (time.perf_counter() - start), 1e-3
            )
        result = milp(
            costs.ravel(),
            constraints=LinearConstraint(matrix, lower, np.ones(n_rows)),
            integrality=np.ones(n_vars),
            bounds=Bounds(0, 1),
            options=options,
        )
        if result.x is None:
            raise RuntimeError(
                f"The integer program found no solution ({result.message}); "
                "increase time_limit."
            )
        proven = proven and result.status == 0
        solution = np.round(result.x).astype(np.int8).reshape(n_pairs, 3)
        above, tied = _relation_matrices(solution, first, second, n_items)
        violated = _violated_triples(above, tied)
        if not any(v.shape[0] for v in violated):
            break
        if time_limit is not None and time.perf_counter() - start > time_limit:
            proven = False
            break
        for triples, (u_of, v_of, t_of) in zip(violated, variable_of):
            if triples.shape[0] == 0:
                continue
            x, y, z = triples.T
            count = triples.shape[0]
            index = n_rows + np.arange(count)
            rows += [index, index, index]
            cols += [u_of(x, y), v_of(y, z), t_of(x, z)]
            vals += [np.ones(count), np.ones(count), -np.ones(count)]
            n_rows += count
    # number of items above each item; equal counts <=> same bucket
    n_above = above.sum(axis=0).astype(np.intp)
    if any(v.shape[0] for v in violated):
        # time limit hit before transitivity: fall back to the order by
        # number of items above (a valid bucket order, not proven optimal)
        n_above = (above.sum(axis=0) - above.sum(axis=1)).astype(np.intp)
    consensus = np.unique(n_above, return_inverse=True)[1].astype(np.intp)
    return consensus, bool(proven)
