"""Weighted Kemeny objective and median of bucket orders (rankings with ties).

For a consensus bucket order c and rankings r_1..r_B of M items, with ranking
weights w_b and item masses m_i, the objective is

    F(c) = sum_b w_b sum_{i<j} m_i m_j U_ij(c, r_b),

U_ij = 1 for a pair ordered oppositely by c and r_b, 1/2 for a pair tied in
exactly one of them, 0 otherwise (the Kendall distance with tie penalty 1/2). Its
normalized form divides by ``W * (sum_i m_i)^2 / 2``, W = sum_b w_b: the mean,
over the rankings weighted by w, of the probabilistic Kendall distance
``2 * sum_{i<j} mu_i mu_j U_ij`` with masses ``mu = m / sum(m)`` (DESIGN §5.3).

A median minimizes F over all bucket orders; the problem is NP-hard, and
:func:`kemeny_median` offers exact solvers for small M and heuristics with a
local search for large M.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers

import numpy as np
from sklearn.utils import check_random_state

from treerank._compilation._helper import wait_for_background_compilation
from treerank.aggregation._bucket_order import (
    _dense_rows,
    _RankingData,
    check_bucket_order,
)
from treerank.aggregation._exact import (
    MAX_EXACT_ITEMS,
    MAX_ILP_ITEMS,
    _exact_enumeration,
    _exact_ilp,
)
from treerank.aggregation._heuristics import (
    _borda,
    _copeland,
    _dense_from_keys,
    _kwiksort,
    _mean_rank,
)
from treerank.aggregation._kernels import _compiled_for, _kwiksort_kernel
from treerank.aggregation._local_search import _local_search
from treerank.aggregation._local_search_kernels import _batch_kernel
from treerank.aggregation._objective import _objective
from treerank.aggregation._threads import kernel_threads

__all__ = ["MedianResult", "kemeny_median", "kemeny_objective"]

METHODS = ("auto", "exact", "ilp", "borda", "mean", "copeland", "kwiksort", "local")

# problems with M * M * B at most this are "small": Copeland, KwikSort and the
# input rankings are tried as starts and the local search runs from each start
_SMALL_PROBLEM = 2_000_000
# the local search examines every bucket (window = M) when M * M * B is at most
# this, and +-_DEFAULT_WINDOW buckets otherwise
_FULL_WINDOW = 1_000_000
_DEFAULT_WINDOW = 3
# on small problems the local search runs from this many best distinct starts
_N_SEARCHES = 5


class MedianResult:
    """Result of :func:`kemeny_median`; unpacks as ``(consensus, objective)``.

    Attributes
    ----------
    consensus : ndarray of shape (n_items,), dtype=int64
        Dense bucket indices ``0..Q-1`` of the median (0 = top bucket).
    objective : float
        Its raw objective ``sum_b w_b sum_{i<j} m_i m_j U_ij``.
    normalized_objective : float
        The objective divided by ``W * (sum m)^2 / 2``: the weighted mean of the
        probabilistic Kendall distances to the rankings (NaN if all weights or
        all masses are zero).
    method : str
        The method used (``"auto"`` resolved to ``"exact"`` or ``"local"``).
    n_iter : int
        Passes of the local search (0 for the other methods).
    converged : bool
        For ``"local"``: whether no single-item move within the window improves
        the result (False if ``max_iter`` stopped the search). For ``"exact"``:
        True; for ``"ilp"``: whether optimality was proven. False otherwise.
    start : str
        Name of the constructive solution the result comes from (``"borda"``,
        ``"mean"``, ``"copeland"``, ``"kwiksort"``, ``"ranking_<b>"`` or the method
        name).
    start_objectives : dict
        Objective of each constructive solution that was evaluated: at least
        ``"borda"`` and ``"mean"`` for the methods ``"exact"``, ``"local"`` and
        ``"auto"``; empty for the others.

    Examples
    --------
    >>> from treerank.aggregation import kemeny_median
    >>> result = kemeny_median([[0, 1, 2], [0, 2, 1], [1, 0, 2]])
    >>> consensus, objective = result
    >>> consensus, objective
    (array([0, 1, 2]), 2.0)
    >>> result.method, result.start_objectives["borda"]
    ('exact', 2.0)
    """

    def __init__(
        self,
        consensus,
        objective,
        *,
        normalized_objective,
        method,
        n_iter,
        converged,
        start,
        start_objectives,
    ):
        self.consensus = consensus
        self.objective = objective
        self.normalized_objective = normalized_objective
        self.method = method
        self.n_iter = n_iter
        self.converged = converged
        self.start = start
        self.start_objectives = start_objectives

    def __iter__(self):
        yield self.consensus
        yield self.objective

    def __repr__(self):
        n_buckets = int(self.consensus.max()) + 1 if self.consensus.size else 0
        return (
            f"MedianResult(n_items={self.consensus.shape[0]}, n_buckets={n_buckets}, "
            f"objective={self.objective!r}, method={self.method!r}, "
            f"n_iter={self.n_iter}, converged={self.converged})"
        )


def _normalized(objective, data):
    scale = data.total_weight * float(data.item_weights.sum()) ** 2
    if scale <= 0:
        return float("nan")
    return 2.0 * objective / scale


def kemeny_objective(
    consensus, rankings, ranking_weights=None, item_weights=None, *, normalize=False
):
    """Weighted Kemeny objective of a consensus bucket order.

    Parameters
    ----------
    consensus : array-like of shape (n_items,)
        Integer bucket indices of the consensus (smaller = better, equal = tied).
    rankings : array-like of shape (n_rankings, n_items)
        One bucket order per row.
    ranking_weights : array-like of shape (n_rankings,), default=None
        Non-negative weight w_b of each ranking; None means 1.
    item_weights : array-like of shape (n_items,), default=None
        Non-negative mass m_i of each item (e.g. the mass of a cell); None
        means 1. A pair counts ``m_i * m_j``.
    normalize : bool, default=False
        If False, return ``sum_b w_b sum_{i<j} m_i m_j U_ij``. If True, divide it
        by ``W * (sum_i m_i)^2 / 2`` with ``W = sum_b w_b``: the w-weighted mean
        of the probabilistic Kendall distances ``2 sum_{i<j} mu_i mu_j U_ij``
        (mu = normalized masses) between the consensus and the rankings.

    Returns
    -------
    objective : float

    Notes
    -----
    U_ij is 1 for a pair ordered oppositely by the consensus and the ranking,
    1/2 for a pair tied in exactly one of them and 0 otherwise. The sums are
    computed for all rankings in one sweep over the items sorted by consensus
    bucket, in O(B (M L + (M / L + n_large) K)) time for rankings of at most K
    buckets (L = 16; n_large the number of consensus buckets of more than L
    items), without pairwise arrays. Integer weights give exact results.

    Examples
    --------
    >>> from treerank.aggregation import kemeny_objective
    >>> rankings = [[0, 1, 2], [0, 2, 1], [1, 0, 2]]
    >>> kemeny_objective([0, 1, 2], rankings)
    2.0
    >>> kemeny_objective([0, 0, 0], rankings)  # every pair is tied: 3 * 3 / 2
    4.5
    >>> kemeny_objective([0, 1, 2], rankings, normalize=True)  # 2 * 2 / (3 * 3**2)
    0.148...
    """
    normalize = _check_bool(normalize, "normalize")
    data = _RankingData(rankings, ranking_weights, item_weights)
    consensus = check_bucket_order(consensus, data.n_items, input_name="consensus")
    dense = _dense_rows(consensus[None, :])[0][0].astype(np.intp)
    value = _objective(dense, data)
    if normalize:
        normalized = _normalized(value, data)
        if np.isnan(normalized):
            raise ValueError(
                "The normalized objective is undefined when all ranking weights or "
                "all item weights are zero."
            )
        return normalized
    return value


def _check_int(value, name, minimum):
    if (
        not isinstance(value, numbers.Integral)
        or isinstance(value, bool)
        or value < minimum
    ):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def _check_real(value, name, *, minimum, strict):
    """A finite real number > (strict) or >= ``minimum``."""
    valid = (
        isinstance(value, numbers.Real)
        and not isinstance(value, bool)
        and np.isfinite(value)
        and (value > minimum if strict else value >= minimum)
    )
    if not valid:
        bound = ">" if strict else ">="
        raise ValueError(
            f"{name} must be a finite real number {bound} {minimum}; got {value!r}."
        )
    return float(value)


def _check_bool(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}.")
    return bool(value)


def _exact_arithmetic(data):
    """Whether every partial sum of the objective is exact in float64."""
    return data.exact


def _best_of(candidates, data):
    """Evaluate named consensus arrays; return (objectives dict, best name)."""
    objectives = {}
    best_name = None
    for name, consensus in candidates:
        value = _objective(consensus, data)
        objectives[name] = value
        if best_name is None or value < objectives[best_name]:
            best_name = name
    return objectives, best_name


def _kwiksort_best(data, rng, n_restarts):
    if data.exact and _compiled_for(data):
        runs = _compiled_kwiksort_runs(data, rng, n_restarts)
    else:
        runs = (_kwiksort(data, rng) for _ in range(n_restarts))
    best, best_value = None, np.inf
    for consensus in runs:
        value = _objective(consensus, data)
        if value < best_value:
            best, best_value = consensus, value
    return best


def _compiled_kwiksort_runs(data, rng, n_restarts):
    """``n_restarts`` compiled KwikSort runs on the draws of the numpy runs.

    A run draws at most one number per item: the draws of all runs are made
    at once, each run reads on from where the previous one stopped, and the
    generator then advances by the number read, as the numpy runs leave it.
    """
    state = rng.get_state()
    uniforms = rng.random_sample(n_restarts * data.n_items)
    runs, used = [], 0
    for _ in range(n_restarts):
        position, count = _kwiksort_kernel(
            data.ranks_t, data.ranking_weights, data.total_weight, uniforms[used:]
        )
        used += int(count)
        runs.append(_dense_from_keys(position))
    rng.set_state(state)
    rng.random_sample(used)
    return runs


def kemeny_median(
    rankings,
    ranking_weights=None,
    item_weights=None,
    method="auto",
    random_state=None,
    *,
    max_iter=100,
    window="auto",
    n_restarts=10,
    tol=0.0,
    time_limit=None,
    multi_start="auto",
    n_jobs=None,
):
    """Weighted Kemeny median (Kendall-tau median with ties) of bucket orders.

    Finds a bucket order c of the items minimizing
    ``F(c) = sum_b w_b sum_{i<j} m_i m_j U_ij(c, r_b)`` (see
    :func:`kemeny_objective`).

    Parameters
    ----------
    rankings : array-like of shape (n_rankings, n_items)
        One bucket order per row (smaller = better, equal = tied).
    ranking_weights : array-like of shape (n_rankings,), default=None
        Non-negative weight of each ranking; None means 1.
    item_weights : array-like of shape (n_items,), default=None
        Non-negative mass of each item; None means 1.
    method : {"auto", "exact", "ilp", "borda", "mean", "copeland", "kwiksort", \
"local"}, default="auto"
        - ``"exact"``: enumeration of all bucket orders (at most 7 items);
        - ``"ilp"``: integer program solved by HiGHS (:func:`scipy.optimize.milp`),
          at most 60 items; the O(M^3) transitivity constraints are added
          lazily. Rankings that largely agree solve in well under a second at
          M = 40, while random rankings with many ties can take minutes at
          M = 30 (see ``time_limit``);
        - ``"borda"``, ``"mean"``, ``"copeland"``, ``"kwiksort"``: constructive
          heuristics alone (KwikSort: best of ``n_restarts`` random runs);
        - ``"local"``: local search (move one item into another bucket or into
          a new bucket while the objective drops) from the best constructive
          solution; on small problems (M^2 B <= 2e6, see ``multi_start``)
          Copeland, KwikSort and the input rankings are added to the starts and
          the search runs from the five best distinct ones;
        - ``"auto"``: ``"exact"`` for at most 7 items, ``"local"`` otherwise.

        The result of ``"local"`` and ``"auto"`` is never worse than the Borda and
        mean-rank orders: the search starts from the best start and only accepts
        improvements.
    random_state : int, RandomState instance or None, default=None
        Seeds KwikSort, which is also one of the starts of ``"local"`` on small
        problems. Everything else is deterministic.
    max_iter : int, default=100
        Maximum number of passes of the local search.
    window : int or "auto", default="auto"
        Buckets on each side of an item's bucket where its moves are searched;
        ``"auto"`` is every bucket when M^2 B <= 1e6 and 3 otherwise.
    n_restarts : int, default=10
        KwikSort runs (the best is kept).
    tol : float, default=0.0
        The local search also stops when a pass lowers the objective by at most
        ``tol`` times its value (0: only at a local optimum or ``max_iter``).
    time_limit : float or None, default=None
        Time limit in seconds (a finite number > 0) for ``"ilp"``; the best
        solution found is then returned with ``converged=False``. None: no
        limit.
    multi_start : bool or "auto", default="auto"
        For ``"local"``: whether Copeland, KwikSort and the input rankings are
        added to the Borda and mean-rank starts and the search runs from the
        five best distinct ones (about five times the work of one search, and
        Copeland's O(M^2 B)). ``"auto"``: on small problems (M^2 B <= 2e6)
        only. False: one search from the better of Borda and mean rank at any
        size, so that the cost grows with the problem (what a forest asks
        for: on forests of 5 to 10 trees the extra starts lowered the
        objective by 0.02-0.09% for no change of test AUC).
    n_jobs : int or None, default=None
        Threads for the compiled kernels of the objective and of the local
        search on problems of at least 2^18 item x ranking entries (joblib's
        convention: None is 1 unless in a ``joblib.parallel_config`` context,
        -1 all processors). The result does not depend on it: each thread
        computes whole sums (of a ranking, or of an item) that one thread
        would compute the same way.

    Returns
    -------
    result : MedianResult
        Unpacks as ``(consensus, objective)``; ``consensus`` is an int64 array of
        dense bucket indices 0..Q-1. Also holds the normalized objective, the
        objectives of the constructive solutions and convergence information.

    Raises
    ------
    ValueError
        On invalid input, an unknown method, an invalid parameter (the message
        names it), or ``"exact"`` (``"ilp"``) with more than 7 (60) items.

    See Also
    --------
    kemeny_objective : the objective.
    common_subpartition : cells and per-tree bucket orders of a forest.
    ConsensusInserter : positions of new items in a fitted median.

    Notes
    -----
    The local search moves one item at a time, into another bucket or alone
    into a new bucket, within ``window`` buckets of its own. For an item i and a
    bucket q, with ``better_q`` and ``atmost_q`` the ranking-weighted masses of
    the items of q that the rankings put strictly above / not below i and W the
    total ranking weight, moving i from just above q to just below it changes
    the objective by ``m_i (W mass_q - better_q - atmost_q)`` and tying it with
    q instead of placing it just above costs ``m_i (W mass_q / 2 - atmost_q)``;
    the cost of every candidate follows by summation over the buckets passed.
    These masses come from direct comparisons of rank rows for small buckets
    and from per-ranking tables of prefix masses for large ones.
    Each pass finds the best move of every item against the same consensus
    and applies them together: the exact change of a batch is the sum of the
    single-move changes plus a correction for each pair of moved items whose
    paths overlap; when the whole batch does not do better than its subset of
    non-overlapping moves (which contains the best move), that subset is
    applied. Every pass thus lowers the objective, which is tracked exactly,
    until no single move does (``converged=True``).

    Costs, for B rankings of at most K buckets each: Borda and mean rank
    O(M B); KwikSort O(M B log M) expected per run; Copeland O(M^2 B); one
    evaluation of the objective O(B (M L + (M / L) K)) with L = 16 (pair by pair,
    O(M^2 B), on small problems); one pass of the local search
    O(M (2w + 1) B) look-ups or row comparisons (times the size of a compared
    bucket) plus O(n_large K B) for the tables of the large buckets and the
    corrections of interacting moves. No M x M array is formed.

    The local search runs in compiled code at every size (numba kernels
    without the GIL, in ``n_jobs`` threads from 2^18 item x ranking entries
    on); so do the objective, Borda and mean rank from 2^17 entries on (e.g.
    1,311 cells of a 100-tree forest), and from 2^10 entries with integer
    weights. A deep forest's 200,000 cells take seconds (see
    ``benchmarks/results/aggregation.md``).

    Examples
    --------
    >>> from treerank.aggregation import kemeny_median
    >>> rankings = [[0, 1, 2], [0, 2, 1], [1, 0, 2]]
    >>> consensus, objective = kemeny_median(rankings)
    >>> consensus, objective
    (array([0, 1, 2]), 2.0)
    >>> kemeny_median([[0, 0, 1], [0, 0, 2]], method="borda").consensus
    array([0, 0, 1])
    """
    if method not in METHODS:
        raise ValueError(
            f"method must be one of {', '.join(repr(m) for m in METHODS)}; got "
            f"{method!r}."
        )
    max_iter = _check_int(max_iter, "max_iter", 1)
    n_restarts = _check_int(n_restarts, "n_restarts", 1)
    if not (isinstance(window, str) and window == "auto"):
        window = _check_int(window, "window", 0)
    tol = _check_real(tol, "tol", minimum=0.0, strict=False)
    if not (
        isinstance(multi_start, (bool, np.bool_))
        or (isinstance(multi_start, str) and multi_start == "auto")
    ):
        raise ValueError(
            f'multi_start must be True, False or "auto"; got {multi_start!r}.'
        )
    rng = check_random_state(random_state)
    if time_limit is not None:
        time_limit = _check_real(time_limit, "time_limit", minimum=0.0, strict=True)
    data = _RankingData(rankings, ranking_weights, item_weights)
    n_items, n_rankings = data.n_items, data.n_rankings
    if n_jobs is not None and (
        not isinstance(n_jobs, numbers.Integral)
        or isinstance(n_jobs, (bool, np.bool_))
        or n_jobs == 0
    ):
        raise ValueError(
            f"n_jobs must be a nonzero integer (-1: all processors) or None; got "
            f"{n_jobs!r}."
        )
    data.n_threads = kernel_threads(n_items, n_rankings, n_jobs)
    size = n_items * n_items * n_rankings
    if method == "auto":
        method = "exact" if n_items <= MAX_EXACT_ITEMS else "local"
    if method == "local":
        # a first fit: the search's kernels may still be compiling in a second
        # process
        wait_for_background_compilation(_batch_kernel)
    n_iter, converged = 0, False
    start_objectives = {}

    if method == "exact":
        if n_items > MAX_EXACT_ITEMS:
            raise ValueError(
                f'method="exact" enumerates all bucket orders and accepts at most '
                f'{MAX_EXACT_ITEMS} items; got {n_items}. Use method="ilp" (up to '
                f'{MAX_ILP_ITEMS} items) or method="local".'
            )
        consensus, start, converged = _exact_enumeration(data), "exact", True
        start_objectives, _ = _best_of(
            [("borda", _borda(data)), ("mean", _mean_rank(data))], data
        )
    elif method == "ilp":
        if n_items > MAX_ILP_ITEMS:
            raise ValueError(
                f'method="ilp" accepts at most {MAX_ILP_ITEMS} items; got {n_items}. '
                'Use method="local".'
            )
        consensus, converged = _exact_ilp(data, time_limit)
        start = "ilp"
    elif method in ("borda", "mean", "copeland"):
        builder = {"borda": _borda, "mean": _mean_rank, "copeland": _copeland}[method]
        consensus, start = builder(data), method
    elif method == "kwiksort":
        consensus, start = _kwiksort_best(data, rng, n_restarts), "kwiksort"
    else:  # local
        small = size <= _SMALL_PROBLEM if multi_start == "auto" else bool(multi_start)
        candidates = [("borda", _borda(data)), ("mean", _mean_rank(data))]
        if small:
            candidates.append(("copeland", _copeland(data)))
            candidates.append(("kwiksort", _kwiksort_best(data, rng, n_restarts)))
            for b in np.argsort(data.permutation, kind="stable"):
                ranking = data.ranks[b].astype(np.intp)
                candidates.append((f"ranking_{data.permutation[b]}", ranking))
        start_objectives, best_start = _best_of(candidates, data)
        if window == "auto":
            window = n_items if size <= _FULL_WINDOW else _DEFAULT_WINDOW
        if small:
            # run from the best distinct starts
            names = sorted(start_objectives, key=start_objectives.get)
            seen = set()
            runs = []
            lookup = dict(candidates)
            for name in names:
                signature = lookup[name].tobytes()
                if signature in seen:
                    continue
                seen.add(signature)
                runs.append(name)
            runs = runs[:_N_SEARCHES]
        else:
            runs = [best_start]
        best = None
        for name in runs:
            found, value, passes, done = _local_search(
                data,
                dict(candidates)[name],
                start_objectives[name],
                window=window,
                max_iter=max_iter,
                tol=tol,
            )
            n_iter += passes
            if best is None or value < best[1]:
                best = (found, value, name, done)
        consensus, tracked, start, converged = best
    if method == "local" and _exact_arithmetic(data):
        # the search tracks the objective by exact changes: every term is an
        # integer or a half-integer below 2^52, so the tracked value is exact
        objective = float(tracked)
    else:
        objective = _objective(consensus, data)
    return MedianResult(
        np.asarray(consensus, dtype=np.int64),
        objective,
        normalized_objective=_normalized(objective, data),
        method=method,
        n_iter=n_iter,
        converged=bool(converged),
        start=start,
        start_objectives=start_objectives,
    )
