"""Where a large fit's time goes, and what less data per tree would buy.

Issue 24 asks for a fit within 3x HistGradientBoosting's time at 250,000 and
1,000,000 rows with no loss of test AUC. This benchmark measures, on the engine
benchmark's synthetic design (``synthetic(n, 20)`` of ``bench_engine.py``, a
logistic model with interactions and 15 noise features; ``n`` training rows,
200,000 unseen test rows), one thread (``n_jobs=1`` and ``threadpoolctl``):

1. the default RankingForest's fit split into its parts: growing the trees
   (the compiled growth of each tree), routing the training rows that are not
   in a tree's sample, choosing the leaf scores (out-of-bag AUC), the median
   aggregation, and the rest (drawing the samples, binning, stacking arrays);
2. the forest against HistGradientBoosting (100 iterations, no early stopping)
   and LightGBM (100 trees) in the same run;
3. the two ways to give each tree less data, which is what a 3x fit would need:
   a smaller sample per tree (``max_samples``: the three largest powers of two
   below n) and a smaller sample for each LeafRank rule
   (``LeafRank(node_subsample=...)``, default 65,536), with their fit times and
   test AUC. Fitting the same data with the same seed, the AUC differences
   are paired.

Each model is fitted once after a warm-up fit (the kernels are compiled and
cached before any timing). Nothing else may run on the machine. The results
of each size are kept in ``results/large_fit.json``; the report shows every
size measured.

    python benchmarks/bench_large_fit.py [--n 200000 1000000]
"""

import argparse
import json
import os
import time
from contextlib import contextmanager

import numpy as np
from _common import RESULTS, markdown_table, write_result
from _protocol import stamp
from bench_engine import earlier_run, synthetic
from threadpoolctl import threadpool_limits

OURS = ("RankingForest", "LeafRank")
HEADER = (
    "Written by `benchmarks/bench_large_fit.py`. One thread; wall seconds of "
    "one fit after a warm-up; test AUC on 200,000 unseen rows."
)


@contextmanager
def timed_parts(totals):
    """Accumulate the wall time of the forest's parts into ``totals``."""
    from treerank.ensemble import _forest, _tree_aggregate

    patched = [
        (_forest, "grow_engine_structure", "growth"),
        (_forest, "route_binned", "routing of out-of-sample rows"),
        (_tree_aggregate.TreeAggregate, "_select_leaf_scores", "leaf scores"),
    ]
    originals = []
    for owner, name, label in patched:
        function = getattr(owner, name)
        originals.append((owner, name, function))

        def wrapper(*args, _function=function, _label=label, **kwargs):
            start = time.perf_counter()
            try:
                return _function(*args, **kwargs)
            finally:
                totals[_label] = totals.get(_label, 0.0) + time.perf_counter() - start

        setattr(owner, name, wrapper)
    try:
        yield totals
    finally:
        for owner, name, function in originals:
            setattr(owner, name, function)


def sample_sizes(n):
    """The three largest powers of two below ``n``, largest first."""
    top = int(np.floor(np.log2(n - 1)))
    return [2**k for k in (top, top - 1, top - 2)]


def models(n):
    from lightgbm import LGBMClassifier
    from sklearn.ensemble import HistGradientBoostingClassifier

    from treerank import LeafRank, RankingForest

    def forest(**params):
        return lambda: RankingForest(n_jobs=1, random_state=0, **params)

    def leafrank(node_subsample):
        return LeafRank(
            min_samples_leaf=5, criterion="gini", node_subsample=node_subsample
        )

    return {
        "HistGradientBoosting": lambda: HistGradientBoostingClassifier(
            max_iter=100, early_stopping=False, random_state=0
        ),
        "LightGBM": lambda: LGBMClassifier(
            n_estimators=100, n_jobs=1, random_state=0, verbose=-1
        ),
        "RankingForest": forest(),
        "RankingForest(aggregation='mean')": forest(aggregation="mean"),
        **{
            f"RankingForest(max_samples=2**{size.bit_length() - 1})": forest(
                max_samples=size
            )
            for size in sample_sizes(n)
        },
        "LeafRank(node_subsample=2**14)": forest(leafrank=leafrank(2**14)),
        "LeafRank(node_subsample=2**12)": forest(leafrank=leafrank(2**12)),
    }


def scores(model, X):
    if "treerank" in type(model).__module__:
        return model.decision_function(X)
    return model.predict_proba(X)[:, 1]


def run(n):
    from sklearn.metrics import roc_auc_score

    from treerank import RankingForest

    X, y = synthetic(n, 20, seed=0)
    X_test, y_test = synthetic(200_000, 20, seed=1)
    # compile (or load) every kernel, the wide leaf indices of large trees too
    RankingForest(n_estimators=2, n_jobs=1, random_state=0).fit(
        X[:50_000], y[:50_000]
    ).decision_function(X_test[:1000])
    records = {}
    parts = {}
    for name, make in models(n).items():
        totals = {}
        with threadpool_limits(1), timed_parts(totals):
            model = make()
            start = time.perf_counter()
            model.fit(X, y)
            fit = time.perf_counter() - start
        auc = roc_auc_score(y_test, scores(model, X_test))
        records[name] = (fit, auc)
        if name == "RankingForest":
            totals["median aggregation"] = model.aggregation_time_
            totals["rest"] = fit - sum(totals.values())
            parts = totals
        print(f"{name:40s} fit {fit:7.2f} s  AUC {auc:.4f}", flush=True)
    return records, parts


def section(n, records, parts):
    hgb = records["HistGradientBoosting"][0]
    default_fit, default_auc = records["RankingForest"]
    rows = [
        [
            name,
            f"{fit:.2f}",
            f"{fit / hgb:.1f}x",
            f"{auc:.4f}",
            f"{auc - default_auc:+.4f}" if name.startswith(OURS) else "",
        ]
        for name, (fit, auc) in records.items()
    ]
    table = markdown_table(
        ["model", "fit (s)", "fit / HGB", "test AUC", "AUC - default forest"], rows
    )
    part_rows = [
        [label, f"{seconds:.2f}", f"{100 * seconds / default_fit:.0f}%"]
        for label, seconds in parts.items()
    ]
    part_table = markdown_table(["part", "seconds", "share"], part_rows)
    growth = parts.get("growth", 0.0)
    return (
        f"## {n:,} training rows x 20 features\n\n{table}\n\n"
        "`LeafRank(node_subsample=...)` rows are the default forest with that "
        "LeafRank sample size (default 65,536).\n\n"
        "### The default forest's fit, by part\n\n"
        f"{part_table}\n\n"
        f"Growing the trees alone takes {growth:.2f} s, "
        f"{growth / hgb:.1f}x HistGradientBoosting's whole fit.\n"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[200_000])
    args = parser.parse_args()
    info = stamp()  # before any fit
    fields = {key: info[key] for key in ("commit", "dirty", "date", "command")}
    path = os.path.join(RESULTS, "large_fit.json")
    stored = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            stored = json.load(handle)
    for n in args.n:
        records, parts = run(n)
        stored[str(n)] = {"records": records, "parts": parts, "stamp": fields}
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(stored, handle, indent=1)
    sections = [
        section(int(n), entry["records"], entry["parts"])
        for n, entry in sorted(stored.items(), key=lambda item: int(item[0]))
    ]
    body = f"{HEADER}\n\n" + "\n".join(sections)
    earlier = [
        f"{int(n):,} rows ({earlier_run(entry.get('stamp'))})"
        for n, entry in sorted(stored.items(), key=lambda item: int(item[0]))
        if int(n) not in args.n
    ]
    if earlier:  # kept in large_fit.json from earlier runs
        body = "Sizes of earlier runs: " + "; ".join(earlier) + ".\n\n" + body
    write_result("large_fit.md", "Large fits: where the time goes", body, info)


if __name__ == "__main__":
    main()
