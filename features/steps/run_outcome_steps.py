"""Steps for features/run_outcome.feature: usage, sync streaming, failures, result fates."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool

from leanloop.agent import LLMAgent
from leanloop.exceptions import RunFailed
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel


def _tools() -> list[BaseTool]:
    async def lookup(key: str) -> str:
        """Look up a key in the test table."""
        return f"value of {key}"

    async def bulky(size: int) -> str:
        """Return ``size`` characters of numbered lines."""
        lines, total, n = [], 0, 0
        while total < size:
            line = f"line {n:05d} of the bulky output, padded with words"[
                : max(size - total - 1, 1)
            ]
            lines.append(line)
            total += len(line) + 1
            n += 1
        return "\n".join(lines)[:size]

    def explode(reason: str) -> str:
        """Always fails."""
        raise RuntimeError(f"it broke: {reason}")

    return [
        StructuredTool.from_function(coroutine=lookup, name="lookup"),
        StructuredTool.from_function(coroutine=bulky, name="bulky"),
        StructuredTool.from_function(func=explode, name="explode"),
    ]


def _reply(row: Any) -> Any:
    text = row["reply"].strip()
    if text.startswith("raise: "):
        return {"raise": text.removeprefix("raise: ")}
    if text.startswith("call "):
        name, _, args = text.removeprefix("call ").partition(" ")
        reply: dict[str, Any] = {"tool_calls": [{"name": name, "args": json.loads(args)}]}
    else:
        reply = {"content": text}
    if "input" in row.headings:
        reply["usage"] = {
            "input_tokens": int(row["input"]),
            "output_tokens": int(row["output"]),
            "total_tokens": int(row["input"]) + int(row["output"]),
        }
    return reply


def _agent(context: Context, model: Any, **policies: Any) -> None:
    spec = AgentSpec(
        name="outcome",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel"),
        **policies,
    )
    context.outcome_agent = LLMAgent.from_spec(spec, model=model, tools=_tools())


@given("an outcome agent whose model reports usage, with the script:")
@given("an outcome agent with the script:")
def step_agent(context: Context) -> None:
    replies = [_reply(row) for row in context.table]
    _agent(context, ScriptedChatModel(replies=replies))


@given("an outcome agent with tool_result_max_chars {cap:d} and the script:")
def step_agent_capped(context: Context, cap: int) -> None:
    replies = [_reply(row) for row in context.table]
    _agent(context, ScriptedChatModel(replies=replies), tool_result_max_chars=cap)


@given("an outcome agent with a {window:d}-token window, trim_keep_steps {keep:d} and the script:")
def step_agent_window(context: Context, window: int, keep: int) -> None:
    replies = [_reply(row) for row in context.table]
    spec_model = ModelSpec(class_path="leanloop.testing:ScriptedChatModel", context_window=window)
    spec = AgentSpec(name="outcome", model=spec_model, trim_keep_steps=keep)
    model = ScriptedChatModel(replies=replies)
    context.outcome_agent = LLMAgent.from_spec(spec, model=model, tools=_tools())


@given('an outcome agent on a streaming model answering "{text}"')
def step_agent_streaming(context: Context, text: str) -> None:
    model = GenericFakeChatModel(messages=iter([AIMessage(content=text)]))
    spec = AgentSpec(name="outcome", model=ModelSpec(class_path="x:Y"), max_rounds=2)
    context.outcome_agent = LLMAgent.from_spec(spec, model=model, tools=[])


@when('the outcome agent is invoked with "{question}"')
def step_invoke(context: Context, question: str) -> None:
    context.outcome_answer = asyncio.run(context.outcome_agent.ainvoke(question))
    context.outcome_report = context.outcome_answer.response_metadata["leanloop"]


@when('the outcome agent is invoked with "{question}" expecting RunFailed')
def step_invoke_failing(context: Context, question: str) -> None:
    try:
        asyncio.run(context.outcome_agent.ainvoke(question))
    except RunFailed as exc:
        context.outcome_failure = exc
    else:
        raise AssertionError("the run answered; RunFailed was expected")


@when('the outcome agent is streamed synchronously with "{question}"')
def step_stream_sync(context: Context, question: str) -> None:
    context.outcome_chunks = list(context.outcome_agent.stream(question))


@then("the outcome answer's usage_metadata has input {i:d}, output {o:d} and total {t:d}")
def step_usage(context: Context, i: int, o: int, t: int) -> None:
    usage = context.outcome_answer.usage_metadata
    assert usage is not None, "no usage_metadata on the answer"
    got = (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"])
    assert got == (i, o, t), got


@then("the outcome report's requests carry input tokens {figures}")
def step_request_tokens(context: Context, figures: str) -> None:
    expected = [int(f) for f in figures.split(", ")]
    got = [r["input_tokens"] for r in context.outcome_report["requests"]]
    assert got == expected, got


@then('the sync stream yielded more than {count:d} text chunks that join to "{text}"')
def step_stream_chunks(context: Context, count: int, text: str) -> None:
    texts = [c.text for c in context.outcome_chunks if c.text]
    assert len(texts) > count, texts
    assert "".join(texts) == text, texts


@then('the last sync stream chunk carries the report with stop_reason "{reason}"')
def step_stream_report(context: Context, reason: str) -> None:
    last = context.outcome_chunks[-1]
    assert last.response_metadata["leanloop"]["stop_reason"] == reason, last.response_metadata


@then(
    'the RunFailed report says stop_reason "{reason}" after {steps:d} steps '
    "with {calls:d} tool calls"
)
def step_failed_report(context: Context, reason: str, steps: int, calls: int) -> None:
    report = context.outcome_failure.report
    assert report.stop_reason == reason, report.stop_reason
    assert report.steps == steps, report.steps
    assert len(report.tool_calls) == calls, report.tool_calls


@then('the RunFailed report\'s error contains "{text}"')
def step_failed_error(context: Context, text: str) -> None:
    error = context.outcome_failure.report.error
    assert error and text in error, error
    assert str(context.outcome_failure) == error


@then("the RunFailed report's elapsed_s is a number")
def step_failed_elapsed(context: Context) -> None:
    elapsed = context.outcome_failure.report.elapsed_s
    assert isinstance(elapsed, float) and elapsed >= 0, elapsed


@then('the RunFailed messages end with the tool result "{text}"')
def step_failed_messages(context: Context, text: str) -> None:
    last = context.outcome_failure.messages[-1]
    assert isinstance(last, ToolMessage) and last.text == text, last


def _call(context: Context, number: int) -> dict[str, Any]:
    calls = context.outcome_report["tool_calls"]
    assert len(calls) >= number, calls
    return dict(calls[number - 1])


@then(
    'outcome tool call {n:d} has fate "cut" with cut_from equal to its chars_raw '
    "and chars_out at most {cap:d}"
)
def step_fate_cut(context: Context, n: int, cap: int) -> None:
    call = _call(context, n)
    assert call["fate"] == "cut", call
    assert call["chars_raw"] > cap and call["cut_from"] == call["chars_raw"], call
    assert call["chars_out"] <= cap, call


@then('outcome tool call {n:d} has fate "trimmed" at a later step than {step:d}')
def step_fate_trimmed(context: Context, n: int, step: int) -> None:
    call = _call(context, n)
    assert call["fate"] == "trimmed", call
    assert call["trimmed_at"] is not None and call["trimmed_at"] > step, call


@then("outcome tool call {n:d} was not trimmed, since the request fits without it")
def step_not_trimmed(context: Context, n: int) -> None:
    call = _call(context, n)
    assert call["trimmed_at"] is None and call["fate"] != "trimmed", call
    for request in context.outcome_report["requests"]:
        assert request["estimated_tokens"] <= request["ceiling"], request


@then('outcome tool call {n:d} has fate "{fate}"')
def step_fate(context: Context, n: int, fate: str) -> None:
    call = _call(context, n)
    assert call["fate"] == fate, call


@then('the outcome report counts as many trimmed results as calls with fate "trimmed"')
def step_trim_count(context: Context) -> None:
    report = context.outcome_report
    fated = sum(1 for c in report["tool_calls"] if c["fate"] == "trimmed")
    assert fated >= 1, report["tool_calls"]
    assert report["trimmed_results"] == fated, (report["trimmed_results"], fated)
