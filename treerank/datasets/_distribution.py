"""Base class of the synthetic bipartite-ranking distributions with a known optimum."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["RankingDistribution"]


class RankingDistribution:
    """A distribution of (X, Y) whose regression function eta is known.

    Subclasses implement :meth:`sample`, :meth:`eta`, :meth:`optimal_roc` and
    :meth:`optimal_auc`. The optimal scorers are the increasing transforms of
    ``eta(x) = P(Y = 1 | X = x)``; their ROC curve is ROC*, the best ROC curve
    any scorer can reach, and ``optimal_auc`` is its area.
    """

    def sample(self, n_samples, random_state=None):  # pragma: no cover - abstract
        raise NotImplementedError

    def eta(self, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def optimal_roc(self, fpr):  # pragma: no cover - abstract
        raise NotImplementedError

    def optimal_auc(self):  # pragma: no cover - abstract
        raise NotImplementedError

    def optimal_roc_curve(self, n_points=2001):
        """Knots ``(fpr, tpr)`` of ROC* (a broken line), for distance computations.

        For a piecewise-linear ROC* the knots are exact; for a smooth ROC* the
        curve is sampled on ``n_points`` false positive rates, spaced
        geometrically near 0 where ROC* is steepest, and joined by chords
        (ROC* is concave, so the chords lie below it).

        Parameters
        ----------
        n_points : int, default=2001
            Number of knots for a smooth ROC*; ignored when ROC* is piecewise
            linear.

        Returns
        -------
        fpr, tpr : ndarray of shape (n_knots,)
        """
        n_points = int(n_points)
        if n_points < 3:
            raise ValueError(f"n_points must be at least 3; got {n_points}.")
        half = n_points // 2
        fpr = np.unique(
            np.concatenate(
                [
                    [0.0],
                    np.geomspace(1e-9, 0.05, half),
                    np.linspace(0.05, 1.0, n_points - half),
                ]
            )
        )
        tpr = self.optimal_roc(fpr)
        tpr[0], tpr[-1] = 0.0, 1.0
        return fpr, np.maximum.accumulate(tpr)

    def _check_X(self, X, n_features):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != n_features:
            raise ValueError(
                f"X must have shape (n_samples, {n_features}); got {X.shape}."
            )
        return X


def _check_n_samples(n_samples):
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)):
        raise ValueError(f"n_samples must be a positive integer; got {n_samples!r}.")
    if n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer; got {n_samples}.")
    return int(n_samples)


def _check_fraction(value, name):
    if not (isinstance(value, (int, float, np.floating)) and 0 < value < 1):
        raise ValueError(f"{name} must be a number in (0, 1); got {value!r}.")
    return float(value)
