"""Steps for features/loop/loop_budget.feature: the token budget, end to end through the loop.

The agent, its script and the run are the shared ones (``features/steps/run_steps.py``);
the scenarios offer the test tools ``lookup`` (a short answer), ``bulky`` (about 2,500
characters, first line ``bulky <key> begins``) and ``huge`` (about 57,000 characters).
Every agent gets its own model name, so the process-wide estimator it learns with starts
fresh at 3.3.
"""

from __future__ import annotations

import itertools
from typing import Any

from behave import given, then
from behave.runner import Context
from langchain_core.messages import BaseMessage, ToolMessage
from support import runs

from leanloop import events
from leanloop.budget import ContextPlan
from leanloop.budget.fit import TRIM_NOTE, is_trimmed
from leanloop.loop.prompts import SYNTHESIS_PROMPT

_FIRST_RATIO = 3.3
_WARNING = "of the budget: estimate="


@given('a workspace file "{name}" of {size:d} characters')
def step_workspace_file(context: Context, name: str, size: int) -> None:
    lines = [f"{name} line {i:03d}: " + "w" * 40 for i in range(size // 58 + 1)]
    target = runs.setup(context).workspace / name
    target.write_text("\n".join(lines)[:size], encoding="utf-8")


# --- helpers for the checks ---------------------------------------------------------------


def _results(messages: list[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def _chars(messages: list[BaseMessage]) -> int:
    return sum(len(m.text) for m in messages)


def _report_requests(context: Context) -> list[dict[str, Any]]:
    return list(runs.current(context).report["requests"])


def _window(context: Context) -> int:
    window = runs.current(context).window
    assert window is not None, "the agent has no configured window"
    return window


# --- events ---------------------------------------------------------------------------------


@then("a leanloop.budget event with the budget figures preceded every request")
def step_budget_before_each(context: Context) -> None:
    run = runs.current(context)
    items = run.timeline
    starts = [
        i
        for i, (name, data) in enumerate(items)
        if (name, data.get("model")) == ("request", "main")
    ]
    assert len(starts) == len(run.requests), items
    previous = -1
    for start in starts:
        between = [data for name, data in items[previous + 1 : start] if name == events.BUDGET]
        assert between, f"no {events.BUDGET} event before request at {start}: {items}"
        keys = {"estimate", "ceiling", "window", "window_source", "chars_per_token"}
        assert keys <= set(between[-1]), between[-1]
        previous = start


@then("the leanloop.budget events agree with the report's requests")
def step_budget_agree(context: Context) -> None:
    run = runs.current(context)
    budgets = run.events(events.BUDGET)
    requests = _report_requests(context)
    assert len(budgets) == len(requests), (budgets, requests)
    report = run.report
    for event, request in zip(budgets, requests, strict=True):
        assert event["estimate"] == request["estimated_tokens"], (event, request)
        assert event["ceiling"] == request["ceiling"], (event, request)
        assert event["window"] == request["window"] == report["window"], (event, request)
        assert event["window_source"] == report["window_source"], event
        assert 2 <= event["chars_per_token"] <= 6, event


@then('the astream_events stream carried the events "{names}"')
def step_stream_events(context: Context, names: str) -> None:
    run = runs.current(context)
    custom = [e for e in run.stream_events if e["event"] == "on_custom_event"]
    seen = {e["name"] for e in custom}
    wanted = {n.strip() for n in names.split(",")}
    assert wanted <= seen, f"missing {wanted - seen} in {seen}"
    budgets = [e["data"] for e in custom if e["name"] == events.BUDGET]
    assert len(budgets) == len(run.requests), budgets
    assert all(b["window"] == run.window for b in budgets), budgets


@then("the run emitted a leanloop.trimmed event with its figures")
def step_trimmed_event(context: Context) -> None:
    run = runs.current(context)
    trims = run.events(events.TRIMMED)
    assert trims, run.timeline
    for trim in trims:
        assert trim["count"] >= 1, trim
        assert trim["tokens_after"] < trim["tokens_before"], trim
        assert trim["pass"] in (1, 2, 3), trim
        assert 0 <= trim["new"] <= trim["count"], trim
    # Each result counts once, however many request views trimmed it.
    total = sum(t["new"] for t in trims)
    assert run.report["trimmed_results"] == total, (run.report, trims)
    assert total <= sum(t["count"] for t in trims), trims


@then('the run emitted a leanloop.synthesis event with reason "{reason}"')
def step_synthesis_event(context: Context, reason: str) -> None:
    synthesis = runs.current(context).events(events.SYNTHESIS)
    assert [s["reason"] for s in synthesis] == [reason], synthesis


@then("the run emitted no leanloop.synthesis event")
def step_no_synthesis_event(context: Context) -> None:
    run = runs.current(context)
    assert not run.events(events.SYNTHESIS), run.timeline
    assert run.report["stop_reason"] != "budget_exhausted", run.report


@then("the run emitted no leanloop.synthesis and no leanloop.trimmed event")
def step_no_synthesis(context: Context) -> None:
    run = runs.current(context)
    names = {name for name, _ in run.timeline}
    assert events.SYNTHESIS not in names and events.TRIMMED not in names, names
    assert run.report["trimmed_results"] == 0, run.report


@then("the run emitted {count:d} leanloop.overflow_recovered event")
def step_overflow_event(context: Context, count: int) -> None:
    recovered = runs.current(context).events(events.OVERFLOW_RECOVERED)
    assert len(recovered) == count, recovered
    for item in recovered:
        assert {"prompt_tokens", "window", "estimate"} <= set(item), item


# --- the report -----------------------------------------------------------------------------


@then('the report shows a window of {window:d} tokens from "{source}"')
def step_report_window(context: Context, window: int, source: str) -> None:
    report = runs.current(context).report
    assert (report["window"], report["window_source"]) == (window, source), report


@then("every report request carries its estimate, reported tokens, ceiling and window")
def step_report_requests(context: Context) -> None:
    run = runs.current(context)
    requests = _report_requests(context)
    assert len(requests) == len(run.requests), requests
    plan = ContextPlan.for_window(run.report["window"])
    for request in requests:
        assert isinstance(request["estimated_tokens"], int), request
        assert request["estimated_tokens"] > 0, request
        assert "reported_input_tokens" in request, request
        assert request["ceiling"] == plan.ceiling, (request, plan)
        assert request["window"] == plan.window, (request, plan)


@then("no request's estimate exceeds its ceiling")
def step_under_ceiling(context: Context) -> None:
    for request in _report_requests(context):
        assert request["estimated_tokens"] <= request["ceiling"], request


@then("the report counts at least {count:d} trimmed results")
def step_report_trimmed(context: Context, count: int) -> None:
    report = runs.current(context).report
    assert report["trimmed_results"] >= count, report["trimmed_results"]
    assert report["tokens_saved_by_trimming"] > 0, report["tokens_saved_by_trimming"]


@then("the report counts {count:d} overflow recoveries")
def step_report_recoveries(context: Context, count: int) -> None:
    report = runs.current(context).report
    got = report["overflow_recoveries"]
    assert got == count, f"overflow_recoveries {got}: {report['events']}"


@then("the report's chars_per_token moved from 3.3 and stays within 2 and 6")
def step_learned(context: Context) -> None:
    run = runs.current(context)
    ratio = run.report["chars_per_token"]
    assert ratio != _FIRST_RATIO and 2 <= ratio <= 6, ratio
    budgets = run.events(events.BUDGET)
    assert budgets[0]["chars_per_token"] == _FIRST_RATIO, budgets[0]
    assert budgets[-1]["chars_per_token"] != _FIRST_RATIO, budgets[-1]


@then("every report request carries the tokens the model reported")
def step_reported(context: Context) -> None:
    for request in _report_requests(context):
        reported = request["reported_input_tokens"]
        assert isinstance(reported, int) and reported > 0, request
        assert reported == request["input_tokens"], request


@then("the report counts each trimmed result once, however many requests trimmed it")
def step_trimmed_once(context: Context) -> None:
    run = runs.current(context)
    per_request = [
        {m.tool_call_id for m in request.messages if isinstance(m, ToolMessage) and is_trimmed(m)}
        for request in run.requests
    ]
    distinct = set().union(*per_request)
    assert sum(map(len, per_request)) > len(distinct), "no result was trimmed twice"
    assert run.report["trimmed_results"] == len(distinct), (
        run.report["trimmed_results"],
        per_request,
    )


@then('the report\'s request kinds are "{kinds}"')
def step_request_kinds(context: Context, kinds: str) -> None:
    seen = [request["kind"] for request in runs.current(context).report["requests"]]
    assert seen == [k.strip() for k in kinds.split(",")], seen


# --- what the requests carried -------------------------------------------------------------


@then("request {n:d} carries trimmed older results and the newest result intact")
def step_trimmed_view(context: Context, n: int) -> None:
    results = _results(runs.current(context).request(n).messages)
    assert len(results) >= 2, results
    *older, newest = results
    assert all(TRIM_NOTE in r.text for r in older), [r.text[:80] for r in older]
    assert all(r.text.splitlines()[0].startswith("bulky ") for r in older), older
    assert TRIM_NOTE not in newest.text and len(newest.text) > 2_000, newest.text[:200]


@then("every result trimmed in request {earlier:d} is still trimmed in request {later:d}")
def step_stays_trimmed(context: Context, earlier: int, later: int) -> None:
    run = runs.current(context)
    first, second = run.request(earlier).messages, run.request(later).messages
    trimmed = [i for i, m in enumerate(first) if isinstance(m, ToolMessage) and is_trimmed(m)]
    assert trimmed, f"request {earlier} trimmed nothing"
    for index in trimmed:
        assert is_trimmed(second[index]), (index, second[index])
        assert second[index].content == first[index].content, index


@then("the synthesis instruction appears once in request {n:d}")
def step_synthesis_once(context: Context, n: int) -> None:
    messages = runs.current(context).request(n).messages
    found = [m for m in messages if m.text == SYNTHESIS_PROMPT]
    assert len(found) == 1, f"{len(found)} synthesis instructions in request {n}"


@then("no request carries the synthesis instruction or a trimmed result")
def step_untouched(context: Context) -> None:
    for request in runs.current(context).requests:
        texts = [m.text for m in request.messages]
        assert SYNTHESIS_PROMPT not in texts, texts
        assert not any(TRIM_NOTE in t for t in texts), texts


def _shape(messages: list[BaseMessage]) -> list[tuple[str, str, list[Any]]]:
    # Tool-call ids differ between runs of the scripted model; names and arguments do not.
    return [
        (m.type, m.text, [(c["name"], c["args"]) for c in getattr(m, "tool_calls", [])])
        for m in messages
    ]


@then("the twin received exactly the same requests")
def step_same_as_twin(context: Context) -> None:
    run = runs.current(context)
    assert run.twin is not None and run.twin.answer is not None, "the twin has not answered"
    ours, theirs = run.requests, run.twin.requests
    assert len(ours) == len(theirs), (len(ours), len(theirs))
    for mine, twin in zip(ours, theirs, strict=True):
        assert _shape(mine.messages) == _shape(twin.messages), (mine.messages, twin.messages)
        assert mine.tools == twin.tools
    assert run.answer is not None and run.answer.text == run.twin.answer.text


@then("each request extends the one before it")
def step_extends(context: Context) -> None:
    for before, after in itertools.pairwise(runs.current(context).requests):
        head = after.messages[: len(before.messages)]
        assert _shape(head) == _shape(before.messages), (before.messages, after.messages)


@then("the huge result in request {n:d} is cut to the plan's per-result cap")
def step_capped(context: Context, n: int) -> None:
    run = runs.current(context)
    (result,) = _results(run.request(n).messages)
    window = _window(context)
    cap = ContextPlan.for_window(window).result_cap_chars(_FIRST_RATIO)
    assert cap == min(30_000, max(2_000, int(window * 0.2 * _FIRST_RATIO))), cap
    assert cap // 2 < len(result.text) <= cap, (len(result.text), cap)
    assert "left out to save context" in result.text, result.text[-300:]
    record = run.report["tool_calls"][0]
    assert record["chars_raw"] > 50_000 and record["chars_out"] == len(result.text), record


@then('request {n:d} already carries the read_file result for "{name}"')
def step_prefetched(context: Context, n: int, name: str) -> None:
    run = runs.current(context)
    results = _results(run.request(n).messages)
    assert len(results) == 1 and results[0].name == "read_file", results
    assert f"{name} line 000" in results[0].text, results[0].text[:200]
    assert run.report["prefetched"] == [name], run.report["prefetched"]


@then("no request was sent again at the size it was refused at")
def step_no_same_retry(context: Context) -> None:
    requests = runs.current(context).requests
    sizes = [_chars(r.messages) for r in requests]
    tools = [len(r.tools) for r in requests]
    repeats = [
        i + 2
        for i, (a, b) in enumerate(itertools.pairwise(zip(sizes, tools, strict=True)))
        if a == b
    ]
    assert not repeats, (
        f"request(s) {repeats} repeated a request refused for its size unchanged "
        f"(characters per request {sizes}, tools {tools}); the loop should go to the "
        "final answer when its one retry cannot be made smaller or does not fit the window"
    )


@then("request {n:d} is smaller than request {m:d}")
def step_smaller(context: Context, n: int, m: int) -> None:
    run = runs.current(context)
    small, large = run.request(n).messages, run.request(m).messages
    assert _chars(small) < _chars(large), (_chars(small), _chars(large))
    assert any(TRIM_NOTE in r.text for r in _results(small)), _results(small)


# --- the logs -------------------------------------------------------------------------------


@then("the budget warning was logged exactly once")
def step_warned_once(context: Context) -> None:
    warnings = [m for m in context.scenario_logs.messages() if _WARNING in m]
    assert len(warnings) == 1, warnings
    over = [r for r in _report_requests(context) if r["estimated_tokens"] >= 0.75 * r["ceiling"]]
    assert len(over) >= 2, f"only {len(over)} requests reached 75% of the ceiling: {over}"


@then("the small-window warning was logged exactly once")
def step_small_window_once(context: Context) -> None:
    warnings = [m for m in context.scenario_logs.messages() if "tools work poorly below" in m]
    assert len(warnings) == 1, warnings
    assert f"{_window(context):,} tokens" in warnings[0], warnings[0]
