"""What a pruning pass reads, and in which order: small windows around the focus's hits.

A small model on a CPU reads a few dozen to a few hundred prompt tokens a second, so
reading a 28,000-token log whole takes minutes whatever the code does. The pass is fast
only by reading less. The output's lines are scored against what the pass looks for
(``output_prune_context``, else the question narrowed to this output):

- each word of the focus (stopwords left out; a plural also finds its singular) counts
  by its rarity among the lines, BM25's ``idf``;
- a literal the focus names exactly (a quoted string, an identifier or number such as
  ``RB-43925``, ``team_wren``, ``590ms``, ``/var/log``, an upper-case code such as
  ``ERROR``) counts :data:`LITERAL_WEIGHT` times, matched as written;
- a term on more than half the lines says nothing about where to look and counts for
  nothing.

Around each line that scores, best first, a window of its neighbouring lines is cut
(:func:`plan_windows`), a few hundred tokens, never overlapping another; the lines no
window took form windows of score 0 in their own order. The windows are then packed,
best first, into requests of the pass's chunk size (:func:`pack_windows`). The pass
reads the requests in that order and stops early (:mod:`leanloop.pruning.extraction`): the
score decides what the pruning model reads and when to stop, never what is kept, which
stays the pruning model's call; every line not read is named in the result with the call
that reads it.

Measured against ``rank-bm25``'s BM25Okapi on line level (``benchmarks/ranking_recall.py``):
see ADR 0006, amendment 5.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "LITERAL_WEIGHT",
    "Focus",
    "Window",
    "focus_of",
    "focus_terms",
    "line_scores",
    "pack_windows",
    "plan_windows",
    "whole_word_scores",
]

LITERAL_WEIGHT = 3.0
"""How much more a literal the focus names exactly counts than a plain word."""
# A word on more than this share of the lines is everywhere: it cannot say where to look.
_COMMON_SHARE = 0.5

_WORD = re.compile(r"[a-z0-9][a-z0-9_.-]*[a-z0-9]|[a-z0-9]", re.IGNORECASE)
# A token the focus names exactly: it holds a digit, an inner _ . / : - or is an
# upper-case code of two or more letters (ERROR, ENOENT, HTTP_500).
_LITERAL_TOKEN = re.compile(r"[A-Za-z0-9_./:-]*[A-Za-z0-9]")
# A quote opens and closes only at a word's edge: the apostrophes of "isn't" and
# "customer's" quote nothing.
_QUOTED = re.compile(
    r"(?<!\w)\"([^\"\n]{2,80})\"(?!\w)|(?<!\w)'([^'\n]{2,80})'(?!\w)|`([^`\n]{2,80})`"
)
_INNER_MARK = re.compile(r"\w[_./:-]\w")
_CODE = re.compile(r"^[A-Z][A-Z0-9_]+$")
# Words that say nothing about where to look (questions and focus phrases are full of
# them), and the frame words of the task context (task_context_from).
_STOPWORD_TEXT = """
    a about above after all also an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further
    had has have having here how i if in into is it its just may me more most my no nor not
    now of off on once only or other our out over own same should so some such than that
    the their them then there these they this those through to too under until up very
    was we were what when where which while who whom why will with would you your
    line lines show shows find tell give get file files output part parts relevant report
    reports look looking please kept keep only whole
    user asked assistant assistant's latest reasoning
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())


@dataclass(frozen=True)
class Focus:
    """What a pass looks for: words (matched in any case) and literals (as written)."""

    words: tuple[str, ...]
    literals: tuple[str, ...]

    @property
    def empty(self) -> bool:
        """Whether there is nothing to look for."""
        return not self.words and not self.literals

    def without(self, subject: str | None) -> Focus:
        """This focus less the terms of ``subject``, the path of the output being read.

        A question names the file it asks about ("in logs/api-04.log, the build_tag of
        …"); inside that file's output the path says nothing about where to look, and a
        header line that repeats it would outrank the lines asked for.
        """
        if not subject or not subject.strip():
            return self
        path = subject.strip().removeprefix("./")
        gone = set(focus_terms(path))
        words = tuple(w for w in self.words if w not in gone)
        literals = tuple(
            literal
            for literal in self.literals
            if literal != path and not path.endswith("/" + literal) and literal.lower() not in gone
        )
        return Focus(words, literals)

    def describe(self) -> str:
        """The terms as a short list for the info block (``deadlock, "ERROR"``)."""
        shown = [*self.words[:6], *(f'"{literal}"' for literal in self.literals[:4])]
        return ", ".join(shown)


def focus_terms(text: str) -> list[str]:
    """The words of ``text`` worth looking for: lowercased, without stopwords, each once."""
    words = (w.lower().strip("._-") for w in _WORD.findall(text))
    return list(dict.fromkeys(w for w in words if len(w) > 2 and w not in _STOPWORDS))


def focus_of(text: str) -> Focus:
    """The words and the exact literals of a focus directive or task context."""
    literals: list[str] = []
    for match in _QUOTED.finditer(text):
        quoted = next(group for group in match.groups() if group is not None).strip()
        if quoted:
            literals.append(quoted)
    for found in _LITERAL_TOKEN.findall(_QUOTED.sub(" ", text)):
        token = found.strip("._:/-")
        if len(token) < 2 or token.lower() in _STOPWORDS:
            continue
        if any(c.isdigit() for c in token) or _INNER_MARK.search(token) or _CODE.match(token):
            literals.append(token)
    return Focus(tuple(focus_terms(text)), tuple(dict.fromkeys(literals)))


def line_scores(lines: Sequence[str], focus: Focus) -> list[float]:
    """How strongly each line holds what ``focus`` looks for (0.0: nothing of it).

    A term's weight is BM25's ``idf`` over the lines, ``log(1 + (n - df + 0.5) /
    (df + 0.5))``, times :data:`LITERAL_WEIGHT` for a literal; a line scores the sum of
    the weights of the terms it holds. A term on more than half the lines weighs nothing.
    """
    if not lines or focus.empty:
        return [0.0] * len(lines)
    lowered = [line.lower() for line in lines]
    holders = [
        ([i for i, text in enumerate(lowered) if any(f in text for f in _forms(w))], 1.0)
        for w in focus.words
    ]
    holders += [
        ([i for i, text in enumerate(lines) if lit in text], LITERAL_WEIGHT)
        for lit in focus.literals
    ]
    return _weighed(len(lines), holders)


def _weighed(n: int, holders: Sequence[tuple[list[int], float]]) -> list[float]:
    """Each of ``n`` lines' score: the ``idf`` times the weight of each term it holds,
    given each term's holding lines and weight (a term on over half the lines: nothing)."""
    scores = [0.0] * n
    for holding, weight in holders:
        df = len(holding)
        if df == 0 or df > n * _COMMON_SHARE:
            continue
        idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        for i in holding:
            scores[i] += weight * idf
    return scores


def whole_word_scores(lines: Sequence[str], focus: Focus) -> list[float]:
    """:func:`line_scores` with each focus word matched only as a whole word.

    The ranking matches a word inside longer ones ("error" in ``OutOfMemoryError``),
    which finds more places to read; to judge which of two neighbours a model meant, a
    word inside another ("log" in ``catalog``) is no evidence.
    """
    if not lines or focus.empty:
        return [0.0] * len(lines)
    lowered = [line.lower() for line in lines]
    holders = []
    for word in focus.words:
        alternatives = "|".join(map(re.escape, _forms(word)))
        pattern = re.compile(rf"(?<![a-z0-9_])(?:{alternatives})(?![a-z0-9_])")
        holders.append(([i for i, text in enumerate(lowered) if pattern.search(text)], 1.0))
    holders += [
        ([i for i, text in enumerate(lines) if lit in text], LITERAL_WEIGHT)
        for lit in focus.literals
    ]
    return _weighed(len(lines), holders)


def _forms(word: str) -> tuple[str, ...]:
    """``word`` and its singular, so that "errors" finds "ERROR" and "needles" "needle"."""
    if len(word) > 4 and word.endswith("ies"):
        return word, word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word, word[:-1]
    return (word,)


@dataclass(frozen=True)
class Window:
    """Consecutive entries ``first``..``last`` (0-based, inclusive) and their score."""

    first: int
    last: int
    score: float


def plan_windows(sizes: Sequence[int], scores: Sequence[float], max_chars: int) -> list[Window]:
    """Windows over the entries, in the order to read them.

    Around each scoring entry not yet in a window, best first, a window grows one
    neighbour at a time on each side while it stays within ``max_chars`` and does not
    reach into another window; its score is the sum of its entries' scores. The entries
    left over are cut, in order, into windows of score 0 of at most ``max_chars``.

    Args:
        sizes: Characters of each entry as a request shows it (newline included).
        scores: Each entry's score (:func:`line_scores`).
        max_chars: The most characters of one window (an entry larger than this is a
            window of its own).

    Returns:
        The scoring windows, best first (ties: earlier first), then the rest in order.
    """
    n = len(sizes)
    taken = [False] * n
    hits: list[Window] = []
    for centre in sorted((i for i in range(n) if scores[i] > 0), key=lambda i: (-scores[i], i)):
        if taken[centre]:
            continue
        first = last = centre
        taken[centre] = True
        size = sizes[centre]
        grown = True
        while grown:
            grown = False
            for j in (first - 1, last + 1):
                if 0 <= j < n and not taken[j] and size + sizes[j] <= max_chars:
                    taken[j] = True
                    size += sizes[j]
                    first, last = min(first, j), max(last, j)
                    grown = True
        hits.append(Window(first, last, sum(scores[first : last + 1])))
    hits.sort(key=lambda w: (-w.score, w.first))
    return hits + _rest(sizes, taken, max_chars)


def _rest(sizes: Sequence[int], taken: Sequence[bool], max_chars: int) -> list[Window]:
    """The entries no window took, cut in order into windows of score 0."""
    rest: list[Window] = []
    start: int | None = None
    size = 0
    for i, used in enumerate([*taken, True]):
        if start is not None and (used or size + sizes[i] > max_chars):
            rest.append(Window(start, i - 1, 0.0))
            start = None
        if not used:
            if start is None:
                start, size = i, 0
            size += sizes[i]
    return rest


def pack_windows(
    windows: Sequence[Window], sizes: Sequence[int], budget: int
) -> list[list[Window]]:
    """``windows`` packed, in their order, into requests of at most ``budget`` characters.

    Scoring windows and windows of score 0 never share a request (the pass may stop
    before the latter). Within a request the windows are in line order.
    """
    batches: list[list[Window]] = []
    current: list[Window] = []
    used = 0
    for window in windows:
        size = sum(sizes[window.first : window.last + 1]) + 1  # the gap between windows
        scoring = window.score > 0
        if current and (used + size > budget or (current[0].score > 0) != scoring):
            batches.append(sorted(current, key=lambda w: w.first))
            current, used = [], 0
        current.append(window)
        used += size
    if current:
        batches.append(sorted(current, key=lambda w: w.first))
    return batches
