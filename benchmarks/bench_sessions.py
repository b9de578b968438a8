"""A session turn's storage: turn 1, the turn at 10 / 100 / 1,000 turns, and issue 40's ratios.

The turn is ``benchmarks.session_turns.leanloop_turn``: what ``run_turn`` asks of its store
(``thread_lock``, ``start_turn``, one ``add_step``, ``finish_turn``) on a store kept open,
as ``shared_store`` keeps it. Files are in a temporary folder; each commit's ``fsync`` is
part of the time, as it is for a user (``python benchmarks/session_turns.py --dir
/dev/shm`` shows the code's own cost).

The figures issue 40 accepts on are the ``track_`` ones: turn 1 ÷ LangGraph's
``SqliteSaver`` (paired, interleaved; needs ``langgraph-checkpoint-sqlite``, skipped
without it) at most 1.0, and the turn at 1,000 turns ÷ the turn at 10 flat (its slope over
turns 10, 100 and 1,000 near 0).
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

if __name__ == "__main__":  # run as a script: make ``benchmarks`` importable as ASV does
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.session_turns import (
    leanloop_turn,
    measure_levels,
    measure_turn1,
    turn_messages,
    turn_slope,
)
from leanloop.sessions import SessionStore, open_store, sqlite_url

_threads = itertools.count()


class _OnOneLoop:
    """A store kept open on one event loop, for the benchmark's life."""

    loop: asyncio.AbstractEventLoop
    store: SessionStore
    folder: Path

    def _open(self, folder: Path) -> None:
        self.folder = folder
        self.loop = asyncio.new_event_loop()
        self.store = open_store(sqlite_url(folder / "sessions.db"))

    def teardown(self, *_: Any) -> None:
        self.loop.run_until_complete(self.store.close())
        self.loop.close()


class SessionTurn1(_OnOneLoop):
    """Turn 1 of a new thread (each timed call a thread of its own)."""

    timeout = 120

    def setup(self) -> None:
        self._open(Path(tempfile.mkdtemp(prefix="bench-sessions-")))
        # The store opened (file, tables, connection) before the first timed call.
        self.loop.run_until_complete(self.store.load("warm"))

    def teardown(self, *_: Any) -> None:
        super().teardown()
        shutil.rmtree(self.folder, ignore_errors=True)

    def time_turn_1(self) -> None:
        index = next(_threads)
        turn = leanloop_turn(self.store, f"new-{index}", turn_messages(index))
        self.loop.run_until_complete(turn)


class SessionTurnAt(_OnOneLoop):
    """One turn of a thread that holds 10, 100 or 1,000 turns already (loaded once)."""

    params = ([10, 100, 1_000],)
    param_names = ("turn",)
    timeout = 600

    def setup_cache(self) -> str:
        """One file with a thread filled to each level (made once, copied per sample)."""
        folder = Path(tempfile.mkdtemp(prefix="bench-sessions-cache-"))

        async def fill() -> None:
            store = open_store(sqlite_url(folder / "sessions.db"))
            try:
                for level in self.params[0]:
                    for index in range(1, level):
                        await leanloop_turn(store, f"level-{level}", turn_messages(index))
            finally:
                await store.close()

        asyncio.run(fill())
        return str(folder / "sessions.db")

    def setup(self, filled: str, turn: int) -> None:
        folder = Path(tempfile.mkdtemp(prefix="bench-sessions-"))
        shutil.copy(filled, folder / "sessions.db")
        self._open(folder)
        self.thread = f"level-{turn}"
        self.level = turn
        self.loop.run_until_complete(self.store.load(self.thread))  # read once, untimed

    def teardown(self, filled: str, turn: int) -> None:
        super().teardown()
        shutil.rmtree(self.folder, ignore_errors=True)

    def time_turn(self, filled: str, turn: int) -> None:
        self.level += 1
        work = leanloop_turn(self.store, self.thread, turn_messages(self.level))
        self.loop.run_until_complete(work)


class SessionRatios:
    """Issue 40's acceptance figures, each from one paired, interleaved measurement."""

    timeout = 600

    def track_turn1_vs_sqlitesaver(self) -> float:
        folder = Path(tempfile.mkdtemp(prefix="bench-sessions-"))
        try:
            pairs = asyncio.run(measure_turn1(folder, 30))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        if "SqliteSaver" not in pairs:
            raise NotImplementedError("langgraph-checkpoint-sqlite is not installed")
        ours, theirs = pairs["SqliteSaver"]
        return statistics.median(a / b for a, b in zip(ours, theirs, strict=True))

    track_turn1_vs_sqlitesaver.unit = "ratio"  # type: ignore[attr-defined]

    def track_turn_1000_vs_10(self) -> float:
        folder = Path(tempfile.mkdtemp(prefix="bench-sessions-"))
        try:
            times, _ = asyncio.run(measure_levels(folder, [10, 1_000], 30))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return statistics.median(times[1_000]) / statistics.median(times[10])

    track_turn_1000_vs_10.unit = "ratio"  # type: ignore[attr-defined]

    def track_turn_slope(self) -> float:
        """The turn's slope over turns 10, 100 and 1,000, µs per 1,000 turns (0: flat;
        ``session_turns.py`` prints its bootstrap interval)."""
        folder = Path(tempfile.mkdtemp(prefix="bench-sessions-"))
        try:
            times, _ = asyncio.run(measure_levels(folder, [10, 100, 1_000], 30))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        slope, _, _ = turn_slope(times, resamples=1)
        return slope * 1e9

    track_turn_slope.unit = "µs per 1,000 turns"  # type: ignore[attr-defined]
