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

This module reads plain values only; it imports nothing from the rest of leanloop.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

_LEGEND_CHAR = 6.6
"""About the width of one 12px legend character, to lay the legend out in one row."""

_DASH = '<span class="muted">-</span>'
"""What stands in for a text the report lacks."""

_EMPTY_TOP = 1_000
"""The height of the token axis when the report has no figure at all."""

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
    requests = _rows(report.get("requests"))
    calls = _rows(report.get("tool_calls"))
    parts = [
        _head(title),
        "<body>\n<main>",
        _summary(report, title, requests, calls),
        _plot_section(requests, _int(report.get("window"))),
        _conversation(report, answer, requests, calls),
        _context(report),
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


# --- plain values out of a loosely typed report ---------------------------------------


def _rows(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        return []
    return [row for row in value if isinstance(row, Mapping)]


def _strings(value: object) -> list[str]:
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        return []
    return [str(item) for item in value if item is not None]


def _int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return int(value)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _num(value: object) -> str:
    number = _int(value)
    return "-" if number is None else f"{number:,}"


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"


def _prompt_tokens(request: Mapping[str, Any]) -> tuple[int | None, int | None]:
    """The reported and the estimated prompt tokens of one request."""
    reported = _int(request.get("reported_input_tokens"))
    if reported is None:
        reported = _int(request.get("input_tokens"))
    return reported, _int(request.get("estimated_tokens"))


def _fate(call: Mapping[str, Any]) -> str:
    """The report's ``fate``, or the same decision made from the call's flags."""
    fate = call.get("fate")
    if isinstance(fate, str) and fate:
        return fate
    if call.get("repeated"):
        return "repeat"
    if call.get("ok") is False:
        return "failed"
    if _int(call.get("trimmed_at")) is not None:
        return "trimmed"
    if call.get("pruned"):
        return "pruned"
    return "cut" if _int(call.get("cut_from")) is not None else "kept"


# --- the page ---------------------------------------------------------------------------

_CSS = """
:root {
  --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --paper: #ffffff; --wash: #f6f8fa;
  --accent: #0969da; --estimate: #8250df; --window: #cf222e; --warn: #bc4c00;
  --ok: #1a7f37; --ok-bg: #dafbe1; --trim: #0550ae; --trim-bg: #ddf4ff;
  --prune: #6639ba; --prune-bg: #fbefff; --cut: #953800; --cut-bg: #fff1e5;
  --fail: #a40e26; --fail-bg: #ffebe9; --rep: #59636e; --rep-bg: #eff2f5;
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--wash); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif; }
main { max-width: 1040px; margin: 0 auto; padding: 24px 20px 48px; }
h1 { font-size: 22px; margin: 0 0 8px; }
h2 { font-size: 17px; margin: 0 0 12px; }
h3 { font-size: 14px; margin: 0 0 6px; color: var(--muted); text-transform: uppercase;
  letter-spacing: .04em; }
section, header.summary { background: var(--paper); border: 1px solid var(--line);
  border-radius: 8px; padding: 16px 20px; margin: 0 0 16px; }
code, pre, .mono { font-family: ui-monospace, "SFMono-Regular", "DejaVu Sans Mono",
  Menlo, Consolas, monospace; font-size: 13px; }
pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.question-text { font-size: 16px; margin: 0 0 12px; white-space: pre-wrap;
  overflow-wrap: anywhere; }
.stop { display: inline-block; padding: 3px 10px; border-radius: 999px; font-weight: 600;
  margin: 0 0 10px; border: 1px solid transparent; }
.stop.ok { background: var(--ok-bg); color: var(--ok); border-color: #aceebb; }
.stop.flag { background: var(--cut-bg); color: var(--warn); border-color: #ffd8b5; }
.stop.failed { background: var(--fail-bg); color: var(--fail); border-color: #ffcecb; }
.error { background: var(--fail-bg); color: var(--fail); border: 1px solid #ffcecb;
  border-radius: 6px; padding: 8px 12px; margin: 0 0 12px; white-space: pre-wrap;
  overflow-wrap: anywhere; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(150px, 1fr));
  gap: 8px 16px; margin: 0; }
.facts div { border-left: 3px solid var(--line); padding-left: 8px; }
.facts dt { color: var(--muted); font-size: 12px; }
.facts dd { margin: 0; font-weight: 600; font-variant-numeric: tabular-nums; }
.muted { color: var(--muted); }
.turn { border-radius: 8px; padding: 10px 14px; margin: 0 0 12px; }
.turn .who { font-size: 12px; font-weight: 700; text-transform: uppercase;
  letter-spacing: .04em; color: var(--muted); margin-bottom: 2px; }
.turn.user { background: var(--trim-bg); }
.turn.answer { background: var(--ok-bg); }
.turn.no-answer { background: var(--rep-bg); }
.turn .body { white-space: pre-wrap; overflow-wrap: anywhere; }
.step { border-left: 3px solid var(--line); padding: 2px 0 2px 14px; margin: 0 0 14px; }
.step-head { display: flex; align-items: baseline; gap: 12px; flex-wrap: wrap;
  margin: 0 0 6px; }
.step-head h3 { margin: 0; }
.step-requests, .no-calls { font-size: 13px; }
.no-calls { margin: 0; }
.calls { list-style: none; padding: 0; margin: 0; }
.call { display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: 2px 12px;
  padding: 8px 10px; border: 1px solid var(--line); border-radius: 6px; margin: 0 0 6px; }
.call .sig { overflow-wrap: anywhere; }
.call .name { font-weight: 700; }
.call .args { color: var(--muted); }
.call .sizes { text-align: right; white-space: nowrap; color: var(--muted);
  font-variant-numeric: tabular-nums; }
.call .notes { grid-column: 1 / -1; margin: 0; padding-left: 18px; color: var(--muted);
  font-size: 13px; }
.badge { display: inline-block; padding: 0 8px; border-radius: 999px; font-size: 12px;
  font-weight: 700; margin-left: 6px; vertical-align: 1px; }
/* Child selectors: a sub-run's calls sit inside their caller's and keep their own colours. */
.fate-kept > .sig > .badge { background: var(--ok-bg); color: var(--ok); }
.fate-trimmed > .sig > .badge { background: var(--trim-bg); color: var(--trim); }
.fate-pruned > .sig > .badge { background: var(--prune-bg); color: var(--prune); }
.fate-cut > .sig > .badge { background: var(--cut-bg); color: var(--cut); }
.fate-failed > .sig > .badge { background: var(--fail-bg); color: var(--fail); }
.fate-failed { border-color: #ffcecb; }
.fate-repeat > .sig > .badge, .fate-other > .sig > .badge { background: var(--rep-bg);
  color: var(--rep); }
.call .sub-run { grid-column: 1 / -1; margin: 4px 0 0; padding: 4px 0 2px 12px;
  border-left: 3px solid var(--prune); }
.sub-run > summary { cursor: pointer; font-size: 13px; }
.sub-run > summary .stop { margin: 0 6px 0 0; padding: 0 8px; font-size: 12px; }
.sub-run .sub-question { margin: 4px 0 6px; white-space: pre-wrap; overflow-wrap: anywhere; }
.sub-run .calls { margin-top: 4px; }
.sub-run .sub-answer { margin: 6px 0 2px; padding: 4px 8px; border-radius: 6px;
  background: var(--ok-bg); white-space: pre-wrap; overflow-wrap: anywhere; }
.sub-run .sub-answer.muted { background: var(--rep-bg); }
.sub-answer .who { font-size: 12px; font-weight: 700; text-transform: uppercase;
  letter-spacing: .04em; color: var(--muted); }
.run-by { margin: 0 0 8px; color: var(--muted); }
.run-by code { color: var(--ink); font-weight: 600; }
.step-time { font-size: 13px; font-weight: 600; font-variant-numeric: tabular-nums; }
.step.prefetch { border-left-color: var(--trim); }
.call .result { grid-column: 1 / -1; margin: 2px 0 0; }
.result > summary { cursor: pointer; font-size: 13px; color: var(--accent); }
.result .result-text { max-height: 320px; overflow: auto; margin: 4px 0 0;
  padding: 6px 8px; background: var(--wash); border: 1px solid var(--line);
  border-radius: 4px; }
ul.events { margin: 0 0 12px; padding-left: 20px; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 8px; border-bottom: 1px solid var(--line); text-align: right; }
th { font-size: 12px; color: var(--muted); font-weight: 600; background: var(--wash); }
td.left, th.left { text-align: left; }
tr.near td.share { color: var(--warn); font-weight: 700; }
tr.over td.share { color: var(--window); font-weight: 700; }
.plot svg { display: block; width: 100%; height: auto; }
.plot text { font-family: system-ui, -apple-system, "Segoe UI", "DejaVu Sans", sans-serif;
  fill: var(--ink); }
.plot .tick { font-size: 11px; fill: var(--muted); }
.plot .axis-label { font-size: 12px; fill: var(--muted); }
.plot .grid { stroke: #eaeef2; }
.plot .axis { stroke: #8c959f; }
.plot .window-line { stroke: var(--window); stroke-width: 1.5; }
.plot .warn-line { stroke: var(--warn); stroke-width: 1.5; stroke-dasharray: 6 4; }
.plot .series-prompt { fill: none; stroke: var(--accent); stroke-width: 2; }
.plot .series-estimate { fill: none; stroke: var(--estimate); stroke-width: 1.5;
  stroke-dasharray: 4 3; }
.plot .point-reported { fill: var(--accent); stroke: var(--paper); stroke-width: 1.5; }
.plot .point-estimated { fill: var(--paper); stroke: var(--accent); stroke-width: 2; }
.plot .point-missing { fill: none; stroke: var(--muted); stroke-width: 2; }
.plot .estimate-point, .plot .estimate-mark { fill: var(--estimate); }
.plot .legend text { font-size: 12px; }
.plot .empty { font-size: 14px; fill: var(--muted); }
"""


def _head(title: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="leanloop.htmlreport">\n'
        f"<title>{_esc(title)}</title>\n<style>{_CSS}</style>\n</head>"
    )


def _summary(
    report: Mapping[str, Any],
    title: str,
    requests: list[Mapping[str, Any]],
    calls: list[Mapping[str, Any]],
) -> str:
    out = [f'<header class="summary" id="summary">\n<h1>{_esc(title)}</h1>']
    run_by = _run_by(report)
    if run_by:
        out.append(f'<p class="run-by" id="run-by">{run_by}</p>')
    question = _text(report.get("question"))
    if question is not None:
        out.append(f'<p class="question-text">{_esc(question)}</p>')
    stop = report.get("stop_reason")
    stop_text = str(stop) if isinstance(stop, str) and stop else "unknown"
    kind = "ok" if stop_text == "answer" else "failed" if stop_text == "failed" else "flag"
    meaning = _STOPS.get(stop_text) or describe_ending(report)
    meaning = meaning or "the report does not say how the run ended"
    mark = "" if kind == "ok" else "&#9888; "
    out.append(
        f'<div class="stop {kind}" id="stop-reason" data-stop="{_esc(stop_text)}">'
        f'{mark}stop: {_esc(stop_text)} <span class="muted">— {_esc(meaning)}</span></div>'
    )
    error = _text(report.get("error"))
    if error is not None:
        out.append(f'<div class="error" id="error"><strong>error:</strong> {_esc(error)}</div>')
    failed = sum(1 for call in calls if _fate(call) == "failed")
    call_text = _plural(len(calls), "call") + (f" ({failed:,} failed)" if failed else "")
    facts: list[tuple[str, str]] = [
        ("steps", _num(report.get("steps"))),
        ("tool calls", call_text),
        ("requests", f"{len(requests):,}"),
        ("prompt tokens", _prompt_total(requests)),
        ("elapsed", _elapsed(report.get("elapsed_s"))),
        ("window", _window(report)),
    ]
    mode = _text(report.get("tool_mode"))
    if mode is not None:
        facts.append(("tool mode", mode))
    for label, key in _COUNTS:
        if _int(report.get(key)):  # shown only when something happened
            facts.append((label, _num(report.get(key))))
    out.append('<dl class="facts">')
    out.extend(f"<div><dt>{_esc(label)}</dt><dd>{_esc(value)}</dd></div>" for label, value in facts)
    out.append("</dl>\n</header>")
    return "\n".join(out)


def _run_by(report: Mapping[str, Any]) -> str:
    """``agent reader · model qwen2.5-coder`` (HTML), or ``""`` when the report names neither."""
    parts = [
        f'{label} <code class="{label}-name">{_esc(value)}</code>'
        for label, value in (
            ("agent", _text(report.get("agent"))),
            ("model", _text(report.get("model"))),
        )
        if value is not None
    ]
    return " · ".join(parts)


def _prompt_total(requests: list[Mapping[str, Any]]) -> str:
    reported = [r for r, _ in map(_prompt_tokens, requests) if r is not None]
    if reported:
        return f"{sum(reported):,}"
    estimated = [e for _, e in map(_prompt_tokens, requests) if e is not None]
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
    window = _int(report.get("window"))
    if window is None:
        return "-"
    source = _text(report.get("window_source"))
    return f"{window:,}" + (f" ({source})" if source else "")


# --- the conversation ---------------------------------------------------------------------


def _conversation(
    report: Mapping[str, Any],
    answer: str | None,
    requests: list[Mapping[str, Any]],
    calls: list[Mapping[str, Any]],
) -> str:
    out = ['<section id="conversation">\n<h2>The conversation</h2>']
    question = _text(report.get("question"))
    out.append(
        '<div class="turn user" id="question"><div class="who">question</div>'
        f'<div class="body">{_esc(question) if question else _DASH}</div></div>'
    )
    # A call or request without a step is kept apart (``None``) from the prefetch's step 0.
    by_step: dict[int | None, list[Mapping[str, Any]]] = {}
    for call in calls:
        by_step.setdefault(_int(call.get("step")), []).append(call)
    asked: dict[int | None, list[tuple[int, Mapping[str, Any]]]] = {}
    for number, request in enumerate(requests, start=1):
        asked.setdefault(_int(request.get("step")), []).append((number, request))
    prefetched = _strings(report.get("prefetched"))
    if prefetched and _PREFETCH_STEP not in by_step:  # the files, when their calls are not
        files = ", ".join(f"<code>{_esc(name)}</code>" for name in prefetched)
        out.append(f'<p class="prefetched muted">read before the first step: {files}</p>')
    steps = sorted(set(by_step) | set(asked), key=lambda s: (s is None, s or 0))
    for step in steps:
        out.append(_step(step, by_step.get(step, []), asked.get(step, [])))
    stop = report.get("stop_reason")
    if answer is not None:
        out.append(
            '<div class="turn answer" id="answer"><div class="who">answer</div>'
            f'<div class="body">{_esc(answer)}</div></div>'
        )
    else:
        why = "the run failed before it answered" if stop == "failed" else "no answer recorded"
        out.append(
            '<div class="turn no-answer" id="answer"><div class="who">answer</div>'
            f'<div class="body muted">{_esc(why)}</div></div>'
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
        reported, estimated = _prompt_tokens(request)
        kind = _text(request.get("kind")) or "step"
        figure = f"request {number}" if kind == "step" else f"{kind} request {number}"
        if reported is not None:
            figure += f" · {reported:,} prompt tokens"
        elif estimated is not None:
            figure += f" · ~{estimated:,} prompt tokens (estimated)"
        figures.append(figure)
    head = f'<div class="step-head"><h3>{_esc(label)}</h3>'
    took = _step_time(calls, [request for _, request in requests])
    if took:
        head += f'<span class="step-time">{_esc(took)}</span>'
    if prefetch:
        head += (
            '<span class="muted step-requests">'
            "files the question names, read before the first request</span>"
        )
    if figures:
        head += f'<span class="muted step-requests">{_esc("; ".join(figures))}</span>'
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
    name = _text(call.get("name")) or "?"
    badge = fate
    trimmed_at = _int(call.get("trimmed_at"))
    if fate == "trimmed" and trimmed_at is not None:
        badge = f"trimmed at step {trimmed_at}"
    fate_class = fate if fate in FATES else "other"
    args = call.get("args")
    shown = _args(args) if isinstance(args, Mapping) else ""
    sizes = _sizes(call, fate)
    notes = _strings(call.get("notes"))
    repaired_from = _text(call.get("repaired_from"))
    if repaired_from is not None:
        notes.insert(0, f"the model wrote {repaired_from}")
    notes_html = (
        '<ul class="notes">' + "".join(f"<li>{_esc(note)}</li>" for note in notes) + "</ul>"
        if notes
        else ""
    )
    sub = call.get("sub_report")
    sub_html = _sub_run(name, sub, depth + 1) if isinstance(sub, Mapping) else ""
    return (
        f'<li class="call fate-{fate_class}" data-fate="{_esc(fate)}">'
        f'<div class="sig mono"><span class="name">{_esc(name)}</span>'
        f'<span class="args">({_esc(shown)})</span>'
        f'<span class="badge">{_esc(badge)}</span></div>'
        f'<div class="sizes">{_esc(sizes)}</div>{notes_html}{_result(call, fate)}{sub_html}</li>'
    )


def _result(call: Mapping[str, Any], fate: str) -> str:
    """The result as the model received it, folded (``<details>``); ``""`` when the
    report did not keep it."""
    preview = call.get("result_preview")
    if not isinstance(preview, str):
        return ""
    what = {"repeat": "the reminder the model got", "failed": "the error the model saw"}
    label = what.get(fate, "the result as the model saw it")
    whole = _int(call.get("chars_out"))
    if whole is not None and whole > len(preview):
        label += f" (its first {len(preview):,} of {whole:,} chars)"
    body = _esc(preview) if preview else '<span class="muted">(empty)</span>'
    return (
        f'<details class="result"><summary>{_esc(label)}</summary>'
        f'<pre class="result-text">{body}</pre></details>'
    )


def _sub_run(agent: str, report: Mapping[str, Any], depth: int) -> str:
    """The run an ``agent:NAME`` call made: a summary line, then its question, error,
    events, tool calls (each call as in the main run, its own sub-runs nested again) and
    answer (the ``answer`` key the agent tool adds; ``None`` for a sub-run that failed).
    """
    requests = _rows(report.get("requests"))
    calls = _rows(report.get("tool_calls"))
    stop = _text(report.get("stop_reason")) or "unknown"
    kind = "ok" if stop == "answer" else "failed" if stop == "failed" else "flag"
    failed = sum(1 for call in calls if _fate(call) == "failed")
    steps = _int(report.get("steps"))
    model = _text(report.get("model"))
    figures = [
        f"sub-run of {agent}" + (f" on {model}" if model is not None else ""),
        _plural(steps, "step") if steps is not None else "- steps",
        _plural(len(calls), "tool call") + (f" ({failed:,} failed)" if failed else ""),
        _plural(len(requests), "request"),
    ]
    reported = [r for r, _ in map(_prompt_tokens, requests) if r is not None]
    estimated = [e for _, e in map(_prompt_tokens, requests) if e is not None]
    if reported:
        figures.append(f"{sum(reported):,} prompt tokens")
    elif estimated:
        figures.append(f"~{sum(estimated):,} prompt tokens (estimated)")
    elapsed = _elapsed(report.get("elapsed_s"))
    if elapsed != "-":
        figures.append(elapsed)
    out = [
        f'<details class="sub-run" open data-agent="{_esc(agent)}" data-stop="{_esc(stop)}">'
        f'<summary><span class="stop {kind}">stop: {_esc(stop)}</span>'
        f'<span class="sub-figures">{_esc(" · ".join(figures))}</span></summary>'
    ]
    question = _text(report.get("question"))
    if question is not None:
        out.append(f'<div class="sub-question">{_esc(question)}</div>')
    error = _text(report.get("error"))
    if error is not None:
        out.append(f'<div class="error"><strong>error:</strong> {_esc(error)}</div>')
    events = _strings(report.get("events"))
    if events:
        out.append('<ul class="events">' + "".join(f"<li>{_esc(e)}</li>" for e in events) + "</ul>")
    if calls and depth < _SUB_RUN_DEPTH:
        out.append('<ul class="calls">' + "".join(_call(c, depth) for c in calls) + "</ul>")
    elif calls:
        out.append('<p class="muted">nested too deeply to show its calls</p>')
    answer = _text(report.get("answer"))
    if answer is not None:
        out.append(
            '<div class="sub-answer"><span class="who">answer</span> '
            f'<span class="body">{_esc(answer)}</span></div>'
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
    raw, out, cut_from = (_int(call.get(k)) for k in ("chars_raw", "chars_out", "cut_from"))
    took = _seconds(call.get("seconds"))
    time = f" · {_elapsed(took)}" if took is not None else ""
    if fate == "repeat":
        return "not run" + (f" · {out:,} chars reminder" if out is not None else "")
    if raw is None and out is None:
        return time.removeprefix(" · ")
    text = f"{raw:,} chars" if raw == out else f"{_num(raw)} → {_num(out)} chars"
    if call.get("pruned"):
        text += " (pruned)"
    elif cut_from is not None:
        # The cap cuts the tool's own output, so its size is said once; a report whose
        # figures differ says both.
        text += " (cut)" if cut_from == raw else f" (cut from {cut_from:,})"
    return text + time


# --- what the loop did to the context -----------------------------------------------------


def _context(report: Mapping[str, Any]) -> str:
    events = _strings(report.get("events"))
    fallbacks = _rows(report.get("pruning_fallbacks"))
    out = ['<section id="context">\n<h2>Context events</h2>']
    if events:
        out.append('<ul class="events">' + "".join(f"<li>{_esc(e)}</li>" for e in events) + "</ul>")
    else:
        out.append('<p class="muted">no context events</p>')
    if fallbacks:
        out.append(
            '<h3>Pruning fallbacks</h3>\n<table class="fallbacks">\n<thead><tr><th>step</th>'
            '<th class="left">tool</th><th class="left">reason</th></tr></thead>\n<tbody>'
        )
        out.extend(
            f'<tr class="fallback"><td>{_num(row.get("step"))}</td>'
            f'<td class="left mono">{_esc(row.get("tool", "-"))}</td>'
            f'<td class="left">{_esc(row.get("reason", "-"))}</td></tr>'
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
        reported, estimated = _prompt_tokens(request)
        tokens = reported if reported is not None else estimated
        window = _int(request.get("window"))
        share, level = "-", ""
        if tokens is not None and window:
            ratio = tokens / window
            share = f"{ratio:.0%}"
            level = " over" if ratio > 1 else " near" if ratio >= 0.75 else ""
        time_cell = (
            f'<td class="time">{_esc(_elapsed(request.get("seconds")))}</td>' if timed else ""
        )
        offered = request.get("tools")
        tools = "yes" if offered is True else "no" if offered is False else "-"
        out.append(
            f'<tr class="request{level}" data-request="{number}"><td>{number}</td>'
            f"<td>{_num(request.get('step'))}</td>"
            f'<td class="left">{_esc(_text(request.get("kind")) or "-")}</td>'
            f"<td>{_num(request.get('messages'))}</td><td>{_num(estimated)}</td>"
            f"<td>{_num(reported)}</td><td>{_num(request.get('output_tokens'))}</td>"
            f"{time_cell}"
            f"<td>{_num(request.get('ceiling'))}</td><td>{_num(window)}</td>"
            f'<td class="share">{_esc(share)}</td><td class="left">{tools}</td></tr>'
        )
    out.append("</tbody>\n</table>\n</section>")
    return "\n".join(out)


# --- the plot ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Frame:
    """Where the plot area lies in the SVG, and the scales of its axes."""

    left: float = 72
    right: float = 24
    top: float = 48
    bottom: float = 52
    width: float = 960
    height: float = 340
    count: int = 1
    y_max: float = 1

    @property
    def inner_width(self) -> float:
        return self.width - self.left - self.right

    @property
    def inner_height(self) -> float:
        return self.height - self.top - self.bottom

    def x(self, number: int) -> float:
        """The x of request ``number`` (1-based)."""
        if self.count <= 1:
            return self.left + self.inner_width / 2
        pad = min(24.0, self.inner_width / (2 * self.count))
        span = self.inner_width - 2 * pad
        return self.left + pad + span * (number - 1) / (self.count - 1)

    def y(self, value: float) -> float:
        """The y of ``value`` tokens, kept inside the plot area."""
        shown = min(max(value, 0.0), self.y_max)
        return self.top + self.inner_height * (1 - shown / self.y_max)


def _nice_step(top: float, ticks: int = 5) -> float:
    """A round tick step (1, 2, 2.5 or 5 times a power of ten, at least 1) for ``top``."""
    raw = max(top / ticks, 1.0)
    power = 10 ** math.floor(math.log10(raw))
    factors = (1, 2, 2.5, 5, 10) if power >= 10 else (1, 2, 5, 10)
    return float(next(f * power for f in factors if raw <= f * power))


def _plot_section(requests: list[Mapping[str, Any]], window: int | None) -> str:
    return (
        '<section id="plot" class="plot">\n<h2>Prompt tokens per request</h2>\n'
        f"{_plot(requests, window)}\n</section>"
    )


def _plot(requests: list[Mapping[str, Any]], window: int | None) -> str:
    figures = [_prompt_tokens(r) for r in requests]
    values = [v for pair in figures for v in pair if v is not None]
    if window is None:
        windows = [w for w in (_int(r.get("window")) for r in requests) if w]
        window = windows[-1] if windows else None
    # Headroom above the highest figure (or the window) so that no point sits on the frame.
    top = (max([*values, window or 0]) or _EMPTY_TOP) * 1.08
    step = _nice_step(top)
    frame = _Frame(count=max(1, len(requests)), y_max=step * math.ceil(top / step))
    svg = [
        f'<svg viewBox="0 0 {frame.width:g} {frame.height:g}" role="img" '
        'aria-labelledby="plot-title" id="tokens-plot">',
        '<title id="plot-title">Prompt tokens per request against the context window</title>',
    ]
    svg.extend(_axes(frame, step, len(requests)))
    if not requests:
        svg.append(
            f'<text class="empty" x="{frame.left + frame.inner_width / 2:g}" '
            f'y="{frame.top + frame.inner_height / 2:g}" text-anchor="middle">'
            "no requests recorded</text>"
        )
    legend: list[tuple[str, str]] = []
    if window:
        legend += _limit_lines(frame, window, svg)
    legend += _series(frame, requests, figures, svg)
    svg.extend(_legend(frame, legend))
    svg.append("</svg>")
    return "\n".join(svg)


def _axes(frame: _Frame, step: float, count: int) -> list[str]:
    out = []
    bottom = frame.top + frame.inner_height
    right = frame.left + frame.inner_width
    tick = 0.0
    while tick <= frame.y_max + step / 2:
        y = frame.y(tick)
        out.append(
            f'<line class="grid" x1="{frame.left:g}" x2="{right:g}" y1="{y:.1f}" y2="{y:.1f}"/>'
        )
        out.append(
            f'<text class="tick" x="{frame.left - 8:g}" y="{y + 4:.1f}" '
            f'text-anchor="end">{int(tick):,}</text>'
        )
        tick += step
    out.append(
        f'<line class="axis" x1="{frame.left:g}" x2="{frame.left:g}" y1="{frame.top:g}" '
        f'y2="{bottom:g}"/>'
    )
    out.append(
        f'<line class="axis" x1="{frame.left:g}" x2="{right:g}" y1="{bottom:g}" y2="{bottom:g}"/>'
    )
    every = max(1, math.ceil(count / 20))
    for number in range(1, count + 1):
        if number % every and number != 1:
            continue
        x = frame.x(number)
        out.append(
            f'<text class="tick" x="{x:.1f}" y="{bottom + 16:g}" text-anchor="middle">'
            f"{number}</text>"
        )
    out.append(
        f'<text class="axis-label" x="{frame.left + frame.inner_width / 2:g}" '
        f'y="{frame.height - 10:g}" text-anchor="middle">request</text>'
    )
    middle = frame.top + frame.inner_height / 2
    out.append(
        f'<text class="axis-label" x="16" y="{middle:g}" text-anchor="middle" '
        f'transform="rotate(-90 16 {middle:g})">prompt tokens</text>'
    )
    return out


def _limit_lines(frame: _Frame, window: int, svg: list[str]) -> list[tuple[str, str]]:
    right = frame.left + frame.inner_width
    for value, css, label in (
        (window, "window-line", f"window {window:,}"),
        (window * 0.75, "warn-line", f"75% {int(window * 0.75):,}"),
    ):
        y = frame.y(value)
        svg.append(
            f'<line class="{css}" x1="{frame.left:g}" x2="{right:g}" y1="{y:.1f}" y2="{y:.1f}"/>'
        )
        svg.append(
            f'<text class="tick" x="{right - 4:g}" y="{y - 5:.1f}" text-anchor="end">'
            f"{_esc(label)}</text>"
        )
    return [("window-line", "context window"), ("warn-line", "75% of the window")]


def _series(
    frame: _Frame,
    requests: list[Mapping[str, Any]],
    figures: list[tuple[int | None, int | None]],
    svg: list[str],
) -> list[tuple[str, str]]:
    legend: list[tuple[str, str]] = []
    both = any(r is not None and e is not None for r, e in figures)
    any_reported = any(r is not None for r, _ in figures)
    any_estimated_only = any(r is None and e is not None for r, e in figures)
    if both:
        line = [(n, e) for n, (_, e) in enumerate(figures, start=1) if e is not None]
        svg.append(_polyline(frame, "series-estimate", line))
        for number, value in line:
            svg.append(
                f'<circle class="estimate-point" cx="{frame.x(number):.1f}" '
                f'cy="{frame.y(value):.1f}" r="2.5"><title>request {number}: estimated '
                f"{value:,} tokens</title></circle>"
            )
        legend.append(("series-estimate", "leanloop's estimate"))
    primary = [
        (n, r if r is not None else e)
        for n, (r, e) in enumerate(figures, start=1)
        if r is not None or e is not None
    ]
    svg.append(_polyline(frame, "series-prompt", [(n, v) for n, v in primary if v is not None]))
    bottom = frame.top + frame.inner_height
    for number, (request, (reported, estimated)) in enumerate(
        zip(requests, figures, strict=True), start=1
    ):
        kind = _text(request.get("kind")) or "step"
        step = _num(request.get("step"))
        where = f"request {number} (step {step}, {kind})"
        if reported is not None:
            tip = f"{where}: {reported:,} prompt tokens reported" + (
                f", {estimated:,} estimated" if estimated is not None else ""
            )
            css, y = "point point-reported", frame.y(reported)
        elif estimated is not None:
            css, y = "point point-estimated", frame.y(estimated)
            tip = f"{where}: {estimated:,} prompt tokens estimated (none reported)"
        else:
            css, y = "point point-missing", bottom
            tip = f"{where}: no token figure"
        svg.append(
            f'<circle class="{css}" data-request="{number}" cx="{frame.x(number):.1f}" '
            f'cy="{y:.1f}" r="4.5"><title>{_esc(tip)}</title></circle>'
        )
    if any_reported:
        legend.append(("point-reported", "reported by the server"))
    if any_estimated_only:
        label = "estimated, not reported" if any_reported else "estimated prompt tokens"
        legend.append(("point-estimated", label))
    if any(r is None and e is None for r, e in figures):
        legend.append(("point-missing", "no token figure"))
    return legend


def _polyline(frame: _Frame, css: str, points: list[tuple[int, int]]) -> str:
    coords = " ".join(f"{frame.x(n):.1f},{frame.y(v):.1f}" for n, v in points)
    return f'<polyline class="{css}" points="{coords}"/>'


def _legend(frame: _Frame, entries: list[tuple[str, str]]) -> list[str]:
    """One row of legend entries above the plot area."""
    x, y = frame.left, frame.top - 20
    out = ['<g class="legend">']
    for css, label in entries:
        if css.startswith("point"):
            mark = f'<circle class="legend-mark {css}" cx="{x + 10:g}" cy="{y:g}" r="4.5"/>'
        elif css == "series-estimate":
            mark = (
                f'<line class="{css}" x1="{x:g}" x2="{x + 20:g}" y1="{y:g}" y2="{y:g}"/>'
                f'<circle class="legend-mark estimate-mark" cx="{x + 10:g}" cy="{y:g}" r="2.5"/>'
            )
        else:
            mark = f'<line class="{css}" x1="{x:g}" x2="{x + 20:g}" y1="{y:g}" y2="{y:g}"/>'
        out.append(f'{mark}<text x="{x + 26:g}" y="{y + 4:g}">{_esc(label)}</text>')
        x += 26 + _LEGEND_CHAR * len(label) + 22
    out.append("</g>")
    return out
