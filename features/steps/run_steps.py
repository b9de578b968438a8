"""Steps shared by every scenario that runs an agent around a scripted model.

The agent, its script notation and the run state live in ``features/support``
(:mod:`support.runs`, :mod:`support.script`); the checks of one concept (budget events,
pruning markers, the text protocol, streaming) are in that concept's steps file and read
the same ``context.agent_run``.
"""

from __future__ import annotations

import json
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from support import runs
from support.script import expand

from leanloop.exceptions import ModelError
from leanloop.loop.prompts import FINAL_ANSWER_PROMPT

# --- Given ---------------------------------------------------------------------------


@given("an agent with the script:")
def step_agent(context: Context) -> None:
    runs.start(context, {})


@given("an agent with {settings} and the script:")
def step_agent_settings(context: Context, settings: str) -> None:
    runs.start(context, runs.parse_settings(settings))


@given("every agent has {settings}")
def step_presets(context: Context, settings: str) -> None:
    runs.setup(context).presets.update(runs.parse_settings(settings))


@given("a twin agent with {settings}")
def step_twin_settings(context: Context, settings: str) -> None:
    runs.start_twin(context, runs.parse_settings(settings))


@given("a twin agent")
def step_twin(context: Context) -> None:
    runs.start_twin(context, {})


@given('a workspace with "{name}" containing "{text}"')
@given('the workspace has "{name}" containing "{text}"')
def step_workspace_file(context: Context, name: str, text: str) -> None:
    target = runs.setup(context).workspace / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text + "\n", encoding="utf-8")


# --- When ----------------------------------------------------------------------------
# The longer forms come first: "asked "{question}"" would also match them.


@when('the agent is asked "{question}" after "{earlier}" was answered "{answer}"')
def step_ask_after(context: Context, question: str, earlier: str, answer: str) -> None:
    turns = [HumanMessage(content=earlier), AIMessage(content=answer)]
    runs.ask(runs.current(context), {"input": question, "messages": turns})


@when('the agent is asked "{question}" and the run fails')
def step_ask_fails(context: Context, question: str) -> None:
    runs.ask_failing(runs.current(context), question)


@when('the agent is asked "{question}" through astream_events')
def step_ask_events(context: Context, question: str) -> None:
    runs.ask_through_events(runs.current(context), question)


@when('the agent is asked "{question}" through astream')
def step_ask_astream(context: Context, question: str) -> None:
    runs.ask_streaming(runs.current(context), question)


@when('the agent is asked "{question}" through stream')
def step_ask_stream(context: Context, question: str) -> None:
    runs.ask_streaming(runs.current(context), question, sync=True)


@when('the agent is asked "{question}" through invoke')
def step_ask_sync(context: Context, question: str) -> None:
    runs.ask(runs.current(context), question, sync=True)


@when('the agent and its twin are asked "{question}"')
def step_ask_both(context: Context, question: str) -> None:
    run = runs.current(context)
    assert run.twin is not None, "the scenario has no twin agent"
    runs.ask(run, question)
    runs.ask(run.twin, question)


@when('the twin is asked "{question}"')
def step_ask_twin(context: Context, question: str) -> None:
    twin = runs.current(context).twin
    assert twin is not None, "the scenario has no twin agent"
    runs.ask(twin, question)


@when("the agent is asked a question of {size:d} characters")
def step_ask_large(context: Context, size: int) -> None:
    runs.ask(runs.current(context), runs.long_question(size))


@when('the agent is asked "{question}"')
def step_ask(context: Context, question: str) -> None:
    runs.ask(runs.current(context), question)


# --- Then: the answer and the report -------------------------------------------------


def _answer(context: Context) -> AIMessage:
    answer = runs.current(context).answer
    assert isinstance(answer, AIMessage), f"the agent gave no AIMessage: {answer!r}"
    return answer


@then('the answer is "{text}"')
def step_answer(context: Context, text: str) -> None:
    answer = _answer(context)
    assert answer.content == expand(text), answer.content


@then('the answer mentions "{text}"')
def step_answer_mentions(context: Context, text: str) -> None:
    answer = _answer(context)
    assert text in answer.text, answer.text


@then('the report says stop_reason "{reason}" after {steps:d} steps')
def step_report(context: Context, reason: str, steps: int) -> None:
    report = runs.current(context).report
    assert (report["stop_reason"], report["steps"]) == (reason, steps), (
        report["stop_reason"],
        report["steps"],
        report["events"],
    )


@then('the report says stop_reason "{reason}"')
def step_report_reason(context: Context, reason: str) -> None:
    report = runs.current(context).report
    got = report["stop_reason"]
    assert got == reason, f"stop_reason {got!r}, events {report['events']}"


@then('the report says tool_mode "{mode:w}" and stop_reason "{reason}"')
def step_report_mode(context: Context, mode: str, reason: str) -> None:
    report = runs.current(context).report
    assert report["tool_mode"] == mode, f"tool_mode is {report['tool_mode']!r}"
    assert report["stop_reason"] == reason, f"stop_reason is {report['stop_reason']!r}"


@then("the report lists {count:d} tool calls")
def step_report_calls(context: Context, count: int) -> None:
    calls = runs.current(context).report["tool_calls"]
    assert len(calls) == count, calls


@then("the report lists {count:d} model requests")
def step_report_requests(context: Context, count: int) -> None:
    requests = runs.current(context).report["requests"]
    assert len(requests) == count, requests


@then('the report has an event mentioning "{text}"')
def step_report_event(context: Context, text: str) -> None:
    events = runs.current(context).report["events"]
    assert any(text in line for line in events), events


@then("the twin's answer is the agent's")
def step_twin_answer(context: Context) -> None:
    run = runs.current(context)
    assert run.twin is not None and run.twin.answer is not None, "the twin has not answered"
    assert run.twin.answer.content == _answer(context).content, run.twin.answer.content


# --- Then: a failed run --------------------------------------------------------------


@then('the run failed with a leanloop ModelError mentioning "{text}"')
def step_failure(context: Context, text: str) -> None:
    failure = runs.current(context).failure
    assert isinstance(failure, ModelError), type(failure).__mro__
    assert text in str(failure), str(failure)
    assert "\n" not in str(failure), f"the error is not one line: {failure}"


@then("the failure's report has {steps:d} steps and {calls:d} tool calls")
def step_failure_report(context: Context, steps: int, calls: int) -> None:
    report = runs.current(context).failure.report  # type: ignore[union-attr]
    assert report.steps == steps and len(report.tool_calls) == calls, report


@then('the failure\'s report says tool_mode "{mode:w}" after {steps:d} steps')
def step_failure_mode(context: Context, mode: str, steps: int) -> None:
    report = runs.current(context).failure.report  # type: ignore[union-attr]
    assert report.tool_mode == mode and report.steps == steps, report


@then("the caller's messages are unchanged")
def step_caller_unchanged(context: Context) -> None:
    run = runs.current(context)
    assert run.caller_messages == run.caller_snapshot, run.caller_messages


# --- Then: the tools -----------------------------------------------------------------


@then('the tool "{name}" received {args}')
def step_tool_received(context: Context, name: str, args: str) -> None:
    expected = [json.loads(part) for part in args.split(" then ")]
    received = runs.current(context).box.received(name)
    assert received == expected, received


@then('the tool "{name}" ran {count:d} times')
def step_tool_ran(context: Context, name: str, count: int) -> None:
    received = runs.current(context).box.received(name)
    assert len(received) == count, f"{name} ran for {received}"


@then("no tool ran")
def step_no_tool(context: Context) -> None:
    calls = runs.current(context).box.calls
    assert calls == [], calls


# --- Then: the requests --------------------------------------------------------------


def _request(context: Context, n: int) -> Any:
    return runs.current(context).request(n)


def _tail_results(messages: list[BaseMessage]) -> list[ToolMessage]:
    """The tool results the request ends with (those of the last round)."""
    tail: list[ToolMessage] = []
    for message in reversed(messages):
        if not isinstance(message, ToolMessage):
            break
        tail.insert(0, message)
    return tail


def _system(context: Context, n: int) -> str:
    messages = _request(context, n).messages
    assert messages and isinstance(messages[0], SystemMessage), f"no system message: {messages}"
    return messages[0].text


def _last_human(context: Context, n: int) -> HumanMessage:
    last = _request(context, n).messages[-1]
    assert isinstance(last, HumanMessage), f"request {n} ends with {type(last).__name__}"
    return last


@then("the model received {count:d} requests")
def step_request_count(context: Context, count: int) -> None:
    got = len(runs.current(context).requests)
    assert got == count, f"the model received {got} requests, not {count}"


@then('request {n:d} ends with a tool result "{text}" paired with the call of request {m:d}')
def step_paired(context: Context, n: int, text: str, m: int) -> None:
    messages = _request(context, n).messages
    results = _tail_results(messages)
    assert [r.content for r in results] == [text], [r.content for r in results]
    call_message = messages[-1 - len(results)]
    assert [c["id"] for c in call_message.tool_calls] == [results[0].tool_call_id]
    assert len(_request(context, m).messages) == len(messages) - 2


@then('request {n:d} offered the tools "{names}"')
def step_offered(context: Context, n: int, names: str) -> None:
    offered = [t["function"]["name"] for t in _request(context, n).tools]
    assert offered == [s.strip() for s in names.split(",")], offered


@then("request {n:d} offered tools")
def step_offered_some(context: Context, n: int) -> None:
    assert _request(context, n).tools, f"request {n} offered no tools"


@then("request {n:d} offered no tools")
def step_no_tools(context: Context, n: int) -> None:
    tools = _request(context, n).tools
    assert tools == [], [t["function"]["name"] for t in tools]


@then("the last request offered no tools")
def step_last_no_tools(context: Context) -> None:
    last = runs.current(context).requests[-1]
    assert last.tools == [], last.tools


@then('request {n:d} asked for tool_choice "{choice}"')
def step_choice(context: Context, n: int, choice: str) -> None:
    assert _request(context, n).tool_choice == choice, _request(context, n).tool_choice


@then("request {n:d} asked for no tool_choice")
def step_no_choice(context: Context, n: int) -> None:
    assert _request(context, n).tool_choice is None, _request(context, n).tool_choice


@then("request {n:d} ends with the final-answer prompt")
def step_final_prompt(context: Context, n: int) -> None:
    last = _last_human(context, n)
    assert last.text == FINAL_ANSWER_PROMPT, last.text


@then('request {n:d} ends with a human message starting "{text}"')
def step_last_human(context: Context, n: int, text: str) -> None:
    last = _last_human(context, n)
    assert last.text.startswith(text), last.text


@then('request {n:d} has a user turn containing "{text}"')
def step_user_contains(context: Context, n: int, text: str) -> None:
    turns = [m.text for m in _request(context, n).messages if isinstance(m, HumanMessage)]
    assert any(expand(text) in t for t in turns), turns


@then('request {n:d} has a system message starting "{text}"')
def step_system_starts(context: Context, n: int, text: str) -> None:
    system = _system(context, n)
    assert system.startswith(text), system


@then('request {n:d} has the system message "{text}"')
def step_system_is(context: Context, n: int, text: str) -> None:
    system = _system(context, n)
    assert system == expand(text), system


@then('request {n:d} has a system message containing "{text}"')
def step_system_contains(context: Context, n: int, text: str) -> None:
    system = _system(context, n)
    assert text in system, f"{text!r} is not in the system message:\n{system}"


@then('request {n:d} carries {count:d} tool results in call order "{texts}"')
def step_results_order(context: Context, n: int, count: int, texts: str) -> None:
    results = _tail_results(_request(context, n).messages)
    assert [r.content for r in results] == [t.strip() for t in texts.split(",")]
    assert len(results) == count


@then("request {n:d} carries {count:d} tool results")
def step_results_count(context: Context, n: int, count: int) -> None:
    messages = _request(context, n).messages
    results = _tail_results(messages)
    assert len(results) == count, len(results)
    call_ids = [c["id"] for c in messages[-1 - count].tool_calls]
    assert [r.tool_call_id for r in results] == call_ids


@then("request {n:d} carries no tool results")
def step_no_results(context: Context, n: int) -> None:
    messages = _request(context, n).messages
    assert not any(isinstance(m, ToolMessage) for m in messages), messages


@then('request {n:d} has a tool result containing "{text}"')
def step_result_contains(context: Context, n: int, text: str) -> None:
    results = [m for m in _request(context, n).messages if isinstance(m, ToolMessage)]
    assert any(text in m.text for m in results), [m.text for m in results]


@then("request {n:d} carries {count:d} model replies")
def step_reply_count(context: Context, n: int, count: int) -> None:
    replies = [m for m in _request(context, n).messages if isinstance(m, AIMessage)]
    assert len(replies) == count, [m.text for m in replies]


# --- Then: the logs ------------------------------------------------------------------


def _logged(context: Context, level: str) -> list[str]:
    return [r.getMessage() for r in context.scenario_logs.records if r.levelname == level]


@then('a warning says "{text}"')
def step_warning_says(context: Context, text: str) -> None:
    warnings = _logged(context, "WARNING")
    assert any(text in w for w in warnings), warnings


@then('a warning names "{first}" and "{second}"')
def step_warning_names(context: Context, first: str, second: str) -> None:
    warnings = _logged(context, "WARNING")
    assert any(first in w and second in w for w in warnings), warnings


@then('an error says "{text}"')
def step_error_says(context: Context, text: str) -> None:
    errors = _logged(context, "ERROR")
    assert any(text in e for e in errors), errors
