"""Robot keywords that start and stop the servers the suites run against.

Two kinds, one instance per suite (``ROBOT_LIBRARY_SCOPE = "SUITE"``):

- the **scripted** OpenAI-compatible server (``scripted_server.py``): queue responses,
  point an agent at it, then assert on the requests it recorded;
- the **real** ``llama-server`` with the embedded Qwen model, started through
  ``leanloop.localmodel`` on a free port with the context size a test asks for, by the
  engine ``leanloop local start`` would use (``LEANLOOP_ENGINE=build`` runs the same
  suites on the source build; the default is the prebuilt wheel).

A keyword that cannot start its server fails with the reason; nothing is skipped.
"""

from __future__ import annotations

import json
import logging
import socket
import sys
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))

from robot_args import truthy
from scripted_server import (
    ScriptedOpenAIServer,
    ScriptedResponse,
    context_overflow,
    tools_refused,
)

from leanloop.exceptions import LocalModelError
from leanloop.localmodel.build import is_runnable
from leanloop.localmodel.engine import (
    Engine,
    prebuilt_installed,
    record_engine,
    recorded_engine,
)
from leanloop.localmodel.model import is_verified
from leanloop.localmodel.paths import cache_paths
from leanloop.localmodel.pidfile import ServerRecord
from leanloop.localmodel.server import ServerOptions, resolve_engine, start_server, stop_server


class _ExpectedWarnings(logging.Filter):
    """Show leanloop's warnings and errors as INFO lines of the Robot log, not on the console.

    The suites provoke them on purpose (small windows, refused tools, refusals for size,
    the ERROR leanloop logs when a budget is spent, as its specification asks); they stay
    in ``log.html`` for a reader, and the test command's console stays quiet. What a test
    checks is its outcome: a real problem fails the test.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        leanloop = record.name == "leanloop" or record.name.startswith("leanloop.")
        if leanloop and record.levelno in (logging.WARNING, logging.ERROR):
            label = record.levelname.lower()
            record.levelno, record.levelname = logging.INFO, "INFO"
            record.msg = f"(leanloop {label}) {record.msg}"
        return True


# Records of child loggers skip the parent logger's filters, so the filter sits on the
# handlers Robot installed on the root logger.
for _handler in logging.getLogger().handlers:
    _handler.addFilter(_ExpectedWarnings())


class ServerLibrary:
    """Start, script, inspect and stop test servers."""

    ROBOT_LIBRARY_SCOPE = "SUITE"

    def __init__(self) -> None:
        self._scripted: ScriptedOpenAIServer | None = None
        self._llama: ServerRecord | None = None
        self._engine_choice: Engine | None = None

    # ── general ─────────────────────────────────────────────────────────────────────
    def python_executable(self) -> str:
        """The interpreter running Robot (use it to run ``python -m leanloop``)."""
        return sys.executable

    def free_port(self) -> int:
        """A port on 127.0.0.1 that nothing listens on right now."""
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])

    # ── the scripted server ─────────────────────────────────────────────────────────
    def start_scripted_server(self, n_ctx: int = 4096, model: str = "scripted-model") -> str:
        """Start the scripted server; returns its OpenAI base URL (``http://…/v1``)."""
        self.stop_scripted_server()
        self._scripted = ScriptedOpenAIServer(n_ctx=int(n_ctx), model=model)
        self._scripted.start()
        return self._scripted.base_url

    def stop_scripted_server(self) -> None:
        """Stop the scripted server if it runs."""
        if self._scripted is not None:
            self._scripted.stop()
            self._scripted = None

    def reset_scripted_server(self) -> None:
        """Forget queued responses and recorded requests (between tests of one suite)."""
        self._server().reset()

    def queue_answer(
        self,
        text: str,
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
        chunk_delay: float = 0.0,
    ) -> None:
        """Queue a plain assistant answer with optional usage figures.

        ``chunk_delay`` makes a streamed answer arrive slowly (seconds before each piece).
        """
        self._server().queue(
            ScriptedResponse(
                content=text,
                prompt_tokens=_opt_int(prompt_tokens),
                completion_tokens=_opt_int(completion_tokens),
                chunk_delay=float(chunk_delay),
            )
        )

    def queue_tool_call(
        self,
        name: str,
        arguments: str | dict[str, Any] = "{}",
        prompt_tokens: int | None = None,
        completion_tokens: int | None = None,
    ) -> None:
        """Queue a reply that calls ``name`` with ``arguments`` (a dict or JSON text)."""
        args = json.loads(arguments) if isinstance(arguments, str) else dict(arguments)
        self._server().queue(
            ScriptedResponse(
                tool_calls=[{"name": name, "arguments": args}],
                prompt_tokens=_opt_int(prompt_tokens),
                completion_tokens=_opt_int(completion_tokens),
            )
        )

    def queue_context_overflow(self, n_prompt_tokens: int, n_ctx: int) -> None:
        """Queue llama.cpp's HTTP 400 ``exceed_context_size_error``."""
        self._server().queue(context_overflow(int(n_prompt_tokens), int(n_ctx)))

    def queue_tools_refusal(self) -> None:
        """Queue an HTTP 400 refusing ``tools`` (real llama.cpp sends it as a 500)."""
        self._server().queue(tools_refused())

    def queue_http_error(self, status: int, body: str | dict[str, Any]) -> None:
        """Queue any HTTP error with a JSON body."""
        payload = json.loads(body) if isinstance(body, str) else dict(body)
        self._server().queue(ScriptedResponse(status=int(status), error=payload))

    def scripted_responses_left(self) -> int:
        """How many queued responses were not used."""
        return self._server().remaining()

    def scripted_requests(self) -> list[dict[str, Any]]:
        """Every chat-completion request body received, in order."""
        return list(self._server().requests)

    def get_scripted_request(self, index: int) -> dict[str, Any]:
        """The request body number ``index`` (1-based)."""
        requests = self._server().requests
        number = int(index)
        if not 1 <= number <= len(requests):
            msg = f"the scripted server received {len(requests)} requests, not {number}"
            raise AssertionError(msg)
        return requests[number - 1]

    def scripted_request_count_should_be(self, count: int) -> None:
        """Fail unless exactly ``count`` chat requests arrived."""
        got = len(self._server().requests)
        if got != int(count):
            msg = f"expected {count} chat requests, the scripted server received {got}"
            raise AssertionError(msg)

    def scripted_request_roles(self, index: int) -> list[str]:
        """The message roles of request ``index``."""
        return [m.get("role", "?") for m in self.get_scripted_request(index).get("messages", [])]

    def scripted_request_message_count(self, index: int) -> int:
        """How many messages request ``index`` carried."""
        return len(self.get_scripted_request(index).get("messages", []))

    def scripted_request_tool_names(self, index: int) -> list[str]:
        """The names of the tool schemas request ``index`` offered."""
        tools = self.get_scripted_request(index).get("tools") or []
        return [t.get("function", {}).get("name", "?") for t in tools]

    def scripted_request_chars(self, index: int) -> int:
        """The characters of all message contents in request ``index``."""
        return sum(len(_text(m)) for m in self.get_scripted_request(index).get("messages", []))

    def largest_scripted_prompt_chars(self) -> int:
        """The largest request, in message characters, the scripted server received."""
        count = len(self._server().requests)
        return max((self.scripted_request_chars(i) for i in range(1, count + 1)), default=0)

    def scripted_request_should_contain(self, index: int, text: str, role: str = "") -> None:
        """Fail unless a message of request ``index`` (of ``role``, if given) contains ``text``."""
        messages = self.get_scripted_request(index).get("messages", [])
        chosen = [m for m in messages if not role or m.get("role") == role]
        if not any(text in _text(m) for m in chosen):
            where = f"a {role} message" if role else "any message"
            msg = f"{where} of request {index} does not contain {text!r}: {chosen}"
            raise AssertionError(msg)

    def _server(self) -> ScriptedOpenAIServer:
        if self._scripted is None:
            msg = "the scripted server is not running: call Start Scripted Server first"
            raise AssertionError(msg)
        return self._scripted

    # ── the real llama-server ───────────────────────────────────────────────────────
    def start_local_llama_server(self, ctx_size: int = 4096, template: bool = True) -> str:
        """Start the real llama-server on a free port; returns its OpenAI base URL.

        Fails (never skips) when the local model is not set up or does not start.
        """
        self.stop_local_llama_server()
        paths = cache_paths()
        engine = resolve_engine(ServerOptions(), paths)
        ready = is_runnable(paths.server_binary) if engine == "build" else prebuilt_installed()
        if not ready or not is_verified(paths.model_file):
            setup = "leanloop local setup --build" if engine == "build" else "leanloop local setup"
            msg = f"the local model ({engine} engine) is not set up in {paths.root}: run `{setup}`"
            raise AssertionError(msg)
        options = ServerOptions(port=self.free_port(), ctx_size=int(ctx_size),
                                template=truthy(template), detached=False)  # fmt: skip
        try:
            self._llama = start_server(options, paths=paths)
        except LocalModelError as exc:
            msg = f"llama-server did not start: {exc}"
            raise AssertionError(msg) from None
        return self._llama.openai_url

    def stop_local_llama_server(self) -> None:
        """Stop the llama-server this suite started, if any."""
        if self._llama is not None:
            stop_server(self._llama.port, paths=cache_paths(), grace=5.0)
            self._llama = None

    def local_llama_port(self) -> int:
        """The port of this suite's llama-server."""
        return self._record().port

    def local_llama_url(self) -> str:
        """The root URL of this suite's llama-server (``/health``, ``/props``)."""
        return self._record().base_url

    def expected_local_engine(self) -> str:
        """The engine a server started now would run on (``prebuilt`` or ``build``)."""
        return resolve_engine(ServerOptions(), cache_paths())

    def save_engine_choice(self) -> None:
        """Remember the cache's recorded engine (``setup --build`` records ``build``)."""
        self._engine_choice = recorded_engine(cache_paths())

    def restore_engine_choice(self) -> None:
        """Put back the engine :meth:`save_engine_choice` remembered (or none)."""
        paths = cache_paths()
        saved = self._engine_choice
        if saved is None:
            paths.engine_file.unlink(missing_ok=True)
        else:
            record_engine(paths, saved)

    def local_llama_pid(self) -> int:
        """The process id of this suite's llama-server."""
        return self._record().pid

    def _record(self) -> ServerRecord:
        if self._llama is None:
            msg = "no llama-server runs: call Start Local Llama Server first"
            raise AssertionError(msg)
        return self._llama

    # ── HTTP helpers ────────────────────────────────────────────────────────────────
    def http_get_json(self, url: str, expected_status: int = 200) -> Any:
        """GET ``url`` and return its JSON body; fail on another status."""
        response = httpx.get(url, timeout=30)
        _expect(response, int(expected_status))
        return response.json()

    def post_chat_completion(
        self,
        base_url: str,
        user_text: str,
        max_tokens: int = 16,
        expected_status: int = 200,
    ) -> Any:
        """POST one user message to ``{base_url}/chat/completions``; return the JSON body."""
        body = {
            "model": "local-test",
            "messages": [{"role": "user", "content": user_text}],
            "max_tokens": int(max_tokens),
            "temperature": 0,
        }
        response = httpx.post(f"{base_url}/chat/completions", json=body, timeout=300)
        _expect(response, int(expected_status))
        return response.json()

    def repeat_text(self, text: str, times: int) -> str:
        """``text`` repeated ``times`` times, space separated (to build oversized prompts)."""
        return " ".join([text] * int(times))


def _expect(response: httpx.Response, status: int) -> None:
    if response.status_code != status:
        msg = f"{response.request.url} answered {response.status_code}, expected {status}: "
        raise AssertionError(msg + response.text[:500])


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def _opt_int(value: object) -> int | None:
    if value is None or value == "" or (isinstance(value, str) and value.upper() == "NONE"):
        return None
    return int(value)  # type: ignore[call-overload]
