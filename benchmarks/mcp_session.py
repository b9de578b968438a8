"""What one MCP session per run saves: a run with three calls to ``mcp-server-time``.

Usage::

    python benchmarks/mcp_session.py [--rounds 3]

An agent whose scripted model calls ``get_current_time`` three times (three rounds, one
call each), then answers, is run with the time server over stdio, two ways:

- **per call** (before ADR 0018's amendment): every call opens a session of its own, so
  the server is started for every call. This is what a call does when its run has no
  session pool; the benchmark takes that path by making the pool decline every call.
- **per run** (now): the run's first call starts the server, the others reuse it, and
  the session is closed when the run ends.

The server is started through a small launcher that appends its process ID to a log
before it ``exec``\\ s the server (same process), so the table counts the server
processes each run really started; building the agent (which starts the server once to
list its tools) is not counted. After each run the benchmark checks that none of them is
left. The table gives the median wall seconds of a run and the processes per run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from leanloop.agent import LLMAgent
from leanloop.tools.mcp import McpSessions

__all__: list[str] = []

CALLS = ("UTC", "Europe/Paris", "Asia/Tokyo")
"""One call per round, each with its own time zone (the loop guard stops repeats)."""

LAUNCH = (
    "import os, sys; log = sys.argv[1];"
    " open(log, 'a').write(f'{os.getpid()}\\n');"
    " os.execv(sys.executable, [sys.executable, *sys.argv[2:]])"
)
"""Record the process ID, then become the server (``exec``: the same process)."""

PER_CALL, PER_RUN = "per call (before)", "per run (now)"


def _agents_file(folder: Path, log: Path) -> Path:
    replies: list[Any] = [
        {"tool_calls": [{"name": "get_current_time", "args": {"timezone": zone}}]} for zone in CALLS
    ]
    replies.append("It is the same moment in three places.")
    document = {
        "version": 1,
        "mcp_servers": {
            "time": {
                "command": sys.executable,
                "args": ["-c", LAUNCH, str(log), "-m", "mcp_server_time"],
                "timeout": 120,
            }
        },
        "agents": {
            "clock": {
                "model": {
                    "class": "leanloop.testing:ScriptedChatModel",
                    "kwargs": {"replies": replies},
                },
                "tools": ["mcp:time/get_current_time"],
                "tool_timeout": 120,
            }
        },
    }
    path = folder / "agents.yaml"
    path.write_text(json.dumps(document, indent=2))  # JSON is YAML
    return path


def _pids(log: Path) -> list[int]:
    return [int(line) for line in log.read_text().split()] if log.exists() else []


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process now has the number
        return True
    return True


@contextmanager
def _per_call() -> Iterator[None]:
    """Every call declined by the run's pool: each opens its own session, as before."""

    async def decline(self: McpSessions, server: object) -> None:
        return None

    with mock.patch.object(McpSessions, "session", decline):
        yield


async def _one_run(path: Path, log: Path) -> tuple[float, int, int]:
    """Build the agent, run it once; its wall seconds, servers started, servers left."""
    agent = LLMAgent.from_file(path)  # starts the server once, to list its tools
    before = len(_pids(log))
    started = time.perf_counter()
    answer = await agent.ainvoke("What time is it in UTC, Paris and Tokyo?")
    seconds = time.perf_counter() - started
    report = answer.response_metadata["leanloop"]
    calls = report["tool_calls"]
    if len(calls) != len(CALLS) or not all(call["ok"] for call in calls):
        msg = f"the run's calls did not all succeed: {calls}"
        raise SystemExit(msg)
    pids = _pids(log)[before:]
    await asyncio.sleep(0.2)  # a process just told to exit is reaped by the event loop
    return seconds, len(pids), sum(map(_alive, pids))


def main() -> None:
    """Run both ways ``--rounds`` times, alternating, and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs of each way (default 3)")
    rounds = parser.parse_args().rounds
    results: dict[str, list[tuple[float, int, int]]] = {PER_CALL: [], PER_RUN: []}
    with tempfile.TemporaryDirectory(prefix="leanloop-mcp-bench-") as name:
        folder = Path(name)
        log = folder / "started.log"
        path = _agents_file(folder, log)
        for _ in range(rounds):
            with _per_call():
                results[PER_CALL].append(asyncio.run(_one_run(path, log)))
            results[PER_RUN].append(asyncio.run(_one_run(path, log)))
    print(f"A run with {len(CALLS)} calls to mcp-server-time over stdio; {rounds} runs each")
    print("(median wall seconds of the run; agent building, which lists the tools, excluded).")
    print()
    print("| sessions | run wall s (median) | servers started per run | servers left |")
    print("|---|---:|---:|---:|")
    for way, runs in results.items():
        wall = statistics.median(run[0] for run in runs)
        started = sorted({run[1] for run in runs})
        left = sum(run[2] for run in runs)
        shown = "/".join(map(str, started))
        print(f"| {way} | {wall:.2f} | {shown} | {left} |")
    per_call = statistics.median(run[0] for run in results[PER_CALL])
    per_run = statistics.median(run[0] for run in results[PER_RUN])
    print()
    print(f"per run / per call: {per_run / per_call:.2f} of the time")
    if any(run[2] for runs in results.values() for run in runs):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
