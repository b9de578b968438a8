"""One redaction for every URL leanloop shows or logs (issue 38, N2).

The rules (:mod:`leanloop.redact`), then the places that show a model's URL which are
not the CLI's (features/cli/url_redaction.feature reads those): ``serve``'s error bodies,
streamed or not, and its log, httpx's request lines included.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from leanloop.redact import MASK, redact_logs, redact_report, redact_text, redact_url
from leanloop.serve import ServeSettings, create_app
from leanloop.serve.main import load_served_agents
from leanloop.sessions import redact_url as sessions_redact_url
from leanloop.testing.server import FakeModelServer, http_error

PASSWORD = "hunter2-pytest-pw"  # noqa: S105 - the secret the tests look for
QUERY_KEY = "qk-pytest-0123456789"
TOKEN = "redaction-test-token-0123"  # noqa: S105 - a test token
AUTH = {"Authorization": f"Bearer {TOKEN}"}


# --- the rules -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "http://alice:pw@127.0.0.1:9/v1?api_key=k&x=1#t",
            "http://alice:***@127.0.0.1:9/v1?api_key=***&x=***#***",
        ),
        ("https://u:p@h/v1?sig=abc;sv=2", "https://u:***@h/v1?sig=***;sv=***"),
        ("http://[::1]:8080/v1?TOKEN", "http://[::1]:8080/v1?***"),
        ("redis://:hunter2@cache:6379/0", "redis://:***@cache:6379/0"),
        ("http://u:p@ss@host/v1", "http://u:***@host/v1"),  # an unescaped '@' in it
        ("http://u:pa#ss@host/v1", "http://u:***@host/v1"),  # an unescaped '#' in it
        ("mysql://root@localhost/db", "mysql://root@localhost/db"),  # no password
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
        ("http://h/v1?", "http://h/v1?"),
        ("sessions.db", "sessions.db"),
        ("host=db password=xyz user=u", "host=db password=*** user=u"),
        ("", ""),
    ],
)
def test_redact_url_hides_the_password_every_query_value_and_the_fragment(
    url: str, shown: str
) -> None:
    assert redact_url(url) == shown


def test_the_session_store_shows_urls_through_the_same_redaction() -> None:
    assert sessions_redact_url is redact_url


def test_redact_text_finds_urls_inside_any_text_and_keeps_the_punctuation_around() -> None:
    text = (
        f"failed (server: http://alice:{PASSWORD}@h:9/v1?api_key={QUERY_KEY}). "
        f"URL('https://x:{PASSWORD}@h/p?token={QUERY_KEY}'), [ws://h/?k={QUERY_KEY}]"
    )

    shown = redact_text(text)

    assert shown == (
        "failed (server: http://alice:***@h:9/v1?api_key=***). "
        "URL('https://x:***@h/p?token=***'), [ws://h/?k=***]"
    )


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("api_key=sk-123 and password=p", "api_key=*** and password=***"),
        ("X-Api-Key=abc, Authorization=Bearer", "X-Api-Key=***, Authorization=***"),
        ("max_tokens=100 tokens=5 monkey=1", "max_tokens=100 tokens=5 monkey=1"),
    ],
)
def test_redact_text_hides_secret_pairs_outside_urls(text: str, shown: str) -> None:
    assert redact_text(text) == shown


def test_redact_report_touches_only_the_text_built_from_errors_and_servers() -> None:
    url = f"http://a:{PASSWORD}@h/v1?k={QUERY_KEY}"
    report = {
        "error": f"failed (server: {url})",
        "window_note": f"the server at {url} did not say its window",
        "events": [f"step 1: {url}", 3],
        "answer": f"see {url}",  # the model's answer is the user's data
        "question": url,
    }

    shown = redact_report(report)

    assert PASSWORD not in json.dumps({k: shown[k] for k in ("error", "window_note", "events")})
    assert shown["events"][1] == 3
    assert shown["answer"] == report["answer"]
    assert shown["question"] == url
    assert report["error"] == f"failed (server: {url})"  # a copy: the report is unchanged


def test_a_handler_given_to_redact_logs_redacts_messages_arguments_and_tracebacks() -> None:
    handler = _ListHandler()
    logger = logging.getLogger("leanloop.test_url_redaction")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        redact_logs(handler)
        redact_logs(handler)  # once is enough: no second filter
        url = f"http://alice:{PASSWORD}@h/v1?api_key={QUERY_KEY}"
        logger.warning("POST %s failed", url)
        try:
            raise ConnectionError(f"cannot reach {url}")
        except ConnectionError:
            logger.exception("the request failed")
    finally:
        logger.removeHandler(handler)

    assert handler.filters.count(handler.filters[0]) == 1
    assert handler.lines[0] == f"POST http://alice:{MASK}@h/v1?api_key={MASK} failed"
    _no_secret("\n".join(handler.lines))
    assert "ConnectionError: cannot reach http://alice:***@h/v1?api_key=***" in handler.lines[1]


# --- serve: the bodies its clients read and its log --------------------------------------


@pytest.fixture
def secret_server(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """An agents file whose model URL holds a password and a query key, and its server.

    The server answers every chat request with an error (the query also spoils the
    request's path): the run fails, and its error names the server.
    """
    with FakeModelServer(replies=[http_error(500, "the model is down")] * 20) as server:
        host = server.base_url.removeprefix("http://").removesuffix("/v1")
        url = f"http://alice:{PASSWORD}@{host}/v1?api_key={QUERY_KEY}"
        file = tmp_path / "agents.yaml"
        model = f'{{provider: openai-compatible, model: m, base_url: "{url}"}}'
        file.write_text(
            f"version: 1\nmodels:\n  main: {model}\nagents:\n  a: {{model: main, max_rounds: 2}}\n",
            encoding="utf-8",
        )
        yield file, f"http://alice:***@{host}/v1?api_key=***"


@pytest.mark.parametrize("stream", [False, True])
def test_serve_answers_and_logs_a_failed_model_without_the_url_secrets(
    secret_server: tuple[Path, str], caplog: pytest.LogCaptureFixture, *, stream: bool
) -> None:
    file, shown = secret_server
    app = create_app(load_served_agents(str(file)), ServeSettings(token=TOKEN))
    body = {"model": "a", "messages": [{"role": "user", "content": "Hi."}], "stream": stream}

    with caplog.at_level(logging.INFO), TestClient(app) as client:
        response = client.post("/v1/chat/completions", headers=AUTH, json=body)

    if not stream:
        assert response.status_code == 502
    _no_secret(response.text)
    assert shown in response.text  # the body still says which server failed
    logged = "\n".join(record.getMessage() for record in caplog.records)
    _no_secret(logged)
    assert "HTTP Request: POST http://alice:***@" in logged  # httpx's own line, redacted


class _ListHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def _no_secret(text: str) -> None:
    for secret in (PASSWORD, QUERY_KEY):
        assert secret not in text, f"{secret!r} shown in:\n{text}"
