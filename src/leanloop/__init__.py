"""leanloop: config-driven LangChain agents that stay inside their model's context window."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

from leanloop.agent import LLMAgent, load_agents
from leanloop.config import AgentSpec, ModelSpec
from leanloop.exceptions import (
    ContextOverflowError,
    LeanloopError,
    LocalModelError,
    ModelError,
    SpecError,
    SpecIssue,
    ToolError,
)
from leanloop.spec import agent_schema, load_specs

try:
    __version__ = version("leanloop")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0+unknown"

__all__ = [
    "AgentSpec",
    "ContextOverflowError",
    "LLMAgent",
    "LeanloopError",
    "LocalModelError",
    "ModelError",
    "ModelSpec",
    "SpecError",
    "SpecIssue",
    "ToolError",
    "__version__",
    "agent_schema",
    "load_agents",
    "load_specs",
]
