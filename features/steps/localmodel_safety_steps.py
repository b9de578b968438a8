"""Steps for features/localmodel/localmodel_safety.feature (the fakes of localmodel.feature).

Commands that could signal the wrong process on a broken build (a PID file naming pid 0
used to reach the caller's whole process group) run in a separate process in a session
of its own, so a failure there can never take the test run with it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from behave import given, then, when
from behave.runner import Context
from support.env import set_env

import leanloop.localmodel.model as model_module
from leanloop.exceptions import LocalModelError
from leanloop.localmodel.paths import CachePaths
from leanloop.localmodel.pidfile import process_alive, read_record
from leanloop.localmodel.server import ServerOptions, server_status, start_server, stop_server

# ── helpers (the same cache folder as features/steps/localmodel_steps.py) ────────────


def _paths(context: Context) -> CachePaths:
    if not hasattr(context, "paths"):
        context.paths = CachePaths(context.tmp / "cache")
    return context.paths


def _free_port() -> int:
    import socket  # noqa: PLC0415

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def process_identity(pid: int) -> tuple[int, str] | None:
    """The start time (``/proc/<pid>/stat`` field 22) and executable of ``pid``.

    Read here rather than through leanloop, so the scenarios check what the system says.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
        executable = os.readlink(f"/proc/{pid}/exe")
        return int(stat[stat.rindex(")") + 2 :].split()[19]), executable
    except (OSError, ValueError, IndexError):
        return None


def _spawn_cli(context: Context, args: list[str], *, module: bool = True) -> subprocess.Popen[str]:
    # Its own session: whatever a broken build signals stays inside the child's group.
    return subprocess.Popen(
        [sys.executable, *(["-m", "leanloop"] if module else []), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "LEANLOOP_CACHE": str(_paths(context).root)},
    )


def _finish(proc: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return proc.returncode, out, err


def _fake_servers_on(context: Context, port: int) -> set[int]:
    """The live fake llama-servers started from the cache's binary with ``--port port``."""
    binary = str(_paths(context).server_binary).encode()
    found = set()
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError, ValueError):
            args = cmdline.read_bytes().split(b"\0")
            pid = int(cmdline.parent.name)
            if binary in args and str(port).encode() in args and process_alive(pid):
                found.add(pid)
    return found


def _kill_leftovers(context: Context, port: int) -> None:
    with contextlib.suppress(LocalModelError):
        stop_server(port, paths=_paths(context), grace=1.0)
    for pid in _fake_servers_on(context, port):  # orphans a broken build left behind
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _other_program(context: Context, port: int) -> subprocess.Popen[bytes]:
    """A program that is not a llama-server but was started with ``--port port``."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)", "--port", str(port)],
        start_new_session=True,
    )

    def cleanup() -> None:
        proc.kill()
        proc.wait()

    context.cleanups.append(cleanup)
    context.other = proc
    deadline = time.monotonic() + 10
    while process_identity(proc.pid) is None and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc


def _write_raw_record(context: Context, data: dict[str, object]) -> None:
    pid_file = _paths(context).pid_file(context.port)
    pid_file.parent.mkdir(parents=True, exist_ok=True)
    pid_file.write_text(json.dumps(data), encoding="utf-8")


def _raw_record(context: Context, pid: int) -> dict[str, object]:
    return {
        "pid": pid,
        "port": context.port,
        "ctx_size": 4096,
        "model": str(_paths(context).model_file),
        "log": str(_paths(context).log_file(context.port)),
        "started": time.time(),
    }


# ── concurrent starts ────────────────────────────────────────────────────────────────


SYNCHRONISED_CLI = """
import sys, time
import leanloop.cli.local, leanloop.localmodel.server
from leanloop.cli import main
go = float(sys.argv[1])
while time.time() < go:
    time.sleep(0.0005)
sys.exit(main(sys.argv[2:]))
"""


@when(
    '{count:d} separate processes run the local command "{text}" at once, '
    "on each of {rounds:d} free ports in turn"
)
def step_concurrent_cli(context: Context, count: int, text: str, rounds: int) -> None:
    # Each process loads leanloop first and then waits for the same moment, so the
    # commands really do run at once (not one by one as each finishes importing). A race
    # is a matter of luck, so it is run on a few ports.
    context.rounds = []
    for _ in range(rounds):
        port = _free_port()
        context.cleanups.append(lambda port=port: _kill_leftovers(context, port))
        go = str(time.time() + 1.0 + 0.3 * count)
        argv = ["-c", SYNCHRONISED_CLI, go, "local", *text.split(), "--port", str(port)]
        procs = [_spawn_cli(context, argv, module=False) for _ in range(count)]
        context.rounds.append((port, [_finish(proc) for proc in procs]))


@then("on each port exactly one of the separate local commands exits 0")
def step_one_ok(context: Context) -> None:
    for port, results in context.rounds:
        codes = [code for code, _, _ in results]
        assert codes.count(0) == 1, (port, results)


@then('the other separate local commands exit 1 with one error line "{text}"')
def step_others_refused(context: Context, text: str) -> None:
    for _, results in context.rounds:
        for code, out, err in results:
            if code == 0:
                continue
            lines = err.strip().splitlines()
            assert code == 1, (code, out, err)
            assert len(lines) == 1 and text in lines[0], err
            assert "Traceback" not in err, err


@then("on each port every fake llama server is the one its PID file names")
def step_no_orphan(context: Context) -> None:
    for port, results in context.rounds:
        record = read_record(_paths(context).pid_file(port))
        assert record is not None, (port, "no PID file", results)
        assert process_alive(record.pid), record
        # A refused start may still be reaping a server it stopped: give it a moment.
        deadline = time.monotonic() + 10
        while (found := _fake_servers_on(context, port)) != {record.pid}:
            if time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert found == {record.pid}, (port, found, record.pid, results)


@then("no partial PID file is left")
def step_no_partial_pid(context: Context) -> None:
    run_dir = _paths(context).run_dir
    leftovers = [p.name for p in run_dir.iterdir() if p.name.endswith(".partial")]
    assert leftovers == [], leftovers


LOCK_HOLDER = """
import fcntl, sys, time
handle = open(sys.argv[1], "a")
fcntl.flock(handle, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


@given("another process holds the lock of that port")
def step_lock_held(context: Context) -> None:
    lock = _paths(context).run_dir / f"{context.port}.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", LOCK_HOLDER, str(lock)], stdout=subprocess.PIPE, text=True
    )

    def cleanup() -> None:
        holder.kill()
        holder.wait()

    context.cleanups.append(cleanup)
    assert holder.stdout is not None
    assert holder.stdout.readline().strip() == "locked"


@when("the local server status is asked within {seconds:d} seconds")
def step_status_quick(context: Context, seconds: int) -> None:
    started = time.monotonic()
    context.status = server_status(context.port, paths=_paths(context))
    took = time.monotonic() - started
    assert took < seconds, f"status took {took:.1f} s"


# ── the identity of the recorded process ─────────────────────────────────────────────


@then("the local server PID file records the start time and executable of the server")
def step_record_identity(context: Context) -> None:
    assert context.error is None, context.error
    data = json.loads(_paths(context).pid_file(context.port).read_text(encoding="utf-8"))
    identity = process_identity(context.record.pid)
    assert identity is not None
    assert (data.get("start_time"), data.get("executable")) == identity, (data, identity)
    assert Path(str(data["executable"])).is_absolute(), data


@given("the server exited and its PID now belongs to another program started with that --port")
def step_pid_reused(context: Context) -> None:
    pid_file = _paths(context).pid_file(context.port)
    data = json.loads(pid_file.read_text(encoding="utf-8"))
    # The server goes away behind leanloop's back; its PID file stays.
    os.killpg(context.record.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while process_alive(context.record.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    # The kernel cannot be made to hand the same PID out again, so the file is pointed
    # at the new program, as if it had got the PID: everything else stays as recorded.
    other = _other_program(context, context.port)
    data["pid"] = other.pid
    pid_file.write_text(json.dumps(data), encoding="utf-8")


@given(
    "a local server PID file on a free port naming another program with the right start "
    "time but another executable"
)
def step_pid_other_exe(context: Context) -> None:
    context.port = _free_port()
    other = _other_program(context, context.port)
    identity = process_identity(other.pid)
    assert identity is not None
    data = _raw_record(context, other.pid)
    data["start_time"] = identity[0]
    data["executable"] = str(_paths(context).server_binary)
    _write_raw_record(context, data)


@then("the other program still runs")
def step_other_runs(context: Context) -> None:
    assert context.other.poll() is None, context.other.returncode


@given("a local server PID file on a free port naming pid {pid:d}")
def step_pid_named(context: Context, pid: int) -> None:
    context.port = _free_port()
    _write_raw_record(context, _raw_record(context, pid))


@when('a separate process runs the local command "{text}" on that port')
def step_separate_cli(context: Context, text: str) -> None:
    proc = _spawn_cli(context, ["local", *text.split(), "--port", str(context.port)])
    context.exit_code, context.stdout, context.stderr = _finish(proc)


# ── --ctx-size ───────────────────────────────────────────────────────────────────────


@then(
    "local server options for a model file outside the catalog with ctx size {size:d} "
    'are refused with "{text}"'
)
def step_bad_ctx_custom(context: Context, size: int, text: str) -> None:
    try:
        ServerOptions(ctx_size=size, model=context.tmp / "custom.gguf")
    except LocalModelError as exc:
        assert text in str(exc) and "\n" not in str(exc), str(exc)
    else:
        raise AssertionError("the options were accepted")


# ── a binary that cannot run ─────────────────────────────────────────────────────────


@given("the llama server binary lost its execute permission")
def step_binary_not_executable(context: Context) -> None:
    _paths(context).server_binary.chmod(0o644)


@given("the llama server binary is an executable file in no known format")
def step_binary_garbage(context: Context) -> None:
    binary = _paths(context).server_binary
    binary.write_bytes(b"\x00\x01\x02 not a program\n")
    binary.chmod(0o755)


# ── a damaged model file ─────────────────────────────────────────────────────────────


@given("the local model file lost its last byte")
def step_model_truncated(context: Context) -> None:
    model = _paths(context).model_file
    with model.open("r+b") as handle:
        handle.truncate(model.stat().st_size - 1)


@given('a small local model file "{name}" with a setup stamp')
def step_small_model(context: Context, name: str) -> None:
    model = _paths(context).models_dir / name
    model.parent.mkdir(parents=True, exist_ok=True)
    data = b"GGUF small fake model " * 100
    model.write_bytes(data)
    stat = model.stat()
    digest = hashlib.sha256(data).hexdigest()
    model.with_name(name + ".verified").write_text(
        f"{digest} {stat.st_size} {stat.st_mtime_ns}\n", encoding="utf-8"
    )
    context.small_model = model
    context.hashes = 0
    original = model_module._sha256

    def counting(path: Path) -> str:
        context.hashes += 1
        return original(path)

    model_module._sha256 = counting

    def restore() -> None:
        model_module._sha256 = original

    context.cleanups.append(restore)
    set_env("LEANLOOP_CACHE", str(_paths(context).root), on_cleanup=context.cleanups.append)


@when("the local server is started with that model file")
def step_start_small(context: Context) -> None:
    paths = _paths(context)
    port = context.port = _free_port()
    context.hashes = 0
    context.error = None
    try:
        options = ServerOptions(port=port, ctx_size=2048, model=context.small_model)
        context.record = start_server(options, paths=paths)
    except LocalModelError as exc:
        context.error = exc
    context.cleanups.append(lambda: stop_server(port, paths=paths, grace=1.0))


@then("the model file was hashed {count:d} times")
def step_hashed(context: Context, count: int) -> None:
    assert context.hashes == count, context.hashes


@when("the model file is touched without changing its bytes")
def step_touch_model(context: Context) -> None:
    stat = context.small_model.stat()
    os.utime(context.small_model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 5_000_000_000))


@then("the model file's stamp records its new time")
def step_stamp_fresh(context: Context) -> None:
    model = context.small_model
    stamp = model.with_name(model.name + ".verified").read_text(encoding="utf-8").split()
    assert int(stamp[2]) == model.stat().st_mtime_ns, stamp


@when("one byte of the model file is changed in place")
def step_change_byte(context: Context) -> None:
    with context.small_model.open("r+b") as handle:
        handle.seek(10)
        handle.write(b"X")
    stat = context.small_model.stat()
    os.utime(context.small_model, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000_000))
