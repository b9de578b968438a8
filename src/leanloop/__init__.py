"""leanloop: config-driven LangChain agents that stay inside their model's context window.

The public names below are imported on first use, so ``import leanloop`` (and the CLI's
``--help`` and ``validate``) does not pay for LangChain until an agent is built.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from leanloop.exceptions import (
    LeanloopError,
    LocalModelError,
    ModelError,
    RunFailed,
    SpecError,
    SpecIssue,
    ToolError,
)

if TYPE_CHECKING:
    from leanloop.agent import LLMAgent, load_agents
    from leanloop.events import EventRecorder
    from leanloop.report import RunReport
    from leanloop.spec import AgentSpec, ModelSpec, agent_schema, load_specs

try:
    __version__ = version("leanloop")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0+unknown"

__all__ = [
    "AgentSpec",
    "EventRecorder",
    "LLMAgent",
    "LeanloopError",
    "LocalModelError",
    "ModelError",
    "ModelSpec",
    "RunFailed",
    "RunReport",
    "SpecError",
    "SpecIssue",
    "ToolError",
    "__version__",
    "agent_schema",
    "load_agents",
    "load_specs",
]

_LAZY = {
    "LLMAgent": "leanloop.agent",
    "load_agents": "leanloop.agent",
    "EventRecorder": "leanloop.events",
    "RunReport": "leanloop.report",
    "AgentSpec": "leanloop.spec",
    "ModelSpec": "leanloop.spec",
    "agent_schema": "leanloop.spec",
    "load_specs": "leanloop.spec",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'leanloop' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
