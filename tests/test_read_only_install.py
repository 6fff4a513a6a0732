"""A read-only install: no writable cache location for numba's compiled kernels.

The package's folder and the home folder are mounted read-only in a private
mount namespace (``unshare -m`` then ``mount --bind -o ro``): root ignores
file modes, so ``chmod`` would prove nothing. The tests are skipped where
that is not possible (not Linux, not root, no ``unshare``).
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import treerank

PACKAGE = Path(treerank.__file__).resolve().parent


def _read_only_available():
    if not sys.platform.startswith("linux") or shutil.which("unshare") is None:
        return False
    if os.geteuid() != 0:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "true"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


needs_read_only_mount = pytest.mark.skipif(
    not _read_only_available(),
    reason="needs a private mount namespace (Linux, root, unshare)",
)


def run_read_only(code, home, *, cwd, timeout=900):
    """Run ``python -c code`` with the package and ``home`` mounted read-only.

    Returns the completed process (stdout and stderr as text).
    """
    script = textwrap.dedent(
        """
        set -e
        mount --bind -o ro "$1" "$1"
        mount --bind -o ro "$2" "$2"
        touch "$1/.treerank-write-probe" 2>/dev/null && exit 97
        cd "$3"
        shift 3
        exec "$@"
        """
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONDONTWRITEBYTECODE")
    }
    env["HOME"] = str(home)
    # the package this process imported (under pytest, the source tree, while a
    # plain interpreter started elsewhere would import the installed copy)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PACKAGE.parent)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])
    )
    env["TREERANK_BACKGROUND_COMPILE"] = "1"
    command = [
        "unshare",
        "-m",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
        str(PACKAGE),
        str(home),
        str(cwd),
        sys.executable,
        "-W",
        "always",
        "-c",
        code,
    ]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    if done.returncode == 97:  # pragma: no cover - the mount did not hold
        pytest.skip("the read-only bind mount is not enforced here")
    return done


@pytest.fixture
def read_only_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return home


@needs_read_only_mount
def test_import_and_load_in_a_read_only_install(tmp_path, read_only_home):
    # the audit: `from treerank import TreeRank` and `import treerank.model_io`
    # raised numba's "cannot cache function ...: no locator available"
    code = textwrap.dedent(
        """
        import json, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from treerank import RankingForest, TreeRank
            import treerank.model_io
            import treerank.aggregation._kernels
            from treerank._compilation._cache import caching_disabled
        print(json.dumps({
            "disabled": caching_disabled(),
            "warnings": [(w.category.__name__, str(w.message)) for w in caught],
        }))
        """
    )
    done = run_read_only(code, read_only_home, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["disabled"] is True
    # one notice, of treerank's own type, saying what to do
    assert [name for name, _ in result["warnings"]] == ["KernelCacheWarning"]
    assert "NUMBA_CACHE_DIR" in result["warnings"][0][1]


@needs_read_only_mount
def test_writable_numba_cache_dir_is_used_without_notice(tmp_path, read_only_home):
    cache = tmp_path / "cache"
    cache.mkdir()
    code = textwrap.dedent(
        f"""
        import os, warnings
        os.environ["NUMBA_CACHE_DIR"] = {str(cache)!r}
        warnings.simplefilter("error")
        import treerank.aggregation._kernels
        from treerank._compilation._cache import caching_disabled
        assert not caching_disabled()
        print("ok")
        """
    )
    done = run_read_only(code, read_only_home, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["ok"]


@pytest.mark.slow
@needs_read_only_mount
def test_fit_save_and_score_in_a_read_only_install(tmp_path, read_only_home):
    # fit, save, load and score from Python, then `treerank score` in a
    # second process: same scores as in a writable install, one notice each
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=300) > 0).astype(int)
    data = tmp_path / "data.csv"
    rows = ["a,b,c,y"] + [
        ",".join(map(repr, [*row.tolist(), int(label)])) for row, label in zip(X, y)
    ]
    data.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out"
    out.mkdir()
    code = textwrap.dedent(
        f"""
        import sys, warnings
        import numpy as np
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from treerank import TreeRank
            from treerank.model_io import load_model, save_model
            X = np.loadtxt({str(data)!r}, delimiter=",", skiprows=1)
            model = TreeRank(random_state=0).fit(X[:, :3], X[:, 3])
            save_model(model, {str(out / "model.trk")!r})
            scores = load_model({str(out / "model.trk")!r}).decision_function(X[:, :3])
        np.save({str(out / "scores.npy")!r}, scores)
        print(sorted({{w.category.__name__ for w in caught}}), len(caught))
        from treerank.cli import main
        sys.exit(main(["fit", {str(data)!r}, "--target", "y", "--out",
                       {str(out / "cli.trk")!r}]))
        """
    )
    done = run_read_only(code, read_only_home, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "['KernelCacheWarning'] 1" in done.stdout
    code = (
        "import sys; from treerank.cli import main; sys.exit(main(['score', "
        f"{str(out / 'cli.trk')!r}, {str(data)!r}, '--scale', 'decision', "
        f"'--out', {str(out / 'scores.csv')!r}]))"
    )
    done = run_read_only(code, read_only_home, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("KernelCacheWarning") == 1
    import pandas as pd

    from treerank import TreeRank
    from treerank.model_io import load_model

    expected = TreeRank(random_state=0).fit(X, y).decision_function(X)
    np.testing.assert_array_equal(np.load(out / "scores.npy"), expected)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    expected = load_model(out / "cli.trk").decision_function(frame)
    written = np.loadtxt(out / "scores.csv", delimiter=",", skiprows=1)
    np.testing.assert_array_equal(written, expected)
