"""Coerce argument values to the types a tool's JSON Schema asks for, and say so.

Models write ``"20"`` for ``20``, ``"true"`` for ``true``, ``"a.py"`` where a list of
paths is wanted, a JSON object encoded as a string, or ``8080`` as a search pattern.
Each of these has exactly one sensible reading, so it is read that way and reported
(``read limit "20" as 20``). A value with no such reading is left alone for the
validator, whose one-line message tells the model what to send.

This works on the JSON Schema (for a pydantic model, its ``model_json_schema()``), so
plain-schema tools, which nothing else coerces, get the same treatment.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["coerce_values"]

_MAX_DEPTH = 8
"""Nesting followed; deeper values (or ``$ref`` cycles) are left to the validator."""
_INTEGER = re.compile(r"\s*[+-]?\d+\s*")
_TRUE = frozenset({"true", "yes", "on", "1", "t", "y"})
_FALSE = frozenset({"false", "no", "off", "0", "f", "n"})
_NULL = frozenset({"null", "none"})

Schema = Mapping[str, Any]


def coerce_values(args: dict[str, Any], schema: Schema) -> tuple[dict[str, Any], list[str]]:
    """Coerce each value of ``args`` to its property's type in ``schema``.

    Args:
        args: Argument names (all parameters of the tool) and values.
        schema: The tool's JSON Schema (an object schema with ``properties``).

    Returns:
        The arguments with coerced values, and one note per coercion.
    """
    coercer = _Coercer(schema.get("$defs") or schema.get("definitions") or {})
    props = schema.get("properties") or {}
    out = {key: coercer.coerce(value, props.get(key), key, 0) for key, value in args.items()}
    return out, coercer.notes


class _Coercer:
    def __init__(self, defs: Mapping[str, Any]) -> None:
        self.defs = defs
        self.notes: list[str] = []

    def coerce(self, value_in: Any, prop: Any, where: str, depth: int) -> Any:
        value = value_in
        prop = self._resolve(prop)
        if prop is None or depth > _MAX_DEPTH:
            return value
        types = self._types(prop)
        if not types:
            return value  # any value goes: nothing to coerce to
        if _json_type(value) not in types and not _fits_number(value, types):
            value = self._convert(value, types, where)
            if value is _NO:  # no scalar reading: maybe one value where a list is wanted
                value = self._wrap(value_in, prop, types, where, depth)
        return self._inside(value, prop, where, depth)

    def _wrap(self, value: Any, prop: Schema, types: set[str], where: str, depth: int) -> Any:
        # A single value for a list, but not broken JSON text (that was meant as a list).
        if "array" not in types or isinstance(value, list | tuple) or _is_json_text(value):
            return value
        items = (prop if "items" in prop else self._option(prop, "array") or {}).get("items")
        item = _Coercer(self.defs).coerce(value, items, where, depth + 1)  # one note, not two
        self.notes.append(f"read {where} {_short(value)} as {_short([item])}")
        return [item]

    def _inside(self, value: Any, prop: Schema, where: str, depth: int) -> Any:
        """Coerce the items of an array and the properties of an object."""
        if isinstance(value, list):
            shape = prop if "items" in prop else self._option(prop, "array")
            items = (shape or {}).get("items")
            return [self.coerce(v, items, f"{where}.{i}", depth + 1) for i, v in enumerate(value)]
        if isinstance(value, dict):
            shape = prop if "properties" in prop else self._option(prop, "object")
            props = (shape or {}).get("properties") or {}
            return {
                k: self.coerce(v, props.get(k), f"{where}.{k}", depth + 1) for k, v in value.items()
            }
        return value

    def _convert(self, value: Any, types: set[str], where: str) -> Any:
        converted = _from_text(value, types) if isinstance(value, str) else _NO
        if converted is _NO and "string" in types and _is_scalar(value):
            converted = json.dumps(value) if isinstance(value, bool | float) else str(value)
        if converted is _NO and "boolean" in types and value in (0, 1) and type(value) is int:
            converted = bool(value)
        if converted is _NO:
            return _NO
        if isinstance(value, str) and isinstance(converted, dict | list) and _is_json(value):
            self.notes.append(f"read {where} from its JSON text")
        else:
            self.notes.append(f"read {where} {_short(value)} as {_short(converted)}")
        return converted

    def _resolve(self, prop: Any) -> Schema | None:
        """Follow ``$ref`` (and a lone ``allOf``) to the schema it names."""
        for _ in range(_MAX_DEPTH):
            if not isinstance(prop, Mapping):
                return None
            all_of = prop.get("allOf")
            if isinstance(all_of, list) and len(all_of) == 1:
                prop = all_of[0]
                continue
            ref = prop.get("$ref")
            if not isinstance(ref, str):
                return prop
            prop = self.defs.get(ref.rpartition("/")[2])
        return None

    def _types(self, prop: Schema) -> set[str]:
        """The JSON types ``prop`` accepts (empty: any)."""
        kind = prop.get("type")
        if isinstance(kind, str):
            return {kind}
        if isinstance(kind, list):
            return {str(k) for k in kind}
        options = prop.get("anyOf") or prop.get("oneOf")
        if isinstance(options, list):
            found = [self._types(self._resolve(o) or {}) for o in options]
            return set() if any(not f for f in found) else set().union(*found)
        if "enum" in prop or "const" in prop:
            values = prop.get("enum") or [prop.get("const")]
            return {_json_type(v) for v in values}
        return {"object"} if "properties" in prop else set()

    def _option(self, prop: Schema, kind: str) -> Schema | None:
        """The ``anyOf`` option of type ``kind``, for ``list[str] | None`` and the like."""
        for option in prop.get("anyOf") or prop.get("oneOf") or ():
            resolved = self._resolve(option)
            if resolved is not None and kind in self._types(resolved):
                return resolved
        return None


_NO: Any = object()
"""No conversion applies (``None`` is a real value)."""


def _from_text(text: str, types: set[str]) -> Any:
    """The one non-string value ``text`` stands for, or ``_NO``."""
    word = text.strip().lower()
    if "integer" in types and _INTEGER.fullmatch(text):
        return int(text)
    if "number" in types and (number := _number(text)) is not None:
        return number
    if "boolean" in types and word in _TRUE | _FALSE:
        return word in _TRUE
    if "null" in types and word in _NULL:
        return None
    decoded = _decode(text) if types & {"array", "object"} else _NO
    if ("array" in types and isinstance(decoded, list)) or (
        "object" in types and isinstance(decoded, dict)
    ):
        return decoded
    return _NO


def _number(text: str) -> int | float | None:
    if _INTEGER.fullmatch(text):
        return int(text)
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _decode(text: str) -> Any:
    if not _is_json(text):
        return _NO
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return _NO


def _is_json(text: str) -> bool:
    return text.strip()[:1] in ("[", "{")


def _is_json_text(value: Any) -> bool:
    return isinstance(value, str) and _is_json(value)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list | tuple):
        return "array"
    return "object" if isinstance(value, Mapping) else "unknown"


def _fits_number(value: Any, types: set[str]) -> bool:
    """An integer is a number; a whole float is an integer (JSON Schema and pydantic agree)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return "number" in types
    return isinstance(value, float) and value.is_integer() and "integer" in types


def _is_scalar(value: Any) -> bool:
    return isinstance(value, bool | int | float) and not (
        isinstance(value, float) and not math.isfinite(value)
    )


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 40 else text[:37] + "..."
