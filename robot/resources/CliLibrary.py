"""Robot keywords that run the ``leanloop`` CLI as a user would and watch it as it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any


class CliLibrary:
    """Run ``python -m leanloop`` and time what it writes."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def run_leanloop_watching_stdout(self, *args: str, timeout: float = 120) -> dict[str, Any]:
        """Run the CLI; return rc, stdout, stderr and when stdout first had text.

        ``first_stdout_s`` and ``ended_s`` are seconds since the start: a streaming CLI
        writes the first answer characters well before the process ends.
        """
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "NO_COLOR": "1"}
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-m", "leanloop", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        first: list[float] = []
        out: list[bytes] = []
        err: list[bytes] = []

        def read_stdout() -> None:
            assert process.stdout is not None
            while chunk := process.stdout.read1(4096):  # type: ignore[attr-defined]
                if not first and chunk.strip():
                    first.append(time.monotonic() - started)
                out.append(chunk)

        def read_stderr() -> None:
            assert process.stderr is not None
            err.append(process.stderr.read())

        readers = [threading.Thread(target=read_stdout), threading.Thread(target=read_stderr)]
        for reader in readers:
            reader.start()
        try:
            rc = process.wait(timeout=float(timeout))
        finally:
            if process.poll() is None:
                process.kill()
            for reader in readers:
                reader.join()
        ended = time.monotonic() - started
        result = {
            "rc": rc,
            "stdout": b"".join(out).decode(),
            "stderr": b"".join(err).decode(),
            "first_stdout_s": first[0] if first else None,
            "ended_s": ended,
        }
        print(f"*INFO* leanloop {' '.join(args)}: {json.dumps(result, indent=1)}")
        return result

    def parse_json_output(self, stdout: str) -> dict[str, Any]:
        """The JSON object the CLI printed with ``--json``."""
        value = json.loads(stdout)
        if not isinstance(value, dict):
            msg = f"--json printed {type(value).__name__}, not an object"
            raise AssertionError(msg)
        return value

    def write_handbook_workspace(self, folder: str, base_url: str) -> str:
        """Two files of about 4 KB with one fact each, and an agents file that claims a
        32,768-token window on ``base_url`` (the server has less): the first request is
        refused for its size, and the recovery trims the prefetched files."""
        root = Path(folder)
        workspace = root / "workspace"
        workspace.mkdir(parents=True, exist_ok=True)
        teams = ("red", "blue", "green")
        handbook = [
            f"Section {i}: the handbook says item {i} is handled by team {teams[i % 3]} on weekdays"
            for i in range(1, 60)
        ]
        handbook.insert(30, "The on-call phone number for the service is 555-0142.")
        config = [f"setting_{i} = {i * 37 % 1000}  # tuned in release {i}" for i in range(1, 80)]
        config.insert(40, "service_port = 9143")
        (workspace / "handbook.md").write_text("\n".join(handbook) + "\n", encoding="utf-8")
        (workspace / "config.ini").write_text("\n".join(config) + "\n", encoding="utf-8")
        agents = root / "agents.yaml"
        agents.write_text(
            "version: 1\n"
            "models:\n"
            "  local:\n"
            "    provider: openai-compatible\n"
            "    model: local-test\n"
            f"    base_url: {base_url}\n"
            "    api_key: none\n"
            "    temperature: 0\n"
            "    context_window: 32768\n"
            "agents:\n"
            "  a:\n"
            "    model: local\n"
            "    system_prompt: You answer questions about the files in the workspace. "
            "Read files before answering.\n"
            "    tools: [read_file, list_files, search]\n"
            "    workspace: ./workspace\n"
            "    max_rounds: 5\n",
            encoding="utf-8",
        )
        return str(agents)

    def no_repeat_was_refused_while_its_result_was_trimmed(self, report: dict[str, Any]) -> None:
        """Fail when the guard answered "already called" about a result that, at that
        step, the model could no longer read (trimmed from the request view), unless the
        call had already run again the most times the guard allows (``MAX_RERUNS``, ADR
        0006 amendment 6): then its reminder says the whole output does not fit."""
        from leanloop.loop.policies.repeat_guard import MAX_RERUNS  # noqa: PLC0415 - loads lazily

        calls = report["tool_calls"]
        for index, call in enumerate(calls):
            if not call["repeated"]:
                continue
            earlier = [
                c
                for c in calls[:index]
                if c["name"] == call["name"] and c["args"] == call["args"] and not c["repeated"]
            ]
            assert earlier, f"a repeat with no earlier call: {call}"
            trimmed_at = earlier[-1]["trimmed_at"]
            reruns = sum(1 for c in earlier if any(n.startswith("ran again") for n in c["notes"]))
            if trimmed_at is not None and trimmed_at <= call["step"] and reruns < MAX_RERUNS:
                msg = (
                    f"the repeat at step {call['step']} was refused, but {earlier[-1]} was trimmed"
                )
                raise AssertionError(msg)
