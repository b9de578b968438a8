"""A llama.cpp-like server on 127.0.0.1 whose tokenizer is dense: one token a character.

It answers ``echo: <question>`` and counts prompts as llama.cpp does, on the text its chat
template renders (``POST /apply-template``, ``POST /tokenize``, the reply's
``prompt_tokens``); a prompt over ``n_ctx`` is refused with llama.cpp's
``exceed_context_size_error``. A character estimate (about 3.3 characters a token) is
three times too low here, as it is for logs and numbers on real tokenizers.
``exact=False`` leaves out ``/apply-template`` (servers without it).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from support.local_http import LocalHttpServer

__all__ = ["DenseServer", "render"]


def render(body: dict[str, Any]) -> str:
    """The fake chat template: every message's role and text, then the tool list."""
    parts = [f"<|{m.get('role')}|>{m.get('content') or ''}" for m in body.get("messages", [])]
    for message in body.get("messages", []):
        parts.extend(json.dumps(c, sort_keys=True) for c in message.get("tool_calls") or [])
    if body.get("tools"):
        parts.append(json.dumps(body["tools"], sort_keys=True))
    return "".join(parts) + "<|assistant|>"


class DenseServer(LocalHttpServer):
    """Start with :meth:`start`; ``base_url`` is ``http://127.0.0.1:PORT/v1``."""

    def __init__(self, *, n_ctx: int, exact: bool = True) -> None:
        self.n_ctx = n_ctx
        self.exact = exact
        self.paths: list[str] = []
        self.counts: list[int] = []
        """The prompt size of each chat request, as the server counted it."""
        self.refused = 0
        super().__init__(_handler(self))

    def route(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """The status and JSON answer for one request."""
        self.paths.append(path)
        if path == "/props":
            return 200, {"default_generation_settings": {"n_ctx": self.n_ctx}, "model_path": "d"}
        if path == "/tokenize":
            return 200, {"tokens": list(range(len(body.get("content", ""))))}
        if path == "/apply-template" and self.exact:
            return 200, {"prompt": render(body)}
        if path.endswith("/chat/completions"):
            return self._complete(body)
        return 404, {"error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}}

    def _complete(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        tokens = len(render(body))
        self.counts.append(tokens)
        if tokens > self.n_ctx:
            self.refused += 1
            message = (
                f"request ({tokens} tokens) exceeds the available context size "
                f"({self.n_ctx} tokens), try increasing it"
            )
            error = {
                "code": 400,
                "message": message,
                "type": "exceed_context_size_error",
                "n_prompt_tokens": tokens,
                "n_ctx": self.n_ctx,
            }
            return 400, {"error": error}
        question = next(
            (m.get("content") for m in reversed(body["messages"]) if m.get("role") == "user"),
            "",
        )
        choice = {
            "index": 0,
            "finish_reason": "stop",
            "message": {"role": "assistant", "content": f"echo: {str(question)[:40]}"},
        }
        usage = {"prompt_tokens": tokens, "completion_tokens": 5, "total_tokens": tokens + 5}
        return 200, {
            "id": "d",
            "object": "chat.completion",
            "created": 0,
            "model": "dense",
            "choices": [choice],
            "usage": usage,
        }


def _handler(server: DenseServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            self._answer(*server.route(self.path.split("?", 1)[0], {}))

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"{}")
            self._answer(*server.route(self.path.split("?", 1)[0], body))

        def _answer(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
