"""The quality suite through ``leanloop batch`` (``python -m benchmarks.model_quality
--via-batch``).

The same tasks, checks and agent configuration as the serial run of the ``leanloop``
loop, run by the real command line: the suite writes the agents file (the serial run's
:func:`~benchmarks.model_quality.runner.agent_document`, with the workspace relative to
it), the workspace and ``tasks.jsonl`` into a folder, runs ``leanloop batch`` as a
subprocess on the server it started, and turns each results line back into a
:class:`~benchmarks.model_quality.runner.TaskResult` from the run report the line holds.

Every task's check is a regular expression matched case-insensitively
(:meth:`QualityTask.correct`), so each task line carries it as ``expected``, prefixed with
``(?i)`` (``leanloop batch`` matches case-sensitively); the suite grades the answers
again with its own checker, and :func:`results_from_batch` says where the two disagree.

Only the ``leanloop`` loop can go through the command: ``leanloop-off`` switches part of
the help off by patching leanloop in the process (:func:`runner.help_switched_off`),
and ``create_agent`` is not leanloop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.batch_suites import BatchRun, batch_arguments, run_batch, write_batch_files
from benchmarks.model_quality.runner import TaskResult, agent_document, read_leanloop_report
from benchmarks.model_quality.tasks import QualityTask

__all__ = ["AGENT", "ModeRun", "batch_rows", "results_from_batch", "run_mode"]

AGENT = "quality"
"""The agent of :func:`runner.agent_document`."""


@dataclass(frozen=True)
class ModeRun:
    """One ``leanloop batch`` command over the tasks in one protocol mode."""

    mode: str
    batch: BatchRun
    results: list[TaskResult]
    disagreements: list[str]
    """Tasks whose ``correct`` from the command differs from the suite's own check."""


def batch_rows(tasks: Sequence[QualityTask]) -> list[dict[str, Any]]:
    """The tasks file's lines: the question, and the suite's check as ``expected``."""
    return [{"id": t.key, "question": t.question, "expected": "(?i)" + t.fact} for t in tasks]


def run_mode(
    folder: Path,
    tasks: Sequence[QualityTask],
    *,
    mode: str,
    base_url: str,
    concurrency: int | None,
    ray: str | None,
) -> ModeRun:
    """Run ``tasks`` through ``leanloop batch`` on the server at ``base_url``.

    ``folder`` holds the workspace (``folder/workspace``); the agents, tasks and results
    files of this mode are written beside it (``agents-MODE.yaml``, ``tasks.jsonl``,
    ``results-MODE.jsonl``).
    """
    agents = folder / f"agents-{mode}.yaml"
    tasks_file = folder / "tasks.jsonl"
    document = agent_document("leanloop", mode, base_url, "workspace")
    write_batch_files(agents, document, tasks_file, batch_rows(tasks))
    options = batch_arguments(concurrency=concurrency, ray=ray, agent=AGENT)
    batch = run_batch(agents, tasks_file, folder / f"results-{mode}.jsonl", options)
    results, disagreements = results_from_batch(tasks, batch.records, mode=mode)
    return ModeRun(mode, batch, results, disagreements)


def results_from_batch(
    tasks: Sequence[QualityTask], records: Mapping[str | int, Mapping[str, Any]], *, mode: str
) -> tuple[list[TaskResult], list[str]]:
    """One :class:`TaskResult` per task (in task order) from the batch's result lines.

    A task without a line (a lost Ray task) is a failed run. Returns the results and the
    tasks where the command's ``correct`` and the suite's check disagree.
    """
    results: list[TaskResult] = []
    disagreements: list[str] = []
    for task in tasks:
        result = TaskResult(task.key, "leanloop", mode)
        record = records.get(task.key)
        if record is None:
            result.error = "no result line (leanloop batch left the task without a result)"
            results.append(result)
            continue
        report = record.get("report") or {}
        answer = record.get("answer") or ""
        if record.get("error"):
            result.error = " ".join(str(record["error"]).split())[:300]
        if "stop_reason" in report and "requests" in report:
            read_leanloop_report(task, result, report, answer)
        else:
            result.answer = answer
            result.stop_reason = str(record.get("stop_reason", ""))
        result.seconds = round(float(record.get("seconds") or 0.0), 2)
        result.correct = not result.error and task.correct(result.answer)
        if bool(record.get("correct")) != result.correct:
            disagreements.append(
                f"{task.key}: leanloop batch says correct={record.get('correct')}, "
                f"the suite's check says {result.correct}"
            )
        results.append(result)
    return results, disagreements
