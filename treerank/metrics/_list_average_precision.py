"""Average precision of ranked lists (mean over queries: MAP).

By default (``ties="threshold"``) a block of tied items is one threshold, as in
scikit-learn's ``average_precision_score``: the step-function AP over the
distinct scores, ``(1/R) sum_blocks r_b * (relevant up to the end of b) /
(position of the end of b)``, where ``r_b`` is the number of relevant items of
block ``b``.

``ties="average"`` is the exact expectation over uniformly random orders of the
tied items, computed as follows.

``AP = (1/R) sum_{j: y_(j) = 1} precision@j`` for a list with ``R`` relevant
items. Writing precision@j as a sum over the relevant items ranked at or
above ``j`` gives the pair form (Ramaswamy et al. 2013, section 6)

    AP = (1/R) [ sum_{i relevant} 1/pos_i
                 + sum_{pairs {i, i'} of relevant items} 1/max(pos_i, pos_i') ],

which makes the expectation over random tie-breaking a closed form: for a
block of ``m`` tied items at ranks ``a..a+m-1`` holding ``r`` relevant items,
with ``R_before`` relevant items in earlier blocks,

* ``E[1/pos]`` of one of its items is ``h = mean(1/a, ..., 1/(a+m-1))``;
* a pair with one item in an earlier block has ``E[1/max] = h``;
* a pair inside the block has
  ``E[1/max] = g = sum_{t=2..m} 2 (t - 1) / (m (m - 1) (a + t - 1))``
  (the larger of two distinct uniform positions is ``a + t - 1`` with
  probability ``2 (t - 1) / (m (m - 1))``);

so the block adds ``r (1 + R_before) h + r (r - 1) / 2 * g`` to ``R * AP``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.metrics._grouping import segment_exclusive_scan, segment_sum
from treerank.metrics._list_common import int_ratio, shared_doc, summarize_queries
from treerank.metrics._list_validation import check_list_inputs
from treerank.metrics._ties import TIE_POLICIES, rank_lists

__all__ = ["average_precision_score"]

_AP_TIES = ("threshold", *TIE_POLICIES)


def _check_ap_ties(ties):
    if not isinstance(ties, str) or ties not in _AP_TIES:
        raise ValueError(
            f"ties must be one of {', '.join(map(repr, _AP_TIES))}; got {ties!r}."
        )
    return ties


@shared_doc
def average_precision_score(
    y_true,
    y_score,
    *,
    qid=None,
    ties="threshold",
    empty=0.0,
    return_per_query=False,
):
    """Average precision of ranked lists; with ``qid``, mean average precision.

    ``AP = (1/R) sum_{j: y_(j) = 1} precision@j``, where ``R`` is the number of
    relevant items and ``y_(j)`` the relevance of the item at rank ``j``.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary relevance (0/1 or bool). Graded labels raise an error (the
        function does not binarize): pass ``y_true > 0`` explicitly.
    %(y_score)s
    qid : array-like of shape (n_samples,), default=None
        Query id of every row; ``None`` means a single list. With ``qid`` the
        mean over queries (MAP) is returned.
    ties : {"threshold", "average", "pessimistic", "optimistic", "stable"}, \
default="threshold"
        Tie policy. ``"threshold"`` is scikit-learn's: the items of a tied
        block enter the ranking together, each at the precision reached at the
        end of the block (the step-function AP over the distinct scores, equal
        to :func:`sklearn.metrics.average_precision_score` on one list).
        ``"average"`` is the exact expectation of AP over uniformly random
        orders of the tied items; the other policies break ties as described
        in :func:`dcg_score`. Without ties all policies agree.
    empty : float or "skip", default=0.0
        Value of a list without relevant item (AP = 0/0); 0.0 mirrors
        scikit-learn's ``average_precision_score``. ``np.nan`` propagates;
        ``"skip"`` leaves such lists out of the mean.
    %(return_per_query)s

    Returns
    -------
    score : float or Fraction
        AP of the list or MAP over queries (a Fraction for exact labels).
    per_query : ndarray of shape (n_queries,)
        Only if ``return_per_query``: AP of every query, sorted by query id.

    See Also
    --------
    sklearn.metrics.average_precision_score : The same value for one list
        (with the default ``ties="threshold"``).

    Notes
    -----
    ``ties="average"`` is the exact expectation over uniformly random orders
    of tied items, by a closed formula derived from the pair form of AP (see
    the module docstring; no enumeration). O(n log m) for n rows and lists of
    at most m items. A list whose items are all relevant has AP 1.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from treerank.metrics import average_precision_score
    >>> average_precision_score([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.1])
    0.8333...
    >>> average_precision_score([Fraction(1), 0, 1, 0], [0.9, 0.8, 0.8, 0.1])
    Fraction(5, 6)
    >>> average_precision_score(
    ...     [Fraction(1), 0, 1, 0], [0.9, 0.8, 0.8, 0.1], ties="average"
    ... )
    Fraction(11, 12)
    """
    threshold = isinstance(ties, str) and ties == "threshold"
    inputs = check_list_inputs(
        y_true,
        y_score,
        qid,
        metric="average_precision_score",
        target="binary",
        ties="average" if threshold else _check_ap_ties(ties),
        empty=empty,
        return_per_query=return_per_query,
    )
    exact = inputs.exact
    y_float = inputs.y.astype(np.float64)
    ranked = rank_lists(
        inputs.groups, inputs.y_score, ties=inputs.options["ties"], goodness=y_float
    )
    y_ranked = inputs.y[ranked.order]
    relevant = segment_sum(y_ranked, ranked.group_starts)
    starts = ranked.block_starts
    # relevant items of earlier blocks of the same list, at every block start
    earlier = segment_exclusive_scan(y_ranked, ranked.position - 1, np.add, 0)[starts]
    inverse_rank = int_ratio(np.ones_like(ranked.position), ranked.position, exact)
    if ranked.all_singletons:
        contribution = y_ranked * (1 + earlier) * inverse_rank
    elif threshold:
        in_block = segment_sum(y_ranked, starts)
        block_end = ranked.position[starts] + ranked.block_sizes - 1
        contribution = in_block * int_ratio(earlier + in_block, block_end, exact)
    else:
        sizes = ranked.block_sizes
        in_block = segment_sum(y_ranked, starts)
        mean_inverse = segment_sum(inverse_rank, starts) / sizes
        m = sizes[ranked.block_of]
        t = ranked.offset + 1
        pair_weight = int_ratio(
            2 * (t - 1), np.maximum(m * (m - 1), 1) * ranked.position, exact
        )
        pair_mean = segment_sum(pair_weight, starts)
        contribution = (
            in_block * (1 + earlier) * mean_inverse
            + in_block * (in_block - 1) / 2 * pair_mean
        )
    first_block = ranked.block_of[ranked.group_starts]
    total = segment_sum(contribution, first_block)
    defined = relevant > 0
    if total.dtype == object:
        values = np.zeros(total.shape[0], dtype=object)
        values[defined] = total[defined] / relevant[defined]
    else:
        values = np.divide(total, relevant, out=np.zeros(total.shape[0]), where=defined)
    return summarize_queries(values, inputs, defined)
