"""A scripted window test server (the fake model server, scripted route by route) and a
window resolver on a fake clock, for tests/budget/test_window.py and
tests/budget/test_ollama_window.py."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from leanloop.budget import WindowResolver
from leanloop.budget.window import Window
from leanloop.testing.server import FakeModelServer

# Every path FakeModelServer answers on its own. The window tests script each answer, so
# these are routed to 404 first: an unscripted probe finds nothing, as on a bare server.
_BUILT_IN_PATHS = (
    "/",
    "/v1/chat/completions",
    "/chat/completions",
    "/v1/models",
    "/models",
    "/health",
    "/props",
    "/tokenize",
    "/apply-template",
    "/api/chat",
    "/api/show",
    "/api/ps",
    "/api/tags",
    "/api/version",
)


@dataclass(frozen=True)
class Seen:
    """One request the scripted server received (its body as the bytes sent)."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class WindowServer:
    """The fake model server answering only the routes a test scripts, 404 otherwise.

    ``hang_all`` (truthy) makes every request hang until the server stops.
    """

    def __init__(self) -> None:
        self.fake = FakeModelServer(tokenizer=None, template=None)
        self.routes: dict[tuple[str, str], tuple[int, Any]] = {}
        """What the test scripted, by method and path."""
        for path in _BUILT_IN_PATHS:
            for method in ("GET", "POST"):
                self.fake.route(method, path, b"{}", status=404)

    @property
    def hang_all(self) -> bool:
        return self.fake.hang_all

    @hang_all.setter
    def hang_all(self, value: float) -> None:
        self.fake.hang_all = bool(value)

    @property
    def root(self) -> str:
        return self.fake.url

    def base_url(self, provider: str | None) -> str:
        """Where a provider's client finds the server (Ollama at the root, others at /v1)."""
        return self.root if provider == "ollama" else self.fake.base_url

    def answer(self, method: str, path: str, body: Any, status: int = 200) -> None:
        """Answer ``method path`` with ``body`` (JSON unless it is bytes)."""
        self.routes[(method, path)] = (status, body)
        self.fake.route(method, path, body, status=status)

    @property
    def seen(self) -> list[Seen]:
        return [Seen(r.method, r.path, r.headers, r.raw) for r in self.fake.requests]

    def count(self) -> int:
        return len(self.fake.requests)


@pytest.fixture
def window_server() -> Iterator[WindowServer]:
    server = WindowServer()
    with server.fake:
        yield server


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
