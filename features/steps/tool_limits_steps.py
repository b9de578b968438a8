"""Steps for tool_limits.feature: per-tool timeout and retries, and tools added from Python.

Each scenario writes an agents file and a tools module (named after the scenario, so no
two scenarios share an imported module) into a temporary folder; ``TOOLS`` in a tools
entry stands for that module. The agent's model is a ``ScriptedChatModel`` declared in
the file, so the agent is built exactly as ``LLMAgent.from_file`` builds it.
"""

from __future__ import annotations

import itertools
import json
import tempfile
import textwrap
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from behave import given, then, when
from behave.runner import Context
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool

from leanloop.agent import LLMAgent
from leanloop.exceptions import SpecError
from leanloop.spec import load_specs
from leanloop.testing import ScriptedChatModel

_COUNTER = itertools.count(1)

_TOOLS_MODULE = '''
"""Tools of one tool_limits scenario."""

import asyncio

from leanloop.exceptions import TransientToolError

CALLS = {"flaky": 0, "broken": 0}


async def sleep_forever(label: str) -> str:
    """Sleep forever."""
    await asyncio.Event().wait()
    return label


def flaky(label: str) -> str:
    """Fail twice with a transient error, then work."""
    CALLS["flaky"] += 1
    if CALLS["flaky"] < 3:
        raise TransientToolError(f"busy (attempt {CALLS['flaky']})")
    return f"ok on attempt {CALLS['flaky']}"


def broken(label: str) -> str:
    """Always fail, for good."""
    CALLS["broken"] += 1
    raise ValueError("broken for good")
'''


def _folder(context: Context) -> Path:
    folder = getattr(context, "limits_folder", None)
    if folder is None:
        made = tempfile.TemporaryDirectory(prefix="leanloop-limits-")
        context.cleanups.append(made.cleanup)
        folder = context.limits_folder = Path(made.name)
        context.limits_module = f"limit_tools_{next(_COUNTER)}_{int(time.time() * 1000)}"
        (folder / f"{context.limits_module}.py").write_text(_TOOLS_MODULE)
    return Path(folder)


def _write_file(context: Context) -> Path:
    folder = _folder(context)
    if getattr(context, "limits_document", None) is not None:
        path = folder / "agents.yaml"
        path.write_text(context.limits_document)
        return path
    tools = context.limits_tools.replace("TOOLS", context.limits_module)
    replies = json.dumps(getattr(context, "limits_replies", ["Nothing to do."]))
    settings = "".join(f"    {line}\n" for line in getattr(context, "limits_settings", []))
    text = (
        "version: 1\n"
        "agents:\n"
        "  a:\n"
        "    model:\n"
        "      class: leanloop.testing:ScriptedChatModel\n"
        f"      kwargs: {{replies: {replies}}}\n"
        f"    tools: {tools}\n"
        f"{settings}"
    )
    path = folder / "agents.yaml"
    path.write_text(text)
    return path


def _module(context: Context) -> Any:
    """The scenario's tools module, as the agent imported it.

    It lies beside the agents file, so it was imported for that folder alone and is in no
    ``sys.modules`` (ADR 0023): its namespace is reached through one of the agent's tools.
    """
    for tool in context.limits_agent.tools:
        function = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
        if getattr(function, "__module__", None) == context.limits_module:
            return SimpleNamespace(**function.__globals__)
    raise AssertionError(f"no tool of the agent comes from {context.limits_module}")


@given("an agents file whose agent has tool_timeout {seconds:d} and the tools:")
def step_file_with_timeout(context: Context, seconds: int) -> None:
    context.limits_settings = [f"tool_timeout: {seconds}"]
    context.limits_tools = textwrap.dedent(context.text).strip()


@given("the agents file:")
def step_document(context: Context) -> None:
    context.limits_document = textwrap.dedent(context.text).strip() + "\n"


@when('the file\'s agent "{name}" is asked "{question}"')
def step_ask_named(context: Context, name: str, question: str) -> None:
    context.limits_agent = LLMAgent.from_file(_write_file(context), name)
    started = time.monotonic()
    context.limits_answer = context.limits_agent.invoke(question)
    context.limits_seconds = time.monotonic() - started


@then('the researcher\'s model was asked "{task}"')
def step_researcher_asked(context: Context, task: str) -> None:
    (tool,) = context.limits_agent.tools
    closure = tool.coroutine.__closure__ or ()
    (agent,) = [cell.cell_contents for cell in closure if isinstance(cell.cell_contents, LLMAgent)]
    asked = [str(request.messages[-1].content) for request in agent.model.requests]
    assert asked == [task], asked


@then('report call {n:d} has a note starting "{start}"')
def step_note_start(context: Context, n: int, start: str) -> None:
    notes = _record(context, n)["notes"]
    assert any(note.startswith(start) for note in notes), notes


@given("an agents file whose agent has the tools:")
def step_file(context: Context) -> None:
    context.limits_tools = textwrap.dedent(context.text).strip()


@given('its model calls {tool} {args} and then answers "{answer}"')
def step_script(context: Context, tool: str, args: str, answer: str) -> None:
    call = {"tool_calls": [{"name": tool, "args": json.loads(args)}]}
    context.limits_replies = [call, answer]


def _extra_tool(name: str) -> StructuredTool:
    def extra(label: str) -> str:
        """Echo the label (a tool given in Python)."""
        return f"extra: {label}"

    return StructuredTool.from_function(func=extra, name=name)


@when("the file's agent is built")
def step_build(context: Context) -> None:
    context.limits_agent = LLMAgent.from_file(_write_file(context), "a")


@when('the file\'s agent is built with the extra tool "{name}"')
def step_build_extra(context: Context, name: str) -> None:
    context.limits_error = None
    try:
        context.limits_agent = LLMAgent.from_file(
            _write_file(context), "a", tools=[_extra_tool(name)]
        )
    except SpecError as exc:
        context.limits_error = exc


@when('the file\'s agent is asked "{question}"')
def step_ask(context: Context, question: str) -> None:
    if getattr(context, "limits_agent", None) is None:
        context.limits_agent = LLMAgent.from_file(_write_file(context), "a")
    started = time.monotonic()
    context.limits_answer = context.limits_agent.invoke(question)
    context.limits_seconds = time.monotonic() - started


@when("the agents file is validated")
def step_validate(context: Context) -> None:
    context.limits_error = None
    try:
        load_specs(_write_file(context))
    except SpecError as exc:
        context.limits_error = exc


@then('the file\'s agent answered "{answer}" within {limit:d} s')
def step_answered(context: Context, answer: str, limit: int) -> None:
    assert context.limits_answer.text == answer, context.limits_answer.text
    assert context.limits_seconds < limit, f"the run took {context.limits_seconds:.2f} s"


def _tool_messages(context: Context) -> list[ToolMessage]:
    model = context.limits_agent.model
    assert isinstance(model, ScriptedChatModel)
    last = model.requests[-1].messages
    return [message for message in last if isinstance(message, ToolMessage)]


@then('the tool result the model received is "{text}"')
def step_tool_result(context: Context, text: str) -> None:
    results = [str(message.content) for message in _tool_messages(context)]
    assert results == [text], results


def _record(context: Context, n: int) -> dict[str, Any]:
    calls = context.limits_answer.response_metadata["leanloop"]["tool_calls"]
    record: dict[str, Any] = calls[n - 1]
    return record


@then("report call {n:d} timed out")
def step_timed_out(context: Context, n: int) -> None:
    record = _record(context, n)
    assert record["timed_out"] and not record["ok"], record


@then('report call {n:d} has the note "{note}"')
def step_note(context: Context, n: int, note: str) -> None:
    record = _record(context, n)
    assert note in record["notes"], record["notes"]


@then("report call {n:d} counts {count:d} retries")
def step_retries(context: Context, n: int, count: int) -> None:
    record = _record(context, n)
    assert record["retries"] == count, record


@then('the file tool "{name}" ran {count:d} time')
def step_ran(context: Context, name: str, count: int) -> None:
    calls = _module(context).CALLS[name]
    assert calls == count, f"{name} ran {calls} times"


@then('the file\'s agent has the tools "{names}"')
def step_tools(context: Context, names: str) -> None:
    got = [tool.name for tool in context.limits_agent.tools]
    assert got == [name.strip() for name in names.split(",")], got


@then('validation fails with "{message}"')
def step_validation_fails(context: Context, message: str) -> None:
    error = context.limits_error
    assert error is not None, "the file was accepted"
    lines = str(error).splitlines()
    assert any(message in line and "agents.yaml:" in line for line in lines), lines


@then('building fails with "{message}"')
def step_building_fails(context: Context, message: str) -> None:
    error = context.limits_error
    assert error is not None, "the agent was built"
    assert message in str(error), str(error)
