"""Robot keywords for MCP servers in an agents file.

Two real servers: ``mcp-server-time`` from the package index, started by leanloop over
stdio (``python -m mcp_server_time``), and this library's own FastMCP server, started by
the test on 127.0.0.1 and spoken to over streamable HTTP. The agent's main model is
``leanloop.testing:ScriptedChatModel``, declared in the file with its replies.
``leanloop validate --check-models`` runs as a process of its own (:meth:`run_leanloop`).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from aio import run

from leanloop.agent import LLMAgent
from leanloop.exceptions import LeanloopError

DOCS_TOKEN = "robot-docs-token"
START_TIMEOUT_S = 90
"""Seconds a server may take to start: Python servers import slowly on a busy 2-core box."""

_DOCS_SERVER = '''
"""The test's MCP server over streamable HTTP: one documentation search tool."""

import sys

from mcp.server.fastmcp import Context, FastMCP

app = FastMCP("docs", host="127.0.0.1", port=int(sys.argv[1]), log_level="WARNING")


@app.tool()
def search_docs(query: str, ctx: Context) -> str:
    """Search the documentation for a word."""
    request = ctx.request_context.request
    auth = request.headers.get("authorization", "") if request is not None else ""
    seen = "token ok" if auth == "Bearer {token}" else "no token"
    return f"ops.md: the service listens on port 8931 ({{seen}}, query {{query}})"


app.run("streamable-http")
'''


class McpLibrary:
    """Start the test MCP server, write an agents file that uses MCP tools, run it."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._server: subprocess.Popen[bytes] | None = None
        self._url: str | None = None

    def start_test_mcp_server(self, folder: str) -> str:
        """Start the FastMCP docs server on a free port of 127.0.0.1; return its URL."""
        script = Path(folder) / "docs_server.py"
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(_DOCS_SERVER.format(token=DOCS_TOKEN))
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self._server = subprocess.Popen(
            [sys.executable, str(script), str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._server.poll() is not None:
                msg = f"the test MCP server exited with status {self._server.returncode}"
                raise AssertionError(msg)
            with socket.socket() as client:
                if client.connect_ex(("127.0.0.1", port)) == 0:
                    self._url = f"http://127.0.0.1:{port}/mcp"
                    return self._url
            time.sleep(0.2)
        self.stop_test_mcp_server()
        msg = f"the test MCP server did not listen on port {port} within {START_TIMEOUT_S} s"
        raise AssertionError(msg)

    def stop_test_mcp_server(self) -> None:
        """Stop the docs server (if it runs)."""
        if self._server is not None and self._server.poll() is None:
            self._server.terminate()
            try:
                self._server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._server.kill()
                self._server.wait()
        self._server = None

    def write_mcp_agents_file(self, folder: str, docs_url: str) -> str:
        """Write ``agents.yaml``: the time server over stdio, the docs server over HTTP.

        The scripted model first calls one tool of each server, then answers.
        """
        replies: list[Any] = [
            {
                "tool_calls": [
                    {"name": "get_current_time", "args": {"timezone": "UTC"}},
                    {"name": "search_docs", "args": {"query": "port"}},
                ]
            },
            "The service listens on port 8931.",
        ]
        document = {
            "version": 1,
            "mcp_servers": {
                "time": {
                    "command": sys.executable,
                    "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
                    "timeout": START_TIMEOUT_S,
                },
                "docs": {
                    "url": docs_url,
                    "transport": "streamable_http",
                    "headers": {"Authorization": "Bearer ${MCP_DOCS_TOKEN}"},
                    "timeout": START_TIMEOUT_S,
                },
            },
            "agents": {
                "clock": {
                    "model": {
                        "class": "leanloop.testing:ScriptedChatModel",
                        "kwargs": {"replies": replies},
                    },
                    "tools": ["mcp:time/get_current_time", "mcp:docs/search_docs"],
                    "tool_timeout": START_TIMEOUT_S,
                }
            },
        }
        path = Path(folder) / "agents.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2))  # JSON is YAML
        return str(path)

    def write_agents_file_with_server_command(self, folder: str, command: str) -> str:
        """Write ``agents.yaml`` whose one MCP server is started by ``command``."""
        document = {
            "version": 1,
            "mcp_servers": {"ghost": {"command": command, "args": ["--stdio"]}},
            "agents": {
                "clock": {
                    "model": {
                        "class": "leanloop.testing:ScriptedChatModel",
                        "kwargs": {"replies": ["unused"]},
                    },
                    "tools": ["mcp:ghost"],
                }
            },
        }
        path = Path(folder) / "agents.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2))
        return str(path)

    def write_time_agents_file(self, folder: str, *tools: str) -> str:
        """Write ``agents.yaml``: the time server over stdio, and one agent with ``tools``.

        The layout is fixed, so that problems have known positions: ``tools[N]`` of the
        agent ``clock`` is on line ``11 + N``, column 9.
        """
        # A JSON string is a YAML string: the interpreter's path needs no more quoting.
        lines = [
            "version: 1",
            "mcp_servers:",
            "  time:",
            f"    command: {json.dumps(sys.executable)}",
            "    args: [-m, mcp_server_time, --local-timezone, UTC]",
            f"    timeout: {START_TIMEOUT_S}",
            "agents:",
            "  clock:",
            "    model: {class: leanloop.testing:ScriptedChatModel}",
            "    tools:",
            *(f"      - {json.dumps(tool)}" for tool in tools),
        ]
        path = Path(folder) / "agents.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        return str(path)

    def run_leanloop(self, *args: str) -> dict[str, Any]:
        """Run ``python -m leanloop ARGS`` (at most 180 s); its ``rc``, ``stdout``, ``stderr``.

        A run that does not end in time is killed and fails the keyword: a hang is a bug.
        """
        try:
            done = subprocess.run(
                [sys.executable, "-m", "leanloop", *args],
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            msg = f"leanloop {' '.join(args)} did not end within 180 s"
            raise AssertionError(msg) from exc
        return {"rc": done.returncode, "stdout": done.stdout, "stderr": done.stderr}

    def ask_mcp_agent(self, agents_file: str, question: str) -> dict[str, Any]:
        """Run the file's agent; return the answer, the report and the tool messages.

        ``tool_messages`` are the tool messages of the model's last request, each as
        ``{"name": …, "content": …, "content_type": …}`` (the Python type of the content).
        """
        os.environ["MCP_DOCS_TOKEN"] = DOCS_TOKEN
        agent = LLMAgent.from_file(agents_file)
        message = run(agent.ainvoke(question))
        requests = agent.model.requests  # type: ignore[attr-defined]
        tool_messages = [
            {
                "name": m.name,
                "content": m.content,
                "content_type": type(m.content).__name__,
            }
            for m in requests[-1].messages
            if m.type == "tool"
        ]
        return {
            "answer": str(message.content),
            "report": dict(message.response_metadata.get("leanloop", {})),
            "tool_messages": tool_messages,
        }

    def build_agent_expecting_error(self, agents_file: str) -> str:
        """Build the file's agent; return the leanloop error's message (fail if none)."""
        try:
            LLMAgent.from_file(agents_file)
        except LeanloopError as exc:
            return str(exc)
        msg = "the agent was built"
        raise AssertionError(msg)
