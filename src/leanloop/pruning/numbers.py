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
for a window of lines 21-24) is read as places: models count the lines they see. Failing
that, a number a shown line holds names that line, and a number of two digits or more
that ends one shown number (``25`` for line 125) names that line: the 1.5B drops leading
digits.

A small model also names the neighbour of the line it means (measured on the 0.5B: lines
113-114 for an ``ERROR code=E777`` line at 112, the same answer twice). So a number is
not taken at its word when the pass knows better (:func:`resolve_named`): a named line
that holds nothing the pass looks for (or much less), one or two lines from a shown line
that does, stands for that line.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from leanloop.pruning.prompt import Chunk

__all__ = [
    "CLEARLY_MORE",
    "MAX_RANGE_LINES",
    "NEIGHBOUR_REACH",
    "Resolution",
    "lines_named",
    "resolve_named",
]

NEIGHBOUR_REACH = 2
"""How far (in lines) a named line may stand from the line it is taken to mean."""
CLEARLY_MORE = 1 / 0.6
"""How many times a named line's score a neighbour must score to be the line meant: the
inverse of the pass's weaker-match share (:data:`~leanloop.pruning.reading.WEAKER_SHARE`),
below which a line is a near miss of the best match."""

_TAIL_MIN = 10
"""A named number shorter than this is not read as the tail of a line number."""

MAX_RANGE_LINES = 50
"""A range longer than this (``1-400``) is not a choice of lines: it names nothing."""

# A marker as small models write it: bracketed or not, escaped, or closed like an HTML
# tag (the 1.5B answered "270[/PRUNE_OUTPUT_END]").
_MARKER_WORD = re.compile(r"\[?[\\/]?PRUNE_(?:OUTPUT|INFO)_(?:START|END)\]?", re.IGNORECASE)
# What a list of numbers is made of: numbers, ranges, brackets, separators, "line(s)",
# "and".
_NUMBERS_ONLY = re.compile(r"(?:[\s\[\](),;:.#-]|\band\b|\blines?\b|\d+)*", re.IGNORECASE)
_ITEM = re.compile(r"(\d+)(?:\s*-\s*(\d+))?")
_SHOWN = re.compile(r"\s*(\d+)\| ")


@dataclass(frozen=True)
class Resolution:
    """What the pass knows of an output's lines, to resolve a named line (:func:`resolve_named`)."""

    evidence: tuple[float, ...]
    """Each raw line's score (0-based) with the focus's words as whole words."""
    rare: frozenset[int] = frozenset()
    """Raw line numbers (1-based) of a rare kind of line: meant when named."""
    literal: frozenset[int] = frozenset()
    """Raw line numbers (1-based) of the lines holding a literal of the focus."""


def lines_named(answer: str, chunk: Chunk, resolution: Resolution | None = None) -> str | None:
    """The lines of ``chunk`` an answer of line numbers names, as the request showed them.

    Args:
        answer: The model's answer (inside the markers, or the whole answer).
        chunk: The request's lines, numbered as shown.
        resolution: What resolves a named line to the line meant (:func:`resolve_named`);
            ``None``: taken as named.

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
    if not named and asked:
        # No number is one the request showed nor a place in it: the model wrote a value
        # it read ("[48]" for "pool_size = 48" at line 621). A number that stands, as a
        # whole number, in exactly one shown line names that line.
        named = _lines_holding(asked, shown)
    if not named and asked:
        # Nor a value it read: the model dropped the number's first digits (the 1.5B
        # answered "25" for line 125 of a window of lines 124-126). A number of two
        # digits or more that ends exactly one shown number names that line.
        named = _numbers_ending(asked, list(shown))
    if resolution is not None:
        named = resolve_named(
            named,
            list(shown),
            resolution.evidence,
            fixed=resolution.rare,
            literal=resolution.literal,
        )
    return "\n".join(line for n in sorted(named) for line in shown[n])


def _numbers_ending(values: Sequence[int], shown: Sequence[int]) -> list[int]:
    """The shown numbers each of ``values`` (of two digits or more) is the tail of, when
    it ends one shown number only."""
    named: list[int] = []
    for value in values:
        if value < _TAIL_MIN:
            continue
        tail = str(value)
        ending = [n for n in shown if n > value and str(n).endswith(tail)]
        if len(ending) == 1 and ending[0] not in named:
            named.append(ending[0])
    return named


def _lines_holding(values: Sequence[int], shown: dict[int, list[str]]) -> list[int]:
    """The shown lines each of ``values`` stands in as a whole number, when in one only."""
    named: list[int] = []
    for value in values:
        pattern = re.compile(rf"(?<![\d.]){value}(?![\d.]\d)")
        holding = [
            number
            for number, lines in shown.items()
            if any(pattern.search(_SHOWN.sub("", line, count=1)) for line in lines)
        ]
        if len(holding) == 1 and holding[0] not in named:
            named.append(holding[0])
    return named


def resolve_named(
    named: Sequence[int],
    shown: Sequence[int],
    scores: Sequence[float],
    *,
    fixed: Collection[int] = (),
    literal: Collection[int] = (),
) -> list[int]:
    """The lines meant by ``named`` (1-based numbers among ``shown``), each once.

    A named line stands for a shown line within :data:`NEIGHBOUR_REACH` lines of it that
    holds what the pass looks for much more: any score when the named line scores
    nothing, else over :data:`CLEARLY_MORE` times its score (the 1.5B named an
    ``ERROR code=E204`` line beside the ``ERROR code=E777`` line asked for). Of several,
    the nearest; at the same distance the higher score, then the earlier. Nothing moves
    when no shown line scores: then nothing tells the pass better than the model, nor
    when the named line is in ``fixed``.

    Args:
        named: The numbers the model named.
        shown: The numbers the request showed.
        scores: Each raw line's score, 0-based (a number past its end scores nothing).
        fixed: Lines taken as named unless a neighbour holds a literal of the focus
            that they lack: the pass passes the lines of a rare kind (a one-of-a-kind
            line is meant by who names it: the 0.5B named a key derivation two lines
            below a docstring holding the focus word), while a literal the user wrote
            is the strongest evidence there is (the 1.5B named ``pool_timeout_s = 12``
            beside the ``pool_size = 48`` asked for).
        literal: Lines holding a literal of the focus (a code, an id, a quoted string).
    """

    def score(number: int) -> float:
        return scores[number - 1] if 1 <= number <= len(scores) else 0.0

    visible = set(shown)
    meant: list[int] = []
    for number in named:
        target = number
        floor = score(number) * CLEARLY_MORE
        near = [
            other
            for distance in range(1, NEIGHBOUR_REACH + 1)
            for other in (number - distance, number + distance)
            if other in visible
            and score(other) > floor
            and (number not in fixed or (other in literal and number not in literal))
        ]
        if near:
            target = min(near, key=lambda o: (abs(o - number), -score(o), o))
        if target not in meant:
            meant.append(target)
    return meant
