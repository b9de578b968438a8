"""Steps for features/loop_guards.feature."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage
from support.aio import run

from leanloop.agent import LLMAgent
from leanloop.loop.prefetch import mentioned_paths
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel
from leanloop.tools import workspace_tools

_CHANGE = re.compile(r'^change (\S+) to "(.*)" then (.*)$')


def _calls(cell: str) -> dict[str, Any]:
    """``call NAME {ARGS}``, several joined by `` + `` for calls of one reply."""
    calls = []
    for part in cell.split(" + "):
        name, _, args = part.strip().removeprefix("call ").partition(" ")
        calls.append({"name": name, "args": json.loads(args)})
    return {"tool_calls": calls}


def _reply(workspace: Path, cell: str) -> Any:
    change = _CHANGE.match(cell)
    if change:
        path, text, rest = change.groups()

        def edit_then_call(messages: list[BaseMessage]) -> Any:
            (workspace / path).write_text(text + "\n", encoding="utf-8")
            return _calls(rest)

        return edit_then_call
    return _calls(cell) if cell.startswith("call ") else cell


def _make(
    context: Context, *, model_name: str = "scripted", wired: bool = False, **policies: Any
) -> None:
    workspace = context.guard_ws
    replies = [_reply(workspace, row["reply"]) for row in context.table]
    context.model = ScriptedChatModel(replies=replies)
    spec = AgentSpec(
        name="guarded",
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel", model=model_name),
        tools=("read_file",),
        workspace=workspace,
        **policies,
    )
    # A wired agent builds its own tools from the spec (path help, repair_paths by profile).
    tools = None if wired else workspace_tools(workspace)
    context.agent = LLMAgent.from_spec(spec, model=context.model, tools=tools)


@given('a guarded workspace with "{name}" containing "{text}"')
def step_workspace(context: Context, name: str, text: str) -> None:
    context.guard_ws = context.tmp / "ws"
    context.guard_ws.mkdir()
    (context.guard_ws / name).write_text(text + "\n", encoding="utf-8")
    (context.tmp / "secret.txt").write_text("outside\n", encoding="utf-8")


@given('the guarded workspace has "{name}" containing "{text}"')
def step_workspace_more(context: Context, name: str, text: str) -> None:
    target = context.guard_ws / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text + "\n", encoding="utf-8")


@given("a guarded agent with the script:")
def step_agent(context: Context) -> None:
    _make(context)


@given("a guarded agent with max_repeated_calls {n:d} and the script:")
def step_agent_repeats(context: Context, n: int) -> None:
    _make(context, max_repeated_calls=n)


@given("a guarded agent with prefetch_mentioned_files off and the script:")
def step_agent_no_prefetch(context: Context) -> None:
    _make(context, prefetch_mentioned_files=False)


@given('a guarded agent with first_tool_choice "{choice}" and the script:')
def step_agent_choice(context: Context, choice: str) -> None:
    _make(context, first_tool_choice=choice)


@given('a guarded agent for the model "{name}" with max_rounds {n:d} and the script:')
def step_agent_model(context: Context, name: str, n: int) -> None:
    _make(context, model_name=name, max_rounds=n, prefetch_mentioned_files=False)


@given('a wired agent for the model "{name}" with the script:')
def step_wired_agent(context: Context, name: str) -> None:
    _make(context, model_name=name, wired=True, prefetch_mentioned_files=False)


@given('a wired agent for the model "{name}" with repair_paths off and the script:')
def step_wired_agent_no_repair(context: Context, name: str) -> None:
    _make(context, model_name=name, wired=True, prefetch_mentioned_files=False, repair_paths=False)


@when('the guarded agent is asked "{question}"')
def step_ask(context: Context, question: str) -> None:
    context.answer = run(context.agent.ainvoke(question))
    context.report = context.answer.response_metadata["leanloop"]


def _request(context: Context, n: int) -> Any:
    requests = context.model.requests
    assert len(requests) >= n, f"only {len(requests)} requests were made"
    return requests[n - 1]


@then('the guarded answer is "{text}"')
def step_answer(context: Context, text: str) -> None:
    assert context.answer.content == text, context.answer.content


@then('guarded request {n:d} has a tool result containing "{text}"')
def step_result_contains(context: Context, n: int, text: str) -> None:
    results = [m for m in _request(context, n).messages if isinstance(m, ToolMessage)]
    assert any(text in m.text for m in results), [m.text for m in results]


@then(
    "the guarded report counts {repeats:d} repeated calls and {calls:d} tool calls, "
    "the second marked {kind}"
)
def step_repeats(context: Context, repeats: int, calls: int, kind: str) -> None:
    report = context.report
    assert report["repeated_calls"] == repeats, report["repeated_calls"]
    assert len(report["tool_calls"]) == calls, report["tool_calls"]
    assert report["tool_calls"][1]["repeated"] is (kind == "repeated"), report["tool_calls"][1]


@then('the guarded report says stop_reason "{reason}" after {steps:d} steps')
def step_stop(context: Context, reason: str, steps: int) -> None:
    assert (context.report["stop_reason"], context.report["steps"]) == (reason, steps), (
        context.report["stop_reason"],
        context.report["steps"],
    )


@then("guarded request {n:d} offers no tools")
def step_no_tools(context: Context, n: int) -> None:
    assert _request(context, n).tools == [], _request(context, n).tools


@then('guarded request {n:d} already carries read_file results for "{paths}"')
def step_prefetched(context: Context, n: int, paths: str) -> None:
    messages = _request(context, n).messages
    calls = [c for m in messages for c in getattr(m, "tool_calls", [])]
    expected = [p.strip() for p in paths.split(",")]
    assert [(c["name"], c["args"]["path"]) for c in calls] == [("read_file", p) for p in expected]
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert [r.tool_call_id for r in results] == [c["id"] for c in calls]
    assert "The launch code is 4711." in results[0].text, results[0].text
    assert "port: 8125" in results[1].text, results[1].text


@then('the guarded report lists the prefetched files "{paths}"')
def step_report_prefetched(context: Context, paths: str) -> None:
    assert context.report["prefetched"] == [p.strip() for p in paths.split(",")]


@then("guarded request {n:d} carries no tool results")
def step_no_results(context: Context, n: int) -> None:
    messages = _request(context, n).messages
    assert not any(isinstance(m, ToolMessage) for m in messages), messages


@then("the guarded report lists no prefetched files")
def step_report_none(context: Context) -> None:
    assert context.report["prefetched"] == [], context.report["prefetched"]


@then('guarded request {n:d} asked for tool_choice "{choice}"')
def step_choice(context: Context, n: int, choice: str) -> None:
    assert _request(context, n).tool_choice == choice, _request(context, n).tool_choice


@then("guarded request {n:d} asked for no tool_choice")
def step_no_choice(context: Context, n: int) -> None:
    assert _request(context, n).tool_choice is None, _request(context, n).tool_choice


@then('the guarded report uses the prompt profile "{name}"')
def step_profile(context: Context, name: str) -> None:
    assert context.report["prompt_profile"] == name, context.report["prompt_profile"]


@then('guarded request {n:d} has a system message containing "{text}"')
def step_system(context: Context, n: int, text: str) -> None:
    first = _request(context, n).messages[0]
    assert isinstance(first, SystemMessage) and text in first.text, first


@then('guarded request {n:d} ends with a human message starting "{text}"')
def step_last_human(context: Context, n: int, text: str) -> None:
    last = _request(context, n).messages[-1]
    assert isinstance(last, HumanMessage) and last.text.startswith(text), last


@then("the guarded report counts {n:d} repaired calls, call {i:d} repaired from {origin}")
def step_repaired(context: Context, n: int, i: int, origin: str) -> None:
    report = context.report
    assert report["repaired_calls"] == n, report["repaired_calls"]
    call = report["tool_calls"][i - 1]
    assert call["repaired"] is (n > 0), call
    expected = None if origin == "nothing" else origin.strip('"')
    assert call["repaired_from"] == expected, call


@then('the request "{text}" names the workspace files "{paths}"')
def step_named_files(context: Context, text: str, paths: str) -> None:
    expected = [] if paths == "none" else [p.strip() for p in paths.split(",")]
    found = mentioned_paths(text, context.guard_ws)
    assert found == expected, found
