"""Sessions in PostgreSQL, through psycopg 3's async connections (``leanloop[postgres]``).

The same tables and rules as SQLite (:mod:`leanloop.sessions.sql`), for deployments where
several processes or hosts share the sessions. psycopg's async connections belong to the
event loop that made them, so a store keeps up to :data:`IDLE_PER_LOOP` idle connections
for each loop that uses it (leanloop's background loop, each ``asyncio.run``) and takes
one per transaction, a new one when none is idle: no connection is opened per call, and
tasks of one loop still run their transactions side by side. A loop's connections are
closed when the loop is collected, or by :meth:`PostgresStore.close`. Like SQLite's, the
store keeps each thread's decoded session and reads only what is new
(:meth:`~leanloop.sessions.sql.SqlStore.load`). A write transaction locks the
thread's row (``SELECT … FOR UPDATE``): writes to one thread queue up, different threads
do not wait for each other. Reads see one snapshot (``REPEATABLE READ``).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import weakref
from collections.abc import Sequence
from typing import Any, LiteralString, TypeVar

import psycopg
from psycopg import pq

from leanloop.exceptions import SessionError
from leanloop.sessions.sql import (
    AGENT_COLUMNS,
    Row,
    SqlStore,
    Work,
    check_schema_version,
    drive,
    execute,
    schema_statements,
)

__all__ = ["CONNECT_TIMEOUT_S", "IDLE_PER_LOOP", "PostgresStore"]

CONNECT_TIMEOUT_S = 10
"""libpq's ``connect_timeout`` unless the URL sets one (without it a dead host waits long)."""

_T = TypeVar("_T")

IDLE_PER_LOOP = 4
"""The most idle connections a store keeps for one event loop (more are closed)."""

_SCHEMA_LOCK = 0x6C65616E6C6F6F70  # "leanloop": the advisory lock of creating the tables


class _PostgresTransaction:
    """A :class:`~leanloop.sessions.sql.Transaction` on a psycopg connection."""

    def __init__(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self._conn = conn

    @staticmethod
    def _sql(sql: LiteralString) -> LiteralString:
        # The shared statements mark parameters with `?`; psycopg's mark is `%s`. None of
        # them holds a `%` or a `?` of its own.
        return sql.replace("?", "%s")

    async def fetchone(self, sql: LiteralString, params: Sequence[Any] = ()) -> Row | None:
        async with self._conn.cursor() as cursor:
            await cursor.execute(self._sql(sql), tuple(params))
            row = await cursor.fetchone()
        return tuple(row) if row is not None else None

    async def fetchall(self, sql: LiteralString, params: Sequence[Any] = ()) -> list[Row]:
        async with self._conn.cursor() as cursor:
            await cursor.execute(self._sql(sql), tuple(params))
            rows = await cursor.fetchall()
        return [tuple(row) for row in rows]

    async def execute(self, sql: LiteralString, params: Sequence[Any] = ()) -> None:
        await self._conn.execute(self._sql(sql), tuple(params))


class _Idle:
    """One event loop's idle connections of a store."""

    def __init__(self) -> None:
        self.connections: list[psycopg.AsyncConnection[Any]] = []

    def finish(self) -> None:
        """Close them without their loop (libpq's own close, from any thread): the loop is
        gone, or the store is closed from another loop."""
        connections, self.connections = self.connections, []
        for conn in connections:
            conn.pgconn.finish()


class PostgresStore(SqlStore):
    """Sessions in a PostgreSQL database (``postgres://…`` or ``postgresql://…``).

    The tables (``leanloop_*``) are created on first use; the database must exist.

    Attributes:
        url: The URL the store was opened with (libpq's connection URL).
    """

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self._ready = False
        self._idle: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Idle] = (
            weakref.WeakKeyDictionary()
        )
        # Every loop's thread takes and gives back connections: a plain lock, held for a
        # list operation, never across an await.
        self._idle_guard = threading.Lock()

    async def _connect(self) -> psycopg.AsyncConnection[Any]:
        extra: dict[str, Any] = {}
        if "connect_timeout" not in self.url:
            extra["connect_timeout"] = CONNECT_TIMEOUT_S
        return await psycopg.AsyncConnection.connect(self.url, autocommit=True, **extra)

    async def _prepare(self) -> None:
        """The tables, once per store; concurrent first uses queue on an advisory lock
        (two ``CREATE TABLE IF NOT EXISTS`` at once can still collide in PostgreSQL).

        A column a store made before it lacks is added. The columns are looked up first:
        ``ALTER TABLE … ADD COLUMN IF NOT EXISTS`` would lock the whole table, waiting for
        every transaction that uses it, on every first use of a store.
        """
        async with await self._connect() as conn, conn.transaction():
            tx = _PostgresTransaction(conn)
            await tx.execute("SELECT pg_advisory_xact_lock(?)", (_SCHEMA_LOCK,))
            for statement in schema_statements(integer="BIGINT", real="DOUBLE PRECISION"):
                await tx.execute(statement)
            # `::regclass` finds the table the way the statements do (the search_path).
            rows = await tx.fetchall(
                "SELECT attname FROM pg_attribute WHERE attrelid = 'leanloop_threads'::regclass"
                " AND attnum > 0 AND NOT attisdropped"
            )
            have = {str(row[0]) for row in rows}
            for column, statement in AGENT_COLUMNS.items():
                if column not in have:
                    await tx.execute(statement)
            await check_schema_version(tx, self._where)

    def _hold_thread(self, thread_id: str) -> Work[None]:
        yield from execute(
            "SELECT thread_id FROM leanloop_threads WHERE thread_id = ? FOR UPDATE",
            (thread_id,),
        )

    async def _take(self) -> tuple[psycopg.AsyncConnection[Any], _Idle]:
        """An idle connection of the running loop, else a new one."""
        loop = asyncio.get_running_loop()
        with self._idle_guard:
            idle = self._idle.get(loop)
            if idle is None:
                idle = self._idle[loop] = _Idle()
                # asyncio tells no one that a loop closed: its connections go with it.
                weakref.finalize(loop, idle.finish)
            conn = idle.connections.pop() if idle.connections else None
        if conn is None or conn.closed:
            conn = await self._connect()
        return conn, idle

    async def _give_back(self, conn: psycopg.AsyncConnection[Any], idle: _Idle) -> None:
        """Keep ``conn`` for the loop's next transaction, unless it is broken or enough
        are kept; a transaction left open (a cancelled call) is never kept."""
        if not conn.closed and conn.info.transaction_status == pq.TransactionStatus.IDLE:
            with self._idle_guard:
                if len(idle.connections) < IDLE_PER_LOOP:
                    idle.connections.append(conn)
                    return
        with contextlib.suppress(psycopg.Error, OSError):
            await conn.close()

    async def _run(self, work: Work[_T], *, write: bool) -> _T:
        try:
            if not self._ready:
                await self._prepare()
                self._ready = True
            conn, idle = await self._take()
            try:
                # A kept connection keeps these: each transaction says its own.
                read = psycopg.IsolationLevel.REPEATABLE_READ
                await conn.set_isolation_level(None if write else read)
                await conn.set_read_only(None if write else True)
                async with conn.transaction():
                    return await drive(_PostgresTransaction(conn), work)
            finally:
                await self._give_back(conn, idle)
        except (psycopg.Error, OSError) as exc:
            msg = f"session store {self._where}: {' '.join(str(exc).split())}"
            raise SessionError(msg) from exc

    async def close(self) -> None:
        """Close the kept connections and forget the kept sessions; a later call opens
        the store again."""
        await super().close()
        loop = asyncio.get_running_loop()
        with self._idle_guard:
            kept, self._idle = list(self._idle.items()), weakref.WeakKeyDictionary()
            mine: list[psycopg.AsyncConnection[Any]] = []
            for owner, idle in kept:
                if owner is loop:
                    mine, idle.connections = idle.connections, []
                else:
                    idle.finish()
        for conn in mine:
            with contextlib.suppress(psycopg.Error, OSError):
                await conn.close()
