"""The extraction prompt: numbered, escaped output lines packed into chunks that fit a window.

The raw output is shown to the pruning model with line numbers (``  12| text``) so that
its answer can be checked line by line against the original, and with the reserved
marker strings escaped (see :mod:`leanloop.pruning.markers`). When the whole output does
not fit the pruning model's window, it is split on line boundaries into chunks that do;
line numbers stay global, so every chunk's answer is checked against the same original.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from leanloop.pruning.markers import INFO_END, INFO_START, OUTPUT_END, OUTPUT_START
from leanloop.pruning.markers import escape_reserved as _escape

__all__ = [
    "SYSTEM_PROMPT",
    "Chunk",
    "build_messages",
    "chunk_budget",
    "overhead_chars",
    "plan_chunks",
    "split_raw_lines",
]

SYSTEM_PROMPT = f"""\
You extract, from one tool output, only the parts a reader needs for their task.

Rules:
- Copy the relevant lines verbatim, in their original order. Never paraphrase, \
summarise, reorder or add lines of your own.
- Each line of the output is shown after its line number, like "  12| ". You may keep \
those numbers.
- Keep every line that could matter for the task (and the lines needed to make sense \
of them); leave out everything else.
- If nothing is relevant, leave the output block empty.

Answer in exactly this format, and nothing else:
{INFO_START}
one line: what you kept and what you left out, with character counts
{INFO_END}
{OUTPUT_START}
the relevant lines, verbatim
{OUTPUT_END}"""

# A line number prefix is at least this wide ("  12| "), as in the examples the model sees.
_MIN_NUMBER_WIDTH = 4
# The smallest chunk worth a request, whatever the window says: below this, the
# instructions dominate and the request would most likely fail anyway (then: fallback).
_MIN_CHUNK_CHARS = 400
# Room for the "Tool output (part 12 of 345, lines 1-99999):" line and the closing reminder.
_TAIL_ROOM = 120


@dataclass(frozen=True)
class Chunk:
    """Consecutive numbered lines of the output, small enough for one request."""

    text: str
    """The numbered, escaped lines, newline-separated."""
    first_line: int
    """1-based number of the first raw line in the chunk."""
    last_line: int
    """1-based number of the last raw line in the chunk."""


def split_raw_lines(raw: str) -> list[str]:
    """The lines of a tool output as line-numbering tools count them.

    Splits on ``\\n`` only (not on form feeds or Unicode separators, which
    ``str.splitlines`` also breaks at), drops a carriage return at each line's end, and
    does not count a final newline as the start of another line.
    """
    lines = raw.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


def chunk_budget(
    *, window_tokens: int, chars_per_token: float, reply_tokens: int, overhead_chars: int
) -> int:
    """How many characters of numbered output one request may carry.

    Args:
        window_tokens: The pruning model's context window.
        chars_per_token: The characters-per-token estimate.
        reply_tokens: Tokens kept free for the answer.
        overhead_chars: Characters of the request that are not output (instructions).

    Returns:
        The chunk size in characters, never below a small floor.
    """
    # 5% slack for the per-message tokens of the chat template and estimate error.
    usable = (window_tokens - reply_tokens) * chars_per_token * 0.95 - overhead_chars
    return max(int(usable), _MIN_CHUNK_CHARS)


def plan_chunks(lines: list[str], budget: int) -> list[Chunk]:
    """Number and escape ``lines`` and pack them, in order, into chunks of ``budget`` chars.

    A line too long for any chunk is cut into pieces that each carry its number, so a
    piece the model keeps can still be checked against that line.
    """
    width = max(_MIN_NUMBER_WIDTH, len(str(len(lines))))
    chunks: list[Chunk] = []
    pending: list[str] = []
    size, first, last = 0, 1, 1
    for number, line in enumerate(lines, start=1):
        for piece in _pieces(_escape(line), budget - width - 3):
            numbered = f"{number:>{width}}| {piece}"
            if pending and size + len(numbered) + 1 > budget:
                chunks.append(Chunk("\n".join(pending), first, last))
                pending, size, first = [], 0, number
            pending.append(numbered)
            size += len(numbered) + 1
            last = number
    if pending or not chunks:
        chunks.append(Chunk("\n".join(pending), first, last))
    return chunks


def _pieces(line: str, size: int) -> list[str]:
    size = max(size, 1)
    if len(line) <= size:
        return [line]
    return [line[start : start + size] for start in range(0, len(line), size)]


def overhead_chars(*, tool_name: str, focus: str | None, task_context: str) -> int:
    """Characters of an extraction request that are not tool output (a close upper bound)."""
    header = _header(tool_name=tool_name, focus=focus, task_context=task_context)
    return len(SYSTEM_PROMPT) + len(header) + _TAIL_ROOM


def build_messages(
    *, tool_name: str, focus: str | None, task_context: str, chunk: Chunk, parts: int, part: int
) -> list[BaseMessage]:
    """The messages of one extraction request: instructions, then what to look for and the lines.

    Args:
        tool_name: The tool that produced the output.
        focus: The main model's own directive; when given it replaces ``task_context``.
        task_context: The user's request and the main model's latest reasoning.
        chunk: The numbered lines to extract from.
        parts: How many chunks the output was split into.
        part: This chunk's 1-based position.

    Returns:
        A system message with the instructions and a human message with the lines.
    """
    header = _header(tool_name=tool_name, focus=focus, task_context=task_context)
    where = f"lines {chunk.first_line}-{chunk.last_line}"
    if parts > 1:
        where = f"part {part} of {parts}, {where}"
    text = f"{header}Tool output ({where}):\n{chunk.text}\n\nAnswer in the marker format."
    return [SystemMessage(SYSTEM_PROMPT), HumanMessage(text)]


def _header(*, tool_name: str, focus: str | None, task_context: str) -> str:
    if focus is not None:
        wanted = f"The reader is looking for: {_escape(focus)}"
    else:
        context = _escape(task_context.strip()) or "(no task context given)"
        wanted = f"Keep what matters for the reader's task.\nTask context:\n{context}"
    return f"Tool: {tool_name}\n{wanted}\n\n"
