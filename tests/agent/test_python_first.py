"""Python-first agents, plain functions as tools, and an agent as a tool of create_agent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool

from leanloop import LLMAgent
from leanloop.exceptions import SpecError
from leanloop.testing import ScriptedChatModel


def colour_of(thing: str) -> str:
    """The colour of a thing."""
    return f"The {thing} is blue."


async def size_of(thing: str) -> str:
    """The size of a thing."""
    return f"The {thing} is large."


def _call(name: str, call_id: str = "call_1", **args: Any) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"name": name, "args": args, "id": call_id}]}


@pytest.mark.parametrize(("tool", "answer"), [(colour_of, "blue"), (size_of, "large")])
def test_a_python_first_agent_answers_after_calling_a_plain_function(
    tool: Any, answer: str
) -> None:
    model = ScriptedChatModel(replies=[_call(tool.__name__, thing="sky"), f"It is {answer}."])
    agent = LLMAgent(model=model, tools=[tool], system_prompt="Be brief.", max_rounds=3)

    message = agent.invoke("Tell me about the sky.")

    assert agent.name == "agent"
    assert message.text == f"It is {answer}."
    assert message.response_metadata["leanloop"]["stop_reason"]
    sent = "\n".join(str(m.content) for m in model.requests[-1].messages)
    assert f"The sky is {answer}." in sent  # the function ran and its result went back
    assert "Be brief." in str(model.requests[0].messages[0].content)


async def test_a_python_first_agent_runs_async_with_an_async_function() -> None:
    model = ScriptedChatModel(replies=[_call("size_of", thing="moon"), "It is large."])
    agent = LLMAgent.from_model(model, [size_of], name="sizer", max_rounds=2)

    message = await agent.ainvoke("How big is the moon?")

    assert agent.name == "sizer"
    assert message.text == "It is large."
    sent = "\n".join(str(m.content) for m in model.requests[-1].messages)
    assert "The moon is large." in sent


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"max_rounds": "five"}, "max_rounds: expected an integer, got 'five'"),
        ({"max_round": 3}, "max_round: unknown key 'max_round' (did you mean 'max_rounds'?)"),
        ({"trim_tool_results": 3}, "trim_tool_results:"),
        ({"tools": [lambda thing: thing]}, "tools: a lambda cannot be a tool"),
        ({"tools": [print]}, "tools:"),
    ],
)
def test_a_wrong_option_is_a_located_one_line_spec_error(
    options: dict[str, Any], expected: str
) -> None:
    with pytest.raises(SpecError) as caught:
        LLMAgent(model=ScriptedChatModel(), **options)

    text = str(caught.value)
    assert len(text.splitlines()) == 1, text
    assert text.startswith(f"{__file__}:"), text  # at the caller's line
    assert expected in text
    assert "Field required" not in text


def test_the_spec_path_still_works_unchanged(tmp_path: Path) -> None:
    (tmp_path / "agents.yaml").write_text(_AGENTS_FILE, encoding="utf-8")
    agent = LLMAgent.from_file(tmp_path / "agents.yaml")
    again = LLMAgent(spec=agent.spec, model=agent.model, tools=agent.tools)

    assert again.spec is agent.spec
    assert again.tools == []


_AGENTS_FILE = """\
version: 1
agents:
  reader:
    model: {class: "leanloop.testing:ScriptedChatModel", context_window: 32000}
    max_rounds: 3
"""


def test_from_file_takes_a_plain_function_as_a_tool(tmp_path: Path) -> None:
    (tmp_path / "agents.yaml").write_text(_AGENTS_FILE, encoding="utf-8")

    agent = LLMAgent.from_file(tmp_path / "agents.yaml", tools=[colour_of])
    assert [tool.name for tool in agent.tools] == ["colour_of"]
    script = ScriptedChatModel(replies=[_call("colour_of", thing="sea"), "Blue."])
    message = agent.model_copy(update={"model": script}).invoke("What colour is the sea?")

    assert message.text == "Blue."
    sent = "\n".join(str(m.content) for m in script.requests[-1].messages)
    assert "The sea is blue." in sent


def test_an_agent_in_the_tools_list_is_a_sub_agent_tool() -> None:
    inner = LLMAgent(
        model=ScriptedChatModel(replies=["The sky is blue."]),
        name="colours",
        description="Knows colours.",
    )
    outer_model = ScriptedChatModel(replies=[_call("colours", task="sky?"), "Blue, it says."])
    outer = LLMAgent(model=outer_model, tools=[inner])

    assert outer.invoke("What colour is the sky?").text == "Blue, it says."
    sent = "\n".join(str(m.content) for m in outer_model.requests[-1].messages)
    assert "The sky is blue." in sent


@pytest.mark.parametrize("asynchronous", [False, True])
async def test_as_tool_goes_into_langchain_create_agent(asynchronous: bool) -> None:
    inner_model = ScriptedChatModel(replies=["The port is 8080."])
    reader = LLMAgent(model=inner_model, name="reader_agent")
    tool = reader.as_tool(name="reader", description="Reads the service's files.")
    assert isinstance(tool, BaseTool)
    assert tool.name == "reader"
    assert list(tool.args) == ["task"]

    outer_model = ScriptedChatModel(
        replies=[_call("reader", task="Which port?"), "The service uses port 8080."]
    )
    graph = create_agent(model=outer_model, tools=[tool])
    question = {"messages": [{"role": "user", "content": "Which port does it use?"}]}
    state = await graph.ainvoke(question) if asynchronous else graph.invoke(question)

    messages = state["messages"]
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert [str(m.content) for m in results] == ["The port is 8080."]
    assert "8080" in messages[-1].text
    assert str(inner_model.requests[0].messages[-1].content) == "Which port?"
