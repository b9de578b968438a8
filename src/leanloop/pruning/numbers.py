"""A small model's answer given as line numbers, turned into the lines it names.

Measured on the context suite's eight needle windows (ADR 0006 amendment 6): asked to
copy the relevant lines, Qwen2.5-Coder 0.5B copied the right line whole in 1 of 8
requests (a neighbour, a fragment such as ``owner_team: team-wren-62``, or the question
back in the others); asked for the lines' numbers it named the right one in 6 of 8, and
wrote a few tokens instead of a line's sixty, so a request took about a second instead
of several. The 1.5B named all eight either way, four times faster with numbers.

The small prompt style therefore asks for numbers. An answer that is only numbers
(``[39]``, ``27``, ``23-25``, ``[PRUNE_OUTPUT_START, 22]`` — small models mix the
markers into the list) becomes the lines the request showed under those numbers, which
then go through the same verification as copied lines; an answer that copies lines is
read as before. A number the request did not show names nothing, except that an answer
whose numbers are none of those shown but each fits as a place in the request (``3``
for a window of lines 21-24) is read as places: models count the lines they see.
"""

from __future__ import annotations

import re

from leanloop.pruning.prompt import Chunk

__all__ = ["MAX_RANGE_LINES", "lines_named"]

MAX_RANGE_LINES = 50
"""A range longer than this (``1-400``) is not a choice of lines: it names nothing."""

_MARKER_WORD = re.compile(r"\[?\\?PRUNE_(?:OUTPUT|INFO)_(?:START|END)\]?", re.IGNORECASE)
# What a list of numbers is made of: numbers, ranges, brackets, separators, "line(s)",
# "and".
_NUMBERS_ONLY = re.compile(r"(?:[\s\[\](),;:.#-]|\band\b|\blines?\b|\d+)*", re.IGNORECASE)
_ITEM = re.compile(r"(\d+)(?:\s*-\s*(\d+))?")
_SHOWN = re.compile(r"\s*(\d+)\| ")


def lines_named(answer: str, chunk: Chunk) -> str | None:
    """The lines of ``chunk`` an answer of line numbers names, as the request showed them.

    Args:
        answer: The model's answer (inside the markers, or the whole answer).
        chunk: The request's lines, numbered as shown.

    Returns:
        The named lines, one per line, with their numbers; ``""`` when the answer names
        numbers the request did not show; ``None`` when the answer is not a list of
        numbers (it is then read as copied lines).
    """
    text = _MARKER_WORD.sub(" ", answer)
    if not re.search(r"\d", text) or _NUMBERS_ONLY.fullmatch(text) is None:
        return None
    shown: dict[int, list[str]] = {}
    for line in chunk.text.split("\n"):
        found = _SHOWN.match(line)
        if found is not None:
            shown.setdefault(int(found[1]), []).append(line)
    asked: list[int] = []
    for item in _ITEM.finditer(text):
        first = int(item[1])
        last = int(item[2]) if item[2] is not None else first
        if last < first or last - first >= MAX_RANGE_LINES:
            continue
        asked += [n for n in range(first, last + 1) if n not in asked]
    named = [n for n in asked if n in shown]
    order = list(shown)
    if not named and asked and all(1 <= n <= len(order) for n in asked):
        # No number is one the request showed, and each fits as a place in it: the 1.5B
        # answered "3" for the third line of a window of lines 21-24.
        named = [order[n - 1] for n in asked]
    return "\n".join(line for n in sorted(named) for line in shown[n])
