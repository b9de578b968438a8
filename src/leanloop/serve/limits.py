"""Auth and limits of ``leanloop serve``: the bearer token, the body size, the concurrency.

The token and the body-size limit are one pure ASGI middleware (:class:`Gate`) in front
of the routes, so a refused request never reaches the JSON parser or an agent, and the
token is checked before the body is read. The concurrency limit is a counter, not a
queue (:class:`ConcurrencyLimit`): a request over it is refused at once with a 429, so a
client backs off instead of holding a connection open behind runs that may take minutes.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from leanloop.serve.errors import ServeError, ServeSetupError

__all__ = [
    "ConcurrencyLimit",
    "Gate",
    "ServeSettings",
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


@dataclass(frozen=True, kw_only=True)
class ServeSettings:
    """How the server guards itself.

    Attributes:
        token: The bearer token every ``/v1`` request must carry; ``None`` turns auth off.
        max_concurrency: Runs at once; a request beyond is answered 429.
        deadline: Seconds a request may take, stream included; past it, 504.
        max_body_bytes: The largest request body; a larger one is answered 413.
    """

    token: str | None = None
    max_concurrency: int = 8
    deadline: float = 300.0
    max_body_bytes: int = 1_048_576

    def __post_init__(self) -> None:
        """Refuse values that would make the server refuse everything or nothing.

        Raises:
            ServeSetupError: A limit that is not positive, or an empty token.
        """
        if self.max_concurrency < 1:
            msg = f"--max-concurrency must be at least 1 (got {self.max_concurrency})"
            raise ServeSetupError(msg)
        if not self.deadline > 0:
            msg = f"--deadline must be more than 0 seconds (got {self.deadline})"
            raise ServeSetupError(msg)
        if self.max_body_bytes < 1:
            msg = f"--max-body-bytes must be at least 1 (got {self.max_body_bytes})"
            raise ServeSetupError(msg)
        if self.token is not None and not self.token.strip():
            msg = "the bearer token is empty"
            raise ServeSetupError(msg)


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name other than localhost may resolve anywhere


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
    """ASGI middleware: the bearer token, then the body-size limit, before any route.

    A request body is read whole here (at most ``max_body_bytes`` and one more byte) and
    replayed to the app: a chunked upload has no ``Content-Length`` to judge it by, and
    the app must never see half a body.
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
        if scope.get("method") not in {"POST", "PUT", "PATCH"}:
            return None
        limit = self.settings.max_body_bytes
        declared = _header(scope, b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            raise _too_large(limit)
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
    if exc.status == 413:
        # The unread rest of the body would otherwise be taken for the next request.
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": exc.status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
