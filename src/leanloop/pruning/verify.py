"""Check an extraction against the original: only lines that are really there survive.

A pruning model may paraphrase, summarise or invent. Every non-blank line it returns is
looked up in the raw output, ignoring differences in whitespace and a line-number prefix
(``  12| ``) the model may have copied from the prompt.

What is kept is always whole raw lines: a piece of a line stands for the whole line, so
an extract can never turn "does NOT listen on port 8080" into "listen on port 8080". A
piece is recognised by the line number it carries, or, without one, when it is a long
enough run of text found in exactly one raw line (small models copy a line's message
and drop its timestamp, or put a label such as "one line:" in front). Only a line too
long to keep whole (a minified file) is kept as its piece, between "…" marks that say it
is partial. Lines that cannot be found are dropped and counted; a code fence the model
wrapped its answer in is dropped without counting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["RawIndex", "Verified", "strip_line_numbers", "verify_lines"]

_NUMBERED = re.compile(r"\s*(\d+)\| ?(.*)", re.DOTALL)
_FENCE = re.compile(r"\s*(```|~~~)\S*\s*")
# A bullet a model may put before a copied line.
_BULLET = re.compile(r"^\s*[-*•]\s+")
# A piece without a line number must be at least this long to stand for its line.
_MIN_PIECE_CHARS = 24
# A raw line longer than this is kept as the piece the model chose, marked partial.
_WHOLE_LINE_CHARS = 2_000


def _norm(text: str) -> str:
    return " ".join(text.split())


@dataclass(frozen=True)
class Verified:
    """What survived verification of one extraction."""

    lines: list[str]
    """The kept lines (blank lines included), without line-number prefixes."""
    claimed: int
    """Non-blank lines the model returned (wrapping code fences not counted)."""
    dropped: int
    """Non-blank lines that could not be found in the raw output."""


class RawIndex:
    """The raw output's lines, indexed by their whitespace-normalised text."""

    def __init__(self, lines: list[str]) -> None:
        """Index ``lines`` (the raw output split into lines, 1-based numbers)."""
        self._lines = lines
        self._norms: dict[int, str] = {}
        self._by_norm: dict[str, str] = {}
        for line in lines:
            self._by_norm.setdefault(_norm(line), line)

    def find(self, line: str) -> str | None:
        """The raw text ``line`` stands for, or ``None`` when it is not in the output."""
        # A line copied whole (a read_file line keeps its own "101|" prefix) wins over
        # reading that prefix as the prompt's line number.
        whole = self._by_norm.get(_norm(line))
        if whole is not None:
            return whole
        numbered = _NUMBERED.fullmatch(line)
        if numbered is not None:
            body = numbered[2]
            original = self._numbered(int(numbered[1]))
            if original is not None:
                wanted, have = _norm(body), self._norm_of(int(numbered[1]))
                if wanted == have:
                    return original
                if wanted and wanted in have:  # a piece of that line: the line
                    return _whole_or_piece(original, body)
            found = self._by_norm.get(_norm(body))
            if found is not None:
                return found
            line = body
        return self._by_piece(line)

    def _by_piece(self, line: str) -> str | None:
        """The one raw line that contains ``line``, or what follows a label in it.

        Small models put a label before a copied line ("one line: …", "ERROR lines that
        report a deadlock: db.pool: deadlock detected …"): the text after each ": " is
        tried too, longest first.
        """
        text = _norm(_BULLET.sub("", line, count=1))
        candidates = [text]
        start = text.find(": ")
        while start >= 0:
            candidates.append(text[start + 2 :])
            start = text.find(": ", start + 2)
        for candidate in candidates:
            if len(candidate) < _MIN_PIECE_CHARS:
                break  # later ones are shorter still
            holders = [n for n in range(1, len(self._lines) + 1) if candidate in self._norm_of(n)]
            if len({self._lines[n - 1] for n in holders}) == 1:
                return _whole_or_piece(self._lines[holders[0] - 1], candidate)
        return None

    def _numbered(self, number: int) -> str | None:
        return self._lines[number - 1] if 1 <= number <= len(self._lines) else None

    def _norm_of(self, number: int) -> str:
        # Normalised lazily: only the lines the model referred to are ever needed.
        if number not in self._norms:
            self._norms[number] = _norm(self._lines[number - 1])
        return self._norms[number]


def _whole_or_piece(original: str, piece: str) -> str:
    if len(original) <= _WHOLE_LINE_CHARS:
        return original
    return f"…{piece.strip()}…"


def verify_lines(lines: list[str], index: RawIndex) -> Verified:
    """Keep the lines of an extraction that are in the raw output, as the raw output has them.

    Args:
        lines: The extraction's lines (markers already restored).
        index: The raw output's index.

    Returns:
        The kept lines and the claimed and dropped counts.
    """
    kept: list[str] = []
    claimed = dropped = 0
    for line in lines:
        if not line.strip():
            kept.append("")
            continue
        found = index.find(line)
        if found is not None:
            kept.append(found)
            claimed += 1
        elif not _FENCE.fullmatch(line):
            claimed += 1
            dropped += 1
    return Verified(lines=kept, claimed=claimed, dropped=dropped)


def strip_line_numbers(lines: list[str]) -> list[str]:
    """Remove a copied line-number prefix from each line (used when verification is off)."""
    return [
        numbered[2] if (numbered := _NUMBERED.fullmatch(line)) is not None else line
        for line in lines
    ]
