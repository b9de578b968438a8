"""A real uvicorn server on 127.0.0.1 and the official ``openai`` client, sync and streaming."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

import httpx
import openai
import pytest
from fastapi import FastAPI

TOKEN = "test-token-0123456789"  # noqa: S105 - conftest.py's test token


@dataclass
class Running:
    app: FastAPI
    base_url: str


@pytest.fixture
def server(make_app: Callable[..., FastAPI], start_server: Callable[[FastAPI], str]) -> Running:
    """The app under uvicorn on 127.0.0.1 (conftest.py's start_server)."""
    app = make_app()
    return Running(app, start_server(app))


def test_openai_client_sync(server: Running) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key=TOKEN, max_retries=0)
    assert [m.id for m in client.models.list()] == ["broken", "echo", "slow", "stalling"]
    completion = client.chat.completions.create(
        model="echo", messages=[{"role": "user", "content": "Hello."}]
    )
    assert completion.choices[0].message.content == "You said: Hello. Before that: nothing"
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage is not None
    assert completion.usage.completion_tokens > 0
    assert (completion.model_extra or {})["leanloop"]["stop_reason"] == "answer"


def test_openai_client_streaming(server: Running) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key=TOKEN, max_retries=0)
    stream = client.chat.completions.create(
        model="echo", messages=[{"role": "user", "content": "Stream."}], stream=True
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "You said: Stream. Before that: nothing"
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.usage is not None
    assert (last.model_extra or {})["leanloop"]["stop_reason"] == "answer"


def test_openai_client_sessions_continue(server: Running) -> None:
    client = openai.OpenAI(
        base_url=server.base_url,
        api_key=TOKEN,
        max_retries=0,
        default_headers={"X-Leanloop-Session": "client-1"},
    )
    first = client.chat.completions.create(
        model="echo", messages=[{"role": "user", "content": "I am Ada."}]
    )
    second = client.chat.completions.create(
        model="echo",
        messages=[
            {"role": "user", "content": "I am Ada."},
            {"role": "assistant", "content": first.choices[0].message.content or ""},
            {"role": "user", "content": "Who am I?"},
        ],
    )
    assert second.choices[0].message.content == "You said: Who am I? Before that: I am Ada."


def test_openai_client_raises_typed_errors(server: Running) -> None:
    client = openai.OpenAI(base_url=server.base_url, api_key=TOKEN, max_retries=0)
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="nope", messages=[{"role": "user", "content": "x"}])
    assert missing.value.code == "model_not_found"
    wrong = openai.OpenAI(base_url=server.base_url, api_key="wrong", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        wrong.models.list()


def test_a_client_that_goes_away_mid_stream_cancels_the_run(server: Running) -> None:
    model = server.app.state.agents["stalling"].model
    body = {"model": "stalling", "stream": True, "messages": [{"role": "user", "content": "Go"}]}
    headers = {"Authorization": f"Bearer {TOKEN}"}
    with (
        httpx.Client(timeout=10) as http,
        http.stream(
            "POST", f"{server.base_url}/chat/completions", json=body, headers=headers
        ) as response,
    ):
        assert response.status_code == 200
        for line in response.iter_lines():
            if "Thinking" in line:
                break  # leave with the run still waiting for its model
    # Bounded wait for the server to notice; the model is released only by cancellation.
    assert model.stopped.wait(10), "the run went on after the client disconnected"
    for _ in range(100):
        if server.app.state.limit.in_flight == 0:
            break
        threading.Event().wait(0.05)
    assert server.app.state.limit.in_flight == 0
