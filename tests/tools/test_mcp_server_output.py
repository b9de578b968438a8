"""A stdio MCP server's stderr goes to its log file, never between leanloop's own lines.

``uvx`` and ``npx`` print download chatter on stderr while they fetch a server
("Installed 12 packages in 30ms", progress bars); it used to land on leanloop's stderr,
mixed with ``validate --check-models``'s verdicts and a run's progress lines. The server
here is a real FastMCP program over stdio that prints such chatter first; ``fail`` makes
it exit with an error line that holds a password and a token instead, ``hang`` makes it
never answer. Every test has a cache folder of its own (``LEANLOOP_CACHE``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import ToolException

from leanloop.exceptions import ToolError
from leanloop.localmodel.paths import cache_paths
from leanloop.spec.types import McpServerSpec
from leanloop.tools import _mcp_connect
from leanloop.tools.mcp import McpSessions, load_mcp_tools, probe_mcp_servers

__all__: list[str] = []

START_S = 120.0
"""Seconds a server may take to start: Python servers import slowly on a busy 2-core box."""

CHATTER = "Installed 12 packages in 30ms"
"""What ``uvx`` prints on stderr before the server starts."""

SECRET = "hunter2"  # noqa: S105 - a made-up password, which must stay hidden
"""A password in the failing server's last line: it must never be shown."""

SERVER = f'''
import sys, time

print({CHATTER!r}, file=sys.stderr, flush=True)
PROGRESS = "\\x1b[2mDownloading mcp\\x1b[0m\\r[===>   ] 40%\\r[=======] 100%"
print(PROGRESS, file=sys.stderr, flush=True)
mode = sys.argv[1] if len(sys.argv) > 1 else ""
if mode == "fail":
    print("error: https://bob:{SECRET}@index.example/simple?token=t0k refused", file=sys.stderr)
    sys.exit(1)
if mode == "hang":
    time.sleep(3600)

from mcp.server.fastmcp import FastMCP

app = FastMCP("chatty", log_level="WARNING")


@app.tool()
def ping() -> str:
    """Answer pong."""
    print("ping was called", file=sys.stderr, flush=True)
    return "pong"


app.run("stdio")
'''


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cache folder of the test's own, for leanloop here and in its child processes."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("LEANLOOP_CACHE", str(folder))
    return folder


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "chatty.py"
    path.write_text(SERVER, encoding="utf-8")
    return path


def _server(script: Path, name: str, *mode: str, timeout: float = START_S) -> McpServerSpec:
    return McpServerSpec(
        name=name, command=sys.executable, args=(str(script), *mode), timeout=timeout
    )


def _log(name: str) -> Path:
    return cache_paths().mcp_log(name)


def _agents_file(folder: Path, script: Path) -> Path:
    """Agent ``a`` uses the server that works, agent ``b`` the one that fails."""
    scripted = {"class": "leanloop.testing:ScriptedChatModel", "kwargs": {"replies": ["hi"]}}
    document = {
        "version": 1,
        "mcp_servers": {
            "chatty": {"command": sys.executable, "args": [str(script)], "timeout": START_S},
            "broken": {
                "command": sys.executable,
                "args": [str(script), "fail"],
                "timeout": START_S,
            },
        },
        "agents": {
            "a": {"model": scripted, "tools": ["mcp:chatty"]},
            "b": {"model": scripted, "tools": ["mcp:broken"]},
        },
    }
    path = folder / "agents.yaml"
    path.write_text(json.dumps(document), encoding="utf-8")  # JSON is YAML
    return path


@pytest.fixture
def check_models(tmp_path: Path, script: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """``leanloop validate --check-models`` of the two servers' file, as a user runs it."""
    path = _agents_file(tmp_path, script)
    return subprocess.run(
        [sys.executable, "-m", "leanloop", "validate", "--check-models", str(path)],
        capture_output=True,
        text=True,
        timeout=2 * START_S,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )


def test_check_models_keeps_the_servers_chatter_in_their_logs(
    check_models: subprocess.CompletedProcess[str],
) -> None:
    assert check_models.returncode == 2, check_models.stderr
    assert check_models.stdout.splitlines() == [
        "ok: a (model: ScriptedChatModel; MCP server chatty: ping)",
        "failed: b (1 problem)",
    ]
    # leanloop's stderr holds its own line and nothing of the servers'.
    assert CHATTER not in check_models.stderr
    assert "Downloading" not in check_models.stderr
    assert [line.split(":", 1)[0] for line in check_models.stderr.splitlines()] == ["error"]
    for name in ("chatty", "broken"):
        log = _log(name).read_text(encoding="utf-8")
        assert f"starts MCP server {name!r} (command {sys.executable!r})" in log
        assert CHATTER in log


def test_a_server_that_fails_is_one_line_naming_its_log_and_last_line(
    check_models: subprocess.CompletedProcess[str],
) -> None:
    [line] = check_models.stderr.splitlines()
    assert line.startswith("error: "), line
    assert f"MCP server 'broken' (command {sys.executable!r}) could not be started" in line
    assert f"its output is in {_log('broken')}" in line
    # The line a terminal would show last, redacted: no password, no token.
    assert "the last line: 'error: https://bob:***@index.example/simple?token=*** refused'" in line
    assert SECRET not in line and "t0k" not in line
    assert "(agent b)" in line
    # The file keeps all of it, for whoever looks (it is the user's own: mode 0600).
    assert SECRET in _log("broken").read_text(encoding="utf-8")
    assert _log("broken").stat().st_mode & 0o777 == 0o600


def test_a_server_that_does_not_answer_in_time_names_its_log(cache: Path, script: Path) -> None:
    verdict = probe_mcp_servers({"slow": _server(script, "slow", "hang", timeout=3)})["slow"]
    assert isinstance(verdict, ToolError)
    assert str(verdict) == (
        f"MCP server 'slow' (command {sys.executable!r}) did not list its tools within 3 s"
        f" (its output is in {_log('slow')}, the last line: '[=======] 100%')"
    )


def test_a_run_keeps_its_servers_output_off_its_progress_lines(
    tmp_path: Path, script: Path, cache: Path
) -> None:
    # Building the agent starts the server once (to list its tools), the run's session once.
    path = _agents_file(tmp_path, script)
    replies: list[Any] = [{"tool_calls": [{"name": "ping", "args": {}}]}, "It answered pong."]
    document = json.loads(path.read_text(encoding="utf-8"))
    document["agents"]["a"]["model"]["kwargs"]["replies"] = replies
    path.write_text(json.dumps(document), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "leanloop", "run", str(path), "--agent", "a", "Is it there?"],
        capture_output=True,
        text=True,
        timeout=2 * START_S,
        env={**os.environ, "NO_COLOR": "1", "LEANLOOP_WARM": "0"},
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "It answered pong."
    assert "ping() · ok" in run.stderr  # leanloop's own progress line is there
    assert CHATTER not in run.stderr and "ping was called" not in run.stderr, run.stderr
    log = _log("chatty").read_text(encoding="utf-8")
    assert log.count("starts MCP server 'chatty'") == 2, log
    assert "ping was called" in log


async def test_a_call_outside_a_run_writes_to_the_log_too(
    script: Path, cache: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    [ping] = load_mcp_tools(["mcp:chatty/ping"], {"chatty": _server(script, "chatty")})[
        "mcp:chatty/ping"
    ]
    result = await ping.ainvoke({})
    assert "pong" in str(result)
    err = capfd.readouterr().err
    assert CHATTER not in err and "ping was called" not in err, err
    assert "ping was called" in _log("chatty").read_text(encoding="utf-8")


async def test_a_runs_session_that_cannot_start_names_the_log(script: Path, cache: Path) -> None:
    async with McpSessions() as sessions:
        with pytest.raises(ToolException) as caught:
            await sessions.session(_server(script, "broken", "fail"))
    assert str(caught.value) == (
        f"MCP server 'broken' (command {sys.executable!r}) could not be started:"
        f" McpError: Connection closed (its output is in {_log('broken')}, the last line:"
        " 'error: https://bob:***@index.example/simple?token=*** refused')"
    )


def test_without_a_cache_folder_to_write_the_output_goes_to_stderr(
    tmp_path: Path,
    script: Path,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("LEANLOOP_CACHE", str(blocked))
    verdict = probe_mcp_servers({"broken": _server(script, "broken", "fail")})["broken"]
    assert isinstance(verdict, ToolError)
    assert "(it exited before it answered: its output is above, on stderr;" in str(verdict)
    assert CHATTER in capfd.readouterr().err


def test_a_long_log_is_moved_aside_before_a_start(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_mcp_connect, "_LOG_LIMIT", 10)
    log = _log("big")
    log.parent.mkdir(parents=True)
    log.write_text("x" * 11, encoding="utf-8")
    server_log = _mcp_connect.ServerLog(McpServerSpec(name="big", command="uvx"))
    with server_log.opened() as stream:
        stream.write("fresh\n")
    assert log.with_name("big.log.1").read_text(encoding="utf-8") == "x" * 11
    assert log.read_text(encoding="utf-8").endswith(
        "starts MCP server 'big' (command 'uvx')\nfresh\n"
    )
    assert server_log.note() == f"its output is in {log}, the last line: 'fresh'"


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("\x1b[2mDownloading\x1b[0m\r[==>  ] 40%\r[=====] 100%\r\n", "[=====] 100%"),
        ("  token=abc  and\tspaces ", "token=*** and spaces"),
        ("y" * 300, "y" * 197 + "..."),
        ("\x1b[0m\r", ""),
    ],
)
def test_a_quoted_line_is_what_a_terminal_shows_redacted_and_short(line: str, shown: str) -> None:
    assert _mcp_connect._plain(line) == shown
