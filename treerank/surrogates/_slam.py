"""SLAM: listwise large-margin surrogates with metric-specific weights.

For a list with scores ``s``, relevance ``y`` and non-negative weights ``v``,

    phi_SLAM(s, y) = sum_i v_i max(0, margin + max_{j: y_j < y_i} s_j - s_i)

(Chaudhuri & Tewari; the closed form of their LP with one slack per item).
Each item's hinge is taken against the *highest-scoring strictly less relevant*
item, so after sorting a list by relevance a running maximum of the scores over
the lower grades gives the loss in O(m log m), not O(m^2). With the weights of
:func:`slam_weights` the loss upper-bounds ``1 - NDCG``, ``1 - NDCG@k`` or
``1 - AP`` for every score vector, and its gradient has l1 norm at most
``2 sum_i v_i <= 2``, whatever the list length.

All lists are processed at once: one ``lexsort`` by (list, relevance), one
running maximum on integer keys ``list * n + rank(score)`` (which restarts at
every list because later lists have larger keys) and ``np.bincount``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy.special import expit

from treerank.surrogates._base import SurrogateLoss, check_margin, prepare_lists
from treerank.surrogates._groups import Groups, check_groups, segmented_scan
from treerank.surrogates._utility import gain as _gain
from treerank.surrogates._utility import log2_discount

__all__ = ["SLAMSurrogate", "slam_weight_ratio", "slam_weights"]

_WEIGHTS = ("ndcg", "ndcg@k", "map")


def _check_k(k, weights):
    if weights == "ndcg@k":
        if k is None or isinstance(k, bool) or not isinstance(k, (int, np.integer)):
            raise ValueError(f"weights='ndcg@k' needs an integer k >= 1; got k={k!r}.")
        if k < 1:
            raise ValueError(f"k must be >= 1; got {k!r}.")
    elif k is not None and isinstance(weights, str):
        raise ValueError(
            f"k is only used with weights='ndcg@k'; got weights={weights!r}, k={k!r}."
        )


def _slam_weights_flat(y, groups, weights, k, gain):
    """Weights of every item (flat arrays, validated)."""
    order = groups.lexsort(-y)
    gsorted = groups.index[order]
    pos = groups.positions(order).astype(np.float64)
    v_sorted = np.zeros(y.shape[0])
    if weights == "map":
        if not np.all((y == 0) | (y == 1)):
            raise ValueError(
                "weights='map' needs binary relevance labels (0 or 1); binarize "
                "graded labels explicitly, e.g. y > 0."
            )
        r = groups.sum(y)[gsorted]
        n0 = groups.sizes[gsorted] - r
        relevant = pos <= r
        with np.errstate(divide="ignore", invalid="ignore"):
            v_sorted = np.where(relevant, n0 / (r * (n0 + pos)), 0.0)
    else:
        if np.any(y < 0):
            raise ValueError("the NDCG weights need relevance labels >= 0.")
        g = _gain(y[order], gain)
        disc = log2_discount(pos)
        if weights == "ndcg":
            m = groups.sizes[gsorted].astype(np.float64)
            g_min = groups.min(_gain(y, gain))[gsorted]
            contrib = g * disc
            z = np.bincount(gsorted, weights=contrib, minlength=groups.n_groups)
            num = (g - g_min) * (disc - log2_discount(m))
        else:
            top = pos <= k
            contrib = np.where(top, g * disc, 0.0)
            z = np.bincount(gsorted, weights=contrib, minlength=groups.n_groups)
            num = contrib
        z = z[gsorted]
        v_sorted = np.divide(num, z, out=np.zeros_like(num), where=z > 0)
    v = np.empty_like(v_sorted)
    v[order] = v_sorted
    return v


def _sort_keys(Y):
    """``Y`` as int16 when its finite entries are small integers (same order).

    numpy's stable sort is a radix sort for 16-bit integers, several times
    faster than the float merge sort; relevance grades are small integers.
    Infinite pads map to the int16 extremes.
    """
    finite = np.isfinite(Y)
    values = Y[finite]
    if values.size and (
        values.min() < -32000
        or values.max() > 32000
        or np.any(values != np.round(values))
    ):
        return Y
    keys = np.where(finite, Y, 0.0).astype(np.int16)
    keys[Y == np.inf] = np.iinfo(np.int16).max
    keys[Y == -np.inf] = np.iinfo(np.int16).min
    return keys


def _slam_weights_padded(Y, sizes, weights, k, gain):
    """Weights of padded lists ``Y`` (pads ``-inf``), sorted row by row."""
    n_rows, width = Y.shape
    rows = np.arange(n_rows)[:, None]
    order = np.argsort(_sort_keys(-Y), axis=1, kind="stable")
    y_sorted = Y[rows, order]
    pos = np.arange(1, width + 1, dtype=np.float64)[None, :]
    size = sizes[:, None].astype(np.float64)
    real = pos <= size
    if weights == "map":
        y_real = np.where(real, y_sorted, 0.0)
        if not np.all((y_real == 0) | (y_real == 1)):
            raise ValueError(
                "weights='map' needs binary relevance labels (0 or 1); binarize "
                "graded labels explicitly, e.g. y > 0."
            )
        r = y_real.sum(axis=1, keepdims=True)
        n0 = size - r
        with np.errstate(divide="ignore", invalid="ignore"):
            v_sorted = np.where(real & (pos <= r), n0 / (r * (n0 + pos)), 0.0)
    else:
        if np.any(np.where(real, y_sorted, 0.0) < 0):
            raise ValueError("the NDCG weights need relevance labels >= 0.")
        g = np.where(real, _gain(np.where(real, y_sorted, 0.0), gain), 0.0)
        disc = log2_discount(pos)
        if weights == "ndcg":
            g_min = np.take_along_axis(g, sizes[:, None] - 1, axis=1)
            z = np.sum(g * disc, axis=1, keepdims=True)
            num = np.where(real, (g - g_min) * (disc - log2_discount(size)), 0.0)
        else:
            num = np.where(real & (pos <= k), g * disc, 0.0)
            z = num.sum(axis=1, keepdims=True)
        v_sorted = np.divide(num, z, out=np.zeros_like(num), where=z > 0)
    V = np.empty_like(v_sorted)
    V[rows, order] = v_sorted
    return V


def _compute_weights(y, groups, weights, k, gain):
    if groups.n_samples and groups.padding_is_cheap:
        V = _slam_weights_padded(groups.pad(y, -np.inf), groups.sizes, weights, k, gain)
        return groups.unpad(V)
    return _slam_weights_flat(y, groups, weights, k, gain)


def _prepare_labels(y, qid):
    y_arr = np.asarray(y, dtype=np.float64)
    if not np.all(np.isfinite(y_arr)):
        raise ValueError("y contains NaN or infinity.")
    shape = y_arr.shape
    if y_arr.ndim == 2:
        if qid is not None:
            raise ValueError(
                "y is two-dimensional (one list per row): qid must be None."
            )
        return y_arr.ravel(), Groups.regular(*shape), shape
    if y_arr.ndim != 1:
        raise ValueError(f"y must be one- or two-dimensional; got shape {shape}.")
    return y_arr.ravel(), check_groups(qid, y_arr.size), shape


def slam_weights(y, *, qid=None, weights="ndcg", k=None, gain="exp2"):
    """SLAM weight vectors ``v(y)`` that make SLAM upper-bound ``1 - metric``.

    With the items of a list sorted by decreasing relevance (ties by index,
    which keeps ``v`` independent of the scores and SLAM convex), position
    ``i = 1..m``, gain ``G`` and discount ``D(i) = 1 / log2(1 + i)``:

    - ``"ndcg"``: ``v_i = (G(y_i) - G(y_min)) (D(i) - D(m)) / Z(y)``, ``Z`` the
      ideal DCG; ``sum v <= 1``;
    - ``"ndcg@k"``: ``v_i = G(y_i) D(i) / Z_k(y)`` for ``i <= k``, else 0;
      ``sum v = 1``;
    - ``"map"`` (binary ``y``, ``r`` relevant, ``n0 = m - r``):
      ``v_i = n0 / (r (n0 + i))`` for ``i <= r``, else 0 (the tightest weights).

    A list with no relevant item (or all items equally relevant) gets ``v = 0``.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_lists, n_items)
        Relevance labels (binary for ``"map"``).
    qid : array-like of shape (n_samples,), default=None
        Query id of each item (None: one list, or one per row).
    weights : {"ndcg", "ndcg@k", "map"}, default="ndcg"
    k : int or None, default=None
        Cut-off for ``"ndcg@k"``.
    gain : {"exp2", "linear"}, default="exp2"
        Gain ``G``: ``2^y - 1`` or ``y``.

    Returns
    -------
    v : ndarray of the shape of ``y``
        Weights indexed like the items.

    Notes
    -----
    O(m log m) per list, vectorized over lists.

    Examples
    --------
    >>> from treerank.surrogates import slam_weights
    >>> slam_weights([2, 1, 0]).round(6)
    array([0.413117, 0.03606 , 0.      ])
    >>> slam_weights([1, 0, 1, 0], weights="map")
    array([0.33333333, 0.        , 0.25      , 0.        ])
    >>> slam_weights([2, 1, 0], weights="ndcg@k", k=2).round(6)
    array([0.826235, 0.173765, 0.      ])
    """
    if weights not in _WEIGHTS:
        raise ValueError(f"weights must be one of {_WEIGHTS}; got {weights!r}.")
    _check_k(k, weights)
    if gain not in ("exp2", "linear"):
        raise ValueError(f"gain must be 'exp2' or 'linear'; got {gain!r}.")
    y_flat, groups, shape = _prepare_labels(y, qid)
    return _compute_weights(y_flat, groups, weights, k, gain).reshape(shape)


def slam_weight_ratio(v, *, qid=None):
    """Ratio ``v_max = max_{v_i, v_j > 0} v_i / v_j`` of each list (1 if < 2 positive).

    The constant of the perceptron bounds of Chaudhuri & Tewari.

    Parameters
    ----------
    v : array-like of shape (n_samples,) or (n_lists, n_items)
        Non-negative weights.
    qid : array-like of shape (n_samples,), default=None

    Returns
    -------
    vmax : float or ndarray of shape (n_lists,)
        A float for a single list.

    Examples
    --------
    >>> from treerank.surrogates import slam_weight_ratio
    >>> slam_weight_ratio([1 / 8, 1 / 12, 1 / 16, 1 / 20, 0])
    2.5
    """
    v_flat, groups, shape = _prepare_labels(v, qid)
    if np.any(v_flat < 0):
        raise ValueError("v must be non-negative.")
    positive = v_flat > 0
    big = groups.max(np.where(positive, v_flat, -np.inf))
    small = groups.min(np.where(positive, v_flat, np.inf))
    count = groups.sum(positive.astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(count >= 2, big / small, 1.0)
    if len(shape) == 1:
        return float(ratio[0])
    return ratio


def _sorted_blocks(y, groups):
    """Sort by (list, relevance ascending, index) and describe the grade blocks."""
    n = y.shape[0]
    order = groups.lexsort(y)
    gsorted = groups.index[order]
    ysorted = y[order]
    new_block = np.ones(n, dtype=bool)
    new_block[1:] = (gsorted[1:] != gsorted[:-1]) | (ysorted[1:] != ysorted[:-1])
    block_id = np.cumsum(new_block) - 1
    block_first = np.flatnonzero(new_block)
    block_start = block_first[block_id]
    block_end = np.append(block_first[1:], n)[block_id]
    return order, gsorted, block_start, block_end


def _slam_exact(s, y, v, groups, margin):
    n = s.shape[0]
    order, gsorted, block_start, _ = _sorted_blocks(y, groups)
    # rank of each score, ascending; equal scores: the item that comes first in
    # the (relevance, index) order ranks higher, so a running maximum picks it
    idx = np.arange(n)
    sorted_position = np.empty(n, dtype=np.intp)
    sorted_position[order] = idx
    by_score = np.lexsort((-sorted_position, s))
    rank = np.empty(n, dtype=np.int64)
    rank[by_score] = idx
    key = gsorted.astype(np.int64) * n + rank[order]
    running = np.maximum.accumulate(key)
    prev = block_start - 1
    valid = prev >= groups.starts[gsorted]
    best = running[np.maximum(prev, 0)] - gsorted.astype(np.int64) * n
    rival = by_score[np.where(valid, best, 0)]
    item = order
    hinge = np.where(valid, np.maximum(0.0, margin + s[rival] - s[item]), 0.0)
    weight = v[item]
    per_query = np.bincount(gsorted, weights=weight * hinge, minlength=groups.n_groups)
    active = hinge > 0
    grad = np.bincount(
        rival[active], weights=weight[active], minlength=n
    ) - np.bincount(item[active], weights=weight[active], minlength=n)
    return per_query, grad


def _slam_smooth(s, y, v, groups, margin, mu):
    """Entropic smoothing ``mu log(1 + sum_{y_j < y_i} e^{(margin + s_j - s_i)/mu})``.

    An upper bound of the exact loss, within ``mu log(m)`` per unit weight;
    convex and smooth. Prefix log-sum-exps over the lower grades (and suffix
    ones over the higher grades, for the gradient) use a segmented scan.
    """
    n = s.shape[0]
    order, gsorted, block_start, block_end = _sorted_blocks(y, groups)
    max_len = groups.max_size
    a = s[order] / mu
    prefix = segmented_scan(a, gsorted, np.logaddexp, max_length=max_len)
    prev = block_start - 1
    valid = prev >= groups.starts[gsorted]
    lower = np.where(valid, prefix[np.maximum(prev, 0)], -np.inf)
    z = (margin - s[order]) / mu + lower
    weight = v[order]
    per_query = np.bincount(
        gsorted, weights=weight * mu * np.logaddexp(0.0, z), minlength=groups.n_groups
    )
    sig = expit(z)
    grad_sorted = -weight * sig
    with np.errstate(divide="ignore"):
        logw = np.log(weight) - np.logaddexp(0.0, -z) - np.where(valid, lower, 0.0)
    logw = np.where(valid & (weight > 0), logw, -np.inf)
    suffix = segmented_scan(logw[::-1], gsorted[::-1], np.logaddexp, max_length=max_len)
    suffix = suffix[::-1]
    has_higher = block_end < groups.ends[gsorted]
    higher = np.where(has_higher, suffix[np.minimum(block_end, n - 1)], -np.inf)
    grad_sorted = grad_sorted + np.exp(a + higher)
    grad = np.empty(n)
    grad[order] = grad_sorted
    return per_query, grad


def _padded_blocks(Y):
    """Sort padded rows by relevance (ascending) and describe the grade blocks.

    Returns the row-wise order, the same order as flat indices into the
    raveled arrays (1-D gathers are cheaper than 2-D fancy indexing), and for
    every sorted position the start and the end of its grade block.
    """
    n_rows, width = Y.shape
    cols = np.arange(width)[None, :]
    order = np.argsort(_sort_keys(Y), axis=1, kind="stable")
    flat = (order + (np.arange(n_rows) * width)[:, None]).ravel()
    y_sorted = Y.ravel()[flat].reshape(Y.shape)
    new = np.ones(Y.shape, dtype=bool)
    new[:, 1:] = y_sorted[:, 1:] != y_sorted[:, :-1]
    block_start = np.maximum.accumulate(np.where(new, cols, 0), axis=1)
    last = np.ones(Y.shape, dtype=bool)
    last[:, :-1] = new[:, 1:]
    ends = np.where(last, cols + 1, width)
    block_end = np.minimum.accumulate(ends[:, ::-1], axis=1)[:, ::-1]
    return order, flat, block_start, block_end


def _slam_exact_padded(S, Y, V, margin):
    """Exact SLAM of padded lists (pads: ``y = +inf``, ``v = 0``), row by row."""
    n_rows, width = S.shape
    _, flat, block_start, _ = _padded_blocks(Y)
    cols = np.arange(width)[None, :]
    offsets = (np.arange(n_rows) * width)[:, None]
    s_sorted = S.ravel()[flat].reshape(S.shape)
    # running maximum of the scores in (relevance, index) order, and the
    # position where it was first reached
    running = np.maximum.accumulate(s_sorted, axis=1)
    new_max = np.ones(S.shape, dtype=bool)
    new_max[:, 1:] = s_sorted[:, 1:] > running[:, :-1]
    record = np.maximum.accumulate(np.where(new_max, cols, 0), axis=1)
    prev = (np.maximum(block_start - 1, 0) + offsets).ravel()
    weight = V.ravel()[flat]
    candidate = (block_start.ravel() > 0) & (weight > 0)
    hinge = np.where(
        candidate,
        np.maximum(0.0, margin + running.ravel()[prev] - s_sorted.ravel()),
        0.0,
    )
    per_query = np.bincount(
        np.repeat(np.arange(n_rows), width), weights=weight * hinge, minlength=n_rows
    )
    active = hinge > 0
    rival = flat[(record + offsets).ravel()[prev[active]]]
    w = weight[active]
    size = n_rows * width
    grad = np.bincount(rival, weights=w, minlength=size)
    grad -= np.bincount(flat[active], weights=w, minlength=size)
    return per_query, grad.reshape(S.shape)


def _slam_smooth_padded(S, Y, V, margin, mu):
    """Entropic smoothing of SLAM on padded lists (see :func:`_slam_smooth`)."""
    _, flat, block_start, block_end = _padded_blocks(Y)
    n_rows, width = S.shape
    rows = np.arange(n_rows)[:, None]
    s_sorted = S.ravel()[flat].reshape(S.shape)
    a = s_sorted / mu
    weight = V.ravel()[flat].reshape(S.shape)
    prefix = np.logaddexp.accumulate(a, axis=1)
    prev = block_start - 1
    valid = prev >= 0
    lower = np.where(valid, prefix[rows, np.maximum(prev, 0)], -np.inf)
    z = (margin - s_sorted) / mu + lower
    per_query = np.sum(weight * mu * np.logaddexp(0.0, z), axis=1)
    grad_sorted = -weight * expit(z)
    with np.errstate(divide="ignore"):
        logw = np.log(weight) - np.logaddexp(0.0, -z) - np.where(valid, lower, 0.0)
    logw = np.where(valid & (weight > 0), logw, -np.inf)
    suffix = np.logaddexp.accumulate(logw[:, ::-1], axis=1)[:, ::-1]
    has_higher = block_end < width
    higher = np.where(
        has_higher, suffix[rows, np.minimum(block_end, width - 1)], -np.inf
    )
    grad_sorted = grad_sorted + np.exp(a + higher)
    grad = np.empty(S.size)
    grad[flat] = grad_sorted.ravel()
    return per_query, grad.reshape(S.shape)


def _slam_dispatch(s, y, v, groups, margin, mu=None, layout="auto"):
    """Run the padded (row-sorted) or the flat (globally sorted) algorithm."""
    padded = layout == "padded" or (
        layout == "auto" and groups.n_samples > 0 and groups.padding_is_cheap
    )
    if not padded:
        if mu is None:
            return _slam_exact(s, y, v, groups, margin)
        return _slam_smooth(s, y, v, groups, margin, mu)
    S = groups.pad(s, 0.0)
    Y = groups.pad(y, np.inf)
    V = groups.pad(v, 0.0)
    if mu is None:
        per_query, grad = _slam_exact_padded(S, Y, V, margin)
    else:
        per_query, grad = _slam_smooth_padded(S, Y, V, margin, mu)
    return per_query, groups.unpad(grad)


class SLAMSurrogate(SurrogateLoss):
    """SLAM surrogate ``sum_i v_i max(0, margin + max_{j: y_j < y_i} s_j - s_i)``.

    Convex, translation invariant, zero iff every more relevant item (with
    ``v_i > 0``) beats every less relevant one by the margin; with the weights
    of :func:`slam_weights` it upper-bounds ``1 - NDCG`` (``"ndcg"``),
    ``1 - NDCG@k`` (``"ndcg@k"``) or ``1 - AP`` (``"map"``) for every score
    vector and any deterministic tie rule, with margin 1.

    Parameters
    ----------
    weights : {"ndcg", "ndcg@k", "map"}, callable or array-like, default="ndcg"
        The weight vector: a name (see :func:`slam_weights`), a callable
        ``v(y_list) -> weights`` applied list by list, or fixed per-item weights
        of shape (n_samples,) (they must match the data passed).
    k : int or None, default=None
        Cut-off for ``weights="ndcg@k"``.
    margin : float, default=1.0
        The margin ``Delta`` (the upper-bound property is proved for 1).
    gain : {"exp2", "linear"}, default="exp2"
        Gain of the NDCG weights.

    Notes
    -----
    Value and (sub)gradient cost O(m log m) per list, vectorized over lists
    (no loop over lists): lists are sorted row by row when they fit a padded
    array at most 4x larger than the data, otherwise by one global sort. At a
    kink the subgradient uses, for each item, among the less relevant items
    with the largest score, the least relevant one (then the lowest index).
    The subgradient's l1 norm is at most ``2 sum_i v_i``.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.surrogates import SLAMSurrogate
    >>> loss = SLAMSurrogate(weights="ndcg")
    >>> round(loss.value([0.1, 0.5, 0.3], [2, 1, 0]), 6)
    0.607212
    >>> loss.grad([0.1, 0.5, 0.3], [2, 1, 0]).round(6)
    array([-0.413117,  0.377058,  0.03606 ])
    >>> SLAMSurrogate(weights="map").value([0.2, 0.9, 0.1, 0.5], [1, 0, 1, 0])
    1.0166666666666666
    """

    target_name = "y"
    requires_qid = True
    is_smooth = False
    translation_invariant = True

    def __init__(self, weights="ndcg", k=None, margin=1.0, gain="exp2"):
        if isinstance(weights, str):
            if weights not in _WEIGHTS:
                raise ValueError(
                    f"weights must be one of {_WEIGHTS}, a callable or an array of "
                    f"per-item weights; got {weights!r}."
                )
        elif not callable(weights):
            arr = np.asarray(weights, dtype=np.float64)
            if (
                arr.ndim not in (1, 2)
                or not np.all(np.isfinite(arr))
                or np.any(arr < 0)
            ):
                raise ValueError(
                    "weights given as an array must hold finite non-negative numbers."
                )
        _check_k(k, weights if isinstance(weights, str) else None)
        check_margin(margin)
        if gain not in ("exp2", "linear"):
            raise ValueError(f"gain must be 'exp2' or 'linear'; got {gain!r}.")
        self.weights = weights
        self.k = k
        self.margin = margin
        self.gain = gain

    def _weights_flat(self, y, groups):
        if isinstance(self.weights, str):
            return _compute_weights(y, groups, self.weights, self.k, self.gain)
        if callable(self.weights):
            v = np.empty_like(y)
            for g in range(groups.n_groups):
                members = groups.order[groups.starts[g] : groups.ends[g]]
                v[members] = np.asarray(self.weights(y[members]), dtype=np.float64)
        else:
            v = np.asarray(self.weights, dtype=np.float64).ravel()
            if v.shape != y.shape:
                raise ValueError(
                    f"weights has {v.shape[0]} entries but there are {y.shape[0]} "
                    "items."
                )
        if not np.all(np.isfinite(v)) or np.any(v < 0):
            raise ValueError("the SLAM weights must be finite and non-negative.")
        return v

    def list_weights(self, y, *, qid=None):
        """Weight vector ``v(y)`` used by the loss for the given labels.

        Parameters
        ----------
        y : array-like of shape (n_samples,) or (n_lists, n_items)
        qid : array-like of shape (n_samples,), default=None

        Returns
        -------
        v : ndarray of the shape of ``y``
        """
        y_flat, groups, shape = _prepare_labels(y, qid)
        return self._weights_flat(y_flat, groups).reshape(shape)

    def _value_and_grad(self, s, t, groups):
        v = self._weights_flat(t, groups)
        return _slam_dispatch(s, t, v, groups, float(self.margin))

    def _smooth_value_and_grad(self, s, t, groups, smoothing):
        if not smoothing:
            return self._value_and_grad(s, t, groups)
        v = self._weights_flat(t, groups)
        return _slam_dispatch(s, t, v, groups, float(self.margin), float(smoothing))

    def smoothed_value_and_grad(self, scores, y, *, smoothing, qid=None):
        """Value and gradient of the entropic smoothing of the loss.

        ``sum_i v_i mu log(1 + sum_{j: y_j < y_i} exp((margin + s_j - s_i) / mu))``
        is convex, differentiable, at least the loss and at most the loss plus
        ``mu log(m) sum_i v_i``. The learners minimize it with L-BFGS.

        Parameters
        ----------
        scores : array-like of shape (n_samples,) or (n_lists, n_items)
        y : array-like of the same shape
        smoothing : float
            ``mu > 0``.
        qid : array-like of shape (n_samples,), default=None

        Returns
        -------
        value : float
        grad : ndarray of the shape of ``scores``
        """
        if not (isinstance(smoothing, (int, float)) and smoothing > 0):
            raise ValueError(f"smoothing must be a positive number; got {smoothing!r}.")
        s, t, groups, shape = prepare_lists(scores, y, qid, target_name="y")
        per_query, grad = self._smooth_value_and_grad(s, t, groups, smoothing)
        return float(per_query.sum()), grad.reshape(shape)
