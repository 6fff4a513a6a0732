"""``treerank compare``: paired comparison of rankers from a CSV file of scores.

The CSV file has one column of scores per model, the label column and
optionally a query-id column. The report (means and paired differences with
Holm-adjusted p-values, :func:`treerank.bridge.compare`) is printed as
markdown, or written as markdown, LaTeX or CSV.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import sys

from treerank.cli._text import escape, shorten
from treerank.cli._usage import UsageError

__all__ = ["add_compare_arguments", "run_compare"]

_FORMATS = ("markdown", "latex", "csv")


def add_compare_arguments(parser):
    """Add the arguments of ``treerank compare`` to its subparser.

    The input options (``--delimiter``, ``--chunk-size``) and the output
    options (``--out``, ``--force``, ``--mkdir``) are the command line's shared
    ones, added by the caller.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The ``compare`` subparser.
    """
    parser.add_argument("data", help="CSV file with a header row ('-': standard input)")
    parser.add_argument("--label", required=True, help="name of the label column")
    parser.add_argument(
        "--positive",
        default=None,
        help="label value of the positive class (needed for a text label; "
        "every other value is negative); without it the labels must be numbers "
        "(binary labels or graded relevance)",
    )
    parser.add_argument(
        "--qid",
        default=None,
        help="name of the query-id column (without it the whole file is one ranking)",
    )
    parser.add_argument(
        "--models",
        default=None,
        help="comma-separated score columns (default: every other column)",
    )
    parser.add_argument(
        "--metrics",
        default=None,
        help="comma-separated metric names, e.g. ndcg@10,map,mrr (default: "
        "ndcg@10,map,mrr with --qid, auc without)",
    )
    parser.add_argument(
        "--test",
        choices=["paired_bootstrap", "permutation", "student"],
        default="paired_bootstrap",
        help="paired test (without --qid, student is DeLong's test of AUCs and "
        "permutation is not available)",
    )
    parser.add_argument(
        "--baseline", default=None, help="compare every model with this one only"
    )
    parser.add_argument(
        "--correction",
        choices=["holm", "none"],
        default="holm",
        help="multiple-comparison correction over each metric's pairs",
    )
    parser.add_argument("--alpha", type=float, default=0.05, help="level")
    parser.add_argument("--n-resamples", type=int, default=9999)
    parser.add_argument(
        "--max-grade", type=float, default=None, help="top grade (needed by err)"
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=1.0,
        help="binary metrics count grades >= threshold as relevant",
    )
    parser.add_argument("--format", choices=_FORMATS, default="markdown")
    parser.add_argument("--random-state", type=int, default=0)


def _split_names(text):
    return [name.strip() for name in text.split(",") if name.strip()]


def _models(args, source):
    """The score columns: ``--models``, or every column but the label and qid."""
    reserved = {args.label, args.qid}
    if args.models is None:
        models = [name for name in source.header if name not in reserved]
    else:
        models = _split_names(args.models)
        clash = [name for name in models if name in reserved]
        if clash:
            raise UsageError(f"--models {escape(str(clash))} is the label or qid.")
    if len(models) < 2:
        raise UsageError(
            "at least two score columns are needed to compare; got "
            f"{escape(str(models))}."
        )
    for name in models:
        source.column_index(name, "a --models score column")
    return models


def _read_columns(args, source, models):
    """Scores, labels and query ids, read in chunks through the CSV reader."""
    import numpy as np

    from treerank.cli._csv import MISSING_MARKERS, CsvError

    numeric = list(models)
    text = [args.label] if args.qid is None else [args.label, args.qid]
    parts = {name: [] for name in numeric + text}
    for first_line, chunk in source.chunks(
        numeric, text_columns=text, n_rows=args.chunk_size
    ):
        for name in numeric:
            missing = np.flatnonzero(np.isnan(chunk[name]))
            if missing.shape[0]:
                raise CsvError(
                    f"{source.name}, line {first_line + int(missing[0])}, column "
                    f"{shorten(name)}: missing value (scores and labels must "
                    "all be present)."
                )
        missing = np.flatnonzero(np.isin(chunk[args.label], MISSING_MARKERS))
        if missing.shape[0]:
            raise CsvError(
                f"{source.name}, line {first_line + int(missing[0])}, column "
                f"{shorten(args.label)}: missing value (scores and labels must "
                "all be present)."
            )
        for name, values in chunk.items():
            parts[name].append(values)
    if not parts[args.label]:
        raise CsvError(f"{source.name} has a header but no data rows.")
    columns = {name: np.concatenate(values) for name, values in parts.items()}
    columns[args.label] = _labels(args, source, columns[args.label])
    return columns


def _labels(args, source, raw):
    """The labels as numbers: ``raw == --positive``, or the numbers written."""
    import numpy as np

    from treerank.cli._csv import CsvError

    label = shorten(args.label)
    values = sorted(set(raw.tolist()))
    shown = ", ".join(shorten(v) for v in values[:10])
    shown += f" and {len(values) - 10} more" if len(values) > 10 else ""
    if args.positive is not None:
        y = (raw == args.positive).astype(np.float64)
        if not y.any():
            raise CsvError(
                f"{source.name}: no row has {label} == {shorten(args.positive)} "
                f"(the --positive value); the values of {label} are {shown}."
            )
        negatives = [v for v in values if v != args.positive]
        if len(negatives) > 1:
            print(
                f"--positive {shorten(args.positive)}: the {len(negatives)} other "
                f"values of {label} are all counted as negative: "
                + ", ".join(shorten(v) for v in negatives[:10]),
                file=sys.stderr,
            )
        return y
    numbers = source.to_numbers(raw.astype(object))
    if not np.all(np.isfinite(numbers)):
        raise CsvError(
            f"{source.name}: the label column {label} is not numeric (its values "
            f"are {shown}); pass --positive LABEL to say which value is the "
            "positive class."
        )
    return numbers


def run_compare(args):
    """Run ``treerank compare`` with parsed arguments; returns the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        Arguments parsed by the ``compare`` subparser.

    Returns
    -------
    status : int
        0 on success (errors raise, and are reported by the caller).
    """
    from treerank.bridge import compare
    from treerank.cli._commands import check_output, text_output
    from treerank.cli._csv import CsvSource

    if args.test == "permutation" and args.qid is None:
        raise UsageError(
            "--test permutation needs --qid (the queries are the paired units "
            "it permutes); without --qid use paired_bootstrap or student."
        )
    check_output(args.out, force=args.force, mkdir=args.mkdir)
    with CsvSource(
        args.data,
        delimiter=args.delimiter,
        decimal=args.decimal,
        max_line_bytes=args.max_line_size,
    ) as source:
        source.column_index(args.label, "the --label")
        if args.qid is not None:
            source.column_index(args.qid, "the --qid")
        models = _models(args, source)
        columns = _read_columns(args, source, models)
    result = compare(
        {name: columns[name] for name in models},
        columns[args.label],
        None if args.qid is None else columns[args.qid],
        metrics=None if args.metrics is None else _split_names(args.metrics),
        test=args.test,
        baseline=args.baseline,
        correction=None if args.correction == "none" else "holm",
        alpha=args.alpha,
        n_resamples=args.n_resamples,
        max_grade=args.max_grade,
        threshold=args.threshold,
        random_state=args.random_state,
    )
    units = "queries" if args.qid is not None else "rows"
    print(
        f"compared {len(models)} models on {result.n_units} {units} "
        f"({result.test} test, {args.correction} correction)",
        file=sys.stderr,
    )
    if args.format == "markdown":
        text = result.to_markdown() + "\n"
    elif args.format == "latex":
        text = result.to_latex() + "\n"
    else:
        text = _csv_text(result, raw=args.raw_text)
    with text_output(args.out, args.force) as handle:
        handle.write(text)
    if args.out != "-":
        print(f"wrote {escape(args.out)}", file=sys.stderr)
    return 0


def _csv_text(result, raw=False):
    """The comparisons as CSV: numbers as they are, text cells spreadsheet-safe."""
    from treerank.bridge._compare import _COLUMNS
    from treerank.cli._text import csv_field

    def cell(value):
        if isinstance(value, float):
            return repr(value)
        if isinstance(value, (bool, int)) or value is None:
            return "" if value is None else str(value)
        return csv_field(value, raw=raw)

    lines = [",".join(csv_field(c, raw=raw) for c in _COLUMNS)]
    for row in result.comparisons:
        lines.append(",".join(cell(row[c]) for c in _COLUMNS))
    return "\n".join(lines) + "\n"
