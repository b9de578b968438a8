"""One process asks a server for a model's window once while the answer holds (issue 39).

``serve`` probed the window three times per process: concurrent turns each found the
cache empty and each sent the whole probe (9 ``404`` lines on llama.cpp). Resolutions of
one (endpoint, model) at the same time now share one probe, from any event loop or thread;
a cancelled prober hands the asking on. The server here is an ``httpx.MockTransport``
that counts the requests and holds them until the test lets them go (no clock involved).
"""

from __future__ import annotations

import asyncio
import threading
from collections import Counter
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from leanloop.budget import WindowResolver
from leanloop.budget.window import Window

BASE = "http://127.0.0.1:8112/v1"
PROBE_PATHS = 5
"""Requests in one probe of an OpenAI-compatible server: /props, /v1/models,
/api/v0/models, /api/ps, /api/show."""


class _Server:
    """A llama.cpp that knows its window (/props) and 404s the rest; counts per model."""

    def __init__(self) -> None:
        self.seen: Counter[str] = Counter()
        self.first = threading.Event()
        self.go = threading.Event()
        self.go.set()

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.seen[request.url.path] += 1
        self.first.set()
        if not self.go.is_set():  # held until the test lets the answers go
            await asyncio.to_thread(self.go.wait, 30)
        if request.url.path == "/props":
            return httpx.Response(200, json={"default_generation_settings": {"n_ctx": 4096}})
        return httpx.Response(404, json={"error": "not found"})

    def factory(self) -> Callable[[], httpx.AsyncClient]:
        return lambda: httpx.AsyncClient(transport=httpx.MockTransport(self.handle))

    def probes(self) -> int:
        return self.seen["/props"]


def _resolver(server: _Server, clock: Callable[[], float] | None = None) -> WindowResolver:
    kwargs: dict[str, Any] = {"client_factory": server.factory()}
    if clock is not None:
        kwargs["clock"] = clock
    return WindowResolver(**kwargs)


async def _window(resolver: WindowResolver, model: str = "qwen") -> Window:
    return await resolver.resolve(
        configured=None,
        provider="openai-compatible",
        base_url=BASE,
        model_name=model,
        profile=None,
    )


async def _probing(server: _Server) -> None:
    """Once a probe has reached the server (and is held there)."""
    assert await asyncio.to_thread(server.first.wait, 30), "no probe reached the server"


async def test_concurrent_resolutions_of_one_model_share_one_probe() -> None:
    server = _Server()
    server.go.clear()
    resolver = _resolver(server)

    turns = [asyncio.create_task(_window(resolver)) for _ in range(3)]
    await _probing(server)
    served = asyncio.create_task(
        resolver.served(provider="openai-compatible", base_url=BASE, model_name="qwen")
    )
    server.go.set()
    windows = await asyncio.gather(*turns)

    assert {(w.tokens, w.source) for w in windows} == {(4096, "server:llama.cpp")}
    said = await served
    assert said is not None and said.tokens == 4096
    assert server.probes() == 1, server.seen
    assert sum(server.seen.values()) == PROBE_PATHS, server.seen


async def test_each_model_is_asked_once_while_its_answer_holds() -> None:
    server = _Server()
    now = [1000.0]
    resolver = _resolver(server, clock=lambda: now[0])

    for _ in range(3):
        await asyncio.gather(_window(resolver, "qwen"), _window(resolver, "phi"))
        now[0] += 10  # within the 30 s an answer holds

    assert server.probes() == 2, server.seen  # one per model


async def test_a_cancelled_prober_hands_the_probe_to_one_that_waits() -> None:
    server = _Server()
    server.go.clear()
    resolver = _resolver(server)

    first = asyncio.create_task(_window(resolver))
    await _probing(server)
    second = asyncio.create_task(_window(resolver))
    await asyncio.sleep(0)
    first.cancel()
    with pytest.raises(asyncio.CancelledError):
        await first
    server.go.set()

    window = await second

    assert (window.tokens, window.source) == (4096, "server:llama.cpp")
    assert server.probes() == 2, server.seen  # the cancelled one's, then the waiter's own


async def test_a_cancelled_waiter_leaves_the_probe_to_the_others() -> None:
    server = _Server()
    server.go.clear()
    resolver = _resolver(server)

    first = asyncio.create_task(_window(resolver))
    await _probing(server)
    waiter = asyncio.create_task(_window(resolver))
    await asyncio.sleep(0)
    waiter.cancel()
    server.go.set()

    window = await first

    assert window.tokens == 4096
    assert waiter.cancelled()
    assert server.probes() == 1, server.seen


def test_resolutions_on_two_event_loops_share_one_probe() -> None:
    """The process-wide resolver serves every loop (serve's, the warm runner's threads)."""
    server = _Server()
    server.go.clear()
    resolver = _resolver(server)
    windows: list[Window] = []
    other = threading.Thread(target=lambda: windows.append(asyncio.run(_window(resolver))))
    other.start()
    assert server.first.wait(30), "the other loop sent no probe"  # held at the server now

    async def here() -> tuple[Window, int]:
        task = asyncio.create_task(_window(resolver))
        for _ in range(100):  # plenty of turns for a probe of its own to reach the server
            await asyncio.sleep(0)
        asked = server.probes()
        server.go.set()
        return await task, asked

    window, asked_while_held = asyncio.run(here())
    other.join(30)

    assert asked_while_held == 1, server.seen  # this loop waited for the other's answer
    assert [w.tokens for w in [*windows, window]] == [4096, 4096]
    assert server.probes() == 1, server.seen
