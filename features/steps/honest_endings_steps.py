"""Steps for features/loop/honest_endings.feature: what a run that did not answer says.

The run is the one ``run_steps`` drove (``support.runs``); these read its report's
``set_aside``, ``rests_on`` and the ending's words (:func:`leanloop.endings.describe_ending`).
"""

from __future__ import annotations

import html
import json

from behave import then
from behave.runner import Context
from support import runs

from leanloop import AgentRunError, NoAnswer
from leanloop.endings import describe_ending


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
