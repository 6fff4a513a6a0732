"""A dependency-free progress report for long fits (written to stderr).

On a terminal it is a bar redrawn in place with carriage returns; anywhere
else (a log file, a pipe, a notebook's captured stream) carriage returns would
pile up, so it writes one plain line at every tenth of the work instead, as
tqdm does when its output is not a terminal.
"""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import sys
import time

__all__ = ["ProgressBar"]


def _is_terminal(stream):
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
        Redraw one line in place (True) or write a line per 10% of the steps
        (False). None: redraw only when ``stream`` is a terminal.

    Examples
    --------
    >>> import io
    >>> log = io.StringIO()
    >>> bar = ProgressBar(20, "fitting", stream=log)
    >>> for _ in range(20):
    ...     bar.update()
    >>> lines = log.getvalue().splitlines()
    >>> len(lines), lines[-1][:40]
    (11, 'fitting [##############################]')
    >>> "\\r" in log.getvalue()
    False
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
            _is_terminal(self.stream) if interactive is None else bool(interactive)
        )
        self.done = 0
        self._last_decile = -1
        self.start = time.perf_counter()
        self._draw()

    def _line(self):
        filled = int(self.width * self.done / self.total)
        elapsed = time.perf_counter() - self.start
        bar = "#" * filled + "." * (self.width - filled)
        return f"{self.label} [{bar}] {self.done}/{self.total} ({elapsed:.1f} s)"

    def _draw(self):
        if not self.enabled:
            return
        if self.interactive:
            end = "\n" if self.done >= self.total else ""
            self.stream.write(f"\r{self._line()}{end}")
        else:
            decile = 10 * self.done // self.total
            if decile == self._last_decile:
                return
            self._last_decile = decile
            self.stream.write(self._line() + "\n")
        self.stream.flush()

    def update(self, steps=1):
        """Advance the bar by ``steps``."""
        self.done = min(self.done + steps, self.total)
        self._draw()

    def close(self):
        """Complete the bar (prints the final newline)."""
        if self.done < self.total:
            self.done = self.total
            self._draw()
