"""A client that goes away: the run is cancelled, its tool's child process ends, no traceback.

A real uvicorn on 127.0.0.1 and a raw socket as the client, closed at the moment the
test chooses: mid-stream (after the tool started, which the stream reports), and before
any answer began (a whole answer, still running its tool). The ``child`` agent's tool
waits on a child process that sleeps ten minutes; only cancelling the run ends it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest
from fastapi import FastAPI


def ran_and_ended(app: FastAPI, raw: Any) -> None:
    """The tool was cancelled, its child killed and reaped, and the slot freed."""
    tool = next(t for t in app.state.agents["child"].tools if t.name == "run_child")
    # Bounded waits for the server to notice the closed socket (set by the cancellation).
    assert tool.cancelled.wait(10), "the run went on after the client disconnected"
    assert len(tool.pids) == 1
    assert not raw.alive(tool.pids[0]), "the tool's child process outlived the run"
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
    raw: Any,
) -> None:
    base_url = start_server(app)
    with caplog.at_level(logging.INFO):
        sock = raw.send_request(base_url, question(stream=True))
        received = raw.read_until(sock, b": leanloop tool_start")
        assert received.startswith(b"HTTP/1.1 200")
        sock.close()
        ran_and_ended(app, raw)
    no_tracebacks()


def test_a_client_gone_before_the_answer_cancels_the_run_and_its_tool(
    app: FastAPI,
    start_server: Callable[[FastAPI], str],
    caplog: pytest.LogCaptureFixture,
    no_tracebacks: Callable[[], None],
    raw: Any,
) -> None:
    base_url = start_server(app)
    tool = next(t for t in app.state.agents["child"].tools if t.name == "run_child")
    with caplog.at_level(logging.INFO):
        sock = raw.send_request(base_url, question(stream=False))
        assert tool.started.wait(10), "the tool did not start"
        sock.close()  # nothing answered yet: only the closed connection tells
        ran_and_ended(app, raw)
    no_tracebacks()
    assert any("499 client_closed_request" in r.getMessage() for r in caplog.records)
