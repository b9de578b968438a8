"""A client that goes away while an MCP tool call is in flight: the run is cancelled, the
stdio MCP server it started is gone, nothing is left behind, and no traceback is logged.

The companion of ``test_disconnect.py`` (whose tool waits on a child process of its
own): here the tool is ``mcp:probe/wait_here`` of a real stdio FastMCP server, a child
process of the server's run (one MCP session per server per run, ADR 0018). The call
writes a marker file, then blocks in a synchronous ``time.sleep``: the server is stuck,
so closing its stdin does not end it; only the run's cancellation (which kills it) does.

A real uvicorn on 127.0.0.1 (conftest.py's ``start_server``) and a raw socket as the
client, closed mid-stream (after the call began) and before any answer began (then
``499 client_closed_request`` is logged). Nothing waits on the clock to show a timeout:
the only waits are bounded polls on real processes and on the server noticing.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

__all__: list[str] = []

START_S = 120.0
"""Seconds the MCP server may take to start: Python servers import slowly on a busy box."""

GONE_S = 10.0
"""Seconds the server may take to notice the closed socket and end the run and its server."""


@dataclass
class Probe:
    """The agents file of the ``waiter`` agent, its MCP server's script, and its traces."""

    folder: Path
    script: Path

    @property
    def log(self) -> Path:
        """Every server process started appends its ID here (the tool listing's too)."""
        return self.folder / "started.log"

    @property
    def marker(self) -> Path:
        return self.folder / "waiting"

    def write(self) -> str:
        """Write the server's script and the agents file; return the file's name."""
        script = self.script
        wait = {"tool_calls": [{"name": "wait_here", "args": {}}]}
        document = {
            "version": 1,
            "mcp_servers": {
                "probe": {
                    "command": sys.executable,
                    "args": [str(script), str(self.log)],
                    "timeout": START_S,
                }
            },
            "agents": {
                "waiter": {
                    "description": "Calls an MCP tool that never answers.",
                    "model": {
                        "class": "leanloop.testing:ScriptedChatModel",
                        "kwargs": {"replies": [wait, "never reached"]},
                    },
                    "tools": ["mcp:probe/wait_here"],
                    "tool_timeout": START_S,
                }
            },
        }
        name = "mcp_agents.yaml"
        (self.folder / name).write_text(json.dumps(document))  # JSON is YAML
        return name

    def started(self) -> list[int]:
        """The IDs of every server process started so far, in order."""
        return [int(line) for line in self.log.read_text().split()] if self.log.exists() else []

    def call_in_flight(self) -> int:
        """The ID of the server process whose ``wait_here`` call began (bounded wait).

        The marker is written by the server process, in the call: there is no event of
        this process to wait on, so it is polled (the client's socket is still open).
        """
        deadline = time.monotonic() + START_S
        while not self.marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self.marker.exists(), "the MCP tool call never began"
        return int(self.marker.read_text())


@pytest.fixture
def probe(agents_file: Path, mcp_probe_server: Path) -> Probe:
    for module in ("langchain_mcp_adapters", "mcp"):
        if importlib.util.find_spec(module) is None:
            pytest.fail(
                f"{module} is not installed: this test needs the leanloop[mcp] extra "
                "(pip install 'leanloop[mcp]')"
            )
    return Probe(agents_file.parent, mcp_probe_server)


@pytest.fixture
def app(probe: Probe, make_app: Callable[..., FastAPI]) -> FastAPI:
    return make_app(probe.write())


def question(stream: bool) -> dict[str, Any]:
    return {"model": "waiter", "stream": stream, "messages": [{"role": "user", "content": "Go"}]}


def children() -> set[int]:
    """The IDs of this process's child processes, zombies included (Linux's /proc)."""
    me = str(os.getpid())
    found: set[int] = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it ended meanwhile
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses.
        if stat.rpartition(")")[2].split()[1] == me:
            found.add(int(entry.name))
    return found


def until(done: Callable[[], bool], within: float = GONE_S) -> bool:
    """Poll ``done`` (real processes, another thread's state) for at most ``within`` s."""
    deadline = time.monotonic() + within
    while not done():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


def ran_and_ended(app: FastAPI, probe: Probe, pid: int, before: set[int], raw: Any) -> None:
    """The run was cancelled, its MCP server killed and reaped, and nothing else is left."""
    assert until(lambda: app.state.limit.in_flight == 0), "the run went on after the disconnect"
    # Cancelled, not failed: a call that failed (its server gone) would have been answered
    # with an error and the model asked again; it was asked once, for the call in flight.
    model = app.state.agents["waiter"].model
    assert len(model.requests) == 1, [r.messages for r in model.requests]
    assert until(lambda: not raw.alive(pid)), f"the MCP server {pid} outlived the run"
    started = probe.started()
    # The tool listing's server (when the agent was built) and the run's.
    assert pid in started, started
    assert until(lambda: not any(map(raw.alive, started))), f"MCP servers left: {started}"
    # No child of the serving process is left either, not even an unreaped zombie.
    assert until(lambda: not children() - before), f"children left: {children() - before}"


def test_a_client_gone_mid_stream_cancels_the_run_and_its_mcp_server(
    app: FastAPI,
    probe: Probe,
    start_server: Callable[[FastAPI], str],
    *,
    caplog: pytest.LogCaptureFixture,
    no_tracebacks: Callable[[], None],
    raw: Any,
) -> None:
    base_url = start_server(app)
    before = children()
    with caplog.at_level(logging.INFO):
        sock = raw.send_request(base_url, question(stream=True), timeout=START_S)
        received = raw.read_until(sock, b": leanloop tool_start")
        assert received.startswith(b"HTTP/1.1 200")
        pid = probe.call_in_flight()
        assert raw.alive(pid)
        assert app.state.limit.in_flight == 1
        sock.close()
        ran_and_ended(app, probe, pid, before, raw)
    no_tracebacks()


def test_a_client_gone_before_the_answer_cancels_the_run_and_its_mcp_server(
    app: FastAPI,
    probe: Probe,
    start_server: Callable[[FastAPI], str],
    *,
    caplog: pytest.LogCaptureFixture,
    no_tracebacks: Callable[[], None],
    raw: Any,
) -> None:
    base_url = start_server(app)
    before = children()
    with caplog.at_level(logging.INFO):
        sock = raw.send_request(base_url, question(stream=False), timeout=START_S)
        pid = probe.call_in_flight()
        assert raw.alive(pid)
        sock.close()  # nothing answered yet: only the closed connection tells
        ran_and_ended(app, probe, pid, before, raw)
        # Logged once the cancelled run has ended (after its slot was freed).
        assert until(
            lambda: any("499 client_closed_request" in r.getMessage() for r in caplog.records)
        ), [r.getMessage() for r in caplog.records]
    no_tracebacks()
