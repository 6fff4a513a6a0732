"""Affine (low-rank) decompositions of discrete losses and their quadratic surrogate.

A loss on a finite output set Z (rankings, label sets) and label set Y is
*affine* of dimension r when

    L(z, y) = <F_z, U_y> + c,        F_z, U_y in R^r

(Ramaswamy, Agarwal & Tewari 2013 write ``<alpha_y, beta_t> + c``; Nowak-Vila,
Bach & Rudi 2018 ``F U^T + c``). The least-squares surrogate
``psi(u, y) = ||u - U_y||^2`` is then calibrated: its population minimizer is
``g* = E[U_Y]`` and the decoder ``d(u) = argmin_z <F_z, u>`` maps it to a Bayes
output, with the comparison inequality

    E[L(d(u), Y)] - min_z E[L(z, Y)] <= 2 ||F||_inf ||u - g*||_2,

``||F||_inf = sup_z ||F_z||_2``. :class:`AffineDecomposition` is the common
base: embeddings, loss, surrogate value and gradient, decoders, constants.
Rational decompositions also compute exactly with ``fractions.Fraction``
(``exact=True``).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math
from fractions import Fraction

import numpy as np
from sklearn.base import BaseEstimator

from treerank.metrics._list_common import to_exact
from treerank.surrogates._decoders import (
    all_rankings,
    check_brute_force,
    positions_from_rankings,
    sort_decoder,
)

__all__ = ["AffineDecomposition", "RankingDecomposition"]


def check_n_items(n_items, name="n_items", minimum=1):
    if (
        isinstance(n_items, bool)
        or not isinstance(n_items, (int, np.integer))
        or n_items < minimum
    ):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {n_items!r}.")


class AffineDecomposition(BaseEstimator):
    """Base class: a discrete loss ``L(z, y) = <F_z, U_y> + c``.

    Subclasses define the output set (``outputs``), the label embedding
    ``U_y`` (the regression target of the surrogate), the output embedding
    ``F_z``, the constant ``c`` and a decoder ``argmin_z <F_z, theta>``.

    Methods common to all decompositions:

    - ``label_embedding(y)`` (alias ``target``), ``output_embedding(z)``;
    - ``loss(z, y)`` and ``loss_matrix(Z, Y)`` from the decomposition;
    - ``value(u, y) = ||u - U_y||^2`` and ``grad(u, y) = 2 (u - U_y)`` (summed
      over a batch);
    - ``decode(theta)`` (the decomposition's decoder) and ``decode_exact``
      (brute force over the outputs, guarded);
    - constants ``F_norm`` (``sup_z ||F_z||_2``), ``U_max`` (``max |U_y|``),
      ``comparison_constant`` (``2 F_norm``) and ``A``
      (``sqrt(r) F_norm U_max``).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.surrogates import HammingDecomposition
    >>> dec = HammingDecomposition(n_items=3)
    >>> Y = np.array([[1, 0, 1], [1, 1, 0]])
    >>> g = dec.label_embedding(Y).mean(axis=0)  # E[U_y], Y uniform
    >>> g
    array([1., 0., 0.])
    >>> dec.decode(g)  # a Bayes output: label 0 always on, ties -> 0
    array([1, 0, 0])
    >>> dec.loss([1, 0, 0], [1, 0, 1])
    0.3333333333333333
    """

    exact_supported = True
    label_ndim = 1

    # ----- to be provided by subclasses -------------------------------------
    @property
    def dim(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def _offset(self, one):  # pragma: no cover - abstract
        raise NotImplementedError

    def _label_embedding(self, Y, one):  # pragma: no cover - abstract
        raise NotImplementedError

    def _output_embedding(self, Z, one):  # pragma: no cover - abstract
        raise NotImplementedError

    def outputs(self):  # pragma: no cover - abstract
        """All outputs, one per row (guarded to small sizes)."""
        raise NotImplementedError

    def _decode(self, Theta):
        return self._decode_brute_force(Theta)

    def _check_labels(self, Y):
        return Y

    # ----- shapes and validation -------------------------------------------
    @property
    def label_shape(self):
        return (self.n_items,) * self.label_ndim

    def _batch_labels(self, y):
        Y = np.asarray(y, dtype=np.float64)
        single = Y.shape == self.label_shape
        if single:
            Y = Y[None]
        if Y.shape[1:] != self.label_shape:
            raise ValueError(
                f"labels must have shape {self.label_shape} (one label) or "
                f"(n_samples, {', '.join(map(str, self.label_shape))}); got {Y.shape}."
            )
        if not np.all(np.isfinite(Y)):
            raise ValueError("labels contain NaN or infinity.")
        return self._check_labels(Y), single

    def _batch_outputs(self, z):
        Z = np.asarray(z)
        single = Z.ndim == 1
        if single:
            Z = Z[None]
        if Z.ndim != 2 or Z.shape[1] != self.n_items:
            raise ValueError(
                f"outputs must have shape ({self.n_items},) or (n, {self.n_items}); "
                f"got {Z.shape}."
            )
        return self._check_outputs(Z), single

    def _check_outputs(self, Z):
        return Z

    def _one(self, exact):
        if exact and not self.exact_supported:
            raise ValueError(
                f"{type(self).__name__} has irrational entries: exact=True is not "
                "supported."
            )
        return Fraction(1) if exact else 1.0

    def _batch_theta(self, theta):
        T = np.asarray(theta, dtype=np.float64)
        single = T.ndim == 1
        if single:
            T = T[None]
        if T.ndim != 2 or T.shape[1] != self.dim:
            raise ValueError(
                f"theta must have shape ({self.dim},) or (n, {self.dim}); got "
                f"{np.shape(theta)}."
            )
        if not np.all(np.isfinite(T)):
            raise ValueError("theta contains NaN or infinity.")
        return T, single

    # ----- embeddings and loss ---------------------------------------------
    @property
    def offset(self):
        """The constant ``c`` of the decomposition."""
        return self._offset(1.0)

    def label_embedding(self, y, *, exact=False):
        """Label embedding ``U_y`` (the regression target of the surrogate).

        Parameters
        ----------
        y : array-like of shape ``label_shape`` or ``(n_samples, *label_shape)``
        exact : bool, default=False
            Compute with ``fractions.Fraction`` (object array).

        Returns
        -------
        U : ndarray of shape (dim,) or (n_samples, dim)
        """
        one = self._one(exact)
        Y, single = self._batch_labels(y)
        if exact:
            Y = to_exact(Y)
        U = self._label_embedding(Y, one)
        return U[0] if single else U

    def target(self, y):
        """Regression target ``U_y`` (float), same as :meth:`label_embedding`."""
        return self.label_embedding(y)

    def output_embedding(self, z, *, exact=False):
        """Output embedding ``F_z``.

        Parameters
        ----------
        z : array-like of shape (n_items,) or (n_outputs, n_items)
        exact : bool, default=False

        Returns
        -------
        F : ndarray of shape (dim,) or (n_outputs, dim)
        """
        one = self._one(exact)
        Z, single = self._batch_outputs(z)
        F = self._output_embedding(Z, one)
        return F[0] if single else F

    def loss(self, z, y, *, exact=False):
        """Loss ``<F_z, U_y> + c`` of one output and one label."""
        F = self.output_embedding(z, exact=exact)
        U = self.label_embedding(y, exact=exact)
        if F.ndim != 1 or U.ndim != 1:
            raise ValueError("loss takes one output and one label; use loss_matrix.")
        total = sum((f * u for f, u in zip(F, U)), start=self._offset(self._one(exact)))
        return total if exact else float(total)

    def loss_matrix(self, Z, Y, *, exact=False):
        """Loss matrix ``L[a, b] = <F_{Z_a}, U_{Y_b}> + c`` (rows: outputs)."""
        F = np.atleast_2d(self.output_embedding(Z, exact=exact))
        U = self.label_embedding(Y, exact=exact)
        U = U.reshape(-1, self.dim)
        return F @ U.T + self._offset(self._one(exact))

    # ----- least-squares surrogate ------------------------------------------
    def value(self, u, y):
        """Surrogate ``||u - U_y||^2`` (summed over a batch)."""
        U = np.atleast_2d(self.label_embedding(y))
        u = np.asarray(u, dtype=np.float64).reshape(U.shape)
        return float(np.sum((u - U) ** 2))

    def grad(self, u, y):
        """Gradient ``2 (u - U_y)`` of the surrogate in ``u``."""
        U = self.label_embedding(y)
        u = np.asarray(u, dtype=np.float64)
        if u.shape != U.shape:
            raise ValueError(f"u has shape {u.shape}; expected {U.shape}.")
        return 2.0 * (u - U)

    # ----- decoders -----------------------------------------------------------
    def decode(self, theta):
        """Output minimizing ``<F_z, theta>`` (the decomposition's decoder).

        Parameters
        ----------
        theta : array-like of shape (dim,) or (n_samples, dim)

        Returns
        -------
        z : ndarray of shape (n_items,) or (n_samples, n_items)
        """
        T, single = self._batch_theta(theta)
        Z = self._decode(T)
        return Z[0] if single else Z

    def decode_exact(self, theta):
        """Brute-force ``argmin_z <F_z, theta>`` over all outputs (guarded)."""
        T, single = self._batch_theta(theta)
        Z = self._decode_brute_force(T)
        return Z[0] if single else Z

    def _decode_brute_force(self, T):
        outs = self.outputs()
        F = self._output_embedding(outs, 1.0)
        return outs[np.argmin(T @ F.T, axis=1)]

    # ----- constants --------------------------------------------------------
    @property
    def U_max(self):  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def F_norm(self):  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def comparison_constant(self):
        """``2 ||F||_inf``: the factor of the comparison inequality."""
        return 2.0 * self.F_norm

    @property
    def A(self):
        """``sqrt(r) ||F||_inf U_max`` (Nowak-Vila et al., Theorem 3.1)."""
        return math.sqrt(self.dim) * self.F_norm * self.U_max


class RankingDecomposition(AffineDecomposition):
    """Base class of the decompositions whose outputs are rankings.

    Outputs are rankings (item indices, best first); the default decoder sorts
    ``theta`` and ``decode_exact`` enumerates the ``n!`` rankings (n <= 8).

    Examples
    --------
    >>> from treerank.surrogates import DCGSurrogate, RankingDecomposition
    >>> sur = DCGSurrogate(n_items=3)
    >>> isinstance(sur, RankingDecomposition)
    True
    >>> sur.decode([0.1, 0.5, 0.3]), sur.decode_exact([0.1, 0.5, 0.3])
    (array([1, 2, 0]), array([1, 2, 0]))
    """

    def outputs(self):
        """All ``n_items!`` rankings (item indices best first), guarded to n <= 8."""
        return np.array(all_rankings(self.n_items))

    def _check_outputs(self, Z):
        Z = np.asarray(Z)
        if Z.dtype.kind not in "iu" or not np.array_equal(
            np.sort(Z, axis=1), np.broadcast_to(np.arange(self.n_items), Z.shape)
        ):
            raise ValueError(
                f"rankings must be permutations of 0..{self.n_items - 1} (item indices "
                "in rank order, best first)."
            )
        return Z

    def _positions(self, Z, one):
        P = positions_from_rankings(Z)
        return to_exact(P) if isinstance(one, Fraction) else P.astype(np.float64)

    def _decode(self, T):
        return sort_decoder(T)

    def decode_exact(self, theta):
        """Brute-force ``argmin_sigma <F_sigma, theta>`` over all rankings (n <= 8)."""
        check_brute_force(self.n_items)
        return super().decode_exact(theta)
