"""thread_lock (src/leanloop/sessions/locks.py): turns of one thread, one at a time, in order.

A turn waits for the turn of the same thread that runs in this process, whichever event
loop either runs on (ADR 0019), without blocking its own loop; the waiters go in the order
they asked. Nothing here waits on the clock to show something did not happen: each test
waits for the events it needs (a safety limit only stops a broken test from hanging).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import threading
import warnings
from collections.abc import Callable

import pytest

from leanloop.exceptions import SessionError
from leanloop.sessions import locks, thread_lock

URL = "sqlite:////nowhere/locks.db"  # thread_lock never opens the store
SAFETY_S = 30.0
"""The most a test waits for another thread: it fails there, it never shows a result."""


@pytest.fixture(autouse=True)
def _no_lock_left() -> object:
    """Every test ends with no lock left over, whatever it did."""
    yield
    assert locks._tables == {}, locks._tables


@pytest.fixture
def waiting(caplog: pytest.LogCaptureFixture) -> Callable[[], int]:
    """How many times a caller said it waits for the turn that runs in this process."""
    caplog.set_level(logging.DEBUG, logger="leanloop.sessions.locks")

    def count() -> int:
        return sum(
            1
            for record in list(caplog.records)
            if record.name == "leanloop.sessions.locks" and "waiting" in record.getMessage()
        )

    return count


def _in_thread(target: Callable[[], None]) -> threading.Thread:
    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    return worker


def test_turns_on_other_event_loops_wait_without_blocking_them_and_go_in_order(
    waiting: Callable[[], int],
) -> None:
    log: list[str] = []
    entered, release = threading.Event(), threading.Event()
    loop_ran: dict[str, threading.Event] = {"second": threading.Event(), "third": threading.Event()}

    async def first() -> None:
        async with thread_lock(URL, "t"):
            log.append("first in")
            entered.set()
            await asyncio.to_thread(release.wait, SAFETY_S)
            log.append("first out")

    async def later(name: str) -> None:
        async def turn() -> None:
            async with thread_lock(URL, "t"):
                log.append(f"{name} in")
                await asyncio.sleep(0)
                log.append(f"{name} out")

        task = asyncio.create_task(turn())
        await asyncio.sleep(0)  # the turn runs up to its first wait
        loop_ran[name].set()  # and this loop goes on running while the turn waits
        await task

    workers = [_in_thread(lambda: asyncio.run(first()))]
    assert entered.wait(SAFETY_S)
    for name in ("second", "third"):
        before = waiting()
        workers.append(_in_thread(lambda name=name: asyncio.run(later(name))))
        assert loop_ran[name].wait(SAFETY_S), f"{name}'s event loop was blocked"
        assert waiting() == before + 1, f"{name} did not wait for the turn: {log}"
    release.set()
    for worker in workers:
        worker.join(SAFETY_S)
    assert log == [
        "first in",
        "first out",
        "second in",
        "second out",
        "third in",
        "third out",
    ], log


async def test_one_loop_goes_in_order_and_other_threads_or_stores_do_not_wait() -> None:
    log: list[str] = []
    gate = asyncio.Event()

    async def hold(name: str, url: str, thread: str, *, wait: bool = False) -> None:
        async with thread_lock(url, thread):
            log.append(f"{name} in")
            if wait:
                await gate.wait()
            log.append(f"{name} out")

    first = asyncio.create_task(hold("a1", URL, "a", wait=True))
    await asyncio.sleep(0)
    queued = [asyncio.create_task(hold(f"a{n}", URL, "a")) for n in (2, 3)]
    # Another thread of the store, and the same thread of another store: no waiting.
    await hold("b", URL, "b")
    await hold("other store", "sqlite:////elsewhere/locks.db", "a")
    gate.set()
    await asyncio.gather(first, *queued)
    assert log == [
        "a1 in",
        "b in",
        "b out",
        "other store in",
        "other store out",
        "a1 out",
        "a2 in",
        "a2 out",
        "a3 in",
        "a3 out",
    ], log


async def test_a_cancelled_waiter_gives_up_its_place() -> None:
    log: list[str] = []
    gate = asyncio.Event()

    async def hold(name: str, *, wait: bool = False) -> None:
        async with thread_lock(URL, "t"):
            log.append(name)
            if wait:
                await gate.wait()

    holder = asyncio.create_task(hold("holder", wait=True))
    await asyncio.sleep(0)
    cancelled = asyncio.create_task(hold("cancelled"))
    after = asyncio.create_task(hold("after"))
    await asyncio.sleep(0)
    cancelled.cancel()
    with pytest.raises(asyncio.CancelledError):
        await cancelled
    gate.set()
    await asyncio.gather(holder, after)
    assert log == ["holder", "after"], log


async def test_a_waiter_cancelled_as_the_turn_is_handed_to_it_passes_the_turn_on() -> None:
    log: list[str] = []
    tasks: dict[str, asyncio.Task[None]] = {}

    async def hold(name: str) -> None:
        async with thread_lock(URL, "t"):
            log.append(name)
            if name == "holder":
                await asyncio.sleep(0)  # the others queue up meanwhile
        if name == "holder":
            # The turn was just handed to "next"; it is cancelled before it runs again.
            tasks["next"].cancel()

    tasks["holder"] = asyncio.create_task(hold("holder"))
    await asyncio.sleep(0)
    tasks["next"] = asyncio.create_task(hold("next"))
    tasks["last"] = asyncio.create_task(hold("last"))
    results = await asyncio.gather(*tasks.values(), return_exceptions=True)
    assert isinstance(results[1], asyncio.CancelledError), results
    assert log == ["holder", "last"], log


def test_a_waiter_whose_event_loop_was_closed_is_passed_over(waiting: Callable[[], int]) -> None:
    entered: list[str] = []

    async def take(name: str) -> None:
        async with thread_lock(URL, "t"):
            entered.append(name)

    holder_loop = asyncio.new_event_loop()
    holding = thread_lock(URL, "t")
    holder_loop.run_until_complete(holding.__aenter__())
    gone_loop = asyncio.new_event_loop()
    gone = gone_loop.create_task(take("gone"))
    for _ in range(1000):
        if waiting() or gone.done():
            break
        gone_loop.run_until_complete(asyncio.sleep(0))
    assert waiting() == 1, f"the second loop's turn did not wait: {entered}"
    # Closed with its task still waiting: nothing will ever run that task again.
    gone_loop.close()
    holder_loop.run_until_complete(holding.__aexit__(None, None, None))
    holder_loop.close()
    asyncio.run(take("next"))
    assert entered == ["next"], entered
    del gone
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Task was destroyed but it is pending"
        gc.collect()


async def test_a_run_inside_a_turn_that_asks_for_the_same_thread_is_refused_at_once() -> None:
    async with thread_lock(URL, "t"):
        with pytest.raises(SessionError, match="a run inside one of its turns"):
            async with thread_lock("sqlite:///nowhere/locks.db", "t"):
                pass
        async with thread_lock(URL, "another thread"):
            pass
