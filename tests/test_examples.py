"""Every example script runs headless (Agg backend) and prints its results."""

import pathlib
import runpy

import matplotlib
import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parents[1] / "examples").glob("plot_*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, capsys, monkeypatch):
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    monkeypatch.setattr(plt, "show", lambda *args, **kwargs: None)
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()
    assert plt.get_fignums()  # the example drew something
    plt.close("all")
