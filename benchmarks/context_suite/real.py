"""``--real``: a few tasks against the local llama-server, with the Qwen model in every role.

The embedded server (``leanloop local setup`` builds it; :func:`running_server` runs it on
a free port with a 4,096-token window) answers as the reader, as leanloop's extractor and
as LangChain's summarizer. Every request still goes through the reference counter, so the
figures are comparable with the scripted suite; the server refuses what does not fit its
own window (its tokenizer counts differently), and a run that takes too long is stopped.
Correctness here is informative: a 0.5B model reasons poorly, and this mode shows how the
strategies fare with a real model, not how good the model is.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime
import logging
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict

from benchmarks.context_suite.metrics import rows_for
from benchmarks.context_suite.reference import Role, RunLog, Session
from benchmarks.context_suite.report import ReportInfo, markdown_report
from benchmarks.context_suite.strategies import STRATEGIES, Tuning
from benchmarks.context_suite.suite import Models, quiet_logs, run_matrix
from benchmarks.context_suite.tasks import Task, make_tasks
from benchmarks.context_suite.workspace import build_workspace
from benchmarks.local_server import free_port, local_chat_model
from leanloop.localmodel import MODEL_ALIAS, running_server
from leanloop.localmodel.model import model_pin
from leanloop.localmodel.paths import cache_paths
from leanloop.localmodel.server import ServerOptions

__all__ = ["MeasuredModel", "run_real"]

REAL_WINDOW = 4_096
REAL_TASKS = 3
REAL_SCALE = 100.0
"""Bytes per size unit: logs of 3–6 KB, so a CPU-only server gets through a run."""
REAL_ROUNDS = 8
RUN_TIMEOUT_S = 900.0
REPLY_TOKENS = 512

HOW_TO_READ = """\
**How to read it (real mode).** Reader, extractor and summarizer are the embedded
{model} (llama-server on the CPU, a 4,096-token window); the model chooses its
own tool calls, so strategies differ in what the model did as well as in what the context
kept. *Correct* (every needle's value in the answer) is informative only: a small model
reasons poorly. *Over window* counts requests over the window by the reference counter
(`count_tokens_approximately`); the server refuses by its own tokenizer, which counts
these files at about 1.6 characters a token against the counter's 4, so a request can be
refused (a failed run, listed below) without counting as over. *Aux tokens* are the
extractor's or the summarizer's requests. *Overhead* is the client's own CPU time per
reader request (the server's time is not in it). Same columns and counter as
`context_suite.md`; method in `docs/adr/0012-context-efficiency-suite.md`.

**Each framework as a user runs it.** The LangChain strategies run `create_agent` with
their middleware. leanloop runs with its defaults: the model declared with the server's
URL (so it counts tokens with the server and learns its speed) and {prefetch}. *Facts*
counts the values each answer quotes, of those the task asks for; *pruning* lists what
leanloop's report said about pruning passes that fell back or left lines unread."""


class MeasuredModel(BaseChatModel):
    """A real chat model behind the suite's reference counter (it never refuses itself)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: BaseChatModel
    session: Session
    role: Role
    model_name: str = MODEL_ALIAS

    @property
    def _llm_type(self) -> str:
        return "context-suite-measured"

    def bind_tools(
        self,
        tools: Sequence[Mapping[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools as OpenAI-format schemas; they are passed on at each request."""
        del kwargs
        schemas = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=schemas, tool_choice=tool_choice)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        msg = "MeasuredModel is async only"
        raise NotImplementedError(msg)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        tools = list(kwargs.get("tools") or [])
        with self.session.request(self.role, messages, tools, refuse=False):
            runnable: Runnable[LanguageModelInput, BaseMessage] = self.inner
            if tools:
                runnable = self.inner.bind_tools(tools, tool_choice=kwargs.get("tool_choice"))
            reply = await runnable.ainvoke(messages)
        message = reply if isinstance(reply, AIMessage) else AIMessage(content=str(reply.content))
        return ChatResult(generations=[ChatGeneration(message=message)])


@contextlib.contextmanager
def _pruning_server(name: str | None) -> Iterator[str | None]:
    """A second llama-server with the model ``name`` for leanloop's pruning pass (its URL),
    or ``None`` when no pruning model is named."""
    if name is None:
        yield None
        return
    pin = model_pin(name)
    options = ServerOptions(
        port=free_port(), ctx_size=REAL_WINDOW, model=cache_paths().model_path(pin.filename)
    )
    with running_server(options) as server:
        yield server.openai_url


def _factory(base_url: str, pruning_url: str | None = None) -> Callable[[Session], Models]:
    def models(session: Session) -> Models:
        chat = local_chat_model(base_url, reply_tokens=REPLY_TOKENS, timeout=RUN_TIMEOUT_S)
        pruner = (
            local_chat_model(pruning_url, reply_tokens=REPLY_TOKENS, timeout=RUN_TIMEOUT_S)
            if pruning_url is not None
            else chat
        )

        def measured(role: Role, inner: BaseChatModel = chat) -> MeasuredModel:
            return MeasuredModel(inner=inner, session=session, role=role)

        return Models(
            reader=measured("reader"),
            extractor=measured("extractor", pruner),
            summarizer=measured("summarizer"),
            begin=lambda task: None,
        )

    return models


def run_real(args: argparse.Namespace) -> int:
    """Run the real mode and print (and write) its report; returns the exit status."""
    started = time.perf_counter()
    strategies = [s for s in STRATEGIES if s.key in args.strategies]
    port = args.port or free_port()
    pin = model_pin(args.model)
    model_file = cache_paths().model_path(pin.filename)
    options = ServerOptions(port=port, ctx_size=REAL_WINDOW, model=model_file)
    with (
        tempfile.TemporaryDirectory(prefix="context-suite-real-") as folder,
        running_server(options) as server,
        _pruning_server(args.pruning_model) as pruning_url,
        quiet_logs(),
        _log_to(args.reports),
    ):
        facts = build_workspace(Path(folder), seed=args.seed, scale=REAL_SCALE)
        tasks = make_tasks(facts, count=min(args.tasks, REAL_TASKS), seed=args.seed)
        logs = asyncio.run(
            run_matrix(
                strategies=strategies,
                windows=[REAL_WINDOW],
                tasks=tasks,
                workspace=facts.root,
                models=_factory(server.openai_url, pruning_url),
                progress=lambda line: print(line, file=sys.stderr, flush=True),
                warm_up=False,
                tuning=Tuning(
                    max_rounds=REAL_ROUNDS,
                    reader_name=MODEL_ALIAS,
                    prompt_profile="auto",
                    prefetch=not args.no_prefetch,
                    server_url=server.openai_url,
                    reports=args.reports,
                    pruning_url=pruning_url,
                    pruning_name=args.pruning_model or "suite-pruner",
                ),
                run_timeout=RUN_TIMEOUT_S,
            )
        )
    rows = rows_for(logs, strategies)
    info = ReportInfo(
        title="Context-efficiency suite: real mode (local llama-server)",
        date=datetime.datetime.now(datetime.UTC).date().isoformat(),
        windows=[REAL_WINDOW],
        tasks=len(tasks),
        seed=args.seed,
        seconds=time.perf_counter() - started,
        command=_command(args, partial=len(strategies) < len(STRATEGIES)),
        notes=_failures(logs) + "\n\n" + _per_run(logs, tasks),
        how_to_read=HOW_TO_READ.format(
            model=pin.name,
            prefetch=(
                "prefetching off (`--no-prefetch`): the model reads what it chooses to"
                if args.no_prefetch
                else "the files the question names read (and pruned) before the first request"
            ),
        ),
    )
    text = markdown_report(info, rows, [], [], strategies)
    print(text)
    if not args.no_write:
        args.results.mkdir(parents=True, exist_ok=True)
        name = "context_suite_real" if not args.model else f"context_suite_real-{pin.name}"
        if len(strategies) < len(STRATEGIES):  # a partial run never overwrites a full one
            name += "-" + "-".join(s.key for s in strategies)
        if args.no_prefetch:
            name += "-no-prefetch"
        if args.pruning_model:
            name += f"-pruned-by-{args.pruning_model}"
        name += ".md"
        (args.results / name).write_text(text, encoding="utf-8")
    return 0


@contextlib.contextmanager
def _log_to(folder: Path | None) -> Iterator[None]:
    """With ``--reports``, leanloop's INFO log (timed) goes to ``folder/leanloop.log`` too.

    A run stopped at the suite's time limit leaves no report; its log says where the time
    went (each pruning pass logs its chunks and seconds).
    """
    if folder is None:
        yield
        return
    folder.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(folder / "leanloop.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    logger = logging.getLogger("leanloop")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        handler.close()


def _command(args: argparse.Namespace, *, partial: bool) -> str:
    command = "python -m benchmarks.context_suite --real"
    if args.model:
        command += f" --model {args.model}"
    if args.no_prefetch:
        command += " --no-prefetch"
    if args.pruning_model:
        command += f" --pruning-model {args.pruning_model}"
    if partial:
        command += f" --strategies {' '.join(args.strategies)}"
    return command


def _failures(logs: Sequence[RunLog]) -> str:
    lines = ["**Runs that failed**, and why:", ""]
    failed = [g for g in logs if g.error]
    lines += [f"- {g.strategy} {g.task_id}: {(g.error or '')[:160]}" for g in failed] or ["- none"]
    return "\n".join(lines)


def _per_run(logs: Sequence[RunLog], tasks: Sequence[Task]) -> str:
    """Every run: the facts its answer quotes, its time, and what pruning could not do."""
    asked = {task.id: len(task.needles) for task in tasks}
    lines = [
        "**Every run**:",
        "",
        "| Strategy | Task | Facts | Seconds | Pruning |",
        "|---|---|---:|---:|---|",
    ]
    for log in logs:
        facts = "failed" if log.error else f"{log.found}/{asked[log.task_id]}"
        pruning = "; ".join(log.pruning) if log.pruning else "–"
        lines.append(
            f"| {log.strategy} | {log.task_id} | {facts} | {log.wall_seconds:.0f} | {pruning} |"
        )
    return "\n".join(lines)
