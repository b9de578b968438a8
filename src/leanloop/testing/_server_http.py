"""The request handler of :class:`~leanloop.testing.server.FakeModelServer`: routing,
the dialects' endpoints and the faults, on the standard library's ``http.server``."""

from __future__ import annotations

import contextlib
import json
import socket
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any

from leanloop.testing._server_replies import (
    Reply,
    ServerRequest,
    chunks,
    completion,
    error_body,
    ollama_final,
    ollama_lines,
    usage,
)

if TYPE_CHECKING:
    from leanloop.testing.server import FakeModelServer

__all__ = ["OLLAMA_DEFAULT_NUM_CTX", "make_handler"]

OLLAMA_DEFAULT_NUM_CTX = 4096
"""The context Ollama loads a model at when a request does not say."""

_CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
_CUTS = ("cut", "cut_call", "cut_after_finish", "stall")


def make_handler(server: FakeModelServer) -> type[BaseHTTPRequestHandler]:
    """The request handler class serving ``server``."""

    class RequestHandler(BaseHTTPRequestHandler):
        # Keep-alive, as real servers do: clients pool connections between calls.
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: the test's own output is the place for what happened."""

        def setup(self) -> None:
            super().setup()
            with server._lock:
                server._connections.add(self.connection)

        def finish(self) -> None:
            with server._lock:
                server._connections.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            path = self.path.split("?", 1)[0]
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            request = server._record(self.command, path, dict(self.headers.items()), raw)
            if server.hang_all:
                server._wait(None)
                self.close_connection = True
                return
            with server._lock:
                route = server._routes.get((self.command, path))
            if route is not None:
                status, data, delay, hang, headers = route
                if hang or delay:
                    server._wait(None if hang else delay)
                if hang:
                    self.close_connection = True
                else:
                    self._send(status, "application/json", data, headers)
                return
            if self.command == "POST" and raw.strip():
                try:
                    json.loads(raw)
                except ValueError:
                    self._json(400, {"error": {"message": "body is not JSON", "code": 400}})
                    return
            self._dispatch(request)

        def _dispatch(self, request: ServerRequest) -> None:
            path, body = request.path, request.body
            if path in _CHAT_PATHS and self.command == "POST":
                self._chat(request)
            elif path in ("/v1/models", "/models"):
                meta = {"n_ctx": server.n_ctx, "n_ctx_train": server.trained}
                model = {"id": server.model, "object": "model", "meta": meta}
                self._json(200, {"object": "list", "data": [model]})
            elif path == "/health":
                ok = server.health_status == 200
                error = {"code": 503, "message": "Loading model", "type": "unavailable_error"}
                self._json(server.health_status, {"status": "ok"} if ok else {"error": error})
            elif path == "/props":
                settings = {"n_ctx": server.n_ctx}
                self._json(200, {"default_generation_settings": settings,
                                 "model_path": server.model, "total_slots": 1})  # fmt: skip
            elif path == "/tokenize" and server.tokenizer is not None:
                count = server.tokenizer(str(body.get("content", "")))
                self._json(200, {"tokens": list(range(count))})
            elif path == "/apply-template" and server.template is not None:
                self._json(200, {"prompt": server.template(body)})
            elif path == "/api/chat" and self.command == "POST":
                self._chat(request)
            elif path == "/api/show" and self.command == "POST":
                self._show(body)
            elif path == "/api/ps":
                with server._lock:
                    loaded = dict(server.loaded)
                models = [{"name": n, "model": n, "size": 3_000_000_000, "digest": "0" * 64,
                           "expires_at": "2099-01-01T00:00:00Z", "size_vram": 3_000_000_000,
                           "context_length": c} for n, c in loaded.items()]  # fmt: skip
                self._json(200, {"models": models})
            elif path == "/api/tags":
                entry = {"name": server.model, "model": server.model, "size": 3_000_000_000,
                         "digest": "0" * 64, "modified_at": "2026-01-01T00:00:00Z"}  # fmt: skip
                self._json(200, {"models": [entry]})
            elif path == "/api/version":
                self._json(200, {"version": "0.12.0"})
            elif path == "/":
                self._send(200, "text/plain; charset=utf-8", b"Ollama is running", {})
            else:
                error = {"code": 404, "message": "File Not Found", "type": "not_found_error"}
                self._json(404, {"error": error})

        def _knows(self, name: Any) -> bool:
            name = str(name or "")
            return name in (server.model, f"{server.model}:latest",
                            server.model.removesuffix(":latest"))  # fmt: skip

        def _show(self, body: dict[str, Any]) -> None:
            name = body.get("model") or body.get("name")
            if not self._knows(name):
                self._json(404, {"error": f"model '{name}' not found"})
                return
            self._json(200, {"modelfile": f"FROM {server.model}\n",
                             "parameters": server.parameters, "template": "{{ .Prompt }}",
                             "details": {"format": "gguf", "family": "qwen3"},
                             "model_info": {"general.architecture": "qwen3",
                                            "qwen3.context_length": server.trained},
                             "capabilities": ["completion", "tools"]})  # fmt: skip

        def _chat(self, request: ServerRequest) -> None:
            body = request.body if isinstance(request.body, dict) else {}
            ollama = request.dialect == "ollama"
            if ollama:
                if not self._knows(body.get("model")):
                    self._json(404, {"error": f"model '{body.get('model')}' not found"})
                    return
                # Ollama loads the model at the context the request asks for.
                options = body.get("options")
                options = options if isinstance(options, dict) else {}
                with server._lock:
                    num_ctx = int(options.get("num_ctx") or OLLAMA_DEFAULT_NUM_CTX)
                    server.loaded[str(body.get("model"))] = num_ctx
            counted = server._count(body)
            reply = server._reply(request, counted)
            if reply is None:
                message = "fake model server: no reply left for this request"
                self._json(500, error_body(Reply(status=500, error=message), request.dialect))
                return
            if reply.delay:
                server._wait(reply.delay)
            if reply.fault == "hang":
                server._wait(None)
                self.close_connection = True
                return
            if reply.fault == "drop":
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            if reply.fault == "kill":
                server.kill()
                return
            if reply.status >= 400:
                self._json(reply.status, error_body(reply, request.dialect), reply.headers)
                return
            stream = bool(body.get("stream", ollama))
            if reply.fault == "malformed":
                self._malformed(stream, ollama)
                return
            use = usage(reply, body, counted)
            stamp = server._stamp()
            if ollama and stream:
                objects = ollama_lines(reply, server.model, use)
                lines = [json.dumps(x).encode() + b"\n" for x in objects]
                self._stream("application/x-ndjson", reply, lines, b"")
            elif ollama:
                self._answer(reply, ollama_final(reply, server.model, use, whole=True))
            elif stream:
                include = (body.get("stream_options") or {}).get("include_usage")
                pieces = chunks(reply, server.model, stamp, use if include else None)
                events = [f"data: {json.dumps(c)}\n\n".encode() for c in pieces]
                self._stream("text/event-stream", reply, events, b"data: [DONE]\n\n")
            else:
                self._answer(reply, completion(reply, server.model, stamp, use))

        def _answer(self, reply: Reply, payload: Any) -> None:
            data = json.dumps(payload).encode()
            if reply.fault in _CUTS:
                # The full length announced, half the body sent: the client reads too little.
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.close_connection = True
                with contextlib.suppress(OSError):
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                return
            self._json(200, payload, reply.headers)

        def _stream(self, kind: str, reply: Reply, pieces: list[bytes], done: bytes) -> None:
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.close_connection = True
            try:
                for piece in pieces:
                    if reply.chunk_delay:
                        server._wait(reply.chunk_delay)
                    self.wfile.write(piece)
                    self.wfile.flush()
                if reply.fault == "stall":
                    server._wait(reply.stall or None)
                if reply.fault not in _CUTS:
                    self.wfile.write(done)
                    self.wfile.flush()
            except OSError:  # the client gave up on the stream
                return

        def _malformed(self, stream: bool, ollama: bool) -> None:
            if not stream:
                data = b'{"id": "chatcmpl-x", "choices": [{"message": {"content": "hal'
                self._send(200, "application/json", data, {})
                return
            kind = "application/x-ndjson" if ollama else "text/event-stream"
            piece = b'{"message": {"conte\n'
            if not ollama:
                piece = b'data: {"choices": [{"delta": {"conte\n\n'
            done = b"" if ollama else b"data: [DONE]\n\n"
            self._stream(kind, Reply(), [piece], done)

        def _json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
            self._send(status, "application/json", json.dumps(payload).encode(), headers or {})

        def _send(self, status: int, kind: str, data: bytes, headers: dict[str, str]) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
            except OSError:  # the client gave up waiting, as a timeout test wants
                self.close_connection = True

    return RequestHandler
