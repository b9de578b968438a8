"""The run report: what one run did, step by step, and what it did to the context.

It travels with the answer as ``AIMessage.response_metadata["leanloop"]`` (a plain,
JSON-ready dict), so pipelines and the CLI read the same figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from leanloop.cache_usage import RequestTally

__all__ = [
    "ENDED_OTHERWISE",
    "RESULT_PREVIEW_CHARS",
    "RequestRecord",
    "RunReport",
    "StopReason",
    "ToolCallRecord",
    "cached_share",
    "format_report",
    "prompt_totals",
    "result_preview",
    "summary_line",
]

StopReason = Literal[
    "answer", "max_rounds", "budget_exhausted", "repeated_calls", "no_answer", "failed", "paused"
]
"""How a run ended; ``paused``: it waits for a person to decide on tool calls (ADR 0037),
which is neither an answer nor an ending otherwise (:data:`ENDED_OTHERWISE`)."""

ENDED_OTHERWISE: frozenset[str] = frozenset(
    {"max_rounds", "budget_exhausted", "repeated_calls", "no_answer"}
)
"""Stop reasons of a run that ended without the model's own answer: a limit stopped it
(its text is the last, tool-less reply, or the ending's own words) or the model's reply
was not an answer (``no_answer``: it wrote back the loop's instruction or the question)."""

RESULT_PREVIEW_CHARS = 4_000
"""Characters of a tool result the report keeps (``ToolCallRecord.result_preview``): enough
to see what the model was given, while a run of many large results keeps a report (and
``leanloop run --json``) of a readable size."""


def result_preview(text: str) -> str:
    """The start of a tool result as the report dumps it (:data:`RESULT_PREVIEW_CHARS`).

    A record keeps the result itself (the string the history holds too, no copy);
    :meth:`RunReport.to_dict` cuts it with this.

    Args:
        text: The result as the model received it (pruned, escaped and capped).

    Returns:
        ``text`` itself when it is short enough, else its first characters; the record's
        ``chars_out`` says how long the whole result was.
    """
    return text[:RESULT_PREVIEW_CHARS]


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
    seconds: float | None = None
    """Wall time of the call, from the start of the tool to its result as the model got it
    (pruning included); ``None`` for a repeat (not run) or when not measured."""
    result_preview: str | None = None
    """The result as the model received it, after pruning, escaping and the cap (a
    repeat's reminder, a failure's error text), kept by reference; the report's dict holds
    its start (at most :data:`RESULT_PREVIEW_CHARS`); ``None`` when not recorded."""

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
    prompt_evaluated: int | None = None
    """Prompt tokens the server computed for this request (llama.cpp ``timings.prompt_n``);
    ``None`` when the reply did not say how its prompt was split (:mod:`leanloop.cache_usage`)."""
    prompt_cached: int | None = None
    """Prompt tokens the server's prompt cache served (llama.cpp reuses the common prefix
    with the slot's previous prompt; ``cached_tokens``); ``None`` when unknown."""
    seconds: float | None = None
    """Wall time from sending the request to its whole reply; ``None`` when not measured."""


@dataclass(kw_only=True)
class RunReport:
    """Everything one run did, as plain values."""

    stop_reason: StopReason = "answer"
    agent: str | None = None
    """The name of the agent that ran (``AgentSpec.name``); ``None`` when it has none."""
    model: str | None = None
    """The model name the agent's server was asked for (``ModelSpec.model``)."""
    steps: int = 0
    """The steps the run made: a step is one request to the model and the round of tool
    calls it asked for, so the request that answered counts (its step is the last)."""
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
    ending: str | None = None
    """What stopped a run that did not end with an answer, in a few words (the same
    words for the CLI, the page, ``serve`` and ``batch``); ``None`` for an answer."""
    rests_on: list[str] = field(default_factory=list)
    """The calls whose results the run read (``name(key=value)``): what its text rests on.
    Empty when no tool call returned data."""
    set_aside: str | None = None
    """The model's last reply when the run did not give it as the answer (it was not an
    answer, or it rested on no tool result); ``None`` otherwise."""
    answer_check: dict[str, Any] | None = None
    """How the answer's values were checked against what the tools returned
    (:mod:`leanloop.grounding`, the agent's ``answer_check``): ``verdict`` (``grounded``:
    each value found on the line that best matches the question; ``asked_again``: a
    doubtful answer replaced by the model's second one; ``kept``: asked again, the second
    answer did not settle the doubt; ``doubtful``: recorded only), ``check`` (one line:
    the values and their lines), ``first_answer`` (the answer replaced, when it was);
    ``None`` when nothing was checked (no answer, no value, nothing read)."""
    elapsed_s: float | None = None
    """Seconds the run took, on the event loop's clock: the clock of its time limits and
    of each request's and tool call's ``seconds`` (ADR 0038)."""
    pruning_fallbacks: list[dict[str, Any]] = field(default_factory=list)
    """Pruning passes that ran but kept the raw output: ``step``, ``tool``, ``reason``."""
    session: dict[str, Any] | None = None
    """With a ``thread_id``: ``thread_id``, ``turn``, ``earlier_turns``, ``omitted_turns``
    (the most left out of one request), ``notes`` (the session's notes), ``resumed_from``
    (the step a resumed turn went on from, else ``None``)."""
    notes: list[str] = field(default_factory=list)
    """With a session: the notes from earlier turns that this run's requests carried in
    their system message, as sent (one line each, escaped, the newest that fit), oldest
    first. ``session["notes"]`` holds all of the session's notes, this turn's too."""
    structured: dict[str, Any] | None = None
    """With an output schema: ``schema``, ``method`` (``native``/``text``), ``repairs``."""
    events: list[str] = field(default_factory=list)
    """Notable things that happened, one line each (mode switches, synthesis, recoveries)."""
    approvals: list[dict[str, Any]] = field(default_factory=list)
    """Every decision on a call that asks a person first (ADR 0037): ``step``,
    ``call_id``, ``tool``, ``decision`` (``approve``, ``edit``, ``reject``, ``pause``),
    ``by`` (``approver``, ``cli``, ``flag --approve-all``, ``resume``, ``repeat``,
    ``nobody``), ``args`` (the edited arguments), ``reason``. Left out of
    :meth:`to_dict` while empty."""
    pending_calls: list[dict[str, Any]] = field(default_factory=list)
    """A paused run's calls waiting for a decision: ``id``, ``tool``, ``args``, ``reason``,
    ``preview`` (an edit's diff, or ``None``). Left out of :meth:`to_dict` while empty."""
    edits: list[dict[str, Any]] = field(default_factory=list)
    """The run's edit journal (each change of a workspace file, with its whole diff).
    Left out of :meth:`to_dict` while empty."""
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    requests: list[RequestRecord] = field(default_factory=list)
    extraction: RequestTally | None = None
    """The pruning pass's requests over the run, added up: ``requests``, ``prompt_tokens``,
    ``prompt_evaluated``, ``prompt_cached``, ``completion_tokens``, ``seconds``; ``None``
    while none was answered (they are not in ``requests``, which are the main model's)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the report as a JSON-ready dict (the documented field names).

        Written out field by field: each record becomes a dict of its own, lists and
        dicts are copied one level, the values in them are the report's own (no deep
        copy: they are plain JSON values); a result's preview is cut here.
        """
        data = _fields_of(self)
        data["tool_calls"] = [_call_dict(record) for record in self.tool_calls]
        requests = [_fields_of(record) for record in self.requests]
        data["requests"] = requests
        if self.extraction is not None:
            data["extraction"] = _fields_of(self.extraction)
        data["repaired_calls"] = self.repaired_calls
        data.update(prompt_totals(requests))
        for request in requests:
            request["reported_input_tokens"] = request["input_tokens"]
        # A run whose tools never ask or edit reports as it did before approvals existed.
        for key in ("approvals", "pending_calls", "edits"):
            if not data[key]:
                del data[key]
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
    def prompt_evaluated(self) -> int | None:
        """Prompt tokens the server computed over the run (``None``: no reply said)."""
        known = [r.prompt_evaluated for r in self.requests if r.prompt_evaluated is not None]
        return sum(known) if known else None

    @property
    def prompt_cached(self) -> int | None:
        """Prompt tokens the server's prompt cache served over the run (``None``: unknown)."""
        known = [r.prompt_cached for r in self.requests if r.prompt_cached is not None]
        return sum(known) if known else None

    def note_extraction(self, tally: RequestTally) -> None:
        """Take the pruning pass's running totals (a copy of the pruner's ``usage``).

        The pruner adds up every extraction request of its run; its caller hands the
        tally over after each pass, so the report holds the figures so far, also when a
        later step fails.
        """
        self.extraction = replace(tally) if tally.requests else None

    @property
    def repaired_calls(self) -> int:
        """Calls that ran only after a repair (see ``ToolCallRecord.repaired``)."""
        return sum(call.repaired for call in self.tool_calls)


_ARG_WIDTH = 60


def format_report(report: Mapping[str, Any]) -> str:
    """The run report as readable lines: summary, one row per request, one per tool call.

    When the replies said what the server's prompt cache served, a line says how much
    (over the run and after the first request), the table gains a ``from cache`` column,
    and a line sums up the pruning pass's requests.

    An ``agent:NAME`` call is followed by the summary line of the sub-run it made.

    Unknown fields are ignored and missing ones shown as ``-``, so the table keeps
    working while later work adds fields to the report.
    """
    requests = _rows(report.get("requests"))
    calls = _rows(report.get("tool_calls"))
    # The cache column only for reports that know it: older reports keep their table.
    cache = any(_is_count(row.get("prompt_cached")) for row in requests)
    cache_head = f"  {'from cache':>10}" if cache else ""
    lines = [
        f"stop reason: {report.get('stop_reason', '-')} · steps: {report.get('steps', '-')}"
        f" · tool calls: {len(calls)} · requests: {len(requests)}",
        *_context_line(report),
        *_cache_lines(report, requests),
        "",
        f"{'request':>7}  {'messages':>8}  {'input tokens':>12}{cache_head}  {'output tokens':>13}",
    ]
    for number, row in enumerate(requests, start=1):
        cached = f"  {_num(row.get('prompt_cached')):>10}" if cache else ""
        lines.append(
            f"{number:>7}  {_num(row.get('messages')):>8}  {_num(row.get('input_tokens')):>12}"
            f"{cached}  {_num(row.get('output_tokens')):>13}"
        )
    total_in = _total(requests, "input_tokens")
    total_out = _total(requests, "output_tokens")
    total_cached = f"  {_num(_total(requests, 'prompt_cached')):>10}" if cache else ""
    lines.append(
        f"{'total':>7}  {'':>8}  {_num(total_in):>12}{total_cached}  {_num(total_out):>13}"
    )
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


def _cache_lines(report: Mapping[str, Any], requests: list[Mapping[str, Any]]) -> list[str]:
    """What the server's prompt cache served, and what the pruning pass cost, when known."""
    lines = []
    cached, evaluated = _cache_split(requests)
    if cached + evaluated:
        line = (
            f"prompt cache: {cached:,} of {cached + evaluated:,} prompt tokens served from"
            f" the server's cache ({cached / (cached + evaluated):.0%})"
        )
        later = cached_share(requests[1:])
        if later is not None:
            line += f" · after the first request: {later:.0%}"
        lines.append(line)
    extraction = report.get("extraction")
    if isinstance(extraction, Mapping) and _is_count(extraction.get("requests")):
        parts = [
            f"pruning pass: {_num(extraction.get('requests'))} requests",
            f"{_num(extraction.get('prompt_tokens'))} prompt tokens",
        ]
        if _is_count(extraction.get("prompt_cached")):
            parts[-1] += f" ({_num(extraction.get('prompt_cached'))} from cache)"
        parts.append(f"{_num(extraction.get('completion_tokens'))} completion tokens")
        seconds = extraction.get("seconds")
        if isinstance(seconds, int | float) and not isinstance(seconds, bool):
            parts.append(f"{seconds:.1f} s")
        lines.append(" · ".join(parts))
    return lines


def prompt_totals(requests: Sequence[Mapping[str, Any]]) -> dict[str, int | None]:
    """The run totals ``prompt_evaluated`` and ``prompt_cached`` of a report's request dicts.

    Each adds up the requests that know it, ``None`` when none does; a caller that adds
    request records to a report dict (the structuring requests) sets them again with it.
    """
    totals: dict[str, int | None] = {}
    for key in ("prompt_evaluated", "prompt_cached"):
        known = [row[key] for row in requests if _is_count(row.get(key))]
        totals[key] = sum(known) if known else None
    return totals


def cached_share(requests: Sequence[Mapping[str, Any]]) -> float | None:
    """The part of the prompt tokens of ``requests`` (report dicts) the server's cache served.

    Counts the requests whose reply said how its prompt was split (``prompt_evaluated``
    and ``prompt_cached``); ``None`` when none did. ``cached_share(requests[1:])`` is the
    figure for every request after the first, whose prefix the run itself sent before.
    """
    cached, evaluated = _cache_split(requests)
    return cached / (cached + evaluated) if cached + evaluated else None


def _cache_split(requests: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """Cached and evaluated prompt tokens of the requests that said both."""
    cached = evaluated = 0
    for row in requests:
        hit, computed = row.get("prompt_cached"), row.get("prompt_evaluated")
        if isinstance(hit, int) and isinstance(computed, int) and _is_count(hit):
            cached += hit
            evaluated += computed
    return cached, evaluated


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _rows(value: object) -> list[Mapping[str, Any]]:
    if not isinstance(value, Sequence) or isinstance(value, str):
        return []
    return [row for row in value if isinstance(row, Mapping)]


def _num(value: object) -> str:
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else "-"


def _noun(count: object, noun: str) -> str:
    """``noun`` for a count of one, its plural (``noun + "s"``) otherwise: "1 step"."""
    return noun if count == 1 else f"{noun}s"


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
    · 2,480 from cache · 12.4 s``; fields the report lacks are left out (``from cache``
    when no reply said what the server's prompt cache served), so a partial report still
    reads.
    """
    calls = _rows(report.get("tool_calls"))
    requests = _rows(report.get("requests"))
    failed = sum(1 for call in calls if call.get("ok") is False)
    steps = report.get("steps")
    parts = [f"stop: {report.get('stop_reason', '-')}", f"{_num(steps)} {_noun(steps, 'step')}"]
    called = f"{len(calls)} {_noun(len(calls), 'tool call')}"
    parts.append(called + (f" ({failed} failed)" if failed else ""))
    parts.append(f"{len(requests)} {_noun(len(requests), 'request')}")
    prompt = _total(requests, "input_tokens")
    if prompt is not None:
        parts.append(f"{prompt:,} prompt tokens")
    cached = _total(requests, "prompt_cached")
    if cached is not None:
        parts.append(f"{cached:,} from cache")
    elapsed = report.get("elapsed_s")
    if isinstance(elapsed, int | float):
        parts.append(f"{elapsed:.1f} s")
    return " · ".join(parts)


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = tuple(f.name for f in fields(cls))
        _FIELD_NAMES[cls] = names
    return names


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _fields_of(record: Any) -> dict[str, Any]:
    """A dataclass record's fields as a dict, lists and dicts copied one level."""
    out: dict[str, Any] = {}
    for name in _field_names(type(record)):
        value = getattr(record, name)
        if type(value) is list:
            value = list(value)
        elif type(value) is dict:
            value = dict(value)
        out[name] = value
    return out


def _call_dict(record: ToolCallRecord) -> dict[str, Any]:
    data = _fields_of(record)
    preview = record.result_preview
    if preview is not None:
        data["result_preview"] = result_preview(preview)
    data["fate"] = record.fate
    return data
