"""What :class:`~leanloop.testing.server.FakeModelServer` answers: replies, faults, bodies.

The reply (:class:`Reply`) is dialect-free; the functions at the bottom turn it into an
OpenAI chat completion (JSON or server-sent chunks) or an Ollama ``/api/chat`` answer
(one object or NDJSON lines).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "FAULTS",
    "Fault",
    "Reply",
    "ServerRequest",
    "chars_per_token",
    "context_overflow",
    "echo",
    "http_error",
    "render_template",
    "tools_refused",
]

Fault = Literal[
    "", "hang", "cut", "cut_call", "cut_after_finish", "stall", "malformed", "drop", "kill"
]
"""What goes wrong with a reply; ``""`` is nothing (see :class:`Reply`)."""

FAULTS: tuple[str, ...] = (
    "",
    "hang",
    "cut",
    "cut_call",
    "cut_after_finish",
    "stall",
    "malformed",
    "drop",
    "kill",
)
"""Every :data:`Fault` name, for checking a script file."""


@dataclass
class Reply:
    """One answer of the fake server to a chat request, in any dialect.

    Attributes:
        content: The assistant's text.
        tool_calls: ``{"name": str, "arguments": dict | str, "id": str (optional)}`` each.
        prompt_tokens: The usage's prompt count; ``None``: the server counts it (the
            tokenizer over the rendered template with ``count_prompts``, else the
            request's JSON characters / 4).
        completion_tokens: The usage's completion count; ``None``: the reply's characters / 4.
        cached_tokens: Reported as ``usage.prompt_tokens_details.cached_tokens`` (OpenAI
            dialect) when not ``None``.
        finish_reason: ``None``: ``tool_calls`` with calls, else ``stop``.
        status: The HTTP status; 4xx/5xx sends ``error`` instead of an answer.
        error: The error body: a JSON value sent as is, or a message that the dialect
            wraps (``{"error": {"message", "type", "code"}}`` or Ollama's ``{"error": msg}``).
        headers: Extra response headers (``Retry-After`` on a 429).
        delay: Seconds to wait before answering (ended early by ``stop()``).
        chunk_delay: Seconds to wait before each streamed piece.
        chunk_size: Characters of content per streamed piece.
        fault: ``hang`` never answers until the server stops; ``cut`` ends the stream
            before the finish reason (tool calls sent whole; a JSON answer is truncated);
            ``cut_call`` ends it halfway through the first tool call's arguments;
            ``cut_after_finish`` sends the finish reason but no usage and no ``[DONE]``;
            ``stall`` sends everything before the finish, then nothing for ``stall``
            seconds (0: until the server stops), then closes; ``malformed`` sends broken
            JSON; ``drop`` closes the connection without a response; ``kill`` makes the
            whole server die (port closed, every connection dropped).
        stall: Seconds of silence for ``fault="stall"``.
    """

    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None
    finish_reason: str | None = None
    status: int = 200
    error: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    chunk_delay: float = 0.0
    chunk_size: int = 16
    fault: Fault = ""
    stall: float = 0.0

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Reply:
        """A reply from a script file's object (its keys are the attribute names).

        Raises:
            ValueError: On an unknown key or fault.
        """
        unknown = set(data) - set(cls.__dataclass_fields__)
        if unknown:
            msg = f"unknown reply keys {sorted(unknown)}"
            raise ValueError(msg)
        if data.get("fault", "") not in FAULTS:
            msg = f"unknown fault {data['fault']!r}; one of {FAULTS[1:]}"
            raise ValueError(msg)
        return cls(**data)


@dataclass(frozen=True)
class ServerRequest:
    """One request the fake server received.

    Attributes:
        index: Its place among all requests, from 0 (arrival order).
        method: ``GET`` or ``POST``.
        path: The path without the query string.
        headers: The request headers.
        body: The parsed JSON body (``{}`` when empty or not JSON).
        raw: The body's bytes.
        time: ``time.monotonic()`` at arrival.
    """

    index: int
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    time: float

    @property
    def dialect(self) -> str:
        """``ollama`` for ``/api/…`` paths, else ``openai``."""
        return "ollama" if self.path.startswith("/api/") else "openai"

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of the body (``[]`` for other requests)."""
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return list(messages) if isinstance(messages, list) else []

    @property
    def last_user_text(self) -> str:
        """The text of the last user message (``""`` when there is none)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                return _text(message.get("content"))
        return ""


def _text(content: Any) -> str:
    if isinstance(content, list):  # OpenAI content parts
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def echo(prefix: str = "echo: ", limit: int | None = None) -> Callable[[ServerRequest], Reply]:
    """A handler answering ``prefix`` + the last user message (cut to ``limit`` characters)."""

    def answer(request: ServerRequest) -> Reply:
        return Reply(content=prefix + request.last_user_text[:limit])

    return answer


def render_template(body: dict[str, Any]) -> str:
    """The fake chat template ``/apply-template`` renders: roles and texts, calls, tools.

    Deterministic, so a test can compute the prompt a request makes.
    """
    messages = body.get("messages") or []
    parts = [f"<|{m.get('role')}|>{_text(m.get('content'))}" for m in messages]
    for message in messages:
        parts.extend(json.dumps(c, sort_keys=True) for c in message.get("tool_calls") or [])
    if body.get("tools"):
        parts.append(json.dumps(body["tools"], sort_keys=True))
    return "".join(parts) + "<|assistant|>"


def chars_per_token(ratio: float) -> Callable[[str], int]:
    """A tokenizer counting ``ratio`` characters a token (at least one token)."""

    def count(text: str) -> int:
        return max(1, round(len(text) / ratio))

    return count


def http_error(status: int, message: str, **headers: str) -> Reply:
    """An HTTP error reply; ``headers`` use ``_`` for ``-`` (``Retry_After="2"``)."""
    extra = {k.replace("_", "-"): v for k, v in headers.items()}
    return Reply(status=status, error=message, headers=extra)


def context_overflow(n_prompt_tokens: int, n_ctx: int) -> Reply:
    """llama.cpp's 400 refusal of a prompt larger than its window."""
    message = (
        f"request ({n_prompt_tokens} tokens) exceeds the available context size "
        f"({n_ctx} tokens), try increasing it"
    )
    error = {
        "code": 400,
        "message": message,
        "type": "exceed_context_size_error",
        "n_prompt_tokens": n_prompt_tokens,
        "n_ctx": n_ctx,
    }
    return Reply(status=400, error={"error": error})


def tools_refused(status: int = 500) -> Reply:
    """llama-server's refusal of ``tools`` without ``--jinja``.

    The real server sends it as 500 ``server_error`` (measured); some versions as 400.
    """
    kind = "server_error" if status >= 500 else "invalid_request_error"
    error = {"code": status, "message": "tools param requires --jinja flag", "type": kind}
    return Reply(status=status, error={"error": error})


# ---- bodies ------------------------------------------------------------------------


def error_body(reply: Reply, dialect: str) -> Any:
    """The JSON body of an error reply in ``dialect``."""
    if not isinstance(reply.error, str):
        return reply.error
    if dialect == "ollama":
        return {"error": reply.error}
    kind = "server_error" if reply.status >= 500 else "invalid_request_error"
    return {"error": {"message": reply.error, "type": kind, "code": reply.status}}


def usage(reply: Reply, body: Any, counted: int | None) -> dict[str, Any]:
    """OpenAI's usage object for ``reply``; ``counted`` is the server's prompt count."""
    prompt = reply.prompt_tokens if reply.prompt_tokens is not None else counted
    if prompt is None:
        # A rough tokenizer: a real server counts the tool schemas it renders too.
        sent = json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))
        prompt = max(1, len(sent) // 4)
    completion = reply.completion_tokens
    if completion is None:
        completion = max(1, (len(reply.content) + len(json.dumps(reply.tool_calls))) // 4)
    found: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    if reply.cached_tokens is not None:
        found["prompt_tokens_details"] = {"cached_tokens": reply.cached_tokens}
    return found


def _arguments(call: dict[str, Any]) -> str:
    arguments = call.get("arguments", {})
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def openai_calls(reply: Reply, stamp: str) -> list[dict[str, Any]]:
    """The reply's tool calls in OpenAI's form."""
    return [
        {
            "id": call.get("id") or f"call_{stamp}_{index}",
            "type": "function",
            "function": {"name": call["name"], "arguments": _arguments(call)},
        }
        for index, call in enumerate(reply.tool_calls)
    ]


def _finish(reply: Reply) -> str:
    return reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")


def completion(reply: Reply, model: str, stamp: str, use: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = openai_calls(reply, stamp)
    choice = {"index": 0, "message": message, "finish_reason": _finish(reply)}
    return {"id": f"chatcmpl-{stamp}", "object": "chat.completion", "created": 0,
            "model": model, "choices": [choice], "usage": use}  # fmt: skip


def chunks(
    reply: Reply, model: str, stamp: str, use: dict[str, Any] | None
) -> Iterator[dict[str, Any]]:
    """The ``chat.completion.chunk`` objects of a streamed answer, faults applied.

    ``use``: the usage chunk's object, ``None`` when the request did not ask for one.
    """
    base = {"id": f"chatcmpl-{stamp}", "object": "chat.completion.chunk", "created": 0,
            "model": model}  # fmt: skip

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    text, size = reply.content, max(1, reply.chunk_size)
    for start in range(0, len(text), size):
        yield chunk({"content": text[start : start + size]})
    for index, call in enumerate(openai_calls(reply, stamp)):
        if reply.fault == "cut_call":
            arguments = call["function"]["arguments"]
            call["function"]["arguments"] = arguments[: len(arguments) // 2]
            yield chunk({"tool_calls": [{"index": index, **call}]})
            return
        yield chunk({"tool_calls": [{"index": index, **call}]})
    if reply.fault in ("cut", "cut_call", "stall"):
        return
    yield chunk({}, _finish(reply))
    if use is not None and reply.fault != "cut_after_finish":
        yield {**base, "choices": [], "usage": use}


def _ollama_message(reply: Reply, content: str, *, calls: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls and reply.tool_calls:
        message["tool_calls"] = [
            {"function": {"name": c["name"], "arguments": c.get("arguments", {})}}
            for c in reply.tool_calls
        ]
    return message


def ollama_final(reply: Reply, model: str, use: dict[str, Any], *, whole: bool) -> dict[str, Any]:
    """The last object of an Ollama answer (``done: true``) with its counts."""
    message = _ollama_message(reply, reply.content if whole else "", calls=whole)
    return {"model": model, "created_at": "2026-01-01T00:00:00Z", "message": message,
            "done": True, "done_reason": reply.finish_reason or "stop",
            "total_duration": 1_000_000, "load_duration": 1_000,
            "prompt_eval_count": use["prompt_tokens"], "prompt_eval_duration": 1_000,
            "eval_count": use["completion_tokens"], "eval_duration": 1_000}  # fmt: skip


def ollama_lines(reply: Reply, model: str, use: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The NDJSON objects of a streamed Ollama answer: text pieces, the calls, the counts."""
    text, size = reply.content, max(1, reply.chunk_size)
    for start in range(0, len(text), size):
        piece = _ollama_message(reply, text[start : start + size], calls=False)
        yield {"model": model, "created_at": "2026-01-01T00:00:00Z", "message": piece,
               "done": False}  # fmt: skip
    if reply.tool_calls and reply.fault != "cut_call":
        # Ollama sends the calls whole, in one object before the last.
        calls = _ollama_message(reply, "", calls=True)
        yield {"model": model, "created_at": "2026-01-01T00:00:00Z", "message": calls,
               "done": False}  # fmt: skip
    if reply.fault not in ("cut", "cut_call", "stall"):
        yield ollama_final(reply, model, use, whole=False)
