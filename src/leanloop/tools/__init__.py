"""Tools for agents: the built-in workspace tools, loading user tools, the registry.

``workspace_tools`` builds ``read_file``, ``search`` and ``list_files`` confined to a
folder, ``edit_tools`` the tools that change files there (``write_file``,
``str_replace``, ``apply_patch`` …) and ``command_tool`` ``run_command``; ``load_tool``
/ ``build_tools`` turn configuration references (a built-in name or
``package.module:name``) into LangChain tools; ``ToolRegistry`` runs tool calls and
turns every failure into a one-line message for the model, repairing unknown tool names
(``repair_call``) and reading argument aliases and mistyped values where the intent is
clear.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from leanloop._imports import lazy_exports
from leanloop.tools.names import BUILTIN_TOOLS

if TYPE_CHECKING:
    from leanloop.tools._lean import quiet_callbacks
    from leanloop.tools.command import command_tool
    from leanloop.tools.edits import edit_tools
    from leanloop.tools.loader import build_tools, load_tool
    from leanloop.tools.registry import ToolOutcome, ToolRegistry
    from leanloop.tools.repair import Repair, repair_call
    from leanloop.tools.workspace import resolve_inside, workspace_path_exists, workspace_tools

__all__ = [
    "BUILTIN_TOOLS",
    "Repair",
    "ToolOutcome",
    "ToolRegistry",
    "build_tools",
    "command_tool",
    "edit_tools",
    "load_tool",
    "quiet_callbacks",
    "repair_call",
    "resolve_inside",
    "workspace_path_exists",
    "workspace_tools",
]

# Imported on first use: the spec checks read BUILTIN_TOOLS without loading LangChain.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "build_tools": ".loader",
        "command_tool": ".command",
        "edit_tools": ".edits",
        "load_tool": ".loader",
        "quiet_callbacks": "._lean",
        "ToolOutcome": ".registry",
        "ToolRegistry": ".registry",
        "Repair": ".repair",
        "repair_call": ".repair",
        "resolve_inside": ".workspace",
        "workspace_path_exists": ".workspace",
        "workspace_tools": ".workspace",
    },
)
