"""Kendall tau distance between two bucket orders, with item masses."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

from treerank.aggregation._bucket_order import check_bucket_order
from treerank.metrics._kendall import _kendall_pair_sum
from treerank.utils.validation import check_sample_weight

__all__ = ["kendall_tau_distance"]


def kendall_tau_distance(r1, r2, *, item_weights=None, normalize=True):
    """Kendall tau distance between two bucket orders (rankings with ties).

    A pair of items counts 1 if the two rankings order it oppositely, 1/2 if it
    is tied in exactly one of them, 0 otherwise, and is weighted by the product
    of the items' masses.

    Parameters
    ----------
    r1, r2 : array-like of shape (n_items,)
        Integer bucket indices (smaller = better, equal = tied).
    item_weights : array-like of shape (n_items,), default=None
        Non-negative item masses m; pair (i, j) counts ``m_i * m_j``. None means
        unit masses.
    normalize : bool, default=True
        If True, return the probabilistic Kendall distance
        ``2 * sum_{i<j} mu_i mu_j U_ij`` with masses ``mu = m / sum(m)``: the
        probability that two items drawn independently with probabilities mu
        are discordant, a pair tied in one ranking only counting one half
        (DESIGN §5.3; draws of the same item count 0). It lies in [0, 1) and
        equals ``(1 - 1/M) * d_U`` for unit masses, where d_U is the
        U-statistic of :func:`treerank.metrics.kendall_tau_distance`. If False,
        return the raw pair sum ``sum_{i<j} m_i m_j U_ij``.

    Returns
    -------
    distance : float

    Raises
    ------
    ValueError
        If the inputs are not valid bucket orders of the same length, or if
        ``normalize=True`` and all masses are zero.

    Notes
    -----
    A bucket order r is scored as the scorer ``-r`` by
    :func:`treerank.metrics.kendall_tau_distance`, whose O(M log^2 M) weighted
    counter computes the pair sum.

    Examples
    --------
    >>> from treerank.aggregation import kendall_tau_distance
    >>> kendall_tau_distance([0, 1, 2], [2, 1, 0], normalize=False)
    3.0
    >>> kendall_tau_distance([0, 0, 1], [0, 1, 2], normalize=False)
    0.5
    >>> kendall_tau_distance([0, 1], [1, 0])  # 2 * (1/2) * (1/2) * 1
    0.5
    """
    if not isinstance(normalize, (bool, np.bool_)):
        raise ValueError(f"normalize must be True or False; got {normalize!r}.")
    r1 = check_bucket_order(r1, input_name="r1")
    r2 = check_bucket_order(r2, r1.shape[0], input_name="r2")
    weights = check_sample_weight(item_weights, r1.shape[0], input_name="item_weights")
    pair_sum, _ = _kendall_pair_sum(
        -r1.astype(np.float64), -r2.astype(np.float64), weights
    )
    pair_sum = float(pair_sum)
    if not normalize:
        return pair_sum
    total = float(weights.sum())
    if total <= 0:
        raise ValueError(
            "item_weights are all zero: the normalized distance is undefined."
        )
    return 2.0 * pair_sum / (total * total)
