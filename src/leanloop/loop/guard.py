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
class _Seen:
    """A call made in this run: where, and what it returned (``None`` while it runs)."""

    step: int
    result: str | None = None
    ok: bool = True


@dataclass
class CallGuard:
    """Remembers the calls of one run (see the module docstring)."""

    max_repeats: int = 2
    fingerprint: Fingerprint | None = None
    repeats_in_a_row: int = 0
    total_repeats: int = 0
    _seen: dict[str, _Seen] = field(default_factory=dict)

    def check(self, name: str, args: Mapping[str, Any], *, step: int) -> Repeat | None:
        """Return the earlier call this one repeats, or ``None`` when it should run.

        A call that may run is claimed at once, so an identical twin later in the same
        reply counts as a repeat too (calls of one reply run concurrently).
        """
        key = self._key(name, args)
        earlier = self._seen.get(key)
        if earlier is None:
            self._seen[key] = _Seen(step)
            return None
        return Repeat(earlier.step, _reminder(earlier))

    def remember(
        self, name: str, args: Mapping[str, Any], *, step: int, result: str, ok: bool = True
    ) -> None:
        """Record what a call that ran returned; failures too (they would fail again)."""
        key = self._key(name, args)  # as things are now: after a write, the new content
        earlier = self._seen.get(key)
        if earlier is None or earlier.result is None:
            self._seen[key] = _Seen(earlier.step if earlier else step, result, ok)

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


def _reminder(earlier: _Seen) -> str:
    if earlier.result is None:  # a twin in the same reply: its result is right beside
        return (
            f"already called at step {earlier.step} with the same arguments (in this very "
            "reply); use that call's result instead of calling it again."
        )
    first = next((line for line in earlier.result.splitlines() if line.strip()), "")
    if len(first) > _REMINDER_CHARS:
        first = first[: _REMINDER_CHARS - 1] + "…"
    if not earlier.ok:
        return (
            f"already called at step {earlier.step} with the same arguments, and it failed: "
            f"{first!r}. The same call fails the same way: change the arguments, use "
            "another tool, or answer from what you have."
        )
    return (
        f"already called at step {earlier.step} with the same arguments; its result began: "
        f"{first!r}. Do not call it again: answer from what you have, or do something "
        "different."
    )


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
