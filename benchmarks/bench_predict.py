"""Prediction on unseen rows against a random forest; the aggregation's share of a fit.

Part 1 (predict) fits RandomForestClassifier(n_estimators=100) and the default
RankingForest (median, and ``aggregation="mean"``) on three designs, each at
n = 2,000 / 20,000 / 200,000 training rows, and scores n unseen rows: the
forest's ``decision_function`` against the random forest's ``predict_proba``,
one thread (``n_jobs=1`` and ``threadpoolctl`` limits), best of ``--repeat``
calls. The designs:

- ``engine``: the engine benchmark's synthetic design (``synthetic(n, 20)`` of
  ``bench_engine.py``: a logistic model with interactions and noise features);
- ``make_classification``: ``sklearn.datasets.make_classification(n, 20,
  n_informative=8)``;
- a real data set (``--real``, default ``sylva``: 13,086 rows, 212 features; see
  ``_real_datasets.py``), split into two halves: the training rows are drawn
  from one, the test rows from the other, with replacement when n exceeds a
  half (so the test rows are never training rows).

Times are CPU seconds of the process (``time.process_time``, less sensitive to
other jobs on the machine than wall time, which is also reported); the ratios
are those of the best times. The median forest's time is split into routing
(the leaf of every row in every tree) and the rest (cell look-up, insertion of
unseen cells, tie-break). Peak memory is that of the numpy allocations during
one call (traced by ``tracemalloc``, in a call not timed).

Part 2 (aggregation) fits the default RankingForest with n_estimators in
{5, 10, 25, 100, 300} on 1,000 and 20,000 rows of ``make_classification`` (one
thread) and reports ``aggregation_time_`` (common subpartition, median,
insertion index: wall seconds) as a share of the fit's wall time.

Targets (issue 24): median <= 1.0x the random forest (goal 0.5x), mean <= 0.7x,
aggregation <= 25% of the fit.

    python benchmarks/bench_predict.py [--quick] [--parts predict aggregation]
"""

import argparse
import time
import tracemalloc
from functools import partial

import numpy as np
from _common import markdown_table, write_result
from _protocol import stamp
from threadpoolctl import threadpool_limits

N_TREES_GRID = (5, 10, 25, 100, 300)


# ----------------------------------------------------------------------
# data
# ----------------------------------------------------------------------
def design_data(name, n, seed=0):
    """Training rows, their labels and n unseen rows of a design."""
    if name == "engine":
        from bench_engine import synthetic

        X, y = synthetic(n, 20, seed)
        X_test, _ = synthetic(n, 20, seed + 1)
        return X, y, X_test
    if name == "make_classification":
        from sklearn.datasets import make_classification

        X, y = make_classification(2 * n, 20, n_informative=8, random_state=seed)
        return X[:n], y[:n], X[n:]
    from _real_datasets import load_dataset

    data = load_dataset(name)
    rng = np.random.default_rng(seed)
    rows = rng.permutation(data.n_samples)
    half = data.n_samples // 2
    train, test = rows[:half], rows[half:]
    train = rng.choice(train, n, replace=n > train.shape[0])
    test = rng.choice(test, n, replace=n > test.shape[0])
    return data.X[train], data.y[train], data.X[test]


# ----------------------------------------------------------------------
# measurement
# ----------------------------------------------------------------------
def measured(function, repeat):
    """Best CPU and wall seconds over ``repeat`` calls, and peak extra MB.

    The memory is the peak of the numpy (and other Python) allocations during
    the last call, traced by :mod:`tracemalloc` (a traced call runs a little
    slower, so it is not timed).
    """
    cpu, wall = np.inf, np.inf
    for _ in range(repeat):
        start_cpu, start_wall = time.process_time(), time.perf_counter()
        function()
        cpu = min(cpu, time.process_time() - start_cpu)
        wall = min(wall, time.perf_counter() - start_wall)
    tracemalloc.start()
    function()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return cpu, wall, peak


def _mark(ratio, limit):
    return f"{ratio:.2f}x" + ("" if ratio <= limit else " (over)")


# ----------------------------------------------------------------------
# part 1: prediction
# ----------------------------------------------------------------------
def predict_part(designs, sizes, repeat, seed):
    from sklearn.ensemble import RandomForestClassifier

    from treerank import RankingForest

    rows = []
    for design in designs:
        for n in sizes:
            X, y, X_test = design_data(design, n, seed)
            rf = RandomForestClassifier(
                n_estimators=100, n_jobs=1, random_state=seed
            ).fit(X, y)
            median = RankingForest(n_jobs=1, random_state=seed).fit(X, y)
            mean = RankingForest(aggregation="mean", n_jobs=1, random_state=seed).fit(
                X, y
            )
            for model in (median, mean):  # compiled kernels loaded, not timed
                model.decision_function(X_test[:10])
            rf_cpu, rf_wall, rf_peak = measured(
                partial(rf.predict_proba, X_test), repeat
            )
            med_cpu, med_wall, med_peak = measured(
                partial(median.decision_function, X_test), repeat
            )
            route_cpu, _, _ = measured(partial(median._leaf_ranks, X_test), repeat)
            mean_cpu, mean_wall, _ = measured(
                partial(mean.decision_function, X_test), repeat
            )
            rows.append(
                [
                    design,
                    f"{n:,}",
                    f"{rf_cpu:.3f}",
                    f"{med_cpu:.3f} ({route_cpu:.3f} + {med_cpu - route_cpu:.3f})",
                    _mark(med_cpu / rf_cpu, 1.0),
                    f"{med_wall / rf_wall:.2f}x",
                    f"{mean_cpu:.3f}",
                    _mark(mean_cpu / rf_cpu, 0.7),
                    f"{mean_wall / rf_wall:.2f}x",
                    f"{median.n_cells_:,}",
                    f"{med_peak:.1f} / {rf_peak:.1f}",
                ]
            )
            print(" | ".join(rows[-1]), flush=True)
    header = [
        "design",
        "rows",
        "RF(100) predict_proba, CPU s",
        "median, CPU s (routing + rest)",
        "median / RF, CPU",
        "wall",
        "mean, CPU s",
        "mean / RF, CPU",
        "wall",
        "cells",
        "peak MB, median / RF",
    ]
    return markdown_table(header, rows)


# ----------------------------------------------------------------------
# part 2: aggregation share
# ----------------------------------------------------------------------
def aggregation_part(sizes, grid, repeat, seed):
    from treerank import RankingForest

    rows = []
    for n in sizes:
        X, y, _ = design_data("make_classification", n, seed)
        RankingForest(n_estimators=2, n_jobs=1, random_state=seed).fit(X[:200], y[:200])
        for n_trees in grid:
            best = None
            for _ in range(repeat):
                forest = RankingForest(
                    n_estimators=n_trees, n_jobs=1, random_state=seed
                )
                start_cpu, start_wall = time.process_time(), time.perf_counter()
                forest.fit(X, y)
                cpu = time.process_time() - start_cpu
                wall = time.perf_counter() - start_wall
                share = forest.aggregation_time_ / wall
                if best is None or wall < best[1]:
                    best = (cpu, wall, forest.aggregation_time_, share, forest.n_cells_)
            cpu, wall, aggregation, share, n_cells = best
            rows.append(
                [
                    f"{n:,}",
                    n_trees,
                    f"{n_cells:,}",
                    f"{wall:.3f}",
                    f"{cpu:.3f}",
                    f"{aggregation:.3f}",
                    f"{100 * share:.0f}%" + ("" if share <= 0.25 else " (over)"),
                ]
            )
            print(" | ".join(str(v) for v in rows[-1]), flush=True)
    header = [
        "rows",
        "n_estimators",
        "cells",
        "fit, wall s",
        "fit, CPU s",
        "aggregation, wall s",
        "aggregation / fit",
    ]
    return markdown_table(header, rows)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="2,000 and 20,000 rows (predict), 1,000 rows (aggregation), fewer repeats",
    )
    parser.add_argument(
        "--parts",
        nargs="+",
        default=["predict", "aggregation"],
        choices=["predict", "aggregation"],
    )
    parser.add_argument("--real", default="sylva", help="the real data set")
    parser.add_argument("--repeat", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    info = stamp()  # before any fit
    repeat = args.repeat or (3 if args.quick else 7)
    sizes = (2_000, 20_000) if args.quick else (2_000, 20_000, 200_000)
    agg_sizes = (1_000,) if args.quick else (1_000, 20_000)
    designs = ("engine", "make_classification", args.real)
    sections = []
    with threadpool_limits(1):
        if "predict" in args.parts:
            table = predict_part(designs, sizes, repeat, args.seed)
            sections.append(
                "## Prediction on unseen rows, one thread\n\n"
                f"Best of {repeat} calls; CPU seconds of the process (wall "
                "ratios beside). Targets: median <= 1.0x RF (goal 0.5x), mean "
                "<= 0.7x.\n\n" + table
            )
        if "aggregation" in args.parts:
            table = aggregation_part(agg_sizes, N_TREES_GRID, min(repeat, 3), args.seed)
            sections.append(
                "## Aggregation share of the fit, one thread\n\n"
                "make_classification(n, 20, n_informative=8); the fit of least "
                "wall time of the repeats. Target: <= 25%.\n\n" + table
            )
    mode = " (quick mode)" if args.quick else ""
    write_result(
        "predict.md",
        f"Prediction and aggregation speed{mode}",
        "Written by `benchmarks/bench_predict.py`.\n\n" + "\n\n".join(sections),
        info,
    )


if __name__ == "__main__":
    main()
