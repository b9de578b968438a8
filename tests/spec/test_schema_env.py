"""The shipped JSON Schema accepts a whole ``${VAR}`` for every typed key, and nothing more.

Editors validate the agents file as written, before leanloop reads the environment, so
``max_rounds: ${ROUNDS:-20}`` must pass the file's schema; a plain wrong value (``abc``
for an integer) must still fail it. leanloop itself validates the interpolated file
against the strict form, where an escaped ``$${...}`` stays a string and is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from leanloop.exceptions import SpecError
from leanloop.spec import load_specs_from_text
from leanloop.spec.schema import ENV_REFERENCE, agent_schema, strict_schema

__all__: list[str] = []


def _file_validator() -> Draft202012Validator:
    # The installed file itself, as `leanloop schema` prints it and editors read it.
    text = resources.files("leanloop").joinpath("spec/agent.schema.json").read_text("utf-8")
    schema = json.loads(text)
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


FILE = _file_validator()


def _document(location: str, key: str, value: Any) -> dict[str, Any]:
    """A minimal agents document with ``key: value`` at ``location``."""
    agent: dict[str, Any] = {"model": "m"}
    document: dict[str, Any] = {"version": 1, "agents": {"a": agent}}
    if location == "modelFields":
        document["models"] = {"m": {key: value}}
    elif location == "agent":
        agent[key] = value
    elif location == "mcpServer":
        document["mcp_servers"] = {"s": {key: value}}
    elif location == "toolEntry":
        agent["tools"] = [{"name": "read_file", key: value}]
    elif location == "sessions":
        document["sessions"] = {key: value}
    else:  # pragma: no cover - a location this helper does not know yet
        raise AssertionError(location)
    return document


def _typed(prop: dict[str, Any]) -> bool:
    """Whether a plain string would not do for this key (so it needs the alternative)."""
    kind = prop.get("type")
    return (
        kind in ("integer", "number", "boolean")
        or "enum" in prop
        or "pattern" in prop
        or prop.get("$ref") == "#/$defs/importPath"
    )


def _typed_keys() -> Iterator[tuple[str, str]]:
    # Read from the strict form, which has each key's own type: a key added later with
    # a type but without the `${VAR}` alternative is found here and fails below.
    schema = strict_schema()
    defs = schema["$defs"]
    places = {
        "modelFields": defs["modelFields"]["properties"],
        "agent": defs["agent"]["properties"],
        "mcpServer": defs["mcpServer"]["properties"],
        "toolEntry": defs["toolEntries"]["items"]["properties"],
        "sessions": schema["properties"]["sessions"]["properties"],
    }
    for location, properties in places.items():
        for key, prop in properties.items():
            if _typed(prop):
                yield location, key


TYPED_KEYS = sorted(_typed_keys())


def _errors(document: dict[str, Any]) -> list[str]:
    return [error.message for error in FILE.iter_errors(document)]


def test_the_typed_keys_are_found() -> None:
    found = set(TYPED_KEYS)
    # A few that must be among them, so an empty walk cannot pass the tests below.
    assert {
        ("agent", "max_rounds"),
        ("agent", "trim_tool_results"),
        ("agent", "tool_mode"),
        ("modelFields", "temperature"),
        ("modelFields", "provider"),
        ("mcpServer", "timeout"),
        ("toolEntry", "retries"),
    } <= found
    assert len(found) >= 30, sorted(found)


@pytest.mark.parametrize(("location", "key"), TYPED_KEYS, ids=str)
@pytest.mark.parametrize("reference", ["${VALUE}", "${VALUE:-1}", "${V_2:-}", "${A:-${B}}"])
def test_a_whole_reference_is_accepted(location: str, key: str, reference: str) -> None:
    assert _errors(_document(location, key, reference)) == []


@pytest.mark.parametrize(("location", "key"), TYPED_KEYS, ids=str)
def test_a_plain_wrong_string_is_still_refused(location: str, key: str) -> None:
    assert _errors(_document(location, key, "abc")), f"{location}.{key}: 'abc' passed"


@pytest.mark.parametrize(
    "value",
    [
        "${ROUNDS",  # not closed
        "$ROUNDS",  # not braced
        "${1ROUNDS}",  # not a variable name
        "${}",
        "x${ROUNDS}",  # only a part of the value: stays a string
        "${ROUNDS}x",
        "${A}${B}",
        "${ROUNDS:20}",  # not the `:-` form
        " ${ROUNDS}",
        "${A:-${B:-${C}}}",  # one level of nesting only, as leanloop reads it
    ],
)
def test_what_is_not_one_whole_reference_is_refused(value: str) -> None:
    assert _errors(_document("agent", "max_rounds", value))


@pytest.mark.parametrize(
    ("key", "value", "accepted"),
    [
        ("max_rounds", 5, True),
        ("max_rounds", 0, False),  # the bounds still hold for plain values
        ("max_rounds", 501, False),
        ("max_rounds", 2.5, False),
        ("max_rounds", True, False),
        ("token_budget_percent", 0.5, True),
        ("token_budget_percent", 1.5, False),
        ("trim_tool_results", False, True),
        ("trim_tool_results", "yes", False),
        ("tool_mode", "text", True),
        ("tool_mode", "txt", False),
        ("description", "${ANY}", True),  # a plain string key takes any string anyway
        ("workspace", "", False),
    ],
)
def test_plain_values_are_checked_as_before(key: str, value: Any, accepted: bool) -> None:
    assert (_errors(_document("agent", key, value)) == []) is accepted


def test_the_version_takes_no_reference() -> None:
    # leanloop does not convert `version`, so a reference there fails both ways.
    assert _errors({"version": "${V:-1}", "agents": {"a": {"model": "m"}}})
    with pytest.raises(SpecError, match="version: must be 1"):
        load_specs_from_text("version: ${V:-1}\nagents: {a: {model: m}}\n", environ={})


def test_the_strict_form_has_no_reference_left() -> None:
    text = json.dumps(strict_schema())
    assert ENV_REFERENCE not in text
    assert ENV_REFERENCE in json.dumps(agent_schema())
    agent = strict_schema()["$defs"]["agent"]["properties"]["max_rounds"]
    assert agent["type"] == "integer" and agent["minimum"] == 1 and agent["default"] == 20


def test_leanloop_gives_a_reference_its_type() -> None:
    text = (
        "version: 1\n"
        "mcp_servers:\n"
        "  s: {command: x, timeout: '${START:-4}'}\n"
        "agents:\n"
        "  a:\n"
        "    model: {provider: '${P:-ollama}', model: x, temperature: '${T:-0.5}'}\n"
        "    max_rounds: ${ROUNDS:-20}\n"
        "    notes: ${NOTES:-yes}\n"
        "    tool_mode: ${MODE}\n"
        "    tools: ['mcp:s']\n"
    )
    agent = load_specs_from_text(text, environ={"MODE": "text", "ROUNDS": "7"})["a"]
    assert agent.max_rounds == 7
    assert agent.notes is True
    assert agent.tool_mode == "text"
    assert agent.model.provider == "ollama"
    assert agent.model.temperature == 0.5
    assert agent.mcp_servers["s"].timeout == 4.0


def test_a_tool_entry_in_the_tools_list_gets_its_type() -> None:
    # The tool entries sit in a list: agents.a.tools[0].timeout is reached through an index.
    text = (
        "version: 1\n"
        "agents:\n"
        "  a:\n"
        "    model: {provider: ollama, model: x}\n"
        "    workspace: .\n"
        "    tools: [{name: read_file, timeout: '${T:-3}', retries: '${R:-2}'}]\n"
    )
    (options,) = load_specs_from_text(text, environ={"R": "4"})["a"].tool_options
    assert (options.timeout, options.retries) == (3.0, 4)


def test_an_escaped_reference_stays_a_string_and_is_refused() -> None:
    # `$${ROUNDS}` is the literal text `${ROUNDS}`: the editor's schema cannot tell it
    # from a reference, but leanloop, validating after interpolation, must refuse it.
    text = "version: 1\nagents:\n  a:\n    model: {provider: openai, model: x}\n"
    with pytest.raises(SpecError, match=r"max_rounds: expected an integer, got '\$\{ROUNDS\}'"):
        load_specs_from_text(text + "    max_rounds: $${ROUNDS}\n", environ={"ROUNDS": "3"})


def test_a_bad_value_keeps_its_one_line_message() -> None:
    text = "version: 1\nagents:\n  a:\n    model: {provider: openai, model: x}\n"
    with pytest.raises(SpecError, match="max_rounds: 0 is less than the minimum of 1"):
        load_specs_from_text(text + "    max_rounds: ${ROUNDS:-0}\n", environ={})
