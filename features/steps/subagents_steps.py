"""Steps for subagents.feature: ``agent:NAME`` tools and the sub-run reports they nest.

The agents file is written into the scenario's folder (``context.tmp``), its workspace
in ``ws/`` beside it, and the agents are built as ``LLMAgent.from_file`` builds them;
their models are ``ScriptedChatModel`` s declared in the file. The CLI scenarios use the
shared CLI steps (``cli_steps.py``) and read what the CLI wrote back here.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import ToolMessage
from support.cli_inprocess import run_cli
from support.html_tree import Node, parse_page

from leanloop.agent import LLMAgent
from leanloop.testing import ScriptedChatModel


@given('a sub-agent workspace file "{name}" holding "{text}"')
def step_workspace_file(context: Context, name: str, text: str) -> None:
    workspace = context.tmp / "ws"
    workspace.mkdir(exist_ok=True)
    (workspace / name).write_text(text + "\n", encoding="utf-8")


@given("the sub-agent file:")
def step_file(context: Context) -> None:
    context.sub_file = context.tmp / "agents.yaml"
    context.sub_file.write_text(textwrap.dedent(context.text) + "\n", encoding="utf-8")


@when('the sub-agent file\'s agent "{name}" is asked "{question}"')
def step_ask(context: Context, name: str, question: str) -> None:
    context.sub_agent = LLMAgent.from_file(context.sub_file, name)
    context.sub_answer = context.sub_agent.invoke(question)
    context.sub_report = context.sub_answer.response_metadata["leanloop"]


@then('the lead answered "{answer}"')
def step_answered(context: Context, answer: str) -> None:
    assert context.sub_answer.text == answer, context.sub_answer.text


def _call(context: Context, n: int) -> dict[str, Any]:
    calls = context.sub_report["tool_calls"]
    assert len(calls) >= n, f"the report has {len(calls)} tool calls"
    call: dict[str, Any] = calls[n - 1]
    return call


def _sub_run(context: Context, n: int) -> dict[str, Any]:
    sub = _call(context, n).get("sub_report")
    assert isinstance(sub, dict), f"call {n} nests no sub-run: {_call(context, n)}"
    return sub


@then(
    'call {n:d} of the lead\'s report is "{name}" with a sub-run that stopped with "{reason}"'
    " after {steps:d} steps"
)
def step_nested(context: Context, n: int, name: str, reason: str, steps: int) -> None:
    call = _call(context, n)
    assert call["name"] == name, call
    sub = _sub_run(context, n)
    assert sub["stop_reason"] == reason, sub
    assert sub["steps"] == steps, sub
    # The whole report, as the sub-agent's own answer carries it.
    assert {"requests", "tool_calls", "events", "elapsed_s", "question"} <= set(sub), sorted(sub)
    json.dumps(context.sub_report)  # the nested report stays JSON-ready


@then('the sub-run of call {n:d} was asked "{task}"')
def step_sub_question(context: Context, n: int, task: str) -> None:
    assert _sub_run(context, n)["question"] == task, _sub_run(context, n)["question"]


@then('the sub-run of call {n:d} made {requests:d} requests and the tool calls "{names}"')
def step_sub_calls(context: Context, n: int, requests: int, names: str) -> None:
    sub = _sub_run(context, n)
    assert len(sub["requests"]) == requests, sub["requests"]
    called = [call["name"] for call in sub["tool_calls"]]
    assert called == [name.strip() for name in names.split(",")], called


@then('the sub-run of call {n:d} read "{path}" and kept the result')
def step_sub_read(context: Context, n: int, path: str) -> None:
    (call,) = _sub_run(context, n)["tool_calls"]
    assert call["args"] == {"path": path}, call
    assert call["ok"] and call["fate"] == "kept", call
    text = (context.tmp / "ws" / path).read_text(encoding="utf-8")
    assert call["chars_raw"] >= len(text.strip()), call


@then('the sub-run of call {n:d} has an error mentioning "{text}"')
def step_sub_error(context: Context, n: int, text: str) -> None:
    error = _sub_run(context, n)["error"]
    assert error and text in error, error


@then('call {n:d} of the lead\'s report has a note starting "{start}"')
def step_note(context: Context, n: int, start: str) -> None:
    notes = _call(context, n)["notes"]
    assert any(note.startswith(start) for note in notes), notes


@then("the lead's report counts no repaired calls")
def step_no_repairs(context: Context) -> None:
    report = context.sub_report
    assert report["repaired_calls"] == 0, [call["repaired"] for call in report["tool_calls"]]


@then('call {n:d} of the lead\'s report failed with a result starting "{start}"')
def step_failed(context: Context, n: int, start: str) -> None:
    call = _call(context, n)
    assert call["ok"] is False and call["fate"] == "failed", call
    model = context.sub_agent.model
    assert isinstance(model, ScriptedChatModel)
    results = [m for m in model.requests[-1].messages if isinstance(m, ToolMessage)]
    assert str(results[n - 1].content).startswith(start), results[n - 1].content


# --- the CLI's output --------------------------------------------------------------------


@then(
    'the JSON\'s call {n:d} nests a sub-run that stopped with "{reason}" and called "{tool}"'
    " with {args}"
)
def step_json_nested(context: Context, n: int, reason: str, tool: str, args: str) -> None:
    data = json.loads(context.cli.stdout)
    sub = data["tool_calls"][n - 1]["sub_report"]
    assert sub["stop_reason"] == reason, sub
    calls = [(call["name"], call["args"]) for call in sub["tool_calls"]]
    assert calls == [(tool, json.loads(args))], calls


@then(
    'the page "{name}" is well-formed and shows a sub-run of "{agent}" that stopped with "{reason}"'
)
def step_page(context: Context, name: str, agent: str, reason: str) -> None:
    page = parse_page((context.tmp / name).read_text(encoding="utf-8"))
    assert not page.problems and page.current is page.root, page.problems
    (sub,) = page.root.find_all("details.sub-run")
    assert sub.attrs["data-agent"] == agent and sub.attrs["data-stop"] == reason, sub.attrs
    (summary,) = [c for c in sub.children if isinstance(c, Node) and c.tag == "summary"]
    assert f"stop: {reason}" in summary.text and f"sub-run of {agent}" in summary.text, summary
    # The sub-run sits inside the record of the call that made it.
    (call,) = [
        c for c in page.root.find_all("li.call") if any(s is sub for s in c.find_all("details"))
    ]
    assert call.find_all("span.name")[0].text == agent, call.text
    context.sub_page_run = sub


@then('that sub-run on the page was asked "{task}" and lists the call "{tool}" {fate}')
def step_page_calls(context: Context, task: str, tool: str, fate: str) -> None:
    sub: Node = context.sub_page_run
    (question,) = sub.find_all("div.sub-question")
    assert question.text == task, question.text
    (call,) = sub.find_all("li.call")
    assert call.find_all("span.name")[0].text == tool, call.text
    assert call.attrs["data-fate"] == fate, call.attrs


@when('the CLI stdout is saved as "{name}" and the CLI runs "{command}"')
def step_save_and_run(context: Context, name: str, command: str) -> None:
    (context.tmp / name).write_text(context.cli.stdout, encoding="utf-8")
    context.cli = run_cli(command.split(), context.tmp)


@then('the CLI stdout has a line starting "{start}"')
def step_stdout_line(context: Context, start: str) -> None:
    lines = [line.strip() for line in context.cli.stdout.splitlines()]
    assert any(line.startswith(start) for line in lines), context.cli.stdout
