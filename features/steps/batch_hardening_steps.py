"""Steps for features/cli/batch_hardening.feature: a batch's tasks and results files.

The CLI runs in this process (``the CLI runs``, from cli_steps.py); "another batch" is a
:class:`~leanloop.batch.ResultsFile` this process holds open, as a batch running
elsewhere holds it: its lock is on the file, not on a process.
"""

from __future__ import annotations

import json
import textwrap

from behave import given, then, when
from behave.runner import Context

from leanloop.batch import ResultsFile

_BOM = b"\xef\xbb\xbf"


@given('a batch tasks file "{name}" with:')
def step_tasks_file(context: Context, name: str) -> None:
    # As written: a JSON escape such as \ud800 stays an escape for the JSON parser.
    (context.tmp / name).write_text(textwrap.dedent(context.text) + "\n", encoding="utf-8")


@given('the file "{name}" starts with a UTF-8 byte order mark')
def step_bom(context: Context, name: str) -> None:
    path = context.tmp / name
    path.write_bytes(_BOM + path.read_bytes())


@given('a batch tasks file "{name}" whose line {line:d} nests {depth:d} arrays')
def step_deep_line(context: Context, name: str, line: int, depth: int) -> None:
    lines = [json.dumps({"id": f"q{n}", "question": "Capital?"}) for n in range(1, line)]
    lines.append("[" * depth + "]" * depth)
    (context.tmp / name).write_text("".join(text + "\n" for text in lines), encoding="utf-8")


@given('another batch is writing the results file "{name}"')
def step_other_batch(context: Context, name: str) -> None:
    other = ResultsFile.open(context.tmp / name)
    context.cleanups.append(other.close)
    other.write({"id": "q1", "answer": "from the other batch", "stop_reason": "answer"})
    context.other_batch = other
    context.other_batch_bytes = (context.tmp / name).read_bytes()


@when("the other batch ends")
def step_other_batch_ends(context: Context) -> None:
    context.other_batch.close()


@then('the results file "{name}" is as the other batch left it')
def step_untouched(context: Context, name: str) -> None:
    assert (context.tmp / name).read_bytes() == context.other_batch_bytes


@then('the results file "{name}" holds the ids "{ids}"')
def step_ids(context: Context, name: str, ids: str) -> None:
    text = (context.tmp / name).read_text(encoding="utf-8")
    found = [json.loads(line)["id"] for line in text.splitlines()]
    assert found == [i.strip() for i in ids.split(",")], text


@then('there is no results file "{name}"')
def step_no_results(context: Context, name: str) -> None:
    assert not (context.tmp / name).exists()
