"""ToolRegistry and async tools that block the event loop (issue 28).

A blocking call in an ``async def`` tool holds the loop, so the call's timer cannot fire
at its limit. The registry cannot stop such a tool, but it must not pretend it did: the
result and the notes say how long the call really ran and that it blocked the loop. The
tools here block for 0.3 s against limits far smaller; nothing waits for a timer.

These tests keep the real clock (ADR 0027): a blocking call holds the loop thread, and a
virtual clock only moves between the loop's iterations, so on it the block would take no
time at all and no limit could be passed.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

from langchain_core.tools import BaseTool

from leanloop.tools.registry import ToolRegistry

BLOCK_S = 0.3


class Blocking(BaseTool):
    """An async tool that makes a blocking call, then (optionally) goes on awaiting."""

    name: str = "block"
    description: str = "Blocks the event loop."
    then_await: bool = True

    def _run(self, label: str) -> str:
        raise NotImplementedError

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> str:
        time.sleep(BLOCK_S)  # noqa: ASYNC251 - the defect under test
        if self.then_await:
            # Work after the block: a timer of its own, due after the call's (already due on
            # the real clock after the block), so the call's timer fires first. Awaiting
            # only ready work would finish the call before the loop looks at its timers.
            await asyncio.sleep(0.01)
        return f"done {input['label']}"


class Waiting(BaseTool):
    """A well-behaved async tool that waits (without blocking) for longer than its limit."""

    name: str = "wait"
    description: str = "Waits."

    def _run(self, label: str) -> str:
        raise NotImplementedError

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> str:
        await asyncio.Event().wait()  # nobody sets it: only the call's time limit ends it
        return "never"


def _seconds(pattern: str, text: str) -> float:
    found = re.search(pattern, text)
    assert found is not None, text
    return float(found[1])


async def test_a_tool_that_blocks_past_its_limit_times_out_with_its_real_duration() -> None:
    registry = ToolRegistry([Blocking()])
    outcome = await registry.run("block", {"label": "x"}, time_limit=0.02)
    assert outcome.timed_out and not outcome.ok and outcome.blocked_loop
    assert re.fullmatch(
        r"error: block timed out after [\d.]+ s \(its limit is 0.02 s\): it blocked the event"
        r" loop, so it could not be stopped in time; not retried",
        outcome.text,
    ), outcome.text
    assert _seconds(r"after ([\d.]+) s", outcome.text) >= BLOCK_S
    assert outcome.ran_s is not None and outcome.ran_s >= BLOCK_S
    note = next(n for n in outcome.notes if n.startswith("blocked the event loop: "))
    assert re.match(
        r"blocked the event loop: ran [\d.]+ s against its 0.02 s time limit, stuck in ainvoke"
        r" \(test_blocking_tools.py:\d+\); ",
        note,
    ), note


async def test_a_tool_that_blocks_past_its_limit_and_returns_keeps_its_result() -> None:
    registry = ToolRegistry([Blocking(then_await=False)])
    outcome = await registry.run("block", {"label": "x"}, time_limit=0.02)
    assert outcome.ok and not outcome.timed_out and outcome.text == "done x"
    assert outcome.blocked_loop and outcome.ran_s is not None and outcome.ran_s >= BLOCK_S
    assert any(n.startswith("blocked the event loop: ran ") for n in outcome.notes), outcome.notes


async def test_a_call_held_up_by_another_tool_says_so_and_is_not_blamed() -> None:
    registry = ToolRegistry([Blocking(), Waiting()])

    async def wait_then_block() -> Any:
        waiting = asyncio.ensure_future(registry.run("wait", {"label": "w"}, time_limit=0.02))
        await asyncio.sleep(0)  # the waiting call starts (and awaits) first
        await registry.run("block", {"label": "b"}, time_limit=10)
        return await waiting

    # Bounded: a time limit no longer honoured fails the test instead of hanging it.
    async with asyncio.timeout(10):
        outcome = await wait_then_block()
    assert outcome.timed_out and not outcome.blocked_loop
    assert re.fullmatch(
        r"error: wait timed out after [\d.]+ s \(its limit is 0.02 s; the event loop was"
        r" blocked by other work meanwhile\); not retried",
        outcome.text,
    ), outcome.text
    assert _seconds(r"after ([\d.]+) s", outcome.text) >= BLOCK_S - 0.05


async def test_a_tool_that_does_not_block_is_reported_as_before() -> None:
    registry = ToolRegistry([Blocking()])
    outcome = await registry.run("block", {"label": "x"}, time_limit=None)
    assert outcome.ok and outcome.text == "done x"
    assert not outcome.blocked_loop and outcome.ran_s is None and not outcome.notes
