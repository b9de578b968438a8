"""Steps for features/pruning_schema.feature: meta-arguments added to schemas and stripped."""

from __future__ import annotations

import copy
import json
from typing import Any

from behave import given, then, when
from behave.runner import Context
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


def _schema(context: Context, name: str) -> dict[str, Any]:
    """The function part of the augmented schema of ``name`` (nested or flat form)."""
    for schema in context.pruning_augmented:
        function = schema.get("function", schema)
        if function["name"] == name:
            return function
    raise AssertionError(f"no augmented pruning schema named {name!r}")


def _properties(context: Context, name: str) -> dict[str, Any]:
    return _schema(context, name)["parameters"]["properties"]


@given("the pruning test tools read_file and search as OpenAI schemas")
def step_tools(context: Context) -> None:
    context.pruning_schemas = [convert_to_openai_tool(read_file), convert_to_openai_tool(search)]
    assert [s["function"]["name"] for s in context.pruning_schemas] == ["read_file", "search"]


@given('the pruning test tool "{name}" already declares "{prop}" as an integer')
def step_own_property(context: Context, name: str, prop: str) -> None:
    for schema in context.pruning_schemas:
        if schema["function"]["name"] == name:
            schema["function"]["parameters"]["properties"][prop] = {"type": "integer"}
            return
    raise AssertionError(f"no pruning test tool {name!r}")


@given('a flat pruning test tool schema "{name}" without parameters')
def step_flat_tool(context: Context, name: str) -> None:
    context.pruning_schemas.append({"name": name, "description": "Check the service."})


@when('the pruning schemas are augmented for the prunable tools "{names}"')
def step_augment(context: Context, names: str) -> None:
    context.pruning_before = copy.deepcopy(context.pruning_schemas)
    context.pruning_augmented = augment_tool_schemas(
        context.pruning_schemas, frozenset(names.split(","))
    )


@then('the pruning schema of "{name}" offers the meta-argument "{prop}" of type "{kind}"')
def step_offers(context: Context, name: str, prop: str, kind: str) -> None:
    properties = _properties(context, name)
    assert prop in properties, properties
    assert properties[prop]["type"] == kind, properties[prop]


@then('the pruning meta-argument "{prop}" defaults to true and says "{words}"')
def step_default(context: Context, prop: str, words: str) -> None:
    spec = _properties(context, "read_file")[prop]
    assert spec["default"] is True, spec
    assert words in spec["description"], spec


@then('the pruning meta-argument "{prop}" says "{words}"')
def step_says(context: Context, prop: str, words: str) -> None:
    spec = _properties(context, "read_file")[prop]
    assert words in spec["description"], spec
    assert "default" not in spec, spec


@then('no pruning meta-argument is required by "{name}"')
def step_not_required(context: Context, name: str) -> None:
    required = _schema(context, name)["parameters"].get("required", [])
    assert required == ["path"], required


@then('the pruning schema of "{name}" equals its input')
def step_equal(context: Context, name: str) -> None:
    original = next(s for s in context.pruning_before if s["function"]["name"] == name)
    augmented = next(s for s in context.pruning_augmented if s["function"]["name"] == name)
    assert augmented == original, augmented
    assert augmented is not original


@then("the pruning input schemas were not mutated")
def step_not_mutated(context: Context) -> None:
    assert context.pruning_schemas == context.pruning_before
    props = context.pruning_schemas[0]["function"]["parameters"]["properties"]
    assert "output_prune" not in props, props
    # The copies are deep: editing one must not reach the input.
    _properties(context, "read_file")["path"]["type"] = "changed"
    assert props["path"]["type"] == "string"


@when("a scripted model bound to the augmented pruning schemas is called")
def step_bind(context: Context) -> None:
    model = ScriptedChatModel(replies=["done"])
    model.bind_tools(context.pruning_augmented).invoke("read the log")
    context.pruning_model = model


@then('the model request carried the pruning meta-argument "{prop}" for "{name}" only')
def step_carried(context: Context, prop: str, name: str) -> None:
    tools = context.pruning_model.requests[0].tools
    having = [
        t["function"]["name"] for t in tools if prop in t["function"]["parameters"]["properties"]
    ]
    assert having == [name], having
    assert len(tools) == 2, tools


@when("the pruning meta-arguments are split from {arguments}")
def step_split(context: Context, arguments: str) -> None:
    context.pruning_left, context.pruning_request = split_meta_arguments(json.loads(arguments))


@then("the tool arguments left after the pruning meta-argument split are {left}")
def step_left(context: Context, left: str) -> None:
    assert context.pruning_left == json.loads(left), context.pruning_left


@then("the prune request asks for prune={prune} with focus {focus}")
def step_request(context: Context, prune: str, focus: str) -> None:
    request = context.pruning_request
    assert request.prune is (prune == "true"), request
    expected = None if focus == "none" else focus
    assert request.focus == expected, request


@given("the pruning tool call arguments {arguments}")
def step_call_args(context: Context, arguments: str) -> None:
    context.pruning_call_args = json.loads(arguments)


@when("the pruning meta-argument split runs on the given arguments")
def step_split_given(context: Context) -> None:
    context.pruning_left, context.pruning_request = split_meta_arguments(context.pruning_call_args)
    assert context.pruning_left == {"path": "a.log"}, context.pruning_left


@then('the original pruning tool call arguments still hold "{prop}"')
def step_still_hold(context: Context, prop: str) -> None:
    assert prop in context.pruning_call_args, context.pruning_call_args
