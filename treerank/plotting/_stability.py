"""Plots of bootstrap stability results."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import numpy as np

__all__ = ["plot_stability"]


def _check_results(results):
    from treerank.stability import StabilityResult

    if isinstance(results, StabilityResult):
        return {results.estimator_name: results}
    if isinstance(results, dict) and results:
        for name, result in results.items():
            if not isinstance(result, StabilityResult):
                raise ValueError(
                    f"results[{name!r}] must be a StabilityResult (the output of "
                    f"bootstrap_stability); got {type(result).__name__}."
                )
        return {str(name): result for name, result in results.items()}
    raise ValueError(
        "results must be a StabilityResult or a non-empty dict of name to "
        f"StabilityResult; got {type(results).__name__}."
    )


def plot_stability(results, *, kind="matrix", ax=None):
    """Plot the result(s) of :func:`~treerank.stability.bootstrap_stability`.

    Parameters
    ----------
    results : StabilityResult or dict of str to StabilityResult
        One result, or several to compare side by side (for example
        ``{"TreeRank": r1, "RankingForest": r2}``).
    kind : {"matrix", "distances", "auc"}, default="matrix"
        - ``"matrix"``: heat map of the B x B matrix of Kendall distances
          between replicates (one result only; the diagonal is left blank);
        - ``"distances"``: for each result, a box plot of the B(B - 1)/2
          pairwise distances, with the estimate and an interval of two
          jackknife standard errors;
        - ``"auc"``: for each result, a box plot of the replicates' AUCs
          (out-of-bag or test, as computed), with the individual values.
    ax : matplotlib Axes or None, default=None
        Where to draw; a new figure is created if None.

    Returns
    -------
    ax : matplotlib Axes

    See Also
    --------
    treerank.stability.bootstrap_stability : Compute the results.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> from treerank import TreeRank
    >>> from treerank.datasets import make_nested_squares
    >>> from treerank.plotting import plot_stability
    >>> from treerank.stability import bootstrap_stability
    >>> X, y = make_nested_squares(500, random_state=0)
    >>> result = bootstrap_stability(TreeRank(max_depth=2), X, y, n_bootstrap=4,
    ...                              random_state=0)
    >>> ax = plot_stability(result, kind="matrix")
    >>> ax.images[0].get_array().shape
    (4, 4)
    """
    import matplotlib.pyplot as plt

    results = _check_results(results)
    if kind not in ("matrix", "distances", "auc"):
        raise ValueError(f"kind must be 'matrix', 'distances' or 'auc'; got {kind!r}.")
    if kind == "matrix" and len(results) != 1:
        raise ValueError(
            f"kind='matrix' draws one result; got {len(results)}. Plot them one by "
            "one, or use kind='distances' to compare them."
        )
    if ax is None:
        if kind == "matrix":
            _, ax = plt.subplots(figsize=(5.0, 4.2))
        else:
            _, ax = plt.subplots(figsize=(max(3.5, 1.6 * len(results) + 2.0), 4.0))

    names = list(results)
    if kind == "matrix":
        (name,) = names
        result = results[name]
        matrix = np.ma.masked_array(
            result.pairwise, mask=np.eye(result.n_bootstrap, dtype=bool)
        )
        cmap = plt.get_cmap("viridis").with_extremes(bad="#dddddd")
        image = ax.imshow(matrix, cmap=cmap, interpolation="nearest")
        ax.figure.colorbar(image, ax=ax, label="Kendall distance")
        ax.set_xlabel("replicate")
        ax.set_ylabel("replicate")
        ax.set_title(
            f"{name}: instability {result.estimate:.4f} "
            f"(SE {result.std_error:.4f}, B = {result.n_bootstrap})",
            fontsize="medium",
        )
        return ax

    positions = np.arange(1, len(names) + 1)
    if kind == "distances":
        data = [results[name].distances for name in names]
        ax.boxplot(data, positions=positions, widths=0.5, showfliers=True)
        estimates = np.array([results[name].estimate for name in names])
        errors = np.array([results[name].std_error for name in names])
        ax.errorbar(
            positions + 0.32,
            estimates,
            yerr=np.where(np.isfinite(errors), 2 * errors, 0.0),
            fmt="o",
            color="#d62728",
            capsize=3,
            label="estimate ± 2 SE",
        )
        ax.legend(loc="best", fontsize="small")
        ax.set_ylabel("Kendall distance between replicates")
        ax.set_title("bootstrap instability (lower is more stable)", fontsize="medium")
    else:
        data = []
        for name in names:
            auc = np.asarray(results[name].replicate_auc, dtype=float)
            data.append(auc[np.isfinite(auc)])
        ax.boxplot(data, positions=positions, widths=0.5, showfliers=False)
        for position, values in zip(positions, data):
            jitter = np.linspace(-0.12, 0.12, values.shape[0]) if values.size else []
            ax.plot(
                position + np.asarray(jitter),
                values,
                "o",
                ms=3,
                alpha=0.6,
                color="#1f77b4",
            )
        sources = sorted({results[name].auc_source for name in names})
        ax.set_ylabel(f"replicate AUC ({', '.join(sources)})")
        ax.set_title("AUC of the bootstrap replicates", fontsize="medium")
    ax.set_xticks(positions)
    ax.set_xticklabels(names)
    ax.set_xlim(0.4, len(names) + 0.7)
    return ax
