"""What every pytest test gets: the logging setup of the process, as it was before it.

Tests that call the CLI in-process (``leanloop.cli.main``) set up logging as the command
does (``basicConfig(force=True)``, the ``leanloop`` logger's level for ``-q``/``-v``); left
in place, that would decide which records a later test's ``caplog`` sees. The same guard
the Behave steps use around an in-process CLI call (``features/support``, on pytest's path).

Also ``subagent_chain``: a lead agent that calls a sub-agent that calls another, all on
scripted models (tests/agent/test_sub_report.py, tests/cli/test_progress_subagents.py).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.cli_inprocess import logging_kept

from leanloop import LLMAgent


@pytest.fixture(autouse=True)
def _logging_as_it_was() -> Iterator[None]:
    with logging_kept():
        yield


_SUBAGENTS = """
version: 1
agents:
  lead:
    model:
      class: leanloop.testing:ScriptedChatModel
      kwargs:
        replies:
          - tool_calls: [{name: researcher, args: {task: "find the port"}}]
          - Port 8931.
    tools: ["agent:researcher"]
  researcher:
    model:
      class: leanloop.testing:ScriptedChatModel
      kwargs:
        replies: RESEARCHER
    tools: ["agent:reader"]
  reader:
    model:
      class: leanloop.testing:ScriptedChatModel
      context_window: 4096
      kwargs:
        replies:
          - tool_calls: [{name: read_file, args: {path: notes.txt}}]
          - The notes say 8931.
    tools: [read_file]
    workspace: ./ws
"""

_RESEARCHER: list[Any] = [
    {"tool_calls": [{"name": "reader", "args": {"task": "read the notes"}}]},
    "The port is 8931.",
]
"""The researcher's replies unless a test gives its own: it asks the reader, then answers."""


@pytest.fixture
def subagent_chain(tmp_path: Path) -> Callable[..., LLMAgent]:
    """Build ``lead`` → ``agent:researcher`` → ``agent:reader`` (``read_file`` on
    ws/notes.txt) in ``tmp_path``; ``researcher`` replaces the researcher's script."""

    def make(researcher: list[Any] | None = None) -> LLMAgent:
        (tmp_path / "ws").mkdir()
        (tmp_path / "ws" / "notes.txt").write_text("The port is 8931.\n", encoding="utf-8")
        replies = json.dumps(_RESEARCHER if researcher is None else researcher)
        text = textwrap.dedent(_SUBAGENTS).replace("RESEARCHER", replies)
        (tmp_path / "agents.yaml").write_text(text, encoding="utf-8")
        return LLMAgent.from_file(tmp_path / "agents.yaml", "lead")

    return make


MCP_PROBE_SERVER = Path(__file__).parent / "mcp_probe_server.py"


@pytest.fixture
def mcp_probe_server() -> Path:
    """The tests' stdio MCP server script (``mcp_probe_server.py``: its docstring says
    what its tools do); run it as ``[sys.executable, script, LOG]``."""
    return MCP_PROBE_SERVER
