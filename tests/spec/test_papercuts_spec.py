"""First-hour papercuts in agents files (issue 29, item 9).

- a model key written on the agent (``context_window``, ``temperature``) says where it
  belongs instead of a bare "unknown key";
- the built-in tools without ``workspace`` use the agents file's folder (the working
  folder for agents built in Python), inside the same jail;
- an unset ``${VAR}`` stops only the agents that need it, and says which they are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.tools import ToolException

from leanloop.agent import LLMAgent
from leanloop.exceptions import SpecError
from leanloop.spec import load_specs, load_specs_from_text
from leanloop.testing import ScriptedChatModel

__all__: list[str] = []

_SCRIPTED = "{class: 'leanloop.testing:ScriptedChatModel', kwargs: {replies: ['hello']}}"


def _messages(text: str, **kwargs: Any) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_specs_from_text(text, source="agents.yaml", **kwargs)
    return [str(issue) for issue in caught.value.issues]


# ---- a. a model key on the agent ------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"), [("context_window", "8192"), ("temperature", "0"), ("base_url", "http://x")]
)
def test_a_model_key_on_the_agent_says_it_belongs_under_the_model(key: str, value: str) -> None:
    text = f"version: 1\nagents:\n  a:\n    model: {{provider: openai}}\n    {key}: {value}\n"

    assert _messages(text) == [
        f"agents.yaml:5:5: agents.a.{key}: unknown key {key!r} "
        "(a model key: put it under the agent's model)"
    ]


def test_a_near_miss_still_gets_did_you_mean_and_a_model_key_in_the_model_is_fine() -> None:
    text = (
        "version: 1\nagents:\n  a:\n"
        "    model: {provider: openai, context_window: 8192}\n    max_round: 3\n"
    )

    assert _messages(text) == [
        "agents.yaml:5:5: agents.a.max_round: unknown key 'max_round' (did you mean 'max_rounds'?)"
    ]


# ---- b. built-in tools without a workspace --------------------------------------------


def _file(folder: Path, agents: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "agents.yaml"
    path.write_text(f"version: 1\nagents:\n{agents}", encoding="utf-8")
    return path


def _tool(agent: LLMAgent, name: str) -> Any:
    return next(tool for tool in agent.tools if tool.name == name)


def test_built_in_tools_without_a_workspace_read_the_agents_files_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "project"
    path = _file(folder, f"  reader:\n    model: {_SCRIPTED}\n    tools: [read_file, search]\n")
    (folder / "notes.txt").write_text("the port is 8080\n", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("outside\n", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # the file's folder counts, not the working folder

    spec = load_specs(path)["reader"]
    agent = LLMAgent.from_file(path)

    assert spec.workspace == folder.resolve()
    assert "the port is 8080" in _tool(agent, "read_file").invoke({"path": "notes.txt"})
    # The jail is the same as with an explicit workspace: nothing above the folder.
    with pytest.raises(ToolException, match="outside the workspace"):
        _tool(agent, "read_file").invoke({"path": "../secret.txt"})


def test_an_agent_without_built_in_tools_keeps_no_workspace(tmp_path: Path) -> None:
    path = _file(tmp_path, f"  talker:\n    model: {_SCRIPTED}\n")

    assert load_specs(path)["talker"].workspace is None


def test_an_agent_built_in_python_reads_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notes.txt").write_text("from the working folder\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    agent = LLMAgent(model=ScriptedChatModel(replies=["hi"]), tools=["read_file"])

    assert agent.spec.workspace == tmp_path.resolve()
    assert "from the working folder" in _tool(agent, "read_file").invoke({"path": "notes.txt"})


# ---- e. unset variables stop only the agents that need them ----------------------------

_TEAM = """\
version: 1
models:
  local: {class: 'leanloop.testing:ScriptedChatModel', kwargs: {replies: ['hello']}}
  cloud: {provider: openai, model: gpt, api_key: '${PAPERCUT_UNSET_KEY}'}
  spare: {provider: openai, model: '${PAPERCUT_UNSET_SPARE}'}
agents:
  a:
    model: local
  b:
    model: cloud
    system_prompt: 'Hello ${PAPERCUT_UNSET_NAME}'
  c:
    model: local
    tools: ['agent:b']
"""


def test_validating_the_file_names_the_agents_each_unset_variable_stops() -> None:
    default = "to give a default"
    assert _messages(_TEAM, environ={}) == [
        "agents.yaml:4:50: models.cloud.api_key: environment variable 'PAPERCUT_UNSET_KEY' is "
        f"not set (write ${{PAPERCUT_UNSET_KEY:-default}} {default}; needed by agents 'b', 'c')",
        # One problem for the value: not also "must not be empty" for the "" it read as.
        "agents.yaml:5:36: models.spare.model: environment variable 'PAPERCUT_UNSET_SPARE' is "
        f"not set (write ${{PAPERCUT_UNSET_SPARE:-default}} {default}; no agent uses it)",
        "agents.yaml:11:20: agents.b.system_prompt: environment variable 'PAPERCUT_UNSET_NAME' "
        f"is not set (write ${{PAPERCUT_UNSET_NAME:-default}} {default}; "
        "needed by agents 'b', 'c')",
    ]


def test_an_agent_that_needs_no_unset_variable_loads_and_runs(tmp_path: Path) -> None:
    path = tmp_path / "agents.yaml"
    path.write_text(_TEAM, encoding="utf-8")

    specs = load_specs(path, environ={}, only="a")

    assert list(specs) == ["a"]
    with pytest.raises(SpecError) as caught:  # c calls b, so b's variables are c's too
        load_specs(path, environ={}, only="c")
    assert len(caught.value.issues) == 2


def test_an_agents_own_unset_variable_does_not_repeat_its_name() -> None:
    text = "version: 1\nagents:\n  a:\n    model: {provider: openai}\n    description: ${NOPE}\n"

    assert _messages(text, environ={}) == [
        "agents.yaml:5:18: agents.a.description: environment variable 'NOPE' is not set "
        "(write ${NOPE:-default} to give a default)"
    ]
