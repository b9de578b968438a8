"""The warm runner's process: LangChain imported once, one forked child per ``leanloop run``.

Started by ``leanloop warm start`` (or the first run under ``LEANLOOP_WARM=1``) as
``python -m leanloop.cli.warm_server SOCKET --idle SECONDS``, in a session of its own. It
computes its code stamp, imports what ``run`` needs, listens on ``SOCKET`` and then, for
each caller (:mod:`leanloop.cli.warm` is the client):

1. checks that the caller is the user (``SO_PEERCRED``), answers its greeting, and reads
   the request and the caller's stdin/stdout/stderr descriptors;
2. refuses it when the caller's stamp differs (the code changed since the imports), and
   stops taking runs; sends it cold when a child could not take on the caller's process
   state (a hard limit above the runner's, a higher priority, another hash seed or
   warning options: :func:`cannot_match`); starts nothing for a caller that already left;
3. forks; the child takes the caller's limits, niceness, descriptors, folder,
   environment (and ``TZ``), umask and ``sys.path`` in a session of its own, sends its
   pid (the caller forwards signals to it), runs :func:`leanloop.cli.command.main` as a
   cold process would, and sends its own exit status before it exits;
4. once it has reaped the child, sends its status too (``128 + N`` for a signal, as a
   shell says it): the caller takes the first, so a runner killed meanwhile does not
   change the status of a run that finished.

The process stays single-threaded so that forking it is safe; each child is a new
process, so no state of one run reaches another. It stops after ``--idle`` seconds
without a run, on SIGTERM (``leanloop warm stop``), or once stale; in each case only
after its children have ended, since their callers wait for their exit status.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib
import io
import logging
import os
import select
import selectors
import signal
import socket
import sys
import threading
import time
import traceback
from pathlib import Path
from types import FrameType
from typing import Any

from leanloop.cli.stdio import run_as_command
from leanloop.cli.warm import (
    DEFAULT_IDLE,
    code_stamp,
    make_private,
    peer_credentials,
    process_state,
    receive,
    send,
)

__all__ = ["cannot_match", "main", "take_process_state"]

_log = logging.getLogger("leanloop.warm")

# What `run` imports on its way to its answer: leanloop's modules, the providers' chat
# model classes, and what those import only on their first request (the OpenAI client's
# resources and its own httpcore, anyio's backend, LangChain's tracers). A module that is
# not installed (a provider, a name of another release) is skipped.
_PRELOAD = (
    "leanloop.cli.command",
    "leanloop.cli.progress",
    "leanloop.cli.htmlreport",
    "leanloop.agent.runnable",
    "leanloop.models",
    "leanloop.sessions.configurable",
    "langchain_openai",
    "langchain_ollama",
    "langchain_anthropic",
    "httpcore2",
    "truststore",
    "anyio._backends._asyncio",
    "openai.resources.chat",
    "openai.lib.streaming.chat",
    "langchain_core.tracers.langchain",
    "langchain_core.tracers.stdout",
    "langchain_core.tracers.run_collector",
    "langchain_core.messages.block_translators.langchain_v0",
    "encodings.utf_8_sig",
)
# Modules that cache environment variables on first read: the child clears them after
# taking the caller's environment (the runner never ran a model, but a cache is cheap to
# clear and expensive to get wrong: a tracing key from another shell).
_ENV_CACHES = ("langsmith.utils", "langchain_core.env")
# Seconds a caller may take between its messages: it sends each at once, so one that is
# silent longer (stopped, wedged) is let go rather than keep every other caller waiting.
_READ_WAIT = 2.0
_UNLIMITED = -1  # resource.RLIM_INFINITY, a number on every POSIX system Python knows


def main(argv: list[str] | None = None) -> int:
    """Run a warm runner on the socket named in ``argv``; the exit code."""
    parser = argparse.ArgumentParser(prog="python -m leanloop.cli.warm_server")
    parser.add_argument("socket", type=Path)
    parser.add_argument("--idle", type=float, default=DEFAULT_IDLE)
    parser.add_argument("--stamp", help=argparse.SUPPRESS)  # tests: claim other code
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s warm[%(process)d] %(message)s")
    stamp = args.stamp or code_stamp()  # before the imports: the code they load
    started = time.monotonic()
    for name in _PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    from leanloop.cli.command import _parser  # noqa: PLC0415 - its subcommands' modules
    from leanloop.httpclients import shared_ssl_context  # noqa: PLC0415

    _parser()
    shared_ssl_context()  # the CA bundle, loaded once for every child
    if threading.active_count() > 1:  # a thread now would be half-copied into each child
        _log.warning("imports started %d threads; forks may hang", threading.active_count() - 1)
    _log.info("imports done in %.2f s", time.monotonic() - started)
    return _Runner(args.socket, stamp, args.idle).serve()


class _Runner:
    """The accept-fork-reap loop (one thread; signals arrive through a wakeup socket)."""

    def __init__(self, path: Path, stamp: str, idle: float) -> None:
        self.path = path
        self.stamp = stamp
        self.idle = idle
        self.state = process_state()  # the runner's, which every child starts from
        self.privileged = os.geteuid() == 0  # may raise limits and priority
        self.children: dict[int, socket.socket] = {}
        self.runs = 0
        self.listening = True
        self.last = time.monotonic()
        self.selector = selectors.DefaultSelector()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.wake_read, self.wake_write = socket.socketpair()

    def serve(self) -> int:
        problem = make_private(self.path.parent)
        if problem is not None:  # a socket there could be another user's: callers refuse it
            _log.error("not listening: %s", problem)
            return 1
        if not self._bind():
            return 0
        for end in (self.wake_read, self.wake_write):
            end.setblocking(False)
        signal.set_wakeup_fd(self.wake_write.fileno())
        signal.signal(signal.SIGCHLD, _ignore)  # a handler, so the wakeup socket hears it
        signal.signal(signal.SIGTERM, self._on_stop)
        signal.signal(signal.SIGINT, self._on_stop)
        self.selector.register(self.listener, selectors.EVENT_READ)
        self.selector.register(self.wake_read, selectors.EVENT_READ)
        _log.info("listening on %s (pid %d)", self.path, os.getpid())
        try:
            while self.listening or self.children:
                timeout = None
                if not self.children:
                    timeout = self.last + self.idle - time.monotonic()
                    if timeout <= 0:
                        _log.info("idle for %.0f s: stopping", self.idle)
                        break
                for key, _ in self.selector.select(timeout):
                    if key.fileobj is self.listener:
                        self._accept()
                    else:
                        with contextlib.suppress(BlockingIOError):
                            while self.wake_read.recv(512):
                                pass
                self._reap()
        finally:
            self._stop_listening()
        return 0

    def _bind(self) -> bool:
        """Listen on the socket; ``False`` when another runner already does."""
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            self.listener.bind(str(self.path))
        except OSError:
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(self.path))
            except OSError:  # a socket file left by a runner that died: take its place
                self.path.unlink(missing_ok=True)
                self.listener.bind(str(self.path))
            else:
                _log.info("another runner listens on %s", self.path)
                return False
            finally:
                probe.close()
        os.chmod(self.path, 0o600)
        self.listener.listen(16)
        self.inode = os.stat(self.path).st_ino
        return True

    def _on_stop(self, signum: int, _frame: FrameType | None) -> None:
        _log.info("signal %d: no new runs; %d in flight", signum, len(self.children))
        self._stop_listening()

    def _stop_listening(self) -> None:
        if not self.listening:
            return
        self.listening = False
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(self.listener)
        self.listener.close()
        # Only our own file: a newer runner may already listen under the same name.
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self.inode:
                self.path.unlink()

    def _accept(self) -> None:
        if not self.listening:
            return
        conn, _ = self.listener.accept()
        fds: list[int] = []
        try:
            conn.settimeout(_READ_WAIT)
            if not _same_user(conn):  # before reading: another user's message is not read
                raise ConnectionError("a caller of another user")
            request, fds = receive(conn, max_fds=3)
            if request is not None and request.get("hello"):
                send(conn, {"hello": os.getpid()})  # alive: the caller sends its request now
                request, more = receive(conn, max_fds=3)
                fds += more
            if request is None:
                raise ConnectionError("no request")
            if request.get("status"):
                send(conn, self._status())
            elif request.get("stamp") != self.stamp:
                _log.info("a caller with other code: stale, no new runs")
                send(conn, {"stale": True})
                self._stop_listening()
            elif len(fds) == 3 and self._may_start(conn, request):
                self._fork(conn, fds, request)
                return
        except OSError as exc:
            _log.info("a caller went away: %s", exc)
        finally:
            for fd in fds:
                os.close(fd)
        conn.close()

    def _may_start(self, conn: socket.socket, request: dict[str, Any]) -> bool:
        """Whether to fork the run: not for a caller gone, nor one whose state a child
        cannot take on (that one is told, and runs cold)."""
        reason = cannot_match(request.get("process"), self.state, privileged=self.privileged)
        if reason is not None:
            _log.info("a run goes cold: %s", reason)
            send(conn, {"cold": reason})
            return False
        if _caller_gone(conn):  # it gave up waiting (a runner stopped for a while)
            _log.info("a caller left before its run started: not started")
            return False
        return True

    def _status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "stamp": self.stamp,
            "runs": self.runs,
            "running": len(self.children),
            "idle": self.idle,
        }

    def _fork(self, conn: socket.socket, fds: list[int], request: dict[str, Any]) -> None:
        pid = os.fork()
        if pid == 0:  # the child: never returns; it sends its pid itself, then its status
            _become_run(
                conn, list(fds), request, closing=(self.listener, self.wake_read, self.wake_write)
            )
        self.runs += 1
        self.children[pid] = conn
        conn.settimeout(None)

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            code = os.waitstatus_to_exitcode(status)
            with contextlib.suppress(OSError):
                send(conn, {"exit": 128 - code if code < 0 else code})
            conn.close()
            self.last = time.monotonic()


def _ignore(_signum: int, _frame: FrameType | None) -> None:
    """A handler that does nothing: the wakeup socket already says a child ended."""


def _same_user(conn: socket.socket) -> bool:
    credentials = peer_credentials(conn)
    return credentials is not None and credentials[1] == os.getuid()


def _caller_gone(conn: socket.socket) -> bool:
    """Whether the caller closed its end (it sends nothing after its request)."""
    poller = select.poll()
    poller.register(conn, select.POLLIN)
    for _fd, events in poller.poll(0):
        if events & (select.POLLHUP | select.POLLERR):
            return True
        if events & select.POLLIN:
            try:
                return conn.recv(1, socket.MSG_PEEK) == b""  # readable: never waits
            except OSError:
                return True
    return False


def cannot_match(caller: Any, here: dict[str, Any], *, privileged: bool) -> str | None:
    """Why a child of this runner cannot be the caller's process; ``None`` when it can.

    ``caller`` and ``here`` are :func:`leanloop.cli.warm.process_state` of the caller and
    of the runner. A forked child keeps the interpreter's start-up state (hash seed,
    warning options, flags); it may lower its limits and its priority, and raise a soft
    limit up to the hard one, but only a ``privileged`` process raises a hard limit or
    its priority (a lower niceness).
    """
    if not isinstance(caller, dict):
        return "the caller sent no process state"
    theirs, ours = caller.get("interpreter", {}), here["interpreter"]
    for key in sorted(set(theirs) | set(ours)):
        if theirs.get(key) != ours.get(key):
            return f"the interpreter's {key} differs from the runner's"
    for name, limit in sorted(caller.get("limits", {}).items()):
        own = here["limits"].get(name)
        if own is None:
            return f"RLIMIT_{name} is not known here"
        if not privileged and _above(int(limit[1]), int(own[1])):
            return f"the hard RLIMIT_{name} {limit[1]} is above the runner's {own[1]}"
    if not privileged and int(caller.get("nice", 0)) < int(here["nice"]):
        return f"niceness {caller['nice']} is below the runner's {here['nice']}"
    return None


def _above(limit: int, ceiling: int) -> bool:
    """Whether ``limit`` is above ``ceiling``, either of them unlimited (``-1``)."""
    if ceiling == _UNLIMITED:
        return False
    return limit == _UNLIMITED or limit > ceiling


def take_process_state(state: dict[str, Any]) -> str | None:
    """Give this forked child the caller's limits and niceness; why not, when it cannot.

    Called before the run starts, so a failure still sends the run cold.
    :func:`cannot_match` has ruled out what is known to fail; this is the system's word.
    """
    import resource  # noqa: PLC0415 - POSIX only, as the runner is

    try:
        for name, (soft, hard) in sorted(state["limits"].items()):
            resource.setrlimit(getattr(resource, f"RLIMIT_{name}"), (int(soft), int(hard)))
        nice = int(state["nice"])
        if os.getpriority(os.PRIO_PROCESS, 0) != nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
    except (OSError, ValueError, AttributeError, KeyError, TypeError) as exc:
        return f"the caller's limits or niceness: {exc!r}"
    return None


def _become_run(
    conn: socket.socket,
    fds: list[int],
    request: dict[str, Any],
    *,
    closing: tuple[socket.socket, ...],
) -> None:
    """Turn this forked child into the caller's ``leanloop run``; exits, never returns."""
    code = 1
    done: threading.Event | None = None
    try:
        signal.set_wakeup_fd(-1)
        for end in closing:
            end.close()
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        logging.getLogger().handlers.clear()  # the runner's log lines are not the run's
        logging.getLogger().setLevel(logging.WARNING)
        conn.settimeout(None)  # the runner's read limit is not the run's: it may take hours
        reason = take_process_state(request["process"])
        if reason is not None:  # nothing is taken yet: the caller runs it cold
            send(conn, {"cold": reason})
            os._exit(0)
        # A session of its own: a signal to the runner's process group (or from a tool
        # to its own, `kill 0`) reaches this run alone. The caller's session cannot be
        # joined; the caller forwards what its terminal sends.
        with contextlib.suppress(OSError):
            os.setsid()
        send(conn, {"pid": os.getpid()})
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            if fd > 2:
                os.close(fd)
        _take_streams(request["streams"])
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        time.tzset()  # local time as the caller's TZ says, not as the runner's did
        os.umask(int(request["umask"]))
        sys.path[:] = request["path"]
        sys.argv = [request["argv0"], *request["argv"]]
        _forget_environment_caches()
        done = _watch_caller(conn)
        from leanloop.cli.command import main as cli_main  # noqa: PLC0415 - preloaded

        code = run_as_command(cli_main, request["argv"])  # stdout's failures as cold
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:  # a cold process would print it too, then exit 1
        traceback.print_exc()
    finally:
        if done is not None:
            done.set()  # the caller closing after our status is no reason to stop
        _exit(code, conn)


def _take_streams(streams: dict[str, list[Any]]) -> None:
    """Wrap fds 0-2 as the caller's interpreter did (encoding, errors, buffering)."""
    for fd, name in enumerate(("stdin", "stdout", "stderr")):
        encoding, errors, line_buffering, write_through = streams[name]
        raw: Any
        if fd == 0:
            raw = open(fd, "rb", closefd=False)  # noqa: SIM115 - lives as long as the process
        elif write_through:  # PYTHONUNBUFFERED: no buffer under the text layer either
            raw = open(fd, "wb", buffering=0, closefd=False)  # noqa: SIM115
        else:
            raw = open(fd, "wb", closefd=False)  # noqa: SIM115
        wrapper = io.TextIOWrapper(
            raw,
            encoding=encoding,
            errors=errors,
            newline="\n",
            line_buffering=line_buffering,
            write_through=write_through,
        )
        setattr(sys, name, wrapper)
        setattr(sys, f"__{name}__", wrapper)


def _forget_environment_caches() -> None:
    for name in _ENV_CACHES:
        module = sys.modules.get(name)
        for value in vars(module).values() if module is not None else ():
            clear = getattr(value, "cache_clear", None)
            if callable(clear):
                clear()


def _watch_caller(conn: socket.socket) -> threading.Event:
    """End the run as on SIGTERM when the caller goes away (killed, its terminal closed)."""
    done = threading.Event()

    def watch() -> None:
        with contextlib.suppress(OSError):
            while conn.recv(64):
                pass
        if not done.is_set():
            os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="leanloop-warm-caller", daemon=True).start()
    return done


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None or isinstance(exc.code, int):
        return exc.code or 0
    print(exc.code, file=sys.stderr)
    return 1


def _exit(code: int, conn: socket.socket | None = None) -> None:
    """Leave as an interpreter does (exit handlers, flushed streams), never via the runner's
    own frames: unwinding them would run the runner's cleanup in the child.

    The status goes to the caller over ``conn`` first, from this process: the runner may
    be gone by now (killed), and the run's status is the run's, not the runner's.
    """
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    if conn is not None:
        with contextlib.suppress(OSError):
            send(conn, {"exit": code})
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())
