"""Ordered grades on nested squares: a multipartite design with a known optimum."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import check_random_state

from treerank.datasets._distribution import _check_n_samples
from treerank.metrics._vus import volume_under_surface_from_counts

__all__ = ["OrdinalNestedSquares", "make_ordinal_nested_squares"]

_DEFAULT_PROBA = (
    (0.10, 0.30, 0.60),
    (0.25, 0.45, 0.30),
    (0.50, 0.35, 0.15),
    (0.75, 0.20, 0.05),
)


class OrdinalNestedSquares:
    """X uniform on a square; the grade distribution constant on concentric rings.

    ``X`` is uniform on ``[-half_width, half_width]^2``; ring ``r`` is the set
    of points with ``radii[r-1] < max(|x_1|, |x_2|) <= radii[r]``, and on ring
    ``r`` the grade ``Y`` in ``0..K-1`` has the distribution
    ``grade_proba[r]``. The rings, from the centre out, must satisfy the
    monotone likelihood ratio condition: for grades ``j < l`` the ratio
    ``grade_proba[r, l] / grade_proba[r, j]`` does not increase with ``r``.
    Then the ring order (centre first) is an optimal scorer for every
    bipartite problem "grade >= k" at once and for the volume under the ROC
    surface (VUS), and ``optimal_vus`` is the VUS of that scorer, exact: an
    axis-parallel ranking tree can reach it.

    Read more in the :ref:`User Guide <multipartite>`.

    Parameters
    ----------
    grade_proba : array-like of shape (n_rings, n_grades), default=see below
        Distribution of the grade on each ring, from the centre out; rows
        sum to one. The default has three grades and four rings:
        ``(0.10, 0.30, 0.60)``, ``(0.25, 0.45, 0.30)``, ``(0.50, 0.35,
        0.15)``, ``(0.75, 0.20, 0.05)``.
    radii : sequence of float or None, default=None
        Outer L-infinity radius of each ring, increasing, the last one equal
        to ``half_width``. None gives rings of equal area.
    half_width : float, default=2.0
        Half the side of the square.

    Attributes
    ----------
    masses_ : ndarray of shape (n_rings,)
        Probability of each ring.
    grade_fractions_ : ndarray of shape (n_grades,)
        ``P(Y = k)``.

    See Also
    --------
    NestedSquares : The bipartite design with the same geometry.

    Examples
    --------
    >>> from treerank.datasets import OrdinalNestedSquares
    >>> model = OrdinalNestedSquares()
    >>> round(model.optimal_vus(), 4)
    0.4451
    >>> X, y = model.sample(5, random_state=0)
    >>> X.shape, y.shape
    ((5, 2), (5,))
    """

    def __init__(self, grade_proba=_DEFAULT_PROBA, radii=None, half_width=2.0):
        proba = np.asarray(grade_proba, dtype=np.float64)
        if proba.ndim != 2 or proba.shape[0] < 1 or proba.shape[1] < 2:
            raise ValueError(
                "grade_proba must be a 2-d array (n_rings, n_grades) with at least "
                f"two grades; got shape {proba.shape}."
            )
        if not np.all(np.isfinite(proba)) or np.any(proba < 0):
            raise ValueError("grade_proba must be finite and non-negative.")
        if not np.allclose(proba.sum(axis=1), 1.0):
            raise ValueError(
                f"every row of grade_proba must sum to 1; got sums "
                f"{proba.sum(axis=1).tolist()}."
            )
        # monotone likelihood ratio between consecutive rings, every pair of
        # grades j < l: p[r, l] p[r+1, j] >= p[r, j] p[r+1, l]
        outer, inner = proba[1:], proba[:-1]
        cross = (
            inner[:, None, :] * outer[:, :, None]
            - inner[:, :, None] * outer[:, None, :]
        )
        upper = np.triu(np.ones((proba.shape[1],) * 2, dtype=bool), k=1)
        if np.any(cross[:, upper] < -1e-12):
            raise ValueError(
                "grade_proba must satisfy the monotone likelihood ratio condition "
                "from the centre out (for grades j < l, grade_proba[r, l] / "
                "grade_proba[r, j] must not increase with r); otherwise no scorer "
                "is optimal for every threshold at once."
            )
        if not (np.isfinite(half_width) and half_width > 0):
            raise ValueError(f"half_width must be positive; got {half_width!r}.")
        n_rings = proba.shape[0]
        if radii is None:
            radii = half_width * np.sqrt(np.arange(1, n_rings + 1) / n_rings)
        radii = np.asarray(radii, dtype=np.float64)
        if radii.shape != (n_rings,):
            raise ValueError(
                f"radii must have one value per ring ({n_rings}); got shape "
                f"{radii.shape}."
            )
        if np.any(np.diff(np.concatenate([[0.0], radii])) <= 0):
            raise ValueError("radii must be positive and strictly increasing.")
        if not np.isclose(radii[-1], half_width):
            raise ValueError(
                f"The last radius must equal half_width={half_width}; got {radii[-1]}."
            )
        radii[-1] = half_width
        self.grade_proba = proba / proba.sum(axis=1, keepdims=True)
        self.radii = radii
        self.half_width = float(half_width)
        inner_radii = np.concatenate([[0.0], radii[:-1]])
        self.masses_ = (radii**2 - inner_radii**2) / half_width**2
        self.grade_fractions_ = self.masses_ @ self.grade_proba
        if np.any(self.grade_fractions_ <= 0):
            raise ValueError("every grade must have a positive probability.")

    @property
    def n_grades(self):
        """Number of grades ``K``."""
        return self.grade_proba.shape[1]

    def _check_X(self, X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != 2:
            raise ValueError(f"X must have shape (n_samples, 2); got {X.shape}.")
        return X

    def ring(self, X):
        """Index of the ring containing each point (0 = centre).

        Parameters
        ----------
        X : array-like of shape (n_samples, 2)

        Returns
        -------
        ring : ndarray of int of shape (n_samples,)
        """
        X = self._check_X(X)
        ring = np.searchsorted(self.radii, np.abs(X).max(axis=1), side="left")
        return np.minimum(ring, self.radii.shape[0] - 1)

    def conditional_proba(self, X):
        """``P(Y = k | X = x)`` for every grade, shape (n_samples, n_grades).

        Parameters
        ----------
        X : array-like of shape (n_samples, 2)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_grades)
        """
        return self.grade_proba[self.ring(X)]

    def optimal_score(self, X):
        """An optimal scorer: minus the ring index (the centre ranks first).

        Parameters
        ----------
        X : array-like of shape (n_samples, 2)

        Returns
        -------
        score : ndarray of shape (n_samples,)
        """
        return -self.ring(X).astype(np.float64)

    def sample(self, n_samples, random_state=None):
        """Draw an i.i.d. sample.

        Parameters
        ----------
        n_samples : int
        random_state : int, RandomState instance or None, default=None

        Returns
        -------
        X : ndarray of shape (n_samples, 2)
        y : ndarray of int of shape (n_samples,)
            Grades ``0..n_grades - 1`` (higher is better).
        """
        n_samples = _check_n_samples(n_samples)
        rng = check_random_state(random_state)
        X = rng.uniform(-self.half_width, self.half_width, size=(n_samples, 2))
        cumulative = np.cumsum(self.conditional_proba(X), axis=1)
        u = rng.uniform(size=(n_samples, 1))
        y = np.minimum((u > cumulative).sum(axis=1), self.n_grades - 1)
        return X, y.astype(np.int64)

    def _ring_counts(self):
        """Population mass of every (ring, grade), rings best first."""
        return self.masses_[:, None] * self.grade_proba

    def optimal_vus(self):
        """VUS of the optimal scorer (ties within a ring at their expectation).

        Returns
        -------
        vus : float
        """
        return volume_under_surface_from_counts(self._ring_counts())

    def optimal_cumulative_aucs(self):
        """AUC* of every bipartite problem "grade >= k", ``k = 1..K-1``.

        Returns
        -------
        aucs : ndarray of shape (n_grades - 1,)
        """
        counts = self._ring_counts()
        aucs = []
        for k in range(1, self.n_grades):
            binary = np.column_stack(
                [counts[:, :k].sum(axis=1), counts[:, k:].sum(axis=1)]
            )
            aucs.append(volume_under_surface_from_counts(binary))
        return np.array(aucs)


def make_ordinal_nested_squares(n_samples=1000, *, random_state=None, **params):
    """Sample the :class:`OrdinalNestedSquares` design (three grades by default).

    Parameters
    ----------
    n_samples : int, default=1000
    random_state : int, RandomState instance or None, default=None
    **params
        Passed to :class:`OrdinalNestedSquares`.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of int of shape (n_samples,)
        Grades ``0..K-1``.

    Examples
    --------
    >>> from treerank.datasets import make_ordinal_nested_squares
    >>> X, y = make_ordinal_nested_squares(1000, random_state=0)
    >>> sorted(set(y.tolist()))
    [0, 1, 2]
    """
    return OrdinalNestedSquares(**params).sample(n_samples, random_state=random_state)
