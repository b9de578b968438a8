"""Check a model's tool-call arguments against the tool's schema, in the model's terms.

Names the tool does not take are first read as the parameter they stand for when that
is unambiguous (``file`` as ``path``, see :mod:`._aliases`); the rest are dropped (and
named). Values of the wrong JSON type that have one sensible reading are coerced
(``"20"`` to ``20``, see :mod:`._coerce`); every such reading is reported in
``ArgumentCheck.notes``. Missing or mistyped arguments become one line saying what to
send. Values are then validated the way LangChain will, so what the registry records is
what the tool receives.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

from leanloop.tools._aliases import read_aliases
from leanloop.tools._coerce import coerce_values
from leanloop.tools._pertool import per_tool

__all__ = [
    "ArgumentCheck",
    "check_arguments",
    "describe_parameters",
    "json_schema_of",
    "parameter_names",
]


@dataclass(frozen=True, slots=True)
class ArgumentCheck:
    """The outcome of checking one call's arguments."""

    args: dict[str, Any]
    """The arguments to pass: known names only, validated values."""
    dropped: tuple[str, ...] = ()
    """Names the tool does not take, in the order the model sent them."""
    problem: str | None = None
    """A one-line message for the model when the call cannot run."""
    notes: tuple[str, ...] = ()
    """How names and values were read (``read "file" as "path"``), for the model."""


def parameter_names(tool: BaseTool) -> tuple[str, ...]:
    """Return the names of the arguments the model may send, in declaration order."""
    return _call_schema(tool)[1]


def _call_schema(tool: BaseTool) -> tuple[Any, tuple[str, ...]]:
    """The tool's ``tool_call_schema`` and its parameter names, read once per tool (LangChain
    builds the schema anew on every read)."""
    return per_tool(_SCHEMAS, tool, _read_call_schema)


_SCHEMAS: dict[int, tuple[Any, ...]] = {}


def _read_call_schema(tool: BaseTool) -> tuple[Any, tuple[str, ...]]:
    schema = tool.tool_call_schema
    return schema, _names_in(tool, schema)


def _names_in(tool: BaseTool, schema: Any) -> tuple[str, ...]:
    if isinstance(schema, dict):
        return tuple(schema.get("properties", {}))
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return tuple(schema.model_fields)
    return tuple(tool.args)  # pydantic v1 models: fall back on LangChain's view


def describe_parameters(tool: BaseTool) -> str:
    """Return ``{path, offset?, limit?}``: the parameters, optional ones marked ``?``."""
    names = parameter_names(tool)
    try:
        required = set(json_schema_of(tool).get("required", ()))
    except Exception:  # a schema without a JSON form: the names alone still help
        required = set(names)
    return "{" + ", ".join(n if n in required else f"{n}?" for n in names) + "}"


def check_arguments(tool: BaseTool, args: Mapping[str, Any]) -> ArgumentCheck:
    """Read aliases, drop unknown arguments, coerce and validate against ``tool``'s schema."""
    schema, known = _call_schema(tool)
    reading = read_aliases(args, known)
    kept = {key: value for key, value in reading.args.items() if key in known}
    dropped = tuple(key for key in reading.args if key not in known)
    json_schema = _json_schema(schema)
    coerced, value_notes = coerce_values(kept, json_schema)
    notes = (*reading.notes, *value_notes)
    if isinstance(schema, dict):
        problem = _check_json_schema(tool.name, schema, coerced)
        return ArgumentCheck(coerced, dropped, problem, notes)
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        check = _check_model(tool.name, schema, coerced, dropped)
        return ArgumentCheck(check.args, dropped, check.problem, notes)
    return ArgumentCheck(coerced, dropped, None, notes)  # unknown schema kind: LangChain checks


def json_schema_of(tool: BaseTool) -> dict[str, Any]:
    """The JSON Schema of the arguments ``tool`` is called with (``{"properties": {}}``
    when it has none that can be read)."""
    return _json_schema(_call_schema(tool)[0])


def _json_schema(schema: Any) -> dict[str, Any]:
    if isinstance(schema, dict):
        return schema
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return _model_schema(schema)
    return {"properties": {}}


@functools.lru_cache(maxsize=256)
def _model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON Schema (cached: tools are called many times; never mutated)."""
    try:
        return model.model_json_schema()
    except Exception:  # some annotations have no JSON Schema; then nothing is coerced
        return {"properties": {}}


def _check_model(
    name: str, model: type[BaseModel], kept: dict[str, Any], dropped: tuple[str, ...]
) -> ArgumentCheck:
    try:
        validated = model.model_validate(kept)
    except ValidationError as exc:
        errors = exc.errors()
        missing = [str(e["loc"][0]) for e in errors if _is_missing_top(e)]
        wrong = [_describe_error(e) for e in errors if not _is_missing_top(e)]
        return ArgumentCheck(kept, dropped, _problem(name, _model_schema(model), missing, wrong))
    return ArgumentCheck({key: getattr(validated, key) for key in kept}, dropped)


def _check_json_schema(name: str, schema: dict[str, Any], kept: dict[str, Any]) -> str | None:
    validator = jsonschema.Draft202012Validator(schema)
    missing: list[str] = []
    wrong: list[str] = []
    for error in validator.iter_errors(kept):
        if error.validator == "required" and not error.absolute_path:
            missing.extend(k for k in schema.get("required", ()) if k not in kept)
        else:
            where = ".".join(str(part) for part in error.absolute_path) or "arguments"
            wrong.append(f'"{where}": {error.message}')
    if not (missing or wrong):
        return None
    return _problem(name, schema, list(dict.fromkeys(missing)), wrong)


def _problem(name: str, schema: dict[str, Any], missing: list[str], wrong: list[str]) -> str:
    parts: list[str] = []
    if missing:
        props = schema.get("properties", {})
        wanted = " and ".join(f'"{key}" ({_type_of(props.get(key, {}))})' for key in missing)
        example = ", ".join(f'"{key}": ...' for key in missing)
        parts.append(f"{name} needs {wanted}; send {{{example}}}")
    if wrong:
        parts.append(f"{name} got a wrong argument: " + "; ".join(wrong))
    return "; ".join(parts)


def _is_missing_top(error: Any) -> bool:
    return error["type"] == "missing" and len(error["loc"]) == 1


def _describe_error(error: Any) -> str:
    where = ".".join(str(part) for part in error["loc"]) or "arguments"
    message = str(error["msg"])
    return f'"{where}": {message[:1].lower()}{message[1:]} (got {_short(error.get("input"))})'


def _type_of(prop: dict[str, Any]) -> str:
    """Say what kind of value a JSON Schema property wants, in a few words."""
    if "enum" in prop:
        return "one of " + ", ".join(json.dumps(v) for v in prop["enum"])
    kinds = [_type_of(option) for option in prop.get("anyOf", ()) if option.get("type") != "null"]
    if kinds:
        return " or ".join(kinds)
    kind = prop.get("type")
    if kind == "array" and isinstance(prop.get("items"), dict) and "type" in prop["items"]:
        return f"array of {_type_of(prop['items'])}"
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind if k != "null")
    if isinstance(kind, str):
        return kind
    return "object" if "$ref" in prop else "any value"


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."
