"""What ``leanloop serve`` refuses before it listens, and its exit status for each (N13, N14).

Every test runs against a port another socket holds, so a value wrongly accepted ends in
a refused bind rather than a server that runs on: bad values are exit 2 in one line,
before any bind is tried; a taken port is exit 1 in one line.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from leanloop.serve import ServeSettings, ServeSetupError
from leanloop.serve.main import serve_main

SECRET_BITS = "s3cret-Zq9"  # noqa: S105 - a test token


@pytest.fixture(autouse=True)
def no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LEANLOOP_SERVE_TOKEN", raising=False)


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A loopback port another socket listens on for the test."""
    with socket.create_server(("127.0.0.1", 0)) as holder:
        yield int(holder.getsockname()[1])


def one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--grace", "-5", "--grace must be a number of seconds at least 0 (got -5.0)"),
        ("--grace", "nan", "--grace must be a number of seconds at least 0 (got nan)"),
        ("--grace", "inf", "--grace must be a number of seconds at least 0 (got inf)"),
        ("--body-timeout", "0", "--body-timeout must be a number of seconds more than 0"),
        ("--body-timeout", "nan", "--body-timeout must be a number of seconds more than 0"),
        ("--deadline", "inf", "--deadline must be a number of seconds more than 0"),
        ("--port", "70000", "--port must be 0 to 65535 (got 70000)"),
    ],
)
def test_bad_values_are_exit_2_in_one_line(
    agents_file: Path,
    taken_port: int,
    *,
    capsys: pytest.CaptureFixture[str],
    option: str,
    value: str,
    said: str,
) -> None:
    argv = [str(agents_file), "--no-auth", "--port", str(taken_port), option, value]
    assert serve_main(argv) == 2
    assert said in one_line(capsys)


def test_grace_zero_is_allowed(agents_file: Path, taken_port: int) -> None:
    # Accepted: the run gets as far as the bind, which the taken port refuses.
    assert (
        serve_main([str(agents_file), "--no-auth", "--port", str(taken_port), "--grace", "0"]) == 1
    )


def test_a_taken_port_is_exit_1_in_one_line(
    agents_file: Path, taken_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert serve_main([str(agents_file), "--no-auth", "--port", str(taken_port)]) == 1
    line = one_line(capsys)  # no banner: it says the server runs only once it can
    assert line.startswith(f"error: cannot listen on 127.0.0.1:{taken_port}: ")
    assert "another process has the port; stop it or choose another --port" in line


def test_the_help_gives_the_exit_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    assert serve_main(["--help"]) == 0
    assert "1 cannot listen (the port is taken)" in " ".join(capsys.readouterr().out.split())


@pytest.mark.parametrize(
    ("token", "said"),
    [
        (f" {SECRET_BITS}", "spaces or line breaks around it"),
        (f"{SECRET_BITS}\n", "spaces or line breaks around it"),
        (f"{SECRET_BITS}-pässword", "outside printable ASCII"),
        (f"{SECRET_BITS}\x07", "outside printable ASCII"),
    ],
)
def test_a_token_no_client_can_send_is_refused_unshown(
    agents_file: Path,
    taken_port: int,
    *,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    token: str,
    said: str,
) -> None:
    monkeypatch.setenv("LEANLOOP_SERVE_TOKEN", token)
    assert serve_main([str(agents_file), "--port", str(taken_port)]) == 2
    line = one_line(capsys)
    assert said in line
    assert SECRET_BITS not in line
    with pytest.raises(ServeSetupError):
        ServeSettings(token=token)


def test_a_token_with_inner_punctuation_is_fine() -> None:
    token = "a-b_c.d~e+f/g=h!"  # noqa: S105 - a test token
    assert ServeSettings(token=token).token == token
