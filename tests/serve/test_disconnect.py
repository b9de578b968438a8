"""A client that goes away: the run is cancelled, its tool's child process ends, no traceback.

A real uvicorn on 127.0.0.1 and a raw socket as the client, closed at the moment the
test chooses: mid-stream (after the tool started, which the stream reports), and before
any answer began (a whole answer, still running its tool). The ``child`` agent's tool
waits on a child process that sleeps ten minutes; only cancelling the run ends it.
"""

from __future__ import annotations

import json
import logging
import os
import socket
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
from fastapi import FastAPI

TOKEN = "test-token-0123456789"  # noqa: S105 - conftest.py's test token


def send_request(base_url: str, body: dict[str, Any]) -> socket.socket:
    """POST a chat request over a raw socket; the caller reads and closes it."""
    url = urlsplit(base_url)
    payload = json.dumps(body).encode()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {url.netloc}\r\n"
        f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    )
    sock = socket.create_connection((url.hostname, url.port), timeout=10)
    sock.sendall(head.encode() + payload)
    return sock


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    received = b""
    while marker not in received:
        data = sock.recv(4096)
        assert data, f"the server closed the stream before {marker!r}: {received!r}"
        received += data
    return received


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def ran_and_ended(app: FastAPI) -> None:
    """The tool was cancelled, its child killed and reaped, and the slot freed."""
    tool = next(t for t in app.state.agents["child"].tools if t.name == "run_child")
    # Bounded waits for the server to notice the closed socket (set by the cancellation).
    assert tool.cancelled.wait(10), "the run went on after the client disconnected"
    assert len(tool.pids) == 1
    assert not alive(tool.pids[0]), "the tool's child process outlived the run"
    waited = 0
    while app.state.limit.in_flight and waited < 200:
        tool.started.wait(0.05)  # already set: a short pause, bounded
        waited += 1
    assert app.state.limit.in_flight == 0


@pytest.fixture
def app(make_app: Callable[..., FastAPI]) -> FastAPI:
    return make_app("tools.yaml")


def question(stream: bool) -> dict[str, Any]:
    return {"model": "child", "stream": stream, "messages": [{"role": "user", "content": "Go"}]}


def test_a_client_gone_mid_stream_cancels_the_run_and_its_tool(
    app: FastAPI,
    start_server: Callable[[FastAPI], str],
    caplog: pytest.LogCaptureFixture,
    no_tracebacks: Callable[[], None],
) -> None:
    base_url = start_server(app)
    with caplog.at_level(logging.INFO):
        sock = send_request(base_url, question(stream=True))
        received = read_until(sock, b": leanloop tool_start")
        assert received.startswith(b"HTTP/1.1 200")
        sock.close()
        ran_and_ended(app)
    no_tracebacks()


def test_a_client_gone_before_the_answer_cancels_the_run_and_its_tool(
    app: FastAPI,
    start_server: Callable[[FastAPI], str],
    caplog: pytest.LogCaptureFixture,
    no_tracebacks: Callable[[], None],
) -> None:
    base_url = start_server(app)
    tool = next(t for t in app.state.agents["child"].tools if t.name == "run_child")
    with caplog.at_level(logging.INFO):
        sock = send_request(base_url, question(stream=False))
        assert tool.started.wait(10), "the tool did not start"
        sock.close()  # nothing answered yet: only the closed connection tells
        ran_and_ended(app)
    no_tracebacks()
    assert any("499 client_closed_request" in r.getMessage() for r in caplog.records)
