"""Notice a tool call that its time limit cannot stop because the event loop is held.

A tool's time limit is a timer on the event loop, and a timer fires only when the loop
gets control back. An ``async def`` tool that makes a blocking call (``time.sleep(20)``,
a blocking HTTP client, heavy computation) holds the loop: its timer fires when the call
gives the loop back, 20 s later, and the call would be reported as "timed out after 3 s".
Nothing on the loop can preempt it. Running every async tool in a thread of its own
would, but it changes where well-behaved tools run (their loop-bound clients, locks and
context variables), so the limit is watched from a thread instead, and the registry
reports what really happened (:mod:`leanloop.tools.registry`).

One daemon thread (``leanloop-watchdog``, started on first use) keeps the deadline of
every call made with a limit. When a deadline passes (plus a little grace for an ordinary
late timer) and the call has not settled, the event loop's thread is held: the watchdog
looks at what that thread is running (:func:`sys._current_frames`). If the stack passes
through the tool's own code, the tool blocked the loop; otherwise something else did.
When the call settles, :meth:`Watch.settle` says how long it really ran and what held it.

The watchdog only looks; it never interrupts the loop's thread. Looking costs nothing
while the loop is free: a call settled before its deadline is dropped unseen.
"""

from __future__ import annotations

import asyncio
import asyncio.base_events
import heapq
import inspect
import itertools
import logging
import os
import selectors
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

__all__ = ["Overrun", "Watch", "tool_codes", "watch"]

_log = logging.getLogger(__name__)

_GRACE_MIN_S = 0.02
"""A timer may fire this much late on a busy machine without the loop being held …"""
_GRACE_MAX_S = 0.5
"""… and at most this much (a tenth of the limit in between)."""
_LOOP_INTERNALS = (
    os.path.dirname(inspect.getfile(asyncio)) + os.sep,
    inspect.getfile(selectors),
    inspect.getfile(threading),
)
"""Files of the event loop's own machinery, never what holds it."""
_RUN_ONCE = asyncio.base_events.BaseEventLoop._run_once.__code__  # type: ignore[attr-defined]
"""One turn of the loop: what runs above it on the stack is a callback it runs."""


@dataclass(frozen=True, slots=True)
class Overrun:
    """A call that ran past its time limit because the event loop was held.

    Attributes:
        seconds: How long the call really ran (until it settled).
        limit: Its time limit in seconds.
        by_tool: Whether the tool's own code held the loop (it blocked the loop); else
            something else running on the loop held it while the call waited.
        where: What held the loop: ``name (file.py:12)`` of the innermost Python frame.
    """

    seconds: float
    limit: float
    by_tool: bool
    where: str


class Watch:
    """One call's deadline, as the watchdog sees it; settle it when the call ends."""

    __slots__ = ("_held", "_lock", "_settled", "codes", "deadline", "limit", "started", "thread")

    def __init__(self, limit: float, codes: frozenset[CodeType]) -> None:
        self.limit = limit
        self.codes = codes
        self.started = time.monotonic()
        self.deadline = self.started + limit + min(_GRACE_MAX_S, max(_GRACE_MIN_S, limit / 10))
        self.thread = threading.get_ident()
        self._lock = threading.Lock()
        self._settled = False
        self._held: tuple[bool, str] | None = None

    def settle(self) -> Overrun | None:
        """End the watch: how the call overran, or ``None`` when the loop was never held."""
        with self._lock:
            self._settled = True
            held = self._held
        if held is None:
            return None
        return Overrun(time.monotonic() - self.started, self.limit, *held)

    def _look(self) -> None:
        """At the deadline: if the call is still running, see what holds the loop."""
        current_frames = getattr(sys, "_current_frames", None)  # CPython's
        if current_frames is None:
            return
        with self._lock:
            if self._settled:
                return
            # Under the lock: the loop thread cannot settle (and move on) meanwhile.
            stack = list(_frames(current_frames().get(self.thread)))
            held = _holder(stack)
            if held is not None:
                self._held = (any(f.f_code in self.codes for f in stack), held)


def watch(limit: float, codes: frozenset[CodeType]) -> Watch:
    """Watch a call starting now on this thread's event loop, with ``limit`` seconds.

    Args:
        limit: The call's time limit.
        codes: The tool's own code (see :func:`tool_codes`), to tell whether the tool
            itself holds the loop.
    """
    started = Watch(limit, codes)
    _watchdog().add(started)
    return started


def tool_codes(tool: Any) -> frozenset[CodeType]:
    """The code objects that are the tool's own: its function or coroutine, its methods.

    A LangChain tool runs its body through LangChain's generic code; what tells one tool
    from another on a stack is the user's function (``StructuredTool.coroutine`` and
    ``func``) or the methods a ``BaseTool`` subclass defines outside LangChain.
    """
    found: set[CodeType] = set()
    for name in ("coroutine", "func"):
        code = _code_of(getattr(tool, name, None))
        if code is not None:
            found.add(code)
    for name in ("ainvoke", "arun", "_arun", "invoke", "run", "_run", "__call__"):
        method = getattr(type(tool), name, None)
        home = str(getattr(method, "__module__", "") or "")
        code = _code_of(method)
        if code is not None and not home.startswith(("langchain_core.", "pydantic.")):
            found.add(code)
    return frozenset(found)


def _code_of(function: Any) -> CodeType | None:
    if function is None:
        return None
    try:
        function = inspect.unwrap(function)
    except ValueError:  # a cycle of __wrapped__
        return None
    function = getattr(function, "func", function)  # functools.partial
    function = getattr(function, "__func__", function)  # a bound method
    code = getattr(function, "__code__", None)
    if code is None and not inspect.isroutine(function) and callable(function):
        code = getattr(type(function).__call__, "__code__", None)  # a callable object
    return code if isinstance(code, CodeType) else None


def _frames(frame: FrameType | None) -> Iterator[FrameType]:
    """``frame`` and its callers, innermost first."""
    while frame is not None:
        yield frame
        frame = frame.f_back


def _holder(stack: list[FrameType]) -> str | None:
    """``name (file.py:12)`` of the innermost frame that is not the loop's own machinery.

    ``None`` when the loop's turn is reached first: the thread runs only the loop itself
    (waiting for events, or about to run the due timer), so nothing holds it; the code
    that started the loop, further out, is no holder either.
    """
    for frame in stack:
        code = frame.f_code
        if code is _RUN_ONCE:
            return None
        if not code.co_filename.startswith(_LOOP_INTERNALS):
            return f"{code.co_name} ({Path(code.co_filename).name}:{frame.f_lineno})"
    return None


_COMPACT_MIN = 64
"""Watches the heap holds before settled ones are dropped (then twice the live ones)."""


class _Watchdog:
    """The thread that looks at each call's loop when the call's deadline passes."""

    def __init__(self) -> None:
        self._wake = threading.Condition(threading.Lock())
        self._due: list[tuple[float, int, Watch]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None
        self._compact_at = _COMPACT_MIN

    def add(self, watched: Watch) -> None:
        with self._wake:
            if len(self._due) >= self._compact_at:
                self._compact()
            # The thread sleeps until the earliest deadline: it is woken only when this
            # one comes first, not on every call (calls with one limit come in order).
            first = not self._due or watched.deadline < self._due[0][0]
            heapq.heappush(self._due, (watched.deadline, next(self._order), watched))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._serve, name="leanloop-watchdog", daemon=True
                )
                self._thread.start()
            elif first:
                self._wake.notify()

    def _compact(self) -> None:
        """Drop the settled calls (under the lock): a call that ended is kept only until
        the heap doubles, not until its deadline (60 s of every finished call's watch
        otherwise, measured as RSS creeping by about 355 bytes a call)."""
        # `_settled` is read without the watch's lock: a call settling meanwhile is
        # dropped at the next compaction instead.
        self._due = [entry for entry in self._due if not entry[2]._settled]
        heapq.heapify(self._due)
        self._compact_at = max(_COMPACT_MIN, 2 * len(self._due))

    def _serve(self) -> None:
        while True:
            with self._wake:
                while not self._due or self._due[0][0] > time.monotonic():
                    wait = self._due[0][0] - time.monotonic() if self._due else None
                    self._wake.wait(wait)
                _, _, watched = heapq.heappop(self._due)
            try:
                watched._look()
            except Exception:  # a look that fails leaves that call unjudged, never the thread
                _log.debug("the watchdog could not look at a call", exc_info=True)


_instance: _Watchdog | None = None
_instance_lock = threading.Lock()


def _watchdog() -> _Watchdog:
    global _instance  # noqa: PLW0603 - one watchdog per process, made on first use
    with _instance_lock:
        if _instance is None:
            _instance = _Watchdog()
        return _instance


def _forget_after_fork() -> None:
    # A child has none of the parent's threads, and its locks may be held by them.
    global _instance, _instance_lock
    _instance, _instance_lock = None, threading.Lock()


_register: Callable[..., None] | None = getattr(os, "register_at_fork", None)
if _register is not None:
    _register(after_in_child=_forget_after_fork)
