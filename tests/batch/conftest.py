"""Fixtures of the batch tests: an agents file of scripted models, tasks, the CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

AGENTS = """\
version: 1
agents:
  quiz:
    model: {{class: "batch_models:QuizModel", kwargs: {kwargs}}}
  scripted:
    model:
      class: leanloop.testing:ScriptedChatModel
      kwargs: {{replies: ["Paris is the capital."], report_usage: true}}
"""

VOLATILE = frozenset({"seconds"})
"""Keys of a result line whose values are clock readings."""


class Kit:
    """The batch tests' helpers (a fixture: with importlib mode a conftest is no module)."""

    @staticmethod
    def quiz_tasks(count: int, *, agent: str | None = "quiz") -> list[dict[str, Any]]:
        """``count`` tasks ``t0``…; ``expected`` matches the answer of the even ones only."""
        tasks = []
        for i in range(count):
            task: dict[str, Any] = {"id": f"t{i}", "question": f"what is {i} times two"}
            if agent is not None:
                task["agent"] = agent
            # QuizModel answers with the words reversed: "two times 3 is what (..)".
            task["expected"] = rf"^two times {i} is what" if i % 2 == 0 else "four"
            tasks.append(task)
        return tasks

    @staticmethod
    def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
        return path

    @staticmethod
    def read_jsonl(path: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    @staticmethod
    def comparable(rows: Iterable[Mapping[str, Any]]) -> dict[Any, Any]:
        """Result lines by id, as far as they must not depend on how the batch ran.

        Left out: clock readings, and the report's token *estimates* (each task learns
        into estimators of its own, so they no longer depend on the tasks before it:
        ``test_a_task_estimates_as_if_it_ran_alone`` checks them). What the runs did
        stays: answer, stop reason, usage, correctness, steps, tool calls, each request's
        reported tokens.
        """

        def stable(row: Mapping[str, Any]) -> dict[str, Any]:
            report = row["report"]
            kept = {k: v for k, v in row.items() if k not in VOLATILE and k != "report"}
            kept["report"] = {
                "stop_reason": report.get("stop_reason"),
                "steps": report.get("steps"),
                "question": report.get("question"),
                "tool_calls": [(c["name"], c["args"]) for c in report.get("tool_calls", [])],
                "requests": [
                    (r.get("input_tokens"), r.get("output_tokens"), r.get("kind"))
                    for r in report.get("requests", [])
                ],
            }
            return kept

        return {row["id"]: stable(row) for row in rows}

    @staticmethod
    def process(*args: str | os.PathLike[str], cwd: Path) -> subprocess.Popen[str]:
        """``python -m leanloop ARGS`` in a child process, its output piped."""
        return subprocess.Popen(
            [sys.executable, "-m", "leanloop", *map(str, args)],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )


@pytest.fixture
def kit() -> Kit:
    return Kit()


@pytest.fixture
def make_batch(tmp_path: Path) -> Callable[..., Path]:
    """Write ``agents.yaml`` (``batch_models.py`` beside it) into a folder; return the folder.

    Keyword arguments become the ``quiz`` agent's ``QuizModel`` kwargs (``delay``,
    ``mark_dir``).
    """

    def make(**kwargs: Any) -> Path:
        folder = tmp_path / "batch"
        folder.mkdir(exist_ok=True)
        shutil.copy(FIXTURES / "batch_models.py", folder)
        (folder / "agents.yaml").write_text(AGENTS.format(kwargs=json.dumps(kwargs)))
        return folder

    return make
