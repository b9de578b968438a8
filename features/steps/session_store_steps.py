"""Steps for features/sessions/session_store.feature: the session stores of leanloop.sessions.

Every step runs its calls with ``asyncio.run``, a new event loop each time, so the
scenarios also show that a store is not tied to one loop. A step whose call may fail on
purpose keeps the error in ``context.session_error``; the next step either checks it
("it fails with …") or refuses to go on past it (:func:`_settled`).
"""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Coroutine
from contextlib import closing
from pathlib import Path
from typing import Any, LiteralString, TypeVar, cast

import parse
from behave import given, register_type, then, when
from behave.runner import Context
from fixtures.session_child import child_question, child_steps
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from support.aio import run_virtual

from leanloop.exceptions import LeanloopError, SessionBusy, SessionError, UnfinishedTurn
from leanloop.sessions import (
    Owner,
    Session,
    SessionStore,
    Turn,
    open_store,
    sqlite_path,
    sqlite_url,
    thread_lock,
)
from leanloop.sessions import locks as session_locks

T = TypeVar("T")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


@parse.with_pattern(r'[^"]*')
def _parse_session_text(text: str) -> str:
    return text


register_type(SessionText=_parse_session_text)


# -- helpers ---------------------------------------------------------------------------


def _settled(context: Context) -> None:
    """Refuse to go on past an error no step has checked."""
    error = getattr(context, "session_error", None)
    if error is not None:
        context.session_error = None
        raise AssertionError(f"an unexpected {type(error).__name__}: {error}")


def _attempt(context: Context, coro: Coroutine[Any, Any, T]) -> T | None:
    """Run ``coro``; a leanloop error is kept for the next step to check."""
    _settled(context)
    try:
        return asyncio.run(coro)
    except LeanloopError as exc:
        context.session_error = exc
        return None


def _run(context: Context, coro: Coroutine[Any, Any, T]) -> T:
    _settled(context)
    return asyncio.run(coro)


def _error(context: Context, kind: type[Exception]) -> Exception:
    error = getattr(context, "session_error", None)
    assert error is not None, f"expected {kind.__name__}, but the call succeeded"
    context.session_error = None
    context.last_session_error = error
    assert isinstance(error, kind), f"expected {kind.__name__}, got {type(error).__name__}: {error}"
    message = str(error)
    assert "\n" not in message, f"the message is not one line: {message!r}"
    return error


def _store(context: Context) -> SessionStore:
    store: SessionStore = context.session_store
    return store


def _tamper(context: Context, sql: LiteralString, params: tuple[Any, ...]) -> None:
    """Change a stored row behind the store's back (``?`` marks the parameters)."""
    if context.session_kind == "sqlite":
        with closing(sqlite3.connect(sqlite_path(context.session_url))) as db, db:
            db.execute(sql, params)  # `with db` commits, `closing` closes
        return
    import psycopg  # noqa: PLC0415 - only the postgres scenarios need it

    with psycopg.connect(context.session_url, autocommit=True) as conn:
        conn.execute(sql.replace("?", "%s"), params)


def _step_messages(thread_id: str, turn: int, step: int) -> list[BaseMessage]:
    call = {"name": "lookup", "args": {"key": f"{turn}.{step}"}, "id": f"c-{turn}-{step}"}
    return [
        AIMessage(f"{thread_id} turn {turn} step {step}", tool_calls=[call], id=f"r{turn}{step}"),
        ToolMessage(f"result {thread_id} {turn}.{step}", tool_call_id=f"c-{turn}-{step}"),
    ]


def _answer(thread_id: str, turn: int) -> AIMessage:
    return AIMessage(f"answer of {thread_id} turn {turn}", id=f"answer-{turn}")


def _open(context: Context, url: str) -> SessionStore:
    """A store at ``url``, closed when the scenario ends."""
    store = open_store(url)
    context.cleanups.append(lambda: asyncio.run(store.close()))
    return store


def _numbers(text: str) -> list[int]:
    return [int(part) for part in text.split(",")]


# -- stores ----------------------------------------------------------------------------


@given("a {kind:w} session store")
def step_store(context: Context, kind: str) -> None:
    _settled(context)
    context.session_kind = kind
    if kind == "sqlite":
        context.session_url = sqlite_url(context.tmp / "sessions.db")
    elif kind == "postgres":
        # Imported here: without psycopg only the postgres scenarios fail, not every feature.
        from fixtures.session_postgres import shared_server  # noqa: PLC0415

        context.session_url = shared_server().new_database()
    else:
        raise AssertionError(f"unknown store kind {kind!r}")
    context.session_store = _open(context, context.session_url)
    context.stored_steps = {}


@given('a sqlite session store at "{relative}" under the scenario folder')
def step_store_at(context: Context, relative: str) -> None:
    _settled(context)
    context.session_kind = "sqlite"
    context.session_url = sqlite_url(context.tmp / relative)
    context.session_store = _open(context, context.session_url)
    context.stored_steps = {}


@given('a plain file "{name}" in the scenario folder')
def step_plain_file(context: Context, name: str) -> None:
    (context.tmp / name).write_text("not a folder\n", encoding="utf-8")


@when('a store is opened at "{url:SessionText}"')
def step_open(context: Context, url: str) -> None:
    _settled(context)
    try:
        context.session_store = _open(context, url)
        context.session_url = url
    except LeanloopError as exc:
        context.session_error = exc


@when('the session "{thread_id}" is loaded')
def step_load(context: Context, thread_id: str) -> None:
    context.loaded = _attempt(context, _store(context).load(thread_id))


@when('the session "{thread_id}" is loaded from a new store object on the same URL')
def step_load_new(context: Context, thread_id: str) -> None:
    context.loaded = _attempt(context, _open(context, context.session_url).load(thread_id))


# -- message round trip ----------------------------------------------------------------


def _every_message() -> tuple[HumanMessage, list[list[BaseMessage]], AIMessage]:
    question = HumanMessage(
        content=[{"type": "text", "text": "Which colour? ✓ 日本"}],
        id="q-1",
        name="alice",
        additional_kwargs={"lang": "en"},
    )
    reply = AIMessage(
        content="",
        tool_calls=[
            {"name": "lookup", "args": {"key": "colour", "n": 2}, "id": "call_1"},
            {"name": "search", "args": {"pattern": "blue|red", "flags": [1, None]}, "id": "c2"},
        ],
        invalid_tool_calls=[
            {
                "name": "broken",
                "args": '{"half": ',
                "id": "call_3",
                "error": "bad JSON",
                "type": "invalid_tool_call",
            }
        ],
        additional_kwargs={"reasoning_content": "think", "nested": {"a": [1, 2.5, {"b": None}]}},
        response_metadata={"model_name": "m-1", "finish_reason": "tool_calls", "logprobs": None},
        usage_metadata={
            "input_tokens": 120,
            "output_tokens": 30,
            "total_tokens": 150,
            "input_token_details": {"cache_read": 100},
        },
        id="run-1",
        name="assistant",
    )
    results: list[BaseMessage] = [
        ToolMessage(
            "blue",
            tool_call_id="call_1",
            name="lookup",
            status="success",
            artifact={"rows": [1, 2]},
            id="tool-1",
        ),
        ToolMessage(
            content=[{"type": "text", "text": "no match"}],
            tool_call_id="c2",
            name="search",
            status="error",
            id="tool-2",
        ),
    ]
    others: list[BaseMessage] = [
        SystemMessage("You are terse.", id="sys-1"),
        ChatMessage(content="Looks right.", role="critic", id="chat-1"),
        FunctionMessage(content="42", name="legacy_fn", id="fn-1"),
        HumanMessage("and now?", id="h-2"),
        AIMessageChunk(content="partial", id="chunk-1"),
    ]
    answer = AIMessage(
        "The colour is blue.", id="answer-1", response_metadata={"finish_reason": "stop"}
    )
    return question, [[reply, *results], others], answer


@when('thread "{thread_id}" stores a turn with every message type and its answer')
def step_every_type(context: Context, thread_id: str) -> None:
    question, steps, answer = _every_message()
    context.expected = (question, steps, answer)
    store = _store(context)

    async def go() -> None:
        turn = await store.begin_turn(thread_id, question)
        for number, messages in enumerate(steps):
            await store.add_step(thread_id, turn, number, messages)
        await store.finish_turn(thread_id, turn, answer, status="done")

    _run(context, go())


def _same(got: BaseMessage | None, want: BaseMessage) -> None:
    assert got is not None, f"missing {want!r}"
    assert type(got) is type(want), f"{type(got).__name__} came back for {type(want).__name__}"
    assert got == want, f"changed:\n  stored {want!r}\n  loaded {got!r}"


@then("every message of the turn compares equal to the one stored, with its type")
def step_every_equal(context: Context) -> None:
    _settled(context)
    question, steps, answer = context.expected
    session: Session = context.loaded
    (turn,) = session.turns
    _same(turn.question, question)
    assert [number for number, _ in turn.steps] == [0, 1], turn.steps
    for (_, got), want in zip(turn.steps, steps, strict=True):
        assert len(got) == len(want), (got, want)
        for one, other in zip(got, want, strict=True):
            _same(one, other)
    _same(turn.answer, answer)
    assert turn.status == "done"


@then(
    "the AI reply kept its tool calls, invalid tool calls, additional kwargs, response"
    " metadata, usage and id"
)
def step_reply_fields(context: Context) -> None:
    want = context.expected[1][0][0]
    got = context.loaded.turns[0].steps[0][1][0]
    assert isinstance(got, AIMessage)
    assert got.tool_calls == want.tool_calls, got.tool_calls
    assert got.tool_calls[1]["args"] == {"pattern": "blue|red", "flags": [1, None]}
    assert got.invalid_tool_calls == want.invalid_tool_calls, got.invalid_tool_calls
    assert got.additional_kwargs == {
        "reasoning_content": "think",
        "nested": {"a": [1, 2.5, {"b": None}]},
    }, got.additional_kwargs
    assert got.response_metadata == want.response_metadata, got.response_metadata
    assert got.usage_metadata == want.usage_metadata, got.usage_metadata
    assert (got.id, got.name) == ("run-1", "assistant"), (got.id, got.name)


@then("the tool result kept its tool_call_id, name, status, artifact and id")
def step_tool_fields(context: Context) -> None:
    first, second = context.loaded.turns[0].steps[0][1][1:]
    assert isinstance(first, ToolMessage) and isinstance(second, ToolMessage)
    assert (first.tool_call_id, first.name, first.status, first.artifact, first.id) == (
        "call_1",
        "lookup",
        "success",
        {"rows": [1, 2]},
        "tool-1",
    ), first
    assert (second.tool_call_id, second.status, second.id) == ("c2", "error", "tool-2"), second


# -- order -----------------------------------------------------------------------------


@when(
    'thread "{thread_id}" runs {turns:d} turns, storing steps "{order}" of each in that order'
    " and a note per step"
)
def step_turns_in_order(context: Context, thread_id: str, turns: int, order: str) -> None:
    store = _store(context)
    written: list[str] = []

    async def go() -> None:
        for count in range(1, turns + 1):
            number = await store.begin_turn(thread_id, HumanMessage(f"question {count}"))
            for step in _numbers(order):
                await store.add_step(
                    thread_id, number, step, _step_messages(thread_id, number, step)
                )
                note = f"note {number}.{step}"
                await store.add_note(thread_id, number, note)
                written.append(note)
            await store.finish_turn(thread_id, number, _answer(thread_id, number), status="done")

    _run(context, go())
    context.written_notes = written
    context.thread_id = thread_id


@then("it has {turns:d} turns numbered {numbers}, each done with its own question and answer")
def step_turns_numbered(context: Context, turns: int, numbers: str) -> None:
    _settled(context)
    session: Session = context.loaded
    assert [turn.number for turn in session.turns] == _numbers(numbers), session.turns
    assert len(session.turns) == turns
    for turn in session.turns:
        assert turn.status == "done", turn
        assert turn.question.content == f"question {turn.number}", turn.question
        assert turn.answer == _answer(session.thread_id, turn.number), turn.answer


@then("each turn's steps come back numbered {numbers} with their own messages")
def step_steps_numbered(context: Context, numbers: str) -> None:
    session: Session = context.loaded
    for turn in session.turns:
        assert [step for step, _ in turn.steps] == _numbers(numbers), turn.steps
        for step, messages in turn.steps:
            assert messages == _step_messages(session.thread_id, turn.number, step), messages
        assert turn.last_step == _numbers(numbers)[-1]


@then("its notes are the {count:d} notes in the order they were written")
def step_notes(context: Context, count: int) -> None:
    notes = context.loaded.notes
    assert len(notes) == count, notes
    assert notes == context.written_notes, notes


@then("it has no turns and no notes")
def step_empty(context: Context) -> None:
    _settled(context)
    session: Session = context.loaded
    assert (session.turns, session.notes) == ([], []), session
    assert session.unfinished() is None


# -- turns -----------------------------------------------------------------------------


@given('thread "{thread_id}" has a running turn with {steps:d} steps')
@when('thread "{thread_id}" has a running turn with {steps:d} steps')
def step_running_turn(context: Context, thread_id: str, steps: int) -> None:
    store = _store(context)

    async def go() -> int:
        number = await store.begin_turn(thread_id, HumanMessage(f"question of {thread_id}"))
        for step in range(steps):
            await store.add_step(thread_id, number, step, _step_messages(thread_id, number, step))
        return number

    number = _run(context, go())
    context.turn = (thread_id, number)
    context.stored_steps = {step: _step_messages(thread_id, number, step) for step in range(steps)}


@given("the turn's owner is recorded as a process that no longer exists")
def step_owner_dead(context: Context) -> None:
    # A pid that existed and is gone: a child that ran and was reaped.
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    thread_id, number = context.turn
    _tamper(
        context,
        "UPDATE leanloop_turns SET owner_pid = ?, owner_started = ?"
        " WHERE thread_id = ? AND number = ?",
        (gone.pid, 1, thread_id, number),
    )


@given("the turn's owner is recorded as this pid with another start time")
def step_owner_reused(context: Context) -> None:
    me = Owner.current()
    assert me.started is not None, "this test needs /proc (Linux) for process start times"
    thread_id, number = context.turn
    _tamper(
        context,
        "UPDATE leanloop_turns SET owner_pid = ?, owner_started = ?"
        " WHERE thread_id = ? AND number = ?",
        (me.pid, me.started + 12345, thread_id, number),
    )


@given('the turn\'s owner is recorded on host "{host}"')
def step_owner_elsewhere(context: Context, host: str) -> None:
    thread_id, number = context.turn
    _tamper(
        context,
        "UPDATE leanloop_turns SET owner_host = ? WHERE thread_id = ? AND number = ?",
        (host, thread_id, number),
    )


@given("the store's schema version is changed to {version:d}")
def step_schema_version(context: Context, version: int) -> None:
    _tamper(
        context,
        "UPDATE leanloop_meta SET value = ? WHERE key = 'schema_version'",
        (str(version),),
    )


@when('a new turn of thread "{thread_id}" is begun')
def step_begin(context: Context, thread_id: str) -> None:
    question = HumanMessage(f"a new question of {thread_id}")
    number = _attempt(context, _store(context).begin_turn(thread_id, question))
    if number is not None:
        context.begun = number
        context.turn = (thread_id, number)
        context.stored_steps = {}


@then("it is turn {number:d}")
def step_is_turn(context: Context, number: int) -> None:
    _settled(context)
    assert context.begun == number, context.begun


@when('the turn of thread "{thread_id}" is reopened')
def step_reopen(context: Context, thread_id: str) -> None:
    turn = _attempt(context, _store(context).reopen_turn(thread_id))
    if turn is not None:
        context.reopened = turn
        context.turn = (thread_id, turn.number)


@when('the turn of thread "{thread_id}" is reopened with force')
def step_reopen_force(context: Context, thread_id: str) -> None:
    turn = _run(context, _store(context).reopen_turn(thread_id, force=True))
    context.reopened = turn
    context.turn = (thread_id, turn.number)


@then('reopening the turn of thread "{thread_id}" fails with SessionBusy too')
def step_reopen_busy(context: Context, thread_id: str) -> None:
    _attempt(context, _store(context).reopen_turn(thread_id))
    _error(context, SessionBusy)


@then('reopening the turn of thread "{thread_id}" fails with SessionError "{text}"')
def step_reopen_fails(context: Context, thread_id: str, text: str) -> None:
    _attempt(context, _store(context).reopen_turn(thread_id))
    error = _error(context, SessionError)
    assert text in str(error), str(error)


@then("the reopened turn is turn {number:d}, running, with steps {steps} as stored")
def step_reopened(context: Context, number: int, steps: str) -> None:
    _settled(context)
    turn: Turn = context.reopened
    assert (turn.number, turn.status, turn.answer) == (number, "running", None), turn
    assert turn.owner == Owner.current(), turn.owner
    assert [step for step, _ in turn.steps] == _numbers(steps), turn.steps
    for step, messages in turn.steps:
        assert messages == context.stored_steps[step], (step, messages)
    assert turn.last_step == _numbers(steps)[-1]


@when("step {step:d} is added and the turn is finished as {status:w}")
def step_add_and_finish(context: Context, step: int, status: str) -> None:
    thread_id, number = context.turn
    store = _store(context)
    messages = _step_messages(thread_id, number, step)

    async def go() -> None:
        await store.add_step(thread_id, number, step, messages)
        answer = _answer(thread_id, number)
        await store.finish_turn(thread_id, number, answer, status=cast(Any, status))

    _run(context, go())
    context.stored_steps[step] = messages


@when("the turn is finished as failed with an answer")
def step_finish_failed(context: Context) -> None:
    thread_id, number = context.turn
    partial = AIMessage("half an answer")
    _attempt(context, _store(context).finish_turn(thread_id, number, partial, status="failed"))


@then("turn {number:d} is done with steps {steps} and its answer")
def step_turn_done(context: Context, number: int, steps: str) -> None:
    _settled(context)
    turn = context.loaded.turns[number - 1]
    assert (turn.number, turn.status) == (number, "done"), turn
    assert [step for step, _ in turn.steps] == _numbers(steps), turn.steps
    for step, messages in turn.steps:
        assert messages == context.stored_steps[step], (step, messages)
    assert turn.answer == _answer(context.turn[0], number), turn.answer


@then("turn {number:d} is running in this process with last step {last:d}")
def step_turn_running(context: Context, number: int, last: int) -> None:
    _settled(context)
    turn = context.loaded.turns[number - 1]
    assert (turn.status, turn.owner, turn.orphaned) == ("running", Owner.current(), False), turn
    assert turn.last_step == last, turn.steps
    assert context.loaded.unfinished() is None, "a turn of a live process is not unfinished"


@then("turn {number:d} is failed with no answer")
def step_turn_failed(context: Context, number: int) -> None:
    _settled(context)
    turn = context.loaded.turns[number - 1]
    assert (turn.number, turn.status, turn.answer) == (number, "failed", None), turn


@then("its unfinished turn is turn {number:d}, {orphaned}, with last step {last:d}")
def step_unfinished(context: Context, number: int, orphaned: str, last: int) -> None:
    _settled(context)
    turn = context.loaded.unfinished()
    assert turn is not None, context.loaded
    assert (turn.number, turn.orphaned, turn.last_step) == (
        number,
        orphaned == "orphaned",
        last,
    ), turn


@then("the session has no unfinished turn")
def step_no_unfinished(context: Context) -> None:
    _settled(context)
    assert context.loaded.unfinished() is None, context.loaded.turns[-1]


@when('step {step:d} of turn {number:d} of thread "{thread_id}" is stored again')
@when('step {step:d} of turn {number:d} of thread "{thread_id}" is stored')
def step_store_step(context: Context, step: int, number: int, thread_id: str) -> None:
    messages = _step_messages(thread_id, number, step)
    _attempt(context, _store(context).add_step(thread_id, number, step, messages))


@when('a note is added to turn {number:d} of thread "{thread_id}"')
def step_add_note(context: Context, number: int, thread_id: str) -> None:
    _attempt(context, _store(context).add_note(thread_id, number, "a note"))


# -- errors ----------------------------------------------------------------------------


@then('it fails with SessionBusy, one line naming "{thread_id}", turn {number:d} and "{who}"')
def step_busy(context: Context, thread_id: str, number: int, who: str) -> None:
    message = str(_error(context, SessionBusy))
    for part in (f"session {thread_id!r}", f"turn {number} ", who):
        assert part in message, f"{part!r} not in {message!r}"


@then(
    'it fails with SessionBusy, one line naming "{thread_id}", turn {number:d} and the child\'s pid'
)
def step_busy_child(context: Context, thread_id: str, number: int) -> None:
    message = str(_error(context, SessionBusy))
    for part in (f"session {thread_id!r}", f"turn {number} ", f"pid {context.child.pid} "):
        assert part in message, f"{part!r} not in {message!r}"


@then('it fails with UnfinishedTurn for turn {number:d} with {steps:d} steps, saying "{text}"')
def step_unfinished_error(context: Context, number: int, steps: int, text: str) -> None:
    error = _error(context, UnfinishedTurn)
    assert isinstance(error, UnfinishedTurn)
    assert (error.turn, error.steps) == (number, steps), (error.turn, error.steps)
    assert text in str(error), str(error)


@then('it fails with SessionError "{text}"')
def step_session_error(context: Context, text: str) -> None:
    error = _error(context, SessionError)
    assert text in str(error), f"{text!r} not in {str(error)!r}"


@then('the error message is one line and does not contain "{text}"')
def step_error_line(context: Context, text: str) -> None:
    message = str(context.last_session_error)
    assert "\n" not in message and text not in message, message


# -- files -----------------------------------------------------------------------------


@then('the file "{relative}" exists, readable by its owner only')
def step_file_private(context: Context, relative: str) -> None:
    _settled(context)
    path = context.tmp / relative
    assert path.is_file(), path
    mode = path.stat().st_mode & 0o777
    assert mode == 0o600, oct(mode)


@then("the file is in WAL mode, with schema version {version:d} recorded")
def step_wal(context: Context, version: int) -> None:
    with closing(sqlite3.connect(sqlite_path(context.session_url))) as db:
        (mode,) = db.execute("PRAGMA journal_mode").fetchone()
        (value,) = db.execute(
            "SELECT value FROM leanloop_meta WHERE key = 'schema_version'"
        ).fetchone()
    assert mode == "wal", mode
    assert value == str(version), value


@when("the store is closed")
def step_close(context: Context) -> None:
    _run(context, _store(context).close())


@then('the folder "{relative}" holds only "{name}"')
def step_folder_holds(context: Context, relative: str, name: str) -> None:
    names = sorted(path.name for path in (context.tmp / relative).iterdir())
    assert names == [name], names


# -- concurrency -----------------------------------------------------------------------


@when(
    "{count:d} tasks each run a turn on their own thread and {shared:d} tasks run a turn on"
    ' thread "{shared_id}", all at once under thread_lock'
)
def step_many(context: Context, count: int, shared: int, shared_id: str) -> None:
    store = _store(context)
    url = context.session_url
    inside = {"now": 0, "most": 0}

    async def one(thread_id: str, tag: str) -> None:
        async with thread_lock(url, thread_id):
            if thread_id == shared_id:
                inside["now"] += 1
                inside["most"] = max(inside["most"], inside["now"])
            try:
                number = await store.begin_turn(thread_id, HumanMessage(f"question {tag}"))
                await asyncio.sleep(0)  # let the other tasks run in between
                messages = [
                    AIMessage(f"reply {tag}", tool_calls=[_call(tag)], id=f"reply-{tag}"),
                    ToolMessage(f"result {tag}", tool_call_id=f"call-{tag}"),
                ]
                await store.add_step(thread_id, number, 1, messages)
                await store.add_note(thread_id, number, f"note {tag}")
                await store.finish_turn(
                    thread_id, number, AIMessage(f"answer {tag}"), status="done"
                )
            finally:
                if thread_id == shared_id:
                    inside["now"] -= 1

    async def go() -> None:
        jobs = [one(f"thread-{n}", f"t{n}") for n in range(count)]
        jobs += [one(shared_id, f"s{n}") for n in range(shared)]
        await asyncio.gather(*jobs)

    started = time.monotonic()
    _run(context, go())
    context.many_seconds = time.monotonic() - started
    context.many = (count, shared, shared_id)
    context.shared_inside = inside["most"]


def _call(tag: str) -> dict[str, Any]:
    return {"name": "lookup", "args": {"tag": tag}, "id": f"call-{tag}"}


def _check_turn(turn: Turn, tag: str) -> None:
    assert turn.status == "done", turn
    assert turn.question.content == f"question {tag}", turn.question
    ((step, messages),) = turn.steps
    assert step == 1, turn.steps
    assert [message.content for message in messages] == [f"reply {tag}", f"result {tag}"]
    assert isinstance(messages[0], AIMessage) and messages[0].tool_calls[0]["args"] == {"tag": tag}
    assert isinstance(messages[1], ToolMessage) and messages[1].tool_call_id == f"call-{tag}"
    assert turn.answer is not None and turn.answer.content == f"answer {tag}", turn.answer


@then("each of the {count:d} threads holds exactly its own turn, steps and answer")
def step_many_own(context: Context, count: int) -> None:
    _settled(context)
    store = _store(context)

    async def go() -> list[Session]:
        return [await store.load(f"thread-{n}") for n in range(count)]

    for n, session in enumerate(_run(context, go())):
        assert len(session.turns) == 1, (n, session.turns)
        _check_turn(session.turns[0], f"t{n}")
        assert session.notes == [f"note t{n}"], session.notes


@then(
    'thread "{thread_id}" holds {count:d} turns numbered 1 to {last:d}, each task\'s question'
    " exactly once with its own steps and answer"
)
def step_many_shared(context: Context, thread_id: str, count: int, last: int) -> None:
    session = _run(context, _store(context).load(thread_id))
    assert [turn.number for turn in session.turns] == list(range(1, last + 1)), session.turns
    tags = [str(turn.question.content).removeprefix("question ") for turn in session.turns]
    assert sorted(tags) == sorted(f"s{n}" for n in range(count)), tags
    for turn, tag in zip(session.turns, tags, strict=True):
        _check_turn(turn, tag)
    assert sorted(session.notes) == sorted(f"note s{n}" for n in range(count)), session.notes


@then('at most one task was inside thread "{thread_id}"\'s lock at a time')
def step_many_lock(context: Context, thread_id: str) -> None:
    assert context.shared_inside == 1, context.shared_inside


@when('{count:d} tasks begin a turn of thread "{thread_id}" at once without the lock')
def step_race(context: Context, count: int, thread_id: str) -> None:
    store = _store(context)

    async def go() -> list[Any]:
        jobs = [store.begin_turn(thread_id, HumanMessage(f"q{n}")) for n in range(count)]
        return list(await asyncio.gather(*jobs, return_exceptions=True))

    context.race = _run(context, go())


@then("one of them got turn 1 and the other failed with SessionBusy")
def step_race_result(context: Context) -> None:
    numbers = [result for result in context.race if isinstance(result, int)]
    errors = [result for result in context.race if isinstance(result, BaseException)]
    assert numbers == [1], context.race
    assert len(errors) == 1 and isinstance(errors[0], SessionBusy), errors
    assert "this process" in str(errors[0]), errors[0]


# -- two processes ---------------------------------------------------------------------


@given('a child process that began a turn of thread "{thread_id}" and stored steps 0 and 1')
def step_child(context: Context, thread_id: str) -> None:
    _settled(context)
    child = subprocess.Popen(
        [sys.executable, str(FIXTURES / "session_child.py"), context.session_url, thread_id],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def stop() -> None:
        if child.poll() is None:
            child.kill()
        child.wait()
        for stream in (child.stdout, child.stderr):
            if stream is not None:
                stream.close()

    context.cleanups.append(stop)
    context.child = child
    line = _read_line(child, timeout=60)
    said = child.stderr.read() if child.stderr and child.poll() is not None else ""
    assert line.startswith(f"ready {child.pid} "), f"the child said {line!r}; stderr: {said}"
    context.turn = (thread_id, int(line.split()[2]))
    context.stored_steps = dict(child_steps())


def _read_line(child: subprocess.Popen[str], timeout: float) -> str:
    """The child's first line, waiting at most ``timeout`` seconds."""
    box: list[str] = []
    stdout = child.stdout
    assert stdout is not None
    reader = threading.Thread(target=lambda: box.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return box[0].strip() if box else ""


@when("the child process is killed with SIGKILL")
def step_kill_child(context: Context) -> None:
    _settled(context)
    os.kill(context.child.pid, signal.SIGKILL)
    context.child.wait(timeout=10)
    assert context.child.returncode == -signal.SIGKILL, context.child.returncode


@then("the reopened turn holds the child's question and its steps 0 and 1, message for message")
def step_reopened_child(context: Context) -> None:
    _settled(context)
    turn: Turn = context.reopened
    assert (turn.number, turn.status, turn.owner) == (1, "running", Owner.current()), turn
    assert turn.question == child_question(), turn.question
    assert turn.steps == child_steps(), turn.steps
    assert turn.last_step == 1


# -- thread_lock -----------------------------------------------------------------------

_LOCK_URL = "sqlite:////nowhere/locks.db"  # thread_lock never opens the store


@when('two tasks on one event loop hold thread_lock for thread "{thread_id}" of one store')
def step_lock_same(context: Context, thread_id: str) -> None:
    log: list[str] = []
    # Events, not a clock, order the two: the first holds the lock until the second has
    # had its turns of the loop to enter it, and a lock that let it in would show.
    first_in = asyncio.Event()
    release = asyncio.Event()

    async def hold(name: str, url: str, until: asyncio.Event | None = None) -> None:
        async with thread_lock(url, thread_id):
            log.append(f"{name} in")
            first_in.set()
            if until is not None:
                await until.wait()
            log.append(f"{name} out")

    async def go() -> None:
        first = asyncio.create_task(hold("first", _LOCK_URL, release))
        await first_in.wait()
        # The same store spelled with one slash less: still the same lock.
        second = asyncio.create_task(hold("second", "sqlite:///nowhere/locks.db"))
        for _ in range(5):  # the second asks for the lock: free, it would enter at once
            await asyncio.sleep(0)
        release.set()
        await asyncio.gather(first, second)

    _settled(context)
    # Virtual time: thread_lock never opens the store, so no thread the loop cannot see.
    run_virtual(go())
    context.lock_log = log


@then("the second entered only after the first left")
def step_lock_order(context: Context) -> None:
    assert context.lock_log == ["first in", "first out", "second in", "second out"], (
        context.lock_log
    )


@when(
    'two tasks on one event loop hold thread_lock for threads "{one}" and "{other}" at the'
    " same time"
)
def step_lock_parallel(context: Context, one: str, other: str) -> None:
    async def go() -> bool:
        entered = {one: asyncio.Event(), other: asyncio.Event()}

        async def hold(mine: str, theirs: str) -> None:
            async with thread_lock(_LOCK_URL, mine):
                entered[mine].set()
                await asyncio.wait_for(entered[theirs].wait(), timeout=2)

        try:
            await asyncio.gather(hold(one, other), hold(other, one))
        except TimeoutError:
            return False
        return True

    _settled(context)
    # Virtual time: a second lock that waited for the first meets the 2 s limit at once.
    context.lock_parallel = run_virtual(go())


@then("both were inside their locks at once")
def step_lock_both(context: Context) -> None:
    assert context.lock_parallel, "the second thread's lock waited for the first's"


@when(
    'two OS threads each run asyncio.run with thread_lock for thread "{thread_id}", {times:d} times'
)
def step_lock_loops(context: Context, thread_id: str, times: int) -> None:
    errors: list[BaseException] = []
    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []

    async def contend() -> None:
        loops.append(weakref.ref(asyncio.get_running_loop()))

        async def hold() -> None:
            async with thread_lock(_LOCK_URL, thread_id):
                # The real clock (ADR 0027: real threads keep real time): the hold spans
                # the other OS thread's attempt, so the two loops contend for the lock.
                await asyncio.sleep(0.01)

        await asyncio.gather(hold(), hold(), hold())

    def worker() -> None:
        for _ in range(times):
            try:
                asyncio.run(contend())
            except BaseException as exc:  # reported by the next step
                errors.append(exc)

    workers = [threading.Thread(target=worker) for _ in range(2)]
    for worker_thread in workers:
        worker_thread.start()
    for worker_thread in workers:
        worker_thread.join(30)
    context.lock_errors = errors
    context.lock_loops = loops


@then("every run finished without an error")
def step_lock_no_errors(context: Context) -> None:
    assert context.lock_errors == [], context.lock_errors
    assert len(context.lock_loops) == 6, context.lock_loops


@then("no lock and no event loop table is left once the runs are over")
def step_lock_no_leak(context: Context) -> None:
    gc.collect()
    assert all(ref() is None for ref in context.lock_loops), "an event loop is still alive"
    # The tables hold loops weakly: a dead loop's table is gone with it, and a live loop's
    # table holds no lock that no task holds or awaits.
    leftover = {loop: list(table.keys()) for loop, table in list(session_locks._tables.items())}
    assert all(not keys for keys in leftover.values()), leftover
