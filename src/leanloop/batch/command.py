"""``leanloop batch``: run an agents file's agents on every task of a JSONL file.

The command checks everything before a task runs (the agents file, every task line, the
results file, each agent's model), so bad input is one located line per problem and exit
2, never a half-run batch. Then it runs the tasks the results file lacks, here
(:mod:`leanloop.batch.runner`) or on Ray (:mod:`leanloop.batch.ray_runner`), shows its
progress on stderr when that is a terminal (:mod:`leanloop.batch.progress`), and prints the
summary on stdout: a few lines, or with ``--json`` one JSON object and no progress line.

A tool call that asks a person (ADR 0037) is decided by ``--approve TOOL``,
``--approve-all`` or an ``--approvals FILE`` (:mod:`leanloop.batch.approvals`); one they do
not cover pauses its task, recorded with ``stop_reason: "paused"`` and its
``pending_calls``; a run of the batch again (with decisions) runs the paused tasks again.

Exit 0 when every task has a result and none failed or paused; 1 when a task failed or
was left without a result (a run of the batch again retries only those without one), or
when a result could not be written (a full disk: one line, ``cannot write FILE: No space
left on device; rerun to resume``); 2 for bad input, and for a results file another batch
is writing (it holds the file's lock: a second batch would run every task again), which is
left untouched; :data:`EXIT_PAUSED` (4, as ``leanloop run``'s) when tasks paused for
approval and none failed or lacks a result.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from leanloop.batch.approvals import read_approvals
from leanloop.batch.progress import BatchProgress
from leanloop.batch.results import ResultsFile, is_paused
from leanloop.batch.summary import summarize
from leanloop.batch.tasks import read_tasks
from leanloop.exceptions import SpecError, SpecIssue

__all__ = ["EXIT_PAUSED", "add_arguments", "batch_command"]

EXIT_PAUSED = 4
"""The exit code of a batch whose tasks paused for approval, none failed or missing (the
same as ``leanloop run``'s ``EXIT_PAUSED``)."""

T = TypeVar("T")
Runner = Callable[[Coroutine[Any, Any, T]], T]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``batch``'s arguments to its subparser (no import beyond argparse)."""
    parser.add_argument("file", help="the agents YAML file")
    parser.add_argument(
        "tasks",
        help='the tasks, one JSON object a line: {"id", "question", '
        '"agent"?, "expected"?} (expected: a regular expression)',
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="PATH",
        help="the results file (JSONL), appended to: ids it holds are skipped",
    )
    parser.add_argument("--agent", help="the agent of tasks without an agent key")
    parser.add_argument(
        "--concurrency",
        type=int,
        metavar="N",
        help="tasks run at once (default 1; with --ray, the cluster's CPUs)",
    )
    parser.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="run the tasks on the Ray cluster at ADDRESS, or on a local one (leanloop[ray])",
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the summary as one JSON object (and no progress line on stderr)",
    )
    parser.add_argument(
        "--approve",
        action="append",
        default=[],
        metavar="TOOL",
        help="approve every call of TOOL that asks a person first (repeatable); a call "
        "no decision covers pauses its task (exit code 4)",
    )
    parser.add_argument(
        "--approve-all",
        action="store_true",
        help="approve every call that asks a person first (edits, run_command, approval: ask)",
    )
    parser.add_argument(
        "--approvals",
        metavar="FILE",
        help="a YAML file of decisions by tool: approve, reject, or 'reject: REASON' "
        "(before --approve and --approve-all)",
    )


def batch_command(args: argparse.Namespace, run: Runner[Any]) -> int:
    """Run ``leanloop batch`` with parsed ``args``; ``run`` runs a coroutine to its end.

    ``run`` is the CLI's interruptible ``asyncio.run`` (Ctrl-C ends the batch promptly;
    the results written until then are on disk).

    Raises:
        SpecError: Bad input, one located issue per problem, or a results file another
            batch holds (the CLI exits 2).
        LeanloopError: ``--ray`` without Ray installed, or no cluster, or a result that
            could not be written (the CLI exits 1).
    """
    from leanloop.spec import load_specs  # noqa: PLC0415

    if args.concurrency is not None and args.concurrency < 1:
        raise SpecError([SpecIssue("--concurrency", None, None, "", "must be at least 1")])
    agents_file = Path(args.file)
    specs = load_specs(agents_file)
    if args.agent is not None and args.agent not in specs:
        names = ", ".join(specs)
        raise SpecError(
            [
                SpecIssue(
                    "--agent",
                    None,
                    None,
                    "",
                    f"no agent named {args.agent!r} in {args.file} (it has {names})",
                )
            ]
        )
    approvals = read_approvals(args.approvals, tools=args.approve, approve_all=args.approve_all)
    tasks = read_tasks(args.tasks, list(specs), default_agent=args.agent)
    if _same_file(Path(args.tasks), args.out):
        raise SpecError([SpecIssue("--out", None, None, "", f"{args.out} is the tasks file")])
    _build_agents(specs, {task.agent for task in tasks})
    with ResultsFile.open(args.out) as results:
        # A paused task has no result yet: it runs again (with this run's decisions).
        todo = [
            task
            for task in tasks
            if task.id not in results.records or is_paused(results.records[task.id])
        ]
        skipped = len(tasks) - len(todo)
        # The line is for a person watching: under --json stderr may be read by a program
        # as well (off a terminal, BatchProgress draws nothing anyway).
        on = False if args.json else None
        started = time.monotonic()
        lost: list[Any] = []
        with BatchProgress(sys.stderr, total=len(tasks), done=skipped, on=on) as progress:
            if args.ray is None:
                from leanloop.batch.runner import run_local  # noqa: PLC0415

                run(
                    run_local(
                        specs,
                        todo,
                        results,
                        concurrency=args.concurrency or 1,
                        on_result=progress.finished,
                        on_start=progress.started,
                        approvals=approvals,
                    )
                )
            else:
                from leanloop.batch.ray_runner import run_ray  # noqa: PLC0415

                outcome = run_ray(
                    agents_file,
                    specs,
                    todo,
                    results,
                    address=args.ray or None,
                    concurrency=args.concurrency,
                    on_result=progress.finished,
                    on_start=progress.started,
                    on_lost=progress.lost,
                    approvals=approvals,
                )
                lost = outcome.lost
        summary = summarize(
            [task.id for task in tasks],
            results.records,
            ran=len(todo) - len(lost),
            skipped=skipped,
            wall_seconds=time.monotonic() - started,
        )
    for task, why in lost:
        print(
            f"error: {args.tasks}:{task.line}: task {task.id!r} has no result: {why}",
            file=sys.stderr,
        )
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2))
    else:
        for line in summary.lines():
            print(line)
    if summary.failed or summary.missing:
        return 1
    return EXIT_PAUSED if summary.paused else 0


def _same_file(a: Path, b: Path) -> bool:
    try:
        return b.exists() and os.path.samefile(a, b)
    except OSError:
        return False


def _build_agents(specs: dict[str, Any], names: set[str]) -> None:
    """Build each agent the tasks use, once: a model that cannot be built is bad input now,
    not a failed result for every one of its tasks.

    Raises:
        SpecError: Every agent that cannot be built, located in the agents file.
    """
    from leanloop.agent import LLMAgent  # noqa: PLC0415

    issues: list[SpecIssue] = []
    for name in sorted(names):
        try:
            LLMAgent.from_spec(specs[name])
        except SpecError as exc:
            issues.extend(exc.issues)
    if issues:
        raise SpecError(issues)
