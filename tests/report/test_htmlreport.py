"""The run report as one self-contained HTML page (src/leanloop/cli/htmlreport.py): reports
made by hand, moved from features/cli/html_report.feature (issue 26).

The page carries its CSS and its SVG inline, runs no script, and escapes every text it
shows; a partial report and an empty one render too. The page is read back with the
standard library's ``html.parser`` into a small tree (``features/support/html_tree.py``,
shared with the Behave steps), so the checks read what a browser
would show. (The pages of real runs stay in features/cli/html_report.feature.)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from support.html_tree import Node, parse_page  # the tree the Behave steps read pages with

from leanloop.cli.htmlreport import render_html


@dataclass
class Page:
    source: str
    root: Node


def _render(report: dict[str, Any], **options: Any) -> Page:
    source = render_html(report, **options)
    builder = parse_page(source)
    if builder.current is not builder.root:
        builder.problems.append(f"<{builder.current.tag}> is never closed")
    assert builder.doctype is not None and builder.doctype.lower() == "doctype html"
    assert not builder.problems, builder.problems
    return Page(source, builder.root)


def _titled(page: Page, title: str) -> None:
    """The page is well-formed HTML titled ``title``."""
    html_nodes = page.root.find_all("html")
    assert len(html_nodes) == 1, f"{len(html_nodes)} <html> elements"
    assert page.root.one("head").one("title").text == title
    assert page.root.one("h1").text == title, page.root.one("h1").text
    assert page.root.find_all("meta")[0].attrs.get("charset") == "utf-8", "no utf-8 charset"


def _self_contained(page: Page) -> None:
    """No script, no external address."""
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


def _shows_escaped(page: Page, text: str) -> None:
    assert text in page.root.one("body").text, f"{text!r} is not in the page's text"
    if any(c in text for c in "<>&\"'"):
        assert text not in page.source, f"{text!r} stands unescaped in the page source"
    assert not [n for n in page.root.walk() if n.tag == "script"], "the page has a <script>"


def _flags_stop(page: Page, reason: str) -> None:
    stop = page.root.one("div#stop-reason")
    assert stop.attrs.get("data-stop") == reason, stop.attrs
    assert "ok" not in stop.classes and ({"flag", "failed"} & stop.classes), stop.classes
    assert f"stop: {reason}" in stop.text, stop.text


def _request_rows(page: Page) -> list[Node]:
    tables = page.root.find_all("table.requests")
    return tables[0].find_all("tr.request") if tables else []


def _points(page: Page) -> list[Node]:
    return page.root.one("svg#tokens-plot").find_all("circle.point")


def _answer(page: Page) -> str:
    return page.root.one("div#answer").find_all("div.body")[0].text


def test_an_empty_report_renders_a_page_that_says_there_is_nothing_to_show() -> None:
    page = _render({})

    _titled(page, "leanloop run")
    _self_contained(page)
    assert not _request_rows(page), "the table has rows"
    assert "no requests recorded" in page.root.one("section#requests").text
    assert len(_points(page)) == 0
    assert "no requests recorded" in page.root.one("svg#tokens-plot").text
    _flags_stop(page, "unknown")


HAND_MADE = """\
{"stop_reason": "max_rounds", "question": "</title><script>alert(1)</script>",
 "answer": "composed <i>answer</i>", "steps": "two",
 "requests": [{"step": 1, "estimated_tokens": 1200},
              {"step": 2, "kind": "final", "reported_input_tokens": 900, "estimated_tokens": 1000},
              {"step": 3},
              "not a request"],
 "tool_calls": [{"step": 1, "name": "read_file", "args": {"path": "<a>"}, "ok": false},
                {"step": 1, "name": "grep", "args": "oops", "trimmed_at": 2, "chars_raw": 10,
                 "chars_out": 10},
                {"step": 2, "name": "dump", "cut_from": 90000, "chars_raw": 90000,
                 "chars_out": 4000}],
 "events": ["step 2: <budget> spent"],
 "pruning_fallbacks": [{"step": 1, "tool": "read_file", "reason": "timeout"}]}
"""


def test_a_hand_made_partial_report_renders() -> None:
    """Estimates only, missing figures, no window, no fates."""
    page = _render(json.loads(HAND_MADE), title="run <3>")

    _titled(page, "run <3>")
    _self_contained(page)
    assert len(_request_rows(page)) == 3
    points = _points(page)
    kinds = [
        next(c for c in p.classes if c.startswith("point-")).removeprefix("point-") for p in points
    ]
    assert len(points) == 3, kinds
    assert {k: kinds.count(k) for k in ("estimated", "reported", "missing")} == {
        "estimated": 1,
        "reported": 1,
        "missing": 1,
    }, kinds
    svg = page.root.one("svg#tokens-plot")
    for css in ("window-line", "warn-line"):
        assert not [line for line in svg.find_all(f"line.{css}") if line.parent is svg]
    assert "window" not in svg.one("g.legend").text
    calls = page.root.one("section#conversation").find_all("li.call")
    assert [node.one("span.badge").text for node in calls] == [
        "failed",
        "trimmed at step 2",
        "cut",
    ]
    _shows_escaped(page, "90,000 → 4,000 chars (cut from 90,000)")
    _shows_escaped(page, "step 2: <budget> spent")
    _shows_escaped(page, "</title><script>alert(1)</script>")
    rows = page.root.one("table.fallbacks").find_all("tr.fallback")
    assert len(rows) == 1, len(rows)
    assert [cell.text.strip() for cell in rows[0].find_all("td")][1:] == ["read_file", "timeout"]
    assert _answer(page) == "composed <i>answer</i>"
    _flags_stop(page, "max_rounds")


def test_an_answer_given_to_the_renderer_wins_over_the_report_own() -> None:
    page = _render({"answer": "from the report", "stop_reason": "answer"}, answer="given <here>")

    assert _answer(page) == "given <here>"
