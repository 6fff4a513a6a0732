"""scipy sparse matrices as input of the trees, never densified whole.

A sparse X (CSR or CSC, as matrices or arrays) means the dense matrix
``X.toarray()``: every entry not stored is the value 0.0 and a stored NaN is a
missing value, exactly as in a dense X. The trees read it with memory bounded
independently of ``n_samples * n_features`` floats:

- one column at a time (:func:`sparse_column`, from CSC) to bin the features;
- one value at a time (:func:`values_at`) to apply a LeafRank's rule;
- in bounded blocks of rows, by the compiled routing of :mod:`treerank._engine`.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy import sparse

__all__ = [
    "canonical_sparse",
    "is_sparse",
    "sparse_column",
    "values_at",
]


def is_sparse(X):
    """Whether X is a scipy sparse matrix or array."""
    return sparse.issparse(X)


def canonical_sparse(X, format="csr"):
    """X as a float64 sparse matrix in ``format``, in canonical form.

    Canonical: sorted column (CSR) or row (CSC) indices within each row or
    column, no duplicate entries (duplicates are summed, as ``toarray`` does).
    X itself is never modified; it is returned unchanged when it is already
    canonical float64 in that format.

    Parameters
    ----------
    X : sparse matrix or array
    format : {"csr", "csc"}, default="csr"

    Returns
    -------
    X : sparse matrix or array of float64

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import sparse
    >>> from treerank.utils._sparse import canonical_sparse
    >>> X = sparse.coo_matrix(([1, 2], ([0, 0], [1, 1])), shape=(1, 2))
    >>> canonical_sparse(X, "csr").toarray()
    array([[0., 3.]])
    """
    converted = X.asformat(format)
    if converted.dtype != np.float64:
        converted = converted.astype(np.float64)
    if not converted.has_canonical_format:
        if converted is X:
            converted = converted.copy()
        converted.sum_duplicates()  # also sorts the indices
    return converted


def sparse_column(X, j):
    """Column j of a canonical CSC matrix (:func:`canonical_sparse`), dense.

    Parameters
    ----------
    X : sparse matrix or array in canonical CSC form
    j : int

    Returns
    -------
    column : ndarray of float64 of shape (n_samples,)

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import sparse
    >>> from treerank.utils._sparse import sparse_column
    >>> sparse_column(sparse.csc_matrix(np.array([[0.0, 1.0], [2.0, 0.0]])), 0)
    array([0., 2.])
    """
    column = np.zeros(X.shape[0])
    start, stop = X.indptr[j], X.indptr[j + 1]
    column[X.indices[start:stop]] = X.data[start:stop]
    return column


def values_at(X, rows, columns):
    """The values ``X[rows[i], columns[i]]`` of a dense or sparse X.

    For a sparse X, an entry that is not stored is 0.0; each value is looked
    up in the stored entries of its row (no densification).

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    rows, columns : ndarray of int of shape (n,)

    Returns
    -------
    values : ndarray of float64 of shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> from scipy import sparse
    >>> from treerank.utils._sparse import values_at
    >>> X = sparse.csr_matrix(np.array([[0.0, 2.0], [np.nan, 0.0]]))
    >>> values_at(X, np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]))
    array([ 0.,  2., nan,  0.])
    """
    if not is_sparse(X):
        return X[rows, columns]
    rows = np.asarray(rows, dtype=np.intp)
    if rows.shape[0] == 0:
        return np.zeros(0)
    # scipy's element lookup searches the stored entries of each row (CSR) or
    # column (CSC), summing duplicates as toarray does
    values = X[rows, np.asarray(columns, dtype=np.intp)]
    return np.asarray(values, dtype=np.float64).ravel()
