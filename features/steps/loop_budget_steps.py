"""Steps for features/loop_budget.feature: the token budget, end to end through the loop.

A *budgeted agent* is an ``LLMAgent`` around a :class:`ScriptedChatModel` with a fixed
context window (or none, for the backward-compatibility scenarios) and three tools:
``lookup`` (a short answer), ``bulky`` (about 2,500 characters, first line
``bulky <key> begins``) and ``huge`` (about 57,000 characters). Every agent gets its own
model name, so the process-wide estimator it learns with starts fresh at 3.3.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from support.aio import run
from support.logs import capture_logs

from leanloop import events
from leanloop.agent import LLMAgent
from leanloop.budget import ContextPlan
from leanloop.budget.fit import TRIM_NOTE, is_trimmed
from leanloop.events import EventRecorder
from leanloop.loop.prompts import FINAL_ANSWER_PROMPT, SYNTHESIS_PROMPT
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel
from leanloop.tools.loader import build_tools

_CLASS = "leanloop.testing:ScriptedChatModel"
_FIRST_RATIO = 3.3
_names = itertools.count(1)
_REQUEST = httpx2.Request("POST", "http://127.0.0.1:8080/v1/chat/completions")
_WARNING = "of the budget: estimate="


# --- tools ------------------------------------------------------------------------------


@dataclass
class BudgetTools:
    """The budgeted agent's tools and a log of what they ran."""

    ran: list[tuple[str, str]] = field(default_factory=list)

    def tools(self) -> list[BaseTool]:
        def lookup(key: str) -> str:
            """Look up a short value by key."""
            self.ran.append(("lookup", key))
            return f"value of {key}"

        def bulky(key: str) -> str:
            """Return a long report about key (about 2,500 characters)."""
            self.ran.append(("bulky", key))
            lines = [f"{key} detail {i:02d} " + "z" * 36 for i in range(50)]
            return "\n".join([f"bulky {key} begins", *lines])

        def huge(key: str) -> str:
            """Return a very long dump about key (about 57,000 characters)."""
            self.ran.append(("huge", key))
            return "\n".join(f"{key} row {i} " + "y" * 60 for i in range(800))

        return [
            StructuredTool.from_function(func=lookup, name="lookup"),
            StructuredTool.from_function(func=bulky, name="bulky"),
            StructuredTool.from_function(func=huge, name="huge"),
        ]


# --- refusals for size, in the shapes providers send them --------------------------------


def _bad_request(message: str, body: dict[str, Any]) -> openai.BadRequestError:
    response = httpx2.Response(400, json={"error": body}, request=_REQUEST)
    return openai.BadRequestError(f"Error code: 400 - {message}", response=response, body=body)


def _prompt_tokens(messages: list[BaseMessage]) -> int:
    # What a server would count for this prompt: a little more than our 3.3 guess.
    return sum(len(m.text) for m in messages) // 3 + 400


def _llama(messages: list[BaseMessage]) -> BaseException:
    body = {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": _prompt_tokens(messages),
        "n_ctx": 2048,
    }
    return _bad_request(str(body["message"]), body)


def _openai(messages: list[BaseMessage]) -> BaseException:
    text = (
        "This model's maximum context length is 2048 tokens. However, your messages resulted "
        f"in {_prompt_tokens(messages)} tokens. Please reduce the length of the messages."
    )
    body = {
        "message": text,
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
    return _bad_request(text, body)


def _generic(messages: list[BaseMessage]) -> BaseException:
    text = "the prompt is longer than the model's context length"
    return _bad_request(text, {"message": text, "type": "invalid_request_error"})


_REFUSALS: dict[str, Callable[[list[BaseMessage]], BaseException]] = {
    "llama.cpp": _llama,
    "openai": _openai,
    "generic": _generic,
}


def _refusal(kind: str) -> Callable[[list[BaseMessage]], Any]:
    build = _REFUSALS[kind]

    def refuse(messages: list[BaseMessage]) -> Any:
        raise build(messages)

    return refuse


def _reply(cell: str) -> Any:
    """``call name {json}``, ``refuse <kind>`` (a refusal for size), or an answer text."""
    if cell.startswith("refuse "):
        return _refusal(cell.removeprefix("refuse "))
    if not cell.startswith("call "):
        return cell
    calls = []
    for part in cell.removeprefix("call ").split(";"):
        name, _, args = part.strip().partition(" ")
        calls.append({"name": name, "args": json.loads(args or "{}")})
    return {"tool_calls": calls}


# --- agents -----------------------------------------------------------------------------


def _settings(text: str) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        key, _, value = item.partition("=")
        settings[key.strip()] = json.loads(value.strip())
    return settings


def _build(
    context: Context, *, window: int | None, usage: bool = False, **settings: Any
) -> tuple[LLMAgent, ScriptedChatModel]:
    if context.table is not None:
        context.budget_script = [row["reply"] for row in context.table]
    replies = [_reply(cell) for cell in context.budget_script]
    model = ScriptedChatModel(replies=replies, report_usage=usage)
    # A model name of its own: the estimator is shared per (endpoint, model) in the process.
    name = f"budgeted-{next(_names)}"
    spec = AgentSpec(
        name="budgeted",
        model=ModelSpec(class_path=_CLASS, model=name, context_window=window),
        **settings,
    )
    # Passing tools replaces the spec's built-in ones: build those too.
    tools = [*build_tools(spec.tools, workspace=spec.workspace), *context.budget_tools.tools()]
    return LLMAgent.from_spec(spec, model=model, tools=tools), model


def _make(context: Context, *, window: int | None, usage: bool = False, **settings: Any) -> None:
    context.budget_tools = BudgetTools()
    context.budget_logs = capture_logs(context)
    context.budget_window = window
    context.budget_agent, context.budget_model = _build(
        context, window=window, usage=usage, **settings
    )


@given("a budgeted agent with a {window:d}-token window and the script:")
def step_agent(context: Context, window: int) -> None:
    _make(context, window=window)


@given('a budgeted agent with a {window:d}-token window, settings "{settings}" and the script:')
def step_agent_settings(context: Context, window: int, settings: str) -> None:
    _make(context, window=window, **_settings(settings))


@given(
    "a budgeted agent with a {window:d}-token window, a {size:d}-character workspace file "
    '"{name}" and the script:'
)
def step_agent_workspace(context: Context, window: int, size: int, name: str) -> None:
    workspace = context.tmp / "workspace"
    workspace.mkdir()
    lines = [f"{name} line {i:03d}: " + "w" * 40 for i in range(size // 58 + 1)]
    (workspace / name).write_text("\n".join(lines)[:size], encoding="utf-8")
    _make(context, window=window, tools=("read_file",), workspace=workspace)


@given("a budgeted agent with a {window:d}-token window reporting usage and the script:")
def step_agent_usage(context: Context, window: int) -> None:
    _make(context, window=window, usage=True)


@given("a budgeted agent without budget keys and the script:")
def step_agent_plain(context: Context) -> None:
    _make(context, window=None)


@given("a budgeted twin with trimming off and the whole window as budget")
def step_twin(context: Context) -> None:
    context.budget_twin, context.budget_twin_model = _build(
        context, window=None, trim_tool_results=False, token_budget_percent=1.0
    )


# --- runs -------------------------------------------------------------------------------


class Timeline(EventRecorder):
    """Custom events and chat-model starts, in the order the loop produced them."""

    async def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[BaseMessage]], **kwargs: Any
    ) -> None:
        self.events.append(("request", {"messages": len(messages[0])}))


def _finish(context: Context, answer: AIMessage) -> None:
    context.budget_answer = answer
    context.budget_report = answer.response_metadata["leanloop"]


def _ask(context: Context, question: str) -> None:
    context.budget_timeline = timeline = Timeline()
    config: RunnableConfig = {"callbacks": [timeline]}
    _finish(context, run(context.budget_agent.ainvoke(question, config)))


@when('the budgeted run is asked "{question}"')
def step_ask(context: Context, question: str) -> None:
    _ask(context, question)


@when("the budgeted run is asked a question of {size:d} characters")
def step_ask_large(context: Context, size: int) -> None:
    line = "Please consider this background carefully before you answer. "
    text = (line * (size // len(line) + 1))[:size]
    _ask(context, text)


@when('the budgeted run is asked "{question}" through astream_events')
def step_ask_stream(context: Context, question: str) -> None:
    async def collect() -> tuple[list[dict[str, Any]], AIMessage]:
        seen: list[dict[str, Any]] = []
        answer: AIMessage | None = None
        stream = context.budget_agent.astream_events(question, version="v2")
        async for event in stream:
            if event["event"] == "on_custom_event":
                seen.append({"name": event["name"], "data": event["data"]})
            elif event["event"] == "on_chain_end" and not event.get("parent_ids"):
                answer = event["data"]["output"]
        assert isinstance(answer, AIMessage), answer
        return seen, answer

    context.budget_stream_events, answer = run(collect())
    _finish(context, answer)


@when('the budgeted run and its twin are asked "{question}"')
def step_ask_both(context: Context, question: str) -> None:
    _ask(context, question)
    context.budget_twin_answer = run(context.budget_twin.ainvoke(question))


# --- helpers for the checks ---------------------------------------------------------------


def _request(context: Context, n: int) -> Any:
    requests = context.budget_model.requests
    assert len(requests) >= n, f"the budgeted model received only {len(requests)} requests"
    return requests[n - 1]


def _results(messages: list[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def _chars(messages: list[BaseMessage]) -> int:
    return sum(len(m.text) for m in messages)


def _report_requests(context: Context) -> list[dict[str, Any]]:
    return list(context.budget_report["requests"])


# --- answers and stop reasons ---------------------------------------------------------------


@then('the budgeted run answers "{text}"')
def step_answers(context: Context, text: str) -> None:
    assert context.budget_answer.text == text, context.budget_answer.text


@then('the budgeted run answer mentions "{text}"')
def step_answer_mentions(context: Context, text: str) -> None:
    assert text in context.budget_answer.text, context.budget_answer.text


@then('the budgeted run stops with "{reason}"')
def step_stops(context: Context, reason: str) -> None:
    got = context.budget_report["stop_reason"]
    assert got == reason, f"stop_reason {got!r}, events {context.budget_report['events']}"


@then("the budgeted model received {count:d} requests")
def step_request_count(context: Context, count: int) -> None:
    got = len(context.budget_model.requests)
    assert got == count, f"the budgeted model received {got} requests, not {count}"


@then('the budgeted tool "{name}" ran {count:d} times')
def step_tool_ran(context: Context, name: str, count: int) -> None:
    got = [key for tool, key in context.budget_tools.ran if tool == name]
    assert len(got) == count, f"{name} ran for {got}"


# --- events ---------------------------------------------------------------------------------


@then("a leanloop.budget event with the budget figures preceded every budgeted request")
def step_budget_before_each(context: Context) -> None:
    items = context.budget_timeline.events
    starts = [i for i, (name, _) in enumerate(items) if name == "request"]
    assert len(starts) == len(context.budget_model.requests), items
    previous = -1
    for start in starts:
        between = [data for name, data in items[previous + 1 : start] if name == events.BUDGET]
        assert between, f"no {events.BUDGET} event before request at {start}: {items}"
        keys = {"estimate", "ceiling", "window", "window_source", "chars_per_token"}
        assert keys <= set(between[-1]), between[-1]
        previous = start


@then("the leanloop.budget events agree with the budgeted report's requests")
def step_budget_agree(context: Context) -> None:
    budgets = context.budget_timeline.named(events.BUDGET)
    requests = _report_requests(context)
    assert len(budgets) == len(requests), (budgets, requests)
    report = context.budget_report
    for event, request in zip(budgets, requests, strict=True):
        assert event["estimate"] == request["estimated_tokens"], (event, request)
        assert event["ceiling"] == request["ceiling"], (event, request)
        assert event["window"] == request["window"] == report["window"], (event, request)
        assert event["window_source"] == report["window_source"], event
        assert 2 <= event["chars_per_token"] <= 6, event


@then('the budgeted stream carried the events "{names}"')
def step_stream_events(context: Context, names: str) -> None:
    seen = {e["name"] for e in context.budget_stream_events}
    wanted = {n.strip() for n in names.split(",")}
    assert wanted <= seen, f"missing {wanted - seen} in {seen}"
    budgets = [e["data"] for e in context.budget_stream_events if e["name"] == events.BUDGET]
    assert len(budgets) == len(context.budget_model.requests), budgets
    assert all(b["window"] == context.budget_window for b in budgets), budgets


@then("the budgeted run emitted a leanloop.trimmed event with its figures")
def step_trimmed_event(context: Context) -> None:
    trims = context.budget_timeline.named(events.TRIMMED)
    assert trims, context.budget_timeline.events
    for trim in trims:
        assert trim["count"] >= 1, trim
        assert trim["tokens_after"] < trim["tokens_before"], trim
        assert trim["pass"] in (1, 2, 3), trim
        assert 0 <= trim["new"] <= trim["count"], trim
    # Each result counts once, however many request views trimmed it.
    total = sum(t["new"] for t in trims)
    assert context.budget_report["trimmed_results"] == total, (context.budget_report, trims)
    assert total <= sum(t["count"] for t in trims), trims


@then('the budgeted run emitted a leanloop.synthesis event with reason "{reason}"')
def step_synthesis_event(context: Context, reason: str) -> None:
    synthesis = context.budget_timeline.named(events.SYNTHESIS)
    assert [s["reason"] for s in synthesis] == [reason], synthesis


@then("the budgeted run emitted no leanloop.synthesis event")
def step_no_synthesis_event(context: Context) -> None:
    assert not context.budget_timeline.named(events.SYNTHESIS), context.budget_timeline.events
    assert context.budget_report["stop_reason"] != "budget_exhausted", context.budget_report


@then("the budgeted run emitted no leanloop.synthesis and no leanloop.trimmed event")
def step_no_synthesis(context: Context) -> None:
    names = {name for name, _ in context.budget_timeline.events}
    assert events.SYNTHESIS not in names and events.TRIMMED not in names, names
    assert context.budget_report["trimmed_results"] == 0, context.budget_report


@then("the budgeted run emitted {count:d} leanloop.overflow_recovered event")
def step_overflow_event(context: Context, count: int) -> None:
    recovered = context.budget_timeline.named(events.OVERFLOW_RECOVERED)
    assert len(recovered) == count, recovered
    for item in recovered:
        assert {"prompt_tokens", "window", "estimate"} <= set(item), item


# --- the report -----------------------------------------------------------------------------


@then('the budgeted report shows a window of {window:d} tokens from "{source}"')
def step_report_window(context: Context, window: int, source: str) -> None:
    report = context.budget_report
    assert (report["window"], report["window_source"]) == (window, source), report


@then("every budgeted report request carries its estimate, reported tokens, ceiling and window")
def step_report_requests(context: Context) -> None:
    requests = _report_requests(context)
    assert len(requests) == len(context.budget_model.requests), requests
    plan = ContextPlan.for_window(context.budget_report["window"])
    for request in requests:
        assert isinstance(request["estimated_tokens"], int), request
        assert request["estimated_tokens"] > 0, request
        assert "reported_input_tokens" in request, request
        assert request["ceiling"] == plan.ceiling, (request, plan)
        assert request["window"] == plan.window, (request, plan)


@then("no budgeted request's estimate exceeds its ceiling")
def step_under_ceiling(context: Context) -> None:
    for request in _report_requests(context):
        assert request["estimated_tokens"] <= request["ceiling"], request


@then("the budgeted report counts at least {count:d} trimmed results")
def step_report_trimmed(context: Context, count: int) -> None:
    report = context.budget_report
    assert report["trimmed_results"] >= count, report["trimmed_results"]
    assert report["tokens_saved_by_trimming"] > 0, report["tokens_saved_by_trimming"]


@then("the budgeted report counts {count:d} overflow recoveries")
def step_report_recoveries(context: Context, count: int) -> None:
    got = context.budget_report["overflow_recoveries"]
    assert got == count, f"overflow_recoveries {got}: {context.budget_report['events']}"


@then("the budgeted report's chars_per_token moved from 3.3 and stays within 2 and 6")
def step_learned(context: Context) -> None:
    ratio = context.budget_report["chars_per_token"]
    assert ratio != _FIRST_RATIO and 2 <= ratio <= 6, ratio
    budgets = context.budget_timeline.named(events.BUDGET)
    assert budgets[0]["chars_per_token"] == _FIRST_RATIO, budgets[0]
    assert budgets[-1]["chars_per_token"] != _FIRST_RATIO, budgets[-1]


@then("every budgeted report request carries the tokens the model reported")
def step_reported(context: Context) -> None:
    for request in _report_requests(context):
        reported = request["reported_input_tokens"]
        assert isinstance(reported, int) and reported > 0, request
        assert reported == request["input_tokens"], request


# --- what the requests carried -------------------------------------------------------------


@then("budgeted request {n:d} carries trimmed older results and the newest result intact")
def step_trimmed_view(context: Context, n: int) -> None:
    results = _results(_request(context, n).messages)
    assert len(results) >= 2, results
    *older, newest = results
    assert all(TRIM_NOTE in r.text for r in older), [r.text[:80] for r in older]
    assert all(r.text.splitlines()[0].startswith("bulky ") for r in older), older
    assert TRIM_NOTE not in newest.text and len(newest.text) > 2_000, newest.text[:200]


@then("budgeted request {n:d} offered tools")
def step_offered(context: Context, n: int) -> None:
    assert _request(context, n).tools, f"request {n} offered no tools"


@then("budgeted request {n:d} offered no tools and ends with the final-answer prompt")
def step_final_request(context: Context, n: int) -> None:
    request = _request(context, n)
    assert request.tools == [], [t["function"]["name"] for t in request.tools]
    last = request.messages[-1]
    assert isinstance(last, HumanMessage) and last.text == FINAL_ANSWER_PROMPT, last


@then("the synthesis instruction appears once in budgeted request {n:d}")
def step_synthesis_once(context: Context, n: int) -> None:
    found = [m for m in _request(context, n).messages if m.text == SYNTHESIS_PROMPT]
    assert len(found) == 1, f"{len(found)} synthesis instructions in request {n}"


@then("no budgeted request carries the synthesis instruction or a trimmed result")
def step_untouched(context: Context) -> None:
    for request in context.budget_model.requests:
        texts = [m.text for m in request.messages]
        assert SYNTHESIS_PROMPT not in texts, texts
        assert not any(TRIM_NOTE in t for t in texts), texts


@then("the budgeted twin received exactly the same requests")
def step_same_as_twin(context: Context) -> None:
    ours, theirs = context.budget_model.requests, context.budget_twin_model.requests
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    for mine, twin in zip(ours, theirs, strict=True):
        assert _shape(mine.messages) == _shape(twin.messages), (mine.messages, twin.messages)
        assert mine.tools == twin.tools
    assert context.budget_answer.text == context.budget_twin_answer.text


def _shape(messages: list[BaseMessage]) -> list[tuple[str, str, list[Any]]]:
    # Tool-call ids differ between runs of the scripted model; names and arguments do not.
    return [
        (m.type, m.text, [(c["name"], c["args"]) for c in getattr(m, "tool_calls", [])])
        for m in messages
    ]


@then("each budgeted request extends the one before it")
def step_extends(context: Context) -> None:
    requests = context.budget_model.requests
    for before, after in itertools.pairwise(requests):
        head = after.messages[: len(before.messages)]
        assert _shape(head) == _shape(before.messages), (before.messages, after.messages)


@then("the huge result in budgeted request {n:d} is cut to the plan's per-result cap")
def step_capped(context: Context, n: int) -> None:
    (result,) = _results(_request(context, n).messages)
    plan = ContextPlan.for_window(context.budget_window)
    cap = plan.result_cap_chars(_FIRST_RATIO)
    assert cap == min(30_000, max(2_000, int(context.budget_window * 0.2 * _FIRST_RATIO))), cap
    assert cap // 2 < len(result.text) <= cap, (len(result.text), cap)
    assert "left out to save context" in result.text, result.text[-300:]
    record = context.budget_report["tool_calls"][0]
    assert record["chars_raw"] > 50_000 and record["chars_out"] == len(result.text), record


@then('budgeted request {n:d} already carries the read_file result for "{name}"')
def step_prefetched(context: Context, n: int, name: str) -> None:
    results = _results(_request(context, n).messages)
    assert len(results) == 1 and results[0].name == "read_file", results
    assert f"{name} line 000" in results[0].text, results[0].text[:200]
    assert context.budget_report["prefetched"] == [name], context.budget_report["prefetched"]


@then("no budgeted request was sent again at the size it was refused at")
def step_no_same_retry(context: Context) -> None:
    sizes = [_chars(r.messages) for r in context.budget_model.requests]
    tools = [len(r.tools) for r in context.budget_model.requests]
    repeats = [
        i + 2
        for i, (a, b) in enumerate(itertools.pairwise(zip(sizes, tools, strict=True)))
        if a == b
    ]
    assert not repeats, (
        f"request(s) {repeats} repeated a request refused for its size unchanged "
        f"(characters per request {sizes}, tools {tools}); the loop should go to the "
        "final answer when its one retry cannot be made smaller or does not fit the window"
    )


@then("budgeted request {n:d} is smaller than budgeted request {m:d}")
def step_smaller(context: Context, n: int, m: int) -> None:
    small, large = _request(context, n).messages, _request(context, m).messages
    assert _chars(small) < _chars(large), (_chars(small), _chars(large))
    assert any(TRIM_NOTE in r.text for r in _results(small)), _results(small)


@then("the budget warning was logged exactly once")
def step_warned_once(context: Context) -> None:
    warnings = [m for m in context.budget_logs.messages() if _WARNING in m]
    assert len(warnings) == 1, warnings
    over = [r for r in _report_requests(context) if r["estimated_tokens"] >= 0.75 * r["ceiling"]]
    assert len(over) >= 2, f"only {len(over)} requests reached 75% of the ceiling: {over}"


@then("the small-window warning was logged exactly once")
def step_small_window_once(context: Context) -> None:
    warnings = [m for m in context.budget_logs.messages() if "tools work poorly below" in m]
    assert len(warnings) == 1, warnings
    assert f"{context.budget_window:,} tokens" in warnings[0], warnings[0]


@then("the budgeted report counts each trimmed result once, however many requests trimmed it")
def step_trimmed_once(context: Context) -> None:
    per_request = [
        {m.tool_call_id for m in request.messages if isinstance(m, ToolMessage) and is_trimmed(m)}
        for request in context.budget_model.requests
    ]
    distinct = set().union(*per_request)
    assert sum(map(len, per_request)) > len(distinct), "no result was trimmed twice"
    assert context.budget_report["trimmed_results"] == len(distinct), (
        context.budget_report["trimmed_results"],
        per_request,
    )


@then("every result trimmed in budgeted request {earlier:d} is still trimmed in request {later:d}")
def step_stays_trimmed(context: Context, earlier: int, later: int) -> None:
    first = context.budget_model.requests[earlier - 1].messages
    second = context.budget_model.requests[later - 1].messages
    trimmed = [i for i, m in enumerate(first) if isinstance(m, ToolMessage) and is_trimmed(m)]
    assert trimmed, f"request {earlier} trimmed nothing"
    for index in trimmed:
        assert is_trimmed(second[index]), (index, second[index])
        assert second[index].content == first[index].content, index


@then('the budgeted report\'s request kinds are "{kinds}"')
def step_request_kinds(context: Context, kinds: str) -> None:
    seen = [request["kind"] for request in context.budget_report["requests"]]
    assert seen == [k.strip() for k in kinds.split(",")], seen
