"""The "nested squares" design: eta constant on concentric L-infinity rings."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn.utils import check_random_state

from treerank.datasets._distribution import (
    RankingDistribution,
    _check_n_samples,
)

__all__ = ["NestedSquares", "make_nested_squares"]


class NestedSquares(RankingDistribution):
    """X uniform on a square, eta constant on concentric L-infinity rings.

    ``X`` is uniform on ``[-half_width, half_width]^2``; ring ``k`` is the set
    of points with ``radii[k-1] < max(|x_1|, |x_2|) <= radii[k]`` (with
    ``radii[-1] = 0``), and ``eta(x) = rates[k]`` on ring ``k``. ROC* is the
    broken line through the rings sorted by decreasing rate, one segment per
    ring, so an axis-aligned ranking tree can reach it exactly.

    Read more in the :ref:`User Guide <datasets>`.

    Parameters
    ----------
    rates : sequence of float in [0, 1], default=(0.74, 0.62, 0.28, 0.12)
        Positive rate on each ring, from the centre out.
    radii : sequence of float or None, default=None
        Outer L-infinity radius of each ring, increasing, the last one equal
        to ``half_width``. ``None`` gives rings of equal area:
        ``radii[k] = half_width * sqrt((k + 1) / n_rings)``.
    half_width : float, default=2.0
        Half the side of the square.

    Attributes
    ----------
    masses_ : ndarray of shape (n_rings,)
        Probability of each ring.
    positive_fraction_ : float
        ``p = P(Y = 1)``.

    Examples
    --------
    >>> from treerank.datasets import NestedSquares
    >>> model = NestedSquares()
    >>> round(model.optimal_auc(), 4)
    0.779
    >>> X, y = model.sample(5, random_state=0)
    >>> X.shape, y.shape
    ((5, 2), (5,))
    """

    def __init__(self, rates=(0.74, 0.62, 0.28, 0.12), radii=None, half_width=2.0):
        rates = np.asarray(rates, dtype=np.float64)
        if rates.ndim != 1 or rates.shape[0] < 1:
            raise ValueError("rates must be a non-empty one-dimensional sequence.")
        if np.any(~np.isfinite(rates)) or np.any((rates < 0) | (rates > 1)):
            raise ValueError(f"rates must lie in [0, 1]; got {rates.tolist()}.")
        if not (np.isfinite(half_width) and half_width > 0):
            raise ValueError(f"half_width must be positive; got {half_width!r}.")
        n_rings = rates.shape[0]
        if radii is None:
            radii = half_width * np.sqrt(np.arange(1, n_rings + 1) / n_rings)
        radii = np.asarray(radii, dtype=np.float64)
        if radii.shape != rates.shape:
            raise ValueError(
                f"radii must have one value per ring ({n_rings}); got {radii.shape[0]}."
            )
        if np.any(np.diff(np.concatenate([[0.0], radii])) <= 0):
            raise ValueError("radii must be positive and strictly increasing.")
        if not np.isclose(radii[-1], half_width):
            raise ValueError(
                f"The last radius must equal half_width={half_width}; got {radii[-1]}."
            )
        radii[-1] = half_width
        self.rates = rates
        self.radii = radii
        self.half_width = float(half_width)
        inner = np.concatenate([[0.0], radii[:-1]])
        self.masses_ = (radii**2 - inner**2) / half_width**2
        self.positive_fraction_ = float(np.dot(self.masses_, self.rates))
        if not 0 < self.positive_fraction_ < 1:
            raise ValueError("rates must give both classes a positive probability.")

    def ring(self, X):
        """Index of the ring containing each point (0 = centre).

        Parameters
        ----------
        X : array-like of shape (n_samples, 2)

        Returns
        -------
        ring : ndarray of shape (n_samples,), dtype=int
        """
        X = self._check_X(X, 2)
        radius = np.abs(X).max(axis=1)
        ring = np.searchsorted(self.radii, radius, side="left")
        return np.minimum(ring, self.rates.shape[0] - 1)

    def eta(self, X):
        """Regression function ``P(Y = 1 | X = x)``.

        Parameters
        ----------
        X : array-like of shape (n_samples, 2)

        Returns
        -------
        eta : ndarray of shape (n_samples,)
        """
        return self.rates[self.ring(X)]

    def sample(self, n_samples, random_state=None):
        """Draw an i.i.d. sample.

        Parameters
        ----------
        n_samples : int
            Number of points.
        random_state : int, RandomState instance or None, default=None
            Seed. Samples drawn with the same seed share their leading points
            (the points are drawn before the labels): draw training and test
            sets with different seeds.

        Returns
        -------
        X : ndarray of shape (n_samples, 2)
        y : ndarray of shape (n_samples,), dtype=int
            Labels in {0, 1}.
        """
        n_samples = _check_n_samples(n_samples)
        rng = check_random_state(random_state)
        X = rng.uniform(-self.half_width, self.half_width, size=(n_samples, 2))
        y = (rng.uniform(size=n_samples) < self.eta(X)).astype(int)
        return X, y

    def _ring_masses_by_class(self):
        order = np.argsort(-self.rates, kind="stable")
        p = self.positive_fraction_
        beta = self.masses_[order] * self.rates[order] / p
        alpha = self.masses_[order] * (1 - self.rates[order]) / (1 - p)
        return alpha, beta

    def optimal_roc_curve(self, n_points=None):
        """Exact knots of ROC* (one segment per ring, best ring first).

        Parameters
        ----------
        n_points : ignored
            Kept for signature compatibility: ROC* is piecewise linear here.

        Returns
        -------
        fpr, tpr : ndarray of shape (n_rings + 1,)
        """
        alpha, beta = self._ring_masses_by_class()
        fpr = np.concatenate([[0.0], np.cumsum(alpha)])
        tpr = np.concatenate([[0.0], np.cumsum(beta)])
        fpr[-1] = tpr[-1] = 1.0
        return fpr, tpr

    def optimal_roc(self, fpr):
        """ROC*(alpha), the optimal true positive rate at false positive rate alpha.

        Parameters
        ----------
        fpr : float or array-like of float in [0, 1]

        Returns
        -------
        tpr : ndarray
        """
        knots_fpr, knots_tpr = self.optimal_roc_curve()
        # equal-rate rings give equal slopes, so interpolation is well defined
        return np.interp(np.asarray(fpr, dtype=np.float64), knots_fpr, knots_tpr)

    def optimal_auc(self):
        """AUC* = area under ROC* (exact: trapezoids over the ring segments).

        Returns
        -------
        auc : float
        """
        fpr, tpr = self.optimal_roc_curve()
        return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1]) / 2))


def make_nested_squares(
    n_samples=2000,
    *,
    rates=(0.74, 0.62, 0.28, 0.12),
    radii=None,
    half_width=2.0,
    random_state=None,
):
    """Generate the 2-D nested-squares bipartite ranking problem.

    ``X`` is uniform on ``[-half_width, half_width]^2`` and
    ``eta(x) = P(Y = 1 | X = x)`` is constant on concentric L-infinity rings
    (by default 0.74, 0.62, 0.28, 0.12 from the centre out, rings of equal
    area, so ``p = 0.44`` and ``AUC* = 0.7790``). See :class:`NestedSquares`
    for eta, ROC* and AUC*.

    Parameters
    ----------
    n_samples : int, default=2000
        Number of points.
    rates : sequence of float, default=(0.74, 0.62, 0.28, 0.12)
        Positive rate on each ring, from the centre out.
    radii : sequence of float or None, default=None
        Outer radius of each ring (``None``: rings of equal area).
    half_width : float, default=2.0
        Half the side of the square.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, 2)
    y : ndarray of shape (n_samples,), dtype=int
        Labels in {0, 1}.

    Examples
    --------
    >>> from treerank.datasets import make_nested_squares
    >>> X, y = make_nested_squares(1000, random_state=0)
    >>> X.shape
    (1000, 2)
    >>> bool(0.35 < y.mean() < 0.55)
    True
    """
    model = NestedSquares(rates=rates, radii=radii, half_width=half_width)
    return model.sample(n_samples, random_state=random_state)
