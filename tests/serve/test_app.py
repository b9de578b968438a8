"""The routes over ASGI in-process: statuses, OpenAI's shapes, streaming and sessions."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

# The token conftest.py gives the app (importlib mode: a test cannot import conftest).
AUTH = {"Authorization": "Bearer test-token-0123456789"}


def question(text: str, model: str = "echo", **extra: Any) -> dict[str, Any]:
    return {"model": model, "messages": [{"role": "user", "content": text}], **extra}


def assert_error(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["code"] == code
    assert error["message"]
    return dict(error)


def sse_payloads(text: str) -> list[str]:
    """The data of each server-sent event, in order (every event is one data line)."""
    events = [block for block in text.split("\n\n") if block]
    assert all(block.startswith("data: ") and "\n" not in block for block in events), text
    return [block.removeprefix("data: ") for block in events]


@pytest.fixture
def client(make_app: Callable[..., FastAPI]) -> Iterator[TestClient]:
    with TestClient(make_app()) as test_client:
        yield test_client


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    traced = [r for r in caplog.records if r.exc_info]
    assert not traced, [r.getMessage() for r in traced]


# -- the happy paths ---------------------------------------------------------------------


def test_completion_has_answer_usage_and_report(client: TestClient) -> None:
    response = client.post("/v1/chat/completions", headers=AUTH, json=question("Hello there."))
    assert response.status_code == 200
    body = response.json()
    assert body["object"] == "chat.completion"
    assert body["id"].startswith("chatcmpl-")
    assert body["model"] == "echo"
    choice = body["choices"][0]
    assert choice["message"] == {
        "role": "assistant",
        "content": "You said: Hello there. Before that: nothing",
    }
    assert choice["finish_reason"] == "stop"
    report = body["leanloop"]
    assert report["stop_reason"] == "answer"
    prompt = sum(r["input_tokens"] for r in report["requests"])
    completion = sum(r["output_tokens"] for r in report["requests"])
    assert body["usage"] == {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    assert completion > 0


def test_stream_sends_role_text_chunks_report_and_done(client: TestClient) -> None:
    response = client.post(
        "/v1/chat/completions", headers=AUTH, json=question("Stream it.", stream=True)
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    payloads = sse_payloads(response.text)
    assert payloads[-1] == "[DONE]"
    chunks = [json.loads(p) for p in payloads[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    texts = [c["choices"][0]["delta"].get("content", "") for c in chunks[1:-1]]
    assert len(texts) > 3  # the echo model streams a word at a time
    assert "".join(texts) == "You said: Stream it. Before that: nothing"
    assert all(c["choices"][0]["finish_reason"] is None for c in chunks[:-1])
    last = chunks[-1]
    assert last["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "stop",
    }
    assert last["usage"]["completion_tokens"] > 0
    assert last["leanloop"]["stop_reason"] == "answer"


def test_models_lists_the_agents_and_healthz_needs_no_token(client: TestClient) -> None:
    models = client.get("/v1/models", headers=AUTH).json()
    assert models["object"] == "list"
    assert [m["id"] for m in models["data"]] == ["broken", "echo", "slow", "stalling"]
    assert {m["object"] for m in models["data"]} == {"model"}
    health = client.get("/healthz")
    assert health.status_code == 200
    assert health.json()["status"] == "ok"


def test_without_a_session_the_messages_are_the_history(client: TestClient) -> None:
    body = {
        "model": "echo",
        "messages": [
            {"role": "user", "content": "My name is Ada."},
            {"role": "assistant", "content": "Hello Ada."},
            {"role": "user", "content": [{"type": "text", "text": "What is my name?"}]},
        ],
    }
    response = client.post("/v1/chat/completions", headers=AUTH, json=body)
    answer = response.json()["choices"][0]["message"]["content"]
    assert answer == "You said: What is my name? Before that: My name is Ada."


# -- sessions ----------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["header", "user"])
def test_a_session_continues_the_conversation(make_app: Callable[..., FastAPI], how: str) -> None:
    app = make_app()

    def ask(messages: list[dict[str, str]]) -> str:
        body: dict[str, Any] = {"model": "echo", "messages": messages}
        headers = dict(AUTH)
        if how == "header":
            headers["X-Leanloop-Session"] = "conversation-1"
        else:
            body["user"] = "conversation-1"
        response = client.post("/v1/chat/completions", headers=headers, json=body)
        assert response.status_code == 200, response.text
        assert response.json()["leanloop"]["session"]["thread_id"] == "conversation-1"
        return str(response.json()["choices"][0]["message"]["content"])

    with TestClient(app) as client:
        first = ask([{"role": "user", "content": "My name is Ada."}])
        # A client sends the whole conversation again; the session already holds it.
        second = ask(
            [
                {"role": "user", "content": "My name is Ada."},
                {"role": "assistant", "content": first},
                {"role": "user", "content": "What is my name?"},
            ]
        )
    assert second == "You said: What is my name? Before that: My name is Ada."
    sent = app.state.agents["echo"].model.requests[-1].messages
    assert [m.text for m in sent].count("My name is Ada.") == 1


def test_a_session_of_another_agent_is_a_conflict(client: TestClient) -> None:
    headers = {**AUTH, "X-Leanloop-Session": "owned"}
    first = client.post("/v1/chat/completions", headers=headers, json=question("Hi."))
    assert first.status_code == 200
    other = client.post(
        "/v1/chat/completions", headers=headers, json=question("Hi.", model="broken")
    )
    assert_error(other, 409, "session_conflict")


def test_a_blank_session_is_bad_input(client: TestClient) -> None:
    headers = {**AUTH, "X-Leanloop-Session": "  "}
    response = client.post("/v1/chat/completions", headers=headers, json=question("Hi."))
    assert_error(response, 400, "invalid_session")


# -- refusals ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "what"),
    [({}, "no bearer token"), ({"Authorization": "Bearer wrong"}, "a wrong bearer token")],
)
def test_a_missing_or_wrong_token_is_401(
    client: TestClient, headers: dict[str, str], what: str
) -> None:
    for response in (
        client.post("/v1/chat/completions", headers=headers, json=question("Hi.")),
        client.get("/v1/models", headers=headers),
    ):
        error = assert_error(response, 401, "invalid_api_key")
        assert error["type"] == "authentication_error"
        assert what in error["message"]
        assert response.headers["www-authenticate"] == "Bearer"


def test_no_token_configured_means_no_auth(make_app: Callable[..., FastAPI]) -> None:
    # Without a token only requests addressed to this machine are answered (test_browsers).
    with TestClient(make_app(token=None), base_url="http://127.0.0.1:8080") as open_client:
        assert open_client.get("/v1/models").status_code == 200


@pytest.mark.parametrize(
    ("body", "code", "param"),
    [
        (b'{"model": "echo", "messages": [', "invalid_json", None),
        (b"\xff\xfe", "invalid_json", None),
        (b"[1, 2]", "invalid_request", None),
        (b'{"model": "echo"}', "invalid_request", "messages"),
        (b'{"model": "echo", "messages": []}', "invalid_request", "messages"),
        (
            b'{"model": 3, "messages": [{"role": "user", "content": "x"}]}',
            "invalid_request",
            "model",
        ),
        (
            b'{"model": "echo", "n": 2, "messages": [{"role": "user", "content": "x"}]}',
            "invalid_request",
            "n",
        ),
        (
            b'{"model": "echo", "messages": [{"role": "tool", "content": "x"}]}',
            "invalid_messages",
            "messages.0.role",
        ),
        (
            b'{"model": "echo", "messages": [{"role": "user", "content": "x"},'
            b' {"role": "assistant", "content": "y"}]}',
            "invalid_messages",
            "messages",
        ),
        (
            b'{"model": "echo", "messages": [{"role": "user", "content":'
            b' [{"type": "image_url", "image_url": {"url": "x"}}]}]}',
            "invalid_messages",
            "messages.0.content",
        ),
    ],
)
def test_bad_input_is_400(
    client: TestClient,
    caplog: pytest.LogCaptureFixture,
    body: bytes,
    code: str,
    param: str | None,
) -> None:
    with caplog.at_level(logging.INFO):
        response = client.post(
            "/v1/chat/completions",
            headers={**AUTH, "Content-Type": "application/json"},
            content=body,
        )
    error = assert_error(response, 400, code)
    assert error["type"] == "invalid_request_error"
    assert error["param"] == param
    no_tracebacks(caplog)


def test_an_unknown_agent_is_404(client: TestClient) -> None:
    response = client.post("/v1/chat/completions", headers=AUTH, json=question("Hi.", "nope"))
    error = assert_error(response, 404, "model_not_found")
    assert "'nope'" in error["message"]
    assert "echo" in error["message"]


def test_an_unknown_route_is_404_in_the_same_shape(client: TestClient) -> None:
    assert_error(client.get("/v1/nothing", headers=AUTH), 404, "not_found")
    assert_error(client.get("/v1/chat/completions", headers=AUTH), 405, "method_not_allowed")


def test_an_oversized_body_is_413(make_app: Callable[..., FastAPI]) -> None:
    with TestClient(make_app(max_body_bytes=200)) as small:
        big = question("x" * 500)
        assert_error(
            small.post("/v1/chat/completions", headers=AUTH, json=big), 413, "request_too_large"
        )

        def chunked() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            data = json.dumps(big).encode()
            for start in range(0, len(data), 64):
                yield data[start : start + 64]

        response = small.post("/v1/chat/completions", headers=AUTH, content=chunked())
        assert_error(response, 413, "request_too_large")
        fits = small.post("/v1/chat/completions", headers=AUTH, json=question("Hi."))
        assert fits.status_code == 200


def test_a_failing_model_is_502_without_a_traceback(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        plain = client.post("/v1/chat/completions", headers=AUTH, json=question("Hi.", "broken"))
        streamed = client.post(
            "/v1/chat/completions", headers=AUTH, json=question("Hi.", "broken", stream=True)
        )
    error = assert_error(plain, 502, "model_error")
    assert "the model server is down" in error["message"]
    # The failure came before the first chunk: still a status, not a 200 stream.
    assert_error(streamed, 502, "model_error")
    no_tracebacks(caplog)


# -- concurrency and the deadline (scripted models that wait on an event) -----------------


def asgi_client(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://serve")


async def test_over_the_concurrency_limit_is_429(make_app: Callable[..., FastAPI]) -> None:
    app = make_app(max_concurrency=1)
    model = app.state.agents["slow"].model
    async with asgi_client(app) as http:
        running = asyncio.create_task(
            http.post("/v1/chat/completions", headers=AUTH, json=question("Wait.", "slow"))
        )
        await asyncio.wait_for(model.entered.wait(), 10)
        refused = await http.post("/v1/chat/completions", headers=AUTH, json=question("Hi."))
        error = assert_error(refused, 429, "concurrency_limit_exceeded")
        assert error["type"] == "rate_limit_error"
        model.gate.set()
        done = await running
        assert done.status_code == 200
        assert done.json()["choices"][0]["message"]["content"] == "Opened."
        # The slot is free again.
        again = await http.post("/v1/chat/completions", headers=AUTH, json=question("Hi."))
        assert again.status_code == 200
    assert app.state.limit.in_flight == 0


@pytest.mark.parametrize("stream", [False, True])
async def test_past_the_deadline_is_504(
    make_app: Callable[..., FastAPI], caplog: pytest.LogCaptureFixture, stream: bool
) -> None:
    # The gate is never opened: only the deadline ends the request.
    app = make_app(deadline=0.05)
    with caplog.at_level(logging.INFO):
        async with asgi_client(app) as http:
            response = await http.post(
                "/v1/chat/completions",
                headers=AUTH,
                json=question("Wait.", "slow", stream=stream),
            )
    error = assert_error(response, 504, "deadline_exceeded")
    assert error["type"] == "timeout_error"
    assert app.state.limit.in_flight == 0
    no_tracebacks(caplog)


async def test_a_deadline_after_the_first_chunk_ends_the_stream_with_an_error(
    make_app: Callable[..., FastAPI],
) -> None:
    app = make_app(deadline=0.2)
    async with asgi_client(app) as http:
        response = await http.post(
            "/v1/chat/completions", headers=AUTH, json=question("Go.", "stalling", stream=True)
        )
    assert response.status_code == 200
    payloads = sse_payloads(response.text)
    assert payloads[-1] == "[DONE]"
    assert json.loads(payloads[1])["choices"][0]["delta"]["content"] == "Thinking "
    assert json.loads(payloads[-2])["error"]["code"] == "deadline_exceeded"
    assert app.state.agents["stalling"].model.stopped.is_set()
    assert app.state.limit.in_flight == 0
