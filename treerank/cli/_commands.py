"""The command-line commands: fit, score, export, stability."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import json
import os
import sys

import numpy as np

from treerank.cli._data import read_features, read_training_data, write_scores
from treerank.utils._io import atomic_path, atomic_write

__all__ = ["cmd_export", "cmd_fit", "cmd_score", "cmd_stability"]


def _say(text):
    print(text, file=sys.stderr, flush=True)


def _check_output(path, force):
    if os.path.exists(path) and not force:
        raise FileExistsError(f"{path} already exists (use --force to overwrite).")


def _build_model(args):
    from treerank import RankingForest, TreeRank

    if args.model == "tree":
        return TreeRank(
            max_depth=args.max_depth,
            min_samples_split=args.min_samples_split,
            pruning=None if args.pruning == "none" else args.pruning,
            random_state=args.random_state,
        )
    if args.pruning != "none":
        raise ValueError("--pruning applies to --model tree only.")
    return RankingForest(
        n_estimators=args.n_estimators,
        max_depth=args.max_depth,
        min_samples_split=args.min_samples_split,
        aggregation=args.aggregation,
        n_jobs=args.n_jobs,
        random_state=args.random_state,
        verbose=1,
    )


def cmd_fit(args):
    from treerank.model_io import save_model

    _check_output(args.out, args.force)
    _say(f"reading {args.data} ...")
    X, y, features = read_training_data(args.data, args.target, args.positive)
    model = _build_model(args)
    _say(
        f"fitting {type(model).__name__} on {X.shape[0]} rows x {X.shape[1]} features "
        f"({int(y.sum())} positives) ..."
    )
    model.fit(X, y)
    metadata = {"features": features, "target": args.target, "positive": args.positive}
    save_model(model, args.out, metadata=metadata, overwrite=args.force)
    auc = model.score(X, y)
    print(f"training AUC {auc:.4f}; model written to {args.out}")
    return 0


def cmd_score(args):
    from treerank.model_io import load_model

    _check_output(args.out, args.force)
    model, metadata = load_model(args.model, with_metadata=True)
    features = (metadata or {}).get("features")
    if features is None:
        raise ValueError(
            f"{args.model} does not record its feature columns (it was not written "
            "by `treerank fit`); score it from Python instead."
        )
    X = read_features(args.data, features)
    scores = model.decision_function(X)
    proba = model.predict_proba(X)[:, 1]
    write_scores(args.out, scores, proba, overwrite=args.force)
    print(f"{X.shape[0]} scores written to {args.out}")
    return 0


def _export_target(model, tree_index):
    from treerank import RankingForest

    if isinstance(model, RankingForest):
        last = len(model.estimators_) - 1
        if not 0 <= tree_index <= last:
            raise ValueError(f"--tree must be in [0, {last}]; got {tree_index}.")
        return model.estimators_[tree_index]
    if tree_index != 0:
        raise ValueError("--tree applies to forests only.")
    return model


def cmd_export(args):
    from treerank.export import export_graphviz, export_text, to_networkx
    from treerank.model_io import load_model

    if args.out is not None:
        _check_output(args.out, args.force)
    model, metadata = load_model(args.model, with_metadata=True)
    names = (metadata or {}).get("features")
    tree = _export_target(model, args.tree)
    if args.format == "png":
        if args.out is None:
            raise ValueError("--format png needs --out FILE.png.")
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from treerank.plotting import plot_tree

        fig, ax = plt.subplots(figsize=(10, 6))
        plot_tree(tree, feature_names=names, ax=ax)
        with atomic_path(args.out, overwrite=args.force) as tmp:
            fig.savefig(tmp, dpi=120, format="png", bbox_inches="tight")
        plt.close(fig)
        print(f"wrote {args.out}")
        return 0
    if args.format == "dot":
        text = export_graphviz(tree, feature_names=names)
    elif args.format == "text":
        text = export_text(tree, feature_names=names)
    else:
        import networkx as nx

        graph = to_networkx(tree, feature_names=names)
        text = json.dumps(
            nx.node_link_data(graph, edges="edges"), indent=1, default=float
        )
    if args.out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    else:
        with atomic_write(args.out, overwrite=args.force) as handle:
            handle.write(text)
        print(f"wrote {args.out}")
    return 0


def cmd_stability(args):
    from treerank.stability import bootstrap_stability

    if args.out is not None:
        _check_output(args.out, args.force)
    X, y, _ = read_training_data(args.data, args.target, args.positive)
    model = _build_model(args)
    if hasattr(model, "verbose"):
        model.set_params(verbose=0)
    _say(
        f"fitting {args.n_bootstrap} bootstrap replicates of {type(model).__name__} on "
        f"{X.shape[0]} rows ..."
    )
    result = bootstrap_stability(
        model,
        X,
        y,
        n_bootstrap=args.n_bootstrap,
        random_state=args.random_state,
        n_jobs=args.n_jobs,
    )
    auc = result.replicate_auc
    summary = {
        "model": type(model).__name__,
        "n_bootstrap": int(result.n_bootstrap),
        "instability": float(result.estimate),
        "std_error": float(result.std_error),
        "replicate_auc_mean": float(np.nanmean(auc)),
        "replicate_auc_std": float(np.nanstd(auc)),
        "auc_source": result.auc_source,
    }
    print(
        f"{summary['model']}: bootstrap Kendall instability "
        f"{summary['instability']:.4f} ± {summary['std_error']:.4f} (standard error); "
        f"{result.auc_source} AUC {summary['replicate_auc_mean']:.4f} ± "
        f"{summary['replicate_auc_std']:.4f}"
    )
    if args.out is not None:
        with atomic_write(args.out, overwrite=args.force) as handle:
            json.dump(summary, handle, indent=1)
        print(f"wrote {args.out}")
    return 0
