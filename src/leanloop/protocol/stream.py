"""Stream a text-mode reply without ever showing half a tool call.

While a reply streams, its last few characters might be the start of a call marker
(```` ``` ````, ``<tool_call``, ``<function=``, ``{"name"``, or a tool name before ``(``
or ``{``). :class:`HoldBack` keeps those characters back until the next delta
shows whether they are one; once a marker has definitely started, it shows nothing more
of that reply, so a reply that is a call yields only the prose before it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["DEFAULT_HOLD", "HoldBack"]

DEFAULT_HOLD = 12
"""Characters held back at most, unless a tool name needs more (see :class:`HoldBack`)."""

# Markers that, once complete, mean "this is a call": nothing after them is shown.
_DEFINITE = (
    r"```[ \t]*(?:tool|json)"
    r"|<tool_call>"
    r"|<function="
    r"|```[ \t]*\r?\n[ \t]*\{\s*\"name\""
    r'|\{\s*"name"'  # anywhere, like the parser's bare JSON: a hidden tag leaves it mid-line
)
# Everything a definite marker can begin with, written as "prefix of" patterns.
_LITERALS = ("```tool", "```json", "<tool_call>", "<function=")
_NAME_KEY = r'(?:"(?:n(?:a(?:m(?:e)?)?)?)?)?'
_BRACE_PREFIX = re.compile(r"\{\s*" + _NAME_KEY)
_FENCE_BRACE_PREFIX = re.compile(r"```[ \t]*(?:\r|\r?\n[ \t]*(?:\{\s*" + _NAME_KEY + r")?)?")
_NAME_CHAR = re.compile(r"[\w.\-]")
_SPACES = re.compile(r"[ \t]*")


class HoldBack:
    """Decide, delta by delta, how much of a streaming reply is safe to show.

    Example:
        >>> hold = HoldBack(["read_file"])
        >>> hold.feed("Let me look. ``") + hold.feed("`tool\\n{...")
        'Let me look. '
        >>> hold.saw_call
        True
    """

    def __init__(self, tool_names: Iterable[str] = (), *, max_hold: int = DEFAULT_HOLD) -> None:
        """Start watching one reply.

        Args:
            tool_names: Tools the model may call with call syntax (``name(`` / ``name {``).
            max_hold: Characters held back at most; raised to fit the longest tool name
                plus its bracket, so no part of ``name(`` is ever shown.
        """
        self._names = tuple(sorted({n for n in tool_names if n}, key=len, reverse=True))
        self._hold = max([max_hold, *(len(name) + 2 for name in self._names)])
        pattern = _DEFINITE
        if self._names:
            alternation = "|".join(re.escape(name) for name in self._names)
            pattern += rf"|(?<![\w.\-])(?:{alternation})[ \t]*[({{]"
        self._definite = re.compile(pattern)
        self._held = ""
        self._last = "\n"  # last character shown: a reply starts as if after a newline
        self._shown = 0
        self._saw_call = False

    @property
    def saw_call(self) -> bool:
        """True once a call marker has definitely started; nothing more is shown."""
        return self._saw_call

    @property
    def shown(self) -> int:
        """How many characters of the reply have been released so far.

        When the finished reply turns out to hold no call after all (a ```` ```json ````
        block of plain data), the caller can show ``reply[shown:]`` itself.
        """
        return self._shown

    def feed(self, delta: str) -> str:
        """Take the next piece of the reply and return what is safe to show now."""
        if self._saw_call or not delta:
            return ""
        text = self._held + delta
        marker = self._definite.search(self._last + text)
        if marker is not None:
            self._saw_call = True
            self._held = ""
            return self._release(text[: max(marker.start() - 1, 0)])
        keep = self._hold_from(text)
        self._held = text[keep:]
        return self._release(text[:keep])

    def flush(self) -> str:
        """The reply has ended: return what was held back (nothing after a call)."""
        held, self._held = self._held, ""
        return "" if self._saw_call else self._release(held)

    def _release(self, text: str) -> str:
        if text:
            self._shown += len(text)
            self._last = text[-1]
        return text

    def _hold_from(self, text: str) -> int:
        """Index of the earliest trailing character that could begin a marker."""
        for index in range(max(len(text) - self._hold, 0), len(text)):
            before = text[index - 1] if index else self._last
            if self._could_start(text[index:], before):
                return index
        return len(text)

    def _could_start(self, tail: str, before: str) -> bool:
        """Could ``tail`` (which follows ``before``) grow into a definite marker?"""
        if any(marker.startswith(tail) for marker in _LITERALS):
            return True
        if _FENCE_BRACE_PREFIX.fullmatch(tail):
            return True
        if _BRACE_PREFIX.fullmatch(tail):
            return True
        if _NAME_CHAR.match(before):
            return False
        return any(self._name_prefix(tail, name) for name in self._names)

    @staticmethod
    def _name_prefix(tail: str, name: str) -> bool:
        if name.startswith(tail):
            return True
        return tail.startswith(name) and _SPACES.fullmatch(tail, len(name)) is not None
