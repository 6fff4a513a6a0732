"""Exceptions raised by treerank (all subclass ``ValueError``), and its warnings."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

__all__ = [
    "FeatureError",
    "KernelCacheWarning",
    "ModelFileError",
    "SingleClassError",
    "UnseenCategoryWarning",
]


class SingleClassError(ValueError):
    """Raised when a ranking quantity needs both classes and only one is present."""


class ModelFileError(ValueError):
    """Raised when a saved model file is corrupted, tampered with or unsupported."""


class FeatureError(ValueError):
    """Raised when a feature column of X cannot be used; the message names it.

    A datetime or timedelta column (convert it to numbers first), two columns
    of the same name, or a categorical column given as numbers (category
    codes) where the model learned text labels.
    """


class KernelCacheWarning(UserWarning):
    """Emitted once when numba cannot cache treerank's compiled kernels.

    When neither the package's folder nor the user's cache folder is writable
    (a read-only install), the kernels are compiled in every process, which
    makes the first fit or scoring of each process slower; setting the
    environment variable ``NUMBA_CACHE_DIR`` to a writable folder caches them.
    """


class UnseenCategoryWarning(UserWarning):
    """Emitted when many values of a categorical feature were never seen in fit.

    Such values are treated as missing values; the warning names the column,
    the share of its values concerned and examples of them.
    """
