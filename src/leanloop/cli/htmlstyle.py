"""The HTML page's assets: its stylesheet and its ``<head>``.

The page of a run (:mod:`leanloop.cli.htmlreport`) is one self-contained file: the CSS is
inline in a ``<style>`` element, there are no scripts and no external addresses. The
class names here are the ones the renderers and the plot (:mod:`leanloop.cli.htmlplot`)
write.
"""

from __future__ import annotations

from leanloop.cli.htmlvalues import esc

__all__ = ["CSS", "page_head"]

CSS = """
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
"""The page's stylesheet, inline in its ``<style>`` element."""


def page_head(title: str) -> str:
    """The page's start, up to its ``<body>``: the doctype, the ``<head>`` and the stylesheet.

    Args:
        title: The page's title, escaped here.
    """
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="generator" content="leanloop.htmlreport">\n'
        f"<title>{esc(title)}</title>\n<style>{CSS}</style>\n</head>"
    )
