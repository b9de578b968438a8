"""The rules of a session store, written once over SQL for SQLite and PostgreSQL.

A backend gives transactions (:meth:`SqlStore._transaction`) whose statements use ``?``
placeholders; everything else, what may follow what, is here. Every write transaction
first takes the thread's row lock (:meth:`SqlStore._lock_thread`), so two processes
cannot both start a turn of one thread: SQLite's ``BEGIN IMMEDIATE`` already serialises
all writers of a file, PostgreSQL locks the thread's row ``FOR UPDATE``. The same lock makes
the check of the thread's agent (ADR 0024) and its recording one step: two agents that
start one new thread at once cannot both own it.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Literal, LiteralString, Protocol

from langchain_core.messages import AIMessage, BaseMessage

from leanloop.exceptions import SessionBusy, SessionError, UnfinishedTurn
from leanloop.sessions.codec import dump_message, dump_messages, load_message, load_messages
from leanloop.sessions.identity import AgentIdentity, check_agent
from leanloop.sessions.model import Session, Turn, TurnStatus
from leanloop.sessions.owner import Owner
from leanloop.sessions.urls import redact_url

__all__ = [
    "AGENT_COLUMNS",
    "SCHEMA_VERSION",
    "Row",
    "SqlStore",
    "Transaction",
    "check_schema_version",
    "newer_schema",
    "schema_statements",
]

SCHEMA_VERSION = 1
"""The layout this leanloop writes; a store written by a newer one is refused.

Still 1 with the thread's agent columns (:data:`AGENT_COLUMNS`): a leanloop that predates
them reads and writes the layout as it did (it names its columns), so they are added where
missing rather than marking the store as one an older leanloop must refuse (ADR 0024)."""

AGENT_COLUMNS: dict[str, LiteralString] = {
    "agent": "ALTER TABLE leanloop_threads ADD COLUMN agent TEXT",
    "agents_file": "ALTER TABLE leanloop_threads ADD COLUMN agents_file TEXT",
}
"""The columns of ``leanloop_threads`` that record its agent, and the statement that adds
each to a store made before them (both ``NULL``: no agent recorded)."""

Row = tuple[Any, ...]


class Transaction(Protocol):
    """One open transaction of a backend; ``?`` marks each parameter."""

    async def fetchone(self, sql: LiteralString, params: Sequence[Any] = ()) -> Row | None:
        """The first row of a query, ``None`` without one."""
        ...

    async def fetchall(self, sql: LiteralString, params: Sequence[Any] = ()) -> list[Row]:
        """Every row of a query."""
        ...

    async def execute(self, sql: LiteralString, params: Sequence[Any] = ()) -> None:
        """Run a statement."""
        ...


def schema_statements(*, integer: LiteralString, real: LiteralString) -> list[LiteralString]:
    """The tables, with the backend's names for 64-bit integers and floats.

    Messages are JSON text (:mod:`leanloop.sessions.codec`); a step's messages, its reply
    and results, are one row because they are written, and read back, together.
    """
    return [
        "CREATE TABLE IF NOT EXISTS leanloop_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS leanloop_threads ("
        f" thread_id TEXT PRIMARY KEY, created_at {real} NOT NULL,"
        " agent TEXT, agents_file TEXT)",
        "CREATE TABLE IF NOT EXISTS leanloop_turns ("
        " thread_id TEXT NOT NULL REFERENCES leanloop_threads (thread_id),"
        f" number {integer} NOT NULL,"
        " question TEXT NOT NULL,"
        " answer TEXT,"
        " status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),"
        f" owner_pid {integer} NOT NULL,"
        " owner_host TEXT NOT NULL,"
        f" owner_started {integer},"
        " owner_boot TEXT,"
        f" started_at {real} NOT NULL,"
        f" finished_at {real},"
        " PRIMARY KEY (thread_id, number))",
        "CREATE TABLE IF NOT EXISTS leanloop_steps ("
        " thread_id TEXT NOT NULL,"
        f" turn {integer} NOT NULL,"
        f" step {integer} NOT NULL CHECK (step >= 0),"
        " messages TEXT NOT NULL,"
        f" stored_at {real} NOT NULL,"
        " PRIMARY KEY (thread_id, turn, step),"
        " FOREIGN KEY (thread_id, turn) REFERENCES leanloop_turns (thread_id, number))",
        "CREATE TABLE IF NOT EXISTS leanloop_notes ("
        " thread_id TEXT NOT NULL,"
        f" seq {integer} NOT NULL,"
        f" turn {integer} NOT NULL,"
        " text TEXT NOT NULL,"
        f" written_at {real} NOT NULL,"
        " PRIMARY KEY (thread_id, seq),"
        " FOREIGN KEY (thread_id, turn) REFERENCES leanloop_turns (thread_id, number))",
    ]


async def check_schema_version(tx: Transaction, where: str) -> None:
    """Record the schema version in a new store; refuse one a newer leanloop wrote."""
    row = await tx.fetchone("SELECT value FROM leanloop_meta WHERE key = 'schema_version'")
    if row is None:
        await tx.execute(
            "INSERT INTO leanloop_meta (key, value) VALUES ('schema_version', ?)",
            (str(SCHEMA_VERSION),),
        )
        return
    if int(row[0]) > SCHEMA_VERSION:
        raise newer_schema(where, int(row[0]))


def newer_schema(where: str, found: int) -> SessionError:
    """The error for a store whose schema is newer than this leanloop's."""
    return SessionError(
        f"session store {where} was written by a newer leanloop (schema {found};"
        f" this one knows up to {SCHEMA_VERSION}): upgrade leanloop"
    )


def _owner(row: Row) -> Owner:
    """The owner in a turn row (``number, question, answer, status, owner_pid, owner_host,
    owner_started, owner_boot``: every query of turns selects these, in this order)."""
    return Owner(int(row[4]), str(row[5]), row[6], row[7])


def _agent(row: Row | None) -> AgentIdentity | None:
    """The agent in a ``SELECT agent, agents_file`` row of a thread; ``None`` without one."""
    if row is None or row[0] is None:
        return None
    return AgentIdentity(str(row[0]), None if row[1] is None else str(row[1]))


class SqlStore(ABC):
    """A :class:`~leanloop.sessions.model.SessionStore` over a SQL backend.

    Attributes:
        url: The URL the store was opened with.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._where = redact_url(url)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._where!r})"

    @abstractmethod
    def _transaction(self, *, write: bool) -> AbstractAsyncContextManager[Transaction]:
        """A transaction on a connection of its own: committed on a clean exit, else
        rolled back; the backend's errors leave it as :class:`SessionError`."""

    async def _lock_thread(self, tx: Transaction, thread_id: str) -> None:
        """Make the thread's row exist and hold it for the rest of the write transaction."""
        await tx.execute(
            "INSERT INTO leanloop_threads (thread_id, created_at) VALUES (?, ?)"
            " ON CONFLICT (thread_id) DO NOTHING",
            (thread_id, time.time()),
        )

    # -- reading ----------------------------------------------------------------------

    async def load(self, thread_id: str) -> Session:
        """The session stored under ``thread_id`` (no turns, no notes if none is)."""
        async with self._transaction(write=False) as tx:
            turn_rows = await tx.fetchall(
                "SELECT number, question, answer, status, owner_pid, owner_host, owner_started,"
                " owner_boot FROM leanloop_turns WHERE thread_id = ? ORDER BY number",
                (thread_id,),
            )
            step_rows = await tx.fetchall(
                "SELECT turn, step, messages FROM leanloop_steps WHERE thread_id = ?"
                " ORDER BY turn, step",
                (thread_id,),
            )
            note_rows = await tx.fetchall(
                "SELECT text FROM leanloop_notes WHERE thread_id = ? ORDER BY seq", (thread_id,)
            )
            agent = _agent(await self._thread_agent(tx, thread_id))
        steps: dict[int, list[tuple[int, list[BaseMessage]]]] = {}
        for turn, step, messages in step_rows:
            steps.setdefault(int(turn), []).append((int(step), load_messages(messages)))
        turns = [self._turn(row, steps.get(int(row[0]), [])) for row in turn_rows]
        return Session(thread_id, turns, [str(row[0]) for row in note_rows], agent)

    @staticmethod
    async def _thread_agent(tx: Transaction, thread_id: str) -> Row | None:
        return await tx.fetchone(
            "SELECT agent, agents_file FROM leanloop_threads WHERE thread_id = ?", (thread_id,)
        )

    @staticmethod
    def _turn(row: Row, steps: list[tuple[int, list[BaseMessage]]]) -> Turn:
        status: TurnStatus = row[3]
        owner = _owner(row)
        answer = load_message(row[2]) if row[2] is not None and status == "done" else None
        return Turn(
            number=int(row[0]),
            question=load_message(row[1]),
            steps=steps,
            answer=answer if isinstance(answer, AIMessage) else None,
            status=status,
            owner=owner,
            orphaned=status == "running" and not owner.is_alive(),
        )

    # -- turns ------------------------------------------------------------------------

    async def _claim_thread(
        self, tx: Transaction, thread_id: str, agent: AgentIdentity | None
    ) -> None:
        """Refuse ``agent`` unless the thread is its own; record it where none is.

        Called under the thread's lock (:meth:`_lock_thread`), in the transaction that
        starts or reopens the turn: should that fail, the recording is rolled back with it.
        """
        if agent is None:
            return
        recorded = _agent(await self._thread_agent(tx, thread_id))
        check_agent(thread_id, recorded, agent)
        if recorded is None:  # a new thread, or one stored before threads recorded theirs
            await tx.execute(
                "UPDATE leanloop_threads SET agent = ?, agents_file = ? WHERE thread_id = ?",
                (agent.name, agent.file, thread_id),
            )

    async def _last_turn(self, tx: Transaction, thread_id: str) -> Row | None:
        return await tx.fetchone(
            "SELECT number, question, answer, status, owner_pid, owner_host, owner_started,"
            " owner_boot FROM leanloop_turns WHERE thread_id = ? ORDER BY number DESC LIMIT 1",
            (thread_id,),
        )

    async def _step_count(self, tx: Transaction, thread_id: str, turn: int) -> int:
        row = await tx.fetchone(
            "SELECT COUNT(*) FROM leanloop_steps WHERE thread_id = ? AND turn = ?",
            (thread_id, turn),
        )
        return int(row[0]) if row is not None else 0

    def _busy(self, thread_id: str, turn: int, owner: Owner) -> SessionBusy:
        elsewhere = owner.host != Owner.current().host
        why = " (a process on another host cannot be checked from here)" if elsewhere else ""
        return SessionBusy(
            f"session {thread_id!r} is busy: turn {turn} is running in {owner.describe()}{why}"
        )

    async def begin_turn(
        self, thread_id: str, question: BaseMessage, *, agent: AgentIdentity | None = None
    ) -> int:
        """Start a new turn owned by this process and return its number (1-based).

        A ``failed`` last turn does not block a new one; a ``running`` one does.

        Args:
            thread_id: The thread.
            question: The human message that opens the turn.
            agent: The agent asking; a thread that records no agent yet becomes its own;
                ``None`` neither checks nor records one.

        Raises:
            SessionAgentMismatch: The thread belongs to another agent (checked first).
            SessionBusy: A live process (or one on another host) runs a turn of the thread.
            UnfinishedTurn: The last turn is running and its owner is dead: resume it with
                :meth:`reopen_turn` first.
        """
        text = dump_message(question)
        me = Owner.current()
        async with self._transaction(write=True) as tx:
            await self._lock_thread(tx, thread_id)
            await self._claim_thread(tx, thread_id, agent)
            last = await self._last_turn(tx, thread_id)
            if last is not None and last[3] == "running":
                owner = _owner(last)
                if owner.is_alive():
                    raise self._busy(thread_id, int(last[0]), owner)
                stored = await self._step_count(tx, thread_id, int(last[0]))
                noun = "step" if stored == 1 else "steps"
                raise UnfinishedTurn(
                    f"session {thread_id!r}: turn {last[0]} did not finish, {stored} {noun}"
                    f" stored; resume it (its process, {owner.describe()}, is gone)",
                    turn=int(last[0]),
                    steps=stored,
                )
            number = int(last[0]) + 1 if last is not None else 1
            await tx.execute(
                "INSERT INTO leanloop_turns (thread_id, number, question, answer, status,"
                " owner_pid, owner_host, owner_started, owner_boot, started_at)"
                " VALUES (?, ?, ?, NULL, 'running', ?, ?, ?, ?, ?)",
                (thread_id, number, text, me.pid, me.host, me.started, me.boot, time.time()),
            )
        return number

    async def reopen_turn(
        self, thread_id: str, *, force: bool = False, agent: AgentIdentity | None = None
    ) -> Turn:
        """Claim the unfinished last turn (orphaned or failed) to resume it.

        The turn becomes ``running``, owned by this process; its stored steps come back
        with it, so the run goes on after :attr:`Turn.last_step`.

        Args:
            thread_id: The thread.
            force: Take the turn over even if its owner seems alive (an owner on
                another host cannot be checked: use it once that host's run is known dead).
            agent: The agent asking, as for :meth:`begin_turn` (``force`` does not
                override it).

        Raises:
            SessionAgentMismatch: The thread belongs to another agent (checked first).
            SessionError: The thread has no unfinished turn.
            SessionBusy: Its owner lives (and ``force`` is false).
        """
        me = Owner.current()
        async with self._transaction(write=True) as tx:
            await self._lock_thread(tx, thread_id)
            await self._claim_thread(tx, thread_id, agent)
            last = await self._last_turn(tx, thread_id)
            if last is None or last[3] == "done":
                msg = f"session {thread_id!r} has no unfinished turn to resume"
                raise SessionError(msg)
            number = int(last[0])
            if last[3] == "running" and not force and _owner(last).is_alive():
                raise self._busy(thread_id, number, _owner(last))
            await tx.execute(
                "UPDATE leanloop_turns SET status = 'running', answer = NULL,"
                " owner_pid = ?, owner_host = ?, owner_started = ?, owner_boot = ?,"
                " finished_at = NULL WHERE thread_id = ? AND number = ?",
                (me.pid, me.host, me.started, me.boot, thread_id, number),
            )
            step_rows = await tx.fetchall(
                "SELECT step, messages FROM leanloop_steps WHERE thread_id = ? AND turn = ?"
                " ORDER BY step",
                (thread_id, number),
            )
        return Turn(
            number=number,
            question=load_message(last[1]),
            steps=[(int(step), load_messages(messages)) for step, messages in step_rows],
            answer=None,
            status="running",
            owner=me,
        )

    async def _own_running_turn(self, tx: Transaction, thread_id: str, turn: int) -> None:
        """Raise unless ``turn`` exists, is running, and belongs to this process."""
        row = await tx.fetchone(
            "SELECT number, question, answer, status, owner_pid, owner_host, owner_started,"
            " owner_boot FROM leanloop_turns WHERE thread_id = ? AND number = ?",
            (thread_id, turn),
        )
        if row is None:
            msg = f"session {thread_id!r} has no turn {turn}"
            raise SessionError(msg)
        if row[3] != "running":
            msg = f"turn {turn} of session {thread_id!r} is {row[3]}, no longer running"
            raise SessionError(msg)
        owner = _owner(row)
        if owner != Owner.current():
            msg = (
                f"turn {turn} of session {thread_id!r} belongs to {owner.describe()},"
                " not to this process"
            )
            raise SessionError(msg)

    async def add_step(
        self, thread_id: str, turn: int, step: int, messages: Sequence[BaseMessage]
    ) -> None:
        """Store one completed step of a running turn this process owns.

        The step is committed when this returns, so a process killed afterwards resumes
        after it.

        Args:
            thread_id: The thread.
            turn: The turn's number, as :meth:`begin_turn` returned it.
            step: The step's number (0: the prefetched reads), not stored yet.
            messages: The step's AI reply and the results of its tool calls.

        Raises:
            SessionError: The turn is not running in this process, or ``step`` is stored.
        """
        if step < 0:
            msg = f"step numbers start at 0, not {step}"
            raise SessionError(msg)
        text = dump_messages(messages)
        async with self._transaction(write=True) as tx:
            await self._lock_thread(tx, thread_id)
            await self._own_running_turn(tx, thread_id, turn)
            taken = await tx.fetchone(
                "SELECT 1 FROM leanloop_steps WHERE thread_id = ? AND turn = ? AND step = ?",
                (thread_id, turn, step),
            )
            if taken is not None:
                msg = f"step {step} of turn {turn} of session {thread_id!r} is already stored"
                raise SessionError(msg)
            await tx.execute(
                "INSERT INTO leanloop_steps (thread_id, turn, step, messages, stored_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (thread_id, turn, step, text, time.time()),
            )

    async def finish_turn(
        self,
        thread_id: str,
        turn: int,
        answer: AIMessage | None,
        *,
        status: Literal["done", "failed"],
    ) -> None:
        """Mark a running turn this process owns ``done`` or ``failed``.

        Args:
            thread_id: The thread.
            turn: The turn's number.
            answer: The final answer; kept only with ``done`` (a failed turn has none).
            status: ``done`` or ``failed``.

        Raises:
            SessionError: The turn is not running in this process.
        """
        if status not in ("done", "failed"):
            msg = f"a turn finishes 'done' or 'failed', not {status!r}"
            raise SessionError(msg)
        text = dump_message(answer) if answer is not None and status == "done" else None
        async with self._transaction(write=True) as tx:
            await self._lock_thread(tx, thread_id)
            await self._own_running_turn(tx, thread_id, turn)
            await tx.execute(
                "UPDATE leanloop_turns SET status = ?, answer = ?, finished_at = ?"
                " WHERE thread_id = ? AND number = ?",
                (status, text, time.time(), thread_id, turn),
            )

    async def add_note(self, thread_id: str, turn: int, text: str) -> None:
        """Keep a note written during ``turn`` (notes come back in the order written).

        Raises:
            SessionError: The thread has no such turn.
        """
        async with self._transaction(write=True) as tx:
            await self._lock_thread(tx, thread_id)
            exists = await tx.fetchone(
                "SELECT 1 FROM leanloop_turns WHERE thread_id = ? AND number = ?",
                (thread_id, turn),
            )
            if exists is None:
                msg = f"session {thread_id!r} has no turn {turn}"
                raise SessionError(msg)
            last = await tx.fetchone(
                "SELECT MAX(seq) FROM leanloop_notes WHERE thread_id = ?", (thread_id,)
            )
            seq = int(last[0]) + 1 if last is not None and last[0] is not None else 1
            await tx.execute(
                "INSERT INTO leanloop_notes (thread_id, seq, turn, text, written_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (thread_id, seq, turn, text, time.time()),
            )

    async def close(self) -> None:  # noqa: B027 - a concrete no-op, not a hook to fill
        """Nothing to release: every call opens, and closes, its own connection."""
