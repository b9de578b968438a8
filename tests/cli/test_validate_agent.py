"""``leanloop validate FILE --agent A`` checks A and what it uses, not the other agents
(issue 29: one unset ``${VAR}`` in an agent not being used failed the whole file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from leanloop.cli import main

AGENTS = """\
version: 1
models:
  fake: {class: "leanloop.testing:ScriptedChatModel"}
  hosted: {provider: openai, model: gpt-4o-mini, api_key: "${LEANLOOP_TEST_UNSET_KEY}"}
agents:
  good:
    model: fake
  bad:
    model: hosted
"""


@pytest.fixture
def agents_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("LEANLOOP_TEST_UNSET_KEY", raising=False)
    path = tmp_path / "agents.yaml"
    path.write_text(AGENTS, encoding="utf-8")
    return path


def test_the_whole_file_reports_the_unset_variable(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(agents_file)]) == 2
    assert "LEANLOOP_TEST_UNSET_KEY" in capsys.readouterr().err


def test_an_agent_that_does_not_need_it_validates(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(agents_file), "--agent", "good"]) == 0
    assert capsys.readouterr().out.strip() == "ok: 1 agent (good)"


def test_the_agent_that_needs_it_still_fails(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(agents_file), "--agent", "bad"]) == 2
    assert "LEANLOOP_TEST_UNSET_KEY" in capsys.readouterr().err


def test_an_unknown_agent_is_one_located_error(
    agents_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEANLOOP_TEST_UNSET_KEY", "sk-test")
    assert main(["validate", str(agents_file), "--agent", "nobody"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith("agents: no agent named 'nobody' (the agents are 'good', 'bad')"), line


def test_agent_with_check_models_is_refused_in_one_line(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["validate", str(agents_file), "--check-models", "--agent", "good"]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        "error: --agent is not taken with --check-models (it checks each)"
    ]
