"""Running a batch's tasks here, in one event loop, at most ``concurrency`` at a time.

Every task gets an agent of its own, built from its spec as ``leanloop run`` builds one:
a task never sees another's model state (a scripted model's next reply, a client's
history), so the results do not depend on the order or the overlap of the tasks, and a
batch run one task at a time gives the same results as one run four at a time.

:func:`run_task` is also what a Ray worker runs (:mod:`leanloop.batch.ray_runner`); what
it returns is the result line, JSON-ready.

A task's ``expected`` is matched with a time limit (:data:`MATCH_SECONDS`), by the
``regex`` module with the GIL released, as the workspace ``search`` tool matches: ``re``
holds the GIL while it backtracks, so a pattern such as ``(a|aa)+$`` would hold the batch
at full CPU for hours, deaf to Ctrl-C and SIGTERM. A match that runs out of time counts as
not correct, with a ``note`` in the result line saying so.

A tool call that asks a person (ADR 0037) is decided by the batch's flags or policy file
(:mod:`leanloop.batch.approvals`, :func:`batch_approver`); one they do not cover pauses
its task: the result line's ``stop_reason`` is ``paused``, its ``pending_calls`` list the
calls, and ``expected`` is not matched (a waiting text is no answer, right or wrong).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import regex  # type: ignore[import-untyped,unused-ignore]  # no stubs in the dev set

from leanloop.exceptions import LeanloopError, RunFailed, StructuredOutputError

if TYPE_CHECKING:
    from leanloop.batch.approvals import BatchApprovals
    from leanloop.batch.results import ResultsFile
    from leanloop.batch.tasks import BatchTask
    from leanloop.loop.policies.approval import Approver
    from leanloop.spec.types import AgentSpec

__all__ = [
    "MATCH_SECONDS",
    "OnResult",
    "OnStart",
    "batch_approver",
    "expected_matches",
    "result_record",
    "run_local",
    "run_task",
]

OnResult = Callable[[dict[str, Any]], None]
"""Called in the driver with each result line once it is written (the progress line)."""

OnStart = Callable[["BatchTask"], None]
"""Called in the driver as a task's run begins (the progress line counts it running)."""

MATCH_SECONDS = 1.0
"""The longest an ``expected`` pattern may take to match one answer (a sane one takes
microseconds; one that backtracks without end is cut here, and a signal waits at most this)."""


async def run_task(
    spec: AgentSpec, task: BatchTask, approvals: BatchApprovals | None = None
) -> dict[str, Any]:
    """Run ``task`` on a fresh agent built from ``spec``; return its result line.

    A run that fails (the model's server down, an answer that cannot be typed, a model
    that raises) is a result too, with ``stop_reason`` ``failed`` and its ``error``: one
    task's failure never stops the batch. ``approvals`` decide on the calls that ask a
    person; without them (or a decision) such a call pauses the task.
    """
    from leanloop.agent import LLMAgent  # noqa: PLC0415 - LangChain only once a task runs
    from leanloop.budget import PROCESS_STATE  # noqa: PLC0415

    started = time.perf_counter()
    answer: str | None = None
    error: str | None = None
    try:
        # Its own estimators: what the task trims never depends on the tasks before it.
        shared = PROCESS_STATE.with_own_estimators()
        agent = LLMAgent.from_spec(spec, shared_state=shared)
        # Never the agent's own approver (none from a file) and never a terminal.
        agent = agent.with_approver(batch_approver(approvals) if approvals else None)
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


def batch_approver(approvals: BatchApprovals) -> Approver:
    """The approver of a batch's tasks: the file's rule, ``--approve``, ``--approve-all``,
    else a pause (:mod:`leanloop.batch.approvals`)."""
    from leanloop.loop.policies.approval import (  # noqa: PLC0415 - LangChain once a task runs
        ApprovalRequest,
        Approve,
        Decision,
        Pause,
        Reject,
    )

    named = frozenset(approvals.tools)

    def decide(request: ApprovalRequest) -> Decision:
        rule = approvals.rules.get(request.tool)
        if rule is not None:
            by = f"batch --approvals {approvals.source}"
            return Approve(by=by) if rule[0] == "approve" else Reject(rule[1], by=by)
        if request.tool in named:
            return Approve(by=f"batch --approve {request.tool}")
        if approvals.approve_all:
            return Approve(by="batch --approve-all")
        return Pause(f"no decision for {request.tool} in the batch's flags or --approvals file")

    return decide


def expected_matches(
    pattern: str, answer: str | None, *, seconds: float = MATCH_SECONDS
) -> tuple[bool, str | None]:
    """Whether ``pattern`` is found in ``answer``, within ``seconds``; and a note, or ``None``.

    Returns:
        ``(found, None)``; ``(False, note)`` when the match ran out of time (the note says
        so) or the pattern cannot be used (the tasks check makes that rare).
    """
    if answer is None:
        return False, None
    try:
        # concurrent: the GIL is released while matching, so other threads go on.
        found = regex.search(pattern, answer, timeout=seconds, concurrent=True) is not None
    except TimeoutError:
        return False, (
            f"expected took too long to match (over {seconds:g} s): nested or overlapping "
            "repeats such as (a|aa)+ backtrack without end; counted as not correct"
        )
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        return False, f"expected could not be matched ({exc}); counted as not correct"
    return found, None


def result_record(
    task: BatchTask,
    answer: str | None,
    report: Mapping[str, Any],
    *,
    error: str | None,
    seconds: float,
    match_seconds: float = MATCH_SECONDS,
) -> dict[str, Any]:
    """The result line of ``task``: answer, stop reason, usage, correctness and report.

    ``match_seconds`` is the time ``expected`` may take to match (:func:`expected_matches`).
    """
    requests = [r for r in report.get("requests", ()) if isinstance(r, Mapping)]
    stop_reason = "failed" if error is not None else report.get("stop_reason", "answer")
    record: dict[str, Any] = {
        "id": task.id,
        "agent": task.agent,
        "answer": answer,
        "stop_reason": stop_reason,
        "usage": {
            "input_tokens": _sum(requests, "input_tokens"),
            "output_tokens": _sum(requests, "output_tokens"),
            "requests": len(requests),
        },
        "seconds": round(seconds, 3),
    }
    if stop_reason == "paused":
        record["pending_calls"] = list(report.get("pending_calls") or [])
    if task.expected is not None:
        record["expected"] = task.expected
    if task.expected is not None and stop_reason != "paused":
        record["correct"], note = expected_matches(task.expected, answer, seconds=match_seconds)
        if note is not None:
            record["note"] = note
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
    on_start: OnStart | None = None,
    approvals: BatchApprovals | None = None,
) -> None:
    """Run ``tasks`` here, ``concurrency`` at a time, writing each result as it finishes.

    ``on_start`` is called with each task as its run begins (inside the concurrency
    limit), ``on_result`` with its result line once written.

    Results are written in the order tasks finish; a cancel (Ctrl-C) stops the tasks in
    flight, and every result written before it is on disk.

    Raises:
        LeanloopError: A result could not be written (a full disk): the tasks in flight
            are stopped, and the error is raised as itself, not in an exception group.
    """
    limit = asyncio.Semaphore(concurrency)

    async def one(task: BatchTask) -> None:
        async with limit:
            if on_start is not None:
                on_start(task)
            record = await run_task(specs[task.agent], task, approvals)
        # No await between the run's end and the write: one writer, lines never interleave.
        written = results.write(record)
        if on_result is not None:
            on_result(written)

    # One coroutine per task is cheap; the semaphore keeps `concurrency` runs at a time.
    try:
        async with asyncio.TaskGroup() as group:
            for task in tasks:
                group.create_task(one(task))
    except* LeanloopError as failed:
        # The first write that failed ended the group (the others were cancelled): its
        # one line is the batch's, not a traceback of the group.
        raise failed.exceptions[0] from None


def _sum(rows: Sequence[Mapping[str, Any]], key: str) -> int | None:
    """The sum of ``key`` over ``rows`` that have it; ``None`` when none does."""
    known = [
        row[key]
        for row in rows
        if isinstance(row.get(key), int) and not isinstance(row.get(key), bool)
    ]
    return sum(known) if known else None
