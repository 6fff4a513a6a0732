"""Consistency of the documentation with the package, without building it.

The Sphinx build itself (``python -m sphinx -W --keep-going -b html docs
docs/_build/html``) is too slow for the default run and is done by ``.ci/run``.
These tests catch the usual ways the docs drift: a public name missing from the
API reference, a ``:ref:`` label or gallery page that does not exist, a
benchmark table that would not parse, a user-guide code example that no longer
runs.
"""

import doctest
import importlib
import io
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API = DOCS / "api"
EXAMPLES = ROOT / "examples"

# public module -> its API page
API_PAGES = {
    "treerank.aggregation": "aggregation.rst",
    "treerank.base": "base.rst",
    "treerank.calibration": "calibration.rst",
    "treerank.bridge": "bridge.rst",
    "treerank.datasets": "datasets.rst",
    "treerank.ensemble": "ensemble.rst",
    "treerank.exceptions": "exceptions.rst",
    "treerank.export": "export.rst",
    "treerank.inference": "inference.rst",
    "treerank.inspection": "inspection.rst",
    "treerank.metrics": "metrics.rst",
    "treerank.model_io": "model_io.rst",
    "treerank.plotting": "plotting.rst",
    "treerank.stability": "stability.rst",
    "treerank.surrogates": "surrogates.rst",
    "treerank.tree": "tree.rst",
    "treerank.utils": "utils.rst",
}
TOP_LEVEL_ESTIMATORS = {
    "TreeRank": "treerank.tree",
    "LeafRank": "treerank.tree",
    "ClassifierLeafRank": "treerank.tree",
    "LinearLeafRank": "treerank.tree",
    "MixedLeafRank": "treerank.tree",
    "RankingForest": "treerank.ensemble",
    "two_sample_test": "treerank.inference",
}
# defined in private modules, documented at the top level
TOP_LEVEL_FUNCTIONS = ("config_context", "get_config", "precompile", "set_config")


def _autosummary_entries(text):
    """Fully qualified names listed by the autosummary directives of a page."""
    names = set()
    module = None
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        current = re.match(r"\.\. currentmodule:: (\S+)", line.strip())
        if current:
            module = current.group(1)
        if line.strip().startswith(".. autosummary::"):
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i][:1] == " "):
                entry = lines[i].strip()
                if entry and not entry.startswith(":"):
                    entry = entry.lstrip("~")
                    names.add(f"{module}.{entry}" if module else entry)
                i += 1
            continue
        i += 1
    return names


def _importable(module):
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name == module:
            return False
        raise
    return True


@pytest.mark.parametrize("module", sorted(API_PAGES))
def test_every_public_name_is_in_the_api_reference(module):
    if not _importable(module):
        pytest.skip(f"{module} does not exist yet")
    mod = importlib.import_module(module)
    page = API / API_PAGES[module]
    text = page.read_text(encoding="utf-8")
    assert re.search(rf"^\.\. automodule:: {re.escape(module)}$", text, re.M), (
        f"{page.name} must document the module {module}"
    )
    documented = _autosummary_entries(text)
    missing = sorted(set(mod.__all__) - {n.rsplit(".", 1)[-1] for n in documented})
    assert not missing, f"{page.name} lacks {missing} (from {module}.__all__)"
    not_public = sorted(
        n for n in documented if n.rsplit(".", 1)[-1] not in mod.__all__
    )
    assert not not_public, f"{page.name} lists {not_public}, not in {module}.__all__"


def test_the_private_engine_is_documented_for_contributors_only():
    # treerank._engine is not public: neither a top-level subpackage nor an
    # API page, but its interface is documented, name by name, for
    # contributors
    import treerank
    from treerank import _engine

    assert "_engine" not in treerank.__all__ and "engine" not in treerank.__all__
    assert not (API / "engine.rst").exists()
    page = API.parent / "developers" / "engine_interface.rst"
    documented = {n.rsplit(".", 1)[-1] for n in _autosummary_entries(page.read_text())}
    assert set(_engine.__all__) == documented


def test_top_level_page_lists_the_estimators_and_subpackages():
    import treerank

    text = (API / "treerank.rst").read_text(encoding="utf-8")
    documented = _autosummary_entries(text)
    for name in treerank.__all__:
        if name == "__version__":
            assert "__version__" in text
        elif name in TOP_LEVEL_ESTIMATORS:
            assert f"{TOP_LEVEL_ESTIMATORS[name]}.{name}" in documented, name
        elif name in TOP_LEVEL_FUNCTIONS:
            assert f"treerank.{name}" in documented, name
        else:
            assert f"treerank.{name}" in API_PAGES, f"no API page for treerank.{name}"
            assert f":mod:`treerank.{name}`" in text, name
    index = (API / "index.rst").read_text(encoding="utf-8")
    for page in API_PAGES.values():
        assert re.search(rf"^   {page[:-4]}$", index, re.M), f"{page} not in api/index"


def _labels():
    labels = set()
    for path in DOCS.rglob("*.rst"):
        if {"_build", "generated", "auto_examples"} & set(path.parts):
            continue
        labels |= set(
            re.findall(r"^\.\. _([\w-]+):\s*$", path.read_text("utf-8"), re.M)
        )
    readme = (EXAMPLES / "README.txt").read_text(encoding="utf-8")
    labels |= set(re.findall(r"^\.\. _([\w-]+):\s*$", readme, re.M))
    return labels


def _gallery_pages():
    return {
        f"sphx_glr_auto_examples_{path.stem}.py" for path in EXAMPLES.glob("plot_*.py")
    } | {"sphx_glr_auto_examples"}


def _ref_targets(text):
    targets = set()
    for match in re.finditer(r":ref:`([^`]+)`", text):
        target = match.group(1)
        inner = re.search(r"<([^>]+)>$", target)
        targets.add((inner.group(1) if inner else target).strip())
    return targets


def test_every_ref_target_exists():
    labels = _labels() | _gallery_pages()
    sources = list((ROOT / "treerank").rglob("*.py"))
    sources += [
        p
        for p in DOCS.rglob("*.rst")
        if not {"_build", "generated", "auto_examples"} & set(p.parts)
    ]
    sources += list(EXAMPLES.glob("*.py"))
    missing = {}
    for path in sources:
        for target in _ref_targets(path.read_text(encoding="utf-8")):
            if target.lower() not in {label.lower() for label in labels}:
                missing.setdefault(target, []).append(str(path.relative_to(ROOT)))
    assert not missing, f"undefined :ref: targets: {missing}"


def test_user_guide_pages_are_in_the_toctree():
    index = (DOCS / "user_guide" / "index.rst").read_text(encoding="utf-8")
    for page in (DOCS / "user_guide").glob("*.rst"):
        if page.name != "index.rst":
            assert re.search(rf"^   {page.stem}$", index, re.M), page.name


@pytest.mark.parametrize(
    "path", sorted(EXAMPLES.glob("plot_*.py")), ids=lambda p: p.name
)
def test_example_follows_the_gallery_conventions(path):
    text = path.read_text(encoding="utf-8")
    docstring = re.match(r'"""\n(=+)\n(.+)\n(=+)\n\n(.+?)"""', text, re.S)
    assert docstring, "an example opens with an RST title docstring"
    over, title, under, body = docstring.groups()
    assert len(over) == len(under) >= len(title.strip()), "title adornment length"
    assert body.strip(), "the docstring introduces the example"
    assert "# Authors: The treerank developers" in text
    assert "# SPDX-License-Identifier: BSD-3-Clause" in text
    assert text.count("# %%") >= 2, "code is split into `# %%` cells"
    for call in re.findall(r"\b(?:sample|make_\w+)\([^)]*\)", text):
        assert "random_state" in call, f"unseeded data: {call}"


def test_benchmark_tables_convert_to_valid_rest():
    docutils_core = pytest.importorskip("docutils.core")
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from mdtables import markdown_to_rst
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    results = sorted((ROOT / "benchmarks" / "results").glob("*.md"))
    assert results
    for path in results:
        rst = markdown_to_rst(path.read_text(encoding="utf-8"), top_level=1)
        stream = io.StringIO()
        tree = docutils_core.publish_doctree(
            "Page\n====\n\n" + rst,
            settings_overrides={
                "warning_stream": stream,
                "report_level": 2,
                "halt_level": 5,
            },
        )
        assert not stream.getvalue(), f"{path.name}: {stream.getvalue()}"
        tables = sum(
            1
            for line in path.read_text("utf-8").splitlines()
            if re.match(r"^\|?\s*:?-{3,}", line)
        )
        found = list(tree.findall(lambda n: n.tagname == "table"))
        assert len(found) == tables, path.name


def test_markdown_conversion_escapes_rest_markup():
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from mdtables import markdown_to_rst
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    text = (
        "# Title\n\nn* rows, `code_` and *emphasis*, tree_ a|b\n\n"
        "| a | b |\n|---|---:|\n| - | `x`y |\n"
    )
    rst = markdown_to_rst(text)
    assert "n\\* rows" in rst
    assert "``code_``" in rst and "*emphasis*" in rst
    assert "tree\\_ a\\|b" in rst
    assert "   * - \\-" in rst  # a lone dash is not a bullet list
    assert "``x``\\ y" in rst


GUIDE_PAGES = [DOCS / "index.rst", *sorted((DOCS / "user_guide").glob("*.rst"))]


@pytest.mark.parametrize(
    "path", GUIDE_PAGES, ids=lambda p: str(p.relative_to(DOCS)).replace("\\", "/")
)
def test_user_guide_code_runs(path):
    """The ``>>>`` examples of the user guide give the outputs they show."""
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    result = doctest.testfile(
        str(path), module_relative=False, optionflags=flags, verbose=False
    )
    assert result.failed == 0, f"{result.failed} failing example(s) in {path.name}"
