"""Steps for features/pruning_speed.feature: pruning limits from the server's measured speed.

The main model is scripted and paced (each reply after a set delay, with the prompt tokens
a server would report); the pruning model is a separate fake that answers after a delay
or hangs, and records when each of its requests began and ended.
"""

# No ``from __future__ import annotations`` here: pydantic must resolve the fake models'
# field annotations at class creation, and Behave runs step files outside sys.modules.

import asyncio
import re
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import PrivateAttr
from support.aio import run
from support.fakes import AsyncOnlyChatModel
from support.script import replies

from leanloop.agent import LLMAgent
from leanloop.pruning import PruneOutcome, Pruner, PruneRequest, PruneSettings
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

_NUMBERED = re.compile(r"^\s*\d+\| ")
_WORD = "deadlock"


class PacedMainModel(AsyncOnlyChatModel):
    """A scripted main model: each reply after ``delay`` seconds, reporting ``prompt_tokens``.

    The replies come from ``inner`` (the script notation); this model adds the pace and
    the usage a server would report.
    """

    inner: ScriptedChatModel
    delay: float
    prompt_tokens: int
    _requests: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    def bind_tools(
        self,
        tools: Sequence[Mapping[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools as OpenAI-format schemas, as provider models do."""
        del tool_choice, kwargs
        return self.bind(tools=[convert_to_openai_tool(tool) for tool in tools])

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self._requests.append(list(messages))
        await asyncio.sleep(self.delay)
        message = await self.inner.ainvoke(messages)
        message.usage_metadata = {
            "input_tokens": self.prompt_tokens,
            "output_tokens": 10,
            "total_tokens": self.prompt_tokens + 10,
        }
        return ChatResult(generations=[ChatGeneration(message=message)])


class PacedPruningModel(AsyncOnlyChatModel):
    """A pruning model that keeps the lines naming the word after ``delay`` s, or hangs."""

    delay: float
    hang: bool = False
    _spans: list[tuple[float, float]] = PrivateAttr(default_factory=list)

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        started = time.perf_counter()
        try:
            await asyncio.sleep(30.0 if self.hang else self.delay)
        finally:
            self._spans.append((started, time.perf_counter()))
        return ChatResult(generations=[ChatGeneration(message=AIMessage(_kept(messages)))])


@given('a paced workspace whose "{name}" holds {kb:d} KB with 2 lines mentioning "deadlock"')
def step_workspace(context: Context, name: str, kb: int) -> None:
    root = Path(context.tmp) / "paced"
    root.mkdir()
    lines = [
        f"2026-11-30 02:{i // 60 % 60:02d}:{i % 60:02d} INFO  [worker-{i % 8}] db.pool: "
        f"processed job {10000 + i} rows={i * 37 % 5000} ok"
        for i in range(kb * 1024 // 80)
    ]
    lines[50] = f"2026-11-30 03:00:01 ERROR [worker-1] db.pool: {_WORD} #1 detected"
    lines[120] = f"2026-11-30 03:00:02 ERROR [worker-2] db.pool: {_WORD} #2 detected"
    (root / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    context.paced_root = root


@given(
    "a paced main model that answers in {seconds:g} seconds, reporting {tokens:d} prompt "
    "tokens, with the script:"
)
def step_main(context: Context, seconds: float, tokens: int) -> None:
    assert context.table is not None, "the step needs a reply table"
    script = replies([row["reply"] for row in context.table], workspace=context.paced_root)
    inner = ScriptedChatModel(replies=script)
    context.paced_main = PacedMainModel(inner=inner, delay=seconds, prompt_tokens=tokens)


@given("a paced pruning model that hangs")
def step_hanging(context: Context) -> None:
    context.paced_pruning = PacedPruningModel(delay=0.0, hang=True)


@given('a paced pruning model that answers in {seconds:g} seconds, keeping "deadlock"')
def step_pruning(context: Context, seconds: float) -> None:
    context.paced_pruning = PacedPruningModel(delay=seconds)


def _agent(context: Context, timeout: float, *, own_server: bool, prefetch: bool) -> None:
    pruning_spec = (
        ModelSpec(
            provider="openai-compatible",
            model="pruner",
            base_url="http://127.0.0.1:9/v1",
            context_window=200_000,
        )
        if own_server
        else None
    )
    spec = AgentSpec(
        name="paced",
        model=ModelSpec(
            class_path="leanloop.testing:ScriptedChatModel", model="paced", context_window=200_000
        ),
        tools=("read_file",),
        workspace=context.paced_root,
        allow_tool_output_pruning=True,
        pruning_model=pruning_spec,
        pruning_timeout=timeout,
        prefetch_mentioned_files=prefetch,
    )
    context.paced_agent = LLMAgent.from_spec(
        spec, model=context.paced_main, pruning_model=context.paced_pruning
    )


@given(
    "a paced agent with pruning_timeout {timeout:g} and the pruning model on the main model's "
    "server"
)
def step_agent_shared(context: Context, timeout: float) -> None:
    _agent(context, timeout, own_server=False, prefetch=False)


@given(
    "a paced agent with pruning_timeout {timeout:g} and the pruning model on a server of its own"
)
def step_agent_own(context: Context, timeout: float) -> None:
    _agent(context, timeout, own_server=True, prefetch=False)


@given("a paced agent with pruning_timeout {timeout:g}, prefetching named files")
def step_agent_prefetch(context: Context, timeout: float) -> None:
    _agent(context, timeout, own_server=False, prefetch=True)


@when('the paced agent is asked "{question}"')
def step_ask(context: Context, question: str) -> None:
    context.paced_reply = run(context.paced_agent.ainvoke(question))
    context.paced_report = context.paced_reply.response_metadata["leanloop"]


@then('the paced run ended with the answer "{text}"')
def step_answer(context: Context, text: str) -> None:
    assert context.paced_reply.text == text, context.paced_reply.text
    assert context.paced_report["stop_reason"] == "answer", context.paced_report["stop_reason"]


@then('the paced report lists a pruning fallback for {tool} because of "{reason}"')
def step_fallback(context: Context, tool: str, reason: str) -> None:
    fallbacks = context.paced_report["pruning_fallbacks"]
    assert [(f["tool"], f["reason"]) for f in fallbacks] == [(tool, reason)], fallbacks


def _pruning_seconds(context: Context) -> float:
    spans = context.paced_pruning._spans
    assert len(spans) == 1, f"expected one pruning request, got {len(spans)}"
    return spans[0][1] - spans[0][0]


@then("the paced pruning pass ended within {seconds:g} seconds")
def step_ended_within(context: Context, seconds: float) -> None:
    took = _pruning_seconds(context)
    assert took < seconds, f"the hung pruning request was waited on for {took:.2f} s"


@then("the paced pruning pass took at least {seconds:g} seconds")
def step_took_at_least(context: Context, seconds: float) -> None:
    took = _pruning_seconds(context)
    assert took >= seconds, f"the pruning request was given up after only {took:.2f} s"


def _check_pruned(context: Context, path: str | None) -> None:
    report = context.paced_report
    assert report["pruning_fallbacks"] == [], report["pruning_fallbacks"]
    calls = [c for c in report["tool_calls"] if c["name"] == "read_file"]
    assert calls, report["tool_calls"]
    first = calls[0]
    assert first["pruned"], first
    if path is not None:
        assert report["prefetched"] == [path], report["prefetched"]
        assert first["step"] == 0, first


@then("the paced report says {path} was prefetched and pruned, with no pruning fallback")
def step_prefetched(context: Context, path: str) -> None:
    _check_pruned(context, path)


@then("the paced report says read_file was pruned, with no pruning fallback")
def step_pruned(context: Context) -> None:
    _check_pruned(context, None)


@then('the paced main model\'s {nth} request holds the 2 lines mentioning "deadlock"')
def step_request_holds(context: Context, nth: str) -> None:
    index = {"first": 0, "second": 1}[nth]
    requests = context.paced_main._requests
    assert len(requests) > index, f"the main model got {len(requests)} request(s)"
    results = [str(m.content) for m in requests[index] if isinstance(m, ToolMessage)]
    assert results, "the request holds no tool result"
    text = results[-1]
    assert text.startswith("[PRUNE_INFO_START]"), text[:200]
    for k in (1, 2):
        assert f"{_WORD} #{k} detected" in text, text[:600]


class OneSlotPruningModel(AsyncOnlyChatModel):
    """A pruning model that reads one request at a time, as llama-server with one slot."""

    delay: float
    _slot: asyncio.Lock | None = PrivateAttr(default=None)
    _busy: int = PrivateAttr(default=0)
    _most: int = PrivateAttr(default=0)

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        self._slot = self._slot or asyncio.Lock()
        async with self._slot:
            self._busy += 1
            self._most = max(self._most, self._busy)
            try:
                await asyncio.sleep(self.delay)
            finally:
                self._busy -= 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage(_kept(messages)))])


def _kept(messages: list[BaseMessage]) -> str:
    shown = [ln for ln in str(messages[-1].content).split("\n") if _NUMBERED.match(ln)]
    kept = "".join(f"{ln}\n" for ln in shown if _WORD in ln)
    return (
        "[PRUNE_INFO_START]\nkept the matching lines\n[PRUNE_INFO_END]\n"
        f"[PRUNE_OUTPUT_START]\n{kept}[PRUNE_OUTPUT_END]"
    )


# A focus no line of the log holds: the pass reads every part, in order (ADR 0006
# amendment 5), so these scenarios meet the server's queue with every chunk.
READ_IN_ORDER = "what the reader needs"


@given(
    'a one-slot pruning model that answers each request in {seconds:g} seconds, keeping "deadlock"'
)
def step_one_slot(context: Context, seconds: float) -> None:
    context.one_slot = OneSlotPruningModel(delay=seconds)


@when(
    "one pruner with {tokens:d}-token chunks and a {seconds:g} second deadline prunes the "
    "output twice at once"
)
def step_two_passes(context: Context, tokens: int, seconds: float) -> None:
    settings = PruneSettings(
        window_tokens=4096, min_chars=500, max_chunk_tokens=tokens, deadline=seconds
    )
    pruner = Pruner(context.one_slot, settings)

    async def both() -> list[PruneOutcome]:
        passes = (
            pruner.prune(
                tool_name="read_file",
                raw=context.sized_raw,
                request=PruneRequest(focus=READ_IN_ORDER),
                task_context="",
            )
            for _ in range(2)
        )
        return list(await asyncio.gather(*passes))

    context.two_outcomes = run(both())


@then(
    'each of the 2 passes read {chunks:d} chunks and kept the 2 lines mentioning "deadlock", '
    "none unread"
)
def step_two_read(context: Context, chunks: int) -> None:
    for outcome in context.two_outcomes:
        _read_whole(outcome, chunks)


def _read_whole(outcome: PruneOutcome, chunks: int) -> None:
    """``outcome`` pruned from ``chunks`` chunks, none unread, both deadlock lines kept."""
    assert outcome.pruned and outcome.fallback is None, outcome
    assert outcome.chunks == chunks, f"{outcome.chunks} chunks, not {chunks}"
    assert outcome.unread == (), outcome.unread
    for k in (1, 2):
        assert f"{_WORD} #{k} detected" in outcome.text, outcome.text[:400]


@then("the one-slot pruning model never had two requests at once")
def step_one_at_once(context: Context) -> None:
    assert context.one_slot._most == 1, context.one_slot._most


class LatestFirstPruningModel(AsyncOnlyChatModel):
    """One slot that reads the latest waiting request first: requests sent together reach
    a server in any order, and this one takes them in the reverse of their sending."""

    delay: float
    _waiting: list[asyncio.Future[None]] = PrivateAttr(default_factory=list)
    _server: asyncio.Task[None] | None = PrivateAttr(default=None)
    _order: list[int] = PrivateAttr(default_factory=list)

    async def _agenerate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        sent = len(self._order) + len(self._waiting)
        self._waiting.append(turn)
        if self._server is None or self._server.done():
            self._server = asyncio.create_task(self._serve())
        await turn
        self._order.append(sent)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(_kept(messages)))])

    async def _serve(self) -> None:
        await asyncio.sleep(0.01)  # the requests sent together have all arrived
        while self._waiting:
            turn = self._waiting.pop()
            await asyncio.sleep(self.delay)
            if not turn.done():
                turn.set_result(None)


@given(
    "a one-slot pruning model that reads the latest request first, each in {seconds:g} "
    'seconds, keeping "deadlock"'
)
def step_latest_first(context: Context, seconds: float) -> None:
    context.latest_first = LatestFirstPruningModel(delay=seconds)


@when(
    "one pruner with {tokens:d}-token chunks, {at_once:d} requests at once and a "
    "{timeout:g} second timeout prunes the output"
)
def step_latest_first_pass(context: Context, tokens: int, at_once: int, timeout: float) -> None:
    settings = PruneSettings(
        window_tokens=4096,
        min_chars=500,
        max_chunk_tokens=tokens,
        concurrency=at_once,
        timeout=timeout,
    )
    pruner = Pruner(context.latest_first, settings)
    context.latest_outcome = run(
        pruner.prune(
            tool_name="read_file",
            raw=context.sized_raw,
            request=PruneRequest(focus=READ_IN_ORDER),
            task_context="",
        )
    )


@then('the pass read {chunks:d} chunks and kept the 2 lines mentioning "deadlock", none unread')
def step_latest_read(context: Context, chunks: int) -> None:
    _read_whole(context.latest_outcome, chunks)


@then("the one-slot pruning model read the first request sent last")
def step_first_last(context: Context) -> None:
    order = context.latest_first._order
    assert order and order[-1] == 0, f"requests read in the order {order}"
