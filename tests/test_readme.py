"""The README's Python examples run as written, each block on its own."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).parents[1] / "README.md"


def _python_blocks():
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_readme_opens_with_the_two_commands():
    lines = README.read_text().splitlines()
    start = lines.index("```") + 1
    assert lines[start].startswith("pip install . && treerank demo")
    assert lines[start + 1].startswith('pip install ".[test]" && pytest')


def test_readme_installs_from_source():
    text = README.read_text()
    assert "no release on PyPI yet" in text
    assert "pip install scikit-treerank" not in text


def test_readme_has_three_python_blocks():
    assert len(_python_blocks()) == 3


@pytest.mark.slow
@pytest.mark.parametrize(
    ("index", "expected", "written"),
    [
        (0, ["test AUC", "5-fold AUC"], None),
        (1, ["forest test AUC", "ndcg@10"], "forest.trk"),
        (2, ["5-fold AUC"], "penguins.trk"),
    ],
)
def test_readme_block_runs_on_its_own(
    tmp_path, monkeypatch, capsys, index, expected, written
):
    """Every block in a fresh namespace and folder: none relies on another."""
    monkeypatch.chdir(tmp_path)
    block = _python_blocks()[index]
    exec(compile(block, f"{README}[block {index + 1}]", "exec"), {})
    printed = capsys.readouterr().out
    for text in expected:
        assert text in printed
    if written is not None:
        assert (tmp_path / written).exists()
