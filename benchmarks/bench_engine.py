"""The histogram engine: speed and memory against scikit-learn and LightGBM, and
accuracy against the previous (node-by-node, scikit-learn-tree) implementation.

Part 1 (speed) fits 100-tree ensembles on synthetic data of n = 2,000 / 20,000 /
200,000 / 1,000,000 rows (20 features; 50 at 1,000,000 rows) with n_jobs = 1 and
2, and times ``fit`` and the scoring of unseen rows (``decision_function`` for
ours, ``predict_proba`` for the peers), best of ``--repeat`` runs, as ratios to
RandomForestClassifier(100) in the same process. Peak extra memory is the rise
of the process's peak resident set (VmHWM, reset before each call). Models:
RandomForest(100), ExtraTrees(100), HistGradientBoosting (100 iterations),
LightGBM (100 trees), RankingForest() (median and mean: deep trees, the
defaults) and a shallow RankingForest (max_depth=6, min_samples_split=50,
LeafRank(4, 30): the defaults before the real-data study).

Part 2 (growth) fits the default RankingForest at 20,000 to 1,000,000 rows and
fits log(time) = a + b log(n): b is the growth exponent of the fit time.

Part 3 (accuracy) compares the test AUC of TreeRank and RankingForest (median
and mean) with the previous implementation (a git revision, run in a separate
process) on the synthetic sets and breast cancer, paired over 10 seeds.

    python benchmarks/bench_engine.py [--quick] [--parts speed growth accuracy]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import RESULTS, markdown_table, write_result
from _protocol import stamp
from scipy import stats
from threadpoolctl import threadpool_limits

REFERENCE_REVISION = "3c8093b"  # the last commit before the engine
PEERS = ("RandomForest", "ExtraTrees", "HistGradientBoosting", "LightGBM")


# ----------------------------------------------------------------------
# measurement
# ----------------------------------------------------------------------
def _vm_hwm():
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def _vm_rss():
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def measured(function, repeat):
    """Best wall time over ``repeat`` calls, peak extra memory, last result."""
    best, peak, result = np.inf, 0, None
    for _ in range(repeat):
        result = None
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")  # reset the peak resident set to the current one
        before = _vm_rss()
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
        peak = max(peak, _vm_hwm() - before)
    return best, peak, result


def synthetic(n, d, seed):
    """A logistic model with interactions and noise features."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    logit = X[:, 0] - X[:, 1] ** 2 + 0.8 * X[:, 2] * X[:, 3] + 0.5 * np.sin(2 * X[:, 4])
    y = (rng.random(n) < 1 / (1 + np.exp(-(logit + 0.5)))).astype(int)
    return X, y


def make_model(name, n_jobs, seed=0):
    from lightgbm import LGBMClassifier
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )

    from treerank import LeafRank, RankingForest

    return {
        "RandomForest": lambda: RandomForestClassifier(
            n_estimators=100, n_jobs=n_jobs, random_state=seed
        ),
        "ExtraTrees": lambda: ExtraTreesClassifier(
            n_estimators=100, n_jobs=n_jobs, random_state=seed
        ),
        "HistGradientBoosting": lambda: HistGradientBoostingClassifier(
            max_iter=100, early_stopping=False, random_state=seed
        ),
        "LightGBM": lambda: LGBMClassifier(
            n_estimators=100, n_jobs=n_jobs, random_state=seed, verbose=-1
        ),
        "RankingForest": lambda: RankingForest(n_jobs=n_jobs, random_state=seed),
        "RankingForest (mean)": lambda: RankingForest(
            aggregation="mean", n_jobs=n_jobs, random_state=seed
        ),
        # the defaults before the real-data study: shallow trees
        "RankingForest (shallow)": lambda: RankingForest(
            max_depth=6,
            min_samples_split=50,
            leafrank=LeafRank(max_depth=4, min_samples_leaf=30, criterion="gini"),
            n_jobs=n_jobs,
            random_state=seed,
        ),
    }[name]()


def scores(model, X):
    if hasattr(model, "decision_function") and "treerank" in type(model).__module__:
        return model.decision_function(X)
    return model.predict_proba(X)[:, 1]


# ----------------------------------------------------------------------
# part 1: speed and memory
# ----------------------------------------------------------------------
def run_speed(sizes, n_jobs_list, repeat, skip_slow_peers, out):
    from sklearn.metrics import roc_auc_score

    ours = [
        "RankingForest",
        "RankingForest (mean)",
        "RankingForest (shallow)",
    ]
    rows = []
    for n in sizes:
        d = 50 if n >= 1_000_000 else 20
        X, y = synthetic(n, d, seed=0)
        X_test, y_test = synthetic(min(n, 200_000), d, seed=1)
        for n_jobs in n_jobs_list:
            names = list(PEERS) + ours
            if n > skip_slow_peers:
                names = [m for m in names if m not in ("RandomForest", "ExtraTrees")]
            for name in names:
                # best of two for ours above 20,000 rows: the first call may
                # compile kernels for wider leaf indices (uint16), not yet
                # in numba's cache
                reps = repeat if n <= 20_000 else 2 if name in ours else 1
                with threadpool_limits(n_jobs):
                    model = make_model(name, n_jobs)
                    fit_time, fit_mem, _ = measured(lambda: model.fit(X, y), reps)
                    predict_time, predict_mem, s = measured(
                        lambda: scores(model, X_test), reps
                    )
                record = {
                    "n": n,
                    "d": d,
                    "n_jobs": n_jobs,
                    "model": name,
                    "fit": fit_time,
                    "fit_mem": fit_mem,
                    "predict": predict_time,
                    "predict_mem": predict_mem,
                    "auc": float(roc_auc_score(y_test, s)),
                    "aggregation": float(getattr(model, "aggregation_time_", 0.0)),
                    "distinct_scores": int(np.unique(s).shape[0]),
                }
                print(json.dumps(record), flush=True)
                rows.append(record)
                del model
    # a run at some sizes and thread counts replaces those only
    ran = {(n, n_jobs) for n in sizes for n_jobs in n_jobs_list}
    kept = [r for r in out.get("speed", []) if (r["n"], r["n_jobs"]) not in ran]
    out["speed"] = sorted(kept + rows, key=lambda r: r["n"])


def speed_tables(rows):
    lines = []
    for (n, n_jobs) in sorted({(r["n"], r["n_jobs"]) for r in rows}):
        group = [r for r in rows if r["n"] == n and r["n_jobs"] == n_jobs]
        ref = next((r for r in group if r["model"] == "RandomForest"), None)
        header = [
            "model",
            "fit (s)",
            "fit / RF",
            "predict (s)",
            "predict / RF",
            "fit peak MB",
            "predict peak MB",
            "aggregation share",
            "test AUC",
        ]
        body = []
        for r in group:
            agg = r["aggregation"] / r["fit"] if r["aggregation"] else 0.0
            body.append(
                [
                    r["model"],
                    f"{r['fit']:.2f}",
                    f"{r['fit'] / ref['fit']:.2f}" if ref else "-",
                    f"{r['predict']:.2f}",
                    f"{r['predict'] / ref['predict']:.2f}" if ref else "-",
                    f"{r['fit_mem'] / 2**20:.0f}",
                    f"{r['predict_mem'] / 2**20:.0f}",
                    f"{agg:.0%}" if agg else "-",
                    f"{r['auc']:.4f}",
                ]
            )
        d = group[0]["d"]
        lines.append(
            f"**n = {n:,} x {d} features, n_jobs = {n_jobs}** (test: "
            f"{min(n, 200_000):,} unseen rows)\n\n" + markdown_table(header, body)
        )
    return "\n\n".join(lines)


# ----------------------------------------------------------------------
# part 2: growth of the fit time with n
# ----------------------------------------------------------------------
def run_growth(sizes, out):
    from treerank import RankingForest

    rows = []
    for n in sizes:
        X, y = synthetic(n, 20, seed=0)
        t, _, model = measured(
            lambda: RankingForest(random_state=0).fit(X, y), 1 if n > 20_000 else 2
        )
        trees = t - model.aggregation_time_
        rows.append({"n": n, "fit": t, "trees": trees, "agg": model.aggregation_time_})
        print(json.dumps(rows[-1]), flush=True)
    out["growth"] = rows


def growth_table(rows):
    n = np.array([r["n"] for r in rows], dtype=float)
    lines = []
    body = [
        [f"{r['n']:,}", f"{r['fit']:.2f}", f"{r['trees']:.2f}", f"{r['agg']:.2f}"]
        for r in rows
    ]
    text = markdown_table(
        ["n", "fit (s)", "trees (s)", "aggregation (s)"], body
    )
    for key, label in (("fit", "whole fit"), ("trees", "tree growth")):
        slope = np.polyfit(np.log(n), np.log([r[key] for r in rows]), 1)[0]
        lines.append(f"- growth exponent of the {label}: n^{slope:.2f}")
    return text + "\n\n" + "\n".join(lines)


# ----------------------------------------------------------------------
# part 3: accuracy against the previous implementation
# ----------------------------------------------------------------------
ACCURACY_MODELS = ("TreeRank", "RankingForest", "RankingForest (mean)")
ACCURACY_SETS = ("NestedSquares", "GaussianMeanShift", "GaussianScale", "breast_cancer")


def accuracy_worker(seeds):
    """Test AUCs of the importable treerank (old or new) as JSON lines."""
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import train_test_split

    from treerank import RankingForest, TreeRank
    from treerank.datasets import (
        GaussianMeanShift,
        GaussianScale,
        NestedSquares,
        load_breast_cancer,
    )

    results = []
    for data in ACCURACY_SETS:
        for seed in seeds:
            if data == "breast_cancer":
                X, y = load_breast_cancer(return_X_y=True)
                X, X_test, y, y_test = train_test_split(
                    X, y, test_size=0.3, stratify=y, random_state=seed
                )
            else:
                model = {
                    "NestedSquares": NestedSquares,
                    "GaussianMeanShift": GaussianMeanShift,
                    "GaussianScale": GaussianScale,
                }[data]()
                X, y = model.sample(2000, random_state=seed)
                X_test, y_test = model.sample(20000, random_state=10_000 + seed)
            for name in ACCURACY_MODELS:
                estimator = {
                    "TreeRank": TreeRank(random_state=seed),
                    "RankingForest": RankingForest(random_state=seed),
                    "RankingForest (mean)": RankingForest(
                        aggregation="mean", random_state=seed
                    ),
                }[name]
                estimator.fit(X, y)
                auc = roc_auc_score(y_test, estimator.decision_function(X_test))
                results.append(
                    {"data": data, "seed": seed, "model": name, "auc": float(auc)}
                )
    return results


def _export_revision(revision):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    target = tempfile.mkdtemp(prefix="treerank-ref-")
    archive = subprocess.run(
        ["git", "-C", root, "archive", revision, "treerank"],
        check=True,
        capture_output=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", target], input=archive, check=True)
    return target


def run_accuracy(seeds, revision, out):
    path = _export_revision(revision)
    env = dict(os.environ, PYTHONPATH=path)
    command = [
        sys.executable,
        os.path.abspath(__file__),
        "--accuracy-worker",
        ",".join(map(str, seeds)),
    ]
    old = json.loads(
        subprocess.run(
            command, env=env, check=True, capture_output=True, text=True, cwd=path
        ).stdout.splitlines()[-1]
    )
    new = accuracy_worker(seeds)
    out["accuracy"] = {"revision": revision, "old": old, "new": new}


def accuracy_table(result):
    old = {(r["data"], r["model"], r["seed"]): r["auc"] for r in result["old"]}
    new = {(r["data"], r["model"], r["seed"]): r["auc"] for r in result["new"]}
    body = []
    for data in ACCURACY_SETS:
        for model in ACCURACY_MODELS:
            keys = sorted(k for k in new if k[0] == data and k[1] == model)
            a = np.array([old[k] for k in keys])
            b = np.array([new[k] for k in keys])
            diff = b - a
            p = stats.wilcoxon(b, a).pvalue if np.any(diff != 0) else 1.0
            body.append(
                [
                    data,
                    model,
                    f"{a.mean():.4f}",
                    f"{b.mean():.4f}",
                    f"{diff.mean():+.4f} +- {diff.std(ddof=1) / np.sqrt(len(diff)):.4f}",
                    f"{p:.3f}",
                ]
            )
    return (
        f"Previous implementation: revision {result['revision']}; "
        f"{len({r['seed'] for r in result['new']})} seeds, paired.\n\n"
        + markdown_table(
            [
                "data",
                "model",
                "AUC before",
                "AUC engine",
                "difference (mean +- s.e.)",
                "Wilcoxon p",
            ],
            body,
        )
    )


# ----------------------------------------------------------------------
COMPILE_CODE = """
import time
t0 = time.perf_counter()
import numpy as np
from sklearn.datasets import make_classification
import treerank
from treerank.cli._demo import CompileTimer
X, y = make_classification(2000, 20, n_informative=8, random_state=0)
t1 = time.perf_counter()
timer = CompileTimer()
with timer:
    forest = treerank.RankingForest(random_state=0).fit(X, y)
    forest.decision_function(X + 0.01)
t2 = time.perf_counter()
print(t1 - t0, t2 - t1, timer.seconds, timer.count)
"""


def compile_times():
    """The first fit in a fresh environment, then in a later process.

    A default 100-tree forest on 2,000 x 20 rows (``make_classification`` with
    8 informative features) is fitted and scores 2,000 unseen rows, in a new
    Python process with an empty numba cache (``NUMBA_CACHE_DIR``), then in a
    second process that finds the compiled kernels in that cache, and again in
    a new process with an empty cache and the background compilation of the
    median's kernels switched off (``TREERANK_BACKGROUND_COMPILE=0``, see
    :mod:`treerank._compilation._background`). Reports the
    import time, the wall time of the fit and scoring, and the part of it spent
    compiling (numba's compiler events, see ``treerank.cli._demo.CompileTimer``).
    """
    from treerank._compilation._background import ENVIRONMENT_SWITCH, LOCK_NAME

    def run(env):
        result = subprocess.run(
            [sys.executable, "-c", COMPILE_CODE],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        imported, fitted, compiling, count = result.stdout.split()
        return {
            "import": float(imported),
            "fit and score": float(fitted),
            "compiling": float(compiling),
            "kernels compiled": int(count),
        }

    def wait_for_background(cache):
        # the second process of the first fit removes its lock when done
        deadline = time.perf_counter() + 120
        while time.perf_counter() < deadline:
            if not any(Path(cache).rglob(LOCK_NAME)):
                return
            time.sleep(0.5)

    rows = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        env.pop(ENVIRONMENT_SWITCH, None)
        rows["first process (empty cache)"] = run(env)
        wait_for_background(cache)
        rows["later process (cached)"] = run(env)
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        env[ENVIRONMENT_SWITCH] = "0"
        rows["first process, no background compilation"] = run(env)
    return rows


PARTS = ("compile", "speed", "growth", "accuracy")


def earlier_run(fields):
    """The commit and date of a stored part's run, as text."""
    if fields is None:
        return "no stamp"
    dirty = " with uncommitted changes" if fields["dirty"] else ""
    return f"commit `{fields['commit'][:12]}`{dirty}, {fields['date']}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--parts", nargs="+", default=list(PARTS))
    parser.add_argument("--sizes", nargs="+", type=int)
    parser.add_argument("--n-jobs", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--revision", default=REFERENCE_REVISION)
    parser.add_argument(
        "--skip-slow-peers",
        type=int,
        default=200_000,
        help="above this many rows, RandomForest and ExtraTrees are not run",
    )
    parser.add_argument("--accuracy-worker")
    args = parser.parse_args()
    if args.accuracy_worker is not None:
        seeds = [int(s) for s in args.accuracy_worker.split(",")]
        print(json.dumps(accuracy_worker(seeds)))
        return
    info = stamp()  # before any fit
    fields = {key: info[key] for key in ("commit", "dirty", "date", "command")}
    sizes = args.sizes or (
        [2_000, 20_000] if args.quick else [2_000, 20_000, 200_000, 1_000_000]
    )
    raw_path = os.path.join(RESULTS, "engine.json")
    out = {}
    if os.path.exists(raw_path):
        with open(raw_path, encoding="utf-8") as handle:
            out = json.load(handle)
    stamps = out.setdefault("stamps", {})  # the run that measured each part
    for part in PARTS:
        if part in args.parts:
            stamps[part] = fields
    if "compile" in args.parts:
        out["compile"] = compile_times()
    if "speed" in args.parts:
        run_speed(sizes, args.n_jobs, args.repeat, args.skip_slow_peers, out)
    if "growth" in args.parts:
        run_growth([s for s in sizes if s >= 20_000] or sizes, out)
    if "accuracy" in args.parts:
        run_accuracy(list(range(3 if args.quick else args.seeds)), args.revision, out)
    with open(raw_path, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=1)
    sections = []
    if "compile" in out and isinstance(next(iter(out["compile"].values())), dict):
        rows = [
            [
                label,
                f"{v['import']:.2f}",
                f"{v['fit and score']:.2f}",
                f"{v['compiling']:.2f}",
                v["kernels compiled"],
                f"{v['fit and score'] - v['compiling']:.2f}",
            ]
            for label, v in out["compile"].items()
        ]
        sections.append(
            "## Compilation\n\n"
            "The default `RankingForest()` (100 trees) fitted on 2,000 x 20 rows "
            "(`make_classification`, 8 informative features) and scoring 2,000 "
            "unseen rows, in a new process with an empty numba cache (where a "
            "second process compiles the routing's and the median's kernels while the fit compiles "
            "the growth's), then in a later process that loads the kernels from "
            "that cache, and in a new process with an empty cache and "
            "`TREERANK_BACKGROUND_COMPILE=0`; wall seconds (compiling: of this "
            "process), one machine, nothing else running.\n\n"
            + markdown_table(
                [
                    "process",
                    "import",
                    "fit and score",
                    "of which compiling",
                    "kernels compiled",
                    "fit and score without compiling",
                ],
                rows,
            )
        )
    if "speed" in out:
        sections.append("## Speed and memory\n\n" + speed_tables(out["speed"]))
    if "growth" in out:
        sections.append("## Growth of the fit time\n\n" + growth_table(out["growth"]))
    if "accuracy" in out:
        sections.append(
            "## Test AUC: engine vs previous implementation\n\n"
            + accuracy_table(out["accuracy"])
        )
    earlier = [
        f"{part} ({earlier_run(stamps.get(part))})"
        for part in PARTS
        if part in out and part not in args.parts
    ]
    if earlier:  # kept in engine.json from earlier runs
        sections.insert(0, "Parts of earlier runs: " + "; ".join(earlier) + ".")
    write_result(
        "engine.md",
        "Histogram engine: speed, memory and accuracy",
        "\n\n".join(sections),
        info,
    )


if __name__ == "__main__":
    main()
