"""The hint of a run whose model server is down names the port the file asks for (issue 39).

``leanloop local start`` serves on 8765 unless given ``--port``; a file on port 8112 was
told to run ``leanloop local start``, which then served where nothing asked.
"""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from leanloop.cli.command import main
from leanloop.localmodel import DEFAULT_PORT
from leanloop.loop.requests import _server_hint

_DOWN = httpx.ConnectError("All connection attempts failed")


@pytest.mark.parametrize(
    ("base_url", "command"),
    [
        ("http://127.0.0.1:8112/v1", "`leanloop local start --port 8112`"),
        ("http://localhost:9000/v1", "`leanloop local start --port 9000`"),
        ("http://user:pw@[::1]:8200/v1", "`leanloop local start --port 8200`"),
        (f"http://127.0.0.1:{DEFAULT_PORT}/v1", "`leanloop local start`"),
        ("http://127.0.0.1/v1", "`leanloop local start --port 80`"),
    ],
)
def test_the_hint_names_the_port_of_the_url(base_url: str, command: str) -> None:
    hint = _server_hint(base_url, _DOWN)

    assert hint.endswith(f"start it with {command}"), hint


def test_no_start_hint_for_another_host_or_an_answering_server() -> None:
    assert "local start" not in _server_hint("http://10.0.0.5:8112/v1", _DOWN)
    assert "local start" not in _server_hint("http://127.0.0.1:8112/v1", ValueError("bad"))


def _closed_port() -> int:
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        if port != DEFAULT_PORT:
            return port  # nothing listens there once the socket is closed


def test_run_against_a_stopped_server_says_how_to_start_one_on_its_port(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    port = _closed_port()
    model = (
        f'{{provider: openai-compatible, model: m, base_url: "http://127.0.0.1:{port}/v1", '
        "context_window: 4096, max_retries: 0}"
    )
    file = tmp_path / "agents.yaml"
    file.write_text(
        f"version: 1\nmodels:\n  main: {model}\nagents:\n  a: {{model: main}}\n", encoding="utf-8"
    )

    assert main(["run", str(file), "Hello?"]) == 1

    err = capsys.readouterr().err
    assert f"start it with `leanloop local start --port {port}`" in err, err
