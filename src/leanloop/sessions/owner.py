"""Which process owns a running turn, and whether that process still lives.

A pid alone is not an identity: pids are reused, so a turn whose owner died could look
owned by whatever process got the pid next. An owner is therefore the pid, the process's
start time (Linux: field 22 of ``/proc/PID/stat``, clock ticks since boot), the host name
and the boot id (Linux: ``/proc/sys/kernel/random/boot_id``; after a reboot every
process of the old boot is gone). A process on another host cannot be checked from here,
so it counts as alive: refusing a turn is safer than running it twice.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Owner"]

_PROC = Path("/proc")


def _stat_fields(pid: int) -> list[str] | None:
    """Fields 3.. of ``/proc/PID/stat`` (state first), or ``None`` without one."""
    try:
        text = (_PROC / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    # Field 2, the command name in parentheses, may itself hold spaces and ")": the
    # fields after it start after the last ")".
    _, _, rest = text.rpartition(")")
    fields = rest.split()
    return fields if len(fields) >= 20 else None


def _start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux), else ``None``."""
    fields = _stat_fields(pid)
    if fields is None:
        return None
    try:
        return int(fields[19])  # field 22 of the file; fields[0] is field 3
    except ValueError:
        return None


def _boot_id() -> str | None:
    try:
        return (_PROC / "sys/kernel/random/boot_id").read_text(encoding="ascii").strip() or None
    except OSError:
        return None


_current: Owner | None = None


@dataclass(frozen=True, slots=True)
class Owner:
    """The identity of the process that owns a running turn.

    Attributes:
        pid: The process id.
        host: The host name the process ran on.
        started: Its start time in clock ticks since boot (Linux), ``None`` elsewhere.
        boot: The host's boot id (Linux), ``None`` elsewhere.
    """

    pid: int
    host: str
    started: int | None = None
    boot: str | None = None

    @staticmethod
    def current() -> Owner:
        """This process's identity (computed once per process; a fork gets its own)."""
        global _current  # noqa: PLW0603 - a per-process cache, refreshed after a fork
        pid = os.getpid()
        if _current is None or _current.pid != pid:
            _current = Owner(pid, socket.gethostname(), _start_time(pid), _boot_id())
        return _current

    def is_alive(self) -> bool:
        """Whether the owner may still be running.

        ``True`` for another host (it cannot be checked from here). ``False`` when the
        host rebooted since, when no process has the pid, when the process with the pid
        started at another time (the pid was reused) or is a zombie (killed, not yet
        reaped).
        """
        here = Owner.current()
        if self.host != here.host:
            return True
        if self.boot is not None and here.boot is not None and self.boot != here.boot:
            return False
        if self.pid == here.pid:
            return self.started == here.started
        fields = _stat_fields(self.pid)
        if fields is not None:
            if fields[0] in {"Z", "X"}:
                return False
            return self.started is None or _start_time(self.pid) == self.started
        return _signal_says_alive(self.pid)

    def describe(self) -> str:
        """``this process (pid 12)``, ``pid 12 on this host``, ``pid 12 on host 'b'``."""
        if self == Owner.current():
            return f"this process (pid {self.pid})"
        if self.host == Owner.current().host:
            return f"pid {self.pid} on this host"
        return f"pid {self.pid} on host {self.host!r}"


def _signal_says_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists, where there is no ``/proc`` (not Linux)."""
    if pid <= 0:
        return False
    if os.name == "nt":
        return True  # os.kill(pid, 0) would end the process there: cannot check
    if not _PROC.joinpath("self").exists():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True  # it exists, under another user
        except OSError:
            return False
        return True
    return False  # Linux: no /proc/PID entry means no such process
