"""The identical-call guard: a repeated call is answered from memory, not run again.

Small models often repeat the very call they just made instead of answering. The guard
remembers each call of a run by its name, its arguments and a fingerprint of what it
reads (a file's size and modification time, so a deliberate re-read after a change still
runs). A repeat gets a one-line reminder instead of a second copy of the result; after
``max_repeated_calls`` repeats in a row the loop stops offering tools and asks for the
final answer (the small profile: once, for the answer from what was read, which then
ends the run as the model's answer; see ``AgentLoop._after_repeats``).

The guard never hides data. A call is a repeat only when its meta-arguments match too
(``output_prune: false`` after a pruned result asks for something new: the whole
output), and a call whose earlier result the model can no longer read whole — trimmed
from the request view, or pruned — runs again (:attr:`Rerun.unpruned` says to skip
pruning, since the model asked again for what pruning left out). Such a call runs again
at most :data:`MAX_RERUNS` times: a result that fits only pruned is otherwise shown whole,
trimmed for room, pruned again, shown whole… at every step (measured on the 1.5B, three
files re-read at each of seven steps until the budget was spent); after that the call is
a repeat whose reminder says the whole output does not fit and how to read a part. A
repeat of a result a cap cut would be cut the same way: its reminder quotes where the
result ended, with the offset to read on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "MAX_RERUNS",
    "CallGuard",
    "Fingerprint",
    "Repeat",
    "Rerun",
    "Visibility",
    "workspace_fingerprint",
]

Fingerprint = Callable[[str, Mapping[str, Any]], object]
"""Returns what a call's result depends on (``None`` when unknown) for a name and args."""

Visibility = Callable[[], str]
"""Says what became of a result the model saw: ``kept``, ``trimmed``, ``cut``, ``pruned``…"""

_REMINDER_CHARS = 240
_NOT_WHOLE = frozenset({"trimmed", "pruned"})
MAX_RERUNS = 2
"""How often one call runs again because its result was trimmed or pruned (whole once,
pruned once); then it is a repeat."""


@dataclass(frozen=True)
class Repeat:
    """A call already made in this run."""

    step: int
    reminder: str
    """The one-line result given instead of running the tool again."""


@dataclass(frozen=True)
class Rerun:
    """An earlier identical call whose result the model can no longer read whole."""

    step: int
    fate: str
    """What became of the earlier result: ``trimmed`` or ``pruned``."""

    @property
    def unpruned(self) -> bool:
        """Run without pruning: the model asked again for what an extract left out."""
        return self.fate == "pruned"

    @property
    def note(self) -> str:
        """The line the report keeps on the call."""
        return f"ran again: the result of the same call at step {self.step} was {self.fate}"


@dataclass
class _Seen:
    """A call made in this run: where, and what it returned (``None`` while it runs)."""

    step: int
    result: str | None = None
    ok: bool = True
    fate: Visibility | None = None
    """What became of the result since (trimmed, cut, pruned), when known."""
    reruns: int = 0
    """How often this call ran again because its result was trimmed or pruned."""


@dataclass
class CallGuard:
    """Remembers the calls of one run (see the module docstring)."""

    max_repeats: int = 2
    fingerprint: Fingerprint | None = None
    rerun_pruned: bool = True
    """Whether a call whose result was pruned runs again, unpruned, when repeated as it
    was (``False``: it is a repeat that points at the extract and ``output_prune``)."""
    repeats_in_a_row: int = 0
    total_repeats: int = 0
    _seen: dict[str, _Seen] = field(default_factory=dict)

    def check(
        self, name: str, args: Mapping[str, Any], *, step: int, meta: object = None
    ) -> Repeat | Rerun | None:
        """Return the earlier call this one repeats, or ``None`` when it should run.

        ``meta`` is the call's meta-arguments (what it asked pruning to do): a call that
        differs only there is not a repeat. A :class:`Rerun` means the call repeats one
        whose result the model can no longer read whole: it runs again. A call that may
        run is claimed at once, so an identical twin later in the same reply counts as a
        repeat too (calls of one reply run concurrently).
        """
        key = self._key(name, args, meta)
        earlier = self._seen.get(key)
        if earlier is None:
            self._seen[key] = _Seen(step)
            return None
        fate = earlier.fate() if earlier.fate is not None and earlier.ok else "kept"
        if fate == "pruned" and not self.rerun_pruned:
            return Repeat(earlier.step, _pruned_reminder(earlier))
        if fate in _NOT_WHOLE and earlier.reruns < MAX_RERUNS:
            # Claimed anew: the rerun's twins are repeats.
            self._seen[key] = _Seen(step, reruns=earlier.reruns + 1)
            return Rerun(earlier.step, fate)
        if fate in _NOT_WHOLE:
            return Repeat(earlier.step, _no_room_reminder(earlier))
        return Repeat(earlier.step, _reminder(earlier, cut=fate == "cut"))

    def remember(
        self,
        name: str,
        args: Mapping[str, Any],
        *,
        step: int,
        result: str,
        ok: bool = True,
        meta: object = None,
        fate: Visibility | None = None,
    ) -> None:
        """Record what a call that ran returned; failures too (they would fail again).

        ``fate`` is asked later, when the call is repeated, what became of the result
        (the report's record of the call knows whether it was trimmed, cut or pruned).
        """
        key = self._key(name, args, meta)  # as things are now: after a write, the new content
        earlier = self._seen.get(key)
        if earlier is None or earlier.result is None:
            reruns = earlier.reruns if earlier else 0
            self._seen[key] = _Seen(earlier.step if earlier else step, result, ok, fate, reruns)

    def end_round(self, *, repeated: int, ran: int) -> None:
        """Count a finished round: all calls repeated, or at least one new one ran."""
        self.total_repeats += repeated
        self.repeats_in_a_row = self.repeats_in_a_row + 1 if repeated and not ran else 0

    @property
    def exhausted(self) -> bool:
        """Whether the model kept repeating itself for ``max_repeats`` rounds in a row."""
        return self.repeats_in_a_row >= self.max_repeats

    def _key(self, name: str, args: Mapping[str, Any], meta: object = None) -> str:
        marker = self.fingerprint(name, args) if self.fingerprint else None
        return json.dumps([name, args, repr(marker), repr(meta)], sort_keys=True, default=str)


def _reminder(earlier: _Seen, *, cut: bool = False) -> str:
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
    if cut:
        # The same call would be cut the same way: point at the rest instead.
        last = earlier.result.rstrip().rpartition("\n")[2].strip()
        return (
            f"already called at step {earlier.step} with the same arguments, and its result "
            f"was cut to fit the context; it ended: {last[:_REMINDER_CHARS]!r}. Ask for the "
            "next part (a later offset, a narrower range) instead of the same call."
        )
    return (
        f"already called at step {earlier.step} with the same arguments; its result began: "
        f"{first!r}. Do not call it again: answer from what you have, or do something "
        "different."
    )


def _pruned_reminder(earlier: _Seen) -> str:
    # Its extract is in view: a small model that repeats the very call it was answered
    # with (the prefetched reads, as written) asks for nothing new.
    return (
        f"already called at step {earlier.step} with the same arguments; its pruned result "
        "above holds the lines that matter. Answer from it; to see the whole output, call "
        "it with output_prune=false."
    )


def _no_room_reminder(earlier: _Seen) -> str:
    # The model has had this result whole and pruned; running it again would only start
    # the same round again. Say why it is gone and what does fit.
    return (
        f"already called at step {earlier.step} with the same arguments, and its result "
        "was shown whole and pruned before: the whole of it does not fit in the context "
        "beside what else you read. Do not call it again: read a part of it (a narrower "
        "range, offset and limit, or a search), or answer from what you have."
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
