"""The modules of treerank import in one direction: no cycle, lazy imports included.

The graph is read from the source, not from ``sys.modules``: every ``import``
and ``from ... import`` statement of every module, wherever it stands (at the
top, inside a function, under ``if TYPE_CHECKING``), is an edge, and so are
the names a package loads on first access (the ``_LOCATIONS`` tables of
``treerank._lazy`` and the tables of ``treerank/__init__.py``), and
``importlib.import_module`` of a literal name. Importing a
module of another package first runs that package's ``__init__``: an edge to
it too. A cycle is a strongly connected component of more than one module
(or a module importing itself).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import ast
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1] / "treerank"
MAX_MODULE_LINES = 1200


def module_files(root=PACKAGE_ROOT):
    """Map every module name of the package to its file."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    return modules


def _is_package(name, modules):
    return modules.get(name) is not None and modules[name].name == "__init__.py"


def _resolve_relative(node, current, modules):
    """The absolute module name of a ``from .x import y`` statement."""
    base = current.split(".")
    if not _is_package(current, modules):
        base = base[:-1]
    if node.level > 1:
        base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def lazy_locations(tree, modules):
    """Public name -> module of a package that imports its names on first access.

    Every dict literal of the ``__init__`` whose values are module names of
    the package (``_LOCATIONS``, ``_ESTIMATORS``, ...) is such a table.
    """
    locations = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values):
            if (
                isinstance(key, ast.Constant)
                and isinstance(value, ast.Constant)
                and isinstance(key.value, str)
                and value.value in modules
            ):
                locations[key.value] = value.value
    return locations


def _is_import_call(node):
    """A call ``import_module("name")`` or ``__import__("name")`` (a literal)."""
    if not (isinstance(node, ast.Call) and node.args):
        return False
    function = node.func
    name = function.attr if isinstance(function, ast.Attribute) else None
    if isinstance(function, ast.Name):
        name = function.id
    return (
        name in ("import_module", "__import__")
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def import_graph(root=PACKAGE_ROOT):
    """Module -> set of the package's modules it imports (anywhere in its code)."""
    modules = module_files(root)
    trees = {
        name: ast.parse(path.read_text(), str(path)) for name, path in modules.items()
    }
    lazy = {
        name: lazy_locations(tree, modules)
        for name, tree in trees.items()
        if _is_package(name, modules)
    }
    top = root.name
    graph = {}
    for name, tree in trees.items():
        targets = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif _is_import_call(node):  # importlib.import_module("a.b")
                targets.add(node.args[0].value)
            elif isinstance(node, ast.ImportFrom):
                source = (
                    _resolve_relative(node, name, modules)
                    if node.level
                    else node.module
                )
                if source is None or source.split(".")[0] != top:
                    continue
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in modules:
                        # the package runs first: an edge below unless it holds name
                        targets.add(submodule)
                    elif alias.name in lazy.get(source, {}):
                        targets.add(lazy[source][alias.name])
                    else:  # a name defined (or imported) by the module itself
                        targets.add(source)
        edges = set()
        for target in targets:
            if target.split(".")[0] != top or target not in modules:
                continue
            edges.add(target)
            # importing a.b.c runs a/__init__ and a/b/__init__ first; the
            # packages that contain the importing module are already running
            parts = target.split(".")
            for stop in range(2, len(parts)):
                package = ".".join(parts[:stop])
                if not (name == package or name.startswith(package + ".")):
                    edges.add(package)
        graph[name] = edges
    return graph


def import_cycles(graph):
    """The strongly connected components of more than one module, and self-imports."""
    index, lowlink, on_stack, stack, components = {}, {}, set(), [], []
    counter = [0]

    def visit(start):
        # iterative Tarjan: the package's graph is deep enough for recursion limits
        work = [(start, iter(sorted(graph[start])))]
        index[start] = lowlink[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = lowlink[successor] = counter[0]
                    counter[0] += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    lowlink[node] = min(lowlink[node], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    lowlink[parent] = min(lowlink[parent], lowlink[node])
                if lowlink[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in graph[node]:
                        components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components)


def _cycle_path(graph, component):
    """The shortest cycle through the first module of ``component``, for the message."""
    members, start = set(component), component[0]
    parents, queue = {}, [start]
    while queue:
        node = queue.pop(0)
        for successor in sorted(graph[node] & members):
            if successor == start:
                path = [node]
                while path[-1] != start:
                    path.append(parents[path[-1]])
                return [*reversed(path), start]
            if successor not in parents:
                parents[successor] = node
                queue.append(successor)
    return component


def test_the_walker_sees_lazy_and_relative_imports(tmp_path):
    # a package whose cycle only shows through an import inside a function,
    # one through a relative import, and one through a lazy name table
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text(
        "_LOCATIONS = {'Thing': 'pkg.sub._thing'}\n"
    )
    (package / "sub" / "_thing.py").write_text("from .. import low\n")
    (package / "low.py").write_text("def f():\n    from pkg.high import g\n")
    (package / "high.py").write_text(
        "import importlib\n\ndef g():\n    importlib.import_module('pkg.mid')\n"
    )
    (package / "mid.py").write_text("from pkg.sub import Thing\n")
    graph = import_graph(package)
    assert graph["pkg.low"] == {"pkg.high"}
    assert graph["pkg.mid"] == {"pkg.sub", "pkg.sub._thing"}
    assert graph["pkg.sub._thing"] == {"pkg.low"}
    cycles = import_cycles(graph)
    assert cycles == [["pkg.high", "pkg.low", "pkg.mid", "pkg.sub._thing"]]
    # breaking the lazy import breaks the cycle
    (package / "low.py").write_text("def f():\n    pass\n")
    assert import_cycles(import_graph(package)) == []


def test_the_walker_counts_running_another_package_init(tmp_path):
    # importing pkg.b._x from pkg.a runs pkg/b/__init__, which imports pkg.a
    package = tmp_path / "pkg"
    for sub in ("a", "b"):
        (package / sub).mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a" / "__init__.py").write_text("")
    (package / "a" / "_y.py").write_text("from pkg.b._x import z\n")
    (package / "b" / "__init__.py").write_text("from pkg.b._w import w\n")
    (package / "b" / "_x.py").write_text("z = 1\n")
    (package / "b" / "_w.py").write_text("from pkg.a._y import y\n")
    graph = import_graph(package)
    # a package's own __init__ is not an edge of its submodules
    assert graph["pkg.b._w"] == {"pkg.a", "pkg.a._y"}
    assert import_cycles(graph) == [["pkg.a._y", "pkg.b", "pkg.b._w"]]


@pytest.fixture(scope="module")
def package_graph():
    """The package's import graph, read once for the tests of this file."""
    return import_graph()


def test_no_import_cycle_at_all(package_graph):
    graph = package_graph
    assert len(graph) > 100  # the walker found the package
    cycles = import_cycles(graph)
    message = "\n".join(" -> ".join(_cycle_path(graph, c)) for c in cycles)
    assert not cycles, f"import cycles between modules of treerank:\n{message}"


@pytest.mark.parametrize("name", ["treerank.base", "treerank.calibration"])
def test_the_base_modules_depend_on_nothing_above_them(name, package_graph):
    # base.py holds the mixin of every estimator, calibration.py the
    # calibration of their scores: they may only use the package's
    # foundations (metrics, utils, exceptions)
    graph = package_graph
    allowed = ("treerank.metrics", "treerank.utils", "treerank.exceptions")
    above = sorted(
        module
        for module in graph[name]
        if not module.startswith(allowed) and module != "treerank._lazy"
    )
    assert above == []


def reachable(graph, start):
    """The modules that importing ``start`` may import, directly or not."""
    seen, stack = set(), [start]
    while stack:
        for successor in graph[stack.pop()]:
            if successor not in seen:
                seen.add(successor)
                stack.append(successor)
    return seen


def _outside(modules, allowed):
    return sorted(
        module
        for module in modules
        if not any(module == a or module.startswith(a + ".") for a in allowed)
    )


# what the rank aggregation and the compilation management may build on: the
# compiled engine, the management of its compilation, the metrics, utilities
# and exceptions (the foundations); never a tree, a forest, the rankers' base
# or calibration, nor anything built on the estimators
FOUNDATIONS = (
    "treerank._config",
    "treerank._lazy",
    "treerank._compilation",
    "treerank.aggregation",
    "treerank._engine",
    "treerank.exceptions",
    "treerank.metrics",
    "treerank.utils",
)


@pytest.mark.parametrize(
    "name", sorted(m for m in module_files() if m.startswith("treerank.aggregation"))
)
def test_the_rank_aggregation_knows_nothing_of_trees(name, package_graph):
    # aggregation/ is a library of rank aggregation (Kendall distance, Kemeny
    # median, insertion, subpartition): the forest's aggregate of its trees
    # (ensemble.TreeAggregate) builds on it, never the other way
    graph = package_graph
    assert _outside(reachable(graph, name), FOUNDATIONS) == []


def test_the_compilation_package_sits_below_the_estimators(package_graph):
    graph = package_graph
    modules = sorted(m for m in graph if m.startswith("treerank._compilation"))
    assert "treerank._compilation._background" in modules
    # the package's init imports nothing: a kernel module imports its cache
    # management without running anything else
    assert graph["treerank._compilation"] == set()
    # the cache and the helper's lock know no kernel: the kernels import them
    assert (
        _outside(graph["treerank._compilation._cache"], ["treerank.exceptions"]) == []
    )
    assert graph["treerank._compilation._markers"] == set()
    assert graph["treerank._compilation._helper"] == {"treerank._compilation._markers"}
    # the settings module imports nothing of treerank
    assert graph["treerank._config"] == set()
    # what the estimators import (the start of the helper) reaches no estimator
    script = "treerank._compilation._warmup"
    for name in modules:
        if name != script:
            assert _outside(reachable(graph, name), FOUNDATIONS) == [], name
    # the warm-up script drives the fit's own code (TreeAggregate, the
    # routing of a tree structure) in the helper process; it is run by its
    # module name, never imported by a module of the package; only
    # treerank.precompile (above the estimators) runs its steps in-process
    assert [m for m in graph if script in graph[m]] == ["treerank._precompile"]
    assert "treerank._precompile" not in reachable(graph, "treerank.ensemble")


def test_the_markers_key_hashes_every_module_that_declares_kernels():
    # a changed kernel must invalidate the markers: every module that declares
    # kernels (with the jit decorators) lies in a hashed subpackage
    import re

    from treerank._compilation._markers import KERNEL_PACKAGES

    declares = re.compile(r"^\s*@(jit|aggregation_jit|inner_jit)\b|cached_njit\(", re.M)
    declaring = [
        m
        for m, path in module_files().items()
        if declares.search(path.read_text(encoding="utf-8"))
    ]
    assert "treerank._engine._routing" in declaring
    for name in declaring:
        assert name.split(".")[1] in KERNEL_PACKAGES, name


@pytest.mark.parametrize("name", sorted(module_files()))
def test_no_module_is_too_long(name):
    path = module_files()[name]
    n_lines = len(path.read_text().splitlines())
    assert n_lines <= MAX_MODULE_LINES, f"{name} has {n_lines} lines"
