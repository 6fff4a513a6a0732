"""ListNet: top-one cross entropy between the label and score softmaxes."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.surrogates._base import SurrogateLoss

__all__ = ["ListNetSurrogate"]


def _group_log_softmax(x, groups):
    """``x_i - log sum_{j in list(i)} exp(x_j)`` for every item."""
    shift = groups.max(x)[groups.index]
    e = np.exp(x - shift)
    lse = np.log(groups.sum(e))[groups.index] + shift
    return x - lse


class ListNetSurrogate(SurrogateLoss):
    """ListNet (Cao et al. 2007): ``-sum_j P_y(j) log softmax(s)_j`` per list.

    ``P_y = softmax(y)`` are the "top-one" probabilities of the labels. The
    gradient is ``softmax(s) - P_y``, of l1 norm at most 2 whatever the list
    length; the loss is smooth and translation invariant but not large-margin
    (no perceptron-like algorithm, and no upper bound on ``1 - NDCG``).

    Notes
    -----
    Cost O(m) per list (segmented softmax, no loop over lists).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.surrogates import ListNetSurrogate
    >>> loss = ListNetSurrogate()
    >>> float(np.round(loss.value([0.0, 0.0], [1.0, 1.0]), 6))
    0.693147
    >>> loss.grad([2.0, 1.0], [2.0, 1.0])
    array([0., 0.])
    """

    target_name = "y"
    requires_qid = True
    translation_invariant = True

    def _value_and_grad(self, s, t, groups):
        log_p = _group_log_softmax(t, groups)
        log_q = _group_log_softmax(s, groups)
        p = np.exp(log_p)
        per_query = -groups.sum(p * log_q)
        return per_query, np.exp(log_q) - p
