"""``treerank explain``: reason codes for every row of a CSV file.

For each row: its score (the calibrated score, as ``treerank score`` writes
it), the base value, the side the reasons are for, then the ``--top``
features that pull the score towards that side the most (``--reasons-for
negative``, the default: down; ``positive``: up), each with the row's value,
its contribution (its Shapley value,
:func:`treerank.inspection.shapley_values`) and the condition the row met on
it, and the sum of the other contributions (and a median's
``proxy_difference``): every line adds up to its score. The contributions
compare each row with
a background sample: the rows of ``--background`` or, without it, rows drawn
at random from the data file itself (a first pass over the file, in bounded
memory). The file is then explained in chunks of ``--chunk-size`` rows, as
``treerank score`` scores it: memory does not grow with the file, and a row's
reasons do not depend on the chunk it is in.

A tree and a forest aggregated by the mean or Borda are explained exactly; a
median forest (the default) by default by the exact values of the mean of its
trees, its proxy, with the difference as its own term, and with
``--algorithm permutation`` by estimates of its own values, with standard
errors (much slower). The score written is always the model's, as
``treerank score`` writes it.

Both files are read as ``treerank score`` reads its input: the model's
feature columns, numbers with the decimal mark of ``--decimal`` (else the
training file's), categorical columns as the categories the model was fitted
with (an unseen category is treated as missing, as the model treats it), a
feature that is also an ``--id`` column parsed from its text.

Importing this module imports no numerical library (``treerank explain
--help`` stays fast); they are imported when the command runs.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys

from treerank.cli._text import escape, shorten
from treerank.cli._usage import UsageError, background_per_tree, positive_int

__all__ = ["add_explain_arguments", "run_explain"]


def add_explain_arguments(parser):
    """Add the arguments of ``treerank explain`` to its subparser.

    The input options (``--delimiter``, ``--chunk-size``) and the output
    options (``--out``, ``--force``, ``--mkdir``) are the command line's shared
    ones, added by the caller.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The ``explain`` subparser.
    """
    parser.add_argument("model", help="model file written by `treerank fit`")
    parser.add_argument(
        "data",
        nargs="?",
        default="-",
        help="CSV file with the model's feature columns ('-': standard input, "
        "then --background is needed)",
    )
    parser.add_argument(
        "--id",
        nargs="+",
        default=None,
        metavar="COL",
        help="columns copied to the output (default: the --id columns given to "
        "`treerank fit`, if the file has them)",
    )
    parser.add_argument("--top", type=positive_int, default=3, help="reasons per row")
    parser.add_argument(
        "--reasons-for",
        choices=["negative", "positive"],
        default=None,
        help="which side the reasons explain: 'negative' (default): the features "
        "that pull each row's score towards the negative class the most (why it "
        "is not ranked higher: adverse-action reasons when the positive class is "
        "the good outcome, e.g. --positive repaid); 'positive': those that push "
        "it towards the positive class (adverse-action reasons when the positive "
        "class is the bad outcome, e.g. --positive default). The output's "
        "reasons_for column names the side",
    )
    parser.add_argument(
        "--direction",
        choices=["down", "up"],
        default=None,
        help="the same as --reasons-for: 'down' is negative, 'up' is positive",
    )
    parser.add_argument(
        "--background",
        default=None,
        metavar="CSV",
        help="rows the scores are compared with, e.g. the training file (default: "
        "rows drawn at random from DATA)",
    )
    parser.add_argument(
        "--n-background",
        type=positive_int,
        default=1000,
        help="background rows kept (drawn at random when there are more)",
    )
    parser.add_argument(
        "--algorithm",
        choices=["auto", "tree", "mean_proxy", "permutation"],
        default="auto",
        help="'tree': exact values of a tree or of a forest aggregated by the mean "
        "or Borda; 'mean_proxy': for a median forest, the exact values of the mean "
        "of its trees (fast); 'permutation': estimates of any model's own values, "
        "with standard errors (slow); 'auto': 'tree', else 'mean_proxy' for a "
        "median forest, else 'permutation'",
    )
    parser.add_argument(
        "--background-per-tree",
        type=background_per_tree,
        default="auto",
        metavar="N",
        help="background rows each tree is compared with, drawn for each tree: "
        "'auto', max(2, ceil(200 / trees)), is about 24%% off the exact values "
        "(relative RMS on a forest of 100 trees; the first reason the same for "
        "94%% of the rows); 'all' compares every tree with every row, the exact "
        "values with that background (the time grows with it: 500 times 'auto' "
        "for 100 trees and 1,000 rows)",
    )
    parser.add_argument(
        "--n-permutations",
        type=positive_int,
        default=32,
        help="random feature orders per row of --algorithm permutation: more is "
        "slower and more precise",
    )
    parser.add_argument(
        "--random-state", type=int, default=0, help="seed of the random draws"
    )


def _load(path):
    """The model, its metadata and how its feature columns are read."""
    from treerank.cli._columns import model_columns
    from treerank.model_io import load_model

    if path == "-":
        raise UsageError("the model cannot be read from standard input.")
    shown = escape(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{shown}: no such file (model file).")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{shown} is a directory, not a model file.")
    model, metadata = load_model(path, with_metadata=True)
    from treerank import RankingForest, TreeRank

    if not isinstance(model, (TreeRank, RankingForest)):
        raise ValueError(
            f"{shown} holds a {type(model).__name__}; `treerank explain` explains a "
            "TreeRank or RankingForest model whose features are the file's columns "
            "(explain a pipeline's last step from Python)."
        )
    return model, metadata, model_columns(path, model, metadata)


def _rows(X, index):
    return X.iloc[index] if hasattr(X, "iloc") else X[index]


def _stack(parts):
    import numpy as np

    if hasattr(parts[0], "iloc"):
        import pandas as pd

        return pd.concat(parts, ignore_index=True)
    return np.concatenate(parts)


def _sample_rows(path, columns, n_rows, args, rng):
    """A uniform sample of ``n_rows`` rows of a file, in one pass (reservoir).

    Row t (0-based) replaces a random kept row with probability
    ``n_rows / (t + 1)``: every row of the file is kept with the same
    probability, in memory of ``n_rows`` rows. The rows are read as the
    explained rows are (the same columns, decimal mark and categories).
    """
    import numpy as np

    from treerank.cli._csv import CsvError

    kept = []
    seen = 0
    with columns.source(path, args) as source:
        columns.bind(source, [name for name in args.id or () if name in source.header])
        for _, _, X in columns.chunks(source, [], args.chunk_size):
            size = X.shape[0]
            fill = min(size, max(0, n_rows - seen))
            kept.extend(_rows(X, [row]) for row in range(fill))
            positions = seen + np.arange(fill, size)
            slots = rng.randint(0, positions + 1) if positions.shape[0] else positions
            for row, slot in zip(range(fill, size), slots):
                if slot < n_rows:
                    kept[slot] = _rows(X, [row])
            seen += size
        if not kept:
            raise CsvError(f"{source.name} has a header but no data rows (background).")
    return _stack(kept)


def _id_columns(args, source, metadata, outputs):
    if args.id is not None:
        ids = list(args.id)
        for name in ids:
            source.column_index(name, "an --id column")
    else:
        saved = (metadata or {}).get("id_columns") or []
        ids = [n for n in saved if isinstance(n, str) and n in source.positions]
    clash = [name for name in ids if name in outputs]
    if clash:
        raise UsageError(
            f"the --id column {shorten(clash[0])} has the name of an output "
            "column; rename it in the file."
        )
    return ids


def _output_columns(top, with_errors, with_proxy):
    columns = ["score", "base", "reasons_for"]
    for k in range(1, top + 1):
        columns += [f"reason_{k}", f"value_{k}", f"contribution_{k}", f"rule_{k}"]
        if with_errors:
            columns.append(f"std_error_{k}")
    columns.append("other_contributions")
    if with_proxy:
        columns.append("proxy_difference")
    return columns


def _lines(ids, id_columns, explanation, table, top, reasons_for, raw=False):
    """The output lines of one chunk (text spreadsheet-safe, quoted as CSV needs).

    ``other_contributions`` is the sum of the contributions not listed as
    reasons, so that every line adds up: ``score = base + contribution_1 +
    ... + other_contributions (+ proxy_difference)``.
    """
    import numpy as np

    from treerank.cli._text import csv_field

    def _field(text):
        return csv_field(text, raw=raw)

    with_errors = explanation.std_errors is not None
    values = explanation.values
    listed = np.zeros(values.shape, dtype=bool)
    features = table["features"]
    for column in features.T:
        rows = np.flatnonzero(column >= 0)
        listed[rows, column[rows]] = True
    others = np.where(listed, 0.0, values).sum(axis=1)
    base = repr(float(explanation.base_value))
    label = _field(reasons_for)
    lines = []
    for i in range(len(explanation)):
        fields = [_field(id_columns[name][i]) for name in ids]
        fields += [repr(float(explanation.scores[i])), base, label]
        for rank in range(top):
            feature = int(features[i, rank])
            if feature < 0:
                fields += [""] * (5 if with_errors else 4)
                continue
            fields += [
                _field(explanation.feature_names[feature]),
                _field(explanation.display_value(i, feature)),
                repr(float(values[i, feature])),
                _field(table["rules"][i][rank]),
            ]
            if with_errors:
                fields.append(repr(float(explanation.std_errors[i, feature])))
        fields.append(repr(float(others[i])))
        if explanation.proxy_difference is not None:
            fields.append(repr(float(explanation.proxy_difference[i])))
        lines.append(",".join(fields))
    return "\n".join(lines) + "\n" if lines else ""


def _classes(model, metadata):
    """How the two sides of the ranking are named: (positive, negative).

    From what ``treerank fit`` recorded (the target, its positive value and
    the values counted as negative), else from the model's classes.
    """
    target = metadata.get("target")
    grades = [str(g) for g in getattr(model, "classes_", ())]
    if len(grades) > 2:
        what = target if isinstance(target, str) else "grade"
        return f"a higher {what}", f"a lower {what}"
    positive = metadata.get("positive_value", metadata.get("positive"))
    negatives = metadata.get("negative_values")
    if isinstance(target, str) and isinstance(positive, str):
        if isinstance(negatives, list) and len(negatives) == 1:
            return f"{target} = {positive}", f"{target} = {negatives[0]}"
        return f"{target} = {positive}", f"{target} != {positive}"
    if len(grades) == 2:
        return f"class {grades[1]}", f"class {grades[0]}"
    return "the positive class", "the negative class"


def _reasons_for(args):
    """``"positive"`` or ``"negative"``, from --reasons-for or --direction."""
    if args.direction is not None:
        return "positive" if args.direction == "up" else "negative"
    return args.reasons_for or "negative"


def run_explain(args):
    """Run ``treerank explain`` (see the module docstring); returns 0."""
    from sklearn.utils import check_random_state

    from treerank.cli._checks import precheck
    from treerank.cli._commands import (
        _first_missing_cell,
        _missing_hint,
        counted_unseen_categories,
        text_output,
    )
    from treerank.cli._csv import CsvError
    from treerank.cli._data import UnseenCategories
    from treerank.cli._text import csv_field
    from treerank.inspection import shapley_values
    from treerank.inspection._reason_codes import reason_table
    from treerank.inspection._shapley import chosen_algorithm

    precheck(args)  # done by main already: cheap, and kept for direct calls
    side = _reasons_for(args)
    model, metadata, columns = _load(args.model)
    metadata = metadata if isinstance(metadata, dict) else {}
    try:
        algorithm = chosen_algorithm(model, args.algorithm)
    except ValueError as exc:  # an --algorithm the model does not allow
        raise UsageError(str(exc)) from None
    outputs = _output_columns(
        args.top, algorithm == "permutation", algorithm == "mean_proxy"
    )
    positive, negative = _classes(model, metadata)
    towards = positive if side == "positive" else negative
    other = negative if side == "positive" else positive
    print(
        f"reasons for {side}: the features that pull each row's score towards "
        f"{escape(towards)} the most (--reasons-for "
        f"{'negative' if side == 'positive' else 'positive'}: towards "
        f"{escape(other)})",
        file=sys.stderr,
    )
    background = _sample_rows(
        args.data if args.background is None else args.background,
        columns,
        args.n_background,
        args,
        check_random_state(args.random_state),
    )
    options = {
        "background": background,
        "max_background": None,
        "algorithm": algorithm,
        "background_per_tree": args.background_per_tree,
        "n_permutations": args.n_permutations,
        "scale": args.scale,
        "random_state": args.random_state,
    }
    direction = "up" if side == "positive" else "down"
    n_rows = 0
    explanation = None
    with columns.source(args.data, args) as source:
        ids = _id_columns(args, source, metadata, outputs)
        notice = columns.bind(source, ids)
        if notice:
            print(notice, file=sys.stderr)
        unseen = UnseenCategories(model, columns.features)
        with text_output(args.out, args.force) as handle:
            header = [csv_field(name, raw=args.raw_text) for name in [*ids, *outputs]]
            handle.write(",".join(header) + "\n")
            for first_line, text, X in columns.chunks(source, ids, args.chunk_size):
                try:
                    with counted_unseen_categories():
                        explanation = shapley_values(model, X, **options)
                except ValueError as exc:
                    where = _first_missing_cell(X, columns.features, first_line)
                    raise _missing_hint(exc, source.name, where) from None
                unseen.add(X)
                explanation.feature_names = list(columns.features)  # the file's
                table = reason_table(model, explanation, args.top, direction)
                handle.write(
                    _lines(
                        ids, text, explanation, table, args.top, towards, args.raw_text
                    )
                )
                n_rows += X.shape[0]
            if n_rows == 0:
                raise CsvError(f"{source.name} has a header but no data rows.")
    for message in unseen.messages():
        print(f"treerank explain: warning: {message}", file=sys.stderr)
    destination = "standard output" if args.out == "-" else escape(args.out)
    print(
        f"reasons of {n_rows} rows written to {destination}. "
        + _closing_words(algorithm, explanation),
        file=sys.stderr,
    )
    return 0


def _closing_words(algorithm, explanation):
    """What the contributions are, in plain words."""
    scale = explanation.scale
    if algorithm == "tree":
        how = "computed exactly"
    elif algorithm == "mean_proxy":
        how = (
            "those of the average of the forest's trees, which ranks the rows "
            "almost as the forest does; proxy_difference is the rest of each "
            "score (--algorithm permutation estimates the forest's own "
            "contributions, more slowly)"
        )
    else:
        how = "estimated, each with its standard error"
    text = (
        f"Each score is a {scale}: base + the contributions of the features "
        f"(other_contributions for those not listed) = score; the contributions "
        f"are {how}."
    )
    per_tree = explanation.background_per_tree
    if algorithm != "permutation" and per_tree is not None:
        if per_tree < explanation.n_background:
            text += (
                f" Each tree was compared with {per_tree} of the "
                f"{explanation.n_background} background rows (--background-per-tree "
                "all compares it with all of them: slower, without the error of "
                "that sample)."
            )
    return text
