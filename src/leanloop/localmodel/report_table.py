"""Render an agent's run report (``response_metadata["leanloop"]``) as a plain-text table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["format_report"]

_ARG_WIDTH = 60


def format_report(report: Mapping[str, Any]) -> str:
    """The run report as readable lines: summary, one row per request, one per tool call.

    Unknown fields are ignored and missing ones shown as ``-``, so the table keeps
    working while later work adds fields to the report.
    """
    requests = _rows(report.get("requests"))
    calls = _rows(report.get("tool_calls"))
    lines = [
        f"stop reason: {report.get('stop_reason', '-')} · steps: {report.get('steps', '-')}"
        f" · tool calls: {len(calls)} · requests: {len(requests)}",
        *_context_line(report),
        "",
        f"{'request':>7}  {'messages':>8}  {'input tokens':>12}  {'output tokens':>13}",
    ]
    for number, row in enumerate(requests, start=1):
        lines.append(
            f"{number:>7}  {_num(row.get('messages')):>8}  {_num(row.get('input_tokens')):>12}"
            f"  {_num(row.get('output_tokens')):>13}"
        )
    total_in = _total(requests, "input_tokens")
    total_out = _total(requests, "output_tokens")
    lines.append(f"{'total':>7}  {'':>8}  {_num(total_in):>12}  {_num(total_out):>13}")
    if calls:
        texts = [_call_text(call) for call in calls]
        width = max(len("tool"), *(len(text) for text in texts))
        lines += ["", f"{'call':>7}  {'tool':<{width}}  {'chars out':>9}"]
        for number, (call, text) in enumerate(zip(calls, texts, strict=True), start=1):
            lines.append(f"{number:>7}  {text:<{width}}  {_num(call.get('chars_out')):>9}")
    return "\n".join(lines)


def _context_line(report: Mapping[str, Any]) -> list[str]:
    """One line of what the loop did for the model, when it did anything."""
    prefetched = report.get("prefetched")
    parts = [
        f"{label}: {_num(value)}"
        for label, value in (
            ("files read before the first step", len(prefetched) if prefetched else 0),
            ("repaired calls", report.get("repaired_calls")),
            ("repeats not run", report.get("repeated_calls")),
        )
        if isinstance(value, int) and value
    ]
    return [" · ".join(parts)] if parts else []


def _rows(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [row for row in value if isinstance(row, Mapping)]


def _num(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "-"


def _total(rows: list[Mapping[str, Any]], key: str) -> int | None:
    values = [row.get(key) for row in rows]
    numbers = [v for v in values if isinstance(v, int)]
    return sum(numbers) if numbers else None


def _call_text(call: Mapping[str, Any]) -> str:
    args = call.get("args")
    shown = ", ".join(f"{k}={v}" for k, v in args.items()) if isinstance(args, Mapping) else ""
    text = f"{call.get('name', '?')}({shown})"
    if call.get("repeated"):
        text = f"{text} [repeat, not run]"
    elif call.get("repaired_from"):
        text = f"{text} [was {call['repaired_from']}]"
    elif call.get("repaired"):
        text = f"{text} [repaired]"
    return text if len(text) <= _ARG_WIDTH else text[: _ARG_WIDTH - 1] + "…"
