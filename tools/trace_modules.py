"""Trace one scripted run's calls that cross from one ``leanloop`` module to another.

Issue 27 measures how a run's data goes back and forth between modules. Under
``sys.setprofile`` every call whose caller and callee are different ``leanloop.*``
modules is recorded (a coroutine or generator counts once, at its start, not at each
resumption; :mod:`leanloop.testing`, the run's "server", is left out). Two views:

- the run's *path*: the conversation of the modules that order the run
  (``agent.runnable`` and ``loop.driver``) with every other module: each call out is a
  stop in the callee and its return a stop back in the caller;
- *all* calls across modules, at any depth.

A *return* is a stop in a module the path had already been in and left. ``budget``
entries are calls from outside ``leanloop.budget`` into it, grouped by how many model
requests had been sent when they were made (group 0: the setup, the prefetch and the
first request's preparation). The run is fixed (a scripted model, three tool rounds of
``read_file`` in a 4,096-token window, so results are trimmed), so the numbers only
change when the code does::

    python tools/trace_modules.py --save benchmarks/results/trace_modules.json \
        --baseline benchmarks/results/trace_modules-baseline.json
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import itertools
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = ["main", "trace_run"]

_PACKAGE = "leanloop"
_SPINE = ("leanloop.agent.runnable", "leanloop.loop.driver")
"""The modules that order a run: the path follows their calls out and back."""
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR


def _module(frame: FrameType | None) -> str | None:
    name = frame.f_globals.get("__name__", "") if frame is not None else ""
    if name == _PACKAGE or name.startswith(f"{_PACKAGE}."):
        # The testing double is the "server" of this run, not part of the run's code.
        return None if name.startswith(f"{_PACKAGE}.testing") else name
    return None


def _caller_module(frame: FrameType) -> str | None:
    """The nearest ``leanloop`` module up the stack (library frames in between skipped)."""
    seen = frame.f_back
    while seen is not None:
        name = seen.f_globals.get("__name__", "")
        if name.startswith(f"{_PACKAGE}.testing"):
            return None
        module = _module(seen)
        if module is not None:
            return module
        seen = seen.f_back
    return None


def _script(workspace: Path) -> tuple[Any, Any]:
    """The fixed run: two rounds of reads in a small window, then an answer."""
    from leanloop import LLMAgent  # noqa: PLC0415 - imported after the profiler is ready
    from leanloop.testing import ScriptedChatModel  # noqa: PLC0415

    for index in range(4):
        lines = [f"line {n} of part {index}: " + "lorem ipsum dolor " * 6 for n in range(90)]
        (workspace / f"part{index}.txt").write_text("\n".join(lines) + "\n")

    def call(path: str, call_id: str) -> dict[str, Any]:
        return {"name": "read_file", "args": {"path": path}, "id": call_id}

    model = ScriptedChatModel(
        replies=[
            {"content": "", "tool_calls": [call("part1.txt", "c1")]},
            {"content": "", "tool_calls": [call("part2.txt", "c2"), call("nope.txt", "c3")]},
            {"content": "", "tool_calls": [call("part3.txt", "c4")]},
            "The parts hold lorem ipsum.",
        ],
        report_usage=True,
    )
    agent = LLMAgent(
        model=model,
        tools=["read_file"],
        workspace=str(workspace),
        context_window=4096,
        max_rounds=4,
        allow_tool_output_pruning=False,
        trim_keep_steps=1,
    )
    return agent, model


def trace_run() -> dict[str, Any]:
    """Run the fixed script under ``sys.setprofile``; return the figures."""
    with tempfile.TemporaryDirectory() as folder:
        agent, model = _script(Path(folder))
        stops: list[tuple[str, str, str]] = []  # (caller module, callee module, function)
        step_of: list[int] = []

        started: dict[int, FrameType] = {}  # held, so that no id is reused during the run

        def profile(frame: FrameType, event: str, _arg: Any) -> None:
            if event != "call":
                return
            if frame.f_code.co_flags & _RESUMABLE:
                # A coroutine or generator is "called" again at each resumption: only its
                # first start is a call.
                if id(frame) in started:
                    return
                started[id(frame)] = frame
            callee = _module(frame)
            if callee is None:
                return
            caller = _caller_module(frame)
            if caller is None or caller == callee:
                return
            stops.append((caller, callee, frame.f_code.co_name))
            step_of.append(len(model.requests))

        async def go() -> Any:
            sys.setprofile(profile)
            try:
                return await agent.ainvoke("What do part0.txt and the other parts hold?")
            finally:
                sys.setprofile(None)

        answer = asyncio.run(go())
    report = answer.response_metadata["leanloop"]
    # The run's path: the conversation of the code that orders the run (the agent and
    # the driver) with every other module: each call out is a stop there, and its
    # return a stop back in the caller.
    path = [_SPINE[0]]
    for caller, callee, _ in stops:
        if caller in _SPINE:
            path += [callee, caller]
    everything = [caller for caller, _, _ in stops[:1]] + [callee for _, callee, _ in stops]
    budget_per_step: Counter[int] = Counter()
    for (caller, callee, _), step in zip(stops, step_of, strict=True):
        if callee.startswith(f"{_PACKAGE}.budget") and not caller.startswith(f"{_PACKAGE}.budget"):
            budget_per_step[step] += 1
    entries = Counter(path[1:])
    return {
        "answer": answer.text,
        "stop_reason": report["stop_reason"],
        "requests": len(report["requests"]),
        "trimmed_results": report.get("trimmed_results"),
        "stops": len(path) - 1,
        "modules": len(set(path)),
        "returns": _returns(path),
        "entries": dict(entries.most_common()),
        "all_stops": len(stops),
        "all_modules": len(set(everything)),
        "all_returns": _returns(everything),
        "budget_entries_per_step": {str(k): v for k, v in sorted(budget_per_step.items())},
        "driver_entries": entries.get(f"{_PACKAGE}.loop.driver", 0),
        "budget_entries": sum(n for m, n in entries.items() if m.startswith("leanloop.budget")),
    }


def _returns(path: list[str]) -> int:
    """Stops in a module the path had already been in and left."""
    left: set[str] = set()
    count = 0
    for previous, module in itertools.pairwise(path):
        if module == previous:
            continue
        left.add(previous)
        count += module in left
    return count


def _table(now: dict[str, Any], before: dict[str, Any] | None) -> str:
    rows = [
        ("path: stops", "stops"),
        ("path: distinct modules", "modules"),
        ("path: returns to a module left", "returns"),
        ("path: loop.driver entries", "driver_entries"),
        ("path: budget entries", "budget_entries"),
        ("all calls across modules", "all_stops"),
        ("all: distinct modules", "all_modules"),
        ("all: returns to a module left", "all_returns"),
        ("requests", "requests"),
        ("trimmed results", "trimmed_results"),
    ]
    head = f"{'figure':<36} {'baseline':>9} {'now':>9}" if before else f"{'figure':<36} {'now':>9}"
    lines = [head, "-" * len(head)]
    for label, key in rows:
        value = now.get(key)
        if before:
            lines.append(f"{label:<36} {before.get(key)!s:>9} {value!s:>9}")
        else:
            lines.append(f"{label:<36} {value!s:>9}")
    if before and before.get("returns"):
        cut = 1 - now["returns"] / before["returns"]
        lines.append(f"{'returns cut by':<36} {'':>9} {cut:>8.0%}")
    lines.append("")
    lines.append("path: entries per module (top 10):")
    for module, count in list(now["entries"].items())[:10]:
        was = (before or {}).get("entries", {}).get(module, "-")
        lines.append(
            f"  {module:<34} {was!s:>9} {count:>9}" if before else f"  {module:<34} {count:>9}"
        )
    lines.append("")
    lines.append("budget entered per step (from outside leanloop.budget):")
    steps = sorted(
        set(now["budget_entries_per_step"])
        | set((before or {}).get("budget_entries_per_step", {})),
        key=int,
    )
    for step in steps:
        value = now["budget_entries_per_step"].get(step, 0)
        if before:
            was = before.get("budget_entries_per_step", {}).get(step, 0)
            lines.append(f"  request {step:<26} {was!s:>9} {value!s:>9}")
        else:
            lines.append(f"  request {step:<26} {value!s:>9}")
    lines.append("")
    lines.append(f"run: {now['stop_reason']}, answer {now['answer']!r}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Trace the run, print the figures (next to a baseline), optionally save them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="figures saved earlier, printed alongside")
    parser.add_argument("--save", type=Path, help="write this run's figures here (JSON)")
    args = parser.parse_args(argv)
    now = trace_run()
    before = json.loads(args.baseline.read_text()) if args.baseline else None
    print(_table(now, before))
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        args.save.write_text(json.dumps(now, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
