"""Steps for features/budget_window.feature: discovering the real context window."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
from behave import given, then, when
from behave.runner import Context
from support.aio import run

from leanloop.budget import WindowResolver, default_resolver, small_window_warning


@dataclass
class Route:
    """What the scripted server answers to one method and path."""

    status: int = 200
    body: bytes = b"{}"
    delay: float = 0.0


@dataclass
class Seen:
    """One request the scripted server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class WindowServer:
    """A stdlib HTTP server on 127.0.0.1 that answers scripted routes, 404 otherwise."""

    routes: dict[tuple[str, str], Route] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)
    hang_all: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)
    httpd: ThreadingHTTPServer | None = None

    @property
    def root(self) -> str:
        assert self.httpd is not None
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with server.lock:
                    server.seen.append(
                        Seen(self.command, self.path, dict(self.headers.items()), body)
                    )
                route = server.routes.get((self.command, self.path), Route(404, b"{}"))
                delay = server.hang_all or route.delay
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(route.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(route.body)))
                    self.end_headers()
                    self.wfile.write(route.body)
                except OSError:  # the client gave up waiting, as it should
                    return

            do_GET = _answer
            do_POST = _answer

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        ).start()

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()

    def count(self) -> int:
        with self.lock:
            return len(self.seen)


def _server(context: Context) -> WindowServer:
    server: WindowServer | None = getattr(context, "budget_window_server", None)
    if server is None:
        server = WindowServer()
        server.start()
        context.cleanups.append(server.stop)
        context.budget_window_server = server
    return server


def _resolver(context: Context) -> WindowResolver:
    resolver: WindowResolver | None = getattr(context, "budget_window_resolver", None)
    if resolver is None:
        resolver = _make_resolver(context, timeout=None)
    return resolver


def _make_resolver(context: Context, *, timeout: float | None) -> WindowResolver:
    context.budget_window_now = 1000.0
    kwargs: dict[str, Any] = {"clock": lambda: context.budget_window_now}
    if timeout is not None:
        kwargs["timeout"] = timeout
    context.budget_window_resolver = WindowResolver(**kwargs)
    return context.budget_window_resolver


def _resolve(context: Context, **kwargs: Any) -> None:
    options: dict[str, Any] = {
        "configured": None,
        "provider": None,
        "base_url": None,
        "model_name": None,
        "profile": getattr(context, "budget_window_profile", None),
    }
    options.update(kwargs)
    context.budget_window_before = _server(context).count()
    context.budget_window_error = None
    try:
        context.budget_window = run(_resolver(context).resolve(**options))
    except ValueError as exc:
        context.budget_window_error = exc


def _base_url(context: Context, provider: str) -> str:
    root = _server(context).root
    return root if provider == "ollama" else f"{root}/v1"


# --- Given -----------------------------------------------------------------------------


@given('a window test server answering {method} "{path}" with')
def step_route_json(context: Context, method: str, path: str) -> None:
    body = json.loads(context.text)
    _server(context).routes[(method, path)] = Route(200, json.dumps(body).encode())
    assert (method, path) in _server(context).routes


@given('a window test server answering {method} "{path}" with {status:d} and "{raw}"')
def step_route_raw(context: Context, method: str, path: str, status: int, raw: str) -> None:
    _server(context).routes[(method, path)] = Route(status, raw.encode())
    assert _server(context).routes[(method, path)].status == status


@given("a window test server that answers nothing it knows")
def step_empty_server(context: Context) -> None:
    assert _server(context).routes == {}


@given("a window test server that hangs {seconds:f} seconds on every request")
def step_hanging_server(context: Context, seconds: float) -> None:
    _server(context).hang_all = seconds
    assert _server(context).hang_all == seconds


@given("a window resolver with a fake clock")
def step_fake_clock(context: Context) -> None:
    resolver = _make_resolver(context, timeout=None)
    assert isinstance(resolver, WindowResolver)


@given("a window resolver with a fake clock and a probe timeout of {seconds:f} seconds")
def step_fake_clock_timeout(context: Context, seconds: float) -> None:
    resolver = _make_resolver(context, timeout=seconds)
    assert isinstance(resolver, WindowResolver)


@given("a window resolver whose HTTP client must never be built")
def step_no_client(context: Context) -> None:
    def refuse() -> Any:
        raise AssertionError("the window resolver tried to probe a hosted API")

    context.budget_window_resolver = WindowResolver(client_factory=refuse)
    assert context.budget_window_resolver is not None


@given("a window resolver whose HTTP client cannot connect anywhere")
def step_unreachable_client(context: Context) -> None:
    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("no route", request=request)

    def factory() -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(unreachable))

    context.budget_window_resolver = WindowResolver(client_factory=factory)
    assert context.budget_window_resolver is not None


@given("the window model profile says {tokens:d} max input tokens")
def step_profile(context: Context, tokens: int) -> None:
    context.budget_window_profile = {"max_input_tokens": tokens, "tool_calling": True}
    assert context.budget_window_profile["max_input_tokens"] == tokens


# --- When ------------------------------------------------------------------------------


@when('the window is resolved for provider "{provider}" at the test server with model "{model}"')
def step_resolve_server(context: Context, provider: str, model: str) -> None:
    _resolve(context, provider=provider, base_url=_base_url(context, provider), model_name=model)


@when(
    'the window is resolved with API key "{key}" for provider "{provider}" at the test server'
    ' with model "{model}"'
)
def step_resolve_key(context: Context, provider: str, model: str, key: str) -> None:
    base_url = _base_url(context, provider)
    _resolve(context, provider=provider, base_url=base_url, model_name=model, api_key=key)


@when('the window is resolved with configured {tokens:d} for provider "{provider}"')
def step_resolve_configured(context: Context, tokens: int, provider: str) -> None:
    base_url = _base_url(context, provider)
    _resolve(context, configured=tokens, provider=provider, base_url=base_url, model_name="m")


@when('the window is resolved for provider "{provider}" without a base URL')
def step_resolve_hosted(context: Context, provider: str) -> None:
    _resolve(context, provider=None if provider == "None" else provider, model_name="gpt-4o")


@when('the window is resolved for provider "{provider}" at "{base_url}"')
def step_resolve_url(context: Context, provider: str, base_url: str) -> None:
    _resolve(context, provider=provider, base_url=base_url, model_name="gpt-4o")


@when("the window clock advances {seconds:f} seconds")
def step_advance(context: Context, seconds: float) -> None:
    before = context.budget_window_now
    context.budget_window_now += seconds
    assert context.budget_window_now > before


# --- Then ------------------------------------------------------------------------------


@then('the window is {tokens:d} tokens from "{source}"')
def step_window_is(context: Context, tokens: int, source: str) -> None:
    assert context.budget_window_error is None, context.budget_window_error
    window = context.budget_window
    assert (window.tokens, window.source) == (tokens, source), window
    # A default always says why it is only a default; a real figure carries no note.
    assert bool(window.note) == source.startswith("default:"), window


@then('the window\'s note says "{text}"')
def step_window_note(context: Context, text: str) -> None:
    assert context.budget_window.note and text in context.budget_window.note, context.budget_window


@then("the window test server received no requests")
def step_no_requests(context: Context) -> None:
    assert _server(context).count() == 0, _server(context).seen


@then("the window resolution sent no new requests")
def step_no_new_requests(context: Context) -> None:
    assert _server(context).count() == context.budget_window_before, _server(context).seen


@then("the window resolution asked the server again")
def step_new_requests(context: Context) -> None:
    assert _server(context).count() > context.budget_window_before


@then('the window test server saw {method} "{path}" with a JSON body naming "{model}"')
def step_saw_body(context: Context, method: str, path: str, model: str) -> None:
    bodies = [s.body for s in _server(context).seen if (s.method, s.path) == (method, path)]
    assert any(json.loads(b or b"{}").get("model") == model for b in bodies), bodies


@then('the window test server saw only {method} requests to "{path}"')
def step_saw_only(context: Context, method: str, path: str) -> None:
    methods = {s.method for s in _server(context).seen if s.path == path}
    assert methods == {method}, methods


@then('every window probe carried the header "{name}: {value}"')
def step_header(context: Context, name: str, value: str) -> None:
    seen = _server(context).seen
    assert seen
    assert all(s.headers.get(name) == value for s in seen), [s.headers for s in seen]


@then('the window resolution fails with "{text}"')
def step_fails(context: Context, text: str) -> None:
    assert context.budget_window_error is not None
    assert text in str(context.budget_window_error), str(context.budget_window_error)


@then("the small window warning mentions {words}")
def step_warning(context: Context, words: str) -> None:
    warning = small_window_warning(context.budget_window)
    assert warning is not None
    assert "\n" not in warning
    for word in words.split(" and "):
        assert word.strip('"') in warning, (word, warning)


@then("there is no small window warning")
def step_no_warning(context: Context) -> None:
    assert small_window_warning(context.budget_window) is None


@then("the default window resolver is shared")
def step_default_shared(context: Context) -> None:
    assert default_resolver() is default_resolver()
    assert isinstance(default_resolver(), WindowResolver)
