"""Running a batch's tasks here, in one event loop, at most ``concurrency`` at a time.

Every task gets an agent of its own, built from its spec as ``leanloop run`` builds one:
a task never sees another's model state (a scripted model's next reply, a client's
history), so the results do not depend on the order or the overlap of the tasks, and a
batch run one task at a time gives the same results as one run four at a time.

:func:`run_task` is also what a Ray worker runs (:mod:`leanloop.batch.ray_runner`); what
it returns is the result line, JSON-ready.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from leanloop.exceptions import RunFailed, StructuredOutputError

if TYPE_CHECKING:
    from leanloop.batch.results import ResultsFile
    from leanloop.batch.tasks import BatchTask
    from leanloop.spec.types import AgentSpec

__all__ = ["OnResult", "result_record", "run_local", "run_task"]

OnResult = Callable[[dict[str, Any]], None]
"""Called in the driver with each result line once it is written (the progress bar)."""


async def run_task(spec: AgentSpec, task: BatchTask) -> dict[str, Any]:
    """Run ``task`` on a fresh agent built from ``spec``; return its result line.

    A run that fails (the model's server down, an answer that cannot be typed, a model
    that raises) is a result too, with ``stop_reason`` ``failed`` and its ``error``: one
    task's failure never stops the batch.
    """
    from leanloop.agent import LLMAgent  # noqa: PLC0415 - LangChain only once a task runs
    from leanloop.budget import TokenEstimators  # noqa: PLC0415

    started = time.perf_counter()
    answer: str | None = None
    error: str | None = None
    try:
        # Its own estimators: what the task trims never depends on the tasks before it.
        agent = LLMAgent.from_spec(spec, estimators=TokenEstimators())
        message = await agent.ainvoke(task.question)
        answer = message.text
        report = dict(message.response_metadata.get("leanloop", {}))
    except RunFailed as exc:
        report, error = exc.report.to_dict(), str(exc)
    except StructuredOutputError as exc:
        # The run ended; only its typed answer could not be made: keep what it gave.
        report, error = dict(exc.answer.response_metadata.get("leanloop", {})), str(exc)
    except Exception as exc:  # one task's failure is its result, never the batch's end
        report, error = {}, f"{type(exc).__name__}: {exc}"
    return result_record(task, answer, report, error=error, seconds=time.perf_counter() - started)


def result_record(
    task: BatchTask,
    answer: str | None,
    report: Mapping[str, Any],
    *,
    error: str | None,
    seconds: float,
) -> dict[str, Any]:
    """The result line of ``task``: answer, stop reason, usage, correctness and report."""
    requests = [r for r in report.get("requests", ()) if isinstance(r, Mapping)]
    record: dict[str, Any] = {
        "id": task.id,
        "agent": task.agent,
        "answer": answer,
        "stop_reason": "failed" if error is not None else report.get("stop_reason", "answer"),
        "usage": {
            "input_tokens": _sum(requests, "input_tokens"),
            "output_tokens": _sum(requests, "output_tokens"),
            "requests": len(requests),
        },
        "seconds": round(seconds, 3),
    }
    if task.expected is not None:
        record["expected"] = task.expected
        record["correct"] = answer is not None and re.search(task.expected, answer) is not None
    if error is not None:
        record["error"] = error
    record["report"] = dict(report)
    return record


async def run_local(
    specs: Mapping[str, AgentSpec],
    tasks: Sequence[BatchTask],
    results: ResultsFile,
    *,
    concurrency: int,
    on_result: OnResult | None = None,
) -> None:
    """Run ``tasks`` here, ``concurrency`` at a time, writing each result as it finishes.

    Results are written in the order tasks finish; a cancel (Ctrl-C) stops the tasks in
    flight, and every result written before it is on disk.
    """
    limit = asyncio.Semaphore(concurrency)

    async def one(task: BatchTask) -> None:
        async with limit:
            record = await run_task(specs[task.agent], task)
        # No await between the run's end and the write: one writer, lines never interleave.
        results.write(record)
        if on_result is not None:
            on_result(record)

    # One coroutine per task is cheap; the semaphore keeps `concurrency` runs at a time.
    async with asyncio.TaskGroup() as group:
        for task in tasks:
            group.create_task(one(task))


def _sum(rows: Sequence[Mapping[str, Any]], key: str) -> int | None:
    """The sum of ``key`` over ``rows`` that have it; ``None`` when none does."""
    known = [
        row[key]
        for row in rows
        if isinstance(row.get(key), int) and not isinstance(row.get(key), bool)
    ]
    return sum(known) if known else None
