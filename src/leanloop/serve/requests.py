"""A chat-completions request, read and turned into what an agent takes.

The body is parsed here, not by FastAPI's parameter binding, so every problem is one
400 in OpenAI's error shape naming the field (FastAPI would answer 422 in its own
shape). OpenAI's sampling options (``temperature``, ``max_tokens``, ``tools``…) are
accepted and ignored: an agent's model settings and tools are its agents file's.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from leanloop.serve.errors import ServeError

__all__ = ["SESSION_HEADER", "ChatRequest", "RunInput", "parse_chat_request", "run_input"]

SESSION_HEADER = "x-leanloop-session"


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    """The fields of ``POST /v1/chat/completions`` that leanloop reads."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1)
    messages: list[_Message] = Field(min_length=1)
    stream: bool = False
    user: str | None = None
    n: int = 1


@dataclass(frozen=True)
class RunInput:
    """What the agent is given: its input messages and, for a session, the thread."""

    messages: list[BaseMessage]
    thread_id: str | None


def parse_chat_request(body: bytes) -> ChatRequest:
    """Parse and check a request body.

    Raises:
        ServeError: 400 for a body that is not JSON or not a chat request.
    """
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        msg = f"the request body is not valid JSON ({exc})"
        raise ServeError(400, msg, code="invalid_json") from None
    if not isinstance(data, dict):
        msg = f"the request body must be a JSON object (got {type(data).__name__})"
        raise ServeError(400, msg, code="invalid_request")
    try:
        request = ChatRequest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        msg = f"{where}: {first['msg']}"
        raise ServeError(400, msg, code="invalid_request", param=where) from None
    if request.n != 1:
        msg = f"an agent gives one answer per request (n={request.n})"
        raise ServeError(400, msg, code="invalid_request", param="n")
    return request


def run_input(request: ChatRequest, session_header: str | None) -> RunInput:
    """The agent's input, and the session the request belongs to.

    Without a session, the whole conversation is passed: the earlier messages are the
    history, the last user message the question. With one (the ``X-Leanloop-Session``
    header, else ``user``), the session store holds the history (ADR 0019), so only the
    system messages and the last user message are passed, and the earlier messages a
    client sends again with every request are not taken twice.

    Raises:
        ServeError: 400 for a role or content part an agent cannot take, or a
            conversation that does not end with the user's question.
    """
    converted = [_convert(index, message) for index, message in enumerate(request.messages)]
    turns = [m for m in converted if not isinstance(m, SystemMessage)]
    if not turns or not isinstance(turns[-1], HumanMessage):
        msg = "the last message (other than system messages) must be the user's question"
        raise ServeError(400, msg, code="invalid_messages", param="messages")
    thread = _session(request, session_header)
    if thread is None:
        return RunInput(converted, None)
    systems = [m for m in converted if isinstance(m, SystemMessage)]
    return RunInput([*systems, turns[-1]], thread)


def _session(request: ChatRequest, header: str | None) -> str | None:
    chosen = header if header is not None else request.user
    if chosen is None:
        return None
    if not chosen.strip():
        where = "the X-Leanloop-Session header" if header is not None else "user"
        msg = f"{where} is blank: give a session ID, or leave it out for no session"
        raise ServeError(400, msg, code="invalid_session", param="user")
    return chosen


def _convert(index: int, message: _Message) -> BaseMessage:
    text = _text(index, message.content)
    role = message.role
    if role in {"system", "developer"}:
        return SystemMessage(content=text)
    if role == "user":
        return HumanMessage(content=text)
    if role == "assistant":
        return AIMessage(content=text)
    # Tool and function messages answer tool calls the client made; an agent runs its
    # own tools, and has no such calls to match them with.
    msg = (
        f"messages[{index}].role {role!r} is not taken: an agent runs its own tools "
        "(roles: system, developer, user, assistant)"
    )
    raise ServeError(400, msg, code="invalid_messages", param=f"messages.{index}.role")


def _text(index: int, content: str | Sequence[dict[str, Any]] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts: list[str] = []
    for part in content:
        if part.get("type") != "text" or not isinstance(part.get("text"), str):
            msg = (
                f"messages[{index}].content has a {part.get('type')!r} part: "
                "only text parts are taken"
            )
            raise ServeError(400, msg, code="invalid_messages", param=f"messages.{index}.content")
        texts.append(part["text"])
    return "\n".join(texts)
