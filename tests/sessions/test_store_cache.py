"""A store's kept connection and kept sessions (src/leanloop/sessions/sql.py, sqlite.py).

A SQLite store keeps one connection, used by one thread of its own, for every event loop
of the process; it keeps each thread's decoded session and reads only what is new on the
next load (issue 40). These tests show that what is kept never hides what another store
object, another connection or another process wrote, and that closing (or idling) lets
the file go.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from leanloop.sessions import Turn, open_store, shared_store, sqlite_url
from leanloop.sessions import sql as sql_module
from leanloop.sessions import sqlite as sqlite_module
from leanloop.sessions.sqlite import SqliteStore


def _step(turn: int, step: int) -> list[BaseMessage]:
    call = {"name": "lookup", "args": {"key": f"{turn}.{step}"}, "id": f"c{step}"}
    return [
        AIMessage(f"turn {turn} step {step}", tool_calls=[call], id=f"r{turn}-{step}"),
        ToolMessage(f"result {turn}.{step}", tool_call_id=f"c{step}", id=f"t{turn}-{step}"),
    ]


async def _turn(store: Any, thread: str, question: str, steps: int = 2) -> int:
    number: int = await store.begin_turn(thread, HumanMessage(question))
    for step in range(steps):
        await store.add_step(thread, number, step, _step(number, step))
    await store.finish_turn(thread, number, AIMessage(f"answer {number}"), status="done")
    return number


@pytest.fixture
def url(tmp_path: Path) -> str:
    return sqlite_url(tmp_path / "sessions.db")


@pytest.fixture
def store(url: str) -> Iterator[SqliteStore]:
    made = open_store(url)
    assert isinstance(made, SqliteStore)
    yield made
    asyncio.run(made.close())


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every step row the stores decode (its text), in order."""
    seen: list[str] = []
    real = sql_module.load_messages  # type: ignore[attr-defined] # the name sql.py calls

    def counting(text: str) -> list[BaseMessage]:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(sql_module, "load_messages", counting)
    return seen


# -- kept sessions ----------------------------------------------------------------------


def test_a_load_reads_only_the_new_turns_and_shares_the_finished_ones(
    store: SqliteStore, decoded: list[str]
) -> None:
    async def main() -> None:
        for n in range(3):
            await _turn(store, "t1", f"question {n + 1}")
        first = await store.load("t1")
        assert len(decoded) == 6  # 3 turns x 2 steps, each decoded once
        decoded.clear()
        again = await store.load("t1")
        assert decoded == []  # a done last turn stays done: nothing to read again
        assert all(a is b for a, b in zip(first.turns, again.turns, strict=True))
        assert again.turns is not first.turns  # each load has lists of its own
        await _turn(store, "t1", "question 4")
        later = await store.load("t1")
        assert len(decoded) == 2  # the new turn's two steps only
        assert [t.number for t in later.turns] == [1, 2, 3, 4]
        assert all(a is b for a, b in zip(first.turns, later.turns[:3], strict=False))
        assert later.turns[3].question.text == "question 4"
        assert later.turns[3].steps[1][1][0].text == "turn 4 step 1"

    asyncio.run(main())


def test_a_running_or_failed_last_turn_is_read_again_with_its_new_steps(
    store: SqliteStore,
) -> None:
    async def main() -> None:
        number = await store.begin_turn("t1", HumanMessage("q"))
        await store.add_step("t1", number, 0, _step(1, 0))
        running = await store.load("t1")
        assert running.turns[0].status == "running"
        assert running.turns[0].last_step == 0
        await store.add_step("t1", number, 1, _step(1, 1))
        await store.finish_turn("t1", number, None, status="failed")
        failed = await store.load("t1")
        assert failed.turns[0].status == "failed"
        assert failed.turns[0].last_step == 1
        reopened = await store.reopen_turn("t1")
        await store.add_step("t1", reopened.number, 2, _step(1, 2))
        await store.finish_turn("t1", number, AIMessage("done now"), status="done")
        done = await store.load("t1")
        assert done.turns[0].status == "done"
        assert [step for step, _ in done.turns[0].steps] == [0, 1, 2]
        assert done.turns[0].answer is not None
        assert done.turns[0].answer.text == "done now"

    asyncio.run(main())


def test_notes_come_back_once_each_in_order(store: SqliteStore) -> None:
    async def main() -> None:
        number = await _turn(store, "t1", "q1")
        await store.add_note("t1", number, "first")
        assert (await store.load("t1")).notes == ["first"]
        await store.add_note("t1", number, "second")
        await store.add_note("t1", number, "third")
        assert (await store.load("t1")).notes == ["first", "second", "third"]
        assert (await store.load("t1")).notes == ["first", "second", "third"]

    asyncio.run(main())


def test_what_another_store_object_wrote_is_seen(store: SqliteStore, url: str) -> None:
    async def main() -> None:
        await _turn(store, "t1", "mine")
        assert len((await store.load("t1")).turns) == 1
        other = open_store(url)
        try:
            await _turn(other, "t1", "theirs")
            await other.add_note("t1", 2, "their note")
        finally:
            await other.close()
        session = await store.load("t1")
        assert [t.question.text for t in session.turns] == ["mine", "theirs"]
        assert session.notes == ["their note"]

    asyncio.run(main())


def _shape(turns: list[Turn]) -> list[tuple[Any, ...]]:
    """What a session's turns hold, to compare two loads of one thread."""
    return [
        (
            t.number,
            t.status,
            t.question.text,
            t.answer.text if t.answer is not None else None,
            [(step, [m.text for m in messages]) for step, messages in t.steps],
        )
        for t in turns
    ]


def test_two_open_stores_on_one_file_each_read_only_what_the_other_wrote(
    store: SqliteStore, url: str, decoded: list[str]
) -> None:
    """Two store objects, both kept open with their kept sessions, take turns writing
    one thread; each load reads only the rows the other wrote since, and matches what a
    new store object reads whole."""

    async def whole(thread: str) -> list[tuple[Any, ...]]:
        fresh = open_store(url)
        try:
            return _shape((await fresh.load(thread)).turns)
        finally:
            await fresh.close()

    async def main() -> None:
        other = open_store(url)
        try:
            await _turn(store, "t1", "mine 1")
            await store.load("t1")  # kept from here on
            assert [t.number for t in (await other.load("t1")).turns] == [1]
            await _turn(other, "t1", "theirs 2")
            decoded.clear()
            mine = await store.load("t1")
            assert len(decoded) == 2  # turn 2's two steps; turn 1 is kept
            assert _shape(mine.turns) == await whole("t1")
            # A turn left running by one store, then gaining a step and failing: the
            # other sees each change (its last kept turn is read again).
            number = await store.begin_turn("t1", HumanMessage("mine 3"))
            await store.add_step("t1", number, 0, _step(number, 0))
            running = (await other.load("t1")).turns[-1]
            assert (running.status, running.last_step) == ("running", 0)
            await store.add_step("t1", number, 1, _step(number, 1))
            await store.finish_turn("t1", number, None, status="failed")
            failed = (await other.load("t1")).turns[-1]
            assert (failed.status, failed.last_step) == ("failed", 1)
            # The other store resumes it and finishes it; the first sees it done.
            await other.reopen_turn("t1")
            await other.add_step("t1", number, 2, _step(number, 2))
            await other.add_note("t1", number, "their note")
            await other.finish_turn("t1", number, AIMessage("theirs now"), status="done")
            decoded.clear()
            mine = await store.load("t1")
            assert len(decoded) == 3  # turn 3 read again (the only one that changed)
            assert mine.notes == ["their note"]
            assert _shape(mine.turns) == await whole("t1")
            assert _shape((await other.load("t1")).turns) == await whole("t1")
            expected = await whole("t1")
            decoded.clear()
            assert _shape((await store.load("t1")).turns) == expected
            assert decoded == []  # nothing new since its last load
        finally:
            await other.close()

    asyncio.run(main())


def test_what_another_process_wrote_is_seen(store: SqliteStore, url: str) -> None:
    asyncio.run(_turn(store, "t1", "mine"))
    assert len(asyncio.run(store.load("t1")).turns) == 1
    child = textwrap.dedent(
        f"""
        import asyncio
        from langchain_core.messages import AIMessage, HumanMessage
        from leanloop.sessions import open_store

        async def main():
            store = open_store({url!r})
            number = await store.begin_turn("t1", HumanMessage("from the child"))
            await store.add_step("t1", number, 0, [AIMessage("child step")])
            await store.finish_turn("t1", number, AIMessage("child answer"), status="done")
            await store.close()

        asyncio.run(main())
        """
    )
    subprocess.run([sys.executable, "-c", child], check=True, timeout=120)
    session = asyncio.run(store.load("t1"))
    assert [t.question.text for t in session.turns] == ["mine", "from the child"]
    assert session.turns[1].steps[0][1][0].text == "child step"


def test_a_change_to_the_last_turn_behind_the_stores_back_is_seen(
    store: SqliteStore,
) -> None:
    async def main() -> None:
        number = await store.begin_turn("t1", HumanMessage("q"))
        await store.add_step("t1", number, 0, _step(1, 0))
        assert not (await store.load("t1")).turns[0].orphaned
        # Another connection records a dead owner (as a crashed process leaves it).
        with closing(sqlite3.connect(store.path)) as db, db:
            db.execute("UPDATE leanloop_turns SET owner_pid = 999999999, owner_started = 1")
        session = await store.load("t1")
        assert session.turns[0].orphaned
        unfinished = session.unfinished()
        assert unfinished is not None
        assert unfinished.number == 1

    asyncio.run(main())


def test_a_thread_made_again_is_read_whole(store: SqliteStore, url: str) -> None:
    """The file removed and made again under the same path: the kept connection and the
    kept session are of the old file, and neither is used."""

    async def before() -> None:
        for n in range(2):
            await _turn(store, "t1", f"old {n}")
        assert len((await store.load("t1")).turns) == 2

    async def after() -> None:
        other = open_store(url)
        try:
            await _turn(other, "t1", "new")
        finally:
            await other.close()
        session = await store.load("t1")
        assert [t.question.text for t in session.turns] == ["new"]

    asyncio.run(before())
    for suffix in ("", "-wal", "-shm"):
        Path(str(store.path) + suffix).unlink(missing_ok=True)
    asyncio.run(after())


def test_a_thread_removed_loads_empty(store: SqliteStore) -> None:
    async def main() -> None:
        await _turn(store, "t1", "q")
        assert (await store.load("t1")).turns
        with closing(sqlite3.connect(store.path)) as db, db:
            for table in ("leanloop_notes", "leanloop_steps", "leanloop_turns"):
                db.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed names
            db.execute("DELETE FROM leanloop_threads")
        session = await store.load("t1")
        assert session.turns == []
        assert session.notes == []

    asyncio.run(main())


def test_a_store_keeps_a_bounded_number_of_threads(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sql_module, "HISTORY_THREADS", 3)

    async def main() -> None:
        for n in range(5):
            await _turn(store, f"t{n}", "q", steps=0)
            await store.load(f"t{n}")

    asyncio.run(main())
    assert list(store._kept) == ["t2", "t3", "t4"]


def test_derived_values_are_made_once_per_kept_turn(store: SqliteStore) -> None:
    made: list[int] = []

    def make(turn: Turn) -> str:
        made.append(turn.number)
        return turn.question.text.upper()

    async def main() -> None:
        await _turn(store, "t1", "first")
        for _ in range(3):
            session = await store.load("t1")
            assert session.turns[0].derived("upper", make) == "FIRST"
        await _turn(store, "t1", "second")
        session = await store.load("t1")
        assert [t.derived("upper", make) for t in session.turns] == ["FIRST", "SECOND"]

    asyncio.run(main())
    assert made == [1, 2]


# -- the kept connection ----------------------------------------------------------------


def test_every_event_loop_uses_the_one_connection(store: SqliteStore) -> None:
    threads: set[int] = set()
    real = sqlite_module._run_work

    def recording(db: sqlite3.Connection, work: Any, *, write: bool) -> Any:
        threads.add(threading.get_ident())
        return real(db, work, write=write)

    errors: list[BaseException] = []

    def on_its_own_loop(index: int) -> None:
        async def main() -> None:
            for n in range(3):
                await _turn(store, f"loop{index}", f"q{n}", steps=1)
            session = await store.load(f"loop{index}")
            assert [t.number for t in session.turns] == [1, 2, 3]

        try:
            asyncio.run(main())
        except BaseException as exc:  # reported by the test's own thread
            errors.append(exc)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sqlite_module, "_run_work", recording)
        asyncio.run(_turn(store, "first", "q"))
        worker = store._worker
        runners = [threading.Thread(target=on_its_own_loop, args=(i,)) for i in range(4)]
        for runner in runners:
            runner.start()
        for runner in runners:
            runner.join(60)
        asyncio.run(store.load("first"))  # one more asyncio.run: a new loop again
    assert errors == []
    assert store._worker is worker  # the same connection for every loop
    assert len(threads) == 1  # and one thread ran every transaction


def test_every_transaction_of_many_turns_uses_one_connection(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn's transactions (start, steps, a note, finish, a load), turn after turn and
    event loop after event loop, open the file once."""
    opened: list[sqlite3.Connection] = []
    real = SqliteStore._open

    def counting(self: SqliteStore) -> sqlite3.Connection:
        opened.append(real(self))
        return opened[-1]

    monkeypatch.setattr(SqliteStore, "_open", counting)

    async def turns(first: int) -> None:
        for index in range(first, first + 3):
            _, number = await store.start_turn("t1", HumanMessage(f"q{index}"))
            await store.add_step("t1", number, 0, _step(number, 0))
            await store.add_step("t1", number, 1, _step(number, 1))
            await store.add_note("t1", number, f"note {index}")
            await store.finish_turn("t1", number, AIMessage(f"a{index}"), status="done")
            await store.load("t1")

    asyncio.run(turns(1))
    asyncio.run(turns(4))  # another event loop: the same connection
    assert len(opened) == 1
    assert [t.number for t in asyncio.run(store.load("t1")).turns] == [1, 2, 3, 4, 5, 6]


def test_a_call_cancelled_while_queued_never_runs(store: SqliteStore) -> None:
    async def main() -> None:
        await store.load("warm")  # the connection open
        worker = store._worker
        assert worker is not None
        gate = threading.Event()
        blocker = worker.run_for(asyncio.get_running_loop(), lambda _db: gate.wait(30))
        queued = asyncio.ensure_future(store.begin_turn("t1", HumanMessage("never")))
        await asyncio.sleep(0.05)  # queued behind the blocker
        queued.cancel()
        with pytest.raises(asyncio.CancelledError):
            await queued
        gate.set()
        assert await blocker is True
        assert (await store.load("t1")).turns == []

    asyncio.run(main())


def test_an_event_loop_that_ends_while_its_transaction_runs_leaves_the_store_working(
    store: SqliteStore,
) -> None:
    gate = threading.Event()
    ran: list[bool] = []

    def slow(_db: sqlite3.Connection) -> None:
        gate.wait(30)
        ran.append(True)

    async def leave_it_running() -> None:
        await store.load("warm")
        worker = store._worker
        assert worker is not None
        worker.run_for(asyncio.get_running_loop(), slow)
        await asyncio.sleep(0.05)  # it runs; the loop ends and closes under it

    asyncio.run(leave_it_running())
    gate.set()  # its reply finds the loop closed
    # Bounded: a connection's thread that died on that reply would leave this waiting.
    asyncio.run(asyncio.wait_for(_turn(store, "t1", "after"), 20))
    assert ran == [True]
    assert [t.question.text for t in asyncio.run(store.load("t1")).turns] == ["after"]


def test_close_lets_the_file_go_and_a_later_call_opens_it_again(
    store: SqliteStore, tmp_path: Path
) -> None:
    asyncio.run(_turn(store, "t1", "q"))
    assert (tmp_path / "sessions.db-wal").exists()  # the kept connection holds the WAL
    asyncio.run(store.close())
    assert store._worker is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sessions.db"]
    assert store._kept == {}
    session = asyncio.run(store.load("t1"))
    assert [t.question.text for t in session.turns] == ["q"]


def test_an_idle_connection_closes_itself(
    store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_module, "IDLE_CLOSE_S", 0.05)
    asyncio.run(_turn(store, "t1", "q"))
    worker = store._worker
    assert worker is not None
    worker._thread.join(30)
    assert not worker._thread.is_alive()
    assert store._worker is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sessions.db"]
    asyncio.run(_turn(store, "t1", "again"))
    assert len(asyncio.run(store.load("t1")).turns) == 2


def test_a_database_error_is_a_session_error_and_the_connection_goes_on(
    store: SqliteStore,
) -> None:
    from leanloop.exceptions import SessionError  # noqa: PLC0415

    async def main() -> None:
        await _turn(store, "t1", "q")

        def broken(thread_id: str) -> sql_module.Work[None]:
            yield from sql_module.execute("SELECT * FROM no_such_table")

        with pytest.raises(SessionError, match="no such table"):
            await store._run(broken("t1"), write=True)
        await _turn(store, "t1", "after the error")
        assert len((await store.load("t1")).turns) == 2

    asyncio.run(main())


def test_shared_store_is_one_object_per_store(tmp_path: Path) -> None:
    first = shared_store(f"sqlite:///{tmp_path}/s.db")
    assert shared_store(f"sqlite:////{tmp_path}/s.db") is first
    assert shared_store(f"sqlite:///{tmp_path}/other.db") is not first


# -- start_turn ---------------------------------------------------------------------------


def test_start_turn_begins_the_turn_and_gives_the_session_before_it(
    store: SqliteStore,
) -> None:
    from leanloop.sessions import AgentIdentity  # noqa: PLC0415

    async def main() -> None:
        me = AgentIdentity("helper", "/agents.yaml")
        session, number = await store.start_turn("t1", HumanMessage("first"), agent=me)
        assert (session.turns, number, session.notes) == ([], 1, [])
        await store.add_note("t1", number, "a note")
        await store.finish_turn("t1", number, AIMessage("answer 1"), status="done")
        session, number = await store.start_turn("t1", HumanMessage("second"), agent=me)
        assert number == 2
        assert [t.number for t in session.turns] == [1]  # not the turn it began
        assert session.notes == ["a note"]
        assert session.agent == me
        loaded = await store.load("t1")
        assert [(t.number, t.status) for t in loaded.turns] == [(1, "done"), (2, "running")]
        assert loaded.turns[0] is session.turns[0]

    asyncio.run(main())


def test_start_turn_refuses_another_agent_before_reading_or_writing(
    store: SqliteStore,
) -> None:
    from leanloop.exceptions import SessionAgentMismatch  # noqa: PLC0415
    from leanloop.sessions import AgentIdentity  # noqa: PLC0415

    async def main() -> None:
        owner = AgentIdentity("owner", None)
        _, number = await store.start_turn("t1", HumanMessage("q"), agent=owner)
        await store.finish_turn("t1", number, AIMessage("a"), status="done")
        with pytest.raises(SessionAgentMismatch):
            await store.start_turn("t1", HumanMessage("q2"), agent=AgentIdentity("other", None))
        assert [t.number for t in (await store.load("t1")).turns] == [1]

    asyncio.run(main())


def test_start_turn_refuses_a_busy_thread(store: SqliteStore) -> None:
    from leanloop.exceptions import SessionBusy  # noqa: PLC0415

    async def main() -> None:
        await store.start_turn("t1", HumanMessage("q"))
        with pytest.raises(SessionBusy):
            await store.start_turn("t1", HumanMessage("again"))

    asyncio.run(main())


def _turn_in_child(store: SqliteStore) -> None:
    asyncio.run(_turn(store, "t1", "from the fork"))


def test_a_forked_child_opens_its_own_connection(store: SqliteStore) -> None:
    import multiprocessing  # noqa: PLC0415

    asyncio.run(_turn(store, "t1", "parent"))
    child = multiprocessing.get_context("fork").Process(target=_turn_in_child, args=(store,))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    session = asyncio.run(store.load("t1"))
    assert [t.question.text for t in session.turns] == ["parent", "from the fork"]


def test_a_process_that_exits_without_closing_leaves_no_wal(url: str, tmp_path: Path) -> None:
    child = textwrap.dedent(
        f"""
        import asyncio
        from langchain_core.messages import AIMessage, HumanMessage
        from leanloop.sessions import shared_store

        async def main():
            store = shared_store({url!r})
            number = await store.begin_turn("t1", HumanMessage("q"))
            await store.finish_turn("t1", number, AIMessage("a"), status="done")

        asyncio.run(main())  # the shared store is never closed
        """
    )
    subprocess.run([sys.executable, "-c", child], check=True, timeout=120)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sessions.db"]


def test_a_cancelled_close_still_ends_the_connections_thread(store: SqliteStore) -> None:
    asyncio.run(_turn(store, "t1", "q"))
    worker = store._worker
    assert worker is not None

    async def main() -> None:
        closing_task = asyncio.ensure_future(store.close())
        await asyncio.sleep(0)  # it queued the closing and waits for it
        closing_task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closing_task

    asyncio.run(main())
    worker._thread.join(30)
    assert not worker._thread.is_alive()
    assert len(asyncio.run(store.load("t1")).turns) == 1  # and the store opens again
