"""Robot keywords that run the ``leanloop`` CLI as a user would and watch it as it runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
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
