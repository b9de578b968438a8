"""Tools of MCP servers (the ``leanloop[mcp]`` extra, through ``langchain-mcp-adapters``).

An agents file declares servers under ``mcp_servers`` and an agent lists ``"mcp:time"``
(every tool of the server) or ``"mcp:docs/search_docs"`` (one tool). When the agent is
built, each server it uses is started once, within its ``timeout``, to list its tools;
a server that cannot be started, or does not answer in time, is a :class:`ToolError`
naming it, in one line.

Sessions: one per server per *run* (ADR 0018, amended), held by the run's
:class:`McpSessions` (:mod:`leanloop.tools.mcp_sessions`); each tool listed here is made
to use the session of the run its call belongs to. A call made outside a run (a tool
invoked by hand) opens a session of its own, as every call used to.

The results are LangChain content blocks; the registry turns them into plain text
(:func:`leanloop.tools.registry.clean_text` and its content-block flattening), so MCP
tools are capped, pruned, guarded and repaired like any tool.

``leanloop validate --check-models`` starts each server the same way, through
:func:`probe_mcp_servers`, and checks each ``mcp:server/tool`` reference with
:func:`missing_mcp_tool`, so that a file is refused before a run for the same reasons.

A stdio server's stderr never reaches leanloop's own: what ``uvx`` or ``npx`` print while
they fetch a server ("Installed 12 packages in 30ms"), and the server's own logs, are
appended to ``logs/mcp/NAME.log`` in leanloop's cache folder. A server that fails to
start is still one line, which names that file and quotes its last line (redacted). How
one server is reached (its session, its log, the words of a failed start) is
:mod:`leanloop.tools._mcp_connect`; this module adapts what a server lists into
LangChain tools.

This module imports nothing heavy at import time (the adapters, ``mcp`` and LangChain
are imported when a server is first started).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, Final, cast

from leanloop.exceptions import ToolError
from leanloop.spec.toolrefs import MCP_PREFIX, mcp_server_of, parse_mcp_ref
from leanloop.spec.types import McpServerSpec
from leanloop.tools._mcp_connect import (
    ServerLog,
    connection,
    open_session,
    output_note,
    reason_of,
    server_named,
    stdio_session,
)
from leanloop.tools.mcp_sessions import McpSessions

if TYPE_CHECKING:
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

_EXTRA_HINT = "install the leanloop[mcp] extra (pip install 'leanloop[mcp]')"
_MAX_PAGES: Final = 1_000
"""A server that pages its tool list past this is looping on its cursor."""


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
    log = ServerLog(server) if server.command is not None else None
    try:
        listed = await asyncio.wait_for(
            _list_tools(open_session(server, log)), timeout=server.timeout
        )
    except TimeoutError:
        within = f"{server.timeout:g} s"
        msg = f"{server_named(server)} did not list its tools within {within}"
        raise ToolError(msg + output_note(log, None)) from None
    except Exception as exc:
        msg = f"{server_named(server)} could not be started: {reason_of(exc)}"
        raise ToolError(msg + output_note(log, exc, exited=True)) from None
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


async def _call_alone(server: McpServerSpec, tool: McpTool, arguments: dict[str, Any]) -> Any:
    """Call ``tool`` of the stdio ``server`` on a session of its own (a call outside a run).

    Raises:
        ToolException: The server could not be started; one line naming it and its log.
    """
    from langchain_core.tools import StructuredTool, ToolException  # noqa: PLC0415
    from langchain_mcp_adapters.tools import (  # noqa: PLC0415
        convert_mcp_tool_to_langchain_tool as convert,
    )

    log = ServerLog(server)
    started = False
    failure: Exception | None = None
    try:
        async with stdio_session(server, log) as session:
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
        problem = f"could not be started: {reason_of(exc)}{output_note(log, exc)}"
        raise ToolException(f"{server_named(server)} {problem}") from None
    assert failure is not None
    raise failure


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
    text = f"the leanloop[mcp] extra does not import: {reason_of(exc)}"
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
