"""Command-line interface: ``treerank <command> ...`` (also ``python -m treerank``).

Commands: ``fit`` (learn a ranking tree or forest from a CSV file), ``score``
(score a CSV file with a saved model), ``export`` (a saved tree as DOT, JSON,
text or PNG), ``stability`` (bootstrap instability of a ranking algorithm on a
CSV file), ``compare`` (paired significance tests between rankers' scores in a
CSV file) and ``demo``. Inputs are CSV files with a header row; outputs are
written atomically and an existing output is not replaced without ``--force``.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import sys

__all__ = ["main"]


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer; got {text}")
    return value


def _add_model_options(parser):
    parser.add_argument("--target", required=True, help="name of the label column")
    parser.add_argument(
        "--positive",
        default=None,
        help="target value of the positive class (needed for a non-numeric target; "
        "default: the larger of two numeric values)",
    )
    parser.add_argument("--model", choices=["tree", "forest"], default="tree")
    parser.add_argument("--max-depth", type=_positive_int, default=6)
    parser.add_argument("--min-samples-split", type=_positive_int, default=50)
    parser.add_argument(
        "--pruning",
        choices=["none", "cv", "penalty"],
        default="none",
        help="pruning of a single tree (default: none)",
    )
    parser.add_argument("--n-estimators", type=_positive_int, default=100)
    parser.add_argument(
        "--aggregation", choices=["median", "mean", "borda"], default="median"
    )
    parser.add_argument("--n-jobs", type=int, default=None)
    parser.add_argument("--random-state", type=int, default=0)


def _build_parser():
    from treerank import __version__

    parser = argparse.ArgumentParser(
        prog="treerank", description="Bipartite ranking with tree ensembles."
    )
    parser.add_argument(
        "--version", action="version", version=f"treerank {__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    fit = commands.add_parser("fit", help="learn a ranking model from a CSV file")
    fit.add_argument("data", help="CSV file with a header row")
    _add_model_options(fit)
    fit.add_argument("--out", required=True, help="model file to write (.trk)")
    fit.add_argument("--force", action="store_true", help="overwrite --out")

    score = commands.add_parser("score", help="score a CSV file with a saved model")
    score.add_argument("model", help="model file written by `treerank fit`")
    score.add_argument("data", help="CSV file with the model's feature columns")
    score.add_argument("--out", required=True, help="CSV file of scores to write")
    score.add_argument("--force", action="store_true", help="overwrite --out")

    export = commands.add_parser("export", help="export a saved ranking tree")
    export.add_argument("model", help="model file")
    export.add_argument(
        "--format", choices=["dot", "json", "text", "png"], default="text"
    )
    export.add_argument("--tree", type=int, default=0, help="tree index in a forest")
    export.add_argument("--out", default=None, help="output file (default: stdout)")
    export.add_argument("--force", action="store_true", help="overwrite --out")

    stability = commands.add_parser(
        "stability", help="bootstrap (in)stability of a ranking algorithm"
    )
    stability.add_argument("data", help="CSV file with a header row")
    _add_model_options(stability)
    stability.add_argument("--n-bootstrap", type=_positive_int, default=20)
    stability.add_argument("--out", default=None, help="JSON summary to write")
    stability.add_argument("--force", action="store_true", help="overwrite --out")

    demo = commands.add_parser(
        "demo",
        help="fit and report on embedded data sets, write plots and graphs",
        description="Fit TreeRank and RankingForest on the nested-squares and breast "
        "cancer data; print a table; write ROC plots, an exported tree (DOT, PNG) and "
        "the bootstrap stability of TreeRank vs RankingForest into a folder.",
    )
    demo.add_argument(
        "--output-dir",
        default="treerank-demo",
        help="output folder (default: %(default)s)",
    )
    demo.add_argument("--random-state", type=int, default=0, help="seed (default: 0)")

    from treerank.cli._compare import add_compare_parser

    add_compare_parser(commands)
    return parser


def main(argv=None):
    """Run the command line; returns the exit status.

    Parameters
    ----------
    argv : list of str or None, default=None
        Arguments (``sys.argv[1:]`` if None).

    Returns
    -------
    status : int
        0 on success, 2 on a usage or input error.
    """
    from treerank.cli import _commands
    from treerank.exceptions import ModelFileError

    args = _build_parser().parse_args(argv)
    try:
        if args.command == "demo":
            from treerank.cli._demo import run_demo

            run_demo(args.output_dir, random_state=args.random_state)
            return 0
        if args.command == "compare":
            from treerank.cli._compare import run_compare

            return run_compare(args)
        return getattr(_commands, f"cmd_{args.command}")(args)
    except (ValueError, ModelFileError, FileExistsError, OSError) as exc:
        print(f"treerank {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
