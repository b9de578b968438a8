"""Steps for features/loop/answer_check_collisions.feature: the answer check where it meets
the other rules (sessions, sub-agents, pruning, trimming, resume, text mode, typed answers).

The runs are the shared ones: ``support.runs`` with the session turns of
``pruning_reading_steps.py``, the sub-agent file of ``subagents_steps.py``
(``context.sub_agent``, ``context.sub_report``) and the scripted HTTP server of
``structured_steps.py`` (``context.http_server``, ``context.typed_message``). Here are the
checks of what the answer check did there, and the Givens those harnesses lacked.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from behave import given, then
from behave.runner import Context
from langchain_core.messages import HumanMessage
from support import runs

RESOURCES = Path(__file__).resolve().parents[2] / "robot" / "resources"
# Appended, not inserted (as structured_steps.py does): never shadow an installed package.
if str(RESOURCES) not in sys.path:
    sys.path.append(str(RESOURCES))

from agents_file import agent_entry, model_entry, write_agents_file  # noqa: E402
from scripted_server import ScriptedOpenAIServer, ScriptedResponse  # noqa: E402

# --- sub-agents: the lead's report and the sub-run's --------------------------------------


def _kinds(report: dict[str, Any]) -> list[str]:
    return [request["kind"] for request in report["requests"]]


def _wanted(kinds: str) -> list[str]:
    return [kind.strip() for kind in kinds.split(",")]


def _sub_run(context: Context, n: int) -> dict[str, Any]:
    call = context.sub_report["tool_calls"][n - 1]
    sub = call.get("sub_report")
    assert isinstance(sub, dict), f"call {n} nests no sub-run: {call}"
    return sub


# The longer form comes first: the shorter one would also match it.


@then(
    'the sub-run of call {n:d} says answer check "{verdict}" with the first answer "{first}" '
    'after requests "{kinds}"'
)
def step_sub_check_replaced(context: Context, n: int, verdict: str, first: str, kinds: str) -> None:
    sub = _sub_run(context, n)
    check = sub["answer_check"]
    assert check is not None, "the sub-run's answer was not checked"
    assert (check["verdict"], check.get("first_answer")) == (verdict, first), check
    assert _kinds(sub) == _wanted(kinds), _kinds(sub)


@then('the sub-run of call {n:d} says answer check "{verdict}" after requests "{kinds}"')
def step_sub_check(context: Context, n: int, verdict: str, kinds: str) -> None:
    sub = _sub_run(context, n)
    check = sub["answer_check"]
    assert check is not None and check["verdict"] == verdict, check
    assert _kinds(sub) == _wanted(kinds), _kinds(sub)


@then('the lead\'s answer check says "{verdict}" on "{found}" after requests "{kinds}"')
def step_lead_check(context: Context, verdict: str, found: str, kinds: str) -> None:
    report = context.sub_report
    check = report["answer_check"]
    assert check is not None and (check["verdict"], check["check"]) == (verdict, found), check
    assert _kinds(report) == _wanted(kinds), _kinds(report)
    # The lead's model was asked exactly what its report lists: nothing twice.
    assert len(context.sub_agent.model.requests) == len(report["requests"])


@then('the lead\'s last request alone quotes "{line}" and the question "{question}"')
def step_lead_alone(context: Context, line: str, question: str) -> None:
    messages = context.sub_agent.model.requests[-1].messages
    assert len(messages) == 1 and isinstance(messages[0], HumanMessage), messages
    text = messages[0].text
    assert f"\n{line}\n" in text and f"Question: {question}\n" in text, text


# --- trimming --------------------------------------------------------------------------


@then('request {n:d} no longer shows line {number:d} of "{name}"')
def step_line_trimmed(context: Context, n: int, number: int, name: str) -> None:
    lines = (runs.setup(context).workspace / name).read_text(encoding="utf-8").splitlines()
    wanted = lines[number - 1].strip()
    run = runs.current(context)
    held = [m.text for m in run.request(n).messages if wanted in m.text]
    assert not held, f"request {n} still shows {wanted!r}: {held}"
    # An earlier request did: the line was read, and only the view lost it.
    earlier = run.requests[: n - 1]
    assert any(wanted in m.text for r in earlier for m in r.messages), f"never shown: {wanted!r}"


# --- typed answers ---------------------------------------------------------------------


@then('the structuring request {n:d} does not hold "{text}"')
def step_structuring_lacks(context: Context, n: int, text: str) -> None:
    run = runs.current(context)
    assert run.report["requests"][n - 1]["kind"] == "structured", run.report["requests"]
    messages = run.request(n).messages
    assert not any(text in m.text for m in messages), [m.text for m in messages]


@given('the scripted HTTP server first calls read_file on "{path}", then answers:')
def step_http_server_reads(context: Context, path: str) -> None:
    server = ScriptedOpenAIServer()
    server.start()
    context.cleanups.append(server.stop)
    server.queue(ScriptedResponse(tool_calls=[{"name": "read_file", "arguments": {"path": path}}]))
    for row in context.table:
        server.queue(ScriptedResponse(content=row["reply"]))
    context.http_server = server


@given(
    'an agents file for the scripted HTTP server whose agent "{name}" reads the workspace '
    'with output_schema "{ref}" and answer_check "{mode}"'
)
def step_http_reader_file(context: Context, name: str, ref: str, mode: str) -> None:
    server: ScriptedOpenAIServer = context.http_server
    workspace = runs.setup(context).workspace
    agent = agent_entry(
        "You answer questions from the workspace's files.",
        tools=("read_file",),
        workspace=f"./{workspace.relative_to(context.tmp)}",
        output_schema=ref,
        answer_check=mode,
    )
    write_agents_file(context.tmp, model_entry(server.base_url, server.model), name, agent)


def _server_messages(context: Context, n: int) -> list[dict[str, Any]]:
    server: ScriptedOpenAIServer = context.http_server
    assert len(server.requests) >= n, f"the server received {len(server.requests)} requests"
    messages: list[dict[str, Any]] = server.requests[n - 1]["messages"]
    return messages


def _content(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content)
    return str(content)


@then('the scripted HTTP server\'s request {n:d} is one user message that quotes "{line}"')
def step_http_alone(context: Context, n: int, line: str) -> None:
    messages = _server_messages(context, n)
    assert [m["role"] for m in messages] == ["user"], messages
    assert f"\n{line}" in _content(messages[0]), _content(messages[0])
    assert "tools" not in context.http_server.requests[n - 1], "the request alone offered tools"


@then('the scripted HTTP server\'s request {n:d} carries "{text}" and not "{other}"')
def step_http_carries(context: Context, n: int, text: str, other: str) -> None:
    sent = "\n".join(_content(m) for m in _server_messages(context, n))
    assert text in sent and other not in sent, sent
