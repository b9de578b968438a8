"""One MCP session per server per run (ADR 0018, amended), with a real stdio server.

The server is a small FastMCP program that appends its process ID to a log when it
starts, so each test counts the server processes a run really started (building the
agent starts one more, to list the tools; it is counted apart). Each run is checked to
leave no server process behind, however it ended.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from leanloop.agent import LLMAgent
from leanloop.spec.types import McpServerSpec
from leanloop.tools.mcp import McpSessions, load_mcp_tools

__all__: list[str] = []

START_S = 120.0
"""Seconds a server may take to start: Python servers import slowly on a busy 2-core box."""

STDIO_GRACE_S = 2.0
"""``mcp.client.stdio.PROCESS_TERMINATION_TIMEOUT``: what a server gets to exit by itself."""


def _call(name: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args}


class Probe:
    """The server's script and its start log, and agents that use it."""

    def __init__(self, folder: Path, script: Path) -> None:
        self.folder = folder
        self.log = folder / "started.log"
        self.script = script

    @property
    def server(self) -> McpServerSpec:
        return McpServerSpec(
            name="probe",
            command=sys.executable,
            args=(str(self.script), str(self.log)),
            timeout=START_S,
        )

    def started(self) -> list[int]:
        """The process IDs of every server started so far, in order."""
        return [int(line) for line in self.log.read_text().split()] if self.log.exists() else []

    def agent(self, replies: list[Any]) -> LLMAgent:
        """An agent with the server's tools and a scripted model answering ``replies``."""
        server = self.server
        document = {
            "version": 1,
            "mcp_servers": {
                "probe": {"command": server.command, "args": list(server.args), "timeout": START_S}
            },
            "agents": {
                "runner": {
                    "model": {
                        "class": "leanloop.testing:ScriptedChatModel",
                        "kwargs": {"replies": replies},
                    },
                    "tools": ["mcp:probe"],
                    "tool_timeout": START_S,
                }
            },
        }
        path = self.folder / "agents.yaml"
        path.write_text(json.dumps(document))  # JSON is YAML
        return LLMAgent.from_file(path)


@pytest.fixture
def probe(tmp_path: Path, mcp_probe_server: Path) -> Probe:
    return Probe(tmp_path, mcp_probe_server)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _left(pids: list[int], *, within: float = 10.0) -> list[int]:
    """The processes of ``pids`` still running after ``within`` seconds (at most)."""
    deadline = time.monotonic() + within
    while (alive := [pid for pid in pids if _alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive


def _tool_texts(agent: LLMAgent) -> list[str]:
    """The tool results the model received last, in order."""
    requests = agent.model.requests  # type: ignore[attr-defined]
    return [str(m.content) for m in requests[-1].messages if isinstance(m, ToolMessage)]


async def test_calls_of_one_run_share_one_server_process(probe: Probe) -> None:
    replies = [{"tool_calls": [_call("whoami", label=f"call {n}")]} for n in (1, 2, 3)]
    agent = probe.agent([*replies, "Three calls."])
    listed = len(probe.started())  # building the agent listed the tools
    answer = await agent.ainvoke("Who are you?")
    assert answer.content == "Three calls."
    during = probe.started()[listed:]
    assert len(during) == 1, f"servers started by the run: {during}"
    texts = _tool_texts(agent)
    assert texts == [f"call {n}: {during[0]}" for n in (1, 2, 3)], texts
    assert _left(during) == []


async def test_each_run_has_its_own_session(probe: Probe) -> None:
    # The scripted model's replies are used in order, across runs.
    first, second = _call("whoami", label="a"), _call("whoami", label="b")
    agent = probe.agent([{"tool_calls": [first]}, "One.", {"tool_calls": [second]}, "Two."])
    listed = len(probe.started())
    assert (await agent.ainvoke("first")).content == "One."
    assert (await agent.ainvoke("second")).content == "Two."
    during = probe.started()[listed:]
    assert len(during) == 2, f"servers started by two runs: {during}"
    assert _left(during) == []


async def test_concurrent_calls_of_one_round_share_the_session(probe: Probe) -> None:
    # Each `meet` call answers only once the other one is in the server too: the two
    # requests are in flight on one session at the same time.
    both = {"tool_calls": [_call("meet", label="left"), _call("meet", label="right")]}
    agent = probe.agent([both, "They met."])
    listed = len(probe.started())
    assert (await agent.ainvoke("Meet.")).content == "They met."
    during = probe.started()[listed:]
    assert len(during) == 1, f"servers started by the run: {during}"
    assert _tool_texts(agent) == [f"left: met in {during[0]}", f"right: met in {during[0]}"]
    assert _left(during) == []


async def test_a_failed_run_leaves_no_server(probe: Probe) -> None:
    agent = probe.agent([{"tool_calls": [_call("whoami", label="x")]}, {"raise": "model gone"}])
    listed = len(probe.started())
    with pytest.raises(Exception, match="model gone"):
        await agent.ainvoke("Fail after a call.")
    during = probe.started()[listed:]
    assert len(during) == 1
    assert _left(during) == []


async def test_a_cancelled_run_stops_the_server_of_its_call_in_flight(probe: Probe) -> None:
    agent = probe.agent([{"tool_calls": [_call("wait_here")]}, "never reached"])
    run = asyncio.create_task(agent.ainvoke("Wait."))
    marker = probe.folder / "waiting"
    deadline = time.monotonic() + START_S
    # Written by the server process: there is no event of this loop to wait on.
    while not marker.exists() and time.monotonic() < deadline and not run.done():  # noqa: ASYNC110
        await asyncio.sleep(0.05)
    assert marker.exists(), "the MCP call never began"
    pid = int(marker.read_text())
    cancelled = time.monotonic()
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        await run
    # Killed, not given mcp's 2 s to exit on its own: after a signal the CLI gives a run
    # 2 s to unwind before it ends the process, which would orphan the server.
    assert time.monotonic() - cancelled < STDIO_GRACE_S
    assert _left([pid], within=0.5) == []


async def test_a_call_outside_a_run_opens_its_own_session(probe: Probe) -> None:
    tool = load_mcp_tools(["mcp:probe/whoami"], {"probe": probe.server})["mcp:probe/whoami"][0]
    listed = len(probe.started())
    content = await tool.ainvoke({"label": "alone"})
    during = probe.started()[listed:]
    assert len(during) == 1
    assert f"alone: {during[0]}" in str(content)
    assert _left(during) == []


async def test_a_closed_pool_declines_and_closing_twice_is_harmless(probe: Probe) -> None:
    sessions = McpSessions()
    session = await sessions.session(probe.server)
    assert session is not None
    assert await sessions.session(probe.server) is session  # the same, not a second start
    await sessions.aclose()
    await sessions.aclose()
    assert await sessions.session(probe.server) is None
    assert len(probe.started()) == 1
    assert _left(probe.started()) == []
