"""TreeRank against scikit-learn's classifiers: test AUC and fit-time ratios.

One run fits every model on the same splits. Fit times are reported as ratios to
sklearn's DecisionTreeClassifier fitted in the same process (best of 3 timings);
AUCs are averaged over several random training sets.

    python benchmarks/bench_treerank.py [--quick]
"""

import argparse

import numpy as np
from _common import markdown_table, timed, write_result
from _protocol import stamp
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

from treerank import TreeRank
from treerank.datasets import (
    GaussianMeanShift,
    GaussianScale,
    NestedSquares,
    load_breast_cancer,
)


def models(seed):
    return {
        "TreeRank (defaults)": TreeRank(random_state=seed),
        "TreeRank pruning=cv": TreeRank(pruning="cv", random_state=seed),
        "DecisionTree (depth 6)": DecisionTreeClassifier(
            max_depth=6, random_state=seed
        ),
        "DecisionTree (depth 6, leaf 50)": DecisionTreeClassifier(
            max_depth=6, min_samples_leaf=50, random_state=seed
        ),
        "RandomForest (100 trees)": RandomForestClassifier(
            n_estimators=100, n_jobs=1, random_state=seed
        ),
        "LogisticRegression": make_pipeline(StandardScaler(), LogisticRegression()),
    }


def splits(name, seed, n_train):
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
    X_tr, y_tr = model.sample(n_train, random_state=seed)
    X_te, y_te = model.sample(20000, random_state=10_000 + seed)
    return X_tr, y_tr, X_te, y_te, model.optimal_auc()


def score(model, X):
    if hasattr(model, "decision_function"):
        return model.decision_function(X)
    return model.predict_proba(X)[:, 1]


def main(quick=False):
    info = stamp()  # before any fit
    seeds = [0, 1] if quick else [0, 1, 2, 3, 4]
    names = [
        "nested squares",
        "gaussian shift (d=5)",
        "gaussian scale (d=20)",
        "breast cancer",
    ]
    rows = []
    for name in names:
        aucs, times, auc_star = {}, {}, None
        for seed in seeds:
            X_tr, y_tr, X_te, y_te, auc_star = splits(name, seed, 2000)
            for label, model in models(seed).items():
                elapsed, fitted = timed(model.fit, X_tr, y_tr, repeat=1 if quick else 3)
                aucs.setdefault(label, []).append(
                    roc_auc_score(y_te, score(fitted, X_te))
                )
                times.setdefault(label, []).append(elapsed)
        reference = np.mean(times["DecisionTree (depth 6)"])
        for label in aucs:
            rows.append(
                (
                    name,
                    label,
                    f"{np.mean(aucs[label]):.4f} ± {np.std(aucs[label]):.4f}",
                    "n/a" if auc_star is None else f"{auc_star:.4f}",
                    f"{np.mean(times[label]) / reference:.1f}",
                    f"{np.mean(times[label]):.3f}",
                )
            )
    header = [
        "data set",
        "model",
        "test AUC (mean ± sd)",
        "AUC*",
        "fit time / DecisionTree",
        "fit time (s)",
    ]
    body = (
        "Training sets: 2,000 points for the synthetic sets (test: 20,000), a "
        "stratified "
        f"70/30 split of the 569 breast cancer rows; {len(seeds)} random training sets "
        "each. Fit times are single-threaded, best of 3.\n\n"
        + markdown_table(header, rows)
    )
    print(body)
    write_result("treerank.md", "TreeRank vs scikit-learn classifiers", body, info)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer seeds and timings")
    main(parser.parse_args().quick)
