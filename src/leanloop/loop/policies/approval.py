"""The approval of tool calls: a person decides before a call that asks runs (ADR 0037).

A ``tools`` entry says whether its calls ask (``approval: ask | never``; the built-ins
that change the workspace ask unless told ``never``; ``approval: {ask_when: {ARGUMENT:
REGEX}}`` asks only for the calls where one of those arguments matches, :func:`asks_for`)
and which decisions a person may make (``approve_decisions``). Before such a call runs,
the policy asks, in order:

1. the decisions the run was given for its paused reply (a resume: ``who`` is
   ``resume``, or whoever decided before the pause);
2. the approver, a sync or async callable ``(ApprovalRequest) -> Decision`` (the
   Python ``approver=``, the CLI's terminal or its ``--approve`` flags);
3. nobody: the call pauses, and with it the run (stop reason ``paused``).

Decisions map to the tool round's values: :class:`Approve` runs the call
(:class:`~leanloop.loop.policies.hooks.RunCall`), :class:`EditArgs` runs it with the
person's arguments (:class:`~leanloop.loop.policies.hooks.EditCall`), :class:`Reject`
answers it with one line the model reads instead of a result
(:class:`~leanloop.loop.policies.hooks.AnswerCall`), :class:`Pause` (or no approver)
pauses it (:class:`~leanloop.loop.policies.hooks.PauseCall`).

The policy is asked first of all the tool-call policies: a call the repeat guard claimed
but a person rejected would leave the guard believing it ran "in this very reply". A
rejected call the model repeats unchanged in the same run is rejected again without
asking twice, and counted as a repeat (the guard's rounds of repeats stop a model that
insists). Every decision goes on the report (``approvals``) and its events.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from leanloop.exceptions import InvalidArgument
from leanloop.loop.policies.hooks import (
    AnswerCall,
    CallDecision,
    EditCall,
    PauseCall,
    PendingCall,
    Policy,
    RunCall,
)

__all__ = [
    "ALL_DECISIONS",
    "Approval",
    "ApprovalConfig",
    "ApprovalRequest",
    "Approve",
    "Approver",
    "Decision",
    "DecisionName",
    "EditArgs",
    "Pause",
    "Reject",
    "asks_for",
    "decision_from",
    "decision_to_dict",
    "rejection_text",
]

DecisionName = Literal["approve", "edit", "reject"]
ALL_DECISIONS: tuple[DecisionName, ...] = ("approve", "edit", "reject")


@dataclass(frozen=True)
class Approve:
    """Run the call as the model made it.

    Attributes:
        by: Who decided, for the report (``None``: ``approver``).
    """

    by: str | None = None


@dataclass(frozen=True)
class EditArgs:
    """Run the call with other arguments (the tool's own; they replace the model's).

    Attributes:
        args: The arguments to run it with.
        by: Who decided, for the report (``None``: ``approver``).
    """

    args: Mapping[str, Any]
    by: str | None = None


@dataclass(frozen=True)
class Reject:
    """Do not run the call; the model is told so, with ``reason``.

    Attributes:
        reason: Why, in the person's words (what the model reads).
        by: Who decided, for the report (``None``: ``approver``).
    """

    reason: str = ""
    by: str | None = None


@dataclass(frozen=True)
class Pause:
    """Nobody can decide now: the run pauses, to go on later with the decisions.

    Attributes:
        reason: Why it cannot be decided now (for the report).
    """

    reason: str = ""


Decision = Approve | EditArgs | Reject | Pause
"""What a person (or an approver on their behalf) makes of one call."""


@dataclass(frozen=True)
class ApprovalRequest:
    """One call a person is asked about.

    Attributes:
        tool: The tool's name.
        args: The tool's own arguments, as the model gave them.
        call_id: The call's id (``None`` when the model gave none): the key of a resume's
            decisions.
        step: The step the call belongs to.
        agent: The agent that made the call (a sub-agent's name for its own calls).
        preview: What the call would do, when cheap to tell: the diff of an edit, made by
            a dry run of it; ``None`` otherwise.
        decisions: The decisions the person may make (``approve_decisions``).
    """

    tool: str
    args: Mapping[str, Any]
    call_id: str | None
    step: int
    agent: str | None
    preview: str | None = None
    decisions: tuple[DecisionName, ...] = ALL_DECISIONS


Approver = Callable[[ApprovalRequest], Decision | Awaitable[Decision | None] | None]
"""Decides on a call: sync or async; ``None`` or :class:`Pause` when it cannot now."""

Preview = Callable[[str, Mapping[str, Any]], str | None]
"""What a call of a tool with arguments would do (an edit's diff), or ``None``."""


@dataclass(frozen=True)
class ApprovalConfig:
    """Which calls ask, who decides, and the decisions a resumed run was given.

    Attributes:
        asks: Per tool name that asks, the decisions a person may make.
        when: Per tool name that asks only on a condition, its ``(argument, regex)``
            pairs: a call asks when one of those arguments matches (:func:`asks_for`).
        approver: Who decides inline; ``None``: nobody, a call that asks pauses.
        given: Decisions by call id for the reply a paused run stopped at (a resume).
        preview: Tells what a call would do, for the request; ``None``: no previews.
        agent: The agent's name, for the request.
    """

    asks: Mapping[str, tuple[DecisionName, ...]] = field(default_factory=dict)
    when: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    approver: Approver | None = None
    given: Mapping[str, Decision] = field(default_factory=dict)
    preview: Preview | None = None
    agent: str | None = None

    def start(self) -> Approval:
        """The policy for one run, with no rejection remembered."""
        return Approval(self)


def asks_for(conditions: Sequence[tuple[str, str]], args: Mapping[str, Any]) -> bool:
    """Whether a call with ``args`` asks under ``approval: {ask_when: ...}``.

    It asks when one of the named arguments matches its pattern (``re.search``): a string
    as it is, a list (``run_command``'s ``argv``) as its items joined by spaces, any other
    value as JSON. An argument the call does not give matches nothing.
    """
    for argument, pattern in conditions:
        if argument not in args:
            continue
        value = args[argument]
        if isinstance(value, str):
            text = value
        elif isinstance(value, list | tuple):
            text = " ".join(str(item) for item in value)
        else:
            text = json.dumps(value, sort_keys=True, default=str)
        # Checked at load (spec/tooloptions.py); `re` keeps the compiled patterns.
        if re.search(pattern, text):
            return True
    return False


def rejection_text(reason: str) -> str:
    """The one line the model reads instead of a rejected call's result."""
    said = " ".join(reason.split()) or "no reason given"
    return f"the user rejected this call: {said}; do not repeat it, try another way or answer"


class Approval(Policy):
    """Asks before each call that asks (see the module docstring)."""

    name: ClassVar[str] = "approval"

    def __init__(self, config: ApprovalConfig) -> None:
        self.config = config
        self._rejected: dict[str, tuple[int, str]] = {}
        """Rejected calls of this run by name and arguments: the step and the reason."""

    async def before_tool_call(self, call: PendingCall) -> CallDecision:
        """Ask about ``call`` when its tool asks; ``None`` for a tool that never does."""
        allowed = self.config.asks.get(call.name)
        if allowed is None:
            return None
        conditions = self.config.when.get(call.name)
        if conditions and not asks_for(conditions, call.args):
            # Observable in the call's record: the tool asks, this call did not need to.
            return RunCall(note="not asked: no approval.ask_when pattern matched")
        key = _key(call.name, call.args)
        if key in self._rejected:
            step, reason = self._rejected[key]
            _record(call, "reject", "repeat", reason=reason)
            note = f"rejected at step {step}; repeated unchanged, not asked again"
            return AnswerCall(rejection_text(reason), note=note, repeat_of=step)
        decision, by, preview = await self._decide(call, allowed)
        if isinstance(decision, Pause):
            reason = decision.reason or f"approve {call.name} ({', '.join(allowed)})"
            _record(call, "pause", by, reason=reason)
            return PauseCall(reason, preview=preview)
        if isinstance(decision, Reject):
            self._rejected[key] = (call.step, decision.reason)
            _record(call, "reject", by, reason=decision.reason)
            text = rejection_text(decision.reason)
            return AnswerCall(text, note=f"rejected by {by}: {decision.reason or '-'}")
        if isinstance(decision, EditArgs):
            _record(call, "edit", by, args=dict(decision.args))
            return EditCall(args=dict(decision.args), note=f"arguments edited by {by}")
        _record(call, "approve", by)
        return RunCall(note=f"approved by {by}")

    async def _decide(
        self, call: PendingCall, allowed: tuple[DecisionName, ...]
    ) -> tuple[Decision, str, str | None]:
        """The decision on ``call``, who made it, and the preview shown (if asked)."""
        given = self.config.given.get(call.call_id or "")
        if given is not None:
            return _allowed(given, allowed, call.name), given_by(given, "resume"), None
        preview = self._preview(call)
        approver = self.config.approver
        if approver is None:
            return Pause("nobody to ask: waiting for a decision"), "nobody", preview
        request = ApprovalRequest(
            tool=call.name,
            args=dict(call.args),
            call_id=call.call_id,
            step=call.step,
            agent=self.config.agent,
            preview=preview,
            decisions=allowed,
        )
        made = approver(request)
        if inspect.isawaitable(made):
            made = await made
        if made is None:
            made = Pause("the approver gave no decision")
        if not isinstance(made, Approve | EditArgs | Reject | Pause):
            msg = f"an approver returns Approve, EditArgs, Reject or Pause, not {made!r}"
            raise InvalidArgument(msg)
        return _allowed(made, allowed, call.name), given_by(made, "approver"), preview

    def _preview(self, call: PendingCall) -> str | None:
        make = self.config.preview
        return make(call.name, call.args) if make is not None else None


def given_by(decision: Decision, default: str) -> str:
    """Who made ``decision``: its own ``by``, else ``default``."""
    by = getattr(decision, "by", None)
    return by if isinstance(by, str) and by else default


def _allowed(decision: Decision, allowed: tuple[DecisionName, ...], tool: str) -> Decision:
    """``decision``, or a pause when the tool's ``approve_decisions`` do not allow it."""
    name = _name(decision)
    if name is None or name in allowed:
        return decision
    return Pause(f"{name!r} is not allowed for {tool} (approve_decisions: {', '.join(allowed)})")


def _name(decision: Decision) -> DecisionName | None:
    if isinstance(decision, Approve):
        return "approve"
    if isinstance(decision, EditArgs):
        return "edit"
    if isinstance(decision, Reject):
        return "reject"
    return None


def _key(name: str, args: Mapping[str, Any]) -> str:
    return f"{name}\0{json.dumps(args, sort_keys=True, default=str)}"


def _record(
    call: PendingCall,
    decision: str,
    by: str,
    *,
    reason: str | None = None,
    args: dict[str, Any] | None = None,
) -> None:
    """Put the decision on the report (``approvals``) and its event lines."""
    report = call.run.report
    report.approvals.append(
        {
            "step": call.step,
            "call_id": call.call_id,
            "tool": call.name,
            "decision": decision,
            "by": by,
            "args": args,
            "reason": reason,
        }
    )
    why = f": {reason}" if reason else ""
    report.events.append(f"step {call.step}: {call.name} {decision} ({by}){why}")


def decision_from(value: object, *, by: str | None = None) -> Decision:
    """A decision as a caller may give it: a :data:`Decision`, ``"approve"``,
    ``"reject"``, or a mapping ``{"decision": "approve" | "edit" | "reject", "args": {...},
    "reason": "...", "by": "..."}``.

    Raises:
        InvalidArgument: ``value`` is none of these (one line that says what is).
    """
    if isinstance(value, Approve | EditArgs | Reject | Pause):
        return value
    if value in ("approve", "reject"):
        return Approve(by=by) if value == "approve" else Reject(by=by)
    if isinstance(value, Mapping):
        kind, who = value.get("decision"), value.get("by", by)
        who = who if isinstance(who, str) else by
        if kind == "approve":
            return Approve(by=who)
        if kind == "reject":
            return Reject(str(value.get("reason") or ""), by=who)
        if kind == "edit" and isinstance(value.get("args"), Mapping):
            return EditArgs(dict(value["args"]), by=who)
    msg = (
        f"a decision is 'approve', 'reject', {{'decision': 'edit', 'args': {{...}}}} or "
        f"{{'decision': 'reject', 'reason': '...'}}, not {value!r}"
    )
    raise InvalidArgument(msg)


def decision_to_dict(decision: Decision) -> dict[str, Any]:
    """``decision`` as JSON-ready data that :func:`decision_from` reads back."""
    if isinstance(decision, EditArgs):
        return {"decision": "edit", "args": dict(decision.args), "by": decision.by}
    if isinstance(decision, Reject):
        return {"decision": "reject", "reason": decision.reason, "by": decision.by}
    if isinstance(decision, Approve):
        return {"decision": "approve", "by": decision.by}
    return {"decision": "pause", "reason": decision.reason}
