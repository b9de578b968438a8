"""Another agent of the same file as a tool (``tools: ["agent:NAME"]``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable, ensure_config
from langchain_core.tools import BaseTool, StructuredTool

from leanloop.exceptions import RunFailed
from leanloop.report import summary_line
from leanloop.sessions import without_session
from leanloop.tools._notes import add_note, add_sub_report

__all__ = ["agent_tool"]


def agent_tool(name: str, description: str | None, agent: Runnable[str, AIMessage]) -> BaseTool:
    """The agent ``name`` as a tool: one ``task`` in, its answer out.

    The sub-agent is an agent of its own (model, tools, budget, window); each call is a
    run of it. The run's whole report goes into the calling run's report, nested in the
    call's record (``sub_report``), with its summary line as a note; a sub-run that fails
    nests its partial report and the call fails with the run's error.

    A call made inside a session turn runs without a session (ADR 0022): the sub-run
    gets the caller's callbacks, tags and metadata but not its ``thread_id``, so it
    neither waits for the turn it is part of nor writes into the caller's conversation;
    the turn records the call and its answer, as it does for any tool.
    """

    async def run_agent(task: str) -> str:
        # The config LangChain gives this call (the tool run's child callbacks, and what
        # the caller passed on), less the session: the sub-run is no turn of it.
        config = without_session(ensure_config())
        try:
            message = await agent.ainvoke(task, config)
        except RunFailed as exc:
            # The partial report says how far the sub-run got; the registry turns the
            # error itself into the call's one-line failure.
            _record(name, exc.report.to_dict())
            raise
        report = message.response_metadata.get("leanloop")
        _record(name, report if isinstance(report, Mapping) else {})
        return message.text

    description = description or f"Ask the agent {name!r} to do a task."
    description += " Give the whole task in `task`; the answer comes back as text."
    return StructuredTool.from_function(coroutine=run_agent, name=name, description=description)


def _record(name: str, report: Mapping[str, Any]) -> None:
    add_sub_report(report)
    # How the sub-run went is a remark, not a repair: the call ran as the model made it.
    add_note(f"agent {name}: {summary_line(report)}", repair=False)
