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
    # the interior points of the walks (the endpoints are z and x)
    per_row = n_permutations * 2 * (n_active - 1)
    rows_per_batch = max(1, _BATCH_VALUES // max(1, per_row * n_features))
    for start in range(0, n_rows, rows_per_batch):
        stop = min(n_rows, start + rows_per_batch)
        orders = all_orders[start:stop]  # (rows, samples, n_active)
        walks = np.concatenate([orders, orders[:, :, ::-1]], axis=1)
        z_rows = np.concatenate([draws[start:stop]] * 2, axis=1)  # (rows, 2 s)
        hybrids = Z[z_rows][:, :, None, :].repeat(n_active - 1, axis=2)
        # step t (1-based) has the first t features of the walk from x
        switched = np.zeros(
            (stop - start, 2 * n_permutations, n_active - 1, n_features), dtype=bool
        )
        steps = np.arange(n_active - 1)
        for t in range(n_active - 1):
            feature = active[walks[:, :, t]]  # (rows, 2 s)
            switched[:, :, steps[t:], :] |= (
                np.arange(n_features)[None, None, :] == feature[:, :, None]
            )[:, :, None, :]
        x_block = X[start:stop][:, None, None, :]
        hybrids = np.where(switched, x_block, hybrids)
        flat = hybrids.reshape(-1, n_features)
        inner = score(flat).reshape(stop - start, 2 * n_permutations, n_active - 1)
        z_walk = z_scores[z_rows]
        path = np.concatenate(
            [
                z_walk[:, :, None],
                inner,
                x_scores[start:stop, None, None].repeat(2 * n_permutations, axis=1),
            ],
            axis=2,
        )  # (rows, 2 s, n_active + 1)
        steps_delta = np.diff(path, axis=2)  # the change at each switch
        for r in range(stop - start):
            contributions = np.zeros((2 * n_permutations, n_active))
            np.put_along_axis(contributions, walks[r], steps_delta[r], axis=1)
            # antithetic pairs: the mean of a walk and its reverse
            pairs = 0.5 * (
                contributions[:n_permutations] + contributions[n_permutations:]
            )
            corrected = _corrected(pairs, z_scores[draws[start + r]], z_mean)
            values[start + r, active] = corrected.mean(axis=0)
            if n_permutations > 1:
                errors[start + r, active] = corrected.std(axis=0, ddof=1) / np.sqrt(
                    n_permutations
                )
            else:
                errors[start + r, active] = np.inf
    return values, errors
