"""The result of an explanation: per-row, per-feature contributions to the score."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["PROXY_TERM", "Explanation"]

PROXY_TERM = "(median vs. mean of its trees)"
"""The name of ``proxy_difference`` where it is shown as a term of its own."""


class Explanation:
    """Shapley values of a ranker's score for some rows, and how they were found.

    For every row, ``base_value + values[i].sum()`` equals the row's score
    ``scores[i]`` (efficiency; the calibrated score, or ``decision_function``
    with ``scale="decision"``), plus ``proxy_difference[i]`` for a Kendall
    median explained by its mean proxy (:meth:`total` adds them up): each
    value is the part of the row's departure from the base value that its
    feature accounts for. Returned by
    :func:`~treerank.inspection.shapley_values`.

    Parameters
    ----------
    values : ndarray of shape (n_samples, n_features)
        The contribution of each feature to each row's score.
    base_value : float
        The value of the empty coalition: the mean score of the background
        rows (interventional form) or the training-mass weighted mean leaf
        value (path-dependent form); for a forest's sum of trees or a mean
        proxy put on the calibrated scale, the calibrated score of that
        mean.
    scores : ndarray of shape (n_samples,)
        The rows' scores on the scale explained (``scale``).
    data : ndarray of float64 of shape (n_samples, n_features)
        The rows as the trees read them (category codes in categorical
        columns, NaN for missing values; a sparse X densified).
    feature_names : list of str
    feature_perturbation : {"interventional", "tree_path_dependent"}
        The game: features outside a coalition taken from background rows,
        or filled by the tree's training masses.
    algorithm : {"tree", "mean_proxy", "permutation", "exact"}
        How the values were computed: the polynomial algorithm on the
        decision graphs (exact), the same for the mean of a Kendall median's
        trees (a proxy: the values add up to the proxy's ``scores``), Monte
        Carlo permutations (an estimate with ``std_errors``), or the
        enumeration of all coalitions (exact).
    std_errors : ndarray of shape (n_samples, n_features) or None, default=None
        For ``algorithm="permutation"``: the standard error of each value as
        an estimate of the exact Shapley value of the same game. None for
        the exact algorithms.
    background_std_errors : ndarray of shape (n_samples, n_features) or None, \
default=None
        For the tree algorithms ("tree", "mean_proxy"), interventional form:
        the standard error of each value as an estimate of the value with the
        whole population the background rows are drawn from (when every tree
        is compared with every background row, the spread of the single-row
        values divided by the square root of their number; with rows drawn
        per tree, the square root of the sum over the trees of the spread of
        the tree's values over its rows squared, divided by their number).
        None otherwise.
    n_background : int or None, default=None
        Number of background rows (interventional form).
    category_labels : list or None, default=None
        Per feature, the labels of its category codes (None for a numeric
        feature), to show the values of categorical features.
    background_per_tree : int or None, default=None
        For the tree algorithms: the background rows each tree was compared
        with (``n_background`` when all of them).
    proxy_rank_agreement : float or None, default=None
        For "mean_proxy": Kendall's tau between the model's scores and the
        proxy's over the explained rows (None for one row).
    scale : str, default="decision_function"
        What ``scores`` are: "calibrated positive rate", "calibrated expected
        grade" or "decision_function".
    proxy_difference : ndarray of shape (n_samples,) or None, default=None
        For "mean_proxy": the model's score minus its proxy's, on the scale
        of ``scores`` (the proxy mapped onto the median's score of the same
        training quantile): the part of each score the values do not
        account for. None otherwise.
    proxy_scores : ndarray of shape (n_samples,) or None, default=None
        For "mean_proxy": the proxy's own scores (the mean leaf score of the
        trees, in [0, 1]).

    Attributes
    ----------
    values, base_value, scores, data, feature_names, feature_perturbation, \
algorithm, std_errors, background_std_errors, n_background, \
background_per_tree, proxy_rank_agreement, category_labels, scale, \
proxy_difference, proxy_scores
        As given.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.inspection import Explanation
    >>> e = Explanation(np.array([[0.5, -0.25]]), 1.0, np.array([1.25]),
    ...                 np.zeros((1, 2)), ["a", "b"], "interventional", "tree")
    >>> e.to_frame()
         a     b
    0  0.5 -0.25
    """

    def __init__(
        self,
        values,
        base_value,
        scores,
        data,
        feature_names,
        feature_perturbation,
        algorithm,
        std_errors=None,
        background_std_errors=None,
        n_background=None,
        category_labels=None,
        background_per_tree=None,
        proxy_rank_agreement=None,
        scale="decision_function",
        proxy_difference=None,
        proxy_scores=None,
    ):
        self.values = values
        self.base_value = float(base_value)
        self.scores = scores
        self.data = data
        self.feature_names = list(feature_names)
        self.feature_perturbation = feature_perturbation
        self.algorithm = algorithm
        self.std_errors = std_errors
        self.background_std_errors = background_std_errors
        self.n_background = n_background
        self.category_labels = category_labels
        self.background_per_tree = background_per_tree
        self.proxy_rank_agreement = proxy_rank_agreement
        self.scale = scale
        self.proxy_difference = proxy_difference
        self.proxy_scores = proxy_scores

    @property
    def shape(self):
        """``(n_samples, n_features)``."""
        return self.values.shape

    def __len__(self):
        return self.values.shape[0]

    def __getitem__(self, rows):
        """The explanation of some rows (an int, a slice or an array of rows).

        Examples
        --------
        >>> import numpy as np
        >>> from treerank.inspection import Explanation
        >>> e = Explanation(np.eye(3), 0.0, np.ones(3), np.zeros((3, 3)),
        ...                 ["a", "b", "c"], "interventional", "tree")
        >>> e[[2, 0]].values
        array([[0., 0., 1.],
               [1., 0., 0.]])
        """
        if isinstance(rows, (int, np.integer)):
            rows = [rows]

        def pick(array):
            return None if array is None else array[rows]

        return Explanation(
            self.values[rows],
            self.base_value,
            self.scores[rows],
            self.data[rows],
            self.feature_names,
            self.feature_perturbation,
            self.algorithm,
            std_errors=pick(self.std_errors),
            background_std_errors=pick(self.background_std_errors),
            n_background=self.n_background,
            category_labels=self.category_labels,
            background_per_tree=self.background_per_tree,
            proxy_rank_agreement=self.proxy_rank_agreement,
            scale=self.scale,
            proxy_difference=pick(self.proxy_difference),
            proxy_scores=pick(self.proxy_scores),
        )

    def __repr__(self):
        n, d = self.values.shape
        return (
            f"Explanation({n} rows, {d} features, {self.feature_perturbation}, "
            f"algorithm={self.algorithm!r}, base_value={self.base_value:.6g})"
        )

    def to_frame(self, index=None):
        """The values as a pandas DataFrame, one column per feature.

        Parameters
        ----------
        index : array-like of shape (n_samples,) or None, default=None
            Row labels (e.g. the index of the explained DataFrame).

        Returns
        -------
        frame : pandas.DataFrame
        """
        import pandas as pd

        return pd.DataFrame(self.values, columns=self.feature_names, index=index)

    def display_value(self, row, feature):
        """The value of a feature in a row, as text (a category's label).

        Parameters
        ----------
        row, feature : int

        Returns
        -------
        text : str
            "missing" for a missing value.
        """
        value = self.data[row, feature]
        if value != value:
            return "missing"
        labels = None if self.category_labels is None else self.category_labels[feature]
        if labels is not None:
            code = int(value)
            return str(labels[code]) if 0 <= code < len(labels) else "missing"
        return f"{value:.6g}"

    def total(self):
        """Each row's base value + values (+ ``proxy_difference``): its score.

        Returns
        -------
        total : ndarray of shape (n_samples,)
            Equal to ``scores`` (to rounding).

        Examples
        --------
        >>> import numpy as np
        >>> from treerank.inspection import Explanation
        >>> e = Explanation(np.array([[0.5, -0.25]]), 1.0, np.array([1.5]),
        ...                 np.zeros((1, 2)), ["a", "b"], "interventional",
        ...                 "mean_proxy", proxy_difference=np.array([0.25]))
        >>> e.total()
        array([1.5])
        """
        total = self.base_value + self.values.sum(axis=1)
        if self.proxy_difference is not None:
            total = total + self.proxy_difference
        return total

    def to_shap(self):
        """The explanation as a ``shap.Explanation``, for shap's plots.

        ``shap.plots.waterfall(explanation.to_shap()[0])``,
        ``shap.plots.beeswarm(explanation.to_shap())`` and the other plots of
        shap take it: the values, the base value of every row, the rows (the
        numbers the trees read: category codes, NaN when missing) and their
        display values (category labels, "missing"). For a median explained
        by its mean proxy, ``proxy_difference`` is one more column, named
        "(median vs. mean of its trees)" (its data 0, displayed empty), so
        that every row adds up to its score as shap's plots expect. Needs
        shap (``pip install "scikit-treerank[explain]"``).

        Returns
        -------
        explanation : shap.Explanation

        Raises
        ------
        ImportError
            If shap is not installed.
        """
        try:
            import shap
        except ImportError:
            raise ImportError(
                "Explanation.to_shap needs the shap package: pip install shap "
                "(or the 'explain' extra of scikit-treerank)."
            ) from None
        n_rows, n_features = self.values.shape
        values, data = self.values, self.data
        names = list(self.feature_names)
        shown = np.empty((n_rows, n_features), dtype=object)
        for i in range(n_rows):
            for k in range(n_features):
                shown[i, k] = self.display_value(i, k)
        if self.proxy_difference is not None:
            values = np.column_stack([values, self.proxy_difference])
            data = np.column_stack([data, np.zeros(n_rows)])
            shown = np.column_stack([shown, np.full(n_rows, "", dtype=object)])
            names.append(PROXY_TERM)
        return shap.Explanation(
            values=np.asarray(values, dtype=np.float64),
            base_values=np.full(n_rows, self.base_value),
            data=np.asarray(data, dtype=np.float64),
            display_data=shown,
            feature_names=names,
        )

    def mean_abs(self):
        """Mean absolute contribution of each feature over the rows.

        Returns
        -------
        importance : ndarray of shape (n_features,)
        """
        return np.mean(np.abs(self.values), axis=0)
