"""``leanloop serve agents.yaml``: parse the options, load the agents, run uvicorn.

The bearer token comes from ``LEANLOOP_SERVE_TOKEN``, never from the command line
(where ``ps`` shows it to every user of the machine). Without one the server refuses to
start, unless it is bound to a loopback address and ``--no-auth`` says so explicitly.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import logging
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from leanloop.exceptions import LeanloopError, SpecError, SpecIssue
from leanloop.serve.errors import ServeSetupError
from leanloop.serve.limits import ServeSettings, is_loopback

if TYPE_CHECKING:
    from leanloop.agent import LLMAgent

__all__ = ["TOKEN_ENV", "load_served_agents", "serve_main", "settings_from"]

TOKEN_ENV = "LEANLOOP_SERVE_TOKEN"  # noqa: S105 - the variable's name, not a secret
"""The environment variable holding the bearer token clients must send."""

_BAD_INPUT = 2
_SERVE_EXTRA = "leanloop serve needs its extra: pip install 'leanloop[serve]'"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="leanloop serve",
        description=(
            "Serve the agents of an agents file over OpenAI's chat-completions API "
            "(POST /v1/chat/completions, GET /v1/models, GET /healthz). Clients send "
            f"'Authorization: Bearer <the token in {TOKEN_ENV}>'."
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
        "--grace",
        type=float,
        default=30.0,
        metavar="S",
        help="on SIGTERM/Ctrl-C, seconds to let running requests finish before they are "
        "cancelled (30)",
    )
    return parser


def settings_from(args: argparse.Namespace, environ: Mapping[str, str]) -> ServeSettings:
    """The server's settings from parsed options and the environment.

    Raises:
        ServeSetupError: No token and auth not explicitly off on loopback, ``--no-auth``
            on an address other machines can reach, or a limit out of range.
    """
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
        The exit status: 0 after a clean shutdown, 2 for bad input (options, the agents
        file, a missing token) with one line per problem on stderr.
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or argparse's own usage error
        return exc.code if isinstance(exc.code, int) else _BAD_INPUT
    try:
        import uvicorn  # noqa: PLC0415 - the optional extra, only for this command

        from leanloop.serve.app import create_app  # noqa: PLC0415
    except ImportError:
        print(f"error: {_SERVE_EXTRA}", file=sys.stderr)
        return _BAD_INPUT
    try:
        settings = settings_from(args, os.environ)
        agents = load_served_agents(args.file, args.agents)
    except SpecError as exc:
        for issue in exc.issues:
            print(issue, file=sys.stderr)
        return _BAD_INPUT
    except (ServeSetupError, LeanloopError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return _BAD_INPUT
    logging.basicConfig(level=logging.INFO, format="%(levelname)s: %(name)s: %(message)s")
    auth = "bearer token" if settings.token else "no auth (loopback)"
    print(
        f"leanloop serve: {', '.join(sorted(agents))} on http://{args.host}:{args.port}/v1 "
        f"({auth}; {settings.max_concurrency} at once; deadline {settings.deadline:g} s)",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(
        create_app(agents, settings),
        host=args.host,
        port=args.port,
        # Graceful shutdown: stop accepting, let running requests finish for --grace
        # seconds, then cancel them (a cancelled session turn stays resumable).
        timeout_graceful_shutdown=args.grace,
        log_level="info",
        # uvicorn would otherwise reconfigure logging and drop leanloop's own lines.
        log_config=None,
    )
    server = uvicorn.Server(config)
    # An instance attribute: uvicorn's serve() calls self.capture_signals().
    server.capture_signals = functools.partial(_graceful_signals, server)  # type: ignore[method-assign]
    try:
        server.run()
    except SystemExit as exc:  # uvicorn exits 1 when it cannot bind (it logged why)
        return exc.code if isinstance(exc.code, int) else 1
    # After SIGTERM or Ctrl-C uvicorn returns normally, once running requests have ended.
    return 0 if server.started else 1
