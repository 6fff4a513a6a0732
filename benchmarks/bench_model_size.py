"""Size of saved forests, and where loading a deep forest spends its time.

Part 1 fits a default ``RankingForest(100)`` on 200,000 rows of
``make_gaussian_mean_shift`` (2 and 10 features) and reports the size of its
model file, with and without ``include_training_data``, and the share of each
member (the cells of the common subpartition are what the median aggregation
must remember, stored as one point each: a code per feature), and the time
to load it (best of 3: the loader routes the points back to the cells). The
sizes before the lean format (the same forests, saved by
the previous writer, which stored ``estimators_samples_``,
``oob_decision_function_`` and every calibration level) were measured at
commit f9ab89b: 11,893,138 bytes (2 features) and 31,476,027 bytes (10).

Part 2 fits 100 deep trees (``max_depth=None``) and times ``load_model``,
split into the structural validation of the trees (``unpack_structures``,
vectorized over all trees) and the whole load, as a ratio (best of 5 runs).

    python benchmarks/bench_model_size.py [--quick]
"""

import argparse
import os
import tempfile
import zipfile

import numpy as np
from _common import markdown_table, timed, write_result
from _protocol import stamp

from treerank import LeafRank, RankingForest
from treerank.datasets import make_gaussian_mean_shift
from treerank.model_io import _structures, load_model, save_model
from treerank.model_io._archive import read_archive
from treerank.tree._structure import RankingTreeStructure

BEFORE = {2: 11_893_138, 10: 31_476_027}


def member_shares(path):
    total = os.path.getsize(path)
    with zipfile.ZipFile(path) as archive:
        infos = sorted(archive.infolist(), key=lambda info: -info.compress_size)
    return [(info.filename, info.compress_size / total) for info in infos[:4]]


def sizes(n_samples, directory):
    rows = []
    for n_features in (2, 10):
        X, y = make_gaussian_mean_shift(
            n_samples, n_features=n_features, random_state=0
        )
        forest = RankingForest(n_estimators=100, random_state=0).fit(X, y)
        lean = os.path.join(directory, f"lean{n_features}.trk")
        full = os.path.join(directory, f"full{n_features}.trk")
        save_model(forest, lean)
        save_model(forest, full, include_training_data=True)
        size = os.path.getsize(lean)
        load = min(timed(lambda: load_model(lean))[0] for _ in range(3))
        before = BEFORE[n_features] if n_samples == 200_000 else None
        shares = ", ".join(f"{n} {100 * s:.0f}%" for n, s in member_shares(lean))
        rows.append(
            [
                n_features,
                forest.n_cells_,
                f"{before:,}" if before else "-",
                f"{size:,}",
                f"{before / size:.1f}x" if before else "-",
                f"{os.path.getsize(full):,}",
                f"{load:.1f}",
                shares,
            ]
        )
    return markdown_table(
        [
            "features",
            "cells",
            "bytes before",
            "bytes now",
            "smaller",
            "with training data",
            "load (s)",
            "largest members (share of the file)",
        ],
        rows,
    )


def deep_load(n_samples, directory):
    X, y = make_gaussian_mean_shift(n_samples, n_features=10, random_state=1)
    forest = RankingForest(
        n_estimators=100,
        max_depth=None,
        min_samples_split=4,
        leafrank=LeafRank(max_depth=3, min_samples_leaf=2, criterion="gini"),
        aggregation="mean",
        random_state=0,
    ).fit(X, y)
    path = os.path.join(directory, "deep.trk")
    save_model(forest, path)
    n_nodes = sum(tree.full_tree_.node_count for tree in forest.estimators_)
    n_rule_nodes = sum(tree.full_tree_.rules.n_nodes for tree in forest.estimators_)
    description, arrays = read_archive(path)
    template = forest._tree_template()
    expect = _structures.tree_expectations(template, forest.n_features_in_)

    def build():  # the structures alone, without the checks
        for tree in forest.estimators_:
            s = tree.full_tree_
            RankingTreeStructure(
                s.children_left,
                s.children_right,
                s.n_pos,
                s.n_neg,
                rules=s.rules,
                rule_start=s.rule_start,
                rule_stop=s.rule_stop,
                n_features=s.n_features,
                n_cuts=s.n_cuts,
            )

    # interleaved, best of 7 each: the ratios are measured in the same conditions
    best = {"read": np.inf, "unpack": np.inf, "build": np.inf, "load": np.inf}
    steps = {
        "read": lambda: read_archive(path),
        "unpack": lambda: _structures.unpack_structures(
            description["structures"], arrays, expect
        ),
        "build": build,
        "load": lambda: load_model(path),
    }
    for _ in range(7):
        for name, step in steps.items():
            elapsed, _ = timed(step)
            best[name] = min(best[name], elapsed)
    read, check, construct, load = (
        best["read"],
        best["unpack"] - best["build"],
        best["build"],
        best["load"],
    )
    return markdown_table(
        [
            "trees",
            "master nodes",
            "rule nodes",
            "load (s)",
            "read archive",
            "structural checks",
            "building the structures",
        ],
        [
            [
                100,
                n_nodes,
                n_rule_nodes,
                f"{load:.2f}",
                f"{read / load:.0%}",
                f"{check / load:.0%}",
                f"{construct / load:.0%}",
            ]
        ],
    )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    info = stamp()  # before any fit
    n_samples = 20_000 if args.quick else 200_000
    with tempfile.TemporaryDirectory() as directory:
        body = f"## Default RankingForest(100), {n_samples:,} rows\n\n"
        body += sizes(n_samples, directory)
        body += "\n\n## Loading 100 deep trees (ratios of the load time)\n\n"
        body += deep_load(20_000 if args.quick else 50_000, directory)
    print(body)
    if not args.quick:
        write_result("model_size.md", "Model file size and load time", body, info)


if __name__ == "__main__":
    main()
