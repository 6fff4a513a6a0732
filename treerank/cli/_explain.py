"""``treerank explain``: reason codes for every row of a CSV file.

For each row: its score, then the ``--top`` features that pull the score down
the most (``--direction up``: up), each with the row's value, its
contribution (its Shapley value, :func:`treerank.inspection.shapley_values`)
and the condition the row met on it. The contributions compare each row with
a background sample: the rows of ``--background`` or, without it, rows drawn
at random from the data file itself (a first pass over the file, in bounded
memory). The file is then explained in chunks of ``--chunk-size`` rows, as
``treerank score`` scores it: memory does not grow with the file, and a row's
reasons do not depend on the chunk it is in.

A tree and a forest aggregated by the mean or Borda are explained exactly; a
median forest (the default) by default by the exact values of the mean of its
trees, its proxy, and with ``--algorithm permutation`` by estimates of its own
values, with standard errors (much slower). The score written is always the
model's, as ``treerank score`` writes it.

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
        "--direction",
        choices=["down", "up"],
        default="down",
        help="'down': the features that pull the score down (why a row is ranked "
        "low); 'up': those that pull it up",
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
        help="background rows each tree is compared with, drawn for each tree "
        "('all': every row; 'auto': max(2, ceil(200 / trees))); the time grows "
        "with it",
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
    """The model, its metadata and how `treerank fit` read its columns."""
    from treerank.cli._commands import _saved_columns
    from treerank.cli._csv import CsvError
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
    features = (metadata or {}).get("features")
    if not isinstance(features, list) or not features:
        raise CsvError(
            f"{shown} does not record its feature columns (it was not written by "
            "`treerank fit`); explain it from Python "
            "(treerank.inspection.reason_codes)."
        )
    features, categorical, decimal = _saved_columns(path, metadata)
    return model, metadata, _Columns(features, categorical, decimal, model)


class _Columns:
    """How the model's feature columns are read, as `treerank score` reads them.

    Numeric columns as numbers (decimal point or comma: ``--decimal``, else
    the mark of the training file), categorical ones as the categories of the
    kind they were fitted with; a model fitted on named columns is given a
    DataFrame, an older one an array.
    """

    def __init__(self, features, categorical, decimal, model):
        self.features = features
        self.categorical = categorical
        self.decimal = decimal
        self.named = hasattr(model, "feature_names_in_")

    def source(self, path, args):
        from treerank.cli._csv import CsvSource

        return CsvSource(
            path,
            delimiter=args.delimiter,
            decimal=args.decimal,
            default_decimal=self.decimal,
            max_line_bytes=args.max_line_size,
        )

    def check(self, source):
        from treerank.cli._csv import CsvError

        missing = [name for name in self.features if name not in source.positions]
        if missing:
            shown = ", ".join(shorten(name) for name in missing[:10])
            raise CsvError(
                f"{source.name} lacks the model's feature columns [{shown}"
                f"{', ...' if len(missing) > 10 else ''}]; its columns are "
                f"{source.describe_columns()}."
            )

    def chunks(self, source, ids, chunk_size):
        """Yield ``(first_line, columns, X)``: the text of the ids, the features.

        A feature that is also an id column is read once, as text, and parsed
        from it (as `treerank score` does).
        """
        import numpy as np

        from treerank.cli._commands import _feature_columns
        from treerank.cli._data import category_values, feature_frame

        categorical = self.categorical
        numeric = [n for n in self.features if n not in categorical and n not in ids]
        for first_line, columns in source.chunks(
            numeric,
            text_columns=ids,
            categorical_columns=[n for n in categorical if n not in ids],
            n_rows=chunk_size,
        ):
            values = _feature_columns(
                source, columns, self.features, categorical, ids, first_line
            )
            for name, kind in categorical.items():
                values[name] = category_values(source, values[name], kind)
            X = feature_frame(values, self.features, categorical)
            if not self.named:
                X = X.to_numpy(dtype=object if categorical else np.float64)
            yield first_line, columns, X


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
        columns.check(source)
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


def _output_columns(top, with_errors):
    columns = ["score"]
    for k in range(1, top + 1):
        columns += [f"reason_{k}", f"value_{k}", f"contribution_{k}", f"rule_{k}"]
        if with_errors:
            columns.append(f"std_error_{k}")
    return columns


def _lines(ids, id_columns, explanation, scores, table, top, raw=False):
    """The output lines of one chunk (text spreadsheet-safe, quoted as needed)."""
    from treerank.cli._text import csv_field

    def _field(text):
        return csv_field(text, raw=raw)

    with_errors = explanation.std_errors is not None
    lines = []
    for i in range(len(explanation)):
        fields = [_field(id_columns[name][i]) for name in ids]
        fields.append(repr(float(scores[i])))
        for rank in range(top):
            feature = int(table["features"][i, rank])
            if feature < 0:
                fields += [""] * (5 if with_errors else 4)
                continue
            fields += [
                _field(explanation.feature_names[feature]),
                _field(explanation.display_value(i, feature)),
                repr(float(explanation.values[i, feature])),
                _field(table["rules"][i][rank]),
            ]
            if with_errors:
                fields.append(repr(float(explanation.std_errors[i, feature])))
        lines.append(",".join(fields))
    return "\n".join(lines) + "\n" if lines else ""


def run_explain(args):
    """Run ``treerank explain`` (see the module docstring); returns 0."""
    from sklearn.utils import check_random_state

    from treerank.cli._commands import (
        _first_missing_cell,
        _missing_hint,
        check_output,
        counted_unseen_categories,
        text_output,
    )
    from treerank.cli._csv import CsvError
    from treerank.cli._data import UnseenCategories
    from treerank.cli._text import csv_field
    from treerank.inspection import shapley_values
    from treerank.inspection._reason_codes import reason_table
    from treerank.inspection._shapley import chosen_algorithm
    from treerank.inspection._tree_sum import encoded_decision_function

    check_output(args.out, force=args.force, mkdir=args.mkdir)
    if args.data == "-" and args.background is None:
        raise UsageError(
            "reading the data from standard input needs --background (the rows "
            "the scores are compared with are drawn from DATA otherwise)."
        )
    if args.n_permutations < 2:
        raise UsageError(
            "--n-permutations must be at least 2 (standard errors need two samples)."
        )
    model, metadata, columns = _load(args.model)
    try:
        algorithm = chosen_algorithm(model, args.algorithm)
    except ValueError as exc:  # an --algorithm the model does not allow
        raise UsageError(str(exc)) from None
    outputs = _output_columns(args.top, algorithm == "permutation")
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
        "random_state": args.random_state,
    }
    n_rows = 0
    with columns.source(args.data, args) as source:
        columns.check(source)
        ids = _id_columns(args, source, metadata, outputs)
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
                table = reason_table(model, explanation, args.top, args.direction)
                scores = explanation.scores
                if algorithm == "mean_proxy":  # the model's score, as `score` writes
                    scores = encoded_decision_function(model, explanation.data)
                handle.write(
                    _lines(
                        ids, text, explanation, scores, table, args.top, args.raw_text
                    )
                )
                n_rows += X.shape[0]
            if n_rows == 0:
                raise CsvError(f"{source.name} has a header but no data rows.")
    for message in unseen.messages():
        print(f"treerank explain: warning: {message}", file=sys.stderr)
    destination = "standard output" if args.out == "-" else escape(args.out)
    how = {
        "tree": "exact values",
        "mean_proxy": "exact values of the mean of the median's trees, its proxy "
        "(--algorithm permutation estimates the median's own)",
        "permutation": "estimated values, with standard errors",
    }[algorithm]
    print(f"reasons of {n_rows} rows written to {destination} ({how})", file=sys.stderr)
    return 0
