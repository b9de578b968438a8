"""PID files: one per port, recording the server leanloop started there.

A PID file is only trusted while its process is alive *and* is the very process that was
started: the record holds the process's start time (``/proc/<pid>/stat`` field 22) and
its executable (``/proc/<pid>/exe``), and both must still match before anything is
signalled. A PID left behind by a crash, or reused by an unrelated program (even one
started with the same ``--port``), is stale and is removed instead of being signalled; a
PID that cannot be a server (0, 1, negative, beyond the kernel's limit) is refused with
one line. Writers (``start``, ``stop``) hold a per-port lock file, ``run/<port>.lock``
(taken with :mod:`leanloop.localmodel.locks`), and write through a uniquely named
temporary file, so two concurrent starts cannot overwrite or delete each other's record.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from leanloop.exceptions import LocalModelError
from leanloop.localmodel.locks import try_lock, unlock

__all__ = [
    "PID_MAX",
    "ProcessIdentity",
    "ServerRecord",
    "live_record",
    "port_lock",
    "process_alive",
    "process_identity",
    "read_record",
    "same_process",
    "valid_pid",
    "write_record",
]

logger = logging.getLogger(__name__)

PID_MAX = 1 << 22
"""Linux's largest possible PID (``PID_MAX_LIMIT`` on 64-bit systems)."""
_PROC = Path("/proc")
_DELETED = " (deleted)"


@dataclass(frozen=True, slots=True)
class ProcessIdentity:
    """What tells one process from a later one that got the same PID."""

    start_time: int
    """Clock ticks after boot at which the process started (``/proc/<pid>/stat`` field 22)."""
    executable: str
    """The program it runs (``/proc/<pid>/exe``)."""


@dataclass(frozen=True, kw_only=True)
class ServerRecord:
    """What a PID file says about the server it belongs to."""

    pid: int
    port: int
    ctx_size: int
    model: str
    log: str
    started: float
    """Seconds since the epoch."""
    start_time: int | None = None
    """The process's start time in clock ticks after boot (``/proc/<pid>/stat`` field 22)."""
    executable: str | None = None
    """The process's executable (``/proc/<pid>/exe``) when it was started."""
    engine: str | None = None
    """Which llama.cpp engine runs it, for people (``prebuilt (xllamacpp …)``,
    ``build (<binary>)``); ``None`` in a file written before engines were recorded."""

    @property
    def base_url(self) -> str:
        """The server's root URL (``/health``, ``/props``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """The OpenAI-compatible base URL (``…/v1``)."""
        return f"{self.base_url}/v1"


def valid_pid(pid: int) -> bool:
    """Whether ``pid`` can be a server leanloop started (not 0, 1, negative or too big)."""
    return 1 < pid <= PID_MAX


def write_record(path: Path, record: ServerRecord) -> None:
    """Write ``record`` to ``path`` atomically (a reader never sees half a file).

    The temporary file has a unique name in the same folder, so concurrent writers never
    share one; the caller holds :func:`port_lock` so they do not race on the result.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".partial", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(json.dumps(asdict(record), indent=2) + "\n")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def read_record(path: Path) -> ServerRecord | None:
    """The record in ``path``, or ``None`` when there is none or it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        start_time = data.get("start_time")
        executable = data.get("executable")
        engine = data.get("engine")
        return ServerRecord(
            pid=int(data["pid"]),
            port=int(data["port"]),
            ctx_size=int(data["ctx_size"]),
            model=str(data["model"]),
            log=str(data["log"]),
            started=float(data["started"]),
            start_time=None if start_time is None else int(start_time),
            executable=None if executable is None else str(executable),
            engine=None if engine is None else str(engine),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError, OverflowError):
        logger.warning("ignoring an unreadable PID file: %s", path)
        return None


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a child that has exited is reaped, not alive).

    Never asks about PID 0 or negative PIDs, which name process groups, not processes.
    """
    if not 0 < pid <= PID_MAX:
        return False
    with contextlib.suppress(ChildProcessError):
        reaped, _ = os.waitpid(pid, os.WNOHANG)
        if reaped == pid:
            return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, owned by someone else
    return not _is_zombie(pid)


def process_identity(pid: int) -> ProcessIdentity | None:
    """The start time and executable of ``pid``; ``None`` when they cannot be read."""
    if not 0 < pid <= PID_MAX:
        return None
    try:
        stat = (_PROC / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
        executable = os.readlink(_PROC / str(pid) / "exe")
        # The command name (field 2) is in parentheses and may hold spaces and ')'.
        fields = stat[stat.rindex(")") + 2 :].split()
        start_time = int(fields[19])  # field 22; fields[0] is field 3
    except (OSError, ValueError, IndexError):
        return None
    return ProcessIdentity(start_time, executable.removesuffix(_DELETED))


def same_process(record: ServerRecord) -> bool:
    """Whether ``record``'s PID still runs the process that was recorded.

    Where the system has no ``/proc`` the identity cannot be checked and a live PID that
    was started with the record's ``--port`` is trusted, as before.
    """
    if not valid_pid(record.pid) or not process_alive(record.pid):
        return False
    if not (_PROC / "self" / "stat").exists():  # pragma: no cover - no procfs (not Linux)
        return _serves_port(record.pid, record.port)
    if record.start_time is None or record.executable is None:
        return False  # a record without an identity cannot be verified
    found = process_identity(record.pid)
    expected = ProcessIdentity(record.start_time, record.executable.removesuffix(_DELETED))
    return found == expected and _serves_port(record.pid, record.port)


def live_record(path: Path, port: int, *, remove_stale: bool = True) -> ServerRecord | None:
    """The record in ``path`` if its server still runs; a stale file is removed.

    Args:
        path: The port's PID file.
        port: The port the record must be for.
        remove_stale: Remove a stale file (only while holding :func:`port_lock`).

    Raises:
        LocalModelError: The file names a PID that cannot be a server (0, 1, negative,
            beyond the kernel's limit); it is removed when ``remove_stale``.
    """
    record = read_record(path)
    if record is not None and not valid_pid(record.pid):
        done = "removed it" if remove_stale else "delete it"
        if remove_stale:
            path.unlink(missing_ok=True)
        msg = f"the PID file {path} names pid {record.pid}, which cannot be a server; {done}"
        raise LocalModelError(msg)
    if record is not None and record.port == port and same_process(record):
        return record
    if record is not None and process_alive(record.pid):
        logger.warning(
            "pid %d in %s is not the llama-server leanloop started (another process has "
            "that pid now); it is left alone",
            record.pid,
            path,
        )
    if remove_stale and path.exists():
        logger.info("removing the stale PID file %s", path)
        path.unlink(missing_ok=True)
    return None


@contextlib.contextmanager
def port_lock(path: Path, *, wait: float | None) -> Iterator[bool]:
    """Hold the exclusive lock ``path`` (``run/<port>.lock``) for the ``with`` block.

    Args:
        path: The lock file (created when missing; never removed, so every process locks
            the same file).
        wait: Seconds to wait for it; ``None`` tries once and yields ``False`` when
            another process holds it.

    Yields:
        Whether the lock is held.

    Raises:
        LocalModelError: It was still held by another process after ``wait`` seconds.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        held = _acquire(fd, wait)
        if not held and wait is not None:
            msg = (
                f"another leanloop command is starting or stopping the server on this port "
                f"(it holds {path} for more than {wait:g} s); try again"
            )
            raise LocalModelError(msg)
        try:
            yield held
        finally:
            if held:
                unlock(fd)
    finally:
        os.close(fd)


def _acquire(fd: int, wait: float | None) -> bool:
    deadline = time.monotonic() + (wait or 0.0)
    for delay in itertools.chain((0.01, 0.02, 0.05), itertools.repeat(0.1)):
        if try_lock(fd):
            return True
        if wait is None or time.monotonic() >= deadline:
            return False
        time.sleep(delay)
    return False  # pragma: no cover - the loop above is endless


def _serves_port(pid: int, port: int) -> bool:
    """Whether ``pid`` was started with ``--port <port>``; ``True`` when it cannot be told."""
    try:
        args = (_PROC / str(pid) / "cmdline").read_bytes().split(b"\0")
    except OSError:
        return True
    return any(a == b"--port" and b == str(port).encode() for a, b in itertools.pairwise(args))


def _is_zombie(pid: int) -> bool:
    try:
        status = (_PROC / str(pid) / "status").read_text(encoding="utf-8")
    except OSError:
        return False
    states = [line.split()[1:2] for line in status.splitlines() if line.startswith("State:")]
    return any("Z" in state for state in states)
