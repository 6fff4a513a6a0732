"""Command-line interface: ``treerank <command> ...`` (also ``python -m treerank``).

Commands: ``fit`` (learn a ranking tree or forest from a CSV file), ``score``
(score a CSV file with a saved model, streamed in chunks), ``explain`` (reason
codes of every row of a CSV file, streamed in chunks), ``export`` (a saved
tree as DOT, JSON, text or PNG), ``stability`` (bootstrap instability of a
ranking algorithm on a CSV file), ``compare`` (paired significance tests between
rankers' scores in a CSV file), ``demo`` and ``precompile`` (compile the numba
kernels into numba's cache, e.g. when building a container image).

Inputs are CSV files with a header row; the delimiter and a decimal comma are
detected (or given with ``--delimiter`` and ``--decimal``), text columns are
categorical features, ``-`` reads standard input. In CSV outputs, a text cell
from data that a spreadsheet would run as a formula (starting with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return, and not a plain number) gets
a ``'`` before it unless ``--raw-text`` is given (see
:mod:`treerank.cli._text`); identifiers are otherwise written byte for byte.
Outputs are written
atomically, an existing output is only replaced with ``--force``, and a missing
output folder is only created with ``--mkdir``; ``-`` (the default of
``score`` and ``export``) writes to standard output.

Exit status: 0 on success, 1 for bad data or a bad file (unreadable, missing,
malformed, an existing output), 2 for bad usage (unknown option, invalid
option value, options that do not go together); 130 when interrupted
(Ctrl-C). Every message names the file
and, for data errors, the line and the column; text taken from data is printed
with control characters escaped.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import contextlib
import os
import sys

from treerank.cli._text import escape
from treerank.cli._usage import (
    UsageError,
)
from treerank.cli._usage import (
    byte_size as _size,
)
from treerank.cli._usage import (
    decimal_mark as _decimal,
)
from treerank.cli._usage import (
    delimiter as _delimiter,
)
from treerank.cli._usage import (
    max_leaves as _max_leaves,
)
from treerank.cli._usage import (
    min_samples_split as _min_samples_split,
)
from treerank.cli._usage import (
    monotonic_constraint as _monotonic,
)
from treerank.cli._usage import (
    positive_int as _positive_int,
)
from treerank.cli._usage import (
    tree_depth as _depth,
)

__all__ = ["EXIT_DATA", "EXIT_OK", "EXIT_USAGE", "UsageError", "main"]

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2


class _Formatter(argparse.ArgumentDefaultsHelpFormatter):
    """Show defaults, except for options whose default is "not given"."""

    def _get_help_string(self, action):
        if action.default in (None, False) or action.default is argparse.SUPPRESS:
            return action.help
        return super()._get_help_string(action)


def _add_input_options(parser):
    parser.add_argument(
        "--delimiter",
        type=_delimiter,
        default=None,
        metavar="CHAR",
        help="field separator: one character, or 'tab' (default: detected among "
        "',' ';' tab '|')",
    )
    parser.add_argument(
        "--decimal",
        type=_decimal,
        default=None,
        metavar="MARK",
        help="decimal mark of the numbers: '.' or ',' (default: ',' when the first "
        "lines have numbers with a decimal comma only and the delimiter is not a "
        "comma; else '.', or for `score` the mark of the training file)",
    )
    parser.add_argument(
        "--max-line-size",
        type=_size,
        default="16M",
        metavar="SIZE",
        help="longest line read (a quoted field over several lines counts whole); "
        "a longer one is an error",
    )
    parser.add_argument(
        "--chunk-size",
        type=_positive_int,
        default=10_000,
        metavar="ROWS",
        help="rows read (and scored) at a time: memory is bounded by the chunk",
    )


def _add_output_options(parser, *, required=False, default=None, what="output"):
    if required:
        parser.add_argument("--out", required=True, help=f"{what} to write")
    else:
        parser.add_argument(
            "--out", default=default, help=f"{what} to write ('-': standard output)"
        )
    parser.add_argument(
        "--force", action="store_true", help="replace --out if it exists"
    )
    parser.add_argument(
        "--mkdir",
        action="store_true",
        help="create the folder of --out if it does not exist",
    )


def _add_raw_text_option(parser):
    parser.add_argument(
        "--raw-text",
        action="store_true",
        help="write text cells (ids, column names, categories, rules) as they are; "
        "by default a text cell starting with = + - @ tab or carriage return "
        "gets a ' before it, so that a spreadsheet does not run it as a formula "
        "(numbers are never changed)",
    )


def _add_columns_options(parser):
    parser.add_argument("--target", required=True, help="name of the label column")
    parser.add_argument(
        "--positive",
        default=None,
        help="target value of the positive class (needed for a non-numeric "
        "target; default: the larger of two numeric values; a target with more "
        "than two integer values is ranked as ordered grades, higher first)",
    )
    parser.add_argument(
        "--id",
        nargs="+",
        default=[],
        metavar="COL",
        help="identifier columns: not features; `score` carries them to its output",
    )
    parser.add_argument(
        "--drop", nargs="+", default=[], metavar="COL", help="columns to leave out"
    )
    parser.add_argument(
        "--features",
        nargs="+",
        default=None,
        metavar="COL",
        help="the feature columns (default: every column but the target, the ids "
        "and the dropped ones)",
    )
    parser.add_argument(
        "--categorical",
        nargs="+",
        default=[],
        metavar="COL",
        help="read these feature columns as categories even if they hold numbers "
        "(integer codes); columns of text are categorical anyway",
    )
    parser.add_argument(
        "--numeric",
        nargs="+",
        default=[],
        metavar="COL",
        help="these feature columns must hold numbers: text in them is an error "
        "rather than categories",
    )
    parser.add_argument(
        "--max-columns",
        type=_positive_int,
        default=100_000,
        metavar="N",
        help="most feature columns read: a file with more is refused before its "
        "rows are read (choose the features with --features or --drop, or raise "
        "this; reading and fitting take about a second per 10,000 columns)",
    )


def _add_scale_option(parser):
    parser.add_argument(
        "--scale",
        choices=["calibrated", "decision"],
        default="calibrated",
        help="the scale of the scores: 'calibrated', the calibrated positive rate "
        "(expected grade for more than two grades); 'decision', the model's "
        "decision_function, in its own units (the same ranking)",
    )


def _add_model_options(parser, model="forest"):
    parser.add_argument(
        "--model",
        choices=["forest", "tree"],
        default=model,
        help="ranker to fit: 'forest', a RankingForest (the most accurate, "
        "--n-estimators trees aggregated by --aggregation), or 'tree', a single "
        "TreeRank (readable, less accurate)",
    )
    parser.add_argument(
        "--max-depth",
        type=_depth,
        default="none",
        help="depth of the trees: a positive integer or 'none' (unlimited)",
    )
    parser.add_argument(
        "--min-samples-split",
        type=_min_samples_split,
        default="auto",
        help="smallest node that is split: an integer >= 2 or 'auto' "
        "(max(10, ceil(rows / 250)))",
    )
    parser.add_argument(
        "--pruning",
        choices=["none", "cv", "penalty"],
        default="none",
        help="pruning of a single tree (--model tree)",
    )
    parser.add_argument(
        "--n-estimators",
        type=_positive_int,
        default=100,
        help="trees of a forest (--model forest)",
    )
    parser.add_argument(
        "--monotonic",
        nargs="+",
        type=_monotonic,
        default=[],
        metavar="COL=SIGN",
        help="monotone constraints: the score is non-decreasing (COL=+1) or "
        "non-increasing (COL=-1) in a feature column, all else equal",
    )
    parser.add_argument(
        "--splitter",
        choices=["axis", "linear", "mixed"],
        default="axis",
        help="how each node is split: 'axis' (default: a union of boxes, the "
        "compiled LeafRank), 'linear' (a half-space, LinearLeafRank) or 'mixed' "
        "(at every node the better of the two on held-out rows, MixedLeafRank; "
        "the most accurate on the real-data benchmark, several times slower); "
        "'linear' and 'mixed' need numeric columns and no --monotonic",
    )
    parser.add_argument(
        "--aggregation",
        choices=["median", "mean", "borda"],
        default="median",
        help="how a forest aggregates its trees' rankings",
    )
    parser.add_argument(
        "--multipartite",
        choices=["stacked", "thresholds"],
        default=None,
        help="with more than two grades, what each tree of a forest learns: "
        "'stacked' (default: every grade threshold at once, rows weighted by "
        "their grade) or 'thresholds' (one grade threshold per tree, in turn)",
    )
    parser.add_argument(
        "--n-jobs",
        type=int,
        default=None,
        help="parallel jobs of a forest (default: 1; -1: all cores)",
    )
    parser.add_argument(
        "--random-state", type=int, default=0, help="seed of the randomized steps"
    )


def _build_parser():
    from treerank import __version__
    from treerank.cli._compare import add_compare_arguments

    parser = argparse.ArgumentParser(
        prog="treerank",
        description="Bipartite ranking with tree ensembles.",
        epilog="Exit status: 0 ok, 1 bad data or file, 2 bad usage.",
        formatter_class=_Formatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"treerank {__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name, text, **kwargs):
        return commands.add_parser(
            name,
            help=text,
            description=kwargs.pop("description", text[0].upper() + text[1:] + "."),
            epilog="Exit status: 0 ok, 1 bad data or file, 2 bad usage.",
            formatter_class=_Formatter,
            **kwargs,
        )

    fit = command("fit", "learn a ranking model from a CSV file")
    fit.add_argument("data", help="CSV file with a header row ('-': standard input)")
    _add_columns_options(fit)
    _add_input_options(fit)
    _add_model_options(fit)
    _add_output_options(fit, required=True, what="model file (.trk)")

    score = command(
        "score",
        "score a CSV file with a saved model",
        description="Score a CSV file with a saved model, in chunks of --chunk-size "
        "rows (memory does not grow with the file). Writes one row per input "
        "row: the --id columns, then 'score' (higher = ranked first), then "
        "'probability' with --proba. The score is the calibrated positive rate "
        "(for a model of more than two grades, the calibrated expected grade): "
        "the model's calibration read as a continuous function of its ranking "
        "score, so that it keeps the model's ranking, reads as a probability and "
        "is comparable between models; 'treerank explain' explains the same "
        "score.",
    )
    score.add_argument("model", help="model file written by `treerank fit`")
    score.add_argument(
        "data",
        nargs="?",
        default="-",
        help="CSV file with the model's feature columns ('-': standard input)",
    )
    score.add_argument(
        "--id",
        nargs="+",
        default=None,
        metavar="COL",
        help="columns copied to the output (default: the --id columns given to "
        "`treerank fit`, if the file has them)",
    )
    _add_scale_option(score)
    score.add_argument(
        "--proba",
        action="store_true",
        help="also write the calibrated probability of the positive class, "
        "predict_proba: a step function of the score, equal to the score at the "
        "middle of each step (a second pass of the model over each chunk); for a "
        "model of K > 2 grades, one column probability_G per grade G",
    )
    _add_input_options(score)
    _add_output_options(score, default="-", what="CSV file of scores")
    _add_raw_text_option(score)

    explain = command(
        "explain",
        "reason codes: why each row of a CSV file is ranked where it is",
        description="For each row of a CSV file: its score (the calibrated score "
        "that 'treerank score' writes), the base value, and the --top features "
        "that pull it towards the side of --reasons-for the most, with the row's "
        "value, the feature's contribution (its Shapley value against a "
        "background sample) and the condition the row met; then the sum of the "
        "other features' contributions (and for a median forest the difference "
        "between the median and the mean of its trees), so that every line adds "
        "up to its score; streamed in chunks of --chunk-size rows.",
    )
    from treerank.cli._explain import add_explain_arguments

    add_explain_arguments(explain)
    _add_scale_option(explain)
    _add_input_options(explain)
    _add_output_options(explain, default="-", what="CSV file of reason codes")
    _add_raw_text_option(explain)

    export = command("export", "export a saved ranking tree")
    export.add_argument("model", help="model file")
    export.add_argument(
        "--format",
        choices=["dot", "json", "text", "png"],
        default="text",
        help="output format (png needs --out)",
    )
    export.add_argument(
        "--tree",
        type=int,
        default=None,
        metavar="INDEX",
        help="the tree of a forest (or of a TreeRank of more than two grades) to "
        "export, from 0: needed for such a model, which has one tree per index",
    )
    export.add_argument(
        "--max-leaves",
        type=_max_leaves,
        default="auto",
        metavar="N",
        help="png: most leaves drawn, the subtrees of the least populated nodes "
        "collapsed so that the text stays readable ('auto': 32; 'all': every "
        "leaf, in a figure as wide as the tree)",
    )
    export.add_argument(
        "--max-depth",
        type=_positive_int,
        default=None,
        metavar="D",
        help="png: deepest level drawn (deeper subtrees collapsed)",
    )
    _add_output_options(export, default="-", what="output file")

    stability = command(
        "stability", "bootstrap (in)stability of a ranking algorithm on a CSV file"
    )
    stability.add_argument(
        "data", help="CSV file with a header row ('-': standard input)"
    )
    _add_columns_options(stability)
    _add_input_options(stability)
    _add_model_options(stability, model="tree")  # 20 forests would be slow
    stability.add_argument(
        "--n-bootstrap",
        type=_positive_int,
        default=20,
        help="bootstrap replicates",
    )
    _add_output_options(
        stability,
        default=None,
        what="file, chosen by its extension: the summary (.json) or a plot (.png, "
        ".svg, .pdf),",
    )

    demo = command(
        "demo",
        "fit and report on embedded data sets, write plots and graphs",
        description="Fit TreeRank and RankingForest on the nested-squares and "
        "breast cancer data; print a table; write ROC plots, an exported tree "
        "(DOT, PNG) and the bootstrap stability of TreeRank vs RankingForest into "
        "a folder.",
    )
    demo.add_argument(
        "--output-dir",
        default="treerank-demo",
        help="output folder (created; an existing folder that holds files is "
        "refused without --force)",
    )
    demo.add_argument(
        "--force",
        action="store_true",
        help="replace the files of an existing --output-dir",
    )
    demo.add_argument("--random-state", type=int, default=0, help="seed")

    compare = command(
        "compare",
        "compare rankers' scores with paired significance tests",
        description="Compare the scores of several rankers on the same rows: "
        "metric means, paired differences with p-values adjusted by Holm's "
        "method, as a markdown, LaTeX or CSV table. The CSV file has one score "
        "column per model, the label column and optionally a query-id column.",
    )
    add_compare_arguments(compare)
    _add_input_options(compare)
    _add_output_options(compare, default="-", what="report")
    _add_raw_text_option(compare)

    precompile = command(
        "precompile",
        "compile treerank's numba kernels into numba's cache",
        description="Compile treerank's numba kernels into numba's cache, in "
        "this process, so that the first fit of a later process loads them "
        "instead of compiling them (tens of seconds): for container images "
        "(RUN treerank precompile) and CI. Reports what it compiled and how "
        "long it took; a second run compiles nothing. The cache is numba's: "
        "NUMBA_CACHE_DIR if set, else next to the package (or the user's cache "
        "folder).",
    )
    from treerank.cli._precompile import add_precompile_arguments

    add_precompile_arguments(precompile)
    return parser


def _report(command, exc):
    message = str(exc) or type(exc).__name__
    if not isinstance(exc, (ValueError, OSError, UsageError)):
        message = f"{type(exc).__name__}: {message}"
    print(f"treerank {command}: error: {escape(message)}", file=sys.stderr)


def main(argv=None):
    """Run the command line; returns the exit status.

    Parameters
    ----------
    argv : list of str or None, default=None
        Arguments (``sys.argv[1:]`` if None).

    Returns
    -------
    status : int
        0 on success, 1 for bad data or a bad file, 2 for bad usage (argparse
        exits with 2 itself on unknown options and invalid values).
    """
    args = _build_parser().parse_args(argv)
    try:
        if args.command in ("fit", "score", "explain", "demo"):
            # usage, inputs and outputs, before the numerical stack is imported
            from treerank.cli._checks import precheck

            precheck(args)
        if args.command == "demo":
            from treerank.cli._demo import run_demo

            run_demo(args.output_dir, random_state=args.random_state)
            return EXIT_OK
        if args.command == "explain":
            from treerank.cli._explain import run_explain

            return run_explain(args)
        if args.command == "compare":
            from treerank.cli._compare import run_compare

            return run_compare(args)
        if args.command == "precompile":
            from treerank.cli._precompile import run_precompile

            return run_precompile(args)
        from treerank.cli import _commands

        return getattr(_commands, f"cmd_{args.command}")(args)
    except UsageError as exc:
        _report(args.command, exc)
        return EXIT_USAGE
    except BrokenPipeError:
        # the reader of our standard output went away (``... | head``): stop
        # quietly, and keep Python from failing again when it flushes stdout
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        _report(args.command, "standard output was closed before the end")
        return EXIT_DATA
    except KeyboardInterrupt:
        print(f"treerank {args.command}: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # every library or data error: a message, no traceback
        _report(args.command, exc)
        return EXIT_DATA


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
