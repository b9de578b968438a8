"""A session's turn paused for approval, as ``leanloop serve`` meets it (ADR 0037).

``serve`` asks nobody: a run whose tool call asks a person pauses, and its completion
ends with the pending calls in the ``leanloop`` extension (:mod:`leanloop.serve.streaming`).
The session's next request either carries the decisions (``leanloop.approvals``), and goes
on with the paused turn, or it is refused:

* a new question while a turn waits: 409 ``approval_pending``, naming the calls (the
  store alone would start a new turn and leave the paused one behind for good);
* decisions for a session with no paused turn: 409 ``nothing_to_resume``;
* a decision on a call the turn does not wait for: 400, naming the field and the calls
  that wait.

Decisions on only some of the calls go on with those, and the run pauses again for the
others. The check reads the session before the run claims its turn; two requests of one
session at once are still refused by the run itself (409 ``session_busy``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from leanloop.agent.conversation import store_url
from leanloop.exceptions import LeanloopError
from leanloop.loop.pause import paused_reply
from leanloop.serve.errors import ServeError, from_run_error
from leanloop.sessions import AgentIdentity, check_agent, shared_store

if TYPE_CHECKING:
    from leanloop.agent import LLMAgent
    from leanloop.serve.requests import RunInput

__all__ = ["check_paused_turn"]


async def check_paused_turn(agent: LLMAgent, run: RunInput) -> None:
    """Refuse ``run`` when it does not fit the session's paused turn (or its absence).

    Args:
        agent: The agent the request names.
        run: The request's input, of a session (``run.thread_id`` is set).

    Raises:
        ServeError: 409 ``approval_pending`` for a new question while a turn waits, 409
            ``nothing_to_resume`` for decisions with no turn waiting, 400 for a decision
            on a call that does not wait, 409 ``session_conflict`` for another agent's
            session, 503 when the store cannot be read.
    """
    thread = run.thread_id
    assert thread is not None  # the caller checks
    try:
        store = shared_store(store_url(agent.spec))
        session = await store.load(thread)
        check_agent(thread, session.agent, AgentIdentity.of(agent.spec.name, agent.spec.source))
    except LeanloopError as exc:
        raise from_run_error(exc) from None
    turn = session.unfinished()
    paused = paused_reply(turn.steps) if turn is not None and turn.status == "failed" else None
    waiting = [str(call.get("id")) for call in paused.pending] if paused is not None else []
    if run.approvals is None:
        if paused is not None:
            msg = (
                f"session {thread!r} waits for approval of {_calls(waiting)}: send the "
                'decisions in the request\'s leanloop.approvals ({"CALL_ID": "approve"}) '
                "before a new question"
            )
            raise ServeError(409, msg, code="approval_pending", param="messages")
        return
    if paused is None:
        msg = f"session {thread!r} has no turn waiting for approval: leave leanloop out"
        raise ServeError(409, msg, code="nothing_to_resume", param="leanloop.approvals")
    for call_id in run.approvals:
        if call_id not in waiting:
            where = f"leanloop.approvals.{call_id}"
            msg = f"{where}: no call {call_id!r} waits; the paused turn waits for {_calls(waiting)}"
            raise ServeError(400, msg, code="invalid_request", param=where)


def _calls(ids: list[str]) -> str:
    noun = "call" if len(ids) == 1 else "calls"
    return f"the tool {noun} {', '.join(ids)}"
