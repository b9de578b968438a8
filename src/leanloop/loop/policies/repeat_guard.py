"""The repeat guard: a repeated call is answered from memory, not run again.

Small models often repeat the very call they just made instead of answering. The guard
remembers each call of a run by its name, its arguments and a fingerprint of what it
reads (a file's size and modification time, so a deliberate re-read after a change still
runs). A repeat gets a one-line reminder instead of a second copy of the result; after
``max_repeated_calls`` rounds of repeats in a row the round says so
(:attr:`~leanloop.loop.policies.hooks.Round.exhausted`) and the loop stops offering tools
(:mod:`~leanloop.loop.policies.answer_after_repeats` asks for the answer).

The guard never hides data. A call is a repeat only when its meta-arguments match too
(``output_prune: false`` after a pruned result asks for something new: the whole
output), and a call whose earlier result the model can no longer read whole — trimmed
from the request view, or pruned — runs again (a pruned one without pruning, since the
model asked again for what pruning left out). Such a call runs again at most
:data:`MAX_RERUNS` times: a result that fits only pruned is otherwise shown whole,
trimmed for room, pruned again, shown whole… at every step (measured on the 1.5B, three
files re-read at each of seven steps until the budget was spent); after that the call is
a repeat whose reminder says the whole output does not fit and how to read a part. A
repeat of a result a cap cut would be cut the same way: its reminder quotes where the
result ended, with the offset to read on. What the guard says is in
:mod:`leanloop.loop.guard`.

An edit changes what every earlier call would return: once one has run, the guard
forgets what it remembered (running the tests again after an edit runs them), and an
edit is never answered from memory after it ran. ``run_command`` is remembered as any
call: the same command again with no edit between is a repeat (measured on the 0.5B: it
ran the same passing tests five times in a row until ``max_rounds`` when commands were
never repeats), and a file a command changed reads anew by its fingerprint.

Hooks: ``before_tool_call`` (the repeat check; a call that may run is claimed at once, so
an identical twin later in the same reply is a repeat too), ``after_tool_result``
(remember what the model read of a call), ``end_round`` (count the rounds of repeats).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from leanloop.loop.guard import (
    call_key,
    no_room_reminder,
    pruned_reminder,
    reminder,
    repeat_note,
    rerun_note,
    workspace_fingerprint,
)
from leanloop.loop.policies.hooks import (
    AnswerCall,
    CallDecision,
    EditCall,
    PendingCall,
    Policy,
    Round,
    RunCall,
    ToolResult,
)
from leanloop.pruning import PruneRequest
from leanloop.spec.toolrefs import EDIT_TOOLS

__all__ = ["MAX_RERUNS", "RepeatGuard", "RepeatGuardConfig"]

MAX_RERUNS = 2
"""How often one call runs again because its result was trimmed or pruned (whole once,
pruned once); then it is a repeat."""

_NOT_WHOLE = frozenset({"trimmed", "pruned"})
"""The fates of a result the model can no longer read whole."""


@dataclass
class _Seen:
    """A call made in this run: where, and what the model read of it (``None`` while it
    runs)."""

    step: int
    result: ToolResult | None = None
    reruns: int = 0
    """How often this call ran again because its result was trimmed or pruned."""


@dataclass(frozen=True)
class RepeatGuardConfig:
    """When a call is a repeat, and how many rounds of repeats stop the model.

    Attributes:
        max_repeats: The rounds made only of repeats, in a row, after which the round
            says the model is stuck (the agent's ``max_repeated_calls``).
        workspace: The folder whose files' size and modification time belong to a call's
            key (a changed file is read again); ``None``: no fingerprint.
        rerun_pruned: Whether a call whose result was pruned runs again, unpruned, when
            repeated as it was (``False``: it is a repeat that points at the extract and
            ``output_prune``); ``None``: the run's profile's ``rerun_pruned``.
        changes_world: The tools whose successful call makes the guard forget every
            call before it (the built-in edits).
    """

    max_repeats: int = 2
    workspace: Path | None = None
    rerun_pruned: bool | None = None
    changes_world: frozenset[str] = frozenset(EDIT_TOOLS)

    def start(self) -> RepeatGuard:
        """The policy for one run, with an empty memory."""
        return RepeatGuard(self)


class RepeatGuard(Policy):
    """Remembers the calls of one run (see the module docstring)."""

    name: ClassVar[str] = "repeat_guard"

    def __init__(self, config: RepeatGuardConfig) -> None:
        self.config = config
        self._fingerprint = workspace_fingerprint(config.workspace)
        self._seen: dict[str, _Seen] = {}
        self._in_a_row = 0
        """Rounds of the model's calls made only of repeats, up to the last one."""

    async def before_tool_call(self, call: PendingCall) -> CallDecision:
        """A repeat's reminder, a rerun (with its note), or ``None`` for a new call.

        A call that differs only in its meta-arguments is not a repeat. A call that may
        run is claimed at once: an identical twin later in the same reply is a repeat.
        """
        key = call_key(call.name, call.args, call.meta, self._fingerprint)
        earlier = self._seen.get(key)
        if earlier is None:
            self._seen[key] = _Seen(call.step)
            return None
        result = earlier.result
        fate = result.record.fate if result is not None and result.ok else "kept"
        rerun_pruned = self.config.rerun_pruned
        if rerun_pruned is None:
            rerun_pruned = call.run.profile.rerun_pruned
        if fate == "pruned" and not rerun_pruned:
            return _repeat(earlier.step, pruned_reminder(earlier.step))
        if fate in _NOT_WHOLE and earlier.reruns < MAX_RERUNS:
            # Claimed anew: the rerun's twins are repeats.
            self._seen[key] = _Seen(call.step, reruns=earlier.reruns + 1)
            note = rerun_note(earlier.step, fate)
            if fate == "pruned":
                # The model asked again for what an extract left out: the whole output.
                return EditCall(meta=PruneRequest(prune=False), note=note)
            return RunCall(note=note)
        if fate in _NOT_WHOLE:
            return _repeat(earlier.step, no_room_reminder(earlier.step))
        text = None if result is None else result.text
        ok = True if result is None else result.ok
        return _repeat(earlier.step, reminder(earlier.step, text, ok=ok, cut=fate == "cut"))

    def after_tool_result(self, call: PendingCall, result: ToolResult) -> None:
        """Remember what the model read of ``call``; failures too (they would fail again).

        The record in ``result`` is read again when the call is repeated: it knows
        whether the result was trimmed, cut or pruned since.
        """
        if result.ok and call.name in self.config.changes_world:
            # What any earlier call returned may differ now, and this call's own effect
            # is wanted each time it is asked for.
            self._seen.clear()
            return
        # Keyed as things are now: after a write, the new content.
        key = call_key(call.name, call.args, call.meta, self._fingerprint)
        earlier = self._seen.get(key)
        if earlier is None or earlier.result is None:
            reruns = earlier.reruns if earlier else 0
            self._seen[key] = _Seen(earlier.step if earlier else call.step, result, reruns)

    def end_round(self, done: Round) -> Round:
        """Count a finished round (all its calls repeats, or at least one other); the
        round says the model is stuck after ``max_repeats`` rounds of repeats in a row."""
        repeats_only = done.repeated > 0 and done.repeated == done.calls
        self._in_a_row = self._in_a_row + 1 if repeats_only else 0
        if self._in_a_row < self.config.max_repeats:
            return done
        return dataclasses.replace(done, exhausted=True)


def _repeat(step: int, text: str) -> AnswerCall:
    """The answer to a repeat of the call made at ``step``: ``text`` instead of a result."""
    return AnswerCall(text, note=repeat_note(step), repeat_of=step)
