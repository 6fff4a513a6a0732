"""The ``treerank demo`` command: fit, report and plot on embedded data."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import time

from sklearn.model_selection import train_test_split

from treerank.datasets import NestedSquares, load_breast_cancer
from treerank.metrics import roc_auc_score, roc_curve, roc_sup_distance
from treerank.tree import TreeRank
from treerank.utils._io import atomic_path, atomic_write

__all__ = ["run_demo"]


def _datasets(random_state):
    model = NestedSquares()
    X_train, y_train = model.sample(2000, random_state=random_state)
    X_test, y_test = model.sample(20000, random_state=random_state + 1)
    yield "nested squares", X_train, y_train, X_test, y_test, model
    X, y = load_breast_cancer(return_X_y=True)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, stratify=y, random_state=random_state
    )
    yield "breast cancer", X_train, y_train, X_test, y_test, None


def _format_table(rows):
    header = [
        "data set",
        "model",
        "n train",
        "n test",
        "test AUC",
        "AUC*",
        "sup |ROC* - ROC|",
        "fit time (s)",
        "leaves",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows:
        lines.append("| " + " | ".join(str(v) for v in row) + " |")
    return "\n".join(lines)


def run_demo(output_dir="treerank-demo", *, random_state=0, stream=None):
    """Fit TreeRank on embedded data, print a report and write ROC plots.

    Parameters
    ----------
    output_dir : str, default="treerank-demo"
        Folder receiving the plots and ``summary.md`` (created if needed).
    random_state : int, default=0
        Seed of the data and of the models.
    stream : file-like or None, default=None
        Where to print (standard output if None).

    Returns
    -------
    rows : list of tuple
        The table rows.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from treerank.plotting import plot_roc

    def say(text):
        print(text, file=stream, flush=True)

    os.makedirs(output_dir, exist_ok=True)
    rows, written = [], []
    for name, X_train, y_train, X_test, y_test, model in _datasets(random_state):
        say(f"fitting TreeRank on {name} ({X_train.shape[0]} x {X_train.shape[1]}) ...")
        start = time.perf_counter()
        ranker = TreeRank(random_state=random_state).fit(X_train, y_train)
        fit_time = time.perf_counter() - start
        scores = ranker.decision_function(X_test)
        auc = roc_auc_score(y_test, scores)
        if model is not None:
            fpr, tpr, _ = roc_curve(y_test, scores)
            sup = roc_sup_distance((fpr, tpr), model.optimal_roc_curve())
            auc_star, sup_text = f"{model.optimal_auc():.4f}", f"{sup:.4f}"
        else:
            auc_star = sup_text = "n/a"
        rows.append(
            (
                name,
                "TreeRank",
                X_train.shape[0],
                X_test.shape[0],
                f"{auc:.4f}",
                auc_star,
                sup_text,
                f"{fit_time:.2f}",
                ranker.n_leaves_,
            )
        )
        fig, ax = plt.subplots(figsize=(5, 5))
        plot_roc(y_test, {"TreeRank": scores}, optimal_roc=model, ax=ax)
        ax.set_title(f"{name}: test ROC")
        path = os.path.join(output_dir, f"roc_{name.replace(' ', '_')}.png")
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=100, format="png")
        plt.close(fig)
        written.append(path)
    table = _format_table(rows)
    summary = os.path.join(output_dir, "summary.md")
    with atomic_write(summary) as handle:
        handle.write("# treerank demo\n\n" + table + "\n")
    written.append(summary)
    say("")
    say(table)
    say("")
    for path in written:
        say(f"wrote {path}")
    return rows
