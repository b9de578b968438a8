"""Agents files that name the edit tools and run_command, and run_command's options (issue 41).

The tools are built-in names like ``read_file``; run_command's ``command_timeout``,
``allowed_commands`` and ``shell`` are options of its ``tools`` entry, in the JSON Schema,
and a wrong one is the usual one-line, located error.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from leanloop.agent import LLMAgent
from leanloop.exceptions import SpecError
from leanloop.spec import load_specs_from_text

__all__: list[str] = []

_HEAD = "version: 1\nagents:\n  coder:\n    model: {provider: ollama, model: x}\n    workspace: .\n"


def _messages(tools: str, extra: str = "") -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_specs_from_text(f"{_HEAD}{extra}    tools: {tools}\n", source="agents.yaml")
    return [str(issue) for issue in caught.value.issues]


def test_an_agent_that_names_the_edit_tools_and_run_command_loads(tmp_path: Path) -> None:
    text = (
        f"{_HEAD}    tools:\n"
        "      - read_file\n      - write_file\n      - replace_lines\n      - insert_at_line\n"
        "      - str_replace\n      - apply_patch\n      - undo_edit\n"
        "      - {name: run_command, timeout: 45, command_timeout: 30, "
        "allowed_commands: [pytest, python]}\n"
    )
    spec = load_specs_from_text(text, base_dir=tmp_path)["coder"]

    (options,) = spec.tool_options
    assert (options.ref, options.timeout, options.command_timeout) == ("run_command", 45.0, 30.0)
    assert options.allowed_commands == ("pytest", "python")
    assert options.via_shell is False
    agent = LLMAgent.from_spec(spec)
    assert [tool.name for tool in agent.tools] == [
        "read_file",
        "write_file",
        "replace_lines",
        "insert_at_line",
        "str_replace",
        "apply_patch",
        "undo_edit",
        "run_command",
    ]
    command = agent.tools[-1]
    assert "Stops after 30 s" in command.description
    assert "Allowed programs: pytest, python." in command.description


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (
            "[{name: read_file, shell: true}]",
            "agents.yaml:6:31: agents.coder.tools[0].shell: 'shell' is an option of "
            "run_command only, not of 'read_file'",
        ),
        (
            "[{name: run_command, shel: true}]",
            "agents.yaml:6:33: agents.coder.tools[0].shel: unknown key 'shel' "
            "(did you mean 'shell'?)",
        ),
        (
            "[{name: run_command, command_timeout: 0}]",
            "agents.yaml:6:50: agents.coder.tools[0].command_timeout: 0 must be greater than 0",
        ),
        (
            "[{name: run_command, shell: true, allowed_commands: [pytest]}]",
            "agents.yaml:6:46: agents.coder.tools[0].allowed_commands: allowed_commands "
            "cannot be enforced with shell: true (a command line can run anything); drop "
            "one of them",
        ),
        (
            "[{name: run_command, allowed_commands: [.venv/bin/pytest]}]",
            "agents.yaml:6:52: agents.coder.tools[0].allowed_commands[0]: '.venv/bin/pytest' "
            "is a path; give the program's name ('pytest')",
        ),
        (
            "[{name: run_command, command_timeout: 120}]",
            "agents.yaml:6:50: agents.coder.tools[0].command_timeout: command_timeout 120 s "
            "is not under the call's limit (the agent's tool_timeout, 60 s), which would "
            "stop the call first; raise 'timeout' on this entry",
        ),
    ],
)
def test_a_wrong_option_is_a_one_line_located_error(tools: str, message: str) -> None:
    assert _messages(tools) == [message]


def test_a_command_timeout_under_the_entrys_own_timeout_is_fine() -> None:
    text = f"{_HEAD}    tools: [{{name: run_command, timeout: 300, command_timeout: 120}}]\n"

    (options,) = load_specs_from_text(text)["coder"].tool_options

    assert (options.timeout, options.command_timeout) == (300.0, 120.0)
