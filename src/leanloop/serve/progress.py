"""A streamed run's progress: its text chunks and its events, as one feed.

While an agent streams its answer it also reports what it does: the tools it starts,
each tool round (``leanloop.step``), trims, pruning passes, the synthesis flow
(:mod:`leanloop.events`). :class:`RunFeed` runs ``agent.astream`` with a callback handler
that catches those events, and hands the server the chunks and the events in one
sequence, in the order they reached it. The server sends each event as an SSE comment
(``: leanloop step {...}``, which every SSE client skips) and, for a client that asks
with ``X-Leanloop-Progress: events``, also as a chunk with an empty delta and the event
under ``leanloop_progress`` (ADR 0025, amendment 1).

``leanloop.budget`` (before every model request) is not passed on: it is an estimate
per request, not progress, and leaving it out keeps a model that fails at its first
request a 502 rather than a 200 stream holding an error event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import AIMessageChunk

from leanloop import events

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import RunnableConfig

    from leanloop.agent import LLMAgent

__all__ = [
    "PROGRESS_HEADER",
    "PROGRESS_OPT_IN",
    "Progress",
    "ProgressHandler",
    "RunFeed",
    "comment",
]

PROGRESS_HEADER = "x-leanloop-progress"
"""The request header that asks for progress as chunks too (its value: ``events``)."""
PROGRESS_OPT_IN = "events"

TOOL_START = "tool_start"
"""The progress event sent when a tool call starts: ``name``, ``input`` (cut to 200 chars)."""

_PREFIX = "leanloop."
# Per-request estimates, not progress (see the module docstring).
_NOT_PROGRESS = frozenset({events.BUDGET})
_INPUT_CHARS = 200


@dataclass(frozen=True)
class Progress:
    """One event of a run: its name without ``leanloop.`` (``step``) and its payload."""

    event: str
    data: dict[str, Any]

    def payload(self) -> dict[str, Any]:
        """The event as the JSON object clients get: ``{"event": ..., **data}``."""
        return {"event": self.event, **self.data}


def comment(progress: Progress) -> bytes:
    """The SSE comment carrying ``progress``: ``: leanloop <event> <json>`` and a blank line.

    One line (JSON without newlines), so a client that reads comments can split it on the
    first two spaces. Values JSON cannot hold are written as text, never an error.
    """
    data = json.dumps(progress.data, ensure_ascii=False, default=str)
    return f": leanloop {progress.event} {data}\n\n".encode()


class ProgressHandler(AsyncCallbackHandler):
    """A callback handler that passes a run's progress events to ``sink`` as they come."""

    def __init__(self, sink: Callable[[Progress], None]) -> None:
        """Send every progress event of the run to ``sink`` (called in the run's task)."""
        self._sink = sink

    async def on_custom_event(
        self,
        name: str,
        data: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Pass on a ``leanloop.*`` event of the run, but the per-request budget."""
        if name.startswith(_PREFIX) and name not in _NOT_PROGRESS:
            payload = dict(data) if isinstance(data, dict) else {"value": data}
            self._sink(Progress(name.removeprefix(_PREFIX), payload))

    async def on_tool_start(
        self,
        serialized: dict[str, Any] | None,
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Say which tool started: a long call is otherwise silent until its round ends."""
        name = kwargs.get("name") or (serialized or {}).get("name") or "tool"
        self._sink(Progress(TOOL_START, {"name": name, "input": input_str[:_INPUT_CHARS]}))


@dataclass(frozen=True)
class _Failed:
    error: Exception


_END = None
_Item = AIMessageChunk | Progress | _Failed | None


class RunFeed:
    """``agent.astream`` and its progress events, read one at a time in arrival order.

    The stream is pumped by a task of its own into the queue the events go to, so a
    reader waiting for the next item sees an event during a long tool call, not only
    with the next text. :meth:`aclose` cancels the run and waits for it to end (its tools
    are cancelled, their ``finally`` blocks run).
    """

    def __init__(
        self, agent: LLMAgent, messages: list[BaseMessage], config: RunnableConfig
    ) -> None:
        """Start the run of ``agent`` on ``messages`` with ``config`` (whose callbacks,
        the server sets none, are replaced by the progress handler)."""
        self._items: asyncio.Queue[_Item] = asyncio.Queue()
        handler = ProgressHandler(self._items.put_nowait)
        chunks = agent.astream(messages, {**config, "callbacks": [handler]})
        self._task = asyncio.create_task(self._pump(chunks))

    async def _pump(self, chunks: AsyncIterator[AIMessageChunk]) -> None:
        try:
            async for chunk in chunks:
                self._items.put_nowait(chunk)
        # The run's failure, of any kind: raised to the reader by next(), who decides.
        except Exception as exc:
            self._items.put_nowait(_Failed(exc))
            return
        self._items.put_nowait(_END)

    async def next(self) -> AIMessageChunk | Progress | None:
        """The next chunk or event; ``None`` once the run has ended.

        Raises:
            Exception: The run's own failure (a ``LeanloopError`` for an expected one).
        """
        item = await self._items.get()
        if isinstance(item, _Failed):
            raise item.error
        return item

    async def aclose(self) -> None:
        """Cancel the run if it is still going, and wait until it has ended."""
        if not self._task.done():
            self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
