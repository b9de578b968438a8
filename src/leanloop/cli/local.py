"""The ``leanloop local …`` and ``leanloop demo`` commands.

:func:`add_local_arguments` and :func:`add_demo_arguments` build their parsers (their rows
are in :data:`leanloop.cli.command.COMMANDS`); each sets ``handler`` to a function that
takes the parsed arguments and returns the exit code (0 ok, 1 failed, 2 bad input).
Failures print one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from leanloop.exceptions import LeanloopError
from leanloop.localmodel.engine import ENGINES
from leanloop.localmodel.paths import DEFAULT_CTX_SIZE, DEFAULT_PORT, cache_paths

# The handlers import the server, build and demo modules when they run: building the
# parsers must stay cheap, since every `leanloop` invocation builds the whole parser.

__all__ = ["Handler", "add_demo_arguments", "add_local_arguments"]

Handler = Callable[[argparse.Namespace], int]


def add_local_arguments(local: argparse.ArgumentParser) -> None:
    """Build the parser of ``local {setup,start,stop,status,models}``, each with its handler.

    Args:
        local: The subparser the main parser made for ``local`` (its row is in
            :data:`leanloop.cli.command.COMMANDS`).
    """
    local.description = (
        "The embedded local model: llama.cpp's server with Qwen2.5-Coder-0.5B "
        "(or another model of the catalog: `leanloop local models`), run by the prebuilt "
        "engine (the xllamacpp wheel; nothing to compile) or by a source build "
        "(`setup --build`)."
    )
    commands = local.add_subparsers(dest="local_command", metavar="COMMAND", required=True)
    setup = commands.add_parser(
        "setup", help="check the engine (or build it: --build) and fetch the model (once)"
    )
    _model_option(setup)
    engines = setup.add_mutually_exclusive_group()
    _engine_option(engines, "the engine to set up and record for `start` and `demo` "
                   "(default: the one recorded, else prebuilt)")  # fmt: skip
    engines.add_argument("--build", dest="engine", action="store_const", const="build",
                         help="build llama-server from source for this CPU (minutes, "
                         "once; needs cmake, make and a C++ compiler): --engine build")  # fmt: skip
    setup.set_defaults(handler=cmd_setup)
    start = commands.add_parser("start", help="start a server in the background")
    _port_option(start)
    _model_option(start)
    _engine_option(start, "the engine that runs it (default: $LEANLOOP_ENGINE, else the one "
                   "`setup` recorded, else prebuilt)")  # fmt: skip
    start.add_argument("--ctx-size", type=_positive, default=DEFAULT_CTX_SIZE, metavar="TOKENS",
                       help=f"context window in tokens (default {DEFAULT_CTX_SIZE}; at "
                       "most the model's trained length: 32768 for the catalog's)")  # fmt: skip
    start.add_argument("--no-template", action="store_true",
                       help="use the model's own chat template (no native tool calls)")  # fmt: skip
    start.set_defaults(handler=cmd_start)
    stop = commands.add_parser("stop", help="stop the server on a port")
    _port_option(stop)
    stop.set_defaults(handler=cmd_stop)
    status = commands.add_parser("status", help="show the server on a port (exit 1: not running)")
    _port_option(status)
    status.set_defaults(handler=cmd_status)
    models = commands.add_parser("models", help="list the models --model can name")
    models.set_defaults(handler=cmd_models)


def add_demo_arguments(demo: argparse.ArgumentParser) -> None:
    """Build the parser of ``demo``; its handler is :func:`cmd_demo`.

    Args:
        demo: The subparser the main parser made for ``demo`` (its row is in
            :data:`leanloop.cli.command.COMMANDS`).
    """
    _port_option(demo)
    _model_option(demo)
    demo.add_argument("--question", default=None, help="what to ask the demo agent")
    demo.add_argument(
        "--file", type=Path, default=None, help="agents file (default: the shipped demo file)"
    )
    demo.set_defaults(handler=cmd_demo)


def cmd_setup(args: argparse.Namespace) -> int:
    """``leanloop local setup``."""

    from leanloop.localmodel.install import SetupOptions, setup_local_model  # noqa: PLC0415
    from leanloop.localmodel.model import model_pin  # noqa: PLC0415

    try:
        options = SetupOptions(pin=model_pin(args.model), engine=args.engine)
    except LeanloopError as exc:
        _err(str(exc))
        return 2

    def action() -> int:
        result = setup_local_model(
            cache_paths(), options=options, progress=_progress(time.monotonic())
        )
        if result.engine == "build":
            built = "built now" if result.built else "reused"
        else:
            built = "nothing to build"
        assembled = "assembled now" if result.assembled else "reused"
        _out(f"engine: {result.server}; {built}")
        _out(f"model:  {result.model} ({assembled})")
        _out(f"local model ready in {result.seconds:.1f} s")
        return 0

    return _guarded(action)


def cmd_start(args: argparse.Namespace) -> int:
    """``leanloop local start``."""
    from leanloop.localmodel.model import model_pin  # noqa: PLC0415
    from leanloop.localmodel.server import ServerOptions, start_server  # noqa: PLC0415

    try:
        # Without --model the server gets the cache's default model file, as it always did.
        model = None if args.model is None else model_pin(args.model).filename
        options = ServerOptions(
            port=args.port, ctx_size=args.ctx_size, template=not args.no_template,
            model=None if model is None else cache_paths().model_path(model),
            engine=args.engine,
        )  # fmt: skip
    except LeanloopError as exc:
        _err(str(exc))
        return 2

    def action() -> int:
        record = start_server(options, paths=cache_paths())
        where = f"{record.openai_url} (pid {record.pid}, n_ctx {record.ctx_size})"
        _out(f"llama-server running on {where}")
        _out(f"engine: {record.engine}")
        _out(f"log: {record.log}; stop it with `leanloop local stop --port {record.port}`")
        return 0

    return _guarded(action)


def cmd_stop(args: argparse.Namespace) -> int:
    """``leanloop local stop``."""
    from leanloop.localmodel.server import stop_server  # noqa: PLC0415

    def action() -> int:
        record = stop_server(args.port, paths=cache_paths())
        if record is None:
            _out(f"no llama-server running on port {args.port}")
        else:
            _out(f"stopped llama-server on port {args.port} (pid {record.pid})")
        return 0

    return _guarded(action)


def cmd_status(args: argparse.Namespace) -> int:
    """``leanloop local status``: exit 0 when a server runs on the port, 1 when not."""
    from leanloop.localmodel.server import server_status  # noqa: PLC0415

    def action() -> int:
        status = server_status(args.port, paths=cache_paths())
        for line in status.lines():
            _out(line)
        return 0 if status.running else 1

    return _guarded(action)


def cmd_models(args: argparse.Namespace) -> int:
    """``leanloop local models``: the catalog, the default first, and what is cached."""
    from leanloop.localmodel.model import DEFAULT_MODEL, MODEL_CATALOG  # noqa: PLC0415

    where = cache_paths()
    for name, pin in sorted(MODEL_CATALOG.items(), key=lambda item: item[0] != DEFAULT_MODEL):
        default = " (default)" if name == DEFAULT_MODEL else ""
        cached = "cached" if where.model_path(pin.filename).is_file() else "not set up"
        _out(f"{name}{default}: {pin.description}; {cached}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """``leanloop demo``."""
    from leanloop.cli.demo import DEMO_QUESTION, run_demo  # noqa: PLC0415
    from leanloop.localmodel.model import model_pin  # noqa: PLC0415
    from leanloop.report import format_report  # noqa: PLC0415

    question = args.question or DEMO_QUESTION
    try:
        pin = None if args.model is None else model_pin(args.model)
    except LeanloopError as exc:
        _err(str(exc))
        return 2

    def action() -> int:
        result = run_demo(
            question, port=args.port, agents_file=args.file, model=pin,
            progress=_progress(time.monotonic()),
        )  # fmt: skip
        _out(f"question: {question}")
        _out(f"answer:   {result.answer}")
        _out("")
        _out(format_report(result.report))
        _out("")
        how = (
            "started llama-server for it, then stopped it"
            if result.started_server
            else "used the llama-server already running"
        )
        _out(f"demo finished in {result.seconds:.1f} s ({how})")
        return 0

    return _guarded(action)


def _guarded(action: Callable[[], int]) -> int:
    """Run a command: leanloop errors become one line on stderr; Ctrl-C exits 130."""
    try:
        return action()
    except LeanloopError as exc:
        _err(str(exc))
        return 1
    except KeyboardInterrupt:
        _err("interrupted", prefix="")
        return 130
    except BrokenPipeError:
        # The reader went away (`leanloop local status | head -1`): stop writing quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _port_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT,
                        help=f"port on 127.0.0.1 (default {DEFAULT_PORT})")  # fmt: skip


def _engine_option(parser: argparse._ActionsContainer, text: str) -> None:
    parser.add_argument("--engine", choices=ENGINES, default=None, help=text)


def _model_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=None, metavar="NAME",
                        help="a model of the catalog (`leanloop local models`; "
                        "default qwen2.5-coder-0.5b)")  # fmt: skip


def _port(text: str) -> int:
    value = _positive(text)
    if value > 65535:
        msg = f"{value} is not a port (1-65535)"
        raise argparse.ArgumentTypeError(msg)
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        msg = f"{text!r} is not a whole number"
        raise argparse.ArgumentTypeError(msg) from None
    if value <= 0:
        msg = f"{value} must be greater than 0"
        raise argparse.ArgumentTypeError(msg)
    return value


def _progress(started: float) -> Callable[[str], None]:
    def say(message: str) -> None:
        _err(f"[{time.monotonic() - started:5.0f}s] {message}", prefix="")

    return say


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _err(line: str, *, prefix: str = "error: ") -> None:
    sys.stderr.write(prefix + line + "\n")
    sys.stderr.flush()
