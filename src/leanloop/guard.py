"""The identical-call guard: a repeated call is answered from memory, not run again.

Small models often repeat the very call they just made instead of answering. The guard
remembers each call of a run by its name, its arguments and a fingerprint of what it
reads (a file's size and modification time, so a deliberate re-read after a change still
runs). A repeat gets a one-line reminder instead of a second copy of the result; after
``max_repeated_calls`` repeats in a row the loop stops offering tools and asks for the
final answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CallGuard", "Fingerprint", "Repeat", "workspace_fingerprint"]

Fingerprint = Callable[[str, Mapping[str, Any]], object]
"""Returns what a call's result depends on (``None`` when unknown) for a name and args."""

_REMINDER_CHARS = 240


@dataclass(frozen=True)
class Repeat:
    """A call already made in this run."""

    step: int
    reminder: str
    """The one-line result given instead of running the tool again."""


@dataclass
class CallGuard:
    """Remembers the calls of one run (see the module docstring)."""

    max_repeats: int = 2
    fingerprint: Fingerprint | None = None
    repeats_in_a_row: int = 0
    total_repeats: int = 0
    _seen: dict[str, tuple[int, str]] = field(default_factory=dict)

    def check(self, name: str, args: Mapping[str, Any]) -> Repeat | None:
        """Return the earlier call this one repeats, or ``None`` when it should run."""
        earlier = self._seen.get(self._key(name, args))
        if earlier is None:
            return None
        step, result = earlier
        first = next((line for line in result.splitlines() if line.strip()), "")
        if len(first) > _REMINDER_CHARS:
            first = first[: _REMINDER_CHARS - 1] + "…"
        reminder = (
            f"already called at step {step} with the same arguments; its result began: "
            f"{first!r}. Do not call it again: answer from what you have, or do something "
            "different."
        )
        return Repeat(step, reminder)

    def remember(self, name: str, args: Mapping[str, Any], *, step: int, result: str) -> None:
        """Record a call that ran, with its result."""
        self._seen.setdefault(self._key(name, args), (step, result))

    def end_round(self, *, repeated: int, ran: int) -> None:
        """Count a finished round: all calls repeated, or at least one new one ran."""
        self.total_repeats += repeated
        self.repeats_in_a_row = self.repeats_in_a_row + 1 if repeated and not ran else 0

    @property
    def exhausted(self) -> bool:
        """Whether the model kept repeating itself for ``max_repeats`` rounds in a row."""
        return self.repeats_in_a_row >= self.max_repeats

    def _key(self, name: str, args: Mapping[str, Any]) -> str:
        marker = self.fingerprint(name, args) if self.fingerprint else None
        return json.dumps([name, args, repr(marker)], sort_keys=True, default=str)


def workspace_fingerprint(workspace: Path | None) -> Fingerprint | None:
    """A fingerprint that tells a changed file apart: its size and modification time."""
    if workspace is None:
        return None
    root = workspace.resolve()

    def fingerprint(name: str, args: Mapping[str, Any]) -> object:
        path = args.get("path")
        if not isinstance(path, str):
            return None
        try:
            target = (root / path.lstrip("/")).resolve()
            if not target.is_relative_to(root):
                return None
            stat = target.stat()
        except OSError:
            return None
        return (stat.st_size, stat.st_mtime_ns)

    return fingerprint
