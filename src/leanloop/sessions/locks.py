"""Turns of one thread one at a time, inside one process.

The store refuses a second running turn of a thread (:class:`~leanloop.exceptions.SessionBusy`);
within a process, callers wait for each other instead. An ``asyncio.Lock`` belongs to one
event loop, and leanloop runs on several (its background loop, each ``asyncio.run``), so
the locks are kept per running loop. Both levels hold them weakly: a lock lives while a
task holds or awaits it, a loop's table while the loop lives, so nothing accumulates over
a long life with many thread ids.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from leanloop.exceptions import SessionError
from leanloop.sessions.stores import sqlite_path

__all__ = ["thread_lock"]

_LockTable = weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock]
_tables: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LockTable] = (
    weakref.WeakKeyDictionary()
)
# Loops run in different OS threads; the tables are shared between them.
_guard = threading.Lock()


def _store_key(url: str) -> str:
    """One key per store, however its URL is spelled (``sqlite:///x`` = ``sqlite:////x``)."""
    if url.lower().startswith("sqlite://"):
        try:
            return f"sqlite:{sqlite_path(url)}"
        except SessionError:
            return url
    return url


def _lock_for(url: str, thread_id: str) -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    key = (_store_key(url), thread_id)
    with _guard:
        table = _tables.get(loop)
        if table is None:
            table = _tables[loop] = weakref.WeakValueDictionary()
        lock = table.get(key)
        if lock is None:
            lock = table[key] = asyncio.Lock()
        return lock


@asynccontextmanager
async def thread_lock(url: str, thread_id: str) -> AsyncIterator[None]:
    """Hold the in-process lock of ``thread_id`` in the store at ``url``.

    Two tasks on one event loop that run a turn of the same thread wait for each other;
    different threads run in parallel. Tasks on different event loops are not
    serialised here: the store refuses the second (``SessionBusy``).

    Args:
        url: The store's URL.
        thread_id: The thread.
    """
    lock = _lock_for(url, thread_id)
    async with lock:
        yield
