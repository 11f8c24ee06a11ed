"""Rate-limited progress lines on stderr for long loops (tuner epochs, restarts, iterations).

A :class:`Progress` prints at most one line per ``interval`` seconds (a tuner with thousands of
epochs does not flood its log) and, on :meth:`Progress.finish`, the last step if it was held back,
so a log always ends with the final epoch. :data:`SILENT` is the do-nothing reporter that library
callers get by default; the commands pass a real one unless ``--quiet`` is given. Progress lines go
to stderr only: no output file depends on them.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


def _format_value(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


class Progress:
    """Rate-limited step reporter.

    Parameters
    ----------
    label
        Prefix of every line (e.g. ``"smtlib tune kbmira"``).
    stream
        Where lines go (default: ``sys.stderr`` at the time of writing).
    interval
        Minimum seconds between two printed lines; ``0`` prints every step.
    clock
        Monotonic clock in seconds (a parameter so tests can drive it).
    """

    def __init__(self, label: str, *, stream: TextIO | None = None, interval: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.label = label
        self.stream = stream
        self.interval = float(interval)
        self.clock = clock
        self._last_print: float | None = None
        self._held: str | None = None

    def _write(self, line: str) -> None:
        print(line, file=self.stream if self.stream is not None else sys.stderr, flush=True)

    def step(self, unit: str, index: int, total: int | None = None, **values: object) -> None:
        """Report step ``index`` (1-based) of ``total`` with named values (floats shown with 4 decimals).

        The first step is always printed, later ones when ``interval`` seconds have passed since the
        last printed line; a held-back step is printed by :meth:`finish`.
        """
        counter = f"{index}/{total}" if total is not None else str(index)
        fields = "".join(f" {key}={_format_value(value)}" for key, value in values.items())
        line = f"{self.label}: {unit} {counter}{fields}"
        now = self.clock()
        if self._last_print is None or now - self._last_print >= self.interval:
            self._write(line)
            self._last_print = now
            self._held = None
        else:
            self._held = line

    def message(self, text: str) -> None:
        """An unthrottled line (a phase starting or ending)."""
        self._write(f"{self.label}: {text}")

    def finish(self) -> None:
        """Print the last step if it was held back by the rate limit."""
        if self._held is not None:
            self._write(self._held)
            self._held = None


class _Silent(Progress):
    """A reporter that prints nothing."""

    def __init__(self) -> None:
        super().__init__("")

    def step(self, unit: str, index: int, total: int | None = None, **values: object) -> None:
        pass

    def message(self, text: str) -> None:
        pass

    def finish(self) -> None:
        pass


#: the default reporter of library code: prints nothing
SILENT: Progress = _Silent()


def command_progress(label: str, quiet: bool = False) -> Progress:
    """The reporter a command gives its loops: stderr, one line a second, or :data:`SILENT` with ``--quiet``."""
    return SILENT if quiet else Progress(label)
