"""Exceptions raised by treerank (all subclass ``ValueError``)."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

__all__ = ["ModelFileError", "SingleClassError"]


class SingleClassError(ValueError):
    """Raised when a ranking quantity needs both classes and only one is present."""


class ModelFileError(ValueError):
    """Raised when a saved model file is corrupted, tampered with or unsupported."""
