"""Steps for spec_loading.feature and spec_env.feature (agents files → AgentSpec)."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from behave import given, then, when
from behave.runner import Context
from jsonschema import Draft202012Validator
from support.logs import capture_logs

from leanloop.exceptions import SpecError
from leanloop.spec import agent_schema, load_specs, load_specs_from_dict, load_specs_from_text
from leanloop.spec.types import AgentSpec

# ---- set-up ---------------------------------------------------------------------------


@given('an agents file "{name}" with:')
def step_agents_file(context: Context, name: str) -> None:
    path: Path = context.tmp / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(context.text + "\n", encoding="utf-8")


@given('an agents file "{name}" with "^G" standing for a bell character:')
def step_agents_file_bell(context: Context, name: str) -> None:
    (context.tmp / name).write_text(context.text.replace("^G", "\a") + "\n", encoding="utf-8")


@given('an agents file "{name}" in Latin-1 with:')
def step_agents_file_latin1(context: Context, name: str) -> None:
    (context.tmp / name).write_bytes((context.text + "\n").encode("latin-1"))


@given('an agents file "{name}" nested {depth:d} lists deep')
def step_agents_file_deep(context: Context, name: str, depth: int) -> None:
    (context.tmp / name).write_text("version: " + "[" * depth + "]" * depth + "\n")


@given('a spec workspace folder "{name}"')
def step_workspace_folder(context: Context, name: str) -> None:
    (context.tmp / name).mkdir(parents=True)
    assert (context.tmp / name).is_dir()


@given('a spec plain file "{name}"')
def step_plain_file(context: Context, name: str) -> None:
    (context.tmp / name).write_text("not a folder\n", encoding="utf-8")
    assert (context.tmp / name).is_file()


@given('the spec environment variable "{name}" is "{value}"')
def step_spec_env(context: Context, name: str, value: str) -> None:
    _environ(context)[name] = value


@given('the spec environment variable "{name}" is empty')
def step_spec_env_empty(context: Context, name: str) -> None:
    _environ(context)[name] = ""


@given('the process environment variable "{name}" is "{value}" for this spec')
def step_process_env(context: Context, name: str, value: str) -> None:
    previous = os.environ.get(name)
    os.environ[name] = value

    def restore() -> None:
        if previous is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = previous

    context.cleanups.append(restore)


@given("the spec logs are captured")
def step_capture_logs(context: Context) -> None:
    context.spec_logs = capture_logs(context)


def _environ(context: Context) -> dict[str, str]:
    if not hasattr(context, "spec_environ"):
        context.spec_environ = {}
    environ: dict[str, str] = context.spec_environ
    return environ


# ---- loading --------------------------------------------------------------------------


def _attempt(context: Context, load: Callable[[], dict[str, AgentSpec]]) -> None:
    """Load from inside the scenario's folder, so that messages show relative names."""
    context.spec_result = None
    context.spec_error = None
    previous = Path.cwd()
    os.chdir(context.tmp)
    try:
        context.spec_result = load()
    except SpecError as exc:
        context.spec_error = exc
    finally:
        os.chdir(previous)


@when('the agents file "{name}" is loaded')
def step_load(context: Context, name: str) -> None:
    _attempt(context, lambda: load_specs(name, environ=_environ(context)))


@when('the agents file "{name}" is loaded with the process environment')
def step_load_process_env(context: Context, name: str) -> None:
    _attempt(context, lambda: load_specs(Path(name)))


@when("an agents file with a name of {length:d} characters is loaded")
def step_load_long_name(context: Context, length: int) -> None:
    name = "a" * (length - len(".yaml")) + ".yaml"
    _attempt(context, lambda: load_specs(name, environ={}))


@when('the agents file text is loaded from a string with base folder "{folder}":')
def step_load_text(context: Context, folder: str) -> None:
    base = context.tmp / folder
    text = context.text
    _attempt(context, lambda: load_specs_from_text(text, base_dir=base, environ={}))


@when("the agents file data is loaded from a Python dict:")
def step_load_dict(context: Context) -> None:
    data = json.loads(context.text)
    _attempt(context, lambda: load_specs_from_dict(data, environ=_environ(context)))


@when('the agents file data "{data}" is loaded from Python')
def step_load_odd_dict(context: Context, data: str) -> None:
    value = json.loads(data)
    _attempt(context, lambda: load_specs_from_dict(value))


# ---- outcomes -------------------------------------------------------------------------


def _error(context: Context) -> SpecError:
    assert context.spec_result is None, f"the agents file loaded: {list(context.spec_result)}"
    error: SpecError = context.spec_error
    return error


def _expected(context: Context, text: str) -> str:
    return text.replace("{tmp}", str(context.tmp.resolve()))


@then("loading the agents file fails with:")
def step_fails_with_text(context: Context) -> None:
    actual, expected = str(_error(context)), _expected(context, context.text)
    assert actual == expected, f"expected:\n{expected}\n--- got:\n{actual}"


@then('loading the agents file fails with "{message}"')
def step_fails_with(context: Context, message: str) -> None:
    actual, expected = str(_error(context)), _expected(context, message)
    assert actual == expected, f"expected:\n{expected}\n--- got:\n{actual}"


@then("loading the agents file fails with {count:d} located issues")
def step_fails_count(context: Context, count: int) -> None:
    issues = _error(context).issues
    assert len(issues) == count, "\n".join(map(str, issues))
    unlocated = [str(i) for i in issues if i.line is None or i.column is None or not i.path]
    assert not unlocated, unlocated


@then('the only spec issue says "{message}"')
def step_only_issue(context: Context, message: str) -> None:
    issues = _error(context).issues
    assert [issue.message for issue in issues] == [message], issues


@then('the first spec issue is at line {line:d}, column {column:d}, path "{path}"')
def step_first_issue(context: Context, line: int, column: int, path: str) -> None:
    issue = _error(context).issues[0]
    assert (issue.line, issue.column, issue.path) == (line, column, path), issue


@then('the error of the agents file does not contain "{text}"')
def step_error_lacks(context: Context, text: str) -> None:
    assert text not in str(_error(context)), str(context.spec_error)
    assert all(text not in repr(issue) for issue in _error(context).issues)


@then('the spec logs do not contain "{text}"')
def step_logs_lack(context: Context, text: str) -> None:
    messages = context.spec_logs.messages()
    assert messages, "nothing was logged"
    assert all(text not in m for m in messages), messages


def _specs(context: Context) -> dict[str, AgentSpec]:
    assert context.spec_error is None, str(context.spec_error)
    specs: dict[str, AgentSpec] = context.spec_result
    return specs


@then('the agents file gives the agents "{names}"')
def step_agent_names(context: Context, names: str) -> None:
    assert list(_specs(context)) == names.split(", "), list(_specs(context))


def _field(value: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


@then('the spec of agent "{name}" has:')
def step_agent_fields(context: Context, name: str) -> None:
    spec = _specs(context)[name]
    for row in context.table:
        actual = repr(_field(spec, row["field"]))
        expected = _expected(context, row["value"])
        assert actual == expected, f"{row['field']}: expected {expected}, got {actual}"


@then('the spec of agent "{name}" has its workspace at "{folder}"')
def step_agent_workspace(context: Context, name: str, folder: str) -> None:
    workspace = _specs(context)[name].workspace
    assert workspace is not None and workspace.is_absolute(), workspace
    assert workspace == (context.tmp / folder).resolve(), workspace


@then('the spec of agent "{name}" shares its model with the spec of agent "{other}"')
def step_shared_model(context: Context, name: str, other: str) -> None:
    specs = _specs(context)
    assert specs[name].model is specs[other].model


@then('the spec of agent "{name}" was read from "{file}"')
def step_agent_source(context: Context, name: str, file: str) -> None:
    source = _specs(context)[name].source
    assert source == (context.tmp / file).absolute(), source


# ---- the schema -----------------------------------------------------------------------


def _agent_properties() -> Mapping[str, Any]:
    properties: Mapping[str, Any] = agent_schema()["$defs"]["agent"]["properties"]
    return properties


@then("the spec schema is a valid draft 2020-12 JSON Schema")
def step_schema_valid(context: Context) -> None:
    schema = agent_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@then("every agent key of the spec schema has a description")
def step_schema_descriptions(context: Context) -> None:
    missing = [key for key, prop in _agent_properties().items() if not prop.get("description")]
    assert not missing, missing


@then("every default of AgentSpec equals the spec schema default")
def step_defaults_agree(context: Context) -> None:
    properties = _agent_properties()
    fields = {f.name: f for f in dataclasses.fields(AgentSpec)}
    # Fields set from other keys: tool_options from `tools` mappings, mcp_servers from the
    # file's top level, sub_agents from `agent:` tools, session_store from `sessions`.
    derived = {
        "name",
        "source",
        "location",
        "tool_options",
        "mcp_servers",
        "sub_agents",
        "session_store",
    }
    extra = set(fields) - set(properties) - derived
    assert not extra, f"AgentSpec fields the schema lacks: {extra}"
    assert set(properties) <= set(fields), set(properties) - set(fields)
    for key, prop in properties.items():
        default = fields[key].default
        if isinstance(default, tuple):
            default = list(default)
        expected = prop.get("default")
        if key == "model":  # required: no default on either side
            assert default is dataclasses.MISSING and "default" not in prop
            continue
        # 60.0 in Python is 60 in JSON; True must not pass for 1.
        same_type = type(default) is type(expected) or isinstance(default, float)
        assert default == expected and same_type, (
            f"{key}: AgentSpec has {default!r}, the schema {expected!r}"
        )


@then("changing the spec schema a caller got changes nothing")
def step_schema_copy(context: Context) -> None:
    agent_schema()["$defs"]["agent"]["properties"]["max_rounds"]["default"] = 99
    assert _agent_properties()["max_rounds"]["default"] == 20
