"""Plots of per-row explanations: one row's waterfall, many rows' summary."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

from numbers import Integral

import numpy as np

__all__ = ["plot_contribution_summary", "plot_waterfall"]


def _check_max_display(max_display):
    if (
        isinstance(max_display, bool)
        or not isinstance(max_display, Integral)
        or max_display < 1
    ):
        raise ValueError(
            f"max_display must be a positive integer; got {max_display!r}."
        )


def plot_waterfall(explanation, row=0, *, max_display=10, ax=None):
    """How one row's score is built from the base value, feature by feature.

    Bars start at the base value (the mean score of the background rows, for
    the interventional form) and add the contributions of the features, the
    largest in absolute value at the top; the features beyond
    ``max_display - 1`` are gathered in one bar, and for a median explained
    by its mean proxy a last bar is its ``proxy_difference``. The last bar
    ends at the row's score, on the scale of the explanation (the calibrated
    score by default). Each feature is labelled with the row's value; the
    axis covers the base value, the bars and their value labels.

    Parameters
    ----------
    explanation : Explanation
        From :func:`~treerank.inspection.shapley_values`.
    row : int, default=0
        The row (position in the explanation).
    max_display : int, default=10
        Bars at most.
    ax : matplotlib Axes or None, default=None
        Where to draw; a new figure is created if None.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from treerank.inspection import Explanation
    >>> from treerank.plotting import plot_waterfall
    >>> e = Explanation(np.array([[0.5, -0.25]]), 1.0, np.array([1.25]),
    ...                 np.array([[3.0, 7.0]]), ["a", "b"], "interventional", "tree")
    >>> ax = plot_waterfall(e)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['a = 3', 'b = 7']
    """
    import matplotlib.pyplot as plt

    _check_max_display(max_display)
    n_rows = len(explanation)
    if isinstance(row, bool) or not isinstance(row, Integral) or not 0 <= row < n_rows:
        raise ValueError(f"row must be an integer in [0, {n_rows}); got {row!r}.")
    from treerank.inspection._explanation import PROXY_TERM

    values = explanation.values[row]
    order = np.argsort(-np.abs(values), kind="stable")
    order = order[values[order] != 0]  # features with no contribution
    proxy = explanation.proxy_difference
    room = max_display - (proxy is not None)
    if order.shape[0] > room:
        shown, rest = order[: max(room - 1, 0)], order[max(room - 1, 0) :]
    else:
        shown, rest = order, order[:0]
    labels = [
        f"{explanation.feature_names[k]} = {explanation.display_value(row, k)}"
        for k in shown
    ]
    amounts = list(values[shown])
    if rest.shape[0]:
        labels.append(f"{rest.shape[0]} other features")
        amounts.append(float(values[rest].sum()))
    if proxy is not None:  # the median's score minus its proxy's
        labels.append(PROXY_TERM)
        amounts.append(float(proxy[row]))
    if ax is None:
        _, ax = plt.subplots(figsize=(7.5, 0.45 * len(labels) + 1.6))
    base = explanation.base_value
    start = base + np.concatenate([[0.0], np.cumsum(amounts)[:-1]])
    ends = start + np.asarray(amounts)
    positions = np.arange(len(labels))[::-1]  # the first bar on top
    colors = ["tab:blue" if a >= 0 else "tab:red" for a in amounts]
    ax.barh(positions, amounts, left=start, color=colors, height=0.6)
    # the axis covers the base value, every bar and room for the value labels
    # on either side, so that no label leaves the axes (onto the feature names)
    low = min(base, float(np.min(ends, initial=base)), float(np.min(start)))
    high = max(base, float(np.max(ends, initial=base)), float(np.max(start)))
    span = high - low if high > low else max(abs(base), 1.0) * 0.1
    ax.set_xlim(low - 0.22 * span, high + 0.22 * span)
    for position, left, amount in zip(positions, start, amounts):
        ax.text(
            left + amount,
            position,
            f" {amount:+.3g} ",
            va="center",
            ha="left" if amount >= 0 else "right",
            fontsize="small",
            clip_on=True,
        )
    ax.axvline(base, color="grey", linewidth=0.8, linestyle=":")
    score = float(ends[-1]) if len(amounts) else base
    ax.axvline(score, color="black", linewidth=0.8)
    ax.set_yticks(positions)
    ax.set_yticklabels(labels)
    scale = getattr(explanation, "scale", "score")
    ax.set_xlabel(f"{scale}: base value {base:.4g} -> row's score {score:.4g}")
    ax.set_title("contributions to the row's score")
    return ax


def plot_contribution_summary(explanation, *, max_display=20, ax=None):
    """The contributions of each feature over many rows, features by importance.

    One line per feature, sorted by mean absolute contribution (the largest
    at the top); each row is a dot at its contribution, coloured by the
    row's value of the feature relative to the other rows (its quantile:
    blue low, red high; grey when missing), with a little vertical jitter to
    show where the dots pile up. Dots left of 0 pull the score down.

    Parameters
    ----------
    explanation : Explanation
        From :func:`~treerank.inspection.shapley_values`.
    max_display : int, default=20
        Features at most.
    ax : matplotlib Axes or None, default=None
        Where to draw; a new figure is created if None.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> from treerank.inspection import Explanation
    >>> from treerank.plotting import plot_contribution_summary
    >>> rng = np.random.default_rng(0)
    >>> e = Explanation(rng.normal(size=(50, 3)) * [1, 3, 0.1], 0.0,
    ...                 np.zeros(50), rng.normal(size=(50, 3)), ["a", "b", "c"],
    ...                 "interventional", "tree")
    >>> ax = plot_contribution_summary(e)
    >>> [t.get_text() for t in ax.get_yticklabels()]
    ['b', 'a', 'c']
    """
    import matplotlib.pyplot as plt

    _check_max_display(max_display)
    values = explanation.values
    importance = np.mean(np.abs(values), axis=0) if len(values) else values[0]
    order = np.argsort(-importance, kind="stable")[:max_display]
    if ax is None:
        _, ax = plt.subplots(figsize=(7, 0.4 * order.shape[0] + 1.6))
    rng = np.random.default_rng(0)  # the jitter only: the same plot every time
    cmap = plt.get_cmap("coolwarm")
    positions = np.arange(order.shape[0])[::-1]
    for position, k in zip(positions, order):
        column = explanation.data[:, k]
        known = ~np.isnan(column)
        colors = np.tile(np.array([0.6, 0.6, 0.6, 1.0]), (column.shape[0], 1))
        if known.any():
            ranks = np.argsort(np.argsort(column[known], kind="stable"), kind="stable")
            quantile = ranks / max(1, known.sum() - 1)
            colors[known] = cmap(quantile)
        jitter = rng.uniform(-0.25, 0.25, column.shape[0])
        ax.scatter(values[:, k], position + jitter, c=colors, s=10, linewidths=0)
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_yticks(positions)
    ax.set_yticklabels([explanation.feature_names[k] for k in order])
    ax.set_xlabel("contribution to the score (left: pulls the rank down)")
    mappable = plt.cm.ScalarMappable(cmap=cmap)
    mappable.set_array([0.0, 1.0])
    colorbar = ax.figure.colorbar(mappable, ax=ax, pad=0.02, aspect=30)
    colorbar.set_ticks([0.0, 1.0])
    colorbar.set_ticklabels(["low", "high"])
    colorbar.set_label("feature value")
    ax.set_title(f"contributions over {values.shape[0]} rows")
    return ax
