"""Start, stop and inspect ``llama-server`` processes, one per port.

The server is llama.cpp's, run by one of two engines (:mod:`leanloop.localmodel.engine`):
the prebuilt wheel hosted by ``python -m leanloop.localmodel.prebuilt`` (the default) or
the source build ``bin/llama-server``. Both take the same flags, and each is a child
process managed the same way. A started server is detached (its own session, so a
Ctrl-C in the terminal that started it does not reach it), logs to ``run/<port>.log``
and is recorded in ``run/<port>.pid``. :func:`running_server` is the form tests and the demo use: it
starts a server and always stops it, on errors and on Ctrl-C too.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from leanloop.exceptions import LocalModelError
from leanloop.localmodel.engine import (
    Engine,
    choose_engine,
    engine_label,
    parse_engine,
    prebuilt_command,
    prebuilt_installed,
    unavailable_message,
)
from leanloop.localmodel.locks import wait_for_setup
from leanloop.localmodel.model import DEFAULT_MODEL, model_damage, model_for_file
from leanloop.localmodel.paths import (
    DEFAULT_CTX_SIZE,
    DEFAULT_PORT,
    MAX_CTX_SIZE,
    MIN_CTX_SIZE,
    MODEL_ALIAS,
    MODEL_FILENAME,
    CachePaths,
    cache_paths,
)
from leanloop.localmodel.pidfile import (
    ServerRecord,
    live_record,
    port_lock,
    process_alive,
    process_identity,
    same_process,
    valid_pid,
    write_record,
)

__all__ = [
    "TEMPLATE_FILE",
    "ServerOptions",
    "ServerStatus",
    "port_in_use",
    "resolve_engine",
    "running_server",
    "server_command",
    "server_status",
    "start_server",
    "stop_server",
]

logger = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
# Resolved once here: the child calls it between fork and exec, where loading code is unsafe.
_PRCTL: Any = ctypes.CDLL(None).prctl if sys.platform == "linux" else None
_LOCK_WAIT = 180.0
"""Seconds ``start``/``stop`` wait for another start or stop on the same port to finish."""

TEMPLATE_FILE = Path(__file__).with_name("qwen_tools.jinja")
"""The chat template that makes the small Qwen model's tool calls parseable."""


@dataclass(frozen=True, kw_only=True)
class ServerOptions:
    """How to run one ``llama-server``."""

    port: int = DEFAULT_PORT
    ctx_size: int = DEFAULT_CTX_SIZE
    """The context window in tokens (one slot gets all of it)."""
    template: bool = True
    """Use leanloop's chat template (native tool calls); ``False`` keeps the model's own."""
    health_timeout: float = 120.0
    """Seconds to wait for ``GET /health`` to answer 200."""
    engine: Engine | None = None
    """``prebuilt`` or ``build``; ``None`` chooses as :func:`~leanloop.localmodel.engine.
    choose_engine` does (``LEANLOOP_ENGINE``, the cache's record, then ``prebuilt``)."""
    binary: Path | None = None
    """The source build's executable; the cache's ``bin/llama-server`` when ``None``. Naming
    one implies the ``build`` engine when ``engine`` is ``None``."""
    model: Path | None = None
    """The GGUF file; the cache's default model when ``None`` (``--model NAME`` passes
    ``paths.model_path(model_pin(NAME).filename)``)."""
    detached: bool = True
    """Keep running after the starting process exits (``leanloop local start``). ``False``
    ties the server to the starting process: on Linux it gets SIGTERM when that process
    dies, even by SIGKILL (strictly: when the thread that started it ends), so a killed
    test run or demo leaves no server behind."""

    def __post_init__(self) -> None:
        if self.engine is not None:
            parse_engine(self.engine)
        if not 0 < self.port < 65536:
            msg = f"port must be between 1 and 65535, got {self.port}"
            raise LocalModelError(msg)
        if self.ctx_size < MIN_CTX_SIZE:
            msg = f"ctx-size must be at least {MIN_CTX_SIZE} tokens, got {self.ctx_size}"
            raise LocalModelError(msg)
        pin = model_for_file(self.model or MODEL_FILENAME)
        limit = pin.context_length if pin is not None else MAX_CTX_SIZE
        if self.ctx_size > limit:
            what = (
                f"{pin.name}'s trained context length"
                if pin is not None
                else "the limit for a model outside the catalog"
            )
            msg = f"ctx-size must be at most {limit} tokens ({what}), got {self.ctx_size}"
            raise LocalModelError(msg)


@dataclass(frozen=True, kw_only=True)
class ServerStatus:
    """What :func:`server_status` found on one port."""

    port: int
    running: bool
    pid: int | None = None
    engine: str | None = None
    """Which engine runs it (``prebuilt (xllamacpp …)`` or ``build (<binary>)``); ``None``
    for a server recorded before engines were recorded."""
    model: str | None = None
    """The GGUF file the server serves."""
    model_name: str | None = None
    """That file's name in the model catalog (``None`` for a file the catalog lacks)."""
    n_ctx: int | None = None
    """The window the server reports in ``/props`` (``None`` when it did not answer)."""
    log: Path | None = None
    note: str | None = None
    """Why the figures are missing, or what else is on the port."""

    def lines(self) -> list[str]:
        """The status as ``key: value`` lines for people."""
        rows: list[tuple[str, object]] = [
            ("llama-server", "running" if self.running else "not running"),
            ("port", self.port),
            ("pid", self.pid),
            ("engine", self.engine),
            ("model", self.model),
            ("model name", self.model_name),
            ("n_ctx", self.n_ctx),
            ("log", self.log),
            ("note", self.note),
        ]
        return [f"{key}: {value}" for key, value in rows if value is not None]


def resolve_engine(options: ServerOptions, paths: CachePaths) -> Engine:
    """The engine that runs a server with ``options``: theirs, else ``build`` when they name
    a binary, else the choice of :func:`~leanloop.localmodel.engine.choose_engine`."""
    if options.engine is not None:
        return options.engine
    return "build" if options.binary is not None else choose_engine(None, paths)


def server_command(
    options: ServerOptions, paths: CachePaths, *, engine: Engine | None = None
) -> list[str]:
    """The command line that starts llama.cpp's server with ``options``.

    The source build runs ``bin/llama-server``; the prebuilt engine runs ``python -m
    leanloop.localmodel.prebuilt``. The flags after the program are the same.
    """
    chosen = engine or resolve_engine(options, paths)
    program = (
        [str(options.binary or paths.server_binary)] if chosen == "build" else prebuilt_command()
    )
    cmd = [
        *program,
        "-m", str(options.model or paths.model_file),
        "--host", "127.0.0.1",
        "--port", str(options.port),
        "--ctx-size", str(options.ctx_size),
        # One slot: with the default four, each request would get a quarter of the window.
        "-np", "1",
        "--no-webui",
        "--alias", MODEL_ALIAS,
    ]  # fmt: skip
    if options.template:
        cmd += ["--jinja", "--chat-template-file", str(TEMPLATE_FILE)]
    return cmd


def port_in_use(port: int) -> bool:
    """Whether something accepts connections on ``127.0.0.1:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def start_server(
    options: ServerOptions | None = None,
    *,
    port: int | None = None,
    ctx_size: int | None = None,
    paths: CachePaths | None = None,
    waiting: Callable[[str], None] | None = None,
) -> ServerRecord:
    """Start a detached ``llama-server`` and wait until it is healthy.

    A setup running in another process (it holds ``setup.lock``) is waited for first: the
    engine and the model it is writing are read only once it is done.

    Args:
        options: How to run it; ``port`` and ``ctx_size`` override its fields.
        port: The port on 127.0.0.1.
        ctx_size: The context window in tokens.
        paths: The cache layout; resolved from the environment when ``None``.
        waiting: Receives one line, before waiting, when a setup is running (the CLI
            prints it on stderr); ``None``: a warning of this module's logger.

    Returns:
        The record written to the port's PID file.

    Raises:
        LocalModelError: Not set up, the binary cannot be run, the model file does not
            match what setup checked, the port is taken (also by a concurrent start), or
            the server did not become healthy in time (it is stopped again; the message
            names the log).
    """
    opts = _merge(options, port=port, ctx_size=ctx_size)
    where = paths or cache_paths()
    # A start during a setup would read a half-written model or engine record: wait for
    # the setup to finish. A shared lock, so concurrent starts never wait for each other
    # (nor say they do: the port's lock settles which of them runs).
    wait_for_setup(where.setup_lock, waiting=waiting or logger.warning)
    engine = resolve_engine(opts, where)
    cmd = server_command(opts, where, engine=engine)
    model = Path(opts.model or where.model_file)
    binary = Path(opts.binary or where.server_binary)
    _check_files(engine, binary, model)
    # One start or stop per port at a time: a second start waits, then finds this one's
    # server and is refused; it never spawns a server of its own that nothing records.
    with port_lock(where.lock_file(opts.port), wait=_LOCK_WAIT):
        _refuse_busy_port(opts.port, where)
        return _spawn(cmd, opts, where, model=model, engine=engine_label(engine, where, binary))


def _check_files(engine: Engine, binary: Path, model: Path) -> None:
    setup = f"leanloop local setup{_model_flag(str(model))}"
    if engine == "build":
        build = f"leanloop local setup --build{_model_flag(str(model))}"
        if not binary.is_file():
            msg = f"{binary} is missing: run `{build}` first"
            raise LocalModelError(msg)
        if not os.access(binary, os.X_OK):
            msg = f"{binary} is not executable: run `{build}` again (or `chmod +x` it)"
            raise LocalModelError(msg)
    elif not prebuilt_installed():
        raise LocalModelError(unavailable_message("the xllamacpp wheel is not installed"))
    if not model.is_file():
        msg = f"{model} is missing: run `{setup}` first"
        raise LocalModelError(msg)
    damage = model_damage(model)
    if damage is not None:
        msg = f"the model file {model} is damaged ({damage}): run `{setup}` again"
        raise LocalModelError(msg)


def _spawn(
    cmd: list[str], opts: ServerOptions, where: CachePaths, *, model: Path, engine: str
) -> ServerRecord:
    """Start ``cmd``, record it and wait until it is healthy (the caller holds the lock)."""
    log = where.log_file(opts.port)
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        out = log.open("wb")
    except OSError as exc:
        msg = f"cannot write the server log {log}: {exc.strerror or exc}"
        raise LocalModelError(msg) from None
    try:
        with out:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True,  # a Ctrl-C meant for the caller is not for the server
                # Only a pre-resolved libc call runs in the child (no imports, no locks).
                preexec_fn=None if opts.detached or _PRCTL is None else _die_with_parent,  # noqa: PLW1509
            )  # fmt: skip
    except OSError as exc:
        msg = f"cannot run {cmd[0]}: {exc.strerror or exc}; run `leanloop local setup` again"
        raise LocalModelError(msg) from None
    pid_file = where.pid_file(opts.port)
    try:
        # Popen returns after the exec, so /proc already shows the server's executable.
        identity = process_identity(proc.pid)
        record = ServerRecord(
            pid=proc.pid, port=opts.port, ctx_size=opts.ctx_size, model=str(model),
            log=str(log), started=time.time(),
            start_time=identity.start_time if identity else None,
            executable=identity.executable if identity else None, engine=engine,
        )  # fmt: skip
        write_record(pid_file, record)
        _wait_healthy(proc, record, opts.health_timeout)
    except BaseException:  # Ctrl-C included: never leave a half-started server behind
        _terminate(proc.pid, grace=5.0)
        proc.wait()
        pid_file.unlink(missing_ok=True)  # ours: the lock kept every other writer out
        raise
    logger.info("llama-server ready on port %d (pid %d, %s)", opts.port, proc.pid, engine)
    return record


def stop_server(
    port: int = DEFAULT_PORT, *, paths: CachePaths | None = None, grace: float = 10.0
) -> ServerRecord | None:
    """Stop the server leanloop started on ``port``: SIGTERM, then SIGKILL after ``grace`` s.

    Returns:
        The record of the stopped server, or ``None`` when none was running there.
    """
    where = paths or cache_paths()
    pid_file = where.pid_file(port)
    with port_lock(where.lock_file(port), wait=_LOCK_WAIT):
        record = live_record(pid_file, port)
        if record is None:
            return None
        _terminate(record.pid, grace=grace, record=record)
        pid_file.unlink(missing_ok=True)
    logger.info("stopped llama-server on port %d (pid %d)", port, record.pid)
    return record


def server_status(port: int = DEFAULT_PORT, *, paths: CachePaths | None = None) -> ServerStatus:
    """Whether a server runs on ``port``, with its model and window from ``GET /props``."""
    where = paths or cache_paths()
    record = None
    if where.pid_file(port).exists():
        # Status never waits; it removes a stale PID file only when no start or stop runs.
        with port_lock(where.lock_file(port), wait=None) as held:
            record = live_record(where.pid_file(port), port, remove_stale=held)
    if record is None:
        note = (
            "the port is in use by a program leanloop did not start" if port_in_use(port) else None
        )
        return ServerStatus(port=port, running=False, note=note)
    props = _get_json(f"{record.base_url}/props")
    settings = props.get("default_generation_settings") if props else None
    n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
    model = str((props.get("model_path") if props else None) or record.model)
    pin = model_for_file(model)
    return ServerStatus(
        port=port, running=True, pid=record.pid, engine=record.engine, model=model,
        model_name=pin.name if pin else None,
        n_ctx=n_ctx if isinstance(n_ctx, int) else None, log=Path(record.log),
        note=None if props else "the server did not answer GET /props",
    )  # fmt: skip


@contextlib.contextmanager
def running_server(
    options: ServerOptions | None = None,
    *,
    port: int | None = None,
    ctx_size: int | None = None,
    paths: CachePaths | None = None,
) -> Iterator[ServerRecord]:
    """Start a server for the ``with`` block and always stop it afterwards (Ctrl-C too).

    Example:
        >>> with running_server(port=8765, ctx_size=2048) as server:  # doctest: +SKIP
        ...     httpx.get(f"{server.base_url}/health")
    """
    where = paths or cache_paths()
    owned = dataclasses.replace(options or ServerOptions(), detached=False)
    record = start_server(owned, port=port, ctx_size=ctx_size, paths=where)
    try:
        yield record
    finally:
        stop_server(record.port, paths=where, grace=5.0)


def _merge(
    options: ServerOptions | None, *, port: int | None, ctx_size: int | None
) -> ServerOptions:
    opts = options or ServerOptions()
    changes: dict[str, Any] = {}
    if port is not None:
        changes["port"] = port
    if ctx_size is not None:
        changes["ctx_size"] = ctx_size
    return dataclasses.replace(opts, **changes) if changes else opts


def _model_flag(model: str) -> str:
    """`` --model NAME`` for a catalog model other than the default, else nothing."""
    pin = model_for_file(model)
    return f" --model {pin.name}" if pin is not None and pin.name != DEFAULT_MODEL else ""


def _refuse_busy_port(port: int, paths: CachePaths) -> None:
    record = live_record(paths.pid_file(port), port)
    if record is not None:
        msg = (
            f"a llama-server already runs on port {port} (pid {record.pid}); "
            f"stop it with `leanloop local stop --port {port}` or choose another --port"
        )
        raise LocalModelError(msg)
    if port_in_use(port):
        msg = f"port {port} is in use by another program; choose another --port"
        raise LocalModelError(msg)


def _wait_healthy(proc: subprocess.Popen[bytes], record: ServerRecord, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=2.0) as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                msg = (
                    f"llama-server exited while starting (exit {proc.returncode}): "
                    f"{_last_line(Path(record.log))}; see {record.log}"
                )
                raise LocalModelError(msg)
            with contextlib.suppress(httpx.HTTPError):
                if client.get(f"{record.base_url}/health").status_code == 200:
                    return
            time.sleep(0.2)
    msg = f"llama-server was not healthy after {timeout:g} s; see {record.log}"
    raise LocalModelError(msg)


def _terminate(pid: int, *, grace: float, record: ServerRecord | None = None) -> None:
    """SIGTERM the server's process group, SIGKILL it when it outlives ``grace`` seconds.

    With ``record``, the process must still be the recorded one before each signal (a
    process that went away in between may have passed its PID on). Never signals PID 0,
    1 or a negative PID, nor the caller's own process group.
    """
    if not valid_pid(pid):
        msg = f"refusing to signal pid {pid}"
        raise LocalModelError(msg)
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        if record is not None and not same_process(record):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            # The server leads its own session, so its group is its id; anything else
            # (never the caller's own group) gets the signal alone.
            group = os.getpgid(pid)
            if group == pid and group != os.getpgrp():
                os.killpg(group, sig)
            else:
                os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if not process_alive(pid):
                return
            time.sleep(0.05)
    msg = f"could not stop process {pid}"  # pragma: no cover - SIGKILL failed
    raise LocalModelError(msg)  # pragma: no cover


def _die_with_parent() -> None:
    """In the child before exec: ask Linux for SIGTERM when the parent process dies."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGTERM))


def _get_json(url: str) -> dict[str, Any] | None:
    try:
        response = httpx.get(url, timeout=5.0)
        response.raise_for_status()
        data = response.json()
    except (httpx.HTTPError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _last_line(log: Path) -> str:
    try:
        lines = [line.strip() for line in log.read_text("utf-8", "replace").splitlines()]
    except OSError:
        return "no log"
    meaningful = [line for line in lines if line]
    return meaningful[-1] if meaningful else "no output"
