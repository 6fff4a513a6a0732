"""ROC curves of one or several scorers, with the optimal ROC curve if known."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np
from scipy import integrate

from treerank.metrics._roc import roc_auc_score, roc_curve

__all__ = ["plot_roc"]


def plot_roc(y_true, scores, *, sample_weight=None, optimal_roc=None, ax=None):
    """Plot the ROC curves of several scorers on one set of axes.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels.
    scores : array-like of shape (n_samples,) or dict of str to array-like
        Scores of one scorer, or a mapping from a name to each scorer's scores.
    sample_weight : array-like of shape (n_samples,), default=None
        Sample weights.
    optimal_roc : tuple of two arrays, RankingDistribution or None, default=None
        ROC* to overlay: knots ``(fpr, tpr)`` or a distribution with a known
        optimum (its ``optimal_roc_curve()`` and ``optimal_auc()`` are used).
    ax : matplotlib Axes or None, default=None
        Where to draw; a new figure is created if None.

    Returns
    -------
    ax : matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from treerank.plotting import plot_roc
    >>> ax = plot_roc([0, 0, 1, 1], {"s": [0.1, 0.4, 0.35, 0.8]})
    >>> ax.get_legend().get_texts()[0].get_text()
    's (AUC = 0.750)'
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(5, 5))
    if not isinstance(scores, dict):
        scores = {"scorer": scores}
    if optimal_roc is not None:
        if hasattr(optimal_roc, "optimal_roc_curve"):
            fpr, tpr = optimal_roc.optimal_roc_curve()
            label = f"ROC* (AUC* = {optimal_roc.optimal_auc():.3f})"
        else:
            fpr, tpr = (np.asarray(a, dtype=float) for a in optimal_roc)
            label = f"ROC* (AUC* = {integrate.trapezoid(tpr, fpr):.3f})"
        ax.plot(fpr, tpr, color="black", linestyle="--", linewidth=1.5, label=label)
    for name, values in scores.items():
        fpr, tpr, _ = roc_curve(y_true, values, sample_weight=sample_weight)
        auc = roc_auc_score(y_true, values, sample_weight=sample_weight)
        ax.plot(fpr, tpr, linewidth=1.5, label=f"{name} (AUC = {auc:.3f})")
    ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    ax.set_xlabel("false positive rate")
    ax.set_ylabel("true positive rate")
    ax.set_aspect("equal")
    ax.legend(loc="lower right", fontsize="small")
    return ax
