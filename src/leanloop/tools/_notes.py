"""What the registry hands one tool call, and what the tool tells it back.

A tool's result is plain text for the model; a run report also wants to know that, say,
``read_file`` read another path than the one asked for, or what the run of an
``agent:NAME`` tool did; and the workspace tools want the paths the run's request names
(to offer, or read, the file the user meant) and whether the run repairs a missing path
(its prompting profile is known only once the run has asked the server what it serves).
The registry makes a :class:`CallContext`
for each call and hands it to the tool in the call's config (LangChain passes a tool the
config of its call in a parameter annotated ``RunnableConfig``); the tool reads it with
:func:`call_context` and records remarks with :meth:`Told.note` and the reports of its
sub-runs with :meth:`Told.sub_report`, which end up in the call's ``ToolOutcome``. The
config travels with the call (into a worker thread too), so overlapping calls never see
each other's. Each :class:`Told` is numbered when its call starts (:attr:`Told.order`),
so what several calls of one reply did can be put back in the order the model made
them, however they finish. The context also carries what a call shares with the other
calls of its run: the run's MCP sessions (:class:`leanloop.tools.mcp.McpSessions`) and
what the run has read and edited in its workspace
(:class:`leanloop.tools._journal.WorkspaceRun`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from langchain_core.runnables import RunnableConfig, ensure_config

if TYPE_CHECKING:
    from leanloop.tools._journal import WorkspaceRun
    from leanloop.tools.mcp import McpSessions

__all__ = ["CONFIG_KEY", "CallContext", "Told", "call_config", "call_context", "call_order"]

CONFIG_KEY: Final = "leanloop_tool_call"
"""Where the call's :class:`CallContext` is in the config's ``configurable``."""

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
    """When the call started, among every call of the process. The registry makes its
    ``Told`` before the call's first ``await``, and the loop starts the calls of one
    reply in the order the model made them, so this order is the model's order."""

    def note(self, note: str, *, repair: bool = True) -> None:
        """Record ``note`` for the call's record.

        Args:
            note: One line for the call's record.
            repair: Whether the note says what the tool mended (a path read instead of
                the one asked for), which makes the call count as repaired; ``False`` for
                a plain remark (the summary of a sub-run).
        """
        self.notes.append(note)
        self.repaired = self.repaired or repair

    def sub_report(self, report: Mapping[str, Any]) -> None:
        """Record the JSON-ready ``report`` of a run the call made.

        The report is copied (its top level), so the caller's dict can go on changing
        without changing what was recorded.
        """
        self.sub_reports.append(dict(report))


@dataclass(frozen=True, slots=True)
class CallContext:
    """What the registry hands one tool call."""

    told: Told
    """Where the tool tells the registry what it did."""
    request_paths: Callable[[], Sequence[str]] | None = None
    """The workspace paths the run's request names (looked up on first use); ``None``
    when the call is not part of a run."""
    sessions: McpSessions | None = None
    """The run's MCP sessions, which an MCP tool's call uses (ADR 0018); ``None``: the
    call opens a session of its own."""
    repair_paths: bool | None = None
    """Whether a workspace tool reads the one path the request names instead of a missing
    one, as the run decided it (the agent's ``repair_paths``, else the run's prompting
    profile, which may follow what the server serves); ``None``: the tool's own setting."""
    workspace_run: WorkspaceRun | None = None
    """The files the run has read and the journal of its edits, which the edit tools check
    and write (one per run); ``None``: the tools use the state of their tool set."""


def call_config(context: CallContext) -> RunnableConfig:
    """The config to invoke a tool with: the run's config, plus ``context`` for the call.

    ``ensure_config()`` is the config LangChain would give the call anyway (the run's
    callbacks, tags and ``configurable``); ``context`` is added to a copy of it.
    """
    config = ensure_config()
    config["configurable"] = {**config.get("configurable", {}), CONFIG_KEY: context}
    return config


def call_context(config: RunnableConfig | None) -> CallContext | None:
    """The :class:`CallContext` in a tool call's ``config``; ``None`` outside the registry."""
    found = (config or {}).get("configurable", {}).get(CONFIG_KEY)
    return found if isinstance(found, CallContext) else None


def call_order(config: RunnableConfig | None) -> int:
    """The call's :attr:`Told.order`; outside the registry, a number taken now."""
    context = call_context(config)
    return context.told.order if context is not None else next(_CALLS)
