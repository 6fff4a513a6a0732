"""Per-node histograms of positive and negative weight over the feature bins.

A histogram of a node holds, for each of its candidate features and each bin,
three sums over the node's rows: the positive weight, the negative weight and
the number of rows, each counted with its multiplicity (``hist[j, bin, 0/1/2]``;
bin :data:`MISSING_BIN` for missing values). Every split of the node is scored
from these sums alone. The histogram of one child is the parent's minus its
sibling's, so only the smaller child is ever scanned.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank._engine._binning import MISSING_BIN
from treerank._engine._jit import inner_jit

__all__ = ["build_histograms", "subtract_histograms"]


@inner_jit
def _clear(hist, features, n_features, n_bins):
    for j in range(n_features):
        for b in range(n_bins[features[j]]):
            hist[j, b, 0] = 0.0
            hist[j, b, 1] = 0.0
            hist[j, b, 2] = 0.0
        hist[j, MISSING_BIN, 0] = 0.0
        hist[j, MISSING_BIN, 1] = 0.0
        hist[j, MISSING_BIN, 2] = 0.0


@inner_jit
def build_histograms(
    codes, y, w, m, rows, start, stop, features, n_features, n_bins, hist
):
    """Fill ``hist[:n_features]`` from the rows ``rows[start:stop]``.

    ``m[row]`` is the number of training rows that row stands for (1, or more
    for a row that stands for identical rows: see ``grow_tree``). Only the
    bins a feature uses (``0..n_bins[f]-1`` and the missing bin) are written;
    the others are never read.
    """
    _clear(hist, features, n_features, n_bins)
    for i in range(start, stop):
        row = rows[i]
        weight = w[row]
        multiplicity = m[row]
        side = 1 - y[row]  # 0: positive, 1: negative
        for j in range(n_features):
            code = codes[row, features[j]]
            hist[j, code, side] += weight
            hist[j, code, 2] += multiplicity


@inner_jit
def subtract_histograms(parent, child, features, n_features, n_bins):
    """``parent -= child`` on the bins in use (the parent becomes the sibling)."""
    for j in range(n_features):
        for b in range(n_bins[features[j]]):
            parent[j, b, 0] -= child[j, b, 0]
            parent[j, b, 1] -= child[j, b, 1]
            parent[j, b, 2] -= child[j, b, 2]
        parent[j, MISSING_BIN, 0] -= child[j, MISSING_BIN, 0]
        parent[j, MISSING_BIN, 1] -= child[j, MISSING_BIN, 1]
        parent[j, MISSING_BIN, 2] -= child[j, MISSING_BIN, 2]
