"""Gaussian class-conditional designs with a closed-form optimal ROC curve."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy import special, stats
from sklearn.utils import check_random_state

from treerank.datasets._distribution import (
    RankingDistribution,
    _check_fraction,
    _check_n_samples,
)

__all__ = [
    "GaussianMeanShift",
    "GaussianScale",
    "make_gaussian_mean_shift",
    "make_gaussian_scale",
]


def _check_positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}.")
    return int(value)


class _GaussianBase(RankingDistribution):
    def sample(self, n_samples, random_state=None):
        """Draw an i.i.d. sample: Y ~ Bernoulli(p), then X | Y Gaussian.

        Parameters
        ----------
        n_samples : int
            Number of points.
        random_state : int, RandomState instance or None, default=None
            Seed.

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
        y : ndarray of shape (n_samples,), dtype=int
            Labels in {0, 1}.
        """
        n_samples = _check_n_samples(n_samples)
        rng = check_random_state(random_state)
        y = (rng.uniform(size=n_samples) < self.positive_fraction).astype(int)
        Z = rng.standard_normal(size=(n_samples, self.n_features))
        X = self._transform(Z, y)
        return X, y

    def eta(self, X):
        """Regression function ``P(Y = 1 | X = x)`` from the likelihood ratio.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        eta : ndarray of shape (n_samples,)
        """
        X = self._check_X(X, self.n_features)
        p = self.positive_fraction
        log_odds = self._log_likelihood_ratio(X) + np.log(p / (1 - p))
        return special.expit(log_odds)


class GaussianMeanShift(_GaussianBase):
    """Two Gaussian classes with identity covariance and different means.

    Negatives ``X | Y=0 ~ N(0, I_d)``, positives ``X | Y=1 ~ N(delta u, I_d)``
    with ``u = (1, ..., 1) / sqrt(d)``, so the means are ``delta = separation``
    apart. The log-likelihood ratio ``delta u.x - delta^2 / 2`` is linear, and

    - ``eta(x) = expit(delta u.x - delta^2/2 + log(p / (1 - p)))``,
    - ``ROC*(alpha) = Phi(delta + Phi^{-1}(alpha))``,
    - ``AUC* = Phi(delta / sqrt(2))``.

    Parameters
    ----------
    n_features : int, default=2
        Dimension d.
    separation : float, default=1.0
        Distance between the class means.
    positive_fraction : float in (0, 1), default=0.5
        ``p = P(Y = 1)``.

    Examples
    --------
    >>> from treerank.datasets import GaussianMeanShift
    >>> model = GaussianMeanShift(n_features=5, separation=1.0)
    >>> round(model.optimal_auc(), 4)
    0.7602
    >>> float(model.optimal_roc(0.5)) > 0.5
    True
    """

    def __init__(self, n_features=2, separation=1.0, positive_fraction=0.5):
        self.n_features = _check_positive_int(n_features, "n_features")
        if not (np.isfinite(separation) and separation >= 0):
            raise ValueError(f"separation must be >= 0; got {separation!r}.")
        self.separation = float(separation)
        self.positive_fraction = _check_fraction(positive_fraction, "positive_fraction")
        self.direction_ = np.full(self.n_features, 1 / np.sqrt(self.n_features))

    def _transform(self, Z, y):
        return Z + np.outer(y, self.separation * self.direction_)

    def _log_likelihood_ratio(self, X):
        delta = self.separation
        return delta * (X @ self.direction_) - delta**2 / 2

    def optimal_roc(self, fpr):
        """ROC*(alpha) = Phi(delta + Phi^{-1}(alpha)).

        Parameters
        ----------
        fpr : float or array-like of float in [0, 1]

        Returns
        -------
        tpr : ndarray
        """
        alpha = np.clip(np.asarray(fpr, dtype=np.float64), 0.0, 1.0)
        return stats.norm.cdf(self.separation + stats.norm.ppf(alpha))

    def optimal_auc(self):
        """AUC* = Phi(delta / sqrt(2)).

        Returns
        -------
        auc : float
        """
        return float(stats.norm.cdf(self.separation / np.sqrt(2)))


class GaussianScale(_GaussianBase):
    """Two centred Gaussian classes with different variances.

    Negatives ``X | Y=0 ~ N(0, s0^2 I_d)``, positives ``X | Y=1 ~ N(0, s1^2 I_d)``
    with ``s0 = scale_negative > s1 = scale_positive`` by default (positives
    concentrate near the origin). The likelihood ratio is a decreasing function
    of ``||x||^2`` when ``s0 > s1``, and, with ``F_d`` the chi-square(d) CDF,

    - ``eta(x) = expit(d log(s0/s1) + ||x||^2 (1/s0^2 - 1/s1^2) / 2 + log(p/(1-p)))``,
    - ``ROC*(alpha) = F_d(F_d^{-1}(alpha) s0^2 / s1^2)`` (roles swapped if s0 < s1),
    - ``AUC* = F_{d,d}(s0^2 / s1^2)``, the CDF of Fisher's F(d, d) distribution
      (``P(s1^2 chi2_d < s0^2 chi2_d')``).

    Parameters
    ----------
    n_features : int, default=20
        Dimension d.
    scale_negative : float, default=1.25
        Standard deviation s0 of the negatives.
    scale_positive : float, default=1.0
        Standard deviation s1 of the positives.
    positive_fraction : float in (0, 1), default=0.5
        ``p = P(Y = 1)``.

    Examples
    --------
    >>> from treerank.datasets import GaussianScale
    >>> round(GaussianScale().optimal_auc(), 4)
    0.8368
    """

    def __init__(
        self,
        n_features=20,
        scale_negative=1.25,
        scale_positive=1.0,
        positive_fraction=0.5,
    ):
        self.n_features = _check_positive_int(n_features, "n_features")
        for name, value in [
            ("scale_negative", scale_negative),
            ("scale_positive", scale_positive),
        ]:
            if not (np.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be positive; got {value!r}.")
        if scale_negative == scale_positive:
            raise ValueError(
                "scale_negative and scale_positive must differ, otherwise the "
                "classes are identical and every scorer is optimal."
            )
        self.scale_negative = float(scale_negative)
        self.scale_positive = float(scale_positive)
        self.positive_fraction = _check_fraction(positive_fraction, "positive_fraction")

    def _transform(self, Z, y):
        scale = np.where(y == 1, self.scale_positive, self.scale_negative)
        return Z * scale[:, None]

    def _log_likelihood_ratio(self, X):
        s0, s1, d = self.scale_negative, self.scale_positive, self.n_features
        sq = np.einsum("ij,ij->i", X, X)
        return d * np.log(s0 / s1) + 0.5 * sq * (1 / s0**2 - 1 / s1**2)

    def optimal_roc(self, fpr):
        """ROC*(alpha) from the chi-square distribution of ``||X||^2``.

        Parameters
        ----------
        fpr : float or array-like of float in [0, 1]

        Returns
        -------
        tpr : ndarray
        """
        alpha = np.clip(np.asarray(fpr, dtype=np.float64), 0.0, 1.0)
        d = self.n_features
        ratio = self.scale_negative**2 / self.scale_positive**2
        if ratio > 1:  # positives inside: rank small norms first
            return stats.chi2.cdf(stats.chi2.ppf(alpha, d) * ratio, d)
        # positives outside: rank large norms first
        return stats.chi2.sf(stats.chi2.isf(alpha, d) * ratio, d)

    def optimal_auc(self):
        """AUC* from Fisher's F(d, d) distribution (closed form).

        Returns
        -------
        auc : float
        """
        d = self.n_features
        ratio = self.scale_negative**2 / self.scale_positive**2
        if ratio > 1:
            return float(stats.f.cdf(ratio, d, d))
        return float(stats.f.sf(ratio, d, d))


def make_gaussian_mean_shift(
    n_samples=2000,
    *,
    n_features=2,
    separation=1.0,
    positive_fraction=0.5,
    random_state=None,
):
    """Generate two Gaussian classes with different means.

    See :class:`GaussianMeanShift` for eta, ROC* and AUC*
    (``AUC* = Phi(separation / sqrt(2))``).

    Parameters
    ----------
    n_samples : int, default=2000
        Number of points.
    n_features : int, default=2
        Dimension.
    separation : float, default=1.0
        Distance between the class means.
    positive_fraction : float in (0, 1), default=0.5
        ``P(Y = 1)``.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), dtype=int

    Examples
    --------
    >>> from treerank.datasets import make_gaussian_mean_shift
    >>> X, y = make_gaussian_mean_shift(100, n_features=3, random_state=0)
    >>> X.shape
    (100, 3)
    """
    model = GaussianMeanShift(
        n_features=n_features,
        separation=separation,
        positive_fraction=positive_fraction,
    )
    return model.sample(n_samples, random_state=random_state)


def make_gaussian_scale(
    n_samples=2000,
    *,
    n_features=20,
    scale_negative=1.25,
    scale_positive=1.0,
    positive_fraction=0.5,
    random_state=None,
):
    """Generate two centred Gaussian classes with different variances.

    See :class:`GaussianScale` for eta, ROC* and AUC* (0.8368 with the
    defaults: d = 20, standard deviations 1.25 for negatives, 1 for positives).

    Parameters
    ----------
    n_samples : int, default=2000
        Number of points.
    n_features : int, default=20
        Dimension.
    scale_negative : float, default=1.25
        Standard deviation of the negatives.
    scale_positive : float, default=1.0
        Standard deviation of the positives.
    positive_fraction : float in (0, 1), default=0.5
        ``P(Y = 1)``.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,), dtype=int

    Examples
    --------
    >>> from treerank.datasets import make_gaussian_scale
    >>> X, y = make_gaussian_scale(100, random_state=0)
    >>> X.shape
    (100, 20)
    """
    model = GaussianScale(
        n_features=n_features,
        scale_negative=scale_negative,
        scale_positive=scale_positive,
        positive_fraction=positive_fraction,
    )
    return model.sample(n_samples, random_state=random_state)
