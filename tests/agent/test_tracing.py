"""Tracing through LangChain's callbacks: LangSmith and OpenTelemetry (issue 39).

The recipes of ``docs/tracing.md`` run here as written (each block marked ``(recipe
NAME)``), with an agent on ``ChatOpenAI`` answering from a scripted model server on
127.0.0.1 after one tool call. What they trace goes to :class:`Recorder`, a real HTTP
server on 127.0.0.1 that implements just enough of two ingest APIs for their own clients:
LangSmith's (``GET /info``, ``POST /runs/multipart``, ``POST /runs/batch``, ``POST /runs``,
``PATCH /runs/{id}``), as the ``langsmith`` client that langchain-core depends on posts it,
and OTLP over HTTP (``POST /v1/traces``, protobuf), as OpenTelemetry's exporter posts it.
It records every request whole (method, path, headers, body), so a test can search all
that a run sent for a secret. Nothing goes beyond 127.0.0.1.

The ``langsmith`` client keeps state per process (a cached client, environment variables
read once and cached); :func:`fresh_langsmith` clears it before and after each test, so a
test's endpoint is the one its client posts to and nothing leaks into other tests.
"""

from __future__ import annotations

import email.parser
import email.policy
import functools
import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from langsmith import run_trees
from langsmith import utils as ls_utils
from langsmith._internal import _context
from langsmith.env import _runtime_env

from leanloop.testing.server import FakeModelServer, Reply, ServerRequest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "tracing.md"
RECIPE = re.compile(r"<!--\s*doctest:\s*skip\b[^>]*\(recipe (?P<name>[\w-]+)\)[^>]*-->\s*\n")
_FENCE = re.compile(r"(?P<fence>```+)(?P<lang>\w*)\n(?P<body>.*?)\n(?P=fence)", re.DOTALL)


def recipe(name: str) -> tuple[str, str]:
    """The code block of ``docs/tracing.md`` marked ``(recipe NAME)``: its language and text."""
    text = PAGE.read_text(encoding="utf-8")
    for marker in RECIPE.finditer(text):
        if marker["name"] == name:
            block = _FENCE.match(text, marker.end())
            assert block is not None, f"docs/tracing.md: no code block right after {marker[0]!r}"
            return block["lang"], block["body"]
    msg = f"docs/tracing.md has no block marked '(recipe {name})'"
    raise AssertionError(msg)


def exports(body: str) -> dict[str, str]:
    """The ``export NAME=VALUE`` lines of a shell recipe (comments left out)."""
    found = {}
    for line in body.splitlines():
        match = re.match(r"^export (\w+)=(\S+)", line.strip())
        if match:
            found[match[1]] = match[2]
    return found


# ---- the recorder ------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One request the recorder got, whole."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Recorder:
    """A LangSmith and OTLP ingest recorder on 127.0.0.1 (see the module docstring)."""

    requests: list[Request] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None

    def start(self) -> Recorder:
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                recorder.requests.append(
                    Request(self.command, self.path, dict(self.headers.items()), body)
                )
                if self.command == "GET" and self.path.startswith("/info"):
                    # No batch_ingest_config: the client uses its defaults (multipart).
                    self._reply(200, {"version": "0.10.0"})
                elif self.path.startswith(("/runs", "/v1/traces")):
                    self._reply(200, {} if self.path.startswith("/runs") else None)
                else:
                    self._reply(404, {"detail": "not recorded"})

            def _reply(self, status: int, payload: Any) -> None:
                data = b"" if payload is None else json.dumps(payload).encode()
                self.send_response(status)
                if payload is not None:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = _handle

        try:
            self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        except OSError as exc:  # pragma: no cover - a machine without a loopback port
            pytest.fail(f"the tracing recorder could not listen on 127.0.0.1: {exc}")
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_port}"

    # -- LangSmith --------------------------------------------------------------------

    def runs(self) -> dict[str, dict[str, Any]]:
        """Every run LangSmith was sent, by id: its posts and patches merged in order."""
        runs: dict[str, dict[str, Any]] = {}
        for request in self.requests:
            for _, run in self._operations(request):
                runs.setdefault(str(run["id"]), {}).update(run)
        return runs

    def _operations(self, request: Request) -> Iterator[tuple[str, dict[str, Any]]]:
        if request.method == "POST" and request.path == "/runs/multipart":
            yield from _multipart_runs(request)
        elif request.method == "POST" and request.path == "/runs/batch":
            batch = json.loads(request.body)
            for kind in ("post", "patch"):
                for run in batch.get(kind) or []:
                    yield kind, run
        elif request.method == "POST" and request.path == "/runs":
            yield "post", json.loads(request.body)
        elif request.method == "PATCH" and request.path.startswith("/runs/"):
            yield "patch", {"id": request.path.rsplit("/", 1)[1], **json.loads(request.body)}

    # -- OTLP -------------------------------------------------------------------------

    def spans(self) -> list[Any]:
        """Every span OTLP/HTTP delivered (``opentelemetry.proto`` ``Span`` messages)."""
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: PLC0415
            ExportTraceServiceRequest,
        )

        spans = []
        for request in self.requests:
            if request.method == "POST" and request.path == "/v1/traces":
                message = ExportTraceServiceRequest.FromString(request.body)
                for resource in message.resource_spans:
                    for scope in resource.scope_spans:
                        spans.extend(scope.spans)
        return spans

    def everything(self) -> str:
        """All the recorder got, bodies and headers, as one text (to search for secrets)."""
        parts = []
        for request in self.requests:
            parts.append(f"{request.method} {request.path}")
            parts.extend(f"{name}: {value}" for name, value in request.headers.items())
            parts.append(request.body.decode("utf-8", errors="replace"))
        return "\n".join(parts)


def _multipart_runs(request: Request) -> Iterator[tuple[str, dict[str, Any]]]:
    """The runs of a ``/runs/multipart`` body: ``post.ID`` or ``patch.ID`` parts, each with
    its ``.inputs``, ``.outputs``, ``.events``, ``.extra``… parts as fields."""
    head = f"Content-Type: {request.headers['Content-Type']}\r\n\r\n".encode()
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(head + request.body)
    assert message.is_multipart(), request.headers
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    for part in message.iter_parts():
        name = str(part.get_param("name", header="content-disposition"))
        kind, run_id, *rest = name.split(".")
        payload = part.get_payload(decode=True)
        assert isinstance(payload, bytes), name
        value = json.loads(payload) if payload else None
        run = runs.setdefault((kind, run_id), {"id": run_id})
        if rest:  # post.ID.inputs, post.ID.outputs, …: one field of the run
            run[rest[0]] = value
        else:  # post.ID: the run's other fields
            assert isinstance(value, dict), name
            run.update(value)
    for (kind, _), run in runs.items():
        yield kind, run


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    server = Recorder().start()
    try:
        yield server
    finally:
        server.stop()


# ---- the langsmith client's process state ------------------------------------------------


def _clear_langsmith_caches() -> None:
    """Forget every environment variable and client the ``langsmith`` package cached."""
    for module in (ls_utils, _runtime_env, run_trees):
        for value in vars(module).values():
            if isinstance(value, functools._lru_cache_wrapper):
                value.cache_clear()
    run_trees._CLIENT = None
    _context._GLOBAL_CLIENT = None


@pytest.fixture
def fresh_langsmith(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """No LangSmith or OpenTelemetry variables set, nothing cached; the same afterwards."""
    for name in list(os.environ):
        if name.startswith(("LANGSMITH_", "LANGCHAIN_", "OTEL_")):
            monkeypatch.delenv(name)
    _clear_langsmith_caches()
    try:
        yield monkeypatch
    finally:
        client = run_trees._CLIENT
        if client is not None:
            client.flush()  # nothing a test queued may post after the test's server is gone
        _clear_langsmith_caches()  # the variables come back after this (monkeypatch's end)


LOOPBACK = ("127.0.0.1", "localhost", "::1")


@pytest.fixture
def loopback_only(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Refuse every connection and name lookup beyond 127.0.0.1; the test gets the list of
    those tried, and fails at its end if there was one."""
    tried: list[str] = []
    lookup, connect = socket.getaddrinfo, socket.socket.connect

    def guarded_lookup(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host not in LOOPBACK:
            tried.append(f"lookup {host}")
            raise socket.gaierror(f"the tracing tests stay on 127.0.0.1, not {host}")
        return lookup(host, *args, **kwargs)

    def guarded_connect(self: socket.socket, address: Any) -> None:
        if isinstance(address, tuple) and address[0] not in LOOPBACK:
            tried.append(f"connect {address}")
            raise OSError(f"the tracing tests stay on 127.0.0.1, not {address}")
        connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", guarded_lookup)
    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    yield tried
    assert not tried, f"a connection beyond 127.0.0.1 was tried: {tried}"


@pytest.fixture
def fresh_tracer_provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """OpenTelemetry's global tracer provider unset, so a recipe may set it once; restored.

    The API lets a process set it once; the OpenTelemetry SDK's own tests reset these two
    private names the same way.
    """
    from opentelemetry import trace  # noqa: PLC0415
    from opentelemetry.util._once import Once  # noqa: PLC0415

    monkeypatch.setattr(trace, "_TRACER_PROVIDER", None)
    monkeypatch.setattr(trace, "_TRACER_PROVIDER_SET_ONCE", Once())
    yield
    provider = trace._TRACER_PROVIDER
    shutdown = getattr(provider, "shutdown", None)
    if shutdown is not None:
        shutdown()


# ---- the agent's world -------------------------------------------------------------------

QUESTION = "What do the notes say about the port?"
NOTES = "The service listens on 7431."
ANSWER = "The service uses port 7431."
LANGSMITH_KEY = "lsv2_pt_test-langsmith-key-0451"
OPENAI_KEY = "sk-test-openai-key-9316"
OTLP_TOKEN = "test-otlp-token-7720"  # noqa: S105 - a test value the test looks for
SECRETS = (LANGSMITH_KEY, OPENAI_KEY, OTLP_TOKEN)


def _reply(request: ServerRequest) -> Reply:
    """Call ``read_notes`` once, then answer from its result."""
    offered = [tool.get("function", {}).get("name") for tool in request.body.get("tools") or []]
    answered = any(message.get("role") == "tool" for message in request.messages)
    if "read_notes" in offered and not answered:
        return Reply(tool_calls=[{"name": "read_notes", "arguments": {"topic": "port"}}])
    return Reply(content=ANSWER)


@pytest.fixture
def world(
    tmp_path: Path,
    fresh_langsmith: pytest.MonkeyPatch,
    recorder: Recorder,
    loopback_only: list[str],
) -> Iterator[FakeModelServer]:
    """A folder with ``notes/port.txt``, ``ChatOpenAI`` pointed at a scripted server, and
    no connection beyond 127.0.0.1."""
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "port.txt").write_text(NOTES, encoding="utf-8")
    fresh_langsmith.chdir(tmp_path)
    with FakeModelServer(handler=_reply, model="gpt-4o-mini") as model_server:
        fresh_langsmith.setenv("OPENAI_API_KEY", OPENAI_KEY)
        fresh_langsmith.setenv("OPENAI_BASE_URL", model_server.base_url)
        fresh_langsmith.delenv("OPENAI_API_BASE", raising=False)
        yield model_server


def _run(names: list[str], namespace: dict[str, Any] | None = None) -> dict[str, Any]:
    """Execute the recipes ``names`` of the page, in order, in one namespace."""
    namespace = {"__name__": "__docs__"} if namespace is None else namespace
    for name in names:
        lang, body = recipe(name)
        assert lang == "python", f"recipe {name} is a {lang} block"
        exec(compile(body, f"docs/tracing.md ({name})", "exec"), namespace)  # noqa: S102
    return namespace


def _set(monkeypatch: pytest.MonkeyPatch, name: str, **overrides: str) -> None:
    """Set the variables the shell recipe ``name`` exports, then ``overrides``."""
    lang, body = recipe(name)
    assert lang == "bash", f"recipe {name} is a {lang} block"
    variables = exports(body)
    assert variables, f"recipe {name} exports nothing"
    for key, value in {**variables, **overrides}.items():
        monkeypatch.setenv(key, value)


def _children(runs: dict[str, dict[str, Any]], parent: str) -> list[dict[str, Any]]:
    children = [run for run in runs.values() if str(run.get("parent_run_id")) == parent]
    return sorted(children, key=lambda run: str(run["dotted_order"]))


def _assert_secrets_only_in_headers(recorder: Recorder, header: str, secret: str) -> None:
    """``secret`` reaches the recorder in ``header`` of each request, nowhere else; no
    other secret reaches it at all."""
    assert recorder.requests, "the recorder got nothing"
    for request in recorder.requests:
        for name, value in request.headers.items():
            if name.lower() == header.lower():
                assert value.endswith(secret), (request.path, name)
            else:
                assert secret not in value, (request.path, name)
        assert secret not in request.path
        assert secret.encode() not in request.body, f"{request.path}: the body has it"
    seen = recorder.everything()
    for other in SECRETS:
        if other != secret:
            assert other not in seen, f"{other!r} was sent to the recorder"


# ---- LangSmith ---------------------------------------------------------------------------


def test_an_agent_traces_to_langsmith_with_nothing_but_the_standard_variables(
    world: FakeModelServer,
    recorder: Recorder,
    fresh_langsmith: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _set(
        fresh_langsmith,
        "langsmith-env",
        LANGSMITH_API_KEY=LANGSMITH_KEY,
        LANGSMITH_ENDPOINT=recorder.url,
    )

    namespace = _run(["langsmith-run"])

    assert ANSWER in capsys.readouterr().out
    assert namespace["message"].response_metadata["leanloop"]["stop_reason"] == "answer"
    runs = recorder.runs()
    roots = [run for run in runs.values() if run.get("parent_run_id") is None]
    assert [(root["name"], root["run_type"]) for root in roots] == [("agent", "chain")], roots
    root = roots[0]
    assert root["session_name"] == "leanloop"  # LANGSMITH_PROJECT of the recipe
    assert root["inputs"] == {"input": QUESTION}
    output = root["outputs"]["output"]
    assert output["content"] == ANSWER
    assert output["response_metadata"]["leanloop"]["stop_reason"] == "answer"
    assert root["end_time"], "the agent's run was never closed"

    children = _children(runs, str(root["id"]))
    assert [(run["run_type"], run["name"]) for run in children] == [
        ("llm", "ChatOpenAI"),
        ("tool", "read_notes"),
        ("llm", "ChatOpenAI"),
    ]
    first, tool, second = children
    for run in children:
        assert str(run["trace_id"]) == str(root["id"])
        assert str(run["dotted_order"]).startswith(f"{root['dotted_order']}.")
        assert run["end_time"], f"{run['name']} was never closed"
        assert not run.get("error"), run.get("error")
    assert tool["inputs"] == {"topic": "port"}
    assert NOTES in json.dumps(tool["outputs"])
    for llm in (first, second):
        metadata = llm["extra"]["metadata"]
        assert (metadata["ls_model_name"], metadata["ls_provider"]) == ("gpt-4o-mini", "openai")
        assert "usage_metadata" in json.dumps(llm["outputs"])  # the tokens the server counted
    assert "read_notes" in json.dumps(first["outputs"])  # the tool call the model asked for
    assert ANSWER in json.dumps(second["outputs"])
    # The report's requests are the trace's model runs.
    assert len(output["response_metadata"]["leanloop"]["requests"]) == 2

    _assert_secrets_only_in_headers(recorder, "X-API-Key", LANGSMITH_KEY)
    paths = {request.path for request in recorder.requests}
    assert paths <= {"/info", "/runs/multipart", "/runs/batch"}, paths


def test_a_tracer_in_the_config_traces_that_run_alone(
    world: FakeModelServer,
    recorder: Recorder,
    fresh_langsmith: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    fresh_langsmith.setenv("LANGSMITH_API_KEY", LANGSMITH_KEY)
    fresh_langsmith.setenv("LANGSMITH_ENDPOINT", recorder.url)

    # The first recipe, without LANGSMITH_TRACING: its run is not traced.
    namespace = _run(["langsmith-run"])
    assert not recorder.runs(), "a run was traced without LANGSMITH_TRACING or a tracer"
    _run(["langsmith-callbacks"], namespace)

    assert ANSWER in capsys.readouterr().out
    runs = recorder.runs()
    roots = [run for run in runs.values() if run.get("parent_run_id") is None]
    assert [(root["name"], root["session_name"]) for root in roots] == [
        ("agent", "leanloop-checks")
    ]
    kinds = [(run["run_type"], run["name"]) for run in _children(runs, str(roots[0]["id"]))]
    assert kinds == [("llm", "ChatOpenAI"), ("tool", "read_notes"), ("llm", "ChatOpenAI")]
    _assert_secrets_only_in_headers(recorder, "X-API-Key", LANGSMITH_KEY)


# ---- OpenTelemetry -----------------------------------------------------------------------


def _attributes(span: Any) -> dict[str, Any]:
    values = {}
    for attribute in span.attributes:
        value = attribute.value
        values[attribute.key] = getattr(value, value.WhichOneof("value") or "string_value")
    return values


def test_langsmiths_opentelemetry_export_sends_spans_and_no_contents_to_a_collector(
    world: FakeModelServer,
    recorder: Recorder,
    fresh_langsmith: pytest.MonkeyPatch,
    fresh_tracer_provider: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pytest.importorskip(
        "opentelemetry.exporter.otlp.proto.http", reason='needs "langsmith[otel]" (dev extra)'
    )
    _set(
        fresh_langsmith,
        "otel-env",
        OTEL_EXPORTER_OTLP_ENDPOINT=recorder.url,
        OTEL_EXPORTER_OTLP_HEADERS=f"authorization=Bearer {OTLP_TOKEN}",
        # Where LangSmith would be: OTEL_ONLY must send it nothing.
        LANGSMITH_ENDPOINT=recorder.url,
    )
    assert "LANGSMITH_API_KEY" not in os.environ

    namespace = _run(["otel-provider", "langsmith-run"])
    namespace["provider"].force_flush()

    assert ANSWER in capsys.readouterr().out
    assert {request.path for request in recorder.requests} == {"/v1/traces"}
    spans = recorder.spans()
    roots = [span for span in spans if not span.parent_span_id]
    assert [span.name for span in roots] == ["agent"], [span.name for span in spans]
    root = roots[0]
    children = sorted(
        (span for span in spans if span.parent_span_id == root.span_id),
        key=lambda span: span.start_time_unix_nano,
    )
    assert [span.name for span in children] == ["ChatOpenAI", "read_notes", "ChatOpenAI"]
    assert len(spans) == 4, [span.name for span in spans]
    assert {span.trace_id for span in spans} == {root.trace_id}
    first, tool, second = (_attributes(span) for span in children)
    assert _attributes(root)["langsmith.span.kind"] == "chain"
    for llm in (first, second):
        assert llm["gen_ai.operation.name"] == "chat"
        assert llm["gen_ai.request.model"] == "gpt-4o-mini"
        assert llm["gen_ai.system"] == "openai"
        # With outputs hidden the tokens are still there, as the run's usage metadata.
        assert json.loads(llm["langsmith.metadata.usage_metadata"])["input_tokens"] > 0
    assert (tool["gen_ai.operation.name"], tool["gen_ai.tool.name"]) == (
        "execute_tool",
        "read_notes",
    )
    # LANGSMITH_HIDE_INPUTS/OUTPUTS: no message contents in any span.
    spans_text = "\n".join(str(span) for span in spans)
    for content in (QUESTION, NOTES, ANSWER):
        assert content not in spans_text, content
    resource = {
        attribute.key: attribute.value.string_value
        for message in [recorder.requests[0]]
        for attribute in _resource_attributes(message)
    }
    assert resource.get("service.name") == "my-agents"  # OTEL_SERVICE_NAME of the recipe
    _assert_secrets_only_in_headers(recorder, "authorization", OTLP_TOKEN)


def _resource_attributes(request: Request) -> list[Any]:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (  # noqa: PLC0415
        ExportTraceServiceRequest,
    )

    message = ExportTraceServiceRequest.FromString(request.body)
    return list(message.resource_spans[0].resource.attributes)


def test_the_cli_traces_with_the_same_variables_and_sends_before_it_exits(
    world: FakeModelServer, recorder: Recorder, tmp_path: Path
) -> None:
    # A process of its own: what the client still holds at exit must go out then.
    (tmp_path / "agents.yaml").write_text(
        "version: 1\n"
        "agents:\n"
        "  reader:\n"
        "    model:\n"
        "      provider: openai\n"
        "      model: gpt-4o-mini\n"
        f"      base_url: {world.base_url}\n"
        "    tools: [read_file]\n"
        "    workspace: .\n",
        encoding="utf-8",
    )
    _, body = recipe("langsmith-env")
    variables = {**exports(body), "LANGSMITH_API_KEY": LANGSMITH_KEY}
    variables["LANGSMITH_ENDPOINT"] = recorder.url
    done = subprocess.run(
        [sys.executable, "-m", "leanloop", "run", "agents.yaml", QUESTION],
        cwd=tmp_path,
        env={**os.environ, **variables},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert ANSWER in done.stdout
    runs = recorder.runs()
    roots = [run for run in runs.values() if run.get("parent_run_id") is None]
    assert [(root["name"], root["run_type"]) for root in roots] == [("reader", "chain")]
    children = _children(runs, str(roots[0]["id"]))
    assert [run["run_type"] for run in children] == ["llm"], children
    assert all(run.get("end_time") for run in [*roots, *children])
    _assert_secrets_only_in_headers(recorder, "X-API-Key", LANGSMITH_KEY)
