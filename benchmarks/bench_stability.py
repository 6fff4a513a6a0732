"""Bootstrap Kendall instability of TreeRank and RankingForest (median and mean).

For each synthetic distribution and training size, every model is passed to
``treerank.stability.bootstrap_stability`` with the same bootstrap draws (same
``random_state``), the distances being computed on one fresh reference sample
from the distribution; replicate AUCs are measured on a fresh test sample, next
to the optimal AUC* of the distribution. The table gives the instability (mean
pairwise Kendall distance) with its jackknife standard error, the median and the
standard deviation of the pairwise distances, and the mean and standard deviation
of the replicate AUCs.

    python benchmarks/bench_stability.py [--quick] [--n-jobs N]

``--quick`` prints a small run without writing the results file.
"""

import argparse
import time

import numpy as np
from _common import markdown_table, write_result
from _protocol import stamp

from treerank import RankingForest, TreeRank
from treerank.datasets import GaussianMeanShift, GaussianScale, NestedSquares
from treerank.stability import bootstrap_stability

DISTRIBUTIONS = {
    "nested squares": NestedSquares(),
    "gaussian shift (d=5)": GaussianMeanShift(n_features=5, separation=1.5),
    "gaussian scale (d=20)": GaussianScale(),
}


def models(n_estimators):
    return {
        "TreeRank (defaults)": TreeRank(),
        f"RankingForest median ({n_estimators} trees)": RankingForest(
            n_estimators=n_estimators, aggregation="median"
        ),
        f"RankingForest mean ({n_estimators} trees)": RankingForest(
            n_estimators=n_estimators, aggregation="mean"
        ),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument("--n-jobs", type=int, default=2)
    args = parser.parse_args()
    info = stamp()  # before any fit
    if args.quick:
        sizes, n_bootstrap, n_estimators, n_reference, n_test = [300], 5, 10, 500, 2000
    else:
        sizes, n_bootstrap, n_estimators = [500, 2000], 20, 50
        n_reference, n_test = 2000, 20000

    rows = []
    summary = []
    for data_name, distribution in DISTRIBUTIONS.items():
        X_reference, _ = distribution.sample(n_reference, random_state=101)
        X_test, y_test = distribution.sample(n_test, random_state=102)
        optimal_auc = distribution.optimal_auc()
        for n_train in sizes:
            X, y = distribution.sample(n_train, random_state=n_train)
            estimates = {}
            for model_name, model in models(n_estimators).items():
                start = time.perf_counter()
                result = bootstrap_stability(
                    model,
                    X,
                    y,
                    n_bootstrap=n_bootstrap,
                    X_reference=X_reference,
                    X_test=X_test,
                    y_test=y_test,
                    random_state=0,
                    n_jobs=args.n_jobs,
                )
                seconds = time.perf_counter() - start
                estimates[model_name] = result
                rows.append(
                    [
                        data_name,
                        n_train,
                        model_name,
                        f"{result.estimate:.4f} ± {result.std_error:.4f}",
                        f"{np.median(result.distances):.4f}",
                        f"{result.distances.std(ddof=1):.4f}",
                        f"{result.replicate_auc.mean():.4f}",
                        f"{result.replicate_auc.std(ddof=1):.4f}",
                        f"{optimal_auc:.4f}",
                        f"{seconds:.1f}",
                    ]
                )
                print(" | ".join(str(v) for v in rows[-1]), flush=True)
            tree = next(iter(estimates.values()))
            for model_name, result in list(estimates.items())[1:]:
                gap = tree.estimate - result.estimate
                error = np.hypot(tree.std_error, result.std_error)
                summary.append(
                    [
                        data_name,
                        n_train,
                        model_name,
                        f"{gap:+.4f}",
                        f"{gap / error:.1f}",
                        "yes" if gap > 2 * error else "no",
                    ]
                )

    header = [
        "data",
        "n train",
        "model",
        "instability ± SE",
        "median distance",
        "sd of distances",
        "AUC mean",
        "AUC sd",
        "AUC*",
        "seconds",
    ]
    body = (
        f"B = {n_bootstrap} bootstrap replicates of each training set (the same "
        f"draws for every model), distances on {n_reference} reference points, "
        f"replicate AUCs on {n_test} test points, n_jobs = {args.n_jobs}. "
        "Instability = mean Kendall distance over the B(B-1)/2 pairs of replicates "
        "(DESIGN §6), with its jackknife standard error over the replicates (the "
        "Monte Carlo error of using B replicates). Lower is more stable.\n\n"
        + markdown_table(header, rows)
        + "\n\n## TreeRank minus RankingForest\n\n"
        "Instability of TreeRank minus that of the forest (positive: the forest "
        "is more stable), in units of the combined standard error "
        "sqrt(SE_tree^2 + SE_forest^2). This is conservative: both estimates use "
        "the same bootstrap draws, which correlates them positively.\n\n"
        + markdown_table(
            ["data", "n train", "forest", "gap", "gap / SE", "gap > 2 SE"], summary
        )
    )
    if args.quick:  # a smoke run: print, keep the committed table
        print(body)
    else:
        write_result(
            "stability.md",
            "Bootstrap stability: TreeRank vs RankingForest",
            body,
            info,
        )


if __name__ == "__main__":
    main()
