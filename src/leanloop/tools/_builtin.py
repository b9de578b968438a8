"""How the built-in tools become LangChain tools: one construction for all of them.

``read_file``, ``search``, ``list_files``, the edit tools and ``run_command`` are each a
sync function and its async twin over one argument schema; they differ only in their
description and metadata (an edit or command tool opts out of the loop's reader help).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.tools import StructuredTool
from pydantic import BaseModel

__all__ = ["built_in_tool"]


def built_in_tool(
    name: str,
    func: Callable[..., str],
    coroutine: Callable[..., Awaitable[str]],
    schema: type[BaseModel],
    *,
    description: str,
    metadata: dict[str, Any] | None = None,
) -> StructuredTool:
    """Build the built-in tool ``name`` from its sync and async bodies.

    Args:
        name: The tool's name, as the model calls it.
        func: The body ``invoke`` runs.
        coroutine: The body ``ainvoke`` awaits.
        schema: The arguments the model sends, validated before either body runs.
        description: What the model is told the tool does.
        metadata: The tool's metadata (``None``: none), such as
            ``{READS_KEY: None}`` for a tool that takes a path but reads nothing.

    Returns:
        The LangChain tool.
    """
    return StructuredTool.from_function(
        func=func,
        coroutine=coroutine,
        name=name,
        description=description,
        args_schema=schema,
        metadata=metadata,
    )
