"""Line shapes: what an output is made of, shown to the pruning model in one short request.

A focus in a user's own words ("why the checkout service crashed") shares no word with
the lines that answer it (``java.lang.OutOfMemoryError``), so a word match
(:mod:`leanloop.pruning.rank`) finds nothing to read first, and reading a 50 KB output
whole on a small CPU model takes minutes. Only a model knows that a crash is an
OutOfMemoryError; it need not read every line to say so. An output is mostly lines of a
few kinds (a request handled, a cache hit, a row of the same columns), and the lines a
question is about are usually the rare ones.

:func:`line_shapes` groups the lines by *shape*: the line with its variable parts
(numbers, hex ids, timestamps) masked. :func:`candidates` orders the shapes to show: the
shapes whose lines hold what the word match found, best first, then the shapes with the
rarest words (a word's rarity is BM25's ``idf`` over the lines). The pruning model sees
one example of each, tagged with a short number, and names the tags that answer the
focus (:func:`shapes_messages`); the lines of the shapes it names are then read in
windows like word hits, so the model still picks the kept lines, and every kept line is
a raw line with its own number.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from leanloop.pruning.markers import OUTPUT_END, OUTPUT_START
from leanloop.pruning.markers import escape_reserved as _escape

__all__ = [
    "SHAPES_PROMPT",
    "Shape",
    "candidates",
    "chosen_lines",
    "line_shapes",
    "shape_of",
    "shapes_messages",
]

SHAPES_PROMPT = f"""\
You pick lines out of a tool output. Below are example lines, one of each kind the \
output has. Write the numbers of the lines that answer the question, between \
{OUTPUT_START} and {OUTPUT_END}. Write nothing else."""
"""The instructions of a shapes request (the small style's own words, which the 0.5B and
the 1.5B answer with numbers)."""

# Variable parts of a line: a hex id of six or more characters (left out of examples), and
# for kinds of line every run of letters and digits that holds a digit.
_HEX = re.compile(r"\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b", re.IGNORECASE)
# A run of letters and digits that holds a digit: a number, an id (x2k4l, 5d8f9, E204).
_VARIABLE = re.compile(r"[A-Za-z0-9]*\d[A-Za-z0-9]*(?:[.,:][A-Za-z0-9]*\d[A-Za-z0-9]*)*")
_SPACES = re.compile(r"\s+")
# The words a line's rarity is judged by: letters first, then letters, digits and _.-/
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.\-/]*[A-Za-z0-9]|[A-Za-z]{2,}")
# An example longer than this is shown clipped (its start and its end).
_EXAMPLE_CHARS = 120
_HEAD_CHARS = 40
# What an example leaves out: dates and times (ISO 8601, syslog's "Dec  5 03:14:07", an
# access log's "05/Dec/2026:10:21:07 +0100", a clock "11:37:02.551") and hex ids. They
# tell one line of a kind from another, never which kind answers a question, and they
# are a third of a log line's tokens.
_STAMP = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"
    r"|\b[A-Z][a-z]{2} +\d{1,2} \d{2}:\d{2}:\d{2}"
    r"|\d{2}/[A-Z][a-z]{2}/\d{4}:\d{2}:\d{2}:\d{2}(?: [+-]\d{4})?"
    r"|\b\d{2}:\d{2}:\d{2}(?:[.,]\d+)?"
)
# What a stamp or an id leaves behind: an empty JSON field, empty brackets or quotes.
_EMPTY = re.compile(r'"[\w.-]+": ?"",? ?|\[\]|""')


def shape_of(line: str) -> str:
    """``line`` with its numbers and ids masked and its white space folded."""
    masked = _VARIABLE.sub("0", line)
    return _SPACES.sub(" ", masked).strip()


@dataclass(frozen=True)
class Shape:
    """Lines of one shape: their 0-based indices, the first being the example shown."""

    key: str
    lines: tuple[int, ...]
    by_meaning: bool = False
    """Shown for its line closest in meaning to the focus, not for its rarity: its lines
    may be common, so they do not grow a burst of rare lines (:func:`chosen_lines`)."""

    @property
    def example(self) -> int:
        """The index of the line shown for this shape."""
        return self.lines[0]


def line_shapes(lines: Sequence[str]) -> list[Shape]:
    """The shapes of ``lines`` in order of their first line (blank lines have none)."""
    groups: dict[str, list[int]] = {}
    for index, line in enumerate(lines):
        key = shape_of(line)
        if key:
            groups.setdefault(key, []).append(index)
    return [Shape(key, tuple(indices)) for key, indices in groups.items()]


def _words(line: str) -> set[str]:
    return {shape_of(word).lower() for word in _WORD.findall(line)}


def candidates(
    lines: Sequence[str],
    scores: Sequence[float],
    *,
    max_shapes: int,
    skip: Sequence[int] = (),
    similar: Sequence[float] | None = None,
) -> list[Shape]:
    """The shapes to show the pruning model, in the order to show them.

    First the shapes that hold a line the word match scored, by their best line's score
    (that line is their example); then the others by the rarity of their example's words
    (the sum of the ``idf`` of the words on at most 1% of the lines, or two), rarest
    first; shapes without a letter are left out.

    Args:
        lines: The output's lines.
        scores: Each line's score from the word match (:func:`~leanloop.pruning.rank.
            line_scores`; zeros when nothing matched).
        max_shapes: The most shapes to return.
        skip: Indices of lines never shown (read_file's closing line).
        similar: Each line's closeness in meaning to the focus (:func:`~leanloop.pruning.
            meaning.meaning_scores`), or ``None``. When given and rare shapes are there,
            the shapes the word match did not score alternate: the next rarest shape,
            then the shape of the next line closest in meaning (that line its example).
    """
    n = len(lines)
    left_out = set(skip)
    shapes = [
        s
        for s in line_shapes(lines)
        if any(c.isalpha() for c in s.key) and s.example not in left_out
    ]
    words = [_words(lines[s.example]) for s in shapes]
    df: Counter[str] = Counter()
    for shape, held in zip(shapes, words, strict=True):
        for word in held:
            df[word] += len(shape.lines)
    rare = max(2, n // 100)

    def rarity(held: set[str]) -> float:
        return sum(math.log(n / df[w]) for w in held if df[w] <= rare)

    scored: list[tuple[float, Shape]] = []
    others: list[tuple[float, int, Shape]] = []
    for shape, held in zip(shapes, words, strict=True):
        best = max(shape.lines, key=lambda i: (scores[i], -i))
        if scores[best] > 0:
            moved = (best, *(i for i in shape.lines if i != best))
            scored.append((scores[best], Shape(shape.key, moved)))
        else:
            others.append((rarity(held), len(shape.lines), shape))
    scored.sort(key=lambda item: -item[0])
    others.sort(key=lambda item: (-item[0], item[1]))
    # The word match may be wrong (a focus word inside another word: "log" in "catalog"),
    # so it fills at most half of the list when rare shapes are there to show.
    rare_shapes = [s for surprise, _, s in others if surprise > 0]
    if similar is not None and rare_shapes:
        # Only beside rare kinds: an output without any is read in order, as before, and
        # a list of common kinds alone would stand for that reading. A rare kind close in
        # meaning is shown once, as a rare kind (it grows a burst).
        rare_keys = {s.key for s in rare_shapes}
        near = _by_meaning([s for _, _, s in others if s.key not in rare_keys], similar)
        rare_shapes = _alternate(rare_shapes, near)
    first = [s for _, s in scored][: max(max_shapes - len(rare_shapes), max_shapes // 2)]
    return [*first, *rare_shapes][:max_shapes]


def _by_meaning(shapes: Sequence[Shape], similar: Sequence[float]) -> list[Shape]:
    """``shapes`` by their line closest in meaning, closest first, that line their example."""
    ranked: list[tuple[float, Shape]] = []
    for shape in shapes:
        best = max(shape.lines, key=lambda i: (similar[i], -i))
        moved = (best, *(i for i in shape.lines if i != best))
        ranked.append((similar[best], Shape(shape.key, moved, by_meaning=True)))
    ranked.sort(key=lambda item: -item[0])
    return [shape for _, shape in ranked]


def _alternate(first: Sequence[Shape], second: Sequence[Shape]) -> list[Shape]:
    """One of ``first``, one of ``second``, and so on, each shape once (by its key).

    Neither ranker is trusted alone: the rarest kinds answer an incident ("the checkout
    crashed": an OutOfMemoryError), the closest in meaning answer a document ("money
    back": the refunds line), and a small model picks from the top of a list.
    """
    merged: list[Shape] = []
    seen: set[str] = set()
    for pair in zip(first, second, strict=False):
        for shape in pair:
            if shape.key not in seen:
                seen.add(shape.key)
                merged.append(shape)
    longer = first if len(first) > len(second) else second
    for shape in longer[min(len(first), len(second)) :]:
        if shape.key not in seen:
            seen.add(shape.key)
            merged.append(shape)
    return merged


def chosen_lines(
    shown: Sequence[Shape],
    picked: Sequence[int],
    *,
    per_shape: int,
    scores: Sequence[float],
    reach: int,
) -> list[int]:
    """The lines a shapes answer chose: those of the picked shapes, and the rare lines
    around them.

    Of each picked shape, its ``per_shape`` best lines by ``scores`` (then the first): a
    shape of hundreds of lines is a kind, not an answer. Then, over and over, every line
    of another shape shown that stands within ``reach`` lines of a chosen line: what
    answers a question about an incident is a burst of rare lines (an OutOfMemoryError,
    then the container killed), and a small model names one line of a request.

    Args:
        shown: The shapes the request showed, in its order.
        picked: The 0-based places the model named.
        per_shape: The most lines of one picked shape.
        scores: Each line's word score, to choose a shape's lines by.
        reach: How far, in lines, a rare line may stand from a chosen one.

    Returns:
        The chosen lines' indices, in order.
    """
    chosen: set[int] = set()
    for place in picked:
        shape = shown[place]
        # Its example first: the line the model was shown (the best by the words or by
        # meaning, else the first), then its best by the words.
        best = sorted(shape.lines[1:], key=lambda i: (-scores[i], i))
        chosen.update([shape.example, *best][:per_shape])
    rare = sorted(
        i
        for place, shape in enumerate(shown)
        if place not in picked and not shape.by_meaning
        for i in shape.lines[:per_shape]
    )
    grown = True
    while grown:
        grown = False
        for index in rare:
            if index not in chosen and any(abs(index - c) <= reach for c in chosen):
                chosen.add(index)
                grown = True
    return sorted(chosen)


def _example(line: str) -> str:
    """``line`` as a shapes request shows it: without stamps and ids, clipped."""
    bare = _EMPTY.sub("", _HEX.sub("", _STAMP.sub("", line)))
    text = _SPACES.sub(" ", bare).strip()
    if len(text) <= _EXAMPLE_CHARS:
        return text
    return text[:_HEAD_CHARS] + " … " + text[-(_EXAMPLE_CHARS - _HEAD_CHARS - 3) :]


def shapes_messages(
    *, tool_name: str, focus: str, lines: Sequence[str], shown: Sequence[Shape]
) -> list[BaseMessage]:
    """The request that shows one example line of each of ``shown`` and asks for the
    numbers of those that answer ``focus`` (the numbers are places in the list, 1-based)."""
    listed = "\n".join(
        f"{place:>3}| {_escape(_example(lines[shape.example]))}"
        for place, shape in enumerate(shown, start=1)
    )
    question = f"Which lines are {_escape(focus.strip())}? Write their numbers."
    text = f"Example lines of the {tool_name} output, one of each kind:\n{listed}\n\n{question}"
    return [SystemMessage(SHAPES_PROMPT), HumanMessage(text)]
