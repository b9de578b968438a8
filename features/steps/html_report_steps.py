"""Steps of html_report.feature: render a run report as HTML and read the page back.

The page is parsed with the standard library's ``html.parser`` into a small tree
(:class:`Node`), so that the checks read what a browser would show: the elements, their
classes and attributes, and their text with character references resolved. The raw
source is kept beside it for the escaping checks. The runs themselves come from the
shared loop steps (``runs.current(context)``, see ``features/support/runs.py``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from behave import then, when
from behave.runner import Context
from support import runs
from support.html_tree import Node, TreeBuilder

from leanloop.cli.htmlreport import render_html


@dataclass
class Page:
    """A rendered page: its source, its tree and the report it came from."""

    source: str
    root: Node
    report: dict[str, Any]
    problems: list[str]
    doctype: str | None


def _render(context: Context, report: dict[str, Any], **options: Any) -> None:
    source = render_html(report, **options)
    builder = TreeBuilder()
    builder.feed(source)
    builder.close()
    if builder.current is not builder.root:
        builder.problems.append(f"<{builder.current.tag}> is never closed")
    context.html_page = Page(source, builder.root, report, builder.problems, builder.doctype)


def _page(context: Context) -> Page:
    page = getattr(context, "html_page", None)
    assert isinstance(page, Page), "no report has been rendered"
    return page


def _cells(row: Node) -> list[str]:
    return [cell.text.strip() for cell in row.find_all("td")]


def _num(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "-"


def _rows(value: object) -> list[dict[str, Any]]:
    return [row for row in value if isinstance(row, dict)] if isinstance(value, list) else []


def _tokens(request: dict[str, Any]) -> int | None:
    reported = request.get("reported_input_tokens", request.get("input_tokens"))
    return reported if isinstance(reported, int) else request.get("estimated_tokens")


def _points(page: Page) -> list[Node]:
    return page.root.one("svg#tokens-plot").find_all("circle.point")


def _y(node: Node, name: str = "y1") -> float:
    return float(node.attrs[name])


# --- When ----------------------------------------------------------------------------


@when("the run's report is rendered as HTML")
def step_render_run(context: Context) -> None:
    run = runs.current(context)
    assert run.answer is not None, "the agent has not answered"
    _render(context, run.report, answer=run.answer.text)


@when("the failure's partial report is rendered as HTML")
def step_render_failure(context: Context) -> None:
    failure = runs.current(context).failure
    report = getattr(failure, "report", None)
    assert report is not None, f"the run did not fail with a report: {failure!r}"
    _render(context, report.to_dict())


# --- Then: the page as a whole ---------------------------------------------------------


@then('the page is well-formed HTML titled "{title}"')
def step_well_formed(context: Context, title: str) -> None:
    page = _page(context)
    assert page.doctype is not None and page.doctype.lower() == "doctype html", page.doctype
    assert not page.problems, page.problems
    html_nodes = page.root.find_all("html")
    assert len(html_nodes) == 1, f"{len(html_nodes)} <html> elements"
    shown = page.root.one("head").one("title").text
    assert shown == title, f"the page is titled {shown!r}"
    assert page.root.one("h1").text == title, page.root.one("h1").text
    assert page.root.find_all("meta")[0].attrs.get("charset") == "utf-8", "no utf-8 charset"


@then("the page is self-contained: no script, no external address")
def step_self_contained(context: Context) -> None:
    page = _page(context)
    nodes = list(page.root.walk())
    for banned in ("script", "link", "iframe", "img", "object", "embed"):
        found = [n for n in nodes if n.tag == banned]
        assert not found, f"the page has <{banned}> elements: {[n.attrs for n in found]}"
    for node in nodes:
        for name, value in node.attrs.items():
            assert not name.startswith("on"), f"<{node.tag}> has a handler {name}={value!r}"
            assert name not in ("src", "href", "xlink:href"), f"<{node.tag}> {name}={value!r}"
            assert "://" not in value, f"<{node.tag}> {name}={value!r} names an address"
    style = "".join(n.text for n in nodes if n.tag == "style")
    assert style.strip(), "the page has no inline CSS"
    for banned in ("url(", "@import", "://"):
        assert banned not in style, f"the CSS uses {banned!r}"


@then('the page shows "{text}" as escaped text')
def step_shows_escaped(context: Context, text: str) -> None:
    page = _page(context)
    shown = page.root.one("body").text
    assert text in shown, f"{text!r} is not in the page's text"
    if any(c in text for c in "<>&\"'"):
        assert text not in page.source, f"{text!r} stands unescaped in the page source"
    assert not [n for n in page.root.walk() if n.tag == "script"], "the page has a <script>"


@then("the page shows the question and the answer escaped")
def step_question_answer(context: Context) -> None:
    page = _page(context)
    question, answer = page.report["question"], runs.current(context).answer
    assert answer is not None
    assert page.root.one("div#question").text.strip().endswith(question), question
    assert page.root.one("div#answer").text.strip().endswith(answer.text), answer.text
    for text in (question, answer.text):
        assert text not in page.source, f"{text!r} stands unescaped in the page source"


@then("the page says the run failed before it answered")
def step_no_answer(context: Context) -> None:
    answer = _page(context).root.one("div#answer")
    assert "no-answer" in answer.classes, answer.attrs
    assert "the run failed before it answered" in answer.text, answer.text


# --- Then: the summary -----------------------------------------------------------------


def _stop(page: Page) -> Node:
    return page.root.one("div#stop-reason")


@then('the summary says stop "{reason}" with no flag and no error')
def step_stop_ok(context: Context, reason: str) -> None:
    page = _page(context)
    stop = _stop(page)
    assert stop.attrs.get("data-stop") == reason, stop.attrs
    assert "ok" in stop.classes and "flag" not in stop.classes, stop.classes
    assert not page.root.find_all("div#error"), "the page shows an error"
    calls = _rows(page.report.get("tool_calls"))
    failed = sum(1 for call in calls if call.get("ok") is False)
    facts = {
        dt.text: dd.text
        for div in page.root.one("dl.facts").find_all("div")
        for dt, dd in [(div.one("dt"), div.one("dd"))]
    }
    assert facts["tool calls"] == f"{len(calls)} calls ({failed} failed)", facts
    assert facts["requests"] == str(len(page.report["requests"])), facts
    reported = sum(r["reported_input_tokens"] for r in page.report["requests"])
    assert facts["prompt tokens"] == f"{reported:,}", facts
    assert facts["steps"] == str(page.report["steps"]), facts
    assert facts["window"].startswith(f"{page.report['window']:,}"), facts


def _flags_stop(context: Context, reason: str) -> None:
    stop = _stop(_page(context))
    assert stop.attrs.get("data-stop") == reason, stop.attrs
    assert "ok" not in stop.classes and ({"flag", "failed"} & stop.classes), stop.classes
    assert f"stop: {reason}" in stop.text, stop.text


@then('the summary flags the stop reason "{reason}" and shows the report\'s error')
def step_stop_error(context: Context, reason: str) -> None:
    _flags_stop(context, reason)
    page = _page(context)
    error = page.report.get("error")
    assert isinstance(error, str) and error, f"the report has no error: {page.report}"
    shown = page.root.one("div#error").text
    assert error in shown, f"the page shows {shown!r}, not {error!r}"


# --- Then: requests and the plot -------------------------------------------------------


def _request_rows(page: Page) -> list[Node]:
    tables = page.root.find_all("table.requests")
    return tables[0].find_all("tr.request") if tables else []


@then("the requests table has one row per request of the report, with its figures")
def step_request_rows(context: Context) -> None:
    page = _page(context)
    requests = _rows(page.report.get("requests"))
    rows = _request_rows(page)
    assert requests, "the report has no requests"
    assert len(rows) == len(requests), f"{len(rows)} rows for {len(requests)} requests"
    for number, (row, request) in enumerate(zip(rows, requests, strict=True), start=1):
        cells = _cells(row)
        want = [
            str(number),
            _num(request["step"]),
            request["kind"],
            _num(request["messages"]),
            _num(request["estimated_tokens"]),
            _num(request["reported_input_tokens"]),
        ]
        assert cells[:6] == want, f"row {number}: {cells[:6]} != {want}"


@then("the plot has one point per request, at the height of its prompt tokens")
def step_points(context: Context) -> None:
    page = _page(context)
    requests = _rows(page.report.get("requests"))
    points = _points(page)
    assert len(points) == len(requests), f"{len(points)} points for {len(requests)} requests"
    baseline = _baseline(page)
    pairs = []
    for number, (point, request) in enumerate(zip(points, requests, strict=True), start=1):
        tokens = _tokens(request)
        assert isinstance(tokens, int), f"request {number} has no token figure"
        assert point.attrs["data-request"] == str(number), point.attrs
        assert f"{tokens:,} prompt tokens" in point.text, (number, point.text)
        cy = _y(point, "cy")
        assert cy <= baseline, f"point {number} lies below the x axis"
        pairs.append((tokens, cy))
    for tokens_a, cy_a in pairs:
        for tokens_b, cy_b in pairs:
            if tokens_a > tokens_b:
                assert cy_a < cy_b, f"{tokens_a} tokens drawn at or below {tokens_b} tokens"
    xs = [float(point.attrs["cx"]) for point in points]
    assert xs == sorted(xs) and len(set(xs)) == len(xs), f"the points are not in order: {xs}"


def _baseline(page: Page) -> float:
    axes = [
        line
        for line in page.root.one("svg#tokens-plot").find_all("line.axis")
        if line.attrs["y1"] == line.attrs["y2"]
    ]
    assert len(axes) == 1, "the plot has no single x axis"
    return _y(axes[0])


def _plot_lines(svg: Node, css: str) -> list[Node]:
    """The lines of class ``css`` drawn in the plot itself (not the legend's samples)."""
    return [line for line in svg.find_all(f"line.{css}") if line.parent is svg]


@then("the plot draws the window line and the 75% line of a {window:d}-token window")
def step_window_lines(context: Context, window: int) -> None:
    page = _page(context)
    svg = page.root.one("svg#tokens-plot")
    lines = {css: _plot_lines(svg, css) for css in ("window-line", "warn-line")}
    assert all(len(found) == 1 for found in lines.values()), lines
    top, warn = _y(lines["window-line"][0]), _y(lines["warn-line"][0])
    baseline = _baseline(page)
    height = baseline - top
    assert abs((baseline - warn) - 0.75 * height) < 0.2, (top, warn, baseline)
    for point, request in zip(_points(page), _rows(page.report["requests"]), strict=True):
        tokens = _tokens(request)
        assert isinstance(tokens, int)
        assert (_y(point, "cy") < top) == (tokens > window), (tokens, point.attrs)
    labels = [t.text for t in svg.find_all("text")]
    assert f"window {window:,}" in labels, labels
    assert f"75% {int(window * 0.75):,}" in labels, labels
    legend = svg.one("g.legend").text
    assert "context window" in legend and "75% of the window" in legend, legend
    assert "prompt tokens" in labels and "request" in labels, "the axes are not labelled"


# --- Then: tool calls ------------------------------------------------------------------


def _calls(page: Page) -> list[Node]:
    return page.root.one("section#conversation").find_all("li.call")


def _badge(fate: str, call: dict[str, Any]) -> str:
    return f"trimmed at step {call['trimmed_at']}" if fate == "trimmed" else fate


@then("every tool call of the report appears in order with its fate and sizes")
def step_calls(context: Context) -> None:
    page = _page(context)
    calls = _rows(page.report.get("tool_calls"))
    shown = _calls(page)
    assert calls, "the report has no tool calls"
    assert len(shown) == len(calls), f"{len(shown)} calls shown for {len(calls)}"
    for number, (node, call) in enumerate(zip(shown, calls, strict=True), start=1):
        fate = call["fate"]
        assert node.attrs.get("data-fate") == fate, (number, node.attrs, fate)
        assert f"fate-{fate}" in node.classes, node.classes
        assert node.one("span.name").text == call["name"], node.text
        assert node.one("span.badge").text == _badge(fate, call), node.text
        step = node.parent.parent if node.parent else None
        assert step is not None and step.attrs.get("data-step") == str(call["step"]), number
        sizes = node.one("div.sizes").text
        if fate == "repeat":
            assert sizes.startswith("not run"), sizes
        else:
            raw, out = call["chars_raw"], call["chars_out"]
            want = f"{raw:,} chars" if raw == out else f"{raw:,} → {out:,} chars"
            assert sizes.startswith(want), (sizes, want)
        if call.get("pruned"):
            assert "(pruned)" in sizes, sizes
        elif call.get("cut_from") is not None:
            # What was done is said once: the size the cut started from is the tool's.
            assert "(cut)" in sizes, sizes
            assert sizes.count(f"{call['cut_from']:,}") == 1, sizes
        for value in call["args"].values():
            assert json.dumps(value, ensure_ascii=False) in node.text, (value, node.text)


@then('the fates "{fates}" appear on the page')
def step_fates(context: Context, fates: str) -> None:
    shown = {node.attrs.get("data-fate") for node in _calls(_page(context))}
    missing = [fate.strip() for fate in fates.split(",") if fate.strip() not in shown]
    assert not missing, f"no call has the fates {missing}; the page shows {sorted(shown)}"
