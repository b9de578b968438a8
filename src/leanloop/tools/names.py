"""Names of the built-in workspace tools (kept apart so the spec can check names cheaply)."""

from __future__ import annotations

__all__ = ["BUILTIN_TOOLS"]

BUILTIN_TOOLS: tuple[str, ...] = ("read_file", "search", "list_files")
