"""Steps for tool_hardening.feature: bounded time and text-only results for every tool.

The agents are the shared scripted-model agents of :mod:`support.runs` (the reply script
of :mod:`support.script`), with this feature's misbehaving tools added next to the built-in
ones. Runs that would hang a process on a regression (a search holding the GIL, a sync tool
that never returns) go to a child Python process with a deadline, so a regression fails
the scenario instead of stalling the suite.

Runs in this process go on virtual time (``support.aio.new_virtual_loop``, ADR 0027): an
async tool that never returns meets its tool_timeout in no real time. A sync tool runs in a
thread the loop knows of (an executor's), so while it runs the clock follows real time.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from support import runs
from support.aio import new_virtual_loop

from leanloop.agent import LLMAgent
from leanloop.exceptions import LeanloopError

FEATURES = Path(__file__).resolve().parent.parent
CHILD_DEADLINE_S = 40
"""A child process still running after this long has hung: the scenario fails."""


# --- the misbehaving tools -----------------------------------------------------------


@dataclass
class Misbehaviour:
    """What this feature's tools did, and the switch that ends the sync hang."""

    started: list[str] = field(default_factory=list)
    cancelled: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


class Unprintable:
    """A result whose ``__str__`` (and ``__repr__``) raises."""

    def __str__(self) -> str:
        raise RuntimeError("no text for this object")

    __repr__ = __str__


def _misbehaviour(context: Context) -> Misbehaviour:
    found = getattr(context, "misbehaviour", None)
    if found is None:
        found = context.misbehaviour = Misbehaviour()
        # "Forever" ends with the scenario, so a regression cannot keep the suite's
        # process from exiting.
        context.cleanups.append(found.release.set)
    return found


def _hang_async(state: Misbehaviour) -> BaseTool:
    async def hang_async(label: str) -> str:
        """Wait forever (an async tool)."""
        state.started.append("hang_async")
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            state.cancelled.append("hang_async")
            raise
        return label

    return StructuredTool.from_function(coroutine=hang_async)


def _hang_sync(state: Misbehaviour) -> BaseTool:
    def hang_sync(label: str) -> str:
        """Block forever (a sync tool)."""
        state.started.append("hang_sync")
        state.release.wait()
        return label

    return StructuredTool.from_function(func=hang_sync)


def _huge_number(state: Misbehaviour) -> BaseTool:
    def huge_number(label: str) -> int:
        """Return a number too long to be written as text."""
        return 10**5000

    return StructuredTool.from_function(func=huge_number)


def _unprintable(state: Misbehaviour) -> BaseTool:
    async def unprintable(label: str) -> Any:
        """Return an object that cannot be shown as text."""
        return Unprintable()

    return StructuredTool.from_function(coroutine=unprintable)


def _surrogates(state: Misbehaviour) -> BaseTool:
    def surrogates(label: str) -> str:
        """Return text with a lone surrogate and control characters."""
        return "bad \ud800 name, \x1b[31mred\x00 nul\r\nnext\tcell"

    return StructuredTool.from_function(func=surrogates)


MISBEHAVING: dict[str, Callable[[Misbehaviour], BaseTool]] = {
    "hang_async": _hang_async,
    "hang_sync": _hang_sync,
    "huge_number": _huge_number,
    "unprintable": _unprintable,
    "surrogates": _surrogates,
}


# --- Given ---------------------------------------------------------------------------


@given('an agent that also has the tools "{names}", with {settings}, and the script:')
def step_agent_misbehaving(context: Context, names: str, settings: str) -> None:
    run = runs.start(context, runs.parse_settings(settings))
    state = _misbehaviour(context)
    extra = [MISBEHAVING[name.strip()](state) for name in names.split(",")]
    run.agent = LLMAgent.from_spec(
        run.agent.spec,
        model=run.model,
        tools=[*run.agent.tools, *extra],
        pruning_model=run.agent.pruning_model,
    )


@given('the workspace has "{name}" with a single line of "{word}" repeated {count:d} times')
def step_workspace_line(context: Context, name: str, word: str, count: int) -> None:
    target = runs.setup(context).workspace / name
    target.write_text(word * count + "\n", encoding="utf-8")


@given('the workspace has a file named with the bytes "{name}"')
def step_workspace_bytes_name(context: Context, name: str) -> None:
    raw = codecs.decode(name, "unicode_escape").encode("latin-1")
    folder = os.fsencode(runs.setup(context).workspace)
    with open(os.path.join(folder, raw), "wb") as handle:
        handle.write(b"hello\n")


# --- When: in this process, with a watchdog --------------------------------------------


@when('the agent is asked "{question}" within {limit:d} s')
def step_ask_within(context: Context, question: str, limit: int) -> None:
    """Ask on a loop of its own; a run still going after ``limit`` seconds fails the step.

    The loop's clock is virtual, so ``limit`` and the run's seconds are the loop's: a hang
    that the tool's timeout no longer ends fails the step at once.

    Not ``asyncio.run``: it would wait for the loop's default executor, where a regression
    leaves a hung sync tool, and hang the suite instead of failing the scenario.
    """
    run = runs.current(context)
    # A step that needs a blocking call to take time (tool_isolation's) asks for the real
    # clock: a virtual one does not move while the loop is held.
    loop = asyncio.new_event_loop() if getattr(context, "real_clock", False) else new_virtual_loop()
    started = loop.time()
    try:
        call = asyncio.wait_for(run.agent.ainvoke(question, run.config), limit)
        run.answer = loop.run_until_complete(call)
    except TimeoutError:
        raise AssertionError(f"the run had not answered after {limit} s") from None
    except LeanloopError as exc:
        raise AssertionError(f"the run failed: {type(exc).__name__}: {exc}") from exc
    finally:
        context.run_seconds = loop.time() - started
        _close(loop)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """End the loop's tasks and close it, without waiting for its default executor."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        gathered = asyncio.gather(*pending, return_exceptions=True)
        loop.run_until_complete(asyncio.wait_for(gathered, 2))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.close()


# --- When: in a child process ----------------------------------------------------------

_CHILD = r"""
import asyncio, json, sys, threading, time
from pathlib import Path

from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool

from leanloop.agent import LLMAgent
from leanloop.spec.types import AgentSpec, ModelSpec
from leanloop.testing import ScriptedChatModel
from support.script import replies


def hang_sync(label: str) -> str:
    '''Block forever (a sync tool).'''
    threading.Event().wait()
    return label


EXTRA = {"hang_sync": lambda: StructuredTool.from_function(func=hang_sync)}


async def one(plan, run, t0):
    await asyncio.sleep(run.get("delay", 0))  # real time: this run starts later in a real process
    started = time.monotonic()
    model = ScriptedChatModel(replies=replies(run["script"]))
    spec = AgentSpec(
        name=run["name"],
        model=ModelSpec(class_path="leanloop.testing:ScriptedChatModel", model=run["name"]),
        tools=tuple(run.get("builtin", ())),
        workspace=Path(plan["workspace"]),
        **run.get("settings", {}),
    )
    tools = [*LLMAgent.from_spec(spec, model=model).tools]
    tools += [EXTRA[name]() for name in run.get("extra", ())]
    answer = await LLMAgent.from_spec(spec, model=model, tools=tools).ainvoke(run["question"])
    ended = time.monotonic()
    results = [m.text for m in model.requests[-1].messages if isinstance(m, ToolMessage)]
    return {
        "name": run["name"],
        "answer": answer.text,
        "started": started - t0,
        "ended": ended - t0,
        "results": results,
        "report": answer.response_metadata["leanloop"],
    }


async def main(plan):
    t0 = time.monotonic()
    return await asyncio.gather(*(one(plan, run, t0) for run in plan["runs"]))


done = asyncio.run(main(json.loads(sys.argv[1])))
print(json.dumps({"runs": done, "answered_at": time.time()}), flush=True)
"""


@dataclass
class ChildRun:
    """What the child process printed, and when it exited."""

    runs: dict[str, dict[str, Any]]
    answered_at: float
    exited_at: float
    returncode: int


def _run_child(context: Context, plan_runs: list[dict[str, Any]]) -> ChildRun:
    plan = {"workspace": str(runs.setup(context).workspace), "runs": plan_runs}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FEATURES), *sys.path])}
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps(plan)],
            capture_output=True,
            text=True,
            timeout=CHILD_DEADLINE_S,
            env=env,
            cwd=context.tmp,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout
        raise AssertionError(
            f"the child process was still running after {CHILD_DEADLINE_S} s; it printed {out!r}"
        ) from None
    exited_at = time.time()
    assert done.stdout.strip(), f"the child printed nothing (rc {done.returncode}):\n{done.stderr}"
    printed = json.loads(done.stdout.strip().splitlines()[-1])
    found = {run["name"]: run for run in printed["runs"]}
    return ChildRun(found, printed["answered_at"], exited_at, done.returncode)


def _child(context: Context) -> ChildRun:
    found: ChildRun | None = getattr(context, "child_run", None)
    assert found is not None, "no child process ran"
    return found


@when(
    'a separate process runs an agent that searches the workspace for "{pattern}"'
    " while another agent lists and reads files"
)
def step_child_search(context: Context, pattern: str) -> None:
    searcher = {
        "name": "searcher",
        "builtin": ["search"],
        "script": [f"call search {json.dumps({'pattern': pattern})}", "Search done."],
        "question": "Find it.",
    }
    other = {
        "name": "other",
        "builtin": ["list_files", "read_file"],
        "script": ["call list_files {}", 'call read_file {"path": "words.txt"}', "Other done."],
        "question": "Read the files.",
        "delay": 0.5,
    }
    context.child_run = _run_child(context, [searcher, other])


@when('a separate process runs an agent with the tools "{names}" and the script:')
def step_child_script(context: Context, names: str) -> None:
    agent = {
        "name": "agent",
        "builtin": [name.strip() for name in names.split(",")],
        "script": [row["reply"] for row in context.table],
        "question": "Go on.",
    }
    context.child_run = _run_child(context, [agent])


@when("a separate process runs an agent with tool_timeout {limit:d} whose sync tool never returns")
def step_child_hang(context: Context, limit: int) -> None:
    hanger = {
        "name": "hanger",
        "extra": ["hang_sync"],
        "script": ['call hang_sync {"label": "x"}', "Gave up waiting."],
        "question": "Wait for it.",
        "settings": {"tool_timeout": limit},
    }
    context.child_run = _run_child(context, [hanger])


# --- Then ----------------------------------------------------------------------------


@then("the run took less than {limit:d} s")
def step_run_took(context: Context, limit: int) -> None:
    seconds: float = context.run_seconds
    assert seconds < limit, f"the run took {seconds:.2f} s"


@then('report call {n:d} timed out after "{name}" ran')
def step_report_timed_out(context: Context, n: int, name: str) -> None:
    call = runs.current(context).report["tool_calls"][n - 1]
    assert call["name"] == name and call["timed_out"] is True, call
    assert call["ok"] is False and call["fate"] == "failed", call
    assert name in _misbehaviour(context).started, _misbehaviour(context).started


@then('the tool "{name}" was cancelled')
def step_tool_cancelled(context: Context, name: str) -> None:
    cancelled = _misbehaviour(context).cancelled
    assert name in cancelled, f"{name} was not cancelled: {cancelled}"


@then("the hung sync tool was left running in a daemon thread")
def step_daemon_left(context: Context) -> None:
    workers = [t for t in threading.enumerate() if t.name.startswith("leanloop-tool-")]
    assert workers, [t.name for t in threading.enumerate()]
    assert all(t.daemon for t in workers), [(t.name, t.daemon) for t in workers]


def _results(context: Context, n: int) -> list[ToolMessage]:
    messages = runs.current(context).request(n).messages
    return [m for m in messages if isinstance(m, ToolMessage)]


@then('request {n:d} has the clean tool result "{text}"')
def step_clean_result(context: Context, n: int, text: str) -> None:
    expected = codecs.decode(text, "unicode_escape")
    got = [m.text for m in _results(context, n)]
    assert got[-1:] == [expected], got


@then('request {n:d} has a tool result starting "{text}"')
def step_result_starts(context: Context, n: int, text: str) -> None:
    got = [m.text for m in _results(context, n)]
    assert any(t.startswith(text) for t in got), got
    assert all("\n" not in t for t in got if t.startswith("error:")), got


@then("every message of request {n:d} can be sent as UTF-8")
def step_utf8(context: Context, n: int) -> None:
    for message in runs.current(context).request(n).messages:
        message.text.encode("utf-8")  # raises on a lone surrogate
    report = runs.current(context).report
    json.dumps(report, ensure_ascii=False).encode("utf-8")


@then('the searching agent answered within {limit:d} s, its search result saying "{text}"')
def step_child_searcher(context: Context, limit: int, text: str) -> None:
    searcher = _child(context).runs["searcher"]
    assert searcher["answer"] == "Search done.", searcher
    took = searcher["ended"] - searcher["started"]
    assert took < limit, f"the searching run took {took:.2f} s"
    assert len(searcher["results"]) == 1 and text in searcher["results"][0], searcher["results"]


@then('that agent answered "{answer}" within {limit:d} s, its tool result saying "{text}"')
def step_child_agent(context: Context, answer: str, limit: int, text: str) -> None:
    agent = _child(context).runs["agent"]
    assert agent["answer"] == answer, agent
    took = agent["ended"] - agent["started"]
    assert took < limit, f"the run took {took:.2f} s"
    assert len(agent["results"]) == 1 and text in agent["results"][0], agent["results"]


@then("the other agent answered within {limit:d} s of starting")
def step_child_other(context: Context, limit: int) -> None:
    other = _child(context).runs["other"]
    assert other["answer"] == "Other done.", other
    took = other["ended"] - other["started"]
    assert took < limit, f"the other run took {took:.2f} s"


@then("the other agent answered before the search ended")
def step_child_other_first(context: Context) -> None:
    found = _child(context).runs
    assert found["other"]["ended"] < found["searcher"]["ended"], found


@then('the process printed the answer "{answer}" after the tool result "{result}"')
def step_child_answer(context: Context, answer: str, result: str) -> None:
    hanger = _child(context).runs["hanger"]
    assert hanger["answer"] == answer, hanger
    assert hanger["results"] == [result], hanger["results"]
    assert hanger["report"]["tool_calls"][0]["timed_out"] is True, hanger["report"]


@then("the process exited with status 0 within {limit:d} s of the answer")
def step_child_exit(context: Context, limit: int) -> None:
    child = _child(context)
    assert child.returncode == 0, child.returncode
    late = child.exited_at - child.answered_at
    assert late < limit, f"the process exited {late:.2f} s after the answer"
