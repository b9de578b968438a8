"""The warm runner's process: LangChain imported once, one forked child per ``leanloop run``.

Started by ``leanloop warm start`` (or the first run under ``LEANLOOP_WARM=1``) as
``python -m leanloop.cli.warm_server SOCKET --idle SECONDS``, in a session of its own. It
computes its code stamp, imports what ``run`` needs, listens on ``SOCKET`` and then, for
each caller (:mod:`leanloop.cli.warm` is the client):

1. reads the request and the caller's stdin/stdout/stderr descriptors;
2. refuses it when the caller's stamp differs (the code changed since the imports), and
   stops taking runs;
3. forks; the child takes the caller's descriptors, folder, environment, umask and
   ``sys.path``, and runs :func:`leanloop.cli.command.main` as a cold process would;
4. sends the child's pid (the caller forwards signals to it) and, once it has reaped
   the child, its exit status (``128 + N`` for a signal, as a shell says it).

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
import selectors
import signal
import socket
import struct
import sys
import threading
import time
import traceback
from pathlib import Path
from types import FrameType
from typing import Any

from leanloop.cli.warm import DEFAULT_IDLE, code_stamp, receive, send

__all__ = ["main"]

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
_PEERCRED = struct.Struct("3i")


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
        self.children: dict[int, socket.socket] = {}
        self.runs = 0
        self.listening = True
        self.last = time.monotonic()
        self.selector = selectors.DefaultSelector()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.wake_read, self.wake_write = socket.socketpair()

    def serve(self) -> int:
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
            conn.settimeout(10)  # a caller that connects and says nothing is not waited on
            request, fds = receive(conn, max_fds=3)
            if request is None or not self._same_user(conn):
                raise ConnectionError("no request")
            if request.get("status"):
                send(conn, self._status())
            elif request.get("stamp") != self.stamp:
                _log.info("a caller with other code: stale, no new runs")
                send(conn, {"stale": True})
                self._stop_listening()
            elif len(fds) == 3:
                self._fork(conn, fds, request)
                return
        except OSError as exc:
            _log.info("a caller went away: %s", exc)
        finally:
            for fd in fds:
                os.close(fd)
        conn.close()

    def _same_user(self, conn: socket.socket) -> bool:
        if not hasattr(socket, "SO_PEERCRED"):  # the socket's folder is the user's alone
            return True
        raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _PEERCRED.size)
        _pid, uid, _gid = _PEERCRED.unpack(raw)
        return bool(uid == os.getuid())

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
        if pid == 0:  # the child: never returns
            _become_run(
                conn, list(fds), request, closing=(self.listener, self.wake_read, self.wake_write)
            )
        self.runs += 1
        self.children[pid] = conn
        conn.settimeout(None)
        with contextlib.suppress(OSError):
            send(conn, {"pid": pid})

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


def _become_run(
    conn: socket.socket,
    fds: list[int],
    request: dict[str, Any],
    *,
    closing: tuple[socket.socket, ...],
) -> None:
    """Turn this forked child into the caller's ``leanloop run``; exits, never returns."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        for end in closing:
            end.close()
        for signum in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        logging.getLogger().handlers.clear()  # the runner's log lines are not the run's
        logging.getLogger().setLevel(logging.WARNING)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            if fd > 2:
                os.close(fd)
        _take_streams(request["streams"])
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.umask(int(request["umask"]))
        sys.path[:] = request["path"]
        sys.argv = [request["argv0"], *request["argv"]]
        _forget_environment_caches()
        done = _watch_caller(conn)
        from leanloop.cli.command import main as cli_main  # noqa: PLC0415 - preloaded

        code = cli_main(request["argv"])
        done.set()
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:  # a cold process would print it too, then exit 1
        traceback.print_exc()
    finally:
        _exit(code)


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


def _exit(code: int) -> None:
    """Leave as an interpreter does (exit handlers, flushed streams), never via the runner's
    own frames: unwinding them would run the runner's cleanup in the child."""
    with contextlib.suppress(Exception):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


if __name__ == "__main__":
    raise SystemExit(main())
