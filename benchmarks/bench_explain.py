"""Time to explain rows (Shapley values) relative to ``decision_function``.

Fits, on 5,000 x 20 synthetic rows (``make_classification``, 8 informative
features), a default TreeRank, a default RankingForest of 100 trees (Kendall
median) and the same forest aggregated by the mean, then explains 10,000 new
rows (``treerank.inspection.shapley_values``):

- TreeRank and the mean forest: the exact tree algorithm (interventional),
  with 20 and 100 background rows: its cost is proportional to
  rows x background rows x trees;
- the median forest: the permutation estimate (32 orders and their reverses
  per row, 100 background rows), whose cost is about 2 x 32 x 19 scores per
  row; its median standard error relative to the mean absolute value is
  reported;

and reports each time with its ratio to the time of ``decision_function`` on
the same rows (all with ``n_jobs``).

    python benchmarks/bench_explain.py [--quick] [--n-jobs 2] [--rows 10000]

``--quick`` (200 rows, 20 trees, one size of background) checks that the
script runs; it prints its table and writes no result file.
"""

import argparse
import copy

import numpy as np
from _common import markdown_table, timed, write_result
from sklearn.datasets import make_classification

from treerank import RankingForest, TreeRank
from treerank.inspection import shapley_values


def models(n_trees, n_jobs, X, y):
    tree = TreeRank(random_state=0).fit(X, y)
    median = RankingForest(n_estimators=n_trees, n_jobs=n_jobs, random_state=0)
    median.fit(X, y)
    mean = RankingForest(
        n_estimators=n_trees, aggregation="mean", n_jobs=n_jobs, random_state=0
    ).fit(X, y)
    return {"TreeRank": tree, "forest (mean)": mean, "forest (median)": median}


def run(quick, n_jobs, n_rows):
    n_trees = 20 if quick else 100
    n_rows = 200 if quick else n_rows
    backgrounds = [20] if quick else [20, 100]
    X, y = make_classification(
        5000 + n_rows,
        20,
        n_informative=8,
        n_redundant=4,
        flip_y=0.05,
        random_state=0,
    )
    X_train, y_train, X_new = X[:5000], y[:5000], X[5000:]
    fitted = models(n_trees, n_jobs, X_train, y_train)
    rows = []
    for name, model in fitted.items():
        # compile the kernels first, outside the timings
        shapley_values(model, X_new[:2], background=X_train[:3], n_jobs=n_jobs)
        model.decision_function(X_new[:10])
        base_time, _ = timed(model.decision_function, X_new, repeat=3)
        sizes = [100] if name == "forest (median)" else backgrounds
        for n_background in sizes:
            background = X_train[:n_background]
            seconds, explanation = timed(
                shapley_values,
                model,
                X_new,
                background=background,
                max_background=None,
                random_state=0,
                n_jobs=n_jobs,
            )
            check = np.abs(
                explanation.base_value
                + explanation.values.sum(axis=1)
                - model.decision_function(X_new)
            ).max()
            assert explanation.n_background == n_background
            if explanation.std_errors is not None:
                relative = np.median(explanation.std_errors) / np.mean(
                    np.abs(explanation.values)
                )
                precision = f"median SE / mean abs value = {relative:.3f}"
            else:
                precision = "exact"
            rows.append(
                [
                    name,
                    explanation.algorithm,
                    n_background,
                    f"{seconds:.2f}",
                    f"{base_time:.3f}",
                    f"{seconds / base_time:.0f}",
                    f"{seconds / (n_rows * n_background) * 1e6:.1f}",
                    precision,
                    f"{check:.1e}",
                ]
            )
            print(rows[-1], flush=True)
    header = [
        "model",
        "algorithm",
        "background rows",
        "explain (s)",
        "decision_function (s)",
        "ratio",
        "us per row and background row",
        "precision",
        "max efficiency error",
    ]
    table = markdown_table(header, rows)
    text = (
        f"{n_rows} rows, 20 features, {n_trees} trees, n_jobs={n_jobs}; the "
        "forests are grown with random_state=0 on 5,000 rows (the mean forest "
        "has the median forest's trees).\n\n" + table
    )
    return text, copy.copy(rows)


def main(quick, n_jobs, n_rows):
    text, _ = run(quick, n_jobs, n_rows)
    print(text)
    if not quick:
        write_result("explain.md", "Explaining rows: Shapley values", text)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--rows", type=int, default=10_000)
    args = parser.parse_args()
    main(args.quick, args.n_jobs, args.rows)
