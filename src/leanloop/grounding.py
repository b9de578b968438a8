"""Check an answer's values against the lines the tools returned (issue 37).

A small model that has read the right file often answers with the value of the line
beside the one asked for: another service's port, another team's lead, the daily
retention where the weekly one was asked. Nothing the model says is taken at its word
here: the values of an answer (numbers, names, dates, hosts) are looked up in what the
run's tool calls returned, and each line that holds one is compared with the question.

Two findings lead the loop to ask the model once more, pointing at the lines:

- **a distractor**: the answer's value sits on a line that shares fewer of the
  question's words than another line of the same result that holds a value of the same
  kind ("How many laptops…" answered from the keyboard's line while the laptop's line
  was read); the line's section header counts with it (``[weekly]`` above
  ``retention_days = 90``), and prose is compared clause by clause ("Maria Chen leads the
  project; Tom Okafor owns the backend");
- **an unread value**: no line the tools returned holds any of the answer's values
  ("$100,000" where the file lists 780,000 and 410,000).

The check is lexical and cheap (no model call). It never rewrites an answer: it only
decides whether to ask again and what to show; a model that keeps its answer keeps it,
and the report says what was found.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "Grounding",
    "Mismatch",
    "SourceLine",
    "check_answer",
    "recheck_prompt",
    "settle",
    "source_lines",
]

ValueKind = Literal["number", "name", "token"]

_NUMBERED: Final = re.compile(r"^\s*(\d+)\| ?(.*)$")
"""A line of ``read_file``'s output (``   12| text``)."""
_SEARCH_HIT: Final = re.compile(r"^([^\s:][^:]*):(\d+):(.*)$")
"""A line of ``search``'s output (``path:12:text``)."""
_FOOTER: Final = re.compile(
    r"^\[(?:lines |PRUNE_|/?PRUNE|\d+/\d+ lines)|^\[[^\]]*(?:of|kept|unread)"
)
"""Lines the tools or the pruning pass add around the data."""
_INFO_START: Final = "[PRUNE_INFO_START]"
_INFO_END: Final = "[PRUNE_INFO_END]"
"""The pruning pass's own note on what it kept (``pruned from 45862 to 27 characters``,
``1/400 lines kept; unread 1-116``): none of its lines is what the tool returned. A tool's
output cannot forge the markers (the pruning pass escapes them)."""

_NUMBER: Final = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)*(?![\w])")
_NAME: Final = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*\b")
_TOKEN: Final = re.compile(r"\b[\w-]+(?:\.[\w-]+)+\b|\b[a-z]+[_-]?\d[\w-]*\b", re.IGNORECASE)
"""Hosts, versions, ids: ``mail.example.com``, ``1.4.0``, ``worker-2``, ``E777``."""
_WORD: Final = re.compile(r"[a-z0-9]+")
_FILE_NAME: Final = re.compile(r"[\w./-]+\.[A-Za-z]{1,5}\b")
"""A file the question names: its words say where to look, not which line answers."""
_HEADER: Final = re.compile(r"^\s*(?:\[[^\]]+\]|#{1,6}\s+\S.*)\s*$")
_CLAUSE: Final = re.compile(r";\s+|,\s+|\s+-\s+|\s+\(|\)\s*")
_STRUCTURED: Final = re.compile(r"\":|^\s*[{|\[]|=")
"""A line of JSON, a table row, INI/TOML: its commas do not separate facts."""

_STOP: Final = frozenset(
    re.findall(
        r"\w+",
        """
        a an the of in on at to for by with from and or is are was were be been does do did
        what which who whom whose when where why how many much long according file files say
        says said tell me please set sets give gives use uses used it its this that these
        those there their they she he her his as about into per than then any some all one
        """,
    )
)
"""Words of a question that say nothing about which line answers it."""

_SENTENCE_OPENERS: Final = frozenset(
    re.findall(r"\w+", "The A An It This That There These Those In On At According Yes No")
)
"""Capitalised words that open a sentence and are no name."""

_MIN_STEM: Final = 4
_CLOSEST: Final = 3
"""Lines shown when the answer's values are in nothing the tools returned."""


@dataclass(frozen=True)
class SourceLine:
    """One line of what a tool call returned.

    Attributes:
        source: Where it came from: the file (``read_file``, ``search``) or the tool.
        number: Its line number where the tool numbered it, else its place in the result.
        text: The line as the tool returned it, without the number.
        section: The nearest header above it in the same result (``[weekly]``,
            ``## 1.2.0 - 2026-08-14``), ``""`` when none.
        result: Which tool result it belongs to (its place in the run).
    """

    source: str
    number: int
    text: str
    section: str = ""
    result: int = 0

    def shown(self) -> str:
        """The line as the check quotes it to the model."""
        return f"{self.source} line {self.number}: {self.text.strip()}"


@dataclass(frozen=True)
class Mismatch:
    """An answer's value found on a line that matches the question less than another.

    Attributes:
        value: The answer's value.
        used: The line that holds it.
        better: A line of the same result that holds another value of the same kind and
            shares more of the question's words.
        words: The question's words the better line has and the used one lacks.
    """

    value: str
    used: SourceLine
    better: SourceLine
    words: tuple[str, ...]


@dataclass(frozen=True)
class Grounding:
    """What the check found for one answer.

    Attributes:
        values: The values taken from the answer.
        found: Per value found in what the tools returned, the best line holding it.
        unread: The values no line holds.
        mismatch: A distractor, when every value found sits on a line beaten by another.
    """

    values: tuple[str, ...] = ()
    found: dict[str, SourceLine] = field(default_factory=dict)
    unread: tuple[str, ...] = ()
    mismatch: Mismatch | None = None

    @property
    def doubtful(self) -> bool:
        """Whether the loop should ask the model once more."""
        if self.mismatch is not None:
            return True
        return bool(self.values) and not self.found

    def summary(self) -> str:
        """One line for the report and the log."""
        if self.mismatch is not None:
            m = self.mismatch
            return (
                f"{m.value!r} is on {m.used.source} line {m.used.number}; line "
                f"{m.better.number} names {', '.join(m.words)} as the question does"
            )
        if self.values and not self.found:
            return f"{', '.join(repr(v) for v in self.values)}: in nothing the tools returned"
        if self.found:
            return "; ".join(
                f"{value!r} on {line.source} line {line.number}"
                for value, line in self.found.items()
            )
        return "no value to check"


def source_lines(results: Iterable[tuple[str, str]]) -> list[SourceLine]:
    """Split tool results into their lines, each with its source and section.

    Args:
        results: ``(source, text)`` per tool result: the file a ``read_file`` call read
            (or the tool's name) and what it returned.

    Returns:
        Every data line, numbered as the tool numbered it (else by its place).
    """
    lines: list[SourceLine] = []
    for index, (source, text) in enumerate(results):
        section, note = "", False
        for place, raw in enumerate(text.splitlines(), 1):
            if raw.strip() in (_INFO_START, _INFO_END):
                note = raw.strip() == _INFO_START
                continue
            if note:
                continue
            where, number, body = source, place, raw
            if (numbered := _NUMBERED.match(raw)) is not None:
                number, body = int(numbered.group(1)), numbered.group(2)
            elif (hit := _SEARCH_HIT.match(raw)) is not None:
                where, number, body = hit.group(1), int(hit.group(2)), hit.group(3)
            if not body.strip() or _FOOTER.match(body.strip()):
                continue
            if _HEADER.match(body):
                section = body.strip()
            lines.append(SourceLine(where, number, body, section, index))
    return lines


def check_answer(question: str, answer: str, lines: Sequence[SourceLine]) -> Grounding:
    """Look the answer's values up in ``lines`` and compare their lines with the question.

    Args:
        question: The user's request.
        answer: The answer the run is about to return.
        lines: What the run's tool calls returned (:func:`source_lines`).

    Returns:
        The grounding: where each value was found, which were not, and a distractor.
    """
    asked = _words(_FILE_NAME.sub(" ", question))
    values = _values(answer, exclude=question)
    if not values or not lines or not asked:
        return Grounding(values=tuple(v for v, _ in values))
    found: dict[str, SourceLine] = {}
    held: dict[str, _Held] = {}
    for value, _kind in values:
        holding = [unit for line in lines if (unit := _holds(line, value, asked)) is not None]
        if holding:
            held[value] = max(holding, key=lambda unit: unit.score)
            found[value] = held[value].line
    unread = tuple(v for v, _ in values if v not in found)
    mismatch = _mismatch(values, held, lines, asked) if held else None
    return Grounding(tuple(v for v, _ in values), found, unread, mismatch)


def recheck_prompt(question: str, grounding: Grounding, lines: Sequence[SourceLine]) -> str | None:
    """The one short request that asks the model again, from the lines that matter.

    The request stands alone: the question and a few lines, without the conversation or
    the first answer. Measured on the embedded 0.5B (four distractor answers of the
    first-agent benchmark's tuning set), a request that showed the two lines and the
    question was answered right 4 of 4 times in 1.3-2.1 s; the same lines appended to the
    conversation, after the model's own answer, 0-1 of 4 (the model kept its answer).

    Args:
        question: The user's request.
        grounding: A doubtful grounding (:attr:`Grounding.doubtful`).
        lines: What the run's tool calls returned.

    Returns:
        The request's text, or ``None`` when no line shares a word with the question
        (there is nothing better to show).
    """
    asked = _words(_FILE_NAME.sub(" ", question))
    if grounding.mismatch is not None:
        shown = sorted({grounding.mismatch.used, grounding.mismatch.better}, key=_place)
        lead = f"Two lines of {grounding.mismatch.used.source}:"
        ask = "Answer in one sentence from the line that answers the question."
    else:
        close = [line for line in _distinct(lines) if _score(line.text, line.section, asked) > 0]
        close.sort(key=lambda line: -_score(line.text, line.section, asked))
        shown = sorted(close[:_CLOSEST], key=_place)
        if not shown:
            return None
        lead = "The lines the tools returned that are closest to the question:"
        ask = (
            "Answer in one sentence from these lines. If they do not hold the answer, "
            "say that it is not there."
        )
    quoted = "\n".join(_quoted(line) for line in shown)
    return f"{lead}\n{quoted}\n\nQuestion: {question}\n{ask}"


def settle(first: Grounding, second: Grounding) -> bool:
    """Whether the second answer replaces the first.

    It does when its values are in what the tools returned and, after a distractor, none
    of them is the first answer's value on the line that lost.

    Args:
        first: The doubtful grounding of the run's answer.
        second: The grounding of the answer to :func:`recheck_prompt`'s request.

    Returns:
        ``True`` to take the second answer.
    """
    if not second.found or second.mismatch is not None:
        return False
    if first.mismatch is not None:
        return first.mismatch.value not in second.found
    return True


def _distinct(lines: Sequence[SourceLine]) -> list[SourceLine]:
    """``lines`` with each line of a source once: a file read twice (a prefetch, then the
    model's own read of it) holds the same lines in two results."""
    first: dict[tuple[str, int, str], SourceLine] = {}
    for line in lines:
        first.setdefault((line.source, line.number, line.text.strip()), line)
    return list(first.values())


def _place(line: SourceLine) -> tuple[int, int]:
    return line.result, line.number


def _quoted(line: SourceLine) -> str:
    under = (
        f"   (under {line.section})" if line.section and line.section != line.text.strip() else ""
    )
    return f"{line.source} line {line.number}: {line.text.strip()}{under}"


@dataclass(frozen=True)
class _Held:
    """The unit of a line (the line, or one clause of prose) that holds a value."""

    line: SourceLine
    unit: str
    score: int


def _mismatch(
    values: Sequence[tuple[str, ValueKind]],
    held: dict[str, _Held],
    lines: Sequence[SourceLine],
    asked: frozenset[str],
) -> Mismatch | None:
    """A distractor when every value found is beaten by another line of its kind."""
    answer_values = {value for value, _ in values}
    best: Mismatch | None = None
    for value, kind in values:
        used = held.get(value)
        if used is None:
            continue
        rivals = [
            (score, line, words)
            for line in lines
            if line.result == used.line.result
            for unit in _units(line.text)
            if unit != used.unit
            and _rival_value(unit, kind, answer_values)
            and (score := _score(unit, line.section, asked)) > used.score
            and (words := _extra(unit, line.section, used, asked))
        ]
        if not rivals:
            return None  # this value is on the best line of its kind: the answer stands
        _, line, words = max(rivals, key=lambda rival: rival[0])
        if best is None:
            best = Mismatch(value, used.line, line, words)
    return best


def _holds(line: SourceLine, value: str, asked: frozenset[str]) -> _Held | None:
    """The best-scoring unit of ``line`` that holds ``value``; ``None`` when none does."""
    pattern = re.compile(rf"(?<![\w.]){re.escape(value)}(?![\w])")
    units = [
        _Held(line, unit, _score(unit, line.section, asked))
        for unit in _units(line.text)
        if pattern.search(unit)
    ]
    return max(units, key=lambda unit: unit.score, default=None)


def _units(text: str) -> list[str]:
    """The facts of a line: the line itself, or its clauses when it is prose."""
    if _STRUCTURED.search(text):
        return [text]
    parts = [part for part in _CLAUSE.split(text) if part.strip()]
    return parts or [text]


def _score(unit: str, section: str, asked: frozenset[str]) -> int:
    return len(asked & (_words(unit) | _words(section)))


def _extra(unit: str, section: str, used: _Held, asked: frozenset[str]) -> tuple[str, ...]:
    """The question's words ``unit`` (with its section) has and the used unit lacks."""
    mine = _words(unit) | _words(section)
    theirs = _words(used.unit) | _words(used.line.section)
    return tuple(sorted(asked & (mine - theirs)))


def _rival_value(unit: str, kind: ValueKind, answer_values: set[str]) -> bool:
    """Whether ``unit`` holds a value of ``kind`` the answer does not give."""
    return any(value not in answer_values for value, _ in _kind_values(unit, kind))


def _values(text: str, *, exclude: str) -> list[tuple[str, ValueKind]]:
    """The values of an answer: numbers, names and tokens the question does not hold."""
    asked = exclude.lower()
    seen: dict[str, ValueKind] = {}
    for kind in ("token", "number", "name"):
        for value, _ in _kind_values(text, kind):
            if value.lower() in asked or any(value in other for other in seen):
                continue
            seen[value] = kind
    return list(seen.items())


def _kind_values(text: str, kind: ValueKind) -> list[tuple[str, ValueKind]]:
    if kind == "number":
        found = [m.group(0).rstrip(".,") for m in _NUMBER.finditer(text)]
    elif kind == "token":
        found = [m.group(0) for m in _TOKEN.finditer(text) if not m.group(0).isdigit()]
        found = [t for t in found if not _NUMBER.fullmatch(t)]
    else:
        found = [_name(m.group(0), opens=_opens(text, m.start())) for m in _NAME.finditer(text)]
    return [(value, kind) for value in found if value]


def _opens(text: str, start: int) -> bool:
    """Whether the word at ``start`` opens a sentence (or the text)."""
    before = text[:start].rstrip()
    return not before or before[-1] in ".!?:\n`*\"'("


def _name(name: str, *, opens: bool) -> str:
    """``name`` as a value: a capitalised word that only opens a sentence is no name."""
    first, _, rest = name.partition(" ")
    if first in _SENTENCE_OPENERS or (opens and not rest):
        return rest
    return name


def _words(text: str) -> frozenset[str]:
    """The content words of ``text``, lower-cased and stemmed a little."""
    return frozenset(_stem(word) for word in _WORD.findall(text.lower()) if word not in _STOP)


def _stem(word: str) -> str:
    """Plural to singular, roughly: ``laptops``, ``leads``, ``entries``."""
    if len(word) >= _MIN_STEM and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) >= _MIN_STEM and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word
