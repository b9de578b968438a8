"""Messages to JSON text and back, through LangChain's own message dicts.

``message_to_dict`` keeps every field of a message (tool calls, ``tool_call_id``,
``additional_kwargs``, ``response_metadata``, ``id``, ``name``, usage), so what comes
back compares equal to what went in.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict

__all__ = ["dump_message", "dump_messages", "load_message", "load_messages"]


def _fallback(value: Any) -> Any:
    """JSON for what a provider may leave in ``additional_kwargs`` that JSON lacks.

    A pydantic object (a parsed structured answer) is stored as its JSON data, anything
    else as its text: storing a step must never fail for an odd metadata value.
    """
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, bytes | bytearray):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, set | frozenset | tuple):
        return list(value)
    return str(value)


def dump_messages(messages: Sequence[BaseMessage]) -> str:
    """JSON text of a list of messages."""
    return json.dumps(
        [message_to_dict(message) for message in messages],
        ensure_ascii=False,
        default=_fallback,
    )


def load_messages(text: str) -> list[BaseMessage]:
    """The messages :func:`dump_messages` wrote."""
    return messages_from_dict(json.loads(text))


def dump_message(message: BaseMessage) -> str:
    """JSON text of one message."""
    return json.dumps(message_to_dict(message), ensure_ascii=False, default=_fallback)


def load_message(text: str) -> BaseMessage:
    """The message :func:`dump_message` wrote."""
    return messages_from_dict([json.loads(text)])[0]
