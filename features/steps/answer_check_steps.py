"""Steps of the answer check (issue 37): the report's verdict and the request alone."""

from __future__ import annotations

import io

from behave import given, then
from behave.runner import Context
from langchain_core.messages import HumanMessage
from support import runs


@given('a workspace with "{name}" holding these lines:')
def step_workspace_lines(context: Context, name: str) -> None:
    assert context.table is not None, "the step needs a table with a 'text' column"
    target = runs.setup(context).workspace / name
    target.write_text("".join(f"{row['text']}\n" for row in context.table), encoding="utf-8")


@then('the report\'s answer check says "{verdict}" with the first answer "{first}"')
def step_check_replaced(context: Context, verdict: str, first: str) -> None:
    check = runs.current(context).report["answer_check"]
    assert check is not None, "the report has no answer check"
    assert (check["verdict"], check.get("first_answer")) == (verdict, first), check


@then('the report\'s answer check says "{verdict}"')
def step_check_verdict(context: Context, verdict: str) -> None:
    check = runs.current(context).report["answer_check"]
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
