"""Keywords that run agents on a scripted Ollama-API server and read what they sent.

The server is :class:`leanloop.testing.server.FakeModelServer` (issue 26: one fake
server), which speaks what ``langchain_ollama.ChatOllama`` and leanloop's window
discovery call: ``POST /api/chat`` (NDJSON lines when the request streams, as Ollama does
unless ``"stream": false``), ``POST /api/show`` (the Modelfile's parameters and the
trained length in ``model_info``), ``GET /api/ps`` (the loaded models with their
``context_length``), ``GET /api/tags`` and ``GET /api/version``. Each ``/api/chat``
request replays one queued reply and every request is recorded, so a test can assert
the ``options.num_ctx`` each request really carried.

Like Ollama, a chat request loads the model at the ``num_ctx`` it asks for (Ollama's own
default of 4,096 when it asks for none), and ``/api/ps`` reports that from then on.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from agents_file import MODEL_KEY, agent_entry, write_agents_file
from robot_args import truthy

from leanloop.testing.server import FakeModelServer, Reply

__all__ = ["OllamaApiLibrary"]


class OllamaApiLibrary:
    """Start the scripted Ollama server, write an agents file on it, run it, read requests."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._server: FakeModelServer | None = None

    @property
    def server(self) -> FakeModelServer:
        if self._server is None:
            msg = "start the scripted Ollama server first"
            raise AssertionError(msg)
        return self._server

    # server ----------------------------------------------------------------------------
    def start_scripted_ollama_server(self, model: str = "qwen3:4b", trained: int = 131072) -> str:
        """Start the server knowing ``model`` (trained for ``trained`` tokens); returns its URL."""
        self.stop_scripted_ollama_server()
        # No /tokenize or /apply-template: Ollama has neither.
        self._server = FakeModelServer(
            model=model, trained=int(trained), tokenizer=None, template=None
        ).start()
        return self._server.url

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
        self.server.queue(Reply(tool_calls=[{"name": name, "arguments": json.loads(arguments)}]))

    def queue_ollama_answer(self, text: str) -> None:
        """Queue a reply answering ``text``."""
        self.server.queue(Reply(content=text))

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
            # Ollama's base URL has no /v1: provider ollama talks the native API.
            "base_url": self.server.url,
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
    def _chat_bodies(self) -> list[dict[str, Any]]:
        # Every POST /api/chat, refused ones too (an unknown model's 404 is a request sent).
        return [r.body for r in self.server.requests if r.path == "/api/chat"]

    def chat_request_count(self) -> int:
        return len(self._chat_bodies())

    def chat_request_count_should_be(self, count: int) -> None:
        bodies = self._chat_bodies()
        if len(bodies) != int(count):
            msg = f"{len(bodies)} chat requests, expected {count}: {json.dumps(bodies)[:2000]}"
            raise AssertionError(msg)

    def chat_request_should_offer_no_tools(self, number: int) -> None:
        """Fail when chat request ``number`` (1-based) offered tools."""
        body = self._chat_bodies()[int(number) - 1]
        if body.get("tools"):
            names = [t.get("function", {}).get("name") for t in body["tools"]]
            msg = f"chat request {number} offered tools {names}"
            raise AssertionError(msg)

    def num_ctx_of_chat_requests(self) -> list[Any]:
        """``options.num_ctx`` of every ``/api/chat`` request (``None`` where it was missing)."""
        values = []
        for body in self._chat_bodies():
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
