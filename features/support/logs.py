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
    previous = log.level
    log.setLevel(logging.DEBUG)

    def remove() -> None:
        log.removeHandler(handler)
        log.setLevel(previous)

    context.cleanups.append(remove)  # type: ignore[attr-defined]
    return handler
