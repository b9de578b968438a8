"""The lean path: a tool's coroutine called directly when nothing would see the call.

``tool.ainvoke`` runs LangChain's per-call plumbing: a callback manager configured for the
call, ``on_tool_start``/``on_tool_end`` sent to no one, the config copied and set in a
context of its own, and the coroutine's type hints read (``get_type_hints``) on every call
to find a config parameter. When no callback handler, tracer or verbose flag is configured
(in the run's config, on the tool or in the environment), none of that has an effect: the
lean path validates the arguments with the tool's own ``args_schema`` and keeps the
fields LangChain's ``_parse_input`` keeps, so values are coerced exactly as before (the
schema's fields, defaults and injected arguments read once per tool, not on every call:
:class:`ArgsParse`), and awaits the coroutine; its signature and type hints (a config
parameter?) are read once per tool too.

Anything that would behave otherwise takes LangChain's path: a handler configured
anywhere, a tool class that overrides how it runs, ``handle_tool_error`` or
``handle_validation_error`` set (LangChain turns those errors into results), a
``content_and_artifact`` tool, or a coroutine that asks for ``callbacks`` or a
``run_manager``.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain_core.callbacks import AsyncCallbackManager, BaseCallbackManager, Callbacks
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel

# LangChain's private helpers: a langchain-core (<2, as pinned) that moves one leaves
# every tool on LangChain's own path instead of failing to import.
try:
    from langchain_core.runnables.config import var_child_runnable_config
    from langchain_core.tools.base import (
        InjectedToolCallId,
        _get_runnable_config_param,
        _is_injected_arg_type,
        get_all_basemodel_annotations,
    )
except ImportError:  # pragma: no cover - depends on the installed langchain-core
    _HELPERS = False
else:
    _HELPERS = True

from leanloop.tools._pertool import per_tool

__all__ = ["LeanTool", "lean_tool", "quiet_callbacks"]

_quiet_managers: weakref.WeakKeyDictionary[BaseCallbackManager, bool] = weakref.WeakKeyDictionary()
"""Whether a run's callback manager configures no handler, per manager (one per run)."""

_OWN = ("ainvoke", "arun", "_arun", "_to_args_and_kwargs", "_parse_input")
"""What a tool class must take from :class:`StructuredTool` for the lean path to be its."""


def quiet_callbacks(callbacks: Callbacks) -> bool:
    """Whether a call with ``callbacks`` (a config's) would reach no handler at all.

    The manager LangChain would configure for the call (the environment's tracer and
    debug/verbose handlers included) has no handlers: nothing would see the call. Read
    once per manager: a run's config keeps one.
    """
    if isinstance(callbacks, BaseCallbackManager):
        known = _quiet_managers.get(callbacks)
        if known is None:
            known = _configures_none(callbacks)
            _quiet_managers[callbacks] = known
        return known
    return _configures_none(callbacks)


def _configures_none(callbacks: Callbacks) -> bool:
    manager = AsyncCallbackManager.configure(callbacks, None, verbose=False)
    return not manager.handlers and not manager.inheritable_handlers


class LeanTool:
    """How to call one tool's coroutine directly (see the module docstring)."""

    __slots__ = ("config_param", "coroutine", "schema", "tool")

    def __init__(
        self,
        tool: StructuredTool,
        coroutine: Callable[..., Awaitable[Any]],
        config_param: str | None,
        schema: ArgsParse | None,
    ) -> None:
        self.tool = tool
        self.coroutine = coroutine
        self.config_param = config_param
        self.schema = schema

    def usable(self, config: RunnableConfig | None) -> bool:
        """Whether the lean path is the tool's now: nothing configured that would see it."""
        tool = self.tool
        return (
            tool.coroutine is self.coroutine
            and not tool.callbacks
            and not tool.verbose
            and not tool.handle_tool_error
            and not tool.handle_validation_error
            and tool.response_format == "content"
            and quiet_callbacks((config or {}).get("callbacks"))
        )

    async def call(self, args: dict[str, Any], config: Callable[[], RunnableConfig]) -> Any:
        """Validate ``args`` as LangChain does and await the coroutine with them.

        ``config`` makes the call's config, only for a coroutine that takes one.
        """
        tool_args: tuple[Any, ...] = ()
        if self.schema is not None and self.schema.args_schema is self.tool.args_schema:
            tool_kwargs = self.schema.parse(args)
        else:  # a schema changed since, or one only LangChain reads
            tool_args, tool_kwargs = self.tool._to_args_and_kwargs(dict(args), None)
        if self.config_param is None:
            return await self.coroutine(*tool_args, **tool_kwargs)
        made = config()
        tool_kwargs[self.config_param] = made
        # The config a nested Runnable (or ensure_config()) in the tool sees, as under
        # LangChain's path.
        token = var_child_runnable_config.set(made)
        try:
            return await self.coroutine(*tool_args, **tool_kwargs)
        finally:
            var_child_runnable_config.reset(token)


class ArgsParse:
    """LangChain's ``_parse_input`` for a pydantic ``args_schema``, its reading of the
    schema made once: validate, then keep the fields given (by name or alias) and those
    with a default, as validated values (LangChain's ``_to_args_and_kwargs``).

    Made only for a schema without injected arguments, computed or excluded fields or
    extra fields (:func:`args_parse`); any other schema is LangChain's to read.
    """

    __slots__ = ("args_schema", "fields", "with_default")

    def __init__(self, args_schema: type[BaseModel]) -> None:
        self.args_schema = args_schema
        fields = args_schema.model_fields
        self.fields = tuple(fields)
        self.with_default = frozenset(
            name
            for name, info in fields.items()
            if not info.is_required() and name not in {"args", "kwargs"}
        )

    def parse(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments the coroutine is called with (raises ``ValidationError``)."""
        if not self.fields:  # a tool without arguments: LangChain calls it with none
            return {}
        result = self.args_schema.model_validate(dict(args))
        given = result.model_fields_set
        return {
            name: getattr(result, name)
            for name in self.fields
            if name in args or name in given or name in self.with_default
        }


def args_parse(tool: StructuredTool) -> ArgsParse | None:
    """The cached reading of ``tool``'s schema, or ``None`` when LangChain must read it."""
    schema = tool.args_schema
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return None
    if tool._injected_args_keys or schema.model_computed_fields:
        return None
    if schema.model_config.get("extra") == "allow":
        return None
    if any(info.exclude for info in schema.model_fields.values()):
        return None
    annotations = get_all_basemodel_annotations(schema).values()
    if any(_is_injected_arg_type(t, injected_type=InjectedToolCallId) for t in annotations):
        return None
    return ArgsParse(schema)


_LEAN_TOOLS: dict[int, tuple[Any, ...]] = {}


def lean_tool(tool: BaseTool) -> LeanTool | None:
    """The lean way to call ``tool``, or ``None`` when it has none (read once per tool)."""
    return per_tool(_LEAN_TOOLS, tool, _lean_tool)


def _lean_tool(tool: BaseTool) -> LeanTool | None:
    if not _HELPERS or not isinstance(tool, StructuredTool) or tool.coroutine is None:
        return None
    cls = type(tool)
    if any(getattr(cls, name) is not getattr(StructuredTool, name) for name in _OWN):
        return None
    try:
        parameters = _parameters_of(tool.coroutine)
        config_param = _get_runnable_config_param(tool.coroutine)
    except Exception:  # a signature that cannot be read: LangChain's path judges it
        return None
    if parameters & {"callbacks", "run_manager"}:
        return None
    try:
        schema = args_parse(tool)
    except Exception:  # a schema that cannot be read here: LangChain reads it per call
        schema = None
    return LeanTool(tool, tool.coroutine, config_param, schema)


def _parameters_of(function: Callable[..., Any]) -> set[str]:
    return set(inspect.signature(function).parameters)
