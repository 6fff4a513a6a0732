"""LinearLeafRank: an oblique split, a linear rule cut at its best threshold.

At a node, the split ``left if w.x > t`` is found in two steps:

1. **Direction** ``w``: Fisher's linear discriminant of the node's two classes,
   each weighted to half the node's mass (as in
   :func:`~treerank.tree.balanced_node_weights`), in standardized coordinates:
   ``w = (S + lambda I)^-1 (m+ - m-)`` with ``S`` the pooled within-class
   covariance, shrunk towards a multiple of the identity (Ledoit-Wolf).
2. **Threshold** ``t``: the cut of the node's sorted projections ``w.x`` that
   maximizes the local TPR - FPR exactly (one cumulative scan), with the rows
   whose projection is missing sent to the side that maximizes it too.

Everything is numpy on the node's rows: no estimator is cloned or fitted.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from treerank.tree._frozen import (
    FrozenLinearLeafRank,
    describe_linear_rule,
    linear_decision,
)
from treerank.tree._leafrank import BaseLeafRank, resolve_max_features
from treerank.utils._sklearn_compat import Interval, RealNotInt, StrOptions

__all__ = [
    "LinearLeafRank",
    "best_linear_cut",
    "fisher_direction",
]

_MIN_SHRINKAGE = 1e-9


def fisher_direction(X, y01, weight, shrinkage="auto"):
    """Class-balanced Fisher discriminant direction, in standardized coordinates.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The node's rows on the chosen features; NaN for missing values. Every
        feature must take two distinct values and be observed in both classes.
    y01 : ndarray of shape (n_samples,)
        Labels in {0, 1}.
    weight : ndarray of shape (n_samples,)
        Positive weights, each class summing to 1/2.
    shrinkage : "auto" or float in [0, 1], default="auto"
        Weight ``lambda`` of the scaled identity in the shrunk covariance
        ``(1 - lambda) S + lambda tr(S)/p I``; "auto" is the Ledoit-Wolf
        estimate (with weights). A floor of 1e-9 is applied, so that a
        singular ``S`` gives the limit direction as ``lambda -> 0``.

    Returns
    -------
    direction : ndarray of shape (n_features,)
        ``v`` in standardized coordinates, normalized to ``sum |v| = 1`` (all
        zeros when the class means coincide).
    center : ndarray of shape (n_features,)
        The class-balanced mean ``(m+ + m-)/2`` (missing values are imputed
        with it).
    scale : ndarray of shape (n_features,)
        The class-balanced root mean square deviation from ``center``.
    shrinkage : float
        The ``lambda`` used.

    Notes
    -----
    The projection on ``v / scale`` is invariant to any affine rescaling
    ``x_j -> a_j x_j + b_j`` (``a_j != 0``) of the features.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree._linear import fisher_direction
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 3.0], [3.0, 2.0]])
    >>> direction, center, scale, _ = fisher_direction(
    ...     X, np.array([0, 0, 1, 1]), np.full(4, 0.25), shrinkage=0.0)
    >>> np.round(direction, 3)
    array([0.5, 0.5])
    """
    pos = y01 == 1
    missing = np.isnan(X)
    observed = ~missing
    filled = np.where(missing, 0.0, X)
    w_pos = np.where(pos, weight, 0.0)
    w_neg = np.where(pos, 0.0, weight)
    mean_pos = (w_pos @ filled) / (w_pos @ observed)
    mean_neg = (w_neg @ filled) / (w_neg @ observed)
    center = 0.5 * (mean_pos + mean_neg)
    centered = np.where(missing, 0.0, X - center)  # imputed at the center
    scale = np.sqrt(weight @ (centered * centered))
    Z = centered / scale
    mean_pos_z = 2.0 * (w_pos @ Z)
    mean_neg_z = 2.0 * (w_neg @ Z)
    delta = mean_pos_z - mean_neg_z
    R = Z - np.where(pos[:, None], mean_pos_z, mean_neg_z)
    Rw = R * weight[:, None]
    S = Rw.T @ R
    p = S.shape[0]
    mu = np.trace(S) / p
    if shrinkage == "auto":
        # Ledoit-Wolf: lambda = b2 / d2, with b2 the estimated variance of the
        # weighted mean of the outer products r r^T and d2 = ||S - mu I||^2
        sq_norm_S = float(np.sum(S * S))
        d2 = sq_norm_S - p * mu * mu
        row_sq = np.einsum("ij,ij->i", R, R)
        quad = np.einsum("ij,ij->i", R @ S, R)
        b2 = float(np.sum(weight * weight * (row_sq * row_sq - 2 * quad + sq_norm_S)))
        lam = 1.0 if d2 <= 0 else float(np.clip(b2 / d2, 0.0, 1.0))
    else:
        lam = float(shrinkage)
    if mu <= 0:
        v = delta.copy()
    else:
        # a floor on lambda: a singular S gives the limit direction as
        # lambda -> 0 (separation along a direction of no within-class spread)
        A = (1.0 - lam) * S
        A[np.diag_indices(p)] += max(lam, _MIN_SHRINKAGE) * mu
        try:
            v = np.linalg.solve(A, delta)
        except np.linalg.LinAlgError:
            v = np.linalg.lstsq(A, delta, rcond=None)[0]
    total = np.abs(v).sum()
    if not np.isfinite(total) or total <= 0:
        v = np.zeros(p)
    else:
        v = v / total
    return v, center, scale, lam


def best_linear_cut(projection, y01, sample_weight, min_samples_leaf=1):
    """The split of a node along a projection that maximizes local TPR - FPR.

    The candidate left sides are ``{s > t}`` and ``{s < t}`` for every
    threshold ``t`` between two consecutive distinct projections ``s`` (and
    beyond the extremes), each with the rows whose projection is missing
    (NaN) added to it or not: an exact search over these ``4 (m + 1)``
    subsets, m the number of distinct projections, by cumulative sums.

    Parameters
    ----------
    projection : ndarray of shape (n_samples,)
        ``w.x`` of each row; NaN where it is missing.
    y01 : ndarray of shape (n_samples,)
        Labels in {0, 1}, both present with positive weight.
    sample_weight : ndarray of shape (n_samples,)
        Positive weights.
    min_samples_leaf : int, default=1
        Minimum number of rows on each side.

    Returns
    -------
    gain : float
        The largest local TPR - FPR; 0 when no admissible split has a positive
        one (then every other output is None).
    upper : bool or None
        Whether the left side is ``{s > t}`` (else ``{s < t}``).
    missing_left : bool or None
        Whether the rows with a missing projection go left.
    low, high : float or None
        The projections on either side of the cut (``low < high``), ``-inf``
        or ``+inf`` beyond the extremes: the left side is ``s >= high`` (upper)
        or ``s <= low`` (lower), a threshold strictly between them separates.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree._linear import best_linear_cut
    >>> s = np.array([0.0, 1.0, 2.0, 3.0, np.nan])
    >>> y = np.array([0, 0, 1, 1, 1])
    >>> gain, upper, missing_left, low, high = best_linear_cut(s, y, np.ones(5))
    >>> gain, upper, missing_left, low, high
    (1.0, True, True, 1.0, 2.0)
    """
    pos = y01 == 1
    total_pos = sample_weight[pos].sum()
    total_neg = sample_weight[~pos].sum()
    rate = np.where(pos, sample_weight / total_pos, -sample_weight / total_neg)
    missing = np.isnan(projection)
    n_missing = int(missing.sum())
    finite = np.flatnonzero(~missing)
    order = finite[np.argsort(-projection[finite], kind="stable")]
    values = projection[order]
    m = values.shape[0]
    # cut k: the k largest finite projections are "upper"; admissible where the
    # k-th and (k+1)-th values differ (k = 0 and k = m always)
    cuts = np.concatenate([[0], np.flatnonzero(values[:-1] > values[1:]) + 1, [m]])
    cuts = np.unique(cuts)
    cumulative = np.concatenate([[0.0], np.cumsum(rate[order])])[cuts]
    missing_gain = float(rate[missing].sum())
    n = projection.shape[0]
    # gains and left counts of the 4 families: upper without / with the missing
    # rows, and their complements (lower with / without the missing rows)
    gains = np.stack(
        [cumulative, cumulative + missing_gain, -cumulative, -cumulative - missing_gain]
    )
    n_left_upper = cuts.astype(np.int64)
    n_left = np.stack(
        [
            n_left_upper,
            n_left_upper + n_missing,
            n - n_left_upper,
            n - n_left_upper - n_missing,
        ]
    )
    admissible = (n_left >= min_samples_leaf) & (n - n_left >= min_samples_leaf)
    gains = np.where(admissible, gains, -np.inf)
    best = int(np.argmax(gains))
    gain = float(gains.flat[best])
    if not gain > 0:
        return 0.0, None, None, None, None
    family, index = divmod(best, cuts.shape[0])
    k = int(cuts[index])
    high = float(values[k - 1]) if k > 0 else np.inf
    low = float(values[k]) if k < m else -np.inf
    upper = family < 2
    missing_left = family in (1, 2)
    return gain, upper, missing_left, low, high


def _threshold(low, high, inclusive_high):
    """A finite threshold t with low <= t < high (or low < t <= high)."""
    if np.isinf(low) and np.isinf(high):
        return 0.0
    if np.isinf(low):
        return high if inclusive_high else float(np.nextafter(high, -np.inf))
    if np.isinf(high):
        return float(np.nextafter(low, np.inf)) if inclusive_high else low
    middle = 0.5 * low + 0.5 * high
    if inclusive_high:
        return middle if middle > low else high
    return middle if middle < high else low


class LinearLeafRank(BaseLeafRank):
    """Oblique LeafRank: a class-balanced linear rule cut at its best threshold.

    The left (better) side is the half-space ``w.x > t``. The direction ``w``
    is Fisher's linear discriminant of the node's two classes, each weighted
    to half the node's mass, computed on standardized features with a pooled
    within-class covariance shrunk towards the identity (Ledoit-Wolf); the
    threshold ``t`` is then chosen on the node's rows to maximize the local
    TPR - FPR exactly (the sorted projections are scanned). Only numpy runs
    per node: no estimator is fitted or cloned, so that trees and forests
    with this splitter stay fast.

    The rule is invariant to per-feature affine rescalings of the data: each
    feature is centred at the class-balanced mean of the node and divided by
    its class-balanced root mean square deviation before the discriminant is
    computed.

    **Missing values** (NaN): for the direction, a missing value is imputed
    with the feature's class-balanced mean in the node (it contributes
    nothing in standardized coordinates). For the threshold, a row with a
    missing value in a feature the rule uses has no projection and goes to
    one side as a whole: the side, chosen jointly with the threshold, that
    maximizes the local TPR - FPR. When the node has no such row, missing
    values go to the side of larger weight, as in :class:`LeafRank`. Missing
    values in features the rule does not use are ignored.

    Read more in the :ref:`User Guide <linear_leafrank>`.

    Parameters
    ----------
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        Features drawn at random for the rule (None: all). Features that are
        constant in the node or missing in a whole class are skipped, and the
        draw goes on until that many usable ones are found (or none is left).
        :class:`~treerank.RankingForest` sets it from its own ``max_features``.
    shrinkage : "auto" or float in [0, 1], default="auto"
        Weight of the identity in the shrunk within-class covariance
        (standardized coordinates): 0 is Fisher's discriminant, 1 ignores the
        correlations (a diagonal discriminant); "auto" is the Ledoit-Wolf
        estimate, which keeps the rule stable when the node has few rows for
        its number of features.
    min_samples_leaf : int or float, default=1
        Minimum number of rows on each side of the split; a float is a
        fraction of the node's rows.
    random_state : int, RandomState instance or None, default=None
        Seed of the feature draw (``max_features``); inside a TreeRank or a
        forest, each node gets its own.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        Coefficients of the rule on the raw features (zero for the features
        not used).
    intercept_ : float
    flip_ : bool
        False: left when ``X @ coef_ + intercept_ > 0``, and rows with a
        missing value in a used feature go right. True: left when
        ``X @ coef_ + intercept_ <= 0``, and such rows go left. This is the
        rule of :class:`~treerank.tree.FrozenLinearLeafRank` (see
        :meth:`freeze`).
    missing_left_ : bool
        Where rows with a missing value in a used feature go (``flip_``).
    features_ : ndarray of int
        The features the rule uses.
    shrinkage_ : float
        The shrinkage applied.
    gain_ : float
        Local TPR minus local FPR of the left side on the training data (0:
        no split, the left side is empty).
    n_cuts_ : int
        The number of features used: the complexity of the rule for the
        structural pruning penalty (a half-space in dimension d has VC
        dimension d + 1).
    feature_importances_ : ndarray of shape (n_features,)
        Absolute standardized coefficients, normalized to sum to one (the
        rule's weight on each feature in units of its spread).
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    LeafRank : The axis-aligned splitter (a union of boxes).
    MixedLeafRank : Chooses between splitters at every node.
    ClassifierLeafRank : Any scikit-learn classifier as a splitter.

    References
    ----------
    .. [1] O. Ledoit and M. Wolf, "A well-conditioned estimator for
       large-dimensional covariance matrices", Journal of Multivariate
       Analysis 88(2), 2004.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree import LinearLeafRank
    >>> X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 3.0], [3.0, 2.0]])
    >>> split = LinearLeafRank().fit(X, [0, 0, 1, 1])
    >>> split.goes_left(X)
    array([False, False,  True,  True])
    >>> split.gain_
    1.0
    >>> split.describe(["a", "b"])
    'left if 0.447214*a + 0.447214*b > 1.34164'
    """

    _parameter_constraints: dict = {
        "max_features": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0.0, 1.0, closed="right"),
            StrOptions({"sqrt", "log2"}),
            None,
        ],
        "shrinkage": [
            StrOptions({"auto"}),
            Interval(Real, 0.0, 1.0, closed="both"),
        ],
        "min_samples_leaf": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0.0, 1.0, closed="neither"),
        ],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        max_features=None,
        shrinkage="auto",
        min_samples_leaf=1,
        random_state=None,
    ):
        self.max_features = max_features
        self.shrinkage = shrinkage
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def _usable_features(self, X, pos, rng):
        """Features for the rule: drawn at random, skipping unusable ones."""
        n_features = X.shape[1]
        n_wanted = resolve_max_features(self.max_features, n_features)
        if n_wanted is None or n_wanted >= n_features:
            candidates = np.arange(n_features)
            n_wanted = n_features
        else:
            candidates = rng.permutation(n_features)
        chosen = []
        start = 0
        while len(chosen) < n_wanted and start < n_features:
            # check a block a little larger than what is still needed
            block = candidates[start : start + 2 * (n_wanted - len(chosen)) + 4]
            start += block.shape[0]
            values = X[:, block]
            low = np.fmin.reduce(values, axis=0)
            high = np.fmax.reduce(values, axis=0)
            observed = ~np.isnan(values)
            usable = (
                (high > low) & observed[pos].any(axis=0) & observed[~pos].any(axis=0)
            )
            chosen.extend(block[usable][: n_wanted - len(chosen)])
        return np.sort(np.asarray(chosen, dtype=np.intp))

    def _min_samples_leaf(self, n_samples):
        if isinstance(self.min_samples_leaf, Integral):
            return int(self.min_samples_leaf)
        return max(1, int(np.ceil(self.min_samples_leaf * n_samples)))

    def _set_empty(self, n_features, features):
        self.coef_ = np.zeros(n_features)
        self.intercept_ = -1.0
        self.flip_ = False
        self.missing_left_ = False
        self.features_ = features
        self.gain_ = 0.0
        self.n_cuts_ = max(1, int(features.shape[0]))
        self._importances = np.zeros(n_features)
        return self

    def _fit_arrays(self, X, y01, sample_weight):
        n_features = X.shape[1]
        self.n_features_in_ = n_features
        self.shrinkage_ = 0.0
        rows = np.flatnonzero(sample_weight > 0)
        if rows.shape[0] < X.shape[0]:
            X_fit, y_fit, w_fit = X[rows], y01[rows], sample_weight[rows]
        else:
            X_fit, y_fit, w_fit = X, y01, sample_weight
        pos = y_fit == 1
        total_pos = w_fit[pos].sum()
        total_neg = w_fit[~pos].sum()
        if total_pos <= 0 or total_neg <= 0:
            raise ValueError(
                "Both classes need a positive total weight in the node to be split."
            )
        rng = check_random_state(self.random_state)
        features = self._usable_features(X_fit, pos, rng)
        if features.shape[0] == 0:
            return self._set_empty(n_features, features)
        balanced = np.where(pos, w_fit / (2 * total_pos), w_fit / (2 * total_neg))
        direction, _, scale, self.shrinkage_ = fisher_direction(
            X_fit[:, features], y_fit, balanced, self.shrinkage
        )
        if not np.any(direction):
            return self._set_empty(n_features, features)
        coef = np.zeros(n_features)
        coef[features] = direction / scale
        projection = linear_decision(X_fit, coef, 0.0)
        gain, upper, missing_left, low, high = best_linear_cut(
            projection, y_fit, w_fit, self._min_samples_leaf(X_fit.shape[0])
        )
        if gain <= 0:
            return self._set_empty(n_features, features)
        if not np.isnan(projection).any():
            # no missing row to learn from: at prediction, missing values go
            # to the side of larger weight (as in LeafRank)
            # (right on a tie)
            weight_upper = w_fit[projection >= high].sum()
            weight_left = weight_upper if upper else w_fit.sum() - weight_upper
            missing_left = bool(weight_left > w_fit.sum() - weight_left)
        # left = upper side {s > t} or {s >= t}, lower side {s <= t} or {s < t};
        # flip_ is where missing rows go, which fixes the sign of the rule:
        #   upper, missing right: s - t > 0            (coef, -t, flip False)
        #   upper, missing left:  not (-s + t > 0)     (-coef, t, flip True)
        #   lower, missing left:  not (s - t > 0)      (coef, -t, flip True)
        #   lower, missing right: -s + t > 0           (-coef, t, flip False)
        inclusive_high = upper == missing_left
        threshold = _threshold(low, high, inclusive_high)
        negate = upper == missing_left
        self.coef_ = -coef if negate else coef
        self.intercept_ = threshold if negate else -threshold
        self.flip_ = bool(missing_left)
        self.missing_left_ = bool(missing_left)
        self.features_ = features
        self.n_cuts_ = int(features.shape[0])
        importances = np.zeros(n_features)
        importances[features] = np.abs(direction)
        self._importances = importances / importances.sum()
        left = self._goes_left_arrays(X_fit)
        self.gain_ = float(
            w_fit[left & pos].sum() / total_pos - w_fit[left & ~pos].sum() / total_neg
        )
        return self

    def _goes_left_arrays(self, X):
        return (linear_decision(X, self.coef_, self.intercept_) > 0) != self.flip_

    def _goes_left_rows(self, X, rows, columns):
        used = np.flatnonzero(self.coef_)
        if used.shape[0] == 0:
            return np.full(rows.shape[0], self.flip_)
        where = used if columns is None else np.asarray(columns)[used]
        decision = X[np.ix_(rows, where)] @ self.coef_[used, None] + self.intercept_
        return (decision.ravel() > 0) != self.flip_

    @property
    def feature_importances_(self):
        check_is_fitted(self)
        return self._importances

    def describe(self, feature_names=None):
        """The rule as text: ``left if 0.5*age - 2*bmi > 1``.

        Only the features the rule uses appear, and where rows with a
        missing value go when it is left.

        Parameters
        ----------
        feature_names : sequence of str or None, default=None
            Names of the features (``x[i]`` if None).

        Returns
        -------
        description : str
        """
        check_is_fitted(self)
        self._check_feature_names(feature_names)
        return describe_linear_rule(
            self.coef_,
            self.intercept_,
            self.flip_,
            lambda index: self._format_feature(index, feature_names),
        )

    def freeze(self):
        """The fitted rule as a :class:`~treerank.tree.FrozenLinearLeafRank`.

        The frozen rule sends every row, missing values included, to the
        same side (it stores ``coef_``, ``intercept_`` and ``flip_``); model
        files save it.

        Returns
        -------
        FrozenLinearLeafRank
        """
        check_is_fitted(self)
        return FrozenLinearLeafRank(
            self.coef_,
            self.intercept_,
            self.flip_,
            self.feature_importances_,
            self.n_cuts_,
            self.gain_,
            estimator_name=type(self).__name__,
        )
