"""Steps for workspace_tools.feature and tool_registry.feature."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from fixtures import tool_fixtures
from support.aio import run
from support.logs import capture_logs

from leanloop.exceptions import ToolError
from leanloop.tools import ToolOutcome, ToolRegistry, build_tools, load_tool, workspace_tools


def _workspace(context: Context) -> Path:
    root: Path = context.tmp / "ws"
    root.mkdir(exist_ok=True)
    return root


def _outside(context: Context) -> Path:
    folder: Path = context.tmp / "outside"
    folder.mkdir(exist_ok=True)
    return folder


def _registry(context: Context) -> ToolRegistry:
    if getattr(context, "registry", None) is None:
        context.registry = ToolRegistry(workspace_tools(_workspace(context)))
    registry: ToolRegistry = context.registry
    return registry


def _outcome(context: Context) -> ToolOutcome:
    outcome: ToolOutcome = context.outcome
    return outcome


def _args(context: Context, text: str) -> Any:
    text = text.replace("$WORKSPACE", str(_workspace(context)))
    text = text.replace("$OUTSIDE", str(_outside(context)))
    return json.loads(text)


def _write(path: Path, content: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


# ---- workspace set-up ----------------------------------------------------------------


@given("a workspace with files:")
def step_workspace_files(context: Context) -> None:
    for row in context.table:
        content = row["content"].replace("\\n", "\n")
        _write(_workspace(context) / row["path"], content)


@given('a workspace file "{path}" with {count:d} numbered lines')
def step_workspace_numbered(context: Context, path: str, count: int) -> None:
    _write(_workspace(context) / path, "".join(f"line {i}\n" for i in range(1, count + 1)))


@given('a workspace file "{path}" whose line {number:d} has {width:d} characters')
def step_workspace_long_line(context: Context, path: str, number: int, width: int) -> None:
    lines = [f"line {i}" for i in range(1, number)] + ["y" * width, "after"]
    _write(_workspace(context) / path, "\n".join(lines) + "\n")


@given('a workspace binary file "{path}"')
def step_workspace_binary(context: Context, path: str) -> None:
    _write(_workspace(context) / path, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))


@given('a workspace file "{path}" of {megabytes:d} MB containing "{text}"')
def step_workspace_large(context: Context, path: str, megabytes: int, text: str) -> None:
    line = (text + " " + "z" * 90 + "\n").encode()
    _write(_workspace(context) / path, line * (megabytes * 1024 * 1024 // len(line) + 1))


@given('a workspace file "{path}" with {count:d} lines matching "{word}"')
def step_workspace_matching(context: Context, path: str, count: int, word: str) -> None:
    _write(_workspace(context) / path, "".join(f"{word} {i}\n" for i in range(count)))


@given('{count:d} workspace files under "{folder}"')
def step_workspace_many(context: Context, count: int, folder: str) -> None:
    for i in range(count):
        _write(_workspace(context) / folder / f"f{i:04d}.txt", f"file {i}\n")


@given('a file "{name}" outside the workspace containing "{text}"')
def step_outside_file(context: Context, name: str, text: str) -> None:
    _write(_outside(context) / name, text + "\n")


@given('a workspace symlink "{link}" to the outside file "{name}"')
def step_link_outside_file(context: Context, link: str, name: str) -> None:
    os.symlink(_outside(context) / name, _workspace(context) / link)


@given('a workspace symlink "{link}" to the outside folder')
def step_link_outside_dir(context: Context, link: str) -> None:
    os.symlink(_outside(context), _workspace(context) / link, target_is_directory=True)


@given('a workspace symlink "{link}" to the workspace path "{target}"')
def step_link_inside(context: Context, link: str, target: str) -> None:
    path = _workspace(context) / link
    path.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(_workspace(context) / target, path)


# ---- running tools -------------------------------------------------------------------


@when('the registry runs "{name}" with:')
def step_registry_runs(context: Context, name: str) -> None:
    context.outcome = run(_registry(context).run(name, _args(context, context.text)))


@when('the registry runs "{name}" with no arguments')
def step_registry_runs_bare(context: Context, name: str) -> None:
    context.outcome = run(_registry(context).run(name, {}))


@when('the workspace tool "{name}" is invoked directly with:')
def step_tool_invoked(context: Context, name: str) -> None:
    tools = {tool.name: tool for tool in workspace_tools(_workspace(context))}
    text = tools[name].invoke(_args(context, context.text))
    context.outcome = ToolOutcome(name, {}, text, True, len(text))


@then("the tool result is:")
def step_result_is(context: Context) -> None:
    assert _outcome(context).text == context.text, _outcome(context).text


@then('the tool result is "{text}"')
def step_result_is_inline(context: Context, text: str) -> None:
    text = text.replace("\\n", "\n")  # lets a table cell hold several lines
    assert _outcome(context).text == text, _outcome(context).text


@then("the tool result is empty")
def step_result_empty(context: Context) -> None:
    assert _outcome(context).text == "", repr(_outcome(context).text)


@then('the tool result contains "{text}"')
def step_result_contains(context: Context, text: str) -> None:
    assert text in _outcome(context).text, _outcome(context).text


@then("the tool result contains:")
def step_result_contains_block(context: Context) -> None:
    assert context.text in _outcome(context).text, _outcome(context).text


@then('the tool result does not contain "{text}"')
def step_result_lacks(context: Context, text: str) -> None:
    assert text not in _outcome(context).text, _outcome(context).text


@then('the tool result starts with "{text}"')
def step_result_starts(context: Context, text: str) -> None:
    assert _outcome(context).text.startswith(text), _outcome(context).text


@then("the tool result ends with:")
def step_result_ends(context: Context) -> None:
    assert _outcome(context).text.endswith(context.text), _outcome(context).text[-500:]


@then("the tool result has {count:d} lines")
def step_result_lines(context: Context, count: int) -> None:
    lines = _outcome(context).text.splitlines()
    assert len(lines) == count, f"{len(lines)} lines:\n{_outcome(context).text[-300:]}"


@then('the tool result line {number:d} is "{text}"')
def step_result_line(context: Context, number: int, text: str) -> None:
    line = _outcome(context).text.splitlines()[number - 1]
    assert line == text, repr(line)


@then("the tool result is one line")
def step_result_one_line(context: Context) -> None:
    assert "\n" not in _outcome(context).text, _outcome(context).text


@then("the tool call failed")
def step_call_failed(context: Context) -> None:
    outcome = _outcome(context)
    assert not outcome.ok, outcome
    assert outcome.text.startswith("error: "), outcome.text


@then("the tool call succeeded")
def step_call_ok(context: Context) -> None:
    assert _outcome(context).ok, _outcome(context)


# ---- registry and loader -------------------------------------------------------------


def _refs(context: Context) -> list[str]:
    return [row["tool"] for row in context.table]


@given("a tool registry with the fixture tools:")
def step_registry_fixture_tools(context: Context) -> None:
    tool_fixtures.reset()
    context.registry = ToolRegistry(build_tools(_refs(context), workspace=None))


@given("a tool registry capped at {limit:d} characters with the fixture tools:")
def step_registry_capped(context: Context, limit: int) -> None:
    tool_fixtures.reset()
    tools = build_tools(_refs(context), workspace=None)
    context.registry = ToolRegistry(tools, result_max_chars=limit)


@given("the tool logs are captured")
def step_tool_logs(context: Context) -> None:
    context.tool_logs = capture_logs(context)


@when('the registry call of "{name}" is cancelled while it runs')
def step_registry_cancel(context: Context, name: str) -> None:
    async def cancel() -> str:
        started = tool_fixtures.HANG_STARTED = asyncio.Event()
        context.cleanups.append(lambda: setattr(tool_fixtures, "HANG_STARTED", None))
        task = asyncio.create_task(_registry(context).run(name, {}))
        await started.wait()  # cancel the tool itself, not the registry's checks
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return "cancelled"
        return "finished"

    context.cancel_result = run(cancel())


@then("the registry let the cancellation through")
def step_cancel_through(context: Context) -> None:
    assert context.cancel_result == "cancelled", context.cancel_result


@then("the fixture tool received:")
def step_fixture_received(context: Context) -> None:
    expected = json.loads(context.text)
    assert len(tool_fixtures.RECEIVED) == 1, tool_fixtures.RECEIVED
    assert tool_fixtures.RECEIVED[0][1] == expected, tool_fixtures.RECEIVED


@then("no fixture tool was called")
def step_fixture_not_called(context: Context) -> None:
    assert tool_fixtures.RECEIVED == [], tool_fixtures.RECEIVED


@then("the tool outcome args are:")
def step_outcome_args(context: Context) -> None:
    assert _outcome(context).args == json.loads(context.text), _outcome(context).args


@then('the tool outcome notes include "{text}"')
def step_outcome_note(context: Context, text: str) -> None:
    notes = _outcome(context).notes
    assert any(text in note for note in notes), notes


@then("the tool outcome has no notes")
def step_outcome_no_notes(context: Context) -> None:
    assert _outcome(context).notes == (), _outcome(context).notes


@then("the tool result is at most {limit:d} characters and {raw:d} before the registry cap")
def step_outcome_sizes(context: Context, limit: int, raw: int) -> None:
    outcome = _outcome(context)
    assert len(outcome.text) <= limit, len(outcome.text)
    assert outcome.chars_raw == raw, outcome.chars_raw


@then("the tool result keeps only whole lines of {width:d} characters before its note")
def step_outcome_whole_lines(context: Context, width: int) -> None:
    *kept, note = _outcome(context).text.split("\n")
    assert kept, _outcome(context).text
    assert all(len(line) == width for line in kept), [len(line) for line in kept]
    assert note.startswith("[") and "characters left out" in note, note


@then('the registry parameters of "{name}" are "{names}"')
def step_registry_parameters(context: Context, name: str, names: str) -> None:
    expected = tuple(n.strip() for n in names.split(",") if n.strip())
    assert _registry(context).parameters(name) == expected, _registry(context).parameters(name)


@then('the registry names are "{names}"')
def step_registry_names(context: Context, names: str) -> None:
    registry = _registry(context)
    expected = tuple(n.strip() for n in names.split(","))
    assert registry.names == expected, registry.names
    assert tuple(t.name for t in registry.tools) == expected
    assert all(registry.get(n) is not None for n in expected)
    assert registry.get("nope") is None


@then('a tool log warning mentions "{text}"')
def step_tool_log_warning(context: Context, text: str) -> None:
    messages = context.tool_logs.messages(logging.WARNING)
    assert any(text in m for m in messages), messages


@when("the tools are loaded from:")
def step_tools_loaded(context: Context) -> None:
    _load(context, _refs(context), _workspace(context))


@when("the tools are loaded without a workspace from:")
def step_tools_loaded_bare(context: Context) -> None:
    _load(context, _refs(context), None)


@when('the tool "{ref}" is loaded with the workspace "{folder}"')
def step_tool_loaded_in(context: Context, ref: str, folder: str) -> None:
    try:
        context.loaded = [load_tool(ref, workspace=context.tmp / folder)]
        context.load_error = None
    except ToolError as exc:
        context.load_error = exc


def _load(context: Context, refs: list[str], workspace: Path | None) -> None:
    tool_fixtures.reset()
    try:
        context.loaded = build_tools(refs, workspace=workspace)
        context.load_error = None
    except ToolError as exc:
        context.loaded = []
        context.load_error = exc


@then("the tool loading fails with:")
def step_loading_fails(context: Context) -> None:
    error = context.load_error
    assert error is not None, f"loaded {[t.name for t in context.loaded]}"
    assert context.text in str(error), str(error)
    assert "\n" not in str(error), str(error)


@then('the loaded tools are named "{names}"')
def step_loaded_names(context: Context, names: str) -> None:
    assert context.load_error is None, context.load_error
    assert [t.name for t in context.loaded] == [n.strip() for n in names.split(",")]


@then('the loaded tool "{name}" is described as "{text}"')
def step_loaded_description(context: Context, name: str, text: str) -> None:
    tools = {t.name: t for t in context.loaded}
    assert text in tools[name].description, tools[name].description


@then('building a tool registry with the tools "{refs}" fails with "{text}"')
def step_registry_duplicate(context: Context, refs: str, text: str) -> None:
    tools = [load_tool(ref.strip(), workspace=None) for ref in refs.split(",")]
    try:
        ToolRegistry(tools)
    except ToolError as exc:
        assert text in str(exc), str(exc)
    else:
        raise AssertionError("the registry accepted duplicate names")


@then('building a tool registry capped at {limit:d} characters fails with "{text}"')
def step_registry_small_cap(context: Context, limit: int, text: str) -> None:
    try:
        ToolRegistry([], result_max_chars=limit)
    except ValueError as exc:
        assert text in str(exc), str(exc)
    else:
        raise AssertionError("the registry accepted a tiny cap")


@then("every tool result line is at most {width:d} characters")
def step_result_width(context: Context, width: int) -> None:
    widths = [len(line) for line in _outcome(context).text.splitlines()]
    assert max(widths) <= width, widths
