"""Steps for features/sessions/session_ownership.feature: a thread belongs to its agent; turns of
one thread from several event loops wait for each other.

The agents answer from a script in this process (``ScriptedChatModel``, "ok: QUESTION"),
so the store scenarios run the same on SQLite and PostgreSQL; ``a {kind} session store``,
the scripted HTTP server and the CLI steps come from ``session_store_steps.py``,
``session_subagents_steps.py``, ``cli_steps.py`` and ``cli_hardening_steps.py``. A
refused call is checked by its class name and message, not by importing the class: the
scenarios then fail on their assertions, not on an import, where the class is missing.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
import textwrap
import threading
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, LiteralString

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from leanloop.agent import LLMAgent
from leanloop.exceptions import LeanloopError, SessionError
from leanloop.sessions import Owner, Session, open_store, sqlite_path
from leanloop.sessions.codec import dump_message
from leanloop.spec import load_specs
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel

_WAIT_S = 60.0
"""The most a step waits for another thread: a safety net, never what a step shows."""
_LOCKS_LOGGER = "leanloop.sessions.locks"


@dataclass
class _Scripted:
    """One agent and its scripted model: it answers "ok: QUESTION" to each question."""

    agent: LLMAgent
    model: ScriptedChatModel
    fail_next: bool = False
    hold: str | None = None
    """A question whose answer waits for ``released``; ``entered`` is set when it is asked."""
    entered: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    def reply(self, messages: list[BaseMessage]) -> Any:
        question = [m for m in messages if isinstance(m, HumanMessage)][-1].text
        if self.fail_next:
            self.fail_next = False
            return {"raise": "the model server went away"}
        if question == self.hold:
            # Blocks this call's own event loop only: the other calls run on loops of theirs.
            self.entered.set()
            if not self.released.wait(_WAIT_S):
                return {"raise": f"{question!r} was never released"}
        return AIMessage(content=f"ok: {question}")


def _scripted(spec: AgentSpec) -> _Scripted:
    holder: dict[str, _Scripted] = {}
    model = ScriptedChatModel(
        replies=[lambda messages: holder["s"].reply(messages)],  # noqa: PLW0108 - made later
        repeat_last=True,
    )
    scripted = _Scripted(LLMAgent.from_spec(spec, model=model), model)
    holder["s"] = scripted
    return scripted


def _python_built(context: Context, name: str) -> _Scripted:
    """An agent built in Python, with no agents file, on the scenario's store."""
    spec = AgentSpec(
        name=name,
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel", model="scripted"),
        session_store=context.session_url,
    )
    return _scripted(spec)


def _of_file(context: Context, name: str, file: str) -> _Scripted:
    """The agent ``name`` of the agents file ``file`` (built once per scenario)."""
    agents: dict[tuple[str, str], _Scripted] = context.own_agents
    key = (file, name)
    if key not in agents:
        spec = load_specs(context.tmp / file, only=name)[name]
        agents[key] = _scripted(spec)
    return agents[key]


def _folder(context: Context) -> str:
    return str(Path(context.tmp).resolve())


def _config(thread: str, *, resume: bool = False) -> RunnableConfig:
    return {"configurable": {"thread_id": thread, "resume": resume}}


def _call(context: Context, scripted: _Scripted, question: str, config: RunnableConfig) -> None:
    context.own_call = {"answer": None, "error": None, "agent": scripted}
    context.own_mark = len(scripted.model.requests)
    try:
        context.own_call["answer"] = scripted.agent.invoke(question, config)
    except LeanloopError as exc:
        context.own_call["error"] = exc


def _load(context: Context, thread: str) -> Session:
    async def load() -> Session:
        store = open_store(context.session_url)
        try:
            return await store.load(thread)
        finally:
            await store.close()

    return asyncio.run(load())


# --- Given ---------------------------------------------------------------------------


@given('the agents file "{file}" on that store, with the scripted agents "{first}" and "{second}"')
def step_agents_file_on_store(context: Context, file: str, first: str, second: str) -> None:
    path = context.tmp / file
    path.parent.mkdir(parents=True, exist_ok=True)
    store = context.session_url
    if context.session_kind == "sqlite":
        # In an agents file `sqlite:///x` is relative to the file's folder: the files in
        # other folders share the store by its absolute path (four slashes).
        store = f"sqlite:///{sqlite_path(store)}"
    text = f"""\
        version: 1
        models:
          m: {{class: "leanloop.testing:ScriptedChatModel"}}
        sessions: {{store: "{store}"}}
        agents:
          {first}: {{model: m, system_prompt: "You are {first}."}}
          {second}: {{model: m, system_prompt: "You are {second}."}}
        """
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    if not hasattr(context, "own_agents"):
        context.own_agents = {}


def _old_layout(integer: LiteralString, real: LiteralString) -> list[LiteralString]:
    """The tables as leanloop wrote them before threads recorded their agent (schema 1)."""
    return [
        "CREATE TABLE leanloop_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        f"CREATE TABLE leanloop_threads (thread_id TEXT PRIMARY KEY, created_at {real} NOT NULL)",
        "CREATE TABLE leanloop_turns ("
        " thread_id TEXT NOT NULL REFERENCES leanloop_threads (thread_id),"
        f" number {integer} NOT NULL, question TEXT NOT NULL, answer TEXT,"
        " status TEXT NOT NULL CHECK (status IN ('running', 'done', 'failed')),"
        f" owner_pid {integer} NOT NULL, owner_host TEXT NOT NULL, owner_started {integer},"
        f" owner_boot TEXT, started_at {real} NOT NULL, finished_at {real},"
        " PRIMARY KEY (thread_id, number))",
        "CREATE TABLE leanloop_steps (thread_id TEXT NOT NULL,"
        f" turn {integer} NOT NULL, step {integer} NOT NULL CHECK (step >= 0),"
        f" messages TEXT NOT NULL, stored_at {real} NOT NULL,"
        " PRIMARY KEY (thread_id, turn, step),"
        " FOREIGN KEY (thread_id, turn) REFERENCES leanloop_turns (thread_id, number))",
        "CREATE TABLE leanloop_notes (thread_id TEXT NOT NULL,"
        f" seq {integer} NOT NULL, turn {integer} NOT NULL, text TEXT NOT NULL,"
        f" written_at {real} NOT NULL, PRIMARY KEY (thread_id, seq),"
        " FOREIGN KEY (thread_id, turn) REFERENCES leanloop_turns (thread_id, number))",
        "INSERT INTO leanloop_meta (key, value) VALUES ('schema_version', '1')",
    ]


@given(
    'the store holds thread "{thread}" in the layout from before threads recorded their agent,'
    ' with a done turn "{question}"'
)
def step_old_layout(context: Context, thread: str, question: str) -> None:
    me = Owner.current()
    now = time.time()
    rows: list[tuple[LiteralString, tuple[Any, ...]]] = [
        ("INSERT INTO leanloop_threads (thread_id, created_at) VALUES (?, ?)", (thread, now)),
        (
            "INSERT INTO leanloop_turns (thread_id, number, question, answer, status,"
            " owner_pid, owner_host, owner_started, owner_boot, started_at, finished_at)"
            " VALUES (?, 1, ?, ?, 'done', ?, ?, ?, ?, ?, ?)",
            (
                thread,
                dump_message(HumanMessage(question)),
                dump_message(AIMessage("Noted.")),
                me.pid,
                me.host,
                me.started,
                me.boot,
                now,
                now,
            ),
        ),
    ]
    if context.session_kind == "sqlite":
        with closing(sqlite3.connect(sqlite_path(context.session_url))) as db, db:
            for statement in _old_layout("INTEGER", "REAL"):
                db.execute(statement)
            for sql, params in rows:
                db.execute(sql, params)
        return
    import psycopg  # noqa: PLC0415 - only the postgres scenarios need it

    with psycopg.connect(context.session_url, autocommit=True) as conn, conn.transaction():
        for statement in _old_layout("BIGINT", "DOUBLE PRECISION"):
            conn.execute(statement)
        for sql, params in rows:
            conn.execute(sql.replace("?", "%s"), params)


@given(
    'a Python-built agent "{name}" on that store whose answer to "{question}" waits until it'
    " is released"
)
def step_held_agent(context: Context, name: str, question: str) -> None:
    scripted = _python_built(context, name)
    scripted.hold = question
    context.held_agent = scripted
    context.loop_calls = {}
    context.cleanups.append(scripted.released.set)  # never leave a call waiting


# --- When: one call at a time ---------------------------------------------------------


@when('"{name}" of "{file}" is asked "{question}" on thread "{thread}"')
def step_ask_file_agent(context: Context, name: str, file: str, question: str, thread: str) -> None:
    _call(context, _of_file(context, name, file), question, _config(thread))


@when('"{name}" of "{file}" is asked "{question}" on thread "{thread}", and its model fails')
def step_ask_and_fail(context: Context, name: str, file: str, question: str, thread: str) -> None:
    scripted = _of_file(context, name, file)
    scripted.fail_next = True
    _call(context, scripted, question, _config(thread))
    assert context.own_call["error"] is not None, "the run did not fail"
    assert not isinstance(context.own_call["error"], SessionError), context.own_call["error"]


@when('"{name}" of "{file}" resumes thread "{thread}"')
def step_resume_file_agent(context: Context, name: str, file: str, thread: str) -> None:
    _call(context, _of_file(context, name, file), "", _config(thread, resume=True))


@when('a Python-built agent "{name}" is asked "{question}" on thread "{thread}"')
@when('another Python-built agent "{name}" is asked "{question}" on thread "{thread}"')
def step_ask_python_agent(context: Context, name: str, question: str, thread: str) -> None:
    _call(context, _python_built(context, name), question, _config(thread))


# --- When: calls from several event loops ---------------------------------------------


def _start(
    context: Context,
    question: str,
    call: Callable[[], AIMessage],
    ended: threading.Event | None = None,
) -> threading.Thread:
    """Run ``call`` in a daemon OS thread; ``ended`` is set when it returns or raises."""
    result: dict[str, Any] = {"answer": None, "error": None}
    context.loop_calls[question] = result

    def target() -> None:
        try:
            result["answer"] = call()
        except BaseException as exc:  # checked by a later step
            result["error"] = exc
        finally:
            if ended is not None:
                ended.set()

    worker = threading.Thread(target=target, name=f"ask {question}", daemon=True)
    worker.start()
    threads: list[threading.Thread] = context.__dict__.setdefault("loop_threads", [])
    threads.append(worker)
    return worker


class _WaitLogged(logging.Handler):
    """Sets ``event`` when a call logs that it waits for the turn that runs in this process."""

    def __init__(self, event: threading.Event) -> None:
        super().__init__()
        self.event = event

    def emit(self, record: logging.LogRecord) -> None:
        if "waiting" in record.getMessage():
            self.event.set()


def _start_until_waiting(context: Context, question: str, call: Callable[[], AIMessage]) -> None:
    """Start ``call`` in an OS thread; return once it waits for the turn (it says so in the
    log) or has ended. Woken by the log record itself: no polling of a real clock."""
    settled = threading.Event()
    handler = _WaitLogged(settled)
    logger = logging.getLogger(_LOCKS_LOGGER)
    logger.addHandler(handler)  # before the call starts, so its first record is seen
    try:
        worker = _start(context, question, call, ended=settled)
        assert settled.wait(_WAIT_S), f"{worker.name}: neither waited nor ended"
    finally:
        logger.removeHandler(handler)


@when(
    'thread "{thread}" is asked "{question}" with asyncio.run in an OS thread, which takes the turn'
)
def step_loop_first(context: Context, thread: str, question: str) -> None:
    scripted: _Scripted = context.held_agent
    _start(
        context, question, lambda: asyncio.run(scripted.agent.ainvoke(question, _config(thread)))
    )
    assert scripted.entered.wait(_WAIT_S), f"{question!r} never reached the model"


@when(
    'thread "{thread}" is asked "{question}" with invoke on its background event loop, until'
    " it waits for the turn"
)
def step_loop_invoke(context: Context, thread: str, question: str) -> None:
    scripted: _Scripted = context.held_agent
    _start_until_waiting(
        context, question, lambda: scripted.agent.invoke(question, _config(thread))
    )


@when(
    'thread "{thread}" is asked "{question}" with asyncio.run in another OS thread, until it'
    " waits for the turn"
)
def step_loop_other(context: Context, thread: str, question: str) -> None:
    scripted: _Scripted = context.held_agent
    _start_until_waiting(
        context, question, lambda: asyncio.run(scripted.agent.ainvoke(question, _config(thread)))
    )


@when('the answer to "{question}" is released')
def step_release(context: Context, question: str) -> None:
    scripted: _Scripted = context.held_agent
    assert scripted.hold == question, scripted.hold
    scripted.released.set()
    for worker in context.loop_threads:
        worker.join(_WAIT_S)
        assert not worker.is_alive(), f"{worker.name} did not end"


# --- Then ----------------------------------------------------------------------------


@then('it answered "{text}"')
def step_answered(context: Context, text: str) -> None:
    error = context.own_call["error"]
    assert error is None, f"{type(error).__name__}: {error}"
    assert context.own_call["answer"].text == text, context.own_call["answer"].text


@then('its request held "{text}"')
def step_request_held(context: Context, text: str) -> None:
    scripted: _Scripted = context.own_call["agent"]
    requests = scripted.model.requests[context.own_mark :]
    assert requests, "the call sent no request"
    sent = "\n".join(m.text for m in requests[-1].messages)
    assert text in sent, sent


@then('the call is refused with SessionAgentMismatch: "{message}"')
def step_refused(context: Context, message: str) -> None:
    error = context.own_call["error"]
    answer = context.own_call["answer"]
    assert error is not None, f"the call was not refused; it answered {answer.text!r}"
    assert isinstance(error, SessionError), f"{type(error).__name__}: {error}"
    assert type(error).__name__ == "SessionAgentMismatch", f"{type(error).__name__}: {error}"
    assert str(error) == message.replace("<folder>", _folder(context)), str(error)


@then('the model of "{name}" of "{file}" got no request')
def step_no_request(context: Context, name: str, file: str) -> None:
    requests = _of_file(context, name, file).model.requests
    assert requests == [], [r.messages for r in requests]


_OF_FILE = re.compile(r'^"(?P<name>[^"]+)" of "(?P<file>[^"]+)"$')
_IN_PYTHON = re.compile(r'^"(?P<name>[^"]+)" built in Python$')


@then('thread "{thread}" holds the done turns "{questions}", recorded as {owner}')
def step_holds(context: Context, thread: str, questions: str, owner: str) -> None:
    session = _load(context, thread)
    assert [t.question.text for t in session.turns] == questions.split("|"), session.turns
    assert all(t.status == "done" for t in session.turns), [t.status for t in session.turns]
    of_file, in_python = _OF_FILE.match(owner), _IN_PYTHON.match(owner)
    if of_file is not None:
        want = (of_file["name"], str((context.tmp / of_file["file"]).resolve()))
    else:
        assert in_python is not None, owner
        want = (in_python["name"], None)
    recorded = getattr(session, "agent", None)
    got = None if recorded is None else (recorded.name, recorded.file)
    assert got == want, f"the thread is recorded as {got}, not {want}"


@then('thread "{thread}" has an unfinished turn "{question}"')
def step_unfinished(context: Context, thread: str, question: str) -> None:
    unfinished = _load(context, thread).unfinished()
    assert unfinished is not None, "the thread has no unfinished turn"
    assert unfinished.question.text == question, unfinished.question


@then('the CLI stderr is the one line "{line}"')
def step_stderr_line(context: Context, line: str) -> None:
    assert context.cli.stderr.splitlines() == [line.replace("<folder>", _folder(context))], (
        context.cli.stderr
    )


@then('the three calls answered "{first}", "{second}" and "{third}", none refused')
def step_three_answered(context: Context, first: str, second: str, third: str) -> None:
    calls: dict[str, dict[str, Any]] = context.loop_calls
    problems = [
        f"{question!r}: {type(call['error']).__name__}: {call['error']}"
        for question, call in calls.items()
        if call["error"] is not None
    ]
    assert not problems, "; ".join(problems)
    answers = [call["answer"].text for call in calls.values()]
    assert answers == [first, second, third], answers
