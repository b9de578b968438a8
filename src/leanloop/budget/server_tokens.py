"""Token counts the server agrees with: llama.cpp's ``POST /tokenize``.

Characters per token vary threefold with the content: prose runs at about 4 characters
a token, a log with timestamps and ids at under 2 (measured with Qwen2.5's tokenizer:
README prose 3.7, Python 4.1, a log 1.85, compact JSON 1.66). An estimate that is right
for prose sends a log chunk twice too large. A llama.cpp server counts exactly what it
will be sent, so :class:`ServerTokenCounter` asks it (``{"content": text}`` →
``{"tokens": [...]}``; the root is the base URL without a trailing ``/v1``) for a sample
of a text and returns that text's characters per token.

The counter never fails a run: a server without the endpoint (404 and the like), a
hosted API (never asked), a slow answer (a few seconds at most) or any other problem
means ``None``, and the caller keeps its own estimate. Answers are cached per server:
"no endpoint" for a minute, ratios per (server, sample) in a small LRU cache.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

import httpx

from leanloop.budget.window import is_own_host
from leanloop.httpclients import loop_safe_async_client
from leanloop.redact import redact_url

__all__ = [
    "SAMPLE_CHARS",
    "TOKENIZE_TIMEOUT_S",
    "ServerTokenCounter",
    "tokenize_root",
]

logger = logging.getLogger(__name__)

TOKENIZE_TIMEOUT_S = 3.0
"""Seconds one ``/tokenize`` request may take before the count is given up."""
SAMPLE_CHARS = 6_000
"""Characters of a text that are counted to measure its characters per token."""
UNSUPPORTED_TTL_S = 60.0
"""Seconds a server without the endpoint (or unreachable) is not asked again."""
_CACHE_SIZE = 256
_NO_ENDPOINT = frozenset({404, 405, 501})

ClientFactory = Callable[[], httpx.AsyncClient]


def tokenize_root(base_url: str | None) -> str | None:
    """The server root to ask (``base_url`` without ``/v1``), or ``None`` when not to ask.

    Only servers of our own are asked (:func:`~leanloop.budget.window.is_own_host`): a
    hosted API has no ``/tokenize`` and must not get our texts twice.
    """
    if not base_url:
        return None
    try:
        parts = urlsplit(base_url)
        host = parts.hostname or ""
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not host or not is_own_host(host):
        return None
    return base_url.rstrip("/").removesuffix("/v1")


class ServerTokenCounter:
    """Counts tokens with a llama.cpp server's ``/tokenize``, cached per server.

    Args:
        timeout: Seconds allowed for one count (connection included).
        client_factory: Builds the ``httpx.AsyncClient`` for one count (closed after it);
            inject in tests. ``None``: one shared client, its pools per event loop.
        clock: Monotonic seconds; inject a fake one in tests.
        unsupported_ttl: Seconds a server without the endpoint is not asked again.
    """

    def __init__(
        self,
        *,
        timeout: float = TOKENIZE_TIMEOUT_S,
        client_factory: ClientFactory | None = None,
        clock: Callable[[], float] = time.monotonic,
        unsupported_ttl: float = UNSUPPORTED_TTL_S,
    ) -> None:
        self._timeout = timeout
        self._client_factory = client_factory
        # One client for every count (its pools are per event loop): building an
        # httpx.AsyncClient loads the CA bundle, about 50 ms of CPU, and the loop asks for
        # two counts before each request.
        self._shared: httpx.AsyncClient | None = None
        self._clock = clock
        self._unsupported_ttl = unsupported_ttl
        self._unsupported: dict[str, float] = {}
        self._ratios: OrderedDict[tuple[str, str], float] = OrderedDict()
        # Counts from several event loops or threads may share one counter.
        self._lock = threading.Lock()

    def _client(self) -> httpx.AsyncClient:
        with self._lock:
            if self._shared is None:
                self._shared = loop_safe_async_client(timeout=self._timeout)
            return self._shared

    async def count(
        self, base_url: str | None, text: str, *, api_key: str | None = None
    ) -> int | None:
        """The number of tokens the server at ``base_url`` makes of ``text``, or ``None``."""
        root = tokenize_root(base_url)
        if root is None or not text:
            return None
        now = self._clock()
        with self._lock:
            if self._unsupported.get(root, 0.0) > now:
                return None
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        tokens, supported = await self._ask(root, text, headers)
        if not supported:
            with self._lock:
                self._unsupported[root] = self._clock() + self._unsupported_ttl
        return tokens

    async def chars_per_token(
        self,
        base_url: str | None,
        text: str,
        *,
        api_key: str | None = None,
        sample_chars: int = SAMPLE_CHARS,
    ) -> float | None:
        """Characters per token of ``text`` (its first ``sample_chars``), or ``None``."""
        sample = text[:sample_chars]
        root = tokenize_root(base_url)
        if root is None or not sample.strip():
            return None
        key = (root, hashlib.blake2b(sample.encode("utf-8", "replace"), digest_size=16).hexdigest())
        with self._lock:
            cached = self._ratios.get(key)
            if cached is not None:
                self._ratios.move_to_end(key)
                return cached
        tokens = await self.count(base_url, sample, api_key=api_key)
        if not tokens:
            return None
        ratio = len(sample) / tokens
        with self._lock:
            self._ratios[key] = ratio
            while len(self._ratios) > _CACHE_SIZE:
                self._ratios.popitem(last=False)
        logger.debug(
            "%s counts %d characters as %d tokens (%.2f a token)",
            redact_url(root),
            len(sample),
            tokens,
            ratio,
        )
        return ratio

    async def count_request(
        self,
        base_url: str | None,
        messages: list[dict[str, Any]],
        tools: Sequence[Mapping[str, Any]] = (),
        *,
        api_key: str | None = None,
    ) -> int | None:
        """The prompt tokens the server will count for a chat request, or ``None``.

        llama.cpp renders the request with its own chat template (``POST /apply-template``,
        the tool list included, as it will for the completion) and counts the result
        (``/tokenize``): the same figure its reply's ``prompt_tokens`` will report.
        """
        root = tokenize_root(base_url)
        if root is None or not messages:
            return None
        key = f"{root} apply-template"
        with self._lock:
            if self._unsupported.get(key, 0.0) > self._clock():
                return None
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        body: dict[str, Any] = {"messages": messages}
        if tools:
            body["tools"] = list(tools)
        prompt, supported = await self._apply_template(root, body, headers)
        if not supported:
            with self._lock:
                self._unsupported[key] = self._clock() + self._unsupported_ttl
        if prompt is None:
            return None
        return await self.count(base_url, prompt, api_key=api_key)

    async def _apply_template(
        self, root: str, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[str | None, bool]:
        response, supported = await self._post(f"{root}/apply-template", body, headers)
        try:
            prompt: Any = response.json().get("prompt") if response is not None else None
        except (ValueError, AttributeError):
            return None, supported
        return (prompt if isinstance(prompt, str) and prompt else None), supported

    def clear(self) -> None:
        """Forget every cached answer."""
        with self._lock:
            self._unsupported.clear()
            self._ratios.clear()

    async def _ask(self, root: str, text: str, headers: dict[str, str]) -> tuple[int | None, bool]:
        """``(tokens, supported)``: the count, and whether to ask this server again soon."""
        response, supported = await self._post(f"{root}/tokenize", {"content": text}, headers)
        return (_token_count(response) if response is not None else None), supported

    async def _post(
        self, url: str, body: dict[str, Any], headers: dict[str, str]
    ) -> tuple[httpx.Response | None, bool]:
        """``(response, supported)``: a successful answer, and whether to ask again soon."""
        try:
            async with asyncio.timeout(self._timeout):
                if self._client_factory is None:
                    response = await self._client().post(url, json=body, headers=headers)
                else:
                    async with self._client_factory() as client:
                        response = await client.post(url, json=body, headers=headers)
        except TimeoutError:
            # A busy server answers late; it has the endpoint, so ask again next time.
            logger.debug("POST %s took longer than %.1f s", redact_url(url), self._timeout)
            return None, True
        except Exception as exc:  # a count is a nicety: any failure means "unknown"
            logger.debug("POST %s failed: %s", redact_url(url), type(exc).__name__)
            return None, False
        if response.status_code in _NO_ENDPOINT:
            return None, False
        return (response if response.is_success else None), True


def _token_count(response: httpx.Response) -> int | None:
    try:
        body: Any = response.json()
    except ValueError:
        return None
    tokens = body.get("tokens") if isinstance(body, dict) else None
    if not isinstance(tokens, list) or not tokens:
        return None
    return len(tokens)
