"""Command-line interface: ``treerank <command> ...`` (also ``python -m treerank``)."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import argparse
import sys

__all__ = ["main"]


def _build_parser():
    from treerank import __version__

    parser = argparse.ArgumentParser(
        prog="treerank",
        description="Bipartite ranking with tree ensembles.",
    )
    parser.add_argument(
        "--version", action="version", version=f"treerank {__version__}"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser(
        "demo",
        help="fit and report on embedded data sets, write plots",
        description="Fit TreeRank on the nested-squares and breast cancer data, print "
        "a table and write ROC plots and a summary into an output folder.",
    )
    demo.add_argument(
        "--output-dir",
        default="treerank-demo",
        help="output folder (default: %(default)s)",
    )
    demo.add_argument("--random-state", type=int, default=0, help="seed (default: 0)")
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
    """
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "demo":
            from treerank._demo import run_demo

            run_demo(args.output_dir, random_state=args.random_state)
    except (ValueError, FileExistsError, OSError) as exc:
        print(f"treerank {args.command}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
