"""Steps for features/loop/approval_collisions.feature: approval meets the other rules.

The workspace, the question and the common checks are the approval steps'
(``approval_steps.py``: ``context.approval_ws``, ``approval_agent``, ``approval_report``,
``approval_asked``); these steps build the agents whose approval meets pruning, the repeat
guard, sub-agents and the command line, and read what the models were sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import io
import json
import re
from collections.abc import Sequence
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import BaseMessage, ToolMessage

from leanloop.agent import LLMAgent
from leanloop.cli.command import main
from leanloop.loop.policies.approval import ApprovalRequest, Approve, Decision, Reject
from leanloop.spec import load_specs_from_text
from leanloop.testing import ScriptedChatModel

__all__: list[str] = []

# The extraction prompt shows each output line after its own number: "  12| <line>".
_SHOWN = re.compile(r"\s*\d+\| ")
_MODEL = "{provider: ollama, model: x}"


def _recording(context: Context, decide: Any) -> Any:
    context.approval_asked = []

    def approver(request: ApprovalRequest) -> Decision:
        context.approval_asked.append(request)
        return decide(request)  # type: ignore[no-any-return]

    return approver


def _write(path: str, call_id: str) -> dict[str, Any]:
    args = {"path": path, "content": "done"}
    return {"tool_calls": [{"name": "write_file", "args": args, "id": call_id}]}


def _results(messages: Sequence[BaseMessage]) -> list[str]:
    return [m.text for m in messages if isinstance(m, ToolMessage)]


# --- run_command's output pruned after its approval ------------------------------------


@given('the approval extraction model keeps the lines mentioning "{word}"')
def step_extractor(context: Context, word: str) -> None:
    def keep(messages: list[BaseMessage]) -> str:
        shown = [line for line in str(messages[-1].content).split("\n") if _SHOWN.match(line)]
        kept = "".join(f"{line}\n" for line in shown if word in line)
        return (
            "[PRUNE_INFO_START]\nkept the lines asked for\n[PRUNE_INFO_END]\n"
            f"[PRUNE_OUTPUT_START]\n{kept}[PRUNE_OUTPUT_END]"
        )

    context.approval_extractor = ScriptedChatModel(replies=[keep], repeat_last=True)


def _pruning_runner(context: Context, focus: str, **options: Any) -> None:
    text = (
        f"version: 1\nagents:\n  runner:\n    model: {_MODEL}\n"
        f"    workspace: {context.approval_ws}\n    tools: [run_command]\n"
        "    allow_tool_output_pruning: true\n    pruning_tools: [run_command]\n"
    )
    spec = load_specs_from_text(text)["runner"]
    spec = dataclasses.replace(spec, session_store=f"sqlite:///{context.approval_ws}/s.db")
    # 5000 lines of 48 characters; every thousandth from line 7 on says ERROR.
    script = "for i in range(5000): print('line', i, 'ERROR boom' if i % 1000 == 7 else 'x' * 40)"
    args = {"argv": ["python3", "-c", script], "output_prune_context": focus}
    call = {"name": "run_command", "args": args, "id": "c1"}
    context.approval_model = ScriptedChatModel(
        replies=[{"tool_calls": [call]}, {"content": "It printed an error at line 7."}]
    )
    context.approval_agent = LLMAgent.from_spec(
        spec, model=context.approval_model, pruning_model=context.approval_extractor, **options
    )


@given('an approving agent with run_command pruned, scripted to run a noisy command for "{focus}"')
def step_pruning_approving(context: Context, focus: str) -> None:
    _pruning_runner(context, focus, approver=_recording(context, lambda r: Approve()))


@given(
    "an agent with run_command pruned and no approver, scripted to run a noisy command for "
    '"{focus}", in session "{thread}"'
)
def step_pruning_paused(context: Context, focus: str, thread: str) -> None:
    _pruning_runner(context, focus)
    context.approval_thread = thread


@then("the approver saw run_command with its argv only, not the pruning meta-arguments")
def step_approver_argv(context: Context) -> None:
    [request] = context.approval_asked
    assert request.tool == "run_command" and list(request.args) == ["argv"], request


@then('the pending call "{call_id}" is run_command with its argv only')
def step_pending_argv(context: Context, call_id: str) -> None:
    [pending] = context.approval_report["pending_calls"]
    assert (pending["id"], pending["tool"]) == (call_id, "run_command"), pending
    assert list(pending["args"]) == ["argv"], pending


@then('the model read the command\'s result pruned to "{line}" alone')
def step_model_read_pruned(context: Context, line: str) -> None:
    [result] = _results(context.approval_model.requests[-1].messages)
    kept = result.split("[PRUNE_OUTPUT_START]\n", 1)[1].split("[PRUNE_OUTPUT_END]", 1)[0]
    assert kept == f"{line}\n", result
    [record] = context.approval_report["tool_calls"]
    assert record["pruned"] and record["chars_out"] == len(result), record
    assert record["chars_out"] < record["chars_raw"] // 10, record


@then('the extraction model was asked to look for "{focus}" in the command\'s output')
def step_extraction_focus(context: Context, focus: str) -> None:
    prompts = [str(r.messages[-1].content) for r in context.approval_extractor.requests]
    assert prompts, "the extraction model was never asked"
    assert all(f"The reader is looking for: {focus}" in p for p in prompts), prompts[0][:300]
    assert all("Tool: run_command" in p for p in prompts), prompts[0][:300]


@then('the report\'s one approval is "{decision}" by "{by}" for call "{call_id}"')
def step_one_approval(context: Context, decision: str, by: str, call_id: str) -> None:
    [record] = context.approval_report["approvals"]
    got = (record["call_id"], record["decision"], record["by"])
    assert got == (call_id, decision, by), record


@then("the model read the command's result cut to its record's size, with \"{note}\"")
def step_model_read_cut(context: Context, note: str) -> None:
    [result] = _results(context.approval_model.requests[-1].messages)
    [record] = context.approval_report["tool_calls"]
    assert record["cut_from"] == record["chars_raw"] > len(result) == record["chars_out"], record
    assert note in result, result[-300:]


# --- the repeat guard meets a rejected call ---------------------------------------------


@given(
    'an agent whose approver rejects every call with "{reason}", scripted to try "{path}" '
    "{times:d} times then answer"
)
def step_rejects_insisting(context: Context, reason: str, path: str, times: int) -> None:
    text = (
        f"version: 1\nagents:\n  writer:\n    model: {_MODEL}\n"
        f"    workspace: {context.approval_ws}\n    tools: [write_file]\n"
    )
    spec = load_specs_from_text(text)["writer"]
    replies = [_write(path, f"c{n}") for n in range(1, times + 1)]
    context.approval_model = ScriptedChatModel(
        replies=[*replies, {"content": "I wrote nothing: the user said no."}]
    )
    approver = _recording(context, lambda r: Reject(reason))
    context.approval_agent = LLMAgent.from_spec(
        spec, model=context.approval_model, approver=approver
    )


@given(
    'an agent with no approver scripted to try "{path}" {times:d} times then answer, '
    'in session "{thread}"'
)
def step_no_approver_insisting(context: Context, path: str, times: int, thread: str) -> None:
    text = (
        f"version: 1\nagents:\n  writer:\n    model: {_MODEL}\n"
        f"    workspace: {context.approval_ws}\n    tools: [write_file]\n"
    )
    spec = load_specs_from_text(text)["writer"]
    spec = dataclasses.replace(spec, session_store=f"sqlite:///{context.approval_ws}/s.db")
    replies = [_write(path, f"c{n}") for n in range(1, times + 1)]
    context.approval_model = ScriptedChatModel(
        replies=[*replies, {"content": "I wrote nothing: the user said no."}]
    )
    context.approval_agent = LLMAgent.from_spec(spec, model=context.approval_model)
    context.approval_thread = thread


@when('session "{thread}" is resumed with "{call_id}" rejected with "{reason}"')
def step_resume_rejected(context: Context, thread: str, call_id: str, reason: str) -> None:
    decision = {"decision": "reject", "reason": reason}
    answer = asyncio.run(context.approval_agent.aresume(thread, {call_id: decision}))
    context.approval_answer = answer
    context.approval_report = answer.response_metadata["leanloop"]


@then('the report\'s approvals are "{first}", then "{later}" for each repeat, {count:d} in all')
def step_approvals_sequence(context: Context, first: str, later: str, count: int) -> None:
    records = context.approval_report["approvals"]
    by = [f"{r['decision']} by {r['by']}" for r in records]
    assert by == [first] + [later] * (count - 1), by


@then('every result the model read says "{text}"')
def step_every_result(context: Context, text: str) -> None:
    seen = [r for request in context.approval_model.requests for r in _results(request.messages)]
    assert seen, "the model read no tool result"
    assert all(r.startswith(text) for r in seen), seen


@then("the last request asked for the answer without offering a tool")
def step_last_request_toolless(context: Context) -> None:
    first, last = context.approval_model.requests[0], context.approval_model.requests[-1]
    assert first.tools, "the first request offered no tool either"
    assert not last.tools, [t.get("function", t).get("name") for t in last.tools]


@then('the answer is "{text}", and the report says the model kept repeating')
def step_answer_repeating(context: Context, text: str) -> None:
    report = context.approval_report
    assert context.approval_answer.text == text, context.approval_answer.text
    assert report["stop_reason"] == "repeated_calls", report["events"]
    assert report["ending"] == "the model kept repeating the same tool calls instead of answering"
    assert report.get("pending_calls") is None, report["pending_calls"]


# --- sub-agents ----------------------------------------------------------------------------


def _lead(context: Context, path: str, **options: Any) -> None:
    text = (
        f"version: 1\nagents:\n  writer:\n    model: {_MODEL}\n"
        f"    workspace: {context.approval_ws}\n    tools: [write_file]\n"
        "    description: writes files\n"
        f"  lead:\n    model: {_MODEL}\n    tools: ['agent:writer']\n"
    )
    specs = load_specs_from_text(text)
    context.approval_sub_model = ScriptedChatModel(
        replies=[_write(path, "s1"), {"content": "I wrote nothing: the user said no."}]
    )
    sub = LLMAgent.from_spec(specs["writer"], model=context.approval_sub_model)
    context.approval_model = ScriptedChatModel(
        replies=[
            {"tool_calls": [{"name": "writer", "args": {"task": "write"}, "id": "p1"}]},
            {"content": "The writer did not write it."},
        ]
    )
    context.approval_agent = LLMAgent.from_spec(
        specs["lead"], model=context.approval_model, tools=[sub], **options
    )


@given(
    'a parent agent whose approver rejects with "{reason}", '
    'its sub-agent scripted to write "{path}"'
)
def step_parent_rejects(context: Context, reason: str, path: str) -> None:
    _lead(context, path, approver=_recording(context, lambda r: Reject(reason)))


@given('a parent agent with no approver, its sub-agent scripted to write "{path}"')
def step_parent_alone(context: Context, path: str) -> None:
    _lead(context, path)


def _sub_report(context: Context) -> dict[str, Any]:
    [record] = context.approval_report["tool_calls"]
    assert record["name"] == "writer", record
    report: dict[str, Any] = record["sub_report"]
    return report


@then('the sub-agent\'s model was told "{text}"')
def step_sub_told(context: Context, text: str) -> None:
    requests = context.approval_sub_model.requests
    assert len(requests) == 2, len(requests)
    [result] = _results(requests[1].messages)
    assert result.startswith(text), result


@then('the sub-run\'s report records "{decision}" by "{by}" with the reason "{reason}"')
def step_sub_record(context: Context, decision: str, by: str, reason: str) -> None:
    [record] = _sub_report(context)["approvals"]
    got = (record["tool"], record["decision"], record["by"], record["reason"])
    assert got == ("write_file", decision, by, reason), record


@then("the parent's model read the sub-agent's answer \"{text}\"")
def step_parent_read(context: Context, text: str) -> None:
    [result] = _results(context.approval_model.requests[1].messages)
    assert result == text, result


@then('the sub-run stopped "paused" with the pending call "{call_id}" of write_file')
def step_sub_paused(context: Context, call_id: str) -> None:
    sub = _sub_report(context)
    assert sub["stop_reason"] == "paused", sub["events"]
    [pending] = sub["pending_calls"]
    assert (pending["id"], pending["tool"]) == (call_id, "write_file"), pending


_PARENT_READ_WAITING = (
    "the parent's model read that the call \"{call_id}\" needs a person's approval and nothing ran"
)


@then(_PARENT_READ_WAITING)
def step_parent_read_waiting(context: Context, call_id: str) -> None:
    [result] = _results(context.approval_model.requests[1].messages)
    assert f"agent writer did not finish: its calls write_file (call {call_id})" in result, result
    assert "nobody in this run can give it; none of them ran" in result, result


@then("the parent's call of the sub-agent is recorded as failed")
def step_parent_call_failed(context: Context) -> None:
    [record] = context.approval_report["tool_calls"]
    assert record["fate"] == "failed", record
    assert record["sub_report"]["answer"] is None, record["sub_report"]


@then("the sub-agent's model was asked once, and never after the pause")
def step_sub_once(context: Context) -> None:
    assert len(context.approval_sub_model.requests) == 1, context.approval_sub_model.requests


# --- the command line ----------------------------------------------------------------------


@given('an agents file whose lead delegates to a sub-agent scripted to write "{path}"')
def step_cli_file(context: Context, path: str) -> None:
    writer = json.dumps([_write(path, "s1"), {"content": "Wrote it."}])
    lead = json.dumps(
        [
            {"tool_calls": [{"name": "writer", "args": {"task": "write"}, "id": "p1"}]},
            {"content": "The writer wrote it."},
        ]
    )
    context.approval_file = context.approval_ws / "agents.yaml"
    context.approval_file.write_text(
        "version: 1\nagents:\n"
        "  writer:\n    description: writes files\n    model:\n"
        "      class: leanloop.testing:ScriptedChatModel\n"
        f"      kwargs: {{replies: {writer}}}\n    tools: [write_file]\n"
        "  lead:\n    model:\n      class: leanloop.testing:ScriptedChatModel\n"
        f"      kwargs: {{replies: {lead}}}\n    tools: ['agent:writer']\n"
    )


@when('leanloop run asks the lead with "{flags}"')
def step_cli_lead(context: Context, flags: str) -> None:
    out = io.StringIO()
    args = ["run", str(context.approval_file), "delegate", "--agent", "lead", *flags.split()]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        context.approval_code = main(args)
    context.approval_out = out.getvalue()


@then('it exits {code:d} and the sub-run\'s approval in the JSON is "{decision}" by "{by}"')
def step_cli_sub_approval(context: Context, code: int, decision: str, by: str) -> None:
    data = json.loads(context.approval_out)
    assert context.approval_code == code, (context.approval_code, data.get("events"))
    [call] = data["tool_calls"]
    [record] = call["sub_report"]["approvals"]
    got = (record["tool"], record["decision"], record["by"])
    assert got == ("write_file", decision, by), record
