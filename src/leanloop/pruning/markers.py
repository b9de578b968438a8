"""The normative marker format of a pruning answer: parse it, build it, keep it unforgeable.

The pruning model answers::

    [PRUNE_INFO_START]
    what was kept and removed, with character counts
    [PRUNE_INFO_END]
    [PRUNE_OUTPUT_START]
    the extracted content
    [PRUNE_OUTPUT_END]

:func:`parse_prune_response` reads such an answer tolerantly, in one pass over its lines.
A marker counts only at the start of a line (after optional whitespace), so a marker
quoted inside a line is content. The four marker strings are reserved: a tool output
that contains one is passed through :func:`escape_reserved` before the pruning model
sees it, and what is kept goes through :func:`restore_reserved`, so tool output can
neither end a block early nor forge one.

What the main model reads is escaped too: a raw result with :func:`escape_reserved`, a
pruned one with :func:`escape_pruned` (its own frame stays, what is inside is escaped).
Whether a result is pruned is told by metadata the loop sets (:data:`PRUNED_MARK`, see
:func:`mark_pruned`), never by what its text looks like.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeVar

from langchain_core.messages import BaseMessage

from leanloop.exceptions import ModelError

__all__ = [
    "INFO_END",
    "INFO_START",
    "OUTPUT_END",
    "OUTPUT_START",
    "PRUNED_MARK",
    "RESERVED_MARKERS",
    "PruneFormatError",
    "PruneParse",
    "escape_pruned",
    "escape_reserved",
    "format_pruned",
    "is_pruned",
    "mark_pruned",
    "parse_prune_response",
    "restore_reserved",
]

INFO_START = "[PRUNE_INFO_START]"
INFO_END = "[PRUNE_INFO_END]"
OUTPUT_START = "[PRUNE_OUTPUT_START]"
OUTPUT_END = "[PRUNE_OUTPUT_END]"
RESERVED_MARKERS = (INFO_START, INFO_END, OUTPUT_START, OUTPUT_END)
"""The four reserved marker strings."""
PRUNED_MARK = "leanloop_pruned"
"""``additional_kwargs`` key the loop sets on each result message it builds: ``True`` when
the message holds a pruned result (in text mode: when any result of the turn is)."""

_Message = TypeVar("_Message", bound=BaseMessage)

# Escaping adds one backslash after the bracket of a marker that already has any number
# of them (zero included), and restoring removes one. That is a bijection, so a tool
# output that itself contains "[\PRUNE_OUTPUT_END]" survives the round trip unchanged,
# and escaped text never contains a bare marker. Both patterns are linear: the
# backslash run is followed by a literal "P", so there is nothing to backtrack into.
_NAMES = r"PRUNE_(?:INFO|OUTPUT)_(?:START|END)\]"
_ESCAPE = re.compile(r"\[(\\*" + _NAMES + ")")
_RESTORE = re.compile(r"\[\\(\\*" + _NAMES + ")")
_FENCE = re.compile(r"\s*(```|~~~)\S*\s*")


def is_pruned(message: BaseMessage) -> bool:
    """Whether the result ``message`` holds a pruned output, as the loop marked it.

    The loop marks every result message it builds (:func:`mark_pruned`); that mark
    decides, whatever the text says. A text-mode turn counts as pruned when any of its
    results is. A message no loop marked (one a caller built) counts as pruned when a
    line starts the INFO block: the loop escapes that marker in every raw result
    (:func:`escape_reserved`), so only a pruned result it built can start that way.
    """
    mark = message.additional_kwargs.get(PRUNED_MARK)
    if mark is not None:
        return bool(mark)
    text = message.text
    return text.startswith(INFO_START) or f"\n{INFO_START}" in text


def mark_pruned(message: _Message, pruned: bool) -> _Message:
    """A copy of the result ``message`` that says whether it holds a pruned result."""
    kwargs = {**message.additional_kwargs, PRUNED_MARK: pruned}
    return message.model_copy(update={"additional_kwargs": kwargs})


class PruneFormatError(ModelError, ValueError):
    """A pruning answer has no ``[PRUNE_OUTPUT_START]`` block.

    A :class:`~leanloop.exceptions.ModelError` (the pruning model's reply cannot be used)
    that stays a :class:`ValueError`, the class it had before it joined the tree.
    """


@dataclass(frozen=True)
class PruneParse:
    """The blocks read from a pruning answer."""

    info: str | None
    """The INFO blocks' text, stripped; ``None`` when the answer had none."""
    output: str
    """The OUTPUT blocks' text joined in order with newlines (still escaped)."""


def escape_reserved(text: str) -> str:
    """Escape every reserved marker in ``text`` so it cannot act as a marker.

    ``[PRUNE_OUTPUT_END]`` becomes ``[\\PRUNE_OUTPUT_END]``; a backslash already there
    gets one more, so :func:`restore_reserved` undoes exactly this.
    """
    return _ESCAPE.sub(r"[\\\1", text)


def escape_pruned(text: str) -> str:
    """Escape the reserved markers inside a pruned result (:func:`format_pruned`'s text).

    The frame (the INFO block's start and end, the OUTPUT block's start and end) stays;
    whatever the blocks hold is escaped, so kept lines of a tool output that quote a
    marker cannot pose as a block of their own. Text of any other shape is escaped whole.
    """
    head, split, tail = f"{INFO_START}\n", f"\n{INFO_END}\n{OUTPUT_START}\n", OUTPUT_END
    if not (text.startswith(head) and text.endswith(tail) and split in text):
        return escape_reserved(text)
    info, _, body = text[len(head) : -len(tail)].partition(split)
    return f"{head}{escape_reserved(info)}{split}{escape_reserved(body)}{tail}"


def restore_reserved(text: str) -> str:
    """Undo :func:`escape_reserved`."""
    return _RESTORE.sub(r"[\1", text)


def _marker_at_start(line: str) -> tuple[str, str] | None:
    """The marker a line starts with (after whitespace) and the rest of the line."""
    stripped = line.lstrip()
    if not stripped.startswith("[PRUNE_"):
        return None
    for marker in RESERVED_MARKERS:
        if stripped.startswith(marker):
            return marker, stripped[len(marker) :]
    return None


def parse_prune_response(text: str) -> PruneParse:
    """Read the INFO and OUTPUT blocks of a pruning answer.

    Tolerant of what models do: prose and code fences outside the blocks are ignored;
    a block whose END marker is missing runs to the next START marker or to the end (a
    trailing code fence is then dropped); the INFO block may be missing; several OUTPUT
    blocks are joined in order with newlines. Text after a START marker on the same line
    is the block's first line; an END marker at the end of a line closes the block after
    that line's text. Runs in time linear in ``len(text)``.

    Args:
        text: The pruning model's answer.

    Returns:
        The parsed blocks.

    Raises:
        PruneFormatError: The answer has no OUTPUT block.
    """
    infos: list[list[str]] = []
    outputs: list[list[str]] = []
    current: list[str] | None = None
    for line in text.split("\n"):
        found = _marker_at_start(line)
        if found is None:
            if current is not None:
                body, closed = _closed(line)
                if body.strip() or not closed:
                    current.append(body)
                if closed:
                    current = None
            continue
        marker, rest = found
        if marker in (INFO_END, OUTPUT_END):
            current = None
            continue
        current = []
        (infos if marker == INFO_START else outputs).append(current)
        body, closed = _closed(rest)
        if body.strip():
            current.append(body.lstrip())
        if closed:
            current = None
    if not outputs:
        msg = f"the pruning answer has no {OUTPUT_START} block"
        raise PruneFormatError(msg)
    if current is not None:  # the last block ran to the end of the answer
        _drop_closing_fence(current)
    info = "\n".join("\n".join(block) for block in infos).strip() if infos else None
    return PruneParse(info=info, output="\n".join("\n".join(block) for block in outputs))


def _closed(line: str) -> tuple[str, bool]:
    """``line`` without an END marker it ends with (small models close a block on the
    line of its last copied line), and whether it had one."""
    stripped = line.rstrip()
    for marker in (OUTPUT_END, INFO_END):
        if stripped.endswith(marker):
            return stripped[: -len(marker)].rstrip(), True
    return line, False


def _drop_closing_fence(lines: list[str]) -> None:
    while lines and not lines[-1].strip():
        lines.pop()
    if lines and _FENCE.fullmatch(lines[-1]):
        lines.pop()
        while lines and not lines[-1].strip():
            lines.pop()


def format_pruned(info: str, output: str) -> str:
    """Build the tool message text of a pruned output, with both blocks.

    Args:
        info: What was kept and removed (one or more lines).
        output: The kept content; may be empty.

    Returns:
        The INFO block followed by the OUTPUT block.
    """
    body = f"{output}\n" if output else ""
    return f"{INFO_START}\n{info}\n{INFO_END}\n{OUTPUT_START}\n{body}{OUTPUT_END}"
