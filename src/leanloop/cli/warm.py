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

Whom the client trusts: the socket only where no one else can have put it, a folder of the
user's own with mode 0700 (not a link), and only a runner that runs as the user (its uid
from the socket's peer credentials, ``SO_PEERCRED``). Both are checked before a byte is
sent: the request carries the caller's environment (API keys) and its terminal. A check
that fails is one ``warning`` line, and the run goes cold. A runner that does not answer
the greeting within a second (stopped, wedged) gets nothing more either: the run goes cold
and, when the runner is stopped, its socket is removed so no later run waits on it.

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
import stat
import struct
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import Any, NamedTuple

__all__ = [
    "DEFAULT_IDLE",
    "WARM_ENV",
    "add_arguments",
    "code_stamp",
    "folder_problem",
    "interpreter_state",
    "make_private",
    "peer_credentials",
    "process_state",
    "receive",
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
# Seconds a runner may take to answer the greeting, before anything else is sent: it
# only accepts and forks, so a runner slower than this is stopped (SIGSTOP) or wedged,
# and waiting longer would make every run pay for it.
_HELLO_WAIT = 1.0
_TAKE_WAIT = 30.0  # seconds from the request to the run's pid: a fork, on a busy machine
_UCRED = struct.Struct("3i")  # Linux's struct ucred: pid, uid, gid
# The limits a run inherits that a user sets (`ulimit -n`, `-t`, `-v`, ...): the child
# takes the caller's. The others (stack, locked memory, queues) are left as the runner's.
_LIMITS = ("NOFILE", "CPU", "AS", "DATA", "FSIZE", "CORE", "NPROC")


class WireError(OSError):
    """The other side of the socket broke the protocol or went away mid-message."""


def runtime_dir(*, create: bool = False) -> Path:
    """The folder of the runners' sockets and logs: ``$XDG_RUNTIME_DIR/leanloop``.

    ``XDG_RUNTIME_DIR`` counts only when it is the user's own and no one else may write
    in it (or is yet to be made): otherwise (unset, a shared folder) it is ``run`` in
    leanloop's cache folder. Either way the folder itself is checked before every use.
    With ``create`` the folder is made private (:func:`make_private`); looking for a
    runner creates nothing.

    Raises:
        PermissionError: With ``create``, when the folder is not the user's to make private.
    """
    base = os.environ.get("XDG_RUNTIME_DIR")
    root = Path(base) / "leanloop" if base and _own_base(Path(base)) else _cache_root() / "run"
    if create:
        problem = make_private(root)
        if problem is not None:
            raise PermissionError(errno.EPERM, problem)
    return root


def _own_base(folder: Path) -> bool:
    """Whether ``folder`` is absolute, and the user's and writable by no one else or not
    there yet (then it is made by the user)."""
    if not folder.is_absolute():
        return False
    try:
        info = folder.stat()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return info.st_uid == os.getuid() and not info.st_mode & 0o022


def folder_problem(folder: Path, *, uid: int | None = None) -> str | None:
    """Why ``folder`` may not hold a runner's socket; ``None`` when it may.

    It must be a folder (not a link to one) of the user's own (``uid``, default the
    process's) with mode 0700: then no one else can have put a socket in it, or put a
    folder of theirs in its place.
    """
    uid = os.getuid() if uid is None else uid
    try:
        info = os.lstat(folder)
    except OSError as exc:
        return f"{folder}: {exc.strerror}"
    if stat.S_ISLNK(info.st_mode):
        return f"{folder} is a symbolic link"
    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder"
    if info.st_uid != uid:
        return f"{folder} belongs to uid {info.st_uid}, not to you (uid {uid})"
    if info.st_mode & 0o077:
        return f"{folder} has mode {stat.S_IMODE(info.st_mode):04o}, not 0700"
    return None


def make_private(folder: Path) -> str | None:
    """Create ``folder`` with mode 0700, or make the user's existing one so; ``None`` then.

    A folder of another user, or a link, is left as it is and its problem returned: it
    is never trusted, and the runner and its callers go without it.
    """
    folder.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        folder.mkdir(mode=0o700)
    # Through a descriptor, not the name: a link put in its place is not followed.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            info = os.fstat(fd)
            if info.st_uid == os.getuid() and stat.S_IMODE(info.st_mode) != 0o700:
                os.fchmod(fd, 0o700)  # ours, made by an older leanloop or another umask
        finally:
            os.close(fd)
    return folder_problem(folder)


def peer_credentials(sock: socket.socket) -> tuple[int, int] | None:
    """The ``(pid, uid)`` of the process at the other end of a Unix socket.

    ``None`` where the system does not say (no ``SO_PEERCRED``: not Linux); there no
    runner is used at all, since its caller could not check it.
    """
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    raw = sock.getsockopt(socket.SOL_SOCKET, option, _UCRED.size)
    pid, uid, _gid = _UCRED.unpack(raw)
    return pid, uid


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


def interpreter_state() -> dict[str, Any]:
    """What this interpreter fixed at its start that a forked child cannot change.

    The hash seed (``PYTHONHASHSEED``), the warning options (``-W``, ``PYTHONWARNINGS``),
    the ``-X`` options and the flags that change what code does (``-O``, dev mode, UTF-8
    mode, ``-b``). A caller whose state differs from the runner's runs cold.
    """
    seed = None if sys.flags.ignore_environment else os.environ.get("PYTHONHASHSEED")
    return {
        "hashseed": "random" if seed in (None, "", "random") else seed,
        "warnoptions": list(sys.warnoptions),
        "xoptions": {str(key): str(value) for key, value in sys._xoptions.items()},
        "flags": [
            sys.flags.optimize,
            sys.flags.dev_mode,
            sys.flags.utf8_mode,
            sys.flags.bytes_warning,
        ],
    }


def process_state() -> dict[str, Any]:
    """What a run inherits from its process: limits (``ulimit``), niceness, interpreter.

    The request carries the caller's; the runner's child takes it on, or the run goes
    cold when it cannot (:mod:`leanloop.cli.warm_server`).
    """
    import resource  # noqa: PLC0415 - POSIX only, as warm runs are

    limits: dict[str, list[int]] = {}
    for name in _LIMITS:
        which = getattr(resource, f"RLIMIT_{name}", None)
        if which is not None:
            limits[name] = list(resource.getrlimit(which))
    return {
        "limits": limits,
        "nice": os.getpriority(os.PRIO_PROCESS, 0),
        "interpreter": interpreter_state(),
    }


def run_warm(words: Sequence[str], *, hello_wait: float = _HELLO_WAIT) -> int | None:
    """Run the command ``words`` in the warm runner; ``None``: run it here, cold.

    Cold when the command is not one a runner serves, when warm runs are off, when no
    runner is up (one is started for the next runs under ``LEANLOOP_WARM=1``), when it is
    stale, not to be trusted (one line says why), stopped or wedged (it gets
    ``hello_wait`` seconds to answer), or cannot take on this process's state (limits,
    niceness, interpreter). Once the runner has taken the run there is no going back:
    the run's exit status is returned, whatever it is.
    """
    mode = os.environ.get(WARM_ENV, "")
    if mode == "0" or not words or words[0] not in WARM_COMMANDS or not _supported():
        return None
    if not _stdio_open():
        return None
    path = socket_path()
    if not os.path.lexists(path):
        if mode == "1":
            _start_for_later(path)
        return None
    # Made before connecting: a runner waits on no caller's work (the stamp reads files).
    request = _request(words)
    try:
        runner = _connect(path, wait=hello_wait)
    except _NotUsed as exc:
        _say_cold(exc)
        return None
    except OSError:  # no one listens: a socket left by a runner that died
        if mode == "1":
            _start_for_later(path)
        return None
    try:
        with runner.sock:
            return _hand_over(runner, request, restart=mode == "1", path=path)
    except _NotUsed as exc:
        _say_cold(exc)
        return None
    except OSError:  # the runner went away before it took the run
        return None


def _say_cold(reason: Exception) -> None:
    """The one line a run that goes cold for a reason worth knowing prints."""
    print(f"leanloop: warning: not using the warm runner: {reason}; running cold", file=sys.stderr)


def _supported() -> bool:
    return (
        os.name == "posix"
        and hasattr(socket, "send_fds")
        and hasattr(os, "fork")
        and hasattr(socket, "SO_PEERCRED")  # a caller must be able to check its runner
    )


def _stdio_open() -> bool:
    """Whether stdin, stdout and stderr are all there to hand over.

    A descriptor closed at start (``>&-``) would be taken by the socket itself, and the
    run would write its answer into it: such a run goes cold, where the missing stream
    is handled as the command handles it (:mod:`leanloop.cli.stdio`).
    """
    for fd, stream in enumerate((sys.stdin, sys.stdout, sys.stderr)):
        if stream is None:
            return False
        try:
            os.fstat(fd)
        except OSError:
            return False
    return True


class _NotUsed(Exception):  # internal: never leaves this module
    """The runner is not to be trusted (not the user's own) or does not answer: nothing
    of the caller's is sent to it. The message says why, for one warning line."""


class _Runner(NamedTuple):
    """A connection to a runner known to be the user's, its pid and its socket's inode."""

    sock: socket.socket
    pid: int
    inode: int


def _connect(path: Path, *, wait: float) -> _Runner:
    """A connection to the runner on ``path``, once it is known to be the user's own.

    Raises:
        _NotUsed: When the folder is not private or the listener is another user's.
        OSError: When no one listens.
    """
    problem = folder_problem(path.parent)
    if problem is not None:
        raise _NotUsed(f"{problem} (another user could listen there)")
    inode = os.lstat(path).st_ino
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(wait)
        sock.connect(str(path))
        credentials = peer_credentials(sock)
    except TimeoutError:  # a full backlog: a runner that has accepted no one for a while
        sock.close()
        raise _NotUsed(f"{path} accepted no connection in {wait:g} s") from None
    except OSError:
        sock.close()
        raise
    if credentials is None or credentials[1] != os.getuid():
        sock.close()
        who = "an unknown user" if credentials is None else f"uid {credentials[1]}"
        raise _NotUsed(f"{path} is served by {who}, not by you (uid {os.getuid()})")
    return _Runner(sock, credentials[0], inode)


def _request(words: Sequence[str]) -> dict[str, Any]:
    return {
        "stamp": code_stamp(),
        "argv": list(words),
        "argv0": sys.argv[0],
        "path": sys.path,
        "cwd": os.getcwd(),
        "env": dict(os.environ),
        "umask": _umask(),
        "streams": _streams(),
        "process": process_state(),
    }


def _greet(runner: _Runner, path: Path) -> bool:
    """Say hello and wait (the socket's timeout) for the runner's answer; ``False`` when it
    closed the connection instead.

    Nothing of the caller's is sent before the answer. A runner that does not answer in
    time is not waited on again: when it is stopped, its socket is removed (the next runs
    do not find it) and it is asked to stop, which it does once it is continued.

    Raises:
        _NotUsed: When the runner did not answer in time.
    """
    wait = runner.sock.gettimeout() or 0.0
    send(runner.sock, {"hello": 1})
    try:
        greeting, _ = receive(runner.sock)
    except TimeoutError:
        if _stopped(runner.pid):
            _retire(path, runner)
            raise _NotUsed(f"its process {runner.pid} is stopped; its socket is removed") from None
        raise _NotUsed(f"its process {runner.pid} did not answer in {wait:g} s") from None
    return greeting is not None and "hello" in greeting


def _stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (SIGSTOP, a debugger): ``/proc``, so Linux only."""
    try:
        # "pid (command) S ...": the state letter follows the last ")".
        state = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return False
    return bool(state) and state[0] in {"T", "t"}


def _retire(path: Path, runner: _Runner) -> None:
    """Stop using a stopped runner: its socket goes, and it ends once it is continued."""
    with contextlib.suppress(OSError):
        if os.lstat(path).st_ino == runner.inode:  # not a newer runner's socket
            path.unlink()
    with contextlib.suppress(OSError):  # SIGTERM: no new runs, and those in flight end
        os.kill(runner.pid, signal.SIGTERM)


def _hand_over(
    runner: _Runner, request: dict[str, Any], *, restart: bool, path: Path
) -> int | None:
    sock = runner.sock
    if not _greet(runner, path):
        return None
    sock.settimeout(_TAKE_WAIT)  # a runner that does not take the run: go cold
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
    # Its exit status comes from the child itself, so a runner that dies meanwhile does
    # not change it; the runner's own word comes when a signal ended the child.
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


def _start_for_later(path: Path) -> None:
    """Start a runner for the next runs (``LEANLOOP_WARM=1``); a folder not to be trusted is
    one warning line, and no runner."""
    try:
        _spawn(path, DEFAULT_IDLE)
    except PermissionError as exc:
        print(f"leanloop: warning: no warm runner started: {exc.strerror}", file=sys.stderr)


def _spawn(path: Path, idle: float) -> subprocess.Popen[bytes]:
    """Start a runner for ``path`` in the background, in a session of its own.

    Raises:
        PermissionError: When the runtime folder is not the user's to make private.
    """
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


def _status(path: Path, *, wait: float = 5.0) -> dict[str, Any] | None:
    """The runner's own account of itself; ``None`` when none is up or answers (or one is
    not to be trusted: a warning line says why)."""
    if not os.path.lexists(path):
        return None
    try:
        runner = _connect(path, wait=wait)
        with runner.sock:
            if not _greet(runner, path):
                return None
            send(runner.sock, {"status": True})
            reply, _ = receive(runner.sock)
    except _NotUsed as exc:
        print(f"leanloop: warning: not using the warm runner: {exc}", file=sys.stderr)
        return None
    except OSError:
        return None
    return reply


# The `leanloop warm` commands.


def add_arguments(warm: argparse.ArgumentParser) -> None:
    """Build the parser of ``warm {start,stop,status}``, each with its handler.

    Args:
        warm: The subparser the main parser made for ``warm`` (its row is in
            :data:`leanloop.cli.command.COMMANDS`).
    """
    warm.description = (
        "A warm runner: a background process that has imported LangChain and "
        "the providers once; `leanloop run` hands each run to it (a forked child with the "
        f"caller's folder, environment and terminal). {WARM_ENV}=0 turns it off; "
        f"{WARM_ENV}=1 starts one on the first run."
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
            "error: the warm runner needs fork, Unix sockets and their peer credentials "
            "(SO_PEERCRED; not on this system)",
            file=sys.stderr,
        )
        return 1
    if args.idle <= 0:
        print(f"error: --idle {args.idle:g}: give a number of seconds above 0", file=sys.stderr)
        return 2
    path = socket_path()
    problem = make_private(path.parent)
    if problem is not None:
        print(f"error: the warm runner's folder is not private: {problem}", file=sys.stderr)
        return 1
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
