"""The Mann-Whitney test written with the AUC: exact, asymptotic or permutation.

The statistic is the AUC of scores ``y`` against scores ``x``,
``U / (n_x n_y)`` with ``U = #{(i, j): y_j > x_i} + #{y_j = x_i} / 2``. Under
the null hypothesis the pooled scores are exchangeable (every split of them
into ``n_x`` and ``n_y`` values is equally likely), which gives three
p-values:

- ``"exact"``: the exact permutation distribution of ``U`` given the pooled
  scores, ties included (midranks), by a dynamic program over the pooled
  items: ``O(N n_small n_x n_y)`` operations for ``N = n_x + n_y``;
- ``"asymptotic"``: the normal approximation with the tie-corrected variance
  and a continuity correction of 1/2 (as :func:`scipy.stats.mannwhitneyu`);
- ``"permutation"``: a Monte Carlo estimate of the exact p-value from random
  relabelings, ``(1 + #{U_b >= U}) / (1 + B)``, a valid p-value for any B.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy import stats
from sklearn.utils import check_random_state

from treerank.utils.validation import check_scores

__all__ = ["AUCTestResult", "mann_whitney_auc_test"]

_ALTERNATIVES = ("greater", "less", "two-sided")
_METHODS = ("auto", "exact", "asymptotic", "permutation")
# "auto" uses the exact distribution when n_x * n_y is at most this (the
# dynamic program then takes at most ~2.5e7 elementary operations)
EXACT_MAX_PAIRS = 2500
# random relabelings drawn per chunk
_CHUNK_ELEMENTS = 1 << 22


@dataclass(frozen=True)
class AUCTestResult:
    """Result of :func:`mann_whitney_auc_test`.

    Attributes
    ----------
    statistic : float
        The AUC of ``y`` against ``x`` (``U / (n_x n_y)``, ties one half).
    pvalue : float
        The p-value for the chosen alternative.
    method : {"exact", "asymptotic", "permutation"}
        How the p-value was computed.
    alternative : {"greater", "less", "two-sided"}
        The alternative hypothesis.
    n_permutations : int or None
        Number of random relabelings (``method="permutation"`` only).
    """

    statistic: float
    pvalue: float
    method: str
    alternative: str
    n_permutations: int | None = None


def _check_choice(value, name, options):
    if value not in options:
        raise ValueError(f"{name} must be one of {options}; got {value!r}.")
    return value


def _check_n_permutations(n_permutations):
    if (
        isinstance(n_permutations, bool)
        or not isinstance(n_permutations, numbers.Integral)
        or n_permutations < 1
    ):
        raise ValueError(
            "n_permutations must be a positive integer or None; got "
            f"{n_permutations!r}."
        )
    return int(n_permutations)


def _doubled_midranks(pooled):
    """Twice the midranks (1-based) of the pooled scores: integers."""
    return np.rint(2 * stats.rankdata(pooled, method="average")).astype(np.int64)


def _exact_null_pmf(ranks2, n_small):
    """Exact null distribution of 2U of a random subset of ``n_small`` items.

    ``ranks2`` are the doubled midranks of all pooled items; a uniformly
    random subset of ``n_small`` of them is drawn item by item (item ``i`` is
    taken with probability ``(n_small - j) / (N - i)`` when ``j`` are already
    taken) and the sum of their doubled ranks is accumulated; ``2U`` is that
    sum minus ``n_small (n_small + 1)``.

    Returns the probability mass function of ``2U`` on
    ``0..2 n_small (N - n_small)``.
    """
    n_total = ranks2.shape[0]
    size = int(2 * n_small * n_total + 1)  # doubled rank sums are < 2 n_small N
    prob = np.zeros((n_small + 1, size))
    prob[0, 0] = 1.0
    for i, r2 in enumerate(ranks2):
        remaining = n_total - i
        r2 = int(r2)
        # rows from high to low, so that row j is read before it is rescaled
        for j in range(min(i, n_small - 1), -1, -1):
            take = (n_small - j) / remaining
            row = prob[j]
            prob[j + 1, r2:] += take * row[: size - r2]
            prob[j] = (1 - take) * row
    offset = n_small * (n_small + 1)
    n_large = n_total - n_small
    return prob[n_small, offset : offset + 2 * n_small * n_large + 1]


def _exact_pvalue(ranks2, n_x, n_y, u2, alternative):
    """Exact p-value of doubled U (of y against x) by the dynamic program."""
    if n_y <= n_x:
        pmf = _exact_null_pmf(np.concatenate([ranks2[n_x:], ranks2[:n_x]]), n_y)
        values = np.arange(pmf.shape[0])  # doubled U of y
    else:
        pmf = _exact_null_pmf(ranks2, n_x)
        values = 2 * n_x * n_y - np.arange(pmf.shape[0])  # doubled U of y
    upper = float(pmf[values >= u2].sum())
    lower = float(pmf[values <= u2].sum())
    return _combine_tails(upper, lower, alternative)


def _combine_tails(upper, lower, alternative):
    if alternative == "greater":
        p = upper
    elif alternative == "less":
        p = lower
    else:
        p = 2 * min(upper, lower)
    return min(1.0, max(0.0, p))


def _asymptotic_pvalue(pooled, n_x, n_y, u, alternative):
    n_total = n_x + n_y
    _, counts = np.unique(pooled, return_counts=True)
    tie_term = float(np.sum(counts.astype(np.float64) ** 3 - counts))
    variance = n_x * n_y / 12 * ((n_total + 1) - tie_term / (n_total * (n_total - 1)))
    mean = n_x * n_y / 2
    if variance <= 0:  # every score tied: U equals its mean
        return 1.0
    sd = math.sqrt(variance)
    upper = stats.norm.sf((u - mean - 0.5) / sd)
    lower = stats.norm.cdf((u - mean + 0.5) / sd)
    return _combine_tails(float(upper), float(lower), alternative)


def _permutation_pvalue(ranks2, n_x, n_y, u2, alternative, n_permutations, rng):
    n_total = n_x + n_y
    center2 = n_x * n_y  # doubled null mean of U
    offset2 = n_y * (n_y + 1)  # doubled n_y (n_y + 1) / 2
    hits_upper = hits_lower = hits_abs = 0
    step = max(1, _CHUNK_ELEMENTS // n_total)
    for start in range(0, n_permutations, step):
        count = min(step, n_permutations - start)
        # the first n_y positions of a random permutation form the y sample
        order = np.argsort(rng.random_sample((count, n_total)), axis=1)[:, :n_y]
        u2_perm = ranks2[order].sum(axis=1) - offset2
        hits_upper += int(np.sum(u2_perm >= u2))
        hits_lower += int(np.sum(u2_perm <= u2))
        hits_abs += int(np.sum(np.abs(u2_perm - center2) >= abs(u2 - center2)))
    if alternative == "greater":
        hits = hits_upper
    elif alternative == "less":
        hits = hits_lower
    else:
        hits = hits_abs
    return (1 + hits) / (1 + n_permutations)


def mann_whitney_auc_test(
    scores_x,
    scores_y,
    *,
    alternative="greater",
    method="auto",
    n_permutations=None,
    random_state=None,
):
    """Test whether scores of ``y`` tend to exceed those of ``x`` (Mann-Whitney).

    The statistic is the AUC of ``scores_y`` (positives) against
    ``scores_x`` (negatives), ties counting one half: the Mann-Whitney
    ``U`` divided by ``n_x n_y``. Under the null hypothesis that the pooled
    scores are exchangeable, the AUC is 1/2 on average.

    Read more in the :ref:`User Guide <two_sample>`.

    Parameters
    ----------
    scores_x : array-like of shape (n_x,)
        Scores of the first sample (the "negatives").
    scores_y : array-like of shape (n_y,)
        Scores of the second sample (the "positives").
    alternative : {"greater", "less", "two-sided"}, default="greater"
        ``"greater"``: the scores of ``y`` tend to be larger (AUC > 1/2).
    method : {"auto", "exact", "asymptotic", "permutation"}, default="auto"
        ``"exact"``: the exact permutation distribution given the pooled
        scores, ties included; ``"asymptotic"``: the normal approximation
        with tie correction and continuity correction; ``"permutation"``:
        ``n_permutations`` random relabelings (default 9999). ``"auto"`` is
        ``"permutation"`` when ``n_permutations`` is given, else ``"exact"``
        when ``n_x * n_y <= 2500``, else ``"asymptotic"``.
    n_permutations : int, default=None
        Number of random relabelings of the permutation p-value.
    random_state : int, RandomState instance or None, default=None
        Seed of the relabelings.

    Returns
    -------
    result : AUCTestResult
        ``statistic`` (the AUC), ``pvalue``, ``method``, ``alternative``.

    See Also
    --------
    two_sample_test : Learns the scores that this test compares.
    scipy.stats.mannwhitneyu : The same test on ``U``.

    Examples
    --------
    >>> from treerank.inference import mann_whitney_auc_test
    >>> result = mann_whitney_auc_test([0.1, 0.4, 0.35], [0.8, 0.5, 0.45])
    >>> result.statistic, result.method
    (1.0, 'exact')
    >>> round(result.pvalue, 4)  # 1 / C(6, 3)
    0.05
    """
    _check_choice(alternative, "alternative", _ALTERNATIVES)
    _check_choice(method, "method", _METHODS)
    x = check_scores(scores_x, input_name="scores_x")
    y = check_scores(scores_y, input_name="scores_y")
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(
            "scores_x and scores_y must both be non-empty; got "
            f"{x.shape[0]} and {y.shape[0]} scores."
        )
    if n_permutations is not None:
        n_permutations = _check_n_permutations(n_permutations)
        if method in ("exact", "asymptotic"):
            raise ValueError(
                f"n_permutations is given but method={method!r}: leave "
                "n_permutations=None, or use method='permutation' (or 'auto')."
            )
    if method == "auto":
        if n_permutations is not None:
            method = "permutation"
        elif x.shape[0] * y.shape[0] <= EXACT_MAX_PAIRS:
            method = "exact"
        else:
            method = "asymptotic"
    if method == "permutation" and n_permutations is None:
        n_permutations = 9999
    n_x, n_y = x.shape[0], y.shape[0]
    pooled = np.concatenate([x, y])
    ranks2 = _doubled_midranks(pooled)
    u2 = int(ranks2[n_x:].sum()) - n_y * (n_y + 1)  # doubled U of y
    statistic = u2 / (2 * n_x * n_y)
    if method == "exact":
        pvalue = _exact_pvalue(ranks2, n_x, n_y, u2, alternative)
    elif method == "asymptotic":
        pvalue = _asymptotic_pvalue(pooled, n_x, n_y, u2 / 2, alternative)
    else:
        rng = check_random_state(random_state)
        pvalue = _permutation_pvalue(
            ranks2, n_x, n_y, u2, alternative, n_permutations, rng
        )
    return AUCTestResult(
        statistic=float(statistic),
        pvalue=float(pvalue),
        method=method,
        alternative=alternative,
        n_permutations=n_permutations if method == "permutation" else None,
    )
