"""A chat-completions request, read and turned into what an agent takes.

The body is parsed here, not by FastAPI's parameter binding, so every problem is one
400 in OpenAI's error shape naming the field (FastAPI would answer 422 in its own
shape): JSON nested deeper than any chat request needs, and text that is no Unicode (a
lone surrogate, which JSON's ``\\ud800`` escape can write and no model server can take),
included. OpenAI's sampling options (``temperature``, ``max_tokens``, ``tools``…) are
accepted and ignored: an agent's model settings and tools are its agents file's.

A client's ``system`` and ``developer`` messages never join the agent's system prompt:
any holder of the token could otherwise rewrite a served agent's instructions. They are
not refused either (many clients send one with every request): each becomes a line
before the question, ``Client note (system role, lower priority than the agent's
instructions): …``, so the model reads it as the user's context, below the agent's own.

The body's ``leanloop`` extension (``extra_body={"leanloop": {...}}`` in the ``openai``
client) carries what OpenAI's API has no field for. Its one key, ``approvals``, holds a
session's decisions on the tool calls its paused turn waits for (ADR 0037): ``{call_id:
"approve" | "reject" | {"decision": "reject", "reason": "..."} | {"decision": "edit",
"args": {...}}}``. Such a request goes on with the paused turn instead of starting one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from leanloop.exceptions import InvalidArgument
from leanloop.loop.policies.approval import Decision, decision_from
from leanloop.serve.errors import ServeError

__all__ = [
    "APPROVED_BY",
    "MAX_DEPTH",
    "NOTE_PREFIX",
    "SESSION_HEADER",
    "ChatRequest",
    "RunInput",
    "parse_chat_request",
    "run_input",
]

SESSION_HEADER = "x-leanloop-session"

APPROVED_BY = "serve client"
"""Who the report says made a decision a request carried (``approvals[].by``)."""

_EXTENSION_KEYS = frozenset({"approvals"})

MAX_DEPTH = 100
"""The deepest nesting of arrays and objects a request body may have (a chat request
needs a handful; a deeper one would only make the parser recurse)."""

NOTE_PREFIX = "Client note ({role} role, lower priority than the agent's instructions): "
"""How a client's system or developer message reaches the agent: a line before the question."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_CLIENT_ROLES = frozenset({"system", "developer"})
_CONTAINERS = (dict, list)


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
    leanloop: object = None


@dataclass(frozen=True)
class RunInput:
    """What the agent is given: its input messages and, for a session, the thread.

    ``approvals`` (a session only) are the decisions on the paused turn's calls, by call
    id: the run goes on with that turn, and ``messages`` hold an empty question (the
    turn's stored one is used).
    """

    messages: list[BaseMessage]
    thread_id: str | None
    approvals: dict[str, Decision] | None = None


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
    except RecursionError:  # the parser recurses once per level: far deeper than MAX_DEPTH
        raise _too_deep() from None
    _check_values(data)
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
    last user message is passed, and the earlier messages a client sends again with
    every request are not taken twice. The client's system and developer messages,
    wherever they stand, become lines before the question (:data:`NOTE_PREFIX`).

    Raises:
        ServeError: 400 for a role or content part an agent cannot take, or a
            conversation that does not end with the user's question.
    """
    notes: list[str] = []
    turns: list[BaseMessage] = []
    for index, message in enumerate(request.messages):
        text = _text(index, message.content)
        if message.role in _CLIENT_ROLES:
            if text.strip():
                notes.append(NOTE_PREFIX.format(role=message.role) + text)
        else:
            turns.append(_convert(index, message.role, text))
    if not turns or not isinstance(turns[-1], HumanMessage):
        msg = "the last message (other than system and developer ones) must be the user's question"
        raise ServeError(400, msg, code="invalid_messages", param="messages")
    question = turns[-1]
    if notes:
        question = HumanMessage(content="\n".join([*notes, "", question.text]))
    thread = _session(request, session_header)
    approvals = _approvals(request.leanloop)
    if approvals is not None:
        if thread is None:
            msg = (
                "leanloop.approvals decide on a session's paused turn: give its session ID "
                "(the X-Leanloop-Session header, or user)"
            )
            raise ServeError(400, msg, code="invalid_request", param="leanloop.approvals")
        # The stored question goes on: an empty one is what a resume takes.
        return RunInput([HumanMessage(content="")], thread, approvals)
    if thread is None:
        return RunInput([*turns[:-1], question], None)
    return RunInput([question], thread)


def _approvals(extension: object) -> dict[str, Decision] | None:
    """The decisions the ``leanloop`` extension carries; ``None`` when it carries none.

    Raises:
        ServeError: 400 for an extension that is no object, a key it does not have, or a
            decision that is none of the forms (each naming its field).
    """
    if extension is None:
        return None
    if not isinstance(extension, dict):
        msg = 'leanloop must be an object, such as {"approvals": {"CALL_ID": "approve"}}'
        raise ServeError(400, msg, code="invalid_request", param="leanloop")
    for key in extension:
        if key not in _EXTENSION_KEYS:
            msg = f"leanloop.{key} is not a key of the extension (keys: approvals)"
            raise ServeError(400, msg, code="invalid_request", param=f"leanloop.{key}")
    given = extension.get("approvals")
    if given is None:
        return None
    if not isinstance(given, dict) or not given:
        msg = 'leanloop.approvals must be an object of decisions by call id: {"CALL_ID": "approve"}'
        raise ServeError(400, msg, code="invalid_request", param="leanloop.approvals")
    decisions: dict[str, Decision] = {}
    for call_id, value in given.items():
        # Who decided is the server's to say: the client's own "by" is not taken.
        plain = {k: v for k, v in value.items() if k != "by"} if isinstance(value, dict) else value
        try:
            decisions[call_id] = decision_from(plain, by=APPROVED_BY)
        except InvalidArgument as exc:
            where = f"leanloop.approvals.{call_id}"
            raise ServeError(400, f"{where}: {exc}", code="invalid_request", param=where) from None
    return decisions


def _session(request: ChatRequest, header: str | None) -> str | None:
    chosen = header if header is not None else request.user
    if chosen is None:
        return None
    if not chosen.strip():
        where = "the X-Leanloop-Session header" if header is not None else "user"
        msg = f"{where} is blank: give a session ID, or leave it out for no session"
        raise ServeError(400, msg, code="invalid_session", param="user")
    return chosen


def _convert(index: int, role: str, text: str) -> BaseMessage:
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


def _check_values(data: object) -> None:
    """Refuse nesting deeper than :data:`MAX_DEPTH` and a lone surrogate in any string.

    The depth is walked with a stack of its own, not recursion (the body's depth is the
    client's to choose), over arrays and objects only. Surrogates are found by encoding
    the whole body as UTF-8 at once, which refuses them; only then is the string that
    holds one looked for, to name it.

    Raises:
        ServeError: 400, naming the field (``messages.0.content``) and what is wrong.
    """
    stack: list[tuple[object, int]] = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        items: Iterable[object]
        if isinstance(value, dict):
            items = value.values()
        elif isinstance(value, list):
            items = value
        else:
            continue  # only the body itself can be a scalar: nothing else is stacked
        if value and depth == MAX_DEPTH:
            raise _too_deep()
        stack.extend((item, depth + 1) for item in items if isinstance(item, _CONTAINERS))
    try:
        json.dumps(data, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        _locate_bad_text(data)


def _locate_bad_text(data: object) -> None:
    """Raise the 400 for the first string holding a lone surrogate, located by its path."""
    stack: list[tuple[object, tuple[str | int, ...]]] = [(data, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, str):
            _check_text(value, path)
        elif isinstance(value, dict):
            for key, item in value.items():
                _check_text(key, path, key=True)
                stack.append((item, (*path, key)))
        elif isinstance(value, list):
            stack.extend((item, (*path, index)) for index, item in enumerate(value))


def _check_text(text: str, path: tuple[str | int, ...], *, key: bool = False) -> None:
    found = _SURROGATE.search(text)
    if found is None:
        return
    where = ".".join(str(part) for part in path) or "body"
    what = f"a key of {where}" if key else where
    msg = (
        f"{what} is not valid Unicode text: it holds a lone surrogate "
        f"(U+{ord(found.group()):04X}) at character {found.start()}; send text as UTF-8 "
        "(a character outside the BMP as a pair of \\u escapes, never one half)"
    )
    raise ServeError(400, msg, code="invalid_text", param=where)


def _too_deep() -> ServeError:
    msg = f"the request body nests arrays and objects deeper than {MAX_DEPTH} levels"
    return ServeError(400, msg, code="invalid_json")
