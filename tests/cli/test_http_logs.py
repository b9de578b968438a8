"""httpx's line per request to the model server is debugging detail (issue 39).

``leanloop run -v`` shows it (redacted: the URL's password hidden); without ``-v`` no
line of it reaches stderr, and the ``httpx`` logger's level is left as it was.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from leanloop.cli.command import main
from leanloop.testing.server import FakeModelServer, Reply

PASSWORD = "s3cret-pw"  # noqa: S105 - a test value that must never be shown


@pytest.fixture
def agents_file(tmp_path: Path) -> Iterator[Path]:
    with FakeModelServer(handler=lambda _: Reply(content="Paris."), model="m") as server:
        host = server.base_url.removeprefix("http://")
        url = f"http://alice:{PASSWORD}@{host}"
        model = (
            f'{{provider: openai-compatible, model: m, base_url: "{url}", context_window: 8192}}'
        )
        file = tmp_path / "agents.yaml"
        file.write_text(
            f"version: 1\nmodels:\n  main: {model}\nagents:\n  a: {{model: main}}\n",
            encoding="utf-8",
        )
        yield file


def test_run_shows_no_request_lines_without_verbose(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(agents_file), "Capital of France?"]) == 0

    err = capsys.readouterr().err
    assert "HTTP Request" not in err, err


def test_run_verbose_shows_each_request_redacted_and_restores_the_level(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = logging.getLogger("httpx").level

    assert main(["run", str(agents_file), "Capital of France?", "-v"]) == 0

    err = capsys.readouterr().err
    assert "HTTP Request: POST http://alice:***@" in err, err
    assert PASSWORD not in err
    assert logging.getLogger("httpx").level == before
