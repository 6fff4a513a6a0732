"""Local search for the weighted Kemeny median with ties.

The moves are those of BioConsert: take one item out of its bucket and put it
into another bucket, or alone into a new bucket between two buckets (or at an
end). A move is applied only if it lowers the objective

    F(c) = sum_b w_b sum_{i<j} m_i m_j U_ij(c, r_b).

Cost of a move. For item i in consensus bucket q0 and any bucket q, let
``better_q`` and ``atmost_q`` be the ranking-weighted masses of the members of q
that ranking b puts strictly above, or not below, item i (i itself is left
out), ``mass_q`` their
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
is answered either by comparing the (B,) rank row of each of its members with
the item's, or by one look-up per ranking in a table of prefix masses over
the ranks its members span, built once per pass for the buckets that get one
(those whose comparisons would cost more). So a pass costs O(M (2w + 1) B)
elementary operations (times the size of a compared bucket) plus the tables
and the corrections of interacting moves; no M x M array is formed. After the
first pass only items near the last moves are re-examined; a full pass
confirms convergence.

One implementation. The work of a pass runs in compiled kernels
(:mod:`._local_search_kernels`): the window sums of the items (in
``data.n_threads`` threads on large problems: each item's sums are computed
alone, so the threads change nothing), their best moves, and the exact
change of a batch. The bookkeeping between passes (the batch's priorities,
the next consensus, the items to examine again: O(M) numpy) is this module's.
Every problem, whatever its size and its weights, runs this code; there is no
interpreted copy of the passes and no size at which another solver takes
over.

Exact arithmetic. ``data.exact`` says that the item and ranking weights are
integers with ``W (sum_i m_i)^2 < 2^52``: every gain, slope and correction is
then a multiple of 1/2 below 2^52, so the float64 sums of the kernels are
exact whatever their order. So exact arithmetic needs no path of its own (no
Python fractions or object arrays, which compiled code could not run): it is
the same kernels on float64 numbers that happen to be exact, as the masses of
a forest's cells are (counts of rows, trees of weight 1) unless the rows are
weighted. It changes no pass; it only lets the search (i) choose, bucket by
bucket, the cheaper of a comparison of members and a prefix table (the two
give the same masses), (ii) skip the pairs of a batch whose four costs
cancel, and (iii) report the objective it tracks instead of evaluating it
again (:func:`~._kemeny.kemeny_median`). With other weights the sums are rounded,
and a bucket gets a table by its size alone (more than 16 items, and a
squared size above twice the mean number of buckets of a ranking), so that
the rounding of a bucket's masses does not depend on a cost model.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.aggregation._kernels import (
    _gather_sorted,
    _weight_groups,
    bucket_order,
)
from treerank.aggregation._local_search_kernels import (
    _batch_kernel,
    _best_moves_kernel,
    _count_overlaps,
    _window_sums_kernel,
)
from treerank.aggregation._threads import run_on_parts, split_range

__all__ = []

_MAX_BATCH_PAIRS = 1 << 21  # interacting pairs examined per batch
# with inexact sums, buckets of more than this many items whose squared size
# exceeds twice the mean number of buckets of a ranking get prefix tables
_TABLE_MIN_SIZE = 16


def _candidate_columns(window):
    """Column order of [ties (2w+1), gaps (2w+2)] by distance to the item."""
    n_slots = 2 * window + 1
    tie_offsets = np.arange(n_slots) - window
    gap_offsets = np.arange(n_slots + 1) - window - 0.5
    distance = np.concatenate([np.abs(tie_offsets), np.abs(gap_offsets)])
    is_gap = np.concatenate([np.zeros(n_slots), np.ones(n_slots + 1)])
    signed = np.concatenate([tie_offsets, gap_offsets])
    return np.lexsort((signed, is_gap, distance))


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


def _best_moves(data, consensus, items, window, groups, rtol=1e-12):
    """Best move of each item of ``items`` within ``window`` buckets.

    Parameters
    ----------
    data : _RankingData
    consensus : ndarray of shape (M,)
        Dense bucket indices 0..Q-1.
    items : ndarray of shape (A,)
        The items to examine.
    window : int
        Buckets on each side of an item's bucket where its moves are searched.
    groups : tuple of ndarray
        ``_weight_groups(data)``.
    rtol : float, default=1e-12
        A move is kept when it lowers F by more than ``rtol * m_i * W *
        sum(m)``.

    Returns
    -------
    n_buckets : int
        Q.
    moves : dict of ndarray
        The movers (items whose best move lowers F), by increasing item:
        ``item``, ``gain`` (decrease of F), ``key`` (float position of the
        target on the old bucket scale), ``lo``, ``hi`` (span of old
        buckets), ``threshold``.

    Notes
    -----
    The kernels work on the items sorted by consensus bucket (rank rows
    copied in that order), so that the members of a bucket and the items
    around it are contiguous in memory.
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
        tables = (sizes > _TABLE_MIN_SIZE) & (
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


def _apply_batch(data, consensus, moves, groups):
    """Choose the moves of a pass to apply: (accepted mask over movers, delta).

    The best moves first (ties by item), as many as keep the number of
    overlapping pairs within ``_MAX_BATCH_PAIRS``; the whole batch when its
    exact change beats that of its moves of disjoint spans, those otherwise.
    """
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


def _local_search(data, consensus, objective, *, window, max_iter, tol=0.0):
    """Improve ``consensus`` by single-item moves until none lowers F.

    Stops when no move lowers F (converged), after ``max_iter`` passes, or when
    a pass lowers F by at most ``tol * F``.

    Returns
    -------
    consensus : ndarray of shape (M,)
        Dense bucket indices.
    objective : float
        F at the start (``objective``), updated by the exact change of each
        pass.
    n_passes : int
    converged : bool
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
        n_buckets, moves = _best_moves(data, consensus, active, window, groups)
        if moves["item"].shape[0] == 0:
            if full:
                converged = True
                break
            active = np.arange(n_items)
            full = True
            continue
        accepted, delta = _apply_batch(data, consensus, moves, groups)
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
