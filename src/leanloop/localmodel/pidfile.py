"""PID files: one per port, recording the server leanloop started there.

A PID file is only trusted while its process is alive *and* is the server started on
that port (checked through ``/proc/<pid>/cmdline`` where the system has it): a PID
left behind by a crash, or reused by an unrelated program, is stale and is removed
instead of being signalled.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["ServerRecord", "live_record", "process_alive", "read_record", "write_record"]

logger = logging.getLogger(__name__)


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

    @property
    def base_url(self) -> str:
        """The server's root URL (``/health``, ``/props``)."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """The OpenAI-compatible base URL (``…/v1``)."""
        return f"{self.base_url}/v1"


def write_record(path: Path, record: ServerRecord) -> None:
    """Write ``record`` to ``path`` atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(json.dumps(asdict(record), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_record(path: Path) -> ServerRecord | None:
    """The record in ``path``, or ``None`` when there is none or it cannot be read."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return ServerRecord(
            pid=int(data["pid"]),
            port=int(data["port"]),
            ctx_size=int(data["ctx_size"]),
            model=str(data["model"]),
            log=str(data["log"]),
            started=float(data["started"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        logger.warning("ignoring an unreadable PID file: %s", path)
        return None


def process_alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a child that has exited is reaped, not alive)."""
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


def live_record(path: Path, port: int) -> ServerRecord | None:
    """The record in ``path`` if its server still runs; a stale file is removed."""
    record = read_record(path)
    if record is not None and process_alive(record.pid) and _serves_port(record.pid, port):
        return record
    if path.exists():
        logger.info("removing the stale PID file %s", path)
        path.unlink(missing_ok=True)
    return None


def _serves_port(pid: int, port: int) -> bool:
    """Whether ``pid`` was started with ``--port <port>``; ``True`` when it cannot be told."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return True
    return any(a == b"--port" and b == str(port).encode() for a, b in itertools.pairwise(args))


def _is_zombie(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return False
    states = [line.split()[1:2] for line in status.splitlines() if line.startswith("State:")]
    return any("Z" in state for state in states)
