"""A fake model server on 127.0.0.1 for testing agents over real HTTP (issue 26).

One standard-library server speaks the dialects leanloop's providers call: OpenAI's
``POST /v1/chat/completions`` (JSON, or server-sent events with ``stream: true``) and
``GET /v1/models``; llama.cpp's ``GET /props``, ``GET /health``, ``POST /tokenize`` and
``POST /apply-template``; Ollama's ``POST /api/chat`` (NDJSON when streaming),
``POST /api/show``, ``GET /api/tags``, ``/api/ps`` and ``/api/version``. Chat requests
are answered from a queue of :class:`Reply` objects or by a handler callable; a reply
may carry a fault (a delay, a hang, a cut stream, an HTTP error, a dropped connection).
Every request is recorded.

Run it out of process with ``python -m leanloop.testing.server --port 8080`` (see
:func:`main`); it accepts llama-server's flags, so it can stand in for that binary.

Example:
    >>> from leanloop.testing.server import FakeModelServer, Reply
    >>> with FakeModelServer(replies=[Reply(content="Hi")]) as server:
    ...     url = server.base_url  # give it to ChatOpenAI(base_url=...)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from http.server import ThreadingHTTPServer
from typing import Any, Literal

from leanloop.testing._server_http import make_handler
from leanloop.testing._server_replies import (
    FAULTS,
    Fault,
    Reply,
    ServerRequest,
    chars_per_token,
    context_overflow,
    echo,
    http_error,
    render_template,
    tools_refused,
)

__all__ = [
    "FAULTS",
    "Exchange",
    "FakeModelServer",
    "Fault",
    "Handler",
    "Reply",
    "ServerRequest",
    "chars_per_token",
    "context_overflow",
    "echo",
    "http_error",
    "main",
    "render_template",
    "tools_refused",
]

Handler = Callable[[ServerRequest], Reply]
"""Computes the reply to a chat request (instead of the queue)."""


@dataclass(frozen=True)
class Exchange:
    """A chat request and what answered it.

    Attributes:
        request: The request.
        reply: The reply sent (``None``: the queue was empty, a 500 went back).
        prompt_tokens: The server's own prompt count (``count_prompts``), else ``None``.
    """

    request: ServerRequest
    reply: Reply | None
    prompt_tokens: int | None


class _HTTPServer(ThreadingHTTPServer):
    # The standard library listens with a backlog of 5; a hundred clients connecting at
    # once then get connections reset, which real servers (backlog 511 and more) do not.
    request_queue_size = 512
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gave up (timeout, cancelled stream) is what fault tests provoke.
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)


class FakeModelServer:
    """A scripted model server on ``127.0.0.1``, served from a daemon thread.

    Args:
        replies: The first queued replies (more with :meth:`queue`).
        handler: Computes each chat reply from the request; the queue is then unused.
        when_empty: With no reply queued: ``error`` answers 500, ``repeat`` sends the
            last reply again.
        model: The model name answers carry; Ollama's ``/api/chat`` and ``/api/show``
            know only it (404 for others).
        n_ctx: The window ``/props``, ``/v1/models`` report and ``count_prompts`` enforces.
        tokenizer: Counts tokens for ``/tokenize`` (``len``: one a character);
            ``None``: ``/tokenize`` answers 404.
        template: Renders ``/apply-template``'s prompt; ``None``: 404 there.
        count_prompts: Count each chat prompt as ``tokenizer(template(body))`` (llama.cpp
            counts the rendered template); an OpenAI-dialect prompt over ``n_ctx`` is
            refused with :func:`context_overflow` before the queue or handler is asked.
        health_status: ``GET /health``'s status (503: still loading).
        trained: The trained context length ``/api/show`` reports.
        parameters: The Modelfile parameters ``/api/show`` reports (``num_ctx 8192``).
        hang_all: Every request hangs until :meth:`stop` (timeouts of discovery calls).
        host: The address to bind.
        port: The port to bind; 0 picks a free one.
    """

    def __init__(
        self,
        *,
        replies: Iterable[Reply] = (),
        handler: Handler | None = None,
        when_empty: Literal["error", "repeat"] = "error",
        model: str = "fake-model",
        n_ctx: int = 4096,
        tokenizer: Callable[[str], int] | None = len,
        template: Callable[[dict[str, Any]], str] | None = render_template,
        count_prompts: bool = False,
        health_status: int = 200,
        trained: int = 131_072,
        parameters: str = "",
        hang_all: bool = False,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.handler = handler
        self.when_empty = when_empty
        self.model = model
        self.n_ctx = n_ctx
        self.tokenizer = tokenizer
        self.template = template
        self.count_prompts = count_prompts
        self.health_status = health_status
        self.trained = trained
        self.parameters = parameters
        self.hang_all = hang_all
        self.loaded: dict[str, int] = {}
        """Ollama models loaded → their context (``/api/ps``); a chat request loads one."""
        self._host, self._port = host, port
        self._queue: list[Reply] = list(replies)
        self._last: Reply | None = None
        self._requests: list[ServerRequest] = []
        self._exchanges: list[Exchange] = []
        self._routes: dict[tuple[str, str], tuple[int, bytes, float, bool, dict[str, str]]] = {}
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._httpd: _HTTPServer | None = None
        self._calls = 0

    # ---- lifecycle ---------------------------------------------------------------------

    def start(self) -> FakeModelServer:
        """Bind and serve on a daemon thread; returns the server."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _HTTPServer((self._host, self._port), make_handler(self))
        threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()
        return self

    def stop(self) -> None:
        """Release hung and delayed replies, stop serving and close the port."""
        self._stopping.set()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()

    def kill(self) -> None:
        """Die as a killed process does: the port closes, every open connection drops."""
        self._stopping.set()
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            # kill() may run on a request's thread; shutdown() waits for the serving loop.
            threading.Thread(target=httpd.shutdown, daemon=True).start()
            httpd.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
            conn.close()

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (the server must be started)."""
        if self._httpd is None:
            msg = "the fake model server is not running"
            raise RuntimeError(msg)
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the root (Ollama's base URL, llama.cpp's extras)."""
        return f"http://{self._host}:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: an OpenAI-compatible client's base URL."""
        return f"{self.url}/v1"

    # ---- scenario ----------------------------------------------------------------------

    def queue(self, *replies: Reply) -> None:
        """Queue replies for the next chat requests, in order."""
        with self._lock:
            self._queue.extend(replies)

    def remaining(self) -> int:
        """How many queued replies are still unsent."""
        with self._lock:
            return len(self._queue)

    def route(
        self,
        method: str,
        path: str,
        payload: Any = None,
        *,
        status: int = 200,
        delay: float = 0.0,
        hang: bool = False,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer ``method path`` with ``payload`` (JSON, or bytes sent as they are).

        A route overrides the built-in endpoint of that path (``GET /props`` …).
        """
        raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        with self._lock:
            self._routes[(method.upper(), path)] = (status, raw, delay, hang, headers or {})

    def reset(self) -> None:
        """Forget queued replies, routes, recorded requests and loaded models."""
        with self._lock:
            self._queue.clear()
            self._last = None
            self._routes.clear()
            self._requests.clear()
            self._exchanges.clear()
            self.loaded.clear()

    # ---- what was received -------------------------------------------------------------

    @property
    def requests(self) -> list[ServerRequest]:
        """Every request received, in arrival order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def paths(self) -> list[str]:
        """The path of every request, in order."""
        return [r.path for r in self.requests]

    @property
    def exchanges(self) -> list[Exchange]:
        """Every chat request (both dialects) with its reply, in order."""
        with self._lock:
            return list(self._exchanges)

    def chat_bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the chat requests (both dialects), in order."""
        return [e.request.body for e in self.exchanges]

    # ---- used by the request handler ---------------------------------------------------

    def _record(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Any:
        try:
            body = json.loads(raw) if raw.strip() else {}
        except ValueError:
            body = {}
        with self._lock:
            request = ServerRequest(
                len(self._requests), method, path, headers, body, raw, time.monotonic()
            )
            self._requests.append(request)
        return request

    def _reply(self, request: ServerRequest, counted: int | None) -> Reply | None:
        """The reply to a chat request: refusal, handler, queue or the empty rule."""
        reply: Reply | None
        if counted is not None and counted > self.n_ctx and request.dialect == "openai":
            reply = context_overflow(counted, self.n_ctx)
        elif self.handler is not None:
            reply = self.handler(request)
        else:
            with self._lock:
                if self._queue:
                    reply = self._last = self._queue.pop(0)
                else:
                    reply = self._last if self.when_empty == "repeat" else None
        with self._lock:
            self._exchanges.append(Exchange(request, reply, counted))
            self._calls += 1
        return reply

    def _count(self, body: Any) -> int | None:
        if not (self.count_prompts and self.tokenizer and self.template):
            return None
        return self.tokenizer(self.template(body))

    def _stamp(self) -> str:
        with self._lock:
            return str(self._calls)

    def _wait(self, seconds: float | None) -> None:
        # The only real waits of the fakes: stop() ends every one of them.
        self._stopping.wait(seconds)


# ---- command line ----------------------------------------------------------------------


def _load_script(path: str, parser: argparse.ArgumentParser) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
        if isinstance(data, list):
            data = {"replies": data}
        data["replies"] = [Reply.from_json(r) for r in data.get("replies", [])]
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        parser.error(f"--script {path}: {exc}")
    allowed = {"replies", "when_empty", "model", "n_ctx", "trained", "parameters"}
    if set(data) - allowed:
        parser.error(f"--script {path}: unknown keys {sorted(set(data) - allowed)}")
    return dict(data)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the fake server until SIGTERM or Ctrl-C; returns the exit status.

    Usage: ``python -m leanloop.testing.server --port P [--host H] [--n-ctx N]
    [--script FILE.json] [--model NAME] [--health-status 503] [--fail-to-load]
    [--ignore-sigterm] [--name TEXT] [--version]``. llama-server's ``-m``, ``--ctx-size``
    / ``-c`` and ``--alias`` are honoured; its other flags are accepted and ignored.
    The script file is a JSON list of replies (their keys are :class:`Reply`'s
    attributes) or an object with ``replies``, ``when_empty``, ``model``, ``n_ctx``,
    ``trained`` and ``parameters``. It prints ``<name> pid P``, ``<name> model M`` and
    ``<name> listening on PORT`` on stdout.
    """
    parser = argparse.ArgumentParser(prog="python -m leanloop.testing.server")
    parser.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--n-ctx", "--ctx-size", "-c", dest="n_ctx", type=int, default=None)
    parser.add_argument("--script", help="a JSON file of replies")
    parser.add_argument("--model", "-m", dest="model_path", help="llama-server's model file")
    parser.add_argument("--alias", help="the model name answers carry")
    parser.add_argument("--health-status", type=int, default=200)
    parser.add_argument("--fail-to-load", action="store_true", help="exit 1 at start")
    parser.add_argument("--ignore-sigterm", action="store_true")
    parser.add_argument("--name", default="fake model server", help="the log lines' name")
    parser.add_argument("--version", action="store_true")
    args, _ignored = parser.parse_known_args(argv)
    if args.version:
        print(f"version: 0 ({args.name})", flush=True)
        return 0
    script = _load_script(args.script, parser) if args.script else {}
    print(f"{args.name} pid {os.getpid()}", flush=True)
    print(f"{args.name} model {args.model_path}", flush=True)
    if args.fail_to_load:
        print("error: failed to load model", flush=True)
        return 1
    # The flags beat the script file (pop both first: they must not reach the class twice).
    script_model, script_n_ctx = script.pop("model", None), script.pop("n_ctx", 4096)
    model = args.alias or script_model or args.model_path or "fake-model"
    n_ctx = args.n_ctx or script_n_ctx
    server = FakeModelServer(
        model=model,
        n_ctx=n_ctx,
        health_status=args.health_status,
        host=args.host,
        port=args.port,
        **script,
    )
    done = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: done.set())
    signal.signal(signal.SIGTERM, signal.SIG_IGN if args.ignore_sigterm else lambda *_: done.set())
    server.start()
    print(f"{args.name} listening on {server.port}", flush=True)
    # The main thread only waits: a signal handler cannot stop a loop on its own thread.
    done.wait()
    server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
