"""The Wisconsin breast cancer data, framed as a bipartite ranking problem."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from sklearn import datasets as sk_datasets
from sklearn.utils import Bunch

__all__ = ["load_breast_cancer"]


def load_breast_cancer(*, return_X_y=False):
    """Load the breast cancer data with malignant tumours as the positive class.

    The data ship with scikit-learn (569 samples, 30 features; nothing is
    downloaded). scikit-learn codes benign as 1; for ranking, where the
    positives are the cases to put at the top of a screening list, this loader
    codes **malignant as 1** (212 positives) and benign as 0 (357 negatives).
    eta is unknown (a real data set), so AUC* is not available.

    Parameters
    ----------
    return_X_y : bool, default=False
        If True, return ``(X, y)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        ``data`` (569, 30), ``target`` (569,) in {0, 1}, ``feature_names``,
        ``target_names`` (``["benign", "malignant"]``, index = label) and
        ``DESCR``.
    (X, y) : tuple of ndarrays
        If ``return_X_y`` is True.

    Examples
    --------
    >>> from treerank.datasets import load_breast_cancer
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X.shape, int(y.sum())
    ((569, 30), 212)
    """
    raw = sk_datasets.load_breast_cancer()
    y = (raw.target == 0).astype(int)  # sklearn: 0 = malignant
    X = np.asarray(raw.data, dtype=np.float64)
    if return_X_y:
        return X, y
    return Bunch(
        data=X,
        target=y,
        feature_names=np.asarray(raw.feature_names),
        target_names=np.array(["benign", "malignant"]),
        DESCR=(
            "Wisconsin diagnostic breast cancer data (from scikit-learn), "
            "relabelled for bipartite ranking: 1 = malignant, 0 = benign.\n\n"
            + raw.DESCR
        ),
    )
