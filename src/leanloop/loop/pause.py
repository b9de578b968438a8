"""A run paused before tool calls that wait for a person, and the run that goes on (ADR 0037).

When the approval of tool calls pauses a reply's calls, none of them runs. The reply is
kept as its step's only message, marked :data:`PAUSED` with the calls that wait and the
decisions already made on the others; in a session it is stored like any step, so a
later process can go on from it. The run that goes on (a resume with the decisions) finds
the marked reply last among the stored steps, runs its round with the decisions, and
stores the step again whole (the reply and its results) in place of the paused one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from leanloop.loop.policies.approval import Decision, decision_from
from leanloop.loop.policies.hooks import PausedCall

__all__ = ["PAUSED", "PausedReply", "mark_paused", "paused_reply", "waiting_text"]

PAUSED = "leanloop_paused"
"""Marks a reply whose calls wait for a decision (its ``additional_kwargs``)."""


@dataclass(frozen=True)
class PausedReply:
    """A stored step that paused: its number, its reply (unmarked), and what it holds.

    Attributes:
        step: The step's number.
        reply: The model's reply as it was, without the mark.
        pending: The calls that wait, as the report lists them.
        decided: The decisions made on the reply's other calls before it paused, by call
            id (a resume does not ask about them again).
        seen: The files the run had read when it paused, as stamps by real path: the run
            that goes on has read them too (an approved edit of a file unchanged since
            runs; a changed one is refused as changed).
    """

    step: int
    reply: AIMessage
    pending: list[dict[str, Any]]
    decided: dict[str, Decision]
    seen: dict[str, dict[str, Any]]


def mark_paused(
    reply: AIMessage,
    paused: Sequence[PausedCall],
    decided: Mapping[str, Mapping[str, Any]],
    seen: Mapping[str, Mapping[str, Any]] | None = None,
) -> AIMessage:
    """``reply`` marked as paused before ``paused``, with the decisions ``decided`` and the
    stamps of the files the run had read (``seen``)."""
    mark = {
        "pending": [p.to_dict() for p in paused],
        "decided": dict(decided),
        "seen": dict(seen or {}),
    }
    return reply.model_copy(update={"additional_kwargs": {**reply.additional_kwargs, PAUSED: mark}})


def paused_reply(steps: Sequence[tuple[int, Sequence[BaseMessage]]]) -> PausedReply | None:
    """The paused reply when it is the last of the stored ``steps``; ``None`` otherwise."""
    if not steps:
        return None
    step, messages = steps[-1]
    if len(messages) != 1 or not isinstance(messages[0], AIMessage):
        return None
    mark = messages[0].additional_kwargs.get(PAUSED)
    if not isinstance(mark, Mapping):
        return None
    kwargs = {k: v for k, v in messages[0].additional_kwargs.items() if k != PAUSED}
    reply = messages[0].model_copy(update={"additional_kwargs": kwargs})
    decided = {
        str(call_id): decision_from(value) for call_id, value in (mark.get("decided") or {}).items()
    }
    seen = mark.get("seen")
    stamps = (
        {str(k): dict(v) for k, v in seen.items() if isinstance(v, Mapping)}
        if isinstance(seen, Mapping)
        else {}
    )
    return PausedReply(step, reply, list(mark.get("pending") or []), decided, stamps)


def waiting_text(paused: Sequence[PausedCall], *, session: bool) -> str:
    """What a paused run says instead of an answer: it waits, for which calls, and how
    to go on."""
    calls = ", ".join(f"{p.tool} (call {p.call_id or '-'})" for p in paused)
    noun = "call" if len(paused) == 1 else "calls"
    how = (
        "resume the session with a decision per call id to go on"
        if session
        else "run it with a session (thread_id) to be able to resume it"
    )
    return (
        f"[leanloop: the run is waiting for approval of {len(paused)} tool {noun}: {calls}. "
        f"No call of that reply ran; {how}.]"
    )
