"""Steps for features/loop/guard_collisions.feature: where the repeat guard meets other rules.

The agent, its script and the run come from the shared run steps (``run_steps.py``);
these steps add numbered workspace files and read the report's call records.
"""

from __future__ import annotations

from typing import Any

from behave import given, then
from behave.runner import Context
from langchain_core.messages import ToolMessage
from support import runs


@given('a workspace with "{name}" holding {count:d} numbered lines')
@given('the workspace has "{name}" holding {count:d} numbered lines')
def step_numbered_file(context: Context, name: str, count: int) -> None:
    target = runs.setup(context).workspace / name
    lines = [f"{name} line {n}: the value here is {n * 7}" for n in range(1, count + 1)]
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _call(context: Context, n: int) -> dict[str, Any]:
    calls = runs.current(context).report["tool_calls"]
    assert len(calls) >= n, f"the report has {len(calls)} calls: {calls}"
    return dict(calls[n - 1])


@then("the report counts {count:d} repeated calls")
def step_repeats(context: Context, count: int) -> None:
    report = runs.current(context).report
    assert report["repeated_calls"] == count, report["tool_calls"]


@then('report call {n:d} has fate "{fate}"')
def step_fate(context: Context, n: int, fate: str) -> None:
    call = _call(context, n)
    assert call["fate"] == fate, call


@then('report call {n:d} has fate "{fate}" and was not pruned')
def step_fate_unpruned(context: Context, n: int, fate: str) -> None:
    call = _call(context, n)
    assert call["fate"] == fate and not call["pruned"], call


@then('report call {n:d} notes "{text}"')
def step_notes(context: Context, n: int, text: str) -> None:
    call = _call(context, n)
    assert any(text in note for note in call["notes"]), call


@then('report call {n:d} was not pruned and notes "{text}"')
def step_unpruned_notes(context: Context, n: int, text: str) -> None:
    call = _call(context, n)
    assert not call["pruned"], call
    assert any(text in note for note in call["notes"]), call


@then('request {n:d} has no tool result containing "{text}"')
def step_no_result_with(context: Context, n: int, text: str) -> None:
    results = [m for m in runs.current(context).request(n).messages if isinstance(m, ToolMessage)]
    assert results, f"request {n} carries no tool results"
    assert not any(text in m.text for m in results), [m.text[:200] for m in results]


@then('request {n:d} ends with a tool result holding line {line:d} of "{name}"')
def step_ends_with_line(context: Context, n: int, line: int, name: str) -> None:
    last = runs.current(context).request(n).messages[-1]
    assert isinstance(last, ToolMessage), f"request {n} ends with {type(last).__name__}"
    assert f"{name} line {line}:" in last.text, last.text[-300:]
