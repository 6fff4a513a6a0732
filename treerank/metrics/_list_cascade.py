"""Cascade list metrics: expected reciprocal rank (ERR) and reciprocal rank.

In the cascade model a user scans a ranked list from the top and stops at the
item at rank ``j`` with probability ``R_j``; a metric ``sum_j w_j P(stop at j)``
with ``P(stop at j) = R_j prod_{i<j} (1 - R_i)`` follows. ERR (Chapelle et al.
2009) uses ``R = (2**y - 1) / 2**max_grade`` and ``w_j = 1/j``; the reciprocal
rank of the first relevant item is the case ``R = y`` (binary).

Exact tie averaging. Write ``x = 1 - R`` (the probability of going on). For a
block of ``m`` tied items at ranks ``a..a+m-1`` and a uniformly random order of
the block, the probability of going on past the first ``t`` items of the block
is ``E_t = e_t(x) / C(m, t)``, the mean of ``prod x`` over the t-subsets
(``e_t`` the elementary symmetric polynomial). By linearity the block adds

    P_before * sum_{t=1..m} w_{a+t-1} (E_{t-1} - E_t),

where ``P_before`` is the product of ``x`` over the earlier blocks. ERR
computes ``E_t`` by the exact recursion over the block's items
``E_t <- ((j - t) E_t + t x_j E_{t-1}) / j`` (a convex combination, so stable in
floating point and exact with fractions), O(m²) per block; blocks are
processed together in bins of similar sizes. For the reciprocal rank, where
``x`` is 0/1, ``E_t = C(m - r, t) / C(m, t)`` for a block with ``r`` relevant
items, in closed form.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from fractions import Fraction

import numpy as np

from treerank.metrics._grouping import (
    segment_exclusive_scan,
    segment_scan,
    segment_sum,
)
from treerank.metrics._list_common import int_ratio, shared_doc, summarize_queries
from treerank.metrics._list_validation import check_list_inputs
from treerank.metrics._ties import rank_lists

__all__ = ["err_score", "reciprocal_rank"]

# Exact labels use big-integer powers 2**max_grade up to this grade; above it the
# stopping probabilities of all but the top grades underflow anyway, and the
# float path (stable for any grade) is used.
_MAX_EXACT_GRADE = 4096


def _rank_weights(position, k, exact):
    """``1 / position`` for ranks up to ``k`` (all ranks if ``k`` is None), else 0."""
    inside = np.ones(position.shape, dtype=np.int64)
    if k is not None:
        inside = (position <= k).astype(np.int64)
    return int_ratio(inside, position, exact)


def _block_stop_terms(x, ranked, exact):
    """``E_{t-1} - E_t`` of the tie block of every slot (t = offset + 1)."""
    stop = 1 - x
    sizes = ranked.block_sizes
    tied = np.flatnonzero(sizes >= 2)
    if tied.shape[0] == 0:
        return stop
    # bins of blocks whose sizes share the same power-of-two ceiling
    size_bin = np.ceil(np.log2(sizes[tied])).astype(np.intp)
    for value in np.unique(size_bin):
        blocks = tied[size_bin == value]
        blocks = blocks[np.argsort(-sizes[blocks], kind="stable")]
        m = sizes[blocks]
        width = int(m[0])
        column = np.arange(width)
        valid = column < m[:, None]
        slots = ranked.block_starts[blocks][:, None] + np.where(valid, column, 0)
        xs = x[slots]
        dtype = object if exact else np.float64
        mean_prod = np.zeros((blocks.shape[0], width + 1), dtype=dtype)
        mean_prod[:, 0] = Fraction(1) if exact else 1.0
        if exact:
            mean_prod[:, 1:] = Fraction(0)
        n_active = np.searchsorted(-m, -np.arange(1, width + 1), side="right")
        for j in range(1, width + 1):
            rows = int(n_active[j - 1])
            t = np.arange(1, j + 1)
            keep = int_ratio(j - t, np.full(j, j), exact)
            take = int_ratio(t, np.full(j, j), exact)
            mean_prod[:rows, 1 : j + 1] = (
                mean_prod[:rows, 1 : j + 1] * keep
                + mean_prod[:rows, 0:j] * xs[:rows, j - 1 : j] * take
            )
        terms = mean_prod[:, :-1] - mean_prod[:, 1:]
        stop[slots[valid]] = terms[valid]
    return stop


def _first_relevant_terms(y_ranked, ranked, exact):
    """``E_{t-1} - E_t`` for 0/1 relevance: P(first relevant of the block at t)."""
    relevant = np.rint(
        segment_sum(y_ranked.astype(np.float64), ranked.block_starts)
    ).astype(np.int64)
    m = ranked.block_sizes[ranked.block_of]
    r = relevant[ranked.block_of]
    j = ranked.offset
    # going on past offset j: factor (m - r - j) / (m - j); once it hits 0 the
    # running product stays 0
    factor = int_ratio(np.maximum(m - r - j, 0), m - j, exact)
    after = segment_scan(factor, ranked.offset, np.multiply)
    before = segment_exclusive_scan(factor, ranked.offset, np.multiply, 1)
    return before - after


def _cascade_values(x, weights, stop_terms, ranked):
    """Per-list ``sum_slots P_before(block) * w * stop_term``."""
    before = segment_exclusive_scan(x, ranked.position - 1, np.multiply, 1)
    reach = before[ranked.block_starts][ranked.block_of]
    return segment_sum(reach * weights * stop_terms, ranked.group_starts)


def _is_integral(values):
    return all(float(v).is_integer() for v in values.tolist())


@shared_doc
def err_score(
    y_true,
    y_score,
    *,
    max_grade,
    qid=None,
    k=None,
    ties="average",
    empty=0.0,
    return_per_query=False,
):
    """Expected reciprocal rank (ERR@k) of ranked lists.

    ``ERR = sum_j (1/j) R(y_(j)) prod_{i<j} (1 - R(y_(i)))`` with the stopping
    probability ``R(g) = (2**g - 1) / 2**max_grade`` (Chapelle et al. 2009).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Relevance grades in ``[0, max_grade]``.
    %(y_score)s
    max_grade : float
        Top grade of the relevance *scale* (e.g. 4 for grades 0..4, 1 for
        binary relevance), not the largest grade of the list; required.
    %(qid)s
    k : int, default=None
        Only the first ``k`` ranks count (``None``: the whole list).
    %(ties)s
    empty : float or "skip", default=0.0
        Accepted for the common signature of the list metrics: ERR is
        defined for every list (0 when no item is relevant), so it is never used.
    %(return_per_query)s

    Returns
    -------
    score : float or Fraction
        ERR of the list or mean over queries (a Fraction for exact integer
        grades and an integer ``max_grade`` of at most 4096; floats otherwise,
        computed as ``1 - R = 1 - (2**(g - max_grade) - 2**-max_grade)`` so
        that no grade overflows).
    %(per_query)s

    See Also
    --------
    reciprocal_rank : The cascade with binary stopping probabilities.

    Notes
    -----
    ``ties="average"`` is exact: for a block of tied items the probability of
    scanning past its first ``t`` items, averaged over the block's orders, is
    the normalized elementary symmetric polynomial ``e_t(1 - R) / C(m, t)``,
    computed by an exact recursion in O(m²) per block of m tied items (see
    the module docstring). Strict policies cost O(n log m). Always defined.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from treerank.metrics import err_score
    >>> err_score([2, 0, 1], [0.9, 0.5, 0.1], max_grade=2)
    0.7708...
    >>> err_score([Fraction(1), 0, 1], [0.9, 0.5, 0.5], max_grade=1)
    Fraction(29, 48)
    """
    inputs = check_list_inputs(
        y_true,
        y_score,
        qid,
        metric="err_score",
        ties=ties,
        k=k,
        max_grade=max_grade,
        empty=empty,
        return_per_query=return_per_query,
    )
    y = inputs.y
    p = inputs.options["max_grade"]
    exact = (
        inputs.exact
        and float(p).is_integer()
        and p <= _MAX_EXACT_GRADE
        and _is_integral(y)
    )
    y_float = y.astype(np.float64)
    ranked = rank_lists(
        inputs.groups, inputs.y_score, ties=inputs.options["ties"], goodness=y_float
    )
    if exact:
        scale = 2 ** int(p)
        grades = y_float[ranked.order].astype(np.int64).astype(object)  # big ints
        x = int_ratio(scale - (2**grades - 1), np.full(grades.shape, scale), True)
    else:
        # 1 - (2**y - 1) / 2**p without overflow for large grades
        x = 1.0 - (np.exp2(y_float[ranked.order] - p) - np.exp2(-p))
    weights = _rank_weights(ranked.position, inputs.options["k"], exact)
    stop_terms = _block_stop_terms(x, ranked, exact)
    values = _cascade_values(x, weights, stop_terms, ranked)
    return summarize_queries(values, inputs._replace(exact=exact))


@shared_doc
def reciprocal_rank(
    y_true,
    y_score,
    *,
    qid=None,
    k=None,
    ties="average",
    empty=0.0,
    return_per_query=False,
):
    """Reciprocal rank of the first relevant item (mean over queries: MRR).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary relevance (0/1 or bool); graded labels raise an error.
    %(y_score)s
    %(qid)s
    k : int, default=None
        A first relevant item below rank ``k`` counts 0 (MRR@k).
    %(ties)s
    empty : float or "skip", default=0.0
        Value of a list without relevant item (0 is TREC's convention), see
        :func:`ndcg_score`.
    %(return_per_query)s

    Returns
    -------
    score : float or Fraction
        Reciprocal rank of the list, or the mean reciprocal rank.
    %(per_query)s

    See Also
    --------
    err_score : The graded cascade.

    Notes
    -----
    ``ties="average"``: if the first block holding relevant items has ``m``
    items (``r`` of them relevant) at ranks ``a..a+m-1``, the first relevant
    item is at rank ``a + t - 1`` with probability
    ``(C(m - t + 1, r) - C(m - t, r)) / C(m, r)``; exact, O(n log m).

    Examples
    --------
    >>> from treerank.metrics import reciprocal_rank
    >>> reciprocal_rank([0, 1, 0], [0.9, 0.5, 0.1])
    0.5
    >>> reciprocal_rank([0, 1, 0], [0.5, 0.5, 0.1])
    0.75
    """
    inputs = check_list_inputs(
        y_true,
        y_score,
        qid,
        metric="reciprocal_rank",
        target="binary",
        ties=ties,
        k=k,
        empty=empty,
        return_per_query=return_per_query,
    )
    exact = inputs.exact
    y_float = inputs.y.astype(np.float64)
    ranked = rank_lists(
        inputs.groups, inputs.y_score, ties=inputs.options["ties"], goodness=y_float
    )
    y_ranked = inputs.y[ranked.order]
    x = 1 - y_ranked
    weights = _rank_weights(ranked.position, inputs.options["k"], exact)
    stop_terms = _first_relevant_terms(y_ranked, ranked, exact)
    values = _cascade_values(x, weights, stop_terms, ranked)
    defined = segment_sum(y_float[ranked.order], ranked.group_starts) > 0
    return summarize_queries(values, inputs, defined)
