"""``python -m leanloop.localmodel.prebuilt``: llama.cpp's server from the xllamacpp wheel.

It stands in for the ``llama-server`` binary: it takes the flags
:func:`~leanloop.localmodel.server.server_command` passes (``-m``, ``--host``, ``--port``,
``--ctx-size``, ``-np``, ``--no-webui``, ``--alias``, ``--jinja``/``--no-jinja``,
``--chat-template-file``), refuses any other, starts xllamacpp's in-process HTTP server
(llama.cpp's own server code: the same routes, ``/props``, ``timings`` and template
parser) and serves until SIGTERM or SIGINT. llama.cpp logs to stderr, which the starting
process sends to ``run/<port>.log``. ``--version`` loads the native library, prints the
versions and CPU features and exits 0: setup's check that the wheel runs on this system.

Nothing is compiled and nothing is downloaded: the model is the local file ``-m`` names,
and the server runs offline. Only the standard library is imported besides xllamacpp, so
the child starts in a fraction of a second before the model loads.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import signal
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ServeArgs", "configure", "main", "parse_args"]

_MODULE = "xllamacpp"


@dataclass(frozen=True, kw_only=True)
class ServeArgs:
    """The llama-server flags the prebuilt engine honours."""

    model: Path
    host: str = "127.0.0.1"
    port: int = 8080
    ctx_size: int = 0
    """Tokens; 0 takes the model's trained length, as llama-server does."""
    parallel: int = 1
    ui: bool = True
    alias: str | None = None
    jinja: bool | None = None
    """``--jinja``/``--no-jinja``; ``None`` keeps llama.cpp's default (Jinja on)."""
    template_file: Path | None = None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m leanloop.localmodel.prebuilt",
        description="llama.cpp's server from the xllamacpp wheel, with llama-server's flags.",
    )
    parser.add_argument("--version", action="store_true", help="print versions and exit")
    parser.add_argument("-m", "--model", type=Path, help="the GGUF file")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("-c", "--ctx-size", dest="ctx_size", type=int, default=0)
    parser.add_argument("-np", "--parallel", dest="parallel", type=int, default=1)
    parser.add_argument("--no-webui", "--no-ui", dest="ui", action="store_false")
    parser.add_argument("-a", "--alias", default=None)
    jinja = parser.add_mutually_exclusive_group()
    jinja.add_argument("--jinja", dest="jinja", action="store_const", const=True)
    jinja.add_argument("--no-jinja", dest="jinja", action="store_const", const=False)
    parser.add_argument("--chat-template-file", dest="template_file", type=Path, default=None)
    return parser


def parse_args(argv: Sequence[str]) -> ServeArgs | None:
    """The flags in ``argv``; ``None`` for ``--version``.

    Exits 2 (argparse) on a flag it does not know or a missing ``-m``: a flag silently
    ignored would make this engine differ from the binary without anyone noticing.
    """
    parser = _parser()
    ns = parser.parse_args(list(argv))
    if ns.version:
        return None
    if ns.model is None:
        parser.error("-m/--model is required")
    return ServeArgs(
        model=ns.model, host=ns.host, port=ns.port, ctx_size=ns.ctx_size,
        parallel=ns.parallel, ui=ns.ui, alias=ns.alias, jinja=ns.jinja,
        template_file=ns.template_file,
    )  # fmt: skip


def configure(params: Any, args: ServeArgs, *, template: str | None = None) -> None:
    """Set xllamacpp's ``CommonParams`` (``params``) from ``args``, as llama-server's
    argument parser sets its ``common_params`` from the same flags.

    Args:
        params: An ``xllamacpp.CommonParams`` (tests pass a plain object).
        args: The parsed flags.
        template: The text of ``--chat-template-file`` (llama-server reads the file into
            the same field).
    """
    params.model.path = str(args.model)
    params.hostnames = [args.host]
    params.port = args.port
    params.n_ctx = args.ctx_size
    params.n_parallel = args.parallel
    params.ui = args.ui
    if args.alias is not None:
        params.model_alias = {args.alias}
    if args.jinja is not None:
        params.use_jinja = args.jinja
    if template is not None:
        params.chat_template = template
    # Never reach for a model hub: the model is the local file above.
    params.offline = True


def _version() -> int:
    engine = importlib.import_module(_MODULE)
    try:
        version = importlib.metadata.version(_MODULE)
    except importlib.metadata.PackageNotFoundError:
        version = "(version unknown)"
    build = getattr(engine, "BUILD_INFO", {})
    print(f"version: {_MODULE} {version} (llama.cpp {build.get('build_target', '?')})")
    print(engine.get_system_info().strip())
    return 0


def _serve(args: ServeArgs) -> int:
    template = None
    if args.template_file is not None:
        try:
            template = args.template_file.read_text(encoding="utf-8")
        except OSError as exc:
            msg = f"error: cannot read the chat template {args.template_file}: {exc.strerror}"
            print(msg, file=sys.stderr, flush=True)
            return 1
    engine = importlib.import_module(_MODULE)
    params = engine.CommonParams()
    configure(params, args, template=template)
    done = threading.Event()
    # A stop while the model loads is handled once the load returns (seconds): the
    # native call does not run Python's signal handlers until then.
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    try:
        server = engine.Server(params)
    except RuntimeError as exc:
        # llama.cpp has logged the reason just above (a model that does not load, a port
        # taken): the starting process shows this line with the log's name.
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return 1
    print(f"prebuilt llama.cpp server listening on {server.listening_address}", flush=True)
    # The main thread only waits: the signal handlers run on it.
    done.wait()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server (or ``--version``); the exit status (0, 1 on a failed start)."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return _version() if args is None else _serve(args)


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # The server's threads are native: end without waiting on an orderly teardown of them.
    os._exit(code)
