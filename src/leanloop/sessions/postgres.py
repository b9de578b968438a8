"""Sessions in PostgreSQL, through psycopg 3's async connections (``leanloop[postgres]``).

The same tables and rules as SQLite (:mod:`leanloop.sessions.sql`), for deployments where
several processes or hosts share the sessions. As with SQLite, every call opens its own
connection, so a store is not tied to one event loop. A write transaction locks the
thread's row (``SELECT … FOR UPDATE``): writes to one thread queue up, different threads
do not wait for each other. Reads see one snapshot (``REPEATABLE READ``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any, LiteralString

import psycopg

from leanloop.exceptions import SessionError
from leanloop.sessions.sql import (
    AGENT_COLUMNS,
    Row,
    SqlStore,
    Transaction,
    check_schema_version,
    schema_statements,
)

__all__ = ["CONNECT_TIMEOUT_S", "PostgresStore"]

CONNECT_TIMEOUT_S = 10
"""libpq's ``connect_timeout`` unless the URL sets one (without it a dead host waits long)."""

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


class PostgresStore(SqlStore):
    """Sessions in a PostgreSQL database (``postgres://…`` or ``postgresql://…``).

    The tables (``leanloop_*``) are created on first use; the database must exist.

    Attributes:
        url: The URL the store was opened with (libpq's connection URL).
    """

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self._ready = False

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

    async def _lock_thread(self, tx: Transaction, thread_id: str) -> None:
        await super()._lock_thread(tx, thread_id)
        await tx.execute(
            "SELECT thread_id FROM leanloop_threads WHERE thread_id = ? FOR UPDATE",
            (thread_id,),
        )

    @asynccontextmanager
    async def _transaction(self, *, write: bool) -> AsyncIterator[Transaction]:
        try:
            if not self._ready:
                await self._prepare()
                self._ready = True
            async with await self._connect() as conn:
                if not write:
                    await conn.set_isolation_level(psycopg.IsolationLevel.REPEATABLE_READ)
                    await conn.set_read_only(True)
                async with conn.transaction():
                    yield _PostgresTransaction(conn)
        except (psycopg.Error, OSError) as exc:
            msg = f"session store {self._where}: {' '.join(str(exc).split())}"
            raise SessionError(msg) from exc
