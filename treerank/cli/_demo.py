"""The ``treerank demo`` command: fit, report and plot on embedded data."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import time

from sklearn.model_selection import train_test_split

from treerank.cli._figures import save_figure, tree_figure
from treerank.datasets import NestedSquares, load_breast_cancer
from treerank.ensemble import RankingForest
from treerank.metrics import roc_auc_score, roc_curve, roc_sup_distance
from treerank.tree import TreeRank
from treerank.utils._io import atomic_write

__all__ = ["CompileTimer", "demo_tree", "run_demo"]


class CompileTimer:
    """Seconds spent compiling numba kernels while the timer is on.

    The kernels are compiled on their first use in an environment, then
    loaded from numba's cache by later processes; the demo reports the
    compilation apart from the fit time. Measured with numba's compiler
    events (``numba.core.event``): the outermost compilations (a kernel
    compiles the kernels it calls inside its own compilation) are summed;
    numba compiles one function at a time, so the intervals do not overlap.

    Examples
    --------
    >>> from treerank.cli._demo import CompileTimer
    >>> timer = CompileTimer()
    >>> with timer:
    ...     pass
    >>> timer.seconds
    0.0
    """

    def __init__(self):
        self.seconds = 0.0
        self.count = 0

    def __enter__(self):
        from numba.core import event

        self._recording = event.install_recorder("numba:compile")
        self._recorder = self._recording.__enter__()
        return self

    def __exit__(self, *exc_info):
        self._recording.__exit__(*exc_info)
        depth, start = 0, None
        for timestamp, record in self._recorder.buffer:
            if record.is_start:
                if depth == 0:
                    start = timestamp
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    self.seconds += timestamp - start
                    self.count += 1
        return False


def _datasets(random_state):
    model = NestedSquares()
    X_train, y_train = model.sample(2000, random_state=random_state)
    X_test, y_test = model.sample(20000, random_state=random_state + 1)
    yield "nested squares", X_train, y_train, X_test, y_test, model, ["x1", "x2"]
    data = load_breast_cancer()
    X_train, X_test, y_train, y_test = train_test_split(
        data.data,
        data.target,
        test_size=0.3,
        stratify=data.target,
        random_state=random_state,
    )
    yield (
        "breast cancer",
        X_train,
        y_train,
        X_test,
        y_test,
        None,
        list(data.feature_names),
    )


def _models(random_state):
    return {
        "TreeRank": TreeRank(random_state=random_state),
        "RankingForest": RankingForest(n_estimators=100, random_state=random_state),
    }


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def demo_tree(random_state=0):
    """The demo's nested-squares ranking tree and its feature names.

    Returns
    -------
    tree : TreeRank
    feature_names : list of str
    """
    _, X, y, _, _, _, features = next(_datasets(random_state))
    return _models(random_state)["TreeRank"].fit(X, y), features


def _save_figure(fig, path):
    save_figure(fig, path, overwrite=True, close=False)


def _compile_note(seconds):
    if seconds >= 0.05:
        return (
            f"First run in this environment: {seconds:.1f} s went into compiling "
            "treerank's numba kernels (counted apart from the fit times above). "
            "They are cached on disk: later runs load them in a fraction of a "
            "second."
        )
    return (
        "The numba kernels were loaded from the cache (they are compiled once, on "
        "the first run after installation)."
    )


def run_demo(output_dir="treerank-demo", *, random_state=0, stream=None):
    """Fit TreeRank and RankingForest on embedded data; print and write a report.

    Writes into ``output_dir``: ROC plots (with ROC* where it is known), the
    nested-squares ranking tree as Graphviz DOT, PNG and text, the bootstrap
    stability of TreeRank and RankingForest (plot and table), and
    ``summary.md``.

    Parameters
    ----------
    output_dir : str, default="treerank-demo"
        Output folder (created if needed).
    random_state : int, default=0
        Seed of the data and of the models.
    stream : file-like or None, default=None
        Where to print (standard output if None).

    Returns
    -------
    rows : list of tuple
        The rows of the accuracy table.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from treerank._compilation._background import start_background_compilation
    from treerank.export import export_graphviz, export_text
    from treerank.plotting import plot_roc, plot_stability
    from treerank.stability import bootstrap_stability

    def say(text=""):
        print(text, file=stream, flush=True)

    os.makedirs(output_dir, exist_ok=True)
    # on a first run, the routing's and the median's kernels compile in a
    # second process while TreeRank compiles the growth's (see
    # treerank._compilation._background)
    start_background_compilation()
    rows, written, fitted = [], [], {}
    compile_total = 0.0
    for name, X_train, y_train, X_test, y_test, model, features in _datasets(
        random_state
    ):
        curves = {}
        for label, ranker in _models(random_state).items():
            say(
                f"fitting {label} on {name} "
                f"({X_train.shape[0]} x {X_train.shape[1]}) ..."
            )
            start = time.perf_counter()
            compiling = CompileTimer()
            with compiling:
                ranker.fit(X_train, y_train)
                scores = ranker.decision_function(X_test)
            elapsed = time.perf_counter() - start
            compile_total += compiling.seconds
            fit_time = elapsed - compiling.seconds
            curves[label] = scores
            auc = roc_auc_score(y_test, scores)
            if model is not None:
                fpr, tpr, _ = roc_curve(y_test, scores)
                sup = roc_sup_distance((fpr, tpr), model.optimal_roc_curve())
                auc_star, sup_text = f"{model.optimal_auc():.4f}", f"{sup:.4f}"
            else:
                auc_star = sup_text = "n/a"
            size = (
                f"{ranker.n_leaves_} leaves"
                if isinstance(ranker, TreeRank)
                else f"{ranker.n_cells_} cells"
            )
            rows.append(
                (
                    name,
                    label,
                    X_train.shape[0],
                    X_test.shape[0],
                    f"{auc:.4f}",
                    auc_star,
                    sup_text,
                    f"{fit_time:.2f}",
                    f"{compiling.seconds:.2f}",
                    size,
                )
            )
            fitted[name, label] = (ranker, features)
        fig, ax = plt.subplots(figsize=(5, 5))
        plot_roc(y_test, curves, optimal_roc=model, ax=ax)
        ax.set_title(f"{name}: test ROC")
        path = os.path.join(output_dir, f"roc_{name.replace(' ', '_')}.png")
        _save_figure(fig, path)
        plt.close(fig)
        written.append(path)

    # the nested-squares ranking tree, exported
    tree, features = fitted["nested squares", "TreeRank"]
    dot_path = os.path.join(output_dir, "tree_nested_squares.dot")
    export_graphviz(tree, dot_path, feature_names=features)
    text_path = os.path.join(output_dir, "tree_nested_squares.txt")
    with atomic_write(text_path) as handle:
        handle.write(export_text(tree, feature_names=features))
    fig = tree_figure(tree, feature_names=features)
    png_path = os.path.join(output_dir, "tree_nested_squares.png")
    _save_figure(fig, png_path)
    plt.close(fig)
    written += [dot_path, text_path, png_path]

    # bootstrap stability of a single tree vs a forest
    say("bootstrap stability on nested squares (8 replicates each) ...")
    X, y = NestedSquares().sample(1000, random_state=random_state + 2)
    stability_rows, results = [], []
    for label, ranker in [
        ("TreeRank", TreeRank(random_state=random_state)),
        (
            "RankingForest (30 trees)",
            RankingForest(n_estimators=30, random_state=random_state),
        ),
    ]:
        result = bootstrap_stability(
            ranker, X, y, n_bootstrap=8, random_state=random_state
        )
        results.append(result)
        stability_rows.append(
            (
                label,
                f"{result.estimate:.4f}",
                f"{result.std_error:.4f}",
                f"{result.replicate_auc.mean():.4f}",
            )
        )
    compared = {row[0]: result for row, result in zip(stability_rows, results)}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    plot_stability(compared, kind="distances", ax=axes[0])
    axes[0].set_title("pairwise Kendall distances between replicates")
    plot_stability(compared, kind="auc", ax=axes[1])
    axes[1].set_title("out-of-bag AUC of the replicates")
    stability_png = os.path.join(output_dir, "stability_nested_squares.png")
    _save_figure(fig, stability_png)
    plt.close(fig)
    written.append(stability_png)

    table = _table(
        [
            "data set",
            "model",
            "n train",
            "n test",
            "test AUC",
            "AUC*",
            "sup |ROC* - ROC|",
            "fit + score time (s)",
            "kernel compilation (s)",
            "size",
        ],
        rows,
    )
    stability = _table(
        [
            "model",
            "bootstrap Kendall instability",
            "standard error",
            "out-of-bag AUC (mean)",
        ],
        stability_rows,
    )
    compile_note = _compile_note(compile_total)
    summary = os.path.join(output_dir, "summary.md")
    with atomic_write(summary) as handle:
        handle.write(
            "# treerank demo\n\n" + table + "\n\n" + compile_note + "\n\n## "
            "Stability (nested squares, 1,000 points)\n\n" + stability + "\n"
        )
    written.append(summary)
    say()
    say(table)
    say()
    say(compile_note)
    say()
    say(stability)
    say()
    for path in written:
        say(f"wrote {path}")
    return rows
