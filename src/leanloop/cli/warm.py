"""The warm runner: ``leanloop run`` without paying for LangChain's imports every time.

A cold ``leanloop run`` spends most of its startup importing LangChain, the OpenAI client
and their pydantic models (about 2 s here) before it sends its first request. The warm
runner (``leanloop warm start``) is a background process that has imported all of that
once; each later ``leanloop run`` connects to it over a Unix socket and hands over its
arguments, working folder, environment and its own stdin/stdout/stderr. The runner forks
a child that becomes that run: it prints to the caller's terminal, reads the caller's
environment (API keys, ``${VAR}`` values), and its exit status is the command's. The
caller forwards Ctrl-C and ``kill`` to it; if the caller dies, the child is told and ends
its run as on SIGTERM. ADR 0031 says why a fork server and not a faster cold path.

What stays cold: every command but ``run``; ``run`` when no runner is up; Windows (no
``fork``). ``LEANLOOP_WARM=0`` turns it off, ``LEANLOOP_WARM=1`` also starts a runner in
the background when none is up (that run itself goes cold). A runner serves one Python
environment and one installed code: when leanloop or any package of the environment
changes (the *stamp* below), it refuses the run, which then goes cold, and stops. It
stops by itself after ``--idle`` seconds without a run (15 minutes by default).

This module is the client side and the wire format, and stays cheap to import (the
standard library only); :mod:`leanloop.cli.warm_server` is the runner.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import hashlib
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

__all__ = [
    "DEFAULT_IDLE",
    "WARM_ENV",
    "code_stamp",
    "receive",
    "register",
    "run_warm",
    "runtime_dir",
    "send",
    "socket_path",
]

WARM_ENV = "LEANLOOP_WARM"
"""``0``: never use a runner; ``1``: use one and start one when none is up; unset: use one
when it is up."""
DEFAULT_IDLE = 900.0
"""Seconds a runner waits for the next run before it stops."""
WARM_COMMANDS = frozenset({"run"})
"""The commands a runner serves: ``run`` is the one that imports LangChain and reads no
terminal input (``chat`` does, and a forked child is not in the terminal's foreground)."""
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_HEADER = struct.Struct("!I")
_MAX_MESSAGE = 16 * 1024 * 1024  # an environment is kilobytes; anything larger is not ours
_CONNECT_WAIT = 60.0  # seconds `warm start` waits for the runner's imports
_HANDSHAKE_WAIT = 30.0  # seconds a runner may take to fork the run and say its pid


class WireError(OSError):
    """The other side of the socket broke the protocol or went away mid-message."""


def runtime_dir(*, create: bool = False) -> Path:
    """The folder of the runners' sockets and logs, made private to the user (mode 0700)
    when ``create``: looking for a runner creates nothing."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    root = Path(base) / "leanloop" if base else _cache_root() / "run"
    if create:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return root


def _cache_root() -> Path:
    given = os.environ.get("LEANLOOP_CACHE")
    return Path(given) if given else Path.home() / ".cache" / "leanloop"


def socket_path(executable: str | None = None, prefix: str | None = None) -> Path:
    """The socket of the runner for this Python environment (one per interpreter and venv).

    The name is a digest: a socket path has at most 107 bytes, a venv path has no limit.
    """
    key = "\0".join((executable or sys.executable, prefix or sys.prefix, str(os.getuid())))
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return runtime_dir(create=False) / f"warm-{digest}.sock"


def code_stamp(package: Path | None = None) -> str:
    """A digest of the code a run would import: leanloop's files and the environment's.

    leanloop's own modules are checked file by file (an editable install changes them
    in place); the installed packages by their folders' times, which change when pip
    adds or removes a package. A runner whose stamp differs from its caller's is stale.
    """
    package = package or Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(f"{sys.version}\0{package}".encode())
    for entry in sorted(_python_files(package)):
        info = entry.stat()
        digest.update(f"{entry}\0{info.st_mtime_ns}\0{info.st_size}\n".encode())
    # Not every sys.path entry: the first is the caller's folder under `python -m`.
    for folder in sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}):
        with contextlib.suppress(OSError):
            digest.update(f"{folder}\0{os.stat(folder).st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _python_files(folder: Path) -> Iterator[Path]:
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                yield from _python_files(Path(entry.path))
            elif entry.name.endswith((".py", ".json", ".jinja", ".yaml")):
                yield Path(entry.path)


def send(sock: socket.socket, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
    """Send one message (JSON behind a 4-byte length), with ``fds`` riding along."""
    body = json.dumps(message).encode("utf-8", "surrogateescape")
    data = _HEADER.pack(len(body)) + body
    if fds:
        sent = socket.send_fds(sock, [data], list(fds))
        if sent < len(data):  # never an empty send: the peer may have read it all and gone
            sock.sendall(data[sent:])
    else:
        sock.sendall(data)


def receive(sock: socket.socket, *, max_fds: int = 0) -> tuple[dict[str, Any] | None, list[int]]:
    """One message and the descriptors sent with it; ``(None, [])`` when the peer closed.

    Raises:
        WireError: When the peer closed mid-message or sent something that is not ours.
    """
    fds: list[int] = []
    if max_fds:
        first, fds, _flags, _address = socket.recv_fds(sock, _HEADER.size, max_fds)
    else:
        first = sock.recv(_HEADER.size)
    if not first:
        return None, fds
    head = first + _read_exactly(sock, _HEADER.size - len(first))
    (size,) = _HEADER.unpack(head)
    if size > _MAX_MESSAGE:
        raise WireError(errno.EPROTO, f"a message of {size} bytes")
    body = _read_exactly(sock, size)
    try:
        message = json.loads(body.decode("utf-8", "surrogateescape"))
    except ValueError as exc:
        raise WireError(errno.EPROTO, f"not JSON: {exc}") from exc
    if not isinstance(message, dict):
        raise WireError(errno.EPROTO, "not a JSON object")
    return message, fds


def _read_exactly(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size > 0:
        chunk = sock.recv(size)
        if not chunk:
            raise WireError(errno.ECONNRESET, "the peer closed mid-message")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _streams() -> dict[str, list[Any]]:
    """How this process writes and reads text, so the child wraps the same descriptors alike."""
    described: dict[str, list[Any]] = {}
    for name in ("stdin", "stdout", "stderr"):
        stream = getattr(sys, name)
        encoding = getattr(stream, "encoding", None) or "utf-8"
        errors = getattr(stream, "errors", None) or "strict"
        described[name] = [
            encoding,
            errors,
            bool(getattr(stream, "line_buffering", False)),
            bool(getattr(stream, "write_through", False)),
        ]
    return described


def run_warm(words: Sequence[str]) -> int | None:
    """Run the command ``words`` in the warm runner; ``None``: run it here, cold.

    Cold when the command is not one a runner serves, when warm runs are off, when no
    runner is up (one is started for the next runs under ``LEANLOOP_WARM=1``) or when it
    is stale. Once the runner has taken the run there is no going back: its exit status
    is returned, whatever it is.
    """
    mode = os.environ.get(WARM_ENV, "")
    if mode == "0" or not words or words[0] not in WARM_COMMANDS or not _supported():
        return None
    path = socket_path()
    try:
        sock = _connect(path)
    except OSError:
        sock = None
    if sock is None:
        if mode == "1":
            _spawn(path, DEFAULT_IDLE)
        return None
    with sock:
        try:
            return _hand_over(sock, words, restart=mode == "1", path=path)
        except OSError:  # the runner went away before it took the run
            return None


def _supported() -> bool:
    return os.name == "posix" and hasattr(socket, "send_fds") and hasattr(os, "fork")


def _connect(path: Path) -> socket.socket | None:
    if not path.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(path))
    except OSError:
        sock.close()
        raise
    return sock


def _hand_over(
    sock: socket.socket, words: Sequence[str], *, restart: bool, path: Path
) -> int | None:
    request = {
        "stamp": code_stamp(),
        "argv": list(words),
        "argv0": sys.argv[0],
        "path": sys.path,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "umask": _umask(),
        "streams": _streams(),
    }
    sock.settimeout(_HANDSHAKE_WAIT)  # a runner that does not take the run: go cold
    send(sock, request, fds=(0, 1, 2))
    reply, _ = receive(sock)
    sock.settimeout(None)
    if reply is None or "pid" not in reply:
        if reply is not None and reply.get("stale") and restart:
            _wait_gone(path)
            _spawn(path, DEFAULT_IDLE)
        return None
    child = int(reply["pid"])
    # From here the run is the child's: whatever happens, it is never started again cold.
    with _forwarding(child):
        while True:
            try:
                message, _ = receive(sock)
            except OSError:
                message = None
            if message is None:
                print("error: the warm runner stopped during the run", file=sys.stderr)
                return 1
            if "exit" in message:
                return int(message["exit"])


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


@contextlib.contextmanager
def _forwarding(child: int) -> Iterator[None]:
    """Send Ctrl-C, SIGTERM and SIGHUP on to the run: it, not this process, handles them.

    Ctrl-Z stops the run with this process, and ``fg``/``bg`` (SIGCONT) goes on with both:
    the run is not in the terminal's process group, so only this process hears them.
    """

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    def suspend(_signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGSTOP)
        os.kill(os.getpid(), signal.SIGSTOP)  # as SIGTSTP's default action would

    def resume(_signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGCONT)

    previous = {signum: signal.signal(signum, forward) for signum in _FORWARDED}
    previous[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, suspend)
    previous[signal.SIGCONT] = signal.signal(signal.SIGCONT, resume)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _spawn(path: Path, idle: float) -> subprocess.Popen[bytes]:
    """Start a runner for ``path`` in the background, in a session of its own."""
    runtime_dir(create=True)
    log = path.with_suffix(".log").open("ab")
    with log:
        return subprocess.Popen(  # our own interpreter and module
            [sys.executable, "-m", "leanloop.cli.warm_server", str(path), "--idle", str(idle)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env={**os.environ, WARM_ENV: "0"},
        )


def _wait_gone(path: Path, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)  # a real process is letting go of its socket


def _status(path: Path) -> dict[str, Any] | None:
    try:
        sock = _connect(path)
    except OSError:
        return None
    if sock is None:
        return None
    with sock:
        sock.settimeout(5)
        send(sock, {"status": True})
        reply, _ = receive(sock)
    return reply


# The `leanloop warm` commands.


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``warm {start,stop,status}`` to ``subparsers``."""
    warm = subparsers.add_parser(
        "warm",
        help="keep a process with LangChain imported, so `run` starts in a fraction of the time",
        description="A warm runner: a background process that has imported LangChain and "
        "the providers once; `leanloop run` hands each run to it (a forked child with the "
        f"caller's folder, environment and terminal). {WARM_ENV}=0 turns it off; "
        f"{WARM_ENV}=1 starts one on the first run.",
    )
    commands = warm.add_subparsers(dest="warm_command", metavar="COMMAND", required=True)
    start = commands.add_parser("start", help="start a runner for this Python environment")
    start.add_argument(
        "--idle",
        type=float,
        default=DEFAULT_IDLE,
        metavar="SECONDS",
        help=f"stop after this long without a run (default {DEFAULT_IDLE:.0f})",
    )
    start.set_defaults(handler=_cmd_start)
    stop = commands.add_parser("stop", help="stop this environment's runner (runs in flight end)")
    stop.set_defaults(handler=_cmd_stop)
    status = commands.add_parser("status", help="show this environment's runner (exit 1: none)")
    status.set_defaults(handler=_cmd_status)


def _cmd_start(args: argparse.Namespace) -> int:
    if not _supported():
        print(
            "error: the warm runner needs fork and Unix sockets (not on this system)",
            file=sys.stderr,
        )
        return 1
    if args.idle <= 0:
        print(f"error: --idle {args.idle:g}: give a number of seconds above 0", file=sys.stderr)
        return 2
    path = socket_path()
    found = _status(path)
    if found is not None and found.get("stamp") == code_stamp():
        print(f"warm runner already up: pid {found['pid']}, {path}")
        return 0
    if found is not None:  # another code's runner: it refuses runs; make way
        _stop(path)
    process = _spawn(path, args.idle)
    deadline = time.monotonic() + _CONNECT_WAIT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            print(
                f"error: the warm runner exited at start; see {path.with_suffix('.log')}",
                file=sys.stderr,
            )
            return 1
        found = _status(path)
        if found is not None:
            print(f"warm runner up: pid {found['pid']}, {path} (stops after {args.idle:g} s idle)")
            return 0
        time.sleep(0.05)  # a real process importing LangChain
    print(f"error: the warm runner did not answer in {_CONNECT_WAIT:g} s", file=sys.stderr)
    return 1


def _stop(path: Path) -> dict[str, Any] | None:
    found = _status(path)
    if found is None:
        return None
    with contextlib.suppress(ProcessLookupError):
        os.kill(int(found["pid"]), signal.SIGTERM)
    _wait_gone(path)
    return found


def _cmd_stop(_args: argparse.Namespace) -> int:
    path = socket_path()
    found = _stop(path)
    if found is None:
        print("no warm runner is up")
        return 0
    print(f"warm runner stopped: pid {found['pid']}")
    return 0


def _cmd_status(_args: argparse.Namespace) -> int:
    path = socket_path()
    found = _status(path)
    if found is None:
        print("no warm runner is up")
        return 1
    fresh = "current" if found.get("stamp") == code_stamp() else "stale (the code changed)"
    print(
        f"warm runner up: pid {found['pid']}, {path}, {fresh}, "
        f"{_count(found.get('runs', 0), 'run')}, {found.get('running', 0)} running, "
        f"idle stop after {found.get('idle', DEFAULT_IDLE):g} s"
    )
    return 0


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
