"""HTTP clients for chat models that work on any event loop, in any order.

An ``httpx.AsyncClient`` keeps its connection pool's locks and events bound to the event
loop that first used it, and ``langchain_openai`` shares one such client per base URL
across the whole process. So a model used from ``agent.invoke`` (leanloop's background
loop) and then from ``asyncio.run(agent.ainvoke(...))`` (a new loop) failed with
``... is bound to a different event loop``. :class:`LoopLocalTransport` keeps one pool per
running loop behind a single client, so the model a user holds works from every loop.

Every pool verifies TLS with one SSL context per process (and per ``SSL_CERT_FILE`` /
``SSL_CERT_DIR``, which httpx reads): loading the CA bundle costs 20-40 ms each time,
and a run makes a pool per loop (a warm runner's children inherit the loaded one).
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import threading
import weakref
from typing import Any

import httpx

__all__ = ["LoopLocalTransport", "loop_safe_async_client", "shared_ssl_context"]


class LoopLocalTransport(httpx.AsyncBaseTransport):
    """An async transport with one ``httpx.AsyncHTTPTransport`` pool per event loop.

    A pool is made the first time a loop sends a request and is dropped with the loop
    (the map holds loops weakly), so a process that runs many short ``asyncio.run`` calls
    does not keep their pools.
    """

    def __init__(self, **transport_options: Any) -> None:
        """Make pools with ``transport_options`` (see ``httpx.AsyncHTTPTransport``)."""
        self._options = {"verify": shared_ssl_context(), **transport_options}
        self._pools: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, httpx.AsyncHTTPTransport
        ] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()  # loops on several threads may share one transport

    def _pool(self) -> httpx.AsyncHTTPTransport:
        loop = asyncio.get_running_loop()
        with self._lock:
            pool = self._pools.get(loop)
            if pool is None:
                pool = httpx.AsyncHTTPTransport(**self._options)
                self._pools[loop] = pool
            return pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` through the running loop's own pool."""
        return await self._pool().handle_async_request(request)

    async def aclose(self) -> None:
        """Close the running loop's pool (the others close with their loops)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            pool = self._pools.pop(loop, None)
        if pool is not None:
            await pool.aclose()


def loop_safe_async_client(**client_options: Any) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` over a :class:`LoopLocalTransport` (usable from any loop)."""
    return httpx.AsyncClient(transport=LoopLocalTransport(), **client_options)


def shared_ssl_context() -> ssl.SSLContext:
    """The SSL context httpx would make by default (``SSL_CERT_FILE``, ``SSL_CERT_DIR``,
    else certifi's bundle), made once per process and per those two settings."""
    return _ssl_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _ssl_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    del cert_file, cert_dir  # the cache's key: httpx reads them from the environment itself
    return httpx.create_ssl_context()
