"""``approval`` and ``approve_decisions`` on a ``tools`` entry (issue 41, ADR 0037)."""

from __future__ import annotations

from pathlib import Path

import pytest

from leanloop.agent import LLMAgent
from leanloop.exceptions import SpecError
from leanloop.spec import load_specs_from_text
from leanloop.spec.tooloptions import asks_approval

__all__: list[str] = []

_HEAD = "version: 1\nagents:\n  coder:\n    model: {provider: ollama, model: x}\n    workspace: .\n"


def _messages(tools: str) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_specs_from_text(f"{_HEAD}    tools: {tools}\n", source="agents.yaml")
    return [str(issue) for issue in caught.value.issues]


def test_safe_defaults_ask_for_changes_and_never_for_reads() -> None:
    assert asks_approval("write_file", None) and asks_approval("run_command", None)
    assert not asks_approval("read_file", None) and not asks_approval("pkg.mod:fn", None)
    assert not asks_approval("write_file", "never") and asks_approval("read_file", "ask")


def test_the_agent_knows_which_tools_ask_and_what_a_person_may_decide(tmp_path: Path) -> None:
    text = (
        f"{_HEAD}    tools:\n      - read_file\n      - write_file\n"
        "      - {name: str_replace, approval: never}\n"
        "      - {name: list_files, approval: ask}\n"
        "      - {name: run_command, approve_decisions: [approve, reject]}\n"
    )
    spec = load_specs_from_text(text, base_dir=tmp_path)["coder"]

    agent = LLMAgent.from_spec(spec)

    assert agent.tool_approval == {
        "write_file": ("approve", "edit", "reject"),
        "list_files": ("approve", "edit", "reject"),
        "run_command": ("approve", "reject"),
    }


def test_a_wrong_approval_is_one_located_line() -> None:
    [message] = _messages("[{name: write_file, approval: maybe}]")
    assert "agents.coder.tools[0].approval" in message and "'ask', 'never'" in message


def test_decisions_on_a_tool_that_never_asks_are_refused() -> None:
    [message] = _messages("[{name: read_file, approve_decisions: [approve]}]")
    assert "approve_decisions has no effect" in message and "approval: ask" in message


def test_edit_alone_is_refused_and_an_unknown_decision_too() -> None:
    [alone] = _messages("[{name: write_file, approve_decisions: [edit]}]")
    assert "needs 'approve' or 'reject'" in alone
    [unknown] = _messages("[{name: write_file, approve_decisions: [approve, respond]}]")
    assert "approve_decisions[1]" in unknown


def test_ask_when_asks_only_on_a_condition_and_keeps_its_patterns(tmp_path: Path) -> None:
    text = (
        f"{_HEAD}    tools:\n      - read_file\n"
        "      - {name: run_command, approval: {ask_when: {argv: '^(rm|git push)\\b'}}}\n"
        "      - {name: write_file, approval: {ask_when: {path: '^deploy/'}}}\n"
    )
    spec = load_specs_from_text(text, base_dir=tmp_path)["coder"]

    agent = LLMAgent.from_spec(spec)

    assert set(agent.tool_approval) == {"run_command", "write_file"}
    assert agent.tool_ask_when == {
        "run_command": (("argv", "^(rm|git push)\\b"),),
        "write_file": (("path", "^deploy/"),),
    }


def test_a_pattern_that_is_no_regular_expression_is_one_located_line() -> None:
    [message] = _messages("[{name: run_command, approval: {ask_when: {argv: '^(rm'}}}]")
    assert "agents.coder.tools[0].approval.ask_when.argv" in message
    assert "not a regular expression" in message and "'^(rm'" in message


def test_ask_when_with_no_condition_or_another_key_is_refused() -> None:
    [empty] = _messages("[{name: run_command, approval: {ask_when: {}}}]")
    assert "agents.coder.tools[0].approval.ask_when: must not be empty" in empty
    missing, unknown = _messages("[{name: run_command, approval: {ask_if: {argv: rm}}}]")
    assert "tools[0].approval: missing required key 'ask_when'" in missing
    assert "tools[0].approval.ask_if: unknown key 'ask_if'" in unknown
