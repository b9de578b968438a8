"""The reply-script notation every loop scenario writes its scripted model's replies in.

One table cell is one reply of the scripted model::

    | reply                                                        |
    | call lookup {"key": "a"}                                     |  a native tool call
    | call lookup {"key": "a"}; lookup {"key": "b"}                |  several calls, one reply
    | say "Let me look." then call lookup {"key": "a"}             |  prose with native calls
    | Let me look.\\n[call lookup {"key": "a"}]                     |  text with a ```tool block
    | change notes.txt to "new text" then call read_file {...}     |  edit the workspace first
    | refuse size as llama.cpp does                                |  the server refuses
    | raise connection reset by peer                               |  the model raises
    | echo the last question                                       |  "echo: <last human turn>"
    | The colour is blue.                                          |  a plain answer

In text, ``\\n`` is a newline and ``[call NAME {ARGS}]`` the ```tool block the text tool
protocol asks for; ``say "..."`` text is read the same way. The servers' refusals are in
:data:`REFUSALS`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import httpx
import openai
from langchain_core.messages import BaseMessage, HumanMessage

from leanloop.protocol import format_tool_call

__all__ = ["REFUSALS", "expand", "provider_error", "replies", "reply"]

_DECODER = json.JSONDecoder()
_CHANGE = re.compile(r'^change (?P<path>\S+) to "(?P<text>.*?)" then (?P<rest>.+)$', re.DOTALL)
_SAY = re.compile(r'^say "(?P<text>.*?)" then (?P<rest>call .+)$', re.DOTALL)
_BLOCK = re.compile(r"\[call (?P<name>[\w.\-]+) ")


# --- the servers' refusals -----------------------------------------------------------


def provider_error(status: int, body: dict[str, Any]) -> openai.APIStatusError:
    """The error the ``openai`` client raises for an HTTP ``status`` answer with ``body``.

    Built as ``openai`` 3.x builds it (``_make_status_error_from_response``): the text is
    ``Error code: <status> - <the body's message>``; the error object stays in ``.body``.
    """
    response = httpx.Response(status, json=body, request=httpx.Request("POST", "http://x"))
    kind = openai.BadRequestError if status == 400 else openai.InternalServerError
    payload = body.get("error", body)
    text = f"Error code: {status} - {payload['message']}"
    # Typed against the HTTP client openai was built with (httpx or its httpx2 fork); it
    # only reads the status and headers, which both provide.
    return kind(text, response=cast(Any, response), body=payload)


def _error(message: str, kind: str = "invalid_request_error", **extra: Any) -> dict[str, Any]:
    return {"error": {"code": 400, "message": message, "type": kind, **extra}}


def _prompt_tokens(messages: list[BaseMessage]) -> int:
    # What a server would count for this prompt: a little more than the first 3.3 guess.
    return sum(len(m.text) for m in messages) // 3 + 400


def _size_llama(messages: list[BaseMessage]) -> openai.APIStatusError:
    body = _error(
        "the request exceeds the available context size, try increasing it",
        "exceed_context_size_error",
        n_prompt_tokens=_prompt_tokens(messages),
        n_ctx=2048,
    )
    return provider_error(400, body)


def _size_openai(messages: list[BaseMessage]) -> openai.APIStatusError:
    text = (
        "This model's maximum context length is 2048 tokens. However, your messages resulted "
        f"in {_prompt_tokens(messages)} tokens. Please reduce the length of the messages."
    )
    body = {
        "error": {
            "message": text,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    }
    return provider_error(400, body)


def _fixed(status: int, body: dict[str, Any]) -> Callable[[list[BaseMessage]], Exception]:
    return lambda messages: provider_error(status, body)


REFUSALS: dict[str, Callable[[list[BaseMessage]], Exception]] = {
    # Refusals for size, with the figures each server puts in them.
    "size as llama.cpp does": _size_llama,
    "size as OpenAI does": _size_openai,
    "size as a generic server does": _fixed(
        400, _error("the prompt is longer than the model's context length")
    ),
    # Refusals of the tools field. What the Robot suite's scripted server sends.
    "tools as the scripted server does": _fixed(400, _error("tools param requires --jinja flag")),
    "tools as Ollama does": _fixed(
        400,
        {
            "error": {
                "message": "registry.ollama.ai/library/qwen2.5:0.5b does not support tools",
                "type": "api_error",
                "param": None,
                "code": None,
            }
        },
    ),
    # llama-server started without --jinja, as measured against the real binary.
    "tools as llama-server without jinja does": _fixed(
        500,
        {
            "error": {
                "code": 500,
                "message": "tools param requires --jinja flag",
                "type": "server_error",
            }
        },
    ),
    # vLLM started without --enable-auto-tool-choice: tools imply tool_choice "auto".
    "tools as vLLM without a tool parser does": _fixed(
        400,
        {
            "object": "error",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
            "message": '"auto" tool choice requires --enable-auto-tool-choice and '
            "--tool-call-parser to be set",
        },
    ),
    # A server that takes tools but not the tool messages of earlier rounds.
    "tool history": _fixed(
        400, _error("messages with role 'tool' are not supported by this model")
    ),
    # A refusal that has nothing to do with tools.
    "the request": _fixed(400, _error("'temperature' must be between 0 and 2")),
}


def _refuse(what: str) -> Callable[[list[BaseMessage]], Any]:
    if what not in REFUSALS:
        msg = f"no refusal {what!r} in the script notation; known: {sorted(REFUSALS)}"
        raise KeyError(msg)
    build = REFUSALS[what]

    def refuse(messages: list[BaseMessage]) -> Any:
        raise build(messages)

    return refuse


# --- text and calls ------------------------------------------------------------------


def _json_at(text: str, start: int) -> tuple[Any, int]:
    """The JSON value that starts at ``text[start]`` (after spaces) and where it ends."""
    while start < len(text) and text[start] == " ":
        start += 1
    return _DECODER.raw_decode(text, start)


def expand(text: str) -> str:
    """``\\n`` as a newline and every ``[call NAME {ARGS}]`` as a ```tool block."""
    text = text.replace("\\n", "\n")
    parts: list[str] = []
    done = 0
    for found in _BLOCK.finditer(text):
        if found.start() < done:
            continue
        try:
            args, end = _json_at(text, found.end())
        except ValueError:
            continue
        if not text.startswith("]", end):
            continue
        parts += [text[done : found.start()], format_tool_call(found["name"], args)]
        done = end + 1
    return "".join([*parts, text[done:]])


def _calls(text: str) -> list[dict[str, Any]]:
    """``NAME {ARGS}; NAME {ARGS}``: the calls of one reply (``{ARGS}`` may be left out)."""
    calls: list[dict[str, Any]] = []
    at = 0
    while True:
        name = re.compile(r"\s*([^\s{;]+)").match(text, at)
        if name is None:
            msg = f"a call needs a tool name: {text[at:]!r}"
            raise ValueError(msg)
        args: Any = {}
        at = name.end()
        if text[at:].lstrip().startswith("{"):
            args, at = _json_at(text, at)
        calls.append({"name": name[1], "args": args})
        rest = text[at:].lstrip()
        if not rest:
            return calls
        if not rest.startswith(";"):
            msg = f"calls are separated by ';': {rest!r}"
            raise ValueError(msg)
        at = len(text) - len(rest) + 1


def _echo(messages: list[BaseMessage]) -> str:
    question = [m for m in messages if isinstance(m, HumanMessage)][-1]
    return f"echo: {question.text}"


def reply(cell: str, *, workspace: Path | None = None) -> Any:
    """One reply of the scripted model, as :class:`leanloop.testing.ScriptedChatModel` takes it."""
    change = _CHANGE.match(cell)
    if change:
        assert workspace is not None, f"{cell!r} needs a workspace"
        then = reply(change["rest"], workspace=workspace)
        target = workspace / change["path"]

        def edit_then_reply(messages: list[BaseMessage]) -> Any:
            target.write_text(change["text"] + "\n", encoding="utf-8")
            return then(messages) if callable(then) else then

        return edit_then_reply
    said = _SAY.match(cell)
    if said:
        return {"content": expand(said["text"]), "tool_calls": _calls(said["rest"][5:])}
    if cell.startswith("call "):
        return {"tool_calls": _calls(cell.removeprefix("call "))}
    if cell.startswith("refuse "):
        return _refuse(cell.removeprefix("refuse "))
    if cell.startswith("raise "):
        return {"raise": cell.removeprefix("raise ")}
    if cell == "echo the last question":
        return _echo
    return expand(cell)


def replies(cells: list[str], *, workspace: Path | None = None) -> list[Any]:
    """Every reply of a script, in order."""
    return [reply(cell, workspace=workspace) for cell in cells]
