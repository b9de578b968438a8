"""A tiny OpenAI-compatible chat server on 127.0.0.1 that answers ``echo: <question>``.

Real HTTP, so that a scenario exercises the model client's connection pool (what breaks
when one client is used from two event loops). Standard library only; each request may
wait ``delay`` seconds before answering, so concurrent calls overlap.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from support.local_http import LocalHttpServer

__all__ = ["EchoServer"]


class EchoServer(LocalHttpServer):
    """Start with :meth:`start`; ``base_url`` is then ``http://127.0.0.1:PORT/v1``."""

    def __init__(self, *, delay: float = 0.0) -> None:
        self.delay = delay
        self.requests = 0
        self._lock = threading.Lock()
        super().__init__(_handler(self))

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The completion for one request body."""
        with self._lock:
            self.requests += 1
        if self.delay:
            time.sleep(self.delay)
        question = next(
            (m.get("content") for m in reversed(body["messages"]) if m.get("role") == "user"),
            "",
        )
        return {
            "id": "echo",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "echo"),
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "stop",
                    "message": {"role": "assistant", "content": f"echo: {question}"},
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        }


def _handler(server: EchoServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        # Keep-alive, as real servers do: the client pools the connection (and its
        # loop-bound locks) between calls.
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            self.send_error(404)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.endswith("/chat/completions"):
                self.send_error(404)
                return
            payload = json.dumps(server.answer(body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
