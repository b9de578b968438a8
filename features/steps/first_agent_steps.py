"""Steps for features/loop/first_agent.feature: the answer from what was read after repeats.

The agent, its script and the run are the shared ones (``features/steps/run_steps.py``,
:mod:`support.runs`); the session turns are those of ``pruning_reading_steps.py`` (a store
in the scenario's folder), the sub-agent file and its run those of ``subagents_steps.py``.
Here are the checks of the requests and the report that the rule adds.
"""

from __future__ import annotations

from behave import given, then
from behave.runner import Context
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from support import runs

from leanloop.loop.profiles import SMALL

_ANSWER_REQUEST = SMALL.answer_after_repeats.split("{question}", 1)[0]
"""How the small profile's answer request after repeats begins."""
_TOOL_LIST = "To call a tool, write exactly one fenced block per call"
"""A line of the text protocol's tool list (``leanloop.protocol.text``)."""


# --- Given ---------------------------------------------------------------------------


@given('the workspace holds only "{name}"')
def step_only_file(context: Context, name: str) -> None:
    workspace = runs.setup(context).workspace
    for path in [p for p in workspace.rglob("*") if p.is_file()]:
        if path.relative_to(workspace).as_posix() != name:
            path.unlink()
    assert (workspace / name).is_file(), f"the workspace has no {name}"


# --- Then ----------------------------------------------------------------------------


@then('the report has no event mentioning "{text}"')
def step_no_event(context: Context, text: str) -> None:
    events = runs.current(context).report["events"]
    assert not any(text in line for line in events), events


@then("request {n:d} has a system message without the tool list")
def step_system_without_list(context: Context, n: int) -> None:
    messages = runs.current(context).request(n).messages
    assert messages and isinstance(messages[0], SystemMessage), messages[:1]
    assert _TOOL_LIST not in messages[0].text, messages[0].text


@then('the last request ends with the profile\'s final-answer prompt for "{question}"')
def step_last_final_prompt(context: Context, question: str) -> None:
    last = runs.current(context).requests[-1].messages[-1]
    assert isinstance(last, HumanMessage), type(last).__name__
    assert last.text == SMALL.with_question(SMALL.final_answer, question), last.text


@then("report call {n:d} was not pruned and the model read it")
def step_read_unpruned(context: Context, n: int) -> None:
    calls = runs.current(context).report["tool_calls"]
    call = calls[n - 1]
    assert not call["pruned"] and call["fate"] in {"kept", "cut"}, call


@then('the last request holds the earlier answer "{text}"')
def step_last_holds_answer(context: Context, text: str) -> None:
    messages = runs.current(context).requests[-1].messages
    replies = [m.text for m in messages if isinstance(m, AIMessage)]
    assert text in replies, replies


@then("the last request holds no answer request of the earlier turn")
def step_no_answer_request(context: Context) -> None:
    messages = runs.current(context).requests[-1].messages
    asked = [m.text for m in messages if isinstance(m, HumanMessage)]
    assert not any(t.startswith(_ANSWER_REQUEST) for t in asked), asked


@then('the report\'s tool calls hold no read of "{path}"')
def step_no_read_of(context: Context, path: str) -> None:
    calls = runs.current(context).report["tool_calls"]
    reads = [c for c in calls if c["args"].get("path") == path and not c["repeated"]]
    assert reads == [], reads


@then('the lead\'s tool result of call {n:d} is "{text}"')
def step_lead_result(context: Context, n: int, text: str) -> None:
    requests = context.sub_agent.model.requests
    results = [m for r in requests for m in r.messages if isinstance(m, ToolMessage)]
    assert len(results) >= n, results
    assert results[n - 1].text == text, results[n - 1].text
