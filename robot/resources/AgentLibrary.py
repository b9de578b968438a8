"""Robot keywords that write an agents file and run an agent through leanloop's Python API."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import agent_entry, model_entry, write_agents_file
from aio import run

from leanloop.agent import LLMAgent
from leanloop.exceptions import LeanloopError


class AgentLibrary:
    """Build and run ``LLMAgent`` from a YAML file written by the test."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def write_agents_file(
        self,
        folder: str,
        base_url: str,
        system_prompt: str,
        model: str = "local-test",
        max_rounds: int = 4,
    ) -> str:
        """Write ``agents.yaml`` with one agent ``probe`` using the workspace tools.

        The agent's workspace is ``<folder>/workspace`` (created when missing).
        """
        agent = agent_entry(system_prompt, max_rounds=int(max_rounds))
        return write_agents_file(folder, model_entry(base_url, model), "probe", agent)

    def ask_agent(self, agents_file: str, question: str) -> dict[str, Any]:
        """Run the file's agent on ``question``; returns ``{"answer": …, "report": …}``."""
        agent = LLMAgent.from_file(agents_file)
        message = run(agent.ainvoke(question))
        content = message.content
        return {
            "answer": content if isinstance(content, str) else str(content),
            "report": dict(message.response_metadata.get("leanloop", {})),
        }

    def ask_agent_expecting_error(self, agents_file: str, question: str) -> str:
        """Run the agent and return the message of the leanloop error it raises."""
        agent = LLMAgent.from_file(agents_file)
        try:
            run(agent.ainvoke(question))
        except LeanloopError as exc:
            return f"{type(exc).__name__}: {exc}"
        msg = "the agent answered; a leanloop error was expected"
        raise AssertionError(msg)
