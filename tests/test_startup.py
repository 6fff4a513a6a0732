"""Start-up: the command line's help and light imports load no heavy library.

Each check runs in a fresh interpreter (``sys.modules`` of this process has
everything imported already) and asserts which modules were imported, not how
long it took.
"""

import subprocess
import sys
import textwrap

import pytest

HEAVY = ("sklearn", "scipy", "numba", "pandas", "matplotlib", "networkx", "joblib")
NUMERICAL = (*HEAVY, "numpy")

COMMANDS = [
    "fit",
    "score",
    "explain",
    "export",
    "stability",
    "compare",
    "demo",
    "precompile",
]


def _imported_after(code, modules=HEAVY):
    """Run ``code`` in a fresh interpreter; which of ``modules`` it imported."""
    script = textwrap.dedent(code) + textwrap.dedent(
        f"""
        import sys
        print(sorted(m for m in {modules!r} if m in sys.modules))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    return eval(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_imports_no_heavy_library(command):
    argv = ["--help"] if command is None else [command, "--help"]
    loaded = _imported_after(
        f"""
        import contextlib, io
        from treerank.cli import main
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                main({argv!r})
            except SystemExit as exit:
                assert exit.code == 0, exit.code
        assert "usage: treerank" in out.getvalue()
        """
    )
    assert loaded == []


def test_version_is_light():
    loaded = _imported_after(
        """
        import contextlib, io
        from treerank.cli import main
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                main(["--version"])
            except SystemExit as exit:
                assert exit.code == 0
        """
    )
    assert loaded == []


def test_python_m_treerank_help_runs():
    result = subprocess.run(
        [sys.executable, "-m", "treerank", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    for command in COMMANDS:
        assert command in result.stdout


@pytest.mark.parametrize(
    "code",
    [
        "import treerank",
        "import treerank.utils._io, treerank.utils._progress",
        "import treerank.cli._text, treerank.cli",
        "import treerank.utils, treerank.metrics",
        "import treerank.inspection; dir(treerank.inspection)",
        "import treerank; dir(treerank); treerank.__all__",
    ],
)
def test_light_imports(code):
    assert _imported_after(code) == []


def test_lazy_names_resolve_like_eager_imports():
    import treerank
    import treerank.inspection
    import treerank.metrics
    import treerank.utils
    from treerank.inspection._shapley import shapley_values
    from treerank.metrics._roc import roc_auc_score
    from treerank.utils._categorical import CategoryEncoder

    assert treerank.metrics.roc_auc_score is roc_auc_score
    assert treerank.utils.CategoryEncoder is CategoryEncoder
    assert treerank.inspection.shapley_values is shapley_values
    assert treerank.inspection is treerank.__getattr__("inspection")
    for package in (treerank, treerank.metrics, treerank.utils, treerank.inspection):
        assert set(package.__all__) <= set(dir(package))
        for name in package.__all__:
            assert getattr(package, name) is not None
    from treerank.utils import validation

    assert treerank.utils.validation is validation
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        treerank.metrics.nope  # noqa: B018
    with pytest.raises(ImportError):
        exec("from treerank.utils import nope", {})


def test_the_estimators_import_in_a_fresh_process_without_cycles():
    loaded = _imported_after(
        """
        from treerank import RankingForest, TreeRank
        from treerank.utils import CategoryEncoder
        from treerank.metrics import ndcg_score
        assert RankingForest.__module__ == "treerank.ensemble._forest"
        """
    )
    assert "sklearn" in loaded and "matplotlib" not in loaded


def test_scoring_a_saved_model_imports_only_what_it_needs(tmp_path):
    import numpy as np

    from treerank import TreeRank
    from treerank.model_io import save_model

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    model = TreeRank(max_depth=2, random_state=0).fit(X, y)
    save_model(model, tmp_path / "m.trk", metadata={"features": ["a", "b"]})
    np.savetxt(tmp_path / "x.csv", X, delimiter=",", header="a,b", comments="")
    script = f"""
        import sys
        from treerank.cli import main
        assert main(["score", {str(tmp_path / "m.trk")!r}, {str(tmp_path / "x.csv")!r},
                     "--out", {str(tmp_path / "s.csv")!r}]) == 0
        unneeded = ["matplotlib", "networkx", "treerank.bridge", "treerank.surrogates",
                    "treerank.datasets", "treerank.metrics._list_positional",
                    "treerank.export", "treerank.stability"]
        print([m for m in unneeded if m in sys.modules])
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(script)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip().splitlines()[-1] == "[]"
    assert (tmp_path / "s.csv").read_text().count("\n") == 201


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (["fit", "{data}", "--target", "y", "--out", "{exists}"], 1, "already exists"),
        (["fit", "{data}", "--target", "y", "--out", "-"], 2, "standard output"),
        (
            [
                "fit",
                "{data}",
                "--target",
                "y",
                "--model",
                "tree",
                "--multipartite",
                "stacked",
                "--out",
                "{new}",
            ],
            2,
            "--multipartite applies",
        ),
        (["fit", "{missing}", "--target", "y", "--out", "{new}"], 1, "no such file"),
        (["score", "{exists}", "{data}", "--out", "{exists}"], 1, "already exists"),
        (["score", "{missing}", "{data}"], 1, "no such file (model file)"),
        (["explain", "{exists}", "{data}", "--out", "{exists}"], 1, "already exists"),
        (["explain", "{exists}", "-"], 2, "needs --background"),
        (["demo", "--output-dir", "{folder}"], 1, "already exists and is not empty"),
        (["demo", "--output-dir", "{exists}"], 1, "is not a folder"),
        (
            [
                "explain",
                "{exists}",
                "{data}",
                "--reasons-for",
                "positive",
                "--direction",
                "up",
            ],
            2,
            "give one",
        ),
    ],
)
def test_refusals_come_before_the_numerical_stack(tmp_path, argv, status, message):
    """Issue 39: fit, score and explain refuse before importing numpy and co."""
    data = tmp_path / "d.csv"
    data.write_text("a,y\n1,0\n2,1\n")
    exists = tmp_path / "exists.trk"
    exists.write_text("x")
    names = {
        "data": data,
        "exists": exists,
        "new": tmp_path / "new.trk",
        "missing": tmp_path / "missing.csv",
        "folder": tmp_path,
    }
    argv = [a.format(**names) for a in argv]
    loaded = _imported_after(
        f"""
        import contextlib, io
        from treerank.cli import main
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            status = main({argv!r})
        assert status == {status}, (status, err.getvalue())
        assert {message!r} in err.getvalue(), err.getvalue()
        """,
        modules=NUMERICAL,
    )
    assert loaded == []
