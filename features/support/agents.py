"""Build agents around a scripted model for loop and Runnable scenarios."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from leanloop.agent import LLMAgent
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel


def scripted_agent(
    replies: Sequence[Any],
    *,
    tools: Sequence[BaseTool] = (),
    report_usage: bool = False,
    **policies: Any,
) -> tuple[LLMAgent, ScriptedChatModel]:
    """An agent whose model replays ``replies``; ``policies`` set AgentSpec fields."""
    model = ScriptedChatModel(replies=list(replies), report_usage=report_usage)
    spec = AgentSpec(
        name="tester",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel"),
        **policies,
    )
    return LLMAgent.from_spec(spec, model=model, tools=list(tools)), model


class ToolLog:
    """Records what each test tool received, and lets tools wait for each other."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.started = 0
        self.all_started = asyncio.Event()
        self.expected_parallel = 0

    def lookup_tool(self) -> BaseTool:
        async def lookup(key: str) -> str:
            """Look up a key in the test table."""
            self.calls.append(("lookup", {"key": key}))
            return f"value of {key}"

        return StructuredTool.from_function(coroutine=lookup, name="lookup")

    def barrier_tool(self) -> BaseTool:
        async def wait_for_peers(label: str) -> str:
            """Returns only once every expected call has started (proves they overlap)."""
            self.calls.append(("wait_for_peers", {"label": label}))
            self.started += 1
            if self.started >= self.expected_parallel:
                self.all_started.set()
            await asyncio.wait_for(self.all_started.wait(), timeout=5)
            return f"done {label}"

        return StructuredTool.from_function(coroutine=wait_for_peers, name="wait_for_peers")

    def failing_tool(self) -> BaseTool:
        def explode(reason: str) -> str:
            """Always fails."""
            self.calls.append(("explode", {"reason": reason}))
            raise RuntimeError(f"it broke: {reason}")

        return StructuredTool.from_function(func=explode, name="explode")
