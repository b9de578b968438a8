"""The agents file the Robot keyword libraries write: one model on a test server, one agent.

Every suite talks to an OpenAI-compatible server started for it (the scripted server or
llama-server), so the model entry is the same everywhere but for the keys a suite adds;
the agent works in ``<folder>/workspace`` with the workspace tools. The libraries state
only what is special to their suite and leave the rest to :func:`model_entry`,
:func:`agent_entry` and :func:`write_agents_file`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

__all__ = ["MODEL_KEY", "WORKSPACE_TOOLS", "agent_entry", "model_entry", "write_agents_file"]

MODEL_KEY = "m"
"""The name of the one model in the file (what ``model:`` and ``pruning_model:`` name)."""
WORKSPACE_TOOLS = ("read_file", "list_files", "search")


def model_entry(base_url: str, model: str, **keys: Any) -> dict[str, Any]:
    """The model entry: ``model`` on the OpenAI-compatible server at ``base_url``.

    No API key, temperature 0; ``keys`` (``context_window``, ``max_tokens``, ``timeout``
    …) are added after those, or replace them.
    """
    return {
        "provider": "openai-compatible",
        "model": model,
        "base_url": base_url,
        "api_key": "none",
        "temperature": 0,
        **keys,
    }


def agent_entry(
    system_prompt: str, tools: Iterable[str] = WORKSPACE_TOOLS, **keys: Any
) -> dict[str, Any]:
    """An agent on the file's model with ``tools`` in ``./workspace``, plus ``keys``."""
    return {
        "model": MODEL_KEY,
        "system_prompt": system_prompt,
        "tools": list(tools),
        "workspace": "./workspace",
        **keys,
    }


def write_agents_file(
    folder: str | Path, model: dict[str, Any], name: str, agent: dict[str, Any]
) -> str:
    """Write ``<folder>/agents.yaml`` with ``model`` and the one agent ``name``.

    Creates ``<folder>/workspace`` when missing; returns the path of the file.
    """
    root = Path(folder)
    (root / "workspace").mkdir(parents=True, exist_ok=True)
    document = {"version": 1, "models": {MODEL_KEY: model}, "agents": {name: agent}}
    path = root / "agents.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return str(path)
