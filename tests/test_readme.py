"""The README's Python examples run as written (in a temporary folder)."""

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


@pytest.mark.slow
def test_readme_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    blocks = _python_blocks()
    assert len(blocks) == 2
    namespace = {}
    for block in blocks:
        exec(compile(block, str(README), "exec"), namespace)
    printed = capsys.readouterr().out
    assert "test AUC" in printed and "ndcg@10" in printed
    assert (tmp_path / "forest.trk").exists()
