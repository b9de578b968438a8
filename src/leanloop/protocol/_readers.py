"""Readers for the call forms that are not JSON-in-a-wrapper: Qwen tags and call syntax.

Each reader looks at one marker found by :mod:`leanloop.protocol.parse` and returns an
:class:`Outcome` (calls read, a broken attempt, or an unfinished call still streaming), or
None when the text at the marker turns out not to be a call after all.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from leanloop.protocol._scan import (
    ScanBudget,
    lenient_loads,
    literal_value,
    one_line,
    scan_balanced,
)

__all__ = [
    "NAME_PATTERN",
    "Outcome",
    "RawCall",
    "ReadContext",
    "call_from_object",
    "read_call_syntax",
    "read_qwen",
]

NAME_PATTERN = r"[A-Za-z_][\w.\-]{0,127}"
_NAME = re.compile(NAME_PATTERN)
# A name in a JSON call object is read as written, slashes and all (``read_config/app.yaml``):
# the tool registry repairs what it can and lists the tools for the rest, as it does for
# native calls. Only what cannot be a name at all (spaces, quotes, brackets) is refused.
_JSON_NAME = re.compile(r"[^\s\"'<>(){}\[\],;]{1,128}")
_FUNCTION_TAG = re.compile(r"<function=\s*[\"']?(" + NAME_PATTERN + r")[\"']?\s*>")
_PARAMETER_TAG = re.compile(r"<parameter=\s*[\"']?([^>\s\"']{1,128})[\"']?\s*>")
_WHITESPACE = re.compile(r"\s*")
_BARE_NAMES = re.compile(r"\(\s*[A-Za-z_][\w.]*\s*(?:,\s*[A-Za-z_][\w.]*\s*)*\)")
_LITERAL_NAMES = frozenset({"true", "false", "null", "True", "False", "None"})

_NAME_KEYS = ("name", "tool", "tool_name")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input", "params")
# Shapes that only count as a call when written this way (bare JSON, ```json fences).
_STRICT_ARG_KEYS = ("arguments", "parameters", "args")

RawCall = tuple[str, dict[str, Any], int, int]
"""One call as read: name, arguments, start and end index in the reply."""


@dataclass(slots=True)
class Outcome:
    """What a reader made of the text at one marker."""

    end: int
    """Index just past the text the reader consumed."""
    calls: list[RawCall] = field(default_factory=list)
    """Calls read there, in order."""
    broken: str | None = None
    """Why the attempt could not be read, when it clearly was one."""
    pending: bool = False
    """True for a call still being written at the end of a streaming reply."""


@dataclass(slots=True)
class ReadContext:
    """The reply being parsed and what every reader needs to know about it."""

    text: str
    tools: Mapping[str, tuple[str, ...]]
    final: bool
    budget: ScanBudget
    _found: dict[str, tuple[int, int]] = field(default_factory=dict)

    def find(self, needle: str, start: int) -> int:
        """``text.find(needle, start)``, remembered so that repeated look-ups stay linear."""
        known = self._found.get(needle)
        if known is not None:
            searched_from, at = known
            if searched_from <= start and (at < 0 or at >= start):
                return at
        at = self.text.find(needle, start)
        self._found[needle] = (start, at)
        return at

    def skip_space(self, pos: int) -> int:
        """Index of the first non-whitespace character at or after ``pos``."""
        match = _WHITESPACE.match(self.text, pos)
        return match.end() if match else pos

    def unfinished(self, start: int) -> Outcome | None:
        """An attempt running off the end: pending while streaming, else the caller decides."""
        return None if self.final else Outcome(end=len(self.text), pending=True)


def call_from_object(obj: Any, *, strict: bool) -> tuple[str, dict[str, Any]] | str | None:
    """Read ``{"name": ..., "arguments": {...}}`` and its common variants.

    Args:
        obj: A decoded JSON value.
        strict: Only accept the plain ``name`` + ``arguments``/``parameters``/``args``
            shape (used where JSON might just be data: bare objects, ```json fences).

    Returns:
        ``(name, arguments)``; a one-line reason when it tried to be a call but cannot be
        run; None when it is not call-shaped at all.
    """
    if not isinstance(obj, dict):
        return None if strict else "the block does not hold a JSON object"
    inner = obj.get("function")
    if isinstance(inner, dict) and "name" not in obj:
        obj = inner  # the OpenAI wire shape: {"type": "function", "function": {...}}
    name_keys = ("name",) if strict else _NAME_KEYS
    arg_keys = _STRICT_ARG_KEYS if strict else _ARG_KEYS
    name = next((obj[k] for k in name_keys if k in obj), None)
    arg_key = next((k for k in arg_keys if k in obj), None)
    if strict and (not isinstance(name, str) or arg_key is None):
        return None
    if not isinstance(name, str) or not name.strip():
        return "the JSON object has no tool name"
    if _JSON_NAME.fullmatch(name.strip()) is None:
        return f"{one_line(name, 60)!r} is not a tool name"
    args = _arguments(obj.get(arg_key) if arg_key else None)
    return (name.strip(), args) if isinstance(args, dict) else args


def _arguments(raw: Any) -> dict[str, Any] | str:
    """Arguments as a dict; they may also come as a JSON-encoded string or be missing."""
    if raw is None:
        return {}
    if isinstance(raw, str):
        if not raw.strip():
            return {}
        try:
            raw = lenient_loads(raw)
        except ValueError as exc:
            return f"the arguments string is not JSON ({exc})"
    if not isinstance(raw, dict):
        return f"arguments must be a JSON object, not {type(raw).__name__}"
    return {str(key): value for key, value in raw.items()}


def read_call_syntax(
    ctx: ReadContext, start: int, name: str, *, opener: int, lenient: bool
) -> Outcome | None:
    """Read ``name("a", key="b")`` or ``name {"k": "v"}`` with its bracket at ``opener``.

    Args:
        ctx: The reply.
        start: Where the name begins.
        name: The tool name.
        opener: Index of the ``(`` or ``{``.
        lenient: True inside a ```tool fence: unreadable arguments are a broken call
            rather than prose that happens to mention a tool.
    """
    end = scan_balanced(ctx.text, opener, budget=ctx.budget, python=True)
    if end is None:
        return ctx.unfinished(start) if lenient else None
    source = ctx.text[opener:end]
    if source.startswith("{"):
        try:
            args: Any = lenient_loads(source)
        except ValueError as exc:
            return _broken(end, f"the arguments of {name} are not JSON ({exc})", lenient)
        if not isinstance(args, dict):
            return _broken(end, f"the arguments of {name} are not a JSON object", lenient)
        return Outcome(end=end, calls=[(name, args, start, end)])
    outcome = _call_arguments(source, name, ctx.tools.get(name))
    if isinstance(outcome, str):
        # Literal arguments that do not fit the tool: clearly a call, so say what is wrong.
        return Outcome(end=end, broken=outcome)
    if outcome is None:
        return _broken(end, f"the arguments of {name}(...) are not plain values", lenient)
    return Outcome(end=end, calls=[(name, outcome, start, end)])


def _broken(end: int, why: str, lenient: bool) -> Outcome | None:
    return Outcome(end=end, broken=why) if lenient else None


def _call_arguments(
    source: str, name: str, params: tuple[str, ...] | None
) -> dict[str, Any] | str | None:
    """Arguments of ``(...)``: None when not literals, a reason when they cannot be mapped."""
    names = _BARE_NAMES.fullmatch(source)
    if names is not None and not set(re.findall(r"[\w.]+", source)) <= _LITERAL_NAMES:
        return None  # ``search(pattern)`` is code, not a call: skip the parse
    read = _json_positional(source) or _python_arguments(source)
    if read is None:
        return None
    positional, keywords = read
    if not positional:
        return keywords
    if params is None:
        return f"{name} was given positional arguments but its parameter names are unknown"
    if len(positional) > len(params):
        return f"{name} takes at most {len(params)} arguments but was given {len(positional)}"
    args = dict(zip(params, positional, strict=False))
    clash = sorted(set(args) & set(keywords))
    if clash:
        return f"{name} got more than one value for {', '.join(clash)}"
    return args | keywords


def _json_positional(source: str) -> tuple[list[Any], dict[str, Any]] | None:
    """Fast path for the common ``name("a", 2)``: positional JSON values only, no AST."""
    if "=" in source or "'" in source:
        return None
    try:
        values = json.loads("[" + source[1:-1] + "]")
    except (ValueError, RecursionError):
        return None
    return (values, {}) if isinstance(values, list) else None


def _python_arguments(source: str) -> tuple[list[Any], dict[str, Any]] | None:
    """Positional and keyword arguments of ``(...)`` read as Python literals, or None."""
    try:
        call = ast.parse("f" + source, mode="eval").body
        if not isinstance(call, ast.Call) or any(k.arg is None for k in call.keywords):
            return None
        positional = [literal_value(arg) for arg in call.args]
        keywords = {str(k.arg): literal_value(k.value) for k in call.keywords}
    except (SyntaxError, ValueError, RecursionError, MemoryError, TypeError):
        return None
    return positional, keywords


def read_qwen(ctx: ReadContext, start: int) -> Outcome | None:
    """Read ``<function=name><parameter=key>value</parameter>...</function>``."""
    text = ctx.text
    tag = _FUNCTION_TAG.match(text, start)
    if tag is None:
        if ">" not in text[start : start + 160]:
            return ctx.unfinished(start) or Outcome(
                end=len(text), broken="the <function=...> tag is cut off"
            )
        return None
    name = tag.group(1)
    args: dict[str, Any] = {}
    pos = tag.end()
    while True:
        pos = ctx.skip_space(pos)
        parameter = _PARAMETER_TAG.match(text, pos)
        if parameter is None:
            break
        value_end = _parameter_end(ctx, parameter.end())
        if value_end < 0:
            return ctx.unfinished(start) or Outcome(
                end=len(text), broken=f"the <function={name}> call is cut off"
            )
        args[parameter.group(1)] = _parameter_value(text[parameter.end() : value_end])
        pos = value_end + (len("</parameter>") if text.startswith("</parameter>", value_end) else 0)
    if text.startswith("<parameter", pos):  # a parameter tag that never closed
        return ctx.unfinished(start) or Outcome(
            end=len(text), broken=f"the <function={name}> call is cut off"
        )
    if text.startswith("</function>", pos):
        pos += len("</function>")
    elif text.startswith("</tool_call>", pos):
        pass  # the closing tag of the wrapper ends the call too; the wrapper consumes it
    elif not ctx.final:
        return ctx.unfinished(start)  # more parameters may still be on their way
    elif pos < len(text) and not args:
        return Outcome(end=pos, broken=f"the <function={name}> call has no </function>")
    return Outcome(end=pos, calls=[(name, args, start, pos)])


def _parameter_end(ctx: ReadContext, value_start: int) -> int:
    """Where a parameter value ends; a missing ``</parameter>`` is tolerated."""
    ends = [ctx.find(tag, value_start) for tag in ("</parameter>", "<parameter=", "</function>")]
    found = [at for at in ends if at >= 0]
    return min(found) if found else -1


def _parameter_value(raw: str) -> Any:
    """Parameter text, JSON-decoded when it parses (the Qwen template writes values raw)."""
    value = raw.removeprefix("\n").removesuffix("\n")
    stripped = value.strip()
    if stripped[:1] in '{["-0123456789tfn' and stripped:
        try:
            return json.loads(stripped)
        except (ValueError, RecursionError):
            pass
    return value
