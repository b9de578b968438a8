"""The six context strategies, each built for one window from the same models and tools.

LangChain's strategies run in ``create_agent`` (LangChain v1), with the reference counter
as every middleware's token counter and leanloop's own request ceiling for the window
(85% of it less the reply reserve, :class:`leanloop.budget.ContextPlan`) as their budget,
so that every strategy aims at the same figure:

- ``plain``: ``create_agent`` with no middleware: the whole history every time.
- ``trim_messages``: ``trim_messages(strategy="last", start_on="human",
  include_system=True, max_tokens=ceiling)`` applied to the request before every model
  call (a ``wrap_model_call`` middleware: the stored history is left whole).
- ``context_editing``: ``ContextEditingMiddleware([ClearToolUsesEdit(trigger=ceiling,
  keep=...)])``, keeping the newest result at 4,096 and 8,192 tokens and three at 32,768.
- ``summarization``: ``SummarizationMiddleware(trigger=("tokens", ceiling),
  keep=("tokens", ceiling // 2), trim_tokens_to_summarize=ceiling)`` with the
  deterministic summarizer, whose summary budget is 20% of the window (the share leanloop
  gives one tool result).
- ``leanloop_trim`` / ``leanloop_prune``: ``LLMAgent`` with its defaults, trimming on, and
  pruning off or on (the extractor as ``pruning_model``; ``read_file`` and ``search``
  prunable). In the scripted suite files named in the question are not prefetched, so
  every strategy follows the reader's one plan; ``--real`` runs leanloop as a user would
  (:class:`Tuning`: prefetching on, the model declared with its server's URL).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    ModelRequest,
    ModelResponse,
    SummarizationMiddleware,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage, HumanMessage, SystemMessage
from langchain_core.messages.utils import trim_messages
from langchain_core.tools import BaseTool

from benchmarks.context_suite.reference import count_messages
from benchmarks.context_suite.tasks import Task
from leanloop.agent import LLMAgent
from leanloop.budget import ContextPlan
from leanloop.spec.types import AgentSpec, ModelSpec

__all__ = [
    "MAX_ROUNDS",
    "STRATEGIES",
    "SYSTEM_PROMPT",
    "RunAnswer",
    "Runner",
    "Setup",
    "Strategy",
    "TrimMessagesMiddleware",
    "Tuning",
    "ceiling_for",
    "summary_budget_chars",
]

SYSTEM_PROMPT = (
    "You answer questions about the files of a project. You cannot see the files: use the "
    "tools. read_file shows a file page by page and says how to read the next page; search "
    "finds matching lines. Read the files the question names, then answer quoting the exact "
    "values you found."
)
MAX_ROUNDS = 150
"""Tool rounds allowed to every strategy: enough for the longest plan at any window."""


@dataclass(frozen=True)
class RunAnswer:
    """What one run ended with: the answer, and what the pruning pass could not do."""

    text: str
    pruning: tuple[str, ...] = ()
    """leanloop's report events about pruning that fell back or left lines unread."""


Runner = Callable[[Task], Awaitable[RunAnswer]]
"""Runs one task to its answer (raises when the run fails)."""


@dataclass(frozen=True)
class Tuning:
    """Settings that differ between the scripted suite and ``--real``."""

    max_rounds: int = MAX_ROUNDS
    """Tool rounds for leanloop; LangGraph gets two steps a round, plus ten."""
    reader_name: str = "suite-reader"
    """The model name leanloop sees (it keys the learned token ratio and the profile)."""
    prompt_profile: Literal["auto", "default", "small"] = "default"
    prefetch: bool = False
    """Whether leanloop reads the files the question names before the first request (its
    default; off in the scripted suite, where the reader's plan is the same for all)."""
    server_url: str | None = None
    """The reader's OpenAI-compatible server, declared in leanloop's model spec as a user
    would (so it counts tokens and measures speed on it); ``None``: a scripted reader."""
    reports: Path | None = None
    """Where each leanloop run's report is written as ``STRATEGY-TASK.json`` (``None``:
    nowhere), to see what the run did beyond the table."""
    pruning_url: str | None = None
    """A second server for leanloop's pruning pass (``pruning_model`` in its spec, as a
    user would declare it); ``None``: the reader's server prunes too."""
    pruning_name: str = "suite-pruner"
    """The pruning model's name as leanloop sees it (it picks the extraction profile)."""

    @property
    def recursion_limit(self) -> int:
        """LangGraph steps: a model node and a tool node per round, and the final answer."""
        return 2 * self.max_rounds + 10


@dataclass(frozen=True)
class Setup:
    """What a strategy is built from: one window, the shared models and the tools."""

    window: int
    workspace: Path
    reader: BaseChatModel
    extractor: BaseChatModel
    summarizer: BaseChatModel
    langchain_tools: list[BaseTool]
    """The workspace tools with refusals returned as results (what ``ToolNode`` needs)."""
    leanloop_tools: list[BaseTool]
    """The same tools raising refusals, for leanloop's registry to word."""
    tuning: Tuning = Tuning()


@dataclass(frozen=True)
class Strategy:
    """One way of managing the context."""

    key: str
    label: str
    family: Literal["langchain", "leanloop"]
    build: Callable[[Setup], Runner]


def ceiling_for(window: int) -> int:
    """The request budget every strategy aims at for ``window``: leanloop's ceiling."""
    return ContextPlan.for_window(window).ceiling


def summary_budget_chars(window: int) -> int:
    """The summarizer's budget: 20% of the window, at the reference 4 characters a token."""
    return window * 20 // 100 * 4


class TrimMessagesMiddleware(AgentMiddleware[Any, Any, Any]):
    """Apply ``trim_messages`` to every model request (the stored history stays whole)."""

    def __init__(self, max_tokens: int) -> None:
        """Trim requests to ``max_tokens`` by the reference counter."""
        super().__init__()
        self.max_tokens = max_tokens

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        """Trim the request's messages (system prompt included in the count) and send it."""
        system = [request.system_message] if request.system_message is not None else []
        kept = trim_messages(
            [*system, *request.messages],
            max_tokens=self.max_tokens,
            token_counter=count_messages,
            strategy="last",
            start_on="human",
            include_system=True,
        )
        view = cast("list[AnyMessage]", [m for m in kept if not isinstance(m, SystemMessage)])
        return await handler(request.override(messages=view))


def _langchain(setup: Setup, middleware: list[AgentMiddleware[Any, Any, Any]]) -> Runner:
    agent = create_agent(
        model=setup.reader,
        tools=setup.langchain_tools,
        system_prompt=SYSTEM_PROMPT,
        middleware=middleware,
    )

    async def run(task: Task) -> RunAnswer:
        state = await agent.ainvoke(
            {"messages": [HumanMessage(task.question)]},
            config={"recursion_limit": setup.tuning.recursion_limit},
        )
        return RunAnswer(str(state["messages"][-1].text))

    return run


def _plain(setup: Setup) -> Runner:
    return _langchain(setup, [])


def _trim(setup: Setup) -> Runner:
    return _langchain(setup, [TrimMessagesMiddleware(ceiling_for(setup.window))])


def _context_editing(setup: Setup) -> Runner:
    keep = 3 if setup.window >= 32_768 else 1
    edit = ClearToolUsesEdit(trigger=ceiling_for(setup.window), keep=keep)
    return _langchain(setup, [ContextEditingMiddleware(edits=[edit], token_counter=count_messages)])


def _summarization(setup: Setup) -> Runner:
    ceiling = ceiling_for(setup.window)
    middleware = SummarizationMiddleware(
        model=setup.summarizer,
        trigger=("tokens", ceiling),
        keep=("tokens", ceiling // 2),
        token_counter=count_messages,
        trim_tokens_to_summarize=ceiling,
    )
    return _langchain(setup, [middleware])


def _leanloop(setup: Setup, *, prune: bool) -> Runner:
    key = "prune" if prune else "trim"
    tuning = setup.tuning
    name = f"{tuning.reader_name}-{key}-{setup.window}"
    if tuning.server_url is None:
        model = ModelSpec(
            class_path="benchmarks.context_suite.models:ReaderModel",
            model=name,
            context_window=setup.window,
        )
    else:
        model = ModelSpec(
            provider="openai-compatible",
            model=name,
            base_url=tuning.server_url,
            api_key="none",
            context_window=setup.window,
        )
    spec = AgentSpec(
        name=f"context-suite-{key}",
        model=model,
        system_prompt=SYSTEM_PROMPT,
        tools=("read_file", "search", "list_files"),
        workspace=setup.workspace,
        max_rounds=tuning.max_rounds,
        trim_tool_results=True,
        allow_tool_output_pruning=prune,
        pruning_tools=("read_file", "search"),
        prefetch_mentioned_files=tuning.prefetch,
        prompt_profile=tuning.prompt_profile,
        pruning_model=(
            ModelSpec(
                provider="openai-compatible",
                model=tuning.pruning_name,
                base_url=tuning.pruning_url,
                api_key="none",
                context_window=setup.window,
            )
            if prune and tuning.pruning_url is not None
            else None
        ),
    )
    agent = LLMAgent.from_spec(
        spec,
        model=setup.reader,
        tools=setup.leanloop_tools,
        pruning_model=setup.extractor if prune else None,
    )

    async def run(task: Task) -> RunAnswer:
        reply = await agent.ainvoke(task.question)
        report = reply.response_metadata["leanloop"]
        if tuning.reports is not None:
            tuning.reports.mkdir(parents=True, exist_ok=True)
            path = tuning.reports / f"leanloop_{key}-{task.id}.json"
            saved = {"answer": str(reply.text), **report}
            path.write_text(json.dumps(saved, indent=1, default=str), encoding="utf-8")
        events = report["events"]
        pruning = tuple(e for e in events if "pruning" in e)
        return RunAnswer(str(reply.text), pruning)

    return run


STRATEGIES: tuple[Strategy, ...] = (
    Strategy("plain", "plain loop (create_agent)", "langchain", _plain),
    Strategy("trim_messages", "trim_messages (last)", "langchain", _trim),
    Strategy("context_editing", "ContextEditing (ClearToolUses)", "langchain", _context_editing),
    Strategy("summarization", "SummarizationMiddleware", "langchain", _summarization),
    Strategy("leanloop_trim", "leanloop trim", "leanloop", lambda s: _leanloop(s, prune=False)),
    Strategy(
        "leanloop_prune", "leanloop trim + prune", "leanloop", lambda s: _leanloop(s, prune=True)
    ),
)
"""Every strategy, in the order of the report."""
