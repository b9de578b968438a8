"""A scripted Ollama-API server for the Robot suites, and keywords that run agents on it.

The server speaks what ``langchain_ollama.ChatOllama`` and leanloop's window discovery
call: ``POST /api/chat`` (NDJSON lines when the request streams, as Ollama does unless
``"stream": false``; one JSON object otherwise), ``POST /api/show`` (the Modelfile's
parameters and the trained length in ``model_info``), ``GET /api/ps`` (the loaded models
with their ``context_length``), ``GET /api/tags`` and ``GET /api/version``. Each
``/api/chat`` request replays one queued reply (an answer or tool calls, the same
``ScriptedResponse`` the OpenAI-compatible server queues) and every request body is
recorded, so a test can assert the ``options.num_ctx`` each request really carried.

Like Ollama, a chat request loads the model at the ``num_ctx`` it asks for (Ollama's own
default of 4,096 when it asks for none), and ``/api/ps`` reports that from then on.

Standard library only: ``ThreadingHTTPServer`` in a daemon thread on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import MODEL_KEY, agent_entry, write_agents_file
from robot_args import truthy
from scripted_server import ScriptedHttpServer, ScriptedResponse

__all__ = ["OLLAMA_DEFAULT_NUM_CTX", "OllamaApiLibrary", "ScriptedOllamaServer"]

OLLAMA_DEFAULT_NUM_CTX = 4096
"""The context Ollama loads a model at when a request does not say (Ollama 0.6 and later)."""


class ScriptedOllamaServer(ScriptedHttpServer):
    """Replays queued chat replies in Ollama's API on a random free port of 127.0.0.1.

    Args:
        model: The one model the server knows (``/api/show`` answers 404 for others).
        trained: The trained context length ``/api/show`` reports in ``model_info``.
        parameters: The Modelfile's parameters text ``/api/show`` reports (``num_ctx 8192``
            makes the Modelfile set a window); empty by default, as for most library models.
    """

    def __init__(
        self, *, model: str = "qwen3:4b", trained: int = 131_072, parameters: str = ""
    ) -> None:
        super().__init__()
        self.model = model
        self.trained = trained
        self.parameters = parameters
        self.loaded: dict[str, int] = {}
        """Loaded model name → the context it was loaded with (what ``/api/ps`` reports)."""
        self.requests: list[dict[str, Any]] = []
        """Every request as ``{"method", "path", "body"}``, in order."""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    @property
    def base_url(self) -> str:
        """Ollama's base URL (no ``/v1``: leanloop's ``provider: ollama`` talks the native API)."""
        return f"http://127.0.0.1:{self.port}"

    def reset(self) -> None:
        """Forget queued replies, recorded requests and loaded models."""
        super().reset()
        with self._lock:
            self.loaded.clear()

    def chat_bodies(self) -> list[dict[str, Any]]:
        """The bodies of the ``POST /api/chat`` requests, in order."""
        with self._lock:
            return [r["body"] for r in self.requests if r["path"] == "/api/chat"]

    def _record(self, method: str, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append({"method": method, "path": path, "body": body})

    def _chat(self, body: dict[str, Any]) -> ScriptedResponse | None:
        """The next reply; loads the model at the context the request asks for, as Ollama does."""
        options = body.get("options") or {}
        num_ctx = options.get("num_ctx") if isinstance(options, dict) else None
        with self._lock:
            self.loaded[str(body.get("model"))] = int(num_ctx or OLLAMA_DEFAULT_NUM_CTX)
            return self._queue.pop(0) if self._queue else None

    def _ps(self) -> dict[str, Any]:
        with self._lock:
            loaded = dict(self.loaded)
        return {"models": [_process(name, n_ctx) for name, n_ctx in loaded.items()]}

    def _show(self, body: dict[str, Any]) -> dict[str, Any] | None:
        name = str(body.get("model") or body.get("name") or "")
        if name not in (self.model, f"{self.model}:latest", self.model.removesuffix(":latest")):
            return None
        return {
            "modelfile": f"FROM {self.model}\n",
            "parameters": self.parameters,
            "template": "{{ .Prompt }}",
            "details": _details(),
            "model_info": {
                "general.architecture": "qwen3",
                "qwen3.context_length": self.trained,
            },
            "capabilities": ["completion", "tools"],
        }


def _details() -> dict[str, Any]:
    return {"format": "gguf", "family": "qwen3", "parameter_size": "4.0B",
            "quantization_level": "Q4_K_M"}  # fmt: skip


def _process(name: str, n_ctx: int) -> dict[str, Any]:
    return {
        "name": name,
        "model": name,
        "size": 3_000_000_000,
        "digest": "0" * 64,
        "details": _details(),
        "expires_at": "2099-01-01T00:00:00Z",
        "size_vram": 3_000_000_000,
        "context_length": n_ctx,
    }


def _make_handler(server: ScriptedOllamaServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: Robot's log is the place for what happened."""

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            server._record("GET", path, {})
            if path == "/api/ps":
                self._json(200, server._ps())
            elif path == "/api/tags":
                entry = {"name": server.model, "model": server.model, "size": 3_000_000_000,
                         "digest": "0" * 64, "details": _details(),
                         "modified_at": "2026-01-01T00:00:00Z"}  # fmt: skip
                self._json(200, {"models": [entry]})
            elif path == "/api/version":
                self._json(200, {"version": "0.12.0"})
            elif path == "/":
                self._text(200, "Ollama is running")
            else:
                self._text(404, "404 page not found")

        def do_POST(self) -> None:
            path = self.path.split("?", 1)[0]
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._json(400, {"error": "invalid JSON"})
                return
            server._record("POST", path, body)
            if path == "/api/show":
                shown = server._show(body)
                if shown is None:
                    self._json(404, {"error": f"model '{body.get('model')}' not found"})
                else:
                    self._json(200, shown)
            elif path == "/api/ps":  # some builds answer the process list to POST only
                self._json(200, server._ps())
            elif path == "/api/chat":
                self._chat(body)
            else:
                self._text(404, "404 page not found")

        def _chat(self, body: dict[str, Any]) -> None:
            if body.get("model") != server.model:
                self._json(404, {"error": f"model '{body.get('model')}' not found"})
                return
            reply = server._chat(body)
            if reply is None:
                message = "scripted Ollama: the scenario has no reply left for this request"
                self._json(500, {"error": message})
            elif reply.error is not None:
                self._json(reply.status, reply.error)
            elif body.get("stream", True):
                self._stream(body, reply)
            else:
                self._json(200, _final(server.model, body, reply, whole=True))

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            self._send(status, "application/json; charset=utf-8", json.dumps(payload).encode())

        def _text(self, status: int, text: str) -> None:
            self._send(status, "text/plain; charset=utf-8", text.encode())

        def _send(self, status: int, kind: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, body: dict[str, Any], reply: ScriptedResponse) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Connection", "close")
            self.end_headers()
            self.close_connection = True
            for line in _lines(server.model, body, reply):
                if reply.chunk_delay:
                    time.sleep(reply.chunk_delay)
                self.wfile.write(json.dumps(line).encode() + b"\n")
                self.wfile.flush()

    return Handler


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _message(reply: ScriptedResponse, *, content: str, calls: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls and reply.tool_calls:
        message["tool_calls"] = [
            {"function": {"name": c["name"], "arguments": c.get("arguments", {})}}
            for c in reply.tool_calls
        ]
    return message


def _final(
    model: str, body: dict[str, Any], reply: ScriptedResponse, *, whole: bool
) -> dict[str, Any]:
    """The last object of a reply (``done: true``) with Ollama's counts and durations."""
    prompt = reply.prompt_tokens
    if prompt is None:  # a rough tokenizer: the request's characters / 4
        prompt = max(
            1, len(json.dumps(body.get("messages", [])) + json.dumps(body.get("tools", []))) // 4
        )
    completion = reply.completion_tokens
    if completion is None:
        completion = max(1, (len(reply.content) + len(json.dumps(reply.tool_calls))) // 4)
    message = _message(reply, content=reply.content if whole else "", calls=whole)
    return {
        "model": model,
        "created_at": _now(),
        "message": message,
        "done": True,
        "done_reason": "stop",
        "total_duration": 1_000_000,
        "load_duration": 1_000,
        "prompt_eval_count": prompt,
        "prompt_eval_duration": 1_000,
        "eval_count": completion,
        "eval_duration": 1_000,
    }


def _lines(model: str, body: dict[str, Any], reply: ScriptedResponse) -> Iterator[dict[str, Any]]:
    """The NDJSON objects of a streamed reply: text in pieces, the calls, then the counts."""
    text = reply.content
    for start in range(0, len(text), 16):
        piece = _message(reply, content=text[start : start + 16], calls=False)
        yield {"model": model, "created_at": _now(), "message": piece, "done": False}
    if reply.tool_calls:  # Ollama sends the calls whole, in one object before the last
        calls = _message(reply, content="", calls=True)
        yield {"model": model, "created_at": _now(), "message": calls, "done": False}
    yield _final(model, body, reply, whole=False)


class OllamaApiLibrary:
    """Start the scripted Ollama server, write an agents file on it, run it, read requests."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._server: ScriptedOllamaServer | None = None

    @property
    def server(self) -> ScriptedOllamaServer:
        if self._server is None:
            msg = "start the scripted Ollama server first"
            raise AssertionError(msg)
        return self._server

    # server ----------------------------------------------------------------------------
    def start_scripted_ollama_server(self, model: str = "qwen3:4b", trained: int = 131072) -> str:
        """Start the server knowing ``model`` (trained for ``trained`` tokens); returns its URL."""
        self.stop_scripted_ollama_server()
        self._server = ScriptedOllamaServer(model=model, trained=int(trained))
        self._server.start()
        return self._server.base_url

    def stop_scripted_ollama_server(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None

    def reset_scripted_ollama_server(self) -> None:
        """Forget replies, requests and loaded models (each test starts with none loaded)."""
        self.server.reset()

    def ollama_has_loaded(self, model: str, context_length: int) -> None:
        """Make ``/api/ps`` report ``model`` loaded with ``context_length`` tokens."""
        self.server.loaded[model] = int(context_length)

    def queue_ollama_tool_call(self, name: str, arguments: str = "{}") -> None:
        """Queue a reply calling ``name`` with ``arguments`` (a JSON object)."""
        self.server.queue(
            ScriptedResponse(tool_calls=[{"name": name, "arguments": json.loads(arguments)}])
        )

    def queue_ollama_answer(self, text: str) -> None:
        """Queue a reply answering ``text``."""
        self.server.queue(ScriptedResponse(content=text))

    # agents file and runs ----------------------------------------------------------------
    def write_ollama_agents_file(
        self,
        folder: str,
        system_prompt: str,
        context_window: int = 0,
        pruning: bool = False,
        **keys: Any,
    ) -> str:
        """Write ``agents.yaml``: one ``provider: ollama`` model on the scripted server.

        ``context_window`` (0: none) goes into the model entry with ``keys``; the agent
        ``reader`` reads ``<folder>/workspace``, which holds ``notes.txt`` (40 lines, the
        launch code on line 20). With ``pruning`` the agent prunes ``read_file`` results
        of 200 characters or more with the same model.
        """
        entry: dict[str, Any] = {
            "provider": "ollama",
            "model": self.server.model,
            "base_url": self.server.base_url,
            "temperature": 0,
            **keys,
        }
        if int(context_window) > 0:
            entry["context_window"] = int(context_window)
        agent = agent_entry(system_prompt, max_rounds=4, prefetch_mentioned_files=False)
        if truthy(pruning):
            agent.update(
                allow_tool_output_pruning=True, pruning_model=MODEL_KEY, pruning_min_chars=200
            )
        path = write_agents_file(folder, entry, "reader", agent)
        lines = [f"line {n}: nothing to see here" for n in range(1, 41)]
        lines[19] = "The launch code is 4711."
        notes = Path(folder) / "workspace" / "notes.txt"
        notes.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return path

    def run_agent_through_cli(self, agents_file: str, question: str) -> dict[str, Any]:
        """``python -m leanloop run FILE --json QUESTION``; returns the printed report.

        Fails with the process's output when it does not exit 0.
        """
        env = {**os.environ, "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
        done = subprocess.run(
            [sys.executable, "-m", "leanloop", "run", agents_file, "--json", question],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        print(f"*INFO* stderr:\n{done.stderr}\nstdout:\n{done.stdout}")
        if done.returncode != 0:
            msg = f"leanloop run exited {done.returncode}: {done.stderr.strip()[-2000:]}"
            raise AssertionError(msg)
        report = json.loads(done.stdout)
        if not isinstance(report, dict):
            msg = f"--json printed {type(report).__name__}, not an object"
            raise AssertionError(msg)
        return report

    # what was sent -------------------------------------------------------------------------
    def chat_request_count(self) -> int:
        return len(self.server.chat_bodies())

    def chat_request_count_should_be(self, count: int) -> None:
        bodies = self.server.chat_bodies()
        if len(bodies) != int(count):
            msg = f"{len(bodies)} chat requests, expected {count}: {json.dumps(bodies)[:2000]}"
            raise AssertionError(msg)

    def chat_request_should_offer_no_tools(self, number: int) -> None:
        """Fail when chat request ``number`` (1-based) offered tools."""
        body = self.server.chat_bodies()[int(number) - 1]
        if body.get("tools"):
            names = [t.get("function", {}).get("name") for t in body["tools"]]
            msg = f"chat request {number} offered tools {names}"
            raise AssertionError(msg)

    def num_ctx_of_chat_requests(self) -> list[Any]:
        """``options.num_ctx`` of every ``/api/chat`` request (``None`` where it was missing)."""
        values = []
        for body in self.server.chat_bodies():
            options = body.get("options")
            values.append(options.get("num_ctx") if isinstance(options, dict) else None)
        print(f"*INFO* num_ctx per chat request: {values}")
        return values

    def every_chat_request_should_ask_for(self, num_ctx: int, at_least: int = 2) -> None:
        """Fail unless at least ``at_least`` chat requests went out, each with ``num_ctx``."""
        values = self.num_ctx_of_chat_requests()
        if len(values) < int(at_least):
            msg = f"only {len(values)} chat requests (expected at least {at_least})"
            raise AssertionError(msg)
        wrong = [(i + 1, v) for i, v in enumerate(values) if v != int(num_ctx)]
        if wrong:
            msg = f"chat requests without options.num_ctx {num_ctx} (request, value): {wrong}"
            raise AssertionError(msg)

    def loaded_context_length(self, model: str) -> int | None:
        """What ``/api/ps`` reports for ``model`` now (``None``: not loaded)."""
        return self.server.loaded.get(model)
