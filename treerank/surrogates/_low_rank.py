"""Low-rank least-squares surrogates for subset-ranking losses (Ramaswamy et al. 2013).

For a ranking loss that factorizes as ``l(y, sigma) = <alpha_y, beta_sigma> + c``
the surrogate ``psi(u, y) = ||u - alpha_y||^2`` with the decoder
``pred(u) = argmin_sigma <u, beta_sigma>`` is calibrated over all label
distributions. The classes below are these decompositions (as
:class:`~treerank.surrogates.RankingDecomposition`; ``target(y)`` is
``alpha_y``, ``output_embedding(sigma)`` is ``beta_sigma``, ``decode`` is
``pred``):

- :class:`PrecisionAtQSurrogate` (``1 - P@q``; WTA is ``q = 1``), decoded by
  sorting (top-q selection);
- :class:`ERUSurrogate` (expected rank utility) and :class:`DCGSurrogate`
  (DCG / NDCG), decoded by sorting;
- :class:`MAPSurrogate` (``1 - AP``, dimension ``m(m+1)/2``), decoded exactly by
  brute force (a quadratic assignment problem) or by sorting the diagonal
  (calibrated on the noise set P_reinforce only);
- :class:`PDSurrogate` (pairwise disagreement with a weighted preference graph,
  dimension ``m(m-1)``), decoded exactly by a brute-force minimum weighted
  feedback arc set or greedily by Algorithm 1 (calibrated on P_DAG only).

The score-based variants regress one number per item and sort:
:class:`MAPScoreSurrogate` (target ``y / |y|``, MAP-calibrated on P_reinforce)
and :class:`PDScoreSurrogate` (target ``f(y)``, PD-calibrated on P_f).

Positions follow the paper's ``sigma(i)`` = 1-based rank of item ``i``; the
rankings passed in and returned are item indices best first.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np
from sklearn.base import BaseEstimator

from treerank.surrogates._affine import RankingDecomposition, check_n_items
from treerank.surrogates._decoders import (
    check_brute_force,
    greedy_feedback_arc_decoder,
    sort_decoder,
)
from treerank.surrogates._utility import gain as _gain
from treerank.surrogates._utility import log2_discount

__all__ = [
    "DCGSurrogate",
    "ERUSurrogate",
    "MAPScoreSurrogate",
    "MAPSurrogate",
    "PDScoreSurrogate",
    "PDSurrogate",
    "PrecisionAtQSurrogate",
]


def _check_binary_labels(Y, name):
    if not np.all((Y == 0) | (Y == 1)):
        raise ValueError(
            f"{name} needs binary relevance labels (0 or 1); binarize graded labels "
            "explicitly, e.g. y > 0."
        )
    return Y


class PrecisionAtQSurrogate(RankingDecomposition):
    """Least-squares surrogate for ``1 - precision@q`` (WTA for ``q = 1``).

    ``alpha_y = y``, ``beta_sigma = -(1/q) 1(sigma(i) <= q)``, ``c = 1``; the
    decoder puts the q largest ``u_i`` on top (a full sort).

    Parameters
    ----------
    n_items : int
        List length ``m``.
    q : int
        Cut-off, ``1 <= q <= n_items``.

    Examples
    --------
    >>> from treerank.surrogates import PrecisionAtQSurrogate
    >>> sur = PrecisionAtQSurrogate(n_items=3, q=2)
    >>> sur.loss([2, 0, 1], [1, 1, 0])
    0.5
    >>> sur.decode([0.2, 0.9, 0.5])
    array([1, 2, 0])
    """

    def __init__(self, n_items, q=1):
        check_n_items(n_items)
        check_n_items(q, "q")
        if q > n_items:
            raise ValueError(f"q must be <= n_items = {n_items}; got {q}.")
        self.n_items = n_items
        self.q = q

    @property
    def dim(self):
        return self.n_items

    def _check_labels(self, Y):
        return _check_binary_labels(Y, "PrecisionAtQSurrogate")

    def _offset(self, one):
        return one

    def _label_embedding(self, Y, one):
        return Y * one

    def _output_embedding(self, Z, one):
        P = self._positions(Z, one)
        return np.where(P <= self.q, -one / self.q, 0 * one)

    @property
    def F_norm(self):
        return 1.0 / math.sqrt(self.q)

    @property
    def U_max(self):
        return 1.0


class ERUSurrogate(RankingDecomposition):
    """Least-squares surrogate for the expected rank utility loss.

    ``l(y, sigma) = z - sum_i max(y_i - v, 0) 2^{(1 - sigma(i)) / (w - 1)}``:
    ``alpha_y = max(y - v, 0)``, ``beta_sigma = -2^{(1 - sigma(i))/(w - 1)}``,
    ``c = z``; decoded by sorting.

    Parameters
    ----------
    n_items : int
    neutral : float, default=0.0
        The neutral grade ``v``.
    half_life : float, default=2.0
        Viewing half-life ``w > 1`` (the weight is 1/2 at position ``w``).
    max_grade : float or None, default=None
        Top grade of the scale; gives ``z`` (the largest utility, which keeps
        the loss >= 0) and ``U_max``. With None, ``z = 0``.

    Examples
    --------
    >>> from treerank.surrogates import ERUSurrogate
    >>> sur = ERUSurrogate(n_items=3, neutral=0, half_life=2, max_grade=2)
    >>> sur.loss([0, 1, 2], [2, 1, 0])
    1.0
    >>> sur.loss([2, 1, 0], [2, 1, 0])
    2.5
    """

    exact_supported = False

    def __init__(self, n_items, neutral=0.0, half_life=2.0, max_grade=None):
        check_n_items(n_items)
        if not (isinstance(half_life, (int, float)) and half_life > 1):
            raise ValueError(
                f"half_life must be a number > 1 (w <= 1 flips or breaks the "
                f"discount); got {half_life!r}."
            )
        if not (isinstance(neutral, (int, float)) and math.isfinite(neutral)):
            raise ValueError(f"neutral must be a finite number; got {neutral!r}.")
        if max_grade is not None and not (
            isinstance(max_grade, (int, float)) and max_grade >= neutral
        ):
            raise ValueError(
                f"max_grade must be >= neutral or None; got {max_grade!r}."
            )
        self.n_items = n_items
        self.neutral = neutral
        self.half_life = half_life
        self.max_grade = max_grade

    @property
    def dim(self):
        return self.n_items

    def _weights(self, P):
        return np.exp2((1.0 - P) / (self.half_life - 1.0))

    def _offset(self, one):
        if self.max_grade is None:
            return 0.0
        top = self._weights(np.arange(1, self.n_items + 1, dtype=np.float64))
        return float((self.max_grade - self.neutral) * top.sum())

    def _label_embedding(self, Y, one):
        return np.maximum(Y - self.neutral, 0.0)

    def _output_embedding(self, Z, one):
        return -self._weights(self._positions(Z, one))

    @property
    def F_norm(self):
        w = self._weights(np.arange(1, self.n_items + 1, dtype=np.float64))
        return float(np.sqrt(np.sum(w**2)))

    @property
    def U_max(self):
        if self.max_grade is None:
            raise ValueError("U_max needs max_grade.")
        return float(self.max_grade - self.neutral)


class DCGSurrogate(RankingDecomposition):
    """Least-squares surrogate for NDCG@k (or DCG@k), decoded by sorting.

    ``alpha_y = G(y) / N_k(y)`` (0 for an all-irrelevant list) or ``G(y)``;
    ``beta_sigma = -D(sigma(i)) 1(sigma(i) <= k)`` with ``D(p) = 1/log2(1 + p)``;
    ``c = 1`` (NDCG: the loss is ``1 - NDCG@k``) or 0 (DCG: the loss is
    ``-DCG@k``; adding the label-dependent ``max DCG`` changes nothing).
    Regress the *normalized* gains, not the raw grades.

    Parameters
    ----------
    n_items : int
    k : int or None, default=None
        Cut-off (None: the whole list).
    gain : {"exp2", "linear"}, default="exp2"
    normalize : bool, default=True
        NDCG (True) or DCG (False).
    max_grade : float or None, default=None
        Top grade (for ``U_max`` of the DCG version).

    Examples
    --------
    >>> from treerank.surrogates import DCGSurrogate
    >>> sur = DCGSurrogate(n_items=3)
    >>> sur.loss([0, 1, 2], [2, 1, 0])
    0.0
    >>> round(sur.loss([2, 1, 0], [2, 1, 0]), 6)
    0.413117
    """

    exact_supported = False

    def __init__(self, n_items, k=None, gain="exp2", normalize=True, max_grade=None):
        check_n_items(n_items)
        if k is not None:
            check_n_items(k, "k")
        if gain not in ("exp2", "linear"):
            raise ValueError(f"gain must be 'exp2' or 'linear'; got {gain!r}.")
        self.n_items = n_items
        self.k = k
        self.gain = gain
        self.normalize = normalize
        self.max_grade = max_grade

    @property
    def dim(self):
        return self.n_items

    def _discount(self, P):
        d = log2_discount(P)
        return d if self.k is None else np.where(P <= self.k, d, 0.0)

    def _check_labels(self, Y):
        if np.any(Y < 0):
            raise ValueError("DCGSurrogate needs relevance labels >= 0.")
        return Y

    def _offset(self, one):
        return 1.0 if self.normalize else 0.0

    def _label_embedding(self, Y, one):
        G = _gain(Y, self.gain)
        if not self.normalize:
            return G
        ideal = np.sort(G, axis=1)[:, ::-1]
        N = ideal @ self._discount(np.arange(1, self.n_items + 1, dtype=np.float64))
        return np.divide(G, N[:, None], out=np.zeros_like(G), where=N[:, None] > 0)

    def _output_embedding(self, Z, one):
        return -self._discount(self._positions(Z, one))

    @property
    def F_norm(self):
        d = self._discount(np.arange(1, self.n_items + 1, dtype=np.float64))
        return float(np.sqrt(np.sum(d**2)))

    @property
    def U_max(self):
        if self.normalize:
            return 1.0
        if self.max_grade is None:
            raise ValueError("U_max of the DCG version needs max_grade.")
        return float(_gain(np.float64(self.max_grade), self.gain))


class MAPSurrogate(RankingDecomposition):
    """Least-squares surrogate for ``1 - AP`` (dimension ``m (m + 1) / 2``).

    ``alpha_y = (y_i y_j / sum y)_{i >= j}`` (0 for an all-irrelevant list),
    ``beta_sigma = -(1 / max(sigma(i), sigma(j)))_{i >= j}``, ``c = 1``: the
    low-rank rewrite ``l = 1 - (1/|y|) sum_{i >= j} y_i y_j / max(sigma(i),
    sigma(j))``. Coordinates follow ``np.tril_indices(n_items)``.

    Parameters
    ----------
    n_items : int
    decoder : {"exact", "diagonal"}, default="exact"
        ``"exact"``: brute-force ``argmax_sigma sum u_ij / max(sigma(i),
        sigma(j))`` (a quadratic assignment problem; n <= 8); ``"diagonal"``:
        sort by ``u_ii`` (O(m log m), calibrated on P_reinforce only).

    Examples
    --------
    >>> from treerank.surrogates import MAPSurrogate
    >>> sur = MAPSurrogate(n_items=3)
    >>> sur.loss([2, 1, 0], [1, 1, 0], exact=True)
    Fraction(5, 12)
    >>> sur.decode(sur.target([0, 1, 1]))
    array([1, 2, 0])
    """

    def __init__(self, n_items, decoder="exact"):
        check_n_items(n_items)
        if decoder not in ("exact", "diagonal"):
            raise ValueError(f"decoder must be 'exact' or 'diagonal'; got {decoder!r}.")
        self.n_items = n_items
        self.decoder = decoder

    @property
    def dim(self):
        return self.n_items * (self.n_items + 1) // 2

    @property
    def pairs(self):
        """Index pairs ``(i, j)``, ``i >= j``, of the coordinates."""
        return np.tril_indices(self.n_items)

    def _check_labels(self, Y):
        return _check_binary_labels(Y, "MAPSurrogate")

    def _offset(self, one):
        return one

    def _label_embedding(self, Y, one):
        i, j = self.pairs
        total = Y.sum(axis=1)[:, None]
        denom = np.where(total == 0, one, total)
        return Y[:, i] * Y[:, j] / denom

    def _output_embedding(self, Z, one):
        i, j = self.pairs
        P = self._positions(Z, one)
        return -one / np.maximum(P[:, i], P[:, j])

    def to_matrix(self, u):
        """Symmetric ``(n_items, n_items)`` matrix of a vector of coordinates."""
        u = np.asarray(u)
        i, j = self.pairs
        M = np.zeros((self.n_items, self.n_items), dtype=u.dtype)
        M[i, j] = u
        M[j, i] = u
        return M

    def _decode(self, T):
        if self.decoder == "diagonal":
            i, j = self.pairs
            return sort_decoder(T[:, i == j])
        check_brute_force(self.n_items, "the exact MAP decoder")
        return self._decode_brute_force(T)

    @property
    def F_norm(self):
        # pairs with max position p: p of them (including the diagonal)
        return math.sqrt(sum(1.0 / p for p in range(1, self.n_items + 1)))

    @property
    def U_max(self):
        return 1.0


class PDSurrogate(RankingDecomposition):
    """Least-squares surrogate for pairwise disagreement on a preference graph.

    The label is a non-negative matrix ``y`` (``y[i, j] > 0``: ``i`` preferred to
    ``j``; zero diagonal; at most one of ``y[i, j]``, ``y[j, i]`` non-zero) and
    ``l(y, sigma) = sum_{i != j} y_ij 1(sigma(i) > sigma(j))``:
    ``alpha_y = (y_ij)_{i != j}`` (row-major), ``beta_sigma = (1(sigma(i) >
    sigma(j)))_{i != j}``, ``c = 0``.

    Parameters
    ----------
    n_items : int
    decoder : {"exact", "greedy"}, default="exact"
        ``"exact"``: brute-force minimum weighted feedback arc set (n <= 8);
        ``"greedy"``: Algorithm 1 (delete the lightest edges of the net
        preference graph until it is acyclic; calibrated on P_DAG only).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.surrogates import PDSurrogate
    >>> y = np.array([[0, 1, 0], [0, 0, 2], [0, 0, 0]])
    >>> sur = PDSurrogate(n_items=3)
    >>> sur.loss([2, 1, 0], y)
    3.0
    >>> sur.decode(sur.target(y))
    array([0, 1, 2])
    """

    label_ndim = 2

    def __init__(self, n_items, decoder="exact"):
        check_n_items(n_items)
        if decoder not in ("exact", "greedy"):
            raise ValueError(f"decoder must be 'exact' or 'greedy'; got {decoder!r}.")
        self.n_items = n_items
        self.decoder = decoder

    @property
    def dim(self):
        return self.n_items * (self.n_items - 1)

    @property
    def pairs(self):
        """Ordered pairs ``(i, j)``, ``i != j``, row-major."""
        return np.nonzero(~np.eye(self.n_items, dtype=bool))

    def _check_labels(self, Y):
        if np.any(Y < 0):
            raise ValueError("preference weights must be >= 0.")
        if np.any(np.diagonal(Y, axis1=1, axis2=2) != 0):
            raise ValueError("preference matrices must have a zero diagonal.")
        if np.any((Y > 0) & (np.swapaxes(Y, 1, 2) > 0)):
            raise ValueError(
                "a preference matrix must have y[i, j] = 0 or y[j, i] = 0 for every "
                "pair (a DAG of preferences, not a two-way preference)."
            )
        return Y

    def _offset(self, one):
        return 0 * one

    def _label_embedding(self, Y, one):
        i, j = self.pairs
        return Y[:, i, j] * one

    def _output_embedding(self, Z, one):
        i, j = self.pairs
        P = self._positions(Z, one)
        return np.where(P[:, i] > P[:, j], one, 0 * one)

    def to_matrix(self, u):
        """``(n_items, n_items)`` matrix of a vector of coordinates."""
        u = np.asarray(u)
        i, j = self.pairs
        M = np.zeros((self.n_items, self.n_items), dtype=u.dtype)
        M[i, j] = u
        return M

    def _decode(self, T):
        if self.decoder == "greedy":
            return np.array([greedy_feedback_arc_decoder(self.to_matrix(t)) for t in T])
        check_brute_force(self.n_items, "the exact feedback-arc-set decoder")
        return self._decode_brute_force(T)

    @property
    def F_norm(self):
        return math.sqrt(self.n_items * (self.n_items - 1) / 2.0)

    @property
    def U_max(self):
        raise ValueError("the preference weights of PDSurrogate are not bounded.")


class _ScoreSurrogate(BaseEstimator):
    """Score-based surrogate ``sum_i (u_i - f_i(y))^2`` decoded by sorting."""

    def _target(self, Y):  # pragma: no cover - abstract
        raise NotImplementedError

    def target(self, y):
        """Per-item regression target ``f(y)`` (one label or a batch)."""
        Y, single = self._decomposition._batch_labels(y)
        T = self._target(Y)
        return T[0] if single else T

    def value(self, u, y):
        """Surrogate ``||u - f(y)||^2`` (summed over a batch)."""
        T = np.atleast_2d(self.target(y))
        u = np.asarray(u, dtype=np.float64).reshape(T.shape)
        return float(np.sum((u - T) ** 2))

    def grad(self, u, y):
        """Gradient ``2 (u - f(y))``."""
        T = self.target(y)
        u = np.asarray(u, dtype=np.float64)
        if u.shape != T.shape:
            raise ValueError(f"u has shape {u.shape}; expected {T.shape}.")
        return 2.0 * (u - T)

    def decode(self, u):
        """Sort the items by decreasing ``u`` (ties by index)."""
        u = np.asarray(u, dtype=np.float64)
        if u.shape[-1] != self.n_items:
            raise ValueError(f"u must have {self.n_items} entries per row.")
        return sort_decoder(u)

    def loss(self, z, y, *, exact=False):
        """Target loss of a ranking (see the class)."""
        return self._decomposition.loss(z, y, exact=exact)


class MAPScoreSurrogate(_ScoreSurrogate):
    """Score-based MAP surrogate ``sum_i (u_i - y_i / |y|)^2``, decoded by sorting.

    Calibrated for ``1 - AP`` on the noise set P_reinforce (Ramaswamy et al.,
    Corollary 5; ``y = 0`` has target 0). Any order-preserving loss fed the
    recall utility ``y / |y|`` has the same property.

    Parameters
    ----------
    n_items : int

    Examples
    --------
    >>> from treerank.surrogates import MAPScoreSurrogate
    >>> MAPScoreSurrogate(n_items=3).target([1, 0, 1])
    array([0.5, 0. , 0.5])
    """

    def __init__(self, n_items):
        check_n_items(n_items)
        self.n_items = n_items

    @property
    def _decomposition(self):
        return MAPSurrogate(self.n_items)

    def _target(self, Y):
        total = Y.sum(axis=1, keepdims=True)
        return np.divide(Y, total, out=np.zeros_like(Y), where=total > 0)


class PDScoreSurrogate(_ScoreSurrogate):
    """Score-based PD surrogate ``sum_i (u_i - f_i(y))^2``, decoded by sorting.

    Calibrated for pairwise disagreement on
    ``P_f = {p : E[y_ij] > E[y_ji] => E[f_i(y)] > E[f_j(y)]}`` (Ramaswamy et al.,
    Theorem 6). The default ``f`` is the net out-weight
    ``f_i(y) = sum_j (y_ij - y_ji)``, for which the surrogate equals the
    Duchi-Mackey-Jordan surrogate with ``lambda(z) = z^2`` and ``nu = 1/2`` up to
    a factor 2 and a label-dependent constant.

    Parameters
    ----------
    n_items : int
    f : callable or None, default=None
        ``f(y_matrix) -> (n_items,)`` applied to one preference matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.surrogates import PDScoreSurrogate
    >>> y = np.array([[0, 1, 0], [0, 0, 2], [0, 0, 0]])
    >>> PDScoreSurrogate(n_items=3).target(y)
    array([ 1.,  1., -2.])
    """

    def __init__(self, n_items, f=None):
        check_n_items(n_items)
        if f is not None and not callable(f):
            raise ValueError(f"f must be callable or None; got {f!r}.")
        self.n_items = n_items
        self.f = f

    @property
    def _decomposition(self):
        return PDSurrogate(self.n_items)

    def _target(self, Y):
        if self.f is None:
            return Y.sum(axis=2) - Y.sum(axis=1)
        return np.array([np.asarray(self.f(y), dtype=np.float64) for y in Y])
