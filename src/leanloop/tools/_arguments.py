"""Check a model's tool-call arguments against the tool's schema, in the model's terms.

Arguments the tool does not take are dropped (and named); missing or mistyped ones
become one line saying what to send. Values are validated (and coerced, ``"3"`` to
``3``) the way LangChain will, so what the registry records is what the tool receives.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

__all__ = ["ArgumentCheck", "check_arguments", "parameter_names"]


@dataclass(frozen=True, slots=True)
class ArgumentCheck:
    """The outcome of checking one call's arguments."""

    args: dict[str, Any]
    """The arguments to pass: known names only, validated values."""
    dropped: tuple[str, ...] = ()
    """Names the tool does not take, in the order the model sent them."""
    problem: str | None = None
    """A one-line message for the model when the call cannot run."""


def parameter_names(tool: BaseTool) -> tuple[str, ...]:
    """Return the names of the arguments the model may send, in declaration order."""
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        return tuple(schema.get("properties", {}))
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return tuple(schema.model_fields)
    return tuple(tool.args)  # pydantic v1 models: fall back on LangChain's view


def check_arguments(tool: BaseTool, args: Mapping[str, Any]) -> ArgumentCheck:
    """Drop unknown arguments and validate the rest against ``tool``'s schema."""
    known = parameter_names(tool)
    kept = {key: value for key, value in args.items() if key in known}
    dropped = tuple(str(key) for key in args if key not in known)
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        problem = _check_json_schema(tool.name, schema, kept)
        return ArgumentCheck(kept, dropped, problem)
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return _check_model(tool.name, schema, kept, dropped)
    return ArgumentCheck(kept, dropped)  # unknown schema kind: LangChain checks it


def _check_model(
    name: str, model: type[BaseModel], kept: dict[str, Any], dropped: tuple[str, ...]
) -> ArgumentCheck:
    try:
        validated = model.model_validate(kept)
    except ValidationError as exc:
        errors = exc.errors()
        missing = [str(e["loc"][0]) for e in errors if _is_missing_top(e)]
        wrong = [_describe_error(e) for e in errors if not _is_missing_top(e)]
        return ArgumentCheck(kept, dropped, _problem(name, _json_schema(model), missing, wrong))
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


def _json_schema(model: type[BaseModel]) -> dict[str, Any]:
    try:
        return model.model_json_schema()
    except Exception:  # some annotations have no JSON Schema; the names still help
        return {"properties": {}}


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."
