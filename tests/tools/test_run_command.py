"""run_command's contract (issue 41): bounded, no shell, a clean environment, nothing left.

Each test runs a real program (``sleep``, ``echo``, the test's own Python) in a temporary
workspace. Timeouts are tiny (0.2 s against ``sleep 5``), so nothing waits on the clock
for long; a child process is looked for by its pid, written to a file by its parent.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest
from langchain_core.tools import BaseTool, ToolException

from leanloop.spec import load_specs_from_text
from leanloop.tools.command import (
    MAX_OUTPUT_CHARS,
    MAX_STREAM_CHARS,
    CommandSettings,
    command_tool,
)
from leanloop.tools.loader import build_tools_by_ref
from leanloop.tools.registry import ToolRegistry

__all__: list[str] = []

PY = sys.executable


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


async def run(tool: BaseTool, *argv: str, timeout_s: float | None = None) -> str:
    args: dict[str, object] = {"argv": list(argv)}
    if timeout_s is not None:
        args["timeout_s"] = timeout_s
    return str(await tool.ainvoke(args))


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its parent to reap it counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def written_pid(path: Path) -> int | None:
    text = path.read_text() if path.exists() else ""
    return int(text) if text.strip() else None


async def pid_from(path: Path) -> int:
    for _ in range(200):
        if (pid := written_pid(path)) is not None:
            return pid
        await asyncio.sleep(0.02)
    raise AssertionError("the command never wrote its child's pid")


async def gone(pid: int) -> bool:
    for _ in range(100):
        if not alive(pid):
            return True
        await asyncio.sleep(0.02)
    return False


# A parent that starts a child, says its pid, then waits for longer than any test.
SPAWN = (
    "import pathlib, subprocess, sys, time\n"
    "child = subprocess.Popen(['sleep', '30'])\n"
    "pathlib.Path(sys.argv[1]).write_text(str(child.pid))\n"
    "time.sleep(30)\n"
)


async def test_a_command_past_its_timeout_is_killed_and_said_so(workspace: Path) -> None:
    tool = command_tool(workspace)
    started = time.monotonic()

    result = await run(tool, "sleep", "5", timeout_s=0.2)

    assert time.monotonic() - started < 3
    assert result.startswith("timed out after 0.2 s: the command and the processes it started")


async def test_a_timeout_kills_the_children_too(workspace: Path) -> None:
    tool = command_tool(workspace)

    result = await run(tool, PY, "-c", SPAWN, "child.pid", timeout_s=1.0)

    assert result.startswith("timed out after 1 s")
    assert await gone(await pid_from(workspace / "child.pid"))


async def test_a_cancelled_call_kills_the_command_and_its_children(workspace: Path) -> None:
    tool = command_tool(workspace)
    call = asyncio.ensure_future(run(tool, PY, "-c", SPAWN, "child.pid"))
    child = await pid_from(workspace / "child.pid")
    assert alive(child)

    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call

    assert await gone(child)


async def test_the_registrys_time_limit_cancels_the_call_and_kills_the_children(
    workspace: Path,
) -> None:
    # The command's own timeout is longer: the registry's limit is what stops it.
    tool = command_tool(workspace, CommandSettings(timeout_s=30))
    registry = ToolRegistry([tool])

    started = asyncio.ensure_future(
        registry.run("run_command", {"argv": [PY, "-c", SPAWN, "child.pid"]}, time_limit=1.5)
    )
    child = await pid_from(workspace / "child.pid")
    outcome = await started

    assert outcome.timed_out
    assert outcome.text.startswith("error: run_command timed out after 1.5 s")
    assert await gone(child)


async def test_what_a_command_leaves_running_is_killed_when_it_ends(workspace: Path) -> None:
    # The child inherits stdout and outlives its parent: the call still ends, and so does it.
    script = (
        "import pathlib, subprocess, sys\n"
        "child = subprocess.Popen(['sleep', '30'])\n"
        "pathlib.Path(sys.argv[1]).write_text(str(child.pid))\n"
        "print('started')\n"
    )
    started = time.monotonic()

    result = await run(command_tool(workspace), PY, "-c", script, "child.pid")

    assert time.monotonic() - started < 10
    assert result.split("\n")[0].endswith(
        "[processes it left running held the output open; they were killed]"
    )
    assert result.split("\n")[-1] == "started"
    assert await gone(await pid_from(workspace / "child.pid"))


def test_the_command_timeout_stays_under_the_calls_limit() -> None:
    assert CommandSettings().limit(None) == 60
    assert CommandSettings(call_limit_s=60).limit(None) == 59
    assert CommandSettings(call_limit_s=60).limit(300) == 59
    assert CommandSettings(timeout_s=10, call_limit_s=60).limit(None) == 10
    assert CommandSettings(call_limit_s=1).limit(5) == 0.5


async def test_a_non_zero_exit_is_a_result_with_its_code_and_output(workspace: Path) -> None:
    tool = command_tool(workspace)
    script = "import sys; print('3 failed'); print('boom', file=sys.stderr); sys.exit(3)"

    result = await run(tool, PY, "-c", script)

    lines = result.split("\n")
    assert lines[0].startswith("exit code 3 (")
    assert lines[1:] == ["--- stdout ---", "3 failed", "--- stderr ---", "boom"]


async def test_output_is_capped_per_stream_with_a_marker(workspace: Path) -> None:
    tool = command_tool(workspace)
    script = "print('a' * 50_000 + 'END')"

    result = await run(tool, PY, "-c", script)

    stdout = result.split("--- stdout ---\n", 1)[1]
    head, marker, tail = stdout.split("\n")
    assert marker == f"[… {50_004 - MAX_STREAM_CHARS:,} characters cut …]"
    assert len(head) + len(tail) + len("\n") == MAX_STREAM_CHARS  # the final break ends it
    assert tail.endswith("aEND")  # the end is kept: a test run's summary is there


async def test_output_is_capped_in_all(workspace: Path) -> None:
    script = "import sys; print('o' * 50_000); print('e' * 50_000, file=sys.stderr)"
    default = await run(command_tool(workspace), PY, "-c", script)
    smaller = await run(
        command_tool(workspace, CommandSettings(max_output_chars=20_000)), PY, "-c", script
    )

    def kept(text: str) -> int:
        lines = text.split("\n")[1:]
        return sum(len(line) for line in lines if set(line) in ({"o"}, {"e"}))

    # Each stream's final line break is kept but not shown.
    assert kept(default) == MAX_OUTPUT_CHARS - 2  # 30,000 of each stream
    assert kept(smaller) == 20_000 - 2
    assert smaller.count("characters cut") == 2


async def test_no_shell_runs_the_words_are_plain_text(workspace: Path) -> None:
    tool = command_tool(workspace)

    result = await run(tool, "echo", "$HOME", "a;", "echo", "b", "|", "cat", "*")

    assert result.split("\n")[2] == "$HOME a; echo b | cat *"


async def test_one_string_is_split_into_words_without_a_shell(workspace: Path) -> None:
    tool = command_tool(workspace)

    result = await run(tool, "echo 'two words' $HOME")

    assert result.split("\n")[0] == "[read argv as ['echo', 'two words', '$HOME']; no shell ran]"
    assert result.split("\n")[-1] == "two words $HOME"


async def test_shell_true_runs_a_command_line(workspace: Path) -> None:
    tool = command_tool(workspace, CommandSettings(via_shell=True))

    result = await run(tool, "echo $HOME | tr a-z A-Z")

    assert result.split("\n")[-1] == str(workspace).upper()


async def test_the_environment_is_scrubbed_and_home_is_the_workspace(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-secret")
    monkeypatch.setenv("LEANLOOP_TEST_TOKEN", "tok-secret")
    monkeypatch.setenv("SOME_SECRET", "hush")
    tool = command_tool(workspace)

    result = await run(tool, "env")
    where = await run(tool, "pwd")

    names = {line.split("=", 1)[0] for line in result.split("\n")[2:]}
    assert "secret" not in result
    assert "hush" not in result
    assert not names & {"OPENAI_API_KEY", "LEANLOOP_TEST_TOKEN", "SOME_SECRET"}
    assert f"HOME={workspace}" in result.split("\n")
    assert "PATH" in names
    assert where.split("\n")[-1] == str(workspace)


async def test_what_the_model_can_fix_is_a_one_line_refusal(workspace: Path) -> None:
    allowed = command_tool(workspace, CommandSettings(allowed=("pytest", "python")))
    tool = command_tool(workspace)

    for call, start in [
        (run(allowed, "rm", "-rf", "."), "'rm' is not an allowed program here; allowed: pytest"),
        (run(tool, "no-such-program-x"), "no program 'no-such-program-x' on PATH"),
        (run(tool), "argv is empty; send the program and its arguments"),
    ]:
        with pytest.raises(ToolException) as caught:
            await call
        assert str(caught.value).startswith(start)
        assert "\n" not in str(caught.value)


def test_run_command_is_on_only_when_the_agents_file_names_it(workspace: Path) -> None:
    text = (
        "version: 1\nagents:\n"
        "  reader:\n    model: {provider: ollama, model: x}\n    workspace: WS\n"
        "    tools: [read_file, write_file]\n"
        "  runner:\n    model: {provider: ollama, model: x}\n    workspace: WS\n"
        "    tools: [read_file, {name: run_command, timeout: 30, allowed_commands: [pytest]}]\n"
    ).replace("WS", str(workspace))
    specs = load_specs_from_text(text)

    def names(agent: str) -> list[str]:
        spec = specs[agent]
        built = build_tools_by_ref(
            spec.tools,
            workspace=spec.workspace,
            tool_options={option.ref: option for option in spec.tool_options},
            tool_timeout=spec.tool_timeout,
        )
        return [tool.name for _, tool in built]

    assert names("reader") == ["read_file", "write_file"]
    assert names("runner") == ["read_file", "run_command"]
