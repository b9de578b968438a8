"""Where an agent's problem is, and what a Python-built part tells of itself.

A problem with an agent built from a file is located at the agent's place in the file
(:func:`located`); one built in Python at the caller's line and keyword
(:func:`caller`, :func:`relocated`). Split from :mod:`leanloop.agent.runnable`, which
builds the agent (issue 40: no file over 800 lines).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, SecretStr

from leanloop._imports import ImportPathError, import_object
from leanloop.exceptions import InvalidArgument, InvalidArgumentType, SpecError, SpecIssue
from leanloop.spec.toolrefs import TOOL_NAME
from leanloop.spec.types import AgentSpec, ModelSpec

__all__ = [
    "caller",
    "check_tool_name",
    "located",
    "model_spec_of",
    "near",
    "output_schema",
    "pick",
    "python_error",
    "relocated",
    "schema_class",
]


def model_spec_of(model: BaseChatModel, context_window: int | None) -> ModelSpec:
    """What a chat model built in Python tells of itself: name, server, provider, key."""
    cls = type(model)
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    base_url = getattr(model, "openai_api_base", None) or getattr(model, "base_url", None)
    key = getattr(model, "openai_api_key", None) or getattr(model, "api_key", None)
    api_key = key.get_secret_value() if isinstance(key, SecretStr) else key
    provider = {
        "ChatOllama": "ollama",
        "ChatAnthropic": "anthropic",
        "ChatOpenAI": "openai-compatible" if base_url else "openai",
    }.get(cls.__name__)
    return ModelSpec(
        provider=cast(Any, provider),
        class_path=None if provider else f"{cls.__module__}:{cls.__qualname__}",
        model=name if isinstance(name, str) else None,
        base_url=base_url if isinstance(base_url, str) else None,
        api_key=api_key if isinstance(api_key, str) else None,
        context_window=context_window,
    )


def caller() -> tuple[str, int | None]:
    """The file and line of the code that built the agent (the first frame outside)."""
    here = Path(__file__).resolve().parent.parent
    frame = inspect.currentframe()
    while frame is not None:
        file = frame.f_code.co_filename
        inside = file.startswith(str(here)) or f"{os.sep}pydantic{os.sep}" in file
        if not inside and not file.startswith("<frozen"):
            return file, frame.f_lineno
        frame = frame.f_back
    return "<python>", None


def python_error(where: tuple[str, int | None], key: str, message: str) -> SpecError:
    return SpecError([SpecIssue(where[0], where[1], None, key, message)])


def relocated(issue: SpecIssue, name: str, where: tuple[str, int | None]) -> SpecIssue:
    """A problem of the Python-first document, at the caller's line and keyword."""
    path = issue.path
    for prefix in (f"agents.{name}.", f"agents.{name}"):
        if path.startswith(prefix):
            path = path[len(prefix) :]
            break
    path = "context_window" if path == "model.context_window" else path
    return SpecIssue(where[0], where[1], None, path, issue.message)


def schema_class(schema: object) -> type[BaseModel]:
    """``schema`` given to ``with_structured_output``, if it is a pydantic model class.

    Raises:
        InvalidArgumentType: It is anything else; the answer could not be validated into
            it, and the run would fail only after it had spent its requests.
    """
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema
    shown = schema.__name__ if isinstance(schema, type) else repr(schema)[:60]
    msg = (
        f"with_structured_output({shown}): {shown} is not a pydantic model class; pass a "
        "subclass of pydantic.BaseModel with the answer's fields (class Answer(BaseModel): "
        "city: str), not a builtin type, a TypedDict, a dataclass or a JSON schema"
    )
    raise InvalidArgumentType(msg)


def check_tool_name(name: str) -> None:
    """Refuse a tool name the chat APIs refuse (an empty one, a space, over 64 characters).

    Raises:
        InvalidArgument: With the name and the rule.
    """
    if not (isinstance(name, str) and TOOL_NAME.fullmatch(name)):
        msg = (
            f"as_tool(name={name!r}): a tool name is 1 to 64 letters, digits, '_' or '-' "
            "(what the chat APIs accept; the model calls the tool by it)"
        )
        raise InvalidArgument(msg)


def output_schema(spec: AgentSpec) -> type[BaseModel] | None:
    """The class ``output_schema`` names (validated to import and be a pydantic model)."""
    if spec.output_schema is None:
        return None
    try:
        schema = import_object(spec.output_schema, near=near(spec))
    except ImportPathError as exc:
        raise located(spec, "output_schema", str(exc)) from exc
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        raise located(spec, "output_schema", f"{spec.output_schema!r} is not a pydantic model")
    return schema


def near(spec: AgentSpec) -> Path | None:
    """The agents file's folder, where a module beside the file is found (ADR 0023)."""
    if spec.location is not None and spec.location.folder is not None:
        return spec.location.folder
    return spec.source.parent if spec.source is not None else None


def located(spec: AgentSpec, key: str, message: str) -> SpecError:
    """A problem with the agent's ``key``, at the agent's place in its file."""
    loc = spec.location
    source = loc.source if loc else str(spec.source or "<spec>")
    line, column = (loc.line, loc.column) if loc else (None, None)
    return SpecError([SpecIssue(source, line, column, f"agents.{spec.name}.{key}", message)])


def pick(specs: Mapping[str, AgentSpec], name: str | None, *, source: str) -> AgentSpec:
    if name is not None:
        if name in specs:
            return specs[name]
        known = ", ".join(sorted(specs))
        msg = f"no agent named {name!r} (agents: {known})"
        raise SpecError([SpecIssue(source, None, None, "agents", msg)])
    if len(specs) == 1:
        return next(iter(specs.values()))
    msg = f"the file declares {len(specs)} agents; name one ({', '.join(sorted(specs))})"
    raise SpecError([SpecIssue(source, None, None, "agents", msg)])
