"""Leaves of a ranking tree or forest as sparse one-hot features.

The leaves of a fitted :class:`~treerank.TreeRank` partition the input space;
a :class:`~treerank.RankingForest` gives one partition per tree. Encoding a
document by the leaf it falls in, in every tree, gives a sparse design matrix
with one block of columns per tree and exactly one 1 per block. A linear model
on it assigns a score to every leaf (the sum over the trees of the scores of
the leaves containing the document); fitted with a list surrogate of
:mod:`treerank.surrogates` (SLAM with NDCG@k weights, the squared loss on
normalized gains, ...), the leaf scores are learned for the target metric and
from the graded labels, while the partition was learned for bipartite ranking.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numbers

import numpy as np
import sklearn
from scipy import sparse
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.utils import get_tags
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted

from treerank.ensemble import RankingForest
from treerank.tree import TreeRank
from treerank.utils._sklearn_compat import validate_data
from treerank.utils.validation import check_bipartite_target

__all__ = ["LeafEmbedding"]

# rows are routed through the trees in chunks of about this many (row, tree)
# entries, so that the dense (rows x trees) leaf-rank matrix of the estimator
# is never held for all rows at once
_CHUNK_ENTRIES = 1 << 21


def _check_input(embedding, X, reset):
    """``X`` checked for its shape and columns, its values left to the estimator.

    The estimator validates the values (missing values, infinities, category
    dtypes), so they are kept as they are: a data frame is passed unchanged
    (its column dtypes say which features are categorical), an array keeps its
    dtype, and a sparse matrix becomes CSR (whose rows slice for the chunks of
    ``transform``). Complex values and 1-D or 3-D input are refused here, as in
    scikit-learn.
    """
    if hasattr(X, "iloc"):
        validate_data(embedding, X, reset=reset, skip_check_array=True)
        return X
    X = validate_data(
        embedding,
        X,
        reset=reset,
        dtype=None,
        accept_sparse=True,
        ensure_all_finite=False,
    )
    return X.tocsr() if sparse.issparse(X) else X


def _binary_target(y, threshold):
    """Binary labels for the partition: ``y`` itself, or ``y >= threshold``."""
    if threshold is None:
        y01, _ = check_bipartite_target(y, input_name="y")
        return y01
    grades = np.asarray(y)
    if grades.dtype.kind == "O":
        type_of_target(grades, input_name="y", raise_unknown=True)
    if grades.dtype.kind not in "biuf":
        raise ValueError(
            f"y must hold numeric relevance grades when threshold is set; got dtype "
            f"{grades.dtype}."
        )
    grades = grades.astype(np.float64)
    if grades.ndim == 2 and grades.shape[1] == 1:
        grades = grades.ravel()
    if grades.ndim != 1:
        raise ValueError(f"y must be one-dimensional; got shape {grades.shape}.")
    if not np.all(np.isfinite(grades)):
        raise ValueError("y contains NaN or infinity.")
    y01 = (grades >= threshold).astype(int)
    n_pos = int(y01.sum())
    if n_pos == 0 or n_pos == y01.shape[0]:
        raise ValueError(
            f"y >= threshold={threshold!r} gives 1 class only ({n_pos} of "
            f"{y01.shape[0]} rows relevant): the partition needs both classes; "
            "choose a threshold between the grades present in y."
        )
    return y01


class LeafEmbedding(TransformerMixin, BaseEstimator):
    """One-hot leaf membership of a ranking tree or forest, as a sparse matrix.

    ``fit`` fits a clone of ``estimator`` (a :class:`~treerank.TreeRank` or
    :class:`~treerank.RankingForest`) on binary labels (graded labels are
    thresholded at ``threshold``); ``transform`` maps every row to the leaves
    it reaches, one block of columns per tree (column ``offset_b + r`` for the
    leaf of rank ``r``, 0 = best, of tree ``b``), as a CSR matrix with one
    entry per (row, tree). The dense matrix is never built.

    In ``make_pipeline(LeafEmbedding(...), LinearSurrogateRanker(loss=...))``
    the ranker learns one score per leaf by minimizing the list surrogate on
    the (graded) labels: leaf scores fitted for the target metric on top of
    the partition learned for bipartite ranking.

    Parameters
    ----------
    estimator : TreeRank or RankingForest, default=None
        The partition model, cloned at ``fit`` (the object passed is never
        fitted). None means ``RankingForest(aggregation="mean")``: the
        aggregation does not change the leaves, and ``"mean"`` skips the
        Kendall median that the embedding does not use. For reproducible
        partitions pass an estimator with a fixed ``random_state``.
    threshold : float or None, default=None
        None: ``y`` must be binary (two classes, the larger one positive).
        A number: the partition is fitted on ``y >= threshold`` (graded
        relevance binarized at a grade), while ``y`` itself is left to the
        next step of a pipeline.

    Attributes
    ----------
    estimator_ : TreeRank or RankingForest
        The fitted partition model.
    n_leaves_ : ndarray of shape (n_trees,)
        Number of leaves of every tree (one tree for a TreeRank).
    feature_offsets_ : ndarray of shape (n_trees + 1,)
        Column range of every tree: tree ``b`` owns the columns
        ``feature_offsets_[b]:feature_offsets_[b + 1]``.
    n_features_out_ : int
        Number of output columns (the total number of leaves).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Defined only when ``X`` has feature names that are all strings.

    See Also
    --------
    treerank.surrogates.LinearSurrogateRanker : Learns the leaf scores.
    sklearn.ensemble.RandomTreesEmbedding : The unsupervised analogue.

    Notes
    -----
    ``transform`` costs the routing of the rows through the trees plus
    O(n_samples * n_trees) to write the matrix. Memory: the CSR matrix holds
    ``n_samples * n_trees`` float64 ones and int32 column indices (12 bytes
    per entry) plus the row pointers, against ``8 * n_samples * n_leaves``
    bytes for the dense one-hot matrix (``n_leaves`` is the total, about
    ``n_trees * 2**max_depth``); rows are routed in chunks so that the
    estimator's dense (rows x trees) leaf-rank array stays small. The
    columns of every row are sorted and distinct (a canonical CSR matrix).
    The output type follows scikit-learn's ``sparse_interface`` setting
    (``csr_matrix`` by default, ``csr_array`` with ``"sparray"``).

    ``X`` reaches the estimator with its values as they are, so the embedding
    takes whatever the estimator takes: missing values (NaN), sparse matrices
    (never densified whole) and pandas categorical columns (with the
    estimator's ``categorical_features``). ``transform`` checks that ``X`` has
    the columns (and names) seen at ``fit``.

    Examples
    --------
    >>> from sklearn.pipeline import make_pipeline
    >>> from treerank import RankingForest
    >>> from treerank.bridge import LeafEmbedding
    >>> from treerank.datasets import make_learning_to_rank
    >>> from treerank.surrogates import LinearSurrogateRanker
    >>> X, y, qid = make_learning_to_rank(40, random_state=0)
    >>> embedding = LeafEmbedding(
    ...     RankingForest(n_estimators=5, max_depth=3, random_state=0), threshold=1
    ... )
    >>> leaves = embedding.fit_transform(X, y)
    >>> leaves.format, leaves.shape[1] == int(embedding.n_leaves_.sum())
    ('csr', True)
    >>> bool((leaves.sum(axis=1) == 5).all())  # one leaf per tree
    True
    >>> pipe = make_pipeline(embedding, LinearSurrogateRanker(loss="squared_ndcg"))
    >>> pipe = pipe.fit(X, y, linearsurrogateranker__qid=qid)
    >>> pipe.decision_function(X[:3]).shape
    (3,)
    """

    def __init__(self, estimator=None, *, threshold=None):
        self.estimator = estimator
        self.threshold = threshold

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        # the input is the estimator's: the default forest takes NaN and sparse X
        template = RankingForest() if self.estimator is None else self.estimator
        inner = get_tags(template).input_tags
        tags.input_tags.allow_nan = inner.allow_nan
        tags.input_tags.sparse = inner.sparse
        tags.input_tags.categorical = inner.categorical
        return tags

    def _check_params(self):
        if self.estimator is not None and not isinstance(
            self.estimator, (TreeRank, RankingForest)
        ):
            raise ValueError(
                "estimator must be a TreeRank or a RankingForest (or None); got "
                f"{type(self.estimator).__name__}."
            )
        if self.threshold is not None and (
            isinstance(self.threshold, bool)
            or not isinstance(self.threshold, numbers.Real)
            or not np.isfinite(self.threshold)
        ):
            raise ValueError(
                "threshold must be None (binary y) or a finite grade; got "
                f"{self.threshold!r}."
            )

    def fit(self, X, y, sample_weight=None):
        """Fit the partition model on the binary (or thresholded) labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Binary labels, or grades when ``threshold`` is set.
        sample_weight : array-like of shape (n_samples,), default=None
            Passed to the estimator's ``fit``.

        Returns
        -------
        self : LeafEmbedding
        """
        self._check_params()
        if y is None:
            raise ValueError(
                "LeafEmbedding requires y to be passed, but the target y is None: "
                "the partition is fitted on the labels."
            )
        X = _check_input(self, X, reset=True)
        template = (
            RankingForest(aggregation="mean")
            if self.estimator is None
            else self.estimator
        )
        y01 = _binary_target(y, self.threshold)
        estimator = clone(template).fit(X, y01, sample_weight=sample_weight)
        if isinstance(estimator, RankingForest):
            n_leaves = [tree.n_leaves_ for tree in estimator.estimators_]
        else:
            n_leaves = [estimator.n_leaves_]
        self.estimator_ = estimator
        self.n_leaves_ = np.asarray(n_leaves, dtype=np.intp)
        self.feature_offsets_ = np.concatenate(([0], np.cumsum(self.n_leaves_)))
        self.n_features_out_ = int(self.feature_offsets_[-1])
        return self

    def transform(self, X):
        """Sparse one-hot leaf membership of every row, one block per tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        leaves : scipy.sparse CSR matrix of shape (n_samples, `n_features_out_`)
            ``leaves[i, feature_offsets_[b] + r] = 1`` when row ``i`` falls in
            the leaf of rank ``r`` of tree ``b``; float64.
        """
        check_is_fitted(self)
        X = _check_input(self, X, reset=False)
        n_trees = self.n_leaves_.shape[0]
        n_samples = X.shape[0]
        chunk = max(1, _CHUNK_ENTRIES // n_trees)
        indices = np.empty((n_samples, n_trees), dtype=np.int32)
        offsets = self.feature_offsets_[:-1].astype(np.int32)
        for start in range(0, n_samples, chunk):
            stop = min(n_samples, start + chunk)
            rows = X.iloc[start:stop] if hasattr(X, "iloc") else X[start:stop]
            ranks = self.estimator_.apply(rows)
            ranks = ranks.reshape(stop - start, n_trees)
            np.add(ranks, offsets, out=indices[start:stop], casting="unsafe")
        nnz = n_samples * n_trees
        index_dtype = np.int32 if nnz < np.iinfo(np.int32).max else np.int64
        indptr = np.arange(0, nnz + 1, n_trees, dtype=index_dtype)
        data = np.ones(nnz, dtype=np.float64)
        shape = (n_samples, self.n_features_out_)
        if sklearn.get_config().get("sparse_interface") == "sparray":
            return sparse.csr_array((data, indices.ravel(), indptr), shape=shape)
        return sparse.csr_matrix((data, indices.ravel(), indptr), shape=shape)

    def get_feature_names_out(self, input_features=None):
        """Names of the output columns: ``tree{b}_leaf{r}``.

        Parameters
        ----------
        input_features : array-like of str or None, default=None
            Ignored (the columns are leaves, not input features).

        Returns
        -------
        feature_names_out : ndarray of str of shape (`n_features_out_`,)
        """
        check_is_fitted(self)
        tree = np.repeat(np.arange(self.n_leaves_.shape[0]), self.n_leaves_)
        rank = np.arange(self.n_features_out_) - self.feature_offsets_[tree]
        return np.asarray(
            [f"tree{b}_leaf{r}" for b, r in zip(tree, rank)], dtype=object
        )
