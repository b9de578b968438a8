"""Sessions in a SQLite file, through aiosqlite (the event loop never waits on the disk).

Every call opens its own connection and closes it when done. That costs well under a
millisecond, and makes a store safe to share between tasks, event loops (leanloop's
background loop and each ``asyncio.run``) and processes, with no connection tied to a
loop that may be gone: SQLite itself serialises the writers. The file is in WAL mode
(readers never wait for a writer) with a busy timeout, so several processes can share it.
Writes take the write lock up front (``BEGIN IMMEDIATE``): a transaction that read first
and upgraded later could fail at once in WAL mode instead of waiting.

The first call creates the file, its folders and tables. One plain connection then stays
open, idle, until :meth:`SqliteStore.close`:
when the last connection to a WAL file closes, SQLite checkpoints and deletes the WAL,
which tripled the cost of every call (26 ms instead of 8 for a step, measured here).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, LiteralString

import aiosqlite

from leanloop.exceptions import SessionError
from leanloop.sessions.sql import (
    AGENT_COLUMNS,
    SCHEMA_VERSION,
    Row,
    SqlStore,
    Transaction,
    newer_schema,
    schema_statements,
)

__all__ = ["BUSY_TIMEOUT_S", "SqliteStore"]

BUSY_TIMEOUT_S = 30.0
"""How long a call waits for another connection's write lock before it fails."""


class _SqliteTransaction:
    """A :class:`~leanloop.sessions.sql.Transaction` on an aiosqlite connection."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self._db = db

    async def fetchone(self, sql: LiteralString, params: Sequence[Any] = ()) -> Row | None:
        async with self._db.execute(sql, tuple(params)) as cursor:
            row = await cursor.fetchone()
        return tuple(row) if row is not None else None

    async def fetchall(self, sql: LiteralString, params: Sequence[Any] = ()) -> list[Row]:
        async with self._db.execute(sql, tuple(params)) as cursor:
            rows = await cursor.fetchall()
        return [tuple(row) for row in rows]

    async def execute(self, sql: LiteralString, params: Sequence[Any] = ()) -> None:
        await self._db.execute(sql, tuple(params))


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


class SqliteStore(SqlStore):
    """Sessions in one SQLite file (``sqlite:///ABSOLUTE/PATH``), created on first use.

    Attributes:
        url: The URL the store was opened with.
        path: The database file.
    """

    def __init__(self, url: str, path: Path) -> None:
        super().__init__(url)
        self.path = path
        self._keeper: sqlite3.Connection | None = None
        # Held by the worker thread that prepares the file: the first calls of many tasks
        # (or event loops) at once prepare it once, the others wait for that one.
        self._preparing = threading.Lock()

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[aiosqlite.Connection]:
        # isolation_level=None: no implicit transactions; each call says BEGIN itself.
        async with aiosqlite.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None) as db:
            await db.execute("PRAGMA foreign_keys = ON")
            yield db

    def _prepare(self) -> None:
        """Folders, file, WAL mode and tables, then the idle connection; in a worker
        thread, once per store (until :meth:`close`)."""
        with self._preparing:
            if self._keeper is not None:
                return
            _prepare_file(self.path)
            keeper = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            try:
                # Creating the tables also reads the file: the keeper has joined the WAL.
                _retry_while_locked(lambda: _create_schema(keeper, self._where))
            except BaseException:
                keeper.close()
                raise
            self._keeper = keeper

    @asynccontextmanager
    async def _transaction(self, *, write: bool) -> AsyncIterator[Transaction]:
        try:
            if self._keeper is None:
                await asyncio.to_thread(self._prepare)
            async with self._connect() as db:
                # A read is one snapshot of the file; a write holds the lock from the start.
                await db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield _SqliteTransaction(db)
                except BaseException:
                    if db.in_transaction:  # SQLite may have rolled back already
                        await db.execute("ROLLBACK")
                    raise
                await db.execute("COMMIT")
        except (sqlite3.Error, OSError) as exc:
            msg = f"session store {self._where}: {' '.join(str(exc).split())}"
            raise SessionError(msg) from exc

    async def close(self) -> None:
        """Close the idle connection; a later call opens the store again."""
        keeper, self._keeper = self._keeper, None
        if keeper is not None:
            try:
                await asyncio.to_thread(keeper.close)
            except sqlite3.Error as exc:
                msg = f"session store {self._where}: {' '.join(str(exc).split())}"
                raise SessionError(msg) from exc
