"""Local search for the weighted Kemeny median with ties.

The moves are those of BioConsert: take one item out of its bucket and put it
into another bucket, or alone into a new bucket between two buckets (or at an
end). A move is applied only if it lowers the objective

    F(c) = sum_b w_b sum_{i<j} m_i m_j U_ij(c, r_b).

Cost of a move. For item i in consensus bucket q0 and any bucket q, let
``better_q`` and ``atmost_q`` be the ranking-weighted masses of the members of q
that ranking b puts strictly above, or not below, item i (see
:mod:`treerank.aggregation._bucket_index`; i itself is left out), ``mass_q`` their
mass and W = sum_b w_b. Passing i from just above bucket q to just below it
changes the cost of i's pairs by

    slope_q = W mass_q - better_q - atmost_q

(the members ranked below i become discordant, those ranked above it stop
being so), and tying i with q instead of placing it just above q changes it by

    tie_q = W mass_q / 2 - atmost_q.

So with "i alone just above q0" as the reference (cost 0), a new bucket at gap g
costs the sum of the slopes of the buckets between q0 and g, tying with q costs
that plus tie_q, and the present position costs tie_{q0}; all times m_i. Every
candidate within ``window`` buckets of q0 is scored from 2 * window + 1 bucket
queries per item, and the best one is kept.

Parallel moves. One pass evaluates the best move of every active item against
the same consensus and applies them together. The exact change of F for a batch
is the sum of the single-move changes plus a correction for each pair of moved
items whose *spans* (the buckets between an item's old bucket and its target,
inclusive) overlap: only such pairs can see their relative order change in a
way the single moves did not account for. These pairs are compared directly.
The subset of moves with pairwise disjoint spans made of every move whose gain
is the largest among the moves it overlaps has an exactly additive change and
contains the best move; the whole batch is applied when it lowers F more than
that subset, the subset otherwise. So every pass lowers F, until no item has an
improving move (a local optimum for the window).

Work per pass, with ``window`` = w: each item queries 2w + 1 buckets. A bucket
of at most 8 items costs one comparison of two (B,) rows per member; a larger
bucket costs one look-up per ranking in a table of prefix masses over the K_b
buckets of the ranking, built for the large buckets in view, O(n_large K_b) per
ranking. So a pass costs O(M (2w + 1) B) elementary operations (times at most 8
for small buckets) plus O(n_large sum_b K_b) for the tables and the
corrections of interacting moves; no M x M array is formed. After the first
pass only items near the last moves are re-examined; a full pass confirms
convergence.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.aggregation._bucket_index import _SMALL_MAX, _BucketIndex
from treerank.aggregation._bucket_order import _dot
from treerank.aggregation._kernels import (
    _compiled_for,
    _gather_sorted,
    _use_compiled,
    _weight_groups,
    bucket_order,
)
from treerank.aggregation._local_search_kernels import (
    _batch_kernel,
    _best_moves_kernel,
    _count_overlaps,
    _local_search_kernel,
    _window_sums_kernel,
)
from treerank.aggregation._threads import run_on_parts, split_range

__all__ = []

_PAIR_BUDGET = 1 << 23  # compared bytes per chunk of correction pairs
_MAX_BATCH_PAIRS = 1 << 21  # interacting pairs examined per batch


def _candidate_columns(window):
    """Column order of [ties (2w+1), gaps (2w+2)] by distance to the item."""
    n_slots = 2 * window + 1
    tie_offsets = np.arange(n_slots) - window
    gap_offsets = np.arange(n_slots + 1) - window - 0.5
    distance = np.concatenate([np.abs(tie_offsets), np.abs(gap_offsets)])
    is_gap = np.concatenate([np.zeros(n_slots), np.ones(n_slots + 1)])
    signed = np.concatenate([tie_offsets, gap_offsets])
    return np.lexsort((signed, is_gap, distance))


def _best_moves(index, data, items, window, rtol=1e-12):
    """Best move of each item within ``window`` buckets.

    Returns the movers (items whose best move lowers F) as a dict of arrays:
    ``item``, ``gain`` (decrease of F), ``key`` (float position of the target on
    the old bucket scale), ``lo``, ``hi`` (span of old buckets).
    """
    n_buckets = index.n_buckets
    consensus = index.consensus
    window = int(min(window, n_buckets - 1))
    n_slots = 2 * window + 1
    n_items = items.shape[0]
    q0 = consensus[items]
    better_m, atmost_m, valid = index.window_sums(items, window)
    slot_bucket = np.clip(q0[:, None] + (np.arange(n_slots) - window), 0, n_buckets - 1)
    mass_m = np.where(valid, index.bucket_mass[slot_bucket], 0.0)
    own_mass = data.item_weights[items]
    total_weight = data.total_weight
    # leave the item out of its own bucket
    mass_m[:, window] -= own_mass
    atmost_m[:, window] -= total_weight * own_mass
    slope = total_weight * mass_m - better_m - atmost_m
    tie_extra = 0.5 * total_weight * mass_m - atmost_m
    cumulative = np.zeros((n_items, n_slots + 1))
    np.cumsum(slope, axis=1, out=cumulative[:, 1:])
    gap = cumulative - cumulative[:, window : window + 1]
    tie = gap[:, :-1] + tie_extra
    current = tie[:, window].copy()
    tie[~valid] = np.inf
    gap_bucket = q0[:, None] + (np.arange(n_slots + 1) - window)[None, :]
    gap[(gap_bucket < 0) | (gap_bucket > n_buckets)] = np.inf
    columns = _candidate_columns(window)
    costs = np.concatenate([tie, gap], axis=1)[:, columns]
    choice = np.argmin(costs, axis=1)
    best = costs[np.arange(n_items), choice]
    gain = own_mass * (current - best)
    scale = total_weight * float(data.item_weights.sum())
    threshold = rtol * own_mass * scale
    movers = np.flatnonzero(gain > threshold)
    column = columns[choice[movers]]
    is_gap = column >= n_slots
    offset = np.where(is_gap, column - n_slots, column) - window
    origin = q0[movers]
    target = origin + offset
    # a gap g holds a new bucket between buckets g - 1 and g; items arriving
    # from above and from below are kept in two sub-buckets, above then below
    from_above = is_gap & (target > origin)
    key = target.astype(np.float64)
    key[is_gap] -= 0.5
    key[is_gap & from_above] -= 0.25
    key[is_gap & ~from_above] += 0.25
    lo = np.minimum(origin, target)
    hi = np.maximum(origin, target)
    hi[from_above] -= 1  # a gap below the origin passes buckets origin..g-1
    return {
        "item": items[movers],
        "gain": gain[movers],
        "key": key,
        "lo": lo,
        "hi": hi,
        "threshold": threshold[movers],
    }


def _overlapping_pairs(lo, hi):
    """Pairs (a, b), a != b, of intervals [lo, hi] that intersect."""
    order = np.argsort(lo, kind="stable")
    sorted_lo = lo[order]
    end = np.searchsorted(sorted_lo, hi[order], side="right")
    counts = np.maximum(end - np.arange(order.shape[0]) - 1, 0)
    total = int(counts.sum())
    if total == 0:
        empty = np.empty(0, dtype=np.intp)
        return empty, empty
    first = np.repeat(np.arange(order.shape[0]), counts)
    run_start = np.repeat(np.cumsum(counts) - counts, counts)
    second = first + 1 + (np.arange(total) - run_start)
    return order[first], order[second]


def _count_overlapping_pairs(lo, hi):
    sorted_lo = np.sort(lo)
    order = np.argsort(lo, kind="stable")
    end = np.searchsorted(sorted_lo, hi[order], side="right")
    return int(np.maximum(end - np.arange(lo.shape[0]) - 1, 0).sum())


def _pair_cost(better, worse, total_weight, relation):
    """Cost of a pair given i vs j in the rankings and in the consensus.

    ``relation`` < 0: i above j, 0: tied, > 0: i below j.
    """
    tied = total_weight - better - worse
    return np.where(
        relation < 0,
        worse + 0.5 * tied,
        np.where(relation > 0, better + 0.5 * tied, 0.5 * (better + worse)),
    )


def _corrections(data, first, second, old, new):
    """Sum over pairs of the non-additive part of moving both items."""
    total = 0.0
    n_pairs = first.shape[0]
    step = max(1024, _PAIR_BUDGET // max(data.n_rankings, 1))
    total_weight = data.total_weight
    for s in range(0, n_pairs, step):
        i = first[s : s + step]
        j = second[s : s + step]
        row_i = data.ranks_t[i]
        row_j = data.ranks_t[j]
        better = data.weighted_counts(row_i < row_j)
        worse = data.weighted_counts(row_i > row_j)
        corr = (
            _pair_cost(better, worse, total_weight, np.sign(new[i] - new[j]))
            - _pair_cost(better, worse, total_weight, np.sign(new[i] - old[j]))
            - _pair_cost(better, worse, total_weight, np.sign(old[i] - new[j]))
            + _pair_cost(better, worse, total_weight, np.sign(old[i] - old[j]))
        )
        total += _dot(data.item_weights[i] * data.item_weights[j], corr)
    return total


def _apply_batch(data, consensus, moves):
    """Choose the moves to apply and return (accepted mask over movers, delta)."""
    gain = moves["gain"]
    n_moves = gain.shape[0]
    priority = np.lexsort((moves["item"], -gain))  # best gain first
    rank = np.empty(n_moves, dtype=np.intp)
    rank[priority] = np.arange(n_moves)
    lo, hi = moves["lo"], moves["hi"]
    batch = n_moves
    while batch > 1:
        chosen = priority[:batch]
        if _count_overlapping_pairs(lo[chosen], hi[chosen]) <= _MAX_BATCH_PAIRS:
            break
        batch //= 2
    chosen = np.sort(priority[:batch])
    first, second = _overlapping_pairs(lo[chosen], hi[chosen])
    first, second = chosen[first], chosen[second]
    old = consensus.astype(np.float64)
    new = old.copy()
    items = moves["item"]
    new[items[chosen]] = moves["key"][chosen]
    # positions as seen by the pairs: indexed by item
    delta = -float(gain[chosen].sum())
    if first.shape[0]:
        delta += _corrections(data, items[first], items[second], old, new)
    # moves whose gain is the best among the moves they overlap: disjoint spans,
    # so their changes add up exactly
    dominated = np.zeros(n_moves, dtype=bool)
    loser = np.where(rank[first] > rank[second], first, second)
    dominated[loser] = True
    independent = np.zeros(n_moves, dtype=bool)
    independent[chosen] = ~dominated[chosen]
    independent_delta = -float(gain[independent].sum())
    tolerance = float(moves["threshold"][chosen].sum())
    if delta < min(independent_delta, -tolerance):
        accepted = np.zeros(n_moves, dtype=bool)
        accepted[chosen] = True
        return accepted, delta
    return independent, independent_delta


def _affected_items(consensus, moves, accepted, window, n_buckets):
    """Items whose window may have changed after the accepted moves."""
    lo = np.maximum(moves["lo"][accepted] - window - 1, 0)
    hi = np.minimum(moves["hi"][accepted] + window + 2, n_buckets)
    marks = np.bincount(lo, minlength=n_buckets + 1) - np.bincount(
        hi, minlength=n_buckets + 1
    )
    touched = np.cumsum(marks)[:n_buckets] > 0
    active = touched[consensus]
    active[moves["item"][accepted]] = True
    return np.flatnonzero(active)


def _local_search(data, consensus, objective, *, window, max_iter, tol=0.0):
    """Improve ``consensus`` by single-item moves until none lowers F.

    Stops when no move lowers F (converged), after ``max_iter`` passes, or when
    a pass lowers F by at most ``tol * F``. Returns (consensus, objective,
    n_passes, converged); ``objective`` is F at the start, updated by the exact
    change of each pass.
    """
    n_items = data.n_items
    consensus = np.asarray(consensus, dtype=np.intp)
    active = np.arange(n_items)
    full = True
    n_passes = 0
    converged = False
    while n_passes < max_iter:
        n_passes += 1
        index = _BucketIndex(data, consensus)
        moves = _best_moves(index, data, active, window)
        if moves["item"].shape[0] == 0:
            if full:
                converged = True
                break
            active = np.arange(n_items)
            full = True
            continue
        accepted, delta = _apply_batch(data, consensus, moves)
        keys = consensus.astype(np.float64)
        keys[moves["item"][accepted]] = moves["key"][accepted]
        active = _affected_items(
            consensus, moves, accepted, min(window, index.n_buckets), index.n_buckets
        )
        consensus = np.unique(keys, return_inverse=True)[1].astype(np.intp)
        objective += delta
        full = active.shape[0] == n_items
        if -delta <= tol * objective:
            break
    return consensus, objective, n_passes, converged


# ----------------------------------------------------------------------------
# compiled pass (same moves, same batch rule)
# ----------------------------------------------------------------------------
def _best_moves_compiled(data, consensus, items, window, groups, rtol=1e-12):
    """Compiled :func:`_best_moves` against a fixed consensus (dense buckets).

    The kernels work on the items sorted by consensus bucket (rank rows copied
    in that order), so that the members of a bucket and the items around it
    are contiguous in memory; the moves are returned by item, as
    :func:`_best_moves` returns them.
    """
    n_buckets = int(consensus.max()) + 1
    order = bucket_order(consensus)
    position = np.empty_like(order)
    position[order] = np.arange(order.shape[0])
    sizes = np.bincount(consensus, minlength=n_buckets)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    bucket_mass = np.bincount(consensus, weights=data.item_weights, minlength=n_buckets)
    window = int(min(window, n_buckets - 1))
    bounds, values = groups
    # a bucket gets a prefix table when comparing its members with the items
    # around it (about size^2 row comparisons) costs more than a table of the
    # ranks its members span (at most K per ranking)
    if data.exact:
        # exact sums: both ways give the same masses, so take the cheaper one
        # (measured: a comparison of a member costs about 10 + B / 16 table
        # look-ups, a query of a table B look-ups)
        n_rankings = data.n_rankings
        tables = sizes * (10.0 + n_rankings / 16.0) >= n_rankings
    else:
        mean_buckets = float(np.mean(data.n_buckets))
        tables = (sizes > 2 * _SMALL_MAX) & (
            sizes.astype(np.float64) ** 2 > 2.0 * mean_buckets
        )
    sorted_buckets = consensus[order]
    sorted_masses = data.item_weights[order]
    slots = np.sort(position[items])
    identity = np.arange(order.shape[0])
    sorted_t, sorted_r = _gather_sorted(data.ranks_t, order)
    # each item's sums are computed alone: parts of the items in threads give
    # the same sums (data.n_threads, see _threads)
    parts = run_on_parts(
        _window_sums_kernel,
        (
            (
                slots[start:stop],
                np.arange(stop - start),
                window,
                sorted_buckets,
                identity,
                starts,
                tables,
                sorted_r,
                sorted_t,
                sorted_masses,
                bounds,
                values,
            )
            for start, stop in split_range(slots.shape[0], data.n_threads)
        ),
    )
    if len(parts) == 1:
        better, atmost, valid = parts[0]
    else:
        better, atmost, valid = (np.concatenate(column) for column in zip(*parts))
    scale = data.total_weight * float(data.item_weights.sum())
    mover, gain, key, lo, hi, threshold = _best_moves_kernel(
        slots,
        window,
        sorted_buckets,
        n_buckets,
        better,
        atmost,
        valid,
        bucket_mass,
        sorted_masses,
        data.total_weight,
        scale,
        rtol,
        _candidate_columns(window).astype(np.int64),
    )
    movers = np.flatnonzero(mover)
    moved = order[slots[movers]]
    by_item = np.argsort(moved, kind="stable")
    movers = movers[by_item]
    return n_buckets, {
        "item": moved[by_item],
        "gain": gain[movers],
        "key": key[movers],
        "lo": lo[movers],
        "hi": hi[movers],
        "threshold": threshold[movers],
    }


def _apply_batch_compiled(data, consensus, moves, groups):
    """Compiled :func:`_apply_batch`: (accepted mask over movers, delta)."""
    gain = moves["gain"]
    n_moves = gain.shape[0]
    priority = np.lexsort((moves["item"], -gain))
    rank = np.empty(n_moves, dtype=np.int64)
    rank[priority] = np.arange(n_moves)
    lo, hi = moves["lo"], moves["hi"]
    batch = n_moves
    while batch > 1:
        if _count_overlaps(lo, hi, priority[:batch]) <= _MAX_BATCH_PAIRS:
            break
        batch //= 2
    chosen = np.sort(priority[:batch])
    old = consensus.astype(np.float64)
    new = old.copy()
    items = moves["item"]
    new[items[chosen]] = moves["key"][chosen]
    bounds, values = groups
    correction, dominated = _batch_kernel(
        chosen,
        rank,
        items,
        lo,
        hi,
        old,
        new,
        data.ranks_t,
        data.item_weights,
        bounds,
        values,
        data.total_weight,
        data.exact,
    )
    delta = -float(gain[chosen].sum()) + correction
    independent = np.zeros(n_moves, dtype=bool)
    independent[chosen] = ~dominated[chosen]
    independent_delta = -float(gain[independent].sum())
    tolerance = float(moves["threshold"][chosen].sum())
    if delta < min(independent_delta, -tolerance):
        accepted = np.zeros(n_moves, dtype=bool)
        accepted[chosen] = True
        return accepted, delta
    return independent, independent_delta


def _local_search_compiled(data, consensus, objective, *, window, max_iter, tol=0.0):
    """:func:`_local_search` with compiled kernels: same passes, same result.

    The window sums, the best moves and the corrections of a batch run in
    compiled code; the bookkeeping between passes (O(M) numpy) is shared.
    """
    n_items = data.n_items
    consensus = np.asarray(consensus, dtype=np.intp)
    groups = _weight_groups(data)
    active = np.arange(n_items)
    full = True
    n_passes = 0
    converged = False
    while n_passes < max_iter:
        n_passes += 1
        n_buckets, moves = _best_moves_compiled(data, consensus, active, window, groups)
        if moves["item"].shape[0] == 0:
            if full:
                converged = True
                break
            active = np.arange(n_items)
            full = True
            continue
        accepted, delta = _apply_batch_compiled(data, consensus, moves, groups)
        keys = consensus.astype(np.float64)
        keys[moves["item"][accepted]] = moves["key"][accepted]
        active = _affected_items(
            consensus, moves, accepted, min(window, n_buckets), n_buckets
        )
        consensus = np.unique(keys, return_inverse=True)[1].astype(np.intp)
        objective += delta
        full = active.shape[0] == n_items
        if -delta <= tol * objective:
            break
    return consensus, objective, n_passes, converged


def _local_search_exact(data, consensus, objective, *, window, max_iter, tol=0.0):
    """:func:`_local_search_compiled` for exact arithmetic, passes included.

    With integral weights every sum of a pass is exact, so the whole search
    runs in one kernel (:func:`._local_search_kernels._local_search_kernel`): the same
    passes and result, without numpy's fixed cost per call between them.
    """
    bounds, values = _weight_groups(data)
    consensus, objective, n_passes, converged = _local_search_kernel(
        data.ranks_t,
        data.item_weights,
        bounds,
        values,
        data.total_weight,
        np.asarray(consensus, dtype=np.int64),
        float(objective),
        int(window),
        int(max_iter),
        float(tol),
        1e-12,
        _MAX_BATCH_PAIRS,
        True,
    )
    return consensus.astype(np.intp), objective, int(n_passes), bool(converged)


def _run_local_search(data, consensus, objective, *, window, max_iter, tol=0.0):
    """The compiled search on large problems, the numpy one on small ones.

    Exact problems below the size of large ones (where numpy's fixed cost per
    call between the passes would dominate) run the whole search in one
    kernel; larger ones run pass by pass (the same result), so that a default
    forest's first fit does not compile that kernel too (about 3 s).
    """
    if not _compiled_for(data):
        search = _local_search
    elif data.exact and not _use_compiled(data.n_items, data.n_rankings):
        search = _local_search_exact
    else:
        search = _local_search_compiled
    return search(data, consensus, objective, window=window, max_iter=max_iter, tol=tol)
