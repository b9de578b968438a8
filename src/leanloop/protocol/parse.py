"""Read tool calls out of a model's text reply, however the model chose to write them.

Forms, read in the order they appear in the reply (see ADR 0007):

- ```` ```tool ```` fences holding ``{"name": ..., "arguments": {...}}`` (form ``fence``;
  call syntax inside the fence is read too), and ```` ```json ```` fences holding that shape
  (``json_fence``);
- ``<tool_call>{...}</tool_call>``, closing tag optional (``tool_call_tag``);
- Qwen's ``<function=name><parameter=key>value</parameter></function>`` (``qwen_function``);
- call syntax for known tool names: ``name("a", key="b")`` and ``name {"k": "v"}``
  (``call_syntax``);
- once the reply has ended, bare JSON objects with ``name`` and ``arguments`` at its end
  (``bare_json``), which is what is left when a server hides the call tags.

The parser never raises: garbage is prose, and attempts that clearly meant to call a tool
but cannot be read come back in :attr:`ParseResult.broken` for :func:`correction_for`.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from leanloop.protocol._readers import (
    NAME_PATTERN,
    Outcome,
    RawCall,
    ReadContext,
    call_from_object,
    read_call_syntax,
    read_qwen,
)
from leanloop.protocol._scan import ScanBudget, lenient_loads, one_line, scan_balanced

__all__ = ["CALL_FORMS", "ParseResult", "ParsedCall", "correction_for", "parse_tool_calls"]

logger = logging.getLogger(__name__)

CALL_FORMS = ("fence", "json_fence", "tool_call_tag", "qwen_function", "bare_json", "call_syntax")
"""Every value :attr:`ParsedCall.form` can take."""

_EXAMPLE_CALL = '{"name": "read_file", "arguments": {"path": "src/app.py"}}'
_TOOL_LANGS = frozenset(
    {"tool", "tool_call", "tool-call", "tool_code", "tool_use", "function_call"}
)
_JSON_LANGS = frozenset({"", "json", "jsonc", "json5"})
_BASE_MARKERS = (
    r"(?P<fence>```[ \t]*(?P<lang>[A-Za-z][\w\-]*)?[ \t]*(?:\r?\n|(?=[{\[])))"
    r"|(?P<tag><tool_call\s*>)"
    r"|(?P<func><function=)"
)
_FENCED_NAME = re.compile(NAME_PATTERN + r"(?=\s*\(|[ \t]*\{)")
_CALL_HEAD = re.compile(r'\s*\{\s*"(?:name|function)"\s*:')
_BARE_START = re.compile(r'\{\s*"')
_BLANK_LINES = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")
_TAG_CLOSE = "</tool_call>"
_FENCE = "```"


@dataclass(frozen=True)
class ParsedCall:
    """One tool call read from a reply."""

    name: str
    """The tool's name as written (not checked against the known tools)."""
    args: dict[str, Any]
    """Arguments by parameter name; positional call-syntax arguments already mapped."""
    start: int
    """Index in the reply where the call's text begins."""
    end: int
    """Index just past the call's text."""
    form: str
    """How it was written: one of :data:`CALL_FORMS`."""


@dataclass(frozen=True)
class ParseResult:
    """Everything the parser found in one reply."""

    calls: tuple[ParsedCall, ...]
    """Calls in the order they appear."""
    broken: tuple[str, ...]
    """One-line descriptions of call attempts that could not be read."""
    prose: str
    """The reply with every call (and broken attempt) removed, stripped."""
    pending: bool = False
    """True when ``final=False`` and a call is still being written at the end."""


def parse_tool_calls(
    text: str, *, tools: Mapping[str, Sequence[str]] | None = None, final: bool = True
) -> ParseResult:
    """Read the tool calls in a text reply.

    Args:
        text: The reply, possibly still streaming.
        tools: Known tool names with their parameter names in order. Call syntax is only
            recognised for these names, and positional arguments are mapped with them.
        final: False while the reply may still grow: a trailing bare JSON object is not
            taken yet and a call cut off at the end is ``pending`` rather than broken.

    Returns:
        The calls, the broken attempts and the remaining prose. Never raises.
    """
    if not isinstance(text, str):
        text = "" if text is None else str(text)
    try:
        return _parse(text, tools or {}, final=final)
    except Exception:  # the loop must survive any reply (ADR 0007); the log keeps the bug
        logger.warning(
            "tool-call parser failed on a %d-character reply; reading it as prose",
            len(text),
            exc_info=True,
        )
        return ParseResult(calls=(), broken=(), prose=text.strip())


def correction_for(broken: str, *, example: str | None = None) -> str:
    """The one-line tool result that tells the model how to write a call it got wrong.

    Args:
        broken: One entry of :attr:`ParseResult.broken`.
        example: A call to show instead of the default ``read_file`` one.

    Returns:
        ``Your tool call could not be read (<why>). Write it as a ```tool block: {...}``.
    """
    why = one_line(broken, 240) or "no readable call"
    shown = one_line(example, 400) if example else _EXAMPLE_CALL
    return f"Your tool call could not be read ({why}). Write it as a ```tool block: {shown}"


class _Found:
    """Calls, broken attempts and consumed spans gathered while reading one reply."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls: list[ParsedCall] = []
        self.broken: list[str] = []
        self.spans: list[tuple[int, int]] = []
        self.pending = False

    def add(self, outcome: Outcome, start: int, form: str) -> None:
        if not (outcome.calls or outcome.broken or outcome.pending):
            return  # read and found to be data (a ```json fence of plain JSON)
        end = outcome.end
        if form not in ("fence", "json_fence"):
            start, end = _widen(self.text, start, end)
        self.spans.append((start, end))
        self.calls.extend(ParsedCall(n, a, s, e, form) for n, a, s, e in outcome.calls)
        if outcome.broken:
            self.broken.append(outcome.broken)
        self.pending = self.pending or outcome.pending

    def result(self) -> ParseResult:
        return ParseResult(
            calls=tuple(self.calls),
            broken=tuple(self.broken),
            prose=_prose(self.text, self.spans),
            pending=self.pending,
        )


def _parse(text: str, tools: Mapping[str, Sequence[str]], *, final: bool) -> ParseResult:
    params = {str(name): tuple(str(p) for p in names) for name, names in tools.items()}
    ctx = ReadContext(text=text, tools=params, final=final, budget=ScanBudget.for_text(text))
    markers = _markers(tuple(sorted(params)))
    found = _Found(text)
    pos = consumed = 0
    while (marker := markers.search(text, pos)) is not None:
        outcome, form = _read_marker(ctx, marker)
        if outcome is None:
            pos = marker.end()
            continue
        found.add(outcome, marker.start(), form)
        pos = consumed = max(outcome.end, marker.end())
    if final:
        tail = _read_bare_tail(ctx, consumed)
        if tail is not None:
            found.add(tail[0], tail[1], "bare_json")
    return found.result()


@functools.lru_cache(maxsize=64)
def _markers(names: tuple[str, ...]) -> re.Pattern[str]:
    """The pattern that finds where any call form may start (tool names longest first)."""
    if not names:
        return re.compile(_BASE_MARKERS)
    alternation = "|".join(re.escape(name) for name in sorted(names, key=len, reverse=True))
    call = rf"|(?P<call>(?<![\w.\-])(?P<cname>{alternation})(?:\s*\(|[ \t]*\{{))"
    return re.compile(_BASE_MARKERS + call)


def _read_marker(ctx: ReadContext, marker: re.Match[str]) -> tuple[Outcome | None, str]:
    if marker["fence"] is not None:
        lang = (marker["lang"] or "").lower()
        if lang in _TOOL_LANGS:
            return _read_fence(ctx, marker.start(), marker.end(), strict=False), "fence"
        if lang in _JSON_LANGS:
            return _read_fence(ctx, marker.start(), marker.end(), strict=True), "json_fence"
        return None, ""
    if marker["tag"] is not None:
        return _read_tag(ctx, marker.start(), marker.end())
    if marker["func"] is not None:
        return read_qwen(ctx, marker.start()), "qwen_function"
    opener = marker.end() - 1
    outcome = read_call_syntax(ctx, marker.start(), marker["cname"], opener=opener, lenient=False)
    return outcome, "call_syntax"


def _read_fence(ctx: ReadContext, start: int, body: int, *, strict: bool) -> Outcome | None:
    """A fenced block: JSON (one object, several, or a list) or call syntax inside."""
    text = ctx.text
    at = ctx.skip_space(body)
    if at < len(text) and text[at] in "{[":
        return _read_fenced_json(ctx, start, at, strict=strict)
    if strict:
        return None
    named = _FENCED_NAME.match(text, at)
    if named is not None:
        opener = ctx.skip_space(named.end())
        outcome = read_call_syntax(ctx, start, named.group(), opener=opener, lenient=True)
        return None if outcome is None else _close_fence(ctx, outcome, start)
    close = ctx.find(_FENCE, at)
    if close < 0:
        return ctx.unfinished(start) or Outcome(
            end=len(text), broken="the ```tool block is cut off before its JSON"
        )
    why = "the ```tool block is empty" if close == at else "the ```tool block holds no JSON object"
    return Outcome(end=close + len(_FENCE), broken=why)


def _read_fenced_json(ctx: ReadContext, start: int, at: int, *, strict: bool) -> Outcome | None:
    text = ctx.text
    raw: list[RawCall] = []
    pos = at
    while True:
        end = scan_balanced(text, pos, budget=ctx.budget)
        if end is None:
            if strict and _CALL_HEAD.match(text, pos) is None:
                return None
            return ctx.unfinished(start) or _to_fence_end(
                ctx, pos, "the JSON in the block is cut off: its braces never close", raw
            )
        read = _calls_in(text[pos:end], strict=strict, start=pos, end=end)
        if read is None:
            return _to_fence_end(ctx, end, None, [])  # plain JSON data: skip the fence
        if isinstance(read, str):
            return _to_fence_end(ctx, end, read, raw)
        raw.extend(read)
        after = ctx.skip_space(end)
        if after >= len(text) or text[after] != "{":
            break
        pos = after
    if not raw:
        return None if strict else _to_fence_end(ctx, end, "the ```tool block holds no call", raw)
    return _close_fence(ctx, Outcome(end=end, calls=raw), start)


def _calls_in(source: str, *, strict: bool, start: int, end: int) -> list[RawCall] | str | None:
    """Calls in one JSON value (an object or a list of objects); see ``call_from_object``."""
    try:
        value = lenient_loads(source)
    except ValueError as exc:
        if strict and _CALL_HEAD.match(source) is None:
            return None
        return f"the JSON in the block does not parse: {exc}"
    items = value if isinstance(value, list) else [value]
    calls: list[RawCall] = []
    for item in items:
        got = call_from_object(item, strict=strict)
        if got is None:
            return None
        if isinstance(got, str):
            return got
        calls.append((got[0], got[1], start, end))
    return calls


def _to_fence_end(ctx: ReadContext, pos: int, why: str | None, raw: list[RawCall]) -> Outcome:
    """Consume up to the fence's closing backticks, reporting ``why`` if it is set."""
    close = ctx.find(_FENCE, pos)
    end = len(ctx.text) if close < 0 else close + len(_FENCE)
    return Outcome(end=end, calls=raw, broken=why)


def _close_fence(ctx: ReadContext, outcome: Outcome, start: int) -> Outcome:
    """Stretch a fenced outcome over its closing backticks (missing ones are tolerated)."""
    after = ctx.skip_space(outcome.end)
    if ctx.text.startswith(_FENCE, after):
        outcome.end = after + len(_FENCE)
    return _stretch(outcome, start)


def _stretch(outcome: Outcome, start: int) -> Outcome:
    """Let the first call begin at ``start`` and the last end at ``outcome.end``."""
    if outcome.calls:
        name, args, _, end = outcome.calls[0]
        outcome.calls[0] = (name, args, start, end)
        name, args, begin, _ = outcome.calls[-1]
        outcome.calls[-1] = (name, args, begin, outcome.end)
    return outcome


def _read_tag(ctx: ReadContext, start: int, body: int) -> tuple[Outcome | None, str]:
    """``<tool_call>`` holding JSON or a Qwen ``<function=...>``; closing tag optional."""
    text = ctx.text
    at = ctx.skip_space(body)
    form = "tool_call_tag"
    outcome: Outcome | None
    if text.startswith("<function=", at):
        outcome, form = read_qwen(ctx, at), "qwen_function"
    elif at < len(text) and text[at] in "{[":
        end = scan_balanced(text, at, budget=ctx.budget)
        if end is None:
            outcome = ctx.unfinished(start) or _to_tag_end(ctx, at, "its JSON is cut off")
        else:
            read = _calls_in(text[at:end], strict=False, start=at, end=end)
            bad = read if isinstance(read, str) else None
            raw = read if isinstance(read, list) else []
            outcome = Outcome(end=end, calls=raw, broken=bad)
    elif at >= len(text):
        outcome = ctx.unfinished(start) or Outcome(end=at, broken="the <tool_call> tag is empty")
    else:
        close = ctx.find(_TAG_CLOSE, at)
        outcome = None if close < 0 else _to_tag_end(ctx, at, "it holds no JSON object")
    if outcome is not None and not outcome.pending:
        after = ctx.skip_space(outcome.end)
        if text.startswith(_TAG_CLOSE, after):
            outcome.end = after + len(_TAG_CLOSE)
        outcome = _stretch(outcome, start)
    return outcome, form


def _to_tag_end(ctx: ReadContext, pos: int, why: str) -> Outcome:
    close = ctx.find(_TAG_CLOSE, pos)
    end = len(ctx.text) if close < 0 else close + len(_TAG_CLOSE)
    return Outcome(end=end, broken=f"the <tool_call> could not be read: {why}")


def _read_bare_tail(ctx: ReadContext, pos: int) -> tuple[Outcome, int] | None:
    """Bare JSON call objects that end the reply (separated by whitespace only).

    Returns:
        The outcome and where its text starts, or None when the reply does not end so.
    """
    text = ctx.text
    run: list[RawCall] = []
    last = pos
    while (found := _BARE_START.search(text, pos)) is not None:
        begin = found.start()
        if run and text[last:begin].strip():
            run = []  # prose between objects: only the final run counts
        end = scan_balanced(text, begin, budget=ctx.budget)
        if end is None:
            if _CALL_HEAD.match(text, begin):
                why = "the JSON call at the end of the reply is cut off"
                return Outcome(end=len(text), calls=run, broken=why), _run_start(run, begin)
            pos = begin + 1
            continue
        read = _calls_in(text[begin:end], strict=True, start=begin, end=end)
        if isinstance(read, str) and _only_wrapping_after(text, end):
            return Outcome(end=len(text), calls=run, broken=read), _run_start(run, begin)
        run = run + read if isinstance(read, list) else []
        pos = last = end
    if run and _only_wrapping_after(text, last):
        return _stretch(Outcome(end=len(text), calls=run), run[0][2]), run[0][2]
    return None


def _run_start(run: list[RawCall], begin: int) -> int:
    return run[0][2] if run else begin


def _only_wrapping_after(text: str, pos: int) -> bool:
    """True when nothing but whitespace and stray closing fences/tags follow ``pos``."""
    rest = text[pos:].strip()
    while rest:
        for junk in (_FENCE, _TAG_CLOSE, "</function>"):
            if rest.startswith(junk):
                rest = rest[len(junk) :].lstrip()
                break
        else:
            return False
    return True


_WRAP_OPEN = re.compile(r"```[\w\-]*[ \t]*\r?\n[ \t]*\Z")
_WRAP_CLOSE = re.compile(r"\s*```")


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """Take in inline backticks or a code fence that wrap nothing but the call."""
    before = text[max(0, start - 40) : start]
    after = text[end : end + 40]
    single_before = before.endswith("`") and not before.endswith("``")
    if single_before and after.startswith("`") and not after.startswith("``"):
        return start - 1, end + 1
    opening = _WRAP_OPEN.search(before)
    closing = _WRAP_CLOSE.match(after)
    if opening is not None and closing is not None:
        return start - (len(before) - opening.start()), end + closing.end()
    return start, end


def _prose(text: str, spans: list[tuple[int, int]]) -> str:
    """The reply without the given spans, blank-line runs collapsed, stripped."""
    if not spans:
        return text.strip()
    pieces: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        if start > pos:
            pieces.append(text[pos:start])
        pos = max(pos, end)
    pieces.append(text[pos:])
    return _BLANK_LINES.sub("\n\n", "".join(pieces)).strip()
