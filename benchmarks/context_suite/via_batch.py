"""The scripted suite's leanloop strategies through ``leanloop batch`` (``--via-batch``).

``python -m benchmarks.context_suite --via-batch [--concurrency N] [--ray [ADDRESS]]``
writes the workspace, one agents file with an agent per leanloop strategy and window
(``leanloop_trim-4096``, ``leanloop_prune-4096`` …, the settings of
:func:`benchmarks.context_suite.strategies._leanloop`) and a tasks file with a line per
strategy, window and task, then runs ``leanloop batch`` on them as a subprocess. The same
tasks then run in this process as the suite runs them (:func:`suite.run_matrix`), and the
report puts the two side by side, task by task.

The scripted reader goes through the agents file as a ``class:`` model,
:class:`BatchReaderModel`: the reader with its own :class:`~reference.Session` (the
window in ``kwargs``) that finds its task's plan by the question it is asked (the plans
travel in ``kwargs``: nothing but the agents file reaches a Ray worker). The extractor is
:class:`BatchExtractorModel`, the agents' ``pruning_model``.

Each task's check is the suite's (:func:`suite.quoted`: every needle's value quoted, with
nothing glued to it), written as ``expected``: one lookahead per needle. The answers are
graded by the suite's own check as well, and the report says where the two disagree.

What does not go through: LangChain's four strategies (not leanloop agents), and the
suite's token figures: the reference counter's logs live in the models of the batch's
process (the results carry the tokens the reader reported, which are the reference
counts of its requests).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import model_validator

from benchmarks.batch_suites import BatchRun, batch_arguments, run_batch, write_batch_files
from benchmarks.context_suite.models import VALUE_END, ExtractorModel, ReaderModel
from benchmarks.context_suite.reference import RunLog, Session
from benchmarks.context_suite.strategies import STRATEGIES, SYSTEM_PROMPT, Tuning
from benchmarks.context_suite.suite import DEFAULT_TUNING, quoted, run_matrix
from benchmarks.context_suite.tasks import ReadFile, ReadLines, Search, Task
from benchmarks.context_suite.workspace import Needle

__all__ = [
    "LEANLOOP_STRATEGIES",
    "BatchExtractorModel",
    "BatchReaderModel",
    "Comparison",
    "agents_document",
    "batch_rows",
    "expected_pattern",
    "run_via_batch",
    "task_from_data",
    "task_to_data",
]

LEANLOOP_STRATEGIES = tuple(s for s in STRATEGIES if s.family == "leanloop")
"""The strategies that are leanloop agents (the only ones ``leanloop batch`` can run)."""

_STEPS: dict[str, type[ReadFile | Search | ReadLines]] = {
    "ReadFile": ReadFile,
    "Search": Search,
    "ReadLines": ReadLines,
}


def task_to_data(task: Task) -> dict[str, Any]:
    """``task`` as plain JSON values (its needles and its plan's steps)."""
    return {
        "id": task.id,
        "question": task.question,
        "needles": [dataclasses.asdict(n) for n in task.needles],
        "steps": [{"kind": type(s).__name__, **dataclasses.asdict(s)} for s in task.steps],
    }


def task_from_data(data: Mapping[str, Any]) -> Task:
    """The :class:`Task` that :func:`task_to_data` wrote."""
    steps = []
    for raw in data["steps"]:
        fields: dict[str, Any] = {
            k: tuple(v) if isinstance(v, list) else v for k, v in raw.items() if k != "kind"
        }
        steps.append(_STEPS[str(raw["kind"])](**fields))
    needles = tuple(Needle(**n) for n in data["needles"])
    return Task(id=data["id"], question=data["question"], needles=needles, steps=tuple(steps))


class BatchReaderModel(ReaderModel):
    """The reader as a ``class:`` model: its own session, its task found by its question."""

    window: int
    plans: list[dict[str, Any]]
    """The tasks it may be asked, as :func:`task_to_data` wrote them."""

    @model_validator(mode="before")
    @classmethod
    def _own_session(cls, data: Any) -> Any:
        if isinstance(data, dict) and "session" not in data and "window" in data:
            data = {**data, "session": Session(int(data["window"]))}
        return data

    def _reply(self, messages: list[BaseMessage], tools: list[dict[str, Any]]) -> AIMessage:
        if self._state is None:
            self.begin(self._task_asked(messages))
        return super()._reply(messages, tools)

    def _task_asked(self, messages: Sequence[BaseMessage]) -> Task:
        asked = next((str(m.content) for m in messages if isinstance(m, HumanMessage)), "")
        for plan in self.plans:
            if plan["question"] in asked:
                return task_from_data(plan)
        msg = f"no plan for the question {asked[:80]!r}"
        raise RuntimeError(msg)


class BatchExtractorModel(ExtractorModel):
    """The extractor as a ``class:`` model, with its own session (the window in ``kwargs``)."""

    window: int

    @model_validator(mode="before")
    @classmethod
    def _own_session(cls, data: Any) -> Any:
        if isinstance(data, dict) and "session" not in data and "window" in data:
            data = {**data, "session": Session(int(data["window"]))}
        return data


def expected_pattern(task: Task) -> str:
    """:func:`suite.quoted`'s "every needle quoted" as one regular expression."""
    looks = "".join(
        r"(?=[\s\S]*?(?<![\w.-])" + re.escape(n.value) + VALUE_END + ")" for n in task.needles
    )
    return "^" + looks


def _agent_name(strategy: str, window: int) -> str:
    return f"{strategy}-{window}"


def agents_document(
    windows: Sequence[int], tasks: Sequence[Task], *, tuning: Tuning = DEFAULT_TUNING
) -> dict[str, Any]:
    """One agent per leanloop strategy and window, as the suite builds them."""
    plans = [task_to_data(t) for t in tasks]
    models: dict[str, Any] = {}
    agents: dict[str, Any] = {}
    for window in windows:
        models[f"extractor-{window}"] = {
            "class": f"{__name__}:BatchExtractorModel",
            "context_window": window,
            "kwargs": {"window": window},
        }
        for strategy in LEANLOOP_STRATEGIES:
            prune = strategy.key == "leanloop_prune"
            key = "prune" if prune else "trim"
            # The model name the suite gives leanloop (it keys the learned token ratio).
            models[f"reader-{key}-{window}"] = {
                "class": f"{__name__}:BatchReaderModel",
                "model": f"{tuning.reader_name}-{key}-{window}",
                "context_window": window,
                "kwargs": {"window": window, "plans": plans},
            }
            agent: dict[str, Any] = {
                "model": f"reader-{key}-{window}",
                "system_prompt": SYSTEM_PROMPT,
                "tools": ["read_file", "search", "list_files"],
                "workspace": "workspace",
                "max_rounds": tuning.max_rounds,
                "trim_tool_results": True,
                "allow_tool_output_pruning": prune,
                "pruning_tools": ["read_file", "search"],
                "prefetch_mentioned_files": tuning.prefetch,
                "prompt_profile": tuning.prompt_profile,
            }
            if prune:
                agent["pruning_model"] = f"extractor-{window}"
            agents[_agent_name(strategy.key, window)] = agent
    return {"version": 1, "models": models, "agents": agents}


def batch_rows(windows: Sequence[int], tasks: Sequence[Task]) -> list[dict[str, Any]]:
    """A task line per strategy, window and task: ``STRATEGY/WINDOW/TASK``."""
    return [
        {
            "id": f"{strategy.key}/{window}/{task.id}",
            "agent": _agent_name(strategy.key, window),
            "question": task.question,
            "expected": expected_pattern(task),
        }
        for window in windows
        for strategy in LEANLOOP_STRATEGIES
        for task in tasks
    ]


@dataclass(frozen=True)
class Comparison:
    """The serial run and the batch run of the same tasks."""

    serial: list[RunLog]
    serial_seconds: float
    batch: BatchRun
    windows: list[int]
    tasks: list[Task]

    def lines(self) -> list[str]:
        """The report: per strategy and window, then every disagreement."""
        by_task = {task.id: task for task in self.tasks}
        serial = {(log.strategy, log.window, log.task_id): log for log in self.serial}
        rows = [
            "| strategy | window | serial correct | batch correct | same answers | "
            "batch prompt tokens (reference) | batch s/task |",
            "|---|---|---|---|---|---|---|",
        ]
        notes: list[str] = []
        for window in self.windows:
            for strategy in LEANLOOP_STRATEGIES:
                right_serial = right_batch = same = tokens = 0
                seconds = 0.0
                for task in self.tasks:
                    log = serial[(strategy.key, window, task.id)]
                    record = self.batch.records.get(f"{strategy.key}/{window}/{task.id}", {})
                    answer = record.get("answer") or ""
                    graded = not record.get("error") and quoted(by_task[task.id], answer) == len(
                        task.needles
                    )
                    right_serial += log.correct
                    right_batch += graded
                    same += answer == log.answer
                    tokens += (record.get("usage") or {}).get("input_tokens") or 0
                    seconds += float(record.get("seconds") or 0.0)
                    where = f"{strategy.key} {window} {task.id}"
                    if graded != bool(record.get("correct")):
                        notes.append(
                            f"- {where}: `expected` says {record.get('correct')}, the suite's "
                            f"check says {graded}"
                        )
                    if answer != log.answer:
                        notes.append(
                            f"- {where}: answers differ: serial {log.answer[:90]!r} "
                            f"({log.error or 'no error'}); batch {answer[:90]!r} "
                            f"({record.get('error') or 'no error'})"
                        )
                n = len(self.tasks)
                rows.append(
                    f"| {strategy.key} | {window:,} | {right_serial}/{n} | {right_batch}/{n} | "
                    f"{same}/{n} | {tokens:,} | {seconds / n:.2f} |"
                )
        runs = len(self.serial)
        lines = [
            "# Context suite: leanloop's strategies serially and through `leanloop batch`",
            "",
            f"`{' '.join(self.batch.command[1:])}` (exit {self.batch.returncode})",
            "",
            *rows,
            "",
            f"- serial, in this process (`run_matrix`, as the suite runs them, one warm-up "
            f"run per strategy and window not counted): {runs} runs in "
            f"{self.serial_seconds:.1f} s",
            f"- through `leanloop batch` (the subprocess, start-up included): {runs} runs in "
            f"{self.batch.wall_seconds:.1f} s",
            *(f"- the command's summary: {line}" for line in self.batch.summary),
        ]
        if notes:
            lines += ["", "## Where the two differ", "", *notes]
        return lines


def run_via_batch(
    folder: Path,
    *,
    windows: Sequence[int],
    tasks: Sequence[Task],
    concurrency: int | None,
    ray: str | None,
) -> Comparison:
    """Run the leanloop strategies' tasks through ``leanloop batch``, then serially.

    ``folder`` holds the workspace (``folder/workspace``, already built) and gets the
    agents, tasks and results files.
    """
    agents = folder / "agents.yaml"
    tasks_file = folder / "tasks.jsonl"
    write_batch_files(
        agents, agents_document(windows, tasks), tasks_file, batch_rows(windows, tasks)
    )
    root = Path(__file__).resolve().parents[2]  # the class models import from the checkout
    batch = run_batch(
        agents,
        tasks_file,
        folder / "results.jsonl",
        batch_arguments(concurrency=concurrency, ray=ray),
        env={
            "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))
        },
    )
    started = time.perf_counter()
    serial = asyncio.run(
        run_matrix(
            strategies=LEANLOOP_STRATEGIES,
            windows=windows,
            tasks=tasks,
            workspace=folder / "workspace",
        )
    )
    return Comparison(
        serial=serial,
        serial_seconds=time.perf_counter() - started,
        batch=batch,
        windows=list(windows),
        tasks=list(tasks),
    )
