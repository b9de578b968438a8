"""The connection to one MCP server: its session, its log, and what a failed start says.

:func:`open_session` opens a session with a server, not yet initialized: a server reached
by URL through ``langchain-mcp-adapters``, a stdio server through the MCP SDK itself
(:func:`stdio_session`), since the adapters give the SDK no ``errlog``. A stdio server's
stderr never reaches leanloop's own: each start appends it to ``logs/mcp/NAME.log`` in
leanloop's cache folder (:class:`ServerLog`). A server that fails to start is one line
(:func:`server_named`, :func:`reason_of`, :func:`output_note`) that names that file
and quotes its last line (redacted).

Both users of a server, the listing of its tools when an agent is built
(:mod:`leanloop.tools.mcp`) and a run's sessions (:mod:`leanloop.tools.mcp_sessions`),
open it here. Nothing heavy is imported at import time: the adapters and ``mcp`` are
imported when a session is opened.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, ExitStack, asynccontextmanager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO, cast

from leanloop.localmodel.paths import cache_paths
from leanloop.redact import redact_text
from leanloop.spec.types import McpServerSpec

if TYPE_CHECKING:
    from langchain_mcp_adapters.sessions import Connection
    from mcp import ClientSession

__all__ = [
    "ServerLog",
    "connection",
    "open_session",
    "output_note",
    "reason_of",
    "server_named",
    "stdio_session",
]

# The MCP modules share one logger, the name they had as one module.
_log = logging.getLogger("leanloop.tools.mcp")

_LOG_LIMIT: Final = 1_000_000
"""Bytes a server's log may hold before a start moves it to ``NAME.log.1`` (one old copy)."""
_TAIL_BYTES: Final = 16_384
"""How much of the end of a server's log is read for its last line."""
_SHOWN_CHARS: Final = 200
"""The most of a server's last line of output an error message quotes."""
_HEADER: Final = "--- leanloop "
"""How the line each start writes into the server's log begins."""
_TERMINAL_CODE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]|[\x00-\x08\x0b-\x1f\x7f]")
"""Colours, cursor moves and other control characters of a progress display."""


def connection(server: McpServerSpec) -> dict[str, Any]:
    """The ``langchain-mcp-adapters`` connection for ``server``."""
    if server.command is not None:
        conn: dict[str, Any] = {
            "transport": "stdio",
            "command": server.command,
            "args": list(server.args),
        }
        if server.env is not None:
            conn["env"] = dict(server.env)
        if server.cwd is not None:
            conn["cwd"] = server.cwd
        return conn
    conn = {"transport": server.transport, "url": server.url}
    if server.headers:
        conn["headers"] = dict(server.headers)
    return conn


def open_session(
    server: McpServerSpec, log: ServerLog | None
) -> AbstractAsyncContextManager[ClientSession]:
    """A session with ``server`` (not yet initialized); a stdio server's stderr goes to ``log``.

    A server reached by URL gets the adapters' session; a stdio server one of
    :func:`stdio_session`, since the adapters give the MCP SDK no ``errlog``.
    """
    if server.command is not None and log is not None:
        return stdio_session(server, log)
    from langchain_mcp_adapters.sessions import create_session  # noqa: PLC0415 - an extra

    return create_session(cast("Connection", connection(server)))


@asynccontextmanager
async def stdio_session(server: McpServerSpec, log: ServerLog) -> AsyncIterator[ClientSession]:
    """A session with the program ``server.command``, its stderr written into ``log``.

    What the adapters' stdio session does, with the SDK's ``errlog``. The environment is
    the file's ``env:`` as loaded (its ``${VAR}`` already replaced by leanloop), over the
    SDK's few inherited variables.
    """
    from mcp import ClientSession, StdioServerParameters  # noqa: PLC0415 - an optional extra
    from mcp.client.stdio import stdio_client  # noqa: PLC0415

    assert server.command is not None
    params = StdioServerParameters(
        command=server.command,
        args=list(server.args),
        env=None if server.env is None else dict(server.env),
        cwd=server.cwd,
    )
    with log.opened() as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            yield session


class ServerLog:
    """Where one start of a stdio server writes its stderr: a file, not leanloop's stderr.

    ``uvx`` and ``npx`` print their download chatter on stderr, and servers their own
    logs; on leanloop's stderr those lines would mix with its own. Each start appends to
    ``logs/mcp/NAME.log`` in leanloop's cache folder
    (:meth:`leanloop.localmodel.paths.CachePaths.mcp_log`, private to the user), after a
    line naming the time, leanloop's process and the command (never its arguments or
    environment: they may hold secrets); a log past ``_LOG_LIMIT`` is first moved to
    ``NAME.log.1``. Where the file cannot be written, the server writes to leanloop's
    stderr, as the SDK would.
    """

    def __init__(self, server: McpServerSpec) -> None:
        """Name the log of ``server``; nothing is opened before :meth:`opened`."""
        self.server = server
        self.path: Path | None = None
        """The log file, once opened."""
        self.on_stderr = False
        """Whether the output went to leanloop's stderr instead (no file could be written)."""
        self._offset = 0

    @contextmanager
    def opened(self) -> Iterator[TextIO]:
        """The stream the server's stderr is given, open for the block (it has a descriptor)."""
        with ExitStack() as stack:
            try:
                stream = stack.enter_context(self._open())
            except OSError as exc:
                _log.debug(
                    "MCP server %r: no log file (%s); it writes to stderr",
                    self.server.name,
                    reason_of(exc),
                )
                self.on_stderr = True
                stream = _process_stderr(stack)
            yield stream

    def note(self) -> str | None:
        """Where the output went, with its last line: for the message of a failed start."""
        if self.on_stderr:
            return "its output is above, on stderr"
        if self.path is None:
            return None
        last = self._last_line()
        if last is None:
            return f"it wrote nothing to {self.path}"
        return f"its output is in {self.path}, the last line: {last!r}"

    def _open(self) -> TextIO:
        path = cache_paths().mcp_log(self.server.name)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            if path.stat().st_size > _LOG_LIMIT:
                path.replace(path.with_name(path.name + ".1"))
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        stream = os.fdopen(fd, "a", encoding="utf-8", errors="replace")
        when = datetime.now().astimezone().isoformat(timespec="seconds")
        try:
            stream.write(
                f"{_HEADER}{when} (pid {os.getpid()}) starts MCP server"
                f" {self.server.name!r} ({_command_or_url(self.server)})\n"
            )
            stream.flush()
            self._offset = os.fstat(fd).st_size
        except OSError:  # a full disk: the caller falls back to stderr
            stream.close()
            raise
        self.path = path
        return stream

    def _last_line(self) -> str | None:
        """The last line this start's server wrote, made plain and redacted; ``None``: none."""
        assert self.path is not None
        try:
            with self.path.open("rb") as file:
                size = file.seek(0, os.SEEK_END)
                file.seek(max(self._offset, size - _TAIL_BYTES))
                tail = file.read()
        except OSError:
            return None
        for line in reversed(tail.decode("utf-8", errors="replace").split("\n")):
            shown = _plain(line)
            if shown and not shown.startswith(_HEADER.strip()):  # another start's line
                return shown
        return None


def _plain(line: str) -> str:
    """One line of a server's output as a message may quote it: what a terminal would
    finally show of it, without control characters, redacted, at most ``_SHOWN_CHARS``."""
    shown = _TERMINAL_CODE.sub("", line.rstrip("\r\n").rpartition("\r")[2])
    shown = redact_text(" ".join(shown.split()))
    return shown if len(shown) <= _SHOWN_CHARS else shown[: _SHOWN_CHARS - 3] + "..."


def _process_stderr(stack: ExitStack) -> TextIO:
    """The process's own stderr when it has a descriptor, else the null device.

    ``sys.stderr`` may be an object without one (Robot Framework, some notebooks), and a
    child process needs a descriptor: the interpreter's original stream is used.
    """
    real = sys.__stderr__
    if real is not None and _has_fileno(real):
        return real
    return stack.enter_context(open(os.devnull, "w"))


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return False
    return True


def output_note(log: ServerLog | None, exc: BaseException | None, *, exited: bool = False) -> str:
    """`` (…)``: where a stdio server's output went and its last line, after a failed start.

    Nothing for a server reached by URL, or one whose program could not be started at all
    (an ``OSError``: it wrote nothing). With ``exited`` (the server ended before it
    answered), also what environment a stdio server gets (:data:`_ENV_HINT`).
    """
    if log is None or isinstance(_innermost(exc), OSError):
        return ""
    note = log.note()
    if note is None:
        return ""
    if exited:
        return f" (it exited before it answered: {note}; {_ENV_HINT})"
    return f" ({note})"


_ENV_HINT = (
    "a stdio server gets only HOME, LOGNAME, PATH, SHELL, TERM and USER of leanloop's"
    " environment, plus its env:, so a proxy or certificate setting it needs goes in env:"
)
"""Said when a stdio server closed the connection at start: the MCP SDK passes it a
reduced environment, the commonest cause behind a proxy or a TLS-inspecting network."""


def server_named(server: McpServerSpec) -> str:
    """``MCP server 'time' (command 'uvx')``: how a message names ``server``."""
    return f"MCP server {server.name!r} ({_command_or_url(server)})"


def _command_or_url(server: McpServerSpec) -> str:
    """``command 'python'`` or ``url http://…`` (never the headers or the environment)."""
    if server.command is not None:
        return f"command {server.command!r}"
    return f"url {server.url}"


def _innermost(exc: BaseException | None) -> BaseException | None:
    """The first exception inside ``exc``'s exception groups (``exc`` when it is none)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def reason_of(exc: BaseException) -> str:
    """The innermost, first cause of ``exc`` as one line (exception groups unwrapped)."""
    exc = _innermost(exc) or exc
    if isinstance(exc, OSError) and exc.strerror:
        text = exc.strerror
        if exc.filename:
            text += f": {exc.filename!r}"
    else:
        text = " ".join(str(exc).split()) or type(exc).__name__
        text = f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text
    return text if len(text) <= 300 else text[:297] + "..."
