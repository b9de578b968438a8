"""Without a token (``--no-auth``): no web page in the user's browser drives the server.

A cross-site ``text/plain`` POST (no CORS preflight), a foreign ``Origin`` and a foreign
``Host`` (DNS rebinding) are refused before the agent runs; loopback clients sending JSON,
as every OpenAI client does, are served. With a token the token is the protection.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from leanloop.serve.browsers import check_host, check_json, check_origin
from leanloop.serve.errors import ServeError

AUTH = {"Authorization": "Bearer test-token-0123456789"}  # conftest.py's token
BODY = json.dumps({"model": "echo", "messages": [{"role": "user", "content": "Hi."}]})


@pytest.fixture
def open_app(make_app: Callable[..., FastAPI]) -> FastAPI:
    return make_app(token=None)


@pytest.fixture
def local(open_app: FastAPI) -> Iterator[TestClient]:
    """A client of the open server, addressed as a local client addresses it."""
    with TestClient(open_app, base_url="http://127.0.0.1:8080") as client:
        yield client


def post(client: TestClient, content_type: str | None = "application/json", **headers: str) -> Any:
    sent = {"Content-Type": content_type} if content_type is not None else {}
    return client.post("/v1/chat/completions", content=BODY, headers={**sent, **headers})


def model_requests(app: FastAPI) -> int:
    return len(app.state.agents["echo"].model.requests)


def refusal(response: Any, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert error["code"] == code
    assert "--no-auth" in error["message"]
    return str(error["message"])


# -- the checks, one value at a time -------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        None,
        "localhost",
        "LOCALHOST:8080",
        "127.0.0.1",
        "127.0.0.1:8080",
        "127.0.0.2:1",
        "[::1]",
        "[::1]:8080",
    ],
)
def test_loopback_hosts_pass(host: str | None) -> None:
    check_host(host)


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",
        "evil.example:8080",
        "localhost.evil.example",
        "127.0.0.1.nip.io:8080",
        "0.0.0.0:8080",
        "::1",  # IPv6 without brackets is no Host
        "[::1]x",
        "localhost:http",
        "localhost:99999",
        "localhost:²",
        "",
    ],
)
def test_other_hosts_are_refused(host: str) -> None:
    with pytest.raises(ServeError) as refused:
        check_host(host)
    assert (refused.value.status, refused.value.code) == (400, "host_not_allowed")


@pytest.mark.parametrize(
    "origin", [None, "http://localhost:3000", "http://127.0.0.1", "https://[::1]:8443"]
)
def test_loopback_origins_pass(origin: str | None) -> None:
    check_origin(origin)


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "http://evil.example:8080",
        "null",
        "file://",
        "http://localhost.evil.example",
        "http://user@127.0.0.1",
        "http://127.0.0.1/path",
        "chrome-extension://abcdef",
    ],
)
def test_other_origins_are_refused(origin: str) -> None:
    with pytest.raises(ServeError) as refused:
        check_origin(origin)
    assert (refused.value.status, refused.value.code) == (403, "origin_not_allowed")


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON"]
)
def test_json_passes(content_type: str) -> None:
    check_json(content_type)


@pytest.mark.parametrize(
    "content_type",
    [
        None,
        "text/plain",
        "text/plain;charset=UTF-8",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonp",
        "",
    ],
)
def test_other_bodies_are_refused(content_type: str | None) -> None:
    with pytest.raises(ServeError) as refused:
        check_json(content_type)
    assert (refused.value.status, refused.value.code) == (415, "unsupported_media_type")


def test_a_long_header_is_cut_in_the_message() -> None:
    with pytest.raises(ServeError) as refused:
        check_host("a" * 10_000)
    assert len(refused.value.message) < 400


# -- the open server -----------------------------------------------------------------------


def test_a_cross_site_text_plain_post_runs_nothing(open_app: FastAPI, local: TestClient) -> None:
    # What a page on another site sends with fetch(url, {method: "POST", body: "..."}).
    response = post(local, "text/plain;charset=UTF-8", Origin="https://evil.example")
    refusal(response, 403, "origin_not_allowed")
    # The same without an Origin (a form, or a browser that leaves it out): still refused.
    for content_type in ("text/plain", "application/x-www-form-urlencoded", None):
        refusal(post(local, content_type), 415, "unsupported_media_type")
    assert model_requests(open_app) == 0


def test_a_foreign_host_is_refused_on_every_route(open_app: FastAPI) -> None:
    # DNS rebinding: the page's own name now points at 127.0.0.1; its Host stays its own.
    with TestClient(open_app, base_url="http://rebind.evil.example:8080") as client:
        refusal(post(client), 400, "host_not_allowed")
        refusal(client.get("/v1/models"), 400, "host_not_allowed")
        refusal(client.get("/healthz"), 400, "host_not_allowed")
    assert model_requests(open_app) == 0


def test_local_json_clients_are_served(open_app: FastAPI, local: TestClient) -> None:
    assert post(local).status_code == 200
    assert post(local, Origin="http://localhost:5173").status_code == 200
    assert local.get("/v1/models").status_code == 200
    with TestClient(open_app, base_url="http://[::1]:8080") as ipv6:
        assert post(ipv6, "application/json; charset=utf-8").status_code == 200
    assert model_requests(open_app) == 3


def test_with_a_token_the_token_guards(make_app: Callable[..., FastAPI]) -> None:
    # A page cannot send the token (Authorization needs a preflight no one grants), and
    # curl -d labels its JSON as form data: with a token, neither check is needed.
    with TestClient(make_app(), base_url="http://serve.internal:8080") as client:
        assert post(client, "application/x-www-form-urlencoded", **AUTH).status_code == 200
        assert post(client, "text/plain", Origin="https://evil.example").status_code == 401
