"""The run page's approvals: who decided on each call that asked, and what waits (ADR 0037).

Two small tables, only on the page of a run that has them: the decisions (the report's
``approvals``) and, for a paused run, the calls that wait (``pending_calls``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from leanloop.cli.htmlvalues import esc, num, rows_of

__all__ = ["approvals_section"]


def approvals_section(report: Mapping[str, Any]) -> str:
    """The page's ``approvals`` section; ``""`` for a run where no call asked."""
    decisions = rows_of(report.get("approvals"))
    pending = rows_of(report.get("pending_calls"))
    if not decisions and not pending:
        return ""
    out = ['<section id="approvals">\n<h2>Approvals</h2>']
    if decisions:
        out.append(
            '<table class="approvals">\n<thead><tr><th>step</th><th class="left">call</th>'
            '<th class="left">tool</th><th class="left">decision</th><th class="left">by</th>'
            '<th class="left">edited arguments</th><th class="left">reason</th></tr></thead>'
            "\n<tbody>"
        )
        out.extend(
            f'<tr class="approval"><td>{num(row.get("step"))}</td>'
            f'<td class="left mono">{esc(row.get("call_id") or "-")}</td>'
            f'<td class="left mono">{esc(row.get("tool", "-"))}</td>'
            f'<td class="left">{esc(row.get("decision", "-"))}</td>'
            f'<td class="left">{esc(row.get("by", "-"))}</td>'
            f'<td class="left mono">{_json(row.get("args"))}</td>'
            f'<td class="left">{esc(row.get("reason") or "-")}</td></tr>'
            for row in decisions
        )
        out.append("</tbody>\n</table>")
    if pending:
        out.append(
            '<h3>Waiting for a decision</h3>\n<table class="pending">\n<thead><tr>'
            '<th class="left">call</th><th class="left">tool</th><th class="left">arguments'
            '</th><th class="left">preview</th></tr></thead>\n<tbody>'
        )
        out.extend(
            f'<tr class="pending"><td class="left mono">{esc(row.get("id") or "-")}</td>'
            f'<td class="left mono">{esc(row.get("tool", "-"))}</td>'
            f'<td class="left mono">{_json(row.get("args"))}</td>'
            f'<td class="left"><pre>{esc(row.get("preview") or "-")}</pre></td></tr>'
            for row in pending
        )
        out.append("</tbody>\n</table>")
    out.append("</section>")
    return "\n".join(out)


def _json(value: object) -> str:
    if value is None:
        return "-"
    return esc(json.dumps(value, ensure_ascii=False, default=str))
