"""Another agent of the same file as a tool (``tools: ["agent:NAME"]``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from langchain_core.callbacks import BaseCallbackManager
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException

from leanloop.exceptions import NoAnswer, RunFailed
from leanloop.report import summary_line
from leanloop.sessions import without_session
from leanloop.tools._notes import CONFIG_KEY, Told, call_context

__all__ = ["SUB_AGENTS_KEY", "agent_tool", "sub_agents_of"]

SUB_AGENTS_KEY: Final = "leanloop_sub_agents"
"""The run metadata key that names the sub-agents a run is nested in, outermost first
(``["researcher"]``; ``["researcher", "searcher"]`` one level deeper); absent in the run
the caller started. LangChain hands run metadata to every callback, so a progress
printer can tell a sub-run's events from its caller's (``on_custom_event(metadata=...)``)."""


def sub_agents_of(metadata: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The sub-agents a run's events come from, outermost first; ``()`` for the top run.

    Args:
        metadata: The run metadata a callback received (``None`` is read as empty).
    """
    names = (metadata or {}).get(SUB_AGENTS_KEY)
    if not isinstance(names, list | tuple):
        return ()
    return tuple(str(name) for name in names)


def agent_tool(name: str, description: str | None, agent: Runnable[str, AIMessage]) -> BaseTool:
    """The agent ``name`` as a tool: one ``task`` in, its answer out.

    The sub-agent is an agent of its own (model, tools, budget, window); each call is a
    run of it. The run's whole report goes into the calling run's report, nested in the
    call's record (``sub_report``, with the sub-run's ``answer`` and the ``agent``'s
    name added: ``answer`` is ``None`` when the call failed), with its summary line as a
    note. A sub-run that ended without its answer (``no_answer``, a limit) returns the
    ending's words, as any run does: they are the call's result and the ``answer``. A
    sub-run that fails nests its partial report and the call fails with the run's
    error; so does one that ends without its answer when the sub-agent says
    ``no_answer: raise`` (its whole report, the call failing with the ending's words).
    The sub-run's metadata names it (:data:`SUB_AGENTS_KEY`), so its progress events can
    be told from the caller's.

    A call made inside a session turn runs without a session (ADR 0022): the sub-run
    gets the caller's callbacks, tags and metadata but not its ``thread_id``, so it
    neither waits for the turn it is part of nor writes into the caller's conversation;
    the turn records the call and its answer, as it does for any tool.
    """

    async def run_agent(task: str, config: RunnableConfig) -> str:
        # The config LangChain gives this call (the tool run's child callbacks, and what
        # the caller passed on), less the session: the sub-run is no turn of it.
        context = call_context(config)
        told = context.told if context is not None else None
        sub_config = _named(without_session(config), name)
        try:
            message = await agent.ainvoke(task, sub_config)
        except RunFailed as exc:
            # The partial report says how far the sub-run got; the registry turns the
            # error itself into the call's one-line failure.
            _record(told, name, exc.report.to_dict(), answer=None)
            raise
        except NoAnswer as exc:
            # A sub-agent with `no_answer: raise` that ended without its answer: the run
            # is whole, its report says why (set_aside, rests_on); the call fails, as
            # that agent asks, with the ending's words in its one-line failure.
            _record(told, name, exc.report, answer=None)
            raise
        report = message.response_metadata.get("leanloop")
        if isinstance(report, Mapping) and report.get("stop_reason") == "paused":
            # Nobody in this run could decide on the sub-run's calls (the parent's
            # approver answers them when there is one): none of them ran. The call fails,
            # so the parent's report and its model say so; a waiting text returned as the
            # result read as work done (ADR 0037, amendment 1).
            _record(told, name, report, answer=None)
            raise ToolException(_paused(name, report))
        _record(told, name, report if isinstance(report, Mapping) else {}, answer=message.text)
        return message.text

    description = description or f"Ask the agent {name!r} to do a task."
    description += " Give the whole task in `task`; the answer comes back as text."
    return StructuredTool.from_function(coroutine=run_agent, name=name, description=description)


def _paused(name: str, report: Mapping[str, Any]) -> str:
    """The one-line failure of a call whose sub-run stopped before calls that need a person."""
    pending = report.get("pending_calls") or []
    calls = ", ".join(
        f"{call.get('tool')} (call {call.get('id') or call.get('call_id')})"
        for call in pending
        if isinstance(call, Mapping)
    )
    return (
        f"agent {name} did not finish: its calls {calls or '(unnamed)'} need a person's "
        "approval and nobody in this run can give it; none of them ran, so nothing was "
        "changed. Say so in your answer, or do the task another way."
    )


def _named(config: RunnableConfig, name: str) -> RunnableConfig:
    """``config`` with ``name`` added to the sub-agents the run is nested in.

    The path is read from the callback manager too: a caller may hand its callbacks on
    without copying its metadata into the config, and the manager's metadata is what the
    callbacks see.
    """
    metadata = dict(config.get("metadata") or {})
    outer = sub_agents_of(metadata)
    callbacks = config.get("callbacks")
    if not outer and isinstance(callbacks, BaseCallbackManager):
        outer = sub_agents_of(callbacks.inheritable_metadata)
    metadata[SUB_AGENTS_KEY] = [*outer, name]
    # The caller's call context is the caller's: the sub-run's own calls get theirs.
    configurable = {k: v for k, v in config.get("configurable", {}).items() if k != CONFIG_KEY}
    return {**config, "metadata": metadata, "configurable": configurable}


def _record(told: Told | None, name: str, report: Mapping[str, Any], *, answer: str | None) -> None:
    """Tell the registry (when the call is one of its) the sub-run's report and summary."""
    if told is None:
        return
    # The caller's report keeps what the sub-agent answered: its own report does not
    # (the answer travels as the message), and the call's result may be cut or pruned.
    told.sub_report({**report, "agent": name, "answer": answer})
    # How the sub-run went is a remark, not a repair: the call ran as the model made it.
    told.note(f"agent {name}: {summary_line(report)}", repair=False)
