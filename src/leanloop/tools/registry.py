"""Run tool calls so that no failure ever ends a run: failures are messages.

:class:`ToolRegistry` holds an agent's tools and runs one call at a time. Whatever the
model sends and whatever the tool does, :meth:`ToolRegistry.run` returns a
:class:`ToolOutcome` whose ``text`` is what the model sees next:

- an unknown tool name: one line listing the tools there are;
- arguments the tool does not take: dropped, and the result says so;
- missing or mistyped arguments: one line saying what to send;
- a tool that raises: ``error: <message>``; a ``None`` result: ``""``;
- any other result: text (JSON for lists, dicts and numbers);
- every text: capped (``leanloop.textcap.cap_text``) on a line boundary, with a note.

Only ``asyncio.CancelledError`` (and other ``BaseException``\\ s) pass through.
"""

from __future__ import annotations

import difflib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from leanloop.exceptions import ToolError
from leanloop.textcap import cap_text
from leanloop.tools._arguments import ArgumentCheck, check_arguments, parameter_names

__all__ = ["DEFAULT_RESULT_MAX_CHARS", "ToolOutcome", "ToolRegistry"]

_log = logging.getLogger(__name__)

DEFAULT_RESULT_MAX_CHARS = 80_000
"""The global fuse: no single tool result reaching the model is longer than this."""
_MIN_RESULT_MAX_CHARS = 400
"""Below this the cap's own note would leave no room for the result."""
_MAX_ERROR_CHARS = 1_000
"""An error line longer than this is a dump, not a message."""


@dataclass(frozen=True)
class ToolOutcome:
    """What one tool call produced, as the model will see it.

    Attributes:
        name: The tool name the model called (possibly unknown).
        args: The arguments the tool actually received (unknown ones dropped, values
            validated and coerced), in JSON form (a validated model as a dict); for a
            call that did not run, the arguments that were checked.
        text: The text the model will see, already capped.
        ok: ``False`` when the call failed (unknown tool, bad arguments, the tool raised).
        chars_raw: The length of the text before the registry's cap.
        notes: Short remarks for reports (dropped arguments, capping).
    """

    name: str
    args: dict[str, Any]
    text: str
    ok: bool
    chars_raw: int
    notes: tuple[str, ...] = ()


class ToolRegistry:
    """The tools of one agent, run so that every failure becomes a one-line message."""

    def __init__(
        self, tools: Sequence[BaseTool], *, result_max_chars: int = DEFAULT_RESULT_MAX_CHARS
    ) -> None:
        """Hold ``tools`` and cap each result at ``result_max_chars``.

        Raises:
            ToolError: Two tools share a name.
            ValueError: ``result_max_chars`` is too small to hold a result and its note.
        """
        if result_max_chars < _MIN_RESULT_MAX_CHARS:
            msg = (
                f"result_max_chars must be at least {_MIN_RESULT_MAX_CHARS}, got {result_max_chars}"
            )
            raise ValueError(msg)
        self._tools: dict[str, BaseTool] = {}
        for tool in tools:
            if tool.name in self._tools:
                msg = f'two tools are named "{tool.name}"'
                raise ToolError(msg)
            self._tools[tool.name] = tool
        self.result_max_chars = result_max_chars

    @property
    def tools(self) -> tuple[BaseTool, ...]:
        """The tools, in the order given."""
        return tuple(self._tools.values())

    @property
    def names(self) -> tuple[str, ...]:
        """The tool names, in the order given."""
        return tuple(self._tools)

    def get(self, name: str) -> BaseTool | None:
        """Return the tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def parameters(self, name: str) -> tuple[str, ...]:
        """Return the argument names of tool ``name`` in order (``()`` if unknown).

        The text protocol uses this order to map positional arguments to names.
        """
        tool = self._tools.get(name)
        return parameter_names(tool) if tool is not None else ()

    async def run(self, name: str, args: Mapping[str, Any]) -> ToolOutcome:
        """Run tool ``name`` with ``args``; never raises except on cancellation.

        Args:
            name: The tool name the model used.
            args: The arguments the model sent.

        Returns:
            The outcome; ``outcome.text`` goes to the model as the tool result.
        """
        tool = self._tools.get(name)
        if tool is None:
            return self._finish(name, _as_dict(args), self._unknown(name), ok=False)
        if not isinstance(args, Mapping):
            problem = f"{name} takes its arguments as a JSON object of names and values"
            return self._finish(name, {}, f"error: {problem}", ok=False)
        check = _check(tool, args)
        if check.problem is not None:
            return self._finish(name, check.args, f"error: {check.problem}", False, check.dropped)
        try:
            result = await tool.ainvoke(check.args)
        except Exception as exc:  # the whole point: a failing tool is a message, not a crash
            line = _one_line(exc)
            # A ToolException is a refusal meant for the model; anything else is a bug
            # in the tool, worth a warning with the traceback when debugging.
            level = logging.INFO if isinstance(exc, ToolException) else logging.WARNING
            _log.log(
                level, "tool %s failed: %s", name, line, exc_info=_log.isEnabledFor(logging.DEBUG)
            )
            return self._finish(name, check.args, f"error: {line}", False, check.dropped)
        return self._finish(name, check.args, _to_text(result), True, check.dropped)

    def _unknown(self, name: str) -> str:
        close = difflib.get_close_matches(name, self.names, n=1)
        hint = f' (did you mean "{close[0]}"?)' if close else ""
        available = ", ".join(self.names) or "none"
        return f'error: unknown tool "{name}"{hint}; available tools: {available}'

    def _finish(
        self,
        name: str,
        args: dict[str, Any],
        body: str,
        ok: bool,
        dropped: tuple[str, ...] = (),
    ) -> ToolOutcome:
        notes: list[str] = []
        full = body
        if dropped:
            note = f"ignored unknown arguments: {', '.join(dropped)}"
            notes.append(note)
            # Before a result (seen first); after a one-line error (keeps "error:" first).
            full = f"[{note}]\n{body}".rstrip("\n") if ok else f"{body} [{note}]"
        text = cap_text(full, self.result_max_chars)
        if len(text) != len(full):
            notes.append(f"capped at {self.result_max_chars:,} of {len(full):,} characters")
        _log.debug("tool %s: ok=%s, %d chars (%d raw)", name, ok, len(text), len(full))
        return ToolOutcome(name, _jsonable(args), text, ok, len(full), tuple(notes))


def _check(tool: BaseTool, args: Mapping[str, Any]) -> ArgumentCheck:
    try:
        return check_arguments(tool, args)
    except Exception:  # a schema we cannot read: let the tool (and LangChain) judge
        _log.debug("cannot check arguments of %s", tool.name, exc_info=True)
        return ArgumentCheck(dict(args))


def _jsonable(args: dict[str, Any]) -> dict[str, Any]:
    """The arguments in JSON form (validated models as dicts), so reports can be dumped."""
    return {key: to_jsonable_python(value, fallback=repr) for key, value in args.items()}


def _as_dict(args: Any) -> dict[str, Any]:
    return dict(args) if isinstance(args, Mapping) else {}


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split())
    if not isinstance(exc, ToolException):
        # The type says a lot for KeyError('x') or ZeroDivisionError; ToolExceptions
        # are already written for the model.
        text = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    text = text or "the tool failed without a message"
    return text if len(text) <= _MAX_ERROR_CHARS else text[: _MAX_ERROR_CHARS - 3] + "..."


def _to_text(result: Any) -> str:
    if result is None:
        return ""
    if isinstance(result, str):
        return result
    if isinstance(result, BaseMessage):
        return _to_text(result.content)
    if isinstance(result, BaseModel):
        return result.model_dump_json()
    if isinstance(result, bytes):
        return result.decode("utf-8", errors="replace")
    if isinstance(result, dict | list | tuple | int | float | bool):
        try:
            return json.dumps(result, ensure_ascii=False, default=str)
        except (TypeError, ValueError):  # circular structures and the like
            return str(result)
    return str(result)
