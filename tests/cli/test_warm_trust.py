"""Whom the warm runner's client trusts, and a runner that does not answer (issue 38: N1, N16).

A caller sends its environment (API keys) and its terminal to the runner, so it first
checks the socket's folder (the user's own, mode 0700, not a link) and the listener's
uid (``SO_PEERCRED``), and sends nothing to either kind of stranger: one warning line,
and the run goes cold. A runner that does not answer the greeting in time (stopped with
SIGSTOP) gets no request; a stopped one loses its socket, and a caller that left is never
forked a run. Units first (the checks, with a small injected wait), then real processes:
a fake listener (in a folder that is not private, or as another uid where this machine
has one) that must receive zero bytes while ``leanloop run`` answers cold, and a real
runner stopped and continued.
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
from pathlib import Path
from typing import Any

import pytest

from leanloop.cli import warm, warm_server
from leanloop.testing.server import FakeModelServer, Reply

NOBODY = 65534
"""The second uid of the tests that need one: only root can act as it."""
needs_root = pytest.mark.skipif(
    os.geteuid() != 0, reason="acting as a second uid needs root (no sudo here)"
)

# ---- the checks ----------------------------------------------------------------------------


def test_only_a_private_folder_of_the_users_own_may_hold_the_socket(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    assert warm.folder_problem(private) is None
    loose = tmp_path / "loose"
    loose.mkdir()
    loose.chmod(0o755)
    assert warm.folder_problem(loose) == f"{loose} has mode 0755, not 0700"
    link = tmp_path / "link"
    link.symlink_to(private)
    assert warm.folder_problem(link) == f"{link} is a symbolic link"
    other = os.getuid() + 1  # as another user's folder looks to this one
    assert warm.folder_problem(private, uid=other) == (
        f"{private} belongs to uid {os.getuid()}, not to you (uid {other})"
    )
    assert "No such file" in str(warm.folder_problem(tmp_path / "missing"))


def test_making_private_tightens_the_users_own_folder_and_refuses_a_link(tmp_path: Path) -> None:
    made = tmp_path / "cache" / "run"
    assert warm.make_private(made) is None
    assert made.stat().st_mode & 0o777 == 0o700
    made.chmod(0o777)  # an older leanloop's folder, or another umask's
    assert warm.make_private(made) is None
    assert made.stat().st_mode & 0o777 == 0o700
    target = tmp_path / "theirs"
    target.mkdir(mode=0o755)
    link = tmp_path / "linked"
    link.symlink_to(target)
    assert warm.make_private(link) == f"{link} is a symbolic link"
    assert target.stat().st_mode & 0o777 == 0o755  # the link was not followed


@needs_root
def test_making_private_leaves_another_users_folder_alone(tmp_path: Path) -> None:
    theirs = tmp_path / "run"
    theirs.mkdir()
    theirs.chmod(0o777)
    os.chown(theirs, NOBODY, NOBODY)
    assert warm.make_private(theirs) == f"{theirs} belongs to uid {NOBODY}, not to you (uid 0)"
    assert theirs.stat().st_mode & 0o777 == 0o777


def test_the_runtime_folder_is_under_xdg_runtime_dir_only_when_no_one_else_writes_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LEANLOOP_CACHE", str(tmp_path / "cache"))
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    assert warm.runtime_dir() == runtime / "leanloop"
    runtime.chmod(0o1777)  # a shared folder, as /tmp: anyone could make `leanloop` there
    assert warm.runtime_dir() == tmp_path / "cache" / "run"
    monkeypatch.setenv("XDG_RUNTIME_DIR", "relative/path")
    assert warm.runtime_dir() == tmp_path / "cache" / "run"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "yet-to-be"))  # made by the user
    assert warm.runtime_dir(create=True) == tmp_path / "yet-to-be" / "leanloop"


def test_the_peer_credentials_name_this_process_across_a_socketpair() -> None:
    left, right = socket.socketpair()
    with left, right:
        assert warm.peer_credentials(left) == (os.getpid(), os.getuid())


# ---- the client in this process: what a stranger receives ------------------------------


class Listener:
    """A listening socket that counts every byte it is sent (a stranger's, in the tests)."""

    def __init__(self, path: Path, *, accept: bool = True) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(4)
        self.received = b""
        self.accepted = 0
        self.thread = threading.Thread(target=self._serve, daemon=True) if accept else None
        if self.thread is not None:
            self.thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.sock.accept()
        except OSError:  # closed before anyone came
            return
        self.accepted += 1
        with conn:
            while chunk := conn.recv(65536):
                self.received += chunk

    def pending(self) -> bytes:
        """What a caller left in the backlog (a listener that never accepted)."""
        self.sock.settimeout(0)
        try:
            conn, _ = self.sock.accept()
        except BlockingIOError:
            return b""
        with conn:
            conn.settimeout(0)
            try:
                return conn.recv(65536)
            except BlockingIOError:
                return b""

    def close(self) -> None:
        if self.thread is not None:
            self.thread.join(10)
        self.sock.close()


@pytest.fixture
def socket_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[int], Path]:
    """The socket path a caller looks for, in a runtime folder of the given mode."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    monkeypatch.delenv(warm.WARM_ENV, raising=False)

    def make(mode: int) -> Path:
        folder = warm.runtime_dir()
        folder.mkdir(exist_ok=True)
        folder.chmod(mode)
        return warm.socket_path()

    return make


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("leanloop: warning:")]


def test_a_socket_in_a_folder_others_may_enter_gets_nothing(
    socket_in: Callable[[int], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    listener = Listener(socket_in(0o755))
    try:
        assert warm.run_warm(["run", "agents.yaml", "q?"]) is None
    finally:
        listener.sock.close()  # it never gets a caller: the accept ends here
        listener.close()
    assert (listener.accepted, listener.received) == (0, b"")
    (line,) = _warnings(capsys.readouterr().err)
    assert line == (
        f"leanloop: warning: not using the warm runner: {listener.path.parent} has mode "
        "0755, not 0700 (another user could listen there); running cold"
    )


def test_a_listener_of_another_uid_gets_not_a_byte(
    socket_in: Callable[[int], Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    listener = Listener(socket_in(0o700))
    stranger = os.getuid() + 1
    monkeypatch.setattr(warm, "peer_credentials", lambda _sock: (4242, stranger))
    try:
        assert warm.run_warm(["run", "agents.yaml", "q?"]) is None
    finally:
        listener.close()
    assert (listener.accepted, listener.received) == (1, b"")  # connected, then nothing
    (line,) = _warnings(capsys.readouterr().err)
    assert f"is served by uid {stranger}, not by you (uid {os.getuid()}); running cold" in line


def test_a_runner_that_does_not_answer_the_greeting_gets_no_request(
    socket_in: Callable[[int], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    listener = Listener(socket_in(0o700), accept=False)  # as a stopped runner: a backlog
    try:
        assert warm.run_warm(["run", "agents.yaml", "q?"], hello_wait=0.05) is None
        sent = listener.pending()
    finally:
        listener.close()
    assert json.loads(sent[4:]) == {"hello": 1}  # the greeting, and no environment
    (line,) = _warnings(capsys.readouterr().err)
    assert line.endswith(f"its process {os.getpid()} did not answer in 0.05 s; running cold")
    assert listener.path.exists()  # not stopped, only slow: it keeps its socket


def test_a_stopped_runner_loses_its_socket_and_is_asked_to_end(
    socket_in: Callable[[int], Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    listener = Listener(socket_in(0o700), accept=False)
    retired: list[int] = []
    monkeypatch.setattr(warm, "_stopped", lambda pid: True)
    monkeypatch.setattr(warm, "_retire", lambda path, runner: retired.append(runner.pid))
    try:
        assert warm.run_warm(["run", "agents.yaml", "q?"], hello_wait=0.05) is None
    finally:
        listener.close()
    assert retired == [os.getpid()]
    assert _warnings(capsys.readouterr().err)[0].endswith(
        "is stopped; its socket is removed; running cold"
    )


def test_retiring_removes_only_its_own_socket_and_sends_sigterm(tmp_path: Path) -> None:
    path = tmp_path / "warm.sock"
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    # The stopped runner keeps its socket open, so its inode is not reused meanwhile.
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as stopped:
        stopped.bind(str(path))
        try:
            stale = warm._Runner(stopped, sleeper.pid, os.lstat(path).st_ino)
            warm._retire(path, stale)
            assert sleeper.wait(30) == -signal.SIGTERM
        finally:
            sleeper.kill()
            sleeper.wait()
        assert not path.exists()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as newer:
            newer.bind(str(path))  # a new runner took the name meanwhile: left alone
            warm._retire(path, stale)
            assert path.exists()


def test_whether_a_process_is_stopped_is_read_from_proc() -> None:
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        assert not warm._stopped(sleeper.pid)
        sleeper.send_signal(signal.SIGSTOP)
        _wait(lambda: warm._stopped(sleeper.pid), "the stop")
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not warm._stopped(sleeper.pid)  # gone


def _wait(condition: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:g} s")
        time.sleep(0.02)  # real processes


# ---- the runner's side, in this process ------------------------------------------------


@pytest.fixture
def runner(tmp_path: Path) -> Iterator[warm_server._Runner]:
    folder = tmp_path / "run"
    assert warm.make_private(folder) is None
    listening = warm_server._Runner(folder / "warm.sock", "the-stamp", idle=60)
    assert listening._bind()
    yield listening
    listening._stop_listening()
    listening.wake_read.close()
    listening.wake_write.close()


def _request() -> dict[str, Any]:
    return {"stamp": "the-stamp", "argv": ["run"], "process": warm.process_state()}


def test_a_runner_starts_no_run_for_a_caller_that_left(
    runner: warm_server._Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    forked: list[dict[str, Any]] = []
    monkeypatch.setattr(runner, "_fork", lambda conn, fds, request: forked.append(request))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(str(runner.path))
        warm.send(client, _request(), fds=(0, 1, 2))
    runner._accept()  # the caller gave up before the runner came to it
    assert forked == []
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(str(runner.path))
        warm.send(client, _request(), fds=(0, 1, 2))
        runner._accept()
    assert len(forked) == 1  # a caller still there is served


def test_a_runner_answers_the_greeting_then_reads_the_request(runner: warm_server._Runner) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(str(runner.path))
        warm.send(client, {"hello": 1})
        warm.send(client, {"status": True})
        runner._accept()
        assert warm.receive(client) == ({"hello": os.getpid()}, [])
        status, _ = warm.receive(client)
    assert status is not None and status["stamp"] == "the-stamp"


def test_a_runner_reads_nothing_from_a_caller_of_another_uid(
    runner: warm_server._Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(warm_server, "peer_credentials", lambda _c: (1, os.getuid() + 1))
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
        client.connect(str(runner.path))
        warm.send(client, {"status": True})
        runner._accept()
        try:
            answer = client.recv(64)
        except ConnectionResetError:  # closed with our message unread: never read at all
            answer = b""
        assert answer == b""


def test_whether_a_caller_is_gone_is_seen_without_reading_or_waiting() -> None:
    ours, theirs = socket.socketpair()
    with ours:
        assert not warm_server._caller_gone(ours)
        theirs.close()
        assert warm_server._caller_gone(ours)


@needs_root
def test_a_runner_refuses_a_folder_of_another_user(tmp_path: Path) -> None:
    theirs = tmp_path / "run"
    theirs.mkdir()
    theirs.chmod(0o777)
    os.chown(theirs, NOBODY, NOBODY)
    runner = warm_server._Runner(theirs / "warm.sock", "stamp", idle=60)
    try:
        assert runner.serve() == 1
        assert not (theirs / "warm.sock").exists()
    finally:
        for end in (runner.listener, runner.wake_read, runner.wake_write):
            end.close()


# ---- real processes --------------------------------------------------------------------

# A stranger's listener: binds (as root, it may then become another uid), records how
# many bytes it was sent, and says so when it is told to end (SIGTERM).
_LISTENER = """
import os, signal, socket, sys
path, uid = sys.argv[1], int(sys.argv[2])
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.bind(path)
os.chmod(path, 0o777)
if uid != os.getuid():
    os.setgid(uid)
    os.setuid(uid)
sock.listen(8)  # the credentials a caller sees are those of this moment
received = 0
def done(*_):
    print(received, flush=True)
    os._exit(0)
signal.signal(signal.SIGTERM, done)
print("ready", flush=True)
while True:
    conn, _ = sock.accept()
    while chunk := conn.recv(65536):
        received += len(chunk)
    conn.close()
"""


@pytest.fixture(scope="module")
def model() -> Iterator[FakeModelServer]:
    with FakeModelServer(
        replies=[Reply(content="blue")], when_empty="repeat", n_ctx=8192
    ) as server:
        yield server


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("work")
    (folder / "agents.yaml").write_text(
        "version: 1\nagents:\n  sky:\n    model:\n      provider: openai-compatible\n"
        "      base_url: ${SKY_URL}\n      model: fake\n      context_window: 8192\n",
        encoding="utf-8",
    )
    return folder


def _env(model: FakeModelServer, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {warm.WARM_ENV, "XDG_RUNTIME_DIR"}}
    return {**env, "SKY_URL": model.base_url, "SECRET_KEY": "sk-do-not-send", **extra}


def _leanloop(folder: Path, env: dict[str, str], *words: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "leanloop", *words],
        check=False,
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _stranger(path: Path, uid: int) -> subprocess.Popen[str]:
    listener = subprocess.Popen(
        [sys.executable, "-c", _LISTENER, str(path), str(uid)], stdout=subprocess.PIPE, text=True
    )
    assert listener.stdout is not None
    assert listener.stdout.readline() == "ready\n"
    return listener


def _bytes_received(listener: subprocess.Popen[str]) -> int:
    listener.terminate()
    out, _ = listener.communicate(timeout=30)
    return int(out)


def _socket_under(cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The socket a caller with ``LEANLOOP_CACHE=cache`` (and no XDG_RUNTIME_DIR) uses."""
    monkeypatch.setenv("LEANLOOP_CACHE", str(cache))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    return warm.socket_path()


@pytest.mark.parametrize("owner", ["me", pytest.param("nobody", marks=needs_root)])
def test_a_listener_in_a_shared_cache_gets_nothing_and_the_run_answers_cold(
    owner: str,
    model: FakeModelServer,
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The probe's attack: LEANLOOP_CACHE on a folder another user may write to; that user
    # makes run/ first and listens on the name every caller of this environment uses.
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    path = _socket_under(shared, monkeypatch)
    path.parent.mkdir()
    path.parent.chmod(0o755)
    uid = os.getuid()
    if owner == "nobody":
        uid = NOBODY
        os.chown(path.parent, NOBODY, NOBODY)
        path.parent.chmod(0o777)
    listener = _stranger(path, uid)
    try:
        done = _leanloop(
            workspace, _env(model, LEANLOOP_CACHE=str(shared)), "run", "agents.yaml", "Sky?"
        )
    finally:
        received = _bytes_received(listener)
    assert received == 0
    assert (done.returncode, done.stdout) == (0, "blue\n"), done.stderr
    (line,) = _warnings(done.stderr)
    assert line.startswith(f"leanloop: warning: not using the warm runner: {path.parent} ")
    assert line.endswith("(another user could listen there); running cold")


@needs_root
def test_a_listener_of_another_uid_in_a_private_folder_gets_nothing(
    model: FakeModelServer, workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    path = _socket_under(cache, monkeypatch)
    assert warm.make_private(path.parent) is None
    listener = _stranger(path, NOBODY)
    try:
        done = _leanloop(
            workspace, _env(model, LEANLOOP_CACHE=str(cache)), "run", "agents.yaml", "Sky?"
        )
    finally:
        received = _bytes_received(listener)
    assert received == 0
    assert (done.returncode, done.stdout) == (0, "blue\n"), done.stderr
    (line,) = _warnings(done.stderr)
    assert f"is served by uid {NOBODY}, not by you (uid 0); running cold" in line


def test_a_stopped_runner_costs_one_greeting_and_never_runs_a_left_callers_run(
    model: FakeModelServer, workspace: Path, tmp_path: Path
) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    env = _env(model, XDG_RUNTIME_DIR=str(runtime), **{warm.WARM_ENV: ""})
    requests = len(model.chat_bodies())
    started = _leanloop(workspace, env, "warm", "start")
    assert started.returncode == 0, started.stderr
    pid = int(started.stdout.split("pid ", 1)[1].split(",", 1)[0])
    os.kill(pid, signal.SIGSTOP)
    try:
        first = _leanloop(workspace, env, "run", "agents.yaml", "Sky?")
        assert (first.returncode, first.stdout) == (0, "blue\n"), first.stderr
        assert _warnings(first.stderr)[0].endswith(
            f"its process {pid} is stopped; its socket is removed; running cold"
        )
        assert not list(runtime.glob("leanloop/*.sock"))  # no later run waits on it
        second = _leanloop(workspace, env, "run", "agents.yaml", "Sky?")
        assert (second.returncode, _warnings(second.stderr)) == (0, [])  # not even a wait
    finally:
        os.kill(pid, signal.SIGCONT)
        if list(runtime.glob("leanloop/*.sock")):  # not retired (a failure above): end it
            os.kill(pid, signal.SIGTERM)
    _wait(lambda: _gone(pid), "its end")  # it was asked to end when continued
    # It ran nothing for the caller that had left: the model saw the two cold runs only.
    assert len(model.chat_bodies()) - requests == 2
    log = next(runtime.glob("leanloop/*.log")).read_text(encoding="utf-8")
    assert "signal 15: no new runs; 0 in flight" in log


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie where nothing reaps orphans counts)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in {"Z", "X"}
