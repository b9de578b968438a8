"""Robot keywords that write an agents file and run an agent through leanloop's Python API."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).parent))

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
        root = Path(folder)
        (root / "workspace").mkdir(parents=True, exist_ok=True)
        document = {
            "version": 1,
            "models": {
                "m": {
                    "provider": "openai-compatible",
                    "model": model,
                    "base_url": base_url,
                    "api_key": "none",
                    "temperature": 0,
                }
            },
            "agents": {
                "probe": {
                    "model": "m",
                    "system_prompt": system_prompt,
                    "tools": ["read_file", "list_files", "search"],
                    "workspace": "./workspace",
                    "max_rounds": int(max_rounds),
                }
            },
        }
        path = root / "agents.yaml"
        path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
        return str(path)

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
