"""Pruning meta-arguments in tool schemas (src/leanloop/pruning/schema.py), moved from
features/pruning_schema.feature (issue 26).

The tools named in pruning_tools show the model two extra optional arguments, output_prune
and output_prune_context. They are added to copies of the schemas and taken out of every
tool call's arguments before any tool runs.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool

from leanloop.pruning import augment_tool_schemas, split_meta_arguments
from leanloop.testing import ScriptedChatModel


@tool
def read_file(path: str) -> str:
    """Read a text file from the workspace."""
    return path


@tool
def search(pattern: str) -> str:
    """Search the workspace for a pattern."""
    return pattern


@pytest.fixture
def schemas() -> list[dict[str, Any]]:
    """The test tools read_file and search as OpenAI schemas."""
    made = [convert_to_openai_tool(read_file), convert_to_openai_tool(search)]
    assert [s["function"]["name"] for s in made] == ["read_file", "search"]
    return made


def _function(augmented: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The function part of the augmented schema of ``name`` (nested or flat form)."""
    for schema in augmented:
        function = schema.get("function", schema)
        if function["name"] == name:
            return function
    raise AssertionError(f"no augmented pruning schema named {name!r}")


def _properties(augmented: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return _function(augmented, name)["parameters"]["properties"]


def _offers(augmented: list[dict[str, Any]], name: str, prop: str, kind: str) -> None:
    properties = _properties(augmented, name)
    assert prop in properties, properties
    assert properties[prop]["type"] == kind, properties[prop]


def test_a_prunable_tool_gains_both_optional_meta_arguments(
    schemas: list[dict[str, Any]],
) -> None:
    augmented = augment_tool_schemas(schemas, frozenset({"read_file"}))

    _offers(augmented, "read_file", "output_prune", "boolean")
    _offers(augmented, "read_file", "output_prune_context", "string")
    prune = _properties(augmented, "read_file")["output_prune"]
    assert prune["default"] is True, prune
    assert "set false to receive the full output" in prune["description"], prune
    focus = _properties(augmented, "read_file")["output_prune_context"]
    assert "focuses the extraction" in focus["description"], focus
    assert "default" not in focus, focus
    required = _function(augmented, "read_file")["parameters"].get("required", [])
    assert required == ["path"], required


def test_a_tool_that_is_not_prunable_comes_back_unchanged(
    schemas: list[dict[str, Any]],
) -> None:
    before = copy.deepcopy(schemas)

    augmented = augment_tool_schemas(schemas, frozenset({"read_file"}))

    original = next(s for s in before if s["function"]["name"] == "search")
    search_schema = next(s for s in augmented if s["function"]["name"] == "search")
    assert search_schema == original, search_schema
    assert search_schema is not original
    # The input schemas were not mutated.
    assert schemas == before
    props = schemas[0]["function"]["parameters"]["properties"]
    assert "output_prune" not in props, props
    # The copies are deep: editing one must not reach the input.
    _properties(augmented, "read_file")["path"]["type"] = "changed"
    assert props["path"]["type"] == "string"


def test_a_tool_own_property_of_a_meta_argument_name_is_left_alone(
    schemas: list[dict[str, Any]],
) -> None:
    schemas[1]["function"]["parameters"]["properties"]["output_prune_context"] = {"type": "integer"}

    augmented = augment_tool_schemas(schemas, frozenset({"read_file", "search"}))

    _offers(augmented, "search", "output_prune_context", "integer")
    _offers(augmented, "search", "output_prune", "boolean")


def test_a_flat_prunable_tool_schema_without_parameters_gains_the_meta_arguments(
    schemas: list[dict[str, Any]],
) -> None:
    schemas.append({"name": "ping", "description": "Check the service."})

    augmented = augment_tool_schemas(schemas, frozenset({"ping"}))

    _offers(augmented, "ping", "output_prune", "boolean")
    _offers(augmented, "ping", "output_prune_context", "string")


def test_augmented_schemas_bind_to_a_chat_model_as_they_are(
    schemas: list[dict[str, Any]],
) -> None:
    augmented = augment_tool_schemas(schemas, frozenset({"read_file"}))
    model = ScriptedChatModel(replies=["done"])

    model.bind_tools(augmented).invoke("read the log")

    tools = model.requests[0].tools
    having = [
        t["function"]["name"]
        for t in tools
        if "output_prune" in t["function"]["parameters"]["properties"]
    ]
    assert having == ["read_file"], having
    assert len(tools) == 2, tools


@pytest.mark.parametrize(
    ("arguments", "left", "prune", "focus"),
    [
        ('{"path": "a.log"}', '{"path": "a.log"}', True, None),
        ('{"path": "a.log", "output_prune": false}', '{"path": "a.log"}', False, None),
        ('{"path": "a.log", "output_prune": "false"}', '{"path": "a.log"}', False, None),
        ('{"path": "a.log", "output_prune": "No"}', '{"path": "a.log"}', False, None),
        ('{"path": "a.log", "output_prune": "0"}', '{"path": "a.log"}', False, None),
        ('{"path": "a.log", "output_prune": 0}', '{"path": "a.log"}', False, None),
        ('{"path": "a.log", "output_prune": "true"}', '{"path": "a.log"}', True, None),
        ('{"path": "a.log", "output_prune": null}', '{"path": "a.log"}', True, None),
        (
            '{"path": "a.log", "output_prune_context": "  the deadlock lines "}',
            '{"path": "a.log"}',
            True,
            "the deadlock lines",
        ),
        ('{"path": "a.log", "output_prune_context": "   "}', '{"path": "a.log"}', True, None),
        (
            '{"pattern": "x", "output_prune": "false", "output_prune_context": 42}',
            '{"pattern": "x"}',
            False,
            "42",
        ),
    ],
)
def test_meta_arguments_are_stripped_from_any_tool_arguments_before_it_runs(
    arguments: str, left: str, prune: bool, focus: str | None
) -> None:
    kept, request = split_meta_arguments(json.loads(arguments))

    assert kept == json.loads(left), kept
    assert request.prune is prune, request
    assert request.focus == focus, request


def test_splitting_meta_arguments_never_changes_the_call_own_arguments() -> None:
    call_args = {"path": "a.log", "output_prune": False}

    kept, _ = split_meta_arguments(call_args)

    assert kept == {"path": "a.log"}, kept
    assert "output_prune" in call_args, call_args
