"""Steps for features/loop/run_outcome.feature: usage, failures and the fate of each result.

The agent, its script and the run come from the shared run steps (``run_steps.py``).
"""

from __future__ import annotations

from typing import Any

from behave import then
from behave.runner import Context
from langchain_core.messages import ToolMessage
from support import runs

from leanloop.exceptions import RunFailed


def _call(context: Context, n: int) -> dict[str, Any]:
    calls = runs.current(context).report["tool_calls"]
    assert len(calls) >= n, f"the report has {len(calls)} calls"
    return dict(calls[n - 1])


@then("the answer's usage_metadata is the sum of the report's requests")
def step_usage(context: Context) -> None:
    run = runs.current(context)
    usage = run.answer.usage_metadata
    assert usage is not None, "no usage_metadata on the answer"
    requests = run.report["requests"]
    inputs = sum(r["input_tokens"] for r in requests)
    outputs = sum(r["output_tokens"] for r in requests)
    assert inputs > requests[-1]["input_tokens"], requests  # more than the last request's
    got = (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"])
    assert got == (inputs, outputs, inputs + outputs), (got, requests)


@then('the failure is a RunFailed whose report says stop_reason "{reason}" and "{text}"')
def step_run_failed(context: Context, reason: str, text: str) -> None:
    failure = runs.current(context).failure
    assert isinstance(failure, RunFailed), type(failure).__mro__
    report = failure.report
    assert report.stop_reason == reason, report.stop_reason
    assert report.error == str(failure) and text in report.error, report.error
    assert isinstance(report.elapsed_s, float) and report.elapsed_s >= 0, report.elapsed_s


@then('the failure\'s conversation ends with the tool result "{text}"')
def step_failed_messages(context: Context, text: str) -> None:
    failure = runs.current(context).failure
    assert isinstance(failure, RunFailed), failure
    last = failure.messages[-1]
    assert isinstance(last, ToolMessage) and last.text == text, last


@then(
    'report call {n:d} has fate "cut" with cut_from equal to its chars_raw '
    "and chars_out at most {cap:d}"
)
def step_fate_cut(context: Context, n: int, cap: int) -> None:
    call = _call(context, n)
    assert call["fate"] == "cut", call
    assert call["chars_raw"] > cap and call["cut_from"] == call["chars_raw"], call
    assert call["chars_out"] <= cap, call


@then("report call {n:d} was trimmed at a later step than {step:d}")
def step_trimmed_later(context: Context, n: int, step: int) -> None:
    call = _call(context, n)
    assert call["trimmed_at"] is not None and call["trimmed_at"] > step, call


@then("report call {n:d} was not trimmed, and every request fitted its ceiling")
def step_not_trimmed(context: Context, n: int) -> None:
    call = _call(context, n)
    assert call["trimmed_at"] is None and call["fate"] != "trimmed", call
    for request in runs.current(context).report["requests"]:
        assert request["estimated_tokens"] <= request["ceiling"], request


@then('the report counts as many trimmed results as calls with fate "trimmed"')
def step_trim_count(context: Context) -> None:
    report = runs.current(context).report
    fated = sum(1 for c in report["tool_calls"] if c["fate"] == "trimmed")
    assert fated >= 1, report["tool_calls"]
    assert report["trimmed_results"] == fated, (report["trimmed_results"], fated)
