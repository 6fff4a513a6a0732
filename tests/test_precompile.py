"""treerank.precompile and `treerank precompile`: the kernels compiled ahead."""

import os
import subprocess
import sys
import textwrap

import pytest

import treerank
from treerank.cli import main


def _cli(*args, env=None, timeout=900):
    return subprocess.run(
        [sys.executable, "-m", "treerank", "precompile", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_the_command_is_listed_with_its_options(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["precompile", "--help"])
    assert exit.value.code == 0
    text = capsys.readouterr().out
    assert "usage: " in text and "--parts" in text and "NUMBA_CACHE_DIR" in text


def test_an_unknown_part_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exit:
        main(["precompile", "--parts", "routing", "everything"])
    assert exit.value.code == 2
    assert "invalid choice: 'everything'" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("parts", "error", "match"),
    [
        (["routing", "everything"], ValueError, "parts must be None or a non-empty"),
        ([], ValueError, "parts must be None or a non-empty"),
        (3, TypeError, "parts must be None or a list"),
    ],
)
def test_invalid_parts_name_the_parameter(parts, error, match):
    with pytest.raises(error, match=match):
        treerank.precompile(parts=parts)


def test_a_second_run_compiles_nothing():
    # in this environment's cache (the first run compiles what is missing)
    first = _cli("--parts", "routing")
    assert first.returncode == 0, first.stderr
    second = _cli("--parts", "routing", "--verbose")
    assert second.returncode == 0, second.stderr
    lines = second.stdout.splitlines()
    assert lines[1].startswith("routing") and "0 kernels compiled" in lines[1]
    assert "cached: treerank._engine._routing." in second.stdout
    assert lines[-1].startswith("every kernel was already cached")


def test_in_this_process_a_part_compiled_already_is_not_compiled_again():
    treerank.precompile(parts=["routing"])
    report = treerank.precompile(parts="routing")
    assert list(report) == ["routing"]
    assert report["routing"]["compiled"] == []
    assert report["routing"]["seconds"] < 60


def test_nothing_to_compile_without_the_jit():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    done = _cli(env=env, timeout=300)
    assert done.returncode == 1
    assert "treerank precompile: error: numba's JIT is disabled" in done.stderr


_FIRST_FIT = textwrap.dedent(
    """
    import json, pathlib, sys
    from numba.core import event
    from sklearn.datasets import make_classification
    import treerank

    with event.install_recorder("numba:compile") as recorder:
        X, y = make_classification(2000, 20, n_informative=8, random_state=0)
        forest = treerank.RankingForest(random_state=0).fit(X, y)
        forest.decision_function(X + 0.01)
        treerank.TreeRank(random_state=0).fit(X, y).decision_function(X)
    names = sorted({
        r.data["dispatcher"].py_func.__module__ + "."
        + r.data["dispatcher"].py_func.__qualname__
        for _, r in recorder.buffer if r.is_start
    })
    locks = list(pathlib.Path(sys.argv[1]).rglob("treerank-warmup.lock"))
    print(json.dumps({"compiled": names, "locks": len(locks)}))
    """
)


@pytest.mark.slow
def test_precompile_in_an_empty_cache_makes_the_first_fit_compile_nothing(tmp_path):
    import json

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    env.pop("TREERANK_BACKGROUND_COMPILE", None)
    first = _cli(env=env)
    assert first.returncode == 0, first.stderr
    assert f"NUMBA_CACHE_DIR={tmp_path}" in first.stdout
    assert first.stdout.splitlines()[-1].startswith("compiled ")
    # a first fit and scoring of the default forest and tree: every kernel is
    # loaded, and no second process is started (the kernels are marked)
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_FIT, str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    result = json.loads(done.stdout.splitlines()[-1])
    assert [n for n in result["compiled"] if n.startswith("treerank.")] == []
    assert result["locks"] == 0
    # idempotent
    second = _cli(env=env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[-1].startswith("every kernel was already")
