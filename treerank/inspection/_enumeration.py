"""Exact interventional Shapley values of any score, over all coalitions.

The definition, computed as written: for every coalition S of the features
the score may read, ``v(S)`` is the mean score of the hybrid points
``(x_S, z_~S)`` over the background rows z, and

    phi_j = sum over S not containing j of
            |S|! (n - |S| - 1)! / n! * (v(S + {j}) - v(S)).

It costs ``2^n * n_background`` evaluations of the score per row, so it is
limited to a few features (at most :data:`MAX_ENUMERATED_FEATURES`); it is the
reference the other algorithms are checked against, and an exact method for
models whose score is not a sum over trees when the features are few.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from math import factorial

import numpy as np

__all__ = [
    "MAX_ENUMERATED_FEATURES",
    "coalition_values",
    "enumerated_values",
    "shapley_from_coalitions",
]

MAX_ENUMERATED_FEATURES = 16
"""Most features (read by the model) that coalitions are enumerated over."""

_BATCH_VALUES = 1 << 22


def coalition_values(score, x, Z, active):
    """``v(S)`` for every coalition S of the features ``active``.

    Parameters
    ----------
    score : callable
        Maps a float64 matrix of rows to scores.
    x : ndarray of shape (n_features,)
    Z : ndarray of shape (n_background, n_features)
    active : ndarray of int of shape (n_active,)

    Returns
    -------
    v : ndarray of shape (2 ** n_active,)
        ``v[mask]`` for the coalition of the features ``active[i]`` whose bit
        i is set in ``mask``.
    """
    n_active = active.shape[0]
    n_background, n_features = Z.shape
    masks = np.arange(2**n_active)
    members = (masks[:, None] >> np.arange(n_active)[None, :]) & 1  # (2^a, a)
    take_x = np.zeros((masks.shape[0], n_features), dtype=bool)
    take_x[:, active] = members.astype(bool)
    v = np.empty(masks.shape[0])
    per_mask = n_background * n_features
    batch = max(1, _BATCH_VALUES // max(1, per_mask))
    for start in range(0, masks.shape[0], batch):
        stop = min(masks.shape[0], start + batch)
        hybrids = np.where(take_x[start:stop, None, :], x[None, None, :], Z[None])
        scores = score(hybrids.reshape(-1, n_features))
        v[start:stop] = scores.reshape(stop - start, n_background).mean(axis=1)
    return v


def shapley_from_coalitions(v, n_active):
    """Shapley values of the game ``v`` (indexed by bit masks) of n players.

    Parameters
    ----------
    v : ndarray of shape (2 ** n_active,)
    n_active : int

    Returns
    -------
    phi : ndarray of shape (n_active,)

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.inspection._enumeration import shapley_from_coalitions
    >>> # v(S) = 1 when both players are in S: each gets 1/2
    >>> shapley_from_coalitions(np.array([0.0, 0.0, 0.0, 1.0]), 2)
    array([0.5, 0.5])
    """
    masks = np.arange(2**n_active)
    sizes = np.array([bin(m).count("1") for m in range(2**n_active)])
    weight = np.array(
        [
            factorial(s) * factorial(n_active - s - 1) / factorial(n_active)
            for s in range(n_active)
        ]
    )
    phi = np.empty(n_active)
    for j in range(n_active):
        without = masks[(masks >> j) & 1 == 0]
        phi[j] = np.sum(weight[sizes[without]] * (v[without | (1 << j)] - v[without]))
    return phi


def enumerated_values(score, X, Z, *, active):
    """Exact interventional Shapley values of ``score`` for every row of X.

    Parameters
    ----------
    score : callable
        Maps a float64 matrix of rows (as the model reads them) to scores.
    X : ndarray of float64 of shape (n_samples, n_features)
    Z : ndarray of float64 of shape (n_background, n_features)
    active : ndarray of int
        The features the score may read (at most
        :data:`MAX_ENUMERATED_FEATURES`); the others get 0.

    Returns
    -------
    values : ndarray of shape (n_samples, n_features)
    """
    values = np.zeros(X.shape)
    n_active = active.shape[0]
    if n_active == 0:
        return values
    for i in range(X.shape[0]):
        v = coalition_values(score, X[i], Z, active)
        values[i, active] = shapley_from_coalitions(v, n_active)
    return values
