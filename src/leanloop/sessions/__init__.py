"""Sessions: conversations stored under a ``thread_id``, continued, resumed.

A store (:func:`open_store`: SQLite by default, PostgreSQL for several hosts) keeps each
thread's turns, each turn's completed steps and the model's notes; :func:`shared_store` is
the process's store for a URL, whose kept connection and kept decoded sessions make a turn
cost what is new, not the whole thread (issue 40). Each step is
committed before the next request, so a run killed half-way is resumed from its last
completed step (:meth:`SessionStore.reopen_turn`). One process runs one turn of a thread
at a time (:func:`thread_lock`); the store refuses a second process's turn while the first
one's process lives (``SessionBusy``), and asks for a resume when it died
(``UnfinishedTurn``). A thread belongs to the agent that first wrote it
(:class:`AgentIdentity`: its name and agents file); another agent's turn or resume is
refused (``SessionAgentMismatch``, :func:`check_agent`). A call is a turn when its
``configurable`` has a ``thread_id`` (:func:`check_thread_id` refuses an empty or blank
one); a run inside a turn that is not one of its turns (a sub-agent) gets the config
:func:`without_session` makes.

The names are imported on first use, so ``import leanloop.sessions`` (and
:func:`open_store`, :func:`thread_lock`) do not load LangChain.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from leanloop.sessions.configurable import check_thread_id, without_session
    from leanloop.sessions.identity import AgentIdentity, check_agent
    from leanloop.sessions.locks import thread_lock
    from leanloop.sessions.model import Session, SessionStore, Turn, TurnStatus
    from leanloop.sessions.owner import Owner
    from leanloop.sessions.stores import (
        open_store,
        redact_url,
        shared_store,
        sqlite_path,
        sqlite_url,
    )

__all__ = [
    "AgentIdentity",
    "Owner",
    "Session",
    "SessionStore",
    "Turn",
    "TurnStatus",
    "check_agent",
    "check_thread_id",
    "open_store",
    "redact_url",
    "shared_store",
    "sqlite_path",
    "sqlite_url",
    "thread_lock",
    "without_session",
]

_HOMES = {
    "AgentIdentity": "identity",
    "Owner": "owner",
    "Session": "model",
    "SessionStore": "model",
    "Turn": "model",
    "TurnStatus": "model",
    "check_agent": "identity",
    "check_thread_id": "configurable",
    "open_store": "stores",
    "redact_url": "stores",
    "shared_store": "stores",
    "sqlite_path": "stores",
    "sqlite_url": "stores",
    "thread_lock": "locks",
    "without_session": "configurable",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups find it without calling this again
    return value
