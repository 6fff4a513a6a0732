"""Positional list metrics: DCG, NDCG, precision@k, recall@k, ERU, AUC, Spearman.

Every metric here is a positional measure ``offset(y) + sum_k phi(k) u_{sigma(k)}``
(see :class:`treerank.metrics.PositionalMetric`, which uses the same weights
and gives the same values). Under ``ties="average"`` a block of tied items at
ranks ``a..b`` gets the mean weight ``mean(phi(a..b))``: the exact expectation
over uniformly random tie-breaking, in closed form.

All metrics take one list, or many lists with ``qid=`` (one query id per row,
rows of a query need not be contiguous), in which case the mean over queries is
returned (and the per-query values with ``return_per_query=True``, in the
order of the sorted unique query ids). The computation is vectorized over all
lists at once: one sort per list (lists of equal length are sorted together),
then segment sums; O(n log m) for n rows and lists of at most m items.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.metrics._grouping import segment_sum
from treerank.metrics._list_common import int_ratio, shared_doc, summarize_queries
from treerank.metrics._list_validation import check_list_inputs
from treerank.metrics._positional import (
    auc_weight,
    check_finite_value,
    dcg_discount,
    eru_weight,
    gain_shift,
    gain_values,
    ideal_dcg,
    precision_weight,
    recall_weight,
)
from treerank.metrics._ties import rank_lists, tie_averaged

__all__ = [
    "dcg_score",
    "expected_rank_utility",
    "list_auc",
    "ndcg_score",
    "precision_at_k",
    "recall_at_k",
    "spearman_rho",
]


_DCG_ADVICE = (
    "DCG is not scale-free: use ndcg_score (which is), gain='linear', or smaller "
    "relevance grades."
)


def _as_float(y):
    return y.astype(np.float64) if y.dtype == object else y


def _rank(inputs, goodness):
    return rank_lists(
        inputs.groups, inputs.y_score, ties=inputs.options["ties"], goodness=goodness
    )


def _rank_binary(inputs):
    """The ranked lists of binary labels, and the labels in rank order."""
    ranked = _rank(inputs, _as_float(inputs.y))
    return ranked, inputs.y[ranked.order]


def _list_gains(y, inputs):
    """Gains of every row, scaled by ``2**-shift`` per list, and the shifts.

    The shift of a list is 0 unless its gains could overflow a sum (a gain
    above ``2**960``, e.g. ``2**1100 - 1``); scaling by a power of two is exact.
    """
    gain, groups = inputs.options["gain"], inputs.groups
    magnitude = y if gain == "exp2" else np.abs(y)
    top = np.maximum.reduceat(magnitude[groups.order], groups.starts)
    shift = gain_shift(top, gain)
    return gain_values(y, gain, shift[groups.index]), shift


def _summarize_finite(values, inputs, metric, advice):
    """``summarize_queries``, with a clear error if a value or the mean overflows."""
    check_finite_value(values, metric, advice)
    with np.errstate(over="ignore"):
        result = summarize_queries(values, inputs)
    check_finite_value(
        result[0] if isinstance(result, tuple) else result, metric, advice
    )
    return result


def _positional_sums(utility_ranked, weights, ranked):
    """Per-list ``sum_slots u * mean-over-tie-block(weights)``."""
    return segment_sum(
        utility_ranked * tie_averaged(weights, ranked), ranked.group_starts
    )


def _dcg_sums(y, inputs, ranked):
    """Per-list DCG@k, scaled by ``2**-shift``; the scaled gains and the shifts."""
    gains, shift = _list_gains(y, inputs)
    weights = dcg_discount(ranked.position, inputs.options["k"])
    return _positional_sums(gains[ranked.order], weights, ranked), gains, shift


def _pairwise_sums(utility_ranked, ranked, exact):
    """Per-list ``sum_k (n - k) u_(k)``: the positional form of AUC and Spearman."""
    size = ranked.group_sizes[ranked.group_of]
    return _positional_sums(
        utility_ranked, auc_weight(ranked.position, size, exact), ranked
    )


def _safe_divide(numerator, denominator, defined):
    """``numerator / denominator`` where defined, else 0 (floats or fractions)."""
    if numerator.dtype == object or denominator.dtype == object:
        out = np.zeros(numerator.shape[0], dtype=object)
        out[defined] = numerator[defined] / denominator[defined]
        return out
    return np.divide(
        numerator,
        denominator,
        out=np.zeros(numerator.shape[0]),
        where=defined,
    )


@shared_doc
def dcg_score(
    y_true,
    y_score,
    *,
    qid=None,
    k=None,
    gain="exp2",
    ties="average",
    empty=0.0,
    return_per_query=False,
):
    """Discounted cumulative gain (DCG@k) of ranked lists.

    ``DCG@k = sum_{j <= k} gain(y_(j)) / log2(1 + j)``, where ``y_(j)`` is the
    relevance of the item at rank ``j`` when items are sorted by decreasing
    score.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Non-negative relevance grades.
    %(y_score)s
    %(qid)s
    k : int, default=None
        Only the first ``k`` ranks count (``None``: the whole list;
        ``k`` larger than a list is the whole list).
    gain : {"exp2", "linear"}, default="exp2"
        ``2**y - 1`` (LightGBM, XGBoost, Burges et al.) or ``y``
        (scikit-learn's ``dcg_score``).
    ties : {"average", "pessimistic", "optimistic", "stable"}, default="average"
        Tie policy: ``"average"`` is the exact expectation over uniformly
        random orders of tied items; ``"pessimistic"``/``"optimistic"`` put
        the least/most relevant tied item first; ``"stable"`` keeps the input
        order.
    empty : float or "skip", default=0.0
        Accepted for the common signature of the list metrics: DCG is
        defined for every list (0 when no item is relevant), so it is never used.
    %(return_per_query)s

    Returns
    -------
    score : float
        The DCG of the list, or the mean DCG over the queries.
    per_query : ndarray of shape (n_queries,)
        Only if ``return_per_query``: the DCG of every query, in the order of
        the sorted unique query ids.

    See Also
    --------
    ndcg_score : DCG normalized by the DCG of the ideal ranking.
    PositionalMetric.dcg : The same measure as a positional-measure object.

    Notes
    -----
    With ``ties="average"``, the items of a tied block at ranks ``a..b`` each
    get the mean discount of ranks ``a..b`` (the same values as
    scikit-learn's tie-averaged ``dcg_score`` with linear gain). DCG is
    defined for every list (0 when no item is relevant).

    Examples
    --------
    >>> from treerank.metrics import dcg_score
    >>> dcg_score([3, 2, 0], [0.9, 0.5, 0.1], gain="linear")
    4.26...
    >>> dcg_score([3, 2, 0], [0.5, 0.5, 0.1], gain="linear")
    4.07...
    """
    inputs = check_list_inputs(
        y_true,
        y_score,
        qid,
        metric="dcg_score",
        ties=ties,
        k=k,
        gain=gain,
        empty=empty,
        return_per_query=return_per_query,
    )
    y = _as_float(inputs.y)
    ranked = _rank(inputs, y)
    scaled, _, shift = _dcg_sums(y, inputs, ranked)
    with np.errstate(over="ignore"):
        values = scaled * np.exp2(shift)
    return _summarize_finite(values, inputs, "dcg_score", _DCG_ADVICE)


@shared_doc
def ndcg_score(
    y_true,
    y_score,
    *,
    qid=None,
    k=None,
    gain="exp2",
    ties="average",
    empty=0.0,
    return_per_query=False,
):
    """Normalized discounted cumulative gain (NDCG@k) of ranked lists.

    ``NDCG@k = DCG@k / IDCG@k``, where ``IDCG@k`` is the DCG@k of the list
    sorted by decreasing relevance.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Non-negative relevance grades.
    %(y_score)s
    %(qid)s
    k : int, default=None
        Cut-off for both DCG and IDCG (``None``: the whole list).
    gain : {"exp2", "linear"}, default="exp2"
        ``2**y - 1`` or ``y`` (scikit-learn's ``ndcg_score`` is linear).
    %(ties)s
    empty : float or "skip", default=0.0
        Value of a list without any relevant item (IDCG = 0, NDCG = 0/0);
        0.0 mirrors scikit-learn, LightGBM and XGBoost use 1.0. ``np.nan``
        propagates to the mean; ``"skip"`` leaves such lists out of the mean
        (their per-query value is NaN).
    %(return_per_query)s

    Returns
    -------
    score : float
        NDCG of the list, or mean NDCG over the queries.
    per_query : ndarray of shape (n_queries,)
        Only if ``return_per_query``: per-query values, sorted by query id.

    See Also
    --------
    dcg_score : The unnormalized measure.
    PositionalMetric.ndcg : The same measure as a positional-measure object.

    Notes
    -----
    Ties are averaged exactly in closed form (mean discount over a tied
    block). A list whose items are all relevant with the same grade has NDCG
    1 for every ranking.

    Examples
    --------
    >>> from treerank.metrics import ndcg_score
    >>> y = [2, 0, 1, 1, 0, 0]
    >>> s = [0.8, 0.3, 0.3, 0.9, 0.1, 0.2]
    >>> q = [1, 1, 1, 2, 2, 2]
    >>> mean, per_query = ndcg_score(y, s, qid=q, return_per_query=True)
    >>> per_query
    array([0.98..., 1.        ])
    >>> ndcg_score([0, 0], [1, 2]), ndcg_score([0, 0], [1, 2], empty=1.0)
    (0.0, 1.0)
    """
    inputs = check_list_inputs(
        y_true,
        y_score,
        qid,
        metric="ndcg_score",
        ties=ties,
        k=k,
        gain=gain,
        empty=empty,
        return_per_query=return_per_query,
    )
    y = _as_float(inputs.y)
    ranked = _rank(inputs, y)
    # both DCG and IDCG of a list are scaled by the same power of two
    dcg, gains, _ = _dcg_sums(y, inputs, ranked)
    ideal = ideal_dcg(gains, inputs.groups, inputs.options["k"])
    defined = ideal > 0
    return summarize_queries(_safe_divide(dcg, ideal, defined), inputs, defined)


@shared_doc
def precision_at_k(
    y_true,
    y_score,
    *,
    k,
    qid=None,
    ties="average",
    empty=0.0,
    return_per_query=False,
):
    """Precision at k: the fraction of relevant items among the first k.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary relevance (0/1 or bool). Graded labels raise an error: binarize
        them explicitly (e.g. ``y_true > 0``).
    %(y_score)s
    k : int
        Cut-off, >= 1. The denominator is always ``k``: a list shorter than
        ``k`` counts its missing ranks as irrelevant (TREC's convention).
    %(qid)s
    %(ties)s
    empty : float or "skip", default=0.0
        Accepted for the common signature of the list metrics: P@k is
        defined for every list, so it is never used.
    %(return_per_query)s

    Returns
    -------
    score : float or Fraction
        P@k of the list or mean over queries (a Fraction for exact labels).
    %(per_query)s

    See Also
    --------
    recall_at_k : The fraction of the relevant items found in the first k.
    PositionalMetric.precision_at_k : The same measure as an object.

    Notes
    -----
    With ``ties="average"`` a tied block straddling rank ``k`` contributes its
    expected number of relevant items inside the top ``k`` (closed form).
    Always defined.

    Examples
    --------
    >>> from treerank.metrics import precision_at_k
    >>> precision_at_k([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1], k=2)
    0.5
    >>> precision_at_k([1, 0, 1, 0], [0.9, 0.5, 0.5, 0.1], k=2)
    0.75
    """
    inputs = check_list_inputs(
        y_true,
        y_score,
        qid,
        metric="precision_at_k",
        target="binary",
        ties=ties,
        k=k,
        k_required=True,
        empty=empty,
        return_per_query=return_per_query,
    )
    ranked, y_ranked = _rank_binary(inputs)
    weights = precision_weight(ranked.position, inputs.options["k"], inputs.exact)
    return summarize_queries(_positional_sums(y_ranked, weights, ranked), inputs)


@shared_doc
def recall_at_k(
    y_true,
    y_score,
    *,
    k,
    qid=None,
    ties="average",
    empty=0.0,
    return_per_query=False,
):
    """Recall at k: the fraction of the relevant items ranked among the first k.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary relevance (0/1 or bool); graded labels raise an error.
    %(y_score)s
    k : int
        Cut-off, >= 1.
    %(qid)s
    %(ties)s
    empty : float or "skip", default=0.0
        Value of a list without relevant item (0/0), see :func:`ndcg_score`.
    %(return_per_query)s

    Returns
    -------
    score : float or Fraction
        R@k of the list or mean over queries.
    %(per_query)s

    See Also
    --------
    precision_at_k : The fraction of relevant items among the first k.
    PositionalMetric.recall_at_k : The same measure as an object.

    Examples
    --------
    >>> from treerank.metrics import recall_at_k
    >>> recall_at_k([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1], k=2)
    0.5
    """
    inputs = check_list_inputs(
        y_true,
        y_score,
        qid,
        metric="recall_at_k",
        target="binary",
        ties=ties,
        k=k,
        k_required=True,
        empty=empty,
        return_per_query=return_per_query,
    )
    ranked, y_ranked = _rank_binary(inputs)
    weights = recall_weight(ranked.position, inputs.options["k"], inputs.exact)
    found = _positional_sums(y_ranked, weights, ranked)
    relevant = segment_sum(y_ranked, ranked.group_starts)
    defined = relevant > 0
    return summarize_queries(_safe_divide(found, relevant, defined), inputs, defined)


@shared_doc
def expected_rank_utility(
    y_true,
    y_score,
    *,
    qid=None,
    neutral=0.0,
    half_life=5.0,
    ties="average",
    empty=0.0,
    return_per_query=False,
):
    """Expected rank utility (Breese et al. 1998) of ranked lists.

    ``ERU = sum_j max(y_(j) - neutral, 0) * 2 ** (-(j - 1) / (half_life - 1))``:
    the utility of an item above the neutral grade, discounted so that the
    item at rank ``half_life`` weighs half as much as the first one.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Non-negative relevance grades.
    %(y_score)s
    %(qid)s
    neutral : float, default=0.0
        Neutral grade: items at or below it have no utility.
    half_life : float, default=5.0
        Rank whose weight is 1/2 (weight 1 at rank 1); must be > 1.
    %(ties)s
    empty : float or "skip", default=0.0
        Accepted for the common signature of the list metrics: ERU is
        defined for every list, so it is never used.
    %(return_per_query)s

    Returns
    -------
    score : float
        ERU of the list or mean over queries (unnormalized; always defined).
    %(per_query)s

    See Also
    --------
    dcg_score : The same form with a logarithmic discount.

    Notes
    -----
    Ramaswamy et al. (2013) use the loss ``z - ERU`` with a constant ``z``.

    Examples
    --------
    >>> from treerank.metrics import expected_rank_utility
    >>> expected_rank_utility([3, 1, 2], [0.9, 0.8, 0.7], neutral=1, half_life=2)
    2.25
    """
    inputs = check_list_inputs(
        y_true,
        y_score,
        qid,
        metric="expected_rank_utility",
        ties=ties,
        neutral=neutral,
        half_life=half_life,
        empty=empty,
        return_per_query=return_per_query,
    )
    y = _as_float(inputs.y)
    ranked = _rank(inputs, y)
    with np.errstate(over="ignore", invalid="ignore"):
        utility = np.maximum(y[ranked.order] - inputs.options["neutral"], 0.0)
        weights = eru_weight(ranked.position, inputs.options["half_life"])
        values = _positional_sums(utility, weights, ranked)
    return _summarize_finite(
        values, inputs, "expected_rank_utility", "Rescale the grades and neutral."
    )


@shared_doc
def list_auc(
    y_true,
    y_score,
    *,
    qid=None,
    ties="average",
    empty=0.0,
    return_per_query=False,
):
    """Area under the ROC curve of every list (per-query AUC).

    The fraction of (relevant, irrelevant) pairs of a list ranked in the
    right order.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary relevance (0/1 or bool); graded labels raise an error.
    %(y_score)s
    %(qid)s
    ties : {"average", "pessimistic", "optimistic", "stable"}, default="average"
        Tie policy: ``"average"`` counts a tied pair one half (as
        :func:`sklearn.metrics.roc_auc_score`), ``"pessimistic"`` as wrong,
        ``"optimistic"`` as right, ``"stable"`` by input order.
    empty : float or "skip", default=0.0
        Value of a list whose items are all relevant or all irrelevant (AUC
        undefined). scikit-learn's ``roc_auc_score`` returns NaN there: pass
        ``empty=np.nan`` for that, or ``"skip"`` to leave such lists out.
    %(return_per_query)s

    Returns
    -------
    score : float or Fraction
        AUC of the list or mean over queries.
    %(per_query)s

    See Also
    --------
    treerank.metrics.roc_auc_score : AUC of a whole sample (bipartite ranking).
    pairwise_disagreement : ``1 - list_auc`` for binary labels.
    PositionalMetric.auc : The same measure as an object.

    Notes
    -----
    Computed as the positional measure
    ``AUC = sum_k (n - k) y_(k) / (P N) - (P - 1) / (2 N)`` (P relevant and N
    irrelevant items), tie-averaged in closed form; O(n log n).

    Examples
    --------
    >>> from treerank.metrics import list_auc
    >>> list_auc([1, 0, 1, 0], [0.9, 0.5, 0.5, 0.1])
    0.875
    """
    inputs = check_list_inputs(
        y_true,
        y_score,
        qid,
        metric="list_auc",
        target="binary",
        ties=ties,
        empty=empty,
        return_per_query=return_per_query,
    )
    ranked, y_ranked = _rank_binary(inputs)
    weighted = _pairwise_sums(y_ranked, ranked, inputs.exact)
    positives = segment_sum(y_ranked, ranked.group_starts)
    negatives = ranked.group_sizes - positives
    defined = (positives > 0) & (negatives > 0)
    correct = weighted - positives * (positives - 1) / 2
    return summarize_queries(
        _safe_divide(correct, positives * negatives, defined), inputs, defined
    )


@shared_doc
def spearman_rho(
    y_true,
    y_score,
    *,
    qid=None,
    ties="average",
    empty=0.0,
    return_per_query=False,
):
    """Spearman's rank correlation between the true ranks and the ranking by score.

    ``rho = 1 - 6 sum_i (pos_i - y_i)**2 / (n (n**2 - 1))`` where ``pos_i`` is
    the rank of item ``i`` by decreasing score and ``y_i`` its true rank.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        True ranks of the items of every list: a permutation of ``1..n``
        (1 = best) per list.
    %(y_score)s
    %(qid)s
    ties : {"average", "pessimistic", "optimistic", "stable"}, default="average"
        Tie policy for the scores (see :func:`dcg_score`; here the best item
        is the one with the smallest true rank).
    empty : float or "skip", default=0.0
        Value of a single-item list (rho undefined).
    %(return_per_query)s

    Returns
    -------
    score : float or Fraction
        rho of the list or mean over queries.
    %(per_query)s

    See Also
    --------
    scipy.stats.spearmanr : Correlation of two samples (ties as mid-ranks).
    PositionalMetric.spearman : The same measure as an object.

    Notes
    -----
    ``ties="average"`` is the expectation of rho over random tie-breaking of
    the scores (not scipy's mid-rank correlation). rho is the positional
    measure ``12 sum_k (n - k)(n - y_(k)) / (n (n²-1)) - 3 (n - 1) / (n + 1)``.

    Examples
    --------
    >>> from treerank.metrics import spearman_rho
    >>> spearman_rho([1, 2, 3, 4], [0.9, 0.1, 0.5, 0.3])
    0.4
    """
    inputs = check_list_inputs(
        y_true,
        y_score,
        qid,
        metric="spearman_rho",
        target="ranks",
        ties=ties,
        empty=empty,
        return_per_query=return_per_query,
    )
    ranked = _rank(inputs, -_as_float(inputs.y))
    utility = ranked.group_sizes[ranked.group_of] - inputs.y[ranked.order]
    weighted = _pairwise_sums(utility, ranked, inputs.exact)
    n = ranked.group_sizes
    defined = n >= 2
    if inputs.exact:
        denominator = np.where(defined, n * (n * n - 1), 1)
        scale = int_ratio(12 * np.ones_like(n), denominator, exact=True)
        shift = int_ratio(-3 * (n - 1), n + 1, exact=True)
    else:
        n_float = n.astype(np.float64)
        scale = 12.0 / np.where(defined, n_float * (n_float * n_float - 1.0), 1.0)
        shift = -3.0 * (n_float - 1.0) / (n_float + 1.0)
    return summarize_queries(weighted * scale + shift, inputs, defined)
