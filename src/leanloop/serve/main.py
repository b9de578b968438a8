"""``leanloop serve agents.yaml``: parse the options, load the agents, run uvicorn.

The bearer token comes from ``LEANLOOP_SERVE_TOKEN``, never from the command line
(where ``ps`` shows it to every user of the machine). Without one the server refuses to
start, unless it is bound to a loopback address and ``--no-auth`` says so explicitly.

With ``--workers N`` (N > 1) uvicorn runs N processes on one socket; each builds its app
with :func:`worker_app` from the command line the parent passes in
``LEANLOOP_SERVE_ARGV``. A session's turns may then be served by any worker, so the
agents' session store must be PostgreSQL (SQLite is refused before anything starts).

The exit status: 0 after a clean shutdown (SIGTERM, Ctrl-C); 1 when the server cannot
listen (the port is taken, the address is not this machine's) or fails to start; 2 for
bad input (an option, the agents file, the token), one line per problem, before
anything listens.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import json
import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from leanloop.exceptions import LeanloopError, SpecError, SpecIssue
from leanloop.redact import redact_logs
from leanloop.serve.errors import ServeSetupError
from leanloop.serve.limits import ServeSettings, check_seconds, is_loopback

if TYPE_CHECKING:
    from fastapi import FastAPI

    from leanloop.agent import LLMAgent

__all__ = [
    "ARGV_ENV",
    "TOKEN_ENV",
    "check_workers_store",
    "load_served_agents",
    "serve_main",
    "settings_from",
    "worker_app",
]

TOKEN_ENV = "LEANLOOP_SERVE_TOKEN"  # noqa: S105 - the variable's name, not a secret
"""The environment variable holding the bearer token clients must send."""

ARGV_ENV = "LEANLOOP_SERVE_ARGV"
"""The variable through which ``--workers`` passes the command line (JSON) to each worker."""

_FAILED = 1
_BAD_INPUT = 2
_WORKER_APP = "leanloop.serve.main:worker_app"
_LOG_FORMAT = "%(levelname)s: %(name)s: %(message)s"
_HTTP_LOGS = frozenset({"httpx", "httpcore"})
_SHARED_STORES = frozenset({"postgres", "postgresql"})
_LAST_PORT = 65_535
_SERVE_EXTRA = "leanloop serve needs its extra: pip install 'leanloop[serve]'"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="leanloop serve",
        description=(
            "Serve the agents of an agents file over OpenAI's chat-completions API "
            "(POST /v1/chat/completions, GET /v1/models, GET /healthz). Clients send "
            f"'Authorization: Bearer <the token in {TOKEN_ENV}>'."
        ),
        epilog=(
            "exit status: 0 stopped cleanly (SIGTERM, Ctrl-C); 1 cannot listen (the port "
            "is taken) or failed to start; 2 bad input (an option, the file, the token)"
        ),
    )
    parser.add_argument("file", help="the agents file")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port to bind (8080)")
    parser.add_argument(
        "--agent",
        action="append",
        dest="agents",
        metavar="NAME",
        help="serve only this agent (repeatable; default: every agent of the file)",
    )
    parser.add_argument(
        "--no-auth",
        action="store_true",
        help=f"serve without a bearer token (only on a loopback --host; else set {TOKEN_ENV})",
    )
    parser.add_argument(
        "--max-concurrency",
        type=int,
        default=8,
        metavar="N",
        help="runs at once; a request beyond is answered 429 (8)",
    )
    parser.add_argument(
        "--deadline",
        type=float,
        default=300.0,
        metavar="S",
        help="seconds a request may take, streaming included; past it, 504 (300)",
    )
    parser.add_argument(
        "--max-body-bytes",
        type=int,
        default=1_048_576,
        metavar="B",
        help="largest request body; a larger one is answered 413 (1048576)",
    )
    parser.add_argument(
        "--body-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds a request body may take to arrive; past it, 408 and the connection "
        "is closed (30)",
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=30.0,
        metavar="S",
        help="on SIGTERM/Ctrl-C, seconds to let running requests finish before they are "
        "cancelled (30)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="server processes on the one port; above 1 the agents' session store "
        "(sessions.store) must be PostgreSQL (1)",
    )
    return parser


def settings_from(args: argparse.Namespace, environ: Mapping[str, str]) -> ServeSettings:
    """The server's settings from parsed options and the environment.

    Raises:
        ServeSetupError: No token and auth not explicitly off on loopback, ``--no-auth``
            on an address other machines can reach, a token no client could send, or a
            limit, ``--grace`` or ``--port`` out of range.
    """
    check_seconds("--grace", args.grace, zero=True)
    if not 0 <= args.port <= _LAST_PORT:
        msg = f"--port must be 0 to {_LAST_PORT} (got {args.port})"
        raise ServeSetupError(msg)
    token = environ.get(TOKEN_ENV) or None
    if args.no_auth:
        if not is_loopback(args.host):
            msg = (
                f"--no-auth is refused on {args.host}: other machines can reach it. "
                f"Bind 127.0.0.1, or set {TOKEN_ENV} and drop --no-auth"
            )
            raise ServeSetupError(msg)
        token = None
    elif token is None:
        msg = (
            f"set {TOKEN_ENV} to the bearer token clients must send "
            "(or, on a loopback --host only, pass --no-auth)"
        )
        raise ServeSetupError(msg)
    return ServeSettings(
        token=token,
        max_concurrency=args.max_concurrency,
        deadline=args.deadline,
        max_body_bytes=args.max_body_bytes,
        body_timeout=args.body_timeout,
    )


def load_served_agents(path: str, names: Sequence[str] | None = None) -> dict[str, LLMAgent]:
    """Build the agents to serve: ``names``, or every agent of the file.

    Every agent is built before the server starts, so a broken one is reported at once
    (located in the file), not at its first request.

    Raises:
        SpecError: The file, or one of the chosen agents, has problems.
    """
    from leanloop.agent import LLMAgent  # noqa: PLC0415 - LangChain only once options are fine
    from leanloop.spec import load_specs  # noqa: PLC0415

    if not names:
        return {name: LLMAgent.from_spec(spec) for name, spec in load_specs(path).items()}
    agents: dict[str, LLMAgent] = {}
    for name in dict.fromkeys(names):
        specs = load_specs(path, only=name)
        if name not in specs:
            known = ", ".join(sorted(specs))
            issue = SpecIssue(path, None, None, "agents", f"no agent named {name!r} ({known})")
            raise SpecError([issue])
        agents[name] = LLMAgent.from_spec(specs[name])
    return agents


def check_workers_store(agents: Mapping[str, LLMAgent], workers: int) -> None:
    """Refuse ``workers`` processes unless every agent keeps its sessions in PostgreSQL.

    Any worker may serve any turn of a session, so they must share its store: SQLite
    (the default, ``.leanloop/sessions.db``) is a file that several processes writing at
    once make wait on its lock, and that a second machine cannot reach at all.

    Raises:
        ServeSetupError: ``workers`` below 1, or above 1 with an agent whose store is
            SQLite (named, with the file's ``sessions.store`` to set).
    """
    if workers < 1:
        msg = f"--workers must be at least 1 (got {workers})"
        raise ServeSetupError(msg)
    if workers == 1:
        return
    from leanloop.agent.conversation import store_url  # noqa: PLC0415 - LangChain on use
    from leanloop.sessions import redact_url  # noqa: PLC0415

    for name, agent in sorted(agents.items()):
        url = store_url(agent.spec)
        if url.partition("://")[0].lower() not in _SHARED_STORES:
            where = agent.spec.source.name if agent.spec.source is not None else "the agents file"
            msg = (
                f"--workers {workers} needs a PostgreSQL session store shared by the workers, "
                f"but the agent {name!r} keeps its sessions in {redact_url(url)}: set "
                f"sessions.store in {where} to postgres://USER@HOST/DATABASE, or use --workers 1"
            )
            raise ServeSetupError(msg)


def worker_app() -> FastAPI:
    """The app of one ``--workers`` process, built from the parent's command line.

    uvicorn starts each worker as a fresh process that imports its app by name
    (``factory=True``), so the options travel in ``LEANLOOP_SERVE_ARGV`` and the token in
    ``LEANLOOP_SERVE_TOKEN``, both inherited from the parent, which checked them already.

    Raises:
        ServeSetupError: ``LEANLOOP_SERVE_ARGV`` is missing (not started by ``serve``).
    """
    from leanloop.serve.app import create_app  # noqa: PLC0415 - the optional extra

    raw = os.environ.get(ARGV_ENV)
    if raw is None:
        msg = f"{_WORKER_APP} is started by 'leanloop serve --workers N' (no {ARGV_ENV})"
        raise ServeSetupError(msg)
    args = _parser().parse_args(json.loads(raw))
    # A spawned worker starts with no logging set up: the same lines as the parent's.
    _set_up_logging()
    return create_app(load_served_agents(args.file, args.agents), settings_from(args, os.environ))


def _set_up_logging() -> None:
    """INFO lines on stderr: leanloop's, uvicorn's; credentials hidden, no request chatter."""
    logging.basicConfig(level=logging.INFO, format=_LOG_FORMAT)
    handlers = logging.getLogger().handlers
    redact_logs(*handlers)  # httpx's lines name base_url, password too
    for handler in handlers:
        if not any(isinstance(f, _HttpRequestLines) for f in handler.filters):
            handler.addFilter(_HttpRequestLines())


class _HttpRequestLines(logging.Filter):
    """Leaves out httpx's line per request to the model server (INFO) and httpcore's trace
    (DEBUG) unless leanloop itself logs at DEBUG: every served turn made several, and the
    window probe's 404s among them read as errors. Their warnings and errors stay.

    A filter on serve's handlers rather than a level on the ``httpx`` logger: the process
    may be a program's (a test's) that wants those records elsewhere.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING or record.name.partition(".")[0] not in _HTTP_LOGS:
            return True
        return logging.getLogger("leanloop").isEnabledFor(logging.DEBUG)


@contextlib.contextmanager
def _graceful_signals(server: Any) -> Iterator[None]:
    """uvicorn's signal handling, without raising the signal again after the shutdown.

    uvicorn re-raises SIGTERM/SIGINT once it has stopped, so the process dies by the
    signal (exit -15); a service manager and a user should see a graceful stop as exit 0.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only (a server run in a test's thread)
        return
    handled = (signal.SIGINT, signal.SIGTERM)
    # handle_exit: the first signal stops gracefully, a second Ctrl-C at once.
    original = {sig: signal.signal(sig, server.handle_exit) for sig in handled}
    try:
        yield
    finally:
        for sig, handler in original.items():
            signal.signal(sig, handler)


def serve_main(argv: Sequence[str] | None = None) -> int:
    """Run ``leanloop serve`` with ``argv`` (the arguments after ``serve``).

    Returns:
        The exit status: 0 after a clean shutdown; 1 when it cannot listen (the port is
        taken) or fails to start; 2 for bad input (options, the agents file, the token),
        with one line per problem on stderr.
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or argparse's own usage error
        return exc.code if isinstance(exc.code, int) else _BAD_INPUT
    try:
        import uvicorn  # noqa: F401, PLC0415 - the optional extra: is it installed?

        from leanloop.serve.app import create_app  # noqa: PLC0415
    except ImportError:
        print(f"error: {_SERVE_EXTRA}", file=sys.stderr)
        return _BAD_INPUT
    try:
        settings = settings_from(args, os.environ)
        agents = load_served_agents(args.file, args.agents)
        check_workers_store(agents, args.workers)
    except SpecError as exc:
        for issue in exc.issues:
            print(issue, file=sys.stderr)
        return _BAD_INPUT
    except (ServeSetupError, LeanloopError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return _BAD_INPUT
    try:
        sock = _listen(args.host, args.port)
    except OSError as exc:
        print(f"error: {_cannot_listen(args.host, args.port, exc)}", file=sys.stderr)
        return _FAILED
    with contextlib.closing(sock):
        return _serve(create_app(agents, settings), sock, args=args, settings=settings, argv=argv)


def _serve(
    app: FastAPI,
    sock: socket.socket,
    *,
    args: argparse.Namespace,
    settings: ServeSettings,
    argv: Sequence[str] | None,
) -> int:
    """Serve ``app`` on ``sock`` (bound already) until SIGTERM or Ctrl-C; the exit status."""
    import uvicorn  # noqa: PLC0415 - the optional extra (serve_main checked it is there)

    _set_up_logging()
    auth = "bearer token" if settings.token else "no auth (loopback)"
    # The concurrency limit is each worker's own: they share no memory.
    at_once = f"{settings.max_concurrency} at once"
    if args.workers > 1:
        at_once = f"{args.workers} workers, {at_once} in each"
    port = sock.getsockname()[1]  # --port 0: the one the system chose
    print(
        f"leanloop serve: {', '.join(sorted(app.state.agents))} on "
        f"http://{_address(args.host, port)}/v1 "
        f"({auth}; {at_once}; deadline {settings.deadline:g} s)",
        file=sys.stderr,
        flush=True,
    )
    options: dict[str, Any] = {
        "host": args.host,
        "port": args.port,
        # Graceful shutdown: stop accepting, let running requests finish for --grace
        # seconds, then cancel them (a cancelled session turn stays resumable).
        "timeout_graceful_shutdown": args.grace,
        "log_level": "info",
        # uvicorn would otherwise reconfigure logging and drop leanloop's own lines.
        "log_config": None,
    }
    if args.workers > 1:
        given = sys.argv[1:] if argv is None else argv
        return _run_workers(uvicorn, given, args.workers, options, sock)
    config = uvicorn.Config(app, **options)
    server = uvicorn.Server(config)
    # An instance attribute: uvicorn's serve() calls self.capture_signals().
    server.capture_signals = functools.partial(_graceful_signals, server)  # type: ignore[method-assign]
    try:
        server.run(sockets=[sock])
    except SystemExit:  # uvicorn's own startup failure (it logged why) exits 3: ours is 1
        return _FAILED
    # After SIGTERM or Ctrl-C uvicorn returns normally, once running requests have ended.
    return 0 if server.started else _FAILED


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host`` and ``port``, bound as uvicorn binds its own.

    Bound here rather than by uvicorn, which logs a failure and exits 3 (its own code):
    a taken port is then one line of leanloop's and exit 1, before the banner says the
    server runs. The socket is inheritable: the ``--workers`` processes serve on it.

    Raises:
        OSError: The address cannot be bound (taken, not this machine's, no permission).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        # Listening at once: a client that comes right after the banner waits in the
        # backlog for uvicorn, instead of being refused (2048 is uvicorn's own backlog).
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _cannot_listen(host: str, port: int, exc: OSError) -> str:
    """The one line for an address that cannot be bound (never a traceback)."""
    reason = exc.strerror or str(exc)
    hint = ": another process has the port; stop it or choose another --port"
    taken = exc.errno == errno.EADDRINUSE
    return f"cannot listen on {_address(host, port)}: {reason}{hint if taken else ''}"


def _address(host: str, port: int) -> str:
    return f"[{host.strip('[]')}]:{port}" if ":" in host else f"{host}:{port}"


def _run_workers(
    uvicorn: Any,
    argv: Sequence[str],
    workers: int,
    options: Mapping[str, Any],
    sock: socket.socket,
) -> int:
    """Run ``workers`` processes under uvicorn's supervisor; the exit status.

    The supervisor, not ``uvicorn.run``, so a worker that fails to start (its app could
    not be built) is exit 1 rather than a clean 0. The agents built here to check the
    file are not passed on: each worker builds its own, in its own process.
    """
    from uvicorn.config import STARTUP_FAILURE  # noqa: PLC0415 - the optional extra
    from uvicorn.supervisors import Multiprocess  # noqa: PLC0415

    # Spawned workers inherit the environment (the token is there already).
    os.environ[ARGV_ENV] = json.dumps(list(argv))
    config = uvicorn.Config(_WORKER_APP, factory=True, workers=workers, **options)
    try:
        supervisor = Multiprocess(config, sockets=[sock])
        supervisor.run()  # SIGTERM/Ctrl-C: it stops the workers gracefully and returns
    except SystemExit:  # uvicorn's own startup failure (it logged why) exits 3: ours is 1
        return _FAILED
    # A worker whose app failed makes the supervisor stop (it logged why).
    failed = any(p.process.exitcode == STARTUP_FAILURE for p in supervisor.processes)
    return _FAILED if failed else 0
