"""Turn tool references from a configuration into LangChain tools.

A reference is a built-in name (``read_file``, ``search``, ``list_files``; the edit tools
``write_file``, ``replace_lines``, ``insert_at_line``, ``str_replace``, ``apply_patch``,
``undo_edit``; ``run_command``, only when named), an MCP
reference (``mcp:server`` or ``mcp:server/tool``, see :mod:`leanloop.tools.mcp`) or an import
path ``package.module:name`` naming a ``BaseTool`` (or a ``BaseTool`` class that needs
no arguments), a ``@tool`` function, or a plain typed callable, sync or async, which is
wrapped with ``StructuredTool.from_function``. Every failure is a :class:`ToolError`
with a one-line message.

A callable of the standard library or the builtins (``os:system``, ``subprocess:getoutput``,
``builtins:eval``) is never a tool, whatever module re-exports it: such a reference is
refused by its name before anything is imported, and an imported callable whose home is
the standard library (or that is compiled, not a Python function) is refused too.

An import path whose module lies beside the agents file (``near``) is imported without
changing ``sys.path`` (see :func:`leanloop._imports.import_object`). Two tools with one
name are refused by :func:`name_clash`, which ``validate --check-models`` asks too
(:func:`tool_names_clash`), so that it refuses what a run would.
"""

from __future__ import annotations

import difflib
import inspect
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from leanloop._imports import ImportPathError, import_object, is_import_path
from leanloop.exceptions import ToolError
from leanloop.spec.toolrefs import COMMAND_TOOL, EDIT_TOOLS, TOOL_NAME, callable_refusal
from leanloop.spec.types import McpServerSpec, ToolOptions
from leanloop.tools._journal import WorkspaceRun
from leanloop.tools.command import DEFAULT_COMMAND_TIMEOUT, CommandSettings, command_tool
from leanloop.tools.edits import edit_tools
from leanloop.tools.mcp import load_mcp_tools, parse_mcp_ref
from leanloop.tools.names import BUILTIN_TOOLS, standard_callable_refusal
from leanloop.tools.workspace import workspace_tools

__all__ = [
    "build_tools",
    "build_tools_by_ref",
    "callable_refusal",
    "load_tool",
    "name_clash",
    "tool_names_clash",
    "tool_of",
]

_log = logging.getLogger(__name__)


def load_tool(
    ref: str,
    *,
    workspace: Path | None,
    path_hints: Callable[[], Sequence[str]] | None = None,
    repair_paths: bool = False,
) -> BaseTool:
    """Load one tool from its configuration reference.

    Args:
        ref: A built-in tool name or an import path ``package.module:name``.
        workspace: The agent's workspace folder; needed by the built-in tools.
        path_hints: For the built-in tools: see :func:`workspace_tools`.
        repair_paths: For the built-in tools: see :func:`workspace_tools`.

    Returns:
        The tool, ready to bind to a chat model.

    Raises:
        ToolError: The reference names nothing usable; the message says why.
    """
    return build_tools(
        [ref], workspace=workspace, path_hints=path_hints, repair_paths=repair_paths
    )[0]


def build_tools(
    refs: Sequence[str],
    *,
    workspace: Path | None,
    path_hints: Callable[[], Sequence[str]] | None = None,
    repair_paths: bool = False,
    mcp_servers: Mapping[str, McpServerSpec] | None = None,
    near: Path | None = None,
) -> list[BaseTool]:
    """Load every tool in ``refs``, in order (see :func:`build_tools_by_ref`)."""
    built = build_tools_by_ref(
        refs,
        workspace=workspace,
        path_hints=path_hints,
        repair_paths=repair_paths,
        mcp_servers=mcp_servers,
        near=near,
    )
    return [tool for _, tool in built]


def build_tools_by_ref(
    refs: Sequence[str],
    *,
    workspace: Path | None,
    path_hints: Callable[[], Sequence[str]] | None = None,
    repair_paths: bool = False,
    mcp_servers: Mapping[str, McpServerSpec] | None = None,
    extra: Sequence[BaseTool] = (),
    prebuilt: Mapping[str, BaseTool] | None = None,
    near: Path | None = None,
    tool_options: Mapping[str, ToolOptions] | None = None,
    tool_timeout: float | None = None,
) -> list[tuple[str, BaseTool]]:
    """Load every tool in ``refs``, in order, and check that their names are unique.

    Args:
        refs: Built-in tool names and import paths.
        workspace: The agent's workspace folder; needed by the built-in tools.
        path_hints: For the built-in tools: the workspace paths named in the user's
            request (see :func:`leanloop.tools.workspace_tools`).
        repair_paths: For the built-in tools: read the one named path instead of a
            missing one (see :func:`leanloop.tools.workspace_tools`).
        mcp_servers: The servers ``mcp:`` references name (each is started once to
            list its tools, see :func:`leanloop.tools.mcp.load_mcp_tools`).
        extra: Tool objects to add after those of ``refs`` (their reference is
            ``<python>``).
        prebuilt: Tools already made for some references (``agent:NAME`` tools, which
            this layer cannot build); used as they are.
        near: The agents file's folder: an import path's module is looked for there
            after the Python path, and imported without changing ``sys.path``.
        tool_options: The settings of the ``tools`` entries written as mappings, by
            reference; ``run_command`` takes its timeout, allowed programs and shell
            from its entry.
        tool_timeout: The agent's ``tool_timeout``: ``run_command`` stops a command a
            second before a call's limit (its entry's ``timeout``, else this one).

    Returns:
        Each tool with the reference it came from (an ``mcp:server`` reference gives
        every tool of the server), in order.

    Raises:
        ToolError: A reference cannot be loaded, or two tools share a name.
    """
    builtins: dict[str, BaseTool] = {}
    tools: list[tuple[str, BaseTool]] = []
    from_mcp = load_mcp_tools(refs, mcp_servers or {})
    for ref in refs:
        if prebuilt and ref in prebuilt:
            found = [_checked_name(prebuilt[ref], ref)]
        elif ref in BUILTIN_TOOLS:
            if not builtins:
                made = _builtin_tools(
                    ref,
                    workspace,
                    path_hints,
                    repair_paths,
                    editing=any(name in EDIT_TOOLS for name in refs),
                )
                builtins = {tool.name: tool for tool in made}
            if ref == COMMAND_TOOL:
                settings = _command_settings((tool_options or {}).get(ref), tool_timeout)
                found = [command_tool(_workspace_of(ref, workspace), settings)]
            else:
                found = [builtins[ref]]
        elif parse_mcp_ref(ref) is not None:
            found = [_checked_name(tool, ref) for tool in from_mcp[ref]]
        else:
            found = [_imported_tool(ref, near)]
        tools.extend((ref, tool) for tool in found)
    tools.extend(("<python>", tool) for tool in extra)
    clash = name_clash((ref, tool.name) for ref, tool in tools)
    if clash is not None:
        raise ToolError(clash)
    return tools


def name_clash(named: Iterable[tuple[str, str]]) -> str | None:
    """The problem of the first name two tools share, or ``None`` when all differ.

    Args:
        named: Each tool's reference and name, in the agent's order (``("mcp:files",
            "read_file")``).

    Returns:
        ``two tools are named "read_file" ('read_file' and 'mcp:files')``, or ``None``.
    """
    origin: dict[str, str] = {}
    for ref, name in named:
        if name in origin:
            return f'two tools are named "{name}" ({origin[name]!r} and {ref!r})'
        origin[name] = ref
    return None


def tool_names_clash(
    refs: Sequence[str],
    *,
    mcp_tools: Mapping[str, Sequence[str]],
    prebuilt: Mapping[str, str] | None = None,
    near: Path | None = None,
) -> str | None:
    """What building ``refs`` would refuse, with the MCP servers' tools already listed.

    For ``validate --check-models``, which starts each MCP server once for all agents:
    the names are the ones the run's tools get (a built-in's, each listed MCP tool's, a
    prebuilt tool's, an imported tool's), judged by :func:`name_clash` as the run judges
    them.

    Args:
        refs: The agent's tool references.
        mcp_tools: The tool names of each MCP server that listed them; a reference to a
            server that is not here (it failed, and says so elsewhere) is skipped.
        prebuilt: The names of the tools made elsewhere, by reference (``agent:NAME``
            tools, as for :func:`build_tools_by_ref`).
        near: The agents file's folder, for import paths (see :func:`build_tools_by_ref`).

    Returns:
        The one-line problem, or ``None``.

    Raises:
        ToolError: An import path names no usable tool (the run would refuse it too).
    """
    named: list[tuple[str, str]] = []
    for ref in refs:
        parsed = parse_mcp_ref(ref)
        if prebuilt and ref in prebuilt:
            named.append((ref, prebuilt[ref]))
        elif ref in BUILTIN_TOOLS:
            named.append((ref, ref))
        elif parsed is not None:
            server, tool = parsed
            listed = mcp_tools.get(server, ())
            named += [(ref, name) for name in listed if tool in (None, name)]
        else:
            named.append((ref, _imported_tool(ref, near).name))
    return name_clash(named)


def _builtin_tools(
    ref: str,
    workspace: Path | None,
    path_hints: Callable[[], Sequence[str]] | None,
    repair_paths: bool,
    *,
    editing: bool,
) -> list[BaseTool]:
    """The read tools, and the edit tools beside them sharing one state for calls made
    outside a registry (a registry hands each run its own); reads are recorded for the
    edit tools only when the agent has one."""
    root = _workspace_of(ref, workspace)
    state = WorkspaceRun()
    read = workspace_tools(
        root, path_hints=path_hints, repair_paths=repair_paths, track_reads=editing, state=state
    )
    return [*read, *edit_tools(root, state=state)]


def _workspace_of(ref: str, workspace: Path | None) -> Path:
    if workspace is None:
        msg = f'tool "{ref}" needs a workspace folder; set "workspace" for the agent'
        raise ToolError(msg)
    return workspace


def _command_settings(options: ToolOptions | None, tool_timeout: float | None) -> CommandSettings:
    """``run_command``'s settings from its tool entry; the call's limit is the entry's
    ``timeout``, else the agent's ``tool_timeout``."""
    limit = options.timeout if options is not None and options.timeout is not None else tool_timeout
    if options is None:
        return CommandSettings(call_limit_s=limit)
    return CommandSettings(
        timeout_s=options.command_timeout or DEFAULT_COMMAND_TIMEOUT,
        allowed=options.allowed_commands,
        via_shell=options.via_shell,
        call_limit_s=limit,
    )


def _imported_tool(ref: str, near: Path | None = None) -> BaseTool:
    if not is_import_path(ref):
        msg = f'unknown tool "{ref}"{_did_you_mean(ref)}; built-in tools are '
        msg += ", ".join(BUILTIN_TOOLS) + "; other tools are given as 'package.module:name'"
        raise ToolError(msg)
    refusal = standard_callable_refusal(ref)
    if refusal is not None:  # refused by name: the module is not imported
        raise ToolError(refusal)
    try:
        obj = import_object(ref, near=near)
    except ImportPathError as exc:
        msg = f"tool {ref!r}: {exc}"
        raise ToolError(msg) from exc
    return _checked_name(_as_tool(obj, ref), ref)


def tool_of(obj: Any) -> BaseTool:
    """A tool given as a Python object: a ``BaseTool`` as it is, a function wrapped.

    A plain function, sync or async, becomes a ``StructuredTool`` named after it, its
    docstring the description and its typed parameters the arguments (the same wrapping
    as a function an import path names).

    Raises:
        ToolError: ``obj`` is not a tool or a usable function (a lambda, a built-in or
            standard-library function, a signature pydantic cannot model, a bad name).
    """
    if isinstance(obj, BaseTool):
        return obj
    name = getattr(obj, "__name__", None)
    shown = getattr(obj, "__qualname__", None) or name or type(obj).__name__
    if name == "<lambda>":
        msg = (
            "a lambda cannot be a tool: it has no name for the model to call; "
            "define it with def (its name and docstring are what the model sees)"
        )
        raise ToolError(msg)
    home = getattr(obj, "__module__", None) or type(obj).__module__
    return _checked_name(_as_tool(obj, f"{home}:{shown}"), f"{home}:{shown}")


def _checked_name(tool: BaseTool, ref: str) -> BaseTool:
    if not TOOL_NAME.fullmatch(tool.name):
        msg = f"tool {ref!r} is named {tool.name!r}; use 1-64 letters, digits, '_' or '-'"
        raise ToolError(msg)
    return tool


def _as_tool(obj: Any, ref: str) -> BaseTool:
    if isinstance(obj, BaseTool):
        return obj
    if inspect.isclass(obj):
        if issubclass(obj, BaseTool):
            return _instantiate(obj, ref)
        msg = f"tool {ref!r} is the class {obj.__name__}, not a tool or a function"
        raise ToolError(msg)
    if callable(obj):
        refusal = callable_refusal(obj, ref)
        if refusal is not None:
            raise ToolError(refusal)
        return _from_callable(obj, ref)
    msg = f"tool {ref!r} is not a tool or a function (it is of type {type(obj).__name__})"
    raise ToolError(msg)


def _instantiate(cls: type[BaseTool], ref: str) -> BaseTool:
    try:
        return cls()
    except Exception as exc:  # a user class that needs arguments is a user mistake
        msg = f"tool {ref!r}: cannot create {cls.__name__}() without arguments ({exc})"
        raise ToolError(" ".join(msg.split())) from exc


def _from_callable(func: Callable[..., Any], ref: str) -> BaseTool:
    name = getattr(func, "__name__", None) or ref.rpartition(":")[2].rpartition(".")[2]
    description = inspect.getdoc(func)
    if not description:
        # Small models lean on descriptions; say so, but a missing one is not fatal.
        _log.warning("tool %r has no docstring; the model only sees its name", ref)
        description = f"{name} (no description)"
    is_async = inspect.iscoroutinefunction(func) or inspect.iscoroutinefunction(
        getattr(func, "__call__", None)  # noqa: B004 - an object with an async __call__
    )
    try:
        return StructuredTool.from_function(
            func=None if is_async else func,
            coroutine=func if is_async else None,
            name=name,
            description=description,
        )
    except Exception as exc:  # pydantic cannot model some signatures
        msg = f"tool {ref!r}: cannot build a tool from {name} ({exc})"
        raise ToolError(" ".join(msg.split())) from exc


def _did_you_mean(ref: str) -> str:
    close = difflib.get_close_matches(ref, BUILTIN_TOOLS, n=1)
    return f' (did you mean "{close[0]}"?)' if close else ""
