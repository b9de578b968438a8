"""Another agent of the same file as a tool (``tools: ["agent:NAME"]``)."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, StructuredTool

from leanloop.report import summary_line
from leanloop.tools._notes import add_note

__all__ = ["agent_tool"]


def agent_tool(name: str, description: str | None, agent: Runnable[str, AIMessage]) -> BaseTool:
    """The agent ``name`` as a tool: one ``task`` in, its answer out.

    The sub-agent is an agent of its own (model, tools, budget, window); each call is a
    run of it, whose summary line goes into the calling run's report as a note.
    """

    async def run_agent(task: str) -> str:
        message = await agent.ainvoke(task)
        report = message.response_metadata.get("leanloop", {})
        add_note(f"agent {name}: {summary_line(report)}")
        return message.text

    description = description or f"Ask the agent {name!r} to do a task."
    description += " Give the whole task in `task`; the answer comes back as text."
    return StructuredTool.from_function(coroutine=run_agent, name=name, description=description)
