"""The rules of a session store, written once over SQL for SQLite and PostgreSQL.

Each transaction's work is a generator (:data:`Work`) that yields its statements
(:class:`Query`, ``?`` placeholders) and gets their rows back; a backend runs the whole
work in one transaction (:meth:`SqlStore._run`). Written that way, the rules, what may
follow what, are here once, and a backend may run them where it likes: SQLite runs a
whole transaction in its connection's thread in one hop, instead of one hop per statement.
Every write transaction first holds the thread's row (:meth:`SqlStore._lock_thread`, which
makes it where missing, or :meth:`SqlStore._hold_thread`), so two processes cannot both
start a turn of one thread: SQLite's ``BEGIN IMMEDIATE`` already serialises all writers of
a file, PostgreSQL locks the thread's row ``FOR UPDATE``.
The same lock makes the check of the thread's agent (ADR 0024) and its recording one step:
two agents that start one new thread at once cannot both own it.

A store keeps each thread's decoded session as last loaded (:meth:`SqlStore.load`), and
the next load reads only what can have changed since: the last turn again (a running or
failed one gains steps and changes status), later turns, later notes. Earlier turns are
final: a turn only begins when the last one is not running, and only the last one is
ever reopened, so a turn that is not last never changes again; their :class:`Turn`
objects are shared by every later load. The thread's ``created_at`` tells a thread made
again (a file replaced, a thread deleted) from the one kept.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, LiteralString, Protocol, TypeVar

from langchain_core.messages import AIMessage, BaseMessage

from leanloop.exceptions import SessionBusy, SessionError, UnfinishedTurn
from leanloop.sessions.codec import dump_message, dump_messages, load_message, load_messages
from leanloop.sessions.identity import AgentIdentity, check_agent
from leanloop.sessions.model import Session, Turn, TurnStatus
from leanloop.sessions.owner import Owner
from leanloop.sessions.urls import redact_url

__all__ = [
    "AGENT_COLUMNS",
    "HISTORY_THREADS",
    "SCHEMA_VERSION",
    "Query",
    "Row",
    "SqlStore",
    "Transaction",
    "Work",
    "check_schema_version",
    "drive",
    "execute",
    "fetchall",
    "fetchone",
    "newer_schema",
    "schema_statements",
]

_T = TypeVar("_T")

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

HISTORY_THREADS = 64
"""How many threads' decoded sessions a store keeps (the least recently loaded go first).

A kept session costs the memory of its messages, which its turn holds anyway while it
runs; the bound keeps a long-lived process that serves many threads from holding them all."""

Row = tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class Query:
    """One statement of a transaction's work.

    Attributes:
        sql: The statement; ``?`` marks each parameter.
        params: Its parameters.
        rows: What the work gets back: ``one`` row (or ``None``), ``all`` rows, or
            ``none`` (``None``).
    """

    sql: LiteralString
    params: tuple[Any, ...] = ()
    rows: Literal["one", "all", "none"] = "none"


Work = Generator[Query, Any, _T]
"""A transaction's work: it yields each :class:`Query`, is sent its result, and returns
its own result. A backend runs it all in one transaction."""


def fetchone(sql: LiteralString, params: Sequence[Any] = ()) -> Work[Row | None]:
    """The first row of a query, ``None`` without one (``row = yield from fetchone(…)``)."""
    row: Row | None = yield Query(sql, tuple(params), "one")
    return row


def fetchall(sql: LiteralString, params: Sequence[Any] = ()) -> Work[list[Row]]:
    """Every row of a query (``rows = yield from fetchall(…)``)."""
    rows: list[Row] = yield Query(sql, tuple(params), "all")
    return rows


def execute(sql: LiteralString, params: Sequence[Any] = ()) -> Work[None]:
    """Run a statement (``yield from execute(…)``)."""
    yield Query(sql, tuple(params), "none")


class Transaction(Protocol):
    """One open transaction of an async backend; ``?`` marks each parameter."""

    async def fetchone(self, sql: LiteralString, params: Sequence[Any] = ()) -> Row | None:
        """The first row of a query, ``None`` without one."""
        ...

    async def fetchall(self, sql: LiteralString, params: Sequence[Any] = ()) -> list[Row]:
        """Every row of a query."""
        ...

    async def execute(self, sql: LiteralString, params: Sequence[Any] = ()) -> None:
        """Run a statement."""
        ...


async def drive(tx: Transaction, work: Work[_T]) -> _T:
    """Run ``work`` on an open transaction of an async backend and return its result."""
    try:
        query = next(work)
        while True:
            result: Any = None
            if query.rows == "one":
                result = await tx.fetchone(query.sql, query.params)
            elif query.rows == "all":
                result = await tx.fetchall(query.sql, query.params)
            else:
                await tx.execute(query.sql, query.params)
            query = work.send(result)
    except StopIteration as stop:
        value: _T = stop.value
        return value
    finally:
        work.close()


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


@dataclass(frozen=True, slots=True)
class _Kept:
    """A thread's session as a load left it: never changed, replaced by the next load."""

    created_at: float
    turns: list[Turn]
    notes: list[str]
    note_seq: int
    """The highest note ``seq`` read (``0``: none)."""


_TURN_COLUMNS: LiteralString = (
    "SELECT number, question, answer, status, owner_pid, owner_host, owner_started,"
    " owner_boot FROM leanloop_turns"
)


class SqlStore(ABC):
    """A :class:`~leanloop.sessions.model.SessionStore` over a SQL backend.

    Attributes:
        url: The URL the store was opened with.
    """

    def __init__(self, url: str) -> None:
        self.url = url
        self._where = redact_url(url)
        # Loads come from several event loops (OS threads) at once: a plain lock, held
        # for a few dictionary operations, never across an await.
        self._kept: OrderedDict[str, _Kept] = OrderedDict()
        self._kept_guard = threading.Lock()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._where!r})"

    @abstractmethod
    async def _run(self, work: Work[_T], *, write: bool) -> _T:
        """Run ``work`` in one transaction: committed when it returns, else rolled back;
        the backend's errors leave it as :class:`SessionError`. A read sees one snapshot."""

    def _lock_thread(self, thread_id: str) -> Work[None]:
        """Make the thread's row exist and hold it for the rest of the write transaction."""
        yield from execute(
            "INSERT INTO leanloop_threads (thread_id, created_at) VALUES (?, ?)"
            " ON CONFLICT (thread_id) DO NOTHING",
            (thread_id, time.time()),
        )
        yield from self._hold_thread(thread_id)

    def _hold_thread(self, thread_id: str) -> Work[None]:
        """Hold the thread's row, which exists, for the rest of the write transaction.

        Nothing to do here: SQLite's ``BEGIN IMMEDIATE`` holds the whole file already. A
        step or an answer is written to a turn, so its thread's row exists: those write
        transactions hold the row without making it first.
        """
        yield from ()

    def _forget(self) -> None:
        """Drop every kept session (the store is closed)."""
        with self._kept_guard:
            self._kept.clear()

    # -- reading ----------------------------------------------------------------------

    async def load(self, thread_id: str) -> Session:
        """The session stored under ``thread_id`` (no turns, no notes if none is).

        Only what changed since this store last loaded the thread is read and decoded;
        the turns before the last are the same objects every load (do not change them).
        """
        kept, agent = await self._run(self._load(thread_id, self._base(thread_id)), write=False)
        return self._keep(thread_id, kept, agent)

    def _base(self, thread_id: str) -> _Kept | None:
        with self._kept_guard:
            return self._kept.get(thread_id)

    def _keep(
        self, thread_id: str, kept: _Kept | None, agent: AgentIdentity | None, before: int = 0
    ) -> Session:
        """Keep what a load read; the session it is (its turns before turn ``before``
        only, when ``before`` is set)."""
        with self._kept_guard:
            if kept is None:
                self._kept.pop(thread_id, None)
            else:
                self._kept[thread_id] = kept
                self._kept.move_to_end(thread_id)
                while len(self._kept) > HISTORY_THREADS:
                    self._kept.popitem(last=False)
        if kept is None:
            return Session(thread_id, [], [], None)
        end = len(kept.turns)
        while before and end and kept.turns[end - 1].number >= before:
            end -= 1  # the new turn is the last: the loop ends at once
        # New lists (slices): a caller's change cannot reach the kept session.
        return Session(thread_id, kept.turns[:end], kept.notes[:], agent)

    def _load(
        self, thread_id: str, base: _Kept | None
    ) -> Work[tuple[_Kept | None, AgentIdentity | None]]:
        """Read what changed since ``base`` (everything without one), in one snapshot."""
        thread = yield from fetchone(
            "SELECT created_at, agent, agents_file FROM leanloop_threads WHERE thread_id = ?",
            (thread_id,),
        )
        if thread is None:
            return None, None
        created_at = float(thread[0])
        agent = _agent(thread[1:])
        if base is not None and base.created_at != created_at:
            base = None  # another thread of the same name: nothing kept is its
        known = base.turns if base is not None else []
        last = known[-1] if known else None
        # The last kept turn is read again: it is the only one that can have changed.
        first = last.number if last is not None else 0
        turn_rows = yield from fetchall(
            _TURN_COLUMNS + " WHERE thread_id = ? AND number >= ? ORDER BY number",
            (thread_id, first),
        )
        if last is not None and (not turn_rows or int(turn_rows[0][0]) != last.number):
            # Turns leanloop never removes are gone: read the thread whole.
            return (yield from self._load(thread_id, None))
        # A turn done stays done, steps and answer: the kept object serves again.
        same_last = last is not None and last.status == "done" and turn_rows[0][3] == "done"
        if same_last:
            turn_rows = turn_rows[1:]
        steps: dict[int, list[tuple[int, list[BaseMessage]]]] = {}
        if turn_rows:
            step_rows = yield from fetchall(
                "SELECT turn, step, messages FROM leanloop_steps WHERE thread_id = ?"
                " AND turn >= ? ORDER BY turn, step",
                (thread_id, int(turn_rows[0][0])),
            )
            for turn, step, messages in step_rows:
                steps.setdefault(int(turn), []).append((int(step), load_messages(messages)))
        note_seq = base.note_seq if base is not None else 0
        note_rows = yield from fetchall(
            "SELECT seq, text FROM leanloop_notes WHERE thread_id = ? AND seq > ? ORDER BY seq",
            (thread_id, note_seq),
        )
        turns = known if same_last else known[:-1]
        if turn_rows:
            turns = [*turns, *(self._turn(row, steps.get(int(row[0]), [])) for row in turn_rows)]
        notes = base.notes if base is not None else []
        if note_rows:
            notes = [*notes, *(str(row[1]) for row in note_rows)]
            note_seq = int(note_rows[-1][0])
        return _Kept(created_at, turns, notes, note_seq), agent

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

    def _claim_thread(self, thread_id: str, agent: AgentIdentity | None) -> Work[None]:
        """Refuse ``agent`` unless the thread is its own; record it where none is.

        Called under the thread's lock (:meth:`_lock_thread`), in the transaction that
        starts or reopens the turn: should that fail, the recording is rolled back with it.
        """
        if agent is None:
            return
        recorded = _agent(
            (
                yield from fetchone(
                    "SELECT agent, agents_file FROM leanloop_threads WHERE thread_id = ?",
                    (thread_id,),
                )
            )
        )
        check_agent(thread_id, recorded, agent)
        if recorded is None:  # a new thread, or one stored before threads recorded theirs
            yield from execute(
                "UPDATE leanloop_threads SET agent = ?, agents_file = ? WHERE thread_id = ?",
                (agent.name, agent.file, thread_id),
            )

    @staticmethod
    def _last_turn(thread_id: str) -> Work[Row | None]:
        return fetchone(
            _TURN_COLUMNS + " WHERE thread_id = ? ORDER BY number DESC LIMIT 1", (thread_id,)
        )

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
        return await self._run(
            self._begin_turn(thread_id, dump_message(question), agent), write=True
        )

    def _begin_turn(self, thread_id: str, text: str, agent: AgentIdentity | None) -> Work[int]:
        me = Owner.current()
        yield from self._lock_thread(thread_id)
        yield from self._claim_thread(thread_id, agent)
        last = yield from self._last_turn(thread_id)
        if last is not None and last[3] == "running":
            owner = _owner(last)
            if owner.is_alive():
                raise self._busy(thread_id, int(last[0]), owner)
            row = yield from fetchone(
                "SELECT COUNT(*) FROM leanloop_steps WHERE thread_id = ? AND turn = ?",
                (thread_id, int(last[0])),
            )
            stored = int(row[0]) if row is not None else 0
            noun = "step" if stored == 1 else "steps"
            raise UnfinishedTurn(
                f"session {thread_id!r}: turn {last[0]} did not finish, {stored} {noun}"
                f" stored; resume it (its process, {owner.describe()}, is gone)",
                turn=int(last[0]),
                steps=stored,
            )
        number = int(last[0]) + 1 if last is not None else 1
        yield from execute(
            "INSERT INTO leanloop_turns (thread_id, number, question, answer, status,"
            " owner_pid, owner_host, owner_started, owner_boot, started_at)"
            " VALUES (?, ?, ?, NULL, 'running', ?, ?, ?, ?, ?)",
            (thread_id, number, text, me.pid, me.host, me.started, me.boot, time.time()),
        )
        return number

    async def start_turn(
        self, thread_id: str, question: BaseMessage, *, agent: AgentIdentity | None = None
    ) -> tuple[Session, int]:
        """:meth:`begin_turn`, and the session as it was before the new turn, at once.

        One transaction instead of a :meth:`load` and a :meth:`begin_turn`: a turn's
        storage is dominated by its transactions (issue 40). The agent is checked before
        anything of the thread is read.

        Args:
            thread_id: The thread.
            question: The human message that opens the turn.
            agent: The agent asking, as for :meth:`begin_turn`.

        Returns:
            The session without the new turn, and the new turn's number.

        Raises:
            SessionAgentMismatch: As :meth:`begin_turn`.
            SessionBusy: As :meth:`begin_turn`.
            UnfinishedTurn: As :meth:`begin_turn`.
        """
        text = dump_message(question)
        base = self._base(thread_id)
        number, (kept, recorded) = await self._run(
            self._start_turn(thread_id, text, agent, base), write=True
        )
        return self._keep(thread_id, kept, recorded, before=number), number

    def _start_turn(
        self, thread_id: str, text: str, agent: AgentIdentity | None, base: _Kept | None
    ) -> Work[tuple[int, tuple[_Kept | None, AgentIdentity | None]]]:
        number = yield from self._begin_turn(thread_id, text, agent)
        if number == 1:
            # Turn 1: no earlier turn, so no step and no note (notes belong to turns).
            thread = yield from fetchone(
                "SELECT created_at, agent, agents_file FROM leanloop_threads WHERE thread_id = ?",
                (thread_id,),
            )
            if thread is not None:
                return number, (_Kept(float(thread[0]), [], [], 0), _agent(thread[1:]))
        loaded = yield from self._load(thread_id, base)
        return number, loaded

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
        return await self._run(self._reopen_turn(thread_id, force, agent), write=True)

    def _reopen_turn(self, thread_id: str, force: bool, agent: AgentIdentity | None) -> Work[Turn]:
        me = Owner.current()
        yield from self._lock_thread(thread_id)
        yield from self._claim_thread(thread_id, agent)
        last = yield from self._last_turn(thread_id)
        if last is None or last[3] == "done":
            msg = f"session {thread_id!r} has no unfinished turn to resume"
            raise SessionError(msg)
        number = int(last[0])
        if last[3] == "running" and not force and _owner(last).is_alive():
            raise self._busy(thread_id, number, _owner(last))
        yield from execute(
            "UPDATE leanloop_turns SET status = 'running', answer = NULL,"
            " owner_pid = ?, owner_host = ?, owner_started = ?, owner_boot = ?,"
            " finished_at = NULL WHERE thread_id = ? AND number = ?",
            (me.pid, me.host, me.started, me.boot, thread_id, number),
        )
        step_rows = yield from fetchall(
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

    @staticmethod
    def _own_running_turn(thread_id: str, turn: int) -> Work[None]:
        """Raise unless ``turn`` exists, is running, and belongs to this process."""
        # The question and answer left out (NULL): only the status and owner are checked.
        row = yield from fetchone(
            "SELECT number, NULL, NULL, status, owner_pid, owner_host, owner_started,"
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
        self,
        thread_id: str,
        turn: int,
        step: int,
        messages: Sequence[BaseMessage],
        *,
        replace: bool = False,
    ) -> None:
        """Store one completed step of a running turn this process owns.

        The step is committed when this returns, so a process killed afterwards resumes
        after it.

        Args:
            thread_id: The thread.
            turn: The turn's number, as :meth:`begin_turn` returned it.
            step: The step's number (0: the prefetched reads), not stored yet.
            messages: The step's AI reply and the results of its tool calls.
            replace: Store it in place of the stored step of that number (a paused
                reply, done once its calls were decided and ran: ADR 0037).

        Raises:
            SessionError: The turn is not running in this process, or ``step`` is stored
                (and ``replace`` is false).
        """
        if step < 0:
            msg = f"step numbers start at 0, not {step}"
            raise SessionError(msg)
        text = dump_messages(messages)
        await self._run(self._add_step(thread_id, turn, step, text, replace), write=True)

    def _add_step(
        self, thread_id: str, turn: int, step: int, text: str, replace: bool = False
    ) -> Work[None]:
        yield from self._hold_thread(thread_id)
        yield from self._own_running_turn(thread_id, turn)
        taken = yield from fetchone(
            "SELECT 1 FROM leanloop_steps WHERE thread_id = ? AND turn = ? AND step = ?",
            (thread_id, turn, step),
        )
        if taken is not None and replace:
            yield from execute(
                "UPDATE leanloop_steps SET messages = ?, stored_at = ?"
                " WHERE thread_id = ? AND turn = ? AND step = ?",
                (text, time.time(), thread_id, turn, step),
            )
            return
        if taken is not None:
            msg = f"step {step} of turn {turn} of session {thread_id!r} is already stored"
            raise SessionError(msg)
        yield from execute(
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
        await self._run(self._finish_turn(thread_id, turn, text, status), write=True)

    def _finish_turn(self, thread_id: str, turn: int, text: str | None, status: str) -> Work[None]:
        yield from self._hold_thread(thread_id)
        yield from self._own_running_turn(thread_id, turn)
        yield from execute(
            "UPDATE leanloop_turns SET status = ?, answer = ?, finished_at = ?"
            " WHERE thread_id = ? AND number = ?",
            (status, text, time.time(), thread_id, turn),
        )

    async def add_note(self, thread_id: str, turn: int, text: str) -> None:
        """Keep a note written during ``turn`` (notes come back in the order written).

        Raises:
            SessionError: The thread has no such turn.
        """
        await self._run(self._add_note(thread_id, turn, text), write=True)

    def _add_note(self, thread_id: str, turn: int, text: str) -> Work[None]:
        yield from self._lock_thread(thread_id)
        exists = yield from fetchone(
            "SELECT 1 FROM leanloop_turns WHERE thread_id = ? AND number = ?",
            (thread_id, turn),
        )
        if exists is None:
            msg = f"session {thread_id!r} has no turn {turn}"
            raise SessionError(msg)
        last = yield from fetchone(
            "SELECT MAX(seq) FROM leanloop_notes WHERE thread_id = ?", (thread_id,)
        )
        seq = int(last[0]) + 1 if last is not None and last[0] is not None else 1
        yield from execute(
            "INSERT INTO leanloop_notes (thread_id, seq, turn, text, written_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (thread_id, seq, turn, text, time.time()),
        )

    async def close(self) -> None:
        """Forget the kept sessions; a backend also closes what it keeps open."""
        self._forget()
