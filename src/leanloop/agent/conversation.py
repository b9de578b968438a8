"""One turn of a session: the stored history in, each step stored, the answer stored.

With ``config={"configurable": {"thread_id": "t1"}}`` (``leanloop run --session t1``) a run
is one turn of a conversation kept in a session store (:mod:`leanloop.sessions`):

* the request starts from the earlier finished turns, then the new question; what each
  request sends is still decided by the budget (old turns' results are trimmed first,
  then whole old turns are left out, see :mod:`leanloop.budget.turns`);
* each completed step is stored before the next request, so a process that dies mid-run
  can be resumed (``"resume": True``, ``--resume``) from its last completed step, with no
  tool run twice;
* the model gets ``recall`` (search the earlier turns) when there are any, and ``note``
  (``notes: true``); the session's notes are sent with every request, never trimmed, as a
  delimited block of data in the system message (:func:`~leanloop.tools.session.notes_block`),
  and listed in the report (``notes``); notes are stored with the step that wrote them,
  in the order the model made the calls;
* turns of one thread run one at a time (in this process a second waits, whichever event
  loop it runs on; another live process holding the thread is a
  :class:`~leanloop.exceptions.SessionBusy`);
* a thread belongs to the agent that first wrote it, its name and agents file (ADR 0024):
  another agent's turn or resume is a :class:`~leanloop.exceptions.SessionAgentMismatch`,
  refused before anything of the thread is read into the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool

from leanloop.exceptions import ApprovalPending, RunFailed, SessionError
from leanloop.loop import AgentLoop, TextSink, TurnContext
from leanloop.loop.pause import paused_reply
from leanloop.sessions import (
    AgentIdentity,
    SessionStore,
    Turn,
    check_agent,
    check_thread_id,
    shared_store,
    thread_lock,
)
from leanloop.spec.types import AgentSpec
from leanloop.tools.session import (
    NOTES_MAX_CHARS,
    RecallEntry,
    note_tool,
    notes_block,
    recall_entry,
    recall_tool_over,
)

__all__ = ["NOTES_MAX_CHARS", "run_turn", "session_of", "store_url"]

MakeLoop = Callable[[AgentSpec, Sequence[BaseTool]], AgentLoop]


def session_of(config: RunnableConfig | None) -> tuple[str | None, bool]:
    """The ``thread_id`` and ``resume`` flag of a call's ``configurable``, if any.

    Raises:
        SessionError: ``thread_id`` is empty, blank or not a string (``None`` is no session).
    """
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    thread = configurable.get("thread_id")
    if thread is None:
        return None, False
    return check_thread_id(thread), bool(configurable.get("resume", False))


def store_url(spec: AgentSpec) -> str:
    """The agent's session store: ``sessions.store``, else a SQLite file beside the file."""
    if spec.session_store is not None:
        return spec.session_store
    folder = spec.source.parent if spec.source is not None else Path.cwd()
    return f"sqlite:///{folder / '.leanloop' / 'sessions.db'}"


async def run_turn(
    *,
    spec: AgentSpec,
    messages: Sequence[BaseMessage],
    config: RunnableConfig,
    thread_id: str,
    resume: bool,
    make_loop: MakeLoop,
    on_text: TextSink | None = None,
) -> AIMessage:
    """Run one turn of the session ``thread_id`` (see the module docstring).

    Args:
        spec: The agent.
        messages: The opening: the system message, then the new question alone (with
            ``resume``, the question may be left out: the stored one is used).
        config: The run's config.
        thread_id: The session.
        resume: Go on with the session's unfinished turn instead of starting one.
        make_loop: Builds the loop for ``spec`` with extra tools.
        on_text: Streamed answer text goes here.

    Raises:
        SessionError: The input has more than the new question, there is nothing to
            resume, or the store cannot be used.
        SessionAgentMismatch: The session belongs to another agent.
        SessionBusy: Another live process is running a turn of this session.
        UnfinishedTurn: The last turn did not finish and ``resume`` was not asked for.
    """
    system = messages[0] if messages and isinstance(messages[0], SystemMessage) else None
    new = list(messages[1:] if system is not None else messages)
    # An agent built in Python has no file: its name alone is its identity (ADR 0024).
    agent = AgentIdentity.of(spec.name, spec.source)
    # The process's store: its connection and each thread's decoded turns outlive the turn.
    store = shared_store(store_url(spec))
    async with thread_lock(store.url, thread_id):
        if resume:
            session = await store.load(thread_id)
            # Before anything else looks at the thread: a refusal must not quote another
            # agent's question (the resume check below does). The store checks again, in
            # the transaction that claims the turn.
            check_agent(thread_id, session.agent, agent)
            unfinished = session.unfinished()
            if unfinished is not None:  # checked before the turn is claimed
                _check_resume_input(new, unfinished)
            turn = await store.reopen_turn(thread_id, agent=agent)
            number, question, stored = turn.number, turn.question, turn.steps
        else:
            try:
                question = _new_question(new)
            except SessionError:
                # Another agent's thread is refused first, whatever the input.
                check_agent(thread_id, (await store.load(thread_id)).agent, agent)
                raise
            await _refuse_past_a_pause(store, thread_id, agent)
            # One transaction: the agent checked, the turn begun, what is new read.
            session, number = await store.start_turn(thread_id, question, agent=agent)
            stored = []
        # From here the turn is this process's: however the run ends, it is finished.
        claimed = _Claimed(store, thread_id, number, list(session.notes))
        paused = paused_reply(stored)
        claimed.paused_step = paused.step if paused is not None else None
        try:
            final = await claimed.run(
                spec=spec,
                system=system,
                earlier=[t for t in session.turns if t.status == "done" and t.number < number],
                question=question,
                stored=stored,
                config=config,
                make_loop=make_loop,
                on_text=on_text,
            )
        except BaseException as exc:
            if isinstance(exc, RunFailed):
                exc.report.notes = list(claimed.carried)
            # Cancelled, failed or interrupted: the turn can be resumed (--resume).
            # Notes of a step not stored are not kept: the resumed step writes them.
            with contextlib.suppress(Exception):
                await asyncio.shield(store.finish_turn(thread_id, number, None, status="failed"))
            raise
        await claimed.save_notes()
        if _paused(final):
            # Waiting for a person: the turn is unfinished, and a resume with the
            # decisions goes on from its paused reply (ADR 0037).
            await store.finish_turn(thread_id, number, None, status="failed")
        else:
            await store.finish_turn(thread_id, number, _stored_answer(final), status="done")
    report = final.response_metadata.get("leanloop")
    if isinstance(report, dict):
        report["notes"] = list(claimed.carried)
        if isinstance(report.get("session"), dict):
            report["session"]["notes"] = list(claimed.notes)
    return final


@dataclass
class _Claimed:
    """A turn this process owns: its store, and the notes the session holds."""

    store: SessionStore
    thread_id: str
    number: int
    notes: list[str]
    carried: list[str] = dataclasses.field(default_factory=list)
    """The notes the requests carry, as sent (for the report)."""
    pending: list[tuple[int, str]] = dataclasses.field(default_factory=list)
    """Notes of the step in progress with their call's order, stored with the step."""

    async def note(self, text: str, order: int) -> None:
        """Keep a note of the step in progress (the ``note`` tool's sink)."""
        self.pending.append((order, text))

    async def save_notes(self) -> None:
        """Store the pending notes in the order of their calls, not of their finishing."""
        pending, self.pending = sorted(self.pending), []
        for _, text in pending:
            await self.store.add_note(self.thread_id, self.number, text)
            self.notes.append(text)

    paused_step: int | None = None
    """The step stored as a paused reply, which the step done with the decisions replaces."""

    async def save_step(self, step: int, messages: list[BaseMessage]) -> None:
        await self.save_notes()
        replace = step == self.paused_step
        await self.store.add_step(self.thread_id, self.number, step, messages, replace=replace)
        if replace:
            self.paused_step = None

    async def run(
        self,
        *,
        spec: AgentSpec,
        system: BaseMessage | None,
        earlier: Sequence[Turn],
        question: BaseMessage,
        stored: Sequence[tuple[int, Sequence[BaseMessage]]],
        config: RunnableConfig,
        make_loop: MakeLoop,
        on_text: TextSink | None,
    ) -> AIMessage:
        """Run the turn: the earlier turns, notes and tools in, each step stored."""
        tools: list[BaseTool] = []
        # Made once per finished turn and kept on it (the store keeps its turns).
        history = [(t.number, t.derived("request", _turn_messages)) for t in earlier]
        if history:
            tools.append(recall_tool_over([t.derived("recall", _recall_entry) for t in earlier]))
        if spec.notes:
            tools.append(note_tool(self.note))
        block, self.carried = notes_block(self.notes)
        opening, starts = _opening(system, history, question, block)
        turn_context = TurnContext(
            earlier_starts=starts,
            current_start=len(opening) - 1,
            on_step=self.save_step,
            resume=stored,
            recall=bool(history),
            session={
                "thread_id": self.thread_id,
                "turn": self.number,
                "earlier_turns": len(history),
            },
        )
        loop = make_loop(_with_recall_pruned(spec, bool(history)), tools)
        return await loop.run(opening, config, on_text=on_text, turn=turn_context)


def _new_question(new: Sequence[BaseMessage]) -> BaseMessage:
    if len(new) != 1 or not isinstance(new[0], HumanMessage):
        msg = (
            "with a thread_id, pass only the new question (a string or one human message): "
            "the session holds the conversation"
        )
        raise SessionError(msg)
    return new[0]


def _check_resume_input(new: Sequence[BaseMessage], turn: Turn) -> None:
    given = [m for m in new if m.text.strip()]
    if given and (len(given) > 1 or given[0].text != turn.question.text):
        msg = (
            f"resume goes on with turn {turn.number}'s own question "
            f"({turn.question.text[:60]!r}); leave the question out to resume"
        )
        raise SessionError(msg)


def _turn_messages(turn: Turn) -> list[BaseMessage]:
    """An earlier turn's messages, with ids (and call ids) of their own.

    Every turn numbers its steps and prefetch calls from 0: without a turn prefix, two
    turns would carry the same message ids and tool call ids in one request.
    """
    prefix = f"t{turn.number}-"
    messages: list[BaseMessage] = [turn.question]
    for _, step in turn.steps:
        messages.extend(step)
    if turn.answer is not None:
        messages.append(turn.answer)
    renamed: list[BaseMessage] = []
    for index, message in enumerate(messages):
        update: dict[str, Any] = {"id": f"leanloop-turn{turn.number}-{index}"}
        if isinstance(message, AIMessage) and message.tool_calls:
            update["tool_calls"] = [
                {**call, "id": prefix + (call.get("id") or "")} for call in message.tool_calls
            ]
        if isinstance(message, ToolMessage):
            update["tool_call_id"] = prefix + message.tool_call_id
        renamed.append(message.model_copy(update=update))
    return renamed


def _recall_entry(turn: Turn) -> RecallEntry:
    """An earlier turn as ``recall`` searches it."""
    return recall_entry(turn.number, turn.derived("request", _turn_messages))


def _opening(
    system: BaseMessage | None,
    history: Sequence[tuple[int, list[BaseMessage]]],
    question: BaseMessage,
    notes: str,
) -> tuple[list[BaseMessage], list[int]]:
    """The run's opening (system with the notes block, earlier turns, question) and each
    turn's start."""
    opening: list[BaseMessage] = []
    text = system.text if system is not None else ""
    if notes:
        text = f"{text}\n\n{notes}" if text else notes
    if text:
        opening.append(SystemMessage(content=text))
    starts = []
    for _, messages in history:
        starts.append(len(opening))
        opening.extend(messages)
    opening.append(question)
    return opening, starts


def _with_recall_pruned(spec: AgentSpec, recall: bool) -> AgentSpec:
    """``spec`` with ``recall`` among the tools whose large results are pruned."""
    if not (recall and spec.allow_tool_output_pruning) or "recall" in spec.pruning_tools:
        return spec
    return dataclasses.replace(spec, pruning_tools=(*spec.pruning_tools, "recall"))


async def _refuse_past_a_pause(store: SessionStore, thread_id: str, agent: AgentIdentity) -> None:
    """Refuse a new question while the session's last turn waits for decisions.

    The store would begin a new turn after an unfinished one and leave the paused calls
    behind for good (ADR 0037): the person must decide them first, or reject them.

    Raises:
        ApprovalPending: The last turn paused for approval.
    """
    session = await store.load(thread_id)
    turn = session.unfinished()
    if turn is None or turn.status != "failed":
        return
    # Another agent's thread is refused as such, not as a pause it cannot resume.
    check_agent(thread_id, session.agent, agent)
    paused = paused_reply(turn.steps)
    if paused is None:
        return
    waiting = [str(call.get("id")) for call in paused.pending]
    noun = "call" if len(waiting) == 1 else "calls"
    msg = (
        f"session {thread_id!r} turn {turn.number} waits for approval of {len(waiting)} "
        f"tool {noun} ({', '.join(waiting)}): resume it with the decisions "
        "(agent.aresume, or leanloop run --resume with --approve) before a new question"
    )
    raise ApprovalPending(msg, turn=turn.number, steps=len(turn.steps), pending=waiting)


def _paused(final: AIMessage) -> bool:
    """Whether the run ended paused, waiting for decisions on tool calls."""
    report = final.response_metadata.get("leanloop")
    return isinstance(report, dict) and report.get("stop_reason") == "paused"


def _stored_answer(final: AIMessage) -> AIMessage:
    """The answer as the session keeps it: its text, without the run report."""
    return AIMessage(content=final.content, id=final.id)
