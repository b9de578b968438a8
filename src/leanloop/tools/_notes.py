"""Let a tool tell the registry what it did, without changing what it returns.

A tool's result is plain text for the model; a run report also wants to know that, say,
``read_file`` read another path than the one asked for, or what the run of an
``agent:NAME`` tool did. The registry opens a :func:`collecting` block around each call;
inside it, :func:`add_note` records a remark for ``ToolOutcome.notes`` and
:func:`add_sub_report` the report of a sub-run for ``ToolOutcome.sub_report``. A context
variable keeps concurrent calls apart, and the :class:`Told` it holds is shared with the
copies of the context LangChain and the worker threads make, so a tool running in a
worker thread reaches the right call. Each :class:`Told` is numbered when its call
starts (:func:`call_order`), so what several calls of one reply did can be put back in
the order the model made them, however they finish.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Told", "add_note", "add_sub_report", "call_order", "collecting"]

_CALLS: Iterator[int] = itertools.count()
"""Numbers every tool call the registry starts (:attr:`Told.order`)."""


@dataclass(slots=True)
class Told:
    """What the tools of one call told the registry while it ran."""

    notes: list[str] = field(default_factory=list)
    """Remarks for the call's record, in the order they were made."""
    repaired: bool = False
    """Whether any remark was of a repair (the call ran only after something was mended)."""
    sub_reports: list[dict[str, Any]] = field(default_factory=list)
    """Reports of the runs the call made (an ``agent:NAME`` tool: one per attempt)."""
    order: int = field(default_factory=lambda: next(_CALLS))
    """When the call started, among every call of the process. The registry opens its
    block before the call's first ``await``, and the loop starts the calls of one reply
    in the order the model made them, so this order is the model's order."""


_SINK: ContextVar[Told | None] = ContextVar("leanloop_tool_notes", default=None)


@contextmanager
def collecting() -> Iterator[Told]:
    """Collect what tools tell while the block runs (into the :class:`Told` it yields)."""
    told = Told()
    token = _SINK.set(told)
    try:
        yield told
    finally:
        _SINK.reset(token)


def call_order() -> int:
    """The running call's :attr:`Told.order`; outside the registry, a number taken now."""
    told = _SINK.get()
    return told.order if told is not None else next(_CALLS)


def add_note(note: str, *, repair: bool = True) -> None:
    """Record ``note`` for the tool call that is running (ignored outside the registry).

    Args:
        note: One line for the call's record.
        repair: Whether the note says what the tool mended (a path read instead of the
            one asked for), which makes the call count as repaired; ``False`` for a plain
            remark (the summary of a sub-run).
    """
    told = _SINK.get()
    if told is not None:
        told.notes.append(note)
        told.repaired = told.repaired or repair


def add_sub_report(report: Mapping[str, Any]) -> None:
    """Record the JSON-ready ``report`` of a run the running tool call made.

    Ignored outside the registry. The report is copied (its top level), so the caller's
    dict can go on changing without changing what was recorded.
    """
    told = _SINK.get()
    if told is not None:
        told.sub_reports.append(dict(report))
