"""The ranking regions of a scorer of two features."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np
from sklearn.utils.validation import check_array

from treerank.utils.validation import check_bipartite_target

__all__ = ["plot_partition"]

# Distinct score levels above which region boundaries are not drawn.
_MAX_BOUNDARY_LEVELS = 64


def _check_bounds(bounds, X):
    if bounds is None:
        if X is None:
            raise ValueError(
                "plot_partition needs X (to frame the plot) or bounds=(x_min, "
                "x_max, y_min, y_max)."
            )
        low, high = X.min(axis=0), X.max(axis=0)
        pad = 0.05 * np.where(high > low, high - low, 1.0)
        return low[0] - pad[0], high[0] + pad[0], low[1] - pad[1], high[1] + pad[1]
    try:
        values = np.asarray(bounds, dtype=np.float64)
    except (TypeError, ValueError):
        values = None
    if (
        values is None
        or values.shape != (4,)
        or not np.all(np.isfinite(values))
        or values[0] >= values[1]
        or values[2] >= values[3]
    ):
        raise ValueError(
            "bounds must be four finite numbers (x_min, x_max, y_min, y_max) with "
            f"x_min < x_max and y_min < y_max; got {bounds!r}."
        )
    return tuple(float(v) for v in values)


def _grid_input(estimator, points):
    """Grid points as the estimator expects them (a DataFrame if fitted on one)."""
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        return points
    import pandas as pd

    return pd.DataFrame(points, columns=list(names))


def _score_ranks(scores):
    """Dense ranks of scores scaled to [0, 1] (1 = best), and the levels count."""
    _, inverse = np.unique(scores, return_inverse=True)
    inverse = inverse.ravel()
    n_levels = int(inverse.max()) + 1
    if n_levels == 1:
        return np.full(inverse.shape, 0.5), inverse, 1
    return inverse / (n_levels - 1), inverse, n_levels


def plot_partition(
    estimator,
    X=None,
    y=None,
    *,
    bounds=None,
    grid_resolution=200,
    feature_names=None,
    boundaries=True,
    cmap="RdYlGn",
    colorbar=True,
    ax=None,
):
    """Plot the ranking regions of a fitted scorer of two features.

    The scorer's ``decision_function`` is evaluated on a regular grid. Each
    grid cell is coloured by the rank of its score among the distinct scores
    of the grid, scaled to [0, 1] (1 = ranked first). For a ranking tree the
    distinct scores are its leaves, so the picture is its partition, each
    cell coloured by the rank of its leaf; for a continuous scorer it shows
    the level sets. Optionally, the sample points are drawn on top.

    Parameters
    ----------
    estimator : fitted estimator with ``decision_function``
        A scorer of exactly two features (a TreeRank, a RankingForest, any
        scikit-learn classifier with ``decision_function``).
    X : array-like of shape (n_samples, 2) or None, default=None
        Sample points to draw; they also frame the plot when ``bounds`` is
        None.
    y : array-like of shape (n_samples,) or None, default=None
        Binary labels of ``X``: positives are drawn as black ``+``, negatives
        as hollow circles. Without ``y`` the points are drawn as small dots.
    bounds : tuple of four float or None, default=None
        ``(x_min, x_max, y_min, y_max)`` of the grid; by default the range of
        ``X`` with a 5% margin.
    grid_resolution : int, default=200
        Number of grid points along each axis.
    feature_names : sequence of two str or None, default=None
        Axis labels; defaults to the estimator's ``feature_names_in_`` if any,
        else ``x[0]`` and ``x[1]``.
    boundaries : bool, default=True
        Draw the boundaries between regions of different scores (only when
        there are at most 64 distinct scores on the grid).
    cmap : str or matplotlib Colormap, default="RdYlGn"
        Colour map of the scaled rank (the default is red = last, green =
        first).
    colorbar : bool, default=True
        Add a colour bar of the scaled rank.
    ax : matplotlib Axes or None, default=None
        Where to draw; a new figure is created if None.

    Returns
    -------
    ax : matplotlib Axes
        The regions are its first image (``ax.images[0]``, origin at the
        lower left, rows along the second feature).

    Notes
    -----
    Costs one ``decision_function`` call on ``grid_resolution ** 2`` points.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.plotting import plot_partition
    >>> X, y = make_nested_squares(1000, random_state=0)
    >>> tree = TreeRank(max_depth=3, random_state=0).fit(X, y)
    >>> ax = plot_partition(tree, X, y, grid_resolution=100)
    >>> ax.images[0].get_array().shape
    (100, 100)
    """
    import matplotlib.pyplot as plt

    if not hasattr(estimator, "decision_function"):
        raise ValueError(
            "estimator must have a decision_function method; got "
            f"{type(estimator).__name__}."
        )
    n_features = getattr(estimator, "n_features_in_", None)
    if n_features is not None and n_features != 2:
        raise ValueError(
            "plot_partition draws scorers of exactly 2 features; the estimator "
            f"was fitted on {n_features}."
        )
    if isinstance(grid_resolution, bool) or not isinstance(grid_resolution, Integral):
        raise ValueError(
            f"grid_resolution must be an int >= 2; got {grid_resolution!r}."
        )
    if grid_resolution < 2:
        raise ValueError(f"grid_resolution must be an int >= 2; got {grid_resolution}.")
    if X is not None:
        X = check_array(X, dtype=np.float64, input_name="X")
        if X.shape[1] != 2:
            raise ValueError(f"X must have 2 columns; got {X.shape[1]}.")
    y01 = None
    if y is not None:
        if X is None:
            raise ValueError("y was given without X.")
        y01, _ = check_bipartite_target(y, allow_single_class=True)
        if y01.shape[0] != X.shape[0]:
            raise ValueError(
                f"y has {y01.shape[0]} elements but X has {X.shape[0]} rows."
            )
    x_min, x_max, y_min, y_max = _check_bounds(bounds, X)
    if feature_names is None:
        names = getattr(estimator, "feature_names_in_", None)
        feature_names = ["x[0]", "x[1]"] if names is None else [str(n) for n in names]
    elif isinstance(feature_names, str) or len(feature_names) != 2:
        raise ValueError(f"feature_names must contain 2 names; got {feature_names!r}.")

    xs = np.linspace(x_min, x_max, grid_resolution)
    ys = np.linspace(y_min, y_max, grid_resolution)
    grid_x, grid_y = np.meshgrid(xs, ys)
    points = np.column_stack([grid_x.ravel(), grid_y.ravel()])
    scores = np.asarray(
        estimator.decision_function(_grid_input(estimator, points)), dtype=np.float64
    ).ravel()
    if scores.shape[0] != points.shape[0]:
        raise ValueError(
            "decision_function must return one score per row; got "
            f"{scores.shape[0]} scores for {points.shape[0]} rows."
        )
    scaled, levels, n_levels = _score_ranks(scores)
    shape = (grid_resolution, grid_resolution)

    if ax is None:
        _, ax = plt.subplots(figsize=(5.5, 4.5))
    dx = (x_max - x_min) / (grid_resolution - 1) / 2
    dy = (y_max - y_min) / (grid_resolution - 1) / 2
    image = ax.imshow(
        scaled.reshape(shape),
        origin="lower",
        extent=(x_min - dx, x_max + dx, y_min - dy, y_max + dy),
        cmap=cmap,
        vmin=0.0,
        vmax=1.0,
        interpolation="nearest",
        aspect="auto",
        alpha=0.85,
    )
    if boundaries and 1 < n_levels <= _MAX_BOUNDARY_LEVELS:
        ax.contour(
            grid_x,
            grid_y,
            levels.reshape(shape),
            levels=np.arange(n_levels - 1) + 0.5,
            colors="#333333",
            linewidths=0.6,
        )
    if X is not None:
        if y01 is None:
            ax.scatter(X[:, 0], X[:, 1], s=4, color="#333333", label="sample")
        else:
            neg, pos = y01 == 0, y01 == 1
            ax.scatter(
                X[neg, 0],
                X[neg, 1],
                s=10,
                facecolors="none",
                edgecolors="#555555",
                linewidths=0.5,
                label="negative",
            )
            ax.scatter(
                X[pos, 0],
                X[pos, 1],
                s=14,
                marker="+",
                color="black",
                linewidths=0.7,
                label="positive",
            )
            ax.legend(loc="upper right", fontsize="small", framealpha=0.8)
    if colorbar:
        ax.figure.colorbar(image, ax=ax, label="score rank (1 = ranked first)")
    ax.set_xlim(x_min, x_max)
    ax.set_ylim(y_min, y_max)
    ax.set_xlabel(feature_names[0])
    ax.set_ylabel(feature_names[1])
    ax.set_title(f"ranking regions ({n_levels} distinct scores on the grid)")
    return ax
