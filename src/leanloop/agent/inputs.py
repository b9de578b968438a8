"""Turn what a Runnable receives into the opening messages of a run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, convert_to_messages
from langchain_core.prompt_values import PromptValue

from leanloop.exceptions import InvalidArgumentType

__all__ = ["AgentInput", "opening_messages"]

AgentInput = str | Mapping[str, Any] | PromptValue | Sequence[BaseMessage]
"""A question, ``{"input": ..., "messages": [...]}``, a prompt value, or a message list."""


def opening_messages(value: Any, *, system_prompt: str | None) -> list[BaseMessage]:
    """Return the conversation a run starts from, with one system message first.

    The agent's own system prompt and any system messages in the input are merged into a
    single leading system message: several servers (llama.cpp chat templates among them)
    accept a system message only at the very start.

    Raises:
        InvalidArgumentType: For input of a kind the agent does not take (a user mistake,
            said in one line; also a ``TypeError``).
    """
    messages = _to_messages(value)
    if not any(isinstance(m, HumanMessage) for m in messages):
        msg = "the agent needs a question: a string, {'input': ...}, or messages with a human turn"
        raise InvalidArgumentType(msg)
    systems = [m for m in messages if isinstance(m, SystemMessage)]
    rest = [m for m in messages if not isinstance(m, SystemMessage)]
    texts = [system_prompt] if system_prompt else []
    texts.extend(m.text for m in systems if m.text)
    head: list[BaseMessage] = [SystemMessage(content="\n\n".join(texts))] if texts else []
    return head + rest


def _to_messages(value: Any) -> list[BaseMessage]:
    if isinstance(value, str):
        return [HumanMessage(content=value)]
    if isinstance(value, PromptValue):
        return list(value.to_messages())
    if isinstance(value, Mapping):
        if "input" not in value and "messages" not in value:
            msg = f"a dict input needs an 'input' key (got keys: {sorted(value)})"
            raise InvalidArgumentType(msg)
        history = list(convert_to_messages(value.get("messages", [])))
        question = value.get("input")
        return [*history, HumanMessage(content=str(question))] if question else history
    if isinstance(value, Sequence):
        return list(convert_to_messages(value))
    msg = f"the agent cannot take input of type {type(value).__name__}"
    raise InvalidArgumentType(msg)
