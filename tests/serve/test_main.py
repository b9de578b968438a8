"""``serve_main``: what it refuses before starting (the token rule, options, the file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from leanloop.serve import ServeSettings, ServeSetupError
from leanloop.serve.limits import is_loopback
from leanloop.serve.main import serve_main


@pytest.fixture(autouse=True)
def no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LEANLOOP_SERVE_TOKEN", raising=False)


def test_without_a_token_it_refuses_to_start(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert serve_main([str(agents_file)]) == 2
    assert "set LEANLOOP_SERVE_TOKEN" in capsys.readouterr().err


def test_no_auth_is_refused_off_loopback(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert serve_main([str(agents_file), "--host", "0.0.0.0", "--no-auth"]) == 2  # noqa: S104
    assert "--no-auth is refused on 0.0.0.0" in capsys.readouterr().err


def test_a_broken_agents_file_is_reported_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "agents.yaml"
    bad.write_text("version: 1\nagents:\n  a:\n    max_rounds: many\n")
    assert serve_main([str(bad), "--no-auth"]) == 2
    assert "agents.yaml:" in capsys.readouterr().err


def test_an_unknown_agent_option_is_reported(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert serve_main([str(agents_file), "--no-auth", "--agent", "nope"]) == 2
    assert "no agent named 'nope'" in capsys.readouterr().err


def test_bad_limits_and_options(agents_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert serve_main([str(agents_file), "--no-auth", "--max-concurrency", "0"]) == 2
    assert "--max-concurrency must be at least 1" in capsys.readouterr().err
    assert serve_main([str(agents_file), "--port", "http"]) == 2
    with pytest.raises(ServeSetupError):
        ServeSettings(deadline=0)


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),  # noqa: S104 - a host name to judge, nothing is bound
        ("::", False),
        ("example.org", False),
    ],
)
def test_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_leanloop_command_hands_serve_to_serve_main(
    agents_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from leanloop.cli import main  # noqa: PLC0415 - the command, as `leanloop serve` runs it

    assert main(["serve", str(agents_file)]) == 2
    assert "set LEANLOOP_SERVE_TOKEN" in capsys.readouterr().err


def test_the_command_lists_serve_in_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    from leanloop.cli import main  # noqa: PLC0415

    with pytest.raises(SystemExit) as ended:
        main(["--help"])
    assert ended.value.code == 0
    assert "serve the agents over the OpenAI chat API" in capsys.readouterr().out
