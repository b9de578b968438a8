"""Run coroutines from synchronous Behave steps, on the real clock or on virtual time.

``run_virtual`` runs on a ``looptime`` event loop: the loop's clock (``loop.time()``, which
``asyncio.sleep``, ``asyncio.timeout`` and ``asyncio.wait_for`` read) jumps to the next timer
whenever nothing is ready, so a scripted model's 60 s ``hang`` loses to a 0.05 s timeout in
no real time, in the same order as on the real clock (ADR 0027).

Limits of virtual time, which decide which steps may use it:

* Work in a thread the loop does not know (a session store's connection thread) looks
  idle: a pending timer may fire before the thread answers. ``run_in_executor`` futures
  are known, and make the clock follow real time while they run; sync tools run that way
  (``tools/_worker.py``).
* Code that reads ``time.monotonic``/``time.perf_counter`` itself sees real time, not the
  loop's: the run's ``elapsed_s`` (``loop/driver.py``) does; the pruning pass, the main
  model's measured speed and the report's per-request and per-call seconds read the loop's.
* A blocking call in the loop's own thread (``time.sleep``) takes no virtual time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

import looptime

__all__ = ["VIRTUAL_LIMIT_S", "new_virtual_loop", "run", "run_virtual"]

T = TypeVar("T")


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on a fresh event loop and return its result."""
    return asyncio.run(coro)


def new_virtual_loop() -> asyncio.AbstractEventLoop:
    """A new event loop whose clock is virtual (``looptime``), starting at 0."""
    loop: asyncio.AbstractEventLoop = looptime.new_event_loop(start=0.0)
    return loop


VIRTUAL_LIMIT_S = 3600.0
"""Virtual seconds after which ``run_virtual`` gives up: an hour costs no real time."""


def run_virtual(coro: Coroutine[Any, Any, T], *, limit: float = VIRTUAL_LIMIT_S) -> T:
    """Run ``coro`` like ``run``, on a fresh event loop with virtual time.

    A run still going after ``limit`` virtual seconds fails: a ``hang`` that a broken
    timeout no longer ends then fails its scenario at once instead of hanging the suite.
    """

    async def bounded() -> T:
        try:
            async with asyncio.timeout(limit):
                return await coro
        except TimeoutError as exc:
            # Only our own limit is reworded: a timeout from inside the run propagates as is.
            if asyncio.get_running_loop().time() < limit:
                raise
            msg = f"the run had not ended after {limit:g} s of virtual time"
            raise AssertionError(msg) from exc

    with asyncio.Runner(loop_factory=new_virtual_loop) as runner:
        return runner.run(bounded())
