"""Auth and limits of ``leanloop serve``: the bearer token, the body, the concurrency.

The token (or, without one, the browser checks of :mod:`leanloop.serve.browsers`), the
body's size and the time its upload may take are one pure ASGI middleware
(:class:`Gate`) in front of the routes, so a refused request never reaches the JSON
parser or an agent, and the token is checked before the body is read. The concurrency
limit is a counter, not a queue (:class:`ConcurrencyLimit`): a request over it is refused
at once with a 429, so a client backs off instead of holding a connection open behind
runs that may take minutes.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import math
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from leanloop.serve.browsers import check_host, check_json, check_origin, is_loopback
from leanloop.serve.errors import ServeError, ServeSetupError

__all__ = [
    "ConcurrencyLimit",
    "Gate",
    "ServeSettings",
    "check_seconds",
    "is_loopback",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_log = logging.getLogger("leanloop.serve")

# Routes a load balancer or orchestrator probes without a token.
_OPEN_PATHS = frozenset({"/healthz"})
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
# Refusals after which the unread rest of the body would be taken for the next request.
_CLOSING = frozenset({408, 413})


@dataclass(frozen=True, kw_only=True)
class ServeSettings:
    """How the server guards itself.

    Attributes:
        token: The bearer token every ``/v1`` request must carry; ``None`` turns auth off.
        max_concurrency: Runs at once; a request beyond is answered 429.
        deadline: Seconds a request may take, stream included; past it, 504.
        max_body_bytes: The largest request body; a larger one is answered 413.
        body_timeout: Seconds the whole request body may take to arrive once the headers
            came; past it, 408 and the connection is closed (a client that declares a
            large body and sends a byte would otherwise hold it open for ever).
    """

    token: str | None = None
    max_concurrency: int = 8
    deadline: float = 300.0
    max_body_bytes: int = 1_048_576
    body_timeout: float = 30.0

    def __post_init__(self) -> None:
        """Refuse values that would make the server refuse everything or nothing.

        Raises:
            ServeSetupError: A limit that is not positive, or a token no client can send.
        """
        if self.max_concurrency < 1:
            msg = f"--max-concurrency must be at least 1 (got {self.max_concurrency})"
            raise ServeSetupError(msg)
        check_seconds("--deadline", self.deadline)
        check_seconds("--body-timeout", self.body_timeout)
        if self.max_body_bytes < 1:
            msg = f"--max-body-bytes must be at least 1 (got {self.max_body_bytes})"
            raise ServeSetupError(msg)
        if self.token is not None:
            _check_token_text(self.token)


def check_seconds(option: str, value: float, *, zero: bool = False) -> None:
    """Refuse a number of seconds that is not a finite number above 0 (``zero``: 0 too).

    Raises:
        ServeSetupError: ``value`` is negative, 0 (unless ``zero``), NaN or infinite.
    """
    # NaN compares false with everything, so every check must be one that NaN fails.
    if not (math.isfinite(value) and (value >= 0 if zero else value > 0)):
        least = "at least 0" if zero else "more than 0"
        msg = f"{option} must be a number of seconds {least} (got {value})"
        raise ServeSetupError(msg)


def _check_token_text(token: str) -> None:
    """Refuse a token that no client could send back as ``Authorization: Bearer …``.

    The message never repeats the token: it is a secret, and stderr often lands in logs.

    Raises:
        ServeSetupError: Empty or blank, spaces around it, or a character outside
            printable ASCII (HTTP clients send headers as ASCII; most refuse the rest).
    """
    if not token.strip():
        msg = "the bearer token is empty"
        raise ServeSetupError(msg)
    if token != token.strip():
        msg = (
            "the bearer token has spaces or line breaks around it: a client sends it "
            "without them, so none could match it; set it without them"
        )
        raise ServeSetupError(msg)
    if not all(" " <= char <= "~" for char in token):
        msg = (
            "the bearer token holds a character outside printable ASCII (an accent, a "
            "control character): HTTP clients cannot send it in a header, so none could "
            "match it; use letters, digits and punctuation, e.g. "
            "python -c 'import secrets; print(secrets.token_urlsafe(24))'"
        )
        raise ServeSetupError(msg)


class ConcurrencyLimit:
    """At most ``limit`` runs at once; one more is refused, not queued.

    Single-threaded by design: the server's event loop is its only user, and no await
    separates the check from the increment.
    """

    def __init__(self, limit: int) -> None:
        """Allow ``limit`` runs at once."""
        self.limit = limit
        self.in_flight = 0

    def acquire(self) -> None:
        """Take a slot.

        Raises:
            ServeError: 429 when every slot is taken.
        """
        if self.in_flight >= self.limit:
            msg = (
                f"the server is running {self.in_flight} requests, its limit "
                f"(--max-concurrency {self.limit}); retry later"
            )
            raise ServeError(429, msg, type="rate_limit_error", code="concurrency_limit_exceeded")
        self.in_flight += 1

    def release(self) -> None:
        """Give a slot back."""
        self.in_flight = max(0, self.in_flight - 1)


class Gate:
    """ASGI middleware: the bearer token, then the body's limits, before any route.

    Without a token the browser checks (:mod:`leanloop.serve.browsers`) take its place.
    A request body is read whole here (at most ``max_body_bytes`` and one more byte,
    within ``body_timeout``) and replayed to the app: a chunked upload has no
    ``Content-Length`` to judge it by, and the app must never see half a body.
    """

    def __init__(self, app: ASGIApp, *, settings: ServeSettings) -> None:
        """Wrap ``app`` with the checks ``settings`` asks for."""
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check the request, then pass it on (or answer the refusal)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            # With a token the browser checks add nothing (a page cannot send the token)
            # and would refuse `curl -d`, whose JSON goes out labelled as form data.
            if self.settings.token is None:
                self._check_browser(scope)
            else:
                self._check_token(scope)
            body = await self._read_body(scope, receive)
        except ServeError as exc:
            # One line: a refused request is the client's mistake, not a fault to trace.
            _log.info("%s %s: %d %s", scope.get("method"), scope.get("path"), exc.status, exc.code)
            await _send_error(send, exc)
            return
        if body is None:
            await self.app(scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _check_browser(self, scope: Scope) -> None:
        """Without a token: refuse what a web page in the user's browser could send."""
        check_host(_header(scope, b"host"))
        check_origin(_header(scope, b"origin"))
        if scope.get("method") in _BODY_METHODS:
            check_json(_header(scope, b"content-type"))

    def _check_token(self, scope: Scope) -> None:
        expected = self.settings.token
        if expected is None or scope.get("path", "") in _OPEN_PATHS:
            return
        given = _header(scope, b"authorization")
        scheme, _, token = (given or "").partition(" ")
        # compare_digest: the time taken says nothing about how much of the token matched.
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            token.strip().encode(), expected.encode()
        ):
            what = "no bearer token" if given is None else "a wrong bearer token"
            msg = f"the request carries {what} (Authorization: Bearer <LEANLOOP_SERVE_TOKEN>)"
            raise ServeError(401, msg, type="authentication_error", code="invalid_api_key")

    async def _read_body(self, scope: Scope, receive: Receive) -> bytes | None:
        if scope.get("method") not in _BODY_METHODS:
            return None
        limit = self.settings.max_body_bytes
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise _too_large(limit)
        seconds = self.settings.body_timeout
        try:
            async with asyncio.timeout(seconds):
                return await self._receive_body(receive, limit)
        except TimeoutError:
            msg = (
                f"the request body did not arrive within {seconds:g} s "
                "(the server's --body-timeout); the connection is closed"
            )
            raise ServeError(408, msg, type="timeout_error", code="request_timeout") from None

    async def _receive_body(self, receive: Receive, limit: int) -> bytes:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _too_large(limit)
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


def _too_large(limit: int) -> ServeError:
    msg = f"the request body is larger than the server's limit of {limit:,} bytes"
    return ServeError(413, msg, code="request_too_large")


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body read already, then the real channel.

    After the body, the real ``receive`` is what tells a streaming response that the
    client went away (``http.disconnect``).
    """
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _send_error(send: Send, exc: ServeError) -> None:
    payload = json.dumps(exc.body()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
    ]
    if exc.status == 401:
        headers.append((b"www-authenticate", b"Bearer"))
    if exc.status in _CLOSING:
        headers.append((b"connection", b"close"))
    headers.extend((name.encode(), value.encode()) for name, value in exc.headers.items())
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
