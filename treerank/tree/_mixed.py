"""MixedLeafRank: at every node, the better of several LeafRanks.

A LeafRank of many cuts (the axis-aligned :class:`~treerank.LeafRank`, a
union of up to ``2 ** max_depth`` boxes) always reaches a training TPR - FPR at
least as high as a single half-space where it can mimic it, and higher on
noise: comparing the candidates on the rows they were fitted on favours the
most flexible one. By default the candidates are therefore compared on rows
they did not see: each is fitted on a stratified part of the node's rows and
scored by its local TPR - FPR on the rest (an unbiased estimate of the gain of
its split on new data from the node), and the winner is refitted on all the
node's rows.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import copy
from numbers import Integral

import numpy as np
from sklearn.base import clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from treerank.tree._leafrank import (
    BaseLeafRank,
    LeafRank,
    leafrank_fit,
    leafrank_goes_left,
    leafrank_goes_left_rows,
    resolve_leaf_size,
)
from treerank.tree._linear import LinearLeafRank
from treerank.utils._sklearn_compat import Interval, RealNotInt, StrOptions

__all__ = ["MixedLeafRank", "freeze_leafrank", "local_gain", "stratified_holdout"]

_MAX_SEED = np.iinfo(np.int32).max


def local_gain(left, y01, sample_weight):
    """Local TPR minus local FPR of the rows sent left (0 if a class is absent).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree._mixed import local_gain
    >>> local_gain(np.array([True, True, False, False]), np.array([1, 0, 1, 0]),
    ...            np.ones(4))
    0.0
    """
    pos = y01 == 1
    total_pos = sample_weight[pos].sum()
    total_neg = sample_weight[~pos].sum()
    if total_pos <= 0 or total_neg <= 0:
        return 0.0
    return float(
        sample_weight[left & pos].sum() / total_pos
        - sample_weight[left & ~pos].sum() / total_neg
    )


def stratified_holdout(y01, fraction, rng):
    """Held-out mask: ``round(fraction * n_c)`` rows of each class, at least one.

    Returns None when a class has fewer than two rows (nothing to hold out
    while keeping it in the fitting part).

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree._mixed import stratified_holdout
    >>> held = stratified_holdout(np.array([0] * 6 + [1] * 4), 0.5,
    ...                           np.random.RandomState(0))
    >>> int(held[:6].sum()), int(held[6:].sum())
    (3, 2)
    """
    held = np.zeros(y01.shape[0], dtype=bool)
    for label in (0, 1):
        rows = np.flatnonzero(y01 == label)
        if rows.shape[0] < 2:
            return None
        n_held = min(rows.shape[0] - 1, max(1, round(fraction * rows.shape[0])))
        held[rng.choice(rows, n_held, replace=False)] = True
    return held


class MixedLeafRank(BaseLeafRank):
    """At every node, the best of several LeafRanks (e.g. axis-aligned or oblique).

    Each candidate LeafRank is fitted at the node and the one whose split has
    the larger local TPR - FPR is kept. With ``selection="holdout"`` (the
    default) the comparison is made on held-out rows: every candidate is
    fitted on a stratified ``1 - holdout_fraction`` of the node's rows, its
    local TPR - FPR is measured on the others, and the winner is refitted on
    all the rows. Measured on the rows they were fitted on (``"train"``), the
    more flexible candidate (a union of boxes) wins by overfitting.

    The default candidates are a :class:`~treerank.LeafRank` and a
    :class:`~treerank.tree.LinearLeafRank`: each node of the ranking tree is
    cut by a union of boxes or by a half-space, whichever ranks better.

    Read more in the :ref:`User Guide <linear_leafrank>`.

    Parameters
    ----------
    leafranks : list of LeafRank-like or None, default=None
        The candidates, cloned at every fit; ties go to the first. None uses
        ``[LeafRank(max_depth=3, min_samples_leaf=50, criterion="gini"),
        LinearLeafRank()]``: boxes of fewer cuts than ``LeafRank()``'s, the
        configuration of the benchmark of oblique rules
        (``benchmarks/results/oblique.md``). A candidate's
        ``min_samples_leaf="auto"`` is resolved on the ranking tree's rows, as
        the LeafRank's of a tree.
    selection : {"holdout", "train"}, default="holdout"
        Compare the candidates on held-out rows of the node, or on the rows
        they were fitted on. A node with fewer than two rows of a class is
        compared on its training rows.
    holdout_fraction : float in (0, 1), default=0.3
        Fraction of each class of the node held out (``"holdout"``).
    max_features : int, float, {"sqrt", "log2"} or None, default=None
        If not None, set on every candidate that has a ``max_features``
        parameter (as :class:`~treerank.RankingForest` does through its own
        ``max_features``); None keeps the candidates' own.
    random_state : int, RandomState instance or None, default=None
        Seed of the held-out rows and of the candidates' seeds.

    Attributes
    ----------
    leafrank_ : LeafRank-like
        The chosen candidate, fitted on all the node's rows.
    chosen_ : int
        Its index in the candidates.
    selection_gains_ : ndarray of shape (n_candidates,)
        The local TPR - FPR of each candidate that decided the choice
        (held-out or training rows, as ``selection`` says).
    gain_ : float
        Local TPR minus local FPR of the chosen split on all the node's rows.
    n_cuts_ : int
        The chosen candidate's.
    feature_importances_ : ndarray of shape (n_features,)
        The chosen candidate's.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    LeafRank : The axis-aligned splitter.
    LinearLeafRank : The oblique splitter.

    Examples
    --------
    >>> import numpy as np
    >>> from treerank.tree import MixedLeafRank
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(400, 2))
    >>> y = (X[:, 0] + X[:, 1] > 0).astype(int)
    >>> split = MixedLeafRank(random_state=0).fit(X, y)
    >>> type(split.leafrank_).__name__
    'LinearLeafRank'
    """

    _parameter_constraints: dict = {
        "leafranks": [list, tuple, None],
        "selection": [StrOptions({"holdout", "train"})],
        "holdout_fraction": [Interval(RealNotInt, 0.0, 1.0, closed="neither")],
        "max_features": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0.0, 1.0, closed="right"),
            StrOptions({"sqrt", "log2"}),
            None,
        ],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        leafranks=None,
        *,
        selection="holdout",
        holdout_fraction=0.3,
        max_features=None,
        random_state=None,
    ):
        self.leafranks = leafranks
        self.selection = selection
        self.holdout_fraction = holdout_fraction
        self.max_features = max_features
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def _validate_params(self):
        super()._validate_params()
        for candidate in self._templates():
            if not (hasattr(candidate, "fit") and hasattr(candidate, "goes_left")):
                raise ValueError(
                    "leafranks must hold LeafRank-like objects (with fit and "
                    f"goes_left); got {type(candidate).__name__}."
                )
            validate = getattr(candidate, "_validate_params", None)
            if validate is not None:
                validate()
        if len(self._templates()) == 0:
            raise ValueError("leafranks must hold at least one LeafRank.")

    def _templates(self):
        if self.leafranks is None:
            return [
                LeafRank(max_depth=3, min_samples_leaf=50, criterion="gini"),
                LinearLeafRank(),
            ]
        return list(self.leafranks)

    def _resolve_leaf_size(self, n_samples):
        """A copy whose candidates' ``"auto"`` leaf sizes are resolved (see
        :func:`~treerank.tree._leafrank.resolve_leaf_size`); self if none has one."""
        if self.leafranks is None:
            return self
        resolved = [resolve_leaf_size(c, n_samples) for c in self.leafranks]
        if all(new is old for new, old in zip(resolved, self.leafranks)):
            return self
        mixed = clone(self)
        mixed.leafranks = resolved
        return mixed

    def _candidates(self, rng):
        """Fresh clones of the candidates, with max_features and seeds set."""
        candidates = []
        for template in self._templates():
            candidate = clone(template)
            params = candidate.get_params(deep=False)
            # plain parameters: set as set_params would, without its overhead
            if self.max_features is not None and "max_features" in params:
                candidate.max_features = self.max_features
            if "random_state" in params:
                candidate.random_state = int(rng.randint(_MAX_SEED))
            candidates.append(candidate)
        return candidates

    def _fit_arrays(self, X, y01, sample_weight):
        self.n_features_in_ = X.shape[1]
        rng = check_random_state(self.random_state)
        candidates = self._candidates(rng)
        held = None
        if self.selection == "holdout" and len(candidates) > 1:
            held = stratified_holdout(y01, self.holdout_fraction, rng)
        if held is None:
            gains = []
            for candidate in candidates:
                leafrank_fit(candidate, X, y01, sample_weight)
                left = leafrank_goes_left(candidate, X)
                gains.append(local_gain(left, y01, sample_weight))
            chosen = int(np.argmax(gains))
            self.leafrank_ = candidates[chosen]
        else:
            fit_rows, test_rows = np.flatnonzero(~held), np.flatnonzero(held)
            X_fit, X_test = X[fit_rows], X[test_rows]
            gains = []
            for candidate in candidates:
                trial = copy.copy(candidate)  # an unfitted clone, same seed
                leafrank_fit(trial, X_fit, y01[fit_rows], sample_weight[fit_rows])
                left = leafrank_goes_left(trial, X_test)
                gains.append(local_gain(left, y01[test_rows], sample_weight[test_rows]))
            chosen = int(np.argmax(gains))
            self.leafrank_ = leafrank_fit(candidates[chosen], X, y01, sample_weight)
        self.chosen_ = chosen
        self.selection_gains_ = np.asarray(gains, dtype=np.float64)
        left = leafrank_goes_left(self.leafrank_, X)
        self.gain_ = max(local_gain(left, y01, sample_weight), 0.0)
        return self

    def _goes_left_arrays(self, X):
        return leafrank_goes_left(self.leafrank_, X)

    def _goes_left_rows(self, X, rows, columns):
        return leafrank_goes_left_rows(self.leafrank_, X, rows, columns)

    @property
    def n_cuts_(self):
        check_is_fitted(self)
        return int(self.leafrank_.n_cuts_)

    @property
    def feature_importances_(self):
        check_is_fitted(self)
        return np.asarray(self.leafrank_.feature_importances_, dtype=np.float64)

    def describe(self, feature_names=None):
        """The chosen candidate's rule as text.

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
        return self.leafrank_.describe(feature_names)

    def left_rules(self, feature_names=None):
        """The chosen candidate's boxes (``LeafRank.left_rules``), if it has some."""
        check_is_fitted(self)
        left_rules = getattr(self.leafrank_, "left_rules", None)
        if left_rules is None:
            raise AttributeError(
                f"the chosen {type(self.leafrank_).__name__} has no boxes"
            )
        return left_rules(feature_names)

    def freeze(self):
        """The chosen rule as a frozen LeafRank (for model files).

        A :class:`~treerank.tree.FrozenLinearLeafRank` for a linear rule, a
        :class:`~treerank.tree.FrozenTreeLeafRank` for a :class:`LeafRank`.

        Returns
        -------
        FrozenLinearLeafRank or FrozenTreeLeafRank
        """
        check_is_fitted(self)
        return freeze_leafrank(self.leafrank_)


def freeze_leafrank(leafrank):
    """A fitted LeafRank as a frozen rule, when it can be one.

    Uses the LeafRank's own ``freeze`` when it has one; a fitted
    :class:`LeafRank` becomes a :class:`~treerank.tree.FrozenTreeLeafRank`
    (with where missing values go, whether each split saw some, and the
    splits' improvements: it describes itself and weighs its features as the
    LeafRank does). Other rules are returned as they are.
    """
    from treerank.tree._frozen import FrozenTreeLeafRank

    freeze = getattr(leafrank, "freeze", None)
    if freeze is not None:
        return freeze()
    if isinstance(leafrank, LeafRank):
        tree = leafrank.tree_
        return FrozenTreeLeafRank(
            children_left=tree.children_left,
            children_right=tree.children_right,
            feature=tree.feature,
            threshold=tree.threshold,
            left_nodes=leafrank.left_nodes_,
            feature_importances=leafrank.feature_importances_,
            n_cuts=leafrank.n_cuts_,
            gain=leafrank.gain_,
            missing_left=tree.missing_left,
            missing_seen=tree.missing_seen,
            categories=tree.categories,
            improvement=leafrank._improvement,
        )
    return leafrank
