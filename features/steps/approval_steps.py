"""Steps for features/loop/approval.feature: the approval of tool calls (ADR 0037)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import json
import tempfile
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from pydantic import BaseModel

from leanloop.agent import LLMAgent
from leanloop.cli.command import main
from leanloop.exceptions import ApprovalPending
from leanloop.loop.policies.approval import (
    ApprovalRequest,
    Approve,
    Decision,
    EditArgs,
    Reject,
)
from leanloop.spec import load_specs_from_text
from leanloop.testing import ScriptedChatModel

__all__: list[str] = []


def _write(path: str, call_id: str) -> dict[str, Any]:
    return {
        "tool_calls": [
            {"name": "write_file", "args": {"path": path, "content": "done"}, "id": call_id}
        ]
    }


def _agent(context: Context, replies: list[dict[str, Any]], **options: Any) -> LLMAgent:
    text = (
        "version: 1\nagents:\n  writer:\n    model: {provider: ollama, model: x}\n"
        f"    workspace: {context.approval_ws}\n    tools: [read_file, write_file]\n"
    )
    spec = load_specs_from_text(text)["writer"]
    spec = dataclasses.replace(spec, session_store=f"sqlite:///{context.approval_ws}/s.db")
    context.approval_model = ScriptedChatModel(replies=replies)
    agent = LLMAgent.from_spec(spec, model=context.approval_model, **options)
    context.approval_agent = agent
    return agent


def _recording(context: Context, decide: Any) -> Any:
    context.approval_asked = []

    def approver(request: ApprovalRequest) -> Decision:
        context.approval_asked.append(request)
        return decide(request)  # type: ignore[no-any-return]

    return approver


@given('a workspace with a file "{name}" holding "{text}"')
def step_workspace(context: Context, name: str, text: str) -> None:
    context.approval_ws = Path(tempfile.mkdtemp(prefix="approval-"))
    (context.approval_ws / name).write_text(text)
    context.approval_thread = None


@given('an approving agent scripted to write "{path}" then answer')
def step_approving(context: Context, path: str) -> None:
    approver = _recording(context, lambda r: Approve())
    _agent(context, [_write(path, "c1"), {"content": "Wrote it."}], approver=approver)


@given('an agent whose approver renames the file to "{other}", scripted to write "{path}"')
def step_renaming(context: Context, other: str, path: str) -> None:
    approver = _recording(context, lambda r: EditArgs({**r.args, "path": other}))
    _agent(context, [_write(path, "c1"), {"content": "Wrote it."}], approver=approver)


@given(
    'an agent whose approver rejects "{bad}" with "{reason}", '
    'scripted to try "{first}" then "{second}"'
)
def step_rejecting(context: Context, bad: str, reason: str, first: str, second: str) -> None:
    def decide(request: ApprovalRequest) -> Decision:
        return Reject(reason) if request.args["path"] == bad else Approve()

    replies = [_write(first, "c1"), _write(second, "c2"), {"content": "Wrote it."}]
    _agent(context, replies, approver=_recording(context, decide))


@given('an agent whose approver rejects "{bad}" with "{reason}", scripted to try "{path}" twice')
def step_rejecting_twice(context: Context, bad: str, reason: str, path: str) -> None:
    approver = _recording(context, lambda r: Reject(reason))
    replies = [_write(path, "c1"), _write(path, "c2"), {"content": "I could not write it."}]
    _agent(context, replies, approver=approver)


@given('an agent with no approver scripted to write "{path}" then answer, in session "{thread}"')
def step_no_approver(context: Context, path: str, thread: str) -> None:
    _agent(context, [_write(path, "c1"), {"content": "Wrote it."}])
    context.approval_thread = thread


@given(
    'an agent with no approver scripted to read "{name}" then overwrite it, in session "{thread}"'
)
def step_read_then_overwrite(context: Context, name: str, thread: str) -> None:
    read = {"tool_calls": [{"name": "read_file", "args": {"path": name}, "id": "c1"}]}
    write = {
        "tool_calls": [
            {"name": "write_file", "args": {"path": name, "content": "done"}, "id": "c2"}
        ]
    }
    _agent(context, [read, write, {"content": "Wrote it."}])
    context.approval_thread = thread


@when('the file "{name}" is changed on disk to "{text}"')
def step_changed_on_disk(context: Context, name: str, text: str) -> None:
    (context.approval_ws / name).write_text(text)


@when('a new agent resumes session "{thread}" with "{call_id}" approved')
def step_new_agent_resumes(context: Context, thread: str, call_id: str) -> None:
    # A new agent is a new tool registry: nothing read in memory, as in a new process.
    agent = _agent(context, [{"content": "Done."}])
    answer = asyncio.run(agent.aresume(thread, {call_id: "approve"}))
    context.approval_answer = answer
    context.approval_report = answer.response_metadata["leanloop"]


@then('the resumed call\'s result says "{text}"')
def step_resumed_result(context: Context, text: str) -> None:
    results = [c.get("result_preview") or "" for c in context.approval_report["tool_calls"]]
    assert any(text in r for r in results), results


@given('a parent agent with an approver whose sub-agent is scripted to write "{path}"')
def step_parent(context: Context, path: str) -> None:
    text = (
        "version: 1\nagents:\n  writer:\n    model: {provider: ollama, model: x}\n"
        f"    workspace: {context.approval_ws}\n    tools: [write_file]\n"
        "    description: writes files\n"
        "  lead:\n    model: {provider: ollama, model: x}\n    tools: ['agent:writer']\n"
    )
    specs = load_specs_from_text(text)
    sub = LLMAgent.from_spec(
        specs["writer"],
        model=ScriptedChatModel(replies=[_write(path, "s1"), {"content": "Wrote it."}]),
    )
    lead_model = ScriptedChatModel(
        replies=[
            {"tool_calls": [{"name": "writer", "args": {"task": "write"}, "id": "p1"}]},
            {"content": "The writer wrote it."},
        ]
    )
    approver = _recording(context, lambda r: Approve())
    context.approval_agent = LLMAgent.from_spec(
        specs["lead"], model=lead_model, tools=[sub], approver=approver
    )


@given("an approving agent scripted to run a command that prints {count:d} lines")
def step_command(context: Context, count: int) -> None:
    text = (
        "version: 1\nagents:\n  runner:\n    model: {provider: ollama, model: x}\n"
        f"    workspace: {context.approval_ws}\n    tools: [run_command]\n"
        "    allow_tool_output_pruning: false\n"
    )
    spec = load_specs_from_text(text)["runner"]
    script = f"for i in range({count}): print('line', i, 'x' * 40)"
    call = {"name": "run_command", "args": {"argv": ["python3", "-c", script]}, "id": "c1"}
    model = ScriptedChatModel(replies=[{"tool_calls": [call]}, {"content": "It printed lines."}])
    context.approval_model = model
    approver = _recording(context, lambda r: Approve())
    context.approval_agent = LLMAgent.from_spec(spec, model=model, approver=approver)


class _Answer(BaseModel):
    path: str


@given('an agent with no approver and an answer schema, scripted to write "{path}"')
def step_typed(context: Context, path: str) -> None:
    agent = _agent(context, [_write(path, "c1"), {"content": "Wrote it."}])
    context.approval_agent = agent.model_copy(update={"answer_schema": _Answer})


@given('an agents file whose agent is scripted to write "{path}" then answer')
def step_file(context: Context, path: str) -> None:
    replies = json.dumps([_write(path, "c1"), {"content": "Wrote it."}])
    context.approval_file = context.approval_ws / "agents.yaml"
    context.approval_file.write_text(
        "version: 1\nagents:\n  writer:\n    model:\n"
        "      class: leanloop.testing:ScriptedChatModel\n"
        f"      kwargs: {{replies: {replies}}}\n"
        "    tools: [read_file, write_file]\n"
    )


@given(
    'an agents file whose writer asks only for paths matching "{pattern}", '
    'scripted to write "{first}" then "{second}"'
)
def step_file_ask_when(context: Context, pattern: str, first: str, second: str) -> None:
    replies = json.dumps([_write(first, "c1"), _write(second, "c2"), {"content": "Wrote both."}])
    context.approval_file = context.approval_ws / "agents.yaml"
    context.approval_file.write_text(
        "version: 1\nagents:\n  writer:\n    model:\n"
        "      class: leanloop.testing:ScriptedChatModel\n"
        f"      kwargs: {{replies: {replies}}}\n"
        "    tools:\n      - read_file\n"
        f"      - {{name: write_file, approval: {{ask_when: {{path: '{pattern}'}}}}}}\n"
    )


@when('the approval agent is asked "{question}"')
def step_ask(context: Context, question: str) -> None:
    config: dict[str, Any] = {}
    if context.approval_thread is not None:
        config = {"configurable": {"thread_id": context.approval_thread}}
    context.approval_answer = asyncio.run(context.approval_agent.ainvoke(question, config))
    context.approval_report = context.approval_answer.response_metadata["leanloop"]


@when('the approval agent is asked "{question}" in the same session')
def step_ask_refused(context: Context, question: str) -> None:
    config = {"configurable": {"thread_id": context.approval_thread}}
    try:
        asyncio.run(context.approval_agent.ainvoke(question, config))
    except ApprovalPending as exc:
        context.approval_refusal = exc
    else:
        raise AssertionError("a new question was accepted while a turn waits for approval")


@then('it is refused with ApprovalPending naming call "{call_id}" and "{hint}"')
def step_refused(context: Context, call_id: str, hint: str) -> None:
    refusal = context.approval_refusal
    assert refusal.pending == [call_id], refusal.pending
    assert call_id in str(refusal) and hint in str(refusal), str(refusal)
    assert "\n" not in str(refusal), str(refusal)


@when('session "{thread}" is resumed with "{call_id}" approved')
def step_resume(context: Context, thread: str, call_id: str) -> None:
    answer = asyncio.run(context.approval_agent.aresume(thread, {call_id: "approve"}))
    context.approval_answer = answer
    context.approval_report = answer.response_metadata["leanloop"]


@when('leanloop run is called with "{flags}"')
def step_cli(context: Context, flags: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["run", str(context.approval_file), "write it", *flags.split()])
    context.approval_code, context.approval_out = code, out.getvalue()


@then('the file "{name}" holds "{text}"')
def step_holds(context: Context, name: str, text: str) -> None:
    assert (context.approval_ws / name).read_text() == text, context.approval_report["events"]


@then('no file "{name}" exists')
def step_no_file(context: Context, name: str) -> None:
    assert not (context.approval_ws / name).exists()


@then('the report\'s approvals say "{decision}" by "{by}"')
def step_approvals(context: Context, decision: str, by: str) -> None:
    [record] = context.approval_report["approvals"]
    assert (record["decision"], record["by"]) == (decision, by), record


@then('the model\'s second request carries "{text}"')
def step_second_request(context: Context, text: str) -> None:
    messages = context.approval_model.requests[1].messages
    assert any(text in str(m.content) for m in messages), messages


@then("the approver was asked {count:d} time")
def step_asked(context: Context, count: int) -> None:
    assert len(context.approval_asked) == count, context.approval_asked


@then("the report counts {count:d} repeated call")
def step_repeats(context: Context, count: int) -> None:
    assert context.approval_report["repeated_calls"] == count, context.approval_report["events"]


@then('the run stopped "{reason}" with {count:d} pending call "{call_id}"')
def step_paused(context: Context, reason: str, count: int, call_id: str) -> None:
    report = context.approval_report
    assert report["stop_reason"] == reason, report["events"]
    assert [c["id"] for c in report["pending_calls"]] == [call_id] * count


@then('the run stopped "{reason}"')
def step_stopped(context: Context, reason: str) -> None:
    assert context.approval_report["stop_reason"] == reason, context.approval_report["events"]


@then("the answer says the run is waiting for approval of {count:d} tool call")
def step_waiting(context: Context, count: int) -> None:
    assert f"waiting for approval of {count} tool call" in context.approval_answer.text


@then('the approver was asked about "{tool}" from the agent "{agent}"')
def step_asked_about(context: Context, tool: str, agent: str) -> None:
    [request] = context.approval_asked
    assert (request.tool, request.agent) == (tool, agent), request


@then("the command's record was cut from its raw size")
def step_cut(context: Context) -> None:
    [record] = context.approval_report["tool_calls"]
    assert record["cut_from"] is not None and record["chars_out"] < record["chars_raw"], record


@then("the typed answer is none")
def step_typed_none(context: Context) -> None:
    assert context.approval_answer.additional_kwargs["parsed"] is None


@then('the exit code is {code:d} and the JSON says "{reason}" with the pending call "{call_id}"')
def step_cli_paused(context: Context, code: int, reason: str, call_id: str) -> None:
    data = json.loads(context.approval_out)
    assert context.approval_code == code, (context.approval_code, data.get("events"))
    assert data["stop_reason"] == reason and data["pending_calls"][0]["id"] == call_id


@then('the exit code is {code:d} and the file "{name}" holds "{text}"')
def step_cli_done(context: Context, code: int, name: str, text: str) -> None:
    assert context.approval_code == code, context.approval_out
    assert (context.approval_ws / name).read_text() == text
