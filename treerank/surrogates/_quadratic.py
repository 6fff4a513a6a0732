"""Quadratic surrogates for discrete losses (Nowak-Vila, Bach & Rudi 2018).

Affine decompositions ``L(z, y) = <F_z, U_y> + c`` of multilabel and ranking
losses, and :class:`QuadraticSurrogateEstimator`, which regresses ``U_y`` on
the features (kernel ridge regression by default; any scikit-learn regressor
with multi-output ``fit`` / ``predict``) and decodes ``argmin_z <F_z, g(x)>``.

The decompositions, with the corrections of the reference notes to the paper
as printed:

- :class:`ZeroOneDecomposition` (``r = 2^m``), :class:`BlockZeroOneDecomposition`
  (``r`` = number of blocks), :class:`HammingDecomposition` (``r = m``,
  **c = 1/2**, printed ``1/(2m)``), :class:`PrecisionAtKDecomposition` (``r = m``,
  outputs = sets of size k), :class:`FScoreDecomposition` (both decompositions,
  ``r = m^2 + 1``, with the **factor 2** and the **minus sign** of the last
  coordinate that the paper drops), :class:`PairwiseDisagreementDecomposition`
  (binary labels, ``r = m(m-1)/2``, the disagreement direction corrected and
  **c = 1/2**);
- NDCG and MAP: :class:`~treerank.surrogates.DCGSurrogate` and
  :class:`~treerank.surrogates.MAPSurrogate` (the same decompositions as
  Ramaswamy et al.'s, with the sign of the MAP coordinates on the other side).

Constants are exact: ``F_norm = sup_z ||F_z||_2`` and ``U_max = max |U_y|`` in
closed form (MAP: ``F_norm^2 = H_m``, the harmonic number, not the printed
``log(m + 1)``; ``U_max = 1``).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import itertools
import math
from fractions import Fraction

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.kernel_ridge import KernelRidge
from sklearn.utils.validation import check_is_fitted

from treerank.metrics._list_common import to_exact
from treerank.surrogates._affine import (
    AffineDecomposition,
    RankingDecomposition,
    check_n_items,
)
from treerank.surrogates._decoders import check_brute_force
from treerank.utils._sklearn_compat import validate_data

__all__ = [
    "BlockZeroOneDecomposition",
    "FScoreDecomposition",
    "HammingDecomposition",
    "PairwiseDisagreementDecomposition",
    "PrecisionAtKDecomposition",
    "QuadraticSurrogateEstimator",
    "ZeroOneDecomposition",
]

MAX_LABEL_SET_ITEMS = 16


def _zeros(shape, one):
    if isinstance(one, Fraction):
        return np.full(shape, Fraction(0), dtype=object)
    return np.zeros(shape)


def _binary(Y, name):
    if not np.all((Y == 0) | (Y == 1)):
        raise ValueError(f"{name} must be binary (0 or 1 entries).")
    return Y


def _codes(Z):
    """Integer code ``sum_j z_j 2^j`` of binary vectors (one per row)."""
    Z = np.asarray(Z, dtype=np.float64)
    return (Z @ (2 ** np.arange(Z.shape[1]))).astype(np.intp)


def _from_codes(codes, m):
    return ((np.asarray(codes)[:, None] >> np.arange(m)) & 1).astype(np.intp)


class _MultilabelDecomposition(AffineDecomposition):
    """Outputs and labels are binary vectors of length ``n_items``."""

    def outputs(self):
        """All ``2^m`` binary vectors, ordered by their code ``sum_j z_j 2^j``."""
        if self.n_items > MAX_LABEL_SET_ITEMS:
            raise ValueError(
                f"enumerating the 2^{self.n_items} label sets is limited to "
                f"n_items <= {MAX_LABEL_SET_ITEMS}."
            )
        return _from_codes(np.arange(2**self.n_items), self.n_items)

    def _check_labels(self, Y):
        return _binary(Y, "labels")

    def _check_outputs(self, Z):
        return _binary(np.asarray(Z), "outputs")


class ZeroOneDecomposition(_MultilabelDecomposition):
    """Subset 0-1 loss ``1(z != y)``: ``F_z = -e_z``, ``U_y = e_y``, ``c = 1``.

    Dimension ``2^m`` (coordinates indexed by the code ``sum_j y_j 2^j``);
    decoded by the arg-max coordinate.

    Parameters
    ----------
    n_items : int
        Number of labels ``m`` (at most 16).

    Examples
    --------
    >>> from treerank.surrogates import ZeroOneDecomposition
    >>> dec = ZeroOneDecomposition(n_items=2)
    >>> dec.label_embedding([1, 0])
    array([0., 1., 0., 0.])
    >>> dec.decode([0.1, 0.2, 0.6, 0.1])
    array([0, 1])
    """

    def __init__(self, n_items):
        check_n_items(n_items)
        if n_items > MAX_LABEL_SET_ITEMS:
            raise ValueError(
                f"n_items must be <= {MAX_LABEL_SET_ITEMS}; got {n_items}."
            )
        self.n_items = n_items

    @property
    def dim(self):
        return 2**self.n_items

    def _offset(self, one):
        return one

    def _indicator(self, Z, one):
        out = _zeros((Z.shape[0], self.dim), one)
        out[np.arange(Z.shape[0]), _codes(np.asarray(Z, dtype=np.float64))] = one
        return out

    def _label_embedding(self, Y, one):
        return self._indicator(Y, one)

    def _output_embedding(self, Z, one):
        return -self._indicator(Z, one)

    def _decode(self, T):
        return _from_codes(np.argmax(T, axis=1), self.n_items)

    F_norm = 1.0
    U_max = 1.0


class BlockZeroOneDecomposition(_MultilabelDecomposition):
    """Block 0-1 loss: 0 iff ``z`` and ``y`` lie in the same block of a partition.

    ``F_z = -(1(z in B_j))_j``, ``U_y = (1(y in B_j))_j``, ``c = 1``; decoded by
    the arg-max block (its first member is returned).

    Parameters
    ----------
    blocks : array-like of shape (2^m,)
        Block number (0 .. b - 1, every block non-empty) of each label set,
        indexed by its code ``sum_j y_j 2^j``.

    Examples
    --------
    >>> from treerank.surrogates import BlockZeroOneDecomposition
    >>> dec = BlockZeroOneDecomposition(blocks=[0, 1, 1, 0])
    >>> dec.loss([1, 0], [0, 1])
    0.0
    >>> dec.loss([1, 1], [0, 1])
    1.0
    """

    def __init__(self, blocks):
        arr = np.asarray(blocks)
        size = arr.shape[0] if arr.ndim == 1 else 0
        if (
            arr.ndim != 1
            or size < 2
            or size & (size - 1)
            or arr.dtype.kind not in "iu"
            or arr.min() != 0
            or np.unique(arr).shape[0] != arr.max() + 1
        ):
            raise ValueError(
                "blocks must be a one-dimensional integer array of length 2^m giving "
                "each label set's block number, 0 .. b-1, with no empty block."
            )
        self.blocks = blocks

    @property
    def n_items(self):
        return int(np.asarray(self.blocks).shape[0]).bit_length() - 1

    @property
    def dim(self):
        return int(np.max(self.blocks)) + 1

    def _offset(self, one):
        return one

    def _indicator(self, Z, one):
        block = np.asarray(self.blocks)[_codes(np.asarray(Z, dtype=np.float64))]
        out = _zeros((Z.shape[0], self.dim), one)
        out[np.arange(Z.shape[0]), block] = one
        return out

    def _label_embedding(self, Y, one):
        return self._indicator(Y, one)

    def _output_embedding(self, Z, one):
        return -self._indicator(Z, one)

    def _decode(self, T):
        best = np.argmax(T, axis=1)
        first = np.array(
            [np.flatnonzero(np.asarray(self.blocks) == b)[0] for b in best]
        )
        return _from_codes(first, self.n_items)

    F_norm = 1.0
    U_max = 1.0


class HammingDecomposition(_MultilabelDecomposition):
    """Hamming loss ``(1/m) sum_j 1(z_j != y_j)``.

    ``F_z = -(2 z - 1) / (2m)``, ``U_y = 2 y - 1``, ``c = 1/2`` (the paper prints
    ``1/(2m)``, which is wrong); decoded coordinatewise, ``z_j = 1(theta_j > 0)``.

    Parameters
    ----------
    n_items : int

    Examples
    --------
    >>> from treerank.surrogates import HammingDecomposition
    >>> dec = HammingDecomposition(n_items=4)
    >>> dec.loss([1, 0, 0, 1], [1, 1, 0, 0], exact=True)
    Fraction(1, 2)
    >>> dec.decode([0.3, -0.2, 0.0, 1.0])
    array([1, 0, 0, 1])
    """

    def __init__(self, n_items):
        check_n_items(n_items)
        self.n_items = n_items

    @property
    def dim(self):
        return self.n_items

    def _offset(self, one):
        return one / 2

    def _label_embedding(self, Y, one):
        return 2 * Y * one - one

    def _output_embedding(self, Z, one):
        return -(2 * Z * one - one) / (2 * self.n_items)

    def _decode(self, T):
        return (T > 0).astype(np.intp)

    @property
    def F_norm(self):
        return 1.0 / (2.0 * math.sqrt(self.n_items))

    U_max = 1.0


class PrecisionAtKDecomposition(_MultilabelDecomposition):
    """``1 - |z ∩ y| / k`` over the sets ``z`` of exactly k labels.

    ``F_z = -z / k``, ``U_y = y``, ``c = 1``; decoded by the top-k coordinates
    (ties by index).

    Parameters
    ----------
    n_items : int
    k : int
        ``1 <= k <= n_items``.

    Examples
    --------
    >>> from treerank.surrogates import PrecisionAtKDecomposition
    >>> dec = PrecisionAtKDecomposition(n_items=4, k=2)
    >>> dec.decode([0.1, 0.7, 0.2, 0.7])
    array([0, 1, 0, 1])
    """

    def __init__(self, n_items, k=1):
        check_n_items(n_items)
        check_n_items(k, "k")
        if k > n_items:
            raise ValueError(f"k must be <= n_items = {n_items}; got {k}.")
        self.n_items = n_items
        self.k = k

    @property
    def dim(self):
        return self.n_items

    def outputs(self):
        """All subsets of exactly k labels, as binary vectors."""
        if self.n_items > MAX_LABEL_SET_ITEMS:
            raise ValueError(
                f"enumeration is limited to n_items <= {MAX_LABEL_SET_ITEMS}."
            )
        rows = []
        for subset in itertools.combinations(range(self.n_items), self.k):
            z = np.zeros(self.n_items, dtype=np.intp)
            z[list(subset)] = 1
            rows.append(z)
        return np.array(rows)

    def _check_outputs(self, Z):
        Z = _binary(np.asarray(Z), "outputs")
        if np.any(Z.sum(axis=1) != self.k):
            raise ValueError(f"outputs must select exactly k = {self.k} labels.")
        return Z

    def _offset(self, one):
        return one

    def _label_embedding(self, Y, one):
        return Y * one

    def _output_embedding(self, Z, one):
        return -(Z * one) / self.k

    def _decode(self, T):
        top = np.argsort(-T, axis=1, kind="stable")[:, : self.k]
        Z = np.zeros(T.shape, dtype=np.intp)
        np.put_along_axis(Z, top, 1, axis=1)
        return Z

    @property
    def F_norm(self):
        return 1.0 / math.sqrt(self.k)

    U_max = 1.0


class FScoreDecomposition(_MultilabelDecomposition):
    """F-score loss ``1 - 2 |z ∩ y| / (|z| + |y|)``, with ``F(0, 0) = 1``.

    Coordinates ``(l, j)`` (``l = 1..m``, ``j = 0..m-1``, index
    ``(l - 1) m + j``) and a last one. Decomposition 1:
    ``U_{y,(l,j)} = 1(y_j = 1, |y| = l)``, ``F_{z,(l,j)} = -2 z_j / (|z| + l)``;
    decomposition 2: ``U_{y,(l,j)} = y_j / (|y| + l)``,
    ``F_{z,(l,j)} = -2 1(z_j = 1, |z| = l)``; in both ``U_{y,last} = 1(y = 0)``,
    ``F_{z,last} = -1(z = 0)``, ``c = 1`` (the paper omits the factor 2 and the
    minus sign of the last coordinate). Decoded exactly by the GFM procedure:
    for every size k the top-k items of ``A_{., k}`` (``A_jk = sum_l
    theta_(l,j) / (l + k)`` for decomposition 1, ``theta_(k,j)`` for
    decomposition 2), compared with the empty set; O(m^3) or O(m^2).

    Parameters
    ----------
    n_items : int
    decomposition : {1, 2}, default=1

    Examples
    --------
    >>> from treerank.surrogates import FScoreDecomposition
    >>> dec = FScoreDecomposition(n_items=3)
    >>> dec.loss([1, 1, 0], [1, 0, 0], exact=True)
    Fraction(1, 3)
    >>> dec.loss([0, 0, 0], [0, 0, 0])
    0.0
    """

    def __init__(self, n_items, decomposition=1):
        check_n_items(n_items)
        if decomposition not in (1, 2):
            raise ValueError(f"decomposition must be 1 or 2; got {decomposition!r}.")
        self.n_items = n_items
        self.decomposition = decomposition

    @property
    def dim(self):
        return self.n_items**2 + 1

    def _offset(self, one):
        return one

    def _blocks(self, Z, one, size_indicator):
        """Rows ``(l, j)`` for l = 1..m as an (n, m, m) array plus the last column."""
        m = self.n_items
        size = np.asarray(Z, dtype=np.float64).sum(axis=1).astype(np.intp)
        ls = np.arange(1, m + 1)
        out = _zeros((Z.shape[0], self.dim), one)
        if size_indicator:
            # entry (l, j) = Z_j 1(|z| = l)
            block = (size[:, None] == ls[None, :])[:, :, None] * Z[:, None, :]
            out[:, : m * m] = (block * one).reshape(Z.shape[0], m * m)
        else:
            # entry (l, j) = Z_j / (|z| + l)
            denom = (size[:, None] + ls[None, :]).astype(np.float64)
            if isinstance(one, Fraction):
                denom = to_exact(denom.astype(np.int64))
            block = Z[:, None, :] * one / denom[:, :, None]
            out[:, : m * m] = block.reshape(Z.shape[0], m * m)
        out[:, -1] = np.where(size == 0, one, 0 * one)
        return out

    def _label_embedding(self, Y, one):
        if self.decomposition == 1:
            return self._blocks(Y, one, size_indicator=True)
        return self._blocks(Y, one, size_indicator=False)

    def _output_embedding(self, Z, one):
        if self.decomposition == 1:
            F = self._blocks(Z, one, size_indicator=False)
        else:
            F = self._blocks(Z, one, size_indicator=True)
        F[:, :-1] = F[:, :-1] * 2
        return -F

    def _decode(self, T):
        m = self.n_items
        Z = np.zeros((T.shape[0], m), dtype=np.intp)
        ks = np.arange(1, m + 1)
        for row, theta in enumerate(T):
            P = theta[: m * m].reshape(m, m)  # [l - 1, j]
            if self.decomposition == 1:
                weights = 1.0 / (ks[:, None] + ks[None, :])  # [l - 1, k - 1]
                A = P.T @ weights  # [j, k - 1]
            else:
                A = P.T
            order = np.argsort(-A, axis=0, kind="stable")
            sorted_A = np.take_along_axis(A, order, axis=0)
            top_sums = 2.0 * np.cumsum(sorted_A, axis=0)[ks - 1, ks - 1]
            gains = np.concatenate([[theta[-1]], top_sums])
            best = int(np.argmax(gains))
            if best > 0:
                Z[row, order[:best, best - 1]] = 1
        return Z

    @property
    def F_norm(self):
        m = self.n_items
        if self.decomposition == 2:
            return max(1.0, 2.0 * math.sqrt(m))
        ls = np.arange(1, m + 1)
        norms = [4.0 * k * np.sum(1.0 / (k + ls) ** 2) for k in range(1, m + 1)]
        return float(max(1.0, math.sqrt(max(norms))))

    U_max = 1.0


class PairwiseDisagreementDecomposition(RankingDecomposition):
    """Normalized pairwise disagreement of binary labels (``1 - AUC`` of a ranking).

    ``L(sigma, y) = (1/N(y)) sum_{j,l} 1(y_j < y_l) 1(sigma(j) < sigma(l))`` (the
    less relevant ``j`` ranked above ``l``), ``N(y) = |y| (m - |y|)``. Pairs
    ``j < l`` (``np.triu_indices(m, 1)``): ``U_y = 2 sign(y_l - y_j) / N(y)``,
    ``F_sigma = -(1/4) sign(sigma(j) - sigma(l))``, ``c = 1/2``. The paper's
    formula counts the correctly ordered pairs and prints ``c = 1/4``; both are
    corrected. A list with ``N(y) = 0`` gets the constant loss 1/2. Decoded by
    a brute-force minimum weighted feedback arc set (n <= 8).

    Parameters
    ----------
    n_items : int
        At least 2.

    Examples
    --------
    >>> from treerank.surrogates import PairwiseDisagreementDecomposition
    >>> dec = PairwiseDisagreementDecomposition(n_items=3)
    >>> dec.loss([0, 2, 1], [1, 1, 0], exact=True)
    Fraction(1, 2)
    """

    def __init__(self, n_items):
        check_n_items(n_items, minimum=2)
        self.n_items = n_items

    @property
    def dim(self):
        return self.n_items * (self.n_items - 1) // 2

    @property
    def pairs(self):
        return np.triu_indices(self.n_items, 1)

    def _check_labels(self, Y):
        return _binary(Y, "labels")

    def _offset(self, one):
        return one / 2

    def _label_embedding(self, Y, one):
        first, second = self.pairs
        size = Y.sum(axis=1)
        N = size * (self.n_items - size)
        denom = np.where(N == 0, one, N)[:, None]
        sign = np.where(Y[:, second] > Y[:, first], one, 0 * one) - np.where(
            Y[:, second] < Y[:, first], one, 0 * one
        )
        return 2 * sign / denom

    def _output_embedding(self, Z, one):
        first, second = self.pairs
        P = self._positions(Z, one)
        return np.where(P[:, first] > P[:, second], -one / 4, one / 4)

    def _decode(self, T):
        check_brute_force(self.n_items, "the exact feedback-arc-set decoder")
        return self._decode_brute_force(T)

    @property
    def F_norm(self):
        return 0.25 * math.sqrt(self.n_items * (self.n_items - 1) / 2.0)

    @property
    def U_max(self):
        return 2.0 / (self.n_items - 1)


class QuadraticSurrogateEstimator(BaseEstimator):
    """Quadratic-surrogate (QS) estimator: regress ``U_y``, then decode.

    ``fit`` regresses the label embeddings ``U_{y_i}`` of an
    :class:`~treerank.surrogates.AffineDecomposition` on the features;
    ``predict`` decodes ``argmin_z <F_z, g(x)>``. With kernel ridge regression
    this is the estimator of Nowak-Vila, Bach & Rudi (2018), consistent for the
    decomposed loss.

    Parameters
    ----------
    decomposition : AffineDecomposition
        The loss decomposition (its ``target`` and ``decode`` are used).
    regressor : regressor or None, default=None
        Any scikit-learn regressor accepting multi-output targets; it is cloned.
        None means ``KernelRidge(alpha=1.0, kernel="rbf")``.

    Attributes
    ----------
    regressor_ : regressor
        The fitted clone.
    n_features_in_ : int
        Number of features seen in ``fit``.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.surrogates import HammingDecomposition
    >>> from treerank.surrogates import QuadraticSurrogateEstimator
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2))
    >>> Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0]).astype(int)
    >>> est = QuadraticSurrogateEstimator(HammingDecomposition(n_items=2))
    >>> est = est.fit(X, Y)
    >>> est.predict([[1.5, -1.5], [-1.5, 1.5]])
    array([[1, 0],
           [0, 1]])
    """

    def __init__(self, decomposition, regressor=None):
        self.decomposition = decomposition
        self.regressor = regressor

    def _check_decomposition(self):
        if not isinstance(self.decomposition, AffineDecomposition):
            raise ValueError(
                "decomposition must be an AffineDecomposition (e.g. "
                f"HammingDecomposition(n_items=...)); got {self.decomposition!r}."
            )

    def fit(self, X, Y):
        """Regress the label embeddings.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        Y : array-like of shape ``(n_samples, *label_shape)``
            One label per sample (binary vectors, relevance vectors or
            preference matrices, as the decomposition expects).

        Returns
        -------
        self : object
        """
        self._check_decomposition()
        X = validate_data(self, X, accept_sparse="csr")
        Y = np.asarray(Y)
        if Y.shape[0] != X.shape[0]:
            raise ValueError(
                f"Y has {Y.shape[0]} labels but X has {X.shape[0]} samples."
            )
        targets = np.atleast_2d(self.decomposition.target(Y))
        regressor = (
            KernelRidge(alpha=1.0, kernel="rbf")
            if self.regressor is None
            else self.regressor
        )
        self.regressor_ = clone(regressor).fit(X, targets)
        return self

    def decision_function(self, X):
        """Estimated ``g(x) = E[U_Y | x]`` of shape (n_samples, dim)."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", reset=False)
        return np.asarray(self.regressor_.predict(X), dtype=np.float64).reshape(
            X.shape[0], -1
        )

    def predict(self, X):
        """Decoded outputs ``argmin_z <F_z, g(x)>``, one row per sample."""
        return self.decomposition.decode(self.decision_function(X))
