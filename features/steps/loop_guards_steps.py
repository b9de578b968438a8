"""Steps for features/loop/loop_guards.feature: the checks of repeated calls, prefetch, repair.

The agent, its script and the run are the shared ones (``features/steps/run_steps.py``).
"""

from __future__ import annotations

from behave import then
from behave.runner import Context
from langchain_core.messages import ToolMessage
from support import runs

from leanloop.loop.prefetch import mentioned_paths


@then(
    "the report counts {repeats:d} repeated calls and {calls:d} tool calls, "
    "the second marked {kind}"
)
def step_repeats(context: Context, repeats: int, calls: int, kind: str) -> None:
    report = runs.current(context).report
    assert report["repeated_calls"] == repeats, report["repeated_calls"]
    assert len(report["tool_calls"]) == calls, report["tool_calls"]
    assert report["tool_calls"][1]["repeated"] is (kind == "repeated"), report["tool_calls"][1]


@then('request {n:d} already carries read_file results for "{paths}"')
def step_prefetched(context: Context, n: int, paths: str) -> None:
    messages = runs.current(context).request(n).messages
    calls = [c for m in messages for c in getattr(m, "tool_calls", [])]
    expected = [p.strip() for p in paths.split(",")]
    assert [(c["name"], c["args"]["path"]) for c in calls] == [("read_file", p) for p in expected]
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert [r.tool_call_id for r in results] == [c["id"] for c in calls]
    assert "The launch code is 4711." in results[0].text, results[0].text
    assert "port: 8125" in results[1].text, results[1].text


@then('the report lists the prefetched files "{paths}"')
def step_report_prefetched(context: Context, paths: str) -> None:
    prefetched = runs.current(context).report["prefetched"]
    assert prefetched == [p.strip() for p in paths.split(",")], prefetched


@then("the report lists no prefetched files")
def step_report_none(context: Context) -> None:
    prefetched = runs.current(context).report["prefetched"]
    assert prefetched == [], prefetched


@then('the report uses the prompt profile "{name}"')
def step_profile(context: Context, name: str) -> None:
    profile = runs.current(context).report["prompt_profile"]
    assert profile == name, profile


@then("the report counts {n:d} repaired calls, call {i:d} repaired from {origin}")
def step_repaired(context: Context, n: int, i: int, origin: str) -> None:
    report = runs.current(context).report
    assert report["repaired_calls"] == n, report["repaired_calls"]
    call = report["tool_calls"][i - 1]
    assert call["repaired"] is (n > 0), call
    expected = None if origin == "nothing" else origin.strip('"')
    assert call["repaired_from"] == expected, call


@then('the request "{text}" names the workspace files "{paths}"')
def step_named_files(context: Context, text: str, paths: str) -> None:
    expected = [] if paths == "none" else [p.strip() for p in paths.split(",")]
    found = mentioned_paths(text, runs.setup(context).workspace)
    assert found == expected, found
