"""A whole run of 200 tool steps with a zero-latency scripted model: memory and time.

The model calls a tool 200 times (each result about 2 KB) and then answers; the agent has
``max_rounds`` 250 and a 32,768-token window, so trimming is active for most of the run.
The scripted model's own record of requests is cleared as it goes, so the figures are the
loop's, not the test double's.
"""

from __future__ import annotations

import tracemalloc

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool, StructuredTool

from benchmarks.bench_fixtures import quiet_logs
from leanloop.agent import LLMAgent
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

STEPS = 200
WINDOW = 32_768


async def _lookup(key: str) -> str:
    """Return the rows stored under a key."""
    return "\n".join(f"{key} row {row}: status=ok latency={row * 7 % 97} ms" for row in range(50))


def _agent() -> LLMAgent:
    model = ScriptedChatModel()

    def call_tool(messages: list[BaseMessage]) -> dict[str, object]:
        model.requests.clear()  # the test double's recording is not the loop's memory
        return {"tool_calls": [{"name": "lookup", "args": {"key": f"k{len(messages)}"}}]}

    model.replies = [call_tool] * STEPS + ["All 200 keys were looked up."]
    tool: BaseTool = StructuredTool.from_function(coroutine=_lookup, name="lookup")
    spec = AgentSpec(
        name="bench",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel", context_window=WINDOW),
        max_rounds=250,
    )
    return LLMAgent.from_spec(spec, model=model, tools=[tool])


def _run(agent: LLMAgent) -> None:
    reply = agent.invoke("Look up every key.")
    report = reply.response_metadata["leanloop"]
    if report["steps"] < STEPS or report["stop_reason"] != "answer":
        msg = f"the run ended early: {report['stop_reason']} after {report['steps']} steps"
        raise RuntimeError(msg)


class Run200Steps:
    """Peak memory and wall time of one 200-step run."""

    timeout = 120
    number = 1
    repeat = (1, 5, 20.0)

    def setup(self) -> None:
        quiet_logs()
        self.agent = _agent()

    def peakmem_run_200_steps(self) -> None:
        """The process's peak resident memory (imports included) after one run."""
        _run(self.agent)

    def track_run_200_steps_traced_peak(self) -> int:
        """The most memory Python held at once during the run, above what it held before."""
        tracemalloc.start()
        try:
            _run(self.agent)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    track_run_200_steps_traced_peak.unit = "bytes"  # type: ignore[attr-defined]

    def time_run_200_steps(self) -> None:
        _run(self.agent)
