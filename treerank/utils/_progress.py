"""A dependency-free progress report for long fits (written to stderr).

On a terminal it is a bar redrawn in place with carriage returns (at most ten
times a second). Anywhere else (a log file, a pipe, a notebook's captured
stream) a redrawn bar would pile up lines, so it writes a single line when the
work is done: a log gets one line per fit.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import sys
import time

__all__ = ["ProgressBar", "is_terminal"]

_REDRAW_SECONDS = 0.1


def is_terminal(stream):
    """Whether ``stream`` is an open terminal (``isatty``).

    Parameters
    ----------
    stream : file-like

    Returns
    -------
    terminal : bool

    Examples
    --------
    >>> import io
    >>> from treerank.utils._progress import is_terminal
    >>> is_terminal(io.StringIO())
    False
    """
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


class ProgressBar:
    """Minimal progress report: ``label [#####.....] 50/100 (3.2 s)``.

    Parameters
    ----------
    total : int
        Number of steps.
    label : str
        Text before the bar.
    enabled : bool, default=True
        If False, nothing is printed (the bar is a no-op).
    stream : file-like or None, default=None
        Where to write (standard error if None).
    width : int, default=30
        Characters in the bar.
    interactive : bool or None, default=None
        Redraw one line in place (True), or write one line when the work is
        done (False). None: redraw only when ``stream`` is a terminal.

    Examples
    --------
    >>> import io
    >>> log = io.StringIO()
    >>> bar = ProgressBar(20, "fitting", stream=log)
    >>> for _ in range(20):
    ...     bar.update()
    >>> bar.close()
    >>> log.getvalue()  # doctest: +ELLIPSIS
    'fitting [##############################] 20/20 (... s)\\n'
    """

    def __init__(
        self, total, label, *, enabled=True, stream=None, width=30, interactive=None
    ):
        self.total = max(int(total), 1)
        self.label = label
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self.width = width
        self.interactive = (
            is_terminal(self.stream) if interactive is None else bool(interactive)
        )
        self.done = 0
        self._finished = False
        self.start = time.perf_counter()
        self._drawn_at = None
        self._draw()

    def _elapsed(self):
        return time.perf_counter() - self.start

    def _line(self):
        filled = int(self.width * self.done / self.total)
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = self._elapsed()
        return f"{self.label} [{bar}] {self.done}/{self.total} ({elapsed:.1f} s)"

    def _draw(self, final=False):
        if not self.enabled or self._finished:
            return
        if self.interactive:
            now = time.perf_counter()
            if (
                not final
                and self._drawn_at is not None
                and now - self._drawn_at < _REDRAW_SECONDS
            ):
                return
            self._drawn_at = now
            self.stream.write(f"\r{self._line()}" + ("\n" if final else ""))
        elif final:
            self.stream.write(self._line() + "\n")
        else:
            return
        self._finished = final
        self.stream.flush()

    def update(self, steps=1):
        """Advance the bar by ``steps``; the last step completes it."""
        self.done = min(self.done + steps, self.total)
        self._draw(final=self.done >= self.total)

    def close(self):
        """Complete the work and write the final line (once)."""
        self.done = self.total
        self._draw(final=True)
