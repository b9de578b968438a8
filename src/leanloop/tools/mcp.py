"""Tools of MCP servers (the ``leanloop[mcp]`` extra, through ``langchain-mcp-adapters``).

An agents file declares servers under ``mcp_servers`` and an agent lists ``"mcp:time"``
(every tool of the server) or ``"mcp:docs/search_docs"`` (one tool). When the agent is
built, each server it uses is started once, within its ``timeout``, to list its tools;
a server that cannot be started, or does not answer in time, is a :class:`ToolError`
naming it, in one line.

Sessions: every *call* of an MCP tool opens its own session (``langchain-mcp-adapters``
tools built from a connection do this), so a tool works from any event loop and thread
an agent is called from, and nothing is left open when a run or the process ends. The
cost is a server start per call for a stdio server (see ADR 0018).

The results are LangChain content blocks; the registry turns them into plain text
(:func:`leanloop.tools.registry.clean_text` and its content-block flattening), so MCP
tools are capped, pruned, guarded and repaired like any tool.

``leanloop validate --check-models`` starts each server the same way, through
:func:`probe_mcp_servers`, and checks each ``mcp:server/tool`` reference with
:func:`missing_mcp_tool`, so that a file is refused before a run for the same reasons.

This module imports nothing heavy at import time: ``validate`` uses :func:`mcp_server_of`.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from leanloop.exceptions import ToolError

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = [
    "MCP_PREFIX",
    "McpServer",
    "load_mcp_tools",
    "mcp_server_of",
    "missing_mcp_tool",
    "parse_mcp_ref",
    "probe_mcp_servers",
]

MCP_PREFIX = "mcp:"
_EXTRA_HINT = "install the leanloop[mcp] extra (pip install 'leanloop[mcp]')"


class McpServer(Protocol):
    """What this module needs to know of a server (``leanloop.spec.types.McpServerSpec``)."""

    @property
    def name(self) -> str: ...
    @property
    def command(self) -> str | None: ...
    @property
    def args(self) -> Sequence[str]: ...
    @property
    def env(self) -> Mapping[str, str] | None: ...
    @property
    def cwd(self) -> str | None: ...
    @property
    def url(self) -> str | None: ...
    @property
    def transport(self) -> str: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def timeout(self) -> float: ...


def parse_mcp_ref(ref: str) -> tuple[str, str | None] | None:
    """``"mcp:docs/search"`` → ``("docs", "search")``; ``"mcp:time"`` → ``("time", None)``.

    ``None`` when ``ref`` is not an MCP reference.
    """
    if not ref.startswith(MCP_PREFIX):
        return None
    server, _, tool = ref[len(MCP_PREFIX) :].partition("/")
    return server, tool or None


def mcp_server_of(ref: str) -> str | None:
    """The server an MCP reference names (``None``: not an MCP reference, or no server)."""
    parsed = parse_mcp_ref(ref)
    return parsed[0] or None if parsed else None


def connection(server: McpServer) -> dict[str, Any]:
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
    refs: Sequence[str], servers: Mapping[str, McpServer]
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


def probe_mcp_servers(servers: Mapping[str, McpServer]) -> dict[str, list[str] | ToolError]:
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


async def _list_all(servers: Mapping[str, McpServer]) -> dict[str, list[BaseTool]]:
    results = await asyncio.gather(*(_list(server) for server in servers.values()))
    return dict(zip(servers, results, strict=True))


async def _probe_all(servers: Mapping[str, McpServer]) -> dict[str, list[str] | ToolError]:
    async def probe(server: McpServer) -> list[str] | ToolError:
        try:
            return [tool.name for tool in await _list(server)]
        except ToolError as exc:  # one server's failure is its own verdict, not the others'
            return exc

    results = await asyncio.gather(*(probe(server) for server in servers.values()))
    return dict(zip(servers, results, strict=True))


async def _list(server: McpServer) -> list[BaseTool]:
    try:
        from langchain_mcp_adapters.tools import (  # noqa: PLC0415 - an optional extra
            load_mcp_tools as adapters_load,
        )
    except ImportError as exc:
        msg = f"MCP server {server.name!r}: {_import_failure(exc)}"
        raise ToolError(msg) from None
    conn = connection(server)
    if server.command is not None:
        _usable_server_stderr()
    try:
        return await asyncio.wait_for(
            adapters_load(None, connection=conn, server_name=server.name),  # type: ignore[arg-type]
            timeout=server.timeout,
        )
    except TimeoutError:
        within = f"{server.timeout:g} s"
        msg = f"MCP server {server.name!r} ({_what(server)}) did not list its tools within {within}"
        raise ToolError(msg) from None
    except Exception as exc:
        msg = f"MCP server {server.name!r} ({_what(server)}) could not be started: {_reason(exc)}"
        raise ToolError(msg) from None


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


def _what(server: McpServer) -> str:
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
