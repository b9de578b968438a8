"""Steps for features/budget_overflow.feature: telling a refusal for size from other errors."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import ollama
import openai
from behave import given, then, when
from behave.runner import Context
from langchain_openai import ChatOpenAI
from langchain_openai.chat_models.base import OpenAIContextOverflowError
from support.aio import run

from leanloop.budget import parse_overflow
from leanloop.exceptions import ContextOverflowError

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


class _RefusingHandler(BaseHTTPRequestHandler):
    """Answers every request with the 400 the server class was given."""

    def log_message(self, format: str, *args: Any) -> None:
        return None

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = self.server.refusal  # type: ignore[attr-defined]
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@given("an overflow test server that refuses every chat request like {kind}")
def step_refusing_server(context: Context, kind: str) -> None:
    refusals = {
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
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _RefusingHandler)
    httpd.daemon_threads = True
    httpd.refusal = json.dumps(refusals[kind]).encode()  # type: ignore[attr-defined]
    threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    ).start()

    def stop() -> None:
        httpd.shutdown()
        httpd.server_close()

    context.cleanups.append(stop)
    host, port = httpd.server_address[:2]
    context.budget_overflow_url = f"http://{host!s}:{port}/v1"
    assert port


@given("an overflow error from a ChatOpenAI request to the overflow test server")
def step_chat_error(context: Context) -> None:
    model = ChatOpenAI(
        model="qwen", base_url=context.budget_overflow_url, api_key="sk-test", max_retries=0
    )
    try:
        run(model.ainvoke("hello"))
    except Exception as exc:
        context.budget_overflow_error = exc
    else:
        raise AssertionError("the overflow test server did not refuse")
    assert isinstance(context.budget_overflow_error, openai.BadRequestError)


@given('an overflow error of kind "{kind}"')
def step_error(context: Context, kind: str) -> None:
    context.budget_overflow_error = _ERRORS[kind]()
    assert isinstance(context.budget_overflow_error, BaseException)


@given('a wrapped overflow error: kind "{kind}" raised inside a {wrapper} by "{link}"')
def step_wrapped(context: Context, kind: str, wrapper: str, link: str) -> None:
    inner = _ERRORS[kind]()
    outer_type = {"RuntimeError": RuntimeError, "ValueError": ValueError}[wrapper]
    try:
        try:
            raise inner
        except Exception as exc:
            if link == "cause":
                raise outer_type("the model call failed") from exc
            raise outer_type("the model call failed")  # an implicit __context__
    except Exception as outer:
        context.budget_overflow_error = outer
    link_attr = "__cause__" if link == "cause" else "__context__"
    assert getattr(context.budget_overflow_error, link_attr) is inner


@given('a cyclic overflow error chain around kind "{kind}"')
def step_cycle(context: Context, kind: str) -> None:
    error = _ERRORS[kind]()
    middle = RuntimeError("middle")
    error.__cause__ = middle
    middle.__context__ = error
    context.budget_overflow_error = error
    assert error.__cause__.__context__ is error


@when("the overflow error is parsed")
def step_parse(context: Context) -> None:
    context.budget_overflow = parse_overflow(context.budget_overflow_error)


def _figure(text: str) -> int | None:
    return None if text == "none" else int(text)


@then("it is an overflow with a prompt of {prompt} tokens and a window of {window} tokens")
def step_is_overflow(context: Context, prompt: str, window: str) -> None:
    found = context.budget_overflow
    assert found is not None, context.budget_overflow_error
    assert (found.prompt_tokens, found.window) == (_figure(prompt), _figure(window)), found


@then('the overflow message is one line mentioning "{words}"')
def step_message(context: Context, words: str) -> None:
    message = context.budget_overflow.message
    assert "\n" not in message
    assert words in message, message


@then("the overflow message is one line of at most {size:d} characters")
def step_message_size(context: Context, size: int) -> None:
    message = context.budget_overflow.message
    assert "\n" not in message
    assert len(message) <= size, len(message)
    assert message.startswith("maximum context length is 2048 tokens")


@then("it is not an overflow")
def step_not_overflow(context: Context) -> None:
    assert context.budget_overflow is None, context.budget_overflow


@then(
    "the overflow as an error is a ContextOverflowError with a prompt of {prompt:d} and a "
    "window of {window:d}"
)
def step_to_error(context: Context, prompt: int, window: int) -> None:
    error = context.budget_overflow.to_error()
    assert isinstance(error, ContextOverflowError)
    assert (error.prompt_tokens, error.window) == (prompt, window)
    assert str(error) == context.budget_overflow.message
