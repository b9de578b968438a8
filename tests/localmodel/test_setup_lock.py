"""One ``leanloop local setup`` at a time (issue 39): a second one says whom it waits for.

Every wait here is ended by the test itself (an event, a closed pipe, the callback that
prints the waiting line): nothing sleeps on the clock to show that a setup waited.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from leanloop.exceptions import LocalModelError
from leanloop.localmodel import install
from leanloop.localmodel.engine import recorded_engine
from leanloop.localmodel.install import SetupOptions, setup_local_model
from leanloop.localmodel.locks import setup_lock, try_lock, unlock
from leanloop.localmodel.paths import CachePaths

SAFETY = 30.0
"""Seconds after which a wait that should have ended fails the test (never reached)."""


def _no_download(requirements: Sequence[str], dest: Path, *, no_binary: str | None = None) -> None:
    raise AssertionError(f"nothing should be downloaded: {list(requirements)}")


def test_a_second_setup_waits_for_the_first_then_reuses_what_it_recorded(
    paths: CachePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(install, "assemble_model", lambda target, **_: False)
    first_inside, release, second_waits = threading.Event(), threading.Event(), threading.Event()
    second_checks: list[str] = []
    said: list[str] = []
    failures: list[BaseException] = []

    def first_check() -> str | None:  # the first setup, stopped while it holds the lock
        first_inside.set()
        assert release.wait(SAFETY)
        return None

    def second_check() -> str | None:
        second_checks.append("checked")
        return None

    def second_says(line: str) -> None:
        said.append(line)
        second_waits.set()

    def setup(check: Callable[[], str | None], progress: Callable[[str], None]) -> None:
        try:
            options = SetupOptions(download=_no_download, prebuilt_check=check)
            setup_local_model(paths, options=options, progress=progress)
        except BaseException as exc:  # reported by the test's own thread
            failures.append(exc)

    first = threading.Thread(target=setup, args=(first_check, lambda _: None))
    second = threading.Thread(target=setup, args=(second_check, second_says))
    first.start()
    try:
        assert first_inside.wait(SAFETY)
        second.start()
        assert second_waits.wait(SAFETY)
        assert said == [f"another leanloop local setup is running (pid {os.getpid()}); waiting"]
        assert second_checks == []  # waiting: nothing of its setup ran yet
    finally:
        release.set()  # a failed assertion does not leave the first setup stuck
    first.join(SAFETY)
    second.join(SAFETY)
    assert not first.is_alive() and not second.is_alive()
    assert failures == []
    assert second_checks == ["checked"]
    assert recorded_engine(paths) == "prebuilt"
    assert paths.setup_lock.read_text(encoding="utf-8") == ""  # no pid left behind


def test_the_waiting_line_names_the_holder_s_pid_and_the_wait_ends_when_it_lets_go(
    tmp_path: Path,
) -> None:
    lock = tmp_path / "cache" / "setup.lock"
    lock.parent.mkdir()
    lock.write_text("4242\n", encoding="utf-8")
    holder = os.open(lock, os.O_RDWR)  # another open file: it contends as a process would
    said: list[str] = []

    def waiting(line: str) -> None:
        said.append(line)
        unlock(holder)  # the holder finishes while this one waits

    try:
        assert try_lock(holder)
        with setup_lock(lock, waiting=waiting):
            assert lock.read_text(encoding="utf-8") == f"{os.getpid()}\n"
            assert not try_lock(holder)  # held by the setup now
    finally:
        os.close(holder)
    assert said == ["another leanloop local setup is running (pid 4242); waiting"]


def test_a_holder_that_has_not_written_its_pid_yet_is_not_named(tmp_path: Path) -> None:
    lock = tmp_path / "setup.lock"
    holder = os.open(lock, os.O_RDWR | os.O_CREAT)
    said: list[str] = []

    def waiting(line: str) -> None:
        said.append(line)
        unlock(holder)

    try:
        assert try_lock(holder)
        with setup_lock(lock, waiting=waiting):
            pass
    finally:
        os.close(holder)
    assert said == ["another leanloop local setup is running; waiting"]


def test_a_cache_that_cannot_hold_the_lock_file_is_one_error(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache folder should be", encoding="utf-8")
    with (
        pytest.raises(LocalModelError, match=r"^cannot open the setup lock .*setup\.lock"),
        setup_lock(blocker / "setup.lock", waiting=lambda _: None),
    ):
        pytest.fail("the lock should not have been taken")


HOLDER = """\
import sys
from pathlib import Path

from leanloop.localmodel.locks import setup_lock

with setup_lock(Path(sys.argv[1]), waiting=lambda line: None):
    print("held", flush=True)
    sys.stdin.read()  # until the test closes the pipe
"""


@pytest.mark.usefixtures("broken_xllamacpp")
def test_the_cli_says_which_process_it_waits_for_then_goes_on(paths: CachePaths) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(paths.setup_lock)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert holder.stdout.readline().strip() == "held"
        setup = subprocess.Popen(
            [sys.executable, "-m", "leanloop", "local", "setup"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert setup.stderr is not None
        first = re.sub(r"^\[\s*\d+s\] ", "", setup.stderr.readline().rstrip("\n"))
        assert first == f"another leanloop local setup is running (pid {holder.pid}); waiting"
        holder.stdin.close()  # the first setup ends: the second goes on
        assert holder.wait(SAFETY) == 0
        out, err = setup.communicate(timeout=SAFETY)
    finally:
        holder.kill()
        holder.wait()
    assert setup.returncode == 1, (out, err)
    # It went on to its own work: the wheel that cannot run here, in one line.
    assert err.startswith("error: the prebuilt llama.cpp engine cannot run here"), err
    assert len(err.splitlines()) == 1, err


def test_a_start_waits_for_a_running_setup_before_it_reads_the_cache(
    paths: CachePaths, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leanloop.localmodel import server  # noqa: PLC0415 - the module under test

    read: list[str] = []
    waits = threading.Event()
    said: list[str] = []
    failures: list[BaseException] = []

    def resolve(*_: object) -> object:
        read.append("engine")
        raise LocalModelError("not set up (the test stops here)")

    def says(line: str) -> None:
        said.append(line)
        waits.set()

    def start() -> None:
        try:
            server.start_server(paths=paths, waiting=says)
        except BaseException as exc:  # reported by the test's own thread
            failures.append(exc)

    monkeypatch.setattr(server, "resolve_engine", resolve)
    starter = threading.Thread(target=start)
    with setup_lock(paths.setup_lock, waiting=lambda _: None):
        starter.start()
        assert waits.wait(SAFETY)
        assert read == []  # waiting: the cache is not read while a setup holds the lock
    starter.join(SAFETY)
    assert not starter.is_alive()
    assert said == [f"another leanloop local setup is running (pid {os.getpid()}); waiting"]
    assert read == ["engine"]
    assert [str(exc) for exc in failures] == ["not set up (the test stops here)"]
