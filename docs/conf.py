# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause
"""Sphinx configuration of the treerank documentation.

Build (offline, warnings are errors)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Nothing here needs the network: no intersphinx, MathJax is only referenced by
the HTML pages (the browser loads it), the gallery data are generated or
shipped with treerank.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import treerank

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))

from mdtables import markdown_to_rst

# -- project -----------------------------------------------------------------
project = "treerank"
author = "The treerank developers"
copyright = "The treerank developers, BSD-3-Clause"
release = treerank.__version__
version = ".".join(release.split(".")[:2])

# -- extensions --------------------------------------------------------------
extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "auto_examples/*.ipynb"]
default_role = "literal"
root_doc = "index"
# Unresolved Python cross-references (e.g. to scikit-learn names, which are
# written as plain literals since intersphinx would need the network) are not
# reported; broken :ref: labels and document links still fail the build.
nitpicky = False

# -- autodoc / autosummary ---------------------------------------------------
autosummary_generate = True
autosummary_imported_members = False
autodoc_typehints = "none"
autoclass_content = "class"

# scikit-learn's metadata-routing methods (``set_fit_request``, ...) and
# ``set_output`` are inherited from scikit-learn's mixins; their docstrings
# refer to scikit-learn's own glossary and guide, so they are left to
# scikit-learn's documentation.
_SKLEARN_ROUTING = re.compile(r"get_metadata_routing|set_\w+_request|set_output")


def _skip_member(app, what, name, obj, skip, options):
    if _SKLEARN_ROUTING.fullmatch(name):
        return True
    # the fields of a named tuple are described by its Attributes section
    if (getattr(obj, "__doc__", None) or "").startswith("Alias for field number"):
        return True
    return None


# -- numpydoc ----------------------------------------------------------------
# Members are listed by the autosummary class template, not by numpydoc (which
# would create a second, toctree-less table for every class).
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

# -- sphinx-gallery ----------------------------------------------------------
os.environ.setdefault("MPLBACKEND", "Agg")

sphinx_gallery_conf = {
    "examples_dirs": ["../examples"],
    "gallery_dirs": ["auto_examples"],
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
    "remove_config_comments": True,
    "plot_gallery": True,
    "reference_url": {"treerank": None},
    # "Examples using X" mini-galleries on the API pages
    "backreferences_dir": "api/generated/backreferences",
    "doc_module": ("treerank",),
    "abort_on_example_error": True,
    "show_memory": False,
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "min_reported_time": 1,
}

# -- HTML --------------------------------------------------------------------
html_theme = "alabaster"
html_title = f"treerank {release}"
html_short_title = "treerank"
html_static_path = []
html_theme_options = {
    "description": "Bipartite ranking with tree ensembles",
    "fixed_sidebar": True,
    "show_relbars": True,
    "page_width": "1100px",
    "sidebar_width": "230px",
}
html_sidebars = {
    "**": ["about.html", "navigation.html", "relations.html", "searchbox.html"]
}
html_show_sourcelink = False

# -- the command-line help, captured at build time ---------------------------
CLI_COMMANDS = [
    "",
    "fit",
    "score",
    "explain",
    "export",
    "stability",
    "compare",
    "demo",
    "precompile",
]


def _write_cli_help(app):
    """Write ``treerank [COMMAND] --help`` to docs/api/generated/ for the CLI page.

    The text comes from running the installed entry point's module, so the page
    cannot drift from the real options.
    """
    out_dir = DOCS / "api" / "generated"
    out_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "COLUMNS": "88", "MPLBACKEND": "Agg"}
    for command in CLI_COMMANDS:
        args = [sys.executable, "-m", "treerank", *([command] if command else [])]
        result = subprocess.run(
            [*args, "--help"],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            check=True,
        )
        name = f"cli_{command or 'main'}.txt"
        path = out_dir / name
        text = result.stdout.replace("usage: __main__.py", "usage: treerank")
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


# -- the benchmark tables, converted at build time ---------------------------


# the stamp of benchmarks/_protocol.py; a file without it predates the stamps
STAMP = re.compile(r"Produced by commit `[0-9a-f]{7,40}`")
UNSTAMPED = (
    "*This file predates the results stamps: the commit that produced it is not "
    "recorded, and it has not been rerun with the current code.*"
)


def _write_benchmark_results(app):
    """Convert ``benchmarks/results/*.md`` to one reST file for the benchmarks page."""
    out_dir = DOCS / "api" / "generated"
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = []
    for path in sorted((ROOT / "benchmarks" / "results").glob("*.md")):
        parts.append(f".. _benchmark_{path.stem}:\n")
        text = path.read_text(encoding="utf-8")
        if not STAMP.search(text):  # a line after the title says so
            title, _, rest = text.partition("\n")
            text = f"{title}\n\n{UNSTAMPED}\n{rest}"
        parts.append(markdown_to_rst(text, top_level=1))
        script = ROOT / "benchmarks" / f"bench_{path.stem}.py"
        source = f"*Source:* ``benchmarks/results/{path.name}``"
        if script.exists():
            source += f", written by ``benchmarks/{script.name}``"
        parts.append(source + ".\n")
    text = "\n".join(parts)
    target = out_dir / "benchmark_results.txt"
    if not target.exists() or target.read_text(encoding="utf-8") != text:
        target.write_text(text, encoding="utf-8")


REAL_DATA_PENDING = """\
.. admonition:: Real-data benchmark table: not run yet

   **Placeholder.** This place receives the table of
   ``benchmarks/results/real_data.md`` (test AUC, top-of-list precision, fit
   and predict times of TreeRank, RankingForest, random forest, gradient
   boosting and logistic regression on real data sets) as soon as that file
   exists: the documentation build converts it here. Until then, the
   guidance below rests on the synthetic and breast-cancer benchmarks of
   :ref:`benchmarks`.
"""


CONFIRMATION_PENDING = """\
.. admonition:: Confirmation benchmark table: not run yet

   **Placeholder.** This place receives ``benchmarks/results/confirmation.md``
   (the default forest against its peers on the frozen confirmation
   collection) as soon as that file exists.
"""


def _write_benchmark_tables(app):
    """The development and confirmation tables for the "which ranker" page."""
    out_dir = DOCS / "api" / "generated"
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = (("real_data", REAL_DATA_PENDING), ("confirmation", CONFIRMATION_PENDING))
    for name, pending in tables:
        source = ROOT / "benchmarks" / "results" / f"{name}.md"
        if source.exists():
            text = markdown_to_rst(source.read_text(encoding="utf-8"), top_level=1)
            text += f"\n*Source:* ``benchmarks/results/{name}.md``.\n"
        else:
            text = pending
        target = out_dir / f"{name}_table.txt"
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")


# -- top-level aliases -------------------------------------------------------
# ``treerank.TreeRank`` is documented once, as ``treerank.tree.TreeRank``;
# references written with the short top-level path are sent there.
TOP_LEVEL_ALIASES = {
    "treerank.TreeRank": "treerank.tree.TreeRank",
    "treerank.LeafRank": "treerank.tree.LeafRank",
    "treerank.ClassifierLeafRank": "treerank.tree.ClassifierLeafRank",
    "treerank.LinearLeafRank": "treerank.tree.LinearLeafRank",
    "treerank.MixedLeafRank": "treerank.tree.MixedLeafRank",
    "treerank.RankingForest": "treerank.ensemble.RankingForest",
    "treerank.two_sample_test": "treerank.inference.two_sample_test",
}


def _resolve_top_level_alias(app, env, node, contnode):
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    for alias, canonical in TOP_LEVEL_ALIASES.items():
        if target == alias or target.startswith(alias + "."):
            node["reftarget"] = canonical + target[len(alias) :]
            domain = env.get_domain("py")
            return domain.resolve_xref(
                env,
                node["refdoc"],
                app.builder,
                node["reftype"],
                node["reftarget"],
                node,
                contnode,
            )
    return None


def setup(app):
    app.connect("builder-inited", _write_cli_help)
    app.connect("builder-inited", _write_benchmark_results)
    app.connect("builder-inited", _write_benchmark_tables)
    app.connect("missing-reference", _resolve_top_level_alias)
    app.connect("autodoc-skip-member", _skip_member)
