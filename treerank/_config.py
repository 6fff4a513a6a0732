"""treerank's settings: :func:`set_config`, :func:`get_config`, :func:`config_context`.

Modelled on scikit-learn's ``set_config``, ``get_config`` and
``config_context``, with one difference, deliberate: :func:`set_config`
changes the setting of the whole process (every thread, including the
threads of ``joblib``'s threading backend and of ``RankingForest(n_jobs=...)``),
while :func:`config_context` overrides it in the calling thread only, for the
duration of its block (so that two threads' blocks never see each other's
settings). The only setting, ``background_compilation``, governs a resource of
the process (a second process compiling kernels ahead of the first fit), so a
process-wide value is what a caller setting it once means.

The initial value of ``background_compilation`` comes from the environment
variable ``TREERANK_BACKGROUND_COMPILE``, read once, when this module is first
imported (by the first ``treerank.get_config()``, ``treerank.set_config()`` or
fit): ``0``, ``false``, ``no`` or ``off`` switch it off; ``1``, ``true``,
``yes``, ``on`` or unset leave it on; any other value leaves it on with a
``UserWarning`` naming the variable.

This module imports nothing but the standard library: ``import treerank``
stays light, and the compilation management below the estimators can read the
setting.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import contextlib
import os
import threading
import warnings

__all__ = ["ENVIRONMENT_SWITCH", "config_context", "get_config", "set_config"]

# the environment variable giving the initial background_compilation
ENVIRONMENT_SWITCH = "TREERANK_BACKGROUND_COMPILE"
_OFF = ("0", "false", "no", "off")
_ON = ("", "1", "true", "yes", "on")


def _initial_background_compilation():
    text = os.environ.get(ENVIRONMENT_SWITCH)
    if text is None:
        return True
    word = text.strip().lower()
    if word in _OFF:
        return False
    if word not in _ON:
        warnings.warn(
            f"{ENVIRONMENT_SWITCH}={text!r} is not understood: expected one of "
            f"{', '.join(_OFF)} (off) or {', '.join(v for v in _ON if v)} (on); "
            "background compilation stays on.",
            UserWarning,
            stacklevel=2,
        )
    return True


# the process-wide settings (set_config)
_global_config = {"background_compilation": _initial_background_compilation()}
_global_lock = threading.Lock()
# the overrides of the calling thread's config_context blocks, innermost last
_local = threading.local()


def _overrides():
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


def _check_background_compilation(value):
    """``value`` as a bool, or None (unchanged); a TypeError naming the parameter."""
    if value is None or isinstance(value, bool):
        return value
    # numpy's bool (without importing numpy)
    if type(value).__module__ == "numpy" and type(value).__name__ in ("bool_", "bool"):
        return bool(value)
    raise TypeError(
        "background_compilation must be True, False or None (leave unchanged); "
        f"got {value!r} of type {type(value).__name__}."
    )


def get_config():
    """The current values of treerank's settings, in the calling thread.

    Returns
    -------
    config : dict
        ``{"background_compilation": bool}``: whether a first fit may start a
        second process that compiles the kernels it needs later (see
        :func:`set_config`). A copy: changing it changes nothing.

    See Also
    --------
    set_config : Change the settings of the process.
    config_context : Change them for a block of code.

    Examples
    --------
    >>> import treerank
    >>> config = treerank.get_config()
    >>> sorted(config)
    ['background_compilation']
    >>> with treerank.config_context(background_compilation=False):
    ...     treerank.get_config()["background_compilation"]
    False
    """
    config = dict(_global_config)
    for override in _overrides():
        config.update(override)
    return config


def set_config(background_compilation=None):
    """Change treerank's settings for the whole process.

    Unlike scikit-learn's ``set_config`` (which changes the calling thread's
    settings), this changes those of every thread of the process; a
    :func:`config_context` block still overrides them in its own thread.

    Parameters
    ----------
    background_compilation : bool, default=None
        Whether the first fit of a process may start a second Python process
        that compiles, into numba's cache, the kernels the fit needs after
        its tree growth's (routing, leaf tables, the median), while the fit
        compiles the growth's on another core: a shorter first fit on a
        machine of two cores or more, the same results. It starts nothing
        where it cannot work (Windows, an interpreter that is not Python,
        a frozen application, a worker of ``joblib`` or ``multiprocessing``),
        nor when numba has no writable cache or the kernels are already
        compiled; ``False`` never starts it. The initial value is on, unless
        the environment variable ``TREERANK_BACKGROUND_COMPILE`` is ``0``.
        None leaves the setting unchanged.

    See Also
    --------
    get_config : The current settings.
    config_context : Change them for a block of code.
    treerank.precompile : Compile every kernel ahead, e.g. in a container image.

    Examples
    --------
    >>> import treerank
    >>> before = treerank.get_config()["background_compilation"]
    >>> treerank.set_config(background_compilation=False)
    >>> treerank.get_config()
    {'background_compilation': False}
    >>> treerank.set_config(background_compilation=before)
    """
    background_compilation = _check_background_compilation(background_compilation)
    with _global_lock:
        if background_compilation is not None:
            _global_config["background_compilation"] = background_compilation


@contextlib.contextmanager
def config_context(*, background_compilation=None):
    """Change treerank's settings in the calling thread for a block of code.

    The settings given override those of :func:`set_config` in this thread
    until the block ends (also when it raises); other threads keep theirs.
    Blocks nest: the innermost wins.

    Parameters
    ----------
    background_compilation : bool, default=None
        See :func:`set_config`. None keeps the current value.

    Yields
    ------
    None

    See Also
    --------
    set_config : Change the settings of the whole process.
    get_config : The current settings.

    Examples
    --------
    Fit without a second process compiling kernels (for instance to time the
    fit's own compilation):

    >>> import numpy as np
    >>> import treerank
    >>> X = np.random.default_rng(0).normal(size=(40, 2))
    >>> y = (X[:, 0] > 0).astype(int)
    >>> with treerank.config_context(background_compilation=False):
    ...     tree = treerank.TreeRank(max_depth=2, random_state=0).fit(X, y)
    ...     treerank.get_config()["background_compilation"]
    False
    """
    override = {}
    background_compilation = _check_background_compilation(background_compilation)
    if background_compilation is not None:
        override["background_compilation"] = background_compilation
    stack = _overrides()
    stack.append(override)
    try:
        yield
    finally:
        # remove this block's override (the innermost, unless a generator
        # exited out of order)
        for index in range(len(stack) - 1, -1, -1):
            if stack[index] is override:
                del stack[index]
                break
