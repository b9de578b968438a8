"""leanloop: config-driven LangChain agents that stay inside their model's context window.

The public names below are imported on first use, so ``import leanloop`` (and the CLI's
``--help`` and ``validate``) does not pay for LangChain until an agent is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from leanloop._imports import lazy_exports
from leanloop.exceptions import (
    AgentRunError,
    ApprovalPending,
    ContextOverflowError,
    InvalidArgument,
    InvalidArgumentType,
    LeanloopError,
    LeanloopSignal,
    LocalModelError,
    ModelError,
    NoAnswer,
    RunFailed,
    SessionAgentMismatch,
    SessionBusy,
    SessionError,
    SpecError,
    SpecIssue,
    StructuredOutputError,
    ToolError,
    TransientToolError,
    UnfinishedTurn,
    UsageError,
)

if TYPE_CHECKING:
    __version__: str
    from leanloop.agent import LLMAgent, load_agents
    from leanloop.events import EventRecorder
    from leanloop.report import RunReport
    from leanloop.spec import AgentSpec, ModelSpec, agent_schema, load_specs

__all__ = [
    "AgentRunError",
    "AgentSpec",
    "ApprovalPending",
    "ContextOverflowError",
    "EventRecorder",
    "InvalidArgument",
    "InvalidArgumentType",
    "LLMAgent",
    "LeanloopError",
    "LeanloopSignal",
    "LocalModelError",
    "ModelError",
    "ModelSpec",
    "NoAnswer",
    "RunFailed",
    "RunReport",
    "SessionAgentMismatch",
    "SessionBusy",
    "SessionError",
    "SpecError",
    "SpecIssue",
    "StructuredOutputError",
    "ToolError",
    "TransientToolError",
    "UnfinishedTurn",
    "UsageError",
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


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("leanloop")
    except PackageNotFoundError:  # pragma: no cover - a source tree without install
        return "0+unknown"


_getattr, __dir__ = lazy_exports(__name__, _LAZY)


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value = _version()
        globals()[name] = value
        return value
    return _getattr(name)
