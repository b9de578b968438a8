"""Turns of one thread one at a time, inside one process, whichever event loop runs them.

The store refuses a second running turn of a thread (:class:`~leanloop.exceptions.SessionBusy`);
within a process, callers wait for each other instead (ADR 0019). leanloop runs on several
event loops at once (the background loop of ``invoke``, each ``asyncio.run`` in each OS
thread), and an ``asyncio.Lock`` serves the tasks of one loop only: a turn on another loop
would not wait for it, and the store would refuse it as busy. So each thread's lock here
belongs to the process: a waiter parks on a future of its own loop (its loop goes on
running other tasks), and the turn that ends hands the lock to the first waiter, on that
waiter's loop, through ``call_soon_threadsafe``. Waiters run in the order they asked. A
lock exists while a turn holds it: nothing accumulates over a long life with many
thread ids.

A run inside a turn (a tool the turn calls, a sub-agent) that asks for a turn of the same
thread would wait for a lock its own caller holds until the caller gives up: such a wait
is refused at once instead (:func:`thread_lock` knows the turns its caller holds from a
context variable, which every task and worker thread of the turn inherits).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from leanloop.exceptions import SessionError
from leanloop.sessions.stores import store_key

__all__ = ["thread_lock"]

logger = logging.getLogger(__name__)


@dataclass(eq=False)
class _Waiter:
    """A turn waiting for the lock, parked on a future of its own event loop."""

    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]
    granted: bool = False
    """Set, under ``_guard``, when the lock is handed to it: it is then the holder, even if
    it is cancelled before it runs again (it must then hand the lock on)."""


@dataclass(eq=False)
class _ThreadLock:
    """One thread's turn in this process: held by one turn; the others wait, in order."""

    waiters: deque[_Waiter] = field(default_factory=deque)


_tables: dict[str, dict[str, _ThreadLock]] = {}
"""Per store (:func:`~leanloop.sessions.stores.store_key`), per thread id: the lock while
some turn holds it.

Guarded by ``_guard``, a plain ``threading.Lock`` (the loops run in different OS threads):
it is held for a few dictionary operations only, never across an ``await``."""
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


def _wake(future: asyncio.Future[None]) -> None:
    """On the waiter's loop: let it run (unless it was cancelled meanwhile)."""
    if not future.done():
        future.set_result(None)


def _hand_on(key: tuple[str, str], lock: _ThreadLock) -> None:
    """The holder is done: hand the lock to the first waiter that can take it, or drop it.

    Called with ``_guard`` held.
    """
    while lock.waiters:
        waiter = lock.waiters.popleft()
        waiter.granted = True
        try:
            waiter.loop.call_soon_threadsafe(_wake, waiter.future)
        except RuntimeError:
            # Its loop was closed while it waited: nothing will run it again.
            continue
        return
    store, thread_id = key
    table = _tables.get(store)
    if table is not None and table.get(thread_id) is lock:
        del table[thread_id]
        if not table:
            del _tables[store]


async def _acquire(key: tuple[str, str]) -> _ThreadLock:
    """Hold ``key``'s lock: at once when no turn holds it, else after the earlier waiters."""
    loop = asyncio.get_running_loop()
    store, thread_id = key
    with _guard:
        table = _tables.setdefault(store, {})
        lock = table.get(thread_id)
        if lock is None:
            lock = table[thread_id] = _ThreadLock()
            return lock
        waiter = _Waiter(loop, loop.create_future())
        lock.waiters.append(waiter)
    logger.debug(
        "session %r: a turn of it is running in this process; waiting for it to end", thread_id
    )
    try:
        await waiter.future
    except BaseException:
        with _guard:
            if waiter.granted:
                _hand_on(key, lock)  # handed over as it was cancelled: pass it on
            else:
                lock.waiters.remove(waiter)
        raise
    return lock


def _release(key: tuple[str, str], lock: _ThreadLock) -> None:
    with _guard:
        _hand_on(key, lock)


@asynccontextmanager
async def thread_lock(url: str, thread_id: str) -> AsyncIterator[None]:
    """Hold the in-process lock of ``thread_id`` in the store at ``url``.

    Two turns of the same thread wait for each other, on one event loop or on different
    ones (a waiter does not block its loop), and the waiters go in the order they asked;
    different threads run in parallel. Another process is not held back here: the store
    refuses its turn (``SessionBusy``). Code running inside the lock (the turn's tools, a
    sub-agent) that asks for it again is refused at once.

    A waiter whose event loop was closed is passed over; one whose loop stops for good
    without being closed holds up the turns after it, as it would on an ``asyncio.Lock``.

    Args:
        url: The store's URL.
        thread_id: The thread.

    Raises:
        SessionError: The caller already holds this thread's lock (a nested turn).
    """
    key = (store_key(url), thread_id)
    if any(held.active and held.key == key for held in _held.get()):
        msg = (
            f"session {thread_id!r}: a run inside one of its turns cannot take a turn of"
            " the same session (it would wait for the turn it is part of): give the inner"
            " run a thread_id of its own, or thread_id None to run it without a session"
        )
        raise SessionError(msg)
    lock = await _acquire(key)
    try:
        held = _Held(key)
        token = _held.set((*_held.get(), held))
        try:
            yield
        finally:
            held.active = False
            with contextlib.suppress(ValueError):  # exited in another context: nothing to undo
                _held.reset(token)
    finally:
        _release(key, lock)
