"""The run report: what one run did, step by step, and what it did to the context.

It travels with the answer as ``AIMessage.response_metadata["leanloop"]`` (a plain,
JSON-ready dict), so pipelines and the CLI read the same figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = [
    "ENDED_OTHERWISE",
    "RequestRecord",
    "RunReport",
    "StopReason",
    "ToolCallRecord",
    "format_report",
    "summary_line",
]

StopReason = Literal["answer", "max_rounds", "budget_exhausted", "repeated_calls", "failed"]

ENDED_OTHERWISE: frozenset[str] = frozenset({"max_rounds", "budget_exhausted", "repeated_calls"})
"""Stop reasons of a run that ended with a composed answer instead of the model's own."""


@dataclass(kw_only=True)
class ToolCallRecord:
    """One tool call the loop handled."""

    step: int
    name: str
    args: dict[str, Any]
    chars_out: int
    """Characters of the result the model saw."""
    chars_raw: int
    """Characters the tool produced, before caps and pruning."""
    ok: bool = True
    pruned: bool = False
    repeated: bool = False
    """A repeat of an earlier identical call, answered with a reminder (not run)."""
    repaired: bool = False
    """The call was mended to run (tool name, argument names or values, a missing path)."""
    repaired_from: str | None = None
    """The tool name the model wrote, when ``name`` is the repaired one."""
    notes: list[str] = field(default_factory=list)
    cut_from: int | None = None
    """Characters of the result before the per-result cap cut it to ``chars_out``."""
    trimmed_at: int | None = None
    """The first request (step) whose view carried this result trimmed."""
    result_id: str | None = None
    """The id of the message that carried the result (shared by a text-mode turn)."""
    timed_out: bool = False
    """The call ran past the agent's ``tool_timeout`` and was given up (``ok`` is false)."""
    retries: int = 0
    """Times the call was made again after a transient error (the tool's ``retries``)."""
    sub_report: dict[str, Any] | None = None
    """The whole report of the run an ``agent:NAME`` call made (the sub-agent's
    ``RunReport.to_dict()``; a failed sub-run's partial report); ``None`` for other tools."""

    @property
    def fate(self) -> str:
        """What happened to the result: repeat, failed, trimmed, pruned, cut or kept."""
        if self.repeated:
            return "repeat"
        if not self.ok:
            return "failed"
        if self.trimmed_at is not None:
            return "trimmed"
        if self.pruned:
            return "pruned"
        return "cut" if self.cut_from is not None else "kept"


@dataclass(kw_only=True)
class RequestRecord:
    """One request to the chat model."""

    step: int
    messages: int
    input_tokens: int | None = None
    """The prompt size the server reported (``reported_input_tokens`` in the dict)."""
    output_tokens: int | None = None
    estimated_tokens: int | None = None
    """The request's size as the budget judged it: the server's own count when it gave
    one (``counted``), else the character estimate."""
    counted: bool = False
    """``estimated_tokens`` is the server's count (llama.cpp ``/apply-template`` and
    ``/tokenize``), made before the request was sent."""
    char_estimate_tokens: int | None = None
    """The character estimate of the request (the figure without the server's count)."""
    ceiling: int | None = None
    window: int | None = None
    tools: bool = True
    """Whether tools were offered on this request."""
    kind: str = "step"
    """``step``, ``final`` (the tool-less answer request) or ``retry`` (a step sent again,
    smaller or in text mode, after the server refused it)."""


@dataclass(kw_only=True)
class RunReport:
    """Everything one run did, as plain values."""

    stop_reason: StopReason = "answer"
    steps: int = 0
    tool_mode: str = "native"
    window: int | None = None
    window_source: str | None = None
    window_note: str | None = None
    """Why the window is only a default (the probe failed, a hosted host said nothing)."""
    chars_per_token: float | None = None
    trimmed_results: int = 0
    """Distinct tool results trimmed in at least one request view."""
    tokens_saved_by_trimming: int = 0
    """Estimated tokens not sent, summed over every request (a result trimmed in three
    requests saves three times)."""
    chars_saved_by_pruning: int = 0
    overflow_recoveries: int = 0
    repeated_calls: int = 0
    """Identical calls answered from memory instead of being run again."""
    prefetched: list[str] = field(default_factory=list)
    """Workspace files named in the request and read before the first step."""
    prompt_profile: str = "default"
    question: str = ""
    """The user's question (the last human turn of the input)."""
    error: str | None = None
    """Why the run failed (``stop_reason`` ``failed``); ``None`` otherwise."""
    elapsed_s: float | None = None
    """Wall time of the run in seconds."""
    pruning_fallbacks: list[dict[str, Any]] = field(default_factory=list)
    """Pruning passes that ran but kept the raw output: ``step``, ``tool``, ``reason``."""
    session: dict[str, Any] | None = None
    """With a ``thread_id``: ``thread_id``, ``turn``, ``earlier_turns``, ``omitted_turns``
    (the most left out of one request), ``notes`` (the session's notes), ``resumed_from``
    (the step a resumed turn went on from, else ``None``)."""
    structured: dict[str, Any] | None = None
    """With an output schema: ``schema``, ``method`` (``native``/``text``), ``repairs``."""
    events: list[str] = field(default_factory=list)
    """Notable things that happened, one line each (mode switches, synthesis, recoveries)."""
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    requests: list[RequestRecord] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the report as a JSON-ready dict (the documented field names)."""
        data = asdict(self)
        data["repaired_calls"] = self.repaired_calls
        for request in data["requests"]:
            request["reported_input_tokens"] = request["input_tokens"]
        for call, record in zip(data["tool_calls"], self.tool_calls, strict=True):
            call["fate"] = record.fate
        return data

    def mark_trimmed(self, result_ids: set[str], *, step: int) -> None:
        """Record that the results carried by ``result_ids`` were trimmed from ``step`` on."""
        for call in self.tool_calls:
            if call.trimmed_at is None and call.result_id in result_ids:
                call.trimmed_at = step

    @property
    def input_tokens(self) -> int:
        """Total prompt tokens the server reported over the run."""
        return sum(r.input_tokens or 0 for r in self.requests)

    @property
    def output_tokens(self) -> int:
        """Total reply tokens the server reported over the run."""
        return sum(r.output_tokens or 0 for r in self.requests)

    @property
    def repaired_calls(self) -> int:
        """Calls that ran only after a repair (see ``ToolCallRecord.repaired``)."""
        return sum(call.repaired for call in self.tool_calls)


_ARG_WIDTH = 60


def format_report(report: Mapping[str, Any]) -> str:
    """The run report as readable lines: summary, one row per request, one per tool call.

    An ``agent:NAME`` call is followed by the summary line of the sub-run it made.

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
            sub = call.get("sub_report")
            if isinstance(sub, Mapping):  # an agent:NAME call: how its own run ended
                lines.append(f"{'':>7}  ↳ sub-run: {summary_line(sub)}")
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


def summary_line(report: Mapping[str, Any]) -> str:
    """One line that says how a run ended, from its report dict.

    ``stop: answer · 3 steps · 4 tool calls (1 failed) · 5 requests · 3,210 prompt tokens
    · 12.4 s``; fields the report lacks are left out, so a partial report still reads.
    """
    calls = _rows(report.get("tool_calls"))
    requests = _rows(report.get("requests"))
    failed = sum(1 for call in calls if call.get("ok") is False)
    parts = [f"stop: {report.get('stop_reason', '-')}", f"{_num(report.get('steps'))} steps"]
    parts.append(f"{len(calls)} tool calls" + (f" ({failed} failed)" if failed else ""))
    parts.append(f"{len(requests)} requests")
    prompt = _total(requests, "input_tokens")
    if prompt is not None:
        parts.append(f"{prompt:,} prompt tokens")
    elapsed = report.get("elapsed_s")
    if isinstance(elapsed, int | float):
        parts.append(f"{elapsed:.1f} s")
    return " · ".join(parts)
