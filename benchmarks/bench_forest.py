"""RankingForest against scikit-learn ensembles: AUC, fit/predict ratios, aggregation.

Part 1 (accuracy) fits every model on the synthetic sets (2,000 training points,
20,000 test points) and on breast cancer. Part 2 (speed targets) fits 100-tree
forests on 20,000 x 20 synthetic data with equal ``n_jobs`` and reports the fit
and predict times as ratios to RandomForestClassifier's fit and predict_proba
in the same run, and the share of RankingForest's fit spent in aggregation.

    python benchmarks/bench_forest.py [--quick] [--n-jobs 2]
"""

import argparse

import numpy as np
from _common import markdown_table, timed, write_result
from _protocol import stamp
from sklearn.ensemble import (
    ExtraTreesClassifier,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from treerank import RankingForest, TreeRank
from treerank.datasets import (
    GaussianMeanShift,
    GaussianScale,
    NestedSquares,
    load_breast_cancer,
)


def score(model, X):
    if hasattr(model, "decision_function"):
        return model.decision_function(X)
    return model.predict_proba(X)[:, 1]


def models(n_trees, n_jobs, seed):
    return {
        "TreeRank": TreeRank(random_state=seed),
        "RankingForest (median)": RankingForest(
            n_estimators=n_trees, n_jobs=n_jobs, random_state=seed
        ),
        "RankingForest (mean)": RankingForest(
            n_estimators=n_trees, aggregation="mean", n_jobs=n_jobs, random_state=seed
        ),
        "RandomForest": RandomForestClassifier(
            n_estimators=n_trees, n_jobs=n_jobs, random_state=seed
        ),
        "ExtraTrees": ExtraTreesClassifier(
            n_estimators=n_trees, n_jobs=n_jobs, random_state=seed
        ),
        "HistGradientBoosting": HistGradientBoostingClassifier(random_state=seed),
        "LogisticRegression": make_pipeline(StandardScaler(), LogisticRegression()),
    }


def data(name, seed):
    if name == "breast cancer":
        X, y = load_breast_cancer(return_X_y=True)
        X_tr, X_te, y_tr, y_te = train_test_split(
            X, y, test_size=0.3, stratify=y, random_state=seed
        )
        return X_tr, y_tr, X_te, y_te, None
    model = {
        "nested squares": NestedSquares(),
        "gaussian shift (d=5)": GaussianMeanShift(n_features=5, separation=1.5),
        "gaussian scale (d=20)": GaussianScale(),
    }[name]
    X_tr, y_tr = model.sample(2000, random_state=seed)
    X_te, y_te = model.sample(20000, random_state=10_000 + seed)
    return X_tr, y_tr, X_te, y_te, model.optimal_auc()


def accuracy_table(seeds, n_jobs):
    rows = []
    names = [
        "nested squares",
        "gaussian shift (d=5)",
        "gaussian scale (d=20)",
        "breast cancer",
    ]
    for name in names:
        aucs, auc_star = {}, None
        for seed in seeds:
            X_tr, y_tr, X_te, y_te, auc_star = data(name, seed)
            for label, model in models(100, n_jobs, seed).items():
                model.fit(X_tr, y_tr)
                aucs.setdefault(label, []).append(
                    roc_auc_score(y_te, score(model, X_te))
                )
        for label, values in aucs.items():
            rows.append(
                (
                    name,
                    label,
                    f"{np.mean(values):.4f} ± {np.std(values):.4f}",
                    "n/a" if auc_star is None else f"{auc_star:.4f}",
                )
            )
    return markdown_table(["data set", "model", "test AUC (mean ± sd)", "AUC*"], rows)


def speed_table(n_jobs, repeat):
    model = GaussianScale(n_features=20)
    X, y = model.sample(20000, random_state=0)
    X_test, y_test = model.sample(20000, random_state=1)
    reference = RandomForestClassifier(n_estimators=100, n_jobs=n_jobs, random_state=0)
    ref_fit, reference = timed(reference.fit, X, y, repeat=repeat)
    ref_predict, _ = timed(reference.predict_proba, X_test, repeat=repeat)
    rows = [
        (
            "RandomForestClassifier",
            f"{ref_fit:.2f}",
            "1.0",
            f"{ref_predict:.3f}",
            "1.0",
            "-",
            f"{roc_auc_score(y_test, reference.predict_proba(X_test)[:, 1]):.4f}",
        )
    ]
    for aggregation in ["median", "mean", "borda"]:
        forest = RankingForest(
            n_estimators=100, aggregation=aggregation, n_jobs=n_jobs, random_state=0
        )
        fit_time, forest = timed(forest.fit, X, y, repeat=repeat)
        predict_time, scores = timed(forest.decision_function, X_test, repeat=repeat)
        share = forest.aggregation_time_ / fit_time
        cells = "" if forest.n_cells_ is None else f" ({forest.n_cells_} cells)"
        rows.append(
            (
                f"RankingForest ({aggregation}){cells}",
                f"{fit_time:.2f}",
                f"{fit_time / ref_fit:.1f}",
                f"{predict_time:.3f}",
                f"{predict_time / ref_predict:.1f}",
                f"{100 * share:.1f}%",
                f"{roc_auc_score(y_test, scores):.4f}",
            )
        )
    header = [
        "model",
        "fit (s)",
        "fit / RF fit",
        "predict (s)",
        "predict / RF predict_proba",
        "aggregation share of fit",
        "test AUC",
    ]
    return markdown_table(header, rows)


def main(quick, n_jobs):
    info = stamp()  # before any fit
    seeds = [0] if quick else [0, 1, 2]
    speed = speed_table(n_jobs, repeat=1 if quick else 3)
    print(speed)
    accuracy = accuracy_table(seeds, n_jobs)
    print(accuracy)
    body = (
        "## Speed targets: 20,000 x 20 (Gaussian scale), 100 trees, "
        f"n_jobs={n_jobs}\n\n"
        "Best of 3 timings per model. Targets: fit <= 10x RandomForestClassifier, "
        "predict <= 10x its predict_proba, "
        "aggregation <= 20% of fit.\n\n"
        + speed
        + f"\n\n## Test AUC, 100 trees ({len(seeds)} training sets)\n\n"
        "Synthetic sets: 2,000 training points, 20,000 test points; breast cancer: a "
        "stratified 70/30 split.\n\n" + accuracy
    )
    write_result("forest.md", "RankingForest vs scikit-learn ensembles", body, info)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    main(args.quick, args.n_jobs)
