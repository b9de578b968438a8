"""Fixtures of the serve tests: the scripted agents files in a fresh folder, the app, and
the app under a real uvicorn on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import uvicorn
from fastapi import FastAPI

from leanloop.serve import ServeSettings, create_app
from leanloop.serve.main import load_served_agents

FIXTURES = Path(__file__).parent / "fixtures"
TOKEN = "test-token-0123456789"  # noqa: S105 - a test token
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def agents_file(tmp_path: Path) -> Path:
    """The agents file and its models module, copied so sessions are stored in tmp_path."""
    for name in ("agents.yaml", "tools.yaml", "serve_models.py"):
        shutil.copy(FIXTURES / name, tmp_path / name)
    return tmp_path / "agents.yaml"


@pytest.fixture
def make_app(agents_file: Path) -> Callable[..., FastAPI]:
    """Build the app over the fixture agents; keyword arguments are ServeSettings fields.

    ``agents="tools.yaml"`` serves the agents that call tools instead.
    """

    def make(agents: str = "agents.yaml", **settings: Any) -> FastAPI:
        return create_app(
            load_served_agents(str(agents_file.with_name(agents))),
            ServeSettings(**{"token": TOKEN, **settings}),
        )

    return make


@pytest.fixture
def start_server() -> Iterator[Callable[[FastAPI], str]]:
    """Run an app under uvicorn in a thread, on a port the OS chose; return its ``/v1`` URL.

    Every server started is stopped after the test (and must stop within 10 s).
    """
    running: list[tuple[uvicorn.Server, threading.Thread, socket.socket]] = []

    def start(app: FastAPI) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5)
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        running.append((server, thread, sock))
        waited = threading.Event()
        for _ in range(200):
            if server.started or not thread.is_alive():
                break
            waited.wait(0.05)
        if not server.started:
            pytest.fail(f"uvicorn did not start on 127.0.0.1:{port} within 10 s")
        return f"http://127.0.0.1:{port}/v1"

    yield start
    for server, thread, sock in running:
        server.should_exit = True
        thread.join(10)
        sock.close()
        assert not thread.is_alive(), "uvicorn did not stop within 10 s"


@pytest.fixture
def no_tracebacks(
    caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> Callable[[], None]:
    """A check that nothing logged an error or a traceback, in the captured log records
    or on the raw stdout/stderr (uvicorn's own errors and a child process's never reach
    the root logger)."""

    def check() -> None:
        traced = [
            r.getMessage() for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR
        ]
        assert not traced, traced
        assert "Traceback" not in caplog.text, caplog.text
        out, err = capfd.readouterr()
        assert "Traceback" not in out + err, out + err

    return check


class RawClient:
    """A client on a raw socket, closed when a test chooses (a fixture: with importlib
    mode a conftest is no module), and a check that a process still runs."""

    @staticmethod
    def send_request(base_url: str, body: dict[str, Any], *, timeout: float = 10) -> socket.socket:
        """POST a chat request over a raw socket; the caller reads and closes it."""
        url = urlsplit(base_url)
        payload = json.dumps(body).encode()
        head = (
            f"POST /v1/chat/completions HTTP/1.1\r\nHost: {url.netloc}\r\n"
            f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n\r\n"
        )
        sock = socket.create_connection((url.hostname, url.port), timeout=timeout)
        sock.sendall(head.encode() + payload)
        return sock

    @staticmethod
    def read_until(sock: socket.socket, marker: bytes) -> bytes:
        """What the server sent, up to and including ``marker``."""
        received = b""
        while marker not in received:
            data = sock.recv(4096)
            assert data, f"the server closed the stream before {marker!r}: {received!r}"
            received += data
        return received

    @staticmethod
    def alive(pid: int) -> bool:
        """Whether ``pid`` runs (a zombie, dead but not reaped, counts as running)."""
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


@pytest.fixture
def raw() -> RawClient:
    return RawClient()
