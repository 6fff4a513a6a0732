"""``treerank compare``: paired comparison of rankers from a CSV file of scores.

The CSV file has one column of scores per model, the label column and
optionally a query-id column. The report (means and paired differences with
Holm-adjusted p-values, :func:`treerank.bridge.compare`) is printed as
markdown, or written as markdown, LaTeX or CSV.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import csv
import math
import os
import sys

import numpy as np

from treerank.utils._io import atomic_write

__all__ = ["add_compare_parser", "run_compare"]

_FORMATS = ("markdown", "latex", "csv")


def add_compare_parser(commands):
    """Add the ``compare`` subcommand to the subparsers ``commands``.

    Parameters
    ----------
    commands : argparse._SubParsersAction
        The object returned by ``parser.add_subparsers()``.

    Returns
    -------
    parser : argparse.ArgumentParser
        The ``compare`` parser.
    """
    parser = commands.add_parser(
        "compare",
        help="compare rankers' scores with paired significance tests",
        description="Compare the scores of several rankers on the same rows: "
        "metric means, paired differences with p-values adjusted by Holm's "
        "method, as a markdown, LaTeX or CSV table. The CSV file has one score "
        "column per model, the label column and optionally a query-id column.",
    )
    parser.add_argument("data", help="CSV file with a header row")
    parser.add_argument("--label", required=True, help="name of the label column")
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
        help="paired test (default: %(default)s; without --qid, student is "
        "DeLong's test of AUCs and permutation is not available)",
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
    parser.add_argument("--alpha", type=float, default=0.05, help="level (0.05)")
    parser.add_argument("--n-resamples", type=int, default=9999)
    parser.add_argument(
        "--max-grade", type=float, default=None, help="top grade (needed by err)"
    )
    parser.add_argument(
        "--threshold",
        type=float,
        default=1.0,
        help="binary metrics count grades >= threshold as relevant (1)",
    )
    parser.add_argument("--format", choices=_FORMATS, default="markdown")
    parser.add_argument("--out", default=None, help="output file (default: stdout)")
    parser.add_argument("--force", action="store_true", help="overwrite --out")
    parser.add_argument("--random-state", type=int, default=0)
    return parser


def _read_columns(path):
    if not os.path.exists(path):
        raise ValueError(f"{path}: no such file.")
    if os.path.isdir(path):
        raise ValueError(f"{path} is a directory, not a CSV file.")
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = [row for row in csv.reader(handle) if any(c.strip() for c in row)]
    if not rows:
        raise ValueError(f"{path} is empty: a CSV file with a header row is expected.")
    header = [name.strip() for name in rows[0]]
    duplicates = sorted({name for name in header if header.count(name) > 1})
    if duplicates:
        raise ValueError(f"{path}: duplicate column names {duplicates}.")
    if len(rows) < 2:
        raise ValueError(f"{path} has a header but no data rows.")
    for line, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise ValueError(
                f"{path}, line {line}: {len(row)} fields, but the header has "
                f"{len(header)} columns."
            )
    return header, {
        name: [row[i].strip() for row in rows[1:]] for i, name in enumerate(header)
    }


def _numbers(path, name, texts):
    values = np.empty(len(texts))
    for line, text in enumerate(texts, start=2):
        try:
            values[line - 2] = float(text)
        except ValueError:
            raise ValueError(
                f"{path}, line {line}: non-numeric value {text!r} in column {name!r}."
            ) from None
        if not math.isfinite(values[line - 2]):
            raise ValueError(f"{path}, line {line}: non-finite value in {name!r}.")
    return values


def _split_names(text):
    return [name.strip() for name in text.split(",") if name.strip()]


def run_compare(args):
    """Run ``treerank compare`` with parsed arguments; returns the exit status.

    Parameters
    ----------
    args : argparse.Namespace
        Arguments parsed by the parser of :func:`add_compare_parser`.

    Returns
    -------
    status : int
        0 on success (errors raise ``ValueError``, reported by the caller).
    """
    from treerank.bridge import compare

    if args.out is not None and os.path.exists(args.out) and not args.force:
        raise FileExistsError(f"{args.out} already exists (use --force to overwrite).")
    header, columns = _read_columns(args.data)
    for option, name in [("--label", args.label), ("--qid", args.qid)]:
        if name is not None and name not in header:
            raise ValueError(
                f"{args.data} has no column {name!r} (the {option}); its columns "
                f"are {header}."
            )
    reserved = {args.label, args.qid}
    if args.models is None:
        models = [name for name in header if name not in reserved]
    else:
        models = _split_names(args.models)
        missing = [name for name in models if name not in header]
        if missing:
            raise ValueError(f"{args.data} has no score columns {missing}.")
        clash = [name for name in models if name in reserved]
        if clash:
            raise ValueError(f"--models {clash} is the label or the qid column.")
    if len(models) < 2:
        raise ValueError(
            f"{args.data}: at least two score columns are needed to compare; got "
            f"{models}."
        )
    scores = {name: _numbers(args.data, name, columns[name]) for name in models}
    y = _numbers(args.data, args.label, columns[args.label])
    qid = None if args.qid is None else np.asarray(columns[args.qid])
    metrics = None if args.metrics is None else _split_names(args.metrics)
    result = compare(
        scores,
        y,
        qid,
        metrics=metrics,
        test=args.test,
        baseline=args.baseline,
        correction=None if args.correction == "none" else "holm",
        alpha=args.alpha,
        n_resamples=args.n_resamples,
        max_grade=args.max_grade,
        threshold=args.threshold,
        random_state=args.random_state,
    )
    units = (
        f"{result.n_units} queries"
        if args.qid is not None
        else f"{result.n_units} rows"
    )
    print(
        f"compared {len(models)} models on {units} ({result.test} test, "
        f"{args.correction} correction)",
        file=sys.stderr,
    )
    if args.format == "markdown":
        text = result.to_markdown() + "\n"
    elif args.format == "latex":
        text = result.to_latex() + "\n"
    else:
        text = _csv_text(result)
    if args.out is None:
        sys.stdout.write(text)
    else:
        with atomic_write(args.out, overwrite=args.force) as handle:
            handle.write(text)
        print(f"wrote {args.out}")
    return 0


def _csv_text(result):
    from io import StringIO

    from treerank.bridge._compare import _COLUMNS

    buffer = StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(_COLUMNS)
    for row in result.comparisons:
        writer.writerow(
            [repr(row[c]) if isinstance(row[c], float) else row[c] for c in _COLUMNS]
        )
    return buffer.getvalue()
