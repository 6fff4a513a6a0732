"""The default splitter of TreeRank and RankingForest, and its tuning.

``leafrank=None`` means "the estimator's default :class:`LeafRank`". So that
the default splitter can be tuned like any nested estimator
(``GridSearchCV(TreeRank(), {"leafrank__min_samples_leaf": [5, 20]})``),
:class:`DefaultLeafRankMixin` materializes it when a ``leafrank__*`` parameter
is set while ``leafrank`` is None: the parameter is then set on a fresh copy of
the default splitter, the other defaults kept.
"""

from sklearn.base import clone

__all__ = ["DefaultLeafRankMixin"]


class DefaultLeafRankMixin:
    """Lets ``set_params(leafrank__name=value)`` act on the default splitter.

    The host class defines ``_default_leafrank()``, which returns a new
    instance of its default splitter (used when ``leafrank`` is None).

    Examples
    --------
    >>> from treerank import TreeRank
    >>> tree = TreeRank().set_params(leafrank__min_samples_leaf=5)
    >>> tree.leafrank.min_samples_leaf
    5
    >>> tree.leafrank.max_depth == TreeRank._default_leafrank().max_depth
    True
    """

    def set_params(self, **params):
        nested = any(key.startswith("leafrank__") for key in params)
        if nested and params.get("leafrank", self.leafrank) is None:
            params = dict(params)
            params["leafrank"] = clone(self._default_leafrank())
        return super().set_params(**params)
