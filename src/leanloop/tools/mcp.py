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

This module imports nothing heavy at import time (the adapters, ``mcp`` and LangChain
are imported when a server is first started).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Final, Self, cast

from leanloop.exceptions import ToolError
from leanloop.spec.toolrefs import MCP_PREFIX, mcp_server_of, parse_mcp_ref
from leanloop.spec.types import McpServerSpec

if TYPE_CHECKING:
    from anyio import CancelScope
    from langchain_core.tools import BaseTool
    from langchain_mcp_adapters.sessions import Connection
    from mcp import ClientSession
    from mcp.types import Tool as McpTool

    OpenSession = Callable[[Connection], AbstractAsyncContextManager[ClientSession]]
    """``langchain_mcp_adapters.sessions.create_session``: a connection's session."""

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
            problem = f"did not start within {within}"
        except Exception as exc:  # the start failed: say why, in the call's result
            self._drop(server.name, held)
            problem = f"could not be started: {_reason(exc)}"
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
        from langchain_mcp_adapters.sessions import create_session  # noqa: PLC0415 - an extra

        if server.command is not None:
            _usable_server_stderr()
        _log.debug("MCP server %r: opening the run's session", server.name)
        held = _Held(server.name, create_session, cast("Connection", connection(server)))
        self._current[server.name] = held
        self._every.append(held)
        return held

    def _drop(self, server: str, held: _Held) -> None:
        if self._current.get(server) is held:
            del self._current[server]
        held.stop()


class _Held:
    """One session and the task that holds it open until :meth:`stop` or :meth:`abort`."""

    def __init__(self, name: str, open_session: OpenSession, conn: Connection) -> None:
        loop = asyncio.get_running_loop()
        self.name = name
        self.ready: asyncio.Future[ClientSession] = loop.create_future()
        # A start that failed with nobody waiting any more is not "never retrieved".
        self.ready.add_done_callback(_retrieve)
        self._leave = asyncio.Event()
        self._scope: CancelScope | None = None
        self._aborted = False
        self.task = loop.create_task(self._hold(open_session, conn), name=f"leanloop-mcp-{name}")

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

    async def _hold(self, open_session: OpenSession, conn: Connection) -> None:
        from anyio import CancelScope  # noqa: PLC0415 - a dependency of the mcp extra

        try:
            with CancelScope() as scope:
                self._scope = scope
                if self._aborted:
                    scope.cancel()
                async with open_session(conn) as session:
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
        from langchain_mcp_adapters.sessions import create_session  # noqa: PLC0415 - an extra
        from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool as convert  # noqa: PLC0415
    except ImportError as exc:
        msg = f"MCP server {server.name!r}: {_import_failure(exc)}"
        raise ToolError(msg) from None
    conn = connection(server)
    adapters_conn = cast("Connection", conn)
    if server.command is not None:
        _usable_server_stderr()
    try:
        listed = await asyncio.wait_for(
            _list_tools(create_session, adapters_conn), timeout=server.timeout
        )
    except TimeoutError:
        within = f"{server.timeout:g} s"
        msg = f"MCP server {server.name!r} ({_what(server)}) did not list its tools within {within}"
        raise ToolError(msg) from None
    except Exception as exc:
        msg = f"MCP server {server.name!r} ({_what(server)}) could not be started: {_reason(exc)}"
        if server.command is not None and not isinstance(exc, OSError):
            msg += _STDIO_HINT
        raise ToolError(msg) from None
    return [
        _run_scoped(
            convert(None, tool, connection=adapters_conn, server_name=server.name), tool, server
        )
        for tool in listed
    ]


async def _list_tools(open_session: OpenSession, conn: Connection) -> list[McpTool]:
    """Every tool the server has (its list may come in pages), on a session of its own."""
    async with open_session(conn) as session:
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
            return await each_call(**arguments)
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


def _usable_server_stderr() -> None:
    """Give stdio servers a real file for their stderr.

    ``mcp.client.stdio.stdio_client`` binds ``errlog=sys.stderr`` when it is imported, and
    ``langchain-mcp-adapters`` does not pass one; where ``sys.stderr`` was replaced by an
    object without a file descriptor (Robot Framework, some notebooks) every server start
    fails with ``UnsupportedOperation: fileno``. The default then becomes the process's
    own stderr.
    """
    from mcp.client import stdio  # noqa: PLC0415 - an optional extra

    function = getattr(stdio.stdio_client, "__wrapped__", stdio.stdio_client)
    defaults = function.__defaults__
    if not defaults or _has_fileno(defaults[-1]):
        return
    real = sys.__stderr__ if _has_fileno(sys.__stderr__) else open(os.devnull, "w")  # noqa: SIM115
    function.__defaults__ = (*defaults[:-1], real)


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


_STDIO_HINT = (
    " (it exited before it answered: its own error output is above; a stdio server gets"
    " only HOME, LOGNAME, PATH, SHELL, TERM and USER of leanloop's environment, plus its"
    " env:, so a proxy or certificate setting it needs goes in env:)"
)
"""Said when a stdio server closed the connection at start: the MCP SDK passes it a
reduced environment, the commonest cause behind a proxy or a TLS-inspecting network."""


def _reason(exc: BaseException) -> str:
    """The innermost, first cause of ``exc`` as one line (exception groups unwrapped)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
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
