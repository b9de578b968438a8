"""Tools of MCP servers (the ``leanloop[mcp]`` extra, through ``langchain-mcp-adapters``).

An agents file declares servers under ``mcp_servers`` and an agent lists ``"mcp:time"``
(every tool of the server) or ``"mcp:docs/search_docs"`` (one tool). When the agent is
built, each server it uses is started once, within its ``timeout``, to list its tools;
a server that cannot be started, or does not answer in time, is a :class:`ToolError`
naming it, in one line.

Sessions: one per server per *run* (ADR 0018, amended). A run holds an
:class:`McpSessions`, which the registry hands every tool call in its
:class:`~leanloop.tools._notes.CallContext`; a server's session is opened at the run's
first call of one of its tools, used by the run's later calls (calls of one round at
once too: a ``ClientSession`` multiplexes requests by their id), and closed when the run
ends, however it ends (:class:`leanloop.agent.LLMAgent` closes it). A call made outside
a run (a tool invoked by hand) opens a session of its own, as every call used to.

The results are LangChain content blocks; the registry turns them into plain text
(:func:`leanloop.tools.registry.clean_text` and its content-block flattening), so MCP
tools are capped, pruned, guarded and repaired like any tool.

``leanloop validate --check-models`` starts each server the same way, through
:func:`probe_mcp_servers`, and checks each ``mcp:server/tool`` reference with
:func:`missing_mcp_tool`, so that a file is refused before a run for the same reasons.

A stdio server's stderr never reaches leanloop's own: what ``uvx`` or ``npx`` print while
they fetch a server ("Installed 12 packages in 30ms"), and the server's own logs, are
appended to ``logs/mcp/NAME.log`` in leanloop's cache folder (:class:`_ServerLog`). A
server that fails to start is still one line, which names that file and quotes its last
line (redacted).

This module imports nothing heavy at import time (the adapters, ``mcp`` and LangChain
are imported when a server is first started).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, ExitStack, asynccontextmanager, contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self, TextIO, cast

from leanloop.exceptions import ToolError
from leanloop.localmodel.paths import cache_paths
from leanloop.redact import redact_text
from leanloop.spec.toolrefs import MCP_PREFIX, mcp_server_of, parse_mcp_ref
from leanloop.spec.types import McpServerSpec

if TYPE_CHECKING:
    from anyio import CancelScope
    from langchain_core.tools import BaseTool
    from langchain_mcp_adapters.sessions import Connection
    from mcp import ClientSession
    from mcp.types import Tool as McpTool

__all__ = [
    "MCP_PREFIX",
    "McpSessions",
    "load_mcp_tools",
    "mcp_server_of",
    "missing_mcp_tool",
    "parse_mcp_ref",
    "probe_mcp_servers",
]

_log = logging.getLogger(__name__)

_EXTRA_HINT = "install the leanloop[mcp] extra (pip install 'leanloop[mcp]')"
_MAX_PAGES: Final = 1_000
"""A server that pages its tool list past this is looping on its cursor."""
_CLOSE_S: Final = 10.0
"""How long closing one session may take (a stdio server gets 2 s to exit on its own,
then its process tree is terminated, 2 s more) before it is aborted."""
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


def load_mcp_tools(
    refs: Sequence[str], servers: Mapping[str, McpServerSpec]
) -> dict[str, list[BaseTool]]:
    """The tools each MCP reference in ``refs`` stands for, by reference.

    Every server named is started once (all at once, each within its ``timeout``) to list
    its tools. Runs in a thread of its own, so it works with or without a running loop.

    Raises:
        ToolError: An unknown server, a server that fails or does not answer in time, a
            tool the server does not have, or the extra not installed; one line, naming it.
    """
    wanted: dict[str, list[tuple[str, str | None]]] = {}
    for ref in refs:
        parsed = parse_mcp_ref(ref)
        if parsed is None:
            continue
        name, tool = parsed
        if name not in servers:
            known = ", ".join(map(repr, servers)) or "none"
            msg = f"tool {ref!r}: no MCP server named {name!r} (mcp_servers: {known})"
            raise ToolError(msg)
        wanted.setdefault(name, []).append((ref, tool))
    if not wanted:
        return {}
    listed = _in_thread(_list_all({name: servers[name] for name in wanted}))
    found: dict[str, list[BaseTool]] = {}
    for name, items in wanted.items():
        tools = listed[name]
        for ref, tool_name in items:
            problem = missing_mcp_tool(ref, [tool.name for tool in tools])
            if problem is not None:
                raise ToolError(f"tool {ref!r}: {problem}")
            found[ref] = [tool for tool in tools if tool_name in (None, tool.name)]
    return found


def probe_mcp_servers(servers: Mapping[str, McpServerSpec]) -> dict[str, list[str] | ToolError]:
    """Start each server once and list its tool names, as building an agent does.

    All servers start at once, each within its own ``timeout``, in a thread of its own
    (so this works with or without a running loop). A server that fails does not stop
    the others: its entry is the one-line :class:`ToolError` naming it (and its command
    or URL) instead of the names.

    Args:
        servers: The servers to start, by name.

    Returns:
        Per server name, in the order given: its tool names, or why it could not list them.
    """
    if not servers:
        return {}
    probed: dict[str, list[str] | ToolError] = _in_thread(_probe_all(servers))
    return probed


def missing_mcp_tool(ref: str, names: Sequence[str]) -> str | None:
    """Why ``mcp:server/tool`` names no tool of a server that has the tools ``names``.

    ``None`` when the tool is there, or ``ref`` names the whole server (``mcp:server``)
    or is no MCP reference.
    """
    parsed = parse_mcp_ref(ref)
    if parsed is None or parsed[1] is None or parsed[1] in names:
        return None
    server, tool = parsed
    has = ", ".join(names) or "no tools"
    return f"MCP server {server!r} has no tool {tool!r} (it has {has})"


class McpSessions:
    """The MCP sessions of one run: one per server, opened at its first call, closed at the end.

    Each session is held by a task of its own, which enters the session's context and
    waits to be told to leave it: ``mcp`` sessions are anyio context managers that must be
    left by the task that entered them, and a tool call's task ends with the call. Calls
    only send requests on the session, which works from any task of the same event loop,
    several at once. Use it as an ``async with`` block around a run (or call
    :meth:`aclose`); a pool is bound to the event loop of its first session.
    """

    def __init__(self) -> None:
        """Make an empty pool: nothing is started before a tool call asks for a server."""
        self._current: dict[str, _Held] = {}
        self._every: list[_Held] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False

    async def session(self, server: McpServerSpec) -> ClientSession | None:
        """``server``'s session in this run: the open one, or one opened now.

        Callers that ask while it is starting wait for the same start. A session whose
        task has ended (its server went away) is replaced by a new one.

        Returns:
            The session; ``None`` when the pool cannot serve this call (it is closed, or
            was opened on another event loop), so the call opens a session of its own.

        Raises:
            ToolException: The server could not be started, or did not answer within its
                ``timeout``; one line naming it (the model sees it as the call's error).
        """
        loop = asyncio.get_running_loop()
        if self._closed or self._loop not in (None, loop):
            return None
        self._loop = loop
        held = self._current.get(server.name)
        if held is None or held.task.done():
            held = self._open(server)
        try:
            # Shielded: a caller that gives up (its time limit) must not end the start
            # others wait for.
            return await asyncio.wait_for(asyncio.shield(held.ready), server.timeout)
        except TimeoutError:
            self._drop(server.name, held)
            within = f"{server.timeout:g} s"
            problem = f"did not start within {within}{_output_note(held.log, None)}"
        except Exception as exc:  # the start failed: say why, in the call's result
            self._drop(server.name, held)
            problem = f"could not be started: {_reason(exc)}{_output_note(held.log, exc)}"
        from langchain_core.tools import ToolException  # noqa: PLC0415 - loaded by now

        raise ToolException(f"MCP server {server.name!r} ({_what(server)}) {problem}")

    def discard(self, server: str, session: ClientSession) -> None:
        """Close ``server``'s ``session`` (it failed), so that its next call opens another.

        Nothing happens when the pool already holds another session of ``server``.
        """
        held = self._current.get(server)
        if held is None or not held.ready.done() or held.ready.exception() is not None:
            return
        if held.ready.result() is session:
            _log.info("MCP server %r: its session failed; the next call opens another", server)
            self._drop(server, held)

    async def aclose(self, *, abort: bool = False) -> None:
        """Close every session and wait (each at most ``_CLOSE_S``) until they are closed.

        A stdio server's process ends with its session: its stdin is closed, it gets 2 s
        to exit, then its process tree is terminated (``mcp``'s shutdown sequence).

        Args:
            abort: End the sessions at once instead (see :meth:`_Held.abort`: a stdio
                server is killed, not waited for): for a run that failed or was
                cancelled, which must end promptly (after a signal the CLI gives a run 2 s
                to unwind, and a server stuck in a tool ignores its stdin closing). The
                same happens when this wait is cancelled.
        """
        self._closed = True
        for held in self._every:
            if abort:
                held.abort()
            else:
                held.stop()
        tasks = [held.task for held in self._every if not held.task.done()]
        if not tasks or self._loop is not asyncio.get_running_loop():  # never across loops
            return
        try:
            _, pending = await asyncio.wait(tasks, timeout=_CLOSE_S)
        except asyncio.CancelledError:
            for held in self._every:
                held.abort()
            await asyncio.wait(tasks, timeout=_CLOSE_S)
            raise
        for held in self._every:
            if held.task in pending:
                _log.warning("MCP server %r: its session did not close in time", held.name)
                held.abort()
        if pending:
            await asyncio.wait(pending, timeout=_CLOSE_S)

    async def __aenter__(self) -> Self:
        """The pool itself; it is closed when the block ends."""
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, *_: object) -> None:
        """Close every session (:meth:`aclose`): at once when the block ended with an
        exception (a failure, a cancellation), else each server is let exit on its own."""
        await self.aclose(abort=exc_type is not None)

    def _open(self, server: McpServerSpec) -> _Held:
        _log.debug("MCP server %r: opening the run's session", server.name)
        held = _Held(server)
        self._current[server.name] = held
        self._every.append(held)
        return held

    def _drop(self, server: str, held: _Held) -> None:
        if self._current.get(server) is held:
            del self._current[server]
        held.stop()


class _Held:
    """One session and the task that holds it open until :meth:`stop` or :meth:`abort`."""

    def __init__(self, server: McpServerSpec) -> None:
        loop = asyncio.get_running_loop()
        self.name = server.name
        self.log = _ServerLog(server) if server.command is not None else None
        """Where a stdio server's stderr goes; ``None`` for a server reached by URL."""
        self.ready: asyncio.Future[ClientSession] = loop.create_future()
        # A start that failed with nobody waiting any more is not "never retrieved".
        self.ready.add_done_callback(_retrieve)
        self._leave = asyncio.Event()
        self._scope: CancelScope | None = None
        self._aborted = False
        opening = _open_session(server, self.log)
        self.task = loop.create_task(self._hold(opening), name=f"leanloop-mcp-{server.name}")

    def stop(self) -> None:
        """Leave the session (a session still starting is aborted: it waits on no signal)."""
        self._leave.set()
        if not self.ready.done():
            self.abort()

    def abort(self) -> None:
        """End the session at once: a stdio server is killed, not let exit on its own.

        An anyio cancel scope, not ``Task.cancel``: its cancellation holds for every
        ``await`` of the session's shutdown, so ``mcp``'s stdio client skips its 2 s wait
        for the server to exit and anyio kills the process. A single ``CancelledError``
        would be spent before that wait.
        """
        self._aborted = True
        self._leave.set()
        if self._scope is not None:
            self._scope.cancel()
        else:  # not started yet
            self.task.cancel()

    async def _hold(self, opening: AbstractAsyncContextManager[ClientSession]) -> None:
        from anyio import CancelScope  # noqa: PLC0415 - a dependency of the mcp extra

        try:
            with CancelScope() as scope:
                self._scope = scope
                if self._aborted:
                    scope.cancel()
                async with opening as session:
                    await session.initialize()
                    self.ready.set_result(session)
                    await self._leave.wait()
        except BaseException as exc:
            self._failed(exc)
            if not isinstance(exc, Exception):
                raise
            # The calls on it have failed with their own errors already; nobody awaits this.
            _log.debug("MCP server %r: its session ended: %s", self.name, _reason(exc))
        else:
            self._failed(ToolError("the run ended"))

    def _failed(self, exc: BaseException) -> None:
        """Tell those waiting for a start that never finished why."""
        if not self.ready.done():
            # A cancelled start is a failed start for those waiting: their own calls were
            # not cancelled, so they must not see a CancelledError.
            self.ready.set_exception(
                exc if isinstance(exc, Exception) else ToolError("the run ended")
            )


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


async def _list_all(servers: Mapping[str, McpServerSpec]) -> dict[str, list[BaseTool]]:
    results = await asyncio.gather(*(_list(server) for server in servers.values()))
    return dict(zip(servers, results, strict=True))


async def _probe_all(servers: Mapping[str, McpServerSpec]) -> dict[str, list[str] | ToolError]:
    async def probe(server: McpServerSpec) -> list[str] | ToolError:
        try:
            return [tool.name for tool in await _list(server)]
        except ToolError as exc:  # one server's failure is its own verdict, not the others'
            return exc

    results = await asyncio.gather(*(probe(server) for server in servers.values()))
    return dict(zip(servers, results, strict=True))


async def _list(server: McpServerSpec) -> list[BaseTool]:
    try:
        from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool as convert  # noqa: PLC0415
    except ImportError as exc:
        msg = f"MCP server {server.name!r}: {_import_failure(exc)}"
        raise ToolError(msg) from None
    adapters_conn = cast("Connection", connection(server))
    log = _ServerLog(server) if server.command is not None else None
    try:
        listed = await asyncio.wait_for(
            _list_tools(_open_session(server, log)), timeout=server.timeout
        )
    except TimeoutError:
        within = f"{server.timeout:g} s"
        msg = f"MCP server {server.name!r} ({_what(server)}) did not list its tools within {within}"
        raise ToolError(msg + _output_note(log, None)) from None
    except Exception as exc:
        msg = f"MCP server {server.name!r} ({_what(server)}) could not be started: {_reason(exc)}"
        raise ToolError(msg + _output_note(log, exc, exited=True)) from None
    return [
        _run_scoped(
            convert(None, tool, connection=adapters_conn, server_name=server.name), tool, server
        )
        for tool in listed
    ]


async def _list_tools(opening: AbstractAsyncContextManager[ClientSession]) -> list[McpTool]:
    """Every tool the server has (its list may come in pages), on a session of its own."""
    async with opening as session:
        await session.initialize()
        tools: list[McpTool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await session.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.nextCursor
            if not cursor:
                break
        return tools


def _open_session(
    server: McpServerSpec, log: _ServerLog | None
) -> AbstractAsyncContextManager[ClientSession]:
    """A session with ``server`` (not yet initialized); a stdio server's stderr goes to ``log``.

    A server reached by URL gets the adapters' session; a stdio server one of
    :func:`_stdio_session`, since the adapters give the MCP SDK no ``errlog``.
    """
    if server.command is not None and log is not None:
        return _stdio_session(server, log)
    from langchain_mcp_adapters.sessions import create_session  # noqa: PLC0415 - an extra

    return create_session(cast("Connection", connection(server)))


@asynccontextmanager
async def _stdio_session(server: McpServerSpec, log: _ServerLog) -> AsyncIterator[ClientSession]:
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


async def _call_alone(server: McpServerSpec, tool: McpTool, arguments: dict[str, Any]) -> Any:
    """Call ``tool`` of the stdio ``server`` on a session of its own (a call outside a run).

    Raises:
        ToolException: The server could not be started; one line naming it and its log.
    """
    from langchain_core.tools import StructuredTool, ToolException  # noqa: PLC0415
    from langchain_mcp_adapters.tools import (  # noqa: PLC0415
        convert_mcp_tool_to_langchain_tool as convert,
    )

    log = _ServerLog(server)
    started = False
    failure: Exception | None = None
    try:
        async with _stdio_session(server, log) as session:
            await session.initialize()
            started = True
            bound = convert(session, tool, server_name=server.name)
            assert isinstance(bound, StructuredTool)
            assert bound.coroutine is not None
            try:
                return await bound.coroutine(**arguments)
            except Exception as exc:  # raised below: leaving the session may swallow it
                failure = exc
    except Exception as exc:
        if started:
            raise
        problem = f"could not be started: {_reason(exc)}{_output_note(log, exc)}"
        raise ToolException(f"MCP server {server.name!r} ({_what(server)}) {problem}") from None
    assert failure is not None
    raise failure


class _ServerLog:
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
                    _reason(exc),
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
                f" {self.server.name!r} ({_what(self.server)})\n"
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


def _output_note(log: _ServerLog | None, exc: BaseException | None, *, exited: bool = False) -> str:
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


def _run_scoped(per_call: BaseTool, tool: McpTool, server: McpServerSpec) -> BaseTool:
    """``per_call`` (the adapters' tool, which opens a session per call), made to use the
    session of the run its call belongs to.

    The run's :class:`McpSessions` comes with the call's config
    (:class:`~leanloop.tools._notes.CallContext`); without one, the call goes as
    ``per_call`` makes it. Name, schema, result format and error handling stay the
    adapters' (a copy of ``per_call`` with another coroutine).
    """
    from langchain_core.runnables import RunnableConfig  # noqa: PLC0415 - loaded by now
    from langchain_core.tools import StructuredTool, ToolException  # noqa: PLC0415
    from langchain_mcp_adapters.tools import (  # noqa: PLC0415
        convert_mcp_tool_to_langchain_tool as convert,
    )

    from leanloop.tools._notes import call_context  # noqa: PLC0415 - LangChain at import

    assert isinstance(per_call, StructuredTool)
    assert per_call.coroutine is not None
    each_call = per_call.coroutine

    async def call(leanloop_config: RunnableConfig, **arguments: Any) -> Any:
        context = call_context(leanloop_config)
        sessions = context.sessions if context is not None else None
        session = await sessions.session(server) if sessions is not None else None
        if sessions is None or session is None:
            if server.command is None:
                return await each_call(**arguments)
            return await _call_alone(server, tool, arguments)
        bound = convert(session, tool, server_name=server.name)
        assert isinstance(bound, StructuredTool)
        assert bound.coroutine is not None
        try:
            return await bound.coroutine(**arguments)
        except ToolException:  # the server answered (an error result): the session is fine
            raise
        except Exception as exc:
            if _session_failed(exc):
                sessions.discard(server.name, session)
            raise

    # LangChain hands a tool's coroutine the call's config in the parameter annotated
    # `RunnableConfig`, found with `get_type_hints`: the annotation must be the class, and
    # this module does not import LangChain at module level.
    call.__annotations__["leanloop_config"] = RunnableConfig
    return per_call.model_copy(update={"coroutine": call})


def _session_failed(exc: Exception) -> bool:
    """Whether ``exc`` says the session is gone (rather than one request failed)."""
    from mcp.shared.exceptions import McpError  # noqa: PLC0415 - an optional extra
    from mcp.types import CONNECTION_CLOSED  # noqa: PLC0415

    return not isinstance(exc, McpError) or exc.error.code == CONNECTION_CLOSED


def _has_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return False
    return True


def _what(server: McpServerSpec) -> str:
    """``command 'python'`` or ``url http://…`` (never the headers or the environment)."""
    if server.command is not None:
        return f"command {server.command!r}"
    return f"url {server.url}"


def _import_failure(exc: ImportError) -> str:
    """Why ``langchain_mcp_adapters`` did not import: the extra missing, or broken.

    Only a missing adapters package gets the install hint. An installed extra that fails
    to import (an MCP server package that pulled ``mcp`` 2.x, which the adapters do not
    support) would be hidden by that hint, so its own error is shown, with the versions
    installed and the ``mcp`` the adapters require.
    """
    if isinstance(exc, ModuleNotFoundError) and exc.name == "langchain_mcp_adapters":
        return _EXTRA_HINT
    installed = ", ".join(
        f"{name} {version}"
        for name in ("langchain-mcp-adapters", "mcp")
        if (version := _version(name)) is not None
    )
    text = f"the leanloop[mcp] extra does not import: {_reason(exc)}"
    if installed:
        text += f" (installed: {installed})"
    wanted = _mcp_requirement()
    if wanted is not None:
        text += f"; langchain-mcp-adapters needs {wanted}: pip install '{wanted}'"
    return text


def _version(distribution: str) -> str | None:
    from importlib import metadata  # noqa: PLC0415 - only on this error path

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _mcp_requirement() -> str | None:
    """The adapters' own requirement on ``mcp`` (``mcp<2.0.0,>=1.24.0``), from their metadata."""
    from importlib import metadata  # noqa: PLC0415 - only on this error path

    try:
        requires = metadata.requires("langchain-mcp-adapters") or []
    except metadata.PackageNotFoundError:
        return None
    for requirement in requires:
        spec = requirement.split(";", 1)[0].strip()
        name = spec.split("<", 1)[0].split(">", 1)[0].split("=", 1)[0].split("!", 1)[0]
        if name.strip().lower() == "mcp" and spec != name:
            return spec.replace(" ", "")
    return None


_ENV_HINT = (
    "a stdio server gets only HOME, LOGNAME, PATH, SHELL, TERM and USER of leanloop's"
    " environment, plus its env:, so a proxy or certificate setting it needs goes in env:"
)
"""Said when a stdio server closed the connection at start: the MCP SDK passes it a
reduced environment, the commonest cause behind a proxy or a TLS-inspecting network."""


def _innermost(exc: BaseException | None) -> BaseException | None:
    """The first exception inside ``exc``'s exception groups (``exc`` when it is none)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _reason(exc: BaseException) -> str:
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


def _in_thread(coro: Any) -> Any:
    """Run ``coro`` to its end on a fresh event loop in a thread; return or raise its result."""
    box: dict[str, Any] = {}

    def main() -> None:
        try:
            box["value"] = asyncio.run(coro)
        except BaseException as exc:  # handed to the caller's thread, raised there
            box["error"] = exc

    thread = threading.Thread(target=main, name="leanloop-mcp-list", daemon=True)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box["value"]
