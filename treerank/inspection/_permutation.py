"""Monte Carlo interventional Shapley values of any score, with standard errors.

For a score that is not a sum over trees (the Kendall median of a forest, or
trees whose rules are not axis-aligned), the interventional Shapley values

    phi_j(x) = (1/N) sum_i phi_j(x; z_i)

(the mean over the background rows of the values of the single-reference
games ``v_z(S) = f(x_S, z_~S)``) are estimated by sampling. One sample draws a
background row z and an order pi of the features, and walks from z to x,
switching the features to x's values in the order pi: the change of the score
at each step is the marginal contribution of the feature switched, and the
changes along one walk add up to ``f(x) - f(z)``. The mean over the orders and
the background rows of a feature's marginal contributions is its Shapley
value (Castro, Gomez and Tejada, 2009; Strumbelj and Kononenko, 2014).

Variance reductions:

- antithetic orders: each sample walks pi and its reverse from the same z
  (a feature early in one walk is late in the other) and averages them;
- stratified background rows: the samples of a row take distinct background
  rows as long as there are enough (every row once before any twice);
- a control variate for the background: ``f(z)`` has the known mean ``f_bar``
  over the background, so each sample's values are corrected by
  ``beta_j (f(z) - f_bar)`` with ``beta_j`` the regression coefficient of the
  feature's contributions on ``f(z)`` over the row's samples. Since a
  sample's contributions add up to ``f(x) - f(z)``, the coefficients add up to
  -1 and every corrected sample adds up to ``f(x) - f_bar``: the estimates are
  efficient exactly, for every row, whatever the number of samples.

The standard error of each estimate is the standard deviation of its
corrected samples over the square root of their number: the samples of a row
are independent, so the error is about normal with that scale. A feature the
score never reads, or whose value is the same in x and every sampled z,
gets exactly 0.

Cost: ``n_permutations * 2 * (n_features - 1)`` evaluations of the score per
row (the endpoints x and z are scored once).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import hashlib

import numpy as np

__all__ = ["permutation_values", "row_generator"]

_BATCH_VALUES = 1 << 22  # hybrid-matrix entries scored at a time


def row_generator(seed, x):
    """A random generator of its own for a row: seeded by ``seed`` and its values.

    A row gets the same draws wherever it is in X (the values of -0.0 and
    0.0, and of all NaN, are made equal first), so its estimate depends on
    the row alone, as its score does.
    """
    canonical = np.where(np.isnan(x), np.nan, x + 0.0)
    digest = hashlib.blake2b(canonical.tobytes(), digest_size=16).digest()
    words = np.frombuffer(digest, dtype=np.uint32).tolist()
    return np.random.default_rng([int(seed), *words])


def _draws(generator, n_samples, n_background, n_active):
    """Background rows (stratified) and feature orders of one row's samples."""
    rounds = -(-n_samples // n_background)
    rows = np.concatenate([generator.permutation(n_background) for _ in range(rounds)])
    orders = np.argsort(generator.random((n_samples, n_active)), axis=1)
    return rows[:n_samples], orders


def _corrected(contributions, z_scores, z_mean):
    """Control-variate correction of one row's samples.

    ``contributions`` has shape (n_samples, n_active) and each of its rows
    adds up to ``f(x) - z_scores[s]``; the corrected rows add up to
    ``f(x) - z_mean``.
    """
    n_samples = contributions.shape[0]
    centered_z = z_scores - z_scores.mean()
    spread = float(centered_z @ centered_z)
    if n_samples > 1 and spread > 0.0:
        beta = centered_z @ (contributions - contributions.mean(axis=0)) / spread
    else:  # no spread in f(z): share the correction equally
        beta = np.full(contributions.shape[1], -1.0 / contributions.shape[1])
    return contributions - np.outer(z_scores - z_mean, beta)


def _inner_scores(score, X, Z, walks, z_rows, active):
    """Scores of the interior points of every walk, in bounded batches.

    Walk w of row i starts at ``Z[z_rows[i, w]]`` and switches the features
    ``active[walks[i, w]]`` to the values of ``X[i]`` one at a time; its
    interior points are those after 1 to ``n_active - 1`` switches (the
    endpoints are z and x, scored once). The hybrid rows are built for as
    many walks at a time as fit in :data:`_BATCH_VALUES` entries.

    Returns
    -------
    inner : ndarray of shape (n_rows, n_walks, n_active - 1)
    """
    n_rows, n_walks, n_active = walks.shape
    n_features = X.shape[1]
    inner = np.empty((n_rows, n_walks, n_active - 1))
    flat_walks = walks.reshape(-1, n_active)
    flat_z = z_rows.reshape(-1)
    owner = np.repeat(np.arange(n_rows), n_walks)
    per_walk = (n_active - 1) * n_features
    batch = max(1, _BATCH_VALUES // max(1, per_walk))
    out = inner.reshape(-1, n_active - 1)
    for first in range(0, flat_walks.shape[0], batch):
        chunk = slice(first, min(flat_walks.shape[0], first + batch))
        size = chunk.stop - chunk.start
        # switched[w, t, k]: feature k is from x after t + 1 switches of walk w
        position = np.full((size, n_features), n_active, dtype=np.intp)
        features = active[flat_walks[chunk]]  # (size, n_active)
        np.put_along_axis(
            position,
            features,
            np.broadcast_to(np.arange(n_active), features.shape),
            axis=1,
        )
        switched = position[:, None, :] <= np.arange(n_active - 1)[None, :, None]
        hybrids = np.where(
            switched, X[owner[chunk]][:, None, :], Z[flat_z[chunk]][:, None, :]
        )
        out[chunk] = score(hybrids.reshape(-1, n_features)).reshape(size, -1)
    return inner


def permutation_values(score, X, Z, *, active, z_scores, z_mean, n_permutations, seed):
    """Estimated interventional Shapley values of ``score`` and their errors.

    Parameters
    ----------
    score : callable
        Maps a float64 matrix of rows (as the model reads them) to scores.
    X : ndarray of float64 of shape (n_samples, n_features)
        The rows to explain.
    Z : ndarray of float64 of shape (n_background, n_features)
        The background sample.
    active : ndarray of int
        The features the score may read; the others get 0.
    z_scores : ndarray of shape (n_background,)
        ``score(Z)``.
    z_mean : float
        The base value, ``z_scores.mean()``.
    n_permutations : int
        Samples per row (each an order and its reverse, from one background
        row).
    seed : int
        Seeds each row's draws, with the row's values (:func:`row_generator`).

    Returns
    -------
    values : ndarray of shape (n_samples, n_features)
    std_errors : ndarray of shape (n_samples, n_features)
    """
    n_rows, n_features = X.shape
    values = np.zeros((n_rows, n_features))
    errors = np.zeros((n_rows, n_features))
    n_active = active.shape[0]
    if n_rows == 0:
        return values, errors
    x_scores = score(X)
    if n_active == 0:
        return values, errors
    if n_active == 1:  # one feature: its value is f(x) - f_bar, exactly
        values[:, active[0]] = x_scores - z_mean
        return values, errors
    n_background = Z.shape[0]
    draws = np.empty((n_rows, n_permutations), dtype=np.intp)
    all_orders = np.empty((n_rows, n_permutations, n_active), dtype=np.intp)
    for i in range(n_rows):
        draws[i], all_orders[i] = _draws(
            row_generator(seed, X[i]), n_permutations, n_background, n_active
        )
    # every row's walks: an order and its reverse from each drawn z
    walks = np.concatenate([all_orders, all_orders[:, :, ::-1]], axis=1)
    z_rows = np.concatenate([draws, draws], axis=1)  # (rows, 2 s)
    inner = _inner_scores(score, X, Z, walks, z_rows, active)
    path = np.concatenate(
        [
            z_scores[z_rows][:, :, None],
            inner,
            np.repeat(x_scores[:, None, None], 2 * n_permutations, axis=1),
        ],
        axis=2,
    )  # (rows, 2 s, n_active + 1): the score along each walk
    steps_delta = np.diff(path, axis=2)  # the change at each switch
    for r in range(n_rows):
        contributions = np.zeros((2 * n_permutations, n_active))
        np.put_along_axis(contributions, walks[r], steps_delta[r], axis=1)
        # antithetic pairs: the mean of a walk and its reverse
        pairs = 0.5 * (contributions[:n_permutations] + contributions[n_permutations:])
        corrected = _corrected(pairs, z_scores[draws[r]], z_mean)
        values[r, active] = corrected.mean(axis=0)
        errors[r, active] = corrected.std(axis=0, ddof=1) / np.sqrt(n_permutations)
    return values, errors
