"""Sessions in a SQLite file, through the standard library's ``sqlite3`` in a thread.

A store keeps one connection to its file, used by one thread of its own (the event loop
never waits on the disk). A transaction's whole work (:data:`~leanloop.sessions.sql.Work`)
runs in that thread at once: one hop from the event loop and back per transaction, where
a connection per call cost a new connection and thread each time, and one hop per
statement (issue 40: a turn's four transactions cost 1.4-1.5x LangGraph's SqliteSaver).
The connection belongs to no event loop, so every loop of the process (leanloop's
background loop, each ``asyncio.run``) uses it, one transaction after another: SQLite
serialises a file's writers anyway. It is opened on first use and closed after
:data:`IDLE_CLOSE_S` without work (then its thread ends too), by :meth:`SqliteStore.close`,
or as the process exits; a store is safe to keep for a process's life. A file replaced
or removed behind the store's back is noticed before each transaction (its inode) and
opened again.

Several processes can share the file: it is in WAL mode (readers never wait for a
writer) with a busy timeout. Writes take the write lock up front (``BEGIN IMMEDIATE``): a
transaction that read first and upgraded later could fail at once in WAL mode instead of
waiting. Opening the connection creates the file, its folders and tables. While the
connection is open the WAL stays: when the last connection to a WAL file closes, SQLite
checkpoints and deletes it, which tripled the cost of every call when each call had its
own connection (26 ms instead of 8 for a step, measured here).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import queue
import sqlite3
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from pathlib import Path
from typing import Any, Protocol, TypeVar

from leanloop.exceptions import SessionError
from leanloop.sessions.sql import (
    AGENT_COLUMNS,
    SCHEMA_VERSION,
    SqlStore,
    Work,
    newer_schema,
    schema_statements,
)

__all__ = ["BUSY_TIMEOUT_S", "EXIT_CLOSE_S", "IDLE_CLOSE_S", "SqliteStore"]

_T = TypeVar("_T")

BUSY_TIMEOUT_S = 30.0
"""How long a call waits for another connection's write lock before it fails."""

IDLE_CLOSE_S = 30.0
"""After this long without work a store's connection closes and its thread ends: a
process that keeps many stores (a server, a test run) holds no file or thread for the
idle ones. The next call opens it again (about a millisecond)."""

_Identity = tuple[int, int]
"""A file's device and inode: another file at the same path has others."""


def _identity(path: Path) -> _Identity | None:
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_dev, stat.st_ino


def _run_work(db: sqlite3.Connection, work: Work[_T], *, write: bool) -> _T:
    """Run ``work`` in one transaction of ``db`` (in the connection's thread)."""
    # A read is one snapshot of the file; a write holds the lock from the start.
    db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        query = next(work)
        while True:
            cursor = db.execute(query.sql, query.params)
            result: Any = None
            if query.rows == "one":
                result = cursor.fetchone()
            elif query.rows == "all":
                result = cursor.fetchall()
            query = work.send(result)
    except StopIteration as stop:
        value: _T = stop.value
    except BaseException:
        if db.in_transaction:  # SQLite may have rolled back already
            db.execute("ROLLBACK")
        raise
    finally:
        work.close()
    try:
        db.execute("COMMIT")
    except BaseException:
        # The connection serves the next transaction: none may stay open on it.
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    return value


class _Reply(Protocol):
    """Where a job's outcome goes, from the connection's thread."""

    def start(self) -> bool:
        """Whether the job is still wanted (``False``: its caller gave up; skip it)."""
        ...

    def finish(self, result: Any, error: BaseException | None) -> None:
        """Hand the job's result, or its error, to its caller."""
        ...


class _ToLoop:
    """The reply to a coroutine: its future, set on its event loop's own thread.

    One ``call_soon_threadsafe`` back, where ``run_in_executor`` chains a
    ``concurrent.futures.Future`` to an asyncio one (two futures and their callbacks a
    transaction; the bare hop measured 60-68 µs instead of 71-120, medians, on 2 loaded
    cores).
    """

    __slots__ = ("future", "loop")

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.future: asyncio.Future[Any] = loop.create_future()

    def start(self) -> bool:
        # Read in the connection's thread. A caller cancelled after this look finds its
        # transaction committed, as one cancelled while it ran always did.
        return not self.future.cancelled()

    def finish(self, result: Any, error: BaseException | None) -> None:
        # RuntimeError: the loop closed meanwhile, and nobody waits for the outcome.
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(_settle, self.future, result, error)


def _settle(future: asyncio.Future[Any], result: Any, error: BaseException | None) -> None:
    """Set ``future`` (on its loop's thread) unless its caller was cancelled."""
    if future.cancelled():
        return
    if error is None:
        future.set_result(result)
    else:
        future.set_exception(error)


class _ToThread:
    """The reply to a thread that waits (the closing): a ``concurrent.futures.Future``."""

    __slots__ = ("future",)

    def __init__(self) -> None:
        self.future: Future[Any] = Future()

    def start(self) -> bool:
        return self.future.set_running_or_notify_cancel()

    def finish(self, result: Any, error: BaseException | None) -> None:
        if error is None:
            self.future.set_result(result)
        else:
            self.future.set_exception(error)


_Job = tuple[_Reply, Callable[[sqlite3.Connection], Any] | None]
"""Where the outcome goes and what to run on the connection; ``None``: close it and end
the thread."""


class _Connection:
    """A store's connection and the one thread that uses it.

    The thread ends when :meth:`stop` is queued, or on its own after :data:`IDLE_CLOSE_S`
    without work, if its store agrees (:meth:`SqliteStore._retire`).
    """

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self.jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._db: sqlite3.Connection | None = None
        self._file: _Identity | None = None
        self._thread = threading.Thread(target=self._serve, name="leanloop-sessions", daemon=True)
        self._thread.start()

    def run_for(
        self, loop: asyncio.AbstractEventLoop, fn: Callable[[sqlite3.Connection], _T]
    ) -> asyncio.Future[_T]:
        """Queue ``fn(connection)`` for the connection's thread; its outcome comes back
        on ``loop``. Cancelling the future skips ``fn`` if it has not started."""
        reply = _ToLoop(loop)
        self.jobs.put((reply, fn))
        return reply.future

    def stop(self) -> Future[None]:
        """Queue the connection's closing, after the work queued before it."""
        reply = _ToThread()
        self.jobs.put((reply, None))
        return reply.future

    def _connection(self) -> sqlite3.Connection:
        """The open connection, opened (again) when none is or the file was replaced."""
        if self._db is not None and _identity(self._store.path) == self._file:
            return self._db
        self._close()
        self._db = self._store._open()
        self._file = _identity(self._store.path)
        return self._db

    def _close(self) -> None:
        db, self._db = self._db, None
        if db is not None:
            db.close()

    def _serve(self) -> None:
        # Daemon thread: a process that exits with work queued (a background loop it
        # never waited for) must not hang on it; a committed transaction is on disk.
        try:
            while True:
                try:
                    reply, action = self.jobs.get(timeout=IDLE_CLOSE_S)
                except queue.Empty:
                    if self._store._retire(self):
                        return
                    continue
                if action is None:  # closing: even if its caller was cancelled
                    error: BaseException | None = None
                    try:
                        self._close()
                    except BaseException as exc:  # handed to the caller
                        error = exc
                    if reply.start():
                        reply.finish(None, error)
                    return
                if not reply.start():
                    continue  # its caller was cancelled before it ran
                try:
                    result = action(self._connection())
                except BaseException as exc:  # handed to the caller, on its event loop
                    reply.finish(None, exc)
                else:
                    reply.finish(result, None)
        finally:
            self._close()


def _prepare_file(path: Path) -> None:
    """Create the folders, and the file readable by its owner only (conversations are
    private); SQLite gives its ``-wal`` and ``-shm`` files the same permissions."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)


def _create_schema(db: sqlite3.Connection, where: str) -> None:
    """WAL mode, the tables (with the columns a store made before them lacks) and the
    schema version, in one write transaction."""
    # WAL is a property of the file: set once, every connection then uses it.
    db.execute("PRAGMA journal_mode = WAL").fetchone()
    db.execute("BEGIN IMMEDIATE")
    try:
        for statement in schema_statements(integer="INTEGER", real="REAL"):
            db.execute(statement)
        # SQLite has no ADD COLUMN IF NOT EXISTS: the missing columns are looked up.
        have = {str(row[1]) for row in db.execute("PRAGMA table_info(leanloop_threads)")}
        for column, statement in AGENT_COLUMNS.items():
            if column not in have:
                db.execute(statement)
        row = db.execute("SELECT value FROM leanloop_meta WHERE key = 'schema_version'").fetchone()
        if row is None:
            db.execute(
                "INSERT INTO leanloop_meta (key, value) VALUES ('schema_version', ?)",
                (str(SCHEMA_VERSION),),
            )
        elif int(row[0]) > SCHEMA_VERSION:
            raise newer_schema(where, int(row[0]))
    except BaseException:
        if db.in_transaction:
            db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _retry_while_locked(action: Callable[[], None]) -> None:
    """Run ``action``, again while the file is locked, for up to :data:`BUSY_TIMEOUT_S`.

    Around a file's creation (many connections at once, one switching it to WAL) SQLite
    can answer "database is locked" at once, without waiting in its busy handler.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_S
    pause = 0.005
    while True:
        try:
            action()
        except sqlite3.OperationalError as exc:
            text = str(exc)
            if ("locked" not in text and "busy" not in text) or time.monotonic() > deadline:
                raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)
        else:
            return


_connected: weakref.WeakSet[SqliteStore] = weakref.WeakSet()
"""The stores that opened a connection (closed ones stay, with nothing to close)."""

EXIT_CLOSE_S = 5.0
"""How long a process that exits waits for each store's connection to close."""


def _close_at_exit() -> None:
    """Close every store's connection as the process exits, as :meth:`SqliteStore.close`
    does: SQLite then checkpoints the WAL into the file and removes it. (The connection's
    thread is a daemon: without this its connection would end with the process, and the
    ``-wal`` and ``-shm`` files stay beside the database, harmless but untidy.)"""
    for store in list(_connected):
        with store._guard:
            worker, store._worker = store._worker, None
        if worker is not None and store._pid == os.getpid():
            with contextlib.suppress(Exception):
                worker.stop().result(timeout=EXIT_CLOSE_S)


atexit.register(_close_at_exit)


class SqliteStore(SqlStore):
    """Sessions in one SQLite file (``sqlite:///ABSOLUTE/PATH``), created on first use.

    Attributes:
        url: The URL the store was opened with.
        path: The database file.
    """

    def __init__(self, url: str, path: Path) -> None:
        super().__init__(url)
        self.path = path
        self._worker: _Connection | None = None
        self._pid = os.getpid()
        # Taken by every caller, on any event loop's thread, to find (or start) the
        # connection's thread and queue work on it; held for that only, never across an
        # await.
        self._guard = threading.Lock()

    def _open(self) -> sqlite3.Connection:
        """A new connection (in the connection's thread): folders, file, WAL mode and
        tables made where missing, and a store from a newer leanloop refused."""
        _prepare_file(self.path)
        # isolation_level=None: no implicit transactions; each transaction says BEGIN.
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        try:
            _retry_while_locked(lambda: _create_schema(db, self._where))
            db.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            db.close()
            raise
        return db

    def _retire(self, worker: _Connection) -> bool:
        """Whether the idle ``worker`` may end (no work queued, none can come)."""
        with self._guard:
            if self._worker is not worker:  # closed: only its closing can still come
                return worker.jobs.empty()
            if worker.jobs.empty():
                self._worker = None
                return True
            return False

    async def _run(self, work: Work[_T], *, write: bool) -> _T:
        loop = asyncio.get_running_loop()
        try:
            with self._guard:
                # A forked child has the parent's store but not its thread: it opens its own.
                if self._worker is None or self._pid != os.getpid():
                    self._worker, self._pid = _Connection(self), os.getpid()
                    _connected.add(self)
                pending = self._worker.run_for(loop, partial(_run_work, work=work, write=write))
            return await pending
        except (sqlite3.Error, OSError) as exc:
            msg = f"session store {self._where}: {' '.join(str(exc).split())}"
            raise SessionError(msg) from exc

    async def close(self) -> None:
        """Close the connection and forget the kept sessions; a later call opens the
        store again."""
        await super().close()
        with self._guard:
            worker, self._worker = self._worker, None
        if worker is None:
            return
        try:
            await asyncio.wrap_future(worker.stop())
        except sqlite3.Error as exc:
            msg = f"session store {self._where}: {' '.join(str(exc).split())}"
            raise SessionError(msg) from exc
