"""The scripted OpenAI-compatible server of the Robot suites, on the one fake server.

:class:`ScriptedOpenAIServer` keeps the interface the suites and step files were written
against (a queue of :class:`ScriptedResponse`, ``requests`` as the chat bodies received,
``paths``, ``remaining``, ``reset``, ``start`` returning the port) and serves it with
:class:`leanloop.testing.server.FakeModelServer` (issue 26: one fake server). The HTTP,
the OpenAI dialect, streaming and the llama.cpp endpoints (``/v1/models``, ``/props``,
``/health`` with the configured ``n_ctx``) are that server's.

Subclasses may override :meth:`ScriptedOpenAIServer._next`, which receives each chat
request's body and returns its reply (``None``: the scenario ran out, a 500 goes back).
"""

from __future__ import annotations

import threading
from socketserver import BaseServer
from typing import Any

from leanloop.testing.server import (
    FakeModelServer,
    Reply,
    ServerRequest,
    context_overflow,
)
from leanloop.testing.server import tools_refused as _tools_refused

__all__ = ["ScriptedOpenAIServer", "ScriptedResponse", "context_overflow", "tools_refused"]

ScriptedResponse = Reply
"""One queued reply: the fake server's :class:`Reply` (``content``, ``tool_calls``,
``prompt_tokens``, ``completion_tokens``, ``status`` with ``error``, ``chunk_delay`` …)."""


def tools_refused() -> Reply:
    """A 400 refusing the ``tools`` parameter, with llama.cpp's message.

    The real llama-server without ``--jinja`` sends the same message as HTTP 500
    ``server_error`` (measured); queue that form with ``queue_http_error`` when it matters.
    """
    return _tools_refused(400)


class ScriptedOpenAIServer:
    """Replays queued chat completions on a random free port of 127.0.0.1.

    Args:
        n_ctx: The window ``/props`` and ``/v1/models`` report.
        model: The model name answers carry.
    """

    def __init__(self, *, n_ctx: int = 4096, model: str = "scripted-model") -> None:
        self.requests: list[dict[str, Any]] = []
        """The body of every chat request, in order (what :meth:`_next` was given)."""
        self._queue: list[Reply] = []
        self._lock = threading.Lock()
        # No /tokenize or /apply-template, as before: a plain OpenAI-compatible server has
        # neither, and with them the budget would count exactly instead of estimating.
        self.server = FakeModelServer(
            handler=self._answer, model=model, n_ctx=n_ctx, tokenizer=None, template=None
        )

    # lifecycle -------------------------------------------------------------------------
    def start(self) -> int:
        """Start serving; returns the port."""
        return self.server.start().port

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.server.stop()

    @property
    def port(self) -> int:
        return self.server.port

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (``…/v1``)."""
        return self.server.base_url

    @property
    def model(self) -> str:
        return self.server.model

    @property
    def n_ctx(self) -> int:
        return self.server.n_ctx

    @property
    def paths(self) -> list[str]:
        """The path of every request (chat and discovery), in order."""
        return self.server.paths

    @property
    def _httpd(self) -> BaseServer | None:
        # SessionLibrary's "Ignore Dropped Connections" patches the HTTP server's error
        # report; the fake server already ignores clients that went away, so it is moot.
        return self.server._httpd

    # scenario --------------------------------------------------------------------------
    def queue(self, response: Reply) -> None:
        with self._lock:
            self._queue.append(response)

    def reset(self) -> None:
        """Forget queued responses, recorded requests and paths."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()
        self.server.reset()

    def remaining(self) -> int:
        with self._lock:
            return len(self._queue)

    def _next(self, body: dict[str, Any]) -> Reply | None:
        """Record ``body`` and take the next queued reply (``None``: none is left)."""
        with self._lock:
            self.requests.append(body)
            return self._queue.pop(0) if self._queue else None

    def _answer(self, request: ServerRequest) -> Reply:
        body = request.body if isinstance(request.body, dict) else {}
        reply = self._next(body)
        if reply is None:
            message = "scripted server: the scenario has no response left for this request"
            return Reply(status=500, error={"error": {"message": message, "code": 500}})
        return reply
