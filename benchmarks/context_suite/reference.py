"""The exact reference: one counter for every request, and the log of one run.

Every strategy's requests are measured by the model that receives them, with the same
counter (LangChain's ``count_tokens_approximately``: 4 characters a token, 3 tokens a
message, tool calls and the bound tool schemas included). A request over the window is
an *overflow*: it is logged, and the model refuses it the way a server would, with a
``ContextOverflowError`` that says the window and the size.

Tool calls are timed too, so that a run's framework time is its time minus the time spent
inside models and tools. Times are the process's CPU time (``time.process_time``), not
wall time: the suite runs beside other work on small machines, and waiting for a busy CPU
is no part of a strategy's cost. With zero-latency models nothing waits on I/O, so CPU
time is the work done.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import BaseMessage, MessageLikeRepresentation
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool

__all__ = [
    "Request",
    "Role",
    "RunLog",
    "Session",
    "count_messages",
    "reference_tokens",
    "timed_tools",
]

Role = Literal["reader", "extractor", "summarizer"]


def reference_tokens(
    messages: Sequence[BaseMessage], tools: Sequence[Mapping[str, Any]] = ()
) -> int:
    """The reference size of a request: its messages and the tool schemas bound to it."""
    schemas: list[BaseTool | dict[str, Any]] = [dict(t) for t in tools]
    return count_tokens_approximately(messages, tools=schemas or None)


def count_messages(messages: Iterable[MessageLikeRepresentation]) -> int:
    """The reference counter without tools, as middleware token counters are called."""
    return count_tokens_approximately(messages)


@dataclass
class Request:
    """One request a model received."""

    role: Role
    tokens: int
    messages: int
    over: bool
    """Over the window: the model refused it."""
    started: float = 0.0
    """``time.process_time()`` when the model received it."""
    seconds: float = 0.0
    """CPU time spent inside the model (counting included)."""


@dataclass
class RunLog:
    """What one task run under one strategy and window did."""

    task_id: str
    strategy: str
    window: int
    requests: list[Request] = field(default_factory=list)
    tool_spans: list[tuple[float, float]] = field(default_factory=list)
    """``(start, end)`` of every tool call, in ``time.process_time()`` seconds."""
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0
    answer: str = ""
    error: str | None = None
    """Why the run ended without an answer (a refused request, an exception)."""
    correct: bool = False
    found: int = 0
    """Needles whose value the answer quotes."""
    pruning: list[str] = field(default_factory=list)
    """leanloop's events about pruning that fell back or left lines unread."""

    def of(self, role: Role) -> list[Request]:
        """The requests one kind of model received."""
        return [r for r in self.requests if r.role == role]

    @property
    def tool_seconds(self) -> float:
        """Time spent inside tools."""
        return sum(end - start for start, end in self.tool_spans)

    @property
    def model_seconds(self) -> float:
        """Time spent inside every model (reader, extractor, summarizer)."""
        return sum(r.seconds for r in self.requests)

    @property
    def framework_seconds(self) -> float:
        """CPU time that was neither a model's nor a tool's: the strategy's own."""
        return max(self.cpu_seconds - self.model_seconds - self.tool_seconds, 0.0)


class Session:
    """The run in progress, shared by the models and tools of one strategy and window."""

    def __init__(self, window: int) -> None:
        """Measure requests against ``window`` tokens."""
        self.window = window
        self.log = RunLog(task_id="-", strategy="-", window=window)

    def begin(self, task_id: str, strategy: str) -> RunLog:
        """Start the log of a new run and return it."""
        self.log = RunLog(task_id=task_id, strategy=strategy, window=self.window)
        return self.log

    @contextmanager
    def request(
        self,
        role: Role,
        messages: Sequence[BaseMessage],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        refuse: bool = True,
    ) -> Iterator[Request]:
        """Measure and log one request; refuse it when it is over the window.

        Args:
            role: Which model received it.
            messages: The request's messages.
            tools: The tool schemas bound to it.
            refuse: Refuse a request over the window (``False``: a real server decides).

        Raises:
            ContextOverflowError: The request is larger than the window (``refuse`` only).
        """
        started = time.process_time()
        tokens = reference_tokens(messages, tools)
        entry = Request(role, tokens, len(messages), over=tokens > self.window, started=started)
        self.log.requests.append(entry)
        try:
            if entry.over and refuse:
                msg = (
                    f"This model's maximum context length is {self.window} tokens. "
                    f"However, your messages resulted in {tokens} tokens."
                )
                raise ContextOverflowError(msg)
            yield entry
        finally:
            entry.seconds = time.process_time() - started


def timed_tools(
    tools: Sequence[BaseTool], session: Session, *, errors_as_results: bool
) -> list[BaseTool]:
    """Copies of ``tools`` whose time is added to the session's run log.

    Args:
        tools: Structured tools with a coroutine (the workspace tools).
        session: Where the time goes.
        errors_as_results: Return a tool's refusal as its result text (what a LangChain
            agent needs to keep going); ``False`` raises it, for leanloop's registry.
    """
    return [_timed(tool, session, errors_as_results=errors_as_results) for tool in tools]


def _timed(tool: BaseTool, session: Session, *, errors_as_results: bool) -> BaseTool:
    if not isinstance(tool, StructuredTool) or tool.coroutine is None:
        msg = f"tool {tool.name!r} has no coroutine to time"
        raise TypeError(msg)
    inner = tool.coroutine
    # The workspace tools take the call's RunnableConfig (leanloop's CallContext rides in
    # it): pass it on, or every call fails with "missing ... argument: 'config'".
    wants_config = "config" in inspect.signature(inner).parameters

    async def run(config: RunnableConfig, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return await (inner(**kwargs, config=config) if wants_config else inner(**kwargs))
        finally:
            session.log.tool_spans.append((started, time.process_time()))

    return StructuredTool.from_function(
        coroutine=run,
        name=tool.name,
        description=tool.description,
        args_schema=tool.args_schema,
        handle_tool_error=errors_as_results,
    )
