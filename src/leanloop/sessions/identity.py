"""Which agent a stored thread belongs to (ADR 0024); cheap to import (no LangChain).

A thread records the agent that first wrote it: the agent's name and the resolved path of
its agents file. An agent built in Python without a file (``LLMAgent(spec=AgentSpec(...))``,
``load_specs_from_text``) has no path: its name alone is its identity, so two such agents
of one name share their threads, and neither shares one with a file's agent of that name.
A turn or a resume asked by any other agent is refused (:func:`check_agent`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from leanloop.exceptions import SessionAgentMismatch

__all__ = ["AgentIdentity", "check_agent"]


def _text(value: str) -> str:
    """``value`` as text a database can keep: a character that is not UTF-8 (a file name's
    byte that is not UTF-8 arrives as a lone surrogate) is written as its escape."""
    return value.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass(frozen=True, slots=True)
class AgentIdentity:
    """The agent a stored thread belongs to.

    Attributes:
        name: The agent's name (its key under ``agents``, or ``AgentSpec.name``).
        file: The resolved path of its agents file; ``None`` for an agent built in Python.
    """

    name: str
    file: str | None = None

    @classmethod
    def of(cls, name: str, source: str | os.PathLike[str] | None) -> AgentIdentity:
        """The identity of the agent ``name`` loaded from ``source`` (``None``: no file).

        The path is made absolute against the working folder and resolved through
        symbolic links, so every spelling of one file is one identity.
        """
        file = None if source is None else _text(str(Path(source).resolve()))
        return cls(_text(name), file)

    def describe(self) -> str:
        """``the agent 'writer' of '/path/agents.yaml'``, or ``… built in Python (no agents
        file)``; quoted, so the text stays one line whatever the name or path holds."""
        if self.file is None:
            return f"the agent {self.name!r} built in Python (no agents file)"
        return f"the agent {self.name!r} of {self.file!r}"


def check_agent(thread_id: str, recorded: AgentIdentity | None, asking: AgentIdentity) -> None:
    """Refuse a turn of ``thread_id`` asked by an agent that is not its own.

    Args:
        thread_id: The session.
        recorded: The agent the stored thread belongs to; ``None`` when it records none
            (a new thread, or one stored before threads recorded their agent): any agent
            may continue it, and the first one that does owns it from then on.
        asking: The agent that asks for a turn, or to resume one.

    Raises:
        SessionAgentMismatch: ``recorded`` is another agent; the message, one line, names
            the thread, the agent that owns it and the one that asked.
    """
    if recorded is None or recorded == asking:
        return
    msg = (
        f"session {thread_id!r} belongs to {recorded.describe()}; {asking.describe()} cannot"
        " continue or resume it (give it a session ID of its own)"
    )
    raise SessionAgentMismatch(msg, thread_id=thread_id, owner=recorded, asking=asking)
