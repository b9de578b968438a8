"""Python-API mistakes refused at the call, not when the run is under way (issue 38, N22).

A generator function as a tool, a schema that is no pydantic model, and a tool name the
chat APIs refuse each fail where they are written, with a leanloop error naming the
function or the name and saying why.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, TypedDict

import pytest
from pydantic import BaseModel

from leanloop import LLMAgent
from leanloop.exceptions import (
    InvalidArgument,
    InvalidArgumentType,
    LeanloopError,
    SpecError,
    ToolError,
)
from leanloop.spec.toolrefs import callable_refusal
from leanloop.testing import ScriptedChatModel
from leanloop.tools.loader import tool_of


def list_lines(path: str) -> Iterator[str]:
    """The lines of a file, one at a time."""
    yield path


async def stream_lines(path: str) -> AsyncIterator[str]:
    """The lines of a file, as they arrive."""
    yield path


class _Lines:
    """A callable object whose ``__call__`` is a generator."""

    __name__ = "lines_of"

    def __call__(self, path: str) -> Iterator[str]:
        yield path


def colour_of(thing: str) -> str:
    """The colour of a thing."""
    return f"The {thing} is blue."


class City(BaseModel):
    name: str


class CityDict(TypedDict):
    name: str


@dataclasses.dataclass
class CityData:
    name: str


def _agent() -> LLMAgent:
    return LLMAgent(model=ScriptedChatModel(replies=["Paris."]), name="geo", max_rounds=2)


@pytest.mark.parametrize("function", [list_lines, stream_lines, _Lines()])
def test_a_generator_function_is_no_tool(function: Any) -> None:
    with pytest.raises(ToolError) as caught:
        tool_of(function)

    message = str(caught.value)
    assert "generator function" in message
    assert "generator object" in message  # why: what the model would get
    assert "lines" in message  # names the function


def test_the_refusal_is_the_same_wherever_a_tool_is_judged() -> None:
    # validate --check-models and a run both ask callable_refusal.
    refusal = callable_refusal(list_lines, "pkg.mod:list_lines")

    assert refusal is not None
    assert "'pkg.mod:list_lines' is a generator function" in refusal
    assert callable_refusal(colour_of, "pkg.mod:colour_of") is None


@pytest.mark.parametrize("function", [list_lines, stream_lines])
def test_a_python_first_agent_with_a_generator_tool_is_located_at_the_call(
    function: Any,
) -> None:
    with pytest.raises(SpecError) as caught:
        LLMAgent(model=ScriptedChatModel(replies=["x"]), tools=[function])

    issue = caught.value.issues[0]
    assert issue.source == __file__
    assert issue.line is not None
    assert function.__name__ in issue.message
    assert "generator function" in issue.message


@pytest.mark.parametrize("schema", [dict, int, str, list, CityDict, CityData])
def test_with_structured_output_refuses_what_is_no_pydantic_model(schema: Any) -> None:
    agent = _agent()

    with pytest.raises(InvalidArgumentType) as caught:
        agent.with_structured_output(schema)

    message = str(caught.value)
    assert message.startswith(f"with_structured_output({schema.__name__}): ")
    assert "pydantic.BaseModel" in message  # says what to pass
    assert isinstance(caught.value, TypeError)


def test_with_structured_output_refuses_a_json_schema_dict_instead_of_ignoring_it() -> None:
    # An empty dict is falsy: it must not fall back to the agent's own schema silently.
    with pytest.raises(InvalidArgumentType, match=r"with_structured_output\(\{\}\)"):
        _agent().with_structured_output({})  # type: ignore[arg-type]


def test_with_structured_output_still_takes_a_pydantic_model() -> None:
    model = ScriptedChatModel(replies=["Paris.", '{"name": "Paris"}'])
    agent = LLMAgent(model=model, name="geo", max_rounds=2)

    parsed = agent.with_structured_output(City).invoke("Which city?")

    assert parsed == City(name="Paris")


@pytest.mark.parametrize("name", ["", "bad name!", "x" * 65, "dots.are.out", "ünï"])
def test_as_tool_refuses_a_name_the_chat_apis_refuse(name: str) -> None:
    agent = _agent()
    calls: list[Callable[[], object]] = [
        lambda: agent.as_tool(name=name),
        lambda: agent.as_tool(name=name, arg_types={"task": str}),  # LangChain's own path
    ]

    for call in calls:
        with pytest.raises(InvalidArgument) as caught:
            call()
        message = str(caught.value)
        assert message.startswith(f"as_tool(name={name!r}): ")
        assert "1 to 64 letters, digits, '_' or '-'" in message
        assert isinstance(caught.value, LeanloopError)


@pytest.mark.parametrize("name", ["geo", "geo-2", "Geo_Agent", "a" * 64])
def test_as_tool_takes_a_valid_name(name: str) -> None:
    assert _agent().as_tool(name=name).name == name


def test_as_tool_without_a_name_is_named_after_the_agent() -> None:
    assert _agent().as_tool().name == "geo"
