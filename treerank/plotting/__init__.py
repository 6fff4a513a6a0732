"""Plots (matplotlib is imported inside the functions, never at package import)."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.plotting._roc import plot_roc

__all__ = ["plot_roc"]
