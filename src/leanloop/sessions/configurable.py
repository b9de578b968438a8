"""What makes a call a session turn: ``configurable``'s ``thread_id`` and ``resume``.

Cheap to import (no LangChain): the CLI checks ``--session ID`` with it before it builds
anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from leanloop.exceptions import SessionError

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

__all__ = ["SESSION_KEYS", "check_thread_id", "not_utf8", "without_session"]

SESSION_KEYS = frozenset({"thread_id", "resume"})
"""The ``configurable`` keys that make a run one turn of a session."""


def not_utf8(text: str) -> str | None:
    """Why ``text`` cannot be written as UTF-8, located; ``None`` when it can.

    Only a lone surrogate cannot: on Linux, ``argv`` and stdin bytes that are not UTF-8
    arrive as ``U+DC80``-``U+DCFF`` (Python's ``surrogateescape``), named here as the byte
    they stand for; any other lone surrogate comes from Python code.
    """
    for index, char in enumerate(text):
        point = ord(char)
        if 0xDC80 <= point <= 0xDCFF:
            return f"character {index + 1} is the byte 0x{point - 0xDC00:02x}, which is not UTF-8"
        if 0xD800 <= point <= 0xDFFF:
            return f"character {index + 1} is a lone surrogate U+{point:04X}, which is not text"
    return None


def check_thread_id(value: object, *, given_as: str = "thread_id") -> str:
    """``value`` as a session ID: a string with some text in it, writable as UTF-8.

    An empty or blank ID is refused, never taken as "no session": a run that silently
    drops its session loses the conversation it was meant to continue. An ID that is not
    UTF-8 text (bytes that are not UTF-8 in ``--session``, a lone surrogate from Python)
    is refused before any store is opened: no store could keep it.

    Args:
        value: The ID as given.
        given_as: How the caller gave it, for the message (``thread_id``, ``--session``).

    Raises:
        SessionError: ``value`` is not a string, is empty or blank, or is not UTF-8 text.
    """
    if not isinstance(value, str):
        msg = f"{given_as} must be a string, got {value!r} ({type(value).__name__})"
        raise SessionError(msg)
    if not value.strip():
        msg = (
            f"{given_as} {value!r} is empty or blank: a session needs an ID with some text"
            " in it (leave it out to run without a session)"
        )
        raise SessionError(msg)
    problem = not_utf8(value)
    if problem is not None:
        msg = (
            f"{given_as} {value!r} is not UTF-8 text: {problem}; no session can be stored under it"
        )
        raise SessionError(msg)
    return value


def without_session(config: RunnableConfig) -> RunnableConfig:
    """``config`` for a run that is no turn of the caller's session.

    The keys that make a run a turn (:data:`SESSION_KEYS`) are left out of
    ``configurable``; everything else (callbacks, tags, metadata, the caller's own
    ``configurable`` keys) is kept. A sub-agent called inside a turn runs so (ADR 0022):
    the turn it is part of records its call and answer.
    """
    given: Mapping[str, Any] = config.get("configurable") or {}
    configurable = {key: value for key, value in given.items() if key not in SESSION_KEYS}
    return cast("RunnableConfig", {**config, "configurable": configurable})
