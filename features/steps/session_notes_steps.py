"""Steps for features/sessions/session_notes.feature: notes as a delimited, capped block of data.

The agent, its scripted model and ``thread ... is asked`` come from session_steps.py
(``context.session`` is its harness: ``queue`` of scripted replies, ``model.requests``,
``results``, ``report``).
"""

from __future__ import annotations

import asyncio
import itertools
from typing import Any

from behave import then, when
from behave.runner import Context
from langchain_core.messages import AIMessage, SystemMessage

from leanloop.exceptions import RunFailed, SessionError
from leanloop.pruning.markers import RESERVED_MARKERS
from leanloop.sessions import open_store
from leanloop.sessions.sql import SqlStore

_ids = itertools.count()


def _notes_call(*texts: str) -> dict[str, Any]:
    calls = [
        {"name": "note", "args": {"text": t}, "id": f"n{next(_ids)}", "type": "tool_call"}
        for t in texts
    ]
    return {"calls": calls}


def _ask(context: Context, thread: str, question: str) -> None:
    harness = context.session
    harness.marks.append(len(harness.model.requests))
    config = {"configurable": {"thread_id": thread}}
    try:
        harness.results.append(harness.agent.invoke(question, config))
    except (RunFailed, SessionError) as exc:
        raise AssertionError(exc) from exc


def _system(context: Context) -> str:
    first = context.session.model.requests[-1].messages[0]
    assert isinstance(first, SystemMessage), first
    text: str = first.text
    return text


def _block(context: Context) -> list[str]:
    """The lines between ``<notes>`` and ``</notes>`` of the last request's system message."""
    lines = _system(context).split("\n")
    assert lines.count("<notes>") == 1, lines
    assert lines.count("</notes>") == 1, lines
    start, end = lines.index("<notes>"), lines.index("</notes>")
    assert start < end, lines
    return lines[start + 1 : end]


@when(
    'the store holds a note for thread "{thread}" of {size:d} characters with a line "{line}" in it'
)
def step_stored_note(context: Context, thread: str, size: int, line: str) -> None:
    head = "stored note, "
    body = ("x" * size)[: size - len(head) - len(line) - 2]
    text = f"{head}{body[: len(body) // 2]}\n{line}\n{body[len(body) // 2 :]}"
    turn = len(context.session.results)

    async def add() -> None:
        store = open_store(context.session_store_url)
        try:
            await store.add_note(thread, turn, text)
        finally:
            await store.close()

    asyncio.run(add())


@when('the model of thread "{thread}" writes {count:d} notes of {size:d} characters in one reply')
def step_many_notes(context: Context, thread: str, count: int, size: int) -> None:
    texts = [f"note {k} " + "y" * (size - len(f"note {k} ")) for k in range(1, count + 1)]
    context.session.queue.extend([_notes_call(*texts), "noted"])
    _ask(context, thread, "Keep these.")


@when(
    'the model of thread "{thread}" notes "{first}" and then "{second}" in one reply, '
    "the store slow to take the first"
)
def step_two_notes(context: Context, thread: str, first: str, second: str) -> None:
    original = SqlStore.add_note
    second_entered, second_written = asyncio.Event(), asyncio.Event()

    async def slow(self: SqlStore, thread_id: str, turn: int, text: str) -> None:
        if text == first:
            # The first call finishes after the second whenever the two run at once: one
            # turn of the loop lets a concurrent second call start, then the first waits
            # for its write (an event, not a clock). Written one after the other, the first
            # goes on at once: the order is then right by construction.
            await asyncio.sleep(0)
            if second_entered.is_set():
                await second_written.wait()
        if text == second:
            second_entered.set()
        await original(self, thread_id, turn, text)
        if text == second:
            second_written.set()

    SqlStore.add_note = slow  # type: ignore[method-assign]
    context.cleanups.append(lambda: setattr(SqlStore, "add_note", original))
    context.session.queue.extend([_notes_call(first, second), "noted"])
    _ask(context, thread, "Two facts.")


@then("the last request's system message has one notes block right under the notes guard")
def step_block(context: Context) -> None:
    lines = _system(context).split("\n")
    block = _block(context)
    assert block, "the notes block is empty"
    assert all(line.startswith("- ") for line in block), block
    guard = lines[lines.index("<notes>") - 1]  # the sentence right above the block
    assert "notes" in guard.lower() and "never instructions" in guard, guard


@then(
    "the notes block holds no bare notes tag or pruning marker "
    "and no note line over {limit:d} characters"
)
def step_clean(context: Context, limit: int) -> None:
    system = _system(context)
    for marker in RESERVED_MARKERS:
        assert marker not in system, (marker, system)
    for line in _block(context):
        assert "<notes>" not in line and "</notes>" not in line, line
        assert len(line) <= limit + 2, len(line)  # "- " and the note


@then('the run\'s report lists {count:d} carried note, the last starting "{prefix}"')
@then('the run\'s report lists {count:d} carried notes, the last starting "{prefix}"')
def step_report_carried(context: Context, count: int, prefix: str) -> None:
    notes = context.session.report["notes"]
    assert len(notes) == count, notes
    assert notes[-1].startswith(prefix), notes
    assert [f"- {n}" for n in notes] == _block(context), (notes, _block(context))


@then('thread "{thread}" keeps the notes "{first}" then "{second}"')
def step_stored_order(context: Context, thread: str, first: str, second: str) -> None:
    async def load() -> list[str]:
        store = open_store(context.session_store_url)
        try:
            return list((await store.load(thread)).notes)
        finally:
            await store.close()

    assert asyncio.run(load()) == [first, second]


@then('the run\'s report lists the session\'s notes "{first}" then "{second}"')
def step_report_order(context: Context, first: str, second: str) -> None:
    final = context.session.results[-1]
    assert isinstance(final, AIMessage)
    assert final.response_metadata["leanloop"]["session"]["notes"] == [first, second]
