"""Steps of the answer check (issue 37): the report's verdict and the request alone.

The report is the scenario's run's (``support.runs``), or, in a typed-answer scenario
against the scripted HTTP server, the typed answer's (``context.typed_message``). The
crossings with the other rules' harnesses are in ``answer_check_collision_steps.py``.
"""

from __future__ import annotations

import io
import re
from typing import Any

from behave import given, then
from behave.runner import Context
from langchain_core.messages import AIMessage, HumanMessage
from support import runs


@given('a workspace with "{name}" holding these lines:')
def step_workspace_lines(context: Context, name: str) -> None:
    assert context.table is not None, "the step needs a table with a 'text' column"
    target = runs.setup(context).workspace / name
    target.write_text("".join(f"{row['text']}\n" for row in context.table), encoding="utf-8")


def _check(context: Context) -> Any:
    """The answer check of the scenario's report (``None`` when the answer was not checked)."""
    typed = getattr(context, "typed_message", None)
    report = typed.response_metadata["leanloop"] if typed else runs.current(context).report
    return report["answer_check"]


# The longer forms come first: 'says "{verdict}"' would also match them.


@then('the report\'s answer check says "{verdict}" with the first answer "{first}"')
def step_check_replaced(context: Context, verdict: str, first: str) -> None:
    check = _check(context)
    assert check is not None, "the report has no answer check"
    assert (check["verdict"], check.get("first_answer")) == (verdict, first), check


@then('the report\'s answer check says "{verdict}" on "{found}"')
def step_check_found(context: Context, verdict: str, found: str) -> None:
    check = _check(context)
    assert check is not None and check["verdict"] == verdict, check
    assert check["check"] == found, check


@then('the report\'s answer check found "{first}" and then "{second}"')
def step_check_found_twice(context: Context, first: str, second: str) -> None:
    check = _check(context)
    assert check is not None, "the report has no answer check"
    assert (check["check"], check.get("second")) == (first, second), check


@then('the report\'s answer check says "{verdict}"')
def step_check_verdict(context: Context, verdict: str) -> None:
    check = _check(context)
    if verdict == "none":
        assert check is None, check
        return
    assert check is not None and check["verdict"] == verdict, check
    assert "first_answer" not in check, check


@then(
    'the last request is one message that quotes lines {numbers} of "{name}" and ends with '
    'the question "{question}"'
)
def step_request_alone(context: Context, numbers: str, name: str, question: str) -> None:
    messages = runs.current(context).requests[-1].messages
    assert len(messages) == 1 and isinstance(messages[0], HumanMessage), messages
    text = messages[0].text
    lines = (runs.setup(context).workspace / name).read_text(encoding="utf-8").splitlines()
    for number in (int(n) for n in numbers.replace(" and ", " ").split()):
        quoted = f"{name} line {number}: {lines[number - 1].strip()}"
        assert quoted in text, f"{quoted!r} not in {text!r}"
    assert f"Question: {question}\n" in text, text


@then('the last request alone quotes exactly the lines {numbers} of "{name}"')
def step_request_alone_exactly(context: Context, numbers: str, name: str) -> None:
    (message,) = runs.current(context).requests[-1].messages
    quoted = re.findall(rf"^{re.escape(name)} line (\d+): ", message.text, re.MULTILINE)
    wanted = [n for n in numbers.replace(" and ", " ").split()]
    assert quoted == wanted, f"quoted {quoted}, not {wanted}: {message.text!r}"


@then('the last request holds no earlier answer "{text}"')
def step_no_earlier_answer(context: Context, text: str) -> None:
    messages = runs.current(context).requests[-1].messages
    replies = [m.text for m in messages if isinstance(m, AIMessage)]
    assert text not in replies, replies
    assert any(replies), "the last request holds no earlier answer at all"


@then('the report\'s last request is of kind "{kind}"')
def step_last_kind(context: Context, kind: str) -> None:
    requests = runs.current(context).report["requests"]
    assert requests and requests[-1]["kind"] == kind, [r["kind"] for r in requests]


@then(
    'the run emitted one leanloop.answer_checked event with verdict "{verdict}", which the '
    'CLI shows as a line ending "{ending}"'
)
def step_check_event(context: Context, verdict: str, ending: str) -> None:
    from leanloop.cli.progress import ProgressPrinter  # noqa: PLC0415 - the CLI's own lines

    seen = runs.current(context).events("leanloop.answer_checked")
    assert len(seen) == 1 and seen[0]["verdict"] == verdict, seen
    lines = ProgressPrinter(io.StringIO()).lines("leanloop.answer_checked", seen[0])
    assert len(lines) == 1 and lines[0][0].endswith(ending), lines
