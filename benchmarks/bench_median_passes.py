"""Passes of the median's local search: test AUC and fit time, 3 against 10.

The forest's Kendall median starts from the better of the Borda and mean-rank
orders and improves it by passes of single-cell moves
(``aggregation_max_iter``). This benchmark fits ``RankingForest`` with 3
passes (the default) and with 10 (the default before issue 24), everything
else equal, on

- the real-data protocol of ``bench_real_data.py`` (34 data sets, the first
  repeat's 5 folds), and
- the learning curves of ``bench_scaling.py`` (9 larger sets, 1,000 to 64,000
  training rows, 3 repeats),

and reports the paired AUC differences (3 passes minus 10; mean per data set,
then mean +- standard error over the data sets) and the geometric mean of the
fit-time ratios. Both runs use their benchmark's JSON-lines cache format, in
files of their own (``benchmarks/results/cache/median_passes_*.jsonl``, not
committed), so a rerun computes only what is missing.

    python benchmarks/bench_median_passes.py
    pip install -e ".[benchmark]"
"""

import json
import os

import numpy as np
from _common import RESULTS, markdown_table, write_result
from _protocol import stamp

SPECS = {
    3: "RankingForest(aggregation_max_iter=3)",
    10: "RankingForest(aggregation_max_iter=10)",
}
SIZES = ("1000", "4000", "16000", "64000")
CACHES = {
    "real": os.path.join(RESULTS, "cache", "median_passes_real.jsonl"),
    "scaling": os.path.join(RESULTS, "cache", "median_passes_scaling.jsonl"),
}


def run():
    import bench_real_data
    import bench_scaling

    models = list(SPECS.values())
    bench_real_data.main(
        ["--models", *models, "--folds", "0", "1", "2", "3", "4",
         "--cache", CACHES["real"], "--no-report"]
    )  # fmt: skip
    bench_scaling.main(
        ["--models", *models, "--sizes", *SIZES,
         "--cache", CACHES["scaling"], "--no-report"]
    )  # fmt: skip


def _records(path):
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def paired(records, key):
    """Per data set mean AUC difference (3 - 10 passes) and fit-time ratios."""
    by = {}
    for r in records:
        by[(r["dataset"], key(r), r["model"])] = r
    differences, ratios = {}, []
    for (dataset, unit, model), r in by.items():
        if model != SPECS[10]:
            continue
        other = by.get((dataset, unit, SPECS[3]))
        if other is None:
            continue
        differences.setdefault(dataset, []).append(other["auc"] - r["auc"])
        ratios.append(other["fit_time"] / r["fit_time"])
    return {d: float(np.mean(v)) for d, v in differences.items()}, ratios


def summary_row(label, differences, ratios):
    values = np.array(list(differences.values()))
    error = values.std(ddof=1) / np.sqrt(values.size) if values.size > 1 else 0.0
    return [
        label,
        values.size,
        f"{values.mean():+.5f} +- {error:.5f}",
        f"{np.sum(values > 0)} / {np.sum(values < 0)}",
        f"{values.min():+.4f} / {values.max():+.4f}",
        f"{np.exp(np.mean(np.log(ratios))):.2f}",
    ]


def report(info):
    rows = []
    real = _records(CACHES["real"])
    differences, ratios = paired(real, lambda r: (r["repeat"], r["fold"]))
    rows.append(summary_row("real data (34 sets, 5 folds)", differences, ratios))
    scaling = _records(CACHES["scaling"])
    for size in SIZES:
        subset = [r for r in scaling if str(r["size"]) == size]
        differences, ratios = paired(subset, lambda r: r["repeat"])
        if differences:
            rows.append(
                summary_row(f"scaling sets, {int(size):,} rows", differences, ratios)
            )
    table = markdown_table(
        [
            "benchmark",
            "data sets",
            "AUC, 3 - 10 passes (mean +- s.e. over sets)",
            "sets ahead / behind",
            "worst / best set",
            "fit time, 3 / 10 passes",
        ],
        rows,
    )
    body = (
        "Written by `benchmarks/bench_median_passes.py`. `RankingForest` with 3 "
        "passes of the median's local search (the default) against 10, all else "
        "equal; one thread. Paired differences of test AUC, averaged per data "
        "set; fit times as the geometric mean of the paired ratios.\n\n" + table
    )
    write_result("median_passes.md", "Passes of the median's local search", body, info)


if __name__ == "__main__":
    info = stamp()  # before any fit
    run()
    report(info)
