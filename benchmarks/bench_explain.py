"""Time to explain rows (Shapley values) relative to ``decision_function``.

Fits, on 5,000 x 20 synthetic rows (``make_classification``, 8 informative
features), a default TreeRank, a default RankingForest of 100 trees (Kendall
median) and the same forest aggregated by the mean (the same trees), then
explains ``--rows`` new rows (``treerank.inspection.shapley_values``, the
5,000 training rows as background, of which 1,000 are kept):

- TreeRank: the exact tree algorithm, 200 background rows;
- the mean forest: the exact tree algorithm with 2 background rows drawn per
  tree (the default), and with 50 rows shared by every tree (the walks of
  the first version);
- the median forest: its mean proxy (the default: exact values of the mean
  of its trees, 2 rows per tree), and the permutation estimate of its own
  values (32 orders and their reverses per row) on ``--permutation-rows``
  rows;

and reports each time with its ratio to the time of ``decision_function`` on
the same rows (all with ``n_jobs``). A second table measures the precision
on ``--check-rows`` rows: the relative RMS error of the default against the
values with all 1,000 background rows (and that of 50 shared rows), the
share of rows whose first reason (most negative value) is the reference's;
and for the median, the proxy against a precise permutation estimate of the
median's own values (256 orders per row), with the Kendall tau between the
median's and the proxy's scores.

    python benchmarks/bench_explain.py [--quick] [--n-jobs 2] [--rows 10000]
        [--permutation-rows 10000] [--check-rows 50]

``--quick`` (200 rows, 20 trees) checks that the script runs; it prints its
tables and writes no result file.
"""

import argparse

import numpy as np
from _common import markdown_table, timed, write_result
from _protocol import stamp
from scipy.stats import kendalltau
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
    return tree, mean, median


def _precision(explanation):
    errors = explanation.std_errors
    if errors is None:
        errors = explanation.background_std_errors
    relative = np.median(errors) / np.mean(np.abs(explanation.values))
    kind = "SE" if explanation.std_errors is not None else "background SE"
    return f"median {kind} / mean abs value = {relative:.3f}"


def _background_label(explanation, n_trees):
    per_tree = explanation.background_per_tree
    if per_tree is None:
        return f"{explanation.n_background} kept"
    walks = per_tree * n_trees
    if per_tree == explanation.n_background and n_trees > 1:
        return f"all {per_tree}, shared by every tree ({walks} walks per row)"
    return f"{per_tree} per tree ({walks} walks per row)"


def _first_reasons(values):
    return np.argmin(values, axis=1)


def _relative_rms(values, reference):
    return float(
        np.sqrt(np.mean((values - reference) ** 2)) / np.mean(np.abs(reference))
    )


def timing_table(fitted, X_train, X_new, n_permutation_rows, n_jobs):
    tree, mean, median = fitted
    n_trees = len(mean.estimators_)
    cases = [
        ("TreeRank", tree, {}, X_new),
        ("forest (mean)", mean, {}, X_new),
        (
            "forest (mean)",
            mean,
            {"max_background": 50, "background_per_tree": "all"},
            X_new,
        ),
        ("forest (median)", median, {}, X_new),
        (
            "forest (median)",
            median,
            {"algorithm": "permutation"},
            X_new[:n_permutation_rows],
        ),
    ]
    rows = []
    for name, model, options, X_rows in cases:
        # compile the kernels first, outside the timings
        options = {"scale": "decision", **options}  # the units the results give
        shapley_values(model, X_rows[:2], background=X_train[:60], **options)
        model.decision_function(X_rows[:10])
        base_time, _ = timed(model.decision_function, X_rows, repeat=3)
        seconds, explanation = timed(
            shapley_values,
            model,
            X_rows,
            background=X_train,
            random_state=0,
            n_jobs=n_jobs,
            **options,
        )
        check = np.abs(explanation.total() - explanation.scores).max()
        background = _background_label(explanation, 1 if model is tree else n_trees)
        rows.append(
            [
                name,
                explanation.algorithm,
                background,
                X_rows.shape[0],
                f"{seconds:.2f}",
                f"{base_time:.3f}",
                f"{seconds / base_time:.0f}",
                f"{seconds / X_rows.shape[0] * 1e3:.2f}",
                _precision(explanation),
                f"{check:.1e}",
            ]
        )
        print(rows[-1], flush=True)
    header = [
        "model",
        "algorithm",
        "background rows",
        "rows explained",
        "explain (s)",
        "decision_function (s)",
        "ratio",
        "ms per row",
        "precision",
        "max efficiency error",
    ]
    return markdown_table(header, rows)


def precision_table(fitted, X_train, X_check, n_jobs):
    _, mean, median = fitted
    options = {
        "background": X_train,
        "random_state": 0,
        "n_jobs": n_jobs,
        "scale": "decision",  # the units of the published results
    }
    reference = shapley_values(mean, X_check, background_per_tree="all", **options)
    first = _first_reasons(reference.values)
    n_trees = len(mean.estimators_)
    rows = []
    for default, extra in [
        (True, {}),
        (False, {"background_per_tree": 5}),
        (False, {"max_background": 50, "background_per_tree": "all"}),
    ]:
        errors, agree = [], []
        for seed in range(5):
            explanation = shapley_values(
                mean, X_check, **{**options, "random_state": seed, **extra}
            )
            errors.append(_relative_rms(explanation.values, reference.values))
            agree.append(np.mean(_first_reasons(explanation.values) == first))
        label = _background_label(explanation, n_trees)
        rows.append(
            [
                "forest (mean)",
                label + (" (default)" if default else ""),
                "values with the 1,000 kept rows (every tree, every row)",
                f"{np.mean(errors):.3f}",
                f"{np.mean(agree):.2f}",
            ]
        )
        print(rows[-1], flush=True)
    precise = shapley_values(
        median, X_check, algorithm="permutation", n_permutations=256, **options
    )
    proxy = shapley_values(median, X_check, **options)
    se = np.median(precise.std_errors) / np.mean(np.abs(precise.values))
    correlation = np.corrcoef(proxy.values.ravel(), precise.values.ravel())[0, 1]
    same = np.mean(_first_reasons(proxy.values) == _first_reasons(precise.values))
    rows.append(
        [
            "forest (median)",
            "mean proxy (default)",
            "the median's own values, permutation estimate with 256 orders per "
            f"row (median SE / mean abs value {se:.3f}), in its own units",
            f"correlation {correlation:.3f}",
            f"{same:.2f}",
        ]
    )
    print(rows[-1], flush=True)
    header = [
        "model",
        "values",
        "compared with",
        "relative RMS error",
        "same first reason",
    ]
    return markdown_table(header, rows)


def run(quick, n_jobs, n_rows, n_permutation_rows, n_check_rows):
    n_trees = 20 if quick else 100
    if quick:
        n_rows, n_permutation_rows, n_check_rows = 200, 50, 10
    n_permutation_rows = min(n_rows, n_permutation_rows)
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
    timings = timing_table(fitted, X_train, X_new, n_permutation_rows, n_jobs)
    precision = precision_table(fitted, X_train, X_new[:n_check_rows], n_jobs)
    _, mean, median = fitted
    tau = kendalltau(
        median.decision_function(X_new), mean.decision_function(X_new)
    ).statistic
    text = (
        f"{n_rows} rows explained (the permutation estimate on the first "
        f"{n_permutation_rows}), 20 features, {n_trees} trees, n_jobs={n_jobs}; "
        "the forests are grown with random_state=0 on 5,000 rows (the mean "
        "forest has the median forest's trees); background: the 5,000 training "
        "rows, of which 1,000 are kept. The ratio is the time to explain over "
        "the time of decision_function on the same rows.\n\n"
        + timings
        + f"\n\nPrecision, on {n_check_rows} rows (5 draws of the background "
        "rows each). Kendall tau between the median's and the mean proxy's "
        f"scores of the {n_rows} rows: {tau:.3f}.\n\n" + precision
    )
    return text


def main(quick, n_jobs, n_rows, n_permutation_rows, n_check_rows):
    info = stamp()  # before any fit
    text = run(quick, n_jobs, n_rows, n_permutation_rows, n_check_rows)
    print(text)
    if not quick:
        write_result("explain.md", "Explaining rows: Shapley values", text, info)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--permutation-rows", type=int, default=10_000)
    parser.add_argument("--check-rows", type=int, default=50)
    args = parser.parse_args()
    main(args.quick, args.n_jobs, args.rows, args.permutation_rows, args.check_rows)
