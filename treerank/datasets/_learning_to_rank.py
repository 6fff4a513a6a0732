"""Synthetic learning-to-rank data: queries, graded relevance, known model.

Learning-to-rank data come as documents grouped by query: a feature matrix
``X``, a relevance grade ``y`` per document and a query id ``qid`` per
document (rows of a query contiguous, the LETOR layout). This module generates
such data from a latent-utility model whose Bayes-optimal rankings are known,
and converts between the two usual encodings of the grouping: one query id per
row (scikit-learn's ``groups=``) and the sizes of consecutive groups
(LightGBM's and XGBoost's ``group=``).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers

import numpy as np
from sklearn.utils import check_random_state

from treerank.metrics._grouping import check_qid, sizes_to_qid

__all__ = ["make_learning_to_rank", "qid_to_sizes", "sizes_to_qid"]


def _check_int(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value}.")
    return int(value)


def _check_nonnegative(value, name):
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not np.isfinite(value)
        or value < 0
    ):
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}.")
    return float(value)


def _check_cutoffs(cutoffs, max_grade):
    if cutoffs is None:
        return np.linspace(0.5, 2.0, max_grade)
    try:
        cutoffs = np.asarray(cutoffs, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("cutoffs must be an array of numbers.") from None
    if cutoffs.shape != (max_grade,):
        raise ValueError(
            f"cutoffs must hold one cut point per grade 1..max_grade, i.e. "
            f"{max_grade} values; got shape {cutoffs.shape}."
        )
    if not np.all(np.isfinite(cutoffs)) or np.any(np.diff(cutoffs) <= 0):
        raise ValueError("cutoffs must be finite and strictly increasing.")
    return cutoffs


def make_learning_to_rank(
    n_queries=100,
    *,
    min_docs=5,
    max_docs=50,
    n_features=10,
    n_informative=4,
    max_grade=4,
    interaction=1.0,
    query_offset=0.5,
    noise=0.5,
    cutoffs=None,
    return_utility=False,
    random_state=None,
):
    """Generate query-grouped documents with graded relevance from a known model.

    Every query ``q`` has ``m_q`` documents, ``m_q`` uniform on
    ``min_docs..max_docs``. The features of every document are independent
    standard normal, ``X ~ N(0, I_p)``. The relevance grade comes from a
    latent utility with a query-specific offset:

    ``f(x) = (x_0 + ... + x_{k-1}) / sqrt(k)
    + c (x_0 x_1 + x_2 x_3 + ...) / sqrt(k // 2)``

    (``k = n_informative``, ``c = interaction``; ``k // 2`` products of
    disjoint pairs of informative features; both sums have variance 1), and

    ``z = (f(x) + b_q + e) / sd``,  ``b_q ~ N(0, query_offset^2)``,
    ``e ~ N(0, noise^2)``,  ``sd = sqrt(1 + c^2 + query_offset^2 + noise^2)``

    so that ``z`` has mean 0 and variance 1. The grade is the number of cut
    points below ``z``: ``y = #{g : z > cutoffs[g - 1]}`` in ``0..max_grade``.

    Parameters
    ----------
    n_queries : int, default=100
        Number of queries.
    min_docs, max_docs : int, default=5, 50
        Range (inclusive) of the number of documents of a query.
    n_features : int, default=10
        Number of features ``p``; features beyond ``n_informative`` are noise.
    n_informative : int, default=4
        Number ``k`` of features that enter ``f``.
    max_grade : int, default=4
        Top relevance grade.
    interaction : float, default=1.0
        Weight ``c`` of the pairwise products (0 gives a linear model, which
        a linear ranker can fit exactly; the products are what trees capture
        and a linear model cannot).
    query_offset : float, default=0.5
        Standard deviation of the query offsets ``b_q``: it moves all the
        documents of a query up or down the grade scale together (some queries
        get many relevant documents, some none), without changing the order
        of the documents inside the query.
    noise : float, default=0.5
        Standard deviation of the document-level noise ``e``.
    cutoffs : array-like of shape (max_grade,), default=None
        Increasing cut points of ``z`` for the grades ``1..max_grade``; None
        means ``np.linspace(0.5, 2.0, max_grade)``. With ``interaction=0``,
        ``z`` is standard normal and ``P(y >= g) = 1 - Phi(cutoffs[g - 1])``:
        30.9% of the documents are relevant (grade >= 1) and 2.3% have the
        top grade 4; the products make ``z`` skewed, and the defaults give
        about 27% relevant and 3.6% top-grade documents.
    return_utility : bool, default=False
        Also return the noise-free utility ``(f(x) + b_q) / sd`` of every
        document.
    random_state : int, RandomState instance or None, default=None
        Seed.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
        ``n_samples = sum_q m_q``.
    y : ndarray of shape (n_samples,), dtype=int
        Relevance grades in ``0..max_grade``.
    qid : ndarray of shape (n_samples,), dtype=int
        Query id of every row: ``0..n_queries - 1``, rows of a query
        contiguous and queries in increasing order.
    utility : ndarray of shape (n_samples,)
        Only if ``return_utility``: the noise-free utility.

    Notes
    -----
    Inside a query the offset ``b_q`` is constant and the grade is a
    non-decreasing function of ``f(x) + e`` with ``e`` independent of ``x``,
    so the expected value of any non-decreasing function of the grade (the
    gain ``2^y - 1``, ``1(y >= 1)``, ...) is non-decreasing in ``f(x)``:
    sorting every query by ``f`` (equivalently by ``utility``) is a
    Bayes-optimal ranking for NDCG@k, DCG@k, precision@k, MAP on
    ``y >= t`` and every other metric whose item utility is non-decreasing
    in the grade. Cost: O(n_samples * n_features).

    See Also
    --------
    qid_to_sizes : Group sizes of a qid array (LightGBM's ``group=``).
    sizes_to_qid : The inverse conversion.

    Examples
    --------
    >>> from treerank.datasets import make_learning_to_rank
    >>> X, y, qid = make_learning_to_rank(20, random_state=0)
    >>> X.shape[0] == y.shape[0] == qid.shape[0], X.shape[1]
    (True, 10)
    >>> int(y.min()), int(y.max()), np.unique(qid).shape[0]
    (0, 4, 20)
    """
    n_queries = _check_int(n_queries, "n_queries", 1)
    min_docs = _check_int(min_docs, "min_docs", 1)
    max_docs = _check_int(max_docs, "max_docs", 1)
    if max_docs < min_docs:
        raise ValueError(
            f"max_docs must be >= min_docs; got min_docs={min_docs}, "
            f"max_docs={max_docs}."
        )
    n_features = _check_int(n_features, "n_features", 1)
    n_informative = _check_int(n_informative, "n_informative", 1)
    if n_informative > n_features:
        raise ValueError(
            f"n_informative must be <= n_features; got n_informative="
            f"{n_informative}, n_features={n_features}."
        )
    max_grade = _check_int(max_grade, "max_grade", 1)
    interaction = _check_nonnegative(interaction, "interaction")
    query_offset = _check_nonnegative(query_offset, "query_offset")
    noise = _check_nonnegative(noise, "noise")
    cutoffs = _check_cutoffs(cutoffs, max_grade)
    if interaction > 0 and n_informative < 2:
        raise ValueError(
            "interaction > 0 needs n_informative >= 2 (products of pairs of "
            "informative features); use interaction=0 for a linear model."
        )

    rng = check_random_state(random_state)
    sizes = rng.randint(min_docs, max_docs + 1, size=n_queries)
    qid = sizes_to_qid(sizes)
    n_samples = int(sizes.sum())
    X = rng.standard_normal((n_samples, n_features))
    offsets = rng.standard_normal(n_queries) * query_offset
    eps = rng.standard_normal(n_samples) * noise

    informative = X[:, :n_informative]
    f = informative.sum(axis=1) / np.sqrt(n_informative)
    n_pairs = n_informative // 2
    if interaction > 0:
        pairs = informative[:, : 2 * n_pairs]
        products = pairs[:, 0::2] * pairs[:, 1::2]
        f += interaction * products.sum(axis=1) / np.sqrt(n_pairs)
    sd = np.sqrt(1.0 + interaction**2 + query_offset**2 + noise**2)
    utility = (f + offsets[qid]) / sd
    z = utility + eps / sd
    y = np.searchsorted(cutoffs, z, side="left").astype(np.int64)
    if return_utility:
        return X, y, qid, utility
    return X, y, qid


def qid_to_sizes(qid, *, return_ids=False):
    """Sizes of the consecutive groups of a qid array (LightGBM's ``group=``).

    Parameters
    ----------
    qid : array-like of shape (n_samples,)
        Query id of every row; the rows of a query must be contiguous (as
        LightGBM and XGBoost require; sort the data by query first otherwise).
    return_ids : bool, default=False
        Also return the query id of every group.

    Returns
    -------
    sizes : ndarray of shape (n_groups,), dtype=intp
        Number of rows of every group, in order of appearance.
    ids : ndarray of shape (n_groups,)
        Only if ``return_ids``: the query id of every group.

    Raises
    ------
    ValueError
        If the rows of a query are not contiguous.

    See Also
    --------
    sizes_to_qid : The inverse conversion.

    Notes
    -----
    ``sizes_to_qid(*qid_to_sizes(qid, return_ids=True))`` gives ``qid`` back.
    O(n_samples) plus the sort of the group ids.

    Examples
    --------
    >>> from treerank.datasets import qid_to_sizes, sizes_to_qid
    >>> qid_to_sizes([7, 7, 2, 2, 2, 5])
    array([2, 3, 1])
    >>> sizes, ids = qid_to_sizes(["b", "b", "a"], return_ids=True)
    >>> sizes_to_qid(sizes, ids)
    array(['b', 'b', 'a'], dtype='<U1')
    """
    qid = np.asarray(qid)
    qid = check_qid(qid, qid.shape[0] if qid.ndim else -1)
    n = qid.shape[0]
    if n == 0:
        sizes, ids = np.zeros(0, dtype=np.intp), qid[:0]
    else:
        change = np.empty(n, dtype=bool)
        change[0] = True
        np.not_equal(qid[1:], qid[:-1], out=change[1:])
        starts = np.flatnonzero(change)
        ids = qid[starts]
        if np.unique(ids).shape[0] != ids.shape[0]:
            values, counts = np.unique(ids, return_counts=True)
            split = values[counts > 1][:3].tolist()
            raise ValueError(
                f"qid is not grouped: the rows of queries {split} are not "
                "contiguous. Sort the rows by query id first (for example with "
                "np.argsort(qid, kind='stable'))."
            )
        sizes = np.diff(np.append(starts, n)).astype(np.intp)
    if return_ids:
        return sizes, ids
    return sizes
