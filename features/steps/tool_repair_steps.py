"""Steps for tool_repair.feature: coercion, aliases, tool-name repair and path help.

The workspace, the registry runs and the result checks are shared with
``tools_steps.py`` (same concept, same fixtures); the steps here build registries with
a path check or path help, run the registry with raw arguments, and test
``repair_call`` and the alias reading directly.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from fixtures import tool_fixtures
from langchain_core.tools import StructuredTool
from pydantic_core import to_jsonable_python
from support.aio import run

from leanloop.tools import (
    ToolOutcome,
    ToolRegistry,
    build_tools,
    repair_call,
    workspace_path_exists,
    workspace_tools,
)
from leanloop.tools._aliases import read_aliases


def _workspace(context: Context) -> Path:
    root: Path = context.tmp / "ws"
    root.mkdir(exist_ok=True)
    return root


def _outcome(context: Context) -> ToolOutcome:
    outcome: ToolOutcome = context.outcome
    return outcome


def _registry(context: Context) -> ToolRegistry:
    if getattr(context, "registry", None) is None:
        context.registry = ToolRegistry(workspace_tools(_workspace(context)))
    registry: ToolRegistry = context.registry
    return registry


def _quoted(text: str) -> list[str]:
    """The "..." items of a step phrase, with JSON escapes (\\u0000) decoded."""
    return [json.loads(f'"{item}"') for item in re.findall(r'"((?:[^"\\]|\\.)*)"', text)]


# ---- registries ----------------------------------------------------------------------


@given("a repair registry over the workspace with a path check")
def step_repair_registry_checked(context: Context) -> None:
    root = _workspace(context)
    context.registry = ToolRegistry(workspace_tools(root), path_exists=workspace_path_exists(root))


@given("a repair registry over the workspace with a failing path check")
def step_repair_registry_failing(context: Context) -> None:
    def broken(path: str) -> bool:
        msg = f"cannot check {path}"
        raise RuntimeError(msg)

    context.registry = ToolRegistry(workspace_tools(_workspace(context)), path_exists=broken)


@given("a repair registry with {count:d} generated tools")
def step_repair_registry_generated(context: Context, count: int) -> None:
    def generated(item: str, amount: int = 1) -> str:
        return item * amount

    tools = [
        StructuredTool.from_function(generated, name=f"generated_{i:02d}", description="Made.")
        for i in range(count)
    ]
    context.registry = ToolRegistry(tools)


@given('path help with the request naming "{paths}" and repair_paths {state}')
def step_path_help(context: Context, paths: str, state: str) -> None:
    hints = [p.strip() for p in paths.split(",") if p.strip()]
    assert state in ("on", "off"), state
    context.path_help_tools = workspace_tools(
        _workspace(context), path_hints=lambda: hints, repair_paths=state == "on"
    )
    context.registry = ToolRegistry(context.path_help_tools)


@given("path help whose request paths cannot be read, with repair_paths on")
def step_path_help_broken(context: Context) -> None:
    def hints() -> list[str]:
        msg = "no request"
        raise LookupError(msg)

    tools = workspace_tools(_workspace(context), path_hints=hints, repair_paths=True)
    context.registry = ToolRegistry(tools)


@given('path help loaded by name with the request naming "{paths}" and repair_paths on')
def step_path_help_loaded(context: Context, paths: str) -> None:
    hints = [p.strip() for p in paths.split(",")]
    tools = build_tools(
        ["read_file", "search"],
        workspace=_workspace(context),
        path_hints=lambda: hints,
        repair_paths=True,
    )
    assert [t.name for t in tools] == ["read_file", "search"], tools
    context.registry = ToolRegistry(tools)


# ---- running -------------------------------------------------------------------------


@when("the coercion registry runs \"{name}\" with '{sent}'")
def step_coercion_runs(context: Context, name: str, sent: str) -> None:
    tool_fixtures.reset()
    context.outcome = run(_registry(context).run(name, json.loads(sent)))


@when("the coercion registry runs \"{name}\" with the arguments as the text '{text}'")
def step_coercion_runs_text(context: Context, name: str, text: str) -> None:
    arguments: Any = text  # the registry takes a JSON object sent as text too
    context.outcome = run(_registry(context).run(name, arguments))


@when('the repair registry runs the made-up name "{name}"')
def step_repair_runs_made_up(context: Context, name: str) -> None:
    context.outcome = run(_registry(context).run(name.replace("\\n", "\n"), {}))


@when('the path help tool "{name}" is invoked directly with:')
def step_path_help_direct(context: Context, name: str) -> None:
    tools = {tool.name: tool for tool in context.path_help_tools}
    text = tools[name].invoke(json.loads(context.text))
    context.outcome = ToolOutcome(name, {}, text, True, len(text))


# ---- checks --------------------------------------------------------------------------


@then("the coercion gave the tool '{received}'")
def step_coercion_received(context: Context, received: str) -> None:
    assert len(tool_fixtures.RECEIVED) == 1, tool_fixtures.RECEIVED
    got = to_jsonable_python(tool_fixtures.RECEIVED[0][1])
    assert got == json.loads(received), got


@then('the repair outcome ran "{tool}" for "{original}"')
def step_repair_ran(context: Context, tool: str, original: str) -> None:
    outcome = _outcome(context)
    assert outcome.name == tool, outcome
    assert outcome.repaired_from == original, outcome


@then("the repair outcome was not repaired")
def step_repair_not(context: Context) -> None:
    assert _outcome(context).repaired_from is None, _outcome(context)


@then('the repair refusal for "{name}" suggests {hint}')
def step_repair_refusal_hint(context: Context, name: str, hint: str) -> None:
    text = _outcome(context).text
    head = f'error: no tool named "{name}"'
    expected = head if hint == "nothing" else f"{head} (did you mean {hint}?)"
    assert text.startswith(f"{expected}. Available: "), text


@then('the repair of these calls to the workspace tools, with "{paths}" existing, is:')
def step_repair_table(context: Context, paths: str) -> None:
    existing = {p.strip() for p in paths.split(",")}
    registry = ToolRegistry(workspace_tools(_workspace(context)))
    tools = {name: registry.parameters(name) for name in registry.names}
    wrong = []
    for row in context.table:
        repair = repair_call(
            row["name"], json.loads(row["args"]), tools, path_exists=existing.__contains__
        )
        got = None if repair is None else (repair.name, repair.args)
        want = None if row["tool"] == "-" else (row["tool"], json.loads(row["repaired args"]))
        if got != want:
            wrong.append(f"{row['name']!r} {row['args']}: got {got}, want {want}")
    assert not wrong, "\n".join(wrong)


@then('the alias reading for the parameters "{params}" gives:')
def step_alias_table(context: Context, params: str) -> None:
    names = [p.strip() for p in params.split(",")]
    wrong = []
    for row in context.table:
        got = read_aliases(json.loads(row["sent"]), names).args
        want = json.loads(row["read"])
        # The order matters too: a renamed argument keeps its place.
        if list(got.items()) != list(want.items()):
            wrong.append(f"{row['sent']}: got {got}, want {want}")
    assert not wrong, "\n".join(wrong)


def _path_exists(context: Context) -> Any:
    return workspace_path_exists(_workspace(context))


def _expand(context: Context, path: str) -> str:
    return path.replace("$OUTSIDE", str(context.tmp / "outside"))


@then("the path help check finds {paths}")
def step_path_check_finds(context: Context, paths: str) -> None:
    exists = _path_exists(context)
    found = {p: exists(_expand(context, p)) for p in _quoted(paths)}
    assert found and all(found.values()), found


@then("the path help check does not find {paths}")
def step_path_check_misses(context: Context, paths: str) -> None:
    exists = _path_exists(context)
    found = {p: exists(_expand(context, p)) for p in _quoted(paths)}
    assert len(found) == 4 and not any(found.values()), found
