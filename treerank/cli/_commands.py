"""The command-line commands: fit, score, export, stability."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import contextlib
import json
import os
import sys
import warnings

import numpy as np

from treerank.cli._checks import check_output, check_readable
from treerank.cli._csv import CsvError, CsvSource
from treerank.cli._data import UnseenCategories, read_training_data
from treerank.cli._text import csv_field, escape, shorten
from treerank.cli._usage import UsageError
from treerank.utils._io import atomic_write

__all__ = ["check_output", "cmd_export", "cmd_fit", "cmd_score", "cmd_stability"]


def _say(text):
    print(text, file=sys.stderr, flush=True)


@contextlib.contextmanager
def counted_unseen_categories():
    """Silence the estimators' per-chunk warning: the command counts per file."""
    from treerank.exceptions import UnseenCategoryWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnseenCategoryWarning)
        yield


def _usage_error(message):
    return UsageError(message)


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
            boxes = LeafRank(
                max_depth=4, min_samples_leaf=30, max_features="sqrt", criterion="gini"
            )
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
        f"{source_name}, line {line}, column {shorten(column)}: missing value "
        "(an empty cell or a marker such as NA), which this model does not "
        f"accept: impute or drop them first. ({refusal})"
    )


def _describe_source(source):
    decimal = "decimal comma" if source.decimal == "," else "decimal point"
    if source.decimal_detected:
        decimal += ", detected"
    return (
        f"{source.name} (delimiter {shorten(source.delimiter)}, {decimal}, "
        f"{len(source.header)} columns)"
    )


def _describe_categorical(data):
    """``site (3 categories), grade (5 categories)`` for the log."""
    parts = []
    for name in list(data.categorical)[:10]:
        n = int(data.X[name].dropna().nunique())
        parts.append(f"{shorten(name)} ({n} categor{'y' if n == 1 else 'ies'})")
    more = len(data.categorical) - len(parts)
    return ", ".join(parts) + (f" and {more} more" if more > 0 else "")


def _read(args):
    _check_column_options(args)
    with CsvSource(
        args.data,
        delimiter=args.delimiter,
        decimal=args.decimal,
        max_line_bytes=args.max_line_size,
    ) as source:
        _say(f"reading {_describe_source(source)} ...")
        data = read_training_data(
            source,
            args.target,
            positive=args.positive,
            ids=args.id,
            drop=args.drop,
            features=args.features,
            categorical=args.categorical,
            numeric=args.numeric,
            n_rows=args.chunk_size,
            max_columns=args.max_columns,
        )
        data.decimal = source.decimal
    for notice in data.notices:
        _say(notice)
    if args.positive is not None and len(data.negative_values) > 1:
        _say(
            f"--positive {shorten(args.positive)}: {int(data.y.sum())} rows are "
            f"positive; the {len(data.negative_values)} other values of "
            f"{shorten(args.target)} are all counted as negative: "
            + ", ".join(shorten(v) for v in data.negative_values[:10])
            + (" ..." if len(data.negative_values) > 10 else "")
        )
    if data.categorical:
        _say(f"categorical features: {_describe_categorical(data)}")
    if data.categorical and args.splitter != "axis":
        raise _usage_error(
            f"--splitter {args.splitter} splits numeric features only, and "
            f"{', '.join(shorten(c) for c in list(data.categorical)[:10])} "
            f"{'is' if len(data.categorical) == 1 else 'are'} categorical: use "
            "--splitter axis, or leave the columns out with --drop."
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
                f"--monotonic: {shorten(column)} is not a feature column of "
                f"{source_name}; the features are "
                f"{', '.join(shorten(c) for c in data.features[:20])}"
                + (" ..." if len(data.features) > 20 else "")
                + "."
            )
        if index[column] in constraints:
            raise _usage_error(f"--monotonic names {shorten(column)} twice.")
        constraints[index[column]] = sign
    return [constraints.get(j, 0) for j in range(len(data.features))]


def _stderr_is_terminal():
    from treerank.utils._progress import is_terminal

    return is_terminal(sys.stderr)


def cmd_fit(args):
    import time

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
    # a live bar on a terminal; in a log, one line once the fit is done
    live = _stderr_is_terminal()
    if "verbose" in model.get_params():
        model.set_params(verbose=1 if live else 0)
    start = time.perf_counter()
    try:
        model.fit(data.X, data.y)
    except ValueError as exc:
        raise _missing_hint(exc, name, data.first_missing) from None
    if not live:
        _say(_fit_summary(model, time.perf_counter() - start))
    metadata = {
        "features": data.features,
        "categorical": data.categorical,
        "decimal": data.decimal,
        "target": args.target,
        "positive": args.positive,
        "positive_value": data.positive_value,
        "negative_values": data.negative_values,
        "id_columns": list(args.id),
    }
    save_model(model, args.out, metadata=metadata, overwrite=args.force)
    auc = model.score(data.X, data.y)
    measure = "VUS" if grades.shape[0] > 2 else "AUC"
    print(f"training {measure} {auc:.4f}; model written to {escape(args.out)}")
    return 0


def _fit_summary(model, seconds):
    text = f"fitted {type(model).__name__} in {seconds:.2f} s"
    aggregation = getattr(model, "aggregation_time_", None)
    if aggregation is not None:
        text += (
            f" ({len(model.estimators_)} trees; {model.aggregation} aggregation "
            f"{aggregation:.2f} s)"
        )
    return text


def _load(path):
    from treerank.model_io import load_model

    if path == "-":
        raise _usage_error("the model cannot be read from standard input.")
    check_readable(path, "model file")
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
    if args.id is not None:
        ids = list(args.id)
        for name in ids:
            source.column_index(name, "an --id column")
    else:
        saved = metadata.get("id_columns") or []
        ids = [n for n in saved if isinstance(n, str) and n in source.positions]
    grades = getattr(model, "classes_", ())
    if args.proba and len(grades) > 2:  # one probability per grade
        names = [f"probability_{g}" for g in np.asarray(grades).tolist()]
        outputs = ["score", *names]
    else:
        outputs = ["score", "probability"] if args.proba else ["score"]
    clash = [name for name in ids if name in outputs]
    if clash:
        raise _usage_error(
            f"the --id column {shorten(clash[0])} has the name of an output "
            "column; rename it in the file."
        )
    return ids, outputs


def format_rows(text_columns, float_columns, *, raw=False):
    """CSV lines of text columns then floats (exact repr).

    Text cells are spreadsheet-safe unless ``raw`` and CSV-quoted as needed
    (:func:`~treerank.cli._text.csv_field`). ``repr`` of a float is the
    shortest text that reads back to the same float, so the scores written
    are the scores computed, bit for bit.
    """
    columns = [[csv_field(item, raw=raw) for item in column] for column in text_columns]
    columns += [
        list(map(repr, np.asarray(c, dtype=float).tolist())) for c in float_columns
    ]
    if not columns:
        return ""
    return "\n".join(map(",".join, zip(*columns))) + "\n"


def _first_missing_cell(X, features, first_line):
    missing = X.isna().to_numpy() if hasattr(X, "isna") else np.isnan(X)
    rows, cols = np.nonzero(missing)
    if not rows.shape[0]:
        return None
    return first_line + int(rows[0]), features[int(cols[0])]


def cmd_score(args):
    from treerank.cli._columns import model_columns
    from treerank.inspection._scale import score_scale

    check_output(args.out, force=args.force, mkdir=args.mkdir)
    model, metadata = _load(args.model)
    metadata = metadata if isinstance(metadata, dict) else {}
    columns = model_columns(args.model, model, metadata)
    scale = score_scale(model, args.scale)
    n_rows = 0
    with columns.source(args.data, args) as source:
        ids, outputs = _score_columns(args, source, metadata, model)
        notice = columns.bind(source, ids)
        if notice:
            _say(notice)
        unseen = UnseenCategories(model, columns.features)
        with text_output(args.out, args.force) as handle:
            header = True
            for first_line, text, X in columns.chunks(source, ids, args.chunk_size):
                try:
                    with counted_unseen_categories():
                        scores = scale(model.decision_function(X))
                        proba = model.predict_proba(X) if args.proba else None
                    if proba is not None and proba.shape[1] == 2:
                        proba = proba[:, 1:]  # the positive class
                except ValueError as exc:
                    where = _first_missing_cell(X, columns.features, first_line)
                    raise _missing_hint(exc, source.name, where) from None
                unseen.add(X)
                if header:
                    names = [[name] for name in [*ids, *outputs]]
                    handle.write(format_rows(names, [], raw=args.raw_text))
                    header = False
                numbers = [scores] if proba is None else [scores, *proba.T]
                texts = [text[name] for name in ids]
                handle.write(format_rows(texts, numbers, raw=args.raw_text))
                n_rows += X.shape[0]
            if header:
                raise CsvError(f"{source.name} has a header but no data rows.")
    for message in unseen.messages():
        _say(f"treerank score: warning: {message}")
    destination = "standard output" if args.out == "-" else escape(args.out)
    _say(f"{n_rows} scores written to {destination} ({scale.name})")
    return 0


def _export_target(model, tree_index):
    from treerank import RankingForest

    # a TreeRank of K > 2 grades is K - 1 threshold trees, exported one by one
    if isinstance(model, RankingForest) or len(model.classes_) > 2:
        last = len(model.estimators_) - 1
        what = "a forest" if isinstance(model, RankingForest) else "a graded TreeRank"
        if tree_index is None:
            raise _usage_error(
                f"the model is {what} of {last + 1} trees, and export writes one "
                f"tree: pass --tree INDEX (0 to {last}) to say which."
            )
        if not 0 <= tree_index <= last:
            raise _usage_error(f"--tree must be in [0, {last}]; got {tree_index}.")
        return model.estimators_[tree_index]
    if tree_index not in (None, 0):
        raise _usage_error(
            "--tree applies to forests and TreeRanks of more than two grades only."
        )
    return model


def cmd_export(args):
    from treerank.export import export_graphviz, export_text, to_networkx

    if args.format == "png" and args.out in (None, "-"):
        raise _usage_error("--format png needs --out FILE.png.")
    if args.format != "png" and (args.max_leaves != "auto" or args.max_depth):
        raise _usage_error(
            "--max-leaves and --max-depth apply to --format png only (the other "
            "formats give the whole tree)."
        )
    check_output(args.out, force=args.force, mkdir=args.mkdir)
    model, metadata = _load(args.model)
    names = (metadata or {}).get("features")
    if names is not None:
        names = [escape(name) for name in names]
    tree = _export_target(model, args.tree)
    if args.format == "png":
        from treerank.cli._figures import save_figure, tree_figure

        figure = tree_figure(
            tree,
            feature_names=names,
            max_leaves=None if args.max_leaves == "all" else args.max_leaves,
            max_depth=args.max_depth,
        )
        save_figure(figure, args.out, overwrite=args.force)
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


_PLOT_FORMATS = (".png", ".svg", ".pdf")


def _stability_output(path):
    """What ``stability --out`` writes: None, "json" or a plot format."""
    if path is None:
        return None
    if path == "-":
        return "json"
    extension = os.path.splitext(path)[1].lower()
    if extension == ".json":
        return "json"
    if extension in _PLOT_FORMATS:
        return extension[1:]
    raise _usage_error(
        f"--out {escape(path)}: the output is chosen by its extension, .json (the "
        "summary) or .png, .svg, .pdf (a plot); got "
        f"{shorten(extension) if extension else 'no extension'}."
    )


def _write_stability_plot(result, path, file_format, force):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from treerank.cli._figures import save_figure
    from treerank.plotting import plot_stability

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    plot_stability(result, kind="matrix", ax=axes[0])
    axes[0].set_title("Kendall distances between bootstrap replicates")
    plot_stability(result, kind="auc", ax=axes[1])
    axes[1].set_title(f"{result.auc_source} AUC of the replicates")
    fig.tight_layout()
    save_figure(fig, path, file_format=file_format, overwrite=force)


def cmd_stability(args):
    from treerank.stability import bootstrap_stability

    output = _stability_output(args.out)
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
    if output == "json":
        with text_output(args.out, args.force) as handle:
            json.dump(summary, handle, indent=1)
            handle.write("\n")
    elif output is not None:
        _write_stability_plot(result, args.out, output, args.force)
    if output is not None and args.out != "-":
        _say(f"wrote {escape(args.out)}")
    return 0
