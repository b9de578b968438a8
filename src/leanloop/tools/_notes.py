"""Let a tool tell the registry what it repaired, without changing what it returns.

A tool's result is plain text for the model; a run report also wants to know that, say,
``read_file`` read another path than the one asked for. The registry opens a
:func:`collecting` block around each call; inside it, :func:`add_note` records a remark
for ``ToolOutcome.notes``. A context variable keeps concurrent calls apart, and the list
it holds is shared with the copies of the context LangChain and the worker threads
make, so a tool running in a worker thread reaches the right list.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["add_note", "collecting"]

_SINK: ContextVar[list[str] | None] = ContextVar("leanloop_tool_notes", default=None)


@contextmanager
def collecting() -> Iterator[list[str]]:
    """Collect the notes tools add while the block runs (into the list it yields)."""
    notes: list[str] = []
    token = _SINK.set(notes)
    try:
        yield notes
    finally:
        _SINK.reset(token)


def add_note(note: str) -> None:
    """Record ``note`` for the tool call that is running (ignored outside the registry)."""
    sink = _SINK.get()
    if sink is not None:
        sink.append(note)
