"""A scripted OpenAI-compatible HTTP server for the Robot suites.

It replays a scenario, one queued response per ``POST /v1/chat/completions`` (an
answer, tool calls, usage figures, or an HTTP error such as llama.cpp's 400
``exceed_context_size_error``), as plain JSON or as server-sent events when the
request asks for ``stream: true``, and records every request body so a test can
assert what the client actually sent. ``GET /v1/models``, ``/props`` and ``/health``
answer like llama.cpp's server, with a configurable ``n_ctx``.

Standard library only: ``ThreadingHTTPServer`` in a daemon thread on 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "ScriptedHttpServer",
    "ScriptedOpenAIServer",
    "ScriptedResponse",
    "context_overflow",
    "tools_refused",
]


@dataclass
class ScriptedResponse:
    """One queued reply: an assistant message with usage, or an HTTP error body."""

    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    """``{"name": ..., "arguments": {...}}`` each."""
    prompt_tokens: int | None = None
    """``None``: count the request's characters / 4, like a rough tokenizer."""
    completion_tokens: int | None = None
    status: int = 200
    error: dict[str, Any] | None = None
    """The JSON body of an error reply (``status`` must then be 4xx/5xx)."""
    chunk_delay: float = 0.0
    """Seconds to wait before each streamed piece (a slow server, for streaming tests)."""


def context_overflow(n_prompt_tokens: int, n_ctx: int) -> ScriptedResponse:
    """llama.cpp's refusal of a prompt larger than its window."""
    return ScriptedResponse(
        status=400,
        error={
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": n_prompt_tokens,
                "n_ctx": n_ctx,
            }
        },
    )


def tools_refused() -> ScriptedResponse:
    """A 400 refusing the ``tools`` parameter, with llama.cpp's message.

    The real llama-server without ``--jinja`` sends the same message as HTTP 500
    ``server_error`` (measured); queue that form with ``queue_http_error`` when it matters.
    """
    return ScriptedResponse(
        status=400,
        error={
            "error": {
                "code": 400,
                "message": "tools param requires --jinja flag",
                "type": "invalid_request_error",
            }
        },
    )


class ScriptedHttpServer:
    """A scripted server's lifecycle and reply queue; subclasses give the handler.

    Subclasses implement :meth:`_handler` (the request handler class serving ``self``) and
    may extend :meth:`reset` for what else they record.
    """

    def __init__(self) -> None:
        self.requests: list[Any] = []
        self._queue: list[ScriptedResponse] = []
        self._lock = threading.Lock()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    # lifecycle -------------------------------------------------------------------------
    def start(self) -> int:
        """Start serving; returns the port."""
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()
        return self.port

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    @property
    def port(self) -> int:
        assert self._httpd is not None, f"the {type(self).__name__} is not running"
        return int(self._httpd.server_address[1])

    # scenario --------------------------------------------------------------------------
    def queue(self, response: ScriptedResponse) -> None:
        with self._lock:
            self._queue.append(response)

    def reset(self) -> None:
        """Forget queued responses and recorded requests."""
        with self._lock:
            self._queue.clear()
            self.requests.clear()

    def remaining(self) -> int:
        with self._lock:
            return len(self._queue)


class ScriptedOpenAIServer(ScriptedHttpServer):
    """Replays queued chat completions on a random free port of 127.0.0.1."""

    def __init__(self, *, n_ctx: int = 4096, model: str = "scripted-model") -> None:
        super().__init__()
        self.n_ctx = n_ctx
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (``…/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def reset(self) -> None:
        """Forget queued responses, recorded requests and paths."""
        super().reset()
        with self._lock:
            self.paths.clear()

    def _next(self, body: dict[str, Any]) -> ScriptedResponse | None:
        with self._lock:
            self.requests.append(body)
            return self._queue.pop(0) if self._queue else None


def _make_handler(server: ScriptedOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: Robot's log is the place for what happened."""

        def do_GET(self) -> None:
            server.paths.append(self.path)
            path = self.path.split("?", 1)[0]
            if path == "/health":
                self._json(200, {"status": "ok"})
            elif path == "/props":
                settings = {"n_ctx": server.n_ctx}
                self._json(200, {"default_generation_settings": settings, "model_path": "x"})
            elif path in ("/v1/models", "/models"):
                model = {"id": server.model, "object": "model", "meta": {"n_ctx": server.n_ctx}}
                self._json(200, {"object": "list", "data": [model]})
            else:
                self._json(404, {"error": {"message": f"no route {path}", "code": 404}})

        def do_POST(self) -> None:
            server.paths.append(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw)
            except ValueError:
                self._json(400, {"error": {"message": "body is not JSON", "code": 400}})
                return
            if self.path.split("?", 1)[0] not in ("/v1/chat/completions", "/chat/completions"):
                self._json(404, {"error": {"message": f"no route {self.path}", "code": 404}})
                return
            reply = server._next(body)
            if reply is None:
                message = "scripted server: the scenario has no response left for this request"
                self._json(500, {"error": {"message": message, "code": 500}})
            elif reply.error is not None:
                self._json(reply.status, reply.error)
            elif body.get("stream"):
                self._stream(body, reply)
            else:
                self._json(200, _completion(server.model, body, reply))

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, body: dict[str, Any], reply: ScriptedResponse) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for chunk in _chunks(server.model, body, reply):
                if reply.chunk_delay:
                    time.sleep(reply.chunk_delay)
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


def _usage(body: dict[str, Any], reply: ScriptedResponse) -> dict[str, int]:
    prompt = reply.prompt_tokens
    if prompt is None:
        # A real server counts the tool schemas it renders into the prompt too.
        sent = json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))
        prompt = max(1, len(sent) // 4)
    completion = reply.completion_tokens
    if completion is None:
        completion = max(1, (len(reply.content) + len(json.dumps(reply.tool_calls))) // 4)
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion}  # fmt: skip


def _tool_calls(reply: ScriptedResponse, stamp: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{stamp}_{index}",
            "type": "function",
            "function": {"name": call["name"], "arguments": json.dumps(call.get("arguments", {}))},
        }
        for index, call in enumerate(reply.tool_calls)
    ]


def _completion(model: str, body: dict[str, Any], reply: ScriptedResponse) -> dict[str, Any]:
    stamp = time.time_ns()
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = _tool_calls(reply, stamp)
    return {
        "id": f"chatcmpl-{stamp}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": _usage(body, reply),
    }


def _chunks(model: str, body: dict[str, Any], reply: ScriptedResponse) -> Iterator[dict[str, Any]]:
    stamp = time.time_ns()
    base = {"id": f"chatcmpl-{stamp}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": model}  # fmt: skip

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    yield chunk({"role": "assistant", "content": ""})
    # The answer arrives in a few pieces, as a real server streams it.
    text = reply.content
    for start in range(0, len(text), 16):
        yield chunk({"content": text[start : start + 16]})
    for index, call in enumerate(_tool_calls(reply, stamp)):
        yield chunk({"tool_calls": [{"index": index, **call}]})
    yield chunk({}, "tool_calls" if reply.tool_calls else "stop")
    options = body.get("stream_options") or {}
    if options.get("include_usage"):
        yield {**base, "choices": [], "usage": _usage(body, reply)}
