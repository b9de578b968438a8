"""Turn problems found in an agents file into located, secret-free :class:`SpecIssue` s.

Checks speak in key paths (``("agents", "reader", "max_rounds")``); this module
knows where each path was written and which values must never be shown.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from leanloop.exceptions import SpecIssue
from leanloop.spec.env import looks_secret
from leanloop.spec.types import SourceLocation
from leanloop.spec.yamlsource import KeyPath, Mark, Positions

__all__ = ["HIDDEN", "Problem", "Reporter", "did_you_mean", "format_path"]

HIDDEN = "***"
"""What a secret value shows as."""


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong, by key path.

    Attributes:
        path: The key path of the offending value.
        message: One line, already free of secrets.
        at: Point at the ``value`` (default) or at its ``key`` (unknown keys, problems
            with a whole mapping).
        mark: Where it is, when known better than by its path (a duplicate key).
    """

    path: KeyPath
    message: str
    at: Literal["value", "key"] = "value"
    mark: Mark | None = None


@dataclass(slots=True)
class Reporter:
    """Knows the source's name, positions and secret paths."""

    source: str
    positions: Positions = field(default_factory=Positions)
    secrets: set[KeyPath] = field(default_factory=set)
    interpolated: set[KeyPath] = field(default_factory=set)
    """Paths whose value came from ``${...}``."""
    folder: Path | None = None
    """The source's folder, given to the locations of the specs built from it."""

    def is_secret(self, path: KeyPath) -> bool:
        """Whether the value at ``path`` is a secret (by its key or its variable's name)."""
        return path in self.secrets or any(looks_secret(str(part)) for part in path)

    def show(self, value: Any, path: KeyPath) -> str:
        """The value as a message may quote it: ``'text'``, ``1.5``, ``null`` or ``***``."""
        if self.is_secret(path):
            return HIDDEN
        if value is None:
            return "null"
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float, str)):
            return repr(value)
        if isinstance(value, dict):
            return "a mapping"
        return "a list" if isinstance(value, list) else type(value).__name__

    def location(self, path: KeyPath) -> SourceLocation:
        """Where the key of ``path`` was written, for specs built from the file."""
        mark = _nearest(self.positions.key, path)
        return SourceLocation(
            source=self.source,
            line=mark.line if mark else None,
            column=mark.column if mark else None,
            path=format_path(path),
            folder=self.folder,
        )

    def issue(self, problem: Problem) -> SpecIssue:
        """Locate ``problem`` in the source."""
        find = self.positions.key if problem.at == "key" else self.positions.value
        mark = problem.mark or _nearest(find, problem.path)
        return SpecIssue(
            source=self.source,
            line=mark.line if mark else None,
            column=mark.column if mark else None,
            path=format_path(problem.path),
            message=problem.message,
        )

    def issues(self, problems: Iterable[Problem]) -> list[SpecIssue]:
        """Locate ``problems``, drop repeats and sort them by position."""
        seen: set[tuple[str, str]] = set()
        located: list[SpecIssue] = []
        for issue in map(self.issue, problems):
            if (issue.path, issue.message) not in seen:
                seen.add((issue.path, issue.message))
                located.append(issue)
        return sorted(located, key=lambda i: (i.line is None, i.line or 0, i.column or 0))


def _nearest(find: Callable[[KeyPath], Mark | None], path: KeyPath) -> Mark | None:
    # A value the file does not hold (a default, an interpolated list) is shown at its
    # closest written ancestor rather than nowhere.
    for end in range(len(path), -1, -1):
        mark = find(path[:end])
        if mark is not None:
            return mark
    return None


def format_path(path: KeyPath) -> str:
    """``agents.reader.tools[2]`` for ``("agents", "reader", "tools", 2)``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


def did_you_mean(word: str, options: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest of ``options``, or an empty string."""
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""
