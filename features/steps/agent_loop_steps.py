"""Steps for features/agent_loop.feature."""

from __future__ import annotations

import json
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from support.agents import ToolLog, scripted_agent
from support.aio import run

from leanloop.exceptions import LeanloopError, ModelError
from leanloop.loop.prompts import FINAL_ANSWER_PROMPT


def _reply(cell: str) -> Any:
    """``call name {json}; name {json}`` → tool calls; ``raise text`` → an error; else text."""
    if cell.startswith("raise "):
        return {"raise": cell.removeprefix("raise ")}
    if not cell.startswith("call "):
        return cell
    calls = []
    for part in cell.removeprefix("call ").split(";"):
        name, _, args = part.strip().partition(" ")
        calls.append({"name": name, "args": json.loads(args or "{}")})
    return {"tool_calls": calls}


def _make(context: Context, tool: str, **policies: Any) -> None:
    context.tool_log = log = ToolLog()
    tools = {"lookup": log.lookup_tool, "barrier": log.barrier_tool, "failing": log.failing_tool}
    replies = [_reply(row["reply"]) for row in context.table]
    context.agent, context.model = scripted_agent(replies, tools=[tools[tool]()], **policies)


@given("a loop agent with the {tool} tool and the script:")
def step_agent(context: Context, tool: str) -> None:
    _make(context, tool)


@given("a loop agent with the {tool} tool, max_parallel_tools {n:d} and the script:")
def step_agent_fanout(context: Context, tool: str, n: int) -> None:
    _make(context, tool, max_parallel_tools=n)


@given("a loop agent with the {tool} tool, max_rounds {n:d} and the script:")
def step_agent_rounds(context: Context, tool: str, n: int) -> None:
    _make(context, tool, max_rounds=n)


@given("a loop agent with the barrier tool expecting {n:d} parallel calls and the script:")
def step_agent_barrier(context: Context, n: int) -> None:
    _make(context, "barrier")
    context.tool_log.expected_parallel = n


@when('the loop agent is asked "{question}"')
def step_ask(context: Context, question: str) -> None:
    context.answer = run(context.agent.ainvoke(question))
    context.report = context.answer.response_metadata["leanloop"]


@when('the loop agent is asked "{question}" and the run fails')
def step_ask_fails(context: Context, question: str) -> None:
    context.caller_messages = [HumanMessage(content=question)]
    context.caller_snapshot = [m.model_copy(deep=True) for m in context.caller_messages]
    try:
        run(context.agent.ainvoke(context.caller_messages))
    except LeanloopError as exc:
        context.failure = exc
    else:
        raise AssertionError("the run was expected to fail but answered")


@then('the loop answer is "{text}"')
def step_answer(context: Context, text: str) -> None:
    assert context.answer.content == text, context.answer.content


@then('the loop answer mentions "{text}"')
def step_answer_mentions(context: Context, text: str) -> None:
    assert text in context.answer.text, context.answer.text


@then('the loop report says stop_reason "{reason}" after {steps:d} steps')
def step_report(context: Context, reason: str, steps: int) -> None:
    assert context.report["stop_reason"] == reason, context.report["stop_reason"]
    assert context.report["steps"] == steps, context.report["steps"]


@then("the loop report lists {n:d} tool calls")
def step_report_calls(context: Context, n: int) -> None:
    assert len(context.report["tool_calls"]) == n, context.report["tool_calls"]


@then('the loop tool "{name}" received {args}')
def step_tool_received(context: Context, name: str, args: str) -> None:
    received = [a for n, a in context.tool_log.calls if n == name]
    assert received == [json.loads(args)], received


@then('the loop tool "{name}" ran {n:d} times')
def step_tool_ran(context: Context, name: str, n: int) -> None:
    count = sum(1 for tool, _ in context.tool_log.calls if tool == name)
    assert count == n, f"{name} ran {count} times"


def _request(context: Context, n: int) -> Any:
    requests = context.model.requests
    assert len(requests) >= n, f"only {len(requests)} requests were made"
    return requests[n - 1]


def _results(messages: list[BaseMessage]) -> list[ToolMessage]:
    tail: list[ToolMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        tail.insert(0, message)
    return tail


@then('loop request {n:d} ends with a tool result "{text}" paired with the call of request {m:d}')
def step_paired(context: Context, n: int, text: str, m: int) -> None:
    messages = _request(context, n).messages
    results = _results(messages)
    assert [r.content for r in results] == [text], [r.content for r in results]
    call_message = messages[-1 - len(results)]
    assert [c["id"] for c in call_message.tool_calls] == [results[0].tool_call_id]
    assert len(_request(context, m).messages) == len(messages) - 2


@then('loop request {n:d} offered the tools "{names}"')
def step_offered(context: Context, n: int, names: str) -> None:
    offered = [t["function"]["name"] for t in _request(context, n).tools]
    assert offered == [s.strip() for s in names.split(",")], offered


@then("loop request {n:d} offered no tools")
def step_no_tools(context: Context, n: int) -> None:
    assert _request(context, n).tools == [], _request(context, n).tools


@then("loop request {n:d} ends with the final-answer prompt")
def step_final_prompt(context: Context, n: int) -> None:
    last = _request(context, n).messages[-1]
    assert isinstance(last, HumanMessage) and last.content == FINAL_ANSWER_PROMPT, last


@then('loop request {n:d} carries {count:d} tool results in call order "{texts}"')
def step_results_order(context: Context, n: int, count: int, texts: str) -> None:
    results = _results(_request(context, n).messages)
    assert [r.content for r in results] == [t.strip() for t in texts.split(",")]
    assert len(results) == count


@then("loop request {n:d} carries {count:d} tool results")
def step_results_count(context: Context, n: int, count: int) -> None:
    messages = _request(context, n).messages
    results = _results(messages)
    assert len(results) == count, len(results)
    call_ids = [c["id"] for c in messages[-1 - count].tool_calls]
    assert [r.tool_call_id for r in results] == call_ids


@then('loop request {n:d} has a tool result containing "{text}"')
def step_result_contains(context: Context, n: int, text: str) -> None:
    results = _results(_request(context, n).messages)
    assert any(text in str(r.content) for r in results), [r.content for r in results]


@then('the loop failure is a leanloop ModelError mentioning "{text}"')
def step_failure(context: Context, text: str) -> None:
    assert isinstance(context.failure, ModelError), type(context.failure)
    assert text in str(context.failure), str(context.failure)


@then("the loop failure's report has {steps:d} steps and {calls:d} tool calls")
def step_failure_report(context: Context, steps: int, calls: int) -> None:
    report = context.failure.report
    assert report.steps == steps and len(report.tool_calls) == calls, report


@then("the caller's loop messages are unchanged")
def step_caller_unchanged(context: Context) -> None:
    assert context.caller_messages == context.caller_snapshot
