"""Budget overflow errors (src/leanloop/budget/overflow.py), moved from
features/budget_overflow.feature (issue 26).

A provider that refuses a request for its size says so in one of several shapes; leanloop
recognises each, reads the real window and prompt size when given, and leaves every other
error alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import ollama
import openai
import pytest
from langchain_openai import ChatOpenAI
from langchain_openai.chat_models.base import OpenAIContextOverflowError

from leanloop.budget import parse_overflow
from leanloop.exceptions import ContextOverflowError
from leanloop.testing.server import FakeModelServer, Reply

_REQUEST = httpx.Request("POST", "http://127.0.0.1:8080/v1/chat/completions")

LLAMA_BODY = {
    "code": 400,
    "message": "the request exceeds the available context size, try increasing it",
    "type": "exceed_context_size_error",
    "n_prompt_tokens": 2500,
    "n_ctx": 2048,
}


def _status_error(
    status: int, payload: Any, *, body: Any = "from payload"
) -> openai.APIStatusError:
    """Build the error the openai client raises: ``body`` is the payload's ``error``."""
    response = httpx.Response(status, json=payload, request=_REQUEST)
    if body == "from payload":
        body = payload.get("error", payload) if isinstance(payload, dict) else payload
    message = f"Error code: {status} - {payload}"
    if status == 400:
        return openai.BadRequestError(message, response=response, body=body)
    if status == 401:
        return openai.AuthenticationError(message, response=response, body=body)
    if status >= 500:
        return openai.InternalServerError(message, response=response, body=body)
    return openai.APIStatusError(message, response=response, body=body)


def _openai(message: str, code: str | None = None, status: int = 400) -> openai.APIStatusError:
    error = {"message": message, "type": "invalid_request_error", "param": "messages", "code": code}
    return _status_error(status, {"error": error})


def _text_body(text: str) -> BaseException:
    response = httpx.Response(400, content=text.encode(), request=_REQUEST)
    return openai.BadRequestError("Error code: 400", response=response, body=None)


_ERRORS: dict[str, Callable[[], BaseException]] = {
    "openai code": lambda: _openai(
        "This model's maximum context length is 8192 tokens. However, your messages resulted "
        "in 9000 tokens. Please reduce the length of the messages.",
        "context_length_exceeded",
    ),
    "openai message only": lambda: _openai(
        "This model's maximum context length is 128,000 tokens. However, you requested "
        "130,500 tokens. Please reduce the length of the messages."
    ),
    "vllm": lambda: _openai(
        "This model's maximum context length is 4096 tokens. However, you requested 5000 "
        "tokens (4500 in the messages, 500 in the completion). Please reduce the length."
    ),
    "llama.cpp body": lambda: _status_error(400, {"error": LLAMA_BODY}),
    "llama.cpp response json": lambda: _status_error(
        400, {"error": {**LLAMA_BODY, "n_prompt_tokens": 2600}}, body=None
    ),
    "llama.cpp plain dict": lambda: RuntimeError(
        {"error": {**LLAMA_BODY, "n_prompt_tokens": 3000}}
    ),
    "llama.cpp dict without type": lambda: ValueError(
        {"message": "prompt too big", "n_prompt_tokens": 3100, "n_ctx": 4096}
    ),
    "ollama response error": lambda: ollama.ResponseError(
        '{"error": "input length exceeds the context length"}', 400
    ),
    "ollama prompt too long": lambda: ollama.ResponseError(
        "prompt too long; exceeded max context length by 4 tokens", 500
    ),
    "ollama maximum context": lambda: RuntimeError("the input exceeds maximum context window"),
    "lm studio keep first": lambda: _openai(
        "Trying to keep the first 5413 tokens when context the overflows. However, the model "
        "is loaded with context length of only 4096 tokens, which is not enough. Try to load "
        "the model with a larger context length, or provide a shorter input"
    ),
    "lm studio context overflow": lambda: _openai("Context overflow: the prompt does not fit."),
    "generic 400": lambda: _openai("Request too large for the context window of this model."),
    "generic 413": lambda: _status_error(413, {"detail": "body exceeds the context length"}),
    "langchain openai overflow": lambda: OpenAIContextOverflowError(
        "context_length_exceeded",
        response=httpx.Response(400, request=_REQUEST),
        body=None,
    ),
    "leanloop overflow": lambda: ContextOverflowError(
        "the request was too large", prompt_tokens=700, window=512
    ),
    "long multi-line": lambda: _openai(
        "maximum context length is 2048 tokens\n" + "and more detail " * 100
    ),
    "bad tool schema 400": lambda: _openai("Invalid schema for function 'read_file'."),
    "server error mentioning size": lambda: _openai(
        "internal error while computing the context size", status=500
    ),
    "authentication 401": lambda: _openai("Incorrect API key provided.", status=401),
    "plain value error": lambda: ValueError("boom"),
    "html 400 body": lambda: _text_body("<html><body>400 Bad Request</body></html>"),
    "plain text 400 body": lambda: _text_body("the prompt exceeds the context window (n_ctx 2048)"),
}


@pytest.mark.parametrize(
    ("kind", "prompt", "window", "words"),
    [
        ("openai code", 9000, 8192, "maximum context length is 8192"),
        ("openai message only", 130500, 128000, "maximum context length"),
        ("vllm", 4500, 4096, "in the messages"),
        ("llama.cpp body", 2500, 2048, "exceeds the available context size"),
        ("llama.cpp response json", 2600, 2048, "exceeds the available context size"),
        ("llama.cpp plain dict", 3000, 2048, "exceeds the available context size"),
        ("llama.cpp dict without type", 3100, 4096, "too big"),
        ("ollama response error", None, None, "input length exceeds the context"),
        ("ollama prompt too long", None, None, "prompt too long"),
        ("ollama maximum context", None, None, "exceeds maximum context"),
        ("lm studio keep first", 5413, 4096, "context length of only 4096"),
        ("lm studio context overflow", None, None, "Context overflow"),
        ("generic 400", None, None, "context window"),
        ("generic 413", None, None, "context length"),
        ("langchain openai overflow", None, None, "context_length_exceeded"),
        ("leanloop overflow", 700, 512, "too large"),
        ("plain text 400 body", None, 2048, "exceeds the context window"),
    ],
)
def test_each_provider_overflow_shape_is_recognised_with_its_figures(
    kind: str, prompt: int | None, window: int | None, words: str
) -> None:
    found = parse_overflow(_ERRORS[kind]())

    assert found is not None, kind
    assert (found.prompt_tokens, found.window) == (prompt, window), found
    assert "\n" not in found.message
    assert words in found.message, found.message


@pytest.mark.parametrize(("wrapper", "link"), [(RuntimeError, "cause"), (ValueError, "context")])
def test_an_overflow_is_found_through_the_exception_chain(
    wrapper: type[Exception], link: str
) -> None:
    inner = _ERRORS["llama.cpp body"]()
    try:
        try:
            raise inner
        except Exception as exc:
            if link == "cause":
                raise wrapper("the model call failed") from exc
            raise wrapper("the model call failed")  # noqa: B904 - an implicit __context__
    except Exception as outer:
        error = outer
    assert getattr(error, "__cause__" if link == "cause" else "__context__") is inner

    found = parse_overflow(error)

    assert found is not None
    assert (found.prompt_tokens, found.window) == (2500, 2048), found


@pytest.mark.parametrize(
    "kind",
    [
        "bad tool schema 400",
        "server error mentioning size",
        "authentication 401",
        "plain value error",
        "html 400 body",
    ],
)
def test_other_errors_are_not_overflows(kind: str) -> None:
    assert parse_overflow(_ERRORS[kind]()) is None


_REFUSALS: dict[str, Any] = {
    "llama.cpp": {"error": LLAMA_BODY},
    "OpenAI": {
        "error": {
            "message": "This model's maximum context length is 8192 tokens. However, your "
            "messages resulted in 9100 tokens.",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }
    },
}


@pytest.fixture
def refusing_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """A server that refuses every chat request like ``request.param``; its base URL."""
    refusal = Reply(status=400, error=_REFUSALS[request.param])
    with FakeModelServer(replies=[refusal], when_empty="repeat") as server:
        yield server.base_url


@pytest.mark.parametrize(
    ("refusing_server", "prompt", "window"),
    [("llama.cpp", 2500, 2048), ("OpenAI", 9100, 8192)],
    indirect=["refusing_server"],
)
async def test_a_refusal_raised_through_chat_openai_by_a_real_http_exchange_is_an_overflow(
    refusing_server: str, prompt: int, window: int
) -> None:
    model = ChatOpenAI(model="qwen", base_url=refusing_server, api_key="sk-test", max_retries=0)
    with pytest.raises(openai.BadRequestError) as refused:
        await model.ainvoke("hello")

    found = parse_overflow(refused.value)

    assert found is not None, refused.value
    assert (found.prompt_tokens, found.window) == (prompt, window), found


def test_a_cycle_in_the_exception_chain_does_not_hang_overflow_parsing() -> None:
    error = _ERRORS["plain value error"]()
    middle = RuntimeError("middle")
    error.__cause__ = middle
    middle.__context__ = error
    assert error.__cause__.__context__ is error

    assert parse_overflow(error) is None


def test_an_overflow_becomes_leanloop_context_overflow_error() -> None:
    found = parse_overflow(_ERRORS["llama.cpp body"]())
    assert found is not None

    error = found.to_error()

    assert isinstance(error, ContextOverflowError)
    assert (error.prompt_tokens, error.window) == (2500, 2048)
    assert str(error) == found.message


def test_a_very_long_overflow_message_is_cut_to_one_short_line() -> None:
    found = parse_overflow(_ERRORS["long multi-line"]())
    assert found is not None

    assert "\n" not in found.message
    assert len(found.message) <= 300, len(found.message)
    assert found.message.startswith("maximum context length is 2048 tokens")
