"""The progress report: a redrawn bar on a terminal, one line per fit elsewhere."""

import io

import pytest

from treerank.utils._progress import ProgressBar, is_terminal


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("total", [1, 7, 10, 301])
def test_one_line_when_not_a_terminal(total):
    log = io.StringIO()
    bar = ProgressBar(total, "fitting", stream=log)
    assert log.getvalue() == ""  # nothing before the work is done
    for _ in range(total):
        bar.update()
    bar.close()  # closing after completion writes nothing more
    text = log.getvalue()
    assert "\r" not in text
    lines = text.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("fitting [" + "#" * 30 + f"] {total}/{total} (")
    assert lines[0].endswith(" s)")


def test_close_completes_the_work_in_one_line():
    log = io.StringIO()
    bar = ProgressBar(5, "growing trees", stream=log)
    bar.update(2)
    bar.close()
    bar.close()
    assert log.getvalue().count("\n") == 1
    assert "] 5/5 (" in log.getvalue()


def test_redrawn_in_place_on_a_terminal(monkeypatch):
    from treerank.utils import _progress

    clock = iter(range(0, 10_000))
    monkeypatch.setattr(_progress.time, "perf_counter", lambda: next(clock))
    tty = _Terminal()
    bar = ProgressBar(301, "fitting", stream=tty)
    for _ in range(301):
        bar.update()
    bar.close()
    text = tty.getvalue()
    # one redraw per update when they are slow (1 s apart here)
    assert text.count("\r") == 302 and text.endswith("\n")
    assert text.count("\n") == 1
    assert text.rsplit("\r", 1)[1].startswith("fitting [" + "#" * 30 + "] 301/301")


def test_fast_updates_are_throttled_on_a_terminal():
    tty = _Terminal()
    bar = ProgressBar(100_000, "fitting", stream=tty)
    for _ in range(100_000):
        bar.update()
    text = tty.getvalue()
    # the first draw, at most ten a second, and the final one
    assert 2 <= text.count("\r") < 100
    assert text.endswith("100000/100000 (" + text.rsplit("(", 1)[1])
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
    assert not is_terminal(stream)
    assert not ProgressBar(3, "x", stream=stream, enabled=False).interactive
    assert is_terminal(_Terminal())


def test_forest_verbose_output_in_a_log_is_one_progress_line(capsys):
    from treerank import RankingForest
    from treerank.datasets import make_nested_squares

    X, y = make_nested_squares(200, random_state=0)
    RankingForest(n_estimators=30, max_depth=2, verbose=1, random_state=0).fit(X, y)
    err = capsys.readouterr().err
    assert "\r" not in err
    assert err.count("growing trees") == 1 and len(err.splitlines()) == 1
