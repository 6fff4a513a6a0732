"""The figures of the command line (``export --format png``, ``demo``).

One function draws a tree figure and one saves a figure, so that what the
tests check for readability (no overlapping text, text at least 8 pixels at
the saved resolution) is what the commands write.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from treerank.utils._io import atomic_path

__all__ = ["FIGURE_DPI", "save_figure", "tree_figure"]

FIGURE_DPI = 100
"""Resolution of the saved figures (pixels per inch)."""


def tree_figure(tree, *, feature_names=None, max_leaves="auto", max_depth=None):
    """A ranking tree drawn by :func:`~treerank.plotting.plot_tree` in a new figure.

    Returns
    -------
    figure : matplotlib Figure
    """
    import matplotlib

    matplotlib.use("Agg")
    from treerank.plotting import plot_tree

    return plot_tree(
        tree, feature_names=feature_names, max_leaves=max_leaves, max_depth=max_depth
    ).figure


def save_figure(figure, path, *, file_format="png", overwrite=False, close=True):
    """Write ``figure`` atomically at :data:`FIGURE_DPI`, cropped to its content."""
    import matplotlib.pyplot as plt

    try:
        with atomic_path(path, overwrite=overwrite) as tmp:
            figure.savefig(tmp, dpi=FIGURE_DPI, format=file_format, bbox_inches="tight")
    finally:
        if close:
            plt.close(figure)
