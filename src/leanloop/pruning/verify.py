"""Check an extraction against the original: only lines that are really there survive.

A pruning model may paraphrase, summarise or invent. Every non-blank line it returns is
looked up in the raw output, ignoring differences in whitespace and a line-number prefix
(``  12| ``) the model may have copied from the prompt. A line that carries a number is
also accepted when it is a piece of that numbered line (long lines are shown in pieces).
Lines that cannot be found are dropped and counted; a code fence the model wrapped its
answer in is dropped without counting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["RawIndex", "Verified", "strip_line_numbers", "verify_lines"]

_NUMBERED = re.compile(r"\s*(\d+)\| ?(.*)", re.DOTALL)
_FENCE = re.compile(r"\s*(```|~~~)\S*\s*")


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
                if wanted and wanted in have:  # a piece of a long line
                    return body.strip()
            found = self._by_norm.get(_norm(body))
            if found is not None:
                return found
        return self._by_norm.get(_norm(line))

    def _numbered(self, number: int) -> str | None:
        return self._lines[number - 1] if 1 <= number <= len(self._lines) else None

    def _norm_of(self, number: int) -> str:
        # Normalised lazily: only the lines the model referred to are ever needed.
        if number not in self._norms:
            self._norms[number] = _norm(self._lines[number - 1])
        return self._norms[number]


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
