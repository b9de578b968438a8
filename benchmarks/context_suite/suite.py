"""Run every strategy on every task at every window, and log each run.

For each window and strategy the suite builds fresh models on a fresh :class:`Session`,
builds the strategy once, warms it up with one unrecorded run (imports, schema and graph
compilation are not a step's cost), then runs the tasks in order. A run that raises (a
refused request, a recursion limit) is logged with its error and counts as unanswered.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from langchain_core.language_models import BaseChatModel

from benchmarks.context_suite.models import (
    VALUE_END,
    ExtractorModel,
    ReaderModel,
    SummarizerModel,
)
from benchmarks.context_suite.reference import RunLog, Session, timed_tools
from benchmarks.context_suite.strategies import (
    Runner,
    Setup,
    Strategy,
    Tuning,
    summary_budget_chars,
)
from benchmarks.context_suite.tasks import Task
from leanloop.tools import workspace_tools

__all__ = ["Models", "ModelsFactory", "quiet_logs", "quoted", "run_matrix", "scripted_models"]

DEFAULT_TUNING = Tuning()


@dataclass(frozen=True)
class Models:
    """The models one strategy and window use, and how to start a task on them."""

    reader: BaseChatModel
    extractor: BaseChatModel
    summarizer: BaseChatModel
    begin: Callable[[Task], None]


ModelsFactory = Callable[[Session], Models]


def scripted_models(session: Session) -> Models:
    """The deterministic reader, extractor and summarizer on ``session``."""
    reader = ReaderModel(session=session)
    return Models(
        reader=reader,
        extractor=ExtractorModel(session=session),
        summarizer=SummarizerModel(
            session=session, budget_chars=summary_budget_chars(session.window)
        ),
        begin=reader.begin,
    )


def quoted(task: Task, answer: str) -> int:
    """How many of ``task``'s needle values ``answer`` quotes."""
    return sum(
        re.search(r"(?<![\w.-])" + re.escape(n.value) + VALUE_END, answer) is not None
        for n in task.needles
    )


@contextmanager
def quiet_logs() -> Iterator[None]:
    """Silence leanloop's and LangChain's warnings for the length of the suite."""
    loggers = [logging.getLogger(name) for name in ("leanloop", "langchain", "langgraph")]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


async def run_matrix(
    *,
    strategies: Sequence[Strategy],
    windows: Sequence[int],
    tasks: Sequence[Task],
    workspace: Path,
    models: ModelsFactory = scripted_models,
    progress: Callable[[str], None] | None = None,
    warm_up: bool = True,
    tuning: Tuning = DEFAULT_TUNING,
    run_timeout: float | None = None,
) -> list[RunLog]:
    """Run each task under each strategy at each window; return the logs in that order.

    ``run_timeout`` seconds end a run that takes longer (it counts as failed).
    """
    logs: list[RunLog] = []
    for window in windows:
        for strategy in strategies:
            started = time.perf_counter()
            session = Session(window)
            runner, begin = _build(strategy, session, workspace, models, tuning)
            if warm_up:
                await _run_one(runner, begin, session, strategy, tasks[0], run_timeout)
            runs = [
                await _run_one(runner, begin, session, strategy, task, run_timeout)
                for task in tasks
            ]
            logs.extend(runs)
            if progress is not None:
                right = sum(r.correct for r in runs)
                seconds = time.perf_counter() - started
                progress(f"{window:>6} {strategy.key:<16} {right}/{len(runs)} in {seconds:.1f} s")
    return logs


def _build(
    strategy: Strategy, session: Session, workspace: Path, models: ModelsFactory, tuning: Tuning
) -> tuple[Runner, Callable[[Task], None]]:
    made = models(session)
    tools = workspace_tools(workspace)
    setup = Setup(
        window=session.window,
        workspace=workspace,
        reader=made.reader,
        extractor=made.extractor,
        summarizer=made.summarizer,
        langchain_tools=timed_tools(tools, session, errors_as_results=True),
        leanloop_tools=timed_tools(tools, session, errors_as_results=False),
        tuning=tuning,
    )
    return strategy.build(setup), made.begin


async def _run_one(
    runner: Runner,
    begin: Callable[[Task], None],
    session: Session,
    strategy: Strategy,
    task: Task,
    limit: float | None,
) -> RunLog:
    log = session.begin(task.id, strategy.key)
    begin(task)
    started, cpu = time.perf_counter(), time.process_time()
    try:
        async with asyncio.timeout(limit):
            answer = await runner(task)
    except TimeoutError:
        log.error = f"TimeoutError: the run took longer than {limit} s"
    except Exception as exc:  # a failed run is a result, not a crash of the suite
        log.error = _one_line(exc)
    else:
        log.answer = answer.text
        log.pruning = list(answer.pruning)
        log.found = quoted(task, log.answer)
        log.correct = log.found == len(task.needles)
    log.wall_seconds = time.perf_counter() - started
    log.cpu_seconds = time.process_time() - cpu
    return log


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]
