"""The identical-call guard's pure pieces: what it says, and how it tells calls apart.

The rule itself (when a call is a repeat, when it runs again, how many rounds of repeats
stop the model) and the memory of a run's calls are the repeat-guard policy's
(:mod:`leanloop.loop.policies.repeat_guard`, ADR 0034). This module holds what that
policy needs that keeps no state: the key a call is remembered by
(:func:`call_key`, with a file's fingerprint from :func:`workspace_fingerprint`), the
reminders a repeat gets instead of a result, and the lines the report keeps on a call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "Fingerprint",
    "call_key",
    "no_room_reminder",
    "pruned_reminder",
    "reminder",
    "repeat_note",
    "rerun_note",
    "workspace_fingerprint",
]

Fingerprint = Callable[[str, Mapping[str, Any]], object]
"""Returns what a call's result depends on (``None`` when unknown) for a name and args."""

_REMINDER_CHARS = 240


def call_key(
    name: str, args: Mapping[str, Any], meta: object, fingerprint: Fingerprint | None
) -> str:
    """The key two identical calls share: name, arguments, what they read, meta-arguments.

    The fingerprint is taken now: after a write, the key is the new content's.
    """
    marker = fingerprint(name, args) if fingerprint else None
    return json.dumps([name, args, repr(marker), repr(meta)], sort_keys=True, default=str)


def reminder(step: int, result: str | None, *, ok: bool = True, cut: bool = False) -> str:
    """The one-line result a repeat of the call made at ``step`` gets instead of running.

    Args:
        step: The step of the earlier identical call.
        result: What the model read of the earlier call; ``None`` while it runs (a twin
            in the same reply).
        ok: Whether the earlier call succeeded.
        cut: Whether a cap cut the earlier result (the reminder points at the rest).
    """
    if result is None:  # a twin in the same reply: its result is right beside
        return (
            f"already called at step {step} with the same arguments (in this very "
            "reply); use that call's result instead of calling it again."
        )
    first = next((line for line in result.splitlines() if line.strip()), "")
    if len(first) > _REMINDER_CHARS:
        first = first[: _REMINDER_CHARS - 1] + "…"
    if not ok:
        return (
            f"already called at step {step} with the same arguments, and it failed: "
            f"{first!r}. The same call fails the same way: change the arguments, use "
            "another tool, or answer from what you have."
        )
    if cut:
        # The same call would be cut the same way: point at the rest instead.
        last = result.rstrip().rpartition("\n")[2].strip()
        return (
            f"already called at step {step} with the same arguments, and its result "
            f"was cut to fit the context; it ended: {last[:_REMINDER_CHARS]!r}. Ask for the "
            "next part (a later offset, a narrower range) instead of the same call."
        )
    return (
        f"already called at step {step} with the same arguments; its result began: "
        f"{first!r}. Do not call it again: answer from what you have, or do something "
        "different."
    )


def pruned_reminder(step: int) -> str:
    """The reminder of a repeat whose earlier result was pruned, when it does not rerun."""
    # Its extract is in view: a small model that repeats the very call it was answered
    # with (the prefetched reads, as written) asks for nothing new.
    return (
        f"already called at step {step} with the same arguments; its pruned result "
        "above holds the lines that matter. Answer from it; to see the whole output, call "
        "it with output_prune=false."
    )


def no_room_reminder(step: int) -> str:
    """The reminder of a repeat whose result was shown whole and pruned, and ran again
    as often as it may."""
    # The model has had this result whole and pruned; running it again would only start
    # the same round again. Say why it is gone and what does fit.
    return (
        f"already called at step {step} with the same arguments, and its result "
        "was shown whole and pruned before: the whole of it does not fit in the context "
        "beside what else you read. Do not call it again: read a part of it (a narrower "
        "range, offset and limit, or a search), or answer from what you have."
    )


def repeat_note(step: int) -> str:
    """The line the report keeps on a repeat of the call made at ``step``."""
    return f"repeat of the call at step {step}; not run"


def rerun_note(step: int, fate: str) -> str:
    """The line the report keeps on a call that runs again because the result of the same
    call at ``step`` was ``fate`` (``trimmed`` or ``pruned``)."""
    return f"ran again: the result of the same call at step {step} was {fate}"


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
