"""The progress line of a running batch on a terminal: done, running, failed, rate, ETA.

One line on stderr, redrawn in place (a carriage return, then spaces over what the last
drawing left): when a task starts, when one finishes, and once a second in between, so
the elapsed time and the ETA move while a slow model thinks over one task (a line that
changed only per result looked hung for minutes on a local model).

Off a terminal (a pipe, a log, CI) and under ``--json`` it writes nothing: a line redrawn
with carriage returns is noise in a file, and stdout and stderr stay what a program reads.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, TextIO

__all__ = ["BatchProgress"]

_BAR_WIDTH = 30
_BAR_MIN = 10
_COLUMNS = 80
"""The width assumed when the terminal's own cannot be read."""


class BatchProgress:
    """The progress line of one batch run: a context manager that draws it on ``stream``.

    The runner reports each task as it starts (:meth:`started`) and ends
    (:meth:`finished`, or :meth:`lost` for a Ray task without a result); a thread redraws
    the line every ``every`` seconds in between.

    Args:
        stream: Where the line goes (stderr).
        total: Tasks in the tasks file.
        done: Tasks the results file held already (counted done, not in the rate).
        on: Whether to draw at all; ``None``: when ``stream`` is a terminal.
        clock: Monotonic seconds; inject a fake one in tests.
        every: Seconds between redraws while nothing happens; ``None``: no redraw thread.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        total: int,
        done: int = 0,
        on: bool | None = None,
        clock: Callable[[], float] = time.monotonic,
        every: float | None = 1.0,
    ) -> None:
        self._stream = stream
        self._total = total
        self._earlier = done
        self._done = done
        self._running = 0
        self._failed = 0
        self._lost = 0
        self._clock = clock
        self._started = clock()
        self._on = _is_terminal(stream) if on is None else on
        self._every = every
        self._drawn = 0  # characters of the last drawing, to blank what a shorter one leaves
        # The redraw thread and the event loop's callbacks both draw: one at a time.
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __enter__(self) -> BatchProgress:
        """Draw the line and start redrawing it every ``every`` seconds."""
        self.draw()
        if self._on and self._every is not None:
            self._ticker = threading.Thread(
                target=self._tick, args=(self._every,), name="leanloop-batch-progress", daemon=True
            )
            self._ticker.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        """Stop redrawing; draw the last state and end its line (the summary follows)."""
        self.close()

    def started(self, task: object) -> None:
        """Count one task as running (called when its run begins)."""
        with self._lock:
            self._running += 1
        self.draw()

    def finished(self, record: Mapping[str, Any]) -> None:
        """Count one task done (``record``: its result line, once written) and redraw."""
        with self._lock:
            self._running = max(0, self._running - 1)
            self._done += 1
            self._failed += record.get("stop_reason") == "failed"
        self.draw()

    def lost(self, task: object) -> None:
        """Count one task that ended without a result (a Ray worker died on every try)."""
        with self._lock:
            self._running = max(0, self._running - 1)
            self._lost += 1
        self.draw()

    def close(self) -> None:
        """Stop the redraw thread, draw the last state and end the line; idempotent."""
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
        if not self._on:
            return
        self.draw()
        with self._lock:
            self._write("\n")
            self._on = False

    def line(self) -> str:
        """The line as it would be drawn now, fitted to ``columns`` of the terminal."""
        with self._lock:
            return self._line()

    def draw(self) -> None:
        """Redraw the line in place (nothing when off)."""
        with self._lock:
            if not self._on:
                return
            text = self._line()
            self._write("\r" + text + " " * max(0, self._drawn - len(text)))
            self._drawn = len(text)

    def _line(self) -> str:
        elapsed = max(0.0, self._clock() - self._started)
        this_run = self._done - self._earlier
        rate = this_run / elapsed if this_run and elapsed > 0 else None
        left = max(0, self._total - self._done - self._lost)
        parts = [
            f"{self._done}/{self._total} done",
            f"{self._running} running",
            f"{self._failed} failed",
        ]
        if self._lost:
            parts.append(f"{self._lost} without a result")
        parts.append(_rate(rate))
        parts.append(f"ETA {_duration(left / rate)}" if rate else "ETA -")
        parts.append(f"{_duration(elapsed)} elapsed")
        text = " · ".join(parts)
        width = self._columns() - 1  # the last column would wrap on some terminals
        # The figures matter more than the bar: it takes the room they leave, or none.
        room = min(_BAR_WIDTH, width - len(text) - 3)
        if room < _BAR_MIN:
            return text[:width]
        share = self._done / self._total if self._total else 1.0
        full = min(room, int(share * room))
        return "[" + "#" * full + "." * (room - full) + "] " + text

    def _columns(self) -> int:
        try:
            return os.get_terminal_size(self._stream.fileno()).columns or _COLUMNS
        except (OSError, ValueError):  # not a real terminal (a test's buffer), or closed
            return _COLUMNS

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            # The terminal went away (closed, hung up): the batch goes on without a line.
            self._on = False

    def _tick(self, every: float) -> None:
        while not self._stop.wait(every):
            self.draw()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def _rate(per_second: float | None) -> str:
    """Tasks per second, per minute or per hour: the first that reads as 1 or more."""
    if per_second is None:
        return "-/min"
    if per_second >= 1:
        return f"{per_second:.1f}/s"
    if per_second * 60 >= 1:
        return f"{per_second * 60:.1f}/min"
    return f"{per_second * 3600:.1f}/h"


def _duration(seconds: float) -> str:
    """``M:SS``, or ``H:MM:SS`` from an hour on."""
    whole = int(seconds + 0.5)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
