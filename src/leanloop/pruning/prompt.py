"""The extraction prompt: numbered, escaped output lines packed into chunks that fit a window.

The raw output is shown to the pruning model with line numbers (``  12| text``) so that
its answer can be checked line by line against the original, and with the reserved
marker strings escaped (see :mod:`leanloop.pruning.markers`). When the whole output does
not fit the pruning model's window, it is split on line boundaries into chunks that do;
line numbers stay global, so every chunk's answer is checked against the same original.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from leanloop.pruning.markers import INFO_END, INFO_START, OUTPUT_END, OUTPUT_START
from leanloop.pruning.markers import escape_reserved as _escape

__all__ = [
    "SMALL_SYSTEM_PROMPT",
    "SYSTEM_PROMPT",
    "Chunk",
    "PromptStyle",
    "build_messages",
    "carries_own_numbers",
    "chunk_budget",
    "estimate_chars_per_token",
    "numbered_entries",
    "overhead_chars",
    "overhead_text",
    "pack_entries",
    "plan_chunks",
    "sample_text",
    "split_chunk",
    "split_raw_lines",
    "window_chunk",
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

Answer in exactly this format, and nothing else (the first block is a short note on what \
you kept; the second holds the copied lines):
{INFO_START}
Kept the lines about the reader's question; left out the rest.
{INFO_END}
{OUTPUT_START}
(the relevant lines, copied exactly)
{OUTPUT_END}"""

SMALL_SYSTEM_PROMPT = f"""\
You pick lines out of a tool output. Write the numbers of the lines that answer the \
question, between {OUTPUT_START} and {OUTPUT_END}. Write nothing else."""
"""The instructions for small models (the ``small`` prompt style): the model names the
lines by their numbers (:mod:`leanloop.pruning.numbers`; an answer that copies lines is
read too). Measured with Qwen2.5-Coder 0.5B on the context suite's needle windows: the
right line named in 6 of 8 requests, against 1 of 8 copied whole when asked to copy; a
sentence on what to write when nothing matches made it write an empty block in 6 of 8
(ADR 0006 amendment 6). The short instruction comes first and the question after the
lines, since the full format (an INFO block, the focus before the lines) gets the focus
echoed back instead."""

PromptStyle = Literal["default", "small"]

# A line number prefix is at least this wide ("  12| "), as in the examples the model sees.
_MIN_NUMBER_WIDTH = 4
# The smallest chunk worth a request, whatever the window says: below this, the
# instructions dominate and the request would most likely fail anyway (then: fallback).
_MIN_CHUNK_CHARS = 400
# The number prefix plan_chunks puts before every shown line.
_NUMBER_PREFIX = re.compile(r"^\s*(\d+)\| ")
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
    spans: tuple[tuple[int, int], ...] = ()
    """The raw line ranges (1-based, inclusive) it shows, when it shows windows of the
    output with gaps between them; ``()`` for one range, ``first_line``-``last_line``."""

    @property
    def ranges(self) -> tuple[tuple[int, int], ...]:
        """The raw line ranges it shows (1-based, inclusive), in order."""
        return self.spans or ((self.first_line, self.last_line),)

    def describe(self) -> str:
        """``lines 3-9`` or ``lines 3-9, 120-126``: what a request says it shows."""
        return "lines " + ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in self.ranges)


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
    *,
    window_tokens: int,
    chars_per_token: float,
    reply_tokens: int,
    overhead_chars: int,
    margin: float = 0.05,
    overhead_chars_per_token: float | None = None,
) -> int:
    """How many characters of numbered output one request may carry.

    Args:
        window_tokens: The pruning model's context window.
        chars_per_token: Characters per token of the output (measured or estimated).
        reply_tokens: Tokens kept free for the answer.
        overhead_chars: Characters of the request that are not output (instructions).
        margin: The share of the window left free for the chat template's own tokens
            and the estimate's error.
        overhead_chars_per_token: Characters per token of the instructions, when they
            are counted apart from the output (prose packs denser than a log); by
            default they count as output characters.

    Returns:
        The chunk size in characters, never below a small floor.
    """
    room = (window_tokens - reply_tokens) * (1.0 - margin)
    if overhead_chars_per_token is None:
        usable = room * chars_per_token - overhead_chars
    else:
        usable = (room - overhead_chars / overhead_chars_per_token) * chars_per_token
    return max(int(usable), _MIN_CHUNK_CHARS)


# Tokens per character of each kind, for a tokenizer we cannot ask (see
# estimate_chars_per_token). Fitted on Qwen2.5's counts of prose, code, logs and JSON,
# except digits: Qwen and Mistral make a token of every digit, GPT-4o and Llama 3 one of
# up to three, so a digit counts as half a token.
_LETTER_TOKENS = 0.2
_DIGIT_TOKENS = 0.5
_SYMBOL_TOKENS = 0.8
_SPACE_TOKENS = 0.1
_NEWLINE_TOKENS = 0.5
_OTHER_TOKENS = 1.0
_MIN_CHARS_PER_TOKEN = 1.0


def estimate_chars_per_token(text: str, *, ceiling: float) -> float:
    """A content-aware estimate of characters per token, for when no server counts.

    Letters pack about five to a token, while digits, punctuation and symbols take a
    token each or nearly so: prose and code come out near 4 characters a token, a log
    of timestamps and ids near 3, compact JSON near 2. The estimate is never above
    ``ceiling`` (the caller's own estimate, 3.3 by default), so prose is sized as it
    always was and only denser content gets smaller chunks.

    Args:
        text: A sample of the text (a few thousand characters are enough).
        ceiling: The highest value to return.

    Returns:
        Characters per token, between 1.0 and ``ceiling``.
    """
    letters = digits = symbols = spaces = newlines = other = 0
    for char in text:
        if not char.isascii():
            other += 1
        elif char.isalpha():
            letters += 1
        elif char.isdigit():
            digits += 1
        elif char == "\n":
            newlines += 1
        elif char.isspace():
            spaces += 1
        else:
            symbols += 1
    tokens = (
        letters * _LETTER_TOKENS
        + digits * _DIGIT_TOKENS
        + symbols * _SYMBOL_TOKENS
        + spaces * _SPACE_TOKENS
        + newlines * _NEWLINE_TOKENS
        + other * _OTHER_TOKENS
    )
    if tokens <= 0:
        return ceiling
    return min(max(len(text) / tokens, _MIN_CHARS_PER_TOKEN), ceiling)


def sample_text(lines: list[str], chars: int) -> str:
    """The first ``chars`` characters of ``lines`` as chunks show them (numbered, escaped)."""
    width = max(_MIN_NUMBER_WIDTH, len(str(len(lines))))
    shown: list[str] = []
    size = 0
    for number, line in enumerate(lines, start=1):
        numbered = f"{number:>{width}}| {_escape(line)}"
        shown.append(numbered)
        size += len(numbered) + 1
        if size >= chars:
            break
    return "\n".join(shown)[:chars]


def numbered_entries(
    lines: list[str], piece_chars: int, *, one_number: bool = False
) -> list[tuple[int, str]]:
    """``lines`` numbered and escaped as a request shows them: ``(number, "  12| text")``.

    A line longer than ``piece_chars`` is cut into pieces that each carry its number, so
    a piece the model keeps can still be checked against that line.

    Args:
        lines: The output's lines.
        piece_chars: The most characters of one shown line.
        one_number: Show an output whose lines carry their own numbers (read_file's
            ``  12| ``) without them, so each line has one number, the request's: a small
            model asked for line numbers named the wrong one of two in 6 of 8 requests.
            What is kept is the raw line, its own number included.
    """
    width = max(_MIN_NUMBER_WIDTH, len(str(len(lines))))
    strip = one_number and carries_own_numbers(lines)
    return [
        (number, f"{number:>{width}}| {piece}")
        for number, line in enumerate(lines, start=1)
        for piece in _pieces(
            _escape(_OWN_NUMBER.sub("", line, count=1) if strip else line), piece_chars - width - 3
        )
    ]


_OWN_NUMBER = re.compile(r"^\s*\d+\| ")
# Share of the lines that must carry a number for an output to count as numbered (the
# rest: read_file's closing line, a blank line at the end).
_NUMBERED_SHARE = 0.9


def carries_own_numbers(lines: list[str]) -> bool:
    """Whether the output numbers its own lines, as read_file does (``  12| text``)."""
    if not lines:
        return False
    numbered = sum(1 for line in lines if _OWN_NUMBER.match(line))
    return numbered >= _NUMBERED_SHARE * len(lines)


def plan_chunks(lines: list[str], budget: int) -> list[Chunk]:
    """Number and escape ``lines`` and pack them, in order, into chunks of ``budget`` chars.

    A line too long for any chunk is cut into pieces that each carry its number, so a
    piece the model keeps can still be checked against that line.
    """
    return pack_entries(numbered_entries(lines, budget), budget)


def pack_entries(entries: list[tuple[int, str]], budget: int) -> list[Chunk]:
    """:func:`numbered_entries` packed, in order, into chunks of ``budget`` characters."""
    chunks: list[Chunk] = []
    pending: list[str] = []
    size, first, last = 0, 1, 1
    for number, numbered in entries:
        if pending and size + len(numbered) + 1 > budget:
            chunks.append(Chunk("\n".join(pending), first, last))
            pending, size, first = [], 0, number
        pending.append(numbered)
        size += len(numbered) + 1
        last = number
    if pending or not chunks:
        chunks.append(Chunk("\n".join(pending), first, last))
    return chunks


def window_chunk(entries: list[tuple[int, str]], windows: list[tuple[int, int]]) -> Chunk:
    """The chunk showing ``windows`` (0-based inclusive ranges of ``entries``), in order.

    Windows that do not touch are shown with an empty line between them; the line numbers
    tell the model where each one sits.
    """
    blocks: list[str] = []
    for first, last in windows:
        blocks.append("\n".join(text for _, text in entries[first : last + 1]))
    return _chunk_of("\n\n".join(blocks).split("\n"), None)


def _pieces(line: str, size: int) -> list[str]:
    size = max(size, 1)
    if len(line) <= size:
        return [line]
    return [line[start : start + size] for start in range(0, len(line), size)]


def overhead_chars(
    *, tool_name: str, focus: str | None, task_context: str, style: PromptStyle = "default"
) -> int:
    """Characters of an extraction request that are not tool output (a close upper bound)."""
    return len(
        overhead_text(tool_name=tool_name, focus=focus, task_context=task_context, style=style)
    )


def overhead_text(
    *, tool_name: str, focus: str | None, task_context: str, style: PromptStyle = "default"
) -> str:
    """The text of an extraction request that is not tool output, with room for the tail."""
    if style == "small":
        question = _small_question(focus=focus, task_context=task_context)
        tail = f"Tool output of {tool_name} (part 12 of 345, lines 1-99999):\n\n\n"
        return SMALL_SYSTEM_PROMPT + tail.ljust(_TAIL_ROOM) + question
    header = _header(tool_name=tool_name, focus=focus, task_context=task_context)
    tail = "Tool output (part 12 of 345, lines 1-99999):\n\n\nAnswer in the marker format."
    return SYSTEM_PROMPT + header + tail.ljust(_TAIL_ROOM)


def split_chunk(chunk: Chunk) -> tuple[Chunk, Chunk] | None:
    """``chunk`` cut in two halves on a line boundary (a single line: in two pieces).

    Returns ``None`` when the chunk is too small to cut.
    """
    entries = chunk.text.split("\n")
    if len(entries) >= 2:
        middle = len(entries) // 2
        halves = (entries[:middle], entries[middle:])
        return _chunk_of(halves[0], chunk), _chunk_of(halves[1], chunk)
    match = _NUMBER_PREFIX.match(entries[0])
    prefix = match.group(0) if match else ""
    body = entries[0][len(prefix) :]
    if len(body) < 2:
        return None
    middle = len(body) // 2
    first = Chunk(prefix + body[:middle], chunk.first_line, chunk.last_line)
    return first, Chunk(prefix + body[middle:], chunk.first_line, chunk.last_line)


def _chunk_of(entries: list[str], parent: Chunk | None) -> Chunk:
    numbers = [int(m.group(1)) for e in entries if (m := _NUMBER_PREFIX.match(e))]
    first = numbers[0] if numbers else (parent.first_line if parent else 1)
    last = numbers[-1] if numbers else (parent.last_line if parent else 1)
    spans: list[tuple[int, int]] = []
    for number in numbers:
        if spans and spans[-1][1] in (number, number - 1):
            spans[-1] = (spans[-1][0], number)
        else:
            spans.append((number, number))
    return Chunk("\n".join(entries), first, last, tuple(spans) if len(spans) > 1 else ())


def build_messages(
    *,
    tool_name: str,
    focus: str | None,
    task_context: str,
    chunk: Chunk,
    parts: int,
    part: int,
    style: PromptStyle = "default",
) -> list[BaseMessage]:
    """The messages of one extraction request: instructions, then what to look for and the lines.

    Args:
        tool_name: The tool that produced the output.
        focus: The main model's own directive; when given it replaces ``task_context``.
        task_context: The user's request and the main model's latest reasoning.
        chunk: The numbered lines to extract from.
        parts: How many chunks the output was split into.
        part: This chunk's 1-based position.
        style: ``default``, or ``small``: short instructions first and the question after
            the lines, for small models.

    Returns:
        A system message with the instructions and a human message with the lines.
    """
    where = chunk.describe()
    if parts > 1:
        where = f"part {part} of {parts}, {where}"
    if style == "small":
        question = _small_question(focus=focus, task_context=task_context)
        text = f"Tool output of {tool_name} ({where}):\n{chunk.text}\n\n{question}"
        return [SystemMessage(SMALL_SYSTEM_PROMPT), HumanMessage(text)]
    header = _header(tool_name=tool_name, focus=focus, task_context=task_context)
    text = f"{header}Tool output ({where}):\n{chunk.text}\n\nAnswer in the marker format."
    return [SystemMessage(SYSTEM_PROMPT), HumanMessage(text)]


def _small_question(*, focus: str | None, task_context: str) -> str:
    if focus is not None:
        return f"Which lines are {_escape(focus.strip())}? Write their numbers."
    context = _escape(task_context.strip()) or "(no task context given)"
    return f"{context}\nWhich line numbers matter for this?"


def _header(*, tool_name: str, focus: str | None, task_context: str) -> str:
    if focus is not None:
        wanted = f"The reader is looking for: {_escape(focus)}"
    else:
        context = _escape(task_context.strip()) or "(no task context given)"
        wanted = f"Keep what matters for the reader's task.\nTask context:\n{context}"
    return f"Tool: {tool_name}\n{wanted}\n\n"
