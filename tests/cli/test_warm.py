"""The warm runner (``leanloop warm``, ADR 0031): the wire, the stamp, and real runs.

The real-runner group starts one runner (a background process in a private runtime
folder) and a :class:`FakeModelServer`, and checks that a run handed to the runner is the
run the command makes: its output and exit status, the caller's folder and environment,
Ctrl-C, Ctrl-Z and a killed caller (its MCP servers too). The last groups test the
runner's and the client's pieces in this process. Side by side with cold runs, a session
across both, ``--resume`` and a stale runner: ``robot/warm.robot``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from leanloop.cli import warm, warm_server
from leanloop.testing.server import FakeModelServer, Reply

# ---- the wire --------------------------------------------------------------------------


def test_a_message_and_descriptors_cross_the_socket() -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    read_end, write_end = os.pipe()
    with left, right:
        warm.send(left, {"argv": ["run", "ä"], "env": {"K": "v" * 70_000}}, fds=(write_end,))
        message, fds = warm.receive(right, max_fds=3)
        assert message == {"argv": ["run", "ä"], "env": {"K": "v" * 70_000}}
        assert len(fds) == 1
        os.write(fds[0], b"through the passed descriptor")
        assert os.read(read_end, 100) == b"through the passed descriptor"
        left.close()
        assert warm.receive(right) == (None, [])
    for fd in (read_end, write_end, *fds):
        os.close(fd)


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b"\x00\x00\x00\x05{", "closed mid-message"),
        (b"\x00\x00\x00\x03abc", "not JSON"),
        (b"\x00\x00\x00\x02[]", "not a JSON object"),
        (b"\x7f\xff\xff\xff", "bytes"),
    ],
)
def test_a_broken_message_is_a_wire_error(raw: bytes, problem: str) -> None:
    left, right = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    with left, right:
        left.sendall(raw)
        left.close()
        with pytest.raises(warm.WireError, match=problem):
            warm.receive(right)


# ---- where and which runner ----------------------------------------------------------------


def test_one_socket_per_environment_in_the_private_runtime_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    here = warm.socket_path()
    assert here.parent == tmp_path / "leanloop"
    assert not here.parent.exists()  # looking for a runner creates nothing
    assert warm.runtime_dir(create=True).stat().st_mode & 0o777 == 0o700
    assert len(str(warm.socket_path(prefix="/" + "v" * 300))) < 108
    assert warm.socket_path(prefix="/another/venv") != here
    assert warm.socket_path(executable="/usr/bin/python3.12") != here


def test_the_stamp_follows_every_file_of_the_package(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    module = tmp_path / "sub" / "module.py"
    module.write_text("x = 1\n")
    first = warm.code_stamp(tmp_path)
    assert warm.code_stamp(tmp_path) == first
    os.utime(module, ns=(1, 1))
    touched = warm.code_stamp(tmp_path)
    assert touched != first
    (tmp_path / "new.py").write_text("")
    assert warm.code_stamp(tmp_path) != touched
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "module.cpython-311.pyc").write_bytes(b"")
    assert warm.code_stamp(tmp_path) == warm.code_stamp(tmp_path)


@pytest.mark.parametrize(
    ("words", "mode"),
    [(["validate", "a.yaml"], ""), (["chat", "a.yaml"], "1"), (["run", "a.yaml", "q"], "0")],
)
def test_what_never_goes_to_a_runner(
    words: list[str], mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(warm.WARM_ENV, mode)
    monkeypatch.setattr(warm, "socket_path", _must_not_be_called)
    assert warm.run_warm(words) is None


def _must_not_be_called(*_args: object) -> Path:
    raise AssertionError("looked for a runner")


def test_without_a_runner_the_run_is_cold_and_warm_1_starts_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    spawned: list[Path] = []
    monkeypatch.setattr(warm, "_spawn", lambda path, idle: spawned.append(path))
    monkeypatch.delenv(warm.WARM_ENV, raising=False)
    assert warm.run_warm(["run", "a.yaml", "q"]) is None
    assert spawned == []
    monkeypatch.setenv(warm.WARM_ENV, "1")
    assert warm.run_warm(["run", "a.yaml", "q"]) is None
    assert spawned == [warm.socket_path()]


# ---- a real runner ---------------------------------------------------------------------


class Shell:
    """``python -m leanloop`` in a child process, with one runtime folder for its runners."""

    def __init__(self, runtime: Path, folder: Path) -> None:
        self.env = {k: v for k, v in os.environ.items() if k != warm.WARM_ENV}
        self.env["XDG_RUNTIME_DIR"] = str(runtime)
        self.folder = folder

    def __call__(self, *words: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "leanloop", *words],
            check=False,
            cwd=self.folder,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=120,
        )

    def popen(self, *words: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "leanloop", *words],
            cwd=self.folder,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def status(self) -> str:
        return self("warm", "status").stdout


@pytest.fixture(scope="module")
def model() -> Iterator[FakeModelServer]:
    with FakeModelServer(
        replies=[Reply(content="blue")], when_empty="repeat", n_ctx=8192
    ) as server:
        yield server


@pytest.fixture(scope="module")
def shell(tmp_path_factory: pytest.TempPathFactory, model: FakeModelServer) -> Iterator[Shell]:
    runtime = tmp_path_factory.mktemp("runtime")
    folder = tmp_path_factory.mktemp("work")
    (folder / "agents.yaml").write_text(
        "version: 1\nagents:\n  sky:\n    model:\n      provider: openai-compatible\n"
        "      base_url: ${SKY_URL}\n      model: fake\n      context_window: 8192\n",
        encoding="utf-8",
    )
    sh = Shell(runtime, folder)
    sh.env["SKY_URL"] = model.base_url
    started = sh("warm", "start")
    assert started.returncode == 0, started.stderr
    yield sh
    sh("warm", "stop")


@pytest.fixture
def fresh(model: FakeModelServer) -> Iterator[FakeModelServer]:
    model.reset()
    model.queue(Reply(content="blue"))
    yield model
    model.reset()
    model.queue(Reply(content="blue"))


def test_a_warm_run_prints_and_exits_as_the_command_does(
    shell: Shell, fresh: FakeModelServer
) -> None:
    # The same output as a cold run's, byte for byte apart from the clock: robot/warm.robot
    # runs both side by side; here the warm one alone, against what the command prints.
    warm_run = shell("run", "agents.yaml", "Which colour is the sky?")
    assert (warm_run.returncode, warm_run.stdout) == (0, "blue\n")
    assert "step 1 · " in warm_run.stderr and "window 8,192 (config)" in warm_run.stderr
    assert warm_run.stderr.splitlines()[-1].startswith(
        "stop: answer · 1 step · 0 tool calls · 1 request · "
    )
    assert ", 1 run," in shell.status()


def test_the_run_takes_the_callers_environment_folder_and_flags(
    shell: Shell, fresh: FakeModelServer, tmp_path: Path
) -> None:
    page = tmp_path / "run.html"
    done = shell("run", "agents.yaml", "Which colour?", "--json", "--html", str(page), "-q")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "blue"
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    elsewhere = shell("run", "agents.yaml", "Which colour?", SKY_URL="http://127.0.0.1:9/v1")
    assert elsewhere.returncode == 1
    assert "127.0.0.1:9" in elsewhere.stderr


def test_bad_input_gets_the_commands_status_and_line(shell: Shell) -> None:
    warm_run = shell("run", "agents.yaml")
    assert warm_run.returncode == 2
    assert warm_run.stderr == ("error: the question is missing (only --resume may leave it out)\n")


def _wait(condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:g} s")
        time.sleep(0.05)  # real processes


def test_ctrl_c_reaches_the_run(shell: Shell, fresh: FakeModelServer) -> None:
    fresh.reset()
    fresh.queue(Reply(fault="hang"))
    process = shell.popen("run", "agents.yaml", "Which colour?")
    _wait(lambda: bool(fresh.chat_bodies()), "the request")
    process.send_signal(signal.SIGINT)
    _out, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "interrupted" in err
    assert "Traceback" not in err
    _wait(lambda: "0 running" in shell.status(), "the run's end")


def _state(pid: int) -> str:
    # /proc/PID/stat: "pid (comm) S ..."; the state letter follows the command's ")".
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def test_ctrl_z_stops_the_run_with_the_caller_and_fg_resumes_both(
    shell: Shell, fresh: FakeModelServer
) -> None:
    fresh.reset()
    fresh.queue(Reply(content="blue", delay=2.0))  # real time: real processes, stopped midway
    process = shell.popen("run", "agents.yaml", "Which colour?")
    _wait(lambda: bool(fresh.chat_bodies()), "the request")
    child = _child_of_runner(shell)
    process.send_signal(signal.SIGTSTP)
    _wait(lambda: _state(process.pid) == "T" and _state(child) == "T", "both stopped")
    process.send_signal(signal.SIGCONT)
    out, _err = process.communicate(timeout=60)
    assert (process.returncode, out) == (0, "blue\n")


def _child_of_runner(shell: Shell) -> int:
    runner = int(shell.status().split("pid ", 1)[1].split(",", 1)[0])
    children = Path(f"/proc/{runner}/task/{runner}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def test_a_killed_caller_ends_its_run(shell: Shell, fresh: FakeModelServer) -> None:
    fresh.reset()
    fresh.queue(Reply(fault="hang"))
    process = shell.popen("run", "agents.yaml", "Which colour?")
    _wait(lambda: bool(fresh.chat_bodies()), "the request")
    assert "1 running" in shell.status()
    process.kill()
    process.communicate(timeout=60)
    _wait(lambda: "0 running" in shell.status(), "the orphaned run's end")


def _processes_running(script: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if str(script).encode() in command:
                found.append(int(entry.name))
    return found


def test_a_killed_caller_leaves_no_mcp_server_of_its_run(
    shell: Shell, fresh: FakeModelServer, tmp_path: Path, mcp_probe_server: Path
) -> None:
    # The MCP promise (one session per run, stopped with the run) through the runner: the
    # caller dies mid-call, its run ends as on SIGTERM, and the server of the call goes.
    log, marker = tmp_path / "started.log", tmp_path / "waiting"
    agents = tmp_path / "mcp.yaml"
    agents.write_text(
        "version: 1\nmcp_servers:\n"
        f"  probe: {{command: {sys.executable}, args: [{mcp_probe_server}, {log}]}}\n"
        "agents:\n  sky:\n    model:\n      provider: openai-compatible\n"
        "      base_url: ${SKY_URL}\n      model: fake\n      context_window: 8192\n"
        '    tools: ["mcp:probe/wait_here"]\n',
        encoding="utf-8",
    )
    fresh.reset()
    fresh.queue(Reply(tool_calls=[{"name": "wait_here", "arguments": {}}]), Reply(content="done"))
    process = shell.popen("run", str(agents), "Wait here.")
    _wait(marker.exists, "the MCP call")
    assert "1 running" in shell.status()
    process.kill()
    process.communicate(timeout=60)
    _wait(lambda: "0 running" in shell.status(), "the orphaned run's end")
    _wait(lambda: not _processes_running(mcp_probe_server), "the MCP servers' end", seconds=30)


# ---- the runner's pieces, in this process ----------------------------------------------


def test_a_runner_takes_the_place_of_a_dead_ones_socket_but_not_a_live_ones(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runtime" / "warm.sock"
    path.parent.mkdir()
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(path))
    dead.close()  # its file stays: the runner that made it died without cleaning up
    first = warm_server._Runner(path, "stamp", idle=60)
    assert first._bind()  # connecting fails, so the file is taken over
    second = warm_server._Runner(path, "stamp", idle=60)
    assert not second._bind()  # the first one answers
    assert path.stat().st_mode & 0o777 == 0o600
    first._stop_listening()
    assert not path.exists()
    for runner in (first, second):
        runner.listener.close()
        runner.wake_read.close()
        runner.wake_write.close()


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (3, 3), ("bye", 1)])
def test_a_run_that_raises_systemexit_exits_with_its_status(
    code: object, status: int, capsys: pytest.CaptureFixture[str]
) -> None:
    assert warm_server._exit_code(SystemExit(code)) == status
    assert capsys.readouterr().err == ("bye\n" if code == "bye" else "")


def _listening(tmp_path: Path) -> warm_server._Runner:
    runner = warm_server._Runner(tmp_path / "warm.sock", "the-stamp", idle=60)
    assert runner._bind()
    return runner


def _closed(runner: warm_server._Runner) -> None:
    runner._stop_listening()
    runner.wake_read.close()
    runner.wake_write.close()


def test_a_runner_answers_status_and_refuses_other_code_in_process(tmp_path: Path) -> None:
    runner = _listening(tmp_path)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(runner.path))
            warm.send(client, {"status": True})
            runner._accept()
            status, _ = warm.receive(client)
        assert status == {"pid": os.getpid(), "stamp": "the-stamp", "runs": 0, "running": 0,
                          "idle": 60}  # fmt: skip
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.connect(str(runner.path))
            warm.send(client, {"stamp": "other code", "argv": ["run"]})
            runner._accept()
            assert warm.receive(client) == ({"stale": True}, [])
        assert not runner.listening
        assert not runner.path.exists()  # no new caller finds it
    finally:
        _closed(runner)


def _ended(pid: int) -> bool:
    """Whether child ``pid`` has ended (left to be reaped: WNOWAIT)."""
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None


def test_a_reaped_child_reports_its_status_to_its_caller(tmp_path: Path) -> None:
    runner = _listening(tmp_path)
    try:
        for exit_how, said in ((lambda: os._exit(7), 7), (lambda: os.kill(os.getpid(), 9), 137)):
            ours, callers = socket.socketpair()
            pid = os.fork()
            if pid == 0:  # the child ends at once, as a run would
                exit_how()
            runner.children[pid] = ours
            _wait(partial(_ended, pid), "the child's end")
            runner._reap()
            assert warm.receive(callers) == ({"exit": said}, [])
            assert pid not in runner.children
            callers.close()
    finally:
        _closed(runner)


class _FakeRunner:
    """A runner on a thread of this process: it takes one request and answers ``replies``."""

    def __init__(self, path: Path, replies: list[dict[str, Any]]) -> None:
        self.path = path
        self.replies = replies
        self.request: dict[str, Any] = {}
        self.fds: list[int] = []
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # a caller checks it
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(path))
        self.listener.listen(1)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn:
            request, self.fds = warm.receive(conn, max_fds=3)
            if request is not None and request.get("hello"):  # the greeting comes first
                warm.send(conn, {"hello": os.getpid()})
                request, self.fds = warm.receive(conn, max_fds=3)
            self.request = request or {}
            for reply in self.replies:
                warm.send(conn, reply)
        self.listener.close()

    def close(self) -> None:
        self.thread.join(10)
        for fd in self.fds:
            os.close(fd)


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.delenv(warm.WARM_ENV, raising=False)
    return tmp_path


def test_the_caller_hands_over_its_run_and_returns_the_childs_status(runtime: Path) -> None:
    fake = _FakeRunner(warm.socket_path(), [{"pid": 999_999_999}, {"exit": 5}])
    try:
        assert warm.run_warm(["run", "agents.yaml", "q?"]) == 5
    finally:
        fake.close()
    assert fake.request["argv"] == ["run", "agents.yaml", "q?"]
    assert fake.request["cwd"] == os.getcwd()
    assert fake.request["env"]["XDG_RUNTIME_DIR"] == str(runtime)
    assert fake.request["stamp"] == warm.code_stamp()
    assert len(fake.fds) == 3  # stdin, stdout, stderr


def test_a_runner_gone_mid_run_is_a_failed_run_never_a_second_one(
    runtime: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake = _FakeRunner(warm.socket_path(), [{"pid": 999_999_999}])
    try:
        assert warm.run_warm(["run", "agents.yaml", "q?"]) == 1
    finally:
        fake.close()
    assert "the warm runner stopped during the run" in capsys.readouterr().err


def test_a_stale_runner_sends_the_run_cold_and_warm_1_starts_a_new_one(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spawned: list[Path] = []
    monkeypatch.setattr(warm, "_spawn", lambda path, idle: spawned.append(path))
    monkeypatch.setattr(warm, "_wait_gone", lambda path: None)
    for mode, starts in (("", []), ("1", [warm.socket_path()])):
        monkeypatch.setenv(warm.WARM_ENV, mode)
        fake = _FakeRunner(warm.socket_path(), [{"stale": True}])
        try:
            assert warm.run_warm(["run", "agents.yaml", "q?"]) is None
        finally:
            fake.close()
            warm.socket_path().unlink()
        assert spawned == starts


def test_the_child_wraps_the_callers_descriptors_as_the_caller_did(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__"):
        monkeypatch.setattr(sys, name, getattr(sys, name))  # put back after the test
    warm_server._take_streams({
        "stdin": ["utf-8", "surrogateescape", False, False],
        "stdout": ["latin-1", "strict", True, False],
        "stderr": ["utf-8", "backslashreplace", True, True],
    })  # fmt: skip
    assert (sys.stdin.encoding, sys.stdin.errors) == ("utf-8", "surrogateescape")
    assert (sys.stdout.encoding, sys.stdout.line_buffering) == ("latin-1", True)
    assert sys.stderr.write_through and sys.stderr.errors == "backslashreplace"
    assert sys.__stdout__ is sys.stdout


def test_the_child_forgets_environment_variables_cached_before_the_fork(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langsmith import utils  # noqa: PLC0415 - the module whose caches are cleared

    monkeypatch.setenv("LANGSMITH_PROJECT", "the-runners")
    assert utils.get_env_var("PROJECT") == "the-runners"
    monkeypatch.setenv("LANGSMITH_PROJECT", "the-callers")
    warm_server._forget_environment_caches()
    assert utils.get_env_var("PROJECT") == "the-callers"


def test_the_child_ends_its_run_when_the_caller_goes_and_not_after_it_finished(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    told = threading.Event()
    monkeypatch.setattr(signal, "SIGTERM", signal.SIGUSR1)  # our own process gets it
    previous = signal.signal(signal.SIGUSR1, lambda *_: told.set())
    try:
        finished, its_caller = socket.socketpair()
        warm_server._watch_caller(finished).set()  # the run is over: nothing is said
        its_caller.close()
        for watcher in threading.enumerate():
            if watcher.name == "leanloop-warm-caller":
                watcher.join(10)  # it ends on the closed socket, having sent nothing
        assert not told.is_set()
        gone, caller = socket.socketpair()
        warm_server._watch_caller(gone)
        caller.close()
        _wait(told.is_set, "the signal to the run")
    finally:
        signal.signal(signal.SIGUSR1, previous)
        for end in (finished, gone):
            end.close()
