"""Peak memory of 100 concurrent runs: leanloop's loop beside LangChain v1 ``create_agent``.

Issue 40's acceptance figure ("100-concurrent peak memory ≤ 1.0× ``create_agent``"). Both
agents get the same fake chat model (``benchmarks.per_call.FakeModel``: four tool calls,
then an answer) and the same ``async def lookup`` tool, which returns ``--result-chars``
characters of text no other call returns (so no string is shared between calls or runs).
``--concurrent`` runs (100) start together under one ``asyncio.gather``.

Each side is measured in a fresh subprocess (``--repeats`` times, the sides interleaved),
so neither side's caches, interned strings or allocator arenas help the other; both
subprocesses import the same modules (leanloop and ``langchain.agents``) and warm their
agent with a few runs before the measurement starts.

Two measures, both above the baseline taken just before the gather:

* ``traced peak`` (the ratio and the exit status): ``tracemalloc``'s peak of Python
  allocations during the gather. It is deterministic, counts what the runs allocate and
  nothing else (not the import baseline, not free pymalloc arenas), and its snapshots
  name the lines that hold the memory (``--top``).
* ``RSS high-water`` (a cross-check, untraced): ``VmHWM`` minus ``VmRSS``, after the
  high-water mark was reset with ``/proc/self/clear_refs`` (Linux); it includes what the
  allocator keeps and is noisier. ``n/a`` where the mark cannot be reset.

``held`` is the traced memory still allocated once the gather returned (the 100 replies
are still referenced); ``left`` is what stays after the replies are dropped and
``gc.collect()`` ran (memory a finished run leaves behind).

Run: ``python benchmarks/concurrent_memory.py [--concurrent 100] [--result-chars 10000]
[--repeats 3] [--top 0]``; needs ``langchain`` (v1). Exits 1 when the traced-peak ratio
(leanloop ÷ ``create_agent``, median of the repeats) is over ``--goal`` (1.0).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import os
import statistics
import subprocess
import sys
import tracemalloc
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make ``benchmarks`` importable as ASV does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import BaseTool, StructuredTool

from benchmarks.bench_fixtures import quiet_logs
from benchmarks.per_call import ROUNDS, FakeModel
from leanloop.agent import LLMAgent
from leanloop.spec.types import AgentSpec, ModelSpec

SIDES = ("leanloop", "create_agent")
WINDOW = 50_000_000
"""A context window no run here fills: nothing is trimmed or cut on either side."""
WARM_RUNS = 4


def lookup_tool(result_chars: int) -> BaseTool:
    """``lookup``: ``result_chars`` characters of text unique to the call."""
    nonce = itertools.count()

    async def lookup(key: str) -> str:
        """Return the value stored under a key."""
        head = f"value of {key} (call {next(nonce)}): "
        body = "row=ok " * (result_chars // 7 + 1)
        return (head + body)[:result_chars] if result_chars > len(head) else head

    return StructuredTool.from_function(coroutine=lookup, name="lookup")


def question() -> list[BaseMessage]:
    return [HumanMessage("Look up four keys.")]


def leanloop_run(result_chars: int) -> Callable[[], Awaitable[Any]]:
    spec = AgentSpec(
        name="bench",
        model=ModelSpec(class_path="benchmarks.per_call:FakeModel", context_window=WINDOW),
        max_rounds=ROUNDS + 5,
    )
    agent = LLMAgent.from_spec(spec, model=FakeModel(), tools=[lookup_tool(result_chars)])

    async def run() -> Any:
        reply = await agent.ainvoke(question())
        report = reply.response_metadata["leanloop"]
        if report["stop_reason"] != "answer" or report["steps"] != ROUNDS + 1:
            msg = f"leanloop ended otherwise: {report['stop_reason']} ({report['steps']} steps)"
            raise RuntimeError(msg)
        return reply

    return run


def create_agent_run(result_chars: int) -> Callable[[], Awaitable[Any]]:
    from langchain.agents import create_agent  # noqa: PLC0415 - optional, langchain v1

    agent = create_agent(FakeModel(), [lookup_tool(result_chars)])

    async def run() -> Any:
        state = await agent.ainvoke({"messages": question()})
        if state["messages"][-1].content != "done":
            msg = "create_agent ended otherwise"
            raise RuntimeError(msg)
        return state

    return run


def _status_kb(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_high_water() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as refs:
            refs.write("5")
    except OSError:
        return False
    return True


async def _measure(side: str, concurrent: int, result_chars: int, top: int) -> dict[str, Any]:
    import langchain.agents  # noqa: F401, PLC0415 - the same imports on both sides

    run = (leanloop_run if side == "leanloop" else create_agent_run)(result_chars)
    for _ in range(WARM_RUNS):
        await run()
    await asyncio.gather(*(run() for _ in range(4)))

    # Untraced: the RSS high-water mark of the gather, above the RSS before it.
    gc.collect()
    rss_peak = None
    if _reset_high_water():
        before = _status_kb("VmRSS")
        replies = await asyncio.gather(*(run() for _ in range(concurrent)))
        high = _status_kb("VmHWM")
        if before is not None and high is not None:
            rss_peak = (high - before) * 1024
        del replies
    gc.collect()

    # Traced: Python allocations during the gather.
    tracemalloc.start(25 if top else 1)
    start_snap = tracemalloc.take_snapshot() if top else None
    base = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    replies = await asyncio.gather(*(run() for _ in range(concurrent)))
    current, peak = tracemalloc.get_traced_memory()
    held_snap = tracemalloc.take_snapshot() if top else None
    del replies
    for _ in range(3):  # let the finished tasks' last callbacks run
        await asyncio.sleep(0)
    gc.collect()
    left = tracemalloc.get_traced_memory()[0] - base
    left_snap = tracemalloc.take_snapshot() if top else None
    tracemalloc.stop()
    out: dict[str, Any] = {
        "side": side,
        "peak": peak - base,
        "held": current - base,
        "left": left,
        "rss_peak": rss_peak,
    }
    if top and start_snap and held_snap and left_snap:
        out["top_held"] = _top(held_snap, start_snap, top)
        out["top_left"] = _top(left_snap, start_snap, top)
    return out


def _top(snapshot: Any, start: Any, count: int) -> list[str]:
    stats = snapshot.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)]).compare_to(
        start.filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)]), "traceback"
    )
    lines = []
    for stat in stats[:count]:
        frames = [
            f"{frame.filename.split('site-packages/')[-1].split('/src/')[-1]}:{frame.lineno}"
            for frame in stat.traceback
            if "asyncio" not in frame.filename
        ]
        lines.append(
            f"{stat.size_diff / 1024:+,.0f} KiB {stat.count_diff:+,} blocks  "
            + " < ".join(frames[-1:-6:-1])
        )
    return lines


def _child(side: str, concurrent: int, result_chars: int, top: int) -> int:
    quiet_logs()
    print(json.dumps(asyncio.run(_measure(side, concurrent, result_chars, top))))
    return 0


def _spawn(side: str, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        side,
        "--concurrent",
        str(args.concurrent),
        "--result-chars",
        str(args.result_chars),
        "--top",
        str(args.top),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=os.environ)
    if done.returncode:
        msg = f"{side} child failed ({done.returncode}):\n{done.stderr[-3000:]}"
        raise RuntimeError(msg)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _mib(value: float | None) -> str:
    return "n/a" if value is None else f"{value / 2**20:,.2f} MiB"


def table(results: dict[str, list[dict[str, Any]]], concurrent: int) -> tuple[str, float]:
    medians: dict[str, dict[str, float | None]] = {}
    for side, rows in results.items():
        medians[side] = {}
        for key in ("peak", "held", "left", "rss_peak"):
            values = [row[key] for row in rows if row[key] is not None]
            medians[side][key] = statistics.median(values) if values else None
    lines = [
        f"| side | traced peak ({concurrent} concurrent) | per run | held after gather "
        "| left after drop + gc | RSS high-water above start |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for side in SIDES:
        row = medians[side]
        peak = row["peak"] or 0.0
        lines.append(
            f"| {side} | {_mib(peak)} | {peak / concurrent / 1024:,.0f} KiB | {_mib(row['held'])}"
            f" | {_mib(row['left'])} | {_mib(row['rss_peak'])} |"
        )
    ratios = [
        a["peak"] / b["peak"]
        for a, b in zip(results["leanloop"], results["create_agent"], strict=True)
    ]
    ratio = statistics.median(ratios)
    lines.append("")
    lines.append(
        f"traced-peak ratio leanloop ÷ create_agent: {ratio:.2f} (median of "
        f"{len(ratios)} pairs: {', '.join(f'{r:.2f}' for r in ratios)})"
    )
    rss = [
        a["rss_peak"] / b["rss_peak"]
        for a, b in zip(results["leanloop"], results["create_agent"], strict=True)
        if a["rss_peak"] and b["rss_peak"]
    ]
    if rss:
        lines.append(
            f"RSS high-water ratio: {statistics.median(rss):.2f} "
            f"({', '.join(f'{r:.2f}' for r in rss)})"
        )
    return "\n".join(lines), ratio


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--concurrent", type=int, default=100)
    parser.add_argument("--result-chars", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--goal", type=float, default=1.0)
    parser.add_argument("--top", type=int, default=0, help="print N tracemalloc lines per side")
    parser.add_argument("--child", choices=SIDES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        return _child(args.child, args.concurrent, args.result_chars, args.top)
    results: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    for repeat in range(args.repeats):
        for side in SIDES if repeat % 2 == 0 else tuple(reversed(SIDES)):
            results[side].append(_spawn(side, args))
    print(
        f"{args.concurrent} concurrent runs · {ROUNDS} tool calls of "
        f"{args.result_chars:,} chars then an answer · Python {sys.version.split()[0]} · "
        f"fresh subprocess per side, {args.repeats} repeats, medians"
    )
    print()
    text, ratio = table(results, args.concurrent)
    print(text)
    if args.top:
        for side in SIDES:
            for key in ("top_held", "top_left"):
                print(f"\n{side} · {key} (last repeat):")
                for line in results[side][-1].get(key, []):
                    print("  " + line)
    if ratio > args.goal:
        print(f"over {args.goal}x create_agent")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
