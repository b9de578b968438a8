"""What the loop keeps of one run, and what its policies may read of it.

:class:`RunState` lives only as long as the run. The pieces the loop speaks to keep their
own state: the budget (:class:`~leanloop.budget.run.RunBudget`: plan, estimate, trimmed
view, limits), the tool round (:class:`~leanloop.loop.tool_round.ToolRunner`: the
pruner, the rounds of repeats), streaming (:class:`~leanloop.loop.streaming.Stream`)
and each policy (:mod:`leanloop.loop.policies`, ADR 0034).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.runnables import RunnableConfig

from leanloop.budget.run import RunBudget
from leanloop.loop.pause import PausedReply
from leanloop.loop.policies.hooks import Policies, StepView
from leanloop.loop.profiles import PromptProfile
from leanloop.loop.streaming import Stream
from leanloop.loop.tool_round import ToolRunner
from leanloop.protocol import ReadCalls, ToolProtocol
from leanloop.report import RunReport

__all__ = [
    "Answered",
    "RunState",
    "StepSink",
    "StillTooLarge",
    "TurnContext",
    "install_system",
    "schemas_of",
    "view",
]

StepSink = Callable[[int, list[BaseMessage]], Awaitable[None]]
"""Receives each completed step (its reply and results) before the next request."""


@dataclass(frozen=True)
class TurnContext:
    """What a session adds to a run (see :mod:`leanloop.sessions`).

    Attributes:
        earlier_starts: The opening's index of each earlier turn's first message.
        current_start: The opening's index where the current turn starts.
        on_step: Called with each completed step (step 0: the prefetched reads) once its
            reply and results are in the history, before the next request.
        resume: Steps of this turn a previous process completed, in order: they go into
            the history as they are and the run goes on after the last one.
        recall: Whether the model has the ``recall`` tool (the omission note names it).
        session: What the report's ``session`` starts with (thread, turn, notes).
    """

    earlier_starts: Sequence[int] = ()
    current_start: int = 0
    on_step: StepSink | None = None
    resume: Sequence[tuple[int, Sequence[BaseMessage]]] = ()
    recall: bool = False
    session: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class Answered:
    """A reply to a request, and (for a step) the calls read from it."""

    reply: AIMessage
    read: ReadCalls | None


class StillTooLarge(Exception):
    """The provider refused a request for its size again after one recovery."""


@dataclass
class RunState:
    """What the loop itself keeps of one run; lives only as long as the run.

    What the pieces it speaks to keep is theirs (the module docstring); the policies'
    state is on their objects in :attr:`policies`.
    """

    history: list[BaseMessage]
    report: RunReport
    budget: RunBudget
    protocol: ToolProtocol
    runner: ToolRunner
    config: RunnableConfig
    profile: PromptProfile
    question: str
    """The user's request (the last human message of the opening)."""
    base_system: SystemMessage | None = None
    """The system message as the caller gave it, before any tool instructions."""
    step: int = 0
    tools_ran: bool = False
    stream: Stream = field(default_factory=Stream)
    started: float = field(default_factory=lambda: asyncio.get_running_loop().time())
    """When the run started, on the event loop's clock: the clock of its time limits and
    of every request's and tool call's seconds (ADR 0027), so on virtual time in tests
    ``elapsed_s`` is exactly the time the run's delays and limits add up to."""
    usage: UsageMetadata | None = None
    """The usage of every reply of the run, added up."""
    resumed_reads: list[BaseMessage] = field(default_factory=list)
    """The results of steps an earlier process of this turn completed that carry data
    (marked :data:`~leanloop.loop.tool_round.READ`): this process has no records of them."""
    bindings: dict[tuple[int, str | None], tuple[Sequence[Any], Any]] = field(default_factory=dict)
    """The run's model with each schema list bound: binding converts every schema, and the
    loop binds the same list on every step."""
    schemas: dict[bool, Sequence[Mapping[str, Any]]] = field(default_factory=dict)
    """The schemas a request offers, with tools and without, in the protocol's mode."""
    on_step: StepSink | None = None
    """A session's sink for completed steps; ``None`` outside a session."""
    learn_speed: Callable[[float, float], None] | None = None
    """Told ``(processed prompt tokens, seconds)`` of each answered request when the
    pruning model shares the main model's server, so pruning limits start measured."""
    policies: Policies = field(default_factory=Policies)
    """The run's policy objects, in the order they are asked (ADR 0034)."""
    edits: Callable[[], list[dict[str, Any]]] | None = None
    """The run's edit journal as the report lists it (the registry's workspace run)."""
    paused: PausedReply | None = None
    """A resumed run's paused reply, whose calls run first with the decisions (ADR 0037)."""

    def elapsed(self) -> float:
        """Seconds since the run started, on the event loop's clock (the report's
        ``elapsed_s``: milliseconds are all a reader can use)."""
        return round(asyncio.get_running_loop().time() - self.started, 3)

    @property
    def model(self) -> Any:
        """The chat model as this run sends requests (for Ollama, asking for its window)."""
        return self.budget.sized


def view(run: RunState) -> StepView:
    """What the run's policies may read of it now."""
    return StepView(
        step=run.step,
        history=run.history,
        question=run.question,
        profile=run.profile,
        mode=run.protocol.mode,
        tools_ran=run.tools_ran,
        report=run.report,
        config=run.config,
        plan=run.budget.plan,
        named=run.runner.named or _names_nothing,
        resumed_reads=run.resumed_reads,
    )


def _names_nothing() -> list[str]:
    return []


def schemas_of(protocol: ToolProtocol) -> dict[bool, Sequence[Mapping[str, Any]]]:
    """The schemas a request offers in the protocol's mode, with tools and without."""
    return {tools: protocol.bound_schemas(tools=tools) for tools in (True, False)}


def install_system(run: RunState) -> None:
    """Put the system message for the protocol's current mode first in the history."""
    head = run.history[0] if run.history and isinstance(run.history[0], SystemMessage) else None
    rest = run.history[1:] if head is not None else run.history
    system = run.protocol.system_message(run.base_system)
    run.history = [system, *rest] if system is not None else list(rest)
