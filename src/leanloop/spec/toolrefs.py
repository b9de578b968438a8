"""What a tool reference of an agents file names, told without importing any tool.

An agent's ``tools`` are built-in names (``read_file``), MCP references
(``"mcp:time"``, ``"mcp:docs/search_docs"``) or import paths (``package.module:name``).
The spec checks them when a file is read and :mod:`leanloop.tools` builds them when an
agent is; both parse them here, so that reading a file never imports the tool runtime
(``tools`` imports ``spec``, never the reverse). Nothing here imports beyond the
standard library.
"""

from __future__ import annotations

import inspect
import re
import sys
import types
from typing import Any

__all__ = [
    "BUILTIN_TOOLS",
    "COMMAND_TOOL",
    "EDIT_TOOLS",
    "MCP_PREFIX",
    "READ_TOOLS",
    "TOOL_NAME",
    "callable_refusal",
    "is_standard_module",
    "mcp_server_of",
    "parse_mcp_ref",
    "standard_callable_refusal",
]

READ_TOOLS: tuple[str, ...] = ("read_file", "search", "list_files")
"""The built-in tools that only read the workspace."""
EDIT_TOOLS: tuple[str, ...] = (
    "write_file",
    "replace_lines",
    "insert_at_line",
    "str_replace",
    "apply_patch",
    "undo_edit",
)
"""The built-in tools that change workspace files (:mod:`leanloop.tools.edits`)."""
COMMAND_TOOL = "run_command"
"""The built-in tool that runs a program in the workspace (:mod:`leanloop.tools.command`);
never on unless an agent's ``tools`` names it."""
BUILTIN_TOOLS: tuple[str, ...] = (*READ_TOOLS, *EDIT_TOOLS, COMMAND_TOOL)
MCP_PREFIX = "mcp:"

TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""A name a tool may have (``fullmatch``): what OpenAI's API accepts, the strictest."""

_STANDARD = frozenset(sys.stdlib_module_names) | frozenset(sys.builtin_module_names)

_COMPILED = (
    types.BuiltinFunctionType,
    types.BuiltinMethodType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
    types.ClassMethodDescriptorType,
)


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


def is_standard_module(module: str) -> bool:
    """Whether ``module`` (dotted) belongs to Python's standard library or its builtins."""
    return module.partition(".")[0] in _STANDARD


def standard_callable_refusal(
    ref: str, origin: str | None = None, *, shown: str | None = None
) -> str | None:
    """Why ``ref`` may not be a tool, or ``None``: a standard-library or builtin callable.

    ``os:system`` or ``subprocess:getoutput`` would hand the model a shell; no callable
    of the standard library is a tool, so every one is refused by its name.

    Args:
        ref: The tool reference ``package.module:name``.
        origin: Where the object really comes from (``subprocess.getoutput`` for a name
            that a module of the user's imported from the standard library), if known.
        shown: How to show ``ref`` in the message (``***`` for a value from the
            environment, which then names nothing else either).
    """
    module = ref.partition(":")[0]
    if is_standard_module(module):
        where = f" (module {module!r})"
    elif origin is not None and is_standard_module(origin):
        where = f" (it is {origin})"
    else:
        return None
    if shown is not None and shown != repr(ref):
        where = ""
    return (
        f"{repr(ref) if shown is None else shown} is a standard-library callable{where}, "
        "not a tool; a tool is a LangChain tool or a function of your own module"
    )


def callable_refusal(obj: Any, ref: str, *, shown: str | None = None) -> str | None:
    """Why the callable ``obj`` (named by ``ref``) may not be a tool, or ``None``.

    A tool is a Python function (or a callable object) of the user's own code: one whose
    home (``__module__``: where it was defined, not where it was imported) is the
    standard library or the builtins is refused, and so is a compiled function. So is a
    generator function, sync or async: a call returns a generator object, whose text
    (``<generator object ...>``) is all the model would get.

    Args:
        obj: The imported callable.
        ref: Its reference ``package.module:name``.
        shown: How to show ``ref`` (``***`` for a value from the environment).
    """
    home = getattr(obj, "__module__", None)
    if not isinstance(home, str):
        home = type(obj).__module__
    name = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    refusal = standard_callable_refusal(ref, f"{home}.{name}", shown=shown)
    if refusal is None and isinstance(obj, _COMPILED):
        refusal = (
            f"{repr(ref) if shown is None else shown} is a compiled function, not a tool; "
            "a tool is a LangChain tool or a function of your own module"
        )
    if refusal is None and _is_generator(obj):
        refusal = (
            f"{repr(ref) if shown is None else shown} is a generator function: the model "
            "would get a generator object, not what it yields; return the values instead "
            "(a list or a string)"
        )
    return refusal


def _is_generator(obj: Any) -> bool:
    """Whether calling ``obj`` makes a generator (or an async one), not a result."""
    targets = (obj, getattr(type(obj), "__call__", None))  # noqa: B004 - an object's own __call__
    tests = (inspect.isgeneratorfunction, inspect.isasyncgenfunction)
    return any(test(target) for test in tests for target in targets)
