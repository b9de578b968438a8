"""The run report as one self-contained HTML page (src/leanloop/cli/htmlreport.py): reports
made by hand, moved from features/cli/html_report.feature (issue 26); the names, the
prefetch step, the times, the result previews and the sub-run's answer (issue 29).

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
    # The cut's starting size is the tool's own: said once (issue 29).
    _shows_escaped(page, "90,000 → 4,000 chars (cut)")
    assert calls[2].one("div.sizes").text.count("90,000") == 1, calls[2].one("div.sizes").text
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


def _steps(page: Page) -> dict[str, Node]:
    """The conversation's step blocks by their ``data-step`` (``""``: calls without a step)."""
    blocks = page.root.one("section#conversation").find_all("div.step")
    found = {block.attrs["data-step"]: block for block in blocks}
    assert len(found) == len(blocks), [b.attrs for b in blocks]
    return found


def test_the_prefetch_is_step_0_headed_as_such_and_a_call_without_a_step_stays_apart() -> None:
    report = {
        "prefetched": ["notes.txt"],
        "requests": [{"step": 1, "estimated_tokens": 800}],
        "tool_calls": [
            {
                "step": 0,
                "name": "read_file",
                "args": {"path": "notes.txt"},
                "chars_raw": 40,
                "chars_out": 40,
            },
            {
                "step": 1,
                "name": "read_file",
                "args": {"path": "notes.txt"},
                "repeated": True,
                "chars_out": 90,
                "notes": ["repeat of the call at step 0; not run"],
            },
            {"name": "lookup", "args": {}},
        ],
    }
    page = _render(report)

    steps = _steps(page)
    assert list(steps) == ["0", "1", ""], list(steps)
    assert steps["0"].one("h3").text == "Prefetch · step 0"
    assert "prefetch" in steps["0"].classes
    assert "read before the first request" in steps["0"].one("div.step-head").text
    assert steps["1"].one("h3").text == "Step 1"
    # The repeat's note names step 0, the number the prefetch's heading carries.
    assert "at step 0" in steps["1"].one("ul.notes").text
    assert steps[""].one("h3").text == "Step ?"
    assert [n.one("span.name").text for n in steps[""].find_all("li.call")] == ["lookup"]
    # The files are named by their calls: no second line lists them.
    assert not page.root.find_all("p.prefetched")


def test_the_files_read_first_are_listed_when_the_report_has_no_calls_for_them() -> None:
    page = _render({"prefetched": ["a <b>.txt"]})

    _shows_escaped(page, "a <b>.txt")
    assert "a <b>.txt" in page.root.one("p.prefetched").text


NAMED = {
    "agent": "reader <1>",
    "model": "qwen2.5-coder:1.5b",
    "stop_reason": "answer",
    "requests": [
        {"step": 1, "reported_input_tokens": 1000, "seconds": 2.5},
        {"step": 1, "kind": "retry", "reported_input_tokens": 900, "seconds": 0.5},
        {"step": 2, "reported_input_tokens": 1200},
    ],
    "tool_calls": [
        {
            "step": 1,
            "name": "read_file",
            "args": {"path": "app.log"},
            "chars_raw": 12240,
            "chars_out": 5276,
            "pruned": True,
            "seconds": 1.3,
            "result_preview": "12:00:20 ERROR deadlock #1 <in> the batch writer",
        },
        {
            "step": 1,
            "name": "dump",
            "args": {},
            "chars_raw": 9000,
            "chars_out": 6,
            "cut_from": 9000,
            "seconds": 0.75,
            "result_preview": "xxxxx…",
        },
        {
            "step": 1,
            "name": "call_service",
            "args": {},
            "ok": False,
            "chars_raw": 30,
            "chars_out": 30,
            "result_preview": "error: the order service is down",
        },
        {
            "step": 2,
            "name": "lookup",
            "args": {},
            "chars_raw": 20,
            "chars_out": 20,
            "result_preview": "",
        },
        {"step": 2, "name": "notes", "args": {}, "chars_raw": 5000, "chars_out": 5000},
    ],
}


def test_the_page_names_the_agent_and_the_model() -> None:
    page = _render(NAMED)

    run_by = page.root.one("p#run-by")
    assert run_by.one("code.agent-name").text == "reader <1>"
    assert run_by.one("code.model-name").text == "qwen2.5-coder:1.5b"
    _shows_escaped(page, "reader <1>")
    # A report that names neither has no line for them.
    assert not _render({}).root.find_all("p#run-by")
    assert _render({"model": "m"}).root.one("p#run-by").text == "model m"


def test_each_step_says_how_long_it_took_and_each_call_and_request_too() -> None:
    page = _render(NAMED)

    steps = _steps(page)
    # Both requests of step 1 (3.0 s) and its longest call (the calls run together).
    assert steps["1"].one("span.step-time").text == "4.3 s (model 3.0 s, tools 1.3 s)"
    assert not steps["2"].find_all("span.step-time"), "step 2 has no measured time"
    sizes = [node.one("div.sizes").text for node in steps["1"].find_all("li.call")]
    assert sizes[0] == "12,240 → 5,276 chars (pruned) · 1.3 s", sizes
    assert sizes[1] == "9,000 → 6 chars (cut) · 0.75 s", sizes
    times = [row.one("td.time").text for row in _request_rows(page)]
    assert times == ["2.5 s", "0.50 s", "-"], times
    # A report that measured no request keeps the table it had: no column of dashes.
    untimed = _render({"requests": [{"step": 1, "estimated_tokens": 10}]})
    assert not untimed.root.find_all("td.time")
    assert "time" not in [th.text for th in untimed.root.one("table.requests").find_all("th")]


def test_the_sizes_say_what_was_done_once() -> None:
    page = _render(NAMED)

    sizes = [node.one("div.sizes").text for node in page.root.find_all("li.call")]
    assert sizes[0].count("12,240") == 1 and sizes[1].count("9,000") == 1, sizes
    # A result the model got whole is one size, not "5,000 → 5,000".
    assert sizes[4] == "5,000 chars", sizes


def test_every_kept_result_folds_out_as_the_model_saw_it() -> None:
    page = _render(NAMED)

    calls = page.root.find_all("li.call")
    results = [call.find_all("details.result") for call in calls]
    assert [len(found) for found in results] == [1, 1, 1, 1, 0], "one preview per kept text"
    first = results[0][0]
    assert "open" not in first.attrs, "the previews start folded"
    # The report keeps the start of a long result: the summary says how much it shows.
    assert (
        first.one("summary").text == "the result as the model saw it (its first 48 of 5,276 chars)"
    )
    assert first.one("pre").text == "12:00:20 ERROR deadlock #1 <in> the batch writer"
    _shows_escaped(page, "12:00:20 ERROR deadlock #1 <in> the batch writer")
    # A preview as long as the result is the whole of it: no "first" in its summary.
    assert results[1][0].one("summary").text == "the result as the model saw it"
    assert results[2][0].one("summary").text == "the error the model saw"
    assert results[3][0].one("pre").text == "(empty)"


def test_a_preview_shorter_than_the_result_says_how_much_it_shows() -> None:
    call = {
        "step": 1,
        "name": "dump",
        "args": {},
        "chars_raw": 9000,
        "chars_out": 4000,
        "cut_from": 9000,
        "result_preview": "x" * 100,
    }
    page = _render({"tool_calls": [call]})

    summary = page.root.one("details.result").one("summary").text
    assert summary == "the result as the model saw it (its first 100 of 4,000 chars)", summary


def test_a_sub_run_shows_its_agent_model_and_answer() -> None:
    sub = {
        "agent": "searcher",
        "model": "small-model",
        "stop_reason": "answer",
        "question": "find the log",
        "answer": "it is in <logs>/app.log",
        "tool_calls": [
            {
                "step": 1,
                "name": "grep",
                "args": {},
                "chars_raw": 5,
                "chars_out": 5,
                "result_preview": "found",
            }
        ],
    }
    failed = {"agent": "searcher", "stop_reason": "failed", "error": "HTTP 503", "answer": None}
    report = {
        "tool_calls": [
            {
                "step": 1,
                "name": "agent:searcher",
                "args": {"task": "find"},
                "sub_report": sub,
                "chars_raw": 24,
                "chars_out": 24,
                "result_preview": "it is in <logs>/app.log",
            },
            {
                "step": 2,
                "name": "agent:searcher",
                "args": {"task": "again"},
                "sub_report": failed,
                "ok": False,
            },
        ]
    }
    page = _render(report)

    runs = page.root.find_all("details.sub-run")
    assert len(runs) == 2
    head = next(c for c in runs[0].children if not isinstance(c, str) and c.tag == "summary")
    assert "sub-run of agent:searcher on small-model" in head.text, head.text
    assert runs[0].one("div.sub-answer").one("span.body").text == "it is in <logs>/app.log"
    assert runs[0].one("li.call").one("details.result").one("pre").text == "found"
    assert runs[1].one("div.sub-answer").text == "no answer: the sub-run failed"
    _shows_escaped(page, "it is in <logs>/app.log")
    # An older nested report, without the answer key, shows no answer line at all.
    older = _render({"tool_calls": [{"name": "agent:x", "sub_report": {"stop_reason": "answer"}}]})
    assert not older.root.find_all("div.sub-answer")
