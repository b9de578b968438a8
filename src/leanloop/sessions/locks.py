"""Turns of one thread one at a time, inside one process.

The store refuses a second running turn of a thread (:class:`~leanloop.exceptions.SessionBusy`);
within a process, callers wait for each other instead. An ``asyncio.Lock`` belongs to one
event loop, and leanloop runs on several (its background loop, each ``asyncio.run``), so
the locks are kept per running loop. Both levels hold them weakly: a lock lives while a
task holds or awaits it, a loop's table while the loop lives, so nothing accumulates over
a long life with many thread ids.

A run inside a turn (a tool the turn calls, a sub-agent) that asks for a turn of the same
thread would wait for a lock its own caller holds until the caller gives up: such a wait
is refused at once instead (:func:`thread_lock` knows the turns its caller holds from a
context variable, which every task and worker thread of the turn inherits).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

from leanloop.exceptions import SessionError
from leanloop.sessions.stores import sqlite_path

__all__ = ["thread_lock"]

_LockTable = weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock]
_tables: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LockTable] = (
    weakref.WeakKeyDictionary()
)
# Loops run in different OS threads; the tables are shared between them.
_guard = threading.Lock()


@dataclass(eq=False)
class _Held:
    """One held thread lock, as the code running inside it sees it."""

    key: tuple[str, str]
    active: bool = True
    """``False`` once released: a task the turn started and left running may take it."""


_held: contextvars.ContextVar[tuple[_Held, ...]] = contextvars.ContextVar(
    "leanloop_held_thread_locks", default=()
)


def _store_key(url: str) -> str:
    """One key per store, however its URL is spelled (``sqlite:///x`` = ``sqlite:////x``)."""
    if url.lower().startswith("sqlite://"):
        try:
            return f"sqlite:{sqlite_path(url)}"
        except SessionError:
            return url
    return url


def _lock_for(key: tuple[str, str]) -> asyncio.Lock:
    loop = asyncio.get_running_loop()
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
    serialised here: the store refuses the second (``SessionBusy``). Code running inside
    the lock (the turn's tools, a sub-agent) that asks for it again is refused at once.

    Args:
        url: The store's URL.
        thread_id: The thread.

    Raises:
        SessionError: The caller already holds this thread's lock (a nested turn).
    """
    key = (_store_key(url), thread_id)
    if any(held.active and held.key == key for held in _held.get()):
        msg = (
            f"session {thread_id!r}: a run inside one of its turns cannot take a turn of"
            " the same session (it would wait for the turn it is part of): give the inner"
            " run a thread_id of its own, or thread_id None to run it without a session"
        )
        raise SessionError(msg)
    lock = _lock_for(key)
    async with lock:
        held = _Held(key)
        token = _held.set((*_held.get(), held))
        try:
            yield
        finally:
            held.active = False
            with contextlib.suppress(ValueError):  # exited in another context: nothing to undo
                _held.reset(token)
