"""``treerank precompile``: compile the numba kernels into numba's cache.

For container images and CI (``RUN treerank precompile``): the first fit of a
later process loads its kernels from the cache instead of compiling them.
Prints, part by part, how many kernels it compiled and loaded from the cache
and how long it took (the names with ``--verbose``); a second run compiles
nothing and says that every kernel was already cached. See
:func:`treerank.precompile`.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import os
import sys

from treerank._precompile import PRECOMPILE_PARTS

__all__ = ["add_precompile_arguments", "run_precompile"]


def add_precompile_arguments(parser):
    parser.add_argument(
        "--parts",
        nargs="+",
        choices=PRECOMPILE_PARTS,
        default=None,
        metavar="PART",
        help="the kernels to compile: 'growth' (binning, split search, growth "
        "of trees and forests), 'routing' (routing, leaf tables), 'median' and "
        "'small-median' (a forest aggregated by its median, large and small), "
        "'cell-sort' (the cells of large forests); default: all",
    )
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="also list the kernels compiled and loaded, by name",
    )


def _plural(count, word):
    return f"{count} {word}{'' if count == 1 else 's'}"


def run_precompile(args, stream=None):
    """Compile the parts of ``args.parts`` one at a time, printing each; 0."""
    from treerank._precompile import check_can_precompile, precompile

    stream = sys.stdout if stream is None else stream
    try:
        check_can_precompile()
    except RuntimeError as error:
        print(f"treerank precompile: error: {error}", file=sys.stderr)
        return 1
    where = os.environ.get("NUMBA_CACHE_DIR")
    print(
        "compiling treerank's kernels into numba's cache "
        + (f"(NUMBA_CACHE_DIR={where})" if where else "(next to the package)"),
        file=stream,
        flush=True,
    )
    n_compiled = n_cached = 0
    seconds = 0.0
    width = max(len(part) for part in PRECOMPILE_PARTS)
    for part in args.parts or PRECOMPILE_PARTS:
        done = precompile(parts=[part])[part]
        n_compiled += len(done["compiled"])
        n_cached += len(done["cached"])
        seconds += done["seconds"]
        print(
            f"{part:<{width}}  {_plural(len(done['compiled']), 'kernel')} "
            f"compiled, {len(done['cached'])} loaded from the cache, "
            f"{done['seconds']:.1f} s",
            file=stream,
            flush=True,
        )
        if args.verbose:
            for key, label in (("compiled", "compiled"), ("cached", "cached")):
                for name in done[key]:
                    print(f"    {label}: {name}", file=stream)
    if n_compiled == 0:
        summary = (
            f"every kernel was already cached ({_plural(n_cached, 'kernel')} "
            f"loaded in {seconds:.1f} s): nothing to compile"
        )
    else:
        summary = (
            f"compiled {_plural(n_compiled, 'kernel')} and loaded {n_cached} from "
            f"the cache in {seconds:.1f} s"
        )
    print(summary, file=stream, flush=True)
    return 0
