"""A session turn's storage cost: turn 1 beside LangGraph's SqliteSaver, and turns 10 to 1,000.

Issue 40: turn 1 of a session cost 1.41-1.53x LangGraph's ``SqliteSaver`` (a new
aiosqlite connection and thread for each of a turn's four transactions), and every turn
read back and decoded the whole thread. Acceptance: turn 1 at most 1.0x SqliteSaver, and
the per-turn time flat from turn 10 to turn 1,000.

One turn stores the same messages on both sides: a question, one step (an AI reply with a
tool call and the tool's result) and the answer.

* **leanloop**: what :func:`leanloop.agent.conversation.run_turn` asks of its store, on one
  store kept for the whole run (as ``shared_store`` keeps it): ``thread_lock``,
  ``start_turn`` (the turn begun and what is new read, one transaction), ``add_step``,
  ``finish_turn``, on one ``asyncio`` event loop.
* **SqliteSaver** / **AsyncSqliteSaver**: the checkpointer calls a LangChain v1
  ``create_agent`` run of the same turn makes (one ``get_tuple``, four ``put`` and four
  ``put_writes``), recorded once from a real run on a scripted model and replayed on a
  kept connection, without the graph's own work: storage against storage.

Turn 1 is a new thread each sample; leanloop is paired with each LangGraph side in a
series of its own, interleaved (the order alternates), ``--samples`` pairs: the medians,
and the median of the pairs' ratios. The per-turn table times leanloop's turn on three
threads at once, one at turn 10, one at 100, one at 1,000 (filled beforehand, loaded once
untimed), one turn of each in turn, ``--samples`` turns each; "cold load" is a new store
object's first ``load`` of the same thread (what every turn paid before issue 40). The
slope is the least-squares line through the levels' medians, in µs per 1,000 turns of
the thread, with a 95% bootstrap interval (each level's samples drawn again,
``RESAMPLES`` times): "within noise" when the interval holds 0.

Usage::

    python benchmarks/session_turns.py [--samples 60] [--turns 10,100,1000] [--dir FOLDER]

Needs ``langgraph-checkpoint-sqlite`` for the LangGraph columns (without it they are left
out). Every file is in a temporary folder (``--dir``: under that folder), WAL mode on both
sides, SQLite's default ``synchronous=FULL`` on both: on a disk, each commit's ``fsync``
is most of a turn; on ``/dev/shm`` what is left is the code's own cost. Exits 1 when
turn 1 is over 1.0x SqliteSaver, or when the per-turn time grows: a slope above noise
(its whole interval over 0) that adds more than 10% to the first level's turn by the
last level.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import gc
import itertools
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make ``benchmarks`` importable as ASV does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from leanloop.sessions import SessionStore, open_store, sqlite_url, thread_lock

TURN1_LIMIT = 1.0
GROWTH_LIMIT = 0.10
"""The most a slope above noise may add to the first level's turn by the last level."""
RESAMPLES = 2000
_WARMUP = 5
_threads = itertools.count()
"""Thread ids: each turn 1 is a new thread."""

Call = tuple[Any, ...]


def turn_messages(index: int) -> tuple[HumanMessage, list[BaseMessage], AIMessage]:
    """One turn's messages: the question, its one step, the answer."""
    call = {"name": "lookup", "args": {"key": f"k{index}"}, "id": f"call-{index}"}
    step: list[BaseMessage] = [
        AIMessage("", tool_calls=[call], id=f"reply-{index}"),
        ToolMessage(f"value of k{index}: " + "x" * 200, tool_call_id=f"call-{index}"),
    ]
    return HumanMessage(f"question {index}: what is k{index}?"), step, AIMessage(f"k{index} is x")


async def leanloop_turn(
    store: SessionStore, thread_id: str, messages: tuple[HumanMessage, list[BaseMessage], AIMessage]
) -> None:
    """One turn as ``run_turn`` stores it (the run itself left out)."""
    question, step, answer = messages
    async with thread_lock(store.url, thread_id):
        _, number = await store.start_turn(thread_id, question)
        await store.add_step(thread_id, number, 0, step)
        await store.finish_turn(thread_id, number, answer, status="done")


# -- LangGraph ----------------------------------------------------------------------------


def record_langgraph_turn() -> list[Call]:
    """The checkpointer calls of one ``create_agent`` turn (the same messages), recorded."""
    from langchain.agents import create_agent  # noqa: PLC0415 - only for the recording
    from langgraph.checkpoint.memory import InMemorySaver  # noqa: PLC0415

    from leanloop.testing import ScriptedChatModel  # noqa: PLC0415

    calls: list[Call] = []

    def plain(config: Any) -> dict[str, Any]:
        keep = ("thread_id", "checkpoint_ns", "checkpoint_id")
        return {"configurable": {k: v for k, v in config["configurable"].items() if k in keep}}

    class Recorder(InMemorySaver):
        def get_tuple(self, config: Any) -> Any:
            calls.append(("get_tuple", plain(config)))
            return super().get_tuple(config)

        def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
            calls.append(
                ("put", plain(config), copy.deepcopy(checkpoint), dict(metadata), new_versions)
            )
            return super().put(config, checkpoint, metadata, new_versions)

        def put_writes(self, config: Any, writes: Any, task_id: str, task_path: str = "") -> None:
            calls.append(("put_writes", plain(config), list(writes), task_id, task_path))
            super().put_writes(config, writes, task_id, task_path)

    question, step, answer = turn_messages(0)
    reply, result = step

    def lookup(key: str) -> str:
        """Look a key up."""
        return str(result.content)

    model = ScriptedChatModel(replies=[reply, answer])
    agent = create_agent(model, [lookup], checkpointer=Recorder())
    agent.invoke({"messages": [question]}, {"configurable": {"thread_id": "recorded"}})
    return calls


def _on_thread(call: Call, thread_id: str) -> Call:
    config = copy.copy(call[1])
    config["configurable"] = {**config["configurable"], "thread_id": thread_id}
    return (call[0], config, *call[2:])


def replay_sync(saver: Any, calls: list[Call], thread_id: str) -> None:
    """The recorded turn on ``saver`` (``SqliteSaver``), under another thread id."""
    for call in calls:
        name, config, *rest = _on_thread(call, thread_id)
        getattr(saver, name)(config, *rest)


async def replay_async(saver: Any, calls: list[Call], thread_id: str) -> None:
    """The recorded turn on ``saver`` (``AsyncSqliteSaver``), under another thread id."""
    for call in calls:
        name, config, *rest = _on_thread(call, thread_id)
        await getattr(saver, "a" + name)(config, *rest)


# -- measuring ----------------------------------------------------------------------------


async def _timed(action: Callable[[], Awaitable[Any] | None]) -> float:
    gc.disable()
    try:
        start = time.perf_counter()
        pending = action()
        if pending is not None:
            await pending
        return time.perf_counter() - start
    finally:
        gc.enable()


async def measure_turn1(folder: Path, samples: int) -> dict[str, tuple[list[float], list[float]]]:
    """Seconds of turn 1 on a new thread: per LangGraph side, leanloop's and its own,
    paired and interleaved."""
    store = open_store(sqlite_url(folder / "leanloop.db"))
    # Each side's turn is made untimed (its messages built), then timed.
    sides: dict[str, Callable[[int], Callable[[], Awaitable[None] | None]]] = {
        "leanloop": lambda i: partial(leanloop_turn, store, f"new-{i}", turn_messages(i)),
    }
    closers: list[Callable[[], Awaitable[None] | None]] = [store.close]
    try:
        import sqlite3  # noqa: PLC0415

        import aiosqlite  # noqa: PLC0415
        from langgraph.checkpoint.sqlite import SqliteSaver  # noqa: PLC0415
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver  # noqa: PLC0415
    except ImportError:
        print("(langgraph-checkpoint-sqlite is not installed: LangGraph left out)")
    else:
        calls = record_langgraph_turn()
        conn = sqlite3.connect(folder / "langgraph.db", check_same_thread=False)
        saver = SqliteSaver(conn)
        saver.setup()
        aconn = await aiosqlite.connect(folder / "langgraph-async.db")
        asaver = AsyncSqliteSaver(aconn)
        await asaver.setup()
        sides["SqliteSaver"] = lambda i: partial(replay_sync, saver, calls, f"new-{i}")
        sides["AsyncSqliteSaver"] = lambda i: partial(replay_async, asaver, calls, f"new-{i}")
        closers += [conn.close, aconn.close]
    # One paired series per LangGraph side: each sample times a leanloop turn and the
    # other side's turn back to back, in alternating order. (All three in one series
    # would time leanloop after AsyncSqliteSaver's waits half the time: code that runs
    # after the process waited runs slower, on caches others have used meanwhile.)
    times: dict[str, tuple[list[float], list[float]]] = {}
    try:
        for name in [side for side in sides if side != "leanloop"]:
            ours, theirs = times[name] = ([], [])
            for index in range(-_WARMUP, samples):
                pair = [("leanloop", ours), (name, theirs)]
                for side, into in pair if index % 2 == 0 else pair[::-1]:
                    seconds = await _timed(sides[side](next(_threads)))
                    if index >= 0:
                        into.append(seconds)
    finally:
        for close in closers:
            pending = close()
            if pending is not None:
                await pending
    return times


async def measure_levels(
    folder: Path, levels: list[int], samples: int
) -> tuple[dict[int, list[float]], dict[int, float]]:
    """Seconds of one leanloop turn at each level (paired, interleaved), and of a cold
    load (a new store object) of the thread at that level."""
    url = sqlite_url(folder / "levels.db")
    store = open_store(url)
    try:
        for level in levels:
            # Filled through another store object: the measured store reads it once.
            filler = open_store(url)
            for index in range(1, level):
                await leanloop_turn(filler, f"level-{level}", turn_messages(index))
            await filler.close()
            await store.load(f"level-{level}")
        times: dict[int, list[float]] = {level: [] for level in levels}
        for index in range(samples):
            order = levels if index % 2 == 0 else levels[::-1]
            for level in order:
                turn = partial(leanloop_turn, store, f"level-{level}", turn_messages(level + index))
                times[level].append(await _timed(turn))
        cold: dict[int, float] = {}
        for level in levels:
            fresh = open_store(url)
            cold[level] = await _timed(partial(fresh.load, f"level-{level}"))
            await fresh.close()
    finally:
        await store.close()
    return times, cold


def _line(levels: list[int], medians: list[float]) -> float:
    """The least-squares slope of ``medians`` over ``levels`` (seconds per turn)."""
    mean_x = statistics.fmean(levels)
    mean_y = statistics.fmean(medians)
    spread = sum((x - mean_x) ** 2 for x in levels)
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(levels, medians, strict=True)) / spread


def turn_slope(
    times: dict[int, list[float]], resamples: int = RESAMPLES, seed: int = 40
) -> tuple[float, float, float]:
    """The per-turn time's slope over the thread's length, seconds per turn: the line
    through each level's median, and the 2.5th and 97.5th percentiles of the same line
    through medians of each level's samples drawn again with replacement."""
    levels = sorted(times)
    slope = _line(levels, [statistics.median(times[level]) for level in levels])
    draw = random.Random(seed)  # a bootstrap's draws, not a secret
    drawn = sorted(
        _line(
            levels,
            [
                statistics.median(draw.choices(times[level], k=len(times[level])))
                for level in levels
            ],
        )
        for _ in range(resamples)
    )
    return slope, drawn[int(0.025 * resamples)], drawn[int(0.975 * resamples) - 1]


def _us_per_1000(seconds_per_turn: float) -> str:
    return f"{seconds_per_turn * 1e9:+.0f} µs"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=60)
    parser.add_argument("--turns", default="10,100,1000", help="the per-turn levels")
    parser.add_argument(
        "--dir", default=None, help="where the files go (default: the system's temporary folder)"
    )
    args = parser.parse_args(argv)
    levels = sorted({int(part) for part in args.turns.split(",")})
    if len(levels) < 2 or args.samples < 2:
        parser.error("--turns needs two levels or more, --samples 2 or more (for the slope)")
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"Python {platform.python_version()} · {os.cpu_count()} CPUs · load average {load}"
        f" at the start · {args.samples} samples · files in {args.dir or tempfile.gettempdir()}"
    )
    with tempfile.TemporaryDirectory(prefix="session-turns-", dir=args.dir) as tmp:
        turn1 = asyncio.run(measure_turn1(Path(tmp), args.samples))
        levels_times, cold = asyncio.run(measure_levels(Path(tmp), levels, args.samples))
    print("\n| turn 1 (new thread) | leanloop median | its median | leanloop ÷ it (paired) |")
    print("|---|---:|---:|---:|")
    ratio = 0.0
    for name, (ours, theirs) in turn1.items():
        paired = statistics.median(a / b for a, b in zip(ours, theirs, strict=True))
        if name == "SqliteSaver":
            ratio = paired
        print(
            f"| {name} | {_ms(statistics.median(ours))} | {_ms(statistics.median(theirs))}"
            f" | {paired:.2f}x |"
        )
    print(
        "\n| leanloop turn at | median | best | quartiles | ÷ first level"
        " | cold load of the thread |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    first = statistics.median(levels_times[levels[0]])
    for level in levels:
        median = statistics.median(levels_times[level])
        low, _, high = statistics.quantiles(levels_times[level], n=4)
        print(
            f"| turn {level:,} | {_ms(median)} | {_ms(min(levels_times[level]))}"
            f" | {_ms(low)} – {_ms(high)} | {median / first:.2f}x | {_ms(cold[level])} |"
        )
    slope, slope_low, slope_high = turn_slope(levels_times)
    growth = slope * (levels[-1] - levels[0]) / first
    within = slope_low <= 0 <= slope_high
    print(
        f"\nslope: {_us_per_1000(slope)} per 1,000 turns (95% interval"
        f" {_us_per_1000(slope_low)} to {_us_per_1000(slope_high)}):"
        f" {'within noise' if within else 'above noise' if slope_low > 0 else 'below noise'};"
        f" {growth:+.1%} of turn {levels[0]:,}'s median by turn {levels[-1]:,}"
    )
    grows = slope_low > 0 and growth > GROWTH_LIMIT
    failed = ("SqliteSaver" in turn1 and ratio > TURN1_LIMIT) or grows
    print(
        f"turn 1 ÷ SqliteSaver: {ratio:.2f}x (limit {TURN1_LIMIT}); turn {levels[-1]:,}"
        f" ÷ turn {levels[0]:,}: {statistics.median(levels_times[levels[-1]]) / first:.2f}x;"
        f" growth above noise: {'yes' if grows else 'no'} (limit {GROWTH_LIMIT:.0%})"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
