"""Keywords of ``robot/batch_progress.robot``: what ``leanloop batch`` shows on a terminal.

A real ``python -m leanloop batch`` process runs with its output on pseudo-terminals
(:func:`os.openpty`, 120 columns), as in a person's shell, or on files, as under a program
or CI. The model is the fake server (:class:`leanloop.testing.server.FakeModelServer`) on
127.0.0.1, answering ``echo: <question>``, a question saying ``fail`` with HTTP 400 (a
failed task), and holding every answer after the first N until told to go on: a batch
stays mid-run, its progress line on the terminal, for exactly as long as a test reads it.

No check waits on a clock; every wait is a guard against a hang (a hang fails the test,
its process group killed).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import agent_entry, model_entry, write_agents_file

from leanloop.testing.server import FakeModelServer, Reply, ServerRequest

__all__ = ["BatchProgressLibrary"]

GUARD_S = 90.0
"""The longest a batch or a wait may take here; only a hang reaches it."""
COLUMNS = 120
TRACEBACK = "Traceback (most recent call last)"


class _Terminal:
    """A pseudo-terminal: the child gets its slave end; a thread reads all it writes."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        # A terminal of 120 columns, as a person's window (a fresh pty says 0).
        size = struct.pack("HHHH", 40, COLUMNS, 0, 0)
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, size)
        self._data = bytearray()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        # Read all the time: a terminal nobody reads fills up and stalls the writer.
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # EIO: every slave end is closed (the child ended)
                return
            if not chunk:
                return
            with self._lock:
                self._data.extend(chunk)

    def text(self) -> str:
        with self._lock:
            return self._data.decode("utf-8", errors="replace")

    def close_slave(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.slave)

    def finish(self) -> str:
        """What was written, once the child has ended (the reader drained the terminal)."""
        self._reader.join(GUARD_S)
        with contextlib.suppress(OSError):
            os.close(self.master)
        return self.text()


class BatchProgressLibrary:
    """Keywords: the model server, a batch folder, batch processes, their output."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self.server: FakeModelServer | None = None
        self.hold_after: int | None = None
        self.answered = 0
        self.gate = threading.Event()
        self.gate.set()
        self.count_lock = threading.Lock()
        self.process: subprocess.Popen[bytes] | None = None
        self.stdout_terminal: _Terminal | None = None
        self.stderr_terminal: _Terminal | None = None
        self.folder: Path | None = None

    # the model -------------------------------------------------------------------------
    def start_progress_model_server(self) -> None:
        """Start the fake server: ``echo: <question>``, HTTP 400 for a question with ``fail``."""
        self.server = FakeModelServer(
            handler=self._answer, model="progress-model", tokenizer=None, template=None
        ).start()

    def _answer(self, request: ServerRequest) -> Reply:
        with self.count_lock:
            self.answered += 1
            held = self.hold_after is not None and self.answered > self.hold_after
        if held:
            self.gate.wait(GUARD_S)  # until Release Answers (or the suite ends)
        if "fail" in request.last_user_text:
            return Reply(status=400, error="this question is refused")
        return Reply(content="echo: " + request.last_user_text)

    def stop_progress_model_server(self) -> None:
        self._kill()
        self.gate.set()
        if self.server is not None:
            self.server.kill()
            self.server = None

    def hold_answers_after(self, count: int) -> None:
        """Answer the next ``count`` requests, then hold each until Release Answers."""
        with self.count_lock:
            self.hold_after, self.answered = int(count), 0
        self.gate.clear()

    def release_answers(self) -> None:
        """Answer the held requests, and every later one at once."""
        with self.count_lock:
            self.hold_after = None
        self.gate.set()

    def end_batch(self) -> None:
        """After a test: every answer at once again, and a batch left running killed."""
        self.release_answers()
        self._kill()

    # a batch ---------------------------------------------------------------------------
    def batch_folder_with_tasks(self, name: str, count: int, failing: str = "") -> str:
        """``<TEMP>/leanloop-batch-progress/<name>``: the agents file and ``count`` tasks
        ``t0``…; the tasks named in ``failing`` (comma-separated ids) ask to fail."""
        assert self.server is not None, "the model server is not running"
        folder = Path(os.environ.get("TMPDIR", "/tmp")) / "leanloop-batch-progress" / name
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("*.jsonl"):
            old.unlink()
        model = model_entry(self.server.base_url, "progress-model", context_window=8192)
        write_agents_file(folder, model, "echo", agent_entry("You answer.", tools=()))
        failed = {f.strip() for f in failing.split(",") if f.strip()}
        rows = [
            {"id": f"t{i}", "question": f"please fail {i}" if f"t{i}" in failed else f"q {i}"}
            for i in range(int(count))
        ]
        text = "".join(json.dumps(row) + "\n" for row in rows)
        (folder / "tasks.jsonl").write_text(text, encoding="utf-8")
        self.folder = folder
        return str(folder)

    def start_batch_on_a_terminal(self, folder: str, *options: str) -> None:
        """Start the batch with stdin, stdout and stderr on one terminal, as in a shell."""
        terminal = _Terminal()
        self.stdout_terminal = self.stderr_terminal = terminal
        self._start(folder, options, terminal.slave, terminal.slave, stdin=terminal.slave)
        terminal.close_slave()

    def start_batch_on_two_terminals(self, folder: str, *options: str) -> None:
        """Start the batch with stdout on one terminal and stderr on another, to read each."""
        out, err = _Terminal(), _Terminal()
        self.stdout_terminal, self.stderr_terminal = out, err
        self._start(folder, options, out.slave, err.slave)
        out.close_slave()
        err.close_slave()

    def run_batch_off_a_terminal(self, folder: str, *options: str) -> dict[str, Any]:
        """Run the batch with stdout and stderr in files (a program's or CI's view)."""
        where = Path(folder)
        self.stdout_terminal = self.stderr_terminal = None
        with (
            open(where / "stdout.txt", "wb") as out,
            open(where / "stderr.txt", "wb") as err,
        ):
            self._start(folder, options, out.fileno(), err.fileno())
        rc = self._wait()
        result = {
            "rc": rc,
            "stdout": (where / "stdout.txt").read_text(encoding="utf-8"),
            "stderr": (where / "stderr.txt").read_text(encoding="utf-8"),
        }
        print(f"*INFO* batch off a terminal: {json.dumps(result, indent=1)}")
        return result

    def _start(
        self,
        folder: str,
        options: tuple[str, ...],
        stdout: int,
        stderr: int,
        stdin: int = subprocess.DEVNULL,
    ) -> None:
        command = [sys.executable, "-m", "leanloop", "batch", "agents.yaml", "tasks.jsonl"]
        command += ["--out", "out.jsonl", *options]
        self.process = subprocess.Popen(
            command,
            cwd=folder,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            env={**os.environ, "NO_COLOR": "1", "TERM": "xterm"},
            start_new_session=True,
        )

    def terminal_should_show(self, pattern: str) -> str:
        """Wait until the terminal (stderr's) shows ``pattern`` (a regular expression)
        while the batch runs; returns all it shows so far."""
        terminal = self.stderr_terminal
        assert terminal is not None, "no batch on a terminal"
        found = re.compile(pattern)
        deadline = time.monotonic() + GUARD_S
        while not found.search(terminal.text()):
            assert self.process is not None
            if self.process.poll() is not None:
                raise AssertionError(f"the batch ended before {pattern!r}:\n{terminal.text()!r}")
            if time.monotonic() > deadline:
                raise AssertionError(f"no {pattern!r} within {GUARD_S:g} s:\n{terminal.text()!r}")
            time.sleep(0.02)
        return terminal.text()

    def wait_for_batch_on_terminals(self) -> dict[str, Any]:
        """Wait for the batch; ``rc`` and what each terminal showed (``stdout``, ``stderr``:
        the same text when both were one terminal)."""
        rc = self._wait()
        assert self.stdout_terminal is not None and self.stderr_terminal is not None
        stdout = self.stdout_terminal.finish()
        stderr = stdout
        if self.stderr_terminal is not self.stdout_terminal:
            stderr = self.stderr_terminal.finish()
        result = {"rc": rc, "stdout": stdout, "stderr": stderr}
        print(f"*INFO* batch on a terminal: {json.dumps(result, indent=1)}")
        assert TRACEBACK not in stdout + stderr, f"a traceback:\n{stdout}{stderr}"
        return result

    def _wait(self) -> int:
        process = self.process
        assert process is not None, "no batch was started"
        try:
            rc = process.wait(timeout=GUARD_S)
        except subprocess.TimeoutExpired:
            self._kill()
            raise AssertionError(f"the batch did not end within {GUARD_S:g} s (a hang)") from None
        self.process = None
        return rc

    def _kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.process = None

    # checks ----------------------------------------------------------------------------
    def progress_frames(self, text: str) -> list[str]:
        """The drawings of the progress line in ``text``: each starts with a carriage
        return and runs to the next one (or the end of its line)."""
        return [part.split("\n")[0].rstrip() for part in text.split("\r")[1:] if "done ·" in part]

    def output_should_be_machine_readable(self, text: str) -> None:
        """``text`` holds no carriage return, no escape sequence and no progress figure."""
        assert "\x1b" not in text, f"an escape sequence: {text!r}"
        assert "\r" not in text.replace("\r\n", "\n"), f"a line redrawn in place: {text!r}"
        assert " running · " not in text, f"a progress line: {text!r}"

    def should_be_one_json_object(self, text: str) -> dict[str, Any]:
        """``text`` (a terminal's ``\\r\\n`` ends allowed) is one JSON object; returns it."""
        value = json.loads(text.replace("\r\n", "\n"))
        assert isinstance(value, dict), f"not an object: {value!r}"
        return value
