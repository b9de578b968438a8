"""Fault injection for ``robot/faults.robot``: a scripted server that misbehaves on cue.

The server is :class:`leanloop.testing.server.FakeModelServer` (issue 26: one fake
server) with a fault plan: each queued reply may be an ordinary answer or tool call, an
HTTP error with headers (``429`` with ``Retry-After``), a malformed body, a stream cut
before its finish (no ``finish_reason``, no ``[DONE]``), a stream that stalls (sends
nothing for longer than the client's timeout), a slow stream, or the server dying mid-run
(every connection dropped, the port closed). The keywords run ``python -m leanloop run
--json`` in a session of its own and check what a user meets: the exit code, one clear
error line, the JSON report, no process left behind, and no tool call without its result
in the last request the server saw.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import agent_entry, model_entry, write_agents_file

from leanloop.testing.server import FAULTS, FakeModelServer, Fault, Reply, http_error

__all__ = ["FaultServerLibrary"]

FAULT_TOOLS = '''\
"""Tools that misbehave, for the fault suite (next to the agents file)."""

import threading
import time
from pathlib import Path


def hang(label: str) -> str:
    """Look something up (never returns: a sync tool stuck in a blocking wait)."""
    Path(__file__).with_name("hang.started").write_text(label)
    threading.Event().wait()
    return "never"


async def block(label: str) -> str:
    """Look something up (never returns: an async tool that blocks the event loop)."""
    Path(__file__).with_name("hang.started").write_text(label)
    time.sleep(3600)
    return "never"


def explode(reason: str) -> str:
    """Look something up (always raises)."""
    raise RuntimeError(f"exploded: {reason}")


def huge(label: str) -> str:
    """Look something up (returns 3 MB of text)."""
    return ("huge line of tool output " * 4 + "\\n") * 30_000


class _Unprintable:
    def __str__(self) -> str:
        raise ValueError("this result has no text")

    __repr__ = __str__


def nontext(label: str):
    """Look something up (returns an object that cannot become text)."""
    return _Unprintable()


def bignumber(label: str) -> int:
    """Look something up (returns a number too long to print)."""
    return 10**5000
'''


def _session_processes(sid: int) -> list[str]:
    """Processes still alive in session ``sid`` (the CLI was its leader)."""
    left = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        # state ppid pgrp session …; a zombie is gone but for its exit status.
        if int(fields[3]) == sid and fields[0] != "Z":
            left.append(f"{entry.name}: {stat[: stat.rindex(')') + 1]}")
    return left


class FaultServerLibrary:
    """Keywords of the fault suite."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self.server: FakeModelServer | None = None

    # the server ----------------------------------------------------------------------
    def start_fault_server(self, n_ctx: int = 4096) -> str:
        """Start a fresh fault server; returns its base URL (``…/v1``)."""
        self.stop_fault_server()
        # No /tokenize or /apply-template: a plain OpenAI-compatible server has neither,
        # so the budget estimates and every request the server sees is a chat request.
        self.server = FakeModelServer(
            n_ctx=int(n_ctx), model="fault-model", tokenizer=None, template=None
        ).start()
        return self.server.base_url

    def stop_fault_server(self) -> None:
        if self.server is not None:
            # kill, not stop: a test may leave a client mid-stream, which must not wait.
            self.server.kill()
            self.server = None

    def _server(self) -> FakeModelServer:
        assert self.server is not None, "the fault server is not running"
        return self.server

    def queue_answer(self, content: str, chunk_delay: float = 0.0) -> None:
        self._server().queue(Reply(content=content, chunk_delay=float(chunk_delay)))

    def queue_tool_call(self, name: str, arguments: str = "{}") -> None:
        call = {"name": name, "arguments": json.loads(arguments)}
        self._server().queue(Reply(tool_calls=[call]))

    def queue_http_error(self, status: int, retry_after: str = "") -> None:
        """An HTTP error reply (``retry_after``: the ``Retry-After`` header, in seconds)."""
        headers = {"Retry_After": retry_after} if retry_after else {}
        self._server().queue(http_error(int(status), f"scripted {status}", **headers))

    def queue_fault(self, fault: str, content: str = "", stall_s: float = 0.0) -> None:
        """``cut``, ``stall`` (``stall_s`` of silence; 0: until the server stops),
        ``malformed`` or ``kill`` (the server's other faults work too)."""
        assert fault in FAULTS, f"unknown fault {fault!r}; one of {FAULTS[1:]}"
        reply = Reply(content=content, fault=cast(Fault, fault), stall=float(stall_s))
        self._server().queue(reply)

    def fault_server_requests(self) -> int:
        """How many chat requests the server received."""
        return len(self._server().exchanges) if self.server is not None else 0

    # files and runs ------------------------------------------------------------------
    def write_fault_agents_file(
        self, name: str, base_url: str, tools: str = "read_file", **keys: Any
    ) -> str:
        """``<TEMP>/leanloop-faults/<name>/agents.yaml`` with the fault tools beside it.

        ``timeout`` and ``max_retries`` go to the model (``timeout: 2`` unless given),
        other keys to the agent (``tool_timeout: 1`` unless given); ``tools`` is comma
        separated (``fault_tools:hang`` …).
        """
        folder = Path(os.environ.get("TMPDIR", "/tmp")) / "leanloop-faults" / name
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("hang.started"):
            stale.unlink()
        (folder / "fault_tools.py").write_text(FAULT_TOOLS, encoding="utf-8")
        (folder / "workspace").mkdir(exist_ok=True)
        (folder / "workspace" / "notes.txt").write_text("The code word is river.\n")
        model_keys: dict[str, Any] = {"timeout": 2, "context_window": 8192}
        agent_keys: dict[str, Any] = {"max_rounds": 4, "tool_timeout": 1}
        for key, value in keys.items():
            parsed = json.loads(value) if _is_json(value) else value
            (model_keys if key in ("timeout", "max_retries") else agent_keys)[key] = parsed
        if "max_retries" in model_keys:
            model_keys["kwargs"] = {"max_retries": model_keys.pop("max_retries")}
        model = model_entry(base_url, "fault-model", **model_keys)
        listed = [t.strip() for t in tools.split(",") if t.strip()]
        agent = agent_entry("You answer questions. Use the tools.", listed, **agent_keys)
        return write_agents_file(folder, model, "faulty", agent)

    def free_port_url(self) -> str:
        """A base URL where nothing listens."""
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        return f"http://127.0.0.1:{port}/v1"

    def run_leanloop_json(self, file: str, question: str, timeout: float = 60) -> dict[str, Any]:
        """``python -m leanloop run FILE QUESTION --json`` in a session of its own.

        Returns rc, stdout, stderr, elapsed_s, the parsed report (``None`` when stdout is
        not JSON) and ``left``: processes of the CLI's session still alive after it exited.
        """
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "leanloop", "run", file, question, "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
            start_new_session=True,
        )
        try:
            out, err = process.communicate(timeout=float(timeout))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            out, err = process.communicate()
            msg = f"leanloop run did not end within {timeout} s: {err.decode()[-2000:]}"
            raise AssertionError(msg) from None
        return self._result(process, out, err, started)

    def _result(
        self, process: subprocess.Popen[bytes], out: bytes, err: bytes, started: float
    ) -> dict[str, Any]:
        elapsed = time.monotonic() - started
        time.sleep(0.2)  # children it left would still be there
        left = _session_processes(process.pid)
        for line in left:
            pid = int(line.split(":", 1)[0])
            os.kill(pid, signal.SIGKILL)
        stdout, stderr = out.decode(errors="replace"), err.decode(errors="replace")
        try:
            report = json.loads(stdout)
        except ValueError:
            report = None
        result = {
            "rc": process.returncode,
            "stdout": stdout,
            "stderr": stderr,
            "elapsed_s": round(elapsed, 2),
            "report": report,
            "left": left,
        }
        shown = {**result, "stdout": stdout[:3000]}
        print(f"*INFO* leanloop run: {json.dumps(shown, indent=1, default=str)}")
        return result

    def outcome_should_be(
        self, result: dict[str, Any], rc: int, stop_reason: str, error: str = ""
    ) -> None:
        """Exit code ``rc``; a JSON report with ``stop_reason``; no traceback; no process
        left; for a failure (rc 1) exactly one ``error:`` line on stderr, holding ``error``."""
        assert result["rc"] == int(rc), f"exit code {result['rc']}, expected {rc}"
        report = result["report"]
        assert isinstance(report, dict), f"no JSON report on stdout: {result['stdout'][:500]!r}"
        assert report.get("stop_reason") == stop_reason, (
            f"stop_reason {report.get('stop_reason')!r}, expected {stop_reason!r}"
        )
        assert "Traceback" not in result["stderr"], "a traceback on stderr"
        assert not result["left"], f"processes left behind: {result['left']}"
        errors = [ln for ln in result["stderr"].splitlines() if ln.startswith("error:")]
        if int(rc) == 1:
            assert len(errors) == 1, f"expected one error line, got {errors}"
            assert error in errors[0], f"{error!r} not in {errors[0]!r}"
            assert report.get("error"), "the report of a failed run has no error"
        else:
            assert not errors, f"error lines in a run that did not fail: {errors}"

    def no_tool_call_lacks_its_result(self) -> None:
        """Every tool call in the last request the server saw has its tool result."""
        requests = self._server().chat_bodies()
        assert requests, "the server saw no request"
        messages = requests[-1].get("messages", [])
        answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
        calls = [
            call["id"]
            for m in messages
            if m.get("role") == "assistant"
            for call in m.get("tool_calls") or []
        ]
        orphans = [c for c in calls if c not in answered]
        assert not orphans, f"tool calls without a result: {orphans}"

    def last_tool_result_should_contain(self, text: str) -> str:
        """The last tool message of the last request holds ``text``; returns it."""
        messages = self._server().chat_bodies()[-1].get("messages", [])
        results = [m.get("content") or "" for m in messages if m.get("role") == "tool"]
        assert results, "the last request has no tool result"
        assert text in results[-1], f"{text!r} not in {results[-1][:300]!r}"
        return str(results[-1])

    def interrupt_leanloop_during_hung_tool(
        self, file: str, question: str, signals: int = 1, gap_s: float = 0.5
    ) -> dict[str, Any]:
        """Run the CLI, send SIGINT once the hung tool has started (``signals`` times,
        ``gap_s`` apart); returns the result with ``after_sigint_s``: how long it took to
        exit after the first."""
        started = time.monotonic()
        marker = Path(file).with_name("hang.started")
        process = subprocess.Popen(
            [sys.executable, "-m", "leanloop", "run", file, question, "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "NO_COLOR": "1"},
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 60
            while not marker.exists():
                assert process.poll() is None, "the CLI ended before the tool started"
                assert time.monotonic() < deadline, "the hung tool never started"
                time.sleep(0.05)
            time.sleep(0.3)
            sent = time.monotonic()
            for n in range(int(signals)):
                if n:
                    time.sleep(float(gap_s))
                if process.poll() is None:
                    process.send_signal(signal.SIGINT)
            try:
                out, err = process.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                out, err = process.communicate()
            after = time.monotonic() - sent
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
        result = self._result(process, out, err, started)
        result["after_sigint_s"] = round(after, 2)
        print(f"*INFO* exited {after:.2f} s after SIGINT, rc {process.returncode}")
        return result


def _is_json(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        json.loads(value)
    except ValueError:
        return False
    return True
