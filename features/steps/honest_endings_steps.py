"""Steps for features/loop/honest_endings.feature: what a run that did not answer says.

The run is the one ``run_steps`` drove (``support.runs``); these read its report's
``set_aside``, ``rests_on`` and the ending's words (:func:`leanloop.endings.describe_ending`).
The crossings reuse the sub-agent file and its run (``subagents_steps.py``: the lead's
model, ``context.sub_report``) and the session turns of ``pruning_reading_steps.py`` (the
agent's ``session_store``); here are the checks of what the ending becomes there.
"""

from __future__ import annotations

import html
import json
from typing import Any

from behave import then
from behave.runner import Context
from langchain_core.messages import AIMessage, ToolMessage
from support import runs
from support.aio import run as run_async

from leanloop import AgentRunError, NoAnswer
from leanloop.endings import describe_ending
from leanloop.sessions import Session, open_store


@then('the report sets aside the reply "{text}"')
def step_set_aside(context: Context, text: str) -> None:
    report = runs.current(context).report
    assert report["set_aside"] == text, report["set_aside"]


@then("the report sets nothing aside")
def step_nothing_set_aside(context: Context) -> None:
    report = runs.current(context).report
    assert report["set_aside"] is None, report["set_aside"]


@then('the report says the run rests on "{calls}"')
def step_rests_on(context: Context, calls: str) -> None:
    report = runs.current(context).report
    assert report["rests_on"] == [c.strip() for c in calls.split(";")], report["rests_on"]


@then("the report says the run rests on nothing")
def step_rests_on_nothing(context: Context) -> None:
    report = runs.current(context).report
    assert report["rests_on"] == [], report["rests_on"]


@then('the run\'s ending reads "{text}"')
def step_ending(context: Context, text: str) -> None:
    said = describe_ending(runs.current(context).report)
    assert text in said, said


@then('the answer does not mention "{text}"')
def step_answer_not(context: Context, text: str) -> None:
    answer = runs.current(context).answer
    assert text not in answer.text, answer.text


@then('the CLI stdout mentions "{text}"')
def step_stdout_mentions(context: Context, text: str) -> None:
    assert text in context.cli.stdout, context.cli.stdout


@then('the CLI stdout does not mention "{text}"')
def step_stdout_not(context: Context, text: str) -> None:
    assert text not in context.cli.stdout, context.cli.stdout


@then('the CLI stderr does not mention "{text}"')
def step_stderr_not(context: Context, text: str) -> None:
    assert text not in context.cli.stderr, context.cli.stderr


@then('the page "{name}" says "{text}"')
def step_page_says(context: Context, name: str, text: str) -> None:
    page = html.unescape((context.tmp / name).read_text(encoding="utf-8"))
    assert text in page, page[:2000]


@then('the page "{name}" does not say "{text}"')
def step_page_not(context: Context, name: str, text: str) -> None:
    page = html.unescape((context.tmp / name).read_text(encoding="utf-8"))
    assert text not in page


@then('the CLI JSON output has stop_reason "{reason}", set_aside "{aside}" and rests_on "{calls}"')
def step_json_ending(context: Context, reason: str, aside: str, calls: str) -> None:
    data = json.loads(context.cli.stdout)
    got = (data["stop_reason"], data["set_aside"], data["rests_on"])
    assert got == (reason, aside, [calls]), got


@then('the failure is a NoAnswer with stop_reason "{reason}"')
def step_no_answer(context: Context, reason: str) -> None:
    failure = runs.current(context).failure
    assert isinstance(failure, NoAnswer), repr(failure)
    assert isinstance(failure, AgentRunError), "NoAnswer is a run's failure"
    assert failure.stop_reason == reason == failure.report["stop_reason"], failure.report


@then('the failure\'s message mentions "{text}"')
def step_failure_message(context: Context, text: str) -> None:
    failure = runs.current(context).failure
    assert isinstance(failure, NoAnswer), repr(failure)
    assert text in failure.message.text, failure.message.text
    assert text in str(failure), str(failure)


@then('the failure\'s report rests on "{calls}"')
def step_failure_rests_on(context: Context, calls: str) -> None:
    failure = runs.current(context).failure
    assert isinstance(failure, NoAnswer), repr(failure)
    assert failure.report["rests_on"] == [calls], failure.report["rests_on"]


# --- crossings: a sub-agent's ending, a session turn's ending --------------------------


def _lead_result(context: Context, n: int) -> str:
    """The text of the lead's ``n``-th tool result, as the lead's model received it."""
    requests = context.sub_agent.model.requests
    results = [m for m in requests[-1].messages if isinstance(m, ToolMessage)]
    assert len(results) >= n, results
    return results[n - 1].text


def _sub_report(context: Context, n: int) -> dict[str, Any]:
    call = context.sub_report["tool_calls"][n - 1]
    sub = call["sub_report"]
    assert isinstance(sub, dict), f"call {n} nests no sub-run: {call}"
    return sub


@then('the sub-run of call {n:d} sets aside the reply "{text}"')
def step_sub_set_aside(context: Context, n: int, text: str) -> None:
    sub = _sub_report(context, n)
    assert sub["set_aside"] == text, sub["set_aside"]


@then('the lead\'s tool result of call {n:d} starts with "{text}"')
def step_lead_result_starts(context: Context, n: int, text: str) -> None:
    result = _lead_result(context, n)
    assert result.startswith(text), result


@then('the lead\'s tool result of call {n:d} mentions "{text}"')
def step_lead_result_mentions(context: Context, n: int, text: str) -> None:
    result = _lead_result(context, n)
    assert text in result, result


@then("the lead's tool result of call {n:d} is the sub-run's answer in its sub-report")
def step_lead_result_is_answer(context: Context, n: int) -> None:
    # What the caller's model read and what the caller's report says the sub-agent
    # answered are one text: the ending's words, not the reply set aside.
    answer = _sub_report(context, n)["answer"]
    assert answer == _lead_result(context, n), (answer, _lead_result(context, n))


async def _session(url: str, thread: str) -> Session:
    store = open_store(url)
    try:
        return await store.load(thread)
    finally:
        await store.close()


@then(
    'thread "{thread}" keeps as the answer of turn {n:d} the run\'s answer, which starts "{text}"'
)
def step_stored_ending(context: Context, thread: str, n: int, text: str) -> None:
    run = runs.current(context)
    url = run.agent.spec.session_store
    assert url is not None, "the agent keeps no sessions"
    session = run_async(_session(url, thread))
    turn = session.turns[n - 1]
    assert turn.status == "done" and turn.answer is not None, (turn.status, turn.answer)
    assert run.answer is not None
    assert turn.answer.text == run.answer.text, (turn.answer.text, run.answer.text)
    assert turn.answer.text.startswith(text), turn.answer.text


@then('the last request holds an earlier answer starting "{text}"')
def step_last_holds_ending(context: Context, text: str) -> None:
    messages = runs.current(context).requests[-1].messages
    replies = [m.text for m in messages if isinstance(m, AIMessage)]
    assert any(reply.startswith(text) for reply in replies), replies


@then('no request of the run holds "{text}"')
def step_no_request_holds(context: Context, text: str) -> None:
    requests = runs.current(context).requests
    assert requests, "the model received no request"
    for number, request in enumerate(requests, 1):
        held = [m.text for m in request.messages if text in m.text]
        assert not held, f"request {number} holds {held}"
