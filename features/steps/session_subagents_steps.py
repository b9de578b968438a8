"""Steps for session_subagents.feature: sub-agents inside a session turn, session IDs, resume.

Both agents of the scenario's file talk to the fake model server
(:class:`leanloop.testing.server.FakeModelServer`) over HTTP, started for the scenario. How
long a sub-agent takes with and without a session is a benchmark
(``benchmarks/session_subagent_overhead.py``), not a check here. The CLI runs in a
subprocess (as a user runs it); the Python scenarios build the agents with
``LLMAgent.from_file``. The workspace file (``ws/notes.txt``) is written by the shared
sub-agent step (``subagents_steps.py``); ``the CLI runs``/``exits with``/``stdout is``
come from ``cli_steps.py``.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import StructuredTool
from support.aio import run as run_async

from leanloop.agent import LLMAgent
from leanloop.exceptions import RunFailed, SessionError
from leanloop.sessions import Session, open_store, sqlite_url
from leanloop.testing.server import FakeModelServer, Reply

_CALL = re.compile(r"^call (?P<name>[\w.\-]+) (?P<args>\{.*\})$")
_FAIL = re.compile(r'^fail (?P<status>\d{3}) "(?P<message>.*)"$')
_CLI_TIMEOUT_S = 120


def _server(context: Context) -> FakeModelServer:
    server: FakeModelServer = context.http_server
    return server


def _bodies(context: Context) -> list[dict[str, Any]]:
    """The body of every chat request the server received, in order."""
    return _server(context).chat_bodies()


def _response(cell: str) -> Reply:
    """One reply of a script table: ``call NAME {ARGS}``, ``fail STATUS "MESSAGE"``, or text."""
    call = _CALL.match(cell)
    if call:
        return Reply(tool_calls=[{"name": call["name"], "arguments": json.loads(call["args"])}])
    fail = _FAIL.match(cell)
    if fail:
        status = int(fail["status"])
        body = {"error": {"code": status, "message": fail["message"], "type": "server_error"}}
        return Reply(status=status, error=body)
    return Reply(content=cell)


def _script(context: Context) -> list[Reply]:
    return [_response(row["reply"]) for row in context.table]


def _cli(context: Context, argv: list[str], *, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """``python -m leanloop ARGV`` in the scenario folder; stdin is ``stdin`` (never a tty)."""
    context.cli = subprocess.run(
        [sys.executable, "-m", "leanloop", *argv],
        cwd=context.tmp,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=_CLI_TIMEOUT_S,
        check=False,
    )
    result: subprocess.CompletedProcess[str] = context.cli
    return result


def _store_path(context: Context, name: str) -> Path:
    """The default session store of the agents file ``name``: ``.leanloop/sessions.db``."""
    return (context.tmp / name).parent / ".leanloop" / "sessions.db"


def _load(context: Context, name: str, thread: str) -> Session:
    async def load() -> Session:
        store = open_store(sqlite_url(_store_path(context, name)))
        try:
            return await store.load(thread)
        finally:
            await store.close()

    return run_async(load())


def _messages(session: Session) -> list[BaseMessage]:
    """Every message the session stores: each turn's question, steps and answer."""
    found: list[BaseMessage] = []
    for turn in session.turns:
        found.append(turn.question)
        for _, step in turn.steps:
            found.extend(step)
        if turn.answer is not None:
            found.append(turn.answer)
    return found


def _tool_names(request: dict[str, Any]) -> list[str]:
    return [tool["function"]["name"] for tool in request.get("tools") or []]


def _lead_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lead's requests (the ones that offer the researcher), in order."""
    return [r for r in requests if "researcher" in _tool_names(r)]


def _python_report(context: Context) -> dict[str, Any]:
    answer: AIMessage = context.py_answer
    report: dict[str, Any] = answer.response_metadata["leanloop"]
    return report


# --- Given ---------------------------------------------------------------------------


@given("the scripted server")
def step_server(context: Context) -> None:
    # No /tokenize or /apply-template (404), as a plain OpenAI-compatible server: the
    # budget estimates its counts. An empty queue answers 500.
    server = FakeModelServer(model="scripted-model", n_ctx=8192, tokenizer=None, template=None)
    context.cleanups.append(server.start().stop)
    context.http_server = server
    context.mark = 0


@given('the agents file "{name}" on the scripted server:')
def step_agents_file(context: Context, name: str) -> None:
    text = textwrap.dedent(context.text).replace("<server>", _server(context).base_url)
    (context.tmp / name).write_text(text + "\n", encoding="utf-8")


@given("each run's script is:")
def step_run_script(context: Context) -> None:
    context.run_script = _script(context)


@given("the scripted server's script:")
def step_queue(context: Context) -> None:
    _server(context).queue(*_script(context))
    context.mark = len(_bodies(context))


@given('session "{thread}" of "{name}" has a turn "{question}" whose process died')
def step_dead_turn(context: Context, thread: str, name: str, question: str) -> None:
    path = _store_path(context, name)

    async def begin() -> None:
        store = open_store(sqlite_url(path))
        try:
            await store.begin_turn(thread, HumanMessage(question))
        finally:
            await store.close()

    run_async(begin())
    # A pid that existed and is gone: a child that ran and was reaped.
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE leanloop_turns SET owner_pid = ?, owner_started = ? WHERE thread_id = ?",
            (gone.pid, 1, thread),
        )


# --- When ----------------------------------------------------------------------------


@when('the CLI command "{command}" runs the script as "{label}"')
def step_script_run(context: Context, command: str, label: str) -> None:
    server = _server(context)
    server.queue(*context.run_script)
    mark = len(_bodies(context))
    cli = _cli(context, shlex.split(command))
    assert cli.returncode == 0, f"{label}: exit {cli.returncode}\n{cli.stdout}\n{cli.stderr}"
    assert server.remaining() == 0, f"{label}: {server.remaining()} replies left unused"
    runs = getattr(context, "script_runs", None)
    if runs is None:
        runs = context.script_runs = {}
    runs[label] = {"report": json.loads(cli.stdout), "requests": _bodies(context)[mark:]}


@when('the CLI chat "{command}" is sent the lines "{lines}"')
def step_chat(context: Context, command: str, lines: str) -> None:
    _cli(context, shlex.split(command), stdin="".join(f"{line}\n" for line in lines.split("|")))


@when('the agent "{name}" is asked "{question}" in Python with thread_id "{thread}"')
def step_python_ask(context: Context, name: str, question: str, thread: str) -> None:
    agent = LLMAgent.from_file(context.tmp / "agents.yaml", name)
    _python_run(context, agent, question, {"configurable": {"thread_id": thread}})


@when('the agent "{name}" resumes thread "{thread}" in Python')
def step_python_resume(context: Context, name: str, thread: str) -> None:
    # A new agent, as a new process would build it after the one that failed.
    agent = LLMAgent.from_file(context.tmp / "agents.yaml", name)
    _python_run(context, agent, "", {"configurable": {"thread_id": thread, "resume": True}})


@when(
    'the agent "{name}", with a tool "{tool}" that asks the agent "{helper}" in the caller\'s'
    ' config, is asked "{question}" in Python with thread_id "{thread}"'
)
def step_python_nested(
    context: Context, name: str, tool: str, helper: str, question: str, thread: str
) -> None:
    inner = LLMAgent.from_file(context.tmp / "agents.yaml", helper)

    async def ask(task: str) -> str:
        # No config passed: LangChain hands the caller's on, thread_id included.
        return (await inner.ainvoke(task)).text

    asker = StructuredTool.from_function(
        coroutine=ask, name=tool, description=f"Ask the {helper} a task."
    )
    agent = LLMAgent.from_file(context.tmp / "agents.yaml", name, tools=[asker])
    _python_run(context, agent, question, {"configurable": {"thread_id": thread}})


def _python_run(context: Context, agent: LLMAgent, question: str, config: Any) -> None:
    context.py_answer = context.py_error = None
    try:
        context.py_answer = agent.invoke(question, config)
    except (RunFailed, SessionError) as exc:
        context.py_error = exc


@when("leanloop run is given the session ID {literal}")
def step_run_blank(context: Context, literal: str) -> None:
    thread = ast.literal_eval(literal)
    _cli(context, ["run", "agents.yaml", "What port?", "--agent", "lead", "--session", thread])


@when("leanloop chat is given the session ID {literal}")
def step_chat_blank(context: Context, literal: str) -> None:
    thread = ast.literal_eval(literal)
    argv = ["chat", "agents.yaml", "--agent", "lead", "--session", thread]
    _cli(context, argv, stdin="What port?\n")


@when("Python invoke is given the session ID {literal}")
def step_python_blank(context: Context, literal: str) -> None:
    agent = LLMAgent.from_file(context.tmp / "agents.yaml", "lead")
    _python_run(
        context, agent, "What port?", {"configurable": {"thread_id": ast.literal_eval(literal)}}
    )
    context.cli = None


@when("the printed resume command is run")
def step_printed_resume(context: Context) -> None:
    line = context.cli.stderr.strip().splitlines()[-1]
    command = line.partition("; finish it with: ")[2]
    words = shlex.split(command)
    assert words[:2] == ["leanloop", "run"], line
    _cli(context, words[1:])


# --- Then ----------------------------------------------------------------------------


def _runs(context: Context) -> dict[str, dict[str, Any]]:
    runs: dict[str, dict[str, Any]] = context.script_runs
    assert len(runs) == 2, sorted(runs)
    return runs


def _researcher_call(label: str, report: dict[str, Any]) -> dict[str, Any]:
    calls = report["tool_calls"]
    assert [c["name"] for c in calls] == ["researcher"], f"{label}: {calls}"
    call: dict[str, Any] = calls[0]
    assert call["ok"] and not call["timed_out"], f"{label}: the call failed: {call}"
    sub = call["sub_report"]
    assert isinstance(sub, dict), f"{label}: the call nests no sub-run: {call}"
    return sub


@then(
    'in both runs the lead answered "{answer}" after a researcher call that nested a sub-run'
    ' stopped with "{reason}"'
)
def step_both_answered(context: Context, answer: str, reason: str) -> None:
    for label, run in _runs(context).items():
        report = run["report"]
        assert report["answer"] == answer, f"{label}: {report['answer']!r}"
        sub = _researcher_call(label, report)
        assert sub["stop_reason"] == reason, f"{label}: {sub['stop_reason']}"
        assert [c["name"] for c in sub["tool_calls"]] == ["read_file"], sub["tool_calls"]


@then("in both runs the lead's last request holds the researcher's answer \"{text}\"")
def step_both_results(context: Context, text: str) -> None:
    for label, run in _runs(context).items():
        last = _lead_requests(run["requests"])[-1]["messages"][-1]
        assert last["role"] == "tool" and last["content"] == text, f"{label}: {last}"


@then('the sub-run of "{label}" reports no session')
def step_sub_no_session(context: Context, label: str) -> None:
    report = _runs(context)[label]["report"]
    assert report["session"] is not None, "the lead's run was no session turn"
    sub = _researcher_call(label, report)
    assert sub.get("session") is None, sub.get("session")


@then('the CLI stdout holds the answers "{first}" and "{second}"')
def step_chat_answers(context: Context, first: str, second: str) -> None:
    lines = [line.strip() for line in context.cli.stdout.splitlines() if line.strip()]
    assert lines == [first, second], f"{lines}\n{context.cli.stderr}"


@then(
    'the session store beside "{name}" holds only the thread "{thread}", with {done:d} done turns'
)
def step_store_threads(context: Context, name: str, thread: str, done: int) -> None:
    with sqlite3.connect(_store_path(context, name)) as db:
        threads = [row[0] for row in db.execute("SELECT thread_id FROM leanloop_threads")]
    assert threads == [thread], threads
    session = _load(context, name, thread)
    finished = [turn.number for turn in session.turns if turn.status == "done"]
    assert len(finished) == done, [(t.number, t.status) for t in session.turns]


@then('every message stored in thread "{thread}" is the lead\'s: no "{tool}" call and no "{raw}"')
def step_stored_own(context: Context, thread: str, tool: str, raw: str) -> None:
    messages = _messages(_load(context, "agents.yaml", thread))
    assert messages, "nothing stored"
    for message in messages:
        if isinstance(message, AIMessage):
            names = [call["name"] for call in message.tool_calls]
            assert tool not in names, f"a {tool} call is stored: {message}"
        if isinstance(message, ToolMessage):
            assert message.name == "researcher", f"a result of {message.name} is stored"
        assert raw not in message.text, f"{raw!r} is stored: {message}"
        assert "You research" not in message.text, f"the researcher's prompt is stored: {message}"


@then('the stored results of thread "{thread}" are the researcher\'s answers "{a}" and "{b}"')
def step_stored_results(context: Context, thread: str, a: str, b: str) -> None:
    messages = _messages(_load(context, "agents.yaml", thread))
    results = [m.text for m in messages if isinstance(m, ToolMessage)]
    assert results == [a, b], results


@then('the lead\'s first request of turn 2 holds "{text}" but no lead request holds "{raw}"')
def step_lead_requests(context: Context, text: str, raw: str) -> None:
    lead = _lead_requests(_bodies(context)[context.mark :])
    assert len(lead) == 4, f"{len(lead)} lead requests"
    assert text in json.dumps(lead[2]["messages"]), lead[2]["messages"]
    for request in lead:
        assert raw not in json.dumps(request["messages"]), request["messages"]


@then('the Python run failed mentioning "{text}"')
def step_python_failed(context: Context, text: str) -> None:
    assert context.py_error is not None, context.py_answer
    assert text in str(context.py_error), str(context.py_error)


@then('the Python answer is "{answer}"')
def step_python_answer(context: Context, answer: str) -> None:
    assert context.py_error is None, f"{type(context.py_error).__name__}: {context.py_error}"
    assert context.py_answer.text == answer, context.py_answer.text


@then("the Python run's report says it resumed after step {step:d}")
def step_python_resumed(context: Context, step: int) -> None:
    session = _python_report(context)["session"]
    assert session["resumed_from"] == step, session


@then('the scripted server got {count:d} request since the resume, holding "{text}"')
def step_since_resume(context: Context, count: int, text: str) -> None:
    requests = _bodies(context)[context.mark :]
    assert len(requests) == count, [r["messages"] for r in requests]
    assert text in json.dumps(requests[0]["messages"]), requests[0]["messages"]


@then('call {n:d} of the Python run failed at once with "{text}"')
def step_failed_at_once(context: Context, n: int, text: str) -> None:
    call = _python_report(context)["tool_calls"][n - 1]
    assert not call["ok"] and not call["timed_out"], call
    results = [m["content"] for m in _bodies(context)[-1]["messages"] if m["role"] == "tool"]
    assert len(results) == 1 and text in results[0], results


@then("the scripted server got {count:d} requests in all")
def step_requests_in_all(context: Context, count: int) -> None:
    requests = _bodies(context)
    assert len(requests) == count, [r["messages"] for r in requests]


@then('it is refused with the one line "{message}"')
def step_refused(context: Context, message: str) -> None:
    if context.cli is None:  # the Python call
        assert isinstance(context.py_error, SessionError), context.py_error or context.py_answer
        assert str(context.py_error) == message, str(context.py_error)
        return
    cli = context.cli
    assert cli.returncode == 2, f"exit {cli.returncode}\n{cli.stdout}\n{cli.stderr}"
    assert cli.stderr.splitlines() == [message], cli.stderr
    assert cli.stdout == "", cli.stdout


@then('the CLI stderr ends with "{text}"')
def step_stderr_ends(context: Context, text: str) -> None:
    stderr = context.cli.stderr.rstrip("\n")
    assert stderr.endswith(text), stderr
