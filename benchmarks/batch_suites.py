"""Run a benchmark suite's tasks through ``leanloop batch``, the user's path (issue 30).

A suite writes its agents file, workspace and tasks file into a folder, then
:func:`run_batch` runs the real command line (``leanloop batch AGENTS TASKS --out
RESULTS``) as a subprocess and reads the results back, one record per task in the order
of the tasks file, with the command's wall time. The suite then grades the answers with
its own checker and prints its own table, so the figures of a serial run and of a batch
run come from the same tasks, checks and agent configuration.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "BatchRun",
    "add_batch_options",
    "batch_arguments",
    "leanloop_executable",
    "run_batch",
    "write_batch_files",
]


@dataclass(frozen=True)
class BatchRun:
    """What one ``leanloop batch`` command did."""

    command: list[str]
    returncode: int
    """0: every task has a result and none failed; 1: some failed; 2: bad input."""
    wall_seconds: float
    """The subprocess from start to exit: Python's and LangChain's start-up, the checks,
    the tasks (and a local Ray cluster's start and stop, with ``--ray``)."""
    summary: list[str]
    """The summary lines the command printed on stdout."""
    records: dict[str | int, dict[str, Any]]
    """The results file's lines, by task id."""


def leanloop_executable() -> str:
    """The ``leanloop`` command of this interpreter's environment (else the one on PATH)."""
    beside = Path(sys.executable).parent / "leanloop"
    if beside.exists():
        return os.fspath(beside)
    found = shutil.which("leanloop")
    if found is None:
        msg = "no `leanloop` command: install the project (pip install -e .)"
        raise SystemExit(msg)
    return found


def write_batch_files(
    agents: Path, document: Mapping[str, Any], tasks: Path, rows: Iterable[Mapping[str, Any]]
) -> None:
    """Write the agents file ``agents`` (``document`` as YAML) and the tasks file ``tasks``
    (one JSON object a line: ``id``, ``question``, ``agent``?, ``expected``?)."""
    agents.parent.mkdir(parents=True, exist_ok=True)
    agents.write_text(yaml.safe_dump(dict(document), sort_keys=False), encoding="utf-8")
    lines = [json.dumps(dict(row), ensure_ascii=False) for row in rows]
    tasks.write_text("\n".join(lines) + "\n", encoding="utf-8")


def batch_arguments(
    *, concurrency: int | None = None, ray: str | None = None, agent: str | None = None
) -> list[str]:
    """The options after ``--out``: ``--agent``, ``--concurrency``, ``--ray [ADDRESS]``."""
    args: list[str] = []
    if agent is not None:
        args += ["--agent", agent]
    if concurrency is not None:
        args += ["--concurrency", str(concurrency)]
    if ray is not None:
        args += ["--ray", ray] if ray else ["--ray"]
    return args


def run_batch(
    agents: Path,
    tasks: Path,
    out: Path,
    options: Sequence[str] = (),
    *,
    env: Mapping[str, str] | None = None,
) -> BatchRun:
    """Run ``leanloop batch AGENTS TASKS --out OUT [options]``; return what it did.

    The command's progress and errors go to this process's stderr; its summary (stdout)
    is captured and returned. A results file left from an earlier run is removed first:
    the batch would skip the ids it holds.

    Raises:
        SystemExit: The command refused its input (exit 2).
    """
    out.unlink(missing_ok=True)
    command = [leanloop_executable(), "batch", os.fspath(agents), os.fspath(tasks)]
    command += ["--out", os.fspath(out), *options]
    started = time.perf_counter()
    done = subprocess.run(
        command,
        stdout=subprocess.PIPE,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    wall = time.perf_counter() - started
    if done.returncode == 2:
        sys.stderr.write(done.stdout)
        msg = f"leanloop batch refused its input: {' '.join(command)}"
        raise SystemExit(msg)
    records: dict[str | int, dict[str, Any]] = {}
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                records[record["id"]] = record
    return BatchRun(
        command=command,
        returncode=done.returncode,
        wall_seconds=wall,
        summary=done.stdout.strip().splitlines(),
        records=records,
    )


def add_batch_options(
    parser: argparse.ArgumentParser, *, title: str, via_help: str, dir_help: str
) -> None:
    """The suites' ``--via-batch [--concurrency N] [--ray [ADDRESS]] [--batch-dir DIR]``."""
    batch = parser.add_argument_group(title)
    batch.add_argument("--via-batch", action="store_true", help=via_help)
    batch.add_argument(
        "--concurrency", type=int, metavar="N", help="--via-batch: leanloop batch --concurrency N"
    )
    batch.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="--via-batch: leanloop batch --ray [ADDRESS] (a local Ray cluster without ADDRESS)",
    )
    batch.add_argument("--batch-dir", type=Path, metavar="DIR", help=dir_help)
