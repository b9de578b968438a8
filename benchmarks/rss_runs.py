"""Resident memory across sequential runs of one agent with 30 KB tool results (issue 16).

One ``LLMAgent`` with a zero-latency scripted model runs the same task again and again:
the model calls a tool that returns 30 KB of fresh text eight times, then answers. The
window (65,536 tokens) holds every 30 KB result uncut (the result cap is 20% of it) but
not all eight, so every run trims. Nothing of a finished run may stay behind: the RSS
after 200 runs must be within 10% of the RSS after 20 (a module-level trim cache used to
keep old tool outputs alive: 70 MB grew to 201 MB over 100 runs).

Usage::

    python benchmarks/rss_runs.py [--runs 20,50,100,200] [--steps 8]

Prints the RSS (``VmRSS``, after a ``gc.collect()``) once the first run is done and after
each checkpoint as a Markdown table, then the comparison; exits 1 when the RSS after the
last checkpoint is more than 10% above the RSS after the first.
"""

from __future__ import annotations

import argparse
import gc
import logging
import os
import platform
import resource
import sys
import time
from pathlib import Path

if __name__ == "__main__":  # run as a script: make ``benchmarks`` importable as ASV does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

from leanloop.agent import LLMAgent
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

RESULT_BYTES = 30_000
WINDOW = 65_536
LIMIT = 1.10


def _page(number: int, nonce: int) -> str:
    """30 KB of text no other call returns (so no string is shared between runs)."""
    line = f"page {number} run {nonce}: status=ok rows=" + "x" * 40 + "\n"
    return (f"{number}.txt ({nonce})\n" + line * (RESULT_BYTES // len(line) + 1))[:RESULT_BYTES]


def build_agent(steps: int) -> LLMAgent:
    """The agent: ``steps`` tool calls of 30 KB each, then an answer, every run."""
    model = ScriptedChatModel(repeat_last=True)
    nonce = iter(range(10**12))

    async def fetch(page: int) -> str:
        """Return one page of the report."""
        return _page(page, next(nonce))

    def reply(messages: list[BaseMessage]) -> dict[str, object]:
        model.requests.clear()  # the test double's record is not the agent's memory
        done = sum(isinstance(m, ToolMessage) for m in messages)
        if done >= steps:
            return {"content": f"Read {done} pages."}
        return {"tool_calls": [{"name": "fetch", "args": {"page": done + 1}}]}

    model.replies = [reply]
    tool: BaseTool = StructuredTool.from_function(coroutine=fetch, name="fetch")
    spec = AgentSpec(
        name="rss",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel", context_window=WINDOW),
        max_rounds=steps + 5,
    )
    return LLMAgent.from_spec(spec, model=model, tools=[tool])


def run_once(agent: LLMAgent, steps: int) -> None:
    reply = agent.invoke("Read every page of the report.")
    report = reply.response_metadata["leanloop"]
    if report["stop_reason"] != "answer" or report["steps"] < steps:
        msg = f"the run ended early: {report['stop_reason']} after {report['steps']} steps"
        raise RuntimeError(msg)
    if not report.get("trimmed_results"):
        msg = "the run trimmed nothing: the window is too big to show a trim cache"
        raise RuntimeError(msg)


def rss_bytes() -> int:
    """The process's resident set now (Linux ``VmRSS``; elsewhere the peak so far)."""
    gc.collect()
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="20,200", help="checkpoints (runs done), ascending")
    parser.add_argument("--steps", type=int, default=8, help="tool calls per run")
    args = parser.parse_args(argv)
    checkpoints = sorted({int(part) for part in args.runs.split(",")})
    if len(checkpoints) < 2 or checkpoints[0] < 1:
        parser.error("--runs needs two or more positive checkpoints")
    logging.getLogger("leanloop").setLevel(logging.ERROR)  # 75%-of-budget warnings
    agent = build_agent(args.steps)
    print(
        f"leanloop · Python {platform.python_version()} · {os.cpu_count()} CPUs · "
        f"{args.steps} tool calls of {RESULT_BYTES // 1000} KB a run, {WINDOW:,}-token window"
    )
    print()
    print("| runs done | RSS | vs. first checkpoint | seconds |")
    print("|---:|---:|---:|---:|")
    run_once(agent, args.steps)
    print(f"| 1 | {rss_bytes() / 2**20:.1f} MB | | |")
    done, started, figures = 1, time.perf_counter(), {}
    for checkpoint in checkpoints:
        while done < checkpoint:
            run_once(agent, args.steps)
            done += 1
        figures[checkpoint] = rss = rss_bytes()
        first = figures[checkpoints[0]]
        print(
            f"| {checkpoint} | {rss / 2**20:.1f} MB | {100 * (rss / first - 1):+.1f}% "
            f"| {time.perf_counter() - started:.1f} |"
        )
    first, last = figures[checkpoints[0]], figures[checkpoints[-1]]
    within = last <= first * LIMIT
    print()
    print(
        f"RSS after {checkpoints[-1]} runs is {100 * (last / first - 1):+.1f}% of the RSS after "
        f"{checkpoints[0]}: {'within' if within else 'OVER'} the 10% limit"
    )
    return 0 if within else 1


if __name__ == "__main__":
    raise SystemExit(main())
