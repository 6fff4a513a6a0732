"""Multipartite ranking metrics: the volume under the ROC surface (VUS).

With ``K >= 2`` ordered grades, a scorer ``s`` ranks well when a sample of a
higher grade tends to score higher. The volume under the ROC surface is

.. math::

    \\mathrm{VUS}(s) = P\\big(s(X_1) < s(X_2) < \\dots < s(X_K)\\big),

where ``X_k`` is drawn from grade ``k`` (lowest first), independently. For
``K = 2`` it is the ROC AUC. Ties are counted as the expectation over a
uniformly random order of tied items: a tuple whose scores are
non-decreasing in the grade, with runs of ``m_1, m_2, ...`` equal scores,
counts ``1 / (m_1! m_2! ...)``; any other tuple counts 0.

The computation sorts the scores once and runs a dynamic program over the
groups of equal scores: ``O(n log n + n K^2)`` time and ``O(n K)`` memory.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import math

import numpy as np

from treerank.utils._graded_target import check_graded_target
from treerank.utils.validation import check_sample_weight, check_scores

__all__ = [
    "cumulative_auc_scores",
    "volume_under_surface",
    "volume_under_surface_from_counts",
]


def _grade_masses(y_true, y_score, labels, sample_weight):
    """Validated inputs as a (K, G) array of weights per grade and score group.

    Columns are the distinct scores in increasing order.
    """
    codes, grades = check_graded_target(y_true, labels=labels, input_name="y_true")
    y_score = check_scores(y_score, codes.shape[0])
    weight = check_sample_weight(sample_weight, codes.shape[0])
    values, group = np.unique(y_score, return_inverse=True)
    n_grades, n_groups = grades.shape[0], values.shape[0]
    mass = np.bincount(
        codes * n_groups + group.ravel(),
        weights=weight,
        minlength=n_grades * n_groups,
    ).reshape(n_grades, n_groups)
    totals = mass.sum(axis=1)
    if np.any(totals <= 0):
        raise ValueError(
            f"the grades {grades[totals <= 0].tolist()} have zero total "
            "sample_weight: every grade needs a positive weight."
        )
    return mass, totals


def _exclusive_cumsum(values):
    out = np.cumsum(values)
    out[1:] = out[:-1]
    out[0] = 0 * out[0]
    return out


def _vus_from_masses(prob):
    """VUS of a (K, G) array of per-grade probabilities over score groups.

    ``F[k][g]`` is the probability that grades ``1..k`` are drawn in
    non-decreasing score order, weighted by the tie-breaking factors, with
    grade ``k`` in group ``g`` and *ending* a run of equal scores. A run of
    grades ``j..k`` in group ``g`` follows a state ending strictly below
    ``g``: ``F[k][g] = sum_j prod_{i=j..k} p[i][g] / (k-j+1)! *
    sum_{g' < g} F[j-1][g']`` (with ``sum F[0] = 1``). Works on float or
    object (:class:`fractions.Fraction`) arrays.
    """
    n_grades, n_groups = prob.shape
    one = prob[0, 0] * 0 + 1
    below = [np.full(n_groups, one, dtype=prob.dtype)]
    last = None
    for k in range(n_grades):
        state = np.zeros(n_groups, dtype=prob.dtype)
        run = np.full(n_groups, one, dtype=prob.dtype)
        for j in range(k, -1, -1):  # the run of equal scores is grades j..k
            run = run * prob[j]
            state = state + run * below[j] / math.factorial(k - j + 1)
        below.append(_exclusive_cumsum(state))
        last = state
    return last.sum()


def volume_under_surface(y_true, y_score, *, labels=None, sample_weight=None):
    """Volume under the ROC surface of a scorer for ``K >= 2`` ordered grades.

    The probability that one sample drawn from each grade is ranked in the
    order of the grades, ``P(s(X_1) < s(X_2) < ... < s(X_K))`` with ``X_1``
    from the lowest grade, under the (weighted) empirical distribution of
    every grade. Ties count as the expectation over a uniformly random
    tie-breaking, so for two grades it is the ROC AUC with ties counted one
    half. A random scorer has VUS ``1 / K!``; a perfect one 1.

    Read more in the :ref:`User Guide <multipartite_metrics>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Grades: numbers or booleans (higher is better), or any values ordered
        by ``labels``.
    y_score : array-like of shape (n_samples,)
        Scores, higher meaning a higher grade.
    labels : array-like of shape (n_grades,), default=None
        The grades from the lowest to the highest. None: the sorted distinct
        values of ``y_true``. Every grade of ``labels`` must be present.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights; a sample of weight ``w`` counts as ``w``
        copies (an integer weight gives the value of the repeated rows).

    Returns
    -------
    vus : float
        In ``[0, 1]``.

    Raises
    ------
    ValueError
        Fewer than two grades, a grade of ``labels`` absent (or of zero total
        weight), NaN or infinite scores or grades, lengths that differ.

    See Also
    --------
    cumulative_auc_scores : The AUCs of the ``K - 1`` problems "grade >= k".
    roc_auc_score : The two-grade case.

    Notes
    -----
    The scores are sorted once and grouped into distinct values
    ``v_1 < ... < v_G``; with ``p_k(g)`` the (weighted) fraction of grade
    ``k`` at value ``v_g``, a dynamic program over the groups sums
    ``prod_k p_k(g_k)`` over the non-decreasing assignments
    ``g_1 <= ... <= g_K``, each divided by ``m!`` for every run of ``m``
    grades assigned the same value: ``O(n log n + n K^2)`` operations.

    References
    ----------
    .. [1] D. Mossman, "Three-way ROCs", Medical Decision Making 19(1), 1999.
    .. [2] S. Clémençon, S. Robbiano and N. Vayatis, "Ranking data with
       ordinal labels: optimality and pairwise aggregation", Machine
       Learning 91(1), 2013.

    Examples
    --------
    >>> from treerank.metrics import volume_under_surface
    >>> volume_under_surface([0, 1, 2], [0.1, 0.5, 0.9])
    1.0
    >>> volume_under_surface([0, 1, 2, 2], [0.1, 0.5, 0.5, 0.9])
    0.75
    >>> volume_under_surface([0, 0, 1, 1], [0.2, 0.6, 0.6, 0.9])  # the ROC AUC
    0.875
    """
    mass, totals = _grade_masses(y_true, y_score, labels, sample_weight)
    value = float(_vus_from_masses(mass / totals[:, None]))
    return min(1.0, max(0.0, value))


def volume_under_surface_from_counts(counts):
    """VUS of a piecewise-constant scorer from its bucket counts per grade.

    A ranking tree (or any scorer with finitely many values) sorts the data
    into buckets ranked best first; samples in one bucket are tied. This is
    :func:`volume_under_surface` of such a scorer, computed from the
    (weighted) number of samples of every grade in every bucket, without
    the samples: the multipartite counterpart of
    :func:`roc_curve_from_counts`.

    Parameters
    ----------
    counts : array-like of shape (n_buckets, n_grades)
        ``counts[b, k]``: weight of grade ``k`` (lowest grade first) in
        bucket ``b`` (best bucket first). Non-negative, every grade with a
        positive total.

    Returns
    -------
    vus : float

    See Also
    --------
    volume_under_surface : The same from labels and scores.

    Examples
    --------
    >>> from treerank.metrics import volume_under_surface_from_counts
    >>> # best bucket: grade 2 only; second: one of grade 1 and one of grade 2;
    >>> # last: grade 0
    >>> volume_under_surface_from_counts([[0, 0, 1], [0, 1, 1], [1, 0, 0]])
    0.75
    """
    counts = np.asarray(counts, dtype=np.float64)
    if counts.ndim != 2:
        raise ValueError(
            "counts must be a 2-d array (n_buckets, n_grades); got shape "
            f"{counts.shape}."
        )
    if counts.shape[1] < 2:
        raise ValueError(
            f"counts must have at least two grades (columns); got {counts.shape[1]}."
        )
    if not np.all(np.isfinite(counts)) or np.any(counts < 0):
        raise ValueError("counts must be finite and non-negative.")
    totals = counts.sum(axis=0)
    if np.any(totals <= 0):
        raise ValueError(
            f"every grade needs a positive total count; got column totals "
            f"{totals.tolist()}."
        )
    # buckets best first -> score groups in increasing order
    value = float(_vus_from_masses((counts[::-1] / totals).T.copy()))
    return min(1.0, max(0.0, value))


def cumulative_auc_scores(y_true, y_score, *, labels=None, sample_weight=None):
    """ROC AUCs of the ``K - 1`` bipartite problems "grade >= k" of ordered grades.

    With grades ``g_0 < g_1 < ... < g_{K-1}``, problem ``k`` (``k = 1, ...,
    K - 1``) has the samples of grade ``>= g_k`` as positives and the others
    as negatives; its AUC counts ties one half. These are the problems a
    multipartite ranker can be built from (a scorer optimal for every
    ``k`` at once is optimal for the VUS).

    Read more in the :ref:`User Guide <multipartite_metrics>`.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Grades (see :func:`volume_under_surface`).
    y_score : array-like of shape (n_samples,)
        Scores, higher meaning a higher grade.
    labels : array-like of shape (n_grades,), default=None
        The grades from the lowest to the highest (default: the sorted
        distinct values of ``y_true``).
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative sample weights.

    Returns
    -------
    aucs : ndarray of shape (n_grades - 1,)
        ``aucs[k - 1]`` is the AUC of "grade >= g_k" against "grade < g_k".

    See Also
    --------
    volume_under_surface : The probability of the full order.

    Examples
    --------
    >>> from treerank.metrics import cumulative_auc_scores
    >>> cumulative_auc_scores([0, 1, 2, 2], [0.1, 0.5, 0.5, 0.9])
    array([1.   , 0.875])
    """
    mass, _ = _grade_masses(y_true, y_score, labels, sample_weight)
    # positives of problem k: grades >= k; pos[k-1] and neg[k-1] are per group
    upper = np.cumsum(mass[::-1], axis=0)[::-1][1:]
    lower = np.cumsum(mass, axis=0)[:-1]
    below = np.cumsum(lower, axis=1) - lower  # negatives strictly below
    pairs = upper.sum(axis=1) * lower.sum(axis=1)
    aucs = (upper * (below + 0.5 * lower)).sum(axis=1) / pairs
    return np.clip(aucs, 0.0, 1.0)
