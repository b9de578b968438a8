"""AgentIdentity and check_agent (src/leanloop/sessions/identity.py): whose thread is it.

A stored thread belongs to the agent that first wrote it: its name and the resolved path
of its agents file, or its name alone for an agent built in Python (ADR 0024).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from leanloop.exceptions import SessionAgentMismatch, SessionError
from leanloop.sessions import AgentIdentity, check_agent


def test_the_file_is_resolved_against_the_working_folder_and_through_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "agents.yaml").write_text("version: 1\n", encoding="utf-8")
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    want = str((real / "agents.yaml").resolve())
    assert AgentIdentity.of("a", "real/agents.yaml") == AgentIdentity("a", want)
    assert AgentIdentity.of("a", Path("link/../link/agents.yaml")) == AgentIdentity("a", want)
    assert AgentIdentity.of("a", None) == AgentIdentity("a", None)


def test_text_that_is_not_utf8_is_kept_readable_and_storable() -> None:
    # A file name with the byte 0xff (Linux hands it to Python as U+DCFF) cannot be
    # written to a database as it is; its identity must still be text, and one line.
    identity = AgentIdentity.of("a\udcff", "/srv/x\udcff\n.yaml")
    assert identity.name.encode("utf-8") and identity.file is not None
    assert identity.file.encode("utf-8")
    assert "\n" not in identity.describe(), identity.describe()


def test_how_an_agent_is_named_in_messages() -> None:
    assert AgentIdentity("writer", "/x/agents.yaml").describe() == (
        "the agent 'writer' of '/x/agents.yaml'"
    )
    assert AgentIdentity("helper").describe() == (
        "the agent 'helper' built in Python (no agents file)"
    )


def test_a_thread_with_no_agent_or_with_this_one_may_be_continued() -> None:
    me = AgentIdentity("writer", "/x/agents.yaml")
    check_agent("t1", None, me)
    check_agent("t1", AgentIdentity("writer", "/x/agents.yaml"), me)


@pytest.mark.parametrize(
    ("recorded", "asking"),
    [
        (AgentIdentity("writer", "/x/agents.yaml"), AgentIdentity("reader", "/x/agents.yaml")),
        (AgentIdentity("writer", "/x/agents.yaml"), AgentIdentity("writer", "/y/agents.yaml")),
        (AgentIdentity("writer", "/x/agents.yaml"), AgentIdentity("writer")),
        (AgentIdentity("writer"), AgentIdentity("helper")),
    ],
)
def test_another_agent_is_refused_with_one_line_naming_both(
    recorded: AgentIdentity, asking: AgentIdentity
) -> None:
    with pytest.raises(SessionAgentMismatch) as caught:
        check_agent("t\n1", recorded, asking)
    error = caught.value
    assert isinstance(error, SessionError)
    assert (error.thread_id, error.owner, error.asking) == ("t\n1", recorded, asking)
    assert str(error) == (
        f"session 't\\n1' belongs to {recorded.describe()}; {asking.describe()} cannot"
        " continue or resume it (give it a session ID of its own)"
    )
