"""A scripted window test server and a window resolver on a fake clock, for
tests/budget/test_window.py and tests/budget/test_ollama_window.py."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from leanloop.budget import WindowResolver
from leanloop.budget.window import Window


@dataclass
class Route:
    """What the scripted server answers to one method and path."""

    status: int = 200
    body: bytes = b"{}"
    delay: float = 0.0


@dataclass
class Seen:
    """One request the scripted server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class WindowServer:
    """A stdlib HTTP server on 127.0.0.1 that answers scripted routes, 404 otherwise."""

    routes: dict[tuple[str, str], Route] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    hang_all: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    httpd: ThreadingHTTPServer | None = None

    @property
    def root(self) -> str:
        assert self.httpd is not None
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def base_url(self, provider: str | None) -> str:
        """Where a provider's client finds the server (Ollama at the root, others at /v1)."""
        return self.root if provider == "ollama" else f"{self.root}/v1"

    def answer(self, method: str, path: str, body: Any, status: int = 200) -> None:
        """Answer ``method path`` with ``body`` (JSON unless it is bytes)."""
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.routes[(method, path)] = Route(status, raw)

    def start(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with server.lock:
                    server.seen.append(
                        Seen(self.command, self.path, dict(self.headers.items()), body)
                    )
                route = server.routes.get((self.command, self.path), Route(404, b"{}"))
                delay = server.hang_all or route.delay
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(route.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(route.body)))
                    self.end_headers()
                    self.wfile.write(route.body)
                except OSError:  # the client gave up waiting, as it should
                    return

            do_GET = _answer
            do_POST = _answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()

    def count(self) -> int:
        with self.lock:
            return len(self.seen)


@pytest.fixture
def window_server() -> Iterator[WindowServer]:
    server = WindowServer()
    server.start()
    yield server
    server.stop()


class Windows:
    """A window resolver on a fake clock (replaceable), and what each resolution sent."""

    def __init__(self, server: WindowServer) -> None:
        self.server = server
        self.now = 1000.0
        self.resolver = self.on_fake_clock()
        self.profile: dict[str, Any] | None = None
        self.before = 0

    def on_fake_clock(self, timeout: float | None = None) -> WindowResolver:
        kwargs: dict[str, Any] = {"clock": lambda: self.now}
        if timeout is not None:
            kwargs["timeout"] = timeout
        self.resolver = WindowResolver(**kwargs)
        return self.resolver

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def says_max_input(self, tokens: int) -> None:
        """The model profile says ``tokens`` max input tokens."""
        self.profile = {"max_input_tokens": tokens, "tool_calling": True}

    async def resolve(self, **kwargs: Any) -> Window:
        options: dict[str, Any] = {
            "configured": None,
            "provider": None,
            "base_url": None,
            "model_name": None,
            "profile": self.profile,
        }
        options.update(kwargs)
        self.before = self.server.count()
        return await self.resolver.resolve(**options)

    async def at_server(self, provider: str, model: str, **kwargs: Any) -> Window:
        base_url = self.server.base_url(provider)
        return await self.resolve(provider=provider, base_url=base_url, model_name=model, **kwargs)

    @staticmethod
    def check(window: Window, tokens: int, source: str) -> None:
        """``window`` is ``tokens`` from ``source``; a default always says why it is one."""
        assert (window.tokens, window.source) == (tokens, source), window
        assert bool(window.note) == source.startswith("default:"), window

    def sent_nothing_new(self) -> bool:
        return self.server.count() == self.before


@pytest.fixture
def windows(window_server: WindowServer) -> Windows:
    return Windows(window_server)
