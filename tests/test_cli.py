"""The command line (``treerank ...``) run end to end in a temporary folder."""

import subprocess
import sys

import pytest

from treerank.cli import main


def test_demo_writes_report_and_plots(tmp_path, capsys):
    out = tmp_path / "demo"
    assert main(["demo", "--output-dir", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| nested squares | TreeRank |" in printed
    assert "| breast cancer | TreeRank |" in printed
    for name in ["roc_nested_squares.png", "roc_breast_cancer.png", "summary.md"]:
        path = out / name
        assert path.exists() and path.stat().st_size > 0
    # the nested-squares row reports a test AUC close to AUC*
    row = next(
        line for line in printed.splitlines() if line.startswith("| nested squares")
    )
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert abs(float(cells[4]) - float(cells[5])) < 0.03
    png = (out / "roc_nested_squares.png").read_bytes()
    assert png.startswith(b"\x89PNG")
    assert not list(out.glob(".tmp-*"))  # atomic writes leave no temporary files


def test_python_dash_m_runs_the_cli():
    result = subprocess.run(
        [sys.executable, "-m", "treerank", "--version"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0
    assert result.stdout.startswith("treerank ")


def test_unknown_command_is_an_error(capsys):
    with pytest.raises(SystemExit) as info:
        main(["nope"])
    assert info.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
