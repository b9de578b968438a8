"""Keywords of ``robot/batch_faults.robot``: ``leanloop batch`` processes meet faults.

The model is the one fake server (:class:`leanloop.testing.server.FakeModelServer`) on
127.0.0.1, answering ``echo: <question>``; it can hold every answer after the first N
until it is told to go on, which keeps a batch mid-run, holding its results file, for
exactly as long as a test needs (no clock is involved). Every batch is a real
``python -m leanloop batch`` process in a session of its own, its stdout and stderr in
files (a pipe nobody reads would stall it). The faults are the world's: a second batch on
the same results file, an ``expected`` that backtracks without end in ``re``, text that
is not UTF-8, a line nested too deeply, a file size limit (``RLIMIT_FSIZE``: the disk
refuses the write, ``EFBIG`` as a full disk's ``ENOSPC``), a byte order mark, SIGKILL.

No check waits on a clock to see a timeout; every wait is a guard against a hang (a hang
fails the test, its process group killed).
"""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import agent_entry, model_entry, write_agents_file

from leanloop.testing.server import FakeModelServer, Reply, ServerRequest

__all__ = ["BatchFaultLibrary"]

GUARD_S = 90.0
"""The longest a batch may take here; only a hang reaches it."""
TRACEBACK = "Traceback (most recent call last)"


class _Batch:
    """A started ``leanloop batch`` process, its output in files of its folder."""

    def __init__(self, folder: Path, name: str, process: subprocess.Popen[bytes]) -> None:
        self.folder, self.name, self.process = folder, name, process

    def outcome(self) -> dict[str, Any]:
        """Wait for it (a guard against a hang); its exit status and output."""
        try:
            self.process.wait(timeout=GUARD_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            msg = f"batch {self.name} did not end within {GUARD_S:g} s (a hang)"
            raise AssertionError(msg) from None
        stdout = (self.folder / f"{self.name}.stdout").read_text(errors="replace")
        stderr = (self.folder / f"{self.name}.stderr").read_text(errors="replace")
        result = {"rc": self.process.returncode, "stdout": stdout, "stderr": stderr}
        print(f"*INFO* batch {self.name}: {json.dumps(result, indent=1)}")
        return result


class BatchFaultLibrary:
    """Keywords: the model server, batch folders and tasks, batch processes, checks."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self.server: FakeModelServer | None = None
        self.hold_after: int | None = None
        self.answered = 0
        self.gate = threading.Event()
        self.gate.set()
        self.count_lock = threading.Lock()
        self.batches: dict[str, _Batch] = {}
        self.stderrs: list[str] = []

    # the model -------------------------------------------------------------------------
    def start_batch_model_server(self) -> str:
        """Start the fake server answering ``echo: <question>``; returns its base URL."""
        self.stop_batch_model_server()
        # No /tokenize or /apply-template: every request the server sees is a chat request.
        self.server = FakeModelServer(
            handler=self._answer, model="batch-model", tokenizer=None, template=None
        ).start()
        return self.server.base_url

    def _answer(self, request: ServerRequest) -> Reply:
        with self.count_lock:
            self.answered += 1
            held = self.hold_after is not None and self.answered > self.hold_after
        if held:
            self.gate.wait(GUARD_S)  # until Release Answers (or the server stops)
        return Reply(content="echo: " + request.last_user_text)

    def stop_batch_model_server(self) -> None:
        for batch in self.batches.values():
            if batch.process.poll() is None:
                os.killpg(batch.process.pid, signal.SIGKILL)
                batch.process.wait()
        self.batches.clear()
        self.gate.set()
        if self.server is not None:
            self.server.kill()
            self.server = None

    def reset_batch_model_server(self) -> None:
        """Forget the requests seen so far; every answer comes at once again."""
        assert self.server is not None, "the model server is not running"
        self.server.reset()
        with self.count_lock:
            self.hold_after, self.answered = None, 0
        self.gate.set()

    def hold_answers_after(self, count: int) -> None:
        """Answer the next ``count`` requests, then hold each until Release Answers."""
        with self.count_lock:
            self.hold_after, self.answered = int(count), 0
        self.gate.clear()

    def release_answers(self) -> None:
        """Answer the held requests, and every later one at once."""
        self.gate.set()

    def model_requests_should_be(self, count: int) -> None:
        """The server answered ``count`` chat requests since it started."""
        assert self.server is not None, "the model server is not running"
        seen = len(self.server.exchanges)
        assert seen == int(count), f"the model got {seen} requests, expected {count}"

    # folders and tasks -----------------------------------------------------------------
    def batch_folder(self, name: str) -> str:
        """``<TEMP>/leanloop-batch-faults/<name>``, empty, with an agents file on the server."""
        assert self.server is not None, "the model server is not running"
        folder = Path(os.environ.get("TMPDIR", "/tmp")) / "leanloop-batch-faults" / name
        if folder.exists():
            for old in folder.rglob("*"):
                if old.is_file():
                    old.unlink()
        folder.mkdir(parents=True, exist_ok=True)
        model = model_entry(self.server.base_url, "batch-model", context_window=8192, timeout=30)
        write_agents_file(folder, model, "echo", agent_entry("You answer.", tools=()))
        return str(folder)

    def write_tasks(self, folder: str, count: int, bom: bool = False) -> None:
        """``tasks.jsonl`` with tasks ``t0``… (``bom``: a UTF-8 byte order mark first)."""
        rows = [{"id": f"t{i}", "question": f"question {i}"} for i in range(int(count))]
        self.write_task_lines(folder, *(json.dumps(row) for row in rows), bom=bom)

    def write_task_lines(self, folder: str, *lines: str, bom: bool = False) -> None:
        """``tasks.jsonl`` with ``lines`` as they are (JSON escapes stay escapes)."""
        text = "".join(line + "\n" for line in lines)
        data = (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")
        (Path(folder) / "tasks.jsonl").write_bytes(data)

    def nested_line(self, depth: int) -> str:
        """A JSON line of ``depth`` arrays, one in another."""
        return "[" * int(depth) + "]" * int(depth)

    # batch processes -------------------------------------------------------------------
    def start_batch(
        self, folder: str, name: str = "batch", concurrency: int = 1, file_size_limit: int = 0
    ) -> None:
        """Start ``leanloop batch agents.yaml tasks.jsonl --out out.jsonl`` in ``folder``.

        ``file_size_limit``: the process's ``RLIMIT_FSIZE`` in bytes (0: none); a write past
        it fails with ``EFBIG``, as a full disk's fails with ``ENOSPC``.
        """
        where = Path(folder)
        command = [sys.executable, "-m", "leanloop", "batch", "agents.yaml", "tasks.jsonl"]
        command += ["--out", "out.jsonl", "--concurrency", str(concurrency)]
        limit = int(file_size_limit)

        def limited() -> None:  # in the child, before exec
            if limit:
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        with (
            open(where / f"{name}.stdout", "wb") as out,
            open(where / f"{name}.stderr", "wb") as err,
        ):
            process = subprocess.Popen(
                command,
                cwd=where,
                stdout=out,
                stderr=err,
                env={**os.environ, "NO_COLOR": "1"},
                start_new_session=True,
                preexec_fn=limited if limit else None,  # noqa: PLW1509 - no threads use it
            )
        self.batches[name] = _Batch(where, name, process)

    def run_batch(
        self, folder: str, name: str = "batch", concurrency: int = 1, file_size_limit: int = 0
    ) -> dict[str, Any]:
        """Start a batch and wait for it; returns ``rc``, ``stdout``, ``stderr``."""
        self.start_batch(folder, name, concurrency, file_size_limit)
        return self.wait_for_batch(name)

    def wait_for_batch(self, name: str = "batch") -> dict[str, Any]:
        """Wait for the batch ``name`` to end; returns ``rc``, ``stdout``, ``stderr``."""
        result = self.batches.pop(name).outcome()
        self.stderrs.append(result["stderr"])
        return result

    def wait_for_results(self, folder: str, count: int, name: str = "batch") -> None:
        """Wait until ``out.jsonl`` holds ``count`` whole lines (the batch still running)."""
        deadline = time.monotonic() + GUARD_S
        while len(self.result_lines(folder)) < int(count):
            batch = self.batches[name]
            assert batch.process.poll() is None, f"batch {name} ended early: {batch.outcome()}"
            assert time.monotonic() < deadline, f"no {count} results within {GUARD_S:g} s"
            time.sleep(0.02)

    def kill_batch(self, name: str = "batch") -> None:
        """SIGKILL the batch ``name`` (no cleanup at all) and reap it."""
        batch = self.batches.pop(name)
        os.killpg(batch.process.pid, signal.SIGKILL)
        batch.process.wait()

    # checks ----------------------------------------------------------------------------
    def result_lines(self, folder: str) -> list[str]:
        """The whole lines of ``out.jsonl`` (a torn last line left out)."""
        path = Path(folder) / "out.jsonl"
        data = path.read_bytes() if path.exists() else b""
        return [line.decode() for line in data.split(b"\n")[:-1]]

    def outcome_should_be(self, result: dict[str, Any], rc: int, error: str = "") -> None:
        """Exit ``rc``, no traceback; with ``error``, stderr is one line starting with it."""
        assert TRACEBACK not in result["stderr"], f"a traceback:\n{result['stderr']}"
        assert result["rc"] == int(rc), f"exit {result['rc']}, expected {rc}: {result}"
        if error:
            lines = result["stderr"].strip().splitlines()
            assert len(lines) == 1, f"expected one line on stderr, got {lines}"
            assert lines[0].startswith(error), f"{lines[0]!r} does not start {error!r}"

    def results_should_hold_each_task_once(self, folder: str, count: int) -> list[dict[str, Any]]:
        """``out.jsonl``: whole lines only, every task ``t0``… once, nothing else."""
        path = Path(folder) / "out.jsonl"
        data = path.read_bytes()
        assert data.endswith(b"\n"), f"a torn last line: {data[-200:]!r}"
        rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]
        ids = [row["id"] for row in rows]
        assert len(ids) == len(set(ids)), f"a duplicate result: {sorted(ids)}"
        expected = {f"t{i}" for i in range(int(count))}
        assert set(ids) == expected, f"lost {expected - set(ids)}, extra {set(ids) - expected}"
        return rows

    def results_file_should_not_exist(self, folder: str) -> None:
        assert not (Path(folder) / "out.jsonl").exists(), "a results file was written"

    def no_batch_printed_a_traceback(self) -> None:
        """No batch of the suite printed a traceback (each test checked its own too)."""
        assert self.stderrs, "no batch ran"
        broken = [err for err in self.stderrs if TRACEBACK in err]
        assert not broken, f"{len(broken)} batches printed a traceback:\n{broken[0]}"
