"""The command-line commands: fit, score, export, stability."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import contextlib
import json
import os
import sys

import numpy as np

from treerank.cli._csv import CsvError, CsvSource
from treerank.cli._data import read_training_data
from treerank.cli._text import escape
from treerank.utils._io import atomic_path, atomic_write, refuse_special_file

__all__ = ["cmd_export", "cmd_fit", "cmd_score", "cmd_stability"]


def _say(text):
    print(text, file=sys.stderr, flush=True)


def _usage_error(message):
    from treerank.cli import UsageError

    return UsageError(message)


def check_output(path, *, force, mkdir):
    """Refuse an output that exists (without ``--force``) or has no folder.

    Done before any work, so that a long fit does not end in a refusal; the
    folder is only created with ``--mkdir``.
    """
    if path is None or path == "-":
        return
    shown = escape(path)
    if os.path.isdir(path):
        raise IsADirectoryError(f"--out {shown} is a directory.")
    refuse_special_file(path)  # a link, pipe or device is never replaced
    if os.path.lexists(path) and not force:
        raise FileExistsError(f"{shown} already exists (use --force to overwrite).")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        if os.path.exists(folder):
            raise NotADirectoryError(
                f"cannot write {shown}: {escape(folder)} is a file."
            )
        if not mkdir:
            raise FileNotFoundError(
                f"cannot write {shown}: the folder {escape(folder)} does not exist "
                "(pass --mkdir to create it)."
            )
        os.makedirs(folder)
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(
            f"cannot write {shown}: permission denied in {escape(folder)}."
        )


def _check_readable(path, what):
    shown = escape(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{shown}: no such file ({what}).")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{shown} is a directory, not a {what}.")
    if not os.access(path, os.R_OK):
        raise PermissionError(f"{shown}: permission denied (cannot read the {what}).")


def _build_model(args):
    from treerank import RankingForest, TreeRank

    growth = {
        "max_depth": None if args.max_depth == "none" else args.max_depth,
        "min_samples_split": args.min_samples_split,
    }
    growth["leafrank"] = _splitter(args.splitter, args.model)
    if args.model == "tree":
        if args.multipartite is not None:
            raise _usage_error("--multipartite applies to --model forest only.")
        return TreeRank(
            **growth,
            pruning=None if args.pruning == "none" else args.pruning,
            random_state=args.random_state,
        )
    if args.pruning != "none":
        raise _usage_error("--pruning applies to --model tree only.")
    return RankingForest(
        **growth,
        # oblique rules see all the features of a node (as benchmarked)
        max_features=None if args.splitter != "axis" else "sqrt",
        n_estimators=args.n_estimators,
        aggregation=args.aggregation,
        multipartite=args.multipartite or "stacked",
        n_jobs=args.n_jobs,
        random_state=args.random_state,
        verbose=1,
    )


def _splitter(name, model):
    """The LeafRank of ``--splitter`` (None: the model's default).

    ``mixed`` in a forest uses the configuration of the real-data benchmark
    (``benchmarks/results/oblique.md``): boxes of depth 4 on a random square
    root of the features against a half-space on all of them.
    """
    from treerank.tree import LeafRank, LinearLeafRank, MixedLeafRank

    if name == "linear":
        return LinearLeafRank()
    if name == "mixed":
        if model == "forest":
            boxes = LeafRank(max_depth=4, min_samples_leaf=30, max_features="sqrt")
            return MixedLeafRank([boxes, LinearLeafRank()])
        return MixedLeafRank()
    return None


def _check_column_options(args):
    if args.features is not None and args.drop:
        raise _usage_error("--features and --drop do not go together: give one.")


def _missing_hint(exc, source_name, first_missing):
    """A library refusal of NaN, with where the first missing value is."""
    if first_missing is None or "NaN" not in str(exc):
        return exc
    line, column = first_missing
    refusal = str(exc).splitlines()[0]
    return CsvError(
        f"{source_name}, line {line}, column {escape(repr(column))}: missing value "
        "(an empty cell or a marker such as NA). treerank does not accept missing "
        f"values yet: impute or drop them first. ({refusal})"
    )


def _read(args):
    _check_column_options(args)
    with CsvSource(args.data, delimiter=args.delimiter) as source:
        _say(
            f"reading {source.name} (delimiter {escape(repr(source.delimiter))}, "
            f"{len(source.header)} columns) ..."
        )
        data = read_training_data(
            source,
            args.target,
            positive=args.positive,
            ids=args.id,
            drop=args.drop,
            features=args.features,
            n_rows=args.chunk_size,
        )
        return source.name, data


def _monotonic_cst(pairs, data, source_name):
    """``--monotonic COL=SIGN ...`` as monotonic_cst: one sign per feature.

    A list rather than a dict, so that the model file keeps it.
    """
    index = {column: j for j, column in enumerate(data.features)}
    constraints = {}
    for column, sign in pairs:
        if column not in index:
            raise CsvError(
                f"--monotonic: {escape(repr(column))} is not a feature column of "
                f"{source_name}; the features are "
                f"{', '.join(escape(repr(c)) for c in data.features[:20])}"
                + (" ..." if len(data.features) > 20 else "")
                + "."
            )
        if index[column] in constraints:
            raise _usage_error(f"--monotonic names {escape(repr(column))} twice.")
        constraints[index[column]] = sign
    return [constraints.get(j, 0) for j in range(len(data.features))]


def cmd_fit(args):
    from treerank.model_io import save_model

    if args.out == "-":
        raise _usage_error(
            "a model file cannot be written to standard output: give --out FILE."
        )
    check_output(args.out, force=args.force, mkdir=args.mkdir)
    model = _build_model(args)
    name, data = _read(args)
    if args.monotonic:
        model.set_params(monotonic_cst=_monotonic_cst(args.monotonic, data, name))
    grades, counts = np.unique(data.y, return_counts=True)
    if grades.shape[0] > 2:
        labels = ", ".join(f"{g}: {c}" for g, c in zip(grades.tolist(), counts))
        summary = f"{grades.shape[0]} ordered grades ({labels})"
    else:
        summary = f"{int(data.y.sum())} positives"
    _say(
        f"fitting {type(model).__name__} on {data.X.shape[0]} rows x "
        f"{data.X.shape[1]} features ({summary}) ..."
    )
    try:
        model.fit(data.X, data.y)
    except ValueError as exc:
        raise _missing_hint(exc, name, data.first_missing) from None
    metadata = {
        "features": data.features,
        "target": args.target,
        "positive": args.positive,
        "id_columns": list(args.id),
    }
    save_model(model, args.out, metadata=metadata, overwrite=args.force)
    auc = model.score(data.X, data.y)
    measure = "VUS" if grades.shape[0] > 2 else "AUC"
    print(f"training {measure} {auc:.4f}; model written to {escape(args.out)}")
    return 0


def _load(path):
    from treerank.model_io import load_model

    if path == "-":
        raise _usage_error("the model cannot be read from standard input.")
    _check_readable(path, "model file")
    return load_model(path, with_metadata=True)


@contextlib.contextmanager
def text_output(path, force):
    if path == "-":
        yield sys.stdout
        sys.stdout.flush()
    else:
        with atomic_write(path, overwrite=force) as handle:
            yield handle


def _score_columns(args, source, metadata, model):
    features = (metadata or {}).get("features")
    if not isinstance(features, list) or not features:
        raise CsvError(
            f"{escape(args.model)} does not record its feature columns (it was not "
            "written by `treerank fit`); score it from Python instead."
        )
    missing = [name for name in features if name not in source.header]
    if missing:
        raise CsvError(
            f"{source.name} lacks the model's feature columns "
            f"{escape(str(missing))}; its columns are {source.describe_columns()}."
        )
    if args.id is not None:
        ids = list(args.id)
        for name in ids:
            source.column_index(name, "an --id column")
    else:
        saved = (metadata or {}).get("id_columns") or []
        ids = [name for name in saved if name in source.header]
    grades = getattr(model, "classes_", ())
    if args.proba and len(grades) > 2:  # one probability per grade
        names = [f"probability_{g}" for g in np.asarray(grades).tolist()]
        outputs = ["score", *names]
    else:
        outputs = ["score", "probability"] if args.proba else ["score"]
    clash = [name for name in ids if name in outputs]
    if clash:
        raise _usage_error(
            f"the --id column {escape(repr(clash[0]))} has the name of an output "
            "column; rename it in the file."
        )
    return features, ids, outputs


def _csv_field(text):
    if any(c in text for c in ',"\r\n'):
        return '"' + text.replace('"', '""') + '"'
    return text


def format_rows(text_columns, float_columns):
    """CSV lines of text columns (quoted as needed) then floats (exact repr).

    ``repr`` of a float is the shortest text that reads back to the same
    float, so the scores written are the scores computed, bit for bit.
    """
    columns = []
    for column in text_columns:
        items = [str(item) for item in column]
        if any(c in "".join(items) for c in ',"\r\n'):
            items = [_csv_field(item) for item in items]
        columns.append(items)
    columns += [
        list(map(repr, np.asarray(c, dtype=float).tolist())) for c in float_columns
    ]
    if not columns:
        return ""
    return "\n".join(map(",".join, zip(*columns))) + "\n"


def cmd_score(args):
    check_output(args.out, force=args.force, mkdir=args.mkdir)
    model, metadata = _load(args.model)
    n_rows = 0
    with CsvSource(args.data, delimiter=args.delimiter) as source:
        features, ids, outputs = _score_columns(args, source, metadata, model)
        with text_output(args.out, args.force) as handle:
            header = True
            for first_line, columns in source.chunks(
                features, text_columns=ids, n_rows=args.chunk_size
            ):
                X = np.column_stack([columns[name] for name in features])
                try:
                    scores = model.decision_function(X)
                    proba = model.predict_proba(X) if args.proba else None
                    if proba is not None and proba.shape[1] == 2:
                        proba = proba[:, 1:]  # the positive class
                except ValueError as exc:
                    rows, cols = np.nonzero(np.isnan(X))
                    where = (
                        (first_line + int(rows[0]), features[int(cols[0])])
                        if rows.shape[0]
                        else None
                    )
                    raise _missing_hint(exc, source.name, where) from None
                if header:
                    handle.write(format_rows([[name] for name in [*ids, *outputs]], []))
                    header = False
                numbers = [scores] if proba is None else [scores, *proba.T]
                handle.write(format_rows([columns[name] for name in ids], numbers))
                n_rows += X.shape[0]
            if header:
                raise CsvError(f"{source.name} has a header but no data rows.")
    destination = "standard output" if args.out == "-" else escape(args.out)
    _say(f"{n_rows} scores written to {destination}")
    return 0


def _export_target(model, tree_index):
    from treerank import RankingForest

    # a TreeRank of K > 2 grades is K - 1 threshold trees, exported one by one
    if isinstance(model, RankingForest) or len(model.classes_) > 2:
        last = len(model.estimators_) - 1
        if not 0 <= tree_index <= last:
            raise _usage_error(f"--tree must be in [0, {last}]; got {tree_index}.")
        return model.estimators_[tree_index]
    if tree_index != 0:
        raise _usage_error(
            "--tree applies to forests and TreeRanks of more than two grades only."
        )
    return model


def cmd_export(args):
    from treerank.export import export_graphviz, export_text, to_networkx

    if args.format == "png" and args.out in (None, "-"):
        raise _usage_error("--format png needs --out FILE.png.")
    check_output(args.out, force=args.force, mkdir=args.mkdir)
    model, metadata = _load(args.model)
    names = (metadata or {}).get("features")
    if names is not None:
        names = [escape(name) for name in names]
    tree = _export_target(model, args.tree)
    if args.format == "png":
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from treerank.plotting import plot_tree

        fig = plot_tree(tree, feature_names=names).figure
        with atomic_path(args.out, overwrite=args.force) as tmp:
            fig.savefig(tmp, dpi=120, format="png", bbox_inches="tight")
        plt.close(fig)
        _say(f"wrote {escape(args.out)}")
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
    with text_output(args.out, args.force) as handle:
        handle.write(text if text.endswith("\n") else text + "\n")
    if args.out != "-":
        _say(f"wrote {escape(args.out)}")
    return 0


def cmd_stability(args):
    from treerank.stability import bootstrap_stability

    check_output(args.out, force=args.force, mkdir=args.mkdir)
    model = _build_model(args)
    if hasattr(model, "verbose"):
        model.set_params(verbose=0)
    name, data = _read(args)
    _say(
        f"fitting {args.n_bootstrap} bootstrap replicates of {type(model).__name__} "
        f"on {data.X.shape[0]} rows ..."
    )
    try:
        result = bootstrap_stability(
            model,
            data.X,
            data.y,
            n_bootstrap=args.n_bootstrap,
            random_state=args.random_state,
            n_jobs=args.n_jobs,
        )
    except ValueError as exc:
        raise _missing_hint(exc, name, data.first_missing) from None
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
        with text_output(args.out, args.force) as handle:
            json.dump(summary, handle, indent=1)
        if args.out != "-":
            _say(f"wrote {escape(args.out)}")
    return 0
