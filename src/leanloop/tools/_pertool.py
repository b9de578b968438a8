"""What is read of a tool once, kept per tool object while it lives (:func:`per_tool`)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool

__all__ = ["per_tool"]

T = TypeVar("T")


def per_tool(cache: dict[int, tuple[Any, ...]], tool: BaseTool, make: Callable[[BaseTool], T]) -> T:
    """``make(tool)``, made once per tool object (its function and schema the same) while
    the tool lives.

    A registry is made for every run; what it reads of a tool (its signature, type hints,
    code and argument schema) stays the same for as long as the tool object, its function
    and its ``args_schema`` do.
    """
    key = id(tool)
    functions = (
        getattr(tool, "coroutine", None),
        getattr(tool, "func", None),
        getattr(tool, "args_schema", None),
    )
    hit = cache.get(key)
    if hit is not None and hit[0]() is tool and hit[1] == functions:
        return cast(T, hit[2])
    made = make(tool)

    def forget(ref: weakref.ref[BaseTool]) -> None:
        entry = cache.get(key)
        if entry is not None and entry[0] is ref:
            del cache[key]

    try:
        ref = weakref.ref(tool, forget)
    except TypeError:  # an object that cannot be referred to weakly: read it each time
        return made
    cache[key] = (ref, functions, made)
    return made
