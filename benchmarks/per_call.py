"""Per model call: leanloop's loop beside LangChain v1 ``create_agent``, paired and interleaved.

Issue 40's acceptance figure. Both agents get the same fake chat model (no latency, no
recording) and the same ``async def`` tool; each run starts from a history of N messages
(a question and N-1 earlier turns), makes ``ROUNDS`` tool calls and then answers, so a run
is ``ROUNDS + 1`` model calls. The figure is a run's time divided by its model calls;
the ratio is the median of the paired ratios (leanloop ÷ ``create_agent``, the two runs
of a pair back to back, in alternating order).

Run: ``python benchmarks/per_call.py [--samples 30] [--messages 9,99,999,4999]``; needs
``langchain`` (v1, for ``create_agent``). Exits 1 when a ratio is over ``--goal`` (0.5).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make ``benchmarks`` importable as ASV does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from benchmarks.bench_fixtures import quiet_logs
from leanloop.agent import LLMAgent
from leanloop.spec.types import AgentSpec, ModelSpec

ROUNDS = 4
"""Tool calls a run makes before it answers."""
LEVELS = (9, 99, 999, 4999)
WINDOW = 50_000_000
"""A context window no history here reaches: the figure is the loop's, not trimming's."""


class FakeModel(BaseChatModel):
    """Calls ``lookup`` until the run holds ``ROUNDS`` tool results, then answers."""

    @property
    def _llm_type(self) -> str:
        return "per-call-fake"

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        schemas = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=schemas, **kwargs)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **_: Any
    ) -> ChatResult:
        done = 0
        for message in reversed(messages):
            if isinstance(message, HumanMessage):
                break
            done += isinstance(message, ToolMessage)
        if done < ROUNDS:
            call = {"name": "lookup", "args": {"key": f"k{done}"}, "id": f"call{done}"}
            reply = AIMessage(content="", tool_calls=[call])
        else:
            reply = AIMessage(content="done")
        return ChatResult(generations=[ChatGeneration(message=reply)])

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        return self._generate(messages, stop, None, **kw)


async def _lookup(key: str) -> str:
    """Return the value stored under a key."""
    return f"value of {key}"


def tool() -> BaseTool:
    return StructuredTool.from_function(coroutine=_lookup, name="lookup")


def history(size: int) -> list[BaseMessage]:
    """``size`` messages: earlier question/answer turns, then the question."""
    past: list[BaseMessage] = []
    for turn in range((size - 1) // 2):
        past += [HumanMessage(f"question {turn}?"), AIMessage(f"answer {turn}.")]
    if len(past) < size - 1:
        past.append(AIMessage("earlier note."))
    return [*past, HumanMessage("Look up four keys.")]


def leanloop_run() -> Callable[[list[BaseMessage]], Any]:
    spec = AgentSpec(
        name="bench",
        model=ModelSpec(class_path="benchmarks.per_call:FakeModel", context_window=WINDOW),
        max_rounds=ROUNDS + 5,
    )
    agent = LLMAgent.from_spec(spec, model=FakeModel(), tools=[tool()])

    async def run(messages: list[BaseMessage]) -> None:
        reply = await agent.ainvoke(messages)
        report = reply.response_metadata["leanloop"]
        if report["stop_reason"] != "answer" or report["steps"] != ROUNDS + 1:
            msg = f"leanloop ended otherwise: {report['stop_reason']} ({report['steps']} steps)"
            raise RuntimeError(msg)

    return run


def create_agent_run() -> Callable[[list[BaseMessage]], Any]:
    from langchain.agents import create_agent  # noqa: PLC0415 - optional, langchain v1

    agent = create_agent(FakeModel(), [tool()])

    async def run(messages: list[BaseMessage]) -> None:
        state = await agent.ainvoke({"messages": messages})
        if state["messages"][-1].content != "done":
            msg = "create_agent ended otherwise"
            raise RuntimeError(msg)

    return run


async def measure(size: int, samples: int) -> dict[str, Any]:
    """Per-call seconds of each side and the paired ratios, ``samples`` pairs."""
    runs = {"leanloop": leanloop_run(), "create_agent": create_agent_run()}
    messages = history(size)
    for run in runs.values():  # warm both
        for _ in range(2):
            await run(list(messages))
    times: dict[str, list[float]] = {name: [] for name in runs}
    for sample in range(samples):
        order = list(runs) if sample % 2 else list(reversed(runs))
        for name in order:
            copy = list(messages)
            gc.collect()
            started = time.perf_counter()
            await runs[name](copy)
            times[name].append((time.perf_counter() - started) / (ROUNDS + 1))
    ratios = [a / b for a, b in zip(times["leanloop"], times["create_agent"], strict=True)]
    return {
        "leanloop": statistics.median(times["leanloop"]),
        "create_agent": statistics.median(times["create_agent"]),
        "ratio": statistics.median(ratios),
        "ratio_q": statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3,
    }


def table(results: dict[int, dict[str, Any]]) -> str:
    lines = [
        "| messages | leanloop per call | create_agent per call | ratio (median of pairs) | IQR |",
        "|---:|---:|---:|---:|---|",
    ]
    for size, row in results.items():
        low, _, high = row["ratio_q"]
        lines.append(
            f"| {size:,} | {row['leanloop'] * 1e6:,.0f} µs | {row['create_agent'] * 1e6:,.0f} µs"
            f" | {row['ratio']:.2f} | {low:.2f}–{high:.2f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--messages", default=",".join(map(str, LEVELS)))
    parser.add_argument("--goal", type=float, default=0.5)
    args = parser.parse_args(argv)
    quiet_logs()
    sizes = [int(part) for part in args.messages.split(",") if part]
    results = {size: asyncio.run(measure(size, args.samples)) for size in sizes}
    print(table(results))
    over = [size for size, row in results.items() if row["ratio"] > args.goal]
    if over:
        print(f"over {args.goal}x create_agent at {', '.join(map(str, over))} messages")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
