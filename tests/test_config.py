"""treerank's settings: set_config, get_config and config_context."""

import subprocess
import sys
import textwrap
import threading

import pytest

import treerank


@pytest.fixture(autouse=True)
def _restore():
    before = treerank.get_config()
    yield
    treerank.set_config(**before)


def test_the_functions_are_public():
    for name in ("set_config", "get_config", "config_context", "precompile"):
        assert name in treerank.__all__
        assert name in dir(treerank)
        assert callable(getattr(treerank, name))


def test_get_config_returns_a_copy():
    config = treerank.get_config()
    assert set(config) == {"background_compilation"}
    config["background_compilation"] = "changed"
    assert treerank.get_config()["background_compilation"] in (True, False)


def test_set_config_holds_for_every_thread():
    treerank.set_config(background_compilation=False)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(treerank.get_config()))
    thread.start()
    thread.join()
    assert seen == [{"background_compilation": False}]
    treerank.set_config()  # None: unchanged
    assert treerank.get_config() == {"background_compilation": False}
    treerank.set_config(background_compilation=True)
    assert treerank.get_config() == {"background_compilation": True}


def test_config_context_holds_in_its_thread_for_its_block():
    treerank.set_config(background_compilation=True)
    inside, leave, seen = threading.Event(), threading.Event(), []

    def other():
        with treerank.config_context(background_compilation=False):
            seen.append(treerank.get_config()["background_compilation"])
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(10)
    # the other thread's block does not change this thread's setting
    assert treerank.get_config()["background_compilation"] is True
    leave.set()
    thread.join()
    assert seen == [False]


def _nested_blocks_that_raise():
    with treerank.config_context(background_compilation=False):
        with treerank.config_context():  # keeps the outer block's value
            assert treerank.get_config()["background_compilation"] is False
        with treerank.config_context(background_compilation=True):
            assert treerank.get_config()["background_compilation"] is True
            raise RuntimeError("inner")


def test_config_context_nests_and_restores_on_errors():
    treerank.set_config(background_compilation=True)
    with pytest.raises(RuntimeError, match="inner"):
        _nested_blocks_that_raise()
    assert treerank.get_config()["background_compilation"] is True


def test_set_config_inside_a_block_applies_after_it():
    with treerank.config_context(background_compilation=True):
        treerank.set_config(background_compilation=False)
        assert treerank.get_config()["background_compilation"] is True
    assert treerank.get_config()["background_compilation"] is False


@pytest.mark.parametrize("value", ["yes", 1, 0, "False", [True]])
def test_invalid_values_name_the_parameter(value):
    with pytest.raises(TypeError, match="background_compilation must be True, False"):
        treerank.set_config(background_compilation=value)
    with pytest.raises(TypeError, match="background_compilation"):
        with treerank.config_context(background_compilation=value):
            pass  # pragma: no cover


def test_numpy_bools_are_accepted():
    import numpy as np

    treerank.set_config(background_compilation=np.bool_(False))
    assert treerank.get_config()["background_compilation"] is False


def test_unknown_settings_are_refused():
    with pytest.raises(TypeError, match="background_compile"):
        treerank.set_config(background_compile=False)
    with pytest.raises(TypeError, match="background_compile"):
        with treerank.config_context(background_compile=False):
            pass  # pragma: no cover


def _initial(value):
    """get_config() of a new interpreter with TREERANK_BACKGROUND_COMPILE=value."""
    import os

    env = dict(os.environ)
    env.pop("TREERANK_BACKGROUND_COMPILE", None)
    if value is not None:
        env["TREERANK_BACKGROUND_COMPILE"] = value
    code = textwrap.dedent(
        """
        import sys, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import treerank
            value = treerank.get_config()["background_compilation"]
        print(value, [str(w.message) for w in caught])
        print(sorted(m for m in ("numba", "sklearn", "numpy") if m in sys.modules))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, "True"), ("0", "False"), ("off", "False"), ("1", "True"), ("yes", "True")],
)
def test_the_environment_gives_the_initial_value(value, expected):
    first, imported = _initial(value)
    assert first == f"{expected} []"
    assert imported == "[]"  # the settings import nothing heavy


def test_an_unknown_environment_value_is_said():
    first, _ = _initial("maybe")
    assert first.startswith("True [")
    assert "TREERANK_BACKGROUND_COMPILE='maybe' is not understood" in first
