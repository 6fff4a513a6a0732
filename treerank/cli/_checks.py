"""What the command line checks before it imports the numerical stack.

Options that do not go together, an output that exists (without ``--force``)
or has no folder, and input files that cannot be read are refused here, in
milliseconds: importing numpy, pandas, scikit-learn, scipy and numba takes
from half a second to several seconds, which a refusal should not cost.
Importing this module imports no numerical library; the commands call the
same checks again (they are cheap), so that they hold when the commands are
run from Python.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import os

from treerank.cli._text import escape
from treerank.cli._usage import UsageError
from treerank.utils._io import refuse_special_file

__all__ = [
    "check_input",
    "check_output",
    "check_output_dir",
    "check_readable",
    "precheck",
]


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


def check_output_dir(path, *, force):
    """Refuse an output folder that holds files (without ``--force``).

    A missing or empty folder is fine; a file at that name is refused.
    """
    shown = escape(os.fspath(path))
    if not os.path.lexists(path):
        return
    if not os.path.isdir(path):
        raise NotADirectoryError(f"--output-dir {shown} exists and is not a folder.")
    if os.listdir(path) and not force:
        raise FileExistsError(
            f"the folder {shown} already exists and is not empty: its files would "
            "be replaced (use --force to replace them, or another --output-dir)."
        )


def check_readable(path, what):
    """Refuse a model file that is missing, a directory or unreadable."""
    shown = escape(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{shown}: no such file ({what}).")
    if os.path.isdir(path):
        raise IsADirectoryError(f"{shown} is a directory, not a {what}.")
    if not os.access(path, os.R_OK):
        raise PermissionError(f"{shown}: permission denied (cannot read the {what}).")


def check_input(path):
    """Refuse a CSV input that is missing or a directory (``-`` is fine)."""
    if path is None or path == "-":
        return
    shown = escape(os.fspath(path))
    if os.path.isdir(path):
        raise IsADirectoryError(f"{shown} is a directory, not a CSV file.")
    if not os.path.exists(path):
        raise FileNotFoundError(f"{shown}: no such file.")


def _model_file(path):
    if path == "-":
        raise UsageError("the model cannot be read from standard input.")
    check_readable(path, "model file")


def _check_fit(args):
    if args.out == "-":
        raise UsageError(
            "a model file cannot be written to standard output: give --out FILE."
        )
    if args.features is not None and args.drop:
        raise UsageError("--features and --drop do not go together: give one.")
    if args.model == "tree" and args.multipartite is not None:
        raise UsageError("--multipartite applies to --model forest only.")
    if args.model == "forest" and args.pruning != "none":
        raise UsageError("--pruning applies to --model tree only.")


def _check_explain(args):
    if args.reasons_for is not None and args.direction is not None:
        raise UsageError(
            "--reasons-for and --direction say the same thing: give one "
            "(--reasons-for positive is --direction up)."
        )
    if args.data == "-" and args.background is None:
        raise UsageError(
            "reading the data from standard input needs --background (the rows "
            "the scores are compared with are drawn from DATA otherwise)."
        )
    if args.n_permutations < 2:
        raise UsageError(
            "--n-permutations must be at least 2 (standard errors need two samples)."
        )


def precheck(args):
    """The checks of ``fit``, ``score``, ``explain`` and ``demo`` that need no
    library.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed command line.

    Raises
    ------
    UsageError
        For options that do not go together (exit status 2).
    OSError
        For an output that exists or cannot be written, an input or model file
        that cannot be read (exit status 1).
    """
    if args.command == "demo":
        check_output_dir(args.output_dir, force=args.force)
        return
    if args.command == "fit":
        _check_fit(args)
    elif args.command == "explain":
        _check_explain(args)
    if args.command in ("fit", "score", "explain"):
        check_output(args.out, force=args.force, mkdir=args.mkdir)
    if args.command in ("score", "explain"):
        _model_file(args.model)
    if args.command in ("fit", "score", "explain"):
        check_input(args.data)
        if args.command == "explain":
            check_input(args.background)
