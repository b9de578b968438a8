"""A warm run is the run a cold process makes, where issue 38 found it was not (N7, N15, N17, N18).

N7: the caller's limits (``ulimit -n``, ``-t``), niceness and ``TZ`` are the run's; a
caller whose interpreter state a forked child cannot take on (hash seed, warning options)
runs cold. N15: a runner killed mid-run does not change the run's exit status. N17: a
stdout closed from the start is exit 1 and one line, warm or cold. N18: a reader that
leaves (``| head``) is exit 141 and no traceback, warm or cold.

Units first (the decision and the limits a child takes, with data; ``run_as_command``
in a small process), then one warm runner and real ``leanloop run`` processes side by
side with cold ones: a tool in the caller's folder reports the process it runs in.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from leanloop.cli import stdio, warm, warm_server
from leanloop.testing.server import FakeModelServer, Reply

# ---- can a child match the caller? -----------------------------------------------------

UNLIMITED = resource.RLIM_INFINITY


def _state(**changes: Any) -> dict[str, Any]:
    interpreter: dict[str, Any] = {
        "hashseed": "random",
        "warnoptions": [],
        "xoptions": {},
        "flags": [0, False, 0, 0],
    }
    state: dict[str, Any] = {
        "limits": {"NOFILE": [1024, 4096], "CPU": [UNLIMITED, UNLIMITED]},
        "nice": 0,
        "interpreter": interpreter,
    }
    for key, value in changes.items():
        (interpreter if key in interpreter else state)[key] = value
    return state


@pytest.mark.parametrize(
    ("caller", "reason"),
    [
        (_state(), None),
        (_state(limits={"NOFILE": [256, 512], "CPU": [10, 20]}), None),  # lowered: fine
        (_state(limits={"NOFILE": [4096, 4096], "CPU": [5, UNLIMITED]}), None),  # soft up
        (_state(nice=10), None),  # a lower priority: any process may take it
        (_state(limits={"NOFILE": [1024, 8192]}), "the hard RLIMIT_NOFILE 8192 is above"),
        (_state(limits={"NOFILE": [1024, UNLIMITED]}), "the hard RLIMIT_NOFILE -1 is above"),
        (_state(limits={"RTTIME": [1, 1]}), "RLIMIT_RTTIME is not known here"),
        (_state(nice=-5), "niceness -5 is below the runner's 0"),
        (_state(hashseed="123"), "the interpreter's hashseed differs"),
        (_state(warnoptions=["error"]), "the interpreter's warnoptions differs"),
        (_state(xoptions={"dev": "True"}), "the interpreter's xoptions differs"),
        (_state(flags=[1, False, 0, 0]), "the interpreter's flags differs"),
        (None, "the caller sent no process state"),
    ],
)
def test_a_child_takes_on_what_it_can_and_the_rest_goes_cold(
    caller: dict[str, Any] | None, reason: str | None
) -> None:
    said = warm_server.cannot_match(caller, _state(), privileged=False)
    assert (said if reason is None else str(said)[: len(reason)]) == reason


def test_a_privileged_runner_may_raise_limits_and_priority_but_not_the_interpreter() -> None:
    for caller in (_state(limits={"NOFILE": [1024, 8192]}), _state(nice=-5)):
        assert warm_server.cannot_match(caller, _state(), privileged=True) is None
    raised_seed = _state(hashseed="0")
    assert warm_server.cannot_match(raised_seed, _state(), privileged=True) is not None


def test_the_interpreter_state_reads_the_hash_seed_and_warning_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PYTHONHASHSEED", "random")
    assert warm.interpreter_state()["hashseed"] == "random"
    monkeypatch.setenv("PYTHONHASHSEED", "42")
    assert warm.interpreter_state()["hashseed"] == "42"
    monkeypatch.setattr(sys, "warnoptions", ["ignore::DeprecationWarning"])
    assert warm.interpreter_state()["warnoptions"] == ["ignore::DeprecationWarning"]


def _in_a_child(work: Callable[[], Any]) -> Any:
    """``work()`` in a forked child (limits and priority are the process's); its JSON result."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.write(write_end, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as out:
        data = out.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def test_a_child_takes_the_callers_limits_and_niceness() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    caller = warm.process_state()
    caller["limits"]["NOFILE"] = [min(soft, 200), min(hard, 300)]
    caller["limits"]["CPU"] = [1000, UNLIMITED]
    caller["nice"] = nice + 3

    def take() -> list[Any]:
        said = warm_server.take_process_state(caller)
        return [
            said,
            resource.getrlimit(resource.RLIMIT_NOFILE),
            resource.getrlimit(resource.RLIMIT_CPU)[0],
            os.getpriority(os.PRIO_PROCESS, 0),
        ]

    assert _in_a_child(take) == [None, [min(soft, 200), min(hard, 300)], 1000, nice + 3]


def test_a_child_that_cannot_take_the_limits_says_why_before_the_run() -> None:
    caller = warm.process_state()
    caller["limits"]["NOFILE"] = [10, 5]  # soft above hard: no system takes it
    said = _in_a_child(lambda: warm_server.take_process_state(caller))
    assert said.startswith("the caller's limits or niceness: ")


# ---- the child's own status ------------------------------------------------------------


def test_a_child_sends_its_own_status_before_it_exits() -> None:
    ours, callers = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child, as a run ends
        callers.close()
        warm_server._exit(7, ours)
    ours.close()
    with callers:
        assert warm.receive(callers) == ({"exit": 7}, [])
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 7


# ---- stdout's failures, in a small process ---------------------------------------------

_WRITER = """
import sys
from leanloop.cli.stdio import run_as_command
def main(words):
    for _ in range(int(words[0])):
        sys.stdout.write("answer text " * 100)
        sys.stdout.flush()
    return 0
sys.exit(run_as_command(main, sys.argv[1:]))
"""


def test_a_reader_that_left_is_exit_141_and_no_traceback() -> None:
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER, "50"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert writer.stdout is not None and writer.stderr is not None
    writer.stdout.close()  # `| head -c0`: gone before the first line
    err = writer.stderr.read()
    assert (writer.wait(60), err) == (stdio.EXIT_READER_LEFT, b"")


def test_a_stdout_closed_from_the_start_is_exit_1_and_one_line() -> None:
    done = subprocess.run(
        ["bash", "-c", 'exec "$@" >&-', "-", sys.executable, "-c", _WRITER, "1"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (1, "error: cannot write to stdout: it is closed\n")


def test_a_broken_pipe_that_is_not_stdouts_goes_on(capfd: pytest.CaptureFixture[str]) -> None:
    def main(_words: object) -> int:
        raise BrokenPipeError(32, "a tool's pipe")

    with pytest.raises(BrokenPipeError):
        stdio.run_as_command(main, [])


# ---- real processes: one warm runner, runs beside cold ones ----------------------------

_PROBE = '''"""Tools that report the process they run in, and wait for the test's word."""

import json
import os
import resource
import time
from pathlib import Path


def state() -> str:
    """Report this process's limits, niceness, time zone and session."""
    return json.dumps({
        "nofile": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
        "cpu": resource.getrlimit(resource.RLIMIT_CPU)[0],
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "tz": time.strftime("%Z"),
        "sid": os.getsid(0),
        "pid": os.getpid(),
    })


def gate() -> str:
    """Wait until the test says go."""
    Path("waiting").touch()
    while not Path("go").exists():
        time.sleep(0.02)
    return "gone through"
'''


@pytest.fixture(scope="module")
def model() -> Iterator[FakeModelServer]:
    with FakeModelServer(
        replies=[Reply(content="blue")], when_empty="repeat", n_ctx=8192
    ) as server:
        yield server


@pytest.fixture
def fresh(model: FakeModelServer) -> Iterator[FakeModelServer]:
    model.reset()
    yield model
    model.reset()
    model.queue(Reply(content="blue"))


class Caller:
    """``python -m leanloop`` processes in one folder, with one runtime folder for runners."""

    def __init__(self, folder: Path, runtime: Path, model: FakeModelServer) -> None:
        self.folder = folder
        self.env = {k: v for k, v in os.environ.items() if k not in {warm.WARM_ENV, "TZ"}}
        self.env.update(XDG_RUNTIME_DIR=str(runtime), SKY_URL=model.base_url)

    def popen(
        self,
        *words: str,
        warm_runs: bool = True,
        setup: Callable[[], None] | None = None,
        **env: str,
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "leanloop", *words],
            cwd=self.folder,
            env={**self.env, warm.WARM_ENV: "" if warm_runs else "0", **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=setup,  # noqa: PLW1509 - only setrlimit/nice, before the exec
        )

    def __call__(self, *words: str, **options: Any) -> tuple[int, str, str]:
        process = self.popen(*words, **options)
        out, err = process.communicate(timeout=300)
        return process.returncode, out, err

    def runs(self) -> int:
        _rc, out, _err = self("warm", "status")
        return int(out.split(", ")[3].split()[0])


@pytest.fixture(scope="module")
def caller(tmp_path_factory: pytest.TempPathFactory, model: FakeModelServer) -> Iterator[Caller]:
    folder = tmp_path_factory.mktemp("work")
    (folder / "probe.py").write_text(_PROBE, encoding="utf-8")
    (folder / "agents.yaml").write_text(
        "version: 1\nagents:\n  sky:\n    model:\n      provider: openai-compatible\n"
        "      base_url: ${SKY_URL}\n      model: fake\n      context_window: 8192\n"
        '    tools: ["probe:state", "probe:gate"]\n',
        encoding="utf-8",
    )
    runtime = tmp_path_factory.mktemp("runtime")
    runtime.chmod(0o700)
    shell = Caller(folder, runtime, model)
    code, _out, err = shell("warm", "start")  # the runner: no TZ, no limits of the tests
    assert code == 0, err
    yield shell
    shell("warm", "stop")


def _probed(model: FakeModelServer, caller: Caller, **options: Any) -> dict[str, Any]:
    """The probe's report of the process that ran the run (the tool result's text)."""
    model.reset()
    model.queue(Reply(tool_calls=[{"name": "state", "arguments": {}}]), Reply(content="done"))
    code, out, err = caller("run", "agents.yaml", "Report.", "-q", **options)
    assert (code, out) == (0, "done\n"), err
    result = model.chat_bodies()[-1]["messages"][-1]
    assert result["role"] == "tool", result
    report: dict[str, Any] = json.loads(result["content"])
    return report


def _limited() -> None:
    """As ``ulimit -n 200 -t 900; nice -n 4`` before the command."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (200, hard))
    resource.setrlimit(resource.RLIMIT_CPU, (900, resource.RLIM_INFINITY))
    os.nice(4)


def test_a_warm_run_has_the_callers_limits_niceness_and_time_zone(
    caller: Caller, model: FakeModelServer
) -> None:
    runs = caller.runs()
    options: dict[str, Any] = {"setup": _limited, "TZ": "XYZ-3"}
    hot = _probed(model, caller, **options)
    assert caller.runs() == runs + 1  # it did go warm
    cold = _probed(model, caller, warm_runs=False, **options)
    same = ("nofile", "cpu", "nice", "tz")
    assert {key: hot[key] for key in same} == {key: cold[key] for key in same}
    assert (hot["nofile"], hot["cpu"], hot["tz"]) == (200, 900, "XYZ")
    assert hot["sid"] == hot["pid"]  # a session of its own, not the runner's


def test_a_caller_with_another_hash_seed_or_warning_options_runs_cold(
    caller: Caller, model: FakeModelServer
) -> None:
    runs = caller.runs()
    for env in ({"PYTHONHASHSEED": "123"}, {"PYTHONWARNINGS": "ignore::UserWarning"}):
        report = _probed(model, caller, **env)
        assert report["sid"] != report["pid"]  # the caller's own session: it ran cold
    assert caller.runs() == runs


def test_a_closed_stdout_is_exit_1_and_one_line_warm_or_cold(
    caller: Caller, fresh: FakeModelServer
) -> None:
    fresh.queue(Reply(content="blue"))
    runs = caller.runs()
    for warm_runs in (True, False):
        code, _out, err = caller(
            "run", "agents.yaml", "Sky?", "-q", warm_runs=warm_runs, setup=lambda: os.close(1)
        )
        assert (code, err) == (1, "error: cannot write to stdout: it is closed\n")
    assert caller.runs() == runs  # the warm caller went cold: the socket would be stdout


def test_a_reader_that_left_is_exit_141_warm_or_cold(
    caller: Caller, fresh: FakeModelServer
) -> None:
    fresh.queue(Reply(content="blue"))
    runs = caller.runs()
    for warm_runs in (True, False):
        run = caller.popen("run", "agents.yaml", "Sky?", warm_runs=warm_runs)
        assert run.stdout is not None
        run.stdout.close()  # `| head -c0`: the reader is gone before the answer
        _out, err = run.communicate(timeout=300)
        assert run.returncode == stdio.EXIT_READER_LEFT, err
        assert "Traceback" not in err and "BrokenPipeError" not in err
    assert caller.runs() == runs + 1


def test_a_runner_killed_mid_run_leaves_the_runs_own_status(
    caller: Caller, fresh: FakeModelServer
) -> None:
    # Last of the module: the runner dies here (`warm stop` at the end finds none).
    fresh.queue(Reply(tool_calls=[{"name": "gate", "arguments": {}}]), Reply(content="blue"))
    for word in ("waiting", "go"):
        (caller.folder / word).unlink(missing_ok=True)
    _rc, status, _err = caller("warm", "status")
    runner = int(status.split("pid ", 1)[1].split(",", 1)[0])
    run = caller.popen("run", "agents.yaml", "Sky?", "-q")
    try:
        _wait((caller.folder / "waiting").exists, "the run's tool call")
        os.kill(runner, signal.SIGKILL)
        _wait(lambda: _gone(runner), "the runner's end")
        (caller.folder / "go").touch()
        out, err = run.communicate(timeout=300)
    finally:
        run.kill()
    assert (run.returncode, out, err) == (0, "blue\n", "")


def _wait(condition: Callable[[], bool], what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {seconds:g} s")
        time.sleep(0.02)  # real processes


def _gone(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in {"Z", "X"}
