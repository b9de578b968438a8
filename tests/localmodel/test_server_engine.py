"""The engine a server runs on, and the prebuilt engine's process (with a fake wheel).

The process tests run the real child module, ``python -m leanloop.localmodel.prebuilt``,
with the fake xllamacpp first on PYTHONPATH: start, health, PID file, status and stop are
the ones ``leanloop local`` uses for the source build (features/localmodel).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import httpx
import pytest

from leanloop.exceptions import LocalModelError
from leanloop.localmodel.engine import ENGINE_ENV, record_engine
from leanloop.localmodel.paths import CachePaths
from leanloop.localmodel.pidfile import process_alive, read_record
from leanloop.localmodel.server import (
    TEMPLATE_FILE,
    ServerOptions,
    resolve_engine,
    server_command,
    server_status,
    start_server,
    stop_server,
)

PREBUILT = [sys.executable, "-m", "leanloop.localmodel.prebuilt"]


def _free_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_by_default_the_server_command_runs_the_prebuilt_engine(paths: CachePaths) -> None:
    command = server_command(ServerOptions(), paths)
    assert command[:3] == PREBUILT
    assert command[3:5] == ["-m", str(paths.model_file)]


def test_the_build_engine_runs_the_cache_binary_with_the_same_flags(paths: CachePaths) -> None:
    built = server_command(ServerOptions(engine="build"), paths)
    prebuilt = server_command(ServerOptions(engine="prebuilt"), paths)
    assert built[0] == str(paths.server_binary)
    assert built[1:] == prebuilt[3:]


def test_naming_a_binary_means_the_build(paths: CachePaths) -> None:
    options = ServerOptions(binary=Path("/opt/llama-server"))
    assert resolve_engine(options, paths) == "build"
    assert server_command(options, paths)[0] == "/opt/llama-server"


def test_the_recorded_engine_and_the_environment_choose(
    paths: CachePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    record_engine(paths, "build")
    assert resolve_engine(ServerOptions(), paths) == "build"
    monkeypatch.setenv(ENGINE_ENV, "prebuilt")
    assert resolve_engine(ServerOptions(), paths) == "prebuilt"


def test_an_unknown_engine_option_is_refused() -> None:
    with pytest.raises(LocalModelError, match="unknown engine 'gpu'"):
        ServerOptions(engine="gpu")  # type: ignore[arg-type]


def test_a_missing_build_binary_asks_for_setup_build(paths: CachePaths) -> None:
    with pytest.raises(LocalModelError, match=r"run `leanloop local setup --build` first"):
        start_server(ServerOptions(engine="build", port=_free_port()), paths=paths)


def test_without_the_wheel_start_offers_the_build(
    paths: CachePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leanloop.localmodel import server as server_module  # noqa: PLC0415

    monkeypatch.setattr(server_module, "prebuilt_installed", lambda: False)
    with pytest.raises(LocalModelError) as caught:
        start_server(ServerOptions(port=_free_port()), paths=paths)
    assert "xllamacpp wheel is not installed" in str(caught.value)
    assert "`leanloop local setup --build`" in str(caught.value)


def _model(paths: CachePaths) -> None:
    paths.models_dir.mkdir(parents=True)
    paths.model_file.write_bytes(b"GGUF fake")


@pytest.mark.usefixtures("fake_xllamacpp")
def test_the_prebuilt_engine_starts_records_reports_and_stops(paths: CachePaths) -> None:
    _model(paths)
    port = _free_port()
    record = start_server(ServerOptions(port=port, ctx_size=3072), paths=paths)
    try:
        assert httpx.get(f"{record.base_url}/health", timeout=5).status_code == 200
        saved = read_record(paths.pid_file(port))
        assert saved is not None and saved.pid == record.pid
        assert saved.engine is not None and saved.engine.startswith("prebuilt (xllamacpp ")
        assert saved.model == str(paths.model_file)
        status = server_status(port, paths=paths)
        assert status.running and status.n_ctx == 3072
        assert f"engine: {saved.engine}" in status.lines()
        log = Path(record.log).read_text(encoding="utf-8")
        line = next(x for x in log.splitlines() if x.startswith("fake xllamacpp params "))
        params = json.loads(line.removeprefix("fake xllamacpp params "))
        assert params["chat_template"] == TEMPLATE_FILE.read_text(encoding="utf-8")
        assert params["model_alias"] == ["local-test"]
        assert (params["n_parallel"], params["ui"], params["offline"]) == (1, False, True)
        assert f"prebuilt llama.cpp server listening on http://127.0.0.1:{port}" in log
    finally:
        stopped = stop_server(port, paths=paths, grace=5.0)
    assert stopped is not None and not process_alive(record.pid)
    assert not paths.pid_file(port).exists()


@pytest.mark.usefixtures("fake_xllamacpp")
def test_a_prebuilt_engine_that_fails_to_load_names_its_log(
    paths: CachePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    _model(paths)
    monkeypatch.setenv("FAKE_XLLAMACPP_MODE", "fail")
    port = _free_port()
    with pytest.raises(LocalModelError) as caught:
        start_server(ServerOptions(port=port), paths=paths)
    message = str(caught.value)
    assert message.startswith("llama-server exited while starting (exit 1): error: Failed to init")
    assert str(paths.log_file(port)) in message
    assert not paths.pid_file(port).exists()
