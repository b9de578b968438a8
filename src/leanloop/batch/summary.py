"""What a batch did, in a few lines: results, accuracy, tokens, time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from leanloop.batch.tasks import TaskId
from leanloop.report import ENDED_OTHERWISE

__all__ = ["BatchSummary", "summarize"]


@dataclass(frozen=True, kw_only=True)
class BatchSummary:
    """The figures of a batch, over every task of the tasks file that has a result.

    Attributes:
        tasks: Tasks in the tasks file.
        ran: Tasks run (and written) by this command.
        skipped: Tasks whose result the results file already held.
        missing: Tasks without a result (a worker that died on every retry, an interrupt).
        answered: Results with the model's own answer.
        ended_otherwise: Results ended by ``max_rounds``, ``budget_exhausted`` or
            ``repeated_calls`` (an answer leanloop composed).
        failed: Results of failed runs.
        paused: Tasks that wait for a decision on a tool call (ADR 0037): no decision of
            the batch's flags or ``--approvals`` file covered it; a run again with one
            runs them again.
        with_expected: Results whose task has an ``expected`` pattern.
        correct: Of those, the answers it matches.
        input_tokens: Prompt tokens over every result (as the servers reported them).
        output_tokens: Reply tokens over every result.
        task_seconds: The mean time one task took, over the results (``None``: none).
        wall_seconds: How long this command ran the batch.
    """

    tasks: int
    ran: int
    skipped: int
    missing: int
    answered: int
    ended_otherwise: int
    failed: int
    paused: int = 0
    with_expected: int
    correct: int
    input_tokens: int
    output_tokens: int
    task_seconds: float | None
    wall_seconds: float

    @property
    def accuracy(self) -> float | None:
        """Correct answers over the results that have an ``expected`` (``None``: none)."""
        return self.correct / self.with_expected if self.with_expected else None

    def lines(self) -> list[str]:
        """The summary as the command prints it."""
        done = self.tasks - self.missing
        first = (
            f"batch: {done}/{self.tasks} tasks done ({self.ran} this run, {self.skipped} earlier)"
        )
        first += f" · {self.answered} answered · {self.ended_otherwise} ended otherwise"
        first += f" · {self.failed} failed"
        if self.paused:
            first += (
                f" · {self.paused} paused for approval (run the batch again with --approve "
                "TOOL, --approve-all or --approvals FILE)"
            )
        if self.missing:
            first += f" · {self.missing} without a result (run the batch again to finish them)"
        lines = [first]
        if self.accuracy is not None:
            lines.append(
                f"accuracy: {self.correct}/{self.with_expected} correct "
                f"({self.accuracy:.1%}) where a task has `expected`"
            )
        lines.append(f"tokens: {self.input_tokens:,} prompt · {self.output_tokens:,} reply")
        per_task = (
            f"{self.task_seconds:.2f} s per task (mean)"
            if self.task_seconds is not None
            else "no task"
        )
        lines.append(
            f"time: {per_task} · {self.wall_seconds:.1f} s wall for {self.ran} tasks this run"
        )
        return lines

    def to_dict(self) -> dict[str, Any]:
        """The figures as plain values (``accuracy`` included)."""
        return {
            **{k: getattr(self, k) for k in self.__dataclass_fields__},
            "accuracy": self.accuracy,
        }


def summarize(
    task_ids: Sequence[TaskId],
    records: Mapping[TaskId, Mapping[str, Any]],
    *,
    ran: int,
    skipped: int,
    wall_seconds: float,
) -> BatchSummary:
    """The summary of the tasks ``task_ids`` from their result ``records`` (by id)."""
    rows = [records[i] for i in task_ids if i in records]
    reasons = [str(row.get("stop_reason")) for row in rows]
    expected = [row for row in rows if "correct" in row]
    seconds = [row["seconds"] for row in rows if isinstance(row.get("seconds"), int | float)]
    return BatchSummary(
        tasks=len(task_ids),
        ran=ran,
        skipped=skipped,
        missing=len(task_ids) - len(rows),
        answered=reasons.count("answer"),
        ended_otherwise=sum(1 for r in reasons if r in ENDED_OTHERWISE),
        failed=reasons.count("failed"),
        paused=reasons.count("paused"),
        with_expected=len(expected),
        correct=sum(1 for row in expected if row.get("correct") is True),
        input_tokens=sum(_usage(row, "input_tokens") for row in rows),
        output_tokens=sum(_usage(row, "output_tokens") for row in rows),
        task_seconds=sum(seconds) / len(seconds) if seconds else None,
        wall_seconds=wall_seconds,
    )


def _usage(row: Mapping[str, Any], key: str) -> int:
    usage = row.get("usage")
    value = usage.get(key) if isinstance(usage, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
