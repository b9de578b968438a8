"""Capture log records from the ``leanloop`` loggers inside a scenario."""

from __future__ import annotations

import logging


class LogCapture(logging.Handler):
    """A handler that keeps every record; attach with :func:`capture_logs`."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)

    def messages(self, level: int | None = None) -> list[str]:
        return [r.getMessage() for r in self.records if level is None or r.levelno == level]


def capture_logs(context: object, logger: str = "leanloop") -> LogCapture:
    """Attach a capturing handler to ``logger`` for the rest of the scenario."""
    handler = LogCapture()
    log = logging.getLogger(logger)
    log.addHandler(handler)
    previous, propagated = log.level, log.propagate
    log.setLevel(logging.DEBUG)
    # The records are the scenario's to check, not output: with DEBUG on, they would also
    # reach the runner's log output and fill the test command's console.
    log.propagate = False

    def remove() -> None:
        log.removeHandler(handler)
        log.setLevel(previous)
        log.propagate = propagated

    context.cleanups.append(remove)  # type: ignore[attr-defined]
    return handler
