"""Pairwise disagreement of ranked lists with graded labels or a preference matrix.

A preference "item i before item j" with weight ``Y[i, j] > 0`` is violated
when ``i`` is ranked below ``j``; the pairwise disagreement of a ranking is the
total weight of the violated preferences (Ramaswamy et al. 2013, section 7),
optionally divided by the total weight. Graded labels give the preferences
``Y[i, j] = 1{y_i > y_j}``; for binary labels the normalized disagreement is
``1 - AUC`` of the list.

Ties: a pair of tied items is violated with probability 1/2 under random
tie-breaking (``"average"``), always (``"pessimistic"``), never
(``"optimistic"``), or as the input order says (``"stable"``).

Counting, for graded labels: the pairs ranked in the wrong order are the
"ascents" (a less relevant item above a more relevant one) of the relevance
sequence in ranked order; they are counted for all lists at once by a
vectorized bottom-up merge (O(n log m log n) for lists of at most m items),
the lists being laid out on aligned power-of-two strides so that no merge
crosses two lists.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from fractions import Fraction

import numpy as np

from treerank.metrics._grouping import segment_lexsort
from treerank.metrics._list_common import shared_doc, summarize_queries
from treerank.metrics._list_validation import check_list_inputs
from treerank.metrics._ties import rank_lists, tie_blocks

__all__ = ["pairwise_disagreement"]


def _count_ascents(keys, group_of, position, group_sizes):
    """Per list, the number of pairs (i above j) with ``keys[i] < keys[j]``.

    ``keys``, ``group_of`` and ``position`` (1-based) are in ranked layout.
    """
    n = keys.shape[0]
    n_groups = group_sizes.shape[0]
    _, dense = np.unique(keys, return_inverse=True)
    dense = dense.ravel().astype(np.int64)
    n_keys = int(dense.max()) + 1 if n else 1
    stride = 1
    while stride < int(group_sizes.max()):
        stride *= 2
    virtual = group_of.astype(np.int64) * stride + (position - 1)
    counts = np.zeros(n, dtype=np.int64)
    perm = np.arange(n)
    width = 1
    while width < stride:
        current_virtual = virtual[perm]
        current_key = dense[perm]
        block = current_virtual // (2 * width)
        is_left = (current_virtual // width) % 2 == 0
        left_key = block[is_left] * n_keys + current_key[is_left]
        right = np.flatnonzero(~is_left)
        base = block[right] * n_keys
        below = np.searchsorted(left_key, base + current_key[right], side="left")
        counts[perm[right]] += below - np.searchsorted(left_key, base, side="left")
        perm = perm[np.argsort(block * n_keys + current_key, kind="stable")]
        width *= 2
    return np.bincount(group_of, weights=counts, minlength=n_groups).astype(np.int64)


def _distinct_pairs_per_block(keys, block_of, n_blocks):
    """Per block, the pairs with different keys (equal keys of a block contiguous)."""
    n = keys.shape[0]
    new_run = np.ones(n, dtype=bool)
    new_run[1:] = (keys[1:] != keys[:-1]) | (block_of[1:] != block_of[:-1])
    run_starts = np.flatnonzero(new_run)
    run_sizes = np.diff(np.append(run_starts, n))
    same = np.bincount(
        block_of[run_starts],
        weights=run_sizes.astype(np.float64) ** 2,
        minlength=n_blocks,
    )
    sizes = np.bincount(block_of, minlength=n_blocks).astype(np.float64)
    return np.rint((sizes**2 - same) / 2).astype(np.int64)


def _graded_disagreement(inputs):
    y = inputs.y.astype(np.float64)
    groups = inputs.groups
    ties = inputs.options["ties"]
    policy = "optimistic" if ties == "average" else ties
    ranked = rank_lists(groups, inputs.y_score, ties=policy, goodness=y)
    y_ranked = y[ranked.order]
    wrong = _count_ascents(
        y_ranked, ranked.group_of, ranked.position, ranked.group_sizes
    )
    half_tied = None
    if ties == "average":
        # the optimistic order sorts tied items by decreasing relevance: its
        # ascents are the pairs of different tie blocks in the wrong order
        _, _, block_of, _ = tie_blocks(inputs.y_score[ranked.order], ranked.group_of)
        n_blocks = int(block_of[-1]) + 1
        tied = _distinct_pairs_per_block(y_ranked, block_of, n_blocks)
        group_of_block = np.zeros(n_blocks, dtype=np.intp)
        group_of_block[block_of] = ranked.group_of
        half_tied = np.bincount(
            group_of_block, weights=tied, minlength=groups.n_groups
        ).astype(np.int64)
    # pairs with different grades in every list
    grouped = y[groups.order]
    perm = segment_lexsort((grouped,), groups.starts, groups.sizes)
    group_index = np.repeat(np.arange(groups.n_groups), groups.sizes)
    total = _distinct_pairs_per_block(grouped[perm], group_index, groups.n_groups)
    return wrong, half_tied, total


def _preference_disagreement(inputs):
    prefs = inputs.y
    n = prefs.shape[0]
    ties = inputs.options["ties"]
    ranked = rank_lists(inputs.groups, inputs.y_score, ties="average")
    block = np.empty(n, dtype=np.intp)
    block[ranked.order] = ranked.block_of
    below = block[:, None] > block[None, :]
    tied = (block[:, None] == block[None, :]) & ~np.eye(n, dtype=bool)
    if ties == "stable":
        below |= tied & (np.arange(n)[:, None] > np.arange(n)[None, :])
    elif ties == "pessimistic":
        below |= tied
    exact = prefs.dtype == object
    zero = Fraction(0) if exact else 0.0
    wrong = np.sum(prefs[below], initial=zero)
    if ties == "average":
        wrong = wrong + np.sum(prefs[tied], initial=zero) / 2
    total = np.sum(prefs, initial=zero)
    if exact:
        return np.array([wrong], dtype=object), np.array([total], dtype=object)
    return np.array([wrong], dtype=np.float64), np.array([total], dtype=np.float64)


@shared_doc
def pairwise_disagreement(
    y_true,
    y_score,
    *,
    qid=None,
    normalize=True,
    ties="average",
    empty=0.0,
    return_per_query=False,
):
    """Pairwise disagreement: the (weighted) preferences violated by the ranking.

    With graded labels every pair with ``y_i > y_j`` is a preference "i
    before j" of weight 1; with a preference matrix ``Y`` of one list,
    ``Y[i, j] > 0`` is the weight of "i before j". A preference is violated
    when its preferred item is ranked below the other one. This is a loss:
    lower is better.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_items, n_items)
        Non-negative relevance grades (pairs of equal grades are not
        preferences), or, for a single list (``qid=None``), a square
        preference matrix: ``y_true[i, j] >= 0`` is the weight of "item i
        preferred to item j", with a zero diagonal and at most one of
        ``y_true[i, j]``, ``y_true[j, i]`` positive (a weighted DAG as in
        Ramaswamy et al. 2013). A column ``(n, 1)`` is read as grades.
    y_score : array-like of shape (n_samples,) or (n_items,)
        Scores, higher ranked first.
    qid : array-like of shape (n_samples,), default=None
        Query id of every row (graded labels only); ``None`` means one list.
    normalize : bool, default=True
        Divide by the total weight of the preferences (the number of pairs
        with different grades), giving the fraction of violated preferences;
        ``False`` returns the total violated weight ([P2]'s loss).
    ties : {"average", "pessimistic", "optimistic", "stable"}, default="average"
        A tied pair is violated with probability 1/2, always, never, or per
        the input order.
    empty : float or "skip", default=0.0
        Value of a list without any preference (all grades equal, a single
        item, or a zero matrix) when ``normalize=True`` (0/0); see
        :func:`ndcg_score`. Without normalization the value is 0.
    %(return_per_query)s

    Returns
    -------
    loss : float or Fraction
        Disagreement of the list or mean over queries.
    %(per_query)s

    See Also
    --------
    list_auc : ``1 - pairwise_disagreement`` for binary labels.

    Notes
    -----
    For graded labels ``"pessimistic"`` and ``"optimistic"`` are the worst
    and best orders of the tied items (order them by increasing or
    decreasing grade). For a preference matrix they count every tied
    preference as violated or satisfied, which is the worst or best order
    when the tied preferences are acyclic. Graded labels: O(n log m log n);
    preference matrix: O(n²).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.metrics import pairwise_disagreement
    >>> pairwise_disagreement([2, 1, 0], [0.1, 0.5, 0.9])
    1.0
    >>> pairwise_disagreement([2, 1, 0], [0.9, 0.5, 0.5], normalize=False)
    0.5
    >>> prefs = np.array([[0, 2, 0], [0, 0, 1], [0, 0, 0]])
    >>> pairwise_disagreement(prefs, [0.5, 0.9, 0.1], normalize=False)
    2.0
    """
    inputs = check_list_inputs(
        y_true,
        y_score,
        qid,
        metric="pairwise_disagreement",
        target="graded_or_preference",
        ties=ties,
        normalize=normalize,
        empty=empty,
        return_per_query=return_per_query,
    )
    exact = inputs.exact
    if inputs.preference:
        wrong, total = _preference_disagreement(inputs)
    else:
        wrong, half_tied, total = _graded_disagreement(inputs)
        if exact:
            wrong = np.array([Fraction(int(v)) for v in wrong], dtype=object)
            if half_tied is not None:
                wrong = wrong + np.array(
                    [Fraction(int(v), 2) for v in half_tied], dtype=object
                )
            total = np.array([Fraction(int(v)) for v in total], dtype=object)
        else:
            wrong = wrong.astype(np.float64)
            if half_tied is not None:
                wrong = wrong + half_tied / 2.0
            total = total.astype(np.float64)
    if not inputs.options["normalize"]:
        return summarize_queries(wrong, inputs)
    defined = total > 0
    if wrong.dtype == object:
        values = np.zeros(wrong.shape[0], dtype=object)
        values[defined] = wrong[defined] / total[defined]
    else:
        values = np.divide(wrong, total, out=np.zeros(wrong.shape[0]), where=defined)
    return summarize_queries(values, inputs, defined)
