"""Steps for features/cache_usage.feature: evaluated vs cached prompt tokens in the report."""

from __future__ import annotations

import json
import re
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import AIMessage

from leanloop.agent import LLMAgent
from leanloop.cache_usage import RequestTally
from leanloop.report import RunReport, cached_share, format_report, summary_line
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

_CALL = re.compile(r"^call (?P<name>\w+) (?P<args>\{.*\})$")


def _number(cell: str) -> int | None:
    return None if cell.strip() == "-" else int(cell)


def _reply(row: Any, index: int) -> dict[str, Any]:
    usage: dict[str, Any] = {
        "input_tokens": int(row["input tokens"]),
        "output_tokens": int(row["output tokens"]),
    }
    cached = _number(row["cached"])
    if cached is not None:
        usage["cache_read"] = cached
    call = _CALL.match(row["reply"])
    if call is None:
        return {"content": row["reply"], "usage": usage}
    tool_call = {"name": call["name"], "args": json.loads(call["args"]), "id": f"cache_{index}"}
    return {"content": "", "tool_calls": [tool_call], "usage": usage}


@given('a cache workspace file "{name}" saying "{text}"')
def step_cache_file(context: Context, name: str, text: str) -> None:
    context.cache_root = context.tmp / "cache-ws"
    context.cache_root.mkdir(exist_ok=True)
    (context.cache_root / name).write_text(text + "\n", encoding="utf-8")


@given("a scripted model that reports cached prompt tokens:")
def step_cache_model(context: Context) -> None:
    assert context.table is not None
    replies = [_reply(row, i) for i, row in enumerate(context.table)]
    context.cache_model = ScriptedChatModel(replies=replies)


@when('the cache agent is asked "{question}"')
def step_cache_ask(context: Context, question: str) -> None:
    spec = AgentSpec(
        name="cached",
        model=ModelSpec(
            class_path="leanloop.testing:ScriptedChatModel",
            model=f"cached-{id(context)}",  # a fresh token estimator per scenario
            context_window=200_000,
        ),
        tools=("read_file",),
        workspace=context.cache_root,
        max_repeated_calls=5,  # the script reads the file twice on purpose
    )
    agent = LLMAgent.from_spec(spec, model=context.cache_model)
    answer = agent.invoke(question)
    assert isinstance(answer, AIMessage)
    context.cache_report = dict(answer.response_metadata["leanloop"])
    # What `leanloop report` reads: the report as JSON, written and read back.
    context.cache_report = json.loads(json.dumps(context.cache_report))


def _report(context: Context) -> dict[str, Any]:
    report = getattr(context, "cache_report", None)
    assert isinstance(report, dict), "no report yet"
    return report


@then("the report's requests say these prompt tokens:")
def step_cache_requests(context: Context) -> None:
    assert context.table is not None
    expected = [(_number(r["evaluated"]), _number(r["cached"])) for r in context.table]
    requests = _report(context)["requests"]
    seen = [(r["prompt_evaluated"], r["prompt_cached"]) for r in requests]
    assert seen == expected, seen


@then("the report's totals are {evaluated:d} prompt tokens evaluated and {cached:d} cached")
def step_cache_totals(context: Context, evaluated: int, cached: int) -> None:
    report = _report(context)
    assert (report["prompt_evaluated"], report["prompt_cached"]) == (evaluated, cached), report


@then("the report has no prompt cache totals")
def step_cache_no_totals(context: Context) -> None:
    report = _report(context)
    assert report["prompt_evaluated"] is None, report["prompt_evaluated"]
    assert report["prompt_cached"] is None, report["prompt_cached"]


@then("{percent:d}% of the prompt tokens after the first request came from the cache")
def step_cache_share(context: Context, percent: int) -> None:
    share = cached_share(_report(context)["requests"][1:])
    assert share is not None
    assert round(share * 100) == percent, share


@then('the cache summary line has "{text}"')
def step_cache_summary(context: Context, text: str) -> None:
    line = summary_line(_report(context))
    assert text in line, line


@then('the cache summary line has no "{text}"')
def step_cache_summary_not(context: Context, text: str) -> None:
    line = summary_line(_report(context))
    assert text not in line, line


@then('the cache text report has the line "{line}"')
def step_cache_text_line(context: Context, line: str) -> None:
    text = format_report(_report(context))
    assert line in text.splitlines(), text


@then('the cache text report\'s table has a "{column}" column')
def step_cache_column(context: Context, column: str) -> None:
    text = format_report(_report(context))
    header = next(row for row in text.splitlines() if row.strip().startswith("request "))
    assert column in header, text
    total = next(row for row in text.splitlines() if row.strip().startswith("total "))
    assert len(total.split()) == 4, total  # total, input, cached, output


@then('the cache text report\'s table has no "{column}" column')
def step_cache_no_column(context: Context, column: str) -> None:
    text = format_report(_report(context))
    header = next(row for row in text.splitlines() if row.strip().startswith("request "))
    assert column not in header, text


# --- the pruning pass's totals -------------------------------------------------------


@given("a pruning tally of these answered requests:")
def step_tally(context: Context) -> None:
    assert context.table is not None
    tally = RequestTally()
    for row in context.table:
        usage: dict[str, Any] = {
            "input_tokens": int(row["input tokens"]),
            "output_tokens": int(row["output tokens"]),
            "total_tokens": int(row["input tokens"]) + int(row["output tokens"]),
        }
        cached = _number(row["cached"])
        if cached is not None:
            usage["input_token_details"] = {"cache_read": cached}
        tally.add(
            AIMessage(content="[PRUNE_OUTPUT_START]", usage_metadata=usage), float(row["seconds"])
        )
    context.cache_tally = tally


@when("the tally is noted on a run report")
def step_tally_noted(context: Context) -> None:
    report = RunReport()
    report.note_extraction(context.cache_tally)
    # The report holds a copy: requests the pruner answers later do not change it.
    context.cache_tally.add(AIMessage(content="later"), 9.0)
    context.cache_report = json.loads(json.dumps(report.to_dict()))


@then("the report dict's extraction is:")
def step_tally_dict(context: Context) -> None:
    assert context.table is not None
    row = context.table[0]
    expected = {key: float(row[key]) if key == "seconds" else int(row[key]) for key in row.headings}
    assert _report(context)["extraction"] == expected, _report(context)["extraction"]


@then("the report's requests are still only the main model's")
def step_tally_apart(context: Context) -> None:
    report = _report(context)
    assert report["requests"] == [], report["requests"]
    assert report["prompt_evaluated"] is None, report
