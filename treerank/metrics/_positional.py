"""Positional ranking measures ``offset(y) + sum_k phi(k) u_{sigma(k)}(y)``.

A generalized positional performance measure (GPPM, Calauzenes, Usunier and
Gallinari 2013, Definition 2.1) scores a ranking ``sigma`` of ``n`` items
(``sigma(k)`` = the item at rank ``k``, best first) of a list with labels
``y`` as

    r(y, sigma) = offset(y) + sum_{k=1..n} phi(k) * u_{sigma(k)}(y),

with ``phi`` non-negative and non-increasing (``phi(1) > 0``) and a utility
vector ``u(y)``. DCG@k, NDCG@k, precision@k, recall@k, the per-list AUC and
Spearman's rho are all of this form:

==========  ========================  ==========================  =================
measure     u_i(y)                    phi(k)                      offset(y)
==========  ========================  ==========================  =================
DCG@K       2**y_i - 1 (or y_i)       1{k <= K} / log2(1 + k)     0
NDCG@K      (2**y_i - 1) / N_K(y)     1{k <= K} / log2(1 + k)     0
P@K         y_i                       1{k <= K} / K               0
R@K         y_i / P                   1{k <= K}                   0
AUC         y_i / (P N)               n - k                       -(P - 1) / (2 N)
Spearman    12 (n - y_i) / (n(n²-1))  n - k                       -3 (n - 1)/(n + 1)
==========  ========================  ==========================  =================

(P, N: numbers of relevant and irrelevant items; N_K(y): the ideal DCG@K;
Spearman's labels are the true ranks, 1 = best). Undefined cases (NDCG and
recall with no relevant item, AUC with P = 0 or N = 0, Spearman with n = 1)
get ``u = 0`` and offset 0, i.e. the value 0 for every ranking, as the list
metrics' default ``empty=0.0``.

Rankings are arrays of item indices in rank order (0-based, best first: the
``np.argsort(-scores)`` convention).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import math
import numbers
from fractions import Fraction

import numpy as np

from treerank.metrics._grouping import group_qid, segment_lexsort, segment_sum
from treerank.metrics._list_common import int_ratio, to_exact
from treerank.metrics._list_validation import check_list_inputs
from treerank.metrics._ties import rank_lists, tie_averaged
from treerank.utils.validation import check_scores

__all__ = [
    "PositionalMetric",
    "auc_weight",
    "check_distribution",
    "check_finite_value",
    "dcg_discount",
    "eru_weight",
    "gain_shift",
    "gain_values",
    "ideal_dcg",
    "precision_weight",
    "recall_weight",
    "weight_gap_norm",
]

# bayes_optimal_rankings refuses to list more rankings than this
_MAX_RANKINGS = 1_000_000


# ---------------------------------------------------------------------------
# Position weights and gains shared with the list metric functions
# ---------------------------------------------------------------------------


def dcg_discount(position, k=None):
    """DCG discount ``1 / log2(1 + position)``, zero beyond the cut-off ``k``.

    Examples
    --------
    >>> from treerank.metrics._positional import dcg_discount
    >>> dcg_discount(np.array([1, 2, 3]), k=2)
    array([1.        , 0.63092975, 0.        ])
    """
    position = np.asarray(position)
    if position.size == 0:
        return np.zeros(position.shape)
    top = int(position.max())
    if k is not None:
        top = min(top, k)
    table = np.zeros(int(position.max()) + 1)
    table[1 : top + 1] = 1.0 / np.log2(2.0 + np.arange(top))
    return table[position]  # a look-up: the same bits for every use


def ideal_dcg(gains, groups, k=None):
    """Ideal DCG@k of every list: the DCG@k of its gains sorted decreasingly.

    The sum runs over the sorted gains, so the result does not depend on the
    order of the items of a list (to the last bit) and is the normalizer of
    :func:`treerank.metrics.ndcg_score`.

    Parameters
    ----------
    gains : ndarray of shape (n_samples,)
        Gain of every item (e.g. :func:`gain_values` of its grade).
    groups : object
        The lists, with the arrays ``order`` (the items list by list),
        ``starts`` and ``sizes`` (of every list in ``order``), as
        :class:`treerank.metrics._grouping.QueryGroups`.
    k : int, default=None
        Cut-off (``None``: the whole list).

    Returns
    -------
    ideal : ndarray of shape (n_groups,)

    Examples
    --------
    >>> from treerank.metrics._grouping import group_qid, segment_lexsort, segment_sum
    >>> from treerank.metrics._positional import ideal_dcg
    >>> ideal_dcg(np.array([0.0, 1.0, 3.0, 1.0]), group_qid([0, 0, 0, 1]))
    array([3.63092975, 1.        ])
    """
    grouped = gains[groups.order]
    perm = segment_lexsort((-grouped,), groups.starts, groups.sizes)
    position = np.arange(grouped.shape[0]) - np.repeat(groups.starts, groups.sizes) + 1
    return segment_sum(grouped[perm] * dcg_discount(position, k), groups.starts)


def precision_weight(position, k, exact=False):
    """Precision@k weight ``1{position <= k} / k``.

    Examples
    --------
    >>> from treerank.metrics._positional import precision_weight
    >>> precision_weight(np.array([1, 2, 3]), 2)
    array([0.5, 0.5, 0. ])
    """
    position = np.asarray(position)
    return int_ratio(
        (position <= k).astype(np.int64), np.full(position.shape, k), exact
    )


def recall_weight(position, k, exact=False):
    """Recall@k weight ``1{position <= k}``.

    Examples
    --------
    >>> from treerank.metrics._positional import recall_weight
    >>> recall_weight(np.array([1, 2, 3]), 2)
    array([1., 1., 0.])
    """
    inside = (np.asarray(position) <= k).astype(np.int64)
    return to_exact(inside) if exact else inside.astype(np.float64)


def auc_weight(position, n_items, exact=False):
    """Per-list AUC and Spearman weight ``n_items - position``.

    Examples
    --------
    >>> from treerank.metrics._positional import auc_weight
    >>> auc_weight(np.array([1, 2, 3]), 3)
    array([2., 1., 0.])
    """
    weight = np.asarray(n_items) - np.asarray(position)
    return to_exact(weight) if exact else weight.astype(np.float64)


def eru_weight(position, half_life):
    """Expected rank utility weight ``2 ** (-(position - 1) / (half_life - 1))``.

    Examples
    --------
    >>> from treerank.metrics._positional import eru_weight
    >>> eru_weight(np.array([1, 2, 3]), half_life=2)
    array([1.  , 0.5 , 0.25])
    """
    return np.exp2(-(np.asarray(position) - 1.0) / (half_life - 1.0))


# Gains of a list are scaled by 2**-shift when they could overflow: the largest
# scaled gain is then at most 2**_MAX_GAIN_EXPONENT, so that sums of up to 2**62
# discounted gains stay finite. Lists with smaller gains have shift 0 and their
# gains are computed exactly as without scaling.
_MAX_GAIN_EXPONENT = 960
_DCG_ADVICE = (
    "DCG is not scale-free: use NDCG (which is), gain='linear', or smaller "
    "relevance grades."
)


def gain_shift(top, gain):
    """Scaling exponent of the gains of lists whose largest grade is ``top``.

    Parameters
    ----------
    top : array-like
        Largest grade of every list (``"exp2"``) or largest absolute grade
        (``"linear"``).
    gain : {"exp2", "linear"}

    Returns
    -------
    shift : ndarray of float64
        A non-negative integer per list, 0 unless a gain exceeds ``2**960``.

    Examples
    --------
    >>> from treerank.metrics._positional import gain_shift
    >>> gain_shift([3.0, 1100.0], "exp2")
    array([  0., 140.])
    """
    top = np.asarray(top, dtype=np.float64)
    if gain == "exp2":
        exponent = np.ceil(top)
    else:
        exponent = np.frexp(top)[1].astype(np.float64)
    return np.maximum(exponent - _MAX_GAIN_EXPONENT, 0.0)


def gain_values(y, gain, shift=0.0):
    """DCG gain of grades, ``2**y - 1`` (``"exp2"``) or ``y`` (``"linear"``).

    Multiplied by ``2**-shift`` (exactly, and without overflow in between):
    ``2**(y - shift) - 2**-shift`` and ``y * 2**-shift``. With the default
    ``shift=0`` these are the plain gains.

    Examples
    --------
    >>> from treerank.metrics._positional import gain_values
    >>> gain_values(np.array([0.0, 1.0, 3.0]), "exp2")
    array([0., 1., 7.])
    >>> gain_values(np.array([1100.0, 1099.0]), "exp2", shift=140.0)
    array([9.74...e+288, 4.87...e+288])
    """
    y = np.asarray(y, dtype=np.float64)
    shift = np.asarray(shift, dtype=np.float64)
    if gain == "exp2":
        return np.exp2(y - shift) - np.exp2(-shift)
    return y * np.exp2(-shift)


def check_finite_value(value, metric, advice):
    """Raise a clear error instead of returning an overflowed (inf or NaN) value.

    Examples
    --------
    >>> from treerank.metrics._positional import check_finite_value
    >>> check_finite_value(np.array([1.0, 2.0]), "dcg", "")
    >>> check_finite_value(np.array([np.inf]), "dcg", "Use ndcg.")
    Traceback (most recent call last):
    ...
    ValueError: dcg overflows float64 (a value exceeds 1.8e+308). Use ndcg.
    """
    values = np.asarray(value)
    if values.dtype != object and not np.all(np.isfinite(values)):
        raise ValueError(
            f"{metric} overflows float64 (a value exceeds "
            f"{np.finfo(np.float64).max:.2g}). {advice}".rstrip()
        )


# ---------------------------------------------------------------------------
# Validation helpers of the class
# ---------------------------------------------------------------------------


def _check_ranking(ranking, n_items):
    try:
        arr = np.asarray(ranking)
    except ValueError as exc:
        raise ValueError(f"ranking must be a sequence of item indices: {exc}") from None
    if arr.ndim != 1 or arr.shape[0] != n_items:
        raise ValueError(
            f"ranking must list the {n_items} item indices in rank order (best "
            f"first); got shape {arr.shape}."
        )
    if arr.dtype.kind not in "iu" and not (
        arr.dtype.kind in "fO" and all(float(v).is_integer() for v in arr.tolist())
    ):
        raise ValueError(f"ranking must hold integer item indices; got {arr!r}.")
    arr = arr.astype(np.intp)
    if not np.array_equal(np.sort(arr), np.arange(n_items)):
        raise ValueError(
            f"ranking must be a permutation of 0..{n_items - 1} (item indices in "
            f"rank order, best first); got {arr.tolist()}."
        )
    return arr


def check_distribution(distribution):
    """Validate a finite distribution of label vectors.

    Parameters
    ----------
    distribution : iterable of (array-like, number) pairs
        Label vectors (relevance vectors, preference matrices, targets) of one
        shape, and their probabilities: real numbers, not booleans, finite,
        ``>= 0``, summing to 1 -- exactly when they are all rational (e.g.
        :class:`fractions.Fraction`), within ``1e-9`` otherwise.

    Returns
    -------
    pairs : list of (ndarray, number)
        The label vectors as arrays (object arrays keep fractions exact) and
        the probabilities as given.

    Raises
    ------
    ValueError
        If ``distribution`` is not a non-empty list of pairs, a label vector
        holds anything but numbers, the label vectors differ in shape, or the
        probabilities are not a probability vector.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from treerank.metrics._positional import check_distribution
    >>> check_distribution([([1, 0], Fraction(1, 3)), ([0, 1], Fraction(2, 3))])
    [(array([1, 0]), Fraction(1, 3)), (array([0, 1]), Fraction(2, 3))]
    """
    try:
        entries = list(distribution)
    except TypeError:
        raise ValueError(
            "distribution must be a list of (label vector, probability) pairs."
        ) from None
    if not entries:
        raise ValueError(
            "distribution is empty: give at least one (label vector, probability) pair."
        )
    pairs = []
    for entry in entries:
        if not isinstance(entry, (tuple, list)) or len(entry) != 2:
            raise ValueError(
                "distribution must be a list of (label vector, probability) pairs; "
                f"got the entry {entry!r}."
            )
        y, p = entry
        if (
            isinstance(p, bool)
            or not isinstance(p, numbers.Real)
            or not math.isfinite(p)
            or not p >= 0
        ):
            raise ValueError(
                f"probabilities must be non-negative finite numbers (>= 0); got {p!r}."
            )
        try:
            y = np.asarray(y)
        except ValueError:
            raise ValueError(f"label vectors must be arrays; got {y!r}.") from None
        if y.dtype == object:
            if not all(isinstance(v, numbers.Real) for v in y.ravel().tolist()):
                raise ValueError("label vectors must hold numbers.")
        elif y.dtype.kind not in "biuf":
            raise ValueError(f"label vectors must hold numbers; got dtype {y.dtype}.")
        pairs.append((y, p))
    shapes = {y.shape for y, _ in pairs}
    if len(shapes) != 1:
        raise ValueError(f"the label vectors have different shapes: {sorted(shapes)}.")
    total = sum(p for _, p in pairs)
    if all(isinstance(p, numbers.Rational) for _, p in pairs):
        if total != 1:
            raise ValueError(f"the probabilities must sum to 1; they sum to {total}.")
    elif abs(float(total) - 1.0) > 1e-9:
        raise ValueError(
            f"the probabilities must sum to 1; they sum to {float(total)!r}."
        )
    return pairs


def _check_relevance_distribution(distribution, n_items):
    """:func:`check_distribution` of relevance vectors of ``n_items`` entries."""
    pairs = check_distribution(distribution)
    shape = pairs[0][0].shape
    if shape != (n_items,):
        raise ValueError(
            f"every relevance vector must have {n_items} entries; got shape {shape}."
        )
    return pairs


def _result(value):
    if isinstance(value, Fraction):
        return value
    if isinstance(value, numbers.Integral):
        return Fraction(int(value))
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(
            f"The value of the measure is {value}: it overflows float64 (the sum of "
            "the weighted utilities exceeds 1.8e+308) or the utility is not finite."
        )
    return value


def _tie_classes(values, atol):
    """Class of every value: 0 for the largest, equal values (within atol) share one."""
    order = sorted(range(len(values)), key=lambda i: values[i], reverse=True)
    classes = [0] * len(values)
    current = 0
    for rank, item in enumerate(order):
        if rank and values[order[rank - 1]] - values[item] > atol:
            current += 1
        classes[item] = current
    return order, classes


# ---------------------------------------------------------------------------
# The class
# ---------------------------------------------------------------------------


def weight_gap_norm(phi, p=2):
    """``C_phi(p)``: the p-norm of the gaps between symmetric position weights.

    ``(sum_{i <= n/2} (phi(i) - phi(n - i + 1))**p)**(1/p)``, the largest gap
    for ``p = inf``; 0 for fewer than two positions: the constant of the
    regret bounds (:func:`treerank.surrogates.regret_bound`), also given by
    :meth:`PositionalMetric.weight_gap_norm` for a metric.

    Parameters
    ----------
    phi : array-like of shape (n_items,)
        Position weights, non-increasing.
    p : float, default=2
        Exponent, ``p >= 1`` (or ``inf``).

    Returns
    -------
    c : float

    Examples
    --------
    >>> from treerank.surrogates import weight_gap_norm
    >>> weight_gap_norm([1.0, 0.5])
    0.5
    """
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not p >= 1:
        raise ValueError(f"p must be a number >= 1 (or inf); got {p!r}.")
    phi = np.asarray(phi, dtype=np.float64)
    half = phi.shape[0] // 2
    if half == 0:
        return 0.0
    gaps = phi[:half] - phi[::-1][:half]
    if math.isinf(p):
        return float(np.max(gaps))
    return float(np.sum(gaps**p) ** (1.0 / p))


class PositionalMetric:
    """A positional ranking measure ``offset(y) + sum_k phi(k) u_{sigma(k)}(y)``.

    Carries the position weights ``phi``, the utility ``u`` and the offset of
    a generalized positional performance measure (GPPM) for lists of
    ``n_items`` items; evaluates rankings and scores (with exact tie
    averaging), expected values under a finite distribution of relevance
    vectors, Bayes-optimal rankings and the constant ``C_phi(p)`` of the
    regret bounds. Factories build DCG@k, NDCG@k, precision@k, recall@k,
    per-list AUC and Spearman's rho; their values equal those of the list
    metric functions (:func:`treerank.metrics.dcg_score`, ...).

    Parameters
    ----------
    phi : array-like of shape (n_items,)
        Position weights ``phi(1), ..., phi(n)``: non-negative, non-increasing,
        ``phi(1) > 0``. Integers or :class:`fractions.Fraction` keep the
        computations exact for exact labels.
    utility : callable
        ``utility(y) -> array of shape (n_items,)``, the utility of every item
        for the relevance vector ``y``.
    offset : callable, default=None
        ``offset(y) -> float``, the part of the value that does not depend on
        the ranking; ``None`` means 0.

    Attributes
    ----------
    phi : ndarray of shape (n_items,)
        Position weights (float64).
    n_items : int
        Number of items of a list.
    utility_function, offset_function : callable
        The callables given.

    See Also
    --------
    treerank.metrics.ndcg_score : NDCG of lists of any size, with ``qid``.

    Notes
    -----
    By the rearrangement inequality, a ranking is optimal for the expected
    value under a distribution of ``y`` iff it sorts the items by decreasing
    expected utility ``U = E[u(y)]`` wherever ``phi`` strictly decreases
    (Calauzenes et al. 2013, eq. 2).

    ``value_from_scores`` with ``ties="average"`` gives an item of a tied
    block at ranks ``a..b`` the weight ``mean(phi(a..b))``, the exact
    expectation over uniformly random tie-breaking.

    References
    ----------
    C. Calauzenes, N. Usunier, P. Gallinari. Calibration and regret bounds
    for order-preserving surrogate losses in learning to rank. Machine
    Learning 93(2-3):227-260, 2013.

    Examples
    --------
    >>> from fractions import Fraction
    >>> from treerank.metrics import PositionalMetric
    >>> auc = PositionalMetric.auc(4)
    >>> y = [1, 0, 1, 0]
    >>> auc.value(y, [0, 1, 2, 3])
    0.75
    >>> auc.value_from_scores(y, [0.9, 0.5, 0.5, 0.1])
    0.875
    >>> dist = [([Fraction(1), 0, 0, 0], Fraction(1, 2)),
    ...         ([0, Fraction(1), 0, 0], Fraction(1, 2))]
    >>> PositionalMetric.precision_at_k(4, 1).bayes_optimal_rankings(dist)[:2]
    [(0, 1, 2, 3), (0, 1, 3, 2)]
    """

    def __init__(self, phi, utility, offset=None):
        phi_in = (
            np.asarray(phi, dtype=object) if _has_fraction(phi) else np.asarray(phi)
        )
        if phi_in.ndim != 1 or phi_in.shape[0] == 0:
            raise ValueError(
                f"phi must be a non-empty one-dimensional array of position weights; "
                f"got shape {phi_in.shape}."
            )
        if phi_in.dtype == object or phi_in.dtype.kind in "iub":
            if not all(
                isinstance(v, numbers.Rational) and not isinstance(v, bool)
                for v in phi_in.tolist()
            ):
                raise ValueError("phi must contain numbers.")
            self._phi_exact = to_exact(phi_in)
        elif phi_in.dtype.kind == "f":
            self._phi_exact = None
        else:
            raise ValueError(f"phi must contain numbers; got dtype {phi_in.dtype}.")
        phi_float = np.asarray([float(v) for v in phi_in.tolist()], dtype=np.float64)
        if not np.all(np.isfinite(phi_float)):
            raise ValueError("phi contains NaN or infinity.")
        exact_or_float = self._phi_exact if self._phi_exact is not None else phi_float
        if not exact_or_float[0] > 0:
            raise ValueError(f"phi(1) must be positive; got {phi_float[0]!r}.")
        if np.any(exact_or_float < 0):
            raise ValueError("phi must be non-negative.")
        if np.any(exact_or_float[1:] > exact_or_float[:-1]):
            raise ValueError(
                "phi must be non-increasing (phi(k) >= phi(k + 1)): a higher rank "
                "cannot weigh less."
            )
        if not callable(utility):
            raise ValueError("utility must be a callable y -> utility vector.")
        if offset is not None and not callable(offset):
            raise ValueError("offset must be None or a callable y -> number.")
        phi_float.flags.writeable = False
        self.phi = phi_float
        self.n_items = phi_float.shape[0]
        self.utility_function = utility
        self.offset_function = offset

    def __repr__(self):
        return f"PositionalMetric(n_items={self.n_items})"

    # -- evaluation ---------------------------------------------------------

    def utility(self, y):
        """Utility vector ``u(y)`` of the items.

        Parameters
        ----------
        y : array-like of shape (n_items,)
            Relevance labels.

        Returns
        -------
        u : ndarray of shape (n_items,)
            Float64, or exact fractions (object array) for exact labels.

        Examples
        --------
        >>> from treerank.metrics import PositionalMetric
        >>> PositionalMetric.recall_at_k(4, 2).utility([1, 0, 1, 0])
        array([0.5, 0. , 0.5, 0. ])
        """
        u = np.asarray(self.utility_function(y))
        if u.shape != (self.n_items,):
            raise ValueError(
                f"utility(y) must return {self.n_items} values; got shape {u.shape}."
            )
        if u.dtype != object:
            u = u.astype(np.float64)
            if not np.all(np.isfinite(u)):
                raise ValueError("utility(y) returned NaN or infinity.")
        return u

    def offset(self, y):
        """Ranking-independent part ``offset(y)`` of the value.

        Examples
        --------
        >>> from treerank.metrics import PositionalMetric
        >>> PositionalMetric.spearman(3).offset([1, 2, 3])
        Fraction(-3, 2)
        """
        if self.offset_function is None:
            return Fraction(0)
        return _result(self.offset_function(y))

    def _phi_for(self, u):
        if u.dtype == object and self._phi_exact is not None:
            return self._phi_exact
        return self.phi

    def value(self, y, ranking):
        """Value of a ranking for the labels ``y``.

        Parameters
        ----------
        y : array-like of shape (n_items,)
            Relevance labels.
        ranking : array-like of shape (n_items,)
            Item indices in rank order, best first.

        Returns
        -------
        value : float or Fraction
            Exact when the labels and ``phi`` are exact.

        Examples
        --------
        >>> from fractions import Fraction
        >>> from treerank.metrics import PositionalMetric
        >>> PositionalMetric.auc(4).value([Fraction(1), 0, 1, 0], [0, 1, 2, 3])
        Fraction(3, 4)
        """
        ranking = _check_ranking(ranking, self.n_items)
        u = self.utility(y)
        phi = self._phi_for(u)
        with np.errstate(over="ignore", invalid="ignore"):  # checked by _result
            return _result(self.offset(y) + np.sum(phi * u[ranking]))

    def value_from_scores(self, y, scores, ties="average"):
        """Value of the ranking by decreasing scores.

        Parameters
        ----------
        y : array-like of shape (n_items,)
            Relevance labels.
        scores : array-like of shape (n_items,)
            Scores, higher ranked first.
        ties : {"average", "pessimistic", "optimistic", "stable"}, default="average"
            Tie policy: ``"average"`` is the exact expectation over uniformly
            random tie-breaking (every tied item gets the mean weight of the
            block's positions); ``"pessimistic"`` / ``"optimistic"`` order
            tied items by increasing / decreasing utility; ``"stable"`` by index.

        Returns
        -------
        value : float or Fraction

        Examples
        --------
        >>> from treerank.metrics import PositionalMetric
        >>> p2 = PositionalMetric.precision_at_k(3, 2)
        >>> p2.value_from_scores([1, 0, 0], [0.5, 0.5, 0.5])
        0.333...
        >>> p2.value_from_scores([1, 0, 0], [0.5, 0.5, 0.5], ties="pessimistic")
        0.0
        """
        u = self.utility(y)
        scores = check_scores(scores, self.n_items, input_name="scores")
        groups = group_qid(np.zeros(self.n_items, dtype=np.intp))
        goodness = np.asarray([float(v) for v in u.tolist()])
        ranked = rank_lists(groups, scores, ties=ties, goodness=goodness)
        phi_bar = tie_averaged(self._phi_for(u), ranked)
        with np.errstate(over="ignore", invalid="ignore"):  # checked by _result
            return _result(self.offset(y) + np.sum(u[ranked.order] * phi_bar))

    # -- distributions ------------------------------------------------------

    def expected_utility(self, distribution):
        """Expected utility ``U = sum_y p(y) u(y)`` of every item.

        Parameters
        ----------
        distribution : list of (array-like of shape (n_items,), float) pairs
            Relevance vectors and their probabilities (summing to 1). Use
            :class:`fractions.Fraction` for exact results.

        Returns
        -------
        U : ndarray of shape (n_items,)

        Examples
        --------
        >>> from fractions import Fraction
        >>> from treerank.metrics import PositionalMetric
        >>> dist = [([Fraction(1), 0], Fraction(1, 3)),
        ...         ([Fraction(1), 1], Fraction(2, 3))]
        >>> PositionalMetric.precision_at_k(2, 1).expected_utility(dist)
        array([Fraction(1, 1), Fraction(2, 3)], dtype=object)
        """
        pairs = _check_relevance_distribution(distribution, self.n_items)
        total = None
        for y, p in pairs:
            term = self.utility(y) * p
            total = term if total is None else total + term
        if total.dtype != object:
            total = total.astype(np.float64)
        return total

    def expected_value(self, distribution, ranking):
        """Expected value ``sum_y p(y) r(y, ranking)`` of a ranking.

        Parameters
        ----------
        distribution : list of (array-like of shape (n_items,), float) pairs
            Relevance vectors and their probabilities.
        ranking : array-like of shape (n_items,)
            Item indices in rank order, best first.

        Returns
        -------
        value : float or Fraction

        Examples
        --------
        >>> from fractions import Fraction
        >>> from treerank.metrics import PositionalMetric
        >>> dist = [([Fraction(1), 0], Fraction(1, 3)),
        ...         ([Fraction(0), 1], Fraction(2, 3))]
        >>> PositionalMetric.precision_at_k(2, 1).expected_value(dist, [1, 0])
        Fraction(2, 3)
        """
        pairs = _check_relevance_distribution(distribution, self.n_items)
        ranking = _check_ranking(ranking, self.n_items)
        return _result(sum((self.value(y, ranking) * p for y, p in pairs), Fraction(0)))

    def bayes_optimal_rankings(self, distribution, *, atol=0.0):
        """All rankings maximizing the expected value under ``distribution``.

        A ranking is optimal iff, whenever ``phi`` strictly decreases between
        two ranks, the item at the better rank has an expected utility at
        least as large. The set is therefore "sort by expected utility", with
        every order of items of equal expected utility, and any order inside a
        run of equal weights ``phi`` (e.g. inside the top k of precision@k).

        Parameters
        ----------
        distribution : list of (array-like of shape (n_items,), float) pairs
            Relevance vectors and their probabilities.
        atol : float, default=0.0
            Expected utilities closer than ``atol`` (after sorting) are treated
            as tied. Use exact fractions rather than a tolerance when possible.

        Returns
        -------
        rankings : list of tuple of int
            Every optimal ranking (item indices, best first), sorted.

        Raises
        ------
        ValueError
            If there are more than one million optimal rankings.

        Examples
        --------
        >>> from fractions import Fraction
        >>> from treerank.metrics import PositionalMetric
        >>> dist = [([Fraction(1), 0, 1], Fraction(1, 2)),
        ...         ([Fraction(0), 1, 1], Fraction(1, 2))]
        >>> PositionalMetric.dcg(3).bayes_optimal_rankings(dist)
        [(2, 0, 1), (2, 1, 0)]
        """
        if isinstance(atol, bool) or not isinstance(atol, numbers.Real) or atol < 0:
            raise ValueError(f"atol must be a non-negative number; got {atol!r}.")
        expected = self.expected_utility(distribution).tolist()
        order, classes = _tie_classes(expected, atol)
        phi = self._phi_exact if self._phi_exact is not None else self.phi
        phi = phi.tolist()
        # plateaus: maximal runs of equal phi; each must receive exactly the
        # utility classes of the sorted order at its ranks
        plateaus = []
        start = 0
        for k in range(1, self.n_items + 1):
            if k == self.n_items or phi[k] != phi[start]:
                plateaus.append((start, k))
                start = k
        sorted_classes = [classes[i] for i in order]
        members = {}
        for item, cls in enumerate(classes):
            members.setdefault(cls, []).append(item)
        needs = []
        count = 1
        for lo, hi in plateaus:
            need = {}
            for cls in sorted_classes[lo:hi]:
                need[cls] = need.get(cls, 0) + 1
            needs.append(need)
            count *= math.factorial(hi - lo)
        for cls, items in members.items():
            ways = math.factorial(len(items))
            for need in needs:
                ways //= math.factorial(need.get(cls, 0))
            count *= ways
        if count > _MAX_RANKINGS:
            raise ValueError(
                f"There are {count} optimal rankings (more than {_MAX_RANKINGS}); "
                "bayes_optimal_rankings lists them all and is meant for small lists."
            )
        results = []

        def fill(index, remaining, prefix):
            if index == len(plateaus):
                results.append(tuple(prefix))
                return
            choices = []
            for cls, n_needed in sorted(needs[index].items()):
                choices.append(list(itertools.combinations(remaining[cls], n_needed)))
            for picked in itertools.product(*choices):
                chosen = [item for group in picked for item in group]
                rest = dict(remaining)
                for (cls, _), group in zip(sorted(needs[index].items()), picked):
                    rest[cls] = [i for i in remaining[cls] if i not in group]
                for perm in itertools.permutations(chosen):
                    fill(index + 1, rest, [*prefix, *perm])

        fill(0, members, [])
        return sorted(results)

    # -- regret-bound constant ---------------------------------------------

    def weight_gap_norm(self, p=2):
        """The constant ``C_phi(p)`` of the regret bounds: a norm of weight gaps.

        ``C_phi(p) = (sum_{i=1..floor(n/2)} (phi(i) - phi(n - i + 1))**p)**(1/p)``
        (Calauzenes et al. 2013, eq. 10): the p-norm of the gaps between the
        weights of symmetric positions; ``p = inf`` gives the largest gap.

        Parameters
        ----------
        p : float, default=2
            Exponent, ``p >= 1``.

        Returns
        -------
        c : float
            0 for a single-item list.

        Examples
        --------
        >>> from treerank.metrics import PositionalMetric
        >>> round(PositionalMetric.dcg(3).weight_gap_norm(2), 6)
        0.5
        """
        return weight_gap_norm(self.phi, p)

    # -- factories ----------------------------------------------------------

    @classmethod
    def dcg(cls, n_items, k=None, gain="exp2"):
        """DCG@k: ``u = gain(y)``, ``phi(j) = 1{j <= k} / log2(1 + j)``.

        Parameters
        ----------
        n_items : int
            Number of items of a list.
        k : int, default=None
            Cut-off (``None``: the whole list; ``k > n_items`` is the same).
        gain : {"exp2", "linear"}, default="exp2"
            ``2**y - 1`` or ``y``.

        Returns
        -------
        metric : PositionalMetric

        Examples
        --------
        >>> from treerank.metrics import PositionalMetric
        >>> PositionalMetric.dcg(3, gain="linear").value([3, 2, 0], [1, 0, 2])
        3.89...
        """
        n_items, gain, phi = _dcg_weights(n_items, k, gain)

        def utility(y):
            y = check_list_inputs(y, metric="dcg", n_items=n_items).y
            with np.errstate(over="ignore"):
                u = gain_values(y, gain)
            check_finite_value(u, "The DCG gain", _DCG_ADVICE)
            return u

        return cls(phi, utility)

    @classmethod
    def ndcg(cls, n_items, k=None, gain="exp2"):
        """NDCG@k: DCG@k with ``u = gain(y) / N_k(y)`` (``N_k`` the ideal DCG@k).

        A list without any relevant item gets ``u = 0`` (value 0, as
        ``ndcg_score``'s default ``empty=0.0``).

        Parameters
        ----------
        n_items : int
            Number of items of a list.
        k : int, default=None
            Cut-off.
        gain : {"exp2", "linear"}, default="exp2"
            ``2**y - 1`` or ``y``.

        Returns
        -------
        metric : PositionalMetric

        Examples
        --------
        >>> from treerank.metrics import PositionalMetric
        >>> PositionalMetric.ndcg(3).value([2, 0, 1], [0, 2, 1])
        1.0
        """
        n_items, gain, phi = _dcg_weights(n_items, k, gain)

        def utility(y):
            y = check_list_inputs(y, metric="ndcg", n_items=n_items).y
            y = np.asarray(y, dtype=np.float64)
            top = np.max(y if gain == "exp2" else np.abs(y))
            # the ratio does not depend on a common scale of the gains
            g = gain_values(y, gain, gain_shift(top, gain))
            ideal = float(np.sum(phi * np.sort(g)[::-1]))
            if ideal == 0:
                return np.zeros(n_items)
            return g / ideal

        return cls(phi, utility)

    @classmethod
    def precision_at_k(cls, n_items, k):
        """Precision@k: ``u = y`` (binary), ``phi(j) = 1{j <= k} / k``.

        Parameters
        ----------
        n_items : int
            Number of items of a list.
        k : int
            Cut-off; the denominator is ``k`` even when ``k > n_items``.

        Returns
        -------
        metric : PositionalMetric

        Examples
        --------
        >>> from treerank.metrics import PositionalMetric
        >>> PositionalMetric.precision_at_k(4, 2).value([0, 1, 1, 0], [1, 0, 2, 3])
        0.5
        """
        n_items, k = _check_size_and_k(n_items, k, allow_none=False)
        phi = precision_weight(np.arange(1, n_items + 1), k, exact=True)

        def utility(y):
            return _binary_labels(y, "precision_at_k", n_items)

        return cls(phi, utility)

    @classmethod
    def recall_at_k(cls, n_items, k):
        """Recall@k: ``u = y / sum(y)`` (binary), ``phi(j) = 1{j <= k}``.

        A list without relevant item gets ``u = 0`` (value 0).

        Parameters
        ----------
        n_items : int
            Number of items of a list.
        k : int
            Cut-off.

        Returns
        -------
        metric : PositionalMetric

        Examples
        --------
        >>> from treerank.metrics import PositionalMetric
        >>> PositionalMetric.recall_at_k(4, 2).value([0, 1, 1, 0], [1, 0, 2, 3])
        0.5
        """
        n_items, k = _check_size_and_k(n_items, k, allow_none=False)
        phi = recall_weight(np.arange(1, n_items + 1), k, exact=True)

        def utility(y):
            y = _binary_labels(y, "recall_at_k", n_items)
            return _normalized(y, np.sum(y))

        return cls(phi, utility)

    @classmethod
    def auc(cls, n_items):
        """Per-list AUC: ``u = y/(P N)``, ``phi(j) = n - j``, ``offset = -(P-1)/(2N)``.

        A list with ``P = 0`` or ``N = 0`` gets ``u = 0`` and offset 0.

        Parameters
        ----------
        n_items : int
            Number of items of a list (at least 2).

        Returns
        -------
        metric : PositionalMetric

        Examples
        --------
        >>> from treerank.metrics import PositionalMetric
        >>> PositionalMetric.auc(3).offset([1, 1, 0])
        -0.5
        >>> from fractions import Fraction
        >>> PositionalMetric.auc(3).value([Fraction(1), 1, 0], [0, 2, 1])
        Fraction(1, 2)
        """
        n_items, phi = _pairwise_weights(n_items)

        def counts(y):
            y = _binary_labels(y, "list_auc", n_items)
            positives = np.sum(y)
            return y, positives, n_items - positives

        def utility(y):
            y, positives, negatives = counts(y)
            return _normalized(y, positives * negatives)  # 0 without a pair

        def offset(y):
            _, positives, negatives = counts(y)
            if positives == 0 or negatives == 0:
                return 0
            return -(positives - 1) / (2 * negatives)

        return cls(phi, utility, offset)

    @classmethod
    def spearman(cls, n_items):
        """Spearman's rho: ``u = 12 (n - y) / (n (n² - 1))``, ``phi(j) = n - j``.

        The labels ``y`` are the true ranks (1 = best); the offset is
        ``-3 (n - 1) / (n + 1)``.

        Parameters
        ----------
        n_items : int
            Number of items of a list (at least 2).

        Returns
        -------
        metric : PositionalMetric

        Examples
        --------
        >>> from treerank.metrics import PositionalMetric
        >>> PositionalMetric.spearman(3).value([1, 2, 3], [0, 1, 2])
        1.0
        """
        n_items, phi = _pairwise_weights(n_items)
        scale = Fraction(12, n_items * (n_items**2 - 1))
        shift = Fraction(-3 * (n_items - 1), n_items + 1)

        def utility(y):
            inputs = check_list_inputs(
                y, metric="spearman_rho", target="ranks", n_items=n_items
            )
            if inputs.exact:
                return (n_items - inputs.y) * scale
            return (n_items - inputs.y) * float(scale)

        def offset(y):
            return shift

        return cls(phi, utility, offset)


def _dcg_weights(n_items, k, gain):
    """Checked ``n_items`` and ``gain``, and the DCG@k weights of the ranks."""
    n_items, k = _check_size_and_k(n_items, k, allow_none=True)
    return n_items, _check_gain(gain), dcg_discount(np.arange(1, n_items + 1), k)


def _pairwise_weights(n_items):
    """Checked ``n_items`` (at least 2) and the exact weights ``n - j`` of AUC
    and Spearman's rho."""
    n_items, _ = _check_size_and_k(n_items, None, allow_none=True, minimum=2)
    return n_items, auc_weight(np.arange(1, n_items + 1), n_items, exact=True)


def _binary_labels(y, metric, n_items):
    """The 0/1 labels of one list of ``n_items`` items."""
    return check_list_inputs(y, metric=metric, target="binary", n_items=n_items).y


def _normalized(y, total):
    """``y / total``, or zeros (of ``y``'s type) when ``total`` is 0."""
    if total == 0:
        return y * 0
    return y / total


def _has_fraction(values):
    try:
        flat = np.asarray(values, dtype=object).ravel().tolist()
    except ValueError:
        return False
    return any(isinstance(v, Fraction) for v in flat)


def _check_size_and_k(n_items, k, *, allow_none, minimum=1):
    if isinstance(n_items, bool) or not isinstance(n_items, numbers.Integral):
        raise ValueError(f"n_items must be an integer >= {minimum}; got {n_items!r}.")
    if n_items < minimum:
        raise ValueError(
            f"n_items must be an integer >= {minimum}; got {n_items}."
            + (" The measure is undefined for a single item." if minimum == 2 else "")
        )
    if k is None:
        if not allow_none:
            raise ValueError("k is required: give an integer >= 1.")
        return int(n_items), None
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"k must be an integer >= 1; got {k!r}.")
    return int(n_items), int(k)


def _check_gain(gain):
    if not isinstance(gain, str) or gain not in ("exp2", "linear"):
        raise ValueError(
            f"gain must be 'exp2' (2**y - 1) or 'linear' (y); got {gain!r}."
        )
    return gain
