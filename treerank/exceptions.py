"""Exceptions raised by treerank (all subclass ``ValueError``), and its warnings."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

__all__ = [
    "KernelCacheWarning",
    "ModelFileError",
    "SingleClassError",
]


class SingleClassError(ValueError):
    """Raised when a ranking quantity needs both classes and only one is present."""


class ModelFileError(ValueError):
    """Raised when a saved model file is corrupted, tampered with or unsupported."""


class KernelCacheWarning(UserWarning):
    """Emitted once when numba cannot cache treerank's compiled kernels.

    When neither the package's folder nor the user's cache folder is writable
    (a read-only install), the kernels are compiled in every process, which
    makes the first fit or scoring of each process slower; setting the
    environment variable ``NUMBA_CACHE_DIR`` to a writable folder caches them.
    """
