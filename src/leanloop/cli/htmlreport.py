"""A picture of the run: the run report as one self-contained HTML page.

:func:`render_html` turns the JSON-ready run report (``AIMessage.response_metadata
["leanloop"]``, or what ``leanloop run --json`` prints) into one page: a summary of how
the run ended (with the agent's and the model's names), the conversation (the question;
each step with its time and its tool calls, what became of their results and, folded in a
``<details>``, the result as the model saw it; the answer), what the loop did to the
context, every request in a table, and an SVG plot of the prompt tokens per request
against the context window. The files read before the first request are step 0, headed as
the prefetch. An ``agent:NAME`` call shows the run it made nested under it (its
``sub_report``): how it ended, its question, its events, its own tool calls and its answer.

The page needs nothing else: the CSS is in a ``<style>`` element, the plot is inline
SVG, there are no scripts and no external addresses, and every piece of text from the
report is escaped. Fields the report lacks are left out or shown as ``-``, so the
partial report of a failed run (and even an empty dict) renders.

This module renders the page's parts: the summary, the conversation, the context events
and the requests table. The stylesheet and the ``<head>`` are in
:mod:`leanloop.cli.htmlstyle`, the SVG plot in :mod:`leanloop.cli.htmlplot`, and the
readers of the report's loosely typed fields (and the escaping) in
:mod:`leanloop.cli.htmlvalues`. Besides them it imports only the words of each ending
(:mod:`leanloop.endings`) and the redaction (:mod:`leanloop.redact`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from leanloop.cli.htmlapprovals import approvals_section
from leanloop.cli.htmlplot import plot_section
from leanloop.cli.htmlstyle import page_head
from leanloop.cli.htmlvalues import (
    esc,
    int_of,
    num,
    plural,
    prompt_tokens,
    rows_of,
    strings_of,
    text_of,
)
from leanloop.endings import describe_ending
from leanloop.redact import redact_report

__all__ = ["FATES", "render_html", "write_html"]

FATES: tuple[str, ...] = ("kept", "trimmed", "pruned", "cut", "failed", "repeat")
"""What can become of a tool call's result, as the report's ``fate`` field names it."""

_STOPS: dict[str, str] = {
    "answer": "the model answered",
    "failed": "the run failed",
}
"""How a run ended, where the report's own words (``describe_ending``) do not apply."""

_COUNTS: tuple[tuple[str, str], ...] = (
    ("results trimmed", "trimmed_results"),
    ("tokens saved by trimming", "tokens_saved_by_trimming"),
    ("chars saved by pruning", "chars_saved_by_pruning"),
    ("overflow recoveries", "overflow_recoveries"),
    ("repeats not run", "repeated_calls"),
    ("repaired calls", "repaired_calls"),
)
"""The report's counters the summary shows when they are not zero: label, key."""

_DASH = '<span class="muted">-</span>'
"""What stands in for a text the report lacks."""

_ARGS_MAX = 2_000
"""Characters of one call's arguments shown before they are cut (with a marker)."""

_PREFETCH_STEP = 0
"""The step of the reads made before the first request (the loop's prefetch)."""

_SUB_RUN_DEPTH = 8
"""Sub-runs nested deeper than this show their summary only: files refuse cycles of
agents, but a report is data, and a page must not recurse without end."""


def render_html(
    report: Mapping[str, Any], *, answer: str | None = None, title: str = "leanloop run"
) -> str:
    """Render a run report as one self-contained HTML page.

    Args:
        report: The run report as a JSON-ready mapping (``RunReport.to_dict()``, or the
            object ``leanloop run --json`` prints). Missing or malformed fields are
            tolerated.
        answer: The run's answer; defaults to the report's own ``answer`` key (which the
            CLI's ``--json`` output has).
        title: The page's title and main heading.

    Returns:
        The page, a complete HTML document.
    """
    report = redact_report(report)  # a saved report may name a URL with its password
    if answer is None:
        found = report.get("answer")
        answer = found if isinstance(found, str) else None
    requests = rows_of(report.get("requests"))
    calls = rows_of(report.get("tool_calls"))
    parts = [
        page_head(title),
        "<body>\n<main>",
        _summary(report, title, requests, calls),
        plot_section(requests, int_of(report.get("window"))),
        _conversation(report, answer, requests, calls),
        _context(report),
        approvals_section(report),
        _requests_table(requests),
        "</main>\n</body>\n</html>\n",
    ]
    return "\n".join(part for part in parts if part)


def write_html(report: Mapping[str, Any], path: str | Path, *, answer: str | None = None) -> Path:
    """Render ``report`` (see :func:`render_html`) and write the page to ``path``.

    Args:
        report: The run report as a JSON-ready mapping.
        path: Where to write the page; missing parent folders are created.
        answer: The run's answer; defaults to the report's own ``answer`` key.

    Returns:
        The path written, as a ``Path``.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_html(report, answer=answer), encoding="utf-8")
    return target


# --- the report's fields ------------------------------------------------------------------


def _fate(call: Mapping[str, Any]) -> str:
    """The report's ``fate``, or the same decision made from the call's flags."""
    fate = call.get("fate")
    if isinstance(fate, str) and fate:
        return fate
    if call.get("repeated"):
        return "repeat"
    if call.get("ok") is False:
        return "failed"
    if int_of(call.get("trimmed_at")) is not None:
        return "trimmed"
    if call.get("pruned"):
        return "pruned"
    return "cut" if int_of(call.get("cut_from")) is not None else "kept"


# --- the page ---------------------------------------------------------------------------


def _summary(
    report: Mapping[str, Any],
    title: str,
    requests: list[Mapping[str, Any]],
    calls: list[Mapping[str, Any]],
) -> str:
    out = [f'<header class="summary" id="summary">\n<h1>{esc(title)}</h1>']
    run_by = _run_by(report)
    if run_by:
        out.append(f'<p class="run-by" id="run-by">{run_by}</p>')
    question = text_of(report.get("question"))
    if question is not None:
        out.append(f'<p class="question-text">{esc(question)}</p>')
    stop = report.get("stop_reason")
    stop_text = str(stop) if isinstance(stop, str) and stop else "unknown"
    kind = "ok" if stop_text == "answer" else "failed" if stop_text == "failed" else "flag"
    meaning = _STOPS.get(stop_text) or describe_ending(report)
    meaning = meaning or "the report does not say how the run ended"
    mark = "" if kind == "ok" else "&#9888; "
    out.append(
        f'<div class="stop {kind}" id="stop-reason" data-stop="{esc(stop_text)}">'
        f'{mark}stop: {esc(stop_text)} <span class="muted">— {esc(meaning)}</span></div>'
    )
    error = text_of(report.get("error"))
    if error is not None:
        out.append(f'<div class="error" id="error"><strong>error:</strong> {esc(error)}</div>')
    failed = sum(1 for call in calls if _fate(call) == "failed")
    call_text = plural(len(calls), "call") + (f" ({failed:,} failed)" if failed else "")
    facts: list[tuple[str, str]] = [
        ("steps", num(report.get("steps"))),
        ("tool calls", call_text),
        ("requests", f"{len(requests):,}"),
        ("prompt tokens", _prompt_total(requests)),
        ("elapsed", _elapsed(report.get("elapsed_s"))),
        ("window", _window(report)),
    ]
    mode = text_of(report.get("tool_mode"))
    if mode is not None:
        facts.append(("tool mode", mode))
    for label, key in _COUNTS:
        if int_of(report.get(key)):  # shown only when something happened
            facts.append((label, num(report.get(key))))
    out.append('<dl class="facts">')
    out.extend(f"<div><dt>{esc(label)}</dt><dd>{esc(value)}</dd></div>" for label, value in facts)
    out.append("</dl>\n</header>")
    return "\n".join(out)


def _run_by(report: Mapping[str, Any]) -> str:
    """``agent reader · model qwen2.5-coder`` (HTML), or ``""`` when the report names neither."""
    parts = [
        f'{label} <code class="{label}-name">{esc(value)}</code>'
        for label, value in (
            ("agent", text_of(report.get("agent"))),
            ("model", text_of(report.get("model"))),
        )
        if value is not None
    ]
    return " · ".join(parts)


def _prompt_total(requests: list[Mapping[str, Any]]) -> str:
    reported = [r for r, _ in map(prompt_tokens, requests) if r is not None]
    if reported:
        return f"{sum(reported):,}"
    estimated = [e for _, e in map(prompt_tokens, requests) if e is not None]
    return f"~{sum(estimated):,} (estimated)" if estimated else "-"


def _seconds(value: object) -> float | None:
    """A duration in seconds, or ``None`` for anything that is not a finite, non-negative
    number."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value) if value >= 0 else None


def _elapsed(given: object) -> str:
    value = _seconds(given)
    if value is None:
        return "-"
    if value < 1:
        return f"{value:.2f} s"
    return f"{value:.1f} s" if value < 120 else f"{int(value) // 60} min {int(value) % 60} s"


def _window(report: Mapping[str, Any]) -> str:
    window = int_of(report.get("window"))
    if window is None:
        return "-"
    source = text_of(report.get("window_source"))
    return f"{window:,}" + (f" ({source})" if source else "")


# --- the conversation ---------------------------------------------------------------------


def _conversation(
    report: Mapping[str, Any],
    answer: str | None,
    requests: list[Mapping[str, Any]],
    calls: list[Mapping[str, Any]],
) -> str:
    out = ['<section id="conversation">\n<h2>The conversation</h2>']
    question = text_of(report.get("question"))
    out.append(
        '<div class="turn user" id="question"><div class="who">question</div>'
        f'<div class="body">{esc(question) if question else _DASH}</div></div>'
    )
    # A call or request without a step is kept apart (``None``) from the prefetch's step 0.
    by_step: dict[int | None, list[Mapping[str, Any]]] = {}
    for call in calls:
        by_step.setdefault(int_of(call.get("step")), []).append(call)
    asked: dict[int | None, list[tuple[int, Mapping[str, Any]]]] = {}
    for number, request in enumerate(requests, start=1):
        asked.setdefault(int_of(request.get("step")), []).append((number, request))
    prefetched = strings_of(report.get("prefetched"))
    if prefetched and _PREFETCH_STEP not in by_step:  # the files, when their calls are not
        files = ", ".join(f"<code>{esc(name)}</code>" for name in prefetched)
        out.append(f'<p class="prefetched muted">read before the first step: {files}</p>')
    steps = sorted(set(by_step) | set(asked), key=lambda s: (s is None, s or 0))
    for step in steps:
        out.append(_step(step, by_step.get(step, []), asked.get(step, [])))
    stop = report.get("stop_reason")
    if answer is not None:
        out.append(
            '<div class="turn answer" id="answer"><div class="who">answer</div>'
            f'<div class="body">{esc(answer)}</div></div>'
        )
    else:
        why = "the run failed before it answered" if stop == "failed" else "no answer recorded"
        out.append(
            '<div class="turn no-answer" id="answer"><div class="who">answer</div>'
            f'<div class="body muted">{esc(why)}</div></div>'
        )
    out.append("</section>")
    return "\n".join(out)


def _step(
    step: int | None,
    calls: list[Mapping[str, Any]],
    requests: list[tuple[int, Mapping[str, Any]]],
) -> str:
    prefetch = step == _PREFETCH_STEP
    # The prefetch keeps its number: a repeat's note names the step of the call it repeats.
    label = "Prefetch · step 0" if prefetch else "Step ?" if step is None else f"Step {step}"
    figures = []
    for number, request in requests:
        reported, estimated = prompt_tokens(request)
        kind = text_of(request.get("kind")) or "step"
        figure = f"request {number}" if kind == "step" else f"{kind} request {number}"
        if reported is not None:
            figure += f" · {reported:,} prompt tokens"
        elif estimated is not None:
            figure += f" · ~{estimated:,} prompt tokens (estimated)"
        figures.append(figure)
    head = f'<div class="step-head"><h3>{esc(label)}</h3>'
    took = _step_time(calls, [request for _, request in requests])
    if took:
        head += f'<span class="step-time">{esc(took)}</span>'
    if prefetch:
        head += (
            '<span class="muted step-requests">'
            "files the question names, read before the first request</span>"
        )
    if figures:
        head += f'<span class="muted step-requests">{esc("; ".join(figures))}</span>'
    head += "</div>"
    if not calls:
        body = '<p class="muted no-calls">no tool calls</p>' if requests else ""
    else:
        body = '<ul class="calls">\n' + "\n".join(_call(call) for call in calls) + "\n</ul>"
    step_attr = "" if step is None else str(step)
    css = "step prefetch" if prefetch else "step"
    return f'<div class="{css}" data-step="{step_attr}">\n{head}\n{body}\n</div>'


def _step_time(calls: list[Mapping[str, Any]], requests: list[Mapping[str, Any]]) -> str:
    """How long a step took: its requests' time plus its tool round's, when measured.

    The calls of one round run together, so the round took as long as its longest call
    (a sum would count the same seconds more than once).
    """
    model = [t for t in (_seconds(r.get("seconds")) for r in requests) if t is not None]
    tools = [t for t in (_seconds(c.get("seconds")) for c in calls) if t is not None]
    if not model and not tools:
        return ""
    total = sum(model) + max(tools, default=0.0)
    parts = []
    if model:
        parts.append(f"model {_elapsed(sum(model))}")
    if tools:
        parts.append(f"tools {_elapsed(max(tools))}")
    return f"{_elapsed(total)} ({', '.join(parts)})" if len(parts) > 1 else _elapsed(total)


def _call(call: Mapping[str, Any], depth: int = 0) -> str:
    fate = _fate(call)
    name = text_of(call.get("name")) or "?"
    badge = fate
    trimmed_at = int_of(call.get("trimmed_at"))
    if fate == "trimmed" and trimmed_at is not None:
        badge = f"trimmed at step {trimmed_at}"
    fate_class = fate if fate in FATES else "other"
    args = call.get("args")
    shown = _args(args) if isinstance(args, Mapping) else ""
    sizes = _sizes(call, fate)
    notes = strings_of(call.get("notes"))
    repaired_from = text_of(call.get("repaired_from"))
    if repaired_from is not None:
        notes.insert(0, f"the model wrote {repaired_from}")
    notes_html = (
        '<ul class="notes">' + "".join(f"<li>{esc(note)}</li>" for note in notes) + "</ul>"
        if notes
        else ""
    )
    sub = call.get("sub_report")
    sub_html = _sub_run(name, sub, depth + 1) if isinstance(sub, Mapping) else ""
    return (
        f'<li class="call fate-{fate_class}" data-fate="{esc(fate)}">'
        f'<div class="sig mono"><span class="name">{esc(name)}</span>'
        f'<span class="args">({esc(shown)})</span>'
        f'<span class="badge">{esc(badge)}</span></div>'
        f'<div class="sizes">{esc(sizes)}</div>{notes_html}{_result(call, fate)}{sub_html}</li>'
    )


def _result(call: Mapping[str, Any], fate: str) -> str:
    """The result as the model received it, folded (``<details>``); ``""`` when the
    report did not keep it."""
    preview = call.get("result_preview")
    if not isinstance(preview, str):
        return ""
    what = {"repeat": "the reminder the model got", "failed": "the error the model saw"}
    label = what.get(fate, "the result as the model saw it")
    whole = int_of(call.get("chars_out"))
    if whole is not None and whole > len(preview):
        label += f" (its first {len(preview):,} of {whole:,} chars)"
    body = esc(preview) if preview else '<span class="muted">(empty)</span>'
    return (
        f'<details class="result"><summary>{esc(label)}</summary>'
        f'<pre class="result-text">{body}</pre></details>'
    )


def _sub_run(agent: str, report: Mapping[str, Any], depth: int) -> str:
    """The run an ``agent:NAME`` call made: a summary line, then its question, error,
    events, tool calls (each call as in the main run, its own sub-runs nested again) and
    answer (the ``answer`` key the agent tool adds; ``None`` for a sub-run that failed).
    """
    requests = rows_of(report.get("requests"))
    calls = rows_of(report.get("tool_calls"))
    stop = text_of(report.get("stop_reason")) or "unknown"
    kind = "ok" if stop == "answer" else "failed" if stop == "failed" else "flag"
    failed = sum(1 for call in calls if _fate(call) == "failed")
    steps = int_of(report.get("steps"))
    model = text_of(report.get("model"))
    figures = [
        f"sub-run of {agent}" + (f" on {model}" if model is not None else ""),
        plural(steps, "step") if steps is not None else "- steps",
        plural(len(calls), "tool call") + (f" ({failed:,} failed)" if failed else ""),
        plural(len(requests), "request"),
    ]
    reported = [r for r, _ in map(prompt_tokens, requests) if r is not None]
    estimated = [e for _, e in map(prompt_tokens, requests) if e is not None]
    if reported:
        figures.append(f"{sum(reported):,} prompt tokens")
    elif estimated:
        figures.append(f"~{sum(estimated):,} prompt tokens (estimated)")
    elapsed = _elapsed(report.get("elapsed_s"))
    if elapsed != "-":
        figures.append(elapsed)
    out = [
        f'<details class="sub-run" open data-agent="{esc(agent)}" data-stop="{esc(stop)}">'
        f'<summary><span class="stop {kind}">stop: {esc(stop)}</span>'
        f'<span class="sub-figures">{esc(" · ".join(figures))}</span></summary>'
    ]
    question = text_of(report.get("question"))
    if question is not None:
        out.append(f'<div class="sub-question">{esc(question)}</div>')
    error = text_of(report.get("error"))
    if error is not None:
        out.append(f'<div class="error"><strong>error:</strong> {esc(error)}</div>')
    events = strings_of(report.get("events"))
    if events:
        out.append('<ul class="events">' + "".join(f"<li>{esc(e)}</li>" for e in events) + "</ul>")
    if calls and depth < _SUB_RUN_DEPTH:
        out.append('<ul class="calls">' + "".join(_call(c, depth) for c in calls) + "</ul>")
    elif calls:
        out.append('<p class="muted">nested too deeply to show its calls</p>')
    answer = text_of(report.get("answer"))
    if answer is not None:
        out.append(
            '<div class="sub-answer"><span class="who">answer</span> '
            f'<span class="body">{esc(answer)}</span></div>'
        )
    elif "answer" in report:  # the agent tool says there was none: the sub-run failed
        out.append('<div class="sub-answer muted">no answer: the sub-run failed</div>')
    out.append("</details>")
    return "".join(out)


def _args(args: Mapping[str, Any]) -> str:
    text = json.dumps(dict(args), ensure_ascii=False, default=str)
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    return text if len(text) <= _ARGS_MAX else text[: _ARGS_MAX - 1] + "…"


def _sizes(call: Mapping[str, Any], fate: str) -> str:
    """``12,240 → 5,276 chars (pruned) · 1.4 s``: what the tool wrote, what the model got,
    what was done to it (once: the cut's starting size is the tool's size), and the time."""
    raw, out, cut_from = (int_of(call.get(k)) for k in ("chars_raw", "chars_out", "cut_from"))
    took = _seconds(call.get("seconds"))
    time = f" · {_elapsed(took)}" if took is not None else ""
    if fate == "repeat":
        return "not run" + (f" · {out:,} chars reminder" if out is not None else "")
    if raw is None and out is None:
        return time.removeprefix(" · ")
    text = f"{raw:,} chars" if raw == out else f"{num(raw)} → {num(out)} chars"
    if call.get("pruned"):
        text += " (pruned)"
    elif cut_from is not None:
        # The cap cuts the tool's own output, so its size is said once; a report whose
        # figures differ says both.
        text += " (cut)" if cut_from == raw else f" (cut from {cut_from:,})"
    return text + time


# --- what the loop did to the context -----------------------------------------------------


def _context(report: Mapping[str, Any]) -> str:
    events = strings_of(report.get("events"))
    fallbacks = rows_of(report.get("pruning_fallbacks"))
    out = ['<section id="context">\n<h2>Context events</h2>']
    if events:
        out.append('<ul class="events">' + "".join(f"<li>{esc(e)}</li>" for e in events) + "</ul>")
    else:
        out.append('<p class="muted">no context events</p>')
    if fallbacks:
        out.append(
            '<h3>Pruning fallbacks</h3>\n<table class="fallbacks">\n<thead><tr><th>step</th>'
            '<th class="left">tool</th><th class="left">reason</th></tr></thead>\n<tbody>'
        )
        out.extend(
            f'<tr class="fallback"><td>{num(row.get("step"))}</td>'
            f'<td class="left mono">{esc(row.get("tool", "-"))}</td>'
            f'<td class="left">{esc(row.get("reason", "-"))}</td></tr>'
            for row in fallbacks
        )
        out.append("</tbody>\n</table>")
    out.append("</section>")
    return "\n".join(out)


# --- the requests table ---------------------------------------------------------------------


def _requests_table(requests: list[Mapping[str, Any]]) -> str:
    out = ['<section id="requests">\n<h2>Requests</h2>']
    if not requests:
        out.append('<p class="muted">no requests recorded</p>\n</section>')
        return "\n".join(out)
    # The time column only for reports that measured it: older reports keep their table.
    timed = any(_seconds(request.get("seconds")) is not None for request in requests)
    time_head = "<th>time</th>" if timed else ""
    out.append(
        '<table class="requests">\n<thead><tr><th>#</th><th>step</th><th class="left">kind'
        "</th><th>messages</th><th>estimated</th><th>reported</th><th>output</th>"
        f"{time_head}<th>ceiling</th><th>window</th><th>of window</th>"
        '<th class="left">tools</th></tr></thead>\n<tbody>'
    )
    for number, request in enumerate(requests, start=1):
        reported, estimated = prompt_tokens(request)
        tokens = reported if reported is not None else estimated
        window = int_of(request.get("window"))
        share, level = "-", ""
        if tokens is not None and window:
            ratio = tokens / window
            share = f"{ratio:.0%}"
            level = " over" if ratio > 1 else " near" if ratio >= 0.75 else ""
        time_cell = (
            f'<td class="time">{esc(_elapsed(request.get("seconds")))}</td>' if timed else ""
        )
        offered = request.get("tools")
        tools = "yes" if offered is True else "no" if offered is False else "-"
        out.append(
            f'<tr class="request{level}" data-request="{number}"><td>{number}</td>'
            f"<td>{num(request.get('step'))}</td>"
            f'<td class="left">{esc(text_of(request.get("kind")) or "-")}</td>'
            f"<td>{num(request.get('messages'))}</td><td>{num(estimated)}</td>"
            f"<td>{num(reported)}</td><td>{num(request.get('output_tokens'))}</td>"
            f"{time_cell}"
            f"<td>{num(request.get('ceiling'))}</td><td>{num(window)}</td>"
            f'<td class="share">{esc(share)}</td><td class="left">{tools}</td></tr>'
        )
    out.append("</tbody>\n</table>\n</section>")
    return "\n".join(out)
