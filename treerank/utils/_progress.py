"""A dependency-free text progress bar for long fits (written to stderr)."""

# Authors: The treerank developers
# SPDX-License-Identifier: BSD-3-Clause

import sys
import time

__all__ = ["ProgressBar"]


class ProgressBar:
    """Minimal progress bar: ``label [#####.....] 50/100 (3.2 s)``.

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
    """

    def __init__(self, total, label, *, enabled=True, stream=None, width=30):
        self.total = max(int(total), 1)
        self.label = label
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self.width = width
        self.done = 0
        self.start = time.perf_counter()
        self._draw()

    def _draw(self):
        if not self.enabled:
            return
        filled = int(self.width * self.done / self.total)
        elapsed = time.perf_counter() - self.start
        bar = "#" * filled + "." * (self.width - filled)
        end = "\n" if self.done >= self.total else ""
        self.stream.write(
            f"\r{self.label} [{bar}] {self.done}/{self.total} ({elapsed:.1f} s){end}"
        )
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
