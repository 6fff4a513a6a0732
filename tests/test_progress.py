"""The progress report: a redrawn bar on a terminal, a line per 10% elsewhere."""

import io

import pytest

from treerank.utils._progress import ProgressBar


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("total", [1, 7, 10, 301])
def test_no_carriage_returns_when_not_a_terminal(total):
    log = io.StringIO()
    bar = ProgressBar(total, "fitting", stream=log)
    for _ in range(total):
        bar.update()
    bar.close()
    text = log.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    # one line at start, then at most one per tenth of the work
    assert 2 <= len(lines) <= 11
    assert len(lines) == len({line.split("]")[1].split("(")[0] for line in lines})
    assert lines[0].startswith("fitting [....")
    assert f" {total}/{total} (" in lines[-1]
    percent = [10 * int(line.split("] ")[1].split("/")[0]) // total for line in lines]
    assert percent == sorted(set(percent))  # every decile at most once, in order


def test_redrawn_in_place_on_a_terminal():
    tty = _Terminal()
    bar = ProgressBar(301, "fitting", stream=tty)
    for _ in range(301):
        bar.update()
    text = tty.getvalue()
    assert text.count("\r") == 302 and text.endswith("\n")
    assert text.count("\n") == 1


def test_interactive_can_be_forced_and_disabled_is_silent():
    log = io.StringIO()
    bar = ProgressBar(3, "x", stream=log, interactive=True)
    bar.update(3)
    assert log.getvalue().count("\r") == 2
    quiet = io.StringIO()
    bar = ProgressBar(3, "x", stream=quiet, enabled=False)
    bar.update(3)
    bar.close()
    assert quiet.getvalue() == ""


def test_a_closed_stream_is_not_a_terminal():
    stream = io.StringIO()
    stream.close()
    assert not ProgressBar(3, "x", stream=stream, enabled=False).interactive


def test_forest_verbose_output_in_a_log_is_line_based(capsys):
    from treerank import RankingForest
    from treerank.datasets import make_nested_squares

    X, y = make_nested_squares(200, random_state=0)
    RankingForest(n_estimators=30, max_depth=2, verbose=1, random_state=0).fit(X, y)
    err = capsys.readouterr().err
    assert "\r" not in err
    assert 2 <= len(err.splitlines()) <= 30
